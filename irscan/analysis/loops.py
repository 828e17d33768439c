"""Bounds for loop-carried values, from the loops' own compares (a mixin of irscan/ranges.py).

The DSL lowers its loops to blocks whose arguments carry the counters.  Three shapes cover what it
emits: ``i = init; i += step while i < B`` (the counter can hold up to B - 1 + step), the wrap-around
counter ``j = (j + 1 == B) ? 0 : j + 1`` of a flattened copy loop (never above B - 1), and the outer
digit ``k = cond ? k + s : k`` of a flattened loop nest (at most init + s * trips).  Anything else
stays unbounded in its type.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any, TypeVar

from irscan.analysis.intervals import Affine
from irscan.ir import Kind

if TYPE_CHECKING:
    from irscan.analysis.bounds import Upper
    from irscan.analysis.dataflow import Graph
    from irscan.analysis.intervals import Interval

T = TypeVar("T")

#: One step of the range evaluation: it yields the id of each op whose value it needs and is sent that
#: value back (or has :class:`Cycle` thrown in), and returns its result.  ``Ranges._run`` drives the
#: steps on an explicit stack, so no walk recurses as deep as the input's dependency chains.
Eval = Generator[int, Affine, T]

#: how many values one copy cycle may pass through before it is given up (a bounded walk per join)
_COPY_LIMIT = 64


class Cycle(Exception):
    """Raised when evaluation runs into a value that is being evaluated (a loop-carried value)."""


class LoopBounds:
    """Needs from its host: ``gr``, ``interval``, ``_operand``, ``_value`` and ``_const_operand``."""

    gr: Graph

    if TYPE_CHECKING:  # provided by the host class (irscan.analysis.ranges.Ranges)

        def interval(self, a: Affine, least_harm: bool = False) -> Interval: ...
        def name(self, a: Affine) -> str: ...
        def relate(self, key: Any, mult: int, rhs: Affine, fact: str, lower: bool = False) -> None: ...

        uppers: dict[Any, list[Upper]]

        def _operand(self, n: int, slot: int) -> Eval[Affine]: ...
        def _const_operand(self, n: int, slot: int) -> int | None: ...

    def _induction_bound(self, cyclic: list[int], key: Any) -> Eval[int | None]:
        """The largest value a loop-carried join can hold, from the loop's own compare; None if unknown.

        Two shapes the DSL emits: ``i = init; i += step while i < B`` (the join can carry up to
        B - 1 + step), and the wrap-around counter ``j = (j + 1 == B) ? 0 : j + 1`` (never above B - 1).
        """
        best: int | None = None
        for d in cyclic:
            if self.gr.op(d).kind is Kind.SELECT:
                v = yield from self._wraparound_bound(d)
                if v is None:
                    v = yield from self._odometer_bound(d, key)
            else:
                v = yield from self._step_bound(d, key)
                if v is None:
                    v = yield from self._accumulator_bound(d, key)
            if v is None:
                return None
            best = v if best is None else max(best, v)
        return best

    def _copy_cycle(self, cyclic: list[int], key: Any) -> Eval[Interval | None]:
        """The values a loop-carried join holds when its cycle only passes values around (``prev = cur``
        carried to the next iteration, ``select(first_thread, cur, prev)``, a block argument handed on
        unchanged): the union of the values entering the cycle, each evaluated on its own.  None when a
        value on the cycle is computed from it (a counter: :meth:`_induction_bound`) or the cycle runs
        past :data:`_COPY_LIMIT` values."""
        todo, seen = list(cyclic), {key}
        union: Interval | None = None
        while todo:
            e = todo.pop()
            if e in seen:
                continue
            seen.add(e)
            if len(seen) > _COPY_LIMIT:
                return None
            try:
                iv = self.interval((yield e))
                union = iv if union is None else union.union(iv)
                continue
            except Cycle:
                pass
            op = self.gr.op(e)
            if op.kind is Kind.PHI or (op.kind is Kind.MOV and op.operands):  # a block argument: its incoming
                todo += self.gr.defs(e, 0)
            elif op.kind is Kind.SELECT and len(op.operands) == 3:
                todo += self.gr.defs(e, 1) + self.gr.defs(e, 2)
            else:
                return None
        return union

    def relate_join(self, key: Any, vals: list[Affine]) -> None:
        """A join is at most what bounds every value reaching it: ``count = 0`` on entry, then the
        pipeline state's ``next_count`` (itself a counter below B) keeps ``count <= B``.  Candidates
        are each value and the one-step upper bounds of a single-atom value; every other value must
        equal the candidate, have it as an upper bound, or lie below it by the intervals."""
        if len(vals) < 2:
            return
        cands: list[tuple[Affine, str]] = []
        for v in vals:
            cands.append((v, ""))
            k = v.terms[0][0] if len(v.terms) == 1 and v.terms[0][1] == 1 else None
            cands += [(v.add(Affine.of_atom(k), -1).add(up.rhs), up.fact)
                      for up in self.uppers.get(k, ()) if up.mult == 1]  # fmt: skip
        for rhs, fact in cands[:8]:
            if rhs.terms and all(self._below(v, rhs) for v in vals):
                what = f"join: every value reaching it is <= {self.name(rhs)}"
                self.relate(key, 1, rhs, f"{fact}; {what}" if fact else what)

    def _below(self, v: Affine, rhs: Affine) -> bool:
        """``v <= rhs`` for every input: the same form, a recorded upper bound, or the intervals."""
        if v == rhs or self.interval(v).hi <= self.interval(rhs).lo:
            return True
        k = v.terms[0][0] if len(v.terms) == 1 and v.terms[0][1] == 1 else None
        rest = rhs.add(v, -1).add(Affine.of_atom(k)) if k is not None else None  # rhs - (v - atom)
        return any(up.mult == 1 and up.rhs == rest for up in self.uppers.get(k, ()))

    def _step_of(self, d: int) -> int | None:
        op = self.gr.op(d)
        if op.kind is not Kind.ADD or len(op.operands) != 2:
            return None
        steps = [c for c in (self._const_operand(d, 0), self._const_operand(d, 1)) if c is not None]
        return steps[0] if len(steps) == 1 and steps[0] > 0 else None

    def _compare_bound(self, n: int, preds: tuple[str, ...], forms: list[Affine] | None = None) -> Eval[int | None]:
        """Largest B of ``icmp pred n, B`` among n's users (``sle``/``ule`` count as B + 1); ``forms``
        collects each B as an affine form (``sle``/``ule``: B + 1)."""
        bound = None
        for u, slot in self.gr.users(n):
            uop = self.gr.op(u)
            pred = uop.attrs.get("pred", "")
            if uop.kind is not Kind.ICMP or slot != 0 or pred not in preds:
                continue
            try:
                bv = yield from self._operand(u, 1)
            except Cycle:
                continue
            inclusive = 1 if pred in ("sle", "ule") else 0
            b = self.interval(bv).hi + inclusive
            bound = b if bound is None else max(bound, b)
            if forms is not None:
                forms.append(bv.add(Affine.of_const(inclusive)))
        return bound

    def _step_bound(self, d: int, key: Any) -> Eval[int | None]:
        step = self._step_of(d)
        if step is None:
            return None
        preds = ("slt", "ult", "sle", "ule") + (("ne",) if step == 1 else ())
        # compares on the incremented value, or on the join itself (MLIR block argument)
        bounds: list[int] = []
        forms: list[Affine] = []
        for c in [d] + ([key] if isinstance(key, int) else []):
            b = yield from self._compare_bound(c, preds, forms)
            if b:
                bounds.append(b)
        if len(forms) == 1 and forms[0].terms:  # the loop's own bound, an input: i <= B - 1 + step
            fact = f"loop: {self.gr.op(d).results[0] if self.gr.op(d).results else 'counter'} < {self.name(forms[0])}"
            self.relate(key, 1, forms[0].add(Affine.of_const(step - 1)), fact)
        return max(bounds) - 1 + step if bounds else None

    def _odometer_bound(self, d: int, key: Any) -> Eval[int | None]:
        """``k = cond ? k + s : k`` (the outer digit of a flattened loop nest): at most s per trip of
        the loop, so it stays below init + s * trips, with trips from the loop's main counter."""
        if not isinstance(key, int) or len(self.gr.op(d).operands) != 3:
            return None
        for keep, inc in ((1, 2), (2, 1)):
            if self.gr.defs(d, keep) != [key] or len(self.gr.defs(d, inc)) != 1:
                continue
            add = self.gr.defs(d, inc)[0]
            step = self._step_of(add)
            if step is None or key not in (self.gr.defs(add, 0) + self.gr.defs(add, 1)):
                continue
            trips = yield from self._trip_count(key)
            inits = yield from self._inits(key, d)
            init = [v for v in inits if v is not None]
            if trips is None or not init or len(init) != len(inits):
                return None
            return max(init) + step * trips
        return None

    def _init_hi(self, n: int) -> Eval[int | None]:
        try:
            return self.interval((yield n)).hi
        except Cycle:
            return None

    def _inits(self, phi: int, step: int) -> Eval[list[int | None]]:
        """The largest value of each of ``phi``'s incoming values other than ``step`` (None: unknown)."""
        out = []
        for x in self.gr.defs(phi, 0):
            if x != step:
                out.append((yield from self._init_hi(x)))
        return out

    def _trip_count(self, phi: int) -> Eval[int | None]:
        """Trips of the loop headed by ``phi``'s block, from a sibling ``i += step while i < B`` counter."""
        counted = yield from self._counted(phi)
        return min((t for t, _, _, _ in counted), default=None)

    def _counted(self, phi: int) -> Eval[list[tuple[int, int, int, Affine | None]]]:
        """The sibling counters ``i = lo; i += step while i < B`` of ``phi``'s loop header: (trips,
        step, lo, B as an affine form when the loop has that one compare)."""
        label = self.gr.op(phi).attrs.get("block")
        out = []
        for sib in self.gr.block_args.get(str(label), []):
            if sib == phi:
                continue
            for d in self.gr.defs(sib, 0):
                step = self._step_of(d)
                if step is None or sib not in (self.gr.defs(d, 0) + self.gr.defs(d, 1)):
                    continue
                bounds: list[int] = []
                forms: list[Affine] = []
                for c in (d, sib):
                    b = yield from self._compare_bound(c, ("slt", "ult", "sle", "ule"), forms)
                    if b:  # a 32-bit compare reads its bound as a 32-bit register: Int32(extent) <= 2^31 - 1
                        bounds.append(min(b, 2**32) if self.gr.op(sib).width == 32 else b)
                inits = yield from self._inits(sib, d)
                if bounds and inits and None not in inits:
                    lo = min(i for i in inits if i is not None)
                    t = max(0, -(-(max(bounds) - lo) // step))
                    out.append((t, step, lo, forms[0] if len(forms) == 1 and forms[0].terms else None))
        return out

    def _accumulator_bound(self, d: int, key: Any) -> Eval[int | None]:
        """``acc = acc + x`` with ``0 <= x <= s`` in a loop a sibling ``i = lo; i += c while i < B``
        counts (a stream compaction's output cursor: ``count += popc(ballot)`` per 32-lane chunk): at
        most ``init + s*trips``, and, with ``trips <= (B - lo + c - 1)/c``, ``c*acc <= s*B + c*init +
        s*(c - 1 - lo)``, which ties the cursor to the extent the loop walks."""
        op = self.gr.op(d)
        if op.kind is not Kind.ADD or len(op.operands) != 2 or not isinstance(key, int):
            return None
        for slot in (0, 1):
            if self.gr.defs(d, slot) != [key]:
                continue
            try:
                x = yield from self._operand(d, 1 - slot)
            except Cycle:
                return None
            per_trip = self.interval(x)
            inits = yield from self._inits(key, d)
            counted = yield from self._counted(key)
            if per_trip.lo < 0 or per_trip.hi <= 0 or not counted or not inits or None in inits:
                return None
            init, s = max(i for i in inits if i is not None), per_trip.hi
            trips, c, lo, form = min(counted, key=lambda t: t[0])
            if form is not None:
                rhs = form.scale(s).add(Affine.of_const(c * init + s * (c - 1 - lo)))
                self.relate(key, c, rhs, f"accumulator: at most {s} per trip of a loop counted to {self.name(form)}")
            return init + s * trips
        return None

    def _wraparound_bound(self, d: int) -> Eval[int | None]:
        """``select(inc == B, reset, inc)`` or ``select(inc != B, inc, reset)`` with ``inc = j + 1``."""
        op = self.gr.op(d)
        if len(op.operands) != 3:
            return None
        conds = self.gr.defs(d, 0)
        cond = self.gr.op(conds[0]) if len(conds) == 1 else None
        if cond is None or cond.kind is not Kind.ICMP or cond.attrs.get("pred") not in ("eq", "ne"):
            return None
        s_inc, s_reset = (2, 1) if cond.attrs["pred"] == "eq" else (1, 2)
        incs = self.gr.defs(d, s_inc)
        reset = self._const_operand(d, s_reset)
        if len(incs) != 1 or self._step_of(incs[0]) != 1 or reset is None or reset < 0:
            return None
        sides = [i for i in (0, 1) if incs[0] in self.gr.defs(conds[0], i)]
        if not sides:
            return None
        try:
            bv = yield from self._operand(conds[0], 1 - sides[0])
        except Cycle:
            return None
        return max(self.interval(bv).hi - 1, reset)
