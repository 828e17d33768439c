"""CuTe's FastDivmod, seen as the division it is.

``cute.fast_divmod_divisor`` is a struct ``{divisor, multiplier, shift1, shift2}`` (i32, i32, i8, i8);
``divmod(x, fdd)`` computes ``h = mulhi(x, multiplier); q = (((x - h) >> shift1) + h) >> shift2`` and
``r = x - q*divisor``.  The DSL's tile schedulers (FA4's) decompose ``ctaid.x`` this way, and the
remainder ``x - q*d`` is then a coordinate below d.  The shape is recognised from the ops alone: the
multiplier, the shifts and the divisor are fields of one kernel parameter, the divisor 4 bytes before
the multiplier.  Then q is recorded as a quotient of x by that divisor field (by its name: the kernel
reads it with an op of its own), so :meth:`irscan.analysis.relate.OpRelations.remainder_idiom` sees
``x - q*d`` as ``x % d``.

Whatever the multiplier and the shifts (a field, or a select between two divisors' multipliers, as
FA4's L2-swizzled scheduler picks one), the shape is an unsigned division: ``h <= x``, so ``x - h``
does not wrap, ``((x - h) >> s1) + h <= x``, and ``q <= x``.  That holds for every x of the
register's width, so the quotient's interval is capped at the dividend's as well.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from irscan.analysis.intervals import Interval
from irscan.analysis.params import field_at, unnamed_field
from irscan.ir import Kind, ParamField

if TYPE_CHECKING:
    from irscan.analysis.dataflow import Graph, Use
    from irscan.analysis.intervals import Affine
    from irscan.analysis.params import Field
    from irscan.analysis.ranges import Atom
    from irscan.ir import Op


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
        def _fields_of(self, index: int) -> list[Field]: ...
        def _param_field(self, n: int, op: Op) -> ParamField | None: ...

    def note_fast_divmod(self, q: int) -> None:
        """If op q is FastDivmod's final shift, record its quotient (see the module docstring)."""
        gr = self.gr
        add = self._fd_def(q, 0, Kind.ADD)
        if add is None:
            return
        for s in (0, 1):
            t, h = self._fd_def(add, s, Kind.LSHR), self._mulhi_def(add, 1 - s)
            sub = self._fd_def(t, 0, Kind.SUB) if t is not None else None
            if h is None or sub is None or gr.defs(sub, 1) != [h[0]]:
                continue
            reads = h[1]
            slots = [m for m in (0, 1) if gr.same_read((sub, 0), reads[1 - m])]
            if not slots:
                continue
            xv = self.operand(sub, 0)
            what = gr.op(q).results[0] if gr.op(q).results else "quotient"  # q is being evaluated: no value
            fact = f"unsigned division by a multiplier: {what} <= {self.name(xv)}"
            for m in slots:
                divisor = self._fd_divisor(*reads[m])
                if divisor is not None:
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

    def _mulhi_def(self, n: int, slot: int) -> tuple[int, tuple[Use, Use]] | None:
        """The multiply-high defining operand ``slot`` of op n, with the reads of its two factors: a
        MULHI op (PTX ``mul.hi``), or the form MLIR spells it in, ``trunc(lshr(mul(zext x, zext m), w))``
        to w bits from a 2w-bit product of two w-bit zero extensions (exactly ``mulhi.u(x, m)``)."""
        gr = self.gr
        d = gr.defs(n, slot)
        op = gr.op(d[0]) if len(d) == 1 else None
        if op is None:
            return None
        if op.kind is Kind.MULHI:
            return op.id, ((op.id, 0), (op.id, 1))
        w = op.width
        sh = self._fd_def(op.id, 0, Kind.LSHR) if op.kind is Kind.TRUNC else None
        prod = self._fd_def(sh, 0, Kind.MUL) if sh is not None and gr.const_operand(sh, 1) == w else None
        if prod is None or gr.op(prod).width != 2 * w:
            return None
        ext = [self._fd_def(prod, k, Kind.ZEXT) for k in (0, 1)]
        if any(e is None or gr.op(e).src_width != w for e in ext):
            return None
        return op.id, ((ext[0], 0), (ext[1], 0))  # type: ignore[return-value]

    def _fd_divisor(self, n: int, slot: int) -> str | None:
        """The name of the divisor field beside the multiplier operand ``slot`` of op n reads (as that
        field's own read is named): 4 bytes before it (PTX ``ld.param``), or the struct member before
        it (MLIR ``extractvalue %argK[1]``: ``argK[0]``)."""
        d = self.gr.defs(n, slot)
        op = self.gr.op(d[0]) if len(d) == 1 else None
        f = self._param_field(d[0], op) if op is not None else None
        if f is not None:
            named = field_at(self._fields_of(f.param), ParamField(f.param, f.offset - 4, 32))
            return None if f.offset < 4 else named.name if named is not None else unnamed_field(f.param, f.offset - 4)
        path = list(op.attrs.get("path", ())) if op is not None and op.kind is Kind.EXTRACT else []
        base = self.gr.defs(d[0], 0) if path and path[-1] >= 1 else []
        if len(base) != 1 or self.gr.op(base[0]).kind is not Kind.ARG:
            return None
        return f"arg{self.gr.op(base[0]).attrs.get('param', -1)}{[*path[:-1], path[-1] - 1]}"
