"""The launch grid as the host function of the same module computes it, as facts about the kernel.

The DSL lowers ``kernel(...).launch(grid=[cute.ceil_div(M, 128), H, B])`` into the ``@cute.jit``
function's LLVM code: it reads shape fields of its arguments (``llvm.extractvalue %arg0[1, 0, 1]``),
ceil-divides them (``sdiv``, ``mul``, ``icmp``, ``select``), stores the results into the launch config
struct ``{array<3 x i32> grid, array<3 x i32> block, ...}`` and launches the kernel with structs it
builds from the same fields (``llvm.insertvalue``, modes sometimes reordered).  So each grid dimension
is ``ceil(F / t)`` for a field F of some kernel parameter, and in the kernel ``t·ctaid <= F - 1``: a
block index bounded by a shape symbol, not by 2^31 (irscan/analysis/inputs.py uses it).

:func:`module_grids` derives, per kernel, a :class:`GridDim` for each dimension it can: the kernel
parameter and struct path of F (resolved through the insertvalue chains of the launch's arguments)
and the tile t.  A dimension computed any other way is left out (the ISA's range stays).  PTX has no
host code: the grids of the MLIR of the same capture reach it through meta.json's dict (``META_KEY``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from irscan.analysis import dataflow
from irscan.analysis.params import tensor_fields
from irscan.analysis.relate import LESS
from irscan.ir import Function, Kind, Module, Op

#: the launch config's layout (grid, block, then smem bytes, stream, attributes, count): a type
CONFIG_STRUCT = "!llvm.struct<(array<3 x i32>, array<3 x i32>,"
#: where the MLIR scan leaves the grids for the PTX scan of the same capture (in the meta dict)
META_KEY = "_irscan_host_grids"
_STEPS = 64


@dataclass(frozen=True, slots=True)
class GridDim:
    """``nctaid.<axis> <= ceil(field / tile)``, field = kernel parameter ``param`` at ``path`` (``param``
    -1: no field is known); and ``nctaid.<axis> <= cap`` when ``cap`` is set (a grid clamped to a
    compile-time constant: ``min(num_sms // 16, rows) * 16``)."""

    axis: int
    param: int
    path: tuple[int, ...]
    tile: int
    cap: int | None = None
    #: where ``cap`` comes from when not the host's clamp (said in the facts; meta.json does not keep it)
    why: str = ""

    def as_json(self) -> list[Any]:
        return [self.axis, self.param, list(self.path), self.tile, self.cap]

    @staticmethod
    def of_json(x: Any) -> GridDim:
        cap = x[4] if len(x) > 4 and x[4] is not None else None
        return GridDim(int(x[0]), int(x[1]), tuple(int(p) for p in x[2]), int(x[3]), None if cap is None else int(cap))


def capped(grid: tuple[GridDim, ...], caps: dict[int, tuple[int, str]]) -> tuple[GridDim, ...]:
    """``grid`` with each axis of ``caps`` (axis -> (the most CTAs, why)) clamped to it where that is
    tighter than the cap it has (an axis the host's grid does not name gets an entry of its own)."""
    out = list(grid)
    for axis, (most, why) in sorted(caps.items()):
        i = next((j for j, g in enumerate(out) if g.axis == axis), None)
        g = out[i] if i is not None else GridDim(axis, -1, (), 1)
        if g.cap is not None and g.cap <= most:
            continue
        new = GridDim(g.axis, g.param, g.path, g.tile, most, why)
        if i is None:
            out.append(new)
        else:
            out[i] = new
    return tuple(out)


@dataclass(frozen=True, slots=True)
class ConfigStore:
    """A store of ``value`` into ``grid[axis]`` (part 0) or ``block[axis]`` (part 1) of the launch config
    struct whose address is ``base`` (the GEP's base operand: the config alloca, or several on a join)."""

    store: int
    base: tuple[int, ...]
    part: int
    axis: int
    value: int


def config_stores(gr: dataflow.Graph, ops: Iterable[Op] | None = None) -> list[ConfigStore]:
    """The grid/block field stores among ``ops`` (default: the whole function), in order.  Shared with
    the launch guard (irscan/guarding/host.py), which reads the block too."""
    out = []
    for op in gr.fn.ops() if ops is None else ops:
        if op.kind is not Kind.STORE or op.addr not in (0, 1):
            continue
        addr = gr.defs(op.id, op.addr)
        g = gr.op(addr[0]) if len(addr) == 1 else None
        if g is None or g.kind is not Kind.GEP or not str(g.attrs.get("elem_type", "")).startswith(CONFIG_STRUCT):
            continue
        idx = [i[1] for i in g.attrs.get("indices", ()) if isinstance(i, tuple) and i[0] == "const"]
        val = gr.defs(op.id, 1 - op.addr)
        if len(idx) == 3 and idx[0] == 0 and idx[1] in (0, 1) and 0 <= idx[2] < 3 and len(val) == 1:
            out.append(ConfigStore(op.id, tuple(gr.defs(g.id, 0)), idx[1], idx[2], val[0]))
    return out


def config_alloca(gr: dataflow.Graph, handle: int) -> int | None:
    """The alloca of the config struct behind a launch's config operand ``handle``: a cast of a
    one-pointer array whose element the host stores the struct's address into."""
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


def launch_operands(gr: dataflow.Graph, op: Op) -> list[int | None]:
    """The op (or parameter node) defining each operand of a launch: the config, then the kernel
    arguments.  The dataflow graph does not link an op of no integer result such as the launch."""
    where = {r: o.id for o in gr.fn.ops() for r in o.results} | gr.params
    return [where.get(v) if isinstance(v, str) else None for v in op.operands]


def module_grids(module: Module, meta: dict[str, Any] | None) -> dict[str, tuple[GridDim, ...]]:
    """Kernel name -> the grid dimensions its host function derives (MLIR), or that the MLIR of the
    same capture derived (PTX, through ``meta``)."""
    if module.ir != "mlir":
        stored = meta.get(META_KEY) if isinstance(meta, dict) else None
        try:  # written by the MLIR scan of this run; a meta.json that holds the key itself is ignored
            return {str(k): tuple(GridDim.of_json(x) for x in v) for k, v in (stored or {}).items()}
        except (TypeError, ValueError, IndexError, AttributeError):
            return {}
    kernels = module.kernels()
    out: dict[str, tuple[GridDim, ...]] = {}
    for fn in module.functions:
        if fn.kernel or not fn.blocks or fn.attrs.get("gpu_module"):
            continue
        for kernel, dims in _host_launches(module, fn, kernels):
            out[kernel] = dims
    if isinstance(meta, dict):
        meta[META_KEY] = {k: [d.as_json() for d in v] for k, v in out.items()}
    return out


def _host_launches(module: Module, fn: Function, kernels: list[Function]) -> list[tuple[str, tuple[GridDim, ...]]]:
    gr = dataflow.build(module, fn)
    launches = [(op, ker) for op in fn.ops() if (ker := _launched(op, kernels)) is not None]
    out = []
    for op, ker in launches:
        ops = launch_operands(gr, op)
        grid = _launch_grid(gr, ops[0] if ops else None, len(launches) == 1)
        dims = []
        for axis, node in grid.items():
            ct = _ceil_div(gr, node)
            if ct is None:
                continue
            src, tile, cap = ct
            at = _kernel_field(gr, ker, ops[1:], src) if src is not None else None
            if at is None and src is not None and src != node:
                # the grid value itself is a kernel field where its dividend is none: flashinfer's SDSA
                # scorer launches jobs = query.shape[0] // rows blocks and hands the kernel the query
                # as a TMA tensor of (rows, d, jobs), so ctaid.x < that tensor's extent
                at, tile = _kernel_field(gr, ker, ops[1:], node), 1
            if at is not None:
                dims.append(GridDim(axis, at[0], at[1], tile, cap))
            elif cap is not None:
                dims.append(GridDim(axis, -1, (), 1, cap))
        out.append((ker.name, tuple(dims)))
    return out


def _launch_grid(gr: dataflow.Graph, handle: int | None, only: bool) -> dict[int, int]:
    """Axis -> the op whose value is stored into grid[axis] of this launch's own config (its config
    operand or the alloca behind it, each field stored once); with no such config and ``only`` (the one
    launch of the function), the entry block's one config.  A host function launching several
    kernels builds one config per launch: a grid is never taken from another launch's config."""
    for cfg in (handle, config_alloca(gr, handle) if handle is not None else None):
        own = stored_once(gr, cfg) if cfg is not None else {}
        if own:  # the config itself, or the alloca the pointer array handed to the launch holds
            return {axis: v for (part, axis), v in own.items() if part == 0}
    grid = _config_grid(gr) if only else None
    return dict(enumerate(grid)) if grid is not None else {}


def stored_once(gr: dataflow.Graph, cfg: int) -> dict[tuple[int, int], int]:
    """(part, axis) -> the op whose value is stored there in the config alloca ``cfg``; a field stored
    twice is left out (which store reaches the launch is not seen).  Shared with irscan/guarding/host.py."""
    out: dict[tuple[int, int], int] = {}
    twice: set[tuple[int, int]] = set()
    for cs in config_stores(gr):
        if cs.base != (cfg,):
            continue
        key = (cs.part, cs.axis)
        if key in out:
            twice.add(key)
        out[key] = cs.value
    return {k: v for k, v in out.items() if k not in twice}


def _launched(op: Any, kernels: list[Function]) -> Function | None:
    """The kernel an op launches: a LAUNCH op names it; an op the front end left opaque is taken for
    the launch when its operands after the first match one kernel's parameter count."""
    if op.kind is Kind.LAUNCH:  # the symbol as written (``@kernels::@k``) or bare
        sym = str(op.attrs.get("kernel", "")).rsplit("::", 1)[-1].lstrip("@")
        return next((k for k in kernels if k.name == sym), None)
    if op.kind is not Kind.OPAQUE or op.width or len(op.operands) < 2:
        return None
    same = [k for k in kernels if len(k.params) == len(op.operands) - 1]
    return same[0] if len(same) == 1 and len(kernels) == 1 else None


def _config_grid(gr: dataflow.Graph) -> list[int] | None:
    """The ops whose values the entry block stores into grid[0..2] of the one launch config."""
    found: dict[int, int] = {}
    bases: set[int] = set()
    for cs in config_stores(gr, gr.fn.blocks[0].ops):
        if cs.part == 0:
            found[cs.axis] = cs.value
            bases.update(cs.base)
    if len(bases) != 1 or sorted(found) != [0, 1, 2]:
        return None  # several launch configs (or none): which grid goes with which launch is not seen
    return [found[0], found[1], found[2]]


def _ceil_div(gr: dataflow.Graph, n: int, depth: int = 0) -> tuple[int | None, int, int | None] | None:
    """``(F, t, cap)`` when op n's value is at most ``ceil(F / t)`` for a field read F (None: no field)
    and at most ``cap`` (None: no constant): ``F``, ``F / t``, ``(F + t - 1) / t``, the DSL's
    ``q = F / t; F != q*t ? q + 1 : q``, Python's ``F // t`` (``... ? q - 1 : q``, at most q: a grid of
    ``(rows + 31) // 32``), and nests of these (a ceil of a ceil is one ceil by the
    product; a floor is at most the ceil); ``min(v, c)`` (the op, or the select the DSL writes) for a
    constant c is at most ``c`` (so the grid at most ``k·ceil(c / t)`` with the factors ``k`` and tiles
    ``t`` above it), then v is followed; a product ``k·v`` by a constant keeps only the caps below it."""
    tile, scale, cap = 1, 1, None
    for _ in range(_STEPS):
        op = gr.op(n)
        mc = _min_const(gr, n)
        if op.kind is Kind.CONST and isinstance(c := op.attrs.get("value"), int) and c >= 0:
            top = scale * -(-c // tile)  # a launch constant: grid y = 1 is ctaid.y = 0
            return None, 1, top if cap is None else min(cap, top)
        if mc is not None:  # the grid is at most scale * ceil(min(v, c) / tile)
            top = scale * -(-mc[1] // tile)
            cap, n = top if cap is None else min(cap, top), mc[0]
        elif op.kind in (Kind.MOV, Kind.SEXT, Kind.ZEXT, Kind.TRUNC) and len(gr.defs(n, 0)) == 1:
            n = gr.defs(n, 0)[0]
        elif op.kind is Kind.EXTRACT or op.kind is Kind.ARG:
            return (n if scale == 1 else None), tile, cap
        elif op.kind is Kind.MUL and tile == 1 and len(op.operands) == 2:
            k = [(s, c) for s in (0, 1) if (c := _const(gr, n, s)) is not None and c > 0]
            src = gr.defs(n, 1 - k[0][0]) if len(k) == 1 else []
            if len(src) != 1:  # a product of two capped sizes (a grid of tiles_m*tiles_n) is capped too
                return _capped(_min(cap, _product_cap(gr, n, scale, depth)))
            scale, n = scale * k[0][1], src[0]
        elif op.kind is Kind.SELECT and len(op.operands) == 3:
            a, b = (gr.defs(n, s) for s in (1, 2))
            if not (len(a) == 1 and len(b) == 1 and _step(gr, a[0]) == b[0] and gr.op(b[0]).kind is Kind.DIV):
                return _capped(cap)
            n = b[0]  # ceil: the quotient or one more; floor (``//``): the quotient or one less, at most it
        elif op.kind is Kind.DIV and len(op.operands) == 2:
            t = _const(gr, n, 1)
            src = gr.defs(n, 0)
            c = _const(gr, n, 0)
            if t is None and c is not None and c >= 0:  # a constant over a size (>= 1): at most the constant
                return _capped(_min(cap, scale * -(-c // tile)))
            if t is None or t <= 0 or len(src) != 1:
                return _capped(cap)
            tile *= t
            n = _rounded_up(gr, src[0], t) or src[0]
        else:
            return _capped(cap)
    return _capped(cap)


#: how deep products of capped sizes are followed
_NEST = 6


def _min(cap: int | None, top: int | None) -> int | None:
    return top if cap is None else cap if top is None else min(cap, top)


def _product_cap(gr: dataflow.Graph, n: int, scale: int, depth: int) -> int | None:
    """``scale * a * b`` at most, for op n = ``a * b`` of two values each capped (sizes, so not negative:
    a launch's grid and a tensor's extents are), None when either is not (or the products nest past
    :data:`_NEST`: the walk stays bounded on any input)."""
    caps = []
    for s in (0, 1):
        d = gr.defs(n, s)
        got = _ceil_div(gr, d[0], depth + 1) if len(d) == 1 and depth < _NEST else None
        if got is None or got[2] is None:
            return None
        caps.append(got[2])
    return scale * caps[0] * caps[1]


def _capped(cap: int | None) -> tuple[None, int, int] | None:
    return None if cap is None else (None, 1, cap)


def _min_const(gr: dataflow.Graph, n: int) -> tuple[int, int] | None:
    """(v, c) when op n is ``min(v, c)`` for a constant c: a MIN op, or ``select(u < w, u, w)``."""
    op = gr.op(n)
    if op.kind is Kind.MIN and len(op.operands) == 2:
        arms = [(gr.defs(n, s), _const(gr, n, s)) for s in (0, 1)]
    elif op.kind is Kind.SELECT and len(op.operands) == 3:
        cd = gr.defs(n, 0)
        c = gr.op(cd[0]) if len(cd) == 1 else None
        side = LESS.get(str(c.attrs.get("pred", ""))) if c is not None and c.kind is Kind.ICMP else None
        if c is None or side is None or len(c.operands) != 2:
            return None
        small, big = ((gr.defs(c.id, s), _const(gr, c.id, s)) for s in (side[0], 1 - side[0]))
        if [(gr.defs(n, s), _const(gr, n, s)) for s in (1, 2)] != [small, big]:
            return None  # the compare says small < big, and the select takes small when it holds: min
        arms = [small, big]
    else:
        return None
    for (dv, cv), (_, cc) in ((arms[0], arms[1]), (arms[1], arms[0])):
        if cc is not None and cc >= 0 and cv is None and len(dv) == 1:
            return dv[0], cc
    return None


def _rounded_up(gr: dataflow.Graph, n: int, t: int) -> int | None:
    """F of ``F + c`` with c <= t - 1, the numerator of a ceil-division by t (then at most ceil(F / t)):
    ``F + (t - 1)``, or ``F + t - 1`` as Python writes it on DSL integers (an add, then a sub)."""
    off, steps = 0, 0
    while steps < _STEPS:
        op = gr.op(n)
        if op.kind not in (Kind.ADD, Kind.SUB):
            break
        slots = (0, 1) if op.kind is Kind.ADD else (0,)  # c - x is no offset of x
        hit = next((s for s in slots if _const(gr, n, 1 - s) is not None and len(gr.defs(n, s)) == 1), None)
        if hit is None:
            break
        off += (_const(gr, n, 1 - hit) or 0) * (1 if op.kind is Kind.ADD else -1)
        n, steps = gr.defs(n, hit)[0], steps + 1
    return n if steps and off <= t - 1 else None


def _step(gr: dataflow.Graph, n: int) -> int | None:
    """x of ``x + 1`` or ``x - 1`` (a ceil's or a floor's fix-up of a quotient)."""
    op = gr.op(n)
    if op.kind is not Kind.ADD:
        return None
    for s in (0, 1):
        if _const(gr, n, 1 - s) in (1, -1) and len(gr.defs(n, s)) == 1:
            return gr.defs(n, s)[0]
    return None


def _const(gr: dataflow.Graph, n: int, slot: int) -> int | None:
    return gr.const_operand(n, slot)


def _host_field(gr: dataflow.Graph, n: int) -> tuple[int, tuple[int, ...]] | None:
    """(host parameter, path) of a field read: ``extractvalue %argK[path]``."""
    op = gr.op(n)
    d = gr.defs(n, 0)
    if op.kind is Kind.EXTRACT and len(d) == 1 and gr.op(d[0]).kind is Kind.ARG:
        return int(gr.op(d[0]).attrs.get("param", -1)), tuple(op.attrs.get("path", ()))
    if op.kind is Kind.ARG and not op.attrs.get("field"):
        return int(op.attrs.get("param", -1)), ()
    return None


def _kernel_field(
    gr: dataflow.Graph, kernel: Function, args: list[int | None], src: int
) -> tuple[int, tuple[int, ...]] | None:
    """Which kernel parameter field holds the host value ``src``: each leaf of each argument struct
    is followed through its insertvalue chain back to a host field read (or the host parameter)."""
    want = _host_field(gr, src)
    for j, p in enumerate(kernel.params):
        node = args[j] if j < len(args) else None
        if node is None:
            continue
        paths = [f.path for f in tensor_fields(j, p.shape)] or [()]
        for path in paths:
            leaf = _resolve(gr, node, path)
            if leaf is not None and (leaf[0] == src or (want is not None and leaf[1] == want)):
                return j, path
    return None


HostField = tuple[int, tuple[int, ...]]  # (host parameter, path)


def _resolve(gr: dataflow.Graph, n: int, path: tuple[int, ...]) -> tuple[int | None, HostField | None] | None:
    """The value at ``path`` of struct value n: (op id of a scalar inserted there, or None; the host
    field it is, or None).  Walks the insertvalue chain, never deeper than :data:`_STEPS`."""
    for _ in range(_STEPS):
        op = gr.op(n)
        if op.kind is Kind.INSERT and len(op.operands) == 2:
            q = tuple(op.attrs.get("path", ()))
            slot = 0 if path[: len(q)] == q else 1
            nxt = gr.defs(n, slot)
            if len(nxt) != 1:
                return None
            n, path = nxt[0], (path[len(q) :] if slot == 0 else path)
            continue
        if op.kind is Kind.ARG and not op.attrs.get("field"):
            return (None, (int(op.attrs.get("param", -1)), path)) if path else (n, _host_field(gr, n))
        if not path:
            return n, _host_field(gr, n)
        return None
    return None
