"""Name kernel parameters and their fields the way a user thinks of them: ``arg1.stride[0]``.

A CuTe tensor parameter lowers to ``!llvm.struct<(ptr<1>, struct<(SHAPE, STRIDE)>)>`` where SHAPE and
STRIDE hold the *dynamic* modes only: ``struct<()>`` when none, a bare ``i32``/``i64`` when one, a
``struct<(i32, i64, ...)>`` when several.  MLIR reaches a field by an ``extractvalue`` path, PTX by
a byte offset into the ``.param``; both are mapped here to the layout mode the capture's meta.json
records (``args[i].modes``), so both IRs name the same input the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from irscan.frontend.text import split_top


@dataclass(frozen=True)
class Field:
    path: tuple[int, ...]
    offset: int
    width: int  # bits; 64 for the pointer
    name: str


def _struct_items(t: str) -> list[str] | None:
    t = t.strip()
    for prefix in ("!llvm.struct<(", "struct<("):
        if t.startswith(prefix) and t.endswith(")>"):
            return split_top(t[len(prefix) : -2])
    return None


def _scalars(t: str) -> list[tuple[tuple[int, ...], int]]:
    """(relative path, width) of every integer leaf of a shape/stride part."""
    t = t.strip()
    if t in ("i32", "i64"):
        return [((), int(t[1:]))]
    items = _struct_items(t)
    if items is None:
        return []
    out = []
    for k, it in enumerate(items):
        out += [((k, *p), w) for p, w in _scalars(it)]
    return out


def _dynamic_modes(meta_arg: dict[str, Any] | None, part: str) -> list[int]:
    if not meta_arg or "modes" not in meta_arg:
        return []
    return [i for i, m in enumerate(meta_arg["modes"]) if (m.get(part) or {}).get("kind") == "dynamic"]


def tensor_fields(index: int, type_text: str, meta_arg: dict[str, Any] | None = None) -> list[Field]:
    """The fields of tensor parameter ``index``; empty if the type is not a CuTe tensor struct."""
    items = _struct_items(type_text)
    if not items or len(items) != 2 or not (items[0].startswith("ptr") or items[0] == "struct<()>"):
        return []
    # a coordinate tensor (TMA's identity tensors) has a static origin where a tensor has its pointer
    fields = [Field((0,), 0, 64, f"arg{index}.ptr")] if items[0].startswith("ptr") else []
    layout = _struct_items(items[1])
    if not layout or len(layout) != 2:
        return fields
    offset = 8 if fields else 0
    for part_i, part in enumerate(("shape", "stride")):
        modes = _dynamic_modes(meta_arg, part)
        for k, (rel, width) in enumerate(_scalars(layout[part_i])):
            size = width // 8
            offset = (offset + size - 1) // size * size
            mode = modes[k] if k < len(modes) else k
            fields.append(Field((1, part_i, *rel), offset, width, f"arg{index}.{part}[{mode}]"))
            offset += size
    return fields


def field_by_path(fields: list[Field], path: tuple[int, ...]) -> Field | None:
    return next((f for f in fields if f.path == path), None)


def field_by_offset(fields: list[Field], offset: int) -> Field | None:
    return next((f for f in fields if f.offset == offset), None)
