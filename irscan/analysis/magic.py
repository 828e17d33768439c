"""Division by a constant through a multiply-high "magic number", seen as the division it is.

NVVM lowers ``x / d`` by a constant d (Granlund-Montgomery; Hacker's Delight ch. 10) to
``mulhi(x, M) >> s`` (PTX ``mul.hi.u32`` then ``shr.u32``); a signed x adds the sign fix-up
``q + (q >>> (w - 1))`` (``mul.hi.s32``, with ``+ x`` first when M is negative as a signed number:
then ``mulhi(x, M) + x`` is ``floor(x·(M + 2^w) / 2^w)``, an identity); an 8-bit division promoted to
16 bits is ``(x·M) >> n``.  So ``x - d·q`` is ``x % d`` (relate.py, ``remainder_idiom``) once q is
known to be ``x / d``.  Which d, if any, is decided here from M and the total shift n alone, and
proved, not assumed:

For ``x >= 0`` write ``x = q·d + r`` (``0 <= r < d``) and take ``d = ceil(2^n / M)``, so that
``e = M·d - 2^n >= 0``.  Then ``x·M / 2^n = q + (r·2^n + x·e) / (d·2^n)``: ``floor(x·M / 2^n) = q``
exactly when ``r·2^n + x·e < d·2^n``.  That left side grows with r and with x, so over ``[0, X]`` it is
largest at ``x = X`` or at the largest ``x <= X`` with ``r = d - 1``: checking those two x proves it
for every x of the range.  For ``x = -y < 0``, ``floor(-y·M / 2^n) + 1 = -(y // d)`` (the fix-up's
truncation) exactly when ``0 < r·2^n + y·e <= d·2^n``: the same two-point check over ``[1, 2^(w-1)]``,
with ``e > 0``.

The range is the *register's*: an ideal x past the width (a wrapped ``4*r``) can hold any value of
it, and the proof then covers the whole type, so the sequence computes exactly what a division op
would, and is taken as one (a quotient, as for ``div``: irscan/analysis/relate.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from irscan.analysis.intervals import Affine, Interval
from irscan.analysis.intervals import single as _one
from irscan.ir import Kind

if TYPE_CHECKING:
    from collections.abc import Iterable

    from irscan.analysis.dataflow import Graph
    from irscan.analysis.ranges import Atom


@dataclass(frozen=True, slots=True)
class Magic:
    """``floor(x·m / 2^n)`` for the register value of x (``m > 0``): ``signed`` for a ``mul.hi.s``
    register (x may be negative when its ideal value passes 2^(w-1)); ``neg_ok``: the form also holds
    for a negative x (false once a logical shift has read it as unsigned); ``ideal``: the product is
    the ideal one (``(x·M) >> n``), so x ranges over its ideal interval."""

    x: Affine
    m: int
    n: int
    width: int
    signed: bool
    neg_ok: bool = True
    ideal: bool = False


def magic_divisor(m: int, n: int, hi: int) -> int | None:
    """d with ``floor(x·m / 2^n) == x // d`` for every ``0 <= x <= hi`` (the module docstring's
    two-point proof), else None."""
    if m <= 0 or n < 0 or hi < 0:
        return None
    d = -(-(1 << n) // m)
    if d < 2:
        return None
    top = hi - (hi - (d - 1)) % d if hi >= d - 1 else None  # the largest x <= hi with x % d == d - 1
    return d if all((x * m) >> n == x // d for x in (hi, top) if x is not None) else None


def magic_negative(m: int, n: int, d: int, hi: int) -> bool:
    """``floor(-y·m / 2^n) + 1 == -(y // d)`` for every ``1 <= y <= hi`` (the fix-up's truncation)."""
    e = m * d - (1 << n)
    if e <= 0:
        return False
    top = hi - (hi - (d - 1)) % d if hi >= d - 1 else None
    return all(-((-y * m) >> n) - 1 == y // d for y in (hi, top) if y is not None and y >= 1)


class MagicDivision:
    """Needs from its host: ``gr``, ``atoms``, ``quotients``, ``interval``, ``name``, ``relate`` and
    ``_derived``; fills ``magics`` and ``sign_bits``."""

    gr: Graph
    atoms: dict[Any, Atom]
    quotients: dict[Any, tuple[Affine, Affine]]
    #: atom -> the magic product it is; atom -> the signed magic atom whose sign bit it is
    magics: dict[Any, Magic]
    sign_bits: dict[Any, Any]

    if TYPE_CHECKING:  # provided by the host class (irscan.analysis.ranges.Ranges)

        def interval(self, a: Affine, least_harm: bool = False) -> Interval: ...
        def name(self, a: Affine) -> str: ...
        def relate(self, key: Any, mult: int, rhs: Affine, fact: str, lower: bool = False) -> None: ...
        def _derived(
            self, n: int, name: str, iv: Interval, inputs: Iterable[Affine], scales: bool = False, key: Any = None
        ) -> Affine: ...

    def note_magic(self, k: Kind, res: Affine, a: Affine, b: Affine, width: int, signed: bool | None) -> None:
        """Op ``res = a <k> b``: record a magic product (mulhi by a constant, its shift, a shifted
        ideal product) and, where the proof holds, the quotient it is."""
        key = _one(res)
        if k is Kind.MULHI and a.is_const():
            a, b = b, a
        if key is None or not b.is_const() or width <= 1:
            return
        if k is Kind.MULHI and not a.is_const():
            m = b.const
            if signed and m < 0:  # mulhi(x, M - 2^w): magic only once + x adds 2^w·x back
                self.magics[key] = Magic(a, m, width, width, True)
                return
            self.magics[key] = Magic(a, m, width, width, bool(signed))
        elif k in (Kind.LSHR, Kind.ASHR) and 0 <= b.const < 64:
            s, src = b.const, _one(a)
            g = self.magics.get(src) if src is not None else None
            if g is not None and g.m > 0:
                if g.signed and s == g.width - 1 and not g.ideal:
                    self.sign_bits[key] = src
                neg_ok = g.neg_ok and k is Kind.ASHR  # a logical shift of a negative is no floor
                self.magics[key] = Magic(g.x, g.m, g.n + s, g.width, g.signed, neg_ok, g.ideal)
            elif src is None and len(a.terms) == 1 and a.terms[0][1] > 1 and not a.const:
                m = a.terms[0][1]  # (M·x) >> n with the product exact
                self.magics[key] = Magic(Affine.of_atom(a.terms[0][0]), m, s, width, False, False, True)
            else:
                return
        else:
            return
        self._settle(key, fixed_up=False)

    def magic_sum(self, n: int, a: Affine, b: Affine) -> Affine | None:
        """``a + b`` where it completes a signed magic division: ``mulhi(x, M) + x`` (M negative as a
        signed number: the add-back) or ``q + (q >>> (w - 1))`` (the sign fix-up, then ``x / d``)."""
        ka, kb = _one(a), _one(b)
        for k, other, ko in ((ka, b, kb), (kb, a, ka)):
            g = self.magics.get(k) if k is not None else None
            if g is None:
                continue
            if g.m < 0 and other == g.x:
                res = self._derived(n, self.name(a.add(b)), self.interval(a.add(b)), (g.x,))
                rk = _one(res)
                if rk is not None:
                    self.magics[rk] = Magic(g.x, g.m + (1 << g.width), g.width, g.width, True)
                    self._settle(rk, fixed_up=False)
                return res
            if ko is not None and self.sign_bits.get(ko) == k:
                return self._settle_fixup(n, g)
        return None

    def _settle(self, key: Any, fixed_up: bool) -> int | None:
        """Record ``key`` as ``x / d`` if its magic product provably is (without a fix-up: x >= 0)."""
        g = self.magics[key]
        d = self._divisor(g, fixed_up)
        if d is None:
            return None
        dv = Affine.of_const(d)
        self.quotients[key] = (g.x, dv)
        what = "floor" if g.ideal else "mulhi"
        fact = f"magic-number division ({what} by {g.m} >> {g.n}): {self.name(Affine.of_atom(key))} = "
        self.relate(key, d, g.x, fact + f"{self.name(g.x)} / {d}, so {d}*it <= {self.name(g.x)}")
        return d

    def _divisor(self, g: Magic, fixed_up: bool) -> int | None:
        """d when the magic product g is ``x / d`` for every value x's register can hold."""
        xi = self.interval(g.x)
        if xi.lo < 0 or g.m <= 0:
            return None
        if g.ideal:
            return magic_divisor(g.m, g.n, xi.hi)
        if not g.signed:
            return magic_divisor(g.m, g.n, min(xi.hi, (1 << g.width) - 1))
        half = 1 << (g.width - 1)
        d = magic_divisor(g.m, g.n, min(xi.hi, half - 1))
        if d is None or xi.hi < half:  # the register is the ideal value: never negative
            return d
        return d if fixed_up and g.neg_ok and magic_negative(g.m, g.n, d, half) else None

    def _settle_fixup(self, n: int, g: Magic) -> Affine | None:
        """The sign fix-up of a signed magic product: ``x / d`` (truncated) when proved."""
        probe = self._divisor(g, fixed_up=True)
        if probe is None:
            return None
        xi = self.interval(g.x)
        res = self._derived(n, f"{self.name(g.x)} / {probe}", Interval(xi.lo // probe, xi.hi // probe), (g.x,))
        rk = _one(res)
        if rk is not None:
            self.magics[rk] = g
            self._settle(rk, fixed_up=True)
        return res
