"""The fix-up that turns a truncating division into a floor division, when its condition is undecided.

The DSL's ``floor(x / d)`` is ``q = x / d`` (truncating) then ``select(c, q - 1, q)`` with
``c = x != q·d and (x < 0) != (d < 0)``; NVVM writes it in PTX as ``q + selp(-1, 0, c)``, the sign test
as ``(x ^ d) < 0``.  Where the ranges decide ``c`` (irscan/analysis/decide.py) the select is one arm;
where they do not (a runtime divisor of unknown sign, a varlen scheduler's ``shfl.sync`` block count),
the union of the arms reaches ``q.lo - 1``, one below -2^31 for a quotient of unknown sign.

Two facts hold whatever ``x`` and ``d``, because ``q`` is ``x / d`` itself (a division op's quotient,
:attr:`~irscan.analysis.relate.OpRelations.quotients`) and the condition has ``x != q·d``:

- the corrected arm is taken only when the division is inexact, so ``|d| >= 2`` and
  ``|q| <= |x| / 2``: ``q ± 1`` stays within ``±(|x| / 2 + 1)``, never past 2^31 for an i32 x;
- with the sign test too (and a ``- 1``), the value is ``floor(x / d)`` exactly, so
  ``x - floor(x / d)·d`` is a floor remainder, between ``-|d|`` and ``|d|`` exclusive for either sign
  of d (the sign of d's; in ``[0, d)`` for a positive d);
- with the same-sign test ``(x < 0) == (d < 0)`` (``x >= 0`` for a positive d) and a ``+ 1``, the
  value is ``ceil(x / d)`` exactly (the DSL's ``ceil_div``, ``cute.ceil_div`` of a runtime value).

For a positive d those give the floor multiples ``d·floor(x / d) <= x`` and ``d·ceil(x / d) <=
x + d - 1`` (recorded as relations for a constant d); :meth:`FloorFixups.product_uppers` carries them
through a product by a runtime d: a loop counter ``s < q - 1`` of a loop that runs ``q = ceil(X / d)``
times strides ``(s + 1)·d <= X - 1`` (a split-KV loop over tiles ``kv_split_idx + s·kv_splits``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from irscan.analysis.intervals import Affine, Interval, paren
from irscan.analysis.intervals import single as _single
from irscan.ir import Kind

if TYPE_CHECKING:
    from collections.abc import Iterable

    from irscan.analysis.bounds import Upper
    from irscan.analysis.dataflow import Graph
    from irscan.analysis.ranges import Atom
    from irscan.ir import Op


class FloorFixups:
    """Needs from its host: ``gr``, ``atoms``, ``quotients``, ``_known``, ``interval``, ``name`` and
    ``_derived``; provides :meth:`floor_add` (PTX), :meth:`floor_select` (MLIR) and
    :meth:`floor_remainder_interval`."""

    gr: Graph
    atoms: dict[Any, Atom]
    quotients: dict[Any, tuple[Affine, Affine]]
    #: atom -> (x, d): the atom is floor(x / d) (a quotient with its fix-up, both conditions checked)
    floor_quotients: dict[Any, tuple[Affine, Affine]]
    #: atom -> (x, d): the atom is ceil(x / d) (a quotient with its + 1 under the same-sign test)
    ceil_quotients: dict[Any, tuple[Affine, Affine]]
    #: atom -> (y, 2^k): the atom is ``y & -2^k`` (relate.py)
    floors: dict[Any, tuple[Affine, int]]
    uppers: dict[Any, list[Upper]]

    if TYPE_CHECKING:  # provided by the host class (irscan.analysis.ranges.Ranges)

        def _known(self, n: int, slot: int) -> Affine | None: ...
        def relate(self, key: Any, mult: int, rhs: Affine, fact: str, lower: bool = False) -> None: ...
        def interval(self, a: Affine, least_harm: bool = False) -> Interval: ...
        def name(self, a: Affine) -> str: ...
        def _derived(
            self, n: int, name: str, iv: Interval, inputs: Iterable[Affine], scales: bool = False, key: Any = None
        ) -> Affine: ...

    def floor_add(self, n: int, a: Affine, b: Affine) -> Affine | None:
        """``q + selp(±1, 0, c)`` (PTX) with ``c`` implying an inexact ``q = x / d``; else None."""
        for q, s in ((a, b), (b, a)):
            sk = _single(s)
            sel = self.gr.op(sk) if isinstance(sk, int) and sk in self.gr and s == Affine.of_atom(sk) else None
            if sel is None or sel.kind is not Kind.SELECT or len(sel.operands) != 3 or sel.operands[2] != 0:
                continue
            step = sel.operands[1]
            if isinstance(step, int) and step in (-1, 1):
                res = self._fixup(n, sel.id, q, step, f"{self.name(q)} + {self.name(s)}")
                if res is not None:
                    return res
        return None

    def floor_select(self, n: int, a: Affine, b: Affine) -> Affine | None:
        """``select(c, q ± 1, q)`` (MLIR) with ``c`` implying an inexact ``q = x / d``; else None."""
        step = a.add(b, -1)
        if not step.is_const() or step.const not in (-1, 1):
            return None
        return self._fixup(n, n, b, step.const, f"select({self.name(a)}, {self.name(b)})")

    def floor_remainder_interval(self, qk: Any, x: Affine, d: Affine) -> Interval | None:
        """Where atom qk is floor(x / d): the interval of ``x - qk·d`` (module docstring); else None."""
        if self.floor_quotients.get(qk) != (x, d):
            return None
        dv = self.interval(d)
        if dv.lo >= 1:
            return Interval(0, dv.hi - 1)
        m = max(abs(dv.lo), abs(dv.hi))
        return Interval(1 - m, m - 1) if m >= 1 else None

    def _fixup(self, n: int, sel: int, q: Affine, step: int, name: str) -> Affine | None:
        qk = _single(q)
        if qk is None or q != Affine.of_atom(qk) or qk not in self.quotients:
            return None
        x, d = self.quotients[qk]
        leaves = self._leaves(sel)
        if not any(self._inexact(c, qk, x, d) for c in leaves):
            return None
        qv, xv = self.interval(q), self.interval(x)
        # |q| <= |x| / 2 when |d| >= 2; the compare and the division see the register's x, within its
        # width even where the ideal x is not (a dividend that wraps is that chain's finding)
        w = self.gr.op(qk).width if isinstance(qk, int) and qk in self.gr else 0
        top = max(abs(xv.lo), abs(xv.hi))
        half = (min(top, 1 << (w - 1)) if w else top) // 2
        lo, hi = max(qv.lo, -half), min(qv.hi, half)
        iv = qv if lo > hi else qv.union(Interval(lo + step, hi + step))
        floor = step == -1 and any(self._opposite_signs(c, x, d) for c in leaves)
        ceil = step == 1 and any(self._same_signs(c, x, d) for c in leaves)
        if floor or ceil:
            name = f"{'floor' if floor else 'ceil'}({paren(self.name(x))} / {paren(self.name(d))})"
        res = self._derived(n, name, iv, (q,))
        rk = _single(res)
        if (floor or ceil) and rk is not None and res == Affine.of_atom(rk):
            (self.floor_quotients if floor else self.ceil_quotients)[rk] = (x, d)
            if d.is_const() and d.const > 0:
                dividend = x if floor else x.add(Affine.of_const(d.const - 1))
                self.relate(rk, d.const, dividend, f"{'floor' if floor else 'ceil'} multiple: "
                            f"{d.const}*{paren(name)} <= {self.name(dividend)}")  # fmt: skip
            elif floor and self.interval(d).lo >= 0 and (slack := max(0, -self.interval(x).lo - 1)) <= 64:
                # a divisor is >= 1, so floor(x / d) <= x for x >= -1 and <= -1 below: at most x plus the
                # slack of x's least value (the batch of a token, floor(token / seqlen), is at most it)
                most = x.add(Affine.of_const(slack))
                self.relate(rk, 1, most, f"{name} <= {self.name(most)}")
        return res

    def product_uppers(self, key: Any, guards: list[tuple[Affine, Affine, str]]) -> list[tuple[Affine, str]]:
        """Upper bounds of the product atom ``key = u·d`` (d >= 1) from ``u <= q + k`` with q a floor,
        ceil or non-negative quotient of some x by that same d: ``u·d <= q·d + k·d``, and ``q·d`` at
        most x (floor) or x + d - 1 (ceil).  ``u <= q + k`` is u itself, or u with one term replaced by
        an upper bound of it or a guard on it (``guards``: those dominating the use point)."""
        f = self.atoms[key].factors
        out: list[tuple[Affine, str]] = []
        for u, d in (f, f[::-1]) if f is not None else ():
            out += self._quotient_times_index(key, u, d, guards)
            if self.interval(d).lo < 1:
                continue
            for cand, why in self._candidate_uppers(u, guards):
                for qk, c in cand.terms:
                    top = self._rounded_multiple(qk, d) if c == 1 else None
                    rest = cand.add(Affine.of_atom(qk), -1)
                    if top is None or not rest.is_const():
                        continue
                    rhs = top[0].add(d.scale(rest.const))
                    facts = [w for w in (why, top[1]) if w]
                    out.append((rhs, "; ".join(facts) + f", so {self.name(Affine.of_atom(key))} <= {self.name(rhs)}"))
        return out[:4]

    def _quotient_times_index(
        self, key: Any, q: Affine, w: Affine, guards: list[tuple[Affine, Affine, str]]
    ) -> list[tuple[Affine, str]]:
        """``q·w`` with q a quotient of x by d and ``w <= d + k`` (a block index below the chunk count
        the quotient divides by: ``per = ceil(N / C)`` and ``per·ctaid.y`` with grid y = C) is at most
        ``q·d + k·q``, so ``x + k·q`` (floor) or ``x + d - 1 + k·q`` (ceil); for k <= 0 only, where the
        ``k·q`` term is a bound's own (q >= 0)."""
        qk = _single(q)
        # an atom is the quotient of one division: at most one of the tables holds it
        xd = next((t[qk] for t in (self.floor_quotients, self.ceil_quotients, self.quotients) if qk in t), None)
        if qk is None or q != Affine.of_atom(qk) or xd is None or self.interval(xd[1]).lo < 0:
            return []
        top = self._rounded_multiple(qk, xd[1]) if self._nonnegative_dividend(q, *xd) else None
        if top is None:
            return []
        out: list[tuple[Affine, str]] = []
        for cand, why in self._candidate_uppers(w, guards):
            k = self._offset_of(cand, xd[1])
            if k is not None and k <= 0 and cand != w:
                rhs = top[0].add(q.scale(k))
                facts = "; ".join(f for f in (why, top[1]) if f)
                out.append((rhs, f"{facts}, so {self.name(Affine.of_atom(key))} <= {self.name(rhs)}"))
        return out

    def _offset_of(self, a: Affine, b: Affine) -> int | None:
        """k with ``a = b + k``, the inputs compared by name: a PTX ``ld.param`` of a field and the field
        the host grid names are two atoms of one input."""
        names: dict[Any, int] = {}
        for x, sign in ((a, 1), (b, -1)):
            for t, c in x.terms:
                at = self.atoms[t]
                nm = ("extent", at.name) if at.extent else t  # two loads are never one input by name
                names[nm] = names.get(nm, 0) + sign * c
        return a.const - b.const if not any(names.values()) else None

    def _nonnegative_dividend(self, q: Affine, x: Affine, d: Affine) -> bool:
        """q = x / d is >= 0: x is, or x = rest + d with rest >= -1 (``N + C - 1`` over C): a divisor
        is >= 1, which the interval of the sum does not know."""
        if self.interval(q).lo >= 0 or self.interval(x).lo >= 0:
            return True
        rest = x.add(d, -1)
        return not d.is_const() and all(c > 0 for _, c in x.terms) and self.interval(rest).lo >= -1

    def _candidate_uppers(self, u: Affine, guards: list[tuple[Affine, Affine, str]]) -> list[tuple[Affine, str]]:
        """u, and u with one positive term t replaced by an upper bound of t (a relation or a guard)."""
        out = [(u, "")]
        for t, c in u.terms:
            if c <= 0:
                continue
            ups = [(up.rhs, up.fact) for up in self.uppers.get(t, ()) if up.mult == 1]
            for x, rhs, fact in guards:  # x <= rhs on this path; x = t + const
                if x.terms == ((t, 1),):
                    ups.append((rhs.add(Affine.of_const(-x.const)), fact))
            for rhs, fact in ups:
                out.append((u.add(Affine.of_atom(t), -c).add(rhs.scale(c)), fact))
        return out

    def _rounded_multiple(self, qk: Any, d: Affine) -> tuple[Affine, str] | None:
        """An upper bound of ``qk·d`` when atom qk is a quotient by d: (it, the fact), else None."""
        q = self.name(Affine.of_atom(qk))
        for table, slack in ((self.floor_quotients, False), (self.ceil_quotients, True), (self.quotients, False)):
            xd = table.get(qk)
            if xd is None or xd[1] != d or (table is self.quotients and self.interval(xd[0]).lo < 0):
                continue
            top = xd[0].add(d).add(Affine.of_const(-1)) if slack else xd[0]
            return top, f"{paren(self.name(d))}*{paren(q)} <= {self.name(top)}"
        return None

    def _leaves(self, sel: int) -> list[Op]:
        """The compares of select sel's condition: itself, or the two of an ``and`` (as the DSL writes)."""
        c = self._def(sel, 0)
        if c is None:
            return []
        if c.kind is Kind.AND and c.width == 1 and len(c.operands) == 2:
            return [leaf for leaf in (self._def(c.id, 0), self._def(c.id, 1)) if leaf is not None]
        return [c]

    def _def(self, n: int, slot: int) -> Op | None:
        d = self.gr.defs(n, slot)
        return self.gr.op(d[0]) if len(d) == 1 else None

    def _inexact(self, c: Op, qk: Any, x: Affine, d: Affine) -> bool:
        """Compare c is ``x != q·d`` (either order, either order of the product)."""
        if c.kind is not Kind.ICMP or c.attrs.get("pred") != "ne" or len(c.operands) != 2:
            return False
        u, v = self._known(c.id, 0), self._known(c.id, 1)
        for lhs, p in ((u, v), (v, u)):
            if lhs == x and d.is_const() and p == Affine.of_atom(qk).scale(d.const):
                return True  # by a constant the product is linear: q·d itself (Int32 x // 2)
            pk = _single(p) if p is not None else None
            low = self.floors.get(pk) if pk is not None and p == Affine.of_atom(pk) else None
            if lhs == x and low is not None and d == Affine.of_const(low[1]) and isinstance(qk, int) and qk in self.gr:
                if low[0] == self._known(qk, 0):  # y & -2^k with q = y >> k is 2^k*q (PTX's signed x / 2^k)
                    return True
            at = self.atoms.get(pk)
            if lhs == x and at is not None and p == Affine.of_atom(pk) and at.factors is not None:
                if at.factors in ((Affine.of_atom(qk), d), (d, Affine.of_atom(qk))):
                    return True
        return False

    def _opposite_signs(self, c: Op, x: Affine, d: Affine) -> bool:
        """Compare c holds only when x and d have opposite signs: ``(x ^ d) < 0`` (PTX),
        ``(x < 0) != (d < 0)`` (MLIR), or ``x < 0`` for a d known positive."""
        neg = self._negative(c)
        if neg is not None:
            if neg == x and self.interval(d).lo >= 1:
                return True
            xor = self._def_of(neg)
            if xor is not None and xor.kind is Kind.XOR and len(xor.operands) == 2:
                return {self._known(xor.id, 0), self._known(xor.id, 1)} == {x, d}
            return False
        if c.kind is not Kind.ICMP or c.attrs.get("pred") != "ne" or len(c.operands) != 2:
            return False
        sides = [self._def(c.id, s) for s in (0, 1)]
        negs = [self._negative(s) if s is not None else None for s in sides]
        return set(negs) == {x, d}

    def _same_signs(self, c: Op, x: Affine, d: Affine) -> bool:
        """Compare c holds only when x and d have the same sign (or x is 0): ``(x < 0) == (d < 0)``
        (MLIR), ``(x ^ d) >= 0`` (PTX), or ``x >= 0`` (also written ``(x < 0) == false``) for a d known
        positive."""
        d_pos = self.interval(d).lo >= 1
        nonneg = self._nonnegative(c)
        if nonneg is not None:
            xor = self._def_of(nonneg)
            if xor is not None and xor.kind is Kind.XOR and len(xor.operands) == 2:
                return {self._known(xor.id, 0), self._known(xor.id, 1)} == {x, d}
            return nonneg == x and d_pos
        if c.kind is not Kind.ICMP or c.attrs.get("pred") != "eq" or len(c.operands) != 2:
            return False
        sides = [self._def(c.id, s) for s in (0, 1)]
        negs = [self._negative(s) if s is not None else None for s in sides]
        if set(negs) == {x, d}:
            return True
        return d_pos and any(negs[s] == x and self.gr.const_operand(c.id, 1 - s) == 0 for s in (0, 1))

    def _nonnegative(self, c: Op) -> Affine | None:
        """v when compare c is ``v >= 0`` or ``v > -1`` (either order), else None."""
        if c.kind is not Kind.ICMP or len(c.operands) != 2:
            return None
        pred = c.attrs.get("pred")
        for slot, bound in ((0, {"sge": 0, "sgt": -1}), (1, {"sle": 0, "slt": -1})):
            k = bound.get(str(pred))
            if k is not None and self.gr.const_operand(c.id, 1 - slot) == k:
                return self._known(c.id, slot)
        return None

    def _negative(self, c: Op) -> Affine | None:
        """v when compare c is ``v < 0`` (or ``0 > v``), else None."""
        if c.kind is not Kind.ICMP or len(c.operands) != 2:
            return None
        pred = c.attrs.get("pred")
        slot = 0 if pred == "slt" else 1 if pred == "sgt" else None
        if slot is None or self.gr.const_operand(c.id, 1 - slot) != 0:
            return None
        return self._known(c.id, slot)

    def _def_of(self, v: Affine) -> Op | None:
        k = _single(v)
        return self.gr.op(k) if isinstance(k, int) and k in self.gr and v == Affine.of_atom(k) else None


def recombine(
    atoms: dict[Any, Atom], remainders: dict[Any, tuple[Affine, Affine, Affine]], a: Affine, b: Affine
) -> Affine:
    """``a + b``, with ``c·(q·d) + c·(x - q·d)`` read as ``c·x``: a quotient times its divisor plus the
    remainder of the same division is the dividend (``t[e // m, e % m]`` on ``(n, m):(m, 1)`` is ``e``),
    whether the product is another op than the remainder's own (the stride field a second read of m).
    The product must be an atom whose factors are exactly ``q`` and ``d`` (irscan/analysis/relate.py
    records the remainder where it reads ``x - q·d``), so this is the identity, never a guess."""
    s = a.add(b)
    for rk, c in s.terms:
        rec = remainders.get(rk)
        if rec is None:
            continue
        x, q, d = rec
        for pk, pc in s.terms:
            f = atoms[pk].factors if pk != rk and pc == c and pk in atoms else None
            if f is not None and (f == (q, d) or f == (d, q)):
                return s.add(Affine.of_atom(pk), -c).add(Affine.of_atom(rk), -c).add(x.scale(c))
    return s
