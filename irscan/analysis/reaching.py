"""Reaching definitions for PTX functions, whose registers are not SSA.

``reaching_definitions(fn)`` answers, for every register read in ``fn``, which ops' writes of that
register can reach the read: the edges a dataflow graph needs where MLIR has SSA use-def chains.

It is computed the way SSA construction renames (Cytron et al.), so that time and memory follow the
number of ops, registers and join points instead of registers x definitions: phi nodes for a
register sit at the iterated dominance frontier of the blocks that write it; one walk of the
dominator tree keeps a stack of the current value per register and gives every read the value node
on top; a read's definitions are then the definitions its node reaches through phi and guard nodes
(strongly connected components for loops, each component's set computed once).  This is the
classic forward may-analysis over the CFG that :mod:`irscan.frontend.ptx` builds (labels, branches,
fall-through; loops included), answered sparsely.  (The bit-vector version before it built one mask
of O(all definitions) bits per register: a 100k-register file took 5 s and 1.4 GB here.)

A guarded definition (``@%p mov.b32 %r1, 0``) may not execute, so it adds itself without killing the
others (its node is "this op, or the previous value").  Blocks the entry cannot reach contribute no
definitions to other blocks, and nothing enters them.
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


#: value nodes of the renaming walk: node 0 is "no definition"; others are a definition (own op id,
#: no operands), a guarded definition (own op id, the previous value as operand) or a phi (no own
#: op, one operand per incoming edge)
_UNDEF = 0
#: the operands of every unguarded definition (never appended to: only phis gain operands)
_NO_OPERANDS: list[int] = []


class _Nodes:
    """The value nodes, as parallel lists (own op id or -1; operand nodes)."""

    __slots__ = ("own", "opnd")

    def __init__(self) -> None:
        self.own: list[int] = [-1]
        self.opnd: list[list[int]] = [[]]

    def new(self, own: int, opnd: list[int]) -> int:
        self.own.append(own)
        self.opnd.append(opnd)
        return len(self.own) - 1

    def resolve(self, roots: set[int]) -> dict[int, list[int]]:
        """Node -> sorted op ids of the definitions it stands for, for ``roots`` and what they reach.

        Iterative Tarjan: a component is finished after every component it reaches, so its set is
        its members' own ops plus the (already computed) sets of the components it points to.
        """
        own, opnd = self.own, self.opnd
        sets: dict[int, list[int]] = {}
        index: dict[int, int] = {}
        low: dict[int, int] = {}
        onstack: set[int] = set()
        comp: list[int] = []
        for root in roots:
            if root in index:
                continue
            index[root] = low[root] = len(index)
            comp.append(root)
            onstack.add(root)
            work = [(root, iter(opnd[root]))]
            while work:
                v, it = work[-1]
                for w in it:
                    if w not in index:
                        index[w] = low[w] = len(index)
                        comp.append(w)
                        onstack.add(w)
                        work.append((w, iter(opnd[w])))
                        break
                    if w in onstack and index[w] < low[v]:
                        low[v] = index[w]
                else:
                    work.pop()
                    if work and low[v] < low[work[-1][0]]:
                        low[work[-1][0]] = low[v]
                    if low[v] == index[v]:
                        members = []
                        while True:
                            w = comp.pop()
                            onstack.discard(w)
                            members.append(w)
                            if w == v:
                                break
                        _sets_of_members(members, own, opnd, sets)
        return sets


def _sets_of_members(members: list[int], own: list[int], opnd: list[list[int]], sets: dict[int, list[int]]) -> None:
    """The definition set of one finished component, shared by its members."""
    if len(members) == 1:
        m = members[0]
        ops = opnd[m]
        if not ops:  # a definition, or "no definition"
            sets[m] = [own[m]] if own[m] >= 0 else []
            return
        if own[m] < 0 and len(ops) == 1:  # a phi of one incoming value: the same set
            sets[m] = sets[ops[0]]
            return
    inside = set(members)
    acc: set[int] = set()
    for m in members:
        if own[m] >= 0:
            acc.add(own[m])
        for w in opnd[m]:
            if w not in inside:
                acc.update(sets[w])
    result = sorted(acc)
    for m in members:
        sets[m] = result


def _dominance_frontiers(succ: list[list[int]], idom: list[int]) -> list[list[int]]:
    """Dominance frontier of each reachable block (Cooper-Harvey-Kennedy); the entry counts as a
    join (the function's start is an edge into it)."""
    n = len(succ)
    df: list[list[int]] = [[] for _ in range(n)]
    last = [-1] * n
    preds: list[list[int]] = [[] for _ in range(n)]
    for b, ss in enumerate(succ):
        if idom[b] != -1:
            for s in ss:
                preds[s].append(b)
    for b in range(n):
        if idom[b] == -1:
            continue
        stop = idom[b] if b != 0 else -1
        for p in preds[b]:
            r = p
            while r != stop:
                if last[r] != b:
                    last[r] = b
                    df[r].append(b)
                if r == 0:
                    break
                r = idom[r]
    return df


def reaching_definitions(
    fn: Function, guards: bool = False, same: dict[tuple[int, int], tuple[int, int]] | None = None
) -> dict[tuple[int, int], list[int]]:
    """``(op.id, operand index) -> ids of the ops whose write of that register reaches the read``.

    Every register operand of every op has an entry (``[]`` when nothing defines it on any path).
    With ``guards=True`` the guard predicate of a guarded op (``@%p1``) has one too, under operand
    index :data:`GUARD` (-1; not an index into ``op.operands``).  Ids are sorted.  The lists may be
    shared between entries: do not mutate them.

    ``same``, when given, is filled with ``read -> the first read of the same value`` for every read
    that several definitions reach: two reads renamed to one value node (one phi, one guarded
    definition) see the same value whenever both execute, as two uses of one SSA value do, while two
    reads with equal definition sets need not (a loop may step the register between them).  So the
    range analysis can give both one join atom, and ``x - (x & -128)`` is seen as ``x % 128``.
    """
    # guards.py imports this module for cfg_successors; its dominators are shared, not copied
    from irscan.analysis.guards import immediate_dominators

    blocks = fn.blocks
    n = len(blocks)
    if n == 0:
        return {}
    succ = cfg_successors(fn)
    idom = immediate_dominators(succ)

    defined: set[str] = set()
    def_blocks: dict[str, list[int]] = {}
    for bi, b in enumerate(blocks):
        for op in b.ops:
            for r in op.results:
                defined.add(r)
                if idom[bi] != -1:
                    lst = def_blocks.setdefault(r, [])
                    if not lst or lst[-1] != bi:
                        lst.append(bi)

    # -- phi nodes at the iterated dominance frontier of each register's defining blocks
    nodes = _Nodes()
    df = _dominance_frontiers(succ, idom)
    phis: list[list[tuple[str, int]]] = [[] for _ in range(n)]
    for r, dbs in def_blocks.items():
        if not any(df[x] for x in dbs):
            continue
        placed: set[int] = set()
        queued = set(dbs)
        work = list(dbs)
        while work:
            for y in df[work.pop()]:
                if y not in placed:
                    placed.add(y)
                    phis[y].append((r, nodes.new(-1, [])))
                    if y not in queued:
                        queued.add(y)
                        work.append(y)

    # -- rename: walk the dominator tree, then each block the entry cannot reach on its own
    children: list[list[int]] = [[] for _ in range(n)]
    for c in range(1, n):
        if idom[c] != -1:
            children[idom[c]].append(c)
    use: dict[tuple[int, int], int] = {}
    cur: dict[str, list[int]] = {}

    def block(bi: int, pushed: list[str]) -> None:
        """Rename block ``bi``: record the value each read sees, push the block's own values."""
        for r, node in phis[bi]:
            cur.setdefault(r, []).append(node)
            pushed.append(r)
        for op in blocks[bi].ops:
            for slot, o in enumerate(op.operands):
                if type(o) is str and (o in defined or o[:1] == "%"):
                    st = cur.get(o)
                    use[(op.id, slot)] = st[-1] if st else _UNDEF
            if guards and op.pred is not None:
                st = cur.get(op.pred.lstrip("!"))
                use[(op.id, GUARD)] = st[-1] if st else _UNDEF
            guarded = op.pred is not None
            for k, r in enumerate(op.results):
                if r in op.results[:k]:  # {%r1, %r1} defines once
                    continue
                st = cur.setdefault(r, [])
                node = nodes.new(op.id, [st[-1] if st else _UNDEF] if guarded else _NO_OPERANDS)
                st.append(node)
                pushed.append(r)

    stack: list[tuple[int, list[str] | None]] = [(0, None)]
    while stack:
        bi, done = stack.pop()
        if done is not None:  # leaving bi: its values go out of scope
            for r in done:
                cur[r].pop()
            continue
        pushed: list[str] = []
        block(bi, pushed)
        for s in succ[bi]:
            for r, node in phis[s]:
                st = cur.get(r)
                nodes.opnd[node].append(st[-1] if st else _UNDEF)
        stack.append((bi, pushed))
        stack.extend((c, None) for c in reversed(children[bi]))
    for bi in range(n):
        if idom[bi] == -1:
            cur.clear()
            block(bi, [])

    sets = nodes.resolve(set(use.values()))
    if same is not None:
        first: dict[int, tuple[int, int]] = {}
        for k, v in use.items():
            if k[1] != GUARD and len(sets[v]) > 1:
                same[k] = first.setdefault(v, k)
    return {k: sets[v] for k, v in use.items()}
