"""Relational upper bounds: ``value <= Σ coef·extent + const`` over the kernel's i32 extents.

Intervals alone say ``128*ctaid.x + tid.x`` reaches 2^38; what the IR knows is sharper: the host
computes the grid as ``ceil(M / 128)``, so ``128*ctaid.x <= M - 1``, and the value stays below
``M + 127`` for every M.  Such facts are *relations*: an atom bounded by an affine form of other atoms
(:class:`Upper`, ``mult·atom <= rhs``), recorded where the analysis meets them:

- ``x % d``: at most ``d - 1`` (``d - g`` when x and d are both multiples of g: the layouts' ``div=``),
  and at most ``x`` for ``x >= 0``; PTX's ``x - (x / d)·d``, CuTe's FastDivmod remainder
  (irscan/analysis/divmod.py) and ``x - d·q`` with q a multiply-high by a magic number proved to be
  ``x / d`` (irscan/analysis/magic.py) evaluate to such a remainder;
- floor multiples and quotients: ``t·(x / t) <= x``, ``x / d <= x``, ``(x >> s)·2^s <= x``,
  ``x & m <= x``, ``(x / d)·d`` between ``x - d + 1`` and ``x``, ``mulhi(x, m) <= x``; and the
  remainders they leave: ``x - (x & -2^k)``, ``x - 2^k·(x >> k)`` and ``x - d·(x / d)`` are ``x % 2^k``
  (``x % d``; in ``(-|d|, |d|)`` for a signed division of an x or d that may be negative, and for
  ``x - floor(x / d)·d``, the floor division's fix-up: irscan/analysis/floordiv.py), whichever way the
  two x are the same (one SSA value, one PTX register value:
  :meth:`irscan.analysis.dataflow.Graph.join_of`, or equal affine forms);
- ``min(a, b)`` (the op, or the select the DSL writes) at most either, a clamp at most its top;
- a loop counter at most its loop's bound plus the step (irscan/analysis/loops.py);
- the launch grid the host function stores (irscan/analysis/hostgrid.py): ``t·ctaid <= F - 1``;
- with a use point: a compare whose edge dominates it (irscan/analysis/guards.py), ``x <= M - 1``
  there; and an offset into a tensor is below the tensor's extent (irscan/analysis/coords.py).

:meth:`Relations.bounds` substitutes these one-sided bounds into a value, exactly and linearly (with
rational coefficients rounded up at the end, which is sound because extents are non-negative), until
only *extents* remain: kernel-parameter fields and scalar arguments, named as users know them.  No
solver: the common forms (a tile times a block index plus a lane, against the extent the grid was
computed from) are decided by the substitution itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from math import ceil
from typing import TYPE_CHECKING, Any

from irscan.analysis.intervals import Affine, bitwise, render
from irscan.analysis.intervals import single as _single
from irscan.ir import Kind

if TYPE_CHECKING:
    from collections.abc import Iterable

    from irscan.analysis.dataflow import Graph
    from irscan.analysis.intervals import Interval
    from irscan.analysis.ranges import Atom

__all__ = ["Bound", "Relations", "Upper"]

I32_MAX = (1 << 31) - 1
#: pred -> (the operand on the smaller side, strict) for a compare that holds (shared with guards.py)
LESS = {"ult": (0, True), "slt": (0, True), "ule": (0, False), "sle": (0, False),
         "ugt": (1, True), "sgt": (1, True), "uge": (1, False), "sge": (1, False)}  # fmt: skip
#: how many substitutions one bound may take, how many partial bounds are explored, how many returned
DEPTH = 16
BUDGET = 64
KEEP = 4


@dataclass(frozen=True, slots=True)
class Upper:
    """``mult·atom <= rhs`` (an affine form over the function's atoms), because of ``fact``.

    Kept in ``Relations.uppers``; in ``Relations.lowers`` the same shape reads ``mult·atom >= rhs``.
    """

    mult: int
    rhs: Affine
    fact: str


@dataclass(frozen=True, slots=True)
class Bound:
    """``value <= Σ coef·extent + const``: the interface the checks read (checks/reporting.py).

    ``terms``: (extent name, coefficient), extents being kernel inputs a user knows (``arg2.shape[0]``,
    ``arg5``); ``i32``: every extent is a 32-bit value (so at most 2^31 - 1); ``fact``: the facts the
    bound rests on, in words; ``tensor``/``modes``: for a coordinate loaded from memory that indexes
    tensor ``argK`` along these modes (rule (b)), else None/().
    """

    terms: tuple[tuple[str, int | Fraction], ...]  # a Fraction where the bound divides (k/16)
    const: int
    i32: bool
    fact: str
    tensor: int | None = None
    modes: tuple[int, ...] = ()


#: one partial substitution: coefficients by atom key, the constant, the facts used, the guards used
_State = tuple[dict[Any, Fraction], Fraction, tuple[str, ...], frozenset[int]]


class Relations:
    """Needs from its host: ``atoms``, ``uppers``, ``lowers``, ``interval`` and ``guards_at``."""

    atoms: dict[Any, Atom]
    uppers: dict[Any, list[Upper]]
    lowers: dict[Any, list[Upper]]
    #: quotient atom -> (dividend, divisor); atom -> a number it is a multiple of (layouts' div=)
    quotients: dict[Any, tuple[Affine, Affine]]
    #: ``x & -2^k`` atom -> (x, 2^k): the floor multiple the mask rounds x down to
    floors: dict[Any, tuple[Affine, int]]
    fast_quotients: dict[Any, tuple[Affine, str]]
    #: remainder atom -> (x, q, d): the value x - q*d, q a quotient of x by d (floordiv.recombine)
    remainders: dict[Any, tuple[Affine, Affine, Affine]]
    divisors: dict[Any, int]

    if TYPE_CHECKING:  # provided by the host class (irscan.analysis.ranges.Ranges)
        gr: Graph
        _memo: dict[Any, Affine]

        def guards_at(self, at: int) -> list[tuple[Affine, Affine, str]]: ...
        def note_fast_divmod(self, q: int) -> None: ...
        def floor_remainder_interval(self, qk: Any, x: Affine, d: Affine) -> Interval | None: ...
        def coordinate_bound(self, at: int) -> Bound | None: ...
        def product_uppers(self, key: Any, guards: list[tuple[Affine, Affine, str]]) -> list[tuple[Affine, str]]: ...
        def interval(self, a: Affine, least_harm: bool = False) -> Interval: ...
        def name(self, a: Affine) -> str: ...
        def _derived(
            self, n: int, name: str, iv: Interval, inputs: Iterable[Affine], scales: bool = False, key: Any = None
        ) -> Affine: ...

    def relate(self, key: Any, mult: int, rhs: Affine, fact: str, lower: bool = False) -> None:
        """Record ``mult·atom(key) <= rhs`` (``>=`` with ``lower``)."""
        table = self.lowers if lower else self.uppers
        ups = table.setdefault(key, [])
        if len(ups) < 6 and all(u.rhs != rhs or u.mult != mult for u in ups):
            ups.append(Upper(mult, rhs, fact))

    def relate_op(self, k: Kind, res: Affine, a: Affine, b: Affine, width: int) -> None:
        """Record what op ``res = a <k> b`` says relationally (the module docstring lists it)."""
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

    def is_extent(self, key: Any) -> bool:
        at = self.atoms.get(key)
        return at is not None and at.extent

    def bounds(self, value: Affine, at: int | None = None) -> list[Bound]:
        """Upper bounds of ``value`` over extents, tightest first; ``at``: the op where the value is
        used (compares whose true edge dominates it then bound it too).  Empty when none is known."""
        guards = self.guards_at(at) if at is not None else []
        start: _State = ({k: Fraction(c) for k, c in value.terms}, Fraction(value.const), (), frozenset())
        todo: list[tuple[_State, int]] = [(start, 0)]
        found: dict[tuple[tuple[tuple[str, int | Fraction], ...], int], Bound] = {}
        steps = 0
        while todo and steps < BUDGET:
            steps += 1
            state, depth = todo.pop()
            nxt = [] if depth >= DEPTH else self._step(state, guards)
            if nxt is None or self._pick(state[0]) is None:  # nothing but extents left (a guard on
                b = self._bound(state)  # an extent may still rewrite it: that is explored too)
                if b is not None:
                    found.setdefault((b.terms, b.const), b)
            todo.extend((s, depth + 1) for s in reversed(nxt or ()))
        coord = self.coordinate_bound(at) if at is not None else None
        if coord is not None and coord.i32:  # irscan/analysis/coords.py: the value indexes one mode of a tensor
            found[(coord.terms, coord.const)] = coord
        hi = self.interval(value).hi
        useful = [b for b in found.values() if b.terms or b.const < hi]
        # tightest first: what each allows with every extent at the i32 limit (then fewer extents)
        kept = sorted(useful, key=lambda b: (sum(c for _, c in b.terms) * I32_MAX + b.const, len(b.terms)))[:KEEP]
        # a coordinate of a mode of i64 extent bounds nothing below 2^31; it only names the tensor
        # whose slices rule (b) weighs, so it never takes the place of a bound that might hold
        return kept + ([coord] if coord is not None and not coord.i32 else [])

    def _step(self, state: _State, guards: list[tuple[Affine, Affine, str]]) -> list[_State] | None:
        """The states one substitution leads to; None when only extents remain."""
        coefs, const, facts, used = state
        out: list[_State] = []
        for gi, (x, rhs, fact) in enumerate(guards):  # x <= rhs on this path
            k = _multiple(coefs, x)
            if k is not None and gi not in used:
                out.append(_sub(coefs, const, x, rhs, k, (*facts, fact), used | {gi}))
        key = self._pick(coefs)
        if key is None:
            return out or None
        c = coefs[key]
        one = Affine.of_atom(key)
        table = self.uppers if c > 0 else self.lowers
        for up in table.get(key, ()):
            out.append(_sub(coefs, const, one.scale(up.mult), up.rhs, c / up.mult, (*facts, up.fact), used))
        for rhs, fact in self.product_uppers(key, guards) if c > 0 else ():  # u·d, u <= q (floordiv.py)
            out.append(_sub(coefs, const, one, rhs, c, (*facts, fact), used))
        iv = self.atoms[key].iv
        rest = dict(coefs)
        del rest[key]
        out.append((rest, const + c * (iv.hi if c > 0 else iv.lo), facts, used))
        return out

    def _pick(self, coefs: dict[Any, Fraction]) -> Any:
        """The term to substitute next: the largest one that is not an extent."""
        best, size = None, Fraction(-1)
        for k, c in coefs.items():
            if self.is_extent(k):
                continue
            s = abs(c) * max(abs(self.atoms[k].iv.hi), 1)
            if s > size:
                best, size = k, s
        return best

    def _bound(self, state: _State) -> Bound | None:
        coefs, const, facts, _ = state
        if not facts:
            return None  # the interval says as much
        by_name: dict[str, Fraction] = {}
        i32 = True
        for k, c in coefs.items():
            at = self.atoms[k]
            by_name[at.name] = by_name.get(at.name, Fraction(0)) + c
            i32 = i32 and at.iv.hi <= I32_MAX
        # a coefficient stays exact (16*(k >> 8) is at most k/16, not k): an int where it is one
        terms = tuple(sorted((n, _exact(c)) for n, c in by_name.items() if c))
        return Bound(terms, ceil(const), i32, "; ".join(dict.fromkeys(facts)))


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


def _exact(c: Fraction) -> int | Fraction:
    return int(c) if c.denominator == 1 else c


def _cancels(x: Affine, y: Affine) -> bool:
    """``x - y`` drops a term of x (the two share an input with the same coefficient)."""
    ys = dict(y.terms)
    return any(ys.get(k) == c for k, c in x.terms)


def _multiple(coefs: dict[Any, Fraction], x: Affine) -> Fraction | None:
    """k > 0 with ``coefs`` holding at least k·x's terms in the same direction, or None."""
    if not x.terms:
        return None
    k0, c0 = x.terms[0]
    have = coefs.get(k0)
    if have is None or (have > 0) != (c0 > 0):
        return None
    k = have / c0
    return k if all(coefs.get(a, Fraction(0)) * c > 0 for a, c in x.terms) else None


def _sub(
    coefs: dict[Any, Fraction],
    const: Fraction,
    x: Affine,
    rhs: Affine,
    k: Fraction,
    facts: tuple[str, ...],
    used: frozenset[int],
) -> _State:
    """``coefs + const - k·x + k·rhs``: sound for ``x <= rhs`` when k > 0, for ``x >= rhs`` when k < 0."""
    out = dict(coefs)
    for a, c in x.terms:
        out[a] = out.get(a, Fraction(0)) - k * c
    for a, c in rhs.terms:
        out[a] = out.get(a, Fraction(0)) + k * c
    return {a: c for a, c in out.items() if c}, const - k * x.const + k * rhs.const, facts, used
