"""The launch as the host function of the same module computes it: which host argument reaches
each kernel parameter, and the grid and block as straight-line integer programs over the host
arguments' fields.

The DSL lowers ``kernel(...).launch(grid=..., block=...)`` into the ``@cute.jit`` function's LLVM
code: it reads shape fields (``llvm.extractvalue %arg0[1, 0]``), computes ceil-divisions (``sdiv``,
``mul``, ``icmp``, ``select``), stores the results into a launch-config struct
``{array<3 x i32> grid, array<3 x i32> block, ...}`` and hands it to ``cuda.launch_ex @kernel<cfg>
(args...)``.  When every op behind a stored value is pure arithmetic (SSA, so the same function of
the arguments on whichever path reaches the store), the grid is that program evaluated on the
call's arguments; a load, a call or a block argument (a loop, a join) behind it, or a field stored
twice, makes the grid not derivable here (``reason`` says so).

The front end names the launch (``Kind.LAUNCH``, ``attrs["kernel"]``); the walk to the config struct
and its field stores is :mod:`irscan.analysis.hostgrid`'s (the grid facts use it too).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from irscan.analysis.dataflow import Graph
from irscan.analysis.hostgrid import config_alloca, launch_operands, stored_once
from irscan.ir import Kind

#: host ops a straight-line grid computation may use
PURE = frozenset(
    {Kind.CONST, Kind.ADD, Kind.SUB, Kind.MUL, Kind.DIV, Kind.REM, Kind.SHL, Kind.LSHR, Kind.ASHR, Kind.AND,
     Kind.OR, Kind.XOR, Kind.MIN, Kind.MAX, Kind.SELECT, Kind.ICMP, Kind.SEXT, Kind.ZEXT, Kind.TRUNC, Kind.NEG,
     Kind.EXTRACT, Kind.ARG, Kind.MOV}
)  # fmt: skip


@dataclass
class HostLaunch:
    """One ``cuda.launch_ex`` of a host function."""

    kernel: str
    graph: Graph
    #: for each kernel parameter, the host parameter passed to it unchanged (None: computed on the host)
    params: list[int | None] = field(default_factory=list)
    #: for each kernel parameter, the host op whose value is passed (None: not resolved)
    operands: list[int | None] = field(default_factory=list)
    #: op id of the value stored into grid[0..2] and block[0..2], or a constant
    grid: list[int] = field(default_factory=list)
    block: list[int] = field(default_factory=list)
    #: the ops behind grid and block, in evaluation order
    program: list[int] = field(default_factory=list)
    reason: str | None = None  # why the grid/block cannot be derived from the host code


def launches(gr: Graph) -> list[HostLaunch]:
    """Every kernel launch in host function ``gr``."""
    out = []
    for n in gr.nodes():
        op = gr.op(n)
        if op.kind is Kind.LAUNCH and op.attrs.get("kernel"):
            out.append(_launch(gr, n, str(op.attrs["kernel"])))
    return out


def _launch(gr: Graph, n: int, kernel: str) -> HostLaunch:
    hl = HostLaunch(kernel, gr)
    ops = launch_operands(gr, gr.op(n))
    hl.operands = ops[1:]
    for d in ops[1:]:
        dop = gr.op(d) if d is not None else None
        hl.params.append(int(dop.attrs["param"]) if dop is not None and dop.kind is Kind.ARG else None)
    cfg = config_alloca(gr, ops[0]) if ops and ops[0] is not None else None
    if cfg is None:
        hl.reason = "the launch config is not the host function's own alloca"
        return hl
    stores = stored_once(gr, cfg)
    for part, dims in ((0, hl.grid), (1, hl.block)):
        for axis in range(3):
            s = stores.get((part, axis))
            if s is None:
                hl.reason = f"{('grid', 'block')[part]}[{axis}] is not stored once into the launch config"
                return hl
            dims.append(s)
    hl.program, why = program_for(gr, [*hl.grid, *hl.block])
    if why:
        hl.reason = why
    return hl


def field_source(hl: HostLaunch, param: int, path: tuple[int, ...]) -> int | tuple[int, tuple[int, ...]] | None:
    """Where field ``path`` of kernel parameter ``param`` comes from when the host builds that struct
    (``llvm.insertvalue`` chains: a coordinate tensor, a re-laid-out view): the host op computing the
    value, or ``(host parameter, path)`` for a field passed through from an argument; None if unknown."""
    gr = hl.graph
    n = hl.operands[param] if param < len(hl.operands) else None
    for _ in range(256):  # an insertvalue chain is one op per field
        if n is None:
            return None
        op = gr.op(n)
        if op.kind is Kind.INSERT:
            q = tuple(op.attrs.get("path", ()))
            inside = path[: len(q)] == q
            path = path[len(q) :] if inside else path
            defs = gr.defs(n, 0 if inside else 1)
            n = defs[0] if len(defs) == 1 else None
        elif op.kind is Kind.ARG and "param" in op.attrs:
            return (int(op.attrs["param"]), path)
        elif op.kind is Kind.EXTRACT and len(root := gr.defs(n, 0)) == 1 and gr.op(root[0]).kind is Kind.ARG:
            return (int(gr.op(root[0]).attrs.get("param", -1)), (*op.attrs.get("path", ()), *path))
        else:
            return n if not path else None
    return None


def program_for(gr: Graph, roots: list[int]) -> tuple[list[int], str | None]:
    """The ops behind ``roots``, definitions first, and a reason when one is not pure arithmetic."""
    order: list[int] = []
    return order, _straight_line(gr, roots, order)


def _straight_line(gr: Graph, roots: list[int], order: list[int]) -> str | None:
    done: set[int] = set()
    for root in roots:
        stack: list[tuple[int, bool]] = [(root, False)]
        while stack:
            x, expanded = stack.pop()
            if x in done:
                continue
            op = gr.op(x)
            if expanded:
                done.add(x)
                order.append(x)
                continue
            if op.kind not in PURE:
                return f"the launch's grid/block depends on {op.name} in the host code (IR line {op.line})"
            stack.append((x, True))
            for slot in range(len(op.operands)):
                if isinstance(op.operands[slot], int):
                    continue
                defs = gr.defs(x, slot)
                if len(defs) != 1:
                    return f"the launch's grid/block joins several values (IR line {op.line})"
                stack.append((defs[0], False))
    return None
