"""The inputs of the range analysis: launch facts, special registers and kernel-parameter fields.

A mixin of :class:`irscan.analysis.ranges.Ranges`: the atoms at the roots of every ideal value, with
the interval the launch (or the ISA, or the parameter's type) gives them and the name a user knows
them by (``tid.x``, ``arg1.stride[0]``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from irscan.analysis.hostfields import FieldKey
from irscan.analysis.hostgrid import GridDim
from irscan.analysis.intervals import Affine, Interval, free_range
from irscan.analysis.params import (
    Field,
    align_meta,
    divisor,
    field_at,
    field_by_path,
    meta_fields,
    tensor_fields,
    unnamed_field,
    with_tma_elements,
)
from irscan.ir import SREG_RANGES, Kind, Op, ParamField
from irscan.ir.isa import CTA_ID_OF

if TYPE_CHECKING:
    from irscan.analysis.dataflow import Graph
    from irscan.analysis.ranges import Atom

#: which launch dimension pins a special register
SREG_LAUNCH = {"tid": "block", "ntid": "block", "ctaid": "grid", "nctaid": "grid"}


def dim_name(axis: int) -> str:
    return "xyz"[axis] if 0 <= axis < 3 else str(axis)


@dataclass
class Facts:
    """Launch facts for one kernel: the IR's own, completed by the capture's meta.json."""

    block: tuple[int, ...] | None = None  # exact block dims
    grid: tuple[int, ...] | None = None  # exact grid dims
    max_block: tuple[int, ...] | None = None  # upper bounds only (maxntid)
    #: the grid as the host function computes it (irscan/analysis/hostgrid.py)
    host_grid: tuple[GridDim, ...] = ()
    #: parameter fields the host sets from one value -> the one they read as (irscan/analysis/hostfields.py)
    aliases: dict[FieldKey, FieldKey] = field(default_factory=dict)
    #: parameter fields every launch sets to one constant -> that constant (hostfields.module_constants)
    constants: dict[FieldKey, int] = field(default_factory=dict)
    #: an extent field -> (another parameter's extent or scalar, t): both from one host value, the other
    #: at least t*(this - 1) + 1 (hostfields.module_peers)
    peers: dict[FieldKey, tuple[tuple[FieldKey, int], ...]] = field(default_factory=dict)
    #: a field every launch sets to a quotient or clamp of a 32-bit host value -> its most (module_caps)
    caps: dict[FieldKey, int] = field(default_factory=dict)
    #: the extents every launch sets to the host's own arithmetic (module_computed): 64-bit ideals
    computed: dict[FieldKey, int] = field(default_factory=dict)

    @staticmethod
    def of(
        fn_attrs: dict[str, Any],
        meta_launch: dict[str, Any] | None = None,
        host_grid: tuple[GridDim, ...] = (),
        aliases: dict[FieldKey, FieldKey] | None = None,
        constants: dict[FieldKey, int] | None = None,
        peers: dict[FieldKey, tuple[tuple[FieldKey, int], ...]] | None = None,
        caps: dict[FieldKey, int] | None = None,
        computed: dict[FieldKey, int] | None = None,
    ) -> Facts:
        m = meta_launch or {}

        def pick(*vals: Any) -> tuple[int, ...] | None:
            for v in vals:
                if v:
                    return tuple(int(x) for x in v)
            return None

        return Facts(
            block=pick(
                fn_attrs.get("exact_block_dim"), fn_attrs.get("reqntid"), m.get("exact_block_dim"), m.get("reqntid")
            ),
            grid=pick(fn_attrs.get("exact_grid_dim"), m.get("exact_grid_dim")),
            max_block=pick(fn_attrs.get("maxntid")),
            host_grid=host_grid,
            aliases=aliases or {},
            constants=constants or {},
            peers=peers or {},
            caps=caps or {},
            computed=computed or {},
        )


class Inputs:
    """Needs from its host: ``gr``, ``facts``, ``meta_args``, ``_fields`` and ``_atom``."""

    gr: Graph
    facts: Facts
    meta_args: list[dict[str, Any]]
    _fields: dict[int, list[Field]]
    atoms: dict[Any, Atom]
    divisors: dict[Any, int]
    meta_unaligned: bool = False  # meta.json's entries did not line up with the parameters

    if TYPE_CHECKING:  # provided by the host class (irscan.analysis.ranges.Ranges)

        def _atom(self, key: Any, name: str, iv: Interval, fixed: bool, opaque: bool = False) -> Affine: ...
        def relate(self, key: Any, mult: int, rhs: Affine, fact: str, lower: bool = False) -> None: ...

    def aligned_meta(self, meta_args: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """meta.json's argument entries by parameter index (irscan/analysis/params.py:align_meta):
        its list also holds the compile-time arguments, which have no parameter.  When the two do not
        line up, by position only if there is one entry per parameter (else positions would hand one
        tensor's layout to another parameter), and none otherwise."""
        meta_args = with_tma_elements(meta_args)
        al = align_meta(self.gr.fn.params, meta_args, self.gr.module.ir == "ptx")
        self.meta_unaligned = al is None and bool(meta_args)  # said in the report (pipeline.py)
        if al is None:
            return meta_args if len(meta_args) == len(self.gr.fn.params) else []
        return [meta_args[i] for i in al]

    def _sreg(self, n: int, op: Op) -> Affine:
        sreg = str(op.attrs.get("sreg", op.name))
        base, _, dim = sreg.partition(".")
        axis = "xyz".find(dim) if dim in ("x", "y", "z") else -1
        handed = base in CTA_ID_OF  # a CTA id the hardware hands out: ctaid's bounds, no launch pins it
        launch = SREG_LAUNCH.get(CTA_ID_OF.get(base, base))
        dims = self.facts.block if launch == "block" else self.facts.grid if launch == "grid" else None
        if dims and axis >= 0 and axis < len(dims):
            d = dims[axis]
            if base in ("ntid", "nctaid"):
                return Affine.of_const(d)
            return self._atom(n, sreg, Interval(0, d - 1), not handed)
        r = op.attrs.get("range") or SREG_RANGES.get(sreg)
        iv = Interval(int(r[0]), int(r[1])) if r else free_range(op.width or 32)
        if base == "tid" and self.facts.max_block and 0 <= axis < len(self.facts.max_block):
            iv = Interval(0, min(iv.hi, self.facts.max_block[axis] - 1))
        hd = next((g for g in self.facts.host_grid if g.axis == axis), None) if launch == "grid" else None
        grid = "nctaid" if base == "nctaid" else "ctaid"
        if hd is not None and hd.cap is not None:  # the host clamps the grid to a constant
            cap = hd.cap if grid == "nctaid" else hd.cap - 1
            iv = Interval(iv.lo, max(iv.lo, min(iv.hi, cap)))
            self.relate(n, 1, Affine.of_const(cap), hd.why or f"grid from host: nctaid.{dim_name(axis)} <= {hd.cap}")
        extent = self._field_atom(hd.param, hd.path) if hd is not None and hd.param >= 0 else None
        if hd is None or extent is None:  # a grid of one block along the axis (grid y = 1) fixes ctaid.y = 0
            return self._atom(n, sreg, iv, iv.lo == iv.hi)
        # nctaid <= ceil(F / t), so t*nctaid <= F + t - 1 and t*ctaid <= F - 1 (irscan/analysis/hostgrid.py)
        top = -(-self.atoms[extent.terms[0][0]].iv.hi // hd.tile)
        res = self._atom(n, sreg, Interval(iv.lo, min(iv.hi, top if grid == "nctaid" else top - 1)), False)
        fact = f"grid from host: nctaid.{dim_name(axis)} = ceil({self.atoms[extent.terms[0][0]].name} / {hd.tile})"
        self.relate(n, hd.tile, extent.add(Affine.of_const(hd.tile - 1 if grid == "nctaid" else -1)), fact)
        return res

    def field_atom(self, param: int, path: tuple[int, ...]) -> Affine | None:
        """The value kernel parameter ``param``'s field at ``path`` reads as (checks/shared_extents.py)."""
        return self._field_atom(param, path)

    def fields_of(self, index: int) -> list[Field]:
        """Parameter ``index``'s fields, named by the capture's layout facts where it has them."""
        return self._fields_of(index)

    def _field_atom(self, param: int, path: tuple[int, ...]) -> Affine | None:
        """The atom of kernel parameter ``param``'s field at ``path`` (whether or not the kernel reads it)."""
        named = field_by_path(self._fields_of(param), path)
        p = next((p for p in self.gr.fn.params if p.index == param), None)
        if named is None and not path and p is not None:  # a scalar parameter, named as its reads are
            if isinstance(p.shape, int):
                named = Field((), 0, p.shape, f"arg{param}")
            elif p.size in (4, 8):  # PTX: a byte array read at offset 0, named as the MLIR names it
                named = Field((), 0, 8 * p.size, f"arg{param}")
        return self._named_field(("field", param, path), named, named.width, param) if named else None

    def _named_field(self, key: Any, named: Field, w: int, param: int) -> Affine:
        value = self.facts.constants.get((param, named.path))
        if value is not None:  # every launch passes this constant (irscan/analysis/hostfields.py)
            return Affine.of_const(value)
        rep = self.facts.aliases.get((param, named.path))
        if rep is not None and key != ("field", *rep):  # the host sets it from the value rep holds
            got = self._field_atom(*rep)
            if got is not None:
                return got
        iv = free_range(max(w, named.width))
        if (param, named.path) in self.facts.computed:  # the host's own arithmetic: its ideal may pass 2^31
            iv = Interval(0, (1 << 63) - 1)
        cap = self.facts.caps.get((param, named.path))
        if cap is not None:  # the host computes it as a quotient of a 32-bit value (hostfields.module_caps)
            iv = Interval(iv.lo, max(iv.lo, min(iv.hi, cap)))
        res = self._atom(key, named.name, iv, False)
        self.atoms[key].extent = True
        d = divisor(self.meta_args[param] if 0 <= param < len(self.meta_args) else None, named)
        if d > 1:
            self.divisors[key] = d
        return res

    def _fields_of(self, index: int) -> list[Field]:
        if index not in self._fields:
            p = next((p for p in self.gr.fn.params if p.index == index), None)
            meta = self.meta_args[index] if index < len(self.meta_args) else None
            fields = tensor_fields(index, p.shape, meta) if p else []
            if not fields and isinstance(meta, dict) and "modes" in meta:
                fields = meta_fields(index, meta)  # PTX: types are byte arrays; the capture knows the struct
            self._fields[index] = fields
        return self._fields[index]

    def _param_field(self, n: int, op: Op) -> ParamField | None:
        """The parameter field op ``n`` reads: an ARG's own, or an extract from a whole parameter."""
        f = op.attrs.get("field")
        if op.kind is Kind.ARG:
            return f if isinstance(f, ParamField) else None
        defs = self.gr.defs(n, 0)
        if op.kind is not Kind.EXTRACT or len(defs) != 1 or self.gr.op(defs[0]).kind is not Kind.ARG:
            return None
        index = int(self.gr.op(defs[0]).attrs.get("param", -1))
        named = field_by_path(self._fields_of(index), tuple(op.attrs.get("path", ())))
        return ParamField(index, named.offset, op.width) if named else None

    def _arg(self, n: int, op: Op) -> Affine:
        f = self._param_field(n, op)
        param = op.attrs.get("param", -1)
        scalar = self._field_atom(param, ()) if f is None and isinstance(param, int) and param >= 0 else None
        if scalar is not None:  # an MLIR integer scalar: its own width, the atom the host grid's bound names
            return scalar
        if f is None:  # a whole parameter
            w = op.width or 64
            return self._named_field(n, Field((), 0, w, f"arg{op.attrs.get('param', -1)}"), w, -1)
        return self._field(n, f, op.width or 64)

    def _field(self, n: int, f: ParamField, w: int) -> Affine:
        # a 32-bit load of a 64-bit field: the ideal value is the field's (_named_field takes the wider)
        named = field_at(self._fields_of(f.param), f) or Field((), f.offset, w, unnamed_field(f.param, f.offset))
        return self._named_field(n, named, w, f.param)

    def narrow_param(self, n: int) -> bool:
        """A parameter read narrower than the field it reads (PTX ``ld.param.b32`` of an i64: no cvt)."""
        op = self.gr.op(n)
        f = self._param_field(n, op) if op.kind is Kind.ARG else None
        named = field_at(self._fields_of(f.param), f) if f else None
        return named is not None and 0 < op.width < named.width

    def _extract(self, n: int, op: Op) -> Affine:
        path = list(op.attrs.get("path", ()))
        w = op.width or 64
        f = self._param_field(n, op)
        if f is not None:
            return self._field(n, f, w)
        defs = self.gr.defs(n, 0)
        if len(defs) == 1 and self.gr.op(defs[0]).kind is Kind.ARG:
            return self._atom(n, f"arg{self.gr.op(defs[0]).attrs.get('param', -1)}{path}", free_range(w), False)
        return self._atom(n, f"field {path} of {op.operands[0] if op.operands else '?'}", free_range(w), False)

    def _base_name(self, n: int) -> str:
        """Which tensor a load reads from: the parameter at the root of its address, if one is."""
        seen, stack = set(), [n]
        while stack:
            x = stack.pop()
            for d in self.gr.preds(x):
                if d in seen:
                    continue
                seen.add(d)
                dop = self.gr.op(d)
                if dop.kind is Kind.ARG:
                    f = dop.attrs.get("field")
                    if isinstance(f, ParamField):
                        return f"arg{f.param}"
                    continue
                if dop.kind is Kind.EXTRACT and tuple(dop.attrs.get("path", ())) == (0,):
                    pd = self.gr.defs(d, 0)
                    if pd and self.gr.op(pd[0]).kind is Kind.ARG:
                        return f"arg{self.gr.op(pd[0]).attrs.get('param')}"
                if dop.kind in (Kind.GEP, Kind.ADD, Kind.CAST, Kind.MOV, Kind.SUB, Kind.EXTRACT):
                    stack.append(d)
        return "memory"
