"""A quotient times its divisor plus the remainder of the same division is the dividend
(irscan/analysis/floordiv.py, ``recombine``): ``t[e // m, e % m]`` on ``(n, m):(m, 1)`` indexes with
``(e / m)*m + (e - (e / m)*m)``, which is ``e``, even when the product is a second op (the stride read
apart from the divisor).  A product by another value is left alone."""

from __future__ import annotations

import pytest
from irbuild import FnBuilder
from test_bounds import _ranges, _val

from irscan.ir import Kind


def _index(same: bool, mad: bool = False) -> tuple[object, object, str, str]:
    b = FnBuilder()
    b.param("%arg0", "!llvm.ptr<1>")
    x = b.op(Kind.LOAD, "%arg0", width=32, addr=0, space="global")
    m = b.op(Kind.LOAD, "%arg0", width=32, addr=0, space="global")
    other = b.op(Kind.LOAD, "%arg0", width=32, addr=0, space="global")
    q = b.op(Kind.DIV, x, m, signed=False)
    r = b.op(Kind.SUB, x, b.op(Kind.MUL, q, m))  # x % m as NVVM writes it
    d = m if same else other
    idx = b.op(Kind.MAD, q, d, r) if mad else b.op(Kind.ADD, b.op(Kind.MUL, q, d), r)  # PTX: mad.lo q, d, r
    rg = _ranges(b)
    return rg, _val(rg, idx), x, idx


@pytest.mark.parametrize("mad", [False, True])
def test_quotient_times_divisor_plus_remainder_is_the_dividend(mad: bool) -> None:
    rg, v, x, _ = _index(same=True, mad=mad)
    assert v == _val(rg, x)


def test_a_product_by_another_value_is_not_recombined() -> None:
    rg, v, x, _ = _index(same=False)
    assert v != _val(rg, x)
