"""Reaching definitions for PTX functions, whose registers are not SSA.

``reaching_definitions(fn)`` answers, for every register read in ``fn``, which ops' writes of that
register can reach the read: the edges a dataflow graph needs where MLIR has SSA use-def chains.

Classic forward may-analysis over the CFG that :mod:`irscan.frontend.ptx` builds (labels, branches,
fall-through; loops included), iterated to a fixed point in reverse post-order.  Sets are Python
ints used as bit vectors, with the definitions of each register given consecutive bits, so that
"the definitions of %r7 in IN[b]" is one shift and one mask.  A guarded definition
(``@%p mov.b32 %r1, 0``) may not execute, so it adds itself without killing the others.  Blocks the
entry cannot reach contribute no definitions to other blocks.
"""

from __future__ import annotations

from irscan.ir import Function

#: key of the guard predicate of an op (``@%p1``) in the result: ``(op.id, GUARD)``
GUARD = -1


def _is_register(name: str, defined: set[str]) -> bool:
    # Symbols (params, globals, labels) are never written by an op and never start with '%' in the
    # compilers' output; inline-asm registers without '%' (P1, smem_desc_lo) are written somewhere.
    return name in defined or name[:1] == "%"


def _rpo(n: int, succ: list[list[int]]) -> list[int]:
    """Reverse post-order from block 0, then any block not reachable from it (in layout order)."""
    seen = [False] * n
    post: list[int] = []
    for root in range(n):
        if seen[root]:
            continue
        seen[root] = True
        stack = [(root, iter(succ[root]))]
        while stack:
            b, it = stack[-1]
            for s in it:
                if not seen[s]:
                    seen[s] = True
                    stack.append((s, iter(succ[s])))
                    break
            else:
                stack.pop()
                post.append(b)
    post.reverse()
    return post


def _reachable(succ: list[list[int]]) -> list[bool]:
    seen = [False] * len(succ)
    seen[0] = True
    stack = [0]
    while stack:
        for s in succ[stack.pop()]:
            if not seen[s]:
                seen[s] = True
                stack.append(s)
    return seen


def cfg_successors(fn: Function) -> list[list[int]]:
    """Block index -> successor block indices (branch targets, then the fall-through block)."""
    index = {b.label: i for i, b in enumerate(fn.blocks)}
    n = len(fn.blocks)
    out: list[list[int]] = []
    for i, b in enumerate(fn.blocks):
        s = [index[x.label] for x in b.succs if x.label in index]
        if b.falls_through and i + 1 < n and i + 1 not in s:
            s.append(i + 1)
        out.append(s)
    return out


class _Entering:
    """The definitions entering one block, decoded per register on demand (and memoised)."""

    __slots__ = ("bits", "base", "count", "def_op", "memo")

    def __init__(self, bits: int, base: dict[str, int], count: dict[str, int], def_op: list[int]) -> None:
        self.bits, self.base, self.count, self.def_op = bits, base, count, def_op
        self.memo: dict[str, list[int]] = {}

    def get(self, r: str) -> list[int]:
        v = self.memo.get(r)
        if v is None:
            c = self.count.get(r)
            v = []
            if c is not None:
                k = self.base[r]
                bits = (self.bits >> k) & ((1 << c) - 1)
                while bits:
                    if bits & 1:
                        v.append(self.def_op[k])
                    bits >>= 1
                    k += 1
            self.memo[r] = v
        return v


def reaching_definitions(fn: Function, guards: bool = False) -> dict[tuple[int, int], list[int]]:
    """``(op.id, operand index) -> ids of the ops whose write of that register reaches the read``.

    Every register operand of every op has an entry (``[]`` when nothing defines it on any path).
    With ``guards=True`` the guard predicate of a guarded op (``@%p1``) has one too, under operand
    index :data:`GUARD` (-1; not an index into ``op.operands``).  Ids are sorted.  The lists may be
    shared between entries: do not mutate them.
    """
    blocks = fn.blocks
    n = len(blocks)
    if n == 0:
        return {}

    # -- number the definitions, grouped by register: bits base[r] .. base[r] + count[r] - 1
    by_reg: dict[str, list[int]] = {}
    for b in blocks:
        for op in b.ops:
            for r in op.results:
                lst = by_reg.get(r)
                if lst is None:
                    by_reg[r] = [op.id]
                elif lst[-1] != op.id:  # {%r1, %r1} defines once
                    lst.append(op.id)
    base: dict[str, int] = {}
    def_op: list[int] = []
    bit_of: dict[tuple[int, str], int] = {}
    for r, ids in by_reg.items():
        base[r] = len(def_op)
        for i in ids:
            bit_of[(i, r)] = len(def_op)
            def_op.append(i)
    count = {r: len(ids) for r, ids in by_reg.items()}
    mask = {r: ((1 << count[r]) - 1) << base[r] for r in by_reg}
    defined = set(by_reg)

    # -- per block: GEN (the block's last unguarded def of each register, plus guarded ones after it)
    #    and KILL (all defs of a register the block writes unguarded)
    gen = [0] * n
    notkill = [-1] * n
    for bi, b in enumerate(blocks):
        local: dict[str, int] = {}
        kill = 0
        for op in b.ops:
            guarded = op.pred is not None
            for r in op.results:
                bit = 1 << bit_of[(op.id, r)]
                if guarded:
                    local[r] = local.get(r, 0) | bit
                else:
                    local[r] = bit
                    kill |= mask[r]
        g = 0
        for v in local.values():
            g |= v
        gen[bi] = g
        notkill[bi] = ~kill

    # -- fixed point
    succ = cfg_successors(fn)
    preds: list[list[int]] = [[] for _ in range(n)]
    for i, ss in enumerate(succ):
        for s in ss:
            preds[s].append(i)
    order = _rpo(n, succ)
    # code the entry cannot reach never runs: its definitions reach nothing outside their block
    reach = _reachable(succ)
    for bi in range(n):
        if not reach[bi]:
            gen[bi] = 0
    out = list(gen)
    ins = [0] * n
    changed = True
    while changed:
        changed = False
        for bi in order:
            inn = 0
            for p in preds[bi]:
                inn |= out[p]
            ins[bi] = inn
            new = gen[bi] | (inn & notkill[bi])
            if new != out[bi]:
                out[bi] = new
                changed = True

    # -- resolve each read: a def earlier in the same block, else what enters the block
    result: dict[tuple[int, int], list[int]] = {}
    for bi, b in enumerate(blocks):
        entering = _Entering(ins[bi], base, count, def_op)
        local_defs: dict[str, list[int]] = {}
        for op in b.ops:
            for slot, o in enumerate(op.operands):
                if type(o) is str and (o in defined or o[:1] == "%"):
                    here = local_defs.get(o)
                    result[(op.id, slot)] = here if here is not None else entering.get(o)
            if guards and op.pred is not None:
                guard = op.pred.lstrip("!")
                here = local_defs.get(guard)
                result[(op.id, GUARD)] = here if here is not None else entering.get(guard)
            if op.results:
                guarded = op.pred is not None
                for r in op.results:
                    if guarded:
                        prev = local_defs.get(r)
                        if prev is None:
                            prev = entering.get(r)
                        local_defs[r] = sorted({*prev, op.id})
                    else:
                        local_defs[r] = [op.id]
    return result
