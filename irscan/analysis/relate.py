"""What each op says relationally: the :class:`~irscan.analysis.bounds.Upper` facts an op records.

:class:`OpRelations` is the half of :class:`irscan.analysis.bounds.Relations` that meets the ops:
``x % d``, floor multiples and quotients, min/max/clamp selects, the remainder idioms NVVM writes in
PTX and the bitwise ops that are arithmetic (the list is in the docstring of
:mod:`irscan.analysis.bounds`); the substitution that reads the recorded facts back into a bound over
the kernel's extents stays in bounds.py.  :data:`LESS`, :func:`select_compare` and
:func:`select_shape` are shared with guards.py, hostgrid.py and decide.py.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from irscan.analysis.intervals import Affine, bitwise, render
from irscan.analysis.intervals import single as _single
from irscan.ir import Kind

if TYPE_CHECKING:
    from collections.abc import Iterable

    from irscan.analysis.dataflow import Graph
    from irscan.analysis.intervals import Interval
    from irscan.analysis.ranges import Atom

__all__ = ["LESS", "OpRelations", "select_compare", "select_shape"]

#: pred -> (the operand on the smaller side, strict) for a compare that holds (shared with guards.py)
LESS = {"ult": (0, True), "slt": (0, True), "ule": (0, False), "sle": (0, False),
         "ugt": (1, True), "sgt": (1, True), "uge": (1, False), "sge": (1, False)}  # fmt: skip


class OpRelations:
    """Needs from its host: ``relate`` (irscan.analysis.bounds.Relations), ``interval``, ``name``, ``_derived``."""

    atoms: dict[Any, Atom]
    #: quotient atom -> (dividend, divisor); atom -> a number it is a multiple of (layouts' div=)
    quotients: dict[Any, tuple[Affine, Affine]]
    #: ``x & -2^k`` atom -> (x, 2^k): the floor multiple the mask rounds x down to
    floors: dict[Any, tuple[Affine, int]]
    fast_quotients: dict[Any, tuple[Affine, str]]
    #: remainder atom -> (x, q, d): the value x - q*d, q a quotient of x by d (floordiv.recombine)
    remainders: dict[Any, tuple[Affine, Affine, Affine]]
    divisors: dict[Any, int]

    if TYPE_CHECKING:  # provided by the host classes (bounds.Relations, irscan.analysis.ranges.Ranges)
        gr: Graph
        _memo: dict[Any, Affine]

        def relate(self, key: Any, mult: int, rhs: Affine, fact: str, lower: bool = False) -> None: ...
        def note_fast_divmod(self, q: int) -> None: ...
        def floor_remainder_interval(self, qk: Any, x: Affine, d: Affine) -> Interval | None: ...
        def interval(self, a: Affine, least_harm: bool = False) -> Interval: ...
        def name(self, a: Affine) -> str: ...
        def _derived(
            self, n: int, name: str, iv: Interval, inputs: Iterable[Affine], scales: bool = False, key: Any = None
        ) -> Affine: ...

    def relate_op(self, k: Kind, res: Affine, a: Affine, b: Affine, width: int) -> None:
        """Record what op ``res = a <k> b`` says relationally (the docstring of bounds.py lists it)."""
        key = _single(res)
        if key is None:
            return
        a_pos, b_pos = self.interval(a).lo >= 0, self.interval(b).lo >= 0
        if k is Kind.LSHR and isinstance(key, int):
            self.note_fast_divmod(key)  # irscan/analysis/divmod.py
        if k is Kind.REM and a_pos:
            self.relate(key, 1, a, f"{self.name(res)} <= {self.name(a)}")
            if not b.is_const() and b_pos:  # a divisor is >= 1: x % d <= d - g, g dividing x and d
                g = math.gcd(self.multiple_of(a), self.multiple_of(b))
                self.relate(key, 1, b.add(Affine.of_const(-g)), f"{self.name(res)} < {self.name(b)}" +
                            (f" (both multiples of {g})" if g > 1 else ""))  # fmt: skip
        elif k is Kind.DIV and a_pos and b_pos:
            self.quotients[key] = (a, b)
            if b.is_const() and b.const > 0:
                self.relate(key, b.const, a, f"floor multiple: {b.const}*({self.name(res)}) <= {self.name(a)}")
            elif not b.is_const():  # a divisor is >= 1
                self.relate(key, 1, a, f"{self.name(res)} <= {self.name(a)}")
        elif k is Kind.DIV and isinstance(key, int) and self.gr.op(key).signed:
            self.quotients[key] = (a, b)  # truncating, so x - q*d is in (-|d|, |d|) whatever the signs
        elif k is Kind.ASHR and b.is_const() and (x := self._biased_dividend(key, b.const, width)) is not None:
            self.quotients[key] = (x, Affine.of_const(1 << b.const))  # PTX's signed x / 2^k, truncating
        elif k in (Kind.LSHR, Kind.ASHR) and a_pos and b.is_const() and 0 <= b.const < 64:
            self.quotients[key] = (a, Affine.of_const(1 << b.const))  # so x - 2^k*(x >> k) is x % 2^k
            self.relate(key, 1 << b.const, a, f"floor multiple: {1 << b.const}*({self.name(res)}) <= {self.name(a)}")
        elif k in (Kind.LSHR, Kind.ASHR) and a_pos and b_pos:  # a shift by an input (FastDivmod's)
            self.relate(key, 1, a, f"{self.name(res)} <= {self.name(a)}")
        elif k is Kind.AND:
            for x, m in ((a, b), (b, a)):
                low = self._low_mask(x, m, width)
                if low:  # x & -2^k is 2^k*floor(x / 2^k): between x - 2^k + 1 and x, for every x
                    self.floors[key] = (x, low)
                    what = f"floor multiple: {self.name(res)}"
                    self.relate(key, 1, x, f"{what} <= {self.name(x)}")
                    self.relate(key, 1, x.add(Affine.of_const(1 - low)), f"{what} > {self.name(x)} - {low}", lower=True)
            for x, pos in ((a, a_pos), (b, b_pos)):
                if pos and not x.is_const():
                    self.relate(key, 1, x, f"{self.name(res)} <= {self.name(x)}")
        elif k is Kind.MIN:
            for x in (a, b):
                self.relate(key, 1, x, f"{self.name(res)} <= {self.name(x)}")
        elif k is Kind.MULHI and a_pos and b_pos:
            for x, y in ((a, b), (b, a)):  # (x * y) >> w <= x when y < 2^w
                if self.interval(y).hi < (1 << width) and not x.is_const():
                    self.relate(key, 1, x, f"{self.name(res)} <= {self.name(x)}")

    def _low_mask(self, x: Affine, m: Affine, width: int) -> int:
        """2^k when ``x & m`` clears the low k bits of x only (m is -2^k in ``width`` bits), else 0.
        Written unsigned (``0xFFFFFF80``), the mask also clears the bits above ``width``, so it is
        taken so only for an x that has none."""
        if x.is_const() or not m.is_const() or not 0 < width <= 64:
            return 0
        low = -m.const if m.const < 0 else (1 << width) - m.const
        unsigned_ok = m.const < 0 or 0 <= self.interval(x).lo <= self.interval(x).hi < (1 << width)
        return low if 1 < low < (1 << width) and low & (low - 1) == 0 and unsigned_ok else 0

    def relate_select(self, n: int, res: Affine, a: Affine, b: Affine) -> None:
        """``select(u < v, a, b)`` as the DSL writes min, max and clamps (:func:`select_shape`): a min
        is at most either arm, a max at least either, a clamp at most v - 1."""
        key, cmp = _single(res), select_compare(self.gr, n)
        if key is None or cmp is None:
            return
        c, side = cmp
        u, v = self._known(c, side[0]), self._known(c, 1 - side[0])  # the compare says u < v (or <=)
        if u is None or v is None:
            return
        below = self.interval(a.add(u.scale(-1))).hi <= 0
        what, shape = f"{self.name(res)}", select_shape(a, b, u, v, side[1], below)
        if shape == "min":
            self.relate(key, 1, u, f"{what} = min: <= {self.name(u)}")
            self.relate(key, 1, v, f"{what} = min: <= {self.name(v)}")
        elif shape == "max":
            self.relate(key, 1, u, f"{what} = max: >= {self.name(u)}", lower=True)
            self.relate(key, 1, v, f"{what} = max: >= {self.name(v)}", lower=True)
        elif shape == "clamp":
            self.relate(key, 1, b, f"{what} = clamp: <= {self.name(b)}")
        elif shape == "fallback":  # the true arm is below v; the constant is below v - 1 + k too
            top = v.add(Affine.of_const(0 if not side[1] else -1))
            k = max(b.const - self.interval(top).lo, 0)
            fact = f"{what} = {self.name(u)} while below {self.name(v)}, else {b.const}"
            self.relate(key, 1, top.add(Affine.of_const(k)), fact)

    def _biased_dividend(self, q: Any, k: int, width: int) -> Affine | None:
        """x where op q is ``(x + ((x >> w-1) >>> w-k)) >> k``: NVVM's signed division of x by 2^k (the
        bias rounds a negative x toward zero), which Python's ``x // 2^k`` then floors with a select."""
        if not isinstance(q, int) or q not in self.gr or not 0 < k < width:
            return None
        add = self.gr.defs(q, 0)
        if len(add) != 1 or self.gr.op(add[0]).kind is not Kind.ADD or len(self.gr.op(add[0]).operands) != 2:
            return None
        for s in (0, 1):
            bias, other = self.gr.defs(add[0], s), self.gr.defs(add[0], 1 - s)
            if len(bias) != 1 or len(other) != 1 or self.gr.op(bias[0]).kind is not Kind.LSHR:
                continue
            sign = self.gr.defs(bias[0], 0)
            if (self.gr.const_operand(bias[0], 1) != width - k or len(sign) != 1
                    or self.gr.op(sign[0]).kind is not Kind.ASHR or self.gr.const_operand(sign[0], 1) != width - 1
                    or self.gr.defs(sign[0], 0) != other):  # fmt: skip
                continue
            return self._known(add[0], 1 - s)
        return None

    def _known(self, n: int, slot: int) -> Affine | None:
        """Operand ``slot`` of op n if already evaluated (no evaluation from inside another's)."""
        raw = self.gr.op(n).operands[slot]
        if isinstance(raw, int):
            return Affine.of_const(raw)
        d = self.gr.defs(n, slot)
        return self._memo.get(d[0]) if len(d) == 1 else None

    def relate_product(self, prod: Affine, a: Affine, b: Affine) -> None:
        """``(x / d)·d``: between ``x - d + 1`` and ``x`` (so PTX's ``x - (x / d)·d`` is below d)."""
        key = _single(prod)
        for q, d in ((a, b), (b, a)):
            qk = _single(q)
            if key is None or qk is None or self.quotients.get(qk, (None, None))[1] != d:
                continue
            x = self.quotients[qk][0]
            if self.interval(x).lo < 0 or self.interval(d).lo < 0:  # a truncating quotient rounds up then
                continue
            what = f"floor multiple: {self.name(prod)}"
            self.relate(key, 1, x, f"{what} <= {self.name(x)}")
            self.relate(key, 1, x.add(d, -1).add(Affine.of_const(1)), f"{what} > {self.name(x)} - {self.name(d)}",
                        lower=True)  # fmt: skip

    def remainder_idiom(self, n: int, x: Affine, p: Affine, width: int) -> Affine | None:
        """``x - (x / d)·d``, the remainder as NVVM writes it in PTX (d a constant, an input, or the
        divisor field of a FastDivmod, irscan/analysis/divmod.py): an atom ``x % d``, bounded as a
        remainder is; also ``x - (y & -2^k)`` where x - y cancels a term (``y % 2^k + (x - y)``: the
        signed remainder NVVM writes as ``x - ((x + bias) & -2^k)``); None when ``p`` is neither."""
        key = p.terms[0][0] if len(p.terms) == 1 and not p.const else None
        if key is None or key not in self.atoms:
            return None
        c = p.terms[0][1]
        floor = self.floors.get(key) if c == 1 else None
        if floor is not None and _cancels(x, floor[0]):
            y, d = floor[0], Affine.of_const(floor[1])
            rest = x.add(y, -1)
            iv = bitwise(Kind.REM, self.interval(y), self.interval(d), width, False)
            res = self._derived(n, render(Kind.REM, self.name(y), str(floor[1])), iv, (y,), key=None if
                                rest.is_const() and not rest.const else ("rem", n))  # fmt: skip
            self.relate_op(Kind.REM, res, y, d, width)
            return res.add(rest)
        f = self.atoms[key].factors
        pairs = [(Affine.of_atom(key), Affine.of_const(c))] if c != 1 else [f, f[::-1]] if f else []
        for q, d in pairs:
            qk = _single(q)
            fiv = self.floor_remainder_interval(qk, x, d)  # x - floor(x / d)*d (floordiv.py)
            if fiv is not None or self._divides(qk, x, d):  # a negative x or d: a signed division's
                signed = self.interval(x).lo < 0 or self.interval(d).lo < 0
                iv = fiv if fiv is not None else bitwise(Kind.REM, self.interval(x), self.interval(d), width, signed)
                res = self._derived(n, render(Kind.REM, self.name(x), self.name(d)), iv, (x, d))
                self.relate_op(Kind.REM, res, x, d, width)
                if len(res.terms) == 1 and res.terms[0][1] == 1:  # x - q*d exactly: q*d + it is x
                    self.remainders[res.terms[0][0]] = (x, q, d)
                return res
        return None

    def _divides(self, qk: Any, x: Affine, d: Affine) -> bool:
        """Atom qk is a quotient of x by d: a division op's, or FastDivmod's by d's field."""
        if qk is None:
            return False
        if self.quotients.get(qk) == (x, d):
            return True
        fast, dk = self.fast_quotients.get(qk), _single(d)
        return fast is not None and fast[0] == x and dk is not None and self.atoms[dk].name == fast[1]

    def trailing_zeros(self, a: Affine) -> int:
        """How many low bits of ``a`` are known to be zero (from its coefficients and constant)."""
        g = 0
        for c in [a.const, *(c for _, c in a.terms)]:
            g = math.gcd(g, c)
        return (g & -g).bit_length() - 1 if g else 64

    def bitwise_identity(self, k: Kind, a: Affine, b: Affine, width: int) -> Affine | None:
        """A bitwise op that is arithmetic: ``x | y`` is ``x + y`` when y fits in the low bits x leaves
        zero (NVVM writes such adds as or); ``x ^ -1`` (``not``) is ``-x - 1``."""
        if k is Kind.OR:
            return self._disjoint_or(a, b)
        if k is Kind.XOR:
            for x, m in ((a, b), (b, a)):
                if m.is_const() and m.const in (-1, (1 << width) - 1):
                    return x.scale(-1).add(Affine.of_const(-1))
        return None

    def _disjoint_or(self, a: Affine, b: Affine) -> Affine | None:
        """``a | b`` is ``a + b`` when b fits in the low bits a leaves zero (NVVM writes such adds as or)."""
        for x, y in ((a, b), (b, a)):
            iv = self.interval(y)
            if iv.lo >= 0 and iv.hi < (1 << min(self.trailing_zeros(x), 63)):
                return x.add(y)
        return None

    def multiple_of(self, a: Affine) -> int:
        """A number ``a`` is always a multiple of (its coefficients, constant and the layouts' div=)."""
        g = abs(a.const)
        for k, c in a.terms:
            g = math.gcd(g, c * self.divisors.get(k, 1))
        return g or 1


def select_compare(gr: Graph, n: int) -> tuple[int, tuple[int, bool]] | None:
    """Select n's condition when it is one ordering compare: (its op, its :data:`LESS` side)."""
    conds = gr.defs(n, 0)
    c = gr.op(conds[0]) if len(conds) == 1 else None
    if c is None or c.kind is not Kind.ICMP or len(c.operands) != 2:
        return None
    side = LESS.get(str(c.attrs.get("pred", "")))
    return None if side is None else (c.id, side)


def select_shape(a: Affine, b: Affine, small: Affine, big: Affine, strict: bool, below: bool = False) -> str | None:
    """What ``select(small < big, a, b)`` is: ``"min"`` (arms small, big), ``"max"`` (big, small),
    ``"clamp"`` (small, big - 1 under a strict compare: min(small, big - 1)), ``"fallback"`` (small,
    or a constant where the compare fails: ``row if row < n_rows else 0``; ``below``: the caller's
    ranges prove a <= small, as ``row - (row >= n ? n : 0)`` is), or None."""
    if (a, b) == (small, big):
        return "min"
    if (a, b) == (big, small):
        return "max"
    if strict and a == small and b == big.add(Affine.of_const(-1)):
        return "clamp"
    return "fallback" if (a == small or below) and not b.terms and small.terms else None


def _cancels(x: Affine, y: Affine) -> bool:
    """``x - y`` drops a term of x (the two share an input with the same coefficient)."""
    ys = dict(y.terms)
    return any(ys.get(k) == c for k, c in x.terms)
