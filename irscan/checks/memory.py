"""Rule (c) of the reporting rule (README, "What is reported"): a wrap no GPU's memory can reach.

A wrap matters only if an input that exists reaches it.  Every input a kernel addresses memory with
is bounded by the memory it addresses: an access is inside its tensor in a correct program, and a
tensor's extent is its elements.  So at the threshold some tensor needs a size; when that size is
above ``--max-memory`` (default :data:`DEFAULT_MAX_MEMORY`) the wrap is unreachable and the finding
is suppressed, with the tensor and the size in its reason.  Two facts give such a size:

- *the access itself*: at the wrap the widened value passes 2^31 (or 2^32); on its way to the address
  it is only added to, moved and scaled (by constants, a GEP's element size, the other factor of a
  ``mul.wide``), so the access is at least value x scale bytes into the tensor it addresses;
- *the threshold's input is a tensor extent* (``argK.shape[m]``): at the threshold tensor K holds at
  least that many times its other static extents (dynamic ones taken at 1) elements.

A mode whose stride is a static 0 (a broadcast) takes no memory and is not counted; a dynamic stride is
taken as non-zero.  Sizes are what the capture's meta.json records (``args[k].modes``, ``dtype``).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from irscan.analysis.dataflow import Graph
from irscan.analysis.params import PLACEHOLDER_EXTENT, layout_divisor
from irscan.analysis.ranges import Ranges
from irscan.ir import Kind

#: The largest memory of a single GPU shipping today: NVIDIA B300 (Blackwell Ultra), 288 GB of HBM3e,
#: taken as 288 GiB so that a rounding of the vendor's GB never suppresses a reachable wrap.
DEFAULT_GPU = "NVIDIA B300, 288 GB HBM3e"
DEFAULT_MAX_MEMORY = 288 * 2**30

#: how far from the widening point the way to the access is followed
_PATH_LIMIT = 64
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(|b|kb|mb|gb|tb|kib|mib|gib|tib)\s*$", re.I)
_UNIT = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
         "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}  # fmt: skip
_SHAPE = re.compile(r"^arg(\d+)\.shape\[(\d+)\]$")
_BITS = re.compile(r"(\d+)")
_STRIDE = re.compile(r"^arg(\d+)\.stride\[")
_FIELD = re.compile(r"^arg(\d+)\.")
#: ops whose result is not the magnitude of their operands: a load's value is not its address's, a
#: comparison is 0 or 1, a GEP is a pointer (an address is not an index)
_NO_CARRY = (Kind.LOAD, Kind.STORE, Kind.ATOMIC, Kind.MEMOP, Kind.ICMP, Kind.GEP)
_CARRIED: tuple[weakref.ref[Ranges], dict[int, frozenset[int]]] | None = None


def parse_size(text: str) -> int:
    """``141GB``, ``288GiB``, ``1.5TB`` or a number of bytes; ValueError names what is accepted."""
    m = _SIZE.match(text)
    if not m:
        raise ValueError(f"not a memory size: {text!r} (e.g. 141GB, 288GiB, 1.5TB or a number of bytes)")
    return int(float(m.group(1)) * _UNIT[m.group(2).lower()])


def human(n: int) -> str:
    """Bytes the way a GPU's memory is quoted: ``549.8 GB``."""
    for unit, size in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


@dataclass(frozen=True)
class Need:
    """At the threshold, tensor ``tensor`` (``argK``) needs at least ``bytes``; ``why`` says which fact."""

    tensor: str
    bytes: int
    why: str
    at: str | None = None  # where it holds, when not at the finding's threshold (checks/other_accesses.py)

    def as_json(self, at: str) -> dict[str, Any]:
        return {"tensor": self.tensor, "bytes": self.bytes, "at": self.at or at, "why": self.why}


def element_bits(meta_arg: dict[str, Any] | None) -> int | None:
    """Bits of one element of a tensor argument (``bf16`` -> 16, ``f8E4M3FN`` -> 8; a TMA coordinate
    tensor's, its atom's ``element``), None if unknown."""
    dtype = str((meta_arg or {}).get("element") or (meta_arg or {}).get("dtype") or "")
    m = _BITS.search(dtype)
    return int(m.group(1)) if m else None


def least_extent(shape: dict[str, Any]) -> int:
    """The fewest elements a mode of a tensor the kernel addresses holds: a static extent as it is; a
    dynamic one at its layout divisibility (``?{div=128}``: a multiple of 128 that is not 0, or the
    tensor were empty), else 1."""
    if shape.get("kind") == "static" and isinstance(shape.get("value"), int):
        return max(int(shape["value"]), 1)
    return layout_divisor(str(shape.get("text", "")))


def extent_need(rg: Ranges, input_name: str, at: int) -> Need | None:
    """The input is tensor K's extent of mode m: K's size with that extent at ``at``."""
    m = _SHAPE.match(input_name)
    if not m or at <= 0:
        return None
    k, mode = int(m.group(1)), int(m.group(2))
    meta = rg.meta_args[k] if k < len(rg.meta_args) else None
    bits = element_bits(meta)
    modes = (meta or {}).get("modes")
    if bits is None or not isinstance(modes, list) or mode >= len(modes):
        return None
    elements = 1
    for i, md in enumerate(modes):
        shape, stride = (md.get(p) or {} for p in ("shape", "stride"))
        if stride.get("kind") == "static" and stride.get("value") == 0:
            continue  # a broadcast mode holds no memory
        if i == mode:
            elements *= at
        else:
            elements *= least_extent(shape)
    return Need(f"arg{k}", elements * bits // 8, f"{input_name} is an extent of arg{k} ({meta.get('layout', '?')})")  # type: ignore[union-attr]


def access_scale(gr: Graph, start: int, path: list[int], sink: int) -> int | None:
    """Bytes per unit of the widened value in the access's address: the widening op's own factor, then
    the constants and GEP element sizes on the way to ``sink``; None where the way does more than add,
    move and scale the value."""
    scale = _start_scale(gr, start)
    if scale is None:
        return None
    prev = start
    for n in [*path[:_PATH_LIMIT], sink]:
        op = gr.op(n)
        slots = [s for s in range(len(op.operands)) if prev in gr.defs(n, s)]
        if not slots:
            return None
        if op.kind in (Kind.LOAD, Kind.STORE, Kind.ATOMIC, Kind.MEMOP):
            return scale if op.addr in slots and scale > 0 else None
        factor = _factor(gr, n, slots[0])
        if factor is None:
            return None
        scale *= factor
        prev = n
    return None


def access_need(gr: Graph, rg: Ranges, start: int, path: list[int], sink: int, wrap_value: int) -> Need | None:
    """The access is at least ``wrap_value`` x its scale into the tensor at the root of its address."""
    scale = access_scale(gr, start, path, sink)
    tensor = root_tensor(gr, rg, sink) if scale is not None else None
    if scale is None or tensor is None:
        return None
    return Need(tensor, wrap_value * scale, f"the access is {scale} byte(s) per unit of the wrapping value")


def indexed_mode(rg: Ranges, tensor: str, scale: int, coefs: Sequence[int] = ()) -> tuple[int, dict[str, Any]] | None:
    """The mode of ``tensor`` (``argK``) the wrapping value is a coordinate of, when the layout says so
    unambiguously: its scale is the element size times that mode's static stride, and every other mode
    whose extent is not 1 has a dynamic (64-bit) stride, so no other mode's offset can be folded into
    the 32-bit value with a constant factor.  (mode index, the mode's meta.json record)."""
    k = int(tensor.removeprefix("arg"))
    meta = rg.meta_args[k] if k < len(rg.meta_args) else None
    bits = element_bits(meta)
    modes = (meta or {}).get("modes")
    if bits is None or bits % 8 or not isinstance(modes, list):
        return None
    found = None
    for i, md in enumerate(modes):
        shape, stride = (md.get(p) or {} for p in ("shape", "stride"))
        one = shape.get("kind") == "static" and shape.get("value") == 1
        if stride.get("kind") == "static" and isinstance(stride.get("value"), int):
            if stride["value"] == 0:
                continue  # a broadcast mode adds nothing to the offset
            if stride["value"] * bits // 8 == scale and found is None:
                found = (i, md)
            elif not one:
                return None  # another mode with a constant stride could share the 32-bit value
        elif (
            stride.get("width") != 64
            and not one
            and any(abs(c) > 1 and c % layout_divisor(str(stride.get("text", ""))) == 0 for c in coefs)
        ):
            # a 32-bit dynamic stride: its mode's offset is 32-bit too, and a term of the value may be
            # it (a multiple of what the layout says the stride is a multiple of: SDSA's words[2*i + 1]
            # over (?,?,?):(?{div=2},?{div=2},1))
            return None
    return found


def _start_scale(gr: Graph, start: int) -> int | None:
    """The widening op's own scale: 1 for an extension, the constant factor of ``mul.wide``, and a
    GEP's element size when the widening point is a GEP index (the index enters in elements)."""
    op = gr.op(start)
    if op.kind in (Kind.MULWIDE, Kind.MADWIDE):
        consts = [c for c in (gr.const_operand(start, 0), gr.const_operand(start, 1)) if c is not None]
        return abs(consts[0]) if consts else None
    if op.kind is Kind.GEP:
        return gep_size(gr, start)
    return 1


def _factor(gr: Graph, n: int, slot: int) -> int | None:
    op = gr.op(n)
    k = op.kind
    if k in (Kind.ADD, Kind.OR, Kind.MOV, Kind.CAST, Kind.SEXT, Kind.ZEXT, Kind.PHI):
        return 1
    if k is Kind.SELECT:
        return 1 if slot in (1, 2) else None
    if k is Kind.SUB:
        return 1 if slot == 0 else None
    if k is Kind.GEP:
        return 1 if slot == 0 else gep_size(gr, n)
    if k is Kind.SHL and slot == 0:
        s = gr.const_operand(n, 1)
        return 1 << s if s is not None and 0 <= s < 63 else None
    if k in (Kind.MUL, Kind.MULWIDE, Kind.MAD, Kind.MADWIDE):
        if slot == 2:
            return 1  # the addend of a mad
        c = gr.const_operand(n, 1 - slot) if slot in (0, 1) else None
        return abs(c) if c else None
    return None


def gep_size(gr: Graph, n: int) -> int | None:
    """Bytes per unit of the index of a GEP with one index (its element size); None for any other GEP."""
    op = gr.op(n)
    size = op.attrs.get("elem_size")
    dyn = [i for i in op.attrs.get("indices", ()) if isinstance(i, tuple)]
    return int(size) if isinstance(size, int) and size > 0 and len(dyn) == 1 else None


def root_tensor(gr: Graph, rg: Ranges, sink: int) -> str | None:
    """``argK`` whose pointer field the address starts from (following bases, not indices)."""
    base = gr.address_base(sink, _PATH_LIMIT)
    if base is None:
        return None
    v = rg.value(base)  # a tensor's pointer field (``argK.ptr``); a bare pointer parameter is no tensor
    m = re.match(r"^(arg\d+)\.ptr$", rg.atoms[v.terms[0][0]].name if len(v.terms) == 1 else "")
    return m.group(1) if m else None


def static_cosize(meta_arg: dict[str, Any] | None) -> int | None:
    """Elements a fully static layout spans (one past its largest offset: the cosize), when every
    extent and stride of the tensor is a constant; None when any is dynamic (or not a plain number)."""
    modes = (meta_arg or {}).get("modes")
    if not isinstance(modes, list) or not modes:
        return None
    top = 0
    for md in modes:
        shape, stride = ((md or {}).get(p) or {} for p in ("shape", "stride"))
        ext, step = shape.get("value"), stride.get("value")
        if shape.get("kind") != "static" or stride.get("kind") != "static":
            return None
        if not isinstance(ext, int) or not isinstance(step, int) or not 1 <= ext < PLACEHOLDER_EXTENT:
            return None  # (a placeholder extent over a raw pointer bounds nothing)
        top += (ext - 1) * max(step, 0)  # a negative stride reaches below the pointer, not past it
    return top + 1


def static_bytes(meta_arg: dict[str, Any] | None) -> int | None:
    """Bytes a tensor of fully static layout spans (its cosize times its element size), else None."""
    cosize, bits = static_cosize(meta_arg), element_bits(meta_arg)
    return None if cosize is None or bits is None else cosize * bits // 8


def beyond_static_layout(rg: Ranges, needs: list[Need]) -> str | None:
    """The in-bounds fact of a static layout: a tensor whose shape and strides are all constants holds
    at most its cosize elements, so an access in bounds is less than cosize x element size bytes into
    it.  A need past that is an access out of bounds: the wrap is unreachable in a correct program
    (and the tensor is never sized by the threshold)."""
    for need in needs:
        k = int(need.tensor.removeprefix("arg")) if need.tensor.removeprefix("arg").isdigit() else -1
        meta = rg.meta_args[k] if 0 <= k < len(rg.meta_args) else None
        cosize, bits = static_cosize(meta), element_bits(meta)
        if cosize is None or bits is None or need.bytes <= cosize * bits // 8:
            continue
        layout = (meta or {}).get("layout", "?")
        return (f"(a) in bounds of a static layout: {need.tensor} is {layout}, {cosize:,} elements "
                f"({cosize * bits // 8:,} bytes), so an access in bounds is below that, but the wrap needs "
                f"{human(need.bytes)} into it ({need.why})")  # fmt: skip
    return None


def carries_stride(gr: Graph, rg: Ranges, keys: list[Any], tensor: int) -> bool:
    """Whether a value made of the atoms ``keys`` is computed from a stride field of tensor ``argK``
    (or a truncation of one of its 64-bit fields): then it is an offset the kernel builds over the
    tensor's pointer, not a coordinate of one of its modes.  Loads, comparisons and addresses stop it."""
    carried = _carried(gr, rg)
    for key in keys:
        m = _STRIDE.match(rg.atoms[key].name)
        if m and int(m.group(1)) == tensor:
            return True
        if isinstance(key, int):
            nodes = [key]
        elif isinstance(key, tuple) and len(key) == 3 and key[0] == "join":
            nodes = gr.defs(key[1], key[2])
        elif isinstance(key, tuple) and len(key) >= 2 and isinstance(key[1], int) and key[0] != "field":
            nodes = [key[1]]
        else:
            nodes = []
        if any(tensor in carried.get(n, ()) for n in nodes):
            return True
    return False


def scales_own_extent(rg: Ranges, keys: list[Any], tensor: int) -> bool:
    """Whether a value made of the atoms ``keys`` multiplies an extent of tensor ``argK`` (``head *
    argK.shape[1] + slot``): a flat index over several of its modes that the kernel builds itself, so
    no in-bounds bound on one mode's coordinate holds it (flashinfer's sage scale index)."""
    for key in keys:
        for f in rg.atoms[key].factors or ():
            m = _SHAPE.match(rg.atoms[f.terms[0][0]].name) if len(f.terms) == 1 else None
            if m and int(m.group(1)) == tensor:
                return True
    return False


def _seed(gr: Graph, rg: Ranges, n: int) -> int | None:
    """The tensor whose stride op ``n`` reads, or whose 64-bit field it truncates; None otherwise."""
    op = gr.op(n)
    if op.kind in (Kind.ARG, Kind.EXTRACT):
        v = rg.value(n)
        name = rg.atoms[v.terms[0][0]].name if len(v.terms) == 1 else ""
        m = _STRIDE.match(name) or (_FIELD.match(name) if op.kind is Kind.ARG and rg.narrow_param(n) else None)
        return int(m.group(1)) if m else None
    if op.kind is Kind.TRUNC:
        defs = gr.defs(n, 0)
        if len(defs) == 1 and gr.op(defs[0]).kind in (Kind.ARG, Kind.EXTRACT) and (gr.op(defs[0]).width or 0) >= 64:
            v = rg.value(defs[0])
            m = _FIELD.match(rg.atoms[v.terms[0][0]].name) if len(v.terms) == 1 else None
            return int(m.group(1)) if m else None
    return None


def _carried(gr: Graph, rg: Ranges) -> dict[int, frozenset[int]]:
    """Per op, the tensors whose stride its value is computed from (forward, once per function: each
    op's set only grows, at most once per tensor, so the work is linear in the graph times tensors)."""
    global _CARRIED
    if _CARRIED is not None and _CARRIED[0]() is rg:
        return _CARRIED[1]
    out: dict[int, frozenset[int]] = {}
    work = []
    for n in gr.nodes():
        k = _seed(gr, rg, n) if gr.op(n).kind in (Kind.ARG, Kind.EXTRACT, Kind.TRUNC) else None
        if k is not None:
            out[n] = frozenset({k})
            work.append(n)
    while work:
        n = work.pop()
        for u, slot in gr.users(n):
            uop = gr.op(u)
            if uop.kind in _NO_CARRY or (uop.kind is Kind.SELECT and slot == 0):
                continue
            have = out.get(u, frozenset())
            if not out[n] <= have:
                out[u] = have | out[n]
                work.append(u)
    _CARRIED = (weakref.ref(rg), out)
    return out
