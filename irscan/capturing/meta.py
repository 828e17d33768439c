"""What a capture records about its kernels, read off the DSL's own module before and after the first
half of the pipeline: kernel signatures (names, Python lines, tensor layouts), the host-side
``@cute.jit`` functions, the launch facts the lowered kernels carry, and the DSL's versions.

These functions take the DSL's ``ir.Module`` object (duck-typed, so this module never imports the
DSL) and return plain data that goes into meta.json as it is.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator
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
    #: its dynamic shape modes a "sym" (:func:`host_tensor_facts`)
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
        host_tensor_facts(module, infos)
    except Exception:  # noqa: BLE001 (facts of our own: a DSL that changed shape loses them, not the capture)
        pass
    return infos


# ----------------------------------------------------------------------------------------- where tensors came from
# The MLIR type of a tensor does not say how the user made it, and two facts the reporting rule uses
# depend on that: ``from_dlpack(t, use_32bit_stride=True)`` makes the DSL's runtime refuse, at each
# call, a tensor spanning more than INT32_MAX elements (a fake tensor with i32 strides is never checked),
# and fake tensors built with one ``cute.sym_int()`` share that extent.  So the Python objects are
# watched where the DSL binds them to the host function's block arguments (``__new_from_mlir_values__``),
# and a kernel argument the host passes on unchanged (a launch operand that is that block argument)
# gets their facts.  A view the host derives (a slice, ``domain_offset``) gets none: its span is not
# the one the DSL checked.

_ORIGINS = {"_Tensor": "dlpack", "_FakeTensor": "fake"}
_bound = threading.local()  # .pending: [(block argument, Python tensor)] of the host function being traced


def watch_host_tensors() -> None:
    """Wrap the DSL's runtime tensor classes so that each host block argument's Python tensor is known,
    once ``cutlass.cute.runtime`` is imported (the hook goes in while ``import cutlass`` is still under
    way, before it is).  Idempotent; recording never fails the user's compile."""
    from irscan.capturing.env import after_import

    after_import("cutlass.cute.runtime", _watch)


def _watch() -> None:
    try:
        _wrap_dsl()
    except Exception as exc:  # noqa: BLE001 (a DSL that changed shape loses these facts, nothing else)
        print(f"irscan: tensor origins not recorded ({type(exc).__name__}: {exc})", file=sys.stderr)


def _wrap_dsl() -> None:
    from cutlass.base_dsl.dsl import BaseDSL
    from cutlass.cute import runtime

    for cls in (getattr(runtime, n, None) for n in _ORIGINS):
        new = getattr(cls, "__new_from_mlir_values__", None)
        if new is None or getattr(new, "_irscan", False):
            continue

        def bind(self: Any, values: list[Any], _new: Any = new) -> Any:
            try:
                _bound.__dict__.setdefault("pending", []).append((_ir_value(values[0]), self))
            except Exception:  # noqa: BLE001
                pass
            return _new(self, values)

        bind._irscan = True  # type: ignore[attr-defined]
        cls.__new_from_mlir_values__ = bind  # type: ignore[union-attr]
    types = BaseDSL.generate_mlir_function_types
    if not getattr(types, "_irscan", False):

        def start(self: Any, *args: Any, **kwargs: Any) -> Any:
            _bound.pending = []  # a new host function: the last one's values are of another module
            return types(self, *args, **kwargs)

        start._irscan = True  # type: ignore[attr-defined]
        BaseDSL.generate_mlir_function_types = start  # type: ignore[method-assign]


def _ir_value(v: Any) -> Any:
    """The ``ir.Value`` under the DSL's wrappers (``CoreTensor``, ``cute.tensor._Tensor``: ``.value``)."""
    from cutlass._mlir import ir

    for _ in range(4):
        if isinstance(v, ir.Value):  # type: ignore[attr-defined]
            return v
        v = getattr(v, "value", None)
    return None


def _same(a: Any, b: Any) -> bool:
    from cutlass._mlir import ir  # the DSL's value classes overload ==; the plain Value compares handles

    return a is not None and b is not None and bool(ir.Value.__eq__(a, b))  # type: ignore[attr-defined]


def tensor_facts(obj: Any, syms: dict[int, str]) -> dict[str, Any]:
    """What a Python tensor says that its MLIR type does not: where it came from, whether its strides
    were asked for in 32 bits, and per shape mode the id of the ``SymInt`` it shares (None if static
    or not a symbol); ``syms`` numbers the symbols of one compile (``s0``, ``s1``, ...)."""
    origin = _ORIGINS.get(type(obj).__name__, "other")
    shape = getattr(getattr(obj, "_typed_tensor", None), "shape", None) if origin == "fake" else None
    modes: list[str | None] = []
    for e in shape if isinstance(shape, tuple) else ():
        modes.append(syms.setdefault(id(e), f"s{len(syms)}") if type(e).__name__ == "SymInt" else None)
    return {"origin": origin, "use_32bit_stride": bool(getattr(obj, "_use_32bit_stride", False)), "syms": modes}


def host_tensor_facts(module: Any, infos: dict[str, KernelInfo]) -> None:
    """Give each kernel argument that is a host block argument bound to a Python tensor that tensor's
    facts (:func:`tensor_facts`), read off the host functions' ``cuda.launch_ex`` operands."""
    pending = getattr(_bound, "pending", [])
    _bound.pending = []
    syms: dict[int, str] = {}
    for op in _launches(module) if pending else ():
        info = infos.get((_attr_text(op, "callee") or "").rsplit("::", 1)[-1].strip('@" '))
        operands = list(op.operands)[1:]  # the launch config first, then the kernel's arguments
        if info is None or len(operands) != len(info.args):
            continue
        for arg, operand in zip(info.args, operands, strict=True):
            value = _ir_value(operand)
            obj = next((o for v, o in pending if _same(v, value)), None)
            if obj is None or "modes" not in arg:
                continue  # not a tensor, or one the host made or changed
            facts = tensor_facts(obj, syms)
            arg["origin"], arg["use_32bit_stride"] = facts["origin"], facts["use_32bit_stride"]
            if len(facts["syms"]) == len(arg["modes"]):
                for md, sym in zip(arg["modes"], facts["syms"], strict=True):
                    if sym is not None and md["shape"].get("kind") == "dynamic":
                        md["shape"]["sym"] = sym


def _launches(module: Any) -> Iterator[Any]:
    """The ``cuda.launch_ex`` ops of the module's host functions (outside ``gpu.module``)."""
    for top in module.body.operations:
        if top.operation.name != "gpu.module":
            for region in top.regions:
                for block in region.blocks:
                    yield from (op for op in block.operations if op.operation.name == "cuda.launch_ex")


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
