"""Check ``narrow-widened-late``: 32-bit arithmetic whose result is extended to 64 bits too late.

``llvm.mul/shl/add ... : i32`` (``mul.lo.s32``, ``mad.lo.s32``, ``shl.b32`` in PTX) reaching an
address through ``sext``/``zext``/``cvt``, an i32 GEP index, or the narrow operand of ``mul.wide``:
the product is formed in 32 bits, so it wraps before the 64-bit add.  Examples:
corpus/programs (manifest.json, check "narrow-widened-late").
"""

from __future__ import annotations

from irscan.analysis.dataflow import Graph
from irscan.checks.base import Candidate

ID = "narrow-widened-late"


def applies(gr: Graph, c: Candidate) -> bool:
    return not c.narrowing
