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

What each op says is recorded by :class:`irscan.analysis.relate.OpRelations` (relate.py), the other
facts by the modules named above, all through :meth:`Relations.relate`.

:meth:`Relations.bounds` substitutes these one-sided bounds into a value, exactly and linearly (with
rational coefficients rounded up at the end, which is sound because extents are non-negative), until
only *extents* remain: kernel-parameter fields and scalar arguments, named as users know them.  No
solver: the common forms (a tile times a block index plus a lane, against the extent the grid was
computed from) are decided by the substitution itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import ceil, floor
from typing import TYPE_CHECKING, Any

from irscan.analysis.intervals import Affine
from irscan.analysis.relate import OpRelations

if TYPE_CHECKING:
    from irscan.analysis.ranges import Atom

__all__ = ["Bound", "Relations", "Upper"]

I32_MAX = (1 << 31) - 1
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
    #: the bound with every extent at the largest value the analysis gives it (a field the host computes
    #: as ``ceil(F / 128)`` of a 32-bit F is at most 2^24); None where it is not known (a stub)
    most: int | None = None
    #: (extent name, the largest value the analysis gives it), for the extents of ``terms`` (Relations
    #: bounds only): rule (a) asks whether one of them must reach 2^31 - 1 for the bound to
    tops: tuple[tuple[str, int], ...] = ()


#: one partial substitution: coefficients by atom key, the constant, the facts used, the guards used
_State = tuple[dict[Any, Fraction], Fraction, tuple[str, ...], frozenset[int]]


class Relations(OpRelations):
    """Needs from its host: ``atoms``, ``uppers``, ``lowers``, ``interval`` and ``guards_at``."""

    atoms: dict[Any, Atom]
    uppers: dict[Any, list[Upper]]
    lowers: dict[Any, list[Upper]]

    if TYPE_CHECKING:  # provided by the host class (irscan.analysis.ranges.Ranges)

        def guards_at(self, at: int) -> list[tuple[Affine, Affine, str]]: ...
        def coordinate_bound(self, at: int) -> Bound | None: ...
        def product_uppers(self, key: Any, guards: list[tuple[Affine, Affine, str]]) -> list[tuple[Affine, str]]: ...

    def relate(self, key: Any, mult: int, rhs: Affine, fact: str, lower: bool = False) -> None:
        """Record ``mult·atom(key) <= rhs`` (``>=`` with ``lower``)."""
        table = self.lowers if lower else self.uppers
        ups = table.setdefault(key, [])
        if len(ups) < 6 and all(u.rhs != rhs or u.mult != mult for u in ups):
            ups.append(Upper(mult, rhs, fact))

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
        tops: dict[str, int] = {}
        i32 = True
        most = const
        for k, c in coefs.items():
            at = self.atoms[k]
            by_name[at.name] = by_name.get(at.name, Fraction(0)) + c
            tops[at.name] = min(tops.get(at.name, at.iv.hi), at.iv.hi)  # two atoms of one input: the tighter
            i32 = i32 and at.iv.hi <= I32_MAX
            most += c * (at.iv.hi if c > 0 else at.iv.lo)
        # a coefficient stays exact (16*(k >> 8) is at most k/16, not k): an int where it is one
        terms = tuple(sorted((n, _exact(c)) for n, c in by_name.items() if c))
        top = tuple((n, tops[n]) for n, _ in terms)
        return Bound(terms, ceil(const), i32, "; ".join(dict.fromkeys(facts)), most=floor(most), tops=top)


def _exact(c: Fraction) -> int | Fraction:
    return int(c) if c.denominator == 1 else c


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
