"""A widened value that is an offset into one tensor: below that tensor's extent, in bounds.

When a 32-bit value enters an address as an offset into tensor ``argK`` (``gep %argK.ptr[... + i]``,
or PTX's ``cvt`` / ``mul.wide`` then ``mad`` / ``shl`` by the element size / ``add`` to the tensor's
pointer), it holds the coordinates of the modes of static stride (the others take 64-bit strides and
are added in 64 bits).  An access that stays in the tensor then has ``i <= Σ (extent_m - 1)·stride_m``
over those modes: with one unit-stride mode of i32 extent, ``i < argK.shape[m]``, which never reaches
2^31 (a wrap there needs an access outside the tensor, a bug of its own).  The same holds for a
coordinate loaded from memory (block tables, prefix sums: rule (b) of the reporting rule).  The bound
names the tensor and its modes, so a check can re-express a threshold in the tensor's shape.

The walk from the widening op to the tensor's pointer follows only adds (of 64-bit offsets of other
modes), and exactly one scaling, by the element size; anything else leaves the value unexplained.
When the pointer it reaches is a *view* (``input[row, None]``: ``gep %p[131072*row]``, PTX ``add.s64``
of a byte offset), whose base offset is a whole number of steps of the outermost static-stride mode j
(each step spanning all the other modes), the index after it addresses the other modes only: in
bounds of the view, below their static size (131,072 for a row of ``(?,131072):(131072,1)``).

A value widened and then multiplied by the tensor's own 64-bit dynamic stride of mode m (PTX
``cvt.s64.s32`` then ``mul.lo.s64``/``mad.lo.s64`` by that stride field, FA4's LSE store at
``[None, head, batch]``; MLIR ``sext``, ``mul`` by ``extractvalue`` of the stride, ``add``, then a GEP
of the element type, which scales by the element itself) is that mode's coordinate and nothing else:
in bounds it is below ``argK.shape[m]``, however it was computed (a tile scheduler's FastDivmod
quotient, say).
"""

from __future__ import annotations

import re
from fractions import Fraction
from math import floor
from typing import TYPE_CHECKING, Any

from irscan.analysis.bounds import I32_MAX, Bound
from irscan.analysis.intervals import Affine, Interval
from irscan.analysis.params import PLACEHOLDER_EXTENT, field_at
from irscan.ir import Kind, ParamField

if TYPE_CHECKING:
    from irscan.analysis.dataflow import Graph
    from irscan.analysis.inputs import Facts
    from irscan.analysis.params import Field
    from irscan.analysis.ranges import Atom
    from irscan.ir import Op

_DIGITS = re.compile(r"\d{1,4}")
#: how many ops a walk (to the pointer, or from the pointer to its parameter) may take
_STEPS = 24
#: how many addresses one widened value may feed for its walks to be followed
_PATHS = 4


class Coordinates:
    """Needs from its host: ``gr`` and ``meta_args``; provides :meth:`coordinate_bound`."""

    gr: Graph
    meta_args: list[dict[str, Any]]
    atoms: dict[Any, Atom]
    facts: Facts

    if TYPE_CHECKING:  # provided by the host class (irscan.analysis.ranges.Ranges, from inputs.py)

        def _fields_of(self, index: int) -> list[Field]: ...
        def _param_field(self, n: int, op: Op) -> ParamField | None: ...
        def value(self, n: int) -> Affine: ...
        def field_atom(self, param: int, path: tuple[int, ...]) -> Affine | None: ...
        def interval(self, a: Affine, least_harm: bool = False) -> Interval: ...

    def coordinate_bound(self, at: int) -> Bound | None:
        """The bound an in-bounds access gives the value widened at op ``at``, if it is a coordinate."""
        gr = self.gr
        op = gr.op(at)
        if op.kind is Kind.GEP:
            views: list[tuple[int, int]] = []
            found = self._tensor_root(gr.defs(at, 0), views) if _one_index(op) else None
            plain = self._scaled_inputs(gr.defs(at, 1))
            unit = int(op.attrs.get("elem_size") or 0)
            return self._mode_bound(found, unit, views, plain) if found is not None else None
        if op.kind in (Kind.SEXT, Kind.ZEXT, Kind.MULWIDE):
            scale = 1
            if op.kind is Kind.MULWIDE:
                c = [x for x in op.operands if isinstance(x, int)]
                if len(c) != 1:
                    return None
                scale = c[0]
            return self._forward(at, scale)
        return None

    def most_of(self, k: int, terms: tuple[tuple[str, Any], ...], const: int) -> int | None:
        """A bound over tensor k's extents with each at the largest value its atom holds (a field the
        host computes as ``ceil(F / 128)`` of a 32-bit F: 2^24), None when an extent is not a field."""
        total = Fraction(const)
        fields = {f.name: f for f in self._fields_of(k)}
        for name, c in terms:
            f = fields.get(name)
            a = self.field_atom(k, f.path) if f is not None else None
            if a is None:
                return None
            iv = self.interval(a)
            total += Fraction(c) * (iv.hi if c > 0 else iv.lo)
        return floor(total)

    def computed_extent(self, k: int, m: int) -> bool:
        """Whether the extent of mode m of tensor k is the host's own arithmetic (b12x's X4T views
        ``make_tensor(ptr, (num_experts*rows*columns,))``): no allocation, its ideal may pass 2^31."""
        computed = self.facts.computed
        fields = self._fields_of(k) if computed else []
        return any((k, f.path) in computed for f in fields if f.part == "shape" and f.mode == m)

    def _forward(self, start: int, scale: int) -> Bound | None:
        """From the widened value to an add with a tensor's pointer, through adds and one scaling; a
        value feeding several addresses (PTX shares one ``cvt`` among accesses) is walked along each
        (:func:`_either`)."""
        found: list[Bound] = []
        todo: list[tuple[int, int, tuple[int, int] | None]] = [(start, scale, None)]
        for _ in range(_STEPS * _PATHS):
            if not todo:
                return _either(found)
            n, sc, strided = todo.pop()
            users = [(u, s) for u, s in self.gr.users(n) if self.gr.op(u).width == 64 or self.gr.op(u).kind is Kind.GEP]
            if not users or len(users) + len(todo) + len(found) > _PATHS:
                return None
            for u, slot in users:
                step = self._offset_step(start, n, sc, strided, u, slot)
                if step is None:
                    return None
                if isinstance(step, Bound):
                    found.append(step)
                else:
                    todo.append(step)
        return None

    def _offset_step(
        self, start: int, n: int, scale: int, strided: tuple[int, int] | None, u: int, slot: int
    ) -> Bound | tuple[int, int, tuple[int, int] | None] | None:
        """One op ``u`` reading the value (op n) at ``slot``: the bound where it adds the tensor's
        pointer, the walk's next state (op, scale, the (tensor, mode) whose stride multiplied it), or
        None where the value leaves the shapes an offset takes.  ``scale`` 1: not yet scaled to bytes."""
        gr = self.gr
        uop = gr.op(u)
        scaled = scale != 1
        other = gr.const_operand(u, 1) if uop.kind in (Kind.SHL, Kind.MUL) and slot == 0 else None
        if n == start and not scaled and uop.kind in (Kind.MUL, Kind.MAD) and slot in (0, 1) and other is None:
            # a product by a 64-bit field (a stride); a constant factor is the element size (MLIR's
            # ``sext``, ``mul`` by 4, ``add`` to ``ptrtoint`` of the pointer), taken below
            st = self._stride_of(u, 1 - slot)
            return None if st is None else (u, scale, st)
        if other is not None and not scaled:
            return u, (1 << other) if uop.kind is Kind.SHL else other, strided
        if (uop.kind is Kind.MAD and slot == 2) or (uop.kind is Kind.ADD and not scaled):
            return u, scale, strided  # another mode's 64-bit offset added, still in elements
        if (uop.kind is Kind.ADD and scaled) or (uop.kind is Kind.GEP and slot != 0 and not scaled):
            base = 1 - slot if uop.kind is Kind.ADD else 0  # MLIR's GEP scales by its element itself
            if uop.kind is Kind.GEP:
                scale = int(uop.attrs.get("elem_size") or 0) if _one_index(uop) else 0
            views: list[tuple[int, int]] = []
            found = self._tensor_root(gr.defs(u, base), views)
            if strided is not None:
                return self._strided_bound(*strided, scale) if found == strided[0] else None
            return self._mode_bound(found, scale, views) if found is not None else None
        return None

    def _stride_of(self, n: int, slot: int) -> tuple[int, int] | None:
        """(tensor, mode) when operand ``slot`` of op n reads a 64-bit dynamic stride field of a tensor."""
        defs = self.gr.defs(n, slot)
        op = self.gr.op(defs[0]) if len(defs) == 1 else None
        f = self._param_field(defs[0], op) if op is not None and op.kind in (Kind.ARG, Kind.EXTRACT) else None
        named = field_at(self._fields_of(f.param), f) if f is not None else None
        if op is None or f is None or named is None or named.part != "stride" or named.width != 64 or op.width != 64:
            return None
        return f.param, named.mode

    def _strided_bound(self, k: int, m: int, unit_bytes: int) -> Bound | None:
        """The coordinate of mode m of tensor k (its stride multiplied it; ``unit_bytes`` scaled it to
        bytes, which must be the element size): in bounds below that mode's extent."""
        meta = self.meta_args[k] if 0 <= k < len(self.meta_args) else None
        if not isinstance(meta, dict) or _bits(meta.get("dtype")) != 8 * unit_bytes:
            return None
        modes = meta.get("modes")
        if not isinstance(modes, list) or not 0 <= m < len(modes):
            return None
        shape = modes[m].get("shape") if isinstance(modes[m], dict) else None
        shape = shape if isinstance(shape, dict) else {}
        fact = f"in bounds, a coordinate of mode {m} of arg{k} (a 64-bit stride) is below arg{k}.shape[{m}]"
        if shape.get("kind") == "dynamic" and shape.get("width") in (32, 64):
            # an i64 extent bounds nothing by itself, but at the wrap it must exceed 2^31: rule (b)
            # weighs the tensor holding that many slices (i32 False keeps rule (a) out of it); so does
            # an i32 extent the host computed by its own arithmetic (hostfields.module_computed)
            i32 = shape.get("width") == 32 and not self.computed_extent(k, m)
            terms = ((f"arg{k}.shape[{m}]", 1),)
            return Bound(terms, -1, i32, fact, k, (m,), most=self.most_of(k, terms, -1))
        if shape.get("kind") == "static" and isinstance(shape.get("value"), int) and shape["value"] >= 1:
            return Bound((), int(shape["value"]) - 1, True, fact, k, (m,))
        return None

    def _tensor_root(self, defs: list[int], views: list[tuple[int, int]]) -> int | None:
        """The kernel parameter whose pointer field this address starts from (through GEPs, casts,
        moves and 64-bit adds), or None; ``views`` gets the offsets added on the way (a view's base:
        ``gep %p[row*131072]``, PTX ``add.s64 %p, %off``) as (op, bytes per unit)."""
        gr = self.gr
        todo = defs
        for _ in range(_STEPS):
            if len(todo) != 1:
                return None
            n = todo[0]  # never pop: these lists are the graph's own
            op = gr.op(n)
            f = op.attrs.get("field")
            if op.kind is Kind.ARG and isinstance(f, ParamField) and f.offset == 0 and op.width == 64:
                return f.param
            base = gr.defs(n, 0)
            if op.kind is Kind.EXTRACT and tuple(op.attrs.get("path", ())) == (0,) and len(base) == 1:
                b = gr.op(base[0])
                return int(b.attrs.get("param", -1)) if b.kind is Kind.ARG else None
            if op.kind in (Kind.GEP, Kind.CAST, Kind.MOV):
                idx = gr.defs(n, 1) if op.kind is Kind.GEP and _one_index(op) and len(op.operands) == 2 else []
                if len(idx) == 1:
                    views.append((idx[0], int(op.attrs.get("elem_size") or 0)))
                todo = base
            elif op.kind is Kind.ADD and op.width == 64:  # pointer + offset: the side that is a pointer
                sides = [gr.defs(n, s) for s in (0, 1)]
                todo = next((s for s in sides if len(s) == 1 and self._pointerish(s[0])), [])
                other = [s for s in sides if s is not todo]
                if todo and len(other) == 1 and len(other[0]) == 1:
                    views.append((other[0][0], 1))
            else:
                return None
        return None

    def _sliced_mode(self, modes: list[Any], elem: int, views: list[tuple[int, int]]) -> int | None:
        """The mode whose coordinate a view's base took (``input[row, None]``: ``gep %p[131072*row]``):
        the outermost static-stride mode j whose stride (in bytes) divides every coefficient of the
        base offsets, one step of which spans every other static mode (a row-major slice), when the
        offset depends on an input; the index after it then addresses the other modes only."""
        total = Affine.of_const(0)
        for n, unit in views:
            if unit <= 0:
                return None
            total = total.add(self.value(n).scale(unit))
        if not total.terms:
            return None
        spans = [(m, _static(md, "stride"), _static(md, "shape")) for m, md in enumerate(modes)]
        static = [(m, s, e) for m, s, e in spans if s is not None and s > 1]
        if not static:
            return None
        j, sj, _ = max(static, key=lambda x: x[1])
        rest = sum((e - 1) * s for m, s, e in spans if m != j and s is not None and e is not None)
        inner_ok = all(e is not None for m, s, e in spans if m != j and s)
        step = sj * elem
        if not inner_ok or rest >= sj or total.const % step or any(c % step for _, c in total.terms):
            return None
        return j

    def _pointerish(self, n: int) -> bool:
        op = self.gr.op(n)
        f = op.attrs.get("field")
        return op.kind in (Kind.CAST, Kind.MOV, Kind.GEP, Kind.ADD) or (
            op.kind is Kind.ARG and isinstance(f, ParamField) and f.offset == 0
        )

    def _scaled_inputs(self, defs: list[int]) -> bool:
        """Whether the one value ``defs`` defines is a sum of inputs times constants, no product of two
        values among them: a product with a dynamic factor may be the offset of a mode of dynamic
        stride (``row*stride[0]`` narrowed to i32, NVIDIA/cutlass#3208), which no static extent bounds."""
        if len(defs) != 1:
            return False
        v = self.value(defs[0])
        return bool(v.terms) and all(self.atoms[k].factors is None for k, _ in v.terms)

    def _mode_bound(self, k: int, unit_bytes: int, views: list[tuple[int, int]], plain: bool = False) -> Bound | None:
        """An in-bounds offset into tensor k, in units of ``unit_bytes``: at most the sum over the modes
        the 32-bit offset holds (those of static stride s) of ``(extent - 1)*s``; the modes of 64-bit
        dynamic strides are added in 64 bits, so not in it, nor is the mode a view's base already took
        (:meth:`_sliced_mode`).  With static extents only, and ``plain`` (:meth:`_scaled_inputs`), the
        bound is their constant sum (a coordinate of a mode of static extent 1 is 0).  None when a
        mode has a 32-bit dynamic stride (a product of two inputs), or when the unit does not divide
        the element."""
        meta = self.meta_args[k] if 0 <= k < len(self.meta_args) else None
        if not isinstance(meta, dict):
            return None
        modes, bits = meta.get("modes"), _bits(meta.get("dtype"))
        if not isinstance(modes, list) or bits is None or unit_bytes <= 0 or (bits // 8) % unit_bytes:
            return None
        r = bits // 8 // unit_bytes
        sliced = self._sliced_mode(modes, bits // 8, views)
        terms: list[tuple[str, int]] = []
        const, wide = 0, False  # wide: some extent is an i64, so the bound is not rule (a)'s
        for m, md in enumerate(modes):
            parts = [md.get(p) if isinstance(md, dict) else None for p in ("shape", "stride")]
            shape, stride = (x if isinstance(x, dict) else {} for x in parts)
            st, ext = stride.get("value"), shape.get("value")
            if (stride.get("kind") == "dynamic" and stride.get("width") == 64) or m == sliced:
                continue
            if stride.get("kind") != "static" or not isinstance(st, int) or st < 0:
                return None
            if st == 0:
                continue
            if shape.get("kind") == "static" and isinstance(ext, int) and 1 <= ext < PLACEHOLDER_EXTENT:
                const += (ext - 1) * st * r
            elif shape.get("kind") == "dynamic" and shape.get("width") in (32, 64):
                terms.append((f"arg{k}.shape[{m}]", st * r))
                const -= st * r
                wide = wide or shape.get("width") == 64 or self.computed_extent(k, m)
            else:
                return None
        if not terms and sliced is not None:  # a view of static extents: the offset is below its size
            left = [m for m, md in enumerate(modes) if m != sliced and _static(md, "stride") not in (None, 0)]
            if len(left) == 1 and _static(modes[left[0]], "stride") == 1 and r == 1:
                m, ext = left[0], const + 1
                fact = f"in bounds of the view arg{k}[.., :] (mode {sliced} taken by its base), a coordinate of "
                return Bound(
                    (), const, True, fact + f"mode {m} of arg{k} (stride 1) is below its extent {ext}", k, (m,)
                )
            fact = f"in bounds of the view of arg{k} without mode {sliced}, an offset into it is below {const + 1}"
            return Bound((), const, True, fact)
        if not terms and plain:  # static extents only: in bounds the offset is at most their sum (a
            # coordinate of a mode of static extent 1 is 0), however unbounded the value's interval is
            fact = f"in bounds, an offset into arg{k} over its modes of static extent and stride is below {const + 1}"
            return Bound((), const, True, fact)
        if not terms:
            return None
        what = " and ".join(n for n, _ in terms)
        if len(terms) == 1 and terms[0][1] == 1 and const == -1:  # the coordinate of one mode, and only it
            mode = int(terms[0][0].rsplit("[", 1)[1][:-1])
            fact = f"in bounds, a coordinate of mode {mode} of arg{k} (stride 1) is below {what}"
            return Bound(tuple(terms), const, not wide, fact, k, (mode,), most=self.most_of(k, tuple(terms), const))
        # an offset over several modes: no single mode's coordinate (rule (b) reads tensor/modes so)
        fact = f"in bounds, an offset into arg{k} is below its extent ({what})"
        return Bound(tuple(sorted(terms)), const, not wide, fact, most=self.most_of(k, tuple(terms), const))


def _either(found: list[Bound]) -> Bound | None:
    """One bound for a value that feeds several addresses, each with its in-bounds bound: the bound
    when all agree; else, when each is over i32 extents with positive coefficients, the largest of
    their values with every extent at 2^31 - 1 (whichever access runs, the value is at most that)."""
    if not found:
        return None
    if all((b.terms, b.const) == (found[0].terms, found[0].const) for b in found):
        return found[0]
    if not all(b.i32 and all(c > 0 for _, c in b.terms) for b in found):
        return None
    top = max(floor(sum(c for _, c in b.terms) * I32_MAX + b.const) for b in found)
    facts = "; ".join(dict.fromkeys(b.fact for b in found))
    return Bound((), top, True, f"in bounds of every access it addresses (each an i32 extent): {facts}")


def _static(md: Any, part: str) -> int | None:
    """A mode's static shape or stride value, else None."""
    x = md.get(part) if isinstance(md, dict) else None
    v = x.get("value") if isinstance(x, dict) and x.get("kind") == "static" else None
    return v if isinstance(v, int) else None


def _one_index(op: Op) -> bool:
    """A GEP with exactly one dynamic index (the offset, in elements, of one value)."""
    return len([i for i in op.attrs.get("indices", ()) if isinstance(i, tuple) and i and i[0] == "dyn"]) == 1


def _bits(dtype: Any) -> int | None:
    """Bits of an element: the first number in the dtype (``bf16`` 16, ``f8E4M3FN`` 8)."""
    m = _DIGITS.search(str(dtype or ""))
    return int(m.group(0)) if m else None
