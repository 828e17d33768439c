"""Kernel parameter fields the host function sets from one value, as facts about the kernel.

The host function of the module builds each kernel argument struct with ``llvm.insertvalue`` from
its own values (irscan/analysis/hostgrid.py follows those chains for the grid).  Where two fields of
the kernel's parameters receive the same host value at the launch, they are equal in the kernel:
``kernel(page_table_view, ..., mpg)`` with the view's layout ``(16, mpg):(mpg, 1)`` passes ``mpg`` as
the view's row stride and as a scalar, and the kernel's ``t[e // mpg, e % mpg]`` is then ``e``
(irscan/analysis/floordiv.py, ``recombine``).  :func:`module_aliases` maps each such field to one
representative, which :mod:`irscan.analysis.inputs` reads both as.  A kernel launched from several
places keeps only the equalities every launch makes.  PTX has no host code: the MLIR of the same
capture hands them over through meta.json's dict (``META_KEY``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from irscan.analysis import dataflow
from irscan.analysis.bounds import I32_MAX
from irscan.analysis.hostgrid import _ceil_div, _host_field, _launch_grid, _launched, _resolve, launch_operands
from irscan.analysis.hostlimits import CASTS, grid_limited, product_limit
from irscan.analysis.params import tensor_fields
from irscan.ir import Kind, Module

#: where the MLIR scan leaves the aliases for the PTX scan of the same capture (in the meta dict)
META_KEY = "_irscan_host_aliases"
#: likewise for the fields every launch sets to one constant
CONSTANTS_KEY = "_irscan_host_constants"
#: likewise for the extents several parameters share
PEERS_KEY = "_irscan_host_peers"
#: likewise for the fields every launch sets to a quotient (or a clamp) of a 32-bit host value
CAPS_KEY = "_irscan_host_caps"
#: likewise for the extents every launch sets to the host's own arithmetic (a product, a sum)
COMPUTED_KEY = "_irscan_host_computed"
#: the ops a computed extent is made of (the casts around them are looked through)
_ARITH = frozenset({Kind.MUL, Kind.ADD, Kind.SUB, Kind.SHL, Kind.MAD})
FieldKey = tuple[int, tuple[int, ...]]  # (kernel parameter, struct path; () for a scalar)
V = TypeVar("V")
#: what one walk finds at one launch: (host graph, the kernel's params, the arguments, the grid)
PerLaunch = Callable[[dataflow.Graph, list[Any], list[int | None], dict[int, int]], dict[FieldKey, V]]


def module_aliases(module: Module, meta: dict[str, Any] | None) -> dict[str, dict[FieldKey, FieldKey]]:
    """Kernel name -> {field: its representative} for the fields its launches set from one host value."""
    return _shared(module, meta, META_KEY, _launch_aliases, lambda b: [b[0], list(b[1])], _key)


def module_constants(module: Module, meta: dict[str, Any] | None) -> dict[str, dict[FieldKey, int]]:
    """Kernel name -> {field: value} for the parameter fields every launch of it in the module sets to
    one integer constant (flashinfer's KDA prefill passes ``head_base = Int32(0)`` at its only launch:
    in the kernel, ``16384*(head_base + ctaid.y / 2)`` is then ``16384*(ctaid.y / 2)``).  PTX: through
    meta.json's dict, as the aliases."""
    return _shared(module, meta, CONSTANTS_KEY, _launch_constants, int, int)


def module_peers(
    module: Module, meta: dict[str, Any] | None
) -> dict[str, dict[FieldKey, tuple[tuple[FieldKey, int], ...]]]:
    """Kernel name -> {extent field: ((field of another parameter, t), ...)} where every launch sets both
    from one host value F, the other to F itself and this one to at most ``ceil(F / t)``: the other is
    then at least ``t*(this - 1) + 1``.  Tensors sharing an extent (flashinfer's KDA decode passes the
    head count as ``dt_bias``'s extent and as ``A_log``'s), or a tile count and its tokens, which rule
    (c) weighs as meta.json's ``sym_peers`` (irscan/checks/shared_extents.py).  PTX: through meta.json's
    dict, as the aliases."""
    return _shared(module, meta, PEERS_KEY, _launch_peers, lambda ms: [[m[0], list(m[1]), t] for m, t in ms],
                   lambda ms: tuple((_key(m), int(m[2])) for m in ms))  # fmt: skip


def module_caps(module: Module, meta: dict[str, Any] | None) -> dict[str, dict[FieldKey, int]]:
    """Kernel name -> {field: the most it holds} for the fields every launch sets to a quotient of a
    32-bit host value by a constant, or a clamp to one (flashinfer's SDSA scorer hands the kernel its
    query as a TMA tensor of ``query.shape[0] // 2`` jobs: at most 2^30 - 1, so ``2*job + r`` stays
    below 2^31).  PTX: through meta.json's dict, as the aliases."""
    return _shared(module, meta, CAPS_KEY, _launch_caps, int, int)


def module_computed(module: Module, meta: dict[str, Any] | None) -> dict[str, dict[FieldKey, int]]:
    """Kernel name -> {extent field: 1} for the extents every launch sets to arithmetic of the host's
    own (b12x's X4T decode wraps its raw output pointer as ``make_tensor(ptr, (num_experts * rows *
    columns,))`` in Int32): such an extent is no allocation the caller made, and its ideal value is the
    host arithmetic's, which may pass 2^31 where the field wraps (irscan/analysis/inputs.py gives it
    the 64-bit range, so rule (a) never rests on it).  PTX: through meta.json's dict, as the aliases."""
    return _shared(module, meta, COMPUTED_KEY, _launch_computed, int, int)


def _shared(
    module: Module,
    meta: dict[str, Any] | None,
    key: str,
    per_launch: PerLaunch[V],
    encode: Callable[[V], Any],
    decode: Callable[[Any], V],
) -> dict[str, dict[FieldKey, V]]:
    """What ``per_launch`` finds at every launch (MLIR), left in the meta dict under ``key`` for the
    PTX scan of the same capture, which has no host code and reads it back."""
    if module.ir != "mlir":
        stored = meta.get(key) if isinstance(meta, dict) else None
        try:  # written by the MLIR scan of this run
            return {str(k): {_key(a): decode(b) for a, b in v} for k, v in (stored or {}).items()}
        except (TypeError, ValueError, IndexError, AttributeError):
            return {}
    out = _every_launch(module, per_launch)
    if isinstance(meta, dict):
        meta[key] = {k: [[[a[0], list(a[1])], encode(b)] for a, b in v.items()] for k, v in out.items()}
    return out


def _every_launch(module: Module, per_launch: PerLaunch[V]) -> dict[str, dict[FieldKey, V]]:
    """Kernel name -> what ``per_launch`` finds at every launch of it in the module's host functions
    (the entries all its launches agree on; a kernel with none is left out)."""
    seen: dict[str, dict[FieldKey, V]] = {}
    for name, gr, params, args, grid in _launch_sites(module):
        found = per_launch(gr, params, args, grid)
        old = seen.get(name)
        seen[name] = found if old is None else {k: v for k, v in found.items() if old.get(k) == v}
    return {k: v for k, v in seen.items() if v}


#: kernel, host graph, its params, the arguments, the grid (axis -> the op stored there)
Site = tuple[str, dataflow.Graph, list[Any], list[int | None], dict[int, int]]
_SITES: tuple[Module, list[Site]] | None = None


def _launch_sites(module: Module) -> list[Site]:
    """Every launch in the module's host functions, their graphs built once for the five walks above
    (the last module's: the scan asks for them module by module)."""
    global _SITES
    if _SITES is not None and _SITES[0] is module:
        return _SITES[1]
    kernels = module.kernels()
    sites: list[Site] = []
    for fn in module.functions:
        if fn.kernel or not fn.blocks or fn.attrs.get("gpu_module"):
            continue
        gr = dataflow.build(module, fn)
        launches = [(op, ker) for op in fn.ops() if (ker := _launched(op, kernels)) is not None]
        for op, ker in launches:
            ops = launch_operands(gr, op)
            grid = _launch_grid(gr, ops[0] if ops else None, len(launches) == 1)
            sites.append((ker.name, gr, ker.params, ops[1:], grid))
    _SITES = (module, sites)
    return sites


def _launch_constants(
    gr: dataflow.Graph, params: list[Any], args: list[int | None], grid: dict[int, int]
) -> dict[FieldKey, int]:
    """The fields of one launch's arguments that the host sets to an integer constant."""
    out: dict[FieldKey, int] = {}
    for key, leaf in _leaves(gr, params, args, ("shape", "stride")):
        op = gr.op(leaf[0]) if leaf[0] is not None else None
        value = op.attrs.get("value") if op is not None and op.kind is Kind.CONST else None
        if isinstance(value, int) and not isinstance(value, bool):
            out[key] = value
    return out


def kernel_caps(module: Module, meta: dict[str, Any] | None, kernel: str, tops: dict[int, int]) -> dict[FieldKey, int]:
    """:func:`module_caps` of one kernel whose own accesses allow at most ``tops[axis]`` CTAs along an
    axis (a sum over heads that reads a static ``(16,)`` array at ``ctaid.y`` is launched with at most
    16 along y; checks/other_accesses.py, ``grid_caps``): the host values stored there are that small
    too.  MLIR; the PTX scan of the same capture reads what this leaves in meta.json's dict."""
    if module.ir != "mlir":
        return module_caps(module, meta).get(kernel, {})
    found = _every_launch(module, lambda gr, p, a, g: _launch_caps(gr, p, a, g, grid_tops=tops)).get(kernel, {})
    if isinstance(meta, dict) and isinstance(meta.get(CAPS_KEY), dict):
        meta[CAPS_KEY][kernel] = [[[a[0], list(a[1])], b] for a, b in found.items()]
    return found


def _launch_caps(
    gr: dataflow.Graph,
    params: list[Any],
    args: list[int | None],
    grid: dict[int, int],
    grid_tops: dict[int, int] | None = None,
) -> dict[FieldKey, int]:
    """The fields of one launch's arguments (tensor extents and strides, and scalars: FA-style kernels
    take a tile count ``ceil(seqlen / 128)`` as an Int32) the host computes as ``F // t`` or ``ceil(F /
    t)`` (t > 1) of a 32-bit ``F``, ``min(v, c)``, ``c // v``, or products of these: at most ``ceil((2^31 -
    1) / t)`` (or c) whatever F is (CUTLASS's elementwise_apply tiles with a stride ``256*ceil(64 / m)``)."""
    out: dict[FieldKey, int] = {}
    limited = grid_limited(gr, grid, grid_tops)  # what the launch's grid y and z hold: at most 65,535 (hostlimits.py)
    for key, leaf in _leaves(gr, params, args, ("shape", "stride")):
        tops = [limited[("host", leaf[1])]] if ("host", leaf[1]) in limited else []
        if leaf[0] is not None and limited and (top := product_limit(gr, leaf[0], limited)) is not None:
            tops.append(top)
        ct = _ceil_div(gr, leaf[0]) if leaf[0] is not None else None
        if ct is not None:
            src, tile, cap = ct
            tops += [c for c in (cap,) if c is not None]
            if src is not None and tile > 1 and gr.op(src).width == 32:
                tops.append(-(-I32_MAX // tile))
        if tops:
            out[key] = min(tops)
    return out


def _launch_computed(
    gr: dataflow.Graph, params: list[Any], args: list[int | None], grid: dict[int, int]
) -> dict[FieldKey, int]:
    """The extent fields of one launch the host computes by arithmetic on non-constant values."""
    out: dict[FieldKey, int] = {}
    for key, leaf in _leaves(gr, params, args, ("shape",), scalars=False):
        n = leaf[0] if leaf[1] is None else None
        for _ in range(8):  # through the casts around the value
            if n is None or gr.op(n).kind not in CASTS or len(gr.defs(n, 0)) != 1:
                break
            n = gr.defs(n, 0)[0]
        op = gr.op(n) if n is not None else None
        slots = range(len(op.operands)) if op is not None and op.kind in _ARITH else ()
        if n is not None and any(gr.op(d).kind is not Kind.CONST for s in slots for d in gr.defs(n, s)):
            out[key] = 1
    return out


def _leaves(
    gr: dataflow.Graph, params: list[Any], args: list[int | None], parts: tuple[str, ...], scalars: bool = True
) -> Iterator[tuple[FieldKey, tuple[int | None, Any]]]:
    """Each field of one launch's arguments (the tensors' fields of these ``parts``, and the integer
    parameters when ``scalars``) with what the host puts there (hostgrid._resolve)."""
    for j, p in enumerate(params):
        node = args[j] if j < len(args) else None
        if node is None or (isinstance(p.shape, int) and not scalars):
            continue
        paths = [()] if isinstance(p.shape, int) else [f.path for f in tensor_fields(j, p.shape) if f.part in parts]
        for path in paths:
            leaf = _resolve(gr, node, path)
            if leaf is not None:
                yield (j, path), leaf


def _launch_aliases(
    gr: dataflow.Graph, params: list[Any], args: list[int | None], grid: dict[int, int]
) -> dict[FieldKey, FieldKey]:
    """The fields of one launch's arguments that hold the same host value (an op, or a host field
    read), each mapped to the group's representative (the tensor's field, the lowest; a scalar reads
    as it).  Fields of two tensors are left apart: what one tensor's extent weighs is not the other's."""
    out: dict[FieldKey, FieldKey] = {}
    for members in _groups(gr, params, args, ("shape", "stride")):
        tensors = {j for j, path in members if path}
        if len(members) > 1 and len(tensors) <= 1:  # one tensor's fields and scalars; tensors sharing an
            rep = min(members, key=lambda m: (m[1] == (), m))  # extent are sym_peers' (checks/shared_extents.py)
            out.update({m: rep for m in members})
    return out


def _launch_peers(
    gr: dataflow.Graph, params: list[Any], args: list[int | None], grid: dict[int, int]
) -> dict[FieldKey, tuple[tuple[FieldKey, int], ...]]:
    """The extent fields (and scalars) of one launch that come from one host value F, across several
    parameters: each mapped to the others that hold F itself, with its own tile t (it is at most
    ``ceil(F / t)``, so F >= t*(it - 1) + 1: cuDNN's QSA schedules ``ceil(T / 128)`` tiles of a ``T``-token
    query).  Strides stay out (a stride equal to an extent is a layout's, not a size)."""
    members: dict[Any, list[tuple[FieldKey, int, bool]]] = {}
    for fk, leaf in _leaves(gr, params, args, ("shape",)):
        src, tile, exact = leaf[0], 1, True
        if leaf[1] is None and src is not None and (ct := _ceil_div(gr, src)) is not None and ct[0] is not None:
            src, tile, exact = ct[0], ct[1], ct[1] == 1 and ct[2] is None
        host = leaf[1] if leaf[1] is not None else _host_field(gr, src) if src is not None else None
        key = ("host", host) if host is not None else ("op", src) if src is not None else None
        if key is not None:
            members.setdefault(key, []).append((fk, tile, exact))
    out: dict[FieldKey, tuple[tuple[FieldKey, int], ...]] = {}
    for group in members.values():
        for m, tile, _ in group:
            others = tuple((o, tile) for o, _, exact in group if exact and o[0] != m[0])
            if others:
                out[m] = others
    return out


def _groups(
    gr: dataflow.Graph, params: list[Any], args: list[int | None], parts: tuple[str, ...]
) -> list[list[FieldKey]]:
    """The parameter fields (of these ``parts``, and scalars) of one launch grouped by the host value
    each is set from: a host field read is the same value wherever it is read, else the one op."""
    groups: dict[Any, list[FieldKey]] = {}
    for key, leaf in _leaves(gr, params, args, parts):
        src = ("host", leaf[1]) if leaf[1] is not None else ("op", leaf[0])
        if src[1] is not None:
            groups.setdefault(src, []).append(key)
    return list(groups.values())


def _key(x: Any) -> FieldKey:
    return int(x[0]), tuple(int(p) for p in x[1])
