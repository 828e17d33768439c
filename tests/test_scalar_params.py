"""An MLIR integer scalar parameter read directly is a value of its own width and an extent
(irscan/analysis/inputs.py), as its PTX twin's ``ld.param.u32`` is: a guard ``row < rows`` then bounds
``row`` by an i32 extent in both IRs (b12x's raw-pointer GEMV, ``rows: Int32``)."""

from __future__ import annotations

from irbuild import FnBuilder
from test_bounds import _ranges, _val

from irscan.ir import Kind


def test_an_i32_scalar_parameter_is_an_i32_extent() -> None:
    b = FnBuilder()
    rows = b.param("%arg0", "i32")
    v = b.op(Kind.ADD, rows, b.const(1))
    rg = _ranges(b)
    x = _val(rg, v)
    assert rg.interval(x).hi == 2**31
    (k, _), *_ = x.terms
    assert rg.atoms[k].extent and rg.atoms[k].name == "arg0"


def test_a_guard_by_an_i32_scalar_parameter_gives_an_i32_bound() -> None:
    b = FnBuilder()
    rows = b.param("%arg0", "i32")
    row = b.op(Kind.ADD, b.op(Kind.MUL, b.op(Kind.SREG, attrs={"sreg": "ctaid.x"}), b.const(32)), b.const(3))
    lt = b.op(Kind.ICMP, row, rows, width=1, attrs={"pred": "slt"})
    b.branch(("body", ()), ("exit", ()), cond=lt)
    b.block("body")
    use = b.op(Kind.ADD, row, b.const(0))
    b.block("exit")
    rg = _ranges(b)
    bounds = rg.bounds(_val(rg, use), int(use[1:]))
    assert [(x.terms, x.const, x.i32) for x in bounds][0] == ((("arg0", 1),), -1, True)
