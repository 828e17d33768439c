"""Selects whose condition the ranges decide: the arm that is always taken.

The DSL's floor division ``floor(x / d)`` is ``q = x / d`` (truncating) then ``select(x < 0 and
x != q·d, q - 1, q)``; NVVM keeps the correction in PTX (``setp.lt.s32``, ``and.pred``, ``selp -1, 0``).
For a non-negative x the condition never holds, yet a select taken as the union of its arms leaves
the quotient (or a later dividend, ``(row >> 3) + select(-1, 0)``) one below zero, and then nothing
that needs a non-negative value (a division's quotient, ``x - d·(x / d)`` as a remainder) applies.

A condition is decided when every compare in it is: ``u < v`` holds for every value when
``u.hi < v.lo`` and never when ``u.lo >= v.hi`` (likewise ``<=``, ``==``, ``!=``), on the ideal values
the rest of the analysis reasons about; an unsigned compare only between non-negative values (where it
is the signed one); ``==`` / ``!=`` of two compares (the sign test ``(x < 0) != (d < 0)``) when both
are.  An ``and`` of compares is false when one of them is, true when all are; ``or`` the other way
round.  Anything else is undecided, and the select stays the union of its arms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from irscan.analysis.intervals import Affine, Interval
from irscan.analysis.loops import Cycle, Eval
from irscan.analysis.relate import LESS, select_compare, select_shape
from irscan.ir import Kind

if TYPE_CHECKING:
    from irscan.analysis.dataflow import Graph


class Decisions:
    """Needs from its host: ``gr``, ``interval`` and ``_operand``; provides :meth:`_decided`."""

    gr: Graph

    if TYPE_CHECKING:  # provided by the host class (irscan.analysis.ranges.Ranges)

        def interval(self, a: Affine, least_harm: bool = False) -> Interval: ...
        def _operand(self, n: int, slot: int) -> Eval[Affine]: ...

    def _decided(self, n: int) -> Eval[bool | None]:
        """Whether select n's condition always holds (True), never holds (False), or either (None)."""
        gr = self.gr
        d = gr.defs(n, 0)
        c = gr.op(d[0]) if len(d) == 1 else None
        if c is None:
            return None
        if c.kind is Kind.ICMP:
            return (yield from self._decide_compare(c.id))
        if c.kind not in (Kind.AND, Kind.OR) or c.width != 1 or len(c.operands) != 2:
            return None
        leaves = [gr.defs(c.id, s) for s in (0, 1)]
        outs: list[bool | None] = []
        for ds in leaves:  # an and / or of two compares: no deeper (the DSL writes no more)
            leaf = gr.op(ds[0]) if len(ds) == 1 else None
            known = leaf is not None and leaf.kind is Kind.ICMP
            outs.append((yield from self._decide_compare(leaf.id)) if leaf is not None and known else None)
        strong = c.kind is not Kind.AND  # the value one leaf needs to decide the whole: or's true, and's false
        if strong in outs:
            return strong
        return (not strong) if all(o is (not strong) for o in outs) else None

    def _decide_compare(self, c: int, nested: bool = False) -> Eval[bool | None]:
        op = self.gr.op(c)
        pred = str(op.attrs.get("pred", ""))
        if len(op.operands) != 2:
            return None
        sides = [self.gr.defs(c, s) for s in (0, 1)]
        if (
            pred in ("eq", "ne")
            and not nested
            and all(len(d) == 1 and self.gr.op(d[0]).kind is Kind.ICMP for d in sides)
        ):
            # (x < 0) != (d < 0), the floor division's sign test: each compare decided on its own
            l0 = yield from self._decide_compare(sides[0][0], True)
            l1 = yield from self._decide_compare(sides[1][0], True)
            return None if l0 is None or l1 is None else (l0 == l1) == (pred == "eq")
        try:
            a = yield from self._operand(c, 0)
            b = yield from self._operand(c, 1)
        except Cycle:  # a loop value being evaluated: not decided here
            return None
        ia, ib = self.interval(a), self.interval(b)
        if pred.startswith("u") and (ia.lo < 0 or ib.lo < 0):
            return None
        if pred in ("eq", "ne"):
            same = ia.lo == ia.hi == ib.lo == ib.hi
            apart = ia.hi < ib.lo or ib.hi < ia.lo
            eq = True if same else False if apart else None
            return eq if pred == "eq" or eq is None else not eq
        side = LESS.get(pred)
        if side is None:
            return None
        u, v = (ia, ib) if side[0] == 0 else (ib, ia)  # the compare says u < v (strict) or u <= v
        if side[1]:
            return True if u.hi < v.lo else False if u.lo >= v.hi else None
        return True if u.hi <= v.lo else False if u.lo > v.hi else None

    def _extreme(self, n: int, a: Affine, b: Affine) -> Eval[Interval | None]:
        """Select n of arms a, b as ``min`` / ``max`` of them: ``select(x < y, x, y)`` is min(x, y),
        ``select(x < y, y, x)`` max (any compare direction), whose interval is the min / max of the
        arms', tighter than their union (a loop bound clamped to a constant: ``chunk_end = min(start +
        n, num_chunks)``); the clamp ``select(u < v, u, v - 1)`` is min(u, v - 1).  None for any other
        select."""
        cmp = select_compare(self.gr, n)
        if cmp is None:
            return None
        c, side = cmp
        try:
            x = yield from self._operand(c, 0)
            y = yield from self._operand(c, 1)
        except Cycle:
            return None
        small, big = (x, y) if side[0] == 0 else (y, x)  # the compare holds when small < big (or <=)
        over = self.interval(a.add(small.scale(-1))).hi  # how far the true arm may exceed small
        shape = select_shape(a, b, small, big, side[1], over <= 0)
        if shape is None:
            return None
        ia, ib = self.interval(a), self.interval(b)
        if str(self.gr.op(c).attrs.get("pred", "")).startswith("u") and (ia.lo < 0 or ib.lo < 0):
            return None  # an unsigned order of values that may be negative is not theirs
        if shape == "fallback":  # the true arm (at most small) is below big, the other a constant
            top = min(ia.hi, self.interval(big).hi - (1 if side[1] else 0) + over)
            return Interval(min(ia.lo, ib.lo), max(top, ib.hi))
        if shape != "max":  # the true arm takes the smaller one: min (a clamp is min(u, v - 1))
            return Interval(min(ia.lo, ib.lo), min(ia.hi, ib.hi))
        return Interval(max(ia.lo, ib.lo), max(ia.hi, ib.hi))
