"""Check ``trunc-then-extend``: a 64-bit value narrowed to 32 bits and extended again into an address.

``llvm.trunc ... : i64 to i32`` later ``sext``/``zext``-ed (or used as an i32 GEP index), as in
NVIDIA/cutlass#3208 (``cute.domain_offset`` in 4.5.0).  Safe when the 64-bit value provably fits,
e.g. the high half of a fast-division product.  PTX hides the same narrowing without a ``cvt``:
a 32-bit ``ld.param`` of a 64-bit parameter field, or ``shl.b64 32`` + ``shr.s64 32`` in a register.
Examples: corpus/programs (manifest.json, check "trunc-then-extend").
"""

from __future__ import annotations

from irscan.analysis.dataflow import Graph
from irscan.checks.base import Candidate, Check, Doc, Evidence

ID = "trunc-then-extend"


def claims(gr: Graph, c: Candidate) -> bool:
    """The culprit narrows a 64-bit value (a trunc, a 32-bit load of a 64-bit field, the shift idiom):
    always reported, since the wide value was computed correctly and the narrowing alone loses it."""
    return c.narrowing


def headline(ev: Evidence) -> str:
    ext = "sign" if ev.signed else "zero"
    return f"64-bit value {ev.expression} is narrowed to 32 bits ({ev.culprit}) and {ext}-extended back"


def fix(ev: Evidence) -> str:
    return (
        "keep the value in 64 bits: remove the narrowing (an Int32 cast or an i32 layout/stride) so that it "
        "is never truncated before the address computation; in CuTe DSL use cutlass.Int64 / sym_int64 strides"
    )


DOC = Doc(
    what=(
        "Finds a 64-bit value that is truncated to 32 bits and then sign- or zero-extended back into an "
        "address: an llvm.trunc later extended or used as an i32 GEP index, and in PTX a 32-bit ld.param "
        "of a 64-bit parameter field or the shl.b64 32 / shr.s64 32 idiom in a register.  It reports when "
        "the 64-bit value can leave the 32-bit range: must when the launch the IR fixes makes it, may when "
        "an input the IR leaves open would."
    ),
    why=(
        "The wide value was computed correctly; the narrowing alone throws its high half away, so once it "
        "passes 2^31 (or 2^32) the address points somewhere else in memory.  NVIDIA/cutlass#3208 "
        "(cute.domain_offset in 4.5.0) is this bug.  It is safe only when the value provably fits, which "
        "irscan checks with the launch and the layout it can see."
    ),
    example=(
        "@cute.kernel\n"
        "def row_copy(mX: cute.Tensor, mY: cute.Tensor):  # mX has a dynamic i64 row stride\n"
        "    row, _, _ = cute.arch.block_idx()\n"
        "    off = cutlass.Int32(cutlass.Int64(row) * mX.stride[0])  # correct in i64, then narrowed\n"
        "    x_row = cute.make_tensor(mX.iterator + off, cute.make_layout(4096))"
    ),
    fix=(
        "@cute.kernel\n"
        "def row_copy(mX: cute.Tensor, mY: cute.Tensor):\n"
        "    row, _, _ = cute.arch.block_idx()\n"
        "    off = cutlass.Int64(row) * mX.stride[0]  # stays 64-bit up to the address\n"
        "    x_row = cute.make_tensor(mX.iterator + off, cute.make_layout(4096))"
    ),
)

CHECK = Check(
    id=ID,
    title="64-bit value truncated to 32 bits and extended back into an address",
    cwe=197,
    doc=DOC,
    claims=claims,
    headline=headline,
    fix=fix,
    examples=("flat_offset_trunc_3208",),
)
