"""Integer ranges over a dataflow graph, with an exact affine form where the chain is affine.

Every integer value is evaluated to its *ideal* value: what the source meant, computed in unbounded
integers, as if no step wrapped.  A value is an :class:`Affine` form ``Σ coef·atom + const`` over
*atoms*: the inputs the IR cannot reduce further (special registers, kernel-parameter fields, loaded
values, and non-linear results such as products of two inputs, divisions or joins).  Each atom has an
interval and is *fixed* when the launch itself pins it (constants, ``tid`` under ``reqntid``/
``exact_block_dim``, ``ctaid`` under ``exact_grid_dim``) or *free* when the IR admits any value of
its type (dynamic shapes/strides, loaded values, a dynamic grid).  Free inputs are taken as
non-negative, as shapes, strides and indices are.

Checks compare an ideal value with the range its extension preserves; the affine form gives the exact
threshold of the dominant input.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from irscan.analysis.bounds import Bound, Relations, Upper
from irscan.analysis.coords import Coordinates
from irscan.analysis.dataflow import Graph
from irscan.analysis.decide import Decisions
from irscan.analysis.divmod import FastDivmod
from irscan.analysis.floordiv import FloorFixups, recombine
from irscan.analysis.guards import Guards
from irscan.analysis.inputs import Facts, Inputs
from irscan.analysis.intervals import Affine, Interval, bitwise, free_range, paren, render, signed_range
from irscan.analysis.loops import Cycle, Eval, LoopBounds
from irscan.analysis.magic import Magic, MagicDivision
from irscan.analysis.params import Field
from irscan.ir import Kind, Op
from irscan.ir.isa import bit_count_limit

__all__ = ["Atom", "Bound", "Facts", "Ranges"]

T = TypeVar("T")


@dataclass(slots=True)
class Atom:
    key: Any
    name: str
    iv: Interval
    fixed: bool
    node: int | None = None
    opaque: bool = False  # the analysis could not see what produced it
    factors: tuple[Affine, Affine] | None = None  # for a product of two non-constant values
    #: computed from something scaled: a product, a shift by a variable, or a term with a coefficient
    #: other than 1 (checks/__init__.py: `may` needs a scaled free input)
    scaled: bool = False
    extent: bool = False  # a kernel input a bound may be stated in (a parameter field, a scalar argument)


#: longest expression spelled out in a derived input's name
NAME_LIMIT = 80

#: Ideal values are exact up to this magnitude; past it a value is only "far outside every integer
#: type", and is capped so that numbers stay printable (Python refuses to print ints of 4,300 digits:
#: a 10,000-step ``x * 3 + 1`` chain reaches 3^10000) and cheap to multiply.
HUGE = 1 << 1024


@dataclass
class Ranges(LoopBounds, Inputs, Relations, Guards, Coordinates, FastDivmod, MagicDivision, Decisions, FloorFixups):
    """Lazy, memoised evaluation of ideal values over one function's graph.

    The evaluation is written as generators (:data:`irscan.analysis.loops.Eval`): where a value needs
    another op's value it yields that op's id, and :meth:`_run` evaluates it on an explicit stack and
    sends the result back.  So a dependency chain of any length (an unrolled 300-step index chain,
    a 100k-op kernel) costs heap, not Python's recursion limit, and the order of evaluation (which
    decides where a loop is cut) is exactly that of a plain recursive walk.

    Besides intervals, it records relations between atoms as it meets them, and :meth:`bounds`
    (irscan/analysis/bounds.py) states a value's upper bounds over the kernel's extents from them.
    """

    gr: Graph
    facts: Facts = field(default_factory=Facts)
    meta_args: list[dict[str, Any]] = field(default_factory=list)
    atoms: dict[Any, Atom] = field(default_factory=dict)
    _memo: dict[Any, Affine] = field(default_factory=dict)
    _busy: set[Any] = field(default_factory=set)
    _fields: dict[int, list[Field]] = field(default_factory=dict)
    budget: int = 200_000
    uppers: dict[Any, list[Upper]] = field(default_factory=dict)
    lowers: dict[Any, list[Upper]] = field(default_factory=dict)
    quotients: dict[Any, tuple[Affine, Affine]] = field(default_factory=dict)
    floors: dict[Any, tuple[Affine, int]] = field(default_factory=dict)
    fast_quotients: dict[Any, tuple[Affine, str]] = field(default_factory=dict)
    floor_quotients: dict[Any, tuple[Affine, Affine]] = field(default_factory=dict)
    ceil_quotients: dict[Any, tuple[Affine, Affine]] = field(default_factory=dict)
    remainders: dict[Any, tuple[Affine, Affine, Affine]] = field(default_factory=dict)
    divisors: dict[Any, int] = field(default_factory=dict)
    magics: dict[Any, Magic] = field(default_factory=dict)
    sign_bits: dict[Any, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.meta_args = self.aligned_meta(self.meta_args)

    # ------------------------------------------------------------------ public

    def value(self, n: int) -> Affine:
        """Ideal value of op ``n``'s (first) result."""
        try:
            return self._run(self._value(n))
        except Cycle:
            return self._opaque_atom(("cycle", n), f"loop value ({self.gr.op(n).name})", 64)

    def operand(self, n: int, slot: int) -> Affine:
        try:
            return self._run(self._operand(n, slot))
        except Cycle:
            return self._opaque_atom(("cycle", n, slot), "loop value", 64)

    def interval(self, a: Affine, least_harm: bool = False) -> Interval:
        iv = Interval(a.const, a.const)
        for k, c in a.terms:
            at = self.atoms[k]
            if least_harm and not at.fixed:
                p = at.iv.least_harm()
                iv = iv + Interval(p * c, p * c)
            else:
                iv = iv + at.iv.scale(c)
        return iv

    def name(self, a: Affine) -> str:
        """Readable form, largest term first: ``100000*ctaid.x + tid.x``."""
        parts = []
        for k, c in sorted(a.terms, key=lambda kc: -abs(kc[1]) * max(abs(self.atoms[kc[0]].iv.hi), 1)):
            nm = self.atoms[k].name
            nm = f"({nm})" if any(ch in nm for ch in "+- ") and c != 1 else nm
            parts.append(nm if c == 1 else f"{c}*{nm}")
        if a.const or not parts:
            parts.append(str(a.const))
        return " + ".join(parts).replace("+ -", "- ")

    # ------------------------------------------------------------------ the driver

    def _run(self, root: Eval[T]) -> T:
        """Drive an evaluation: each yielded op id is evaluated on the stack, its value sent back.

        An exception leaving a step (``Cycle``, for a value already being evaluated) is thrown into
        the step that asked for it, just as a recursive call would have raised it there.
        """
        stack: list[Eval[Any]] = [root]
        sent: Any = None
        err: Exception | None = None
        memo = self._memo
        while True:
            top = stack[-1]
            try:
                n = top.send(sent) if err is None else top.throw(err)
            except StopIteration as stop:
                stack.pop()
                if not stack:
                    return stop.value  # type: ignore[no-any-return]
                sent, err = stop.value, None
                continue
            except Exception as e:  # noqa: BLE001 (handed to the asking step, or raised from the root)
                stack.pop()
                if not stack:
                    raise
                sent, err = None, e
                continue
            err = None
            if n in memo:
                sent = memo[n]
            else:
                stack.append(self._value(n))
                sent = None

    # ------------------------------------------------------------------ evaluation

    def _value(self, n: int) -> Eval[Affine]:
        if n in self._memo:
            return self._memo[n]
        if n in self._busy:
            raise Cycle()
        self.budget -= 1
        if self.budget < 0:
            return self._opaque_atom(("budget", n), "value past the analysis budget", self.gr.op(n).width or 64)
        self._busy.add(n)
        try:
            v = yield from self._eval(n, self.gr.op(n))
        finally:
            self._busy.discard(n)
        if abs(v.const) > HUGE or any(abs(c) > HUGE for _, c in v.terms):
            v = self._cap(n, v)
        self._memo[n] = v
        return v

    def _operand(self, n: int, slot: int) -> Eval[Affine]:
        op = self.gr.op(n)
        raw = op.operands[slot] if slot < len(op.operands) else None
        if isinstance(raw, int):
            return Affine.of_const(raw)
        defs = self.gr.defs(n, slot)
        if len(defs) == 1:
            return (yield defs[0])
        if not defs:
            return self._opaque_atom(("undef", n, slot), f"{raw} (no definition seen)", op.width or 64)
        return (yield from self._join(("join", *self.gr.join_of(n, slot)), defs, f"{raw}", op.width or 64))

    def _operands(self, n: int) -> Eval[list[Affine]]:
        out = []
        for i in range(len(self.gr.op(n).operands)):
            out.append((yield from self._operand(n, i)))
        return out

    def _join(self, key: Any, defs: list[int], label: str, width: int, owned: bool = False) -> Eval[Affine]:
        """Several definitions can reach: the union, bounded for simple induction variables.

        ``owned``: the caller (a PHI node's own evaluation) already marked ``key`` busy.
        """
        if key in self._memo:
            return self._memo[key]
        if key in self._busy and not owned:
            raise Cycle()
        self._busy.add(key)
        try:
            vals: list[Affine] = []
            cyclic: list[int] = []
            for d in defs:
                try:
                    vals.append((yield d))
                except Cycle:
                    cyclic.append(d)
            if not cyclic and vals and all(v == vals[0] for v in vals):
                res = vals[0]
            else:
                ivs = [self.interval(v) for v in vals]
                fixed = all(self._fixed(v) for v in vals)
                iv = ivs[0] if ivs else free_range(width)
                for x in ivs[1:]:
                    iv = iv.union(x)
                if cyclic:
                    # A loop-carried value is free: the launch reaches its top value only if the loop
                    # runs to its bound, which exits that depend on data (persistent schedulers,
                    # varlen) do not promise.  So loops give `may` verdicts, never `must`.
                    fixed = False
                    copies = yield from self._copy_cycle(cyclic, key)  # loops.py: prev = cur
                    bound = None if copies is not None else (yield from self._induction_bound(cyclic, key))
                    if copies is not None:
                        iv = iv.union(copies) if ivs else copies
                    elif bound is None:
                        iv = free_range(width).union(iv)
                    else:
                        iv = iv.union(Interval(iv.lo, bound))
                res = self._atom(key, self._join_name(key, label, bool(cyclic)), iv, fixed)
                if not cyclic:
                    self.relate_join(key, vals)  # loops.py: at most what bounds each value
        finally:
            if not owned:
                self._busy.discard(key)
        self._memo[key] = res
        return res

    def _join_name(self, key: Any, label: str, loop: bool) -> str:
        what = "loop-carried" if loop else "joined"
        if isinstance(key, int) and key in self.gr:  # an MLIR block argument
            return f"{label} ({what}, {self.gr.op(key).attrs.get('block', '?')})"
        n = key[1] if isinstance(key, tuple) and len(key) > 1 else None
        line = self.gr.op(n).line if isinstance(n, int) and n in self.gr else 0
        return f"{label} ({what} at IR line {line})"

    def _const_operand(self, n: int, slot: int) -> int | None:
        return self.gr.const_operand(n, slot)

    def _fixed(self, a: Affine) -> bool:
        return all(self.atoms[k].fixed for k, _ in a.terms)

    def _atom(self, key: Any, name: str, iv: Interval, fixed: bool, opaque: bool = False) -> Affine:
        if key not in self.atoms:
            iv = Interval(min(max(iv.lo, -HUGE), HUGE), max(min(iv.hi, HUGE), -HUGE))
            node = key if isinstance(key, int) else None
            self.atoms[key] = Atom(key, name, iv, fixed, node, opaque)
        return Affine.of_atom(key)

    def _opaque_atom(self, key: Any, name: str, width: int) -> Affine:
        return self._atom(key, name, free_range(width), False, opaque=True)

    def _derived(
        self, n: int, name: str, iv: Interval, inputs: Iterable[Affine], scales: bool = False, key: Any = None
    ) -> Affine:
        """A new atom computed from ``inputs``; ``scales``: the op itself scales (product, variable shift);
        ``key``: its key when it is not op ``n``'s whole value (default: ``n``)."""
        inputs = tuple(inputs)
        fixed = all(self._fixed(a) for a in inputs)
        if iv.lo == iv.hi:
            return Affine.of_const(iv.lo)
        if len(name) > NAME_LIMIT:  # a nest of selects and divisions reads worse than the IR value's name
            op = self.gr.op(n)
            name = f"{op.results[0] if op.results else op.name} (IR line {op.line})"
        key = n if key is None else key
        res = self._atom(key, name, iv, fixed)
        self.atoms[key].scaled = scales or any(abs(c) != 1 or self.atoms[k].scaled for a in inputs for k, c in a.terms)
        return res

    def _cap(self, n: int, v: Affine) -> Affine:
        """Op ``n``'s value ``v`` past :data:`HUGE`, as an input of its own (its interval capped)."""
        op = self.gr.op(n)
        key = ("huge", n)
        res = self._atom(
            key, f"{op.results[0] if op.results else op.name} (IR line {op.line})", self.interval(v), self._fixed(v)
        )
        self.atoms[key].scaled = True
        return res

    def _eval(self, n: int, op: Op) -> Eval[Affine]:  # noqa: C901 (one arm per op kind reads best flat)
        k = op.kind
        w = op.width or 64
        if k is Kind.CONST:
            v = op.attrs.get("value")
            return Affine.of_const(int(v)) if isinstance(v, int) else self._opaque_atom(n, op.name, w)
        if k is Kind.SREG:
            return self._sreg(n, op)
        if k is Kind.ARG:
            return self._arg(n, op)
        if k is Kind.PHI:
            defs = self.gr.defs(n, 0)
            if not defs:
                return self._opaque_atom(n, op.text or op.name, w)
            v = yield from self._join(n, defs, op.results[0] if op.results else "phi", w, owned=True)
            return self.guarded_copy(n, v, w) if len(defs) == 1 else v  # a loop body's counter (guards.py)
        if k in (Kind.MOV, Kind.SEXT, Kind.ZEXT, Kind.TRUNC, Kind.CAST) and op.operands:
            v = yield from self._operand(n, 0)
            return self.guarded_copy(n, v, w) if k is Kind.MOV else v  # a PTX copy under a loop's entry test
        if k is Kind.ADD and len(op.operands) == 2:
            a, b = yield from self._operands(n)
            # a signed magic division's last add (magic.py), a floor division's fix-up (floordiv.py)
            return self.magic_sum(n, a, b) or self.floor_add(n, a, b) or recombine(self.atoms, self.remainders, a, b)
        if k is Kind.SUB and len(op.operands) == 2:
            a, b = yield from self._operands(n)
            return self.remainder_idiom(n, a, b, w) or a.add(b, -1)
        if k is Kind.NEG and op.operands:
            return (yield from self._operand(n, 0)).scale(-1)
        if k in (Kind.MUL, Kind.MULWIDE, Kind.MAD, Kind.MADWIDE) and len(op.operands) >= 2:
            a = yield from self._operand(n, 0)
            b = yield from self._operand(n, 1)
            if k not in (Kind.MAD, Kind.MADWIDE) or len(op.operands) != 3:
                return self._product(n, a, b)
            c = yield from self._operand(n, 2)
            one = Affine.of_const(1)
            if c == a and not a.is_const():  # a*b + a (PTX folds (b + 1)*a so): the product a*(b + 1)
                return self._product(n, a, b.add(one))
            if c == b and not b.is_const():
                return self._product(n, a.add(one), b)
            return recombine(self.atoms, self.remainders, self._product(n, a, b), c)  # q*d + x % d: x
        if k is Kind.SHL and len(op.operands) == 2:
            a, b = yield from self._operands(n)
            if b.is_const() and 0 <= b.const < 64:
                return a.scale(1 << b.const)
            return self._derived(n, f"{self.name(a)} << {self.name(b)}", signed_range(w), (a, b), scales=True)
        if k in (Kind.LSHR, Kind.ASHR, Kind.AND, Kind.OR, Kind.XOR, Kind.DIV, Kind.REM, Kind.MIN, Kind.MAX, Kind.MULHI):
            if len(op.operands) < 2:
                return self._opaque_atom(n, op.name, w)
            a, b = yield from self._operands(n)
            exact = self.bitwise_identity(k, a, b, w)  # or as add, xor -1 as negation (relate.py)
            if exact is not None:
                return exact
            ia, ib = self.guarded_interval(n, a, w), self.guarded_interval(n, b, w)  # guards.py
            res = self._derived(n, render(k, self.name(a), self.name(b)), bitwise(k, ia, ib, w, op.signed), (a, b))
            self.relate_op(k, res, a, b, w)
            self.note_magic(k, res, a, b, w, op.signed)  # a division by a constant (magic.py)
            return res
        if k is Kind.SELECT and len(op.operands) == 3:
            arm = yield from self._decided(n)  # a condition the ranges decide (decide.py)
            if arm is not None:
                return (yield from self._operand(n, 1 if arm else 2))
            a = yield from self._operand(n, 1)
            b = yield from self._operand(n, 2)
            if a == b:
                return a
            fixed = self.floor_select(n, a, b)  # a floor division's fix-up (floordiv.py)
            if fixed is not None:
                return fixed
            iv = yield from self._extreme(n, a, b)  # min / max (decide.py)
            iv = self.interval(a).union(self.interval(b)) if iv is None else iv
            res = self._derived(n, f"select({self.name(a)}, {self.name(b)})", iv, (a, b))
            self.relate_select(n, res, a, b)
            return res
        if k is Kind.ICMP:
            return self._atom(n, "comparison", Interval(0, 1), True)
        if k is Kind.EXTRACT:
            return self._extract(n, op)
        if k is Kind.LOAD:
            return self._atom(n, f"load({self._base_name(n)})", free_range(w), False)
        shuffled = op.attrs.get("shuffled")
        if k is Kind.SHUFFLE and isinstance(shuffled, int) and 0 <= shuffled < len(op.operands):
            # a warp shuffle hands over another lane's value of the same variable: the same range
            v = yield from self._operand(n, shuffled)
            return self._derived(n, f"shfl({self.name(v)})", self.interval(v), (v,))
        bits = bit_count_limit(op.name, str(op.attrs.get("asm", "")), op.width) if k is Kind.OPAQUE else None
        if bits is not None:  # a popcount / leading-zero count: at most its operand's width (isa.py)
            asm = str(op.attrs.get("asm", "")).split()
            what = asm[0] if op.name == "llvm.inline_asm" and asm else op.name.removeprefix("llvm.intr.")
            if not op.operands:
                return self._atom(n, f"{what}()", Interval(0, bits), False)
            v = yield from self._operand(n, 0)  # a count of bits scales nothing, whatever its operand does
            return self._atom(n, f"{what}({self.name(v)})", Interval(0, bits), self._fixed(v))
        return self._opaque_atom(n, f"{op.name} (opaque)", w)

    def _product(self, n: int, a: Affine, b: Affine) -> Affine:
        if a.is_const():
            return b.scale(a.const)
        if b.is_const():
            return a.scale(b.const)
        name = f"{paren(self.name(a))}*{paren(self.name(b))}"
        prod = self._derived(n, name, self.interval(a).times(self.interval(b)), (a, b), scales=True)
        if prod.terms:
            self.atoms[prod.terms[0][0]].factors = (a, b)
            self.relate_product(prod, a, b)
        return prod
