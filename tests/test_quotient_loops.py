"""Loops whose trip count is a quotient (irscan/analysis/floordiv.py ``product_uppers``, the floor and
ceil fix-ups; loops.py ``relate_join``; bounds.py's search ending on extents).

The DSL writes ``ceil(x / d)`` as ``q = x / d; select(x != q*d and (x < 0) == (d < 0), q + 1, q)`` and
``x // d`` with ``q - 1`` under the opposite-sign test.  A loop ``s < q - 1`` then strides
``(s + 1)*d <= x - 1`` (flashinfer's split-KV page-table prefetch ``(s + 1)*kv_splits + split``), a
pair index ``2*pair + p`` with ``pair < (n - p) // 2`` stays below ``n - 1`` (an odd-even sort), and a
pipeline state's ``count`` (0 on entry, then the previous ``next_count``) keeps its counter's bound.
Each test builds the smallest function that has the fact; without the fact the bound is absent.
"""

from __future__ import annotations

from typing import Any

from irbuild import FnBuilder
from test_bounds import TENSOR, M, _ranges, _terms

from irscan.ir import Kind


def _ceil(b: FnBuilder, x: str, d: str, same_sign: bool = True) -> str:
    """ceil(x / d) as the DSL writes it (``same_sign``: with the sign test; else the + 1 arm is
    conditioned on an inexact division only, and is no ceil for a d of unknown sign)."""
    q = b.op(Kind.DIV, x, d, signed=True)
    zero = b.const(0)
    inexact = b.op(Kind.ICMP, x, b.op(Kind.MUL, q, d), width=1, attrs={"pred": "ne"})
    xneg = b.op(Kind.ICMP, x, zero, width=1, attrs={"pred": "slt"})
    dneg = b.op(Kind.ICMP, d, zero, width=1, attrs={"pred": "slt"})
    same = b.op(Kind.ICMP, xneg, dneg, width=1, attrs={"pred": "eq"})
    cond = b.op(Kind.AND, inexact, same, width=1) if same_sign else inexact
    return b.op(Kind.SELECT, cond, b.op(Kind.ADD, q, b.const(1)), q)


def _split_loop(divisor: str = "nctaid.x", same_sign: bool = True) -> tuple[Any, str, str]:
    """``iters = ceil(M / nctaid.x)``; ``if s < iters - 1: use (s + 1)*d`` with s a loaded counter and d
    nctaid.x (``divisor``: another register, which the quotient is not by)."""
    b = FnBuilder()
    m = b.op(Kind.EXTRACT, b.param("%arg0", TENSOR), attrs={"path": (1, 0)})
    nct = b.op(Kind.SREG, attrs={"sreg": "nctaid.x"})
    iters = _ceil(b, m, nct, same_sign)
    s = b.op(Kind.LOAD, b.param("%arg1", "!llvm.ptr<1>"), addr=0, space="global")
    more = b.op(Kind.ICMP, s, b.op(Kind.ADD, iters, b.const(-1)), width=1, attrs={"pred": "slt"})
    b.branch(("then", ()), ("done", ()), cond=more)
    b.block("then")
    d = nct if divisor == "nctaid.x" else b.op(Kind.SREG, attrs={"sreg": divisor})
    stride = b.op(Kind.MUL, b.op(Kind.ADD, s, b.const(1)), d)
    use = b.op(Kind.SEXT, stride, width=64, src_width=32)
    b.branch(("done", ()))
    b.block("done")
    return _ranges(b), stride, use


def test_a_counter_below_a_ceil_quotient_minus_one_strides_below_the_dividend() -> None:
    rg, stride, use = _split_loop()
    bs = rg.bounds(rg.value(int(stride[1:])), at=int(use[1:]))
    assert (((M, 1),), -1) in _terms(bs)  # (s + 1)*nctaid.x <= M - 1
    assert "nctaid.x*(ceil(arg0.shape[0] / nctaid.x)) <= arg0.shape[0] + nctaid.x - 1" in bs[0].fact


def test_a_product_by_another_divisor_or_a_plus_one_without_the_sign_test_is_not_bounded_so() -> None:
    for kw in ({"divisor": "ntid.x"}, {"same_sign": False}):
        rg, stride, use = _split_loop(**kw)
        assert (((M, 1),), -1) not in _terms(rg.bounds(rg.value(int(stride[1:])), at=int(use[1:])))


def test_floor_and_ceil_by_a_constant_are_floor_multiples() -> None:
    b = FnBuilder()
    m = b.op(Kind.EXTRACT, b.param("%arg0", TENSOR), attrs={"path": (1, 0)})
    q = b.op(Kind.DIV, m, b.const(2), signed=True)  # m // 2, the DSL's floor division of an Int32
    two, zero = b.const(2), b.const(0)
    inexact = b.op(Kind.ICMP, m, b.op(Kind.MUL, q, two), width=1, attrs={"pred": "ne"})
    neg = b.op(Kind.ICMP, m, zero, width=1, attrs={"pred": "slt"})
    half = b.op(Kind.SELECT, b.op(Kind.AND, inexact, neg, width=1), b.op(Kind.ADD, q, b.const(-1)), q)
    pair = b.op(Kind.ADD, b.op(Kind.MUL, half, two), b.const(1))  # 2*(m // 2) + 1
    c = b.op(Kind.DIV, m, b.const(256), signed=True)  # ceil(m / 256), the sign test as (m < 0) == false
    inexact = b.op(Kind.ICMP, m, b.op(Kind.MUL, c, b.const(256)), width=1, attrs={"pred": "ne"})
    pos = b.op(Kind.ICMP, b.op(Kind.ICMP, m, zero, width=1, attrs={"pred": "slt"}), b.const(0, width=1),
               width=1, attrs={"pred": "eq"})  # fmt: skip
    tiles = b.op(Kind.SELECT, b.op(Kind.AND, inexact, pos, width=1), b.op(Kind.ADD, c, b.const(1)), c)
    span = b.op(Kind.MUL, tiles, b.const(256))
    rg = _ranges(b)
    assert _terms(rg.bounds(rg.value(int(pair[1:]))))[0] == (((M, 1),), 1)
    assert _terms(rg.bounds(rg.value(int(span[1:]))))[0] == (((M, 1),), 255)


def _joined(keep_bound: bool = True) -> tuple[Any, str]:
    """``count = 0`` on one path, ``ctaid.x % M`` on the other (``keep_bound``: else a loaded value),
    joined; ``16*count``."""
    b = FnBuilder()
    m = b.op(Kind.EXTRACT, b.param("%arg0", TENSOR), attrs={"path": (1, 0)})
    bid = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    r = b.op(Kind.REM, bid, m, signed=False) if keep_bound else b.op(Kind.LOAD, bid, addr=0, space="global")
    first = b.op(Kind.ICMP, bid, b.const(0), width=1, attrs={"pred": "eq"})
    b.branch(("a", ()), ("b", ()), cond=first)
    b.block("a")
    b.branch(("join", (b.const(0),)))
    b.block("b")
    b.branch(("join", (r,)))
    b.block("join", args=("%count",), widths=(32,))
    off = b.op(Kind.MUL, "%count", b.const(16))
    return _ranges(b), off


def test_a_join_is_at_most_what_bounds_every_value_reaching_it() -> None:
    rg, off = _joined()
    assert (((M, 16),), -16) in _terms(rg.bounds(rg.value(int(off[1:]))))
    rg, off = _joined(keep_bound=False)
    assert not any(t for t, _ in _terms(rg.bounds(rg.value(int(off[1:])))))


def test_a_bound_over_extents_is_kept_when_a_guard_on_an_extent_also_applies() -> None:
    # if M <= L (L loaded): ctaid.x % M there is still <= M - 1, whatever the guard rewrites M to
    b = FnBuilder()
    m = b.op(Kind.EXTRACT, b.param("%arg0", TENSOR), attrs={"path": (1, 0)})
    r = b.op(Kind.REM, b.op(Kind.SREG, attrs={"sreg": "ctaid.x"}), m, signed=False)
    big = b.op(Kind.LOAD, b.param("%arg1", "!llvm.ptr<1>"), addr=0, space="global")
    b.branch(("then", ()), ("done", ()), cond=b.op(Kind.ICMP, big, m, width=1, attrs={"pred": "sge"}))
    b.block("then")
    use = b.op(Kind.SEXT, r, width=64, src_width=32)
    b.branch(("done", ()))
    b.block("done")
    rg = _ranges(b)
    assert (((M, 1),), -1) in _terms(rg.bounds(rg.value(int(r[1:])), at=int(use[1:])))
