"""Name kernel parameters and their fields the way a user thinks of them: ``arg1.stride[0]``.

A CuTe tensor parameter lowers to ``!llvm.struct<(ptr<1>, struct<(SHAPE, STRIDE)>)>`` where SHAPE and
STRIDE hold the *dynamic* modes only: ``struct<()>`` when none, a bare ``i32``/``i64`` when one, a
``struct<(i32, i64, ...)>`` when several.  MLIR declares that struct as the parameter's type; PTX
passes it as a byte array, so there the capture's meta.json (``args[i].modes``) rebuilds it.  Either
way each field gets its byte offset in the parameter, the :class:`irscan.ir.ParamField` a field read
carries, and the layout mode meta.json records, so both IRs name the same input the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from irscan.ir import PTR, Param, ParamField, Shape


@dataclass(frozen=True)
class Field:
    path: tuple[int, ...]  # where the struct type nests it (the path an MLIR extractvalue names)
    offset: int  # bytes from the start of the parameter
    width: int  # bits; 64 for the pointer
    name: str
    part: str = ""  # "shape" or "stride" ("" for the pointer)
    mode: int = -1  # the layout mode it is the extent or stride of


def _scalars(shape: Shape) -> list[tuple[tuple[int, ...], int]]:
    """(relative path, width) of every i32/i64 leaf of a shape/stride part, in order (no recursion:
    the nesting is the input's)."""
    out: list[tuple[tuple[int, ...], int]] = []
    stack: list[tuple[tuple[int, ...], Shape]] = [((), shape)]
    while stack:
        path, s = stack.pop()
        if s in (32, 64) and isinstance(s, int):
            out.append((path, s))
        elif isinstance(s, tuple):
            stack.extend(((*path, k), it) for k, it in reversed(list(enumerate(s))))
    return out


def _dynamic_modes(meta_arg: dict[str, Any] | None, part: str) -> list[int]:
    if not meta_arg or not isinstance(meta_arg.get("modes"), list):
        return []
    return [i for i, m in enumerate(meta_arg["modes"]) if _mode_part(m, part).get("kind") == "dynamic"]


def _mode_part(mode: Any, part: str) -> dict[str, Any]:
    p = mode.get(part) if isinstance(mode, dict) else None
    return p if isinstance(p, dict) else {}


def tensor_fields(index: int, shape: Shape, meta_arg: dict[str, Any] | None = None) -> list[Field]:
    """The fields of tensor parameter ``index`` from its declared struct; empty if not a CuTe tensor."""
    if not isinstance(shape, tuple) or len(shape) != 2 or not (shape[0] == PTR or shape[0] == ()):
        return []
    layout = shape[1]
    parts = [_scalars(p) for p in layout] if isinstance(layout, tuple) and len(layout) == 2 else None
    return _fields(index, shape[0] == PTR, parts, meta_arg)


def meta_fields(index: int, meta_arg: dict[str, Any]) -> list[Field]:
    """The fields of tensor parameter ``index`` from the capture's layout facts (PTX: a byte array).

    The struct is the one the DSL declares: the pointer, then one leaf per dynamic mode of the shape,
    then of the stride (a single leaf bare, several in a struct).
    """
    parts: list[list[tuple[tuple[int, ...], int]]] = []
    modes = meta_arg.get("modes") or ()
    for part in ("shape", "stride"):
        ws = [_mode_part(m, part).get("width", 64) for m in modes if _mode_part(m, part).get("kind") == "dynamic"]
        parts.append([((k,) if len(ws) > 1 else (), int(w)) for k, w in enumerate(ws) if str(w) in ("32", "64")])
    if meta_arg.get("dtype") == "coord":
        # a TMA coordinate tensor has no pointer: its struct is its dynamic extents alone (cudnn NSA's
        # (?,?,((?,?),?)) is 20 bytes), unless its origin is dynamic too, which the capture does not lay out
        origin = _ORIGIN.match(str(meta_arg.get("type", "")))
        return _fields(index, False, parts, meta_arg) if origin and "?" not in origin.group(1) else []
    return _fields(index, True, parts, meta_arg)


_ORIGIN = re.compile(r'^!cute\.coord_tensor<"([^"]*)"')


def _fields(
    index: int, pointer: bool, parts: list[list[tuple[tuple[int, ...], int]]] | None, meta_arg: dict[str, Any] | None
) -> list[Field]:
    # a coordinate tensor (TMA's identity tensors) has a static origin where a tensor has its pointer
    fields = [Field((0,), 0, 64, f"arg{index}.ptr")] if pointer else []
    if parts is None:
        return fields
    offset = 8 if fields else 0
    for part_i, (part, leaves) in enumerate(zip(("shape", "stride"), parts, strict=True)):
        modes = _dynamic_modes(meta_arg, part)
        for k, (rel, width) in enumerate(leaves):
            size = width // 8
            offset = (offset + size - 1) // size * size
            mode = modes[k] if k < len(modes) else k
            fields.append(Field((1, part_i, *rel), offset, width, f"arg{index}.{part}[{mode}]", part, mode))
            offset += size
    return fields


_DIV = re.compile(r"div=(\d{1,9})\b")


def divisor(meta_arg: dict[str, Any] | None, f: Field) -> int:
    """What the layout says the field is a multiple of (``?{div=8}``, ``?{i64 div=4}``), else 1."""
    modes = meta_arg.get("modes") if isinstance(meta_arg, dict) else None
    if not f.part or not isinstance(modes, list) or not 0 <= f.mode < len(modes):
        return 1
    return layout_divisor(str(_mode_part(modes[f.mode], f.part).get("text", "")))


def layout_divisor(text: str) -> int:
    """What a layout leaf's text says it is a multiple of: ``?{i64 div=4}`` -> 4, else 1."""
    m = _DIV.search(text)
    return max(int(m.group(1)), 1) if m else 1


_TMA_ATOM = re.compile(r"^!cute_nvgpu\.atom\.non_exec_tiled_tma_\w+<(?:sm_\w+,\s*)?([A-Za-z]\w*)\s*,")


def with_tma_elements(meta_args: list[Any]) -> list[Any]:
    """The entries, a TMA coordinate tensor given the element type of the TMA atom right before it
    (``element``): the DSL's ``make_tiled_tma_atom`` returns the pair, and kernels take them in that
    order (``tma_atom_a, mA``), so the coordinate tensor's extents are the global tensor's, of that
    element (rule (c) weighs it: irscan/checks/memory.py ``element_bits``)."""
    out = list(meta_args)
    for j in range(1, len(out)):
        prev, cur = out[j - 1], out[j]
        m = _TMA_ATOM.match(str(prev.get("type", ""))) if isinstance(prev, dict) else None
        if m and isinstance(cur, dict) and cur.get("dtype") == "coord" and "element" not in cur:
            out[j] = {**cur, "element": m.group(1)}
    return out


#: a static extent this large is a placeholder, not a size: kernels wrap a raw pointer as
#: ``make_tensor(ptr, make_layout((1 << 31) - 1))`` ("int32 offsets, no bounds checks"), and an access in
#: bounds of it proves nothing about the buffer behind the pointer
PLACEHOLDER_EXTENT = (1 << 31) - 1

#: DSL argument types that are compile-time only: the kernel has no parameter for them
_STATIC_TYPES = ("!cute.layout<", "!cute.composed_layout<", "!cute.tiled_copy<", "!cute.swizzle<", "!cute.shape<",
                 "!cute.stride<", "!cute.tile<", "!cute.int_tuple<")  # fmt: skip
_MMA = "!cute.tiled_mma<"
_SCALARS = frozenset({"i1", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"})


def align_meta(params: list[Param], meta_args: list[Any], ptx: bool = False) -> list[int] | None:
    """For each kernel parameter, the index of its entry in meta.json's ``args``: the DSL's signature
    also lists compile-time arguments (layouts, tiled copies) that have no parameter, so positions
    drift.  A tensor parameter takes the next tensor entry with as many dynamic shape and stride leaves
    (PTX: whose struct has the parameter's size), an integer the next integer of its width;
    compile-time entries are skipped.  None when the two do not line up (callers then use no entry)."""
    n, m = len(params), len(meta_args)
    if n * m > _ALIGN_CELLS:
        return None

    def fits(i: int, j: int) -> bool:
        return _fits_bytes(params[i].size, meta_args[j]) if ptx else _fits(params[i].shape, meta_args[j])

    skip = [_static_only(a) for a in meta_args]
    maybe = [_maybe_static(a) for a in meta_args]
    # ok[i][j]: parameters i.. line up with entries j.. (the last rows first: no recursion)
    ok = [[False] * (m + 1) for _ in range(n + 1)]
    ok[n] = [True] * (m + 1)  # entries after the last parameter are left over (copy atoms, layouts)
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            take = not skip[j] and fits(i, j) and ok[i + 1][j + 1]
            ok[i][j] = take or ((skip[j] or maybe[j]) and ok[i][j + 1])
    if not ok[0][0]:
        return None
    out: list[int] = []
    j = 0
    for i in range(n):  # each parameter takes the first entry that leaves the rest lined up
        while not (not skip[j] and fits(i, j) and ok[i + 1][j + 1]):
            j += 1
        out.append(j)
        j += 1
    return out


#: the largest parameters x entries table :func:`align_meta` fills (a kernel has tens of each)
_ALIGN_CELLS = 1 << 20


def _maybe_static(m: Any) -> bool:
    """An entry with a parameter in some kernels and none in others, skipped where the parameter at hand
    does not fit it: a tiled MMA (a struct parameter for sm_100, none for sm_80), and a layout with
    dynamic leaves (a parameter of its runtime fields)."""
    t = str(m.get("type", "")) if isinstance(m, dict) else ""
    return t.startswith(_MMA) or (t.startswith(_STATIC_TYPES) and "?" in t)


def _static_only(m: Any) -> bool:
    """No parameter: a compile-time type with nothing dynamic in it, or such a coordinate tensor (beside
    each TMA descriptor: a constant origin and layout)."""
    t = str(m.get("type", "")) if isinstance(m, dict) else ""
    return "?" not in t and t.startswith((*_STATIC_TYPES, "!cute.coord_tensor<"))


def _fits(shape: Shape, m: Any) -> bool:
    if not isinstance(m, dict):
        return False
    t, modes = str(m.get("type", "")), m.get("modes")
    parts = shape[1] if isinstance(shape, tuple) and len(shape) == 2 and shape[0] in (PTR, ()) else None
    tensor = isinstance(shape, tuple) and isinstance(parts, tuple)
    if t.startswith(_MMA):  # a struct of the MMA's runtime fields, when it has a parameter at all
        return isinstance(shape, tuple) and not tensor
    if isinstance(shape, tuple) and isinstance(parts, tuple):  # a tensor: (pointer or none, (shape, stride))
        if shape[0] == () or t.startswith("!cute.coord_tensor"):  # a coordinate tensor: its origin, no pointer
            return shape[0] == () and t.startswith("!cute.coord_tensor")
        if not isinstance(modes, list) or len(parts) != 2:
            return False
        dyn = [sum(_mode_part(md, p).get("kind") == "dynamic" for md in modes) for p in ("shape", "stride")]
        return dyn == [len(_scalars(parts[0])), len(_scalars(parts[1]))]
    if isinstance(shape, int):
        return t == f"i{shape}"
    return not isinstance(modes, list) and (shape is None) == (t in _SCALARS or t.startswith("f"))


def _fits_bytes(size: int | None, m: Any) -> bool:
    """PTX declares byte arrays: a tensor entry fits a parameter of its struct's size, a scalar one of
    its width, anything else (TMA descriptors, tiled MMAs, divisors) any parameter."""
    if not isinstance(m, dict) or size is None:
        return False
    t = str(m.get("type", ""))
    if t.startswith(_MMA):  # its few runtime fields; a TMA descriptor is a 128-byte array
        return size < 128
    if t.startswith("!cute.coord_tensor"):
        return size % 4 == 0
    if isinstance(m.get("modes"), list):
        fields = meta_fields(0, m)
        end = max((f.offset + f.width // 8 for f in fields), default=0)
        return size == -(-end // 8) * 8
    if t in _SCALARS:
        return size * 8 == int(t.lstrip("bfi") or 0)
    return True


def unnamed_field(param: int, offset: int) -> str:
    """The name of a field the capture names nothing for: a PTX scalar (a byte array read at offset 0)
    is the parameter itself, spelled as the MLIR spells it; another byte of a struct keeps its offset."""
    return f"arg{param}" if offset == 0 else f"arg{param}+{offset}"


def field_at(fields: list[Field], f: ParamField) -> Field | None:
    """The named field a read of ``f`` lands on (same start byte)."""
    return next((x for x in fields if x.offset == f.offset), None)


def field_by_path(fields: list[Field], path: tuple[int, ...]) -> Field | None:
    return next((f for f in fields if f.path == path), None)
