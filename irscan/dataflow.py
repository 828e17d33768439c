"""ir.py functions -> networkx dataflow graphs: one node per op, one edge per (definition, use).

MLIR is SSA: an operand has one definition, and a block argument is a synthesised PHI node fed by
the matching operand of every branch that targets the block.  PTX registers are not SSA: an operand
is linked to every definition that reaches it (``irscan.reaching``), so a use with several incoming
edges on one slot *is* the join.  Either way, ``Graph.defs(node, slot)`` answers "where can the value
in this operand come from", which is all the range and check code asks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import networkx as nx

from irscan.ir import Function, Kind, Module, Op, Operand, Param

#: Called for PTX functions: (op id, operand index) -> ids of the ops whose definitions reach it.
ReachingFn = Callable[[Function], dict[tuple[int, int], list[int]]]


@dataclass
class Graph:
    """The dataflow graph of one function.  Edge (d, u, key=slot): operand ``slot`` of u may come from d."""

    module: Module
    fn: Function
    g: nx.MultiDiGraph = field(default_factory=nx.MultiDiGraph)
    params: dict[str, int] = field(default_factory=dict)  # MLIR param name -> synthetic ARG node
    block_args: dict[str, list[int]] = field(default_factory=dict)  # MLIR block label -> its PHI nodes

    def op(self, n: int) -> Op:
        return self.g.nodes[n]["op"]

    def operand(self, n: int, slot: int) -> Operand:
        return self.op(n).operands[slot]

    def defs(self, n: int, slot: int) -> list[int]:
        return [d for d, _, k in self.g.in_edges(n, keys=True) if k == slot]

    def users(self, n: int) -> list[tuple[int, int]]:
        return [(u, k) for _, u, k in self.g.out_edges(n, keys=True)]

    def nodes(self) -> Iterable[int]:
        return self.g.nodes


def _synthetic(ids: list[int], kind: Kind, name: str, result: str, **kw: object) -> Op:
    ids[0] += 1
    return Op(id=ids[0], kind=kind, name=name, results=(result,), **kw)  # type: ignore[arg-type]


def build(module: Module, fn: Function, reaching: ReachingFn | None = None) -> Graph:
    gr = Graph(module, fn)
    g = gr.g
    ops = fn.ops()
    ids = [max((o.id for o in ops), default=0) + 1_000_000]
    for op in ops:
        g.add_node(op.id, op=op)
    if module.ir == "ptx":
        if reaching is None:
            raise ValueError("PTX graphs need reaching definitions")
        for (use, slot), ds in reaching(fn).items():
            for d in ds:
                g.add_edge(d, use, key=slot)
        return gr

    # MLIR: SSA names are unique per function; params and block arguments become nodes of their own.
    where: dict[str, int] = {}
    for p in fn.params:
        node = _synthetic(ids, Kind.ARG, "param", p.name, attrs={"param": p.index, "path": ()}, line=fn.line)
        g.add_node(node.id, op=node)
        where[p.name] = node.id
        gr.params[p.name] = node.id
    phis: dict[tuple[str, int], int] = {}
    for bi, b in enumerate(fn.blocks):
        for j, a in enumerate(b.args):
            width = b.arg_widths[j] if j < len(b.arg_widths) else 0
            node = _synthetic(ids, Kind.PHI, "block-arg", a, width=width, block=bi, attrs={"block": b.label})
            node.text = f"{b.label}({a})"
            g.add_node(node.id, op=node)
            where[a] = node.id
            phis[(b.label, j)] = node.id
            gr.block_args.setdefault(b.label, []).append(node.id)
        for op in b.ops:
            for r in op.results:
                where[r] = op.id
    for op in ops:
        for slot, v in enumerate(op.operands):
            if isinstance(v, str) and v in where:
                g.add_edge(where[v], op.id, key=slot)
    for b in fn.blocks:
        term = b.ops[-1].id if b.ops else None
        for s in b.succs:
            for j, v in enumerate(s.operands):
                phi = phis.get((s.label, j))
                if phi is not None and isinstance(v, str) and v in where:
                    g.add_edge(where[v], phi, key=0)
                    if term is not None:
                        g.nodes[phi].setdefault("from", []).append(term)
    return gr


def param_of(gr: Graph, n: int) -> Param | None:
    op = gr.op(n)
    if op.kind is Kind.ARG and "param" in op.attrs:
        idx = op.attrs["param"]
        return next((p for p in gr.fn.params if p.index == idx), None)
    return None
