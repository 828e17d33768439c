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

from irscan.ir import PTR, ParamField, Shape


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
    return _fields(index, True, parts, meta_arg)


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
    modes = (meta_arg or {}).get("modes")
    if not f.part or not isinstance(modes, list) or not 0 <= f.mode < len(modes):
        return 1
    m = _DIV.search(str(_mode_part(modes[f.mode], f.part).get("text", "")))
    return max(int(m.group(1)), 1) if m else 1


def field_at(fields: list[Field], f: ParamField) -> Field | None:
    """The named field a read of ``f`` lands on (same start byte)."""
    return next((x for x in fields if x.offset == f.offset), None)


def field_by_path(fields: list[Field], path: tuple[int, ...]) -> Field | None:
    return next((f for f in fields if f.path == path), None)
