"""Function headers and module finishing, shared by both MLIR parse paths: an ``llvm.func`` header
as an :class:`irscan.ir.Function`, and what every finished :class:`irscan.ir.Module` records."""

from __future__ import annotations

from typing import Any

from irscan import ir
from irscan.frontend.mlir.records import AttrText, Body, Unit
from irscan.frontend.mlir.types import Ty, shape_of


def _leaf(v: Any) -> Any:
    if isinstance(v, Unit):
        return True
    if isinstance(v, Ty):
        return v.text
    if isinstance(v, AttrText):
        return str(v)
    return v


def _plain(v: Any) -> Any:
    """An attribute value with the parse records replaced by plain values (dicts and lists copied
    on an explicit stack: attribute nesting is the input's)."""
    if not isinstance(v, (dict, list)):
        return _leaf(v)
    out: dict[Any, Any] | list[Any] = {} if isinstance(v, dict) else []
    todo: list[tuple[Any, Any]] = [(v, out)]
    while todo:
        src, dst = todo.pop()
        for k, x in src.items() if isinstance(src, dict) else enumerate(src):
            y: Any = {} if isinstance(x, dict) else [] if isinstance(x, list) else _leaf(x)
            if isinstance(x, (dict, list)):
                todo.append((x, y))
            if isinstance(dst, dict):
                dst[k] = y
            else:
                dst.append(y)
    return out


def function_from_header(body: Body, line: int, gpu_module: bool, has_body: bool | None = None) -> ir.Function:
    """An :class:`irscan.ir.Function` (no blocks yet) from a parsed ``llvm.func`` header."""
    info = body.info
    attrs = _plain(info["attrs"])
    fattrs: dict[str, Any] = {}
    kernel = "gpu.kernel" in attrs or "nvvm.kernel" in attrs
    for key, out in (("nvvm.reqntid", "reqntid"), ("nvvm.maxntid", "maxntid"), ("nvvm.cluster_dim", "cluster_dim")):
        if isinstance(attrs.get(key), tuple):
            fattrs[out] = attrs[key]
    if "nvvm.minctasm" in attrs:
        fattrs["minctasm"] = attrs["nvvm.minctasm"]
    facts = attrs.get("cutlass_launch_facts")
    if isinstance(facts, dict):
        fattrs["launch_facts"] = facts
        for key in ("exact_block_dim", "exact_grid_dim", "exact_cluster_dim"):
            if isinstance(facts.get(key), tuple):
                fattrs[key] = facts[key]
    if gpu_module:
        fattrs["gpu_module"] = True
    if info.get("variadic"):
        fattrs["variadic"] = True
    if not (body.regions if has_body is None else has_body):
        fattrs["declaration"] = True
    if info.get("result") is not None:
        fattrs["result_type"] = info["result"].text
    fattrs["attributes"] = attrs
    params = [ir.Param(name=n, type=t.text, index=i, shape=shape_of(t)) for i, (n, t) in enumerate(info["params"])]
    return ir.Function(name=info["name"], kernel=kernel, params=params, attrs=fattrs, line=line)


def finish_module(m: ir.Module, opaque: Any, structure: Any, path: str) -> ir.Module:
    """What both parse paths record on the module they built (``path``: "fast" or "full")."""
    m.opaque = dict(opaque)
    m.attrs["structure"] = structure
    m.attrs["loc_granularity"] = loc_granularity(m.functions)
    m.attrs["path"] = path
    return m


def loc_granularity(functions: list[ir.Function]) -> str:
    """ "line" when some kernel's ops point at two or more source lines (line info on), "function"
    when kernel ops carry at most the kernel's own line, "none" when they carry no file location."""
    seen_any = False
    for fn in functions:
        if not fn.kernel:
            continue
        lines: set[tuple[str, int]] = set()
        for b in fn.blocks:
            for op in b.ops:
                if op.loc is not None:
                    lines.add((op.loc.file, op.loc.line))
                    if len(lines) >= 2:
                        return "line"
        seen_any = seen_any or bool(lines) or fn.loc is not None
    return "function" if seen_any else "none"
