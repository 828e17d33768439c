"""A finding's wrap condition as an expression of what a launch makes visible.

The range analysis gives every candidate its ideal value as an :class:`~irscan.analysis.intervals.
Affine` form over *atoms* (ranges.py).  At compile time most atoms are unknown; at launch many are
known exactly: a kernel parameter's shape and stride fields and its scalars come from the call's
arguments, and ``ctaid``/``tid`` are bounded by the launch's grid and block.  This module rewrites the
analysis' atoms (in-process, from the graph and the atoms' own structure: no text is parsed) into a
small tree of plain data that :mod:`irscan.guarding.codegen` turns into Python:

* :class:`Field`: a parameter field or scalar, exact at launch (``arg0.stride[0]``);
* :class:`Sreg`: a special register, ``[0, grid.x - 1]`` for ``ctaid.x``, ``grid.x`` for ``nctaid.x``;
* :class:`Extent`: a value the launch cannot see (a loaded coordinate, a loop value) that scales a
  stride of some tensor's mode: bounded by that mode's extent, ``[0, shape - 1]``.  This is the
  "safe while" contract: the loaded offset stays inside the tensor it indexes;
* :class:`Known`: anything else, at the interval the analysis proved for every launch (sound, loose);
* :class:`Product`, :class:`Binary`, :class:`Select`: the non-linear atoms, over their operands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Union

from irscan.analysis.dataflow import Graph
from irscan.analysis.intervals import Affine
from irscan.analysis.params import field_at, field_by_path, meta_fields, tensor_fields
from irscan.analysis.ranges import Ranges
from irscan.ir import Kind, Param, ParamField

#: the most atoms rewritten for one kernel; past it an atom stays at its compile-time interval.  A
#: bigger tree is no launch-time check, and the cap bounds the depth of the (recursive) rewrite and
#: rendering whatever the input
MAX_NODES = 64


@dataclass(frozen=True)
class Field:
    """Kernel parameter ``param``'s field: ``part`` "shape"/"stride" of layout leaf ``mode``, or the
    whole scalar (``part`` "scalar")."""

    param: int
    part: str
    mode: int

    def name(self, names: tuple[str, ...]) -> str:
        base = names[self.param] if self.param < len(names) else f"arg{self.param}"
        return base if self.part == "scalar" else f"{base}.{self.part}[{self.mode}]"


@dataclass(frozen=True)
class Sreg:
    base: str  # "ctaid", "tid", "nctaid", "ntid"
    axis: int  # 0, 1, 2 for x, y, z

    def name(self, names: tuple[str, ...]) -> str:
        return f"{self.base}.{'xyz'[self.axis]}"


@dataclass(frozen=True)
class Known:
    label: str
    lo: int
    hi: int

    def name(self, names: tuple[str, ...]) -> str:
        return self.label


@dataclass(frozen=True)
class Extent:
    """A coordinate the launch cannot see, taken inside ``[0, extent - 1]`` of the mode it indexes."""

    label: str  # what it is ("load(arg2)")
    extent: Field | int  # the mode's shape: a field, or a static extent
    tensor: int  # whose mode

    def name(self, names: tuple[str, ...]) -> str:
        return self.extent.name(names) if isinstance(self.extent, Field) else str(self.extent)


@dataclass(frozen=True)
class Lin:
    terms: tuple[tuple[Node, int], ...]
    const: int = 0


@dataclass(frozen=True)
class Product:
    a: Lin
    b: Lin


@dataclass(frozen=True)
class Binary:
    kind: Kind
    a: Lin
    b: Lin
    width: int
    signed: bool | None


@dataclass(frozen=True)
class Select:
    a: Lin
    b: Lin


Node = Union[Field, Sreg, Known, Extent, Product, Binary, Select]  # noqa: UP007


@dataclass(frozen=True)
class Condition:
    """One finding's access: it wraps when ``value`` leaves ``[lo, hi]`` at this launch."""

    value: Lin
    lo: int
    hi: int
    kernel: str
    file: str | None
    line: int | None
    finding: str  # the finding's id
    tensor: int | None  # the parameter whose memory the access reaches, when one is known
    bounded: bool  # some input is an Extent: the verdict rests on the "safe while" contract

    @property
    def threshold(self) -> str:
        return "2^31-1" if self.lo < 0 else "2^32-1"


FIELD_NAME = re.compile(r"arg\d+\.(shape|stride)\[(\d+)\]$")
_SREG = re.compile(r"(n?ctaid|n?tid)\.([xyz])$")


def field_of(params: list[Param], index: int, path: tuple[int, ...], meta: dict[str, Any] | None) -> Field | None:
    """The layout leaf that ``path`` of tensor parameter ``index``'s struct holds (params.py names it)."""
    p = next((p for p in params if p.index == index), None)
    named = field_by_path(tensor_fields(index, p.shape, meta), path) if p else None
    m = FIELD_NAME.search(named.name) if named else None
    return Field(index, m.group(1), int(m.group(2))) if m else None


class Rewriter:
    """Rewrites one kernel's atoms; ``meta_args`` are the capture's argument facts (layout modes)."""

    def __init__(self, gr: Graph, rg: Ranges, meta_args: list[dict[str, Any]]):
        self.gr, self.rg, self.meta_args = gr, rg, meta_args
        self._memo: dict[Any, Node] = {}
        self._count = 0
        #: special registers the compile pins (a static grid or block), at their top value
        self.fixed: dict[Sreg, int] = {}

    # -- the leaves

    def field(self, n: int) -> Field | None:
        """The parameter field op ``n`` reads (an MLIR extractvalue of a whole parameter, or a scalar)."""
        op = self.gr.op(n)
        pf = op.attrs.get("field")
        if op.kind is Kind.ARG and isinstance(pf, ParamField):  # PTX: ld.param at a byte offset
            meta = self.meta_args[pf.param] if pf.param < len(self.meta_args) else None
            if isinstance(meta, dict) and "modes" not in meta and pf.offset == 0 and pf.width in (32, 64):
                return Field(pf.param, "scalar", 0)  # a scalar parameter, read whole
            named = field_at(meta_fields(pf.param, meta), pf) if isinstance(meta, dict) else None
            m = FIELD_NAME.search(named.name) if named else None
            return Field(pf.param, m.group(1), int(m.group(2))) if m else None
        if op.kind is Kind.ARG:  # MLIR: a whole parameter; a scalar when its type is an integer
            index = int(op.attrs.get("param", -1))
            p = next((p for p in self.gr.fn.params if p.index == index), None)
            scalar = op.width in (32, 64) or (p is not None and p.shape in (32, 64))
            return Field(index, "scalar", 0) if scalar else None
        defs = self.gr.defs(n, 0)
        if op.kind is not Kind.EXTRACT or len(defs) != 1 or self.gr.op(defs[0]).kind is not Kind.ARG:
            return None
        index = int(self.gr.op(defs[0]).attrs.get("param", -1))
        meta = self.meta_args[index] if index < len(self.meta_args) else None
        return field_of(self.gr.fn.params, index, tuple(op.attrs.get("path", ())), meta)

    def static_modes(self, tensor: int) -> list[dict[str, Any]]:
        meta = self.meta_args[tensor] if tensor < len(self.meta_args) else None
        modes = meta.get("modes") if isinstance(meta, dict) else None
        return modes if isinstance(modes, list) else []

    # -- the rewrite

    def lin(self, a: Affine) -> Lin:
        return Lin(tuple((self.atom(k), c) for k, c in a.terms), a.const)

    def atom(self, key: Any) -> Node:
        if key in self._memo:
            return self._memo[key]
        self._count += 1
        at = self.rg.atoms[key]
        node: Node = Known(at.name, at.iv.lo, at.iv.hi)
        if self._count < MAX_NODES and at.node is not None and at.node in self.gr:
            node = self._node(at.node, at.factors) or node
        if isinstance(node, Sreg) and at.fixed:
            self.fixed[node] = at.iv.hi
        elif isinstance(node, (Product, Binary, Select)) and at.fixed:
            node = Known(at.name, at.iv.lo, at.iv.hi)  # pinned by the compile: its interval is exact enough
        self._memo[key] = node
        return node

    def _node(self, n: int, factors: tuple[Affine, Affine] | None) -> Node | None:
        op = self.gr.op(n)
        if op.kind is Kind.SREG:
            m = _SREG.match(str(op.attrs.get("sreg", op.name)))
            return Sreg(m.group(1), "xyz".index(m.group(2))) if m else None
        if op.kind in (Kind.ARG, Kind.EXTRACT):
            return self.field(n)
        if factors is not None:
            return Product(self.lin(factors[0]), self.lin(factors[1]))
        if op.kind is Kind.SELECT and len(op.operands) == 3:
            return Select(self.lin(self.rg.operand(n, 1)), self.lin(self.rg.operand(n, 2)))
        if op.kind in _BINARY and len(op.operands) == 2:
            a, b = self.rg.operand(n, 0), self.rg.operand(n, 1)
            return Binary(op.kind, self.lin(a), self.lin(b), op.width or 64, op.signed)
        return None


_BINARY = frozenset(
    {Kind.LSHR, Kind.ASHR, Kind.AND, Kind.OR, Kind.XOR, Kind.DIV, Kind.REM, Kind.MIN, Kind.MAX, Kind.MULHI, Kind.SHL}
)


def bind_extents(rw: Rewriter, value: Lin, tensor: int | None) -> tuple[Lin, bool]:
    """The "safe while" contract: a coordinate the launch cannot see, scaling a tensor mode's stride,
    stays inside that mode (``cu_seqlens[k] * dout.stride[0]`` with ``cu_seqlens[k] <= dout.shape[0]
    - 1``).  Two shapes are recognised: a product with a stride field, and a constant coefficient equal
    to a static stride of the accessed tensor.  Returns the bound form and whether anything was bound."""
    bound = False
    terms: list[tuple[Node, int]] = []
    for node, c in value.terms:
        new: Node = node
        if isinstance(node, Product):
            for x, y in ((node.a, node.b), (node.b, node.a)):
                stride = _single_stride(y)
                hidden = _single_hidden(x)
                if stride is not None and hidden is not None:
                    ext = _extent(rw, stride.param, stride.mode)
                    if ext is not None:
                        new = Product(Lin(((Extent(hidden.label, ext, stride.param), 1),)), y)
                        bound = True
                        break
        elif isinstance(node, Known) and tensor is not None and _unbounded(node):
            ext = _static_stride_extent(rw, tensor, c)
            if ext is not None:
                new, bound = Extent(node.label, ext, tensor), True
        terms.append((new, c))
    return Lin(tuple(terms), value.const), bound


def _single_stride(x: Lin) -> Field | None:
    if len(x.terms) == 1 and x.const == 0 and x.terms[0][1] == 1:
        n = x.terms[0][0]
        if isinstance(n, Field) and n.part == "stride":
            return n
    return None


def _single_hidden(x: Lin) -> Known | None:
    if len(x.terms) == 1 and x.const == 0 and x.terms[0][1] == 1:
        n = x.terms[0][0]
        if isinstance(n, Known) and _unbounded(n):
            return n
    return None


def _unbounded(k: Known) -> bool:
    """Loose enough that the analysis' own bound is no help at launch (a free 32-bit or wider value)."""
    return k.hi >= (1 << 31) - 1


def _extent(rw: Rewriter, tensor: int, mode: int) -> Field | int | None:
    modes = rw.static_modes(tensor)
    if mode >= len(modes):
        return Field(tensor, "shape", mode)
    shape = modes[mode].get("shape", {}) if isinstance(modes[mode], dict) else {}
    if shape.get("kind") == "static" and isinstance(shape.get("value"), int):
        return int(shape["value"])
    return Field(tensor, "shape", mode)


def _static_stride_extent(rw: Rewriter, tensor: int, coef: int) -> Field | int | None:
    for mode, m in enumerate(rw.static_modes(tensor)):
        stride = m.get("stride", {}) if isinstance(m, dict) else {}
        if stride.get("kind") == "static" and stride.get("value") == coef and coef > 1:
            return _extent(rw, tensor, mode)
    return None


def accessed_tensor(gr: Graph, sink: int) -> int | None:
    """The kernel parameter whose pointer is the root of the access's address, if one is."""
    base = gr.address_base(sink, through_adds=False)  # the contracts name GEP-rooted addresses only
    return None if base is None else gr.pointer_param(base)


def launch_name(s: Sreg) -> str:
    """The launch dimension that bounds a special register: ``grid.x`` for ``ctaid.x``."""
    return f"{'grid' if s.base.endswith('ctaid') else 'block'}.{'xyz'[s.axis]}"


def inputs(value: Lin, names: tuple[str, ...]) -> list[str]:
    """The launch's inputs a condition names (fields, launch dimensions, extents), in first-seen order."""
    out: dict[str, None] = {}
    stack: list[Node | Lin] = [value]
    while stack:
        x = stack.pop()
        if isinstance(x, Lin):
            stack += [t for t, _ in reversed(x.terms)]
        elif isinstance(x, Field):
            out[x.name(names)] = None
        elif isinstance(x, Sreg):
            out[launch_name(x)] = None
        elif isinstance(x, Extent):
            if isinstance(x.extent, Field):
                out[x.extent.name(names)] = None
        elif isinstance(x, (Product, Select, Binary)):
            stack += [x.b, x.a]
    return list(out)


def unbounded(x: Lin) -> list[Known]:
    """The inputs left in a condition that the launch cannot bound (a free 32-bit or wider value)."""
    out: list[Known] = []
    stack: list[Node | Lin] = [x]
    while stack:
        n = stack.pop()
        if isinstance(n, Lin):
            stack += [t for t, _ in n.terms]
        elif isinstance(n, Known) and _unbounded(n):
            out.append(n)
        elif isinstance(n, (Product, Select, Binary)):
            stack += [n.a, n.b]
    return out
