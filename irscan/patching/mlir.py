"""Rewrite a finding's chain to 64 bits through the DSL's MLIR Python bindings (not printed text).

For a finding the scan reported on the LLVM-dialect module, the chain's wrapping value is found by the
SSA name the scan printed (``ir.AsmState`` + ``Value.get_name``), recomputed in i64 from extended
leaves, and the widening point (a GEP index, a ``sext``/``zext``) is rewired to it.  The i32 ops stay
for their other users (the tail's DCE drops them when none is left).

Sound or refused (README "Patch mode"): a plan is made first, without touching the module, and a
finding is refused (``Refused`` with the reason) when any user of a recomputed value that can decide
the access cannot move to 64 bits with it.  ``icmp`` users are widened (their other operand extended
as the predicate reads it); a recomputed value that flows into a block argument (loop-carried), a
``select``, or through other integer ops into a compare or a branch is refused; a leaf that is a block
argument is accepted only when the scan bounded its range inside i32.

Traps of the bindings (shared/docs/patch-and-guard.md): once ``cutlass`` is imported ``Value.__eq__``
is overloaded, so values are keyed by ``hash()``; the typed ``llvm.MulOp`` builder drops its overflow
flags, so binary ops are built generically (``Operation.create``) without flags: the i64 op must not
claim ``nsw`` for arithmetic the source never promised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from irscan.findings import Finding
from irscan.patching.rules import Rule

_NAME = re.compile(r"^\s*(%[\w.$#-]+)")
_BRANCHES = ("llvm.br", "llvm.cond_br", "llvm.switch")
#: integer ops a wrapped value flows through unchanged in kind (searched forward for a compare or branch)
_FORWARD = tuple(
    f"llvm.{n}" for n in "add sub mul shl or and xor trunc sext zext sdiv udiv srem urem lshr ashr".split()
)
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


class Refused(Exception):
    """The finding cannot be patched soundly; the message is the ``not_patched`` reason."""


@dataclass
class Plan:
    rule: Rule
    point: Any  # the widening op
    operand: int  # which of its operands is the narrow value
    value: Any  # that value
    signed: bool
    #: every widening op reading ``value`` (the finding's other sinks share it): (op, operand index)
    points: list[tuple[Any, int]] = field(default_factory=list)
    recompute: list[Any] = field(default_factory=list)  # ops recomputed in i64, operands first
    compares: list[Any] = field(default_factory=list)  # icmp users widened with the chain


def _int_width(ir: Any, t: Any) -> int:
    return ir.IntegerType(t).width if ir.IntegerType.isinstance(t) else 0


def _owner_op(ir: Any, v: Any) -> Any | None:
    """The op defining ``v``, or None for a block argument."""
    if isinstance(v.owner, ir.Block):
        return None
    return v.owner.operation if hasattr(v.owner, "operation") else v.owner


def _constant(ir: Any, op: Any | None) -> int | None:
    """The integer of an ``llvm.mlir.constant``, or None (not a constant, or not a scalar integer)."""
    if op is None or op.name != "llvm.mlir.constant":
        return None
    try:
        return int(ir.IntegerAttr(op.attributes["value"]).value)
    except (ValueError, TypeError):
        return None


class ModuleRewriter:
    """One LLVM-dialect module: names to values per function, then plan and apply per finding."""

    def __init__(self, module: Any):
        from cutlass._mlir import ir

        self.ir = ir
        self.module = module
        self._state = ir.AsmState(module.operation)  # type: ignore[attr-defined]
        self._funcs: dict[str, Any] = {}
        self._names: dict[str, dict[str, Any]] = {}
        stack = [module.operation]
        while stack:  # gpu.module nests the device functions one level down
            op = stack.pop()
            for region in op.regions:
                for block in region.blocks:
                    for child in block.operations:
                        c = child.operation
                        if c.name == "llvm.func":
                            self._funcs[str(c.attributes["sym_name"]).strip('"')] = c
                        elif c.name in ("gpu.module", "builtin.module"):
                            stack.append(c)

    def names(self, kernel: str, kinds: tuple[str, ...]) -> dict[str, Any]:
        """SSA name -> result, as the scan's text printed it, for the ops of ``kinds`` in ``kernel``
        (the widening points: naming every value of a large kernel costs more than the rewrite)."""
        key = f"{kernel}\0{','.join(kinds)}"
        if key not in self._names:
            fn = self._funcs.get(kernel)
            if fn is None:
                raise Refused(f"kernel {kernel} is not in the module")
            table: dict[str, Any] = {}
            stack = [fn]
            while stack:
                op = stack.pop()
                for region in op.regions:
                    for block in region.blocks:
                        for child in block.operations:
                            c = child.operation
                            if c.name in kinds:
                                for r in c.results:
                                    table[r.get_name(self._state)] = r
                            if len(c.regions):
                                stack.append(c)
            self._names[key] = table
        return self._names[key]

    # ------------------------------------------------------------------------------------- planning

    def plan(self, finding: Finding, rule: Rule) -> Plan:
        ir = self.ir
        table = self.names(finding.kernel, rule.widening)
        steps = [(m.group(1), s) for s in finding.chain if (m := _NAME.match(s.text))]
        widening = [n for n, s in steps if s.role == "widening"]
        if not widening or widening[0] not in table:
            raise Refused("the widening point of the chain is not in the module")
        point = _owner_op(ir, table[widening[0]])
        if point is None or point.name not in rule.widening:
            raise Refused(f"widening point {widening[0]} is not one of {', '.join(rule.widening)}")
        chain_names = {n for n, s in steps if s.role in ("arithmetic", "narrowing", "input")}
        index = [i for i, v in enumerate(point.operands) if 0 < _int_width(ir, v.type) < 64]
        if point.name == "llvm.getelementptr":
            index = [i for i in index if i > 0]
        named = [i for i in index if point.operands[i].get_name(self._state) in chain_names]
        if not (named or index):
            raise Refused(f"{widening[0]} has no narrow index operand")
        at = (named or index)[0]
        value = point.operands[at]
        plan = Plan(rule, point, at, value, signed=point.name != "llvm.zext")
        for use in value.uses:
            user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            i = use.operand_number
            if user.name in rule.widening and (user.name != "llvm.getelementptr" or i > 0):
                plan.points.append((user, i))
        ranges = {n: s.range for n, s in steps}
        self._collect(plan, ranges)
        self._check_users(plan)
        return plan

    def _collect(self, plan: Plan, ranges: dict[str, list[int] | None]) -> None:
        """The ops to recompute, operands before users (an explicit stack: chains run 300 ops deep)."""
        ir, seen, order = self.ir, set(), []
        stack: list[tuple[Any, bool]] = [(plan.value, False)]
        while stack:
            v, ready = stack.pop()
            op = _owner_op(ir, v)
            if op is None:
                self._check_block_arg(v, ranges)
                continue
            key = hash(op)
            if key in seen:
                continue
            if op.name in plan.rule.recompute and _int_width(ir, v.type) < 64:
                if ready:
                    seen.add(key)
                    order.append(op)
                else:
                    stack.append((v, True))
                    stack.extend((o, False) for o in op.operands if hash(_owner_op(ir, o) or o) not in seen)
        plan.recompute = order

    def _check_block_arg(self, arg: Any, ranges: dict[str, list[int] | None]) -> None:
        block = arg.owner
        parent = block.owner.operation if hasattr(block.owner, "operation") else block.owner
        if parent.name == "llvm.func" and block == parent.regions[0].blocks[0]:
            return  # a function argument: a launch input, not loop-carried
        name = arg.get_name(self._state)
        rng = ranges.get(name)
        if rng is None or rng[0] < INT32_MIN or rng[1] > INT32_MAX:
            raise Refused(
                f"loop-carried value {name} (a block argument) is a leaf of the chain and its range is not "
                "bounded inside i32; retyping block arguments is not implemented"
            )

    def _check_users(self, plan: Plan) -> None:
        """Every user of a recomputed value that can decide the access must move to 64 bits with it."""
        ir = self.ir
        inside = {hash(op) for op in plan.recompute} | {hash(op) for op, _ in plan.points}
        for op in plan.recompute:
            name = op.results[0].get_name(self._state)
            for use in op.results[0].uses:
                user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
                if hash(user) in inside:
                    continue
                if user.name == "llvm.icmp":
                    if hash(user) not in {hash(c) for c in plan.compares}:
                        plan.compares.append(user)
                elif user.name in _BRANCHES:
                    raise Refused(f"loop-carried: {name} flows into a block argument; retyping it is not implemented")
                elif user.name == "llvm.select":
                    raise Refused(f"{name} also feeds a select; widening a select with the chain is not implemented")
                elif user.name in _FORWARD and self._decides(user):
                    raise Refused(f"{name} also feeds {user.name}, whose result decides control flow in 32 bits")
        del ir

    def _decides(self, start: Any) -> bool:
        """Whether integer ops forward from ``start`` reach a compare, select or branch (bounded walk)."""
        stack, seen = [start], set[int]()
        while stack and len(seen) < 10_000:
            op = stack.pop()
            if hash(op) in seen:
                continue
            seen.add(hash(op))
            if op.name in ("llvm.icmp", "llvm.select", *_BRANCHES):
                return True
            if op.name in _FORWARD:
                for r in op.results:
                    stack.extend(u.owner.operation if hasattr(u.owner, "operation") else u.owner for u in r.uses)
        return False

    # ------------------------------------------------------------------------------------- applying

    def apply(self, plan: Plan) -> int:
        """Build the i64 chain, rewire the widening point and the compares; returns the ops rewritten."""
        ir = self.ir
        i64 = ir.IntegerType.get_signless(64)
        twins: dict[int, Any] = {}
        rewritten = 0
        ext = self._extender(plan.signed, i64, twins, {}, plan.rule.drop_trunc)
        for op in plan.recompute:
            operands = [ext(o) for o in op.operands]
            with ir.InsertionPoint(op), op.location:
                new = ir.Operation.create(op.name, results=[i64], operands=operands)
            new.move_after(op)
            twins[hash(op.results[0])] = new.results[0]
            rewritten += 1
        wide = ext(plan.value)
        for point, i in plan.points:
            if point.name == "llvm.getelementptr":
                point.operands[i] = wide
            elif _int_width(ir, point.results[0].type) == 64:  # sext/zext to i64: users take the new value
                point.results[0].replace_all_uses_with(wide)
            else:
                continue  # an extension to some other width is not an address index
            rewritten += 1
        for cmp in plan.compares:
            rewritten += self._widen_compare(cmp, ext, twins)
        return rewritten

    def _extender(
        self, signed: bool, i64: Any, twins: dict[int, Any], exts: dict[tuple[int, bool], Any], drop_trunc: bool
    ) -> Any:
        """value -> its i64 form: a recomputed twin, a 64-bit constant, a dropped trunc, or an ext."""
        ir = self.ir
        from cutlass._mlir.dialects import llvm

        def ext(v: Any, as_signed: bool = signed) -> Any:
            if hash(v) in twins:
                return twins[hash(v)]
            key = (hash(v), as_signed)  # a leaf may be read signed by the chain, unsigned by a compare
            if key in exts:
                return exts[key]
            width = _int_width(ir, v.type)
            if width == 64 or width == 0:
                return v
            op = _owner_op(ir, v)
            if op is None:
                ip = ir.InsertionPoint.at_block_begin(v.owner)
                loc = ir.Location.unknown()
            else:
                ip, loc = ir.InsertionPoint(op), op.location
            with ip, loc:
                n = _constant(ir, op)
                if n is not None:
                    new = llvm.ConstantOp(i64, ir.IntegerAttr.get(i64, n if as_signed else n & (2**width - 1)))
                elif (
                    op is not None
                    and drop_trunc
                    and op.name == "llvm.trunc"
                    and _int_width(ir, op.operands[0].type) == 64
                ):
                    exts[key] = op.operands[0]  # the 64-bit value the trunc narrowed
                    return op.operands[0]
                else:
                    new = (llvm.SExtOp if as_signed else llvm.ZExtOp)(i64, v)
            if op is not None:
                new.operation.move_after(op)
            exts[key] = new.result
            return new.result

        return ext

    def _widen_compare(self, cmp: Any, ext: Any, twins: dict[int, Any]) -> int:
        """``icmp pred a, b`` on a recomputed value: the same predicate on the i64 values, the other
        operand extended as the predicate reads it (``s*``: sign, ``u*``: zero, ``eq``/``ne``: as the
        chain).  Its users (branches, selects, the guarded access's predicate) take the new result."""
        ir = self.ir
        pred = int(ir.IntegerAttr(cmp.attributes["predicate"]).value)
        # llvm.icmp predicates: eq=0 ne=1 slt=2 sle=3 sgt=4 sge=5 ult=6 ule=7 ugt=8 uge=9
        signed = None if pred < 2 else pred < 6
        a, b = cmp.operands[0], cmp.operands[1]
        if signed is None:
            wa, wb = ext(a), ext(b)
        else:
            wa, wb = ext(a, signed), ext(b, signed)
        with ir.InsertionPoint(cmp), cmp.location:
            new = ir.Operation.create(
                "llvm.icmp", results=[cmp.results[0].type], operands=[wa, wb],
                attributes={"predicate": cmp.attributes["predicate"]},
            )  # fmt: skip
        cmp.results[0].replace_all_uses_with(new.results[0])
        cmp.erase()  # no user is left: the wrapped compare must not survive to be picked up again
        del twins
        return 1
