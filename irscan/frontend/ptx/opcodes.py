"""What a PTX opcode means to the analysis, decided once per distinct opcode string.

:func:`opcode_rule` reads an opcode and its modifiers (``mul.wide.s32``, ``ld.global.v4.u32``,
``setp.lt.u64``) into an :class:`OpcodeRule`: the :class:`irscan.ir.Kind`, width, source width,
signedness, whether the first operand is a result, the state spaces named, whether an OPAQUE op is
worth counting.  Alongside it, the facts that depend on nothing but the ISA: the type tables, the
special registers (ranges from :data:`irscan.ir.SREG_RANGES`), and how an integer immediate reads in the
operation's type (:func:`norm_int`).  :mod:`irscan.frontend.ptx.lower` applies all this to each instruction;
keeping the tables apart keeps that module about structure (functions, blocks, names, operands).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from irscan.ir import SREG_RANGES, Kind
from irscan.ir.isa import cta_id_query

_INT_TYPES = {
    "s8": (8, True), "s16": (16, True), "s32": (32, True), "s64": (64, True),
    "u8": (8, False), "u16": (16, False), "u32": (32, False), "u64": (64, False),
    "b8": (8, None), "b16": (16, None), "b32": (32, None), "b64": (64, None), "b128": (128, None),
    "pred": (1, None),
}  # fmt: skip
_FLOAT_TYPES = frozenset(
    {"f16", "f16x2", "bf16", "bf16x2", "f32", "f32x2", "f64", "tf32", "e4m3", "e5m2", "e4m3x2", "e5m2x2",
     "e2m1x2", "e2m3x2", "e3m2x2", "ue8m0x2", "f4e2m1", "f6e2m3", "f6e3m2", "ue8m0"}
)  # fmt: skip
TYPE_BYTES = {
    "s8": 1, "u8": 1, "b8": 1, "s16": 2, "u16": 2, "b16": 2, "f16": 2, "bf16": 2,
    "s32": 4, "u32": 4, "b32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4,
    "s64": 8, "u64": 8, "b64": 8, "f64": 8, "b128": 16, "pred": 1,
}  # fmt: skip
_SPACES = frozenset({"global", "shared", "local", "const", "param", "generic"})

#: %sreg -> inclusive ISA limits (PTX ISA "Special Registers"; launch limits of sm_80 .. sm_100).
#: special registers without a fixed range (still SREG, attrs["range"] absent)
SREGS_OPEN = frozenset(
    {"smid", "nsmid", "gridid", "clock", "clock_hi", "clock64", "globaltimer", "globaltimer_lo",
     "globaltimer_hi", "lanemask_eq", "lanemask_le", "lanemask_lt", "lanemask_ge", "lanemask_gt",
     "dynamic_smem_size", "total_smem_size", "aggr_smem_size", "reserved_smem_offset_begin",
     "reserved_smem_offset_end", "reserved_smem_offset_cap", "is_explicit_cluster", "current_graph_exec"}
)  # fmt: skip

_CMP = {
    ("eq", None): "eq", ("ne", None): "ne",
    ("lt", True): "slt", ("le", True): "sle", ("gt", True): "sgt", ("ge", True): "sge",
    ("lt", False): "ult", ("le", False): "ule", ("gt", False): "ugt", ("ge", False): "uge",
    ("lo", None): "ult", ("ls", None): "ule", ("hi", None): "ugt", ("hs", None): "uge",
}  # fmt: skip

_BINOPS = {
    "add": Kind.ADD, "sub": Kind.SUB, "shl": Kind.SHL, "and": Kind.AND, "or": Kind.OR, "xor": Kind.XOR,
    "div": Kind.DIV, "rem": Kind.REM, "min": Kind.MIN, "max": Kind.MAX, "neg": Kind.NEG,
}  # fmt: skip

#: opcodes (root, or root.first-modifier) whose first operand is not a destination
_NO_DEST = frozenset(
    {"st", "red", "bra", "brx", "ret", "exit", "trap", "brkpt", "bar", "barrier", "membar", "fence", "cp",
     "prefetch", "prefetchu", "stmatrix", "griddepcontrol", "setmaxnreg", "nanosleep", "pmevent", "sust",
     "sured", "discard", "applypriority", "call", "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group",
     "tensormap.replace", "tensormap.cp_fenceproxy", "mbarrier.init", "mbarrier.inval", "mbarrier.expect_tx",
     "mbarrier.complete_tx", "multimem.st", "multimem.red", "st.async", "st.bulk", "red.async",
     "clusterlaunchcontrol.try_cancel", "tcgen05.alloc", "tcgen05.dealloc", "tcgen05.relinquish_alloc_permit",
     "tcgen05.st", "tcgen05.mma", "tcgen05.commit", "tcgen05.cp", "tcgen05.shift", "tcgen05.fence",
     "tcgen05.wait"}
)  # fmt: skip
#: no-value ops (sync, fences): OPAQUE but not worth counting in Module.opaque
_QUIET = frozenset({"bar", "barrier", "membar", "fence", "wgmma", "tcgen05", "griddepcontrol", "setmaxnreg",
                    "nanosleep", "pmevent", "elect", "trap", "brkpt", "cp", "activemask"})  # fmt: skip
_MEMOP_ROOTS = frozenset({"cp", "prefetch", "prefetchu", "ldmatrix", "stmatrix", "mbarrier", "tensormap",
                          "tcgen05", "multimem", "discard", "applypriority", "suld", "sust", "sured", "tex",
                          "tld4", "createpolicy", "st"})  # fmt: skip


@dataclass(slots=True)
class OpcodeRule:
    """What an opcode means, decided once per distinct opcode string."""

    kind: Kind
    width: int = 0
    src_width: int | None = None
    signed: bool | None = None
    flags: frozenset[str] = frozenset()
    attrs: dict[str, Any] = field(default_factory=dict)
    dest: bool | None = None  # True: first operand is the result; False: none; None: unless it is [addr]
    special: str = ""  # "mov", "ld", "st", "atom", "red", "selp", "setp", "bra", "call", "cvta", "mem"
    spaces: tuple[str, ...] = ()  # state spaces named in the opcode, in order (for address operands)
    count: bool = False  # count in Module.opaque
    vec: int = 1
    root: str = ""


def _type_info(parts: list[str]) -> tuple[list[str], bool]:
    """(the type modifiers in order, whether any is a float type)."""
    types = [p for p in parts if p in _INT_TYPES or p in _FLOAT_TYPES]
    return types, any(t in _FLOAT_TYPES for t in types)


@functools.cache
def opcode_rule(opcode: str) -> OpcodeRule:
    parts = opcode.split(".")
    root = parts[0].split("::")[0]
    mods = parts[1:]
    flags = frozenset(mods)
    types, is_float = _type_info(mods)
    spaces = tuple(m for m in mods if m.split("::")[0] in _SPACES)
    two = root + "." + mods[0] if mods else root
    no_dest = root in _NO_DEST or two in _NO_DEST or (root == "tcgen05" and two.split("::")[0] in _NO_DEST)
    dest: bool | None = False if no_dest else None
    vec = 1
    for m in mods:
        if m in ("v2", "v4", "v8"):
            vec = int(m[1:])
    t = types[-1] if types else None
    w, sg = _INT_TYPES.get(t, (0, None)) if t else (0, None)
    if t in _FLOAT_TYPES:
        w = TYPE_BYTES.get(t, 0) * 8
    r = OpcodeRule(Kind.OPAQUE, w, None, sg, flags, {}, dest, "", spaces, False, vec, root)

    def opaque(count: bool) -> OpcodeRule:
        r.kind, r.count = Kind.OPAQUE, count
        return r

    if root == "mov":
        r.special = "mov"
        r.kind = Kind.MOV
        return r
    if root in ("ld", "ldu"):
        r.kind, r.special = Kind.LOAD, "ld"
        return r
    if root == "st" and two not in ("st.bulk",):
        r.kind, r.special = Kind.STORE, "st"
        return r
    if root == "atom":
        r.kind, r.special = Kind.ATOMIC, "atom"
        return r
    if root == "red":
        r.kind, r.special, r.dest = Kind.ATOMIC, "red", False
        return r
    if root in ("bra", "brx"):
        r.kind, r.special = Kind.BRANCH, "bra"
        return r
    if root in ("ret", "exit", "trap"):
        r.kind = Kind.RETURN
        return r
    if root == "call":
        r.kind, r.special = Kind.CALL, "call"
        return r
    if root == "cvta":
        r.kind, r.special = Kind.CAST, "cvta"
        r.attrs = {"cvta": True, "cvta_to": "to" in mods, "cvta_space": spaces[0] if spaces else "generic"}
        return r
    if root == "shfl":
        # shfl.sync.bfly.b32 d|p, a, b, c, mask: d is another lane's a
        r.kind, r.attrs = Kind.SHUFFLE, {"shuffled": 0}
        return r
    clc = cta_id_query(mods[1]) if root == "clusterlaunchcontrol" and len(mods) > 1 else None
    if clc is not None:  # query_cancel.get_first_ctaid::y: a CTA id of the grid (irscan/ir/isa.py)
        r.kind, r.width, r.attrs = Kind.SREG, 32, {"sreg": clc, "range": SREG_RANGES[clc]}  # .b32 of .b128
        return r
    if root in _MEMOP_ROOTS:
        r.kind, r.special = Kind.MEMOP, "mem"  # demoted to OPAQUE below when it has no [address]
        r.count = not is_float and root not in _QUIET
        return r
    if is_float:
        # float arithmetic, compares, selects, cvt to/from float: nothing to do with integer addresses
        return opaque(False)
    if root == "cvt":
        if "sat" in mods or len(types) != 2:
            return opaque(True)
        dw, sw = _INT_TYPES.get(types[0], (0, None))[0], _INT_TYPES.get(types[1], (0, None))[0]
        ss = _INT_TYPES.get(types[1], (0, None))[1]
        r.width, r.src_width = dw, sw
        if dw > sw:
            r.kind, r.signed = (Kind.SEXT, True) if ss else (Kind.ZEXT, False)
        elif dw < sw:
            r.kind, r.signed = Kind.TRUNC, ss
        else:
            r.kind, r.src_width, r.signed = Kind.MOV, None, None
        return r
    if root in ("mul", "mad"):
        if t not in _INT_TYPES or "cc" in mods:
            return opaque(True)
        if "wide" in mods:
            r.kind = Kind.MULWIDE if root == "mul" else Kind.MADWIDE
            r.width, r.src_width = 2 * w, w
            return r
        if "hi" in mods:
            if root == "mad":
                return opaque(True)
            r.kind = Kind.MULHI
            return r
        r.kind = Kind.MUL if root == "mul" else Kind.MAD
        return r
    if root == "shr":
        if t not in _INT_TYPES:
            return opaque(True)
        r.kind, r.signed = (Kind.ASHR, True) if sg else (Kind.LSHR, False)
        return r
    if root in _BINOPS:
        if t not in _INT_TYPES or "cc" in mods or "sat" in mods or (t and "x2" in t):
            return opaque(True)
        if root in ("and", "or", "xor", "shl", "add", "sub", "neg") and sg is None:
            r.signed = None
        r.kind = _BINOPS[root]
        return r
    if root == "selp":
        r.kind, r.special = Kind.SELECT, "selp"
        return r
    if root == "setp":
        cmp = mods[0] if mods else ""
        if len(types) != 1 or any(m in ("and", "or", "xor") for m in mods):
            return opaque(True)
        key = (cmp, sg if cmp in ("lt", "le", "gt", "ge") else None)
        if key not in _CMP:
            return opaque(True)
        r.kind, r.special = Kind.ICMP, "setp"
        r.src_width, r.width = w, 1
        r.attrs = {"pred": _CMP[key], "ptx_cmp": cmp}
        return r
    return opaque(root not in _QUIET and types != ["pred"])


#: kinds whose integer immediates are read as the operation's type sees them (:func:`norm_imms`)
NORM_KINDS = frozenset(
    {Kind.ADD, Kind.SUB, Kind.MUL, Kind.MULHI, Kind.MAD, Kind.MULWIDE, Kind.MADWIDE, Kind.AND, Kind.OR, Kind.XOR,
     Kind.DIV, Kind.REM, Kind.MIN, Kind.MAX, Kind.NEG, Kind.SHL, Kind.LSHR, Kind.ASHR, Kind.ICMP, Kind.SELECT,
     Kind.CONST}
)  # fmt: skip


def norm_int(v: int, w: int, signed: bool | None) -> int:
    """A PTX immediate as the operation sees it: PTX immediates are 64-bit and are cut to the
    operand's type, so ``mul.hi.u32 %r, %r, -1431655765`` multiplies by 2863311531.  ``.u`` types
    give the unsigned value, ``.s`` the signed one; ``.b`` types keep the spelling unless it does not
    fit in the width either way."""
    if w <= 0 or w > 64:
        return v
    m = 1 << w
    if signed is False:
        return v % m
    if signed is None and -(m >> 1) <= v < m:
        return v
    v %= m
    return v - m if v >= m >> 1 else v


def norm_imms(kind: Kind, operands: list[Any], width: int, src_width: int | None, signed: bool | None) -> list[Any]:
    out = operands
    for k, v in enumerate(operands):
        if type(v) is not int:
            continue
        if kind is Kind.ICMP or ((kind is Kind.MULWIDE or kind is Kind.MADWIDE) and k < 2):
            w = src_width or width
        elif kind is Kind.SELECT and k == 0:
            continue
        elif (kind is Kind.SHL or kind is Kind.LSHR or kind is Kind.ASHR) and k == 1:
            w, sg = 32, False  # shift amounts are .u32
            nv = norm_int(v, w, sg)
            if nv != v:
                out = list(out) if out is operands else out
                out[k] = nv
            continue
        else:
            w = width
        nv = norm_int(v, w, signed)
        if nv != v:
            if out is operands:
                out = list(operands)
            out[k] = nv
    return out
