"""CuTe's FastDivmod, seen as the division it is.

``cute.fast_divmod_divisor`` is a struct ``{divisor, multiplier, shift1, shift2}`` (i32, i32, i8, i8);
``divmod(x, fdd)`` computes ``h = mulhi(x, multiplier); q = (((x - h) >> shift1) + h) >> shift2`` and
``r = x - q*divisor``.  The DSL's tile schedulers (FA4's) decompose ``ctaid.x`` this way, and the
remainder ``x - q*d`` is then a coordinate below d.  The shape is recognised from the ops alone: the
multiplier, the shifts and the divisor are fields of one kernel parameter, the divisor 4 bytes before
the multiplier.  Then q is recorded as a quotient of x by that divisor field (by its name: the kernel
reads it with an op of its own), so :meth:`irscan.analysis.bounds.Relations.remainder_idiom` sees
``x - q*d`` as ``x % d``.

Whatever the multiplier and the shifts (a field, or a select between two divisors' multipliers, as
FA4's L2-swizzled scheduler picks one), the shape is an unsigned division: ``h <= x``, so ``x - h``
does not wrap, ``((x - h) >> s1) + h <= x``, and ``q <= x``.  That holds for every x of the
register's width, so the quotient's interval is capped at the dividend's as well.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from irscan.analysis.intervals import Interval
from irscan.ir import Kind, ParamField

if TYPE_CHECKING:
    from irscan.analysis.dataflow import Graph
    from irscan.analysis.intervals import Affine
    from irscan.analysis.ranges import Atom


class FastDivmod:
    """Needs from its host: ``gr``, ``atoms``, ``interval``, ``operand``, ``name`` and ``relate``; fills
    ``fast_quotients``."""

    gr: Graph
    #: quotient atom -> (dividend, the divisor field's name)
    fast_quotients: dict[Any, tuple[Affine, str]]
    atoms: dict[Any, Atom]

    if TYPE_CHECKING:  # provided by the host class (irscan.analysis.ranges.Ranges)

        def interval(self, a: Affine, least_harm: bool = False) -> Interval: ...
        def operand(self, n: int, slot: int) -> Affine: ...
        def name(self, a: Affine) -> str: ...
        def relate(self, key: Any, mult: int, rhs: Affine, fact: str, lower: bool = False) -> None: ...

    def note_fast_divmod(self, q: int) -> None:
        """If op q is FastDivmod's final shift, record its quotient (see the module docstring)."""
        gr = self.gr
        add = self._fd_def(q, 0, Kind.ADD)
        if add is None:
            return
        for s in (0, 1):
            t, h = self._fd_def(add, s, Kind.LSHR), self._fd_def(add, 1 - s, Kind.MULHI)
            sub = self._fd_def(t, 0, Kind.SUB) if t is not None else None
            if h is None or sub is None or gr.defs(sub, 1) != [h]:
                continue
            slots = [m for m in (0, 1) if gr.same_read((sub, 0), (h, 1 - m))]
            if not slots:
                continue
            xv = self.operand(sub, 0)
            what = gr.op(q).results[0] if gr.op(q).results else "quotient"  # q is being evaluated: no value
            fact = f"unsigned division by a multiplier: {what} <= {self.name(xv)}"
            for m in slots:
                f = self._fd_field(h, m)
                if f is not None and f.offset >= 4:
                    divisor = f"arg{f.param}+{f.offset - 4}"
                    self.fast_quotients[q] = (xv, divisor)
                    fact = f"FastDivmod: {what} = {self.name(xv)} / {divisor}"
                    break
            xi, at = self.interval(xv), self.atoms.get(q)
            if xi.lo >= 0:  # x read as the unsigned value it is (a negative x is one above 2^31)
                self.relate(q, 1, xv, fact)
                if at is not None:
                    at.iv = Interval(at.iv.lo, max(at.iv.lo, min(at.iv.hi, xi.hi)))
            return

    def _fd_def(self, n: int, slot: int, kind: Kind) -> int | None:
        d = self.gr.defs(n, slot)
        return d[0] if len(d) == 1 and self.gr.op(d[0]).kind is kind else None

    def _fd_field(self, n: int, slot: int) -> ParamField | None:
        d = self.gr.defs(n, slot)
        f = self.gr.op(d[0]).attrs.get("field") if len(d) == 1 and self.gr.op(d[0]).kind is Kind.ARG else None
        return f if isinstance(f, ParamField) else None
