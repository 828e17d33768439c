"""Check ``trunc-then-extend``: a 64-bit value narrowed to 32 bits and extended again into an address.

``llvm.trunc ... : i64 to i32`` later ``sext``/``zext``-ed (or used as an i32 GEP index), as in
NVIDIA/cutlass#3208 (``cute.domain_offset`` in 4.5.0).  Safe when the 64-bit value provably fits,
e.g. the high half of a fast-division product.  PTX hides the same narrowing without a ``cvt``:
a 32-bit ``ld.param`` of a 64-bit parameter field, or ``shl.b64 32`` + ``shr.s64 32`` in a register.
Examples: corpus/programs (manifest.json, check "trunc-then-extend").
"""

from __future__ import annotations

from irscan.analysis.dataflow import Graph
from irscan.checks.base import Candidate

ID = "trunc-then-extend"


def applies(gr: Graph, c: Candidate) -> bool:
    return c.narrowing
