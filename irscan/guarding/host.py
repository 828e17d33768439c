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

The front end names the launch (``Kind.LAUNCH``, ``attrs["kernel"]``); the config struct's layout is the
DSL's, kept once in :mod:`irscan.analysis.hostgrid`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from irscan.analysis.dataflow import Graph
from irscan.analysis.hostgrid import CONFIG_STRUCT
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
    # the dataflow graph does not link an op of no integer result (the launch): resolve its operands here
    where = {r: op.id for op in gr.fn.ops() for r in op.results} | gr.params
    ops = [where.get(v) if isinstance(v, str) else None for v in gr.op(n).operands]
    hl.operands = ops[1:]
    for d in ops[1:]:
        dop = gr.op(d) if d is not None else None
        hl.params.append(int(dop.attrs["param"]) if dop is not None and dop.kind is Kind.ARG else None)
    cfg = _config_struct(gr, ops[0]) if ops and ops[0] is not None else None
    if cfg is None:
        hl.reason = "the launch config is not the host function's own alloca"
        return hl
    stores = _config_stores(gr, cfg)
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


def _config_struct(gr: Graph, handle: int) -> int | None:
    """The alloca of the config struct: the launch's config operand is a cast of a one-pointer array
    whose element the host stores the struct's address into."""
    seen: set[int] = set()
    todo = [handle]
    while todo:
        x = todo.pop()
        if x in seen:
            continue
        seen.add(x)
        op = gr.op(x)
        if op.kind is Kind.CAST:
            todo += gr.defs(x, 0)
            continue
        for u, slot in gr.users(x):  # the pointer array: store S, gep(A)[0, 0]
            if gr.op(u).kind is Kind.GEP:
                for st, sslot in gr.users(u):
                    sop = gr.op(st)
                    if sop.kind is Kind.STORE and sslot == sop.addr and slot == 0:
                        vals = gr.defs(st, 1 - (sop.addr or 0)) if sop.addr in (0, 1) else []
                        if len(vals) == 1:
                            return vals[0]
    return None


def _config_stores(gr: Graph, cfg: int) -> dict[tuple[int, int], int]:
    """(part, axis) -> the op whose value is stored there; a field stored twice is left out."""
    out: dict[tuple[int, int], int] = {}
    twice: set[tuple[int, int]] = set()
    for op in gr.fn.ops():
        if op.kind is not Kind.STORE or op.addr not in (0, 1):
            continue
        addr = gr.defs(op.id, op.addr)
        if len(addr) != 1:
            continue
        g = gr.op(addr[0])
        if g.kind is not Kind.GEP or gr.defs(g.id, 0) != [cfg]:
            continue
        if not str(g.attrs.get("elem_type", "")).startswith(CONFIG_STRUCT):
            continue
        idx = [i[1] for i in g.attrs.get("indices", ()) if isinstance(i, tuple) and i[0] == "const"]
        val = gr.defs(op.id, 1 - op.addr)
        if len(idx) == 3 and idx[0] == 0 and idx[1] in (0, 1) and 0 <= idx[2] < 3 and len(val) == 1:
            key = (idx[1], idx[2])
            if key in out:
                twice.add(key)
            out[key] = val[0]
    return {k: v for k, v in out.items() if k not in twice}


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
