"""What an LLVM-dialect op means to the analysis: parsed op records -> :mod:`irscan.ir` kinds.

Both MLIR front-end paths (the whole-module grammar parse and the fast line indexer) describe each op
as a :class:`irscan.frontend.mlir.records.Body`; :func:`build_spec` turns a Body into a
:class:`~irscan.frontend.mlir.spec.Spec` (kind, width, flags, attrs, address operand...) that does
not depend on the op's SSA names, so the fast path builds it once per distinct op template and
stamps out :class:`irscan.ir.Op` objects from it (:func:`~irscan.frontend.mlir.spec.make_op`).

Ops whose meaning depends on their operands' types (an ``nvvm.*`` op is a memory op when an operand
is a pointer; ``nvvm.fmax`` prints no result type) are settled per function by :func:`finish_function`
once every value's type is known.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from irscan import ir
from irscan.frontend.mlir.memroles import set_address
from irscan.frontend.mlir.records import AttrText, Body
from irscan.frontend.mlir.spec import Spec
from irscan.frontend.mlir.types import (
    Ty,
    int_width_of,
    may_count,
    ptr_space,
    rtype_width,
    space_name,
    type_size,
)
from irscan.ir import SREG_RANGES, AddressSpace, Kind, sreg_name
from irscan.ir.isa import cta_id_query

ARITH_KINDS = {
    "llvm.add": Kind.ADD,
    "llvm.sub": Kind.SUB,
    "llvm.mul": Kind.MUL,
    "llvm.shl": Kind.SHL,
    "llvm.lshr": Kind.LSHR,
    "llvm.ashr": Kind.ASHR,
    "llvm.and": Kind.AND,
    "llvm.or": Kind.OR,
    "llvm.xor": Kind.XOR,
    "llvm.sdiv": Kind.DIV,
    "llvm.udiv": Kind.DIV,
    "llvm.srem": Kind.REM,
    "llvm.urem": Kind.REM,
}
SIGNED = {"llvm.sdiv": True, "llvm.srem": True, "llvm.udiv": False, "llvm.urem": False}
SHIFT_SIGNED = {"llvm.ashr": True, "llvm.lshr": False}
CAST_KINDS = {"llvm.sext": Kind.SEXT, "llvm.zext": Kind.ZEXT, "llvm.trunc": Kind.TRUNC}
MINMAX = {
    "llvm.intr.smin": (Kind.MIN, True),
    "llvm.intr.umin": (Kind.MIN, False),
    "llvm.intr.smax": (Kind.MAX, True),
    "llvm.intr.umax": (Kind.MAX, False),
}
PRED_SIGNED = {
    "slt": True,
    "sle": True,
    "sgt": True,
    "sge": True,
    "ult": False,
    "ule": False,
    "ugt": False,
    "uge": False,
}

#: ops with no integer meaning that need no mention in Module.opaque (address roots, control, hints)
HARMLESS = frozenset({"llvm.alloca", "llvm.mlir.addressof", "llvm.intr.assume", "llvm.intr.trap"})

SREG_PREFIX = "nvvm.read.ptx.sreg."
#: ops with pointer operands that access no memory (``llvm.intr.assume %c ["align"(%p, ...)]``)
#: an inline asm that only copies its one input to its one output
_ASM_COPY = re.compile(r"^\s*mov\.[bus](?:16|32|64)\s+\$0\s*,\s*\$1\s*;?\s*$")
NOT_MEMORY = frozenset({"llvm.intr.assume", "llvm.intr.lifetime.start", "llvm.intr.lifetime.end"})


def _flags_of(x: Any) -> frozenset[str]:
    return x if isinstance(x, frozenset) else frozenset()


# ----------------------------------------------------------------------------- ops with a rule


def build_spec(body: Body) -> Spec:
    """The meaning of one parsed op (see the mapping in the module docstring of :mod:`irscan.frontend.mlir`)."""
    sp = _build_spec(body)
    if sp.kind == Kind.OPAQUE and sp.attrs["result_types"] and may_count(sp.attrs["result_types"]):
        sp.post = True  # an integer or pointer with no known meaning: counted in Module.opaque
    return sp


def _build_spec(body: Body) -> Spec:
    tag, name, info = body.tag, body.name, body.info
    sp = Spec(Kind.OPAQUE, name, tuple(body.operands), body.rtypes)
    if tag == "generic":
        return _generic_spec(sp, body)
    if tag == "arith":
        ty = info["type"]
        sp.flags = _flags_of(info.get("flags"))
        if ty.kind == "int":
            sp.kind = ARITH_KINDS[name]
            sp.width = ty.width
            sp.signed = SIGNED.get(name, SHIFT_SIGNED.get(name))
        return sp
    if tag == "icmp":
        ty = info["type"]
        pred = info["pred"]
        sp.attrs["pred"] = pred
        if ty.kind in ("int", "ptr", "index"):
            sp.kind = Kind.ICMP
            sp.width = int_width_of(ty)
            sp.src_width = int_width_of(ty)
            sp.signed = PRED_SIGNED.get(pred)
        return sp
    if tag == "select":
        ty = info["type"]
        if ty.kind in ("int", "ptr"):
            sp.kind = Kind.SELECT
            sp.width = int_width_of(ty)
        return sp
    if tag == "cast":
        src, dst = info["src"], info["dst"]
        sp.flags = _flags_of(info.get("flags"))
        if name in CAST_KINDS:
            if src.kind == "int" and dst.kind == "int":
                sp.kind = CAST_KINDS[name]
                sp.width, sp.src_width = dst.width, src.width
                sp.signed = True if name == "llvm.sext" else (False if name == "llvm.zext" else None)
            return sp
        sp.kind = Kind.CAST
        sp.width = int_width_of(dst)
        sp.src_width = int_width_of(src)
        if dst.kind == "ptr":
            sp.space = space_name(dst.space)
        if src.kind == "ptr":
            sp.attrs["src_space"] = space_name(src.space)
        if src.kind == "vector" or dst.kind == "vector":
            sp.kind = Kind.OPAQUE
        return sp
    if tag == "extractvalue":
        sp.kind = Kind.EXTRACT
        sp.attrs["path"] = info["path"]
        sp.width = int_width_of(info.get("res"))
        return sp
    if tag == "insertvalue":
        sp.kind = Kind.INSERT
        sp.attrs["path"] = info["path"]
        return sp
    if tag == "gep":
        return _gep_spec(sp, info)
    if tag in ("load", "store", "atomicrmw", "cmpxchg"):
        return _mem_spec(sp, tag, info)
    if tag == "constant":
        ty, v = info["type"], info["value"]
        sp.kind = Kind.CONST
        sp.width = int_width_of(ty)
        if ty.kind == "int" and isinstance(v, (bool, int)) and not isinstance(v, AttrText):
            sp.attrs["value"] = int(v)
        return sp
    if tag == "sreg":
        ty = info["type"]
        sp.kind = Kind.SREG
        sp.width = int_width_of(ty)
        sp.attrs["sreg"] = sreg = sreg_name(name[len(SREG_PREFIX) :])
        rng = info.get("range")
        if rng is not None:
            sp.attrs["range"] = (rng[0], rng[1] - 1)  # MLIR's upper bound is exclusive
        elif sreg in SREG_RANGES:
            sp.attrs["range"] = SREG_RANGES[sreg]
        return sp
    if tag in ("br", "cond_br", "switch"):
        sp.kind = Kind.BRANCH
        sp.succs = tuple((lab, tuple(ops)) for lab, ops, _ in body.succs)
        if tag == "switch":
            sp.attrs["cases"] = tuple(info["cases"])
            sp.width = int_width_of(info["type"])
        return sp
    if tag == "ret":
        sp.kind = Kind.RETURN
        return sp
    if tag == "minmax":
        ty = info["type"]
        if ty.kind == "int":
            sp.kind, sp.signed = MINMAX[name]
            sp.width = ty.width
        return sp
    raise ValueError(f"no semantics for rule {tag!r}")


def _gep_spec(sp: Spec, info: dict[str, Any]) -> Spec:
    sp.kind = Kind.GEP
    sp.flags = _flags_of(info.get("flags"))
    in_types: list[Ty] = info["in_types"]
    elem: Ty = info["elem"]
    base = in_types[0] if in_types else None
    indices: list[tuple[Any, ...]] = []
    dyn = 0
    for tok in info["indices"]:
        if tok.type == "SSA_ID":
            dyn += 1
            t = in_types[dyn] if dyn < len(in_types) else None
            indices.append(("dyn", dyn, int_width_of(t)))
        else:
            indices.append(("const", int(tok.value)))
    sp.attrs["indices"] = indices
    sp.attrs["elem_type"] = elem.text
    sp.attrs["elem_size"] = type_size(elem)
    if base is not None and base.kind == "ptr":
        sp.space = space_name(base.space)
    return sp


_MEM_FLAGS = frozenset({"volatile", "atomic", "invariant", "invariant_group", "nontemporal"})


def _mem_spec(sp: Spec, tag: str, info: dict[str, Any]) -> Spec:
    ptr: Ty = info["ptr"]
    ty: Ty = info["type"]
    mods: dict[str, Any] = info.get("mods") or {}
    attrs: dict[str, Any] = info.get("attrs") or {}
    sp.flags = frozenset(k for k in list(mods) + list(attrs) if k in _MEM_FLAGS)
    sp.space = space_name(ptr.space) if ptr.kind == "ptr" else None
    sp.width = int_width_of(ty)
    sp.attrs["type"] = ty.text
    sp.attrs["size"] = type_size(ty)
    if "alignment" in attrs:
        sp.attrs["alignment"] = attrs["alignment"]
    if "syncscope" in mods:
        sp.attrs["syncscope"] = mods["syncscope"]
    if tag == "load":
        sp.kind, sp.addr = Kind.LOAD, 0
    elif tag == "store":
        sp.kind, sp.addr = Kind.STORE, 1
    else:
        sp.kind, sp.addr = Kind.ATOMIC, 0
        sp.attrs["op"] = info.get("op") if tag == "atomicrmw" else "cmpxchg"
    return sp


def _generic_spec(sp: Spec, body: Body) -> Spec:
    """Ops without a rule: what their name and printed text say (attrs filled from ``info``)."""
    name = sp.name
    info = body.info
    rtypes = sp.attrs["result_types"]
    if rtypes:
        sp.width = rtype_width(rtypes[0])
    if name == "llvm.unreachable":
        sp.kind = Kind.RETURN
    elif name == "llvm.call":
        sp.kind = Kind.CALL
        if info.get("callee"):
            sp.attrs["callee"] = info["callee"]
    elif name == "llvm.freeze":
        sp.kind = Kind.MOV
    elif name == "cuda.launch_ex":
        sp.kind = Kind.LAUNCH  # operands: the launch config, then the kernel's arguments; make_op names it
    elif name == "nvvm.shfl.sync":
        sp.kind = Kind.SHUFFLE
        sp.attrs["shuffled"] = 1  # operands: mask, value, offset, clamp
        sp.post = rtypes is None  # the result type then comes from the operands (finish_function)
    elif name == "nvvm.clusterlaunchcontrol.query.cancel" and (clc := cta_id_query(info.get("query", ""))):
        sp.kind = Kind.SREG  # a cancelled CTA's id: one of the grid's (irscan/ir/isa.py)
        sp.attrs["sreg"], sp.attrs["range"] = clc, SREG_RANGES[clc]
    elif name == "llvm.alloca":
        sp.space = AddressSpace.LOCAL  # the thread's stack, whatever space its pointer type names
    elif name in ("llvm.mlir.zero", "llvm.mlir.undef", "llvm.mlir.poison"):
        sp.kind = Kind.CONST
        if name == "llvm.mlir.zero" and rtypes and rtype_width(rtypes[0]):
            sp.attrs["value"] = 0
    elif name in ("builtin.unrealized_conversion_cast", "nvvm.mapa"):
        # nvvm.mapa maps a shared-memory address to a peer CTA's: the offset in the window is kept
        sp.kind = Kind.CAST
        if name == "nvvm.mapa" and rtypes and rtypes[0].startswith("!llvm.ptr"):
            sp.space = space_name(ptr_space(rtypes[0]))
    if name == "llvm.inline_asm":
        sp.attrs["asm"] = info.get("asm", "")
        if _ASM_COPY.match(sp.attrs["asm"]):  # `mov.b32 $0, $1;`: a copy kernels use to pin a value
            sp.kind = Kind.MOV  # against the compiler's reordering; the value is its operand's
        if "asm_memory" in info:  # its address operands: memroles.set_address, once types are known
            sp.attrs["asm_memory"] = info["asm_memory"]
    if name == "llvm.call_intrinsic" and info.get("intrinsic"):
        sp.attrs["intrinsic"] = info["intrinsic"]
    if sp.kind == Kind.OPAQUE and (
        rtypes is None
        or name.startswith(("nvvm.", "llvm.intr.", "llvm.inline_asm", "llvm.call_intrinsic"))
        or may_count(rtypes)
    ):
        sp.post = True
    return sp


# ------------------------------------------------------------------------- per-function pass


def finish_function(types: dict[str, str], post: list[ir.Op], opaque: Counter[str]) -> None:
    """Settle ops that need their operands' types: MEMOP address operands and unprinted result types.

    ``types`` maps every value of the function (params, block arguments, op results) to its type
    text.  Counts, in ``opaque``, every op left OPAQUE that produces an integer (wider than i1) or a
    pointer: the places where an integer enters the graph without known semantics.
    """
    if post:
        for op in post:
            rt = op.attrs.get("result_types")
            if rt is None:
                first = types.get(op.operands[0]) if op.operands else None  # type: ignore[arg-type]
                rt = tuple(first for _ in op.results) if first is not None else tuple("?" for _ in op.results)
                op.attrs["result_types"] = rt
                for r, t in zip(op.results, rt, strict=False):
                    types[r] = t
                if rt:
                    op.width = rtype_width(rt[0])
            if (
                op.kind == Kind.OPAQUE
                and op.name.startswith(("nvvm.", "llvm.intr.", "llvm.inline_asm", "llvm.call_intrinsic"))
                and op.name not in NOT_MEMORY
            ):
                set_address(op, types)  # the operand roles: irscan/frontend/mlir/memroles.py
            if op.kind == Kind.OPAQUE and op.name not in HARMLESS and may_count(rt):
                opaque[op.name] += 1
