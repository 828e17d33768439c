"""Check ``narrow-widened-late``: 32-bit arithmetic whose result is extended to 64 bits too late.

``llvm.mul/shl/add ... : i32`` (``mul.lo.s32``, ``mad.lo.s32``, ``shl.b32`` in PTX) reaching an
address through ``sext``/``zext``/``cvt``, an i32 GEP index, or the narrow operand of ``mul.wide``:
the product is formed in 32 bits, so it wraps before the 64-bit add.  Examples:
corpus/programs (manifest.json, check "narrow-widened-late").

Reporting rule for ``may``: a candidate is reported only when some *free* input is scaled (a
coefficient of 2 or more, or a product of inputs).  A sum of unscaled free inputs wraps only when an
input is itself already near 2^31, i.e. the input could not have indexed that far to begin with;
reporting those would flag every ``i + 1``.  ``must`` candidates are always reported.
"""

from __future__ import annotations

from irscan.analysis.dataflow import Graph
from irscan.checks.base import Candidate, Check, Doc, Evidence

ID = "narrow-widened-late"


def claims(gr: Graph, c: Candidate) -> bool:
    """Arithmetic that wraps on its own (no narrowing of a wider value), worth reporting: it wraps at
    this launch, or a free input is scaled (the reporting rule above)."""
    return not c.narrowing and (c.must or c.scaled)


def headline(ev: Evidence) -> str:
    return f"{ev.expression} is computed in 32 bits"


def fix(ev: Evidence) -> str:
    who = ev.wrap_input or "the coordinate"
    return (
        f"do the multiply in 64 bits: cast {who} (or the coordinate it scales) with cutlass.Int64(...) before the "
        "index arithmetic, or give the tensor a dynamic 64-bit stride (mark_layout_dynamic / sym_int64)"
    )


DOC = Doc(
    what=(
        "Finds 32-bit index arithmetic (a multiply, shift or add in i32) whose result is extended to 64 bits "
        "only when it enters an address: a sign/zero-extension, an i32 GEP index, or the narrow operand of "
        "PTX mul.wide.  It reports when the launch the IR fixes already leaves the 32-bit range (must), or "
        "when an input it scales is left open by the IR (may)."
    ),
    why=(
        "The product is formed in 32 bits, so it wraps before the 64-bit address arithmetic sees it: past "
        "2^31 a sign-extended offset points up to 2 GiB before the tensor (usually a fault), past 2^32 a "
        "zero-extended one lands silently inside or past it.  In the MLIR the i32 op often carries nsw, so "
        "the overflow is undefined behaviour, whatever today's PTX does.  A tensor of more than 2^31 "
        "elements, or a large stride times a block index, is enough."
    ),
    example=(
        "@cute.kernel\n"
        "def copy_kernel(src: cute.Tensor, dst: cute.Tensor):  # (100000, 100000):(100000, 1) f32\n"
        "    tidx, _, _ = cute.arch.thread_idx()\n"
        "    bidx, bidy, _ = cute.arch.block_idx()\n"
        "    row = bidx\n"
        "    col = bidy * 160 + tidx\n"
        "    dst[row, col] = src[row, col]  # row * 100000 + col is an i32: it wraps past 2^31 - 1"
    ),
    fix=(
        "@cute.kernel\n"
        "def copy_kernel(src: cute.Tensor, dst: cute.Tensor):\n"
        "    tidx, _, _ = cute.arch.thread_idx()\n"
        "    bidx, bidy, _ = cute.arch.block_idx()\n"
        "    row = cutlass.Int64(bidx)  # the layout arithmetic now runs in 64 bits\n"
        "    col = bidy * 160 + tidx\n"
        "    dst[row, col] = src[row, col]"
    ),
)

CHECK = Check(
    id=ID,
    title="32-bit index arithmetic widened to 64 bits only at the address",
    cwe=190,
    doc=DOC,
    claims=claims,
    headline=headline,
    fix=fix,
    examples=("elementwise_static_100k", "elementwise_i32_stride", "gdn_state_pool_3230"),
)
