"""Branch refinement: what a dominating compare says about values on the path where it holds.

As LLVM's lazy value info does: a use in a block that only the true edge of ``icmp ult x, M`` enters
(directly, or through blocks that edge dominates) sees ``x <= M - 1``.  An edge B -> T *dominates* a
block U when T has B as its only predecessor and T dominates U; T's conditions are then those of its
edge plus those of its immediate dominator's own edge, up to the entry.

Dominators come from the Cooper-Harvey-Kennedy iteration on the block graph (reverse post-order,
intersect along the idom chain), all iterative.  Conditions: MLIR ``llvm.cond_br %c, ^t, ^f`` (the
first successor is taken when %c holds), PTX ``@%p bra L`` (L when %p holds, the next block when not;
``@!%p`` the other way round), with %c / %p an ICMP (``and`` of compares: each of them on the true
edge).  A compare ``a < b`` gives ``a <= b - 1``; ``a <= b`` gives itself; ``>`` and ``>=`` read the
other way round; ``eq`` gives both; the false edge gives the negation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from irscan.analysis.intervals import Affine, Interval
from irscan.analysis.reaching import cfg_successors
from irscan.analysis.relate import LESS as _LESS
from irscan.ir import Kind

if TYPE_CHECKING:
    from irscan.analysis.dataflow import Graph

#: (x, rhs, fact): ``x <= rhs`` holds where the fact's edge dominates
Guard = tuple[Affine, Affine, str]

_NEGATE = {"ult": "uge", "slt": "sge", "ule": "ugt", "sle": "sgt", "ugt": "ule", "sgt": "sle", "uge": "ult",
           "sge": "slt", "eq": "ne", "ne": "eq"}  # fmt: skip
#: how many compares one path's conditions may hold (an ``and`` tree is walked this far)
_MAX_CONDS = 16


def immediate_dominators(succ: list[list[int]], entry: int = 0) -> list[int]:
    """idom of each block (entry: itself; unreachable blocks: -1), Cooper-Harvey-Kennedy."""
    n = len(succ)
    order: list[int] = []
    seen = [False] * n
    if n:
        seen[entry] = True
        stack = [(entry, iter(succ[entry]))]
        while stack:
            b, it = stack[-1]
            nxt = next((s for s in it if not seen[s]), None)
            if nxt is None:
                stack.pop()
                order.append(b)
            else:
                seen[nxt] = True
                stack.append((nxt, iter(succ[nxt])))
    rpo_index = {b: i for i, b in enumerate(reversed(order))}
    preds: list[list[int]] = [[] for _ in range(n)]
    for b, ss in enumerate(succ):
        for s in ss:
            preds[s].append(b)
    idom = [-1] * n
    if not n:
        return idom
    idom[entry] = entry
    changed = True
    while changed:
        changed = False
        for b in reversed(order):
            if b == entry:
                continue
            new = -1
            for p in preds[b]:
                if idom[p] == -1:
                    continue
                if new == -1:
                    new = p
                    continue
                x, y = p, new
                while x != y:
                    while rpo_index[x] > rpo_index[y]:
                        x = idom[x]
                    while rpo_index[y] > rpo_index[x]:
                        y = idom[y]
                new = x
            if new != -1 and idom[b] != new:
                idom[b] = new
                changed = True
    return idom


class Guards:
    """Needs from its host: ``gr``, ``operand`` and ``name``; provides :meth:`guards_at`."""

    gr: Graph
    _cfg: tuple[list[int], list[list[int]], dict[str, int]] | None = None
    _guards: dict[int, list[Guard]] | None = None
    _writers: dict[str, int] | None = None  # PTX register -> its one writing op (-1: several)
    _refining: bool = False  # inside :meth:`guarded_interval` (its guard lookups do not refine again)

    if TYPE_CHECKING:  # provided by the host class (irscan.analysis.ranges.Ranges)

        def operand(self, n: int, slot: int) -> Affine: ...
        def value(self, n: int) -> Affine: ...
        def name(self, a: Affine) -> str: ...
        def interval(self, a: Affine, least_harm: bool = False) -> Interval: ...
        def _derived(
            self, n: int, name: str, iv: Interval, inputs: Iterable[Affine], scales: bool = False, key: Any = None
        ) -> Affine: ...

    def guarded_interval(self, n: int, a: Affine, width: int) -> Interval:
        """Operand ``a``'s interval where op ``n`` computes in ``width`` bits, clamped by the bounds
        dominating guards put on ``a`` itself (``a <= rhs``: rhs's largest value).  Sound for n's result
        wherever it is used: n runs only on the guarded path.  Asked only when ``a``'s ideal range
        leaves ``width`` bits (a narrow op on a wide value: LLVM's bypass of a slow 64-bit division runs
        div.u32 on the truncated operands once ``(a | b) >> 32 == 0`` is tested), so the guards stay off
        the common path."""
        iv = self.interval(a)
        if self._refining or (0 <= iv.lo and iv.hi < 1 << width):
            return iv
        self._refining = True
        known = None if self._guards is None else set(self._guards)
        try:
            guards = self.guards_at(n)
        finally:
            self._refining = False
            if self._guards is not None:  # asked mid-evaluation: a compare's operand may be a loop value
                for b in set(self._guards) - (known or set()):  # still being evaluated (an opaque stand-in
                    del self._guards[b]  # here), so what was learnt is not kept for later askers
        hi = min([iv.hi] + [self.interval(rhs).hi for x, rhs, _ in guards if x == a])
        return Interval(iv.lo, hi) if iv.lo <= hi else iv

    def guarded_copy(self, n: int, v: Affine, width: int) -> Affine:
        """Block argument ``n``, handed ``v`` on its block's one entering edge: v, or where that edge's
        compare keeps v far inside its type (a loop body's counter: ``i < min(start + k, 16)`` when the
        start is free), a copy of v with that bound."""
        g = self.guarded_interval(n, v, width)
        if g.hi >= self.interval(v).hi:
            return v
        return self._derived(n, self.name(v), g, (v,), key=("guarded", n))

    def guards_at(self, at: int) -> list[Guard]:
        """The facts ``x <= rhs`` that hold at op ``at`` because a compare's edge dominates it."""
        if at not in self.gr:
            return []
        return self._block_guards(self.gr.op(at).block)

    def _block_guards(self, block: int) -> list[Guard]:
        """A block's facts: its entering edge's, then its immediate dominator's (memoised per block,
        filled down the dominator chain from the nearest block already known: linear in all)."""
        if self._cfg is None or self._guards is None:
            succ = cfg_successors(self.gr.fn)
            preds: list[list[int]] = [[] for _ in succ]
            for b, ss in enumerate(succ):
                for s in ss:
                    preds[s].append(b)
            index = {x.label: i for i, x in enumerate(self.gr.fn.blocks)}
            self._cfg, self._guards = (immediate_dominators(succ), preds, index), {}
        idom, preds, index = self._cfg
        memo = self._guards
        if not 0 <= block < len(idom) or idom[block] == -1:
            return []
        chain = []
        t = block
        while t not in memo:
            chain.append(t)
            if idom[t] == t:
                break
            t = idom[t]
        for t in reversed(chain):
            up = memo.get(idom[t], []) if idom[t] != t else []
            ps = preds[t]
            own = self._edge_facts(ps[0], t, index) if len(ps) == 1 and ps[0] != t else []
            memo[t] = (own + up)[:_MAX_CONDS]
        return memo[block]

    def _edge_facts(self, b: int, t: int, index: dict[str, int]) -> list[Guard]:
        """The compares that hold on the edge b -> t."""
        blk = self.gr.fn.blocks[b]
        br = blk.ops[-1] if blk.ops else None
        if br is None or br.kind is not Kind.BRANCH:
            return []
        labels = [s.label for s in blk.succs]
        here = self.gr.fn.blocks[t].label
        if self.gr.module.ir == "mlir":
            if len(labels) != 2 or labels[0] == labels[1] or not br.operands:
                return []
            holds = labels[0] == here
            conds = self.gr.defs(br.id, 0)
        else:
            target = index.get(labels[0], -1) if labels else -1
            if br.pred is None or len(labels) != 1 or not blk.falls_through or target in (b + 1, -1):
                return []
            if t not in (target, b + 1):
                return []
            holds = (t == target) != br.pred.startswith("!")
            conds = _defs_before(self.gr, b, br.pred.lstrip("!")) or self._dominating_writer(b, br.pred.lstrip("!"))
        facts: list[Guard] = []
        todo = [(c, holds) for c in conds[:1]] if len(conds) == 1 else []
        while todo and len(facts) < _MAX_CONDS:
            c, pos = todo.pop()
            op = self.gr.op(c)
            if op.kind is Kind.AND and pos and op.width == 1:  # both halves hold
                todo += [(d[0], True) for d in (self.gr.defs(c, 0), self.gr.defs(c, 1)) if len(d) == 1]
            elif self._negated(c) is not None:  # PTX not.pred, MLIR xor with true: the operand, flipped
                todo.append((self._negated(c) or 0, not pos))
            elif op.kind is Kind.ICMP and len(op.operands) == 2:
                pred = str(op.attrs.get("pred", ""))
                pred = pred if pos else _NEGATE.get(pred, "")
                facts += self._high_bits_clear(c) if pred == "eq" else []
                facts += self._compare(c, pred)
        return facts

    def _dominating_writer(self, b: int, reg: str) -> list[int]:
        """The one op of the function that writes predicate ``reg``, when its block dominates block b
        (a predicate computed once and branched on again in a later block: ``@%p bra`` twice)."""
        if self._writers is None:
            self._writers = {}
            for op in self.gr.fn.ops():
                for r in op.results:
                    self._writers[r] = -1 if r in self._writers else op.id
        w = self._writers.get(reg, -1)
        if w < 0 or self._cfg is None:
            return []
        idom, t = self._cfg[0], b
        for _ in range(_MAX_DOM_STEPS):  # up the dominator chain from b, a bounded walk
            if t == self.gr.op(w).block:
                return [w]
            if not 0 <= t < len(idom) or idom[t] in (t, -1):
                return []
            t = idom[t]
        return []

    def _negated(self, c: int) -> int | None:
        """The predicate op c negates: ``not.pred p`` (PTX, an op of no meaning of its own) or
        ``xor p, true`` of an i1 (MLIR); None otherwise."""
        op = self.gr.op(c)
        if op.width != 1:
            return None
        if op.kind is Kind.OPAQUE and op.name == "not.pred" and len(op.operands) == 1:
            d = self.gr.defs(c, 0)
            return d[0] if len(d) == 1 else None
        if op.kind is Kind.XOR and len(op.operands) == 2:
            for s in (0, 1):
                d = self.gr.defs(c, 1 - s)
                if self.gr.const_operand(c, s) in (1, -1) and len(d) == 1:
                    return d[0]
        return None

    def _high_bits_clear(self, c: int) -> list[Guard]:
        """``(x & ~(2^k - 1)) == 0``: x < 2^k, and so is each operand of an ``or`` x is (LLVM's bypass
        of a slow 64-bit division tests ``(a | b) >> 32 == 0`` this way)."""
        for s in (0, 1):
            zero, ands = self.operand(c, 1 - s), self.gr.defs(c, s)
            if zero != Affine.of_const(0) or len(ands) != 1 or self.gr.op(ands[0]).kind is not Kind.AND:
                continue
            n = ands[0]
            w = self.gr.op(n).width or 64
            for m in (0, 1):
                mask = self.operand(n, m)
                x = self.gr.defs(n, 1 - m)
                if not mask.is_const() or len(x) != 1:
                    continue
                bits = mask.const & ((1 << w) - 1)
                k = (bits & -bits).bit_length() - 1
                if k <= 0 or bits | ((1 << k) - 1) != (1 << w) - 1:
                    continue
                xs = [x[0]]
                if self.gr.op(x[0]).kind is Kind.OR:
                    xs += [d[0] for d in (self.gr.defs(x[0], 0), self.gr.defs(x[0], 1)) if len(d) == 1]
                rhs = Affine.of_const((1 << k) - 1)
                return [
                    (self.value(v), rhs, f"guard: the high bits of {self.name(self.value(v))} are clear") for v in xs
                ]
        return []

    def _compare(self, c: int, pred: str) -> list[Guard]:
        a, b = self.operand(c, 0), self.operand(c, 1)
        text = f"guard: {self.name(a)} {_SYMBOL.get(pred, pred)} {self.name(b)} dominates"
        if pred == "eq":
            return [(a, b, text), (b, a, text)]
        if pred not in _LESS:
            return []
        less, strict = _LESS[pred]
        lo, hi = (a, b) if less == 0 else (b, a)
        out = [(lo, hi.add(Affine.of_const(-1 if strict else 0)), text)]
        top = (1 << 31) - 1 if pred.startswith("s") else (1 << 32) - 1
        if self._width(c) == 32 and self.interval(hi).hi > top:
            # a 32-bit compare orders 32-bit values: where the other side is an i64 truncated to i32
            # (Int32(seq_order.shape[0])) or a wider value, its register still holds at most ``top``
            out.append((lo, Affine.of_const(top - (1 if strict else 0)), f"{text} (a 32-bit compare)"))
        return out

    def _width(self, c: int) -> int | None:
        """The width of the values compare c orders (the widest of its operands' definitions)."""
        ws = [self.gr.op(d[0]).width for slot in (0, 1) if len(d := self.gr.defs(c, slot)) == 1]
        return max((w for w in ws if w), default=None)


#: how far up the dominator chain a predicate's one writer is looked for
_MAX_DOM_STEPS = 64

_SYMBOL = {"ult": "<", "slt": "<", "ule": "<=", "sle": "<=", "ugt": ">", "sgt": ">", "uge": ">=", "sge": ">=",
           "eq": "==", "ne": "!="}  # fmt: skip


def _defs_before(gr: Graph, b: int, reg: str) -> list[int]:
    """The op of block b that last writes ``reg`` before its branch (PTX: the branch's predicate)."""
    for op in reversed(gr.fn.blocks[b].ops[:-1]):
        if reg in op.results:
            return [op.id]
    return []
