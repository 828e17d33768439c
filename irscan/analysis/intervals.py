"""Integer intervals and affine forms: the arithmetic under irscan/ranges.py, with no IR in it.

An :class:`Affine` is ``Σ coef·atom + const`` over opaque atom keys; an :class:`Interval` bounds a
value.  ``bitwise`` gives sound intervals for the non-linear ops (shifts, masks, division, min/max).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from irscan.ir import Kind


@dataclass(frozen=True, slots=True)
class Interval:
    lo: int
    hi: int

    def __add__(self, o: Interval) -> Interval:
        return Interval(self.lo + o.lo, self.hi + o.hi)

    def scale(self, k: int) -> Interval:
        a, b = self.lo * k, self.hi * k
        return Interval(min(a, b), max(a, b))

    def times(self, o: Interval) -> Interval:
        ps = (self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi)
        return Interval(min(ps), max(ps))

    def union(self, o: Interval) -> Interval:
        return Interval(min(self.lo, o.lo), max(self.hi, o.hi))

    def least_harm(self) -> int:
        """The value closest to zero: a free input at its least harmful."""
        return 0 if self.lo <= 0 <= self.hi else (self.lo if self.lo > 0 else self.hi)


def signed_range(width: int) -> Interval:
    return Interval(-(1 << (width - 1)), (1 << (width - 1)) - 1)


def unsigned_range(width: int) -> Interval:
    return Interval(0, (1 << width) - 1)


def free_range(width: int) -> Interval:
    """A free input of this width: non-negative, up to the signed maximum."""
    return Interval(0, (1 << (max(width, 1) - 1)) - 1)


@dataclass(frozen=True, slots=True)
class Affine:
    terms: tuple[tuple[Any, int], ...]  # (atom key, coefficient), sorted by key repr, no zero coefs
    const: int = 0

    @staticmethod
    def of_const(c: int) -> Affine:
        return Affine((), c)

    @staticmethod
    def of_atom(key: Any) -> Affine:
        return Affine(((key, 1),), 0)

    def is_const(self) -> bool:
        return not self.terms

    def add(self, o: Affine, sign: int = 1) -> Affine:
        d: dict[Any, int] = dict(self.terms)
        for k, c in o.terms:
            d[k] = d.get(k, 0) + sign * c
        return Affine(_norm(d), self.const + sign * o.const)

    def scale(self, k: int) -> Affine:
        if k == 0:
            return Affine.of_const(0)
        return Affine(tuple((a, c * k) for a, c in self.terms), self.const * k)


def _norm(d: dict[Any, int]) -> tuple[tuple[Any, int], ...]:
    return tuple(sorted(((k, c) for k, c in d.items() if c), key=lambda kc: repr(kc[0])))


def _tdiv(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y > 0) else -q


def bitwise(k: Kind, a: Interval, b: Interval, w: int, signed: bool | None) -> Interval:
    """Sound intervals for the non-linear integer ops."""
    full = signed_range(w)
    if k in (Kind.LSHR, Kind.ASHR):
        if b.lo < 0 or b.hi >= w:
            return full if k is Kind.ASHR else unsigned_range(w)
        if a.lo >= 0 or k is Kind.ASHR:
            return Interval(a.lo >> b.hi if a.lo >= 0 else a.lo >> b.lo, a.hi >> b.lo if a.hi >= 0 else a.hi >> b.hi)
        return Interval(0, ((1 << w) - 1) >> b.lo)
    if k is Kind.AND:
        if b.lo >= 0 and a.lo >= 0:
            return Interval(0, min(a.hi, b.hi))
        if b.lo >= 0:
            return Interval(0, b.hi)
        if a.lo >= 0:
            return Interval(0, a.hi)
        return full
    if k in (Kind.OR, Kind.XOR):
        if a.lo >= 0 and b.lo >= 0:
            return Interval(0, (1 << max(a.hi, b.hi).bit_length()) - 1)
        return full
    # a divisor is never 0 where the program means anything (LLVM: undefined; PTX: unspecified), so a
    # non-negative divisor is taken as at least 1
    if k is Kind.DIV:
        if b.lo >= 0 and b.hi > 0 and (a.lo >= 0 or signed is not False):
            # signed division truncates toward zero; the extremes are at the corners
            qs = [_tdiv(x, y) for x in (a.lo, a.hi) for y in (max(b.lo, 1), b.hi)]
            return Interval(min(qs), max(qs))
        return full
    if k is Kind.REM:
        if b.lo >= 0 and b.hi > 0:
            if a.lo >= 0:
                return Interval(0, min(b.hi - 1, a.hi))
            return Interval(0, b.hi - 1) if signed is False else Interval(-(b.hi - 1), b.hi - 1)
        if signed:  # a truncating remainder: |r| < |d| and r has x's sign, whatever d's
            m = max(abs(b.lo), abs(b.hi))
            return Interval(0, min(m - 1, a.hi)) if a.lo >= 0 else Interval(1 - m, m - 1)
        return full
    if k is Kind.MIN:
        return Interval(min(a.lo, b.lo), min(a.hi, b.hi))
    if k is Kind.MAX:
        return Interval(max(a.lo, b.lo), max(a.hi, b.hi))
    if k is Kind.MULHI:
        if a.lo >= 0 and b.lo >= 0:
            return Interval(0, (a.hi * b.hi) >> w)
        return full
    return full


def single(a: Affine) -> Any:
    """The atom key of a value that is one atom, else None."""
    return a.terms[0][0] if len(a.terms) == 1 and a.terms[0][1] == 1 and not a.const else None


def paren(s: str) -> str:
    """A name in parentheses when it has spaces (an operand of a larger expression's name)."""
    return f"({s})" if " " in s else s


_SYMBOL = {Kind.LSHR: ">>", Kind.ASHR: ">>", Kind.AND: "&", Kind.OR: "|", Kind.XOR: "^", Kind.DIV: "/", Kind.REM: "%"}


def render(k: Kind, a: str, b: str) -> str:
    """The name of ``a <k> b`` from its operands' names: ``x % d``, ``min(a, b)``."""
    if k in _SYMBOL:
        return f"{paren(a)} {_SYMBOL[k]} {paren(b)}"
    return f"{k.value}({a}, {b})"
