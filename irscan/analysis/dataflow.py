"""irscan.ir functions -> networkx dataflow graphs: one node per op, one edge per (definition, use).

MLIR is SSA: an operand has one definition, and a block argument is a synthesised PHI node fed by
the matching operand of every branch that targets the block.  PTX registers are not SSA: an operand
is linked to every definition that reaches it (``irscan.analysis.reaching``), so a use with several incoming
edges on one slot *is* the join.  Either way, ``Graph.defs(node, slot)`` answers "where can the value
in this operand come from", which is all the range and check code asks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from irscan.ir import Function, Kind, Module, Op, Operand, ParamField

if TYPE_CHECKING:
    import networkx as nx

Use = tuple[int, int]  # (op id, operand index)


class ReachingFn(Protocol):
    """Called for PTX functions: use -> ids of the ops whose definitions reach it; ``same`` filled
    with use -> the first use of the same value, for uses several definitions reach
    (:func:`irscan.analysis.reaching.reaching_definitions`)."""

    def __call__(
        self, fn: Function, guards: bool = False, same: dict[Use, Use] | None = None
    ) -> dict[Use, list[int]]: ...


@dataclass
class Graph:
    """The dataflow graph of one function.  Edge (d, u, key=slot): operand ``slot`` of u may come from d.

    The analysis asks two questions millions of times (where does this operand come from, who uses
    this value), so the edges are kept as adjacency dicts; ``g`` is the same graph as a networkx
    MultiDiGraph, built on first use, for library algorithms and for callers who want the graph.
    Building it eagerly cost more than the whole analysis on FA4-sized kernels (bench/bench_audit.py).
    """

    module: Module
    fn: Function
    params: dict[str, int] = field(default_factory=dict)  # MLIR param name -> synthetic ARG node
    block_args: dict[str, list[int]] = field(default_factory=dict)  # MLIR block label -> its PHI nodes
    by_id: dict[int, Op] = field(default_factory=dict)
    #: PTX: a use several definitions reach -> the first use of the same value (see :meth:`join_of`)
    same_value: dict[Use, Use] = field(default_factory=dict)
    _defs: dict[int, dict[int, list[int]]] = field(default_factory=dict)
    _users: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    _nx: nx.MultiDiGraph | None = None

    def op(self, n: int) -> Op:
        return self.by_id[n]

    def operand(self, n: int, slot: int) -> Operand:
        return self.op(n).operands[slot]

    def defs(self, n: int, slot: int) -> list[int]:
        return self._defs.get(n, {}).get(slot, [])

    def join_of(self, n: int, slot: int) -> Use:
        """The use that stands for operand ``slot`` of ``n`` where several definitions join: the
        first use of the same value (PTX: the same register, renamed to one phi or guarded
        definition), so both uses get one join of the range analysis; the use itself otherwise."""
        return self.same_value.get((n, slot), (n, slot))

    def same_read(self, a: Use, b: Use) -> bool:
        """Two operands read one value: the same single definition, or (PTX) one join of the same
        register value (:meth:`join_of`); equal definition sets alone are not enough."""
        da, db = self.defs(*a), self.defs(*b)
        if len(da) == 1:
            return da == db
        return len(da) > 1 and da == db and (a == b or self.join_of(*a) == self.join_of(*b))

    def address_base(self, sink: int, limit: int = 64, through_adds: bool = True) -> int | None:
        """The parameter read (an ARG or EXTRACT op) the address of memory op ``sink`` starts from,
        following bases (GEP, cast, copy, and with ``through_adds`` PTX's ``base + offset``), never
        indices; None when the address starts anywhere else.  An address is a short chain: past
        ``limit`` ops it has no base."""
        op = self.op(sink)
        n, slot = sink, op.addr if op.addr is not None else 0
        for _ in range(limit):
            defs = self.defs(n, slot)
            if len(defs) != 1:
                return None
            d = defs[0]
            dop = self.op(d)
            if dop.kind in (Kind.ARG, Kind.EXTRACT):
                return d
            if dop.kind in (Kind.GEP, Kind.CAST, Kind.MOV):
                n, slot = d, 0
            elif (
                dop.kind is Kind.ADD and through_adds
            ):  # PTX: base + offset; the base is the operand with a pointer root
                s = next((s for s in (0, 1) if self._reads_a_parameter(d, s, limit)), None)
                if s is None:
                    return None
                n, slot = d, s
            else:
                return None
        return None

    def pointer_param(self, n: int) -> int | None:
        """The parameter whose pointer field op ``n`` reads: a PTX ``ld.param`` at offset 0, or MLIR's
        ``extractvalue %argK[0]``."""
        op = self.op(n)
        pf = op.attrs.get("field")
        if op.kind is Kind.ARG and isinstance(pf, ParamField):
            return pf.param if pf.offset == 0 else None
        if op.kind is Kind.EXTRACT and tuple(op.attrs.get("path", ())) == (0,):
            root = self.defs(n, 0)
            if len(root) == 1 and self.op(root[0]).kind is Kind.ARG:
                return int(self.op(root[0]).attrs.get("param", -1))
        return None

    def _reads_a_parameter(self, n: int, slot: int, limit: int) -> bool:
        """Operand ``slot`` of ``n`` comes from a parameter read through casts, copies and adds only."""
        for _ in range(limit):
            defs = self.defs(n, slot)
            if len(defs) != 1:
                return False
            kind = self.op(defs[0]).kind
            if kind in (Kind.ARG, Kind.EXTRACT):
                return True
            if kind not in (Kind.CAST, Kind.MOV, Kind.ADD, Kind.GEP):
                return False
            n, slot = defs[0], 0
        return False

    def const_operand(self, n: int, slot: int) -> int | None:
        """Operand ``slot`` of ``n`` when it is an integer constant: an immediate (PTX) or the value of
        its one definition, a constant op; None otherwise (no such slot, several definitions, ...)."""
        op = self.op(n)
        if slot >= len(op.operands):
            return None
        raw = op.operands[slot]
        if isinstance(raw, int):
            return raw
        ds = self.defs(n, slot)
        if len(ds) == 1 and self.op(ds[0]).kind is Kind.CONST:
            v = self.op(ds[0]).attrs.get("value")
            return v if isinstance(v, int) else None
        return None

    def preds(self, n: int) -> list[int]:
        """Every definition feeding any operand of ``n``."""
        return [d for ds in self._defs.get(n, {}).values() for d in ds]

    def users(self, n: int) -> list[tuple[int, int]]:
        return self._users.get(n, [])

    def nodes(self) -> Iterable[int]:
        return self.by_id.keys()

    def __contains__(self, n: object) -> bool:
        return n in self.by_id

    def add(self, op: Op) -> None:
        self.by_id[op.id] = op

    def link(self, edges: Iterable[tuple[int, int, int]]) -> None:
        by_id = self.by_id
        for d, u, slot in edges:
            uop = by_id[u]
            if uop.kind is Kind.OPAQUE and not uop.width:
                continue  # a float/vector op: nothing the analysis asks flows through it
            self._defs.setdefault(u, {}).setdefault(slot, []).append(d)
            self._users.setdefault(d, []).append((u, slot))

    @property
    def g(self) -> nx.MultiDiGraph:
        import networkx as nx  # 0.1 s to import: paid only by callers that want the library graph

        if self._nx is None:
            self._nx = nx.MultiDiGraph()
            self._nx.add_nodes_from((n, {"op": op}) for n, op in self.by_id.items())
            self._nx.add_edges_from((d, u, slot) for d, us in self._users.items() for u, slot in us)
        return self._nx


def _synthetic(ids: list[int], kind: Kind, name: str, result: str, **kw: object) -> Op:
    ids[0] += 1
    return Op(id=ids[0], kind=kind, name=name, results=(result,), **kw)  # type: ignore[arg-type]


def build(module: Module, fn: Function, reaching: ReachingFn | None = None) -> Graph:
    gr = Graph(module, fn)
    ops = fn.ops()
    for op in ops:
        gr.add(op)
    ids = [max((o.id for o in ops), default=0) + 1_000_000]
    edges: list[tuple[int, int, int]] = []
    if module.ir == "ptx":
        if reaching is None:
            raise ValueError("PTX graphs need reaching definitions")
        edges = [(d, use, slot) for (use, slot), ds in reaching(fn, same=gr.same_value).items() for d in ds]
    else:
        edges = _ssa_edges(gr, fn, ids)
    gr.link(edges)
    return gr


def _ssa_edges(gr: Graph, fn: Function, ids: list[int]) -> list[tuple[int, int, int]]:
    """MLIR: SSA names are unique per function; params and block arguments become nodes of their own."""
    where: dict[str, int] = {}
    for p in fn.params:
        node = _synthetic(ids, Kind.ARG, "param", p.name, attrs={"param": p.index}, line=fn.line)
        gr.add(node)
        where[p.name] = node.id
        gr.params[p.name] = node.id
    phis: dict[tuple[str, int], int] = {}
    for bi, b in enumerate(fn.blocks):
        for j, a in enumerate(b.args):
            width = b.arg_widths[j] if j < len(b.arg_widths) else 0
            node = _synthetic(ids, Kind.PHI, "block-arg", a, width=width, block=bi, attrs={"block": b.label})
            node.text = f"{b.label}({a})"
            gr.add(node)
            where[a] = node.id
            phis[(b.label, j)] = node.id
            gr.block_args.setdefault(b.label, []).append(node.id)
        for op in b.ops:
            for r in op.results:
                where[r] = op.id
    edges = [
        (where[v], op.id, slot)
        for b in fn.blocks
        for op in b.ops
        for slot, v in enumerate(op.operands)
        if isinstance(v, str) and v in where
    ]
    for b in fn.blocks:
        for s in b.succs:
            for j, v in enumerate(s.operands):
                phi = phis.get((s.label, j))
                if phi is not None and isinstance(v, str) and v in where:
                    edges.append((where[v], phi, 0))
    return edges
