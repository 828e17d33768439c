"""What a capture records about its kernels, read off the DSL's own module before and after the first
half of the pipeline: kernel signatures (names, Python lines, tensor layouts), the host-side
``@cute.jit`` functions, the launch facts the lowered kernels carry, and the DSL's versions.

These functions take the DSL's ``ir.Module`` object (duck-typed, so this module never imports the
DSL) and return plain data that goes into meta.json as it is.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Any

from irscan.capturing import releases
from irscan.frontend.text import split_top


@dataclass
class KernelInfo:
    """What the capture knows about one kernel before any parsing of ours."""

    name: str
    file: str | None = None
    line: int | None = None
    #: one entry per kernel argument: {"index", "type"} and for tensors {"dtype", "space", "layout",
    #: "modes": [{"shape": "static"|"dynamic", "stride": ..., "shape_width", "stride_width"}]}; a tensor
    #: the host passes on as ``cute.compile`` received it also has "origin" and "use_32bit_stride", and
    #: its dynamic shape modes a "sym"; a view of one has "view_of" (capturing/origins.py)
    args: list[dict[str, Any]] = field(default_factory=list)
    launch: dict[str, Any] = field(default_factory=dict)


_MEMREF_RE = re.compile(r'!cute\.memref<([^,]+),\s*([a-z_]+)(?:<[^>]*>)?,\s*(?:align<\d+>,\s*)?"([^"]*)"')


def loc_file_line(loc_text: str) -> tuple[str | None, int | None]:
    """The Python file and line of an op's location (``str(op.location)``), read by the MLIR front
    end's one location parser, so a kernel's line in meta.json is the line a scan would give it."""
    from irscan.frontend.mlir.locations import file_line_col  # the front end: only once a kernel compiles

    loc = file_line_col(loc_text)
    return (loc[0], loc[1]) if loc else (None, None)


def _leaves(s: str) -> list[str]:
    s = s.strip()
    if s.startswith("(") and s.endswith(")"):
        return [leaf for part in split_top(s[1:-1]) for leaf in _leaves(part)]
    return [s]


def _mode(entry: str) -> dict[str, Any]:
    """One leaf of a CuTe layout string: '100000' (static), '?' (dynamic i32), '?{i64}' (dynamic i64)."""
    if entry.startswith("?"):
        width = 64 if "i64" in entry else 32
        return {"kind": "dynamic", "width": width, "text": entry}
    return {"kind": "static", "value": int(entry) if entry.lstrip("-").isdigit() else entry, "text": entry}


_COORD_RE = re.compile(r'!cute\.coord_tensor<"[^"]*",\s*"([^"]*)"')


def describe_tensor_type(type_text: str) -> dict[str, Any] | None:
    """Layout facts from the DSL's own tensor type, e.g. ``!cute.memref<f32, gmem, "(?,128):(?{i64},1)">``
    (or a coordinate tensor's, ``!cute.coord_tensor<"(0,0)", "(?,?):(1@0,1@1)">``)."""
    m = _MEMREF_RE.search(type_text)
    c = _COORD_RE.search(type_text) if not m else None
    if not m and not c:
        return None
    if m:
        dtype, space, layout = m.group(1).strip(), m.group(2), m.group(3)
    else:
        assert c is not None
        dtype, space, layout = "coord", "none", c.group(1)
    shape, _, stride = layout.partition(":")
    shapes, strides = _leaves(shape), _leaves(stride) if stride else []
    modes = []
    for i, sh in enumerate(shapes):
        st = strides[i] if i < len(strides) else None
        modes.append({"shape": _mode(sh), "stride": _mode(st) if st is not None else None})
    return {"dtype": dtype, "space": space, "layout": layout, "modes": modes}


def _attr_text(op: Any, name: str) -> str | None:
    try:
        return str(op.attributes[name])
    except (KeyError, IndexError, ValueError):
        return None


def _ints(text: str | None, key: str) -> list[int] | None:
    if not text:
        return None
    m = re.search(rf"{key}\s*=\s*array<i\d+:\s*([-0-9, ]+)>", text)
    return [int(x) for x in m.group(1).split(",")] if m else None


def kernel_signatures(module: Any) -> dict[str, KernelInfo]:
    """Kernel names, Python lines and tensor layouts from the CuTe-level module, before any pass runs."""
    infos: dict[str, KernelInfo] = {}
    for top in module.body.operations:
        if top.operation.name != "gpu.module":
            continue
        for f in top.regions[0].blocks[0].operations:
            name = _attr_text(f, "sym_name")
            if name is None:
                continue
            name = name.strip('"')
            file, line = loc_file_line(str(f.location))
            info = KernelInfo(name=name, file=file, line=line, args=signature_args(f))
            infos[name] = info
    try:
        from irscan.capturing.origins import host_tensor_facts

        host_tensor_facts(module, infos)
    except Exception:  # noqa: BLE001 (facts of our own: a DSL that changed shape loses them, not the capture)
        pass
    return infos


def signature_args(f: Any) -> list[dict[str, Any]]:
    """One entry per argument of function op ``f``: {"index", "type"} and, for tensors, their layout."""
    ftype = _attr_text(f, "function_type") or ""
    inputs = ftype[1 : ftype.find(") ->")] if ftype.startswith("(") else ""
    args = []
    for i, t in enumerate(split_top(inputs)):
        arg: dict[str, Any] = {"index": i, "type": t}
        tensor = describe_tensor_type(t)
        if tensor:
            arg.update(tensor)
        args.append(arg)
    return args


def host_signatures(module: Any) -> dict[str, list[dict[str, Any]]]:
    """The host-side functions' arguments with their layouts, by function name (before any pass runs:
    lowered, a tensor argument is a struct of its dynamic modes only, which no longer says which)."""
    out = {}
    for top in module.body.operations:
        name = _attr_text(top, "sym_name")
        if top.operation.name != "gpu.module" and name is not None:
            out[name.strip('"')] = signature_args(top)
    return out


def jit_functions(module: Any) -> list[dict[str, Any]]:
    """The host-side ``@cute.jit`` functions of the module (outside ``gpu.module``), with their lines."""
    out = []
    for top in module.body.operations:
        name = _attr_text(top, "sym_name")
        if top.operation.name == "gpu.module" or name is None:
            continue
        file, line = loc_file_line(str(top.location))
        out.append({"name": name.strip('"'), "file": file, "line": line})
    return out


def launch_facts(module: Any, infos: dict[str, KernelInfo]) -> None:
    """Launch facts as the lowered kernels carry them (reqntid, exact block/grid dims)."""
    for top in module.body.operations:
        if top.operation.name != "gpu.module":
            continue
        for f in top.regions[0].blocks[0].operations:
            name = (_attr_text(f, "sym_name") or "").strip('"')
            if name not in infos:
                infos[name] = KernelInfo(name=name, file=loc_file_line(str(f.location))[0])
            if _attr_text(f, "gpu.kernel") is None and _attr_text(f, "nvvm.kernel") is None:
                continue
            facts = _attr_text(f, "cutlass_launch_facts")
            launch = {
                "reqntid": _ints(_attr_text(f, "nvvm.reqntid") and f"x = {_attr_text(f, 'nvvm.reqntid')}", "x"),
                "exact_block_dim": _ints(facts, "exact_block_dim"),
                "exact_grid_dim": _ints(facts, "exact_grid_dim"),
                "cluster_launch": "cluster_launch = true" in (facts or ""),
            }
            infos[name].launch = {k: v for k, v in launch.items() if v is not None}


def dsl_environment() -> dict[str, Any]:
    """The Python and DSL versions a capture was made with (a capture is only as good as its DSL)."""
    from importlib import metadata

    env: dict[str, Any] = {"python": sys.version.split()[0]}
    for dist in ("nvidia-cutlass-dsl", "nvidia-cutlass-dsl-libs-cu12", "nvidia-cutlass-dsl-libs-cu13"):
        try:
            env[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    env["dsl_version"] = env.get("nvidia-cutlass-dsl")
    env["dsl_tested"] = releases.is_tested(env["dsl_version"])  # among the releases the matrix covers
    env["wheel_flavour"] = "cu13" if "nvidia-cutlass-dsl-libs-cu13" in env else "cu12"
    return env
