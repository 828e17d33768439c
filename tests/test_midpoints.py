"""A binary search's midpoint (irscan/checks/base.py, ``_midpoint``): ``mid = (lo + hi) >> 1`` over a
prefix sum of more than 2^30 entries.  The ideal midpoint fits in 32 bits, so no widened value leaves
its range; the 32-bit sum wraps first and the halved value indexes memory before the array (cuDNN DSA's
``local_to_global`` search of ``cu_seqlens``, holdout 15).  Only a sum of two free values that may each
pass 2^30 counts: ``(row + tid) >> 1`` wraps only with ``row`` at the limit."""

from __future__ import annotations

import pytest
from irbuild import FnBuilder
from test_bounds import TENSOR

from irscan import checks
from irscan.analysis import dataflow
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.ir import Kind


def _search(second: str, plus_one: bool = False) -> list[checks.Finding]:
    """``arr[(lo + x) >> 1]`` with lo loaded from memory and x another load (``lo + hi``) or ``tid.x``;
    ``plus_one``: ``arr[((lo + x) >> 1) + 1]``, whose ideal value is one past 2^31 - 1 (FA4's
    ``cu_tensor[mid + 1]``, which no check claims as a plain ``+ 1``)."""
    b = FnBuilder(exact_block_dim=(128, 1, 1))
    a = b.param("%arg0", TENSOR)
    ptr = b.op(Kind.EXTRACT, a, width=0, attrs={"path": (0,)})
    lo = b.op(Kind.LOAD, ptr, width=32, addr=0, space="global")
    x = (b.op(Kind.LOAD, ptr, width=32, addr=0, space="global") if second == "hi"
         else b.op(Kind.SREG, attrs={"sreg": "tid.x"}))  # fmt: skip
    mid = b.op(Kind.ASHR, b.op(Kind.ADD, lo, x), b.const(1))
    if plus_one:
        mid = b.op(Kind.ADD, mid, b.const(1))
    wide = b.op(Kind.SEXT, mid, width=64, src_width=32)
    g = b.op(Kind.GEP, ptr, wide, width=0, attrs={"indices": [("dyn", 1, 64)], "elem_size": 4})
    b.op(Kind.LOAD, g, width=32, addr=0, space="global")
    fn = b.module.functions[0]
    gr = dataflow.build(b.module, fn, reaching_definitions)
    return checks.run(gr, Ranges(gr, Facts.of(fn.attrs), []), checks.Context("k", "test.mlir"))


@pytest.mark.parametrize("plus_one", [False, True])
@pytest.mark.parametrize("second", ["hi", "tid"])
def test_a_midpoint_whose_sum_wraps_is_found_only_for_two_large_values(second: str, plus_one: bool) -> None:
    found = _search(second, plus_one)
    if second == "tid":
        assert found == []
        return
    (f,) = found
    assert f.wraps_when is not None and f.wraps_when["input"] is None
    assert f.wraps_when["text"].startswith("no single-input threshold: the sum of two values wraps at 2^31")
    assert "binary search" in f.wraps_when["text"]
