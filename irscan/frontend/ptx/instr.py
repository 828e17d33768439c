"""One PTX instruction (:class:`irscan.frontend.ptx.ast.Instr`) -> one :class:`irscan.ir.Op`.

The opcode's meaning comes from :func:`irscan.frontend.ptx.opcodes.opcode_rule` (kind, width,
signedness, whether the first operand is a result, the state spaces it names); this module applies it
to the operands: results split off, operands flattened (``[%rd4+16]`` -> ``"%rd4"`` with
``attrs["disp"]``, a whole ``.v4`` register -> its components, names renamed per scope), each
``[address]`` given its role and state space (:mod:`irscan.frontend.ptx.memroles`), and the special
forms (``mov`` of a special register or a symbol, ``ld.param`` of a kernel parameter, ``selp``,
``bra``, ``call``, ``cvta``) read.  Integer immediates are read as the instruction's type sees them.

Operands nest at most three levels (an address holding a vector, inside parentheses: the grammar has
no parentheses in parentheses), so :func:`_flatten` may recurse.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from irscan import ir
from irscan.frontend.ptx.ast import Addr, AstOperand, Dual, Imm, Instr, Neg, Paren, SymOff, Vec
from irscan.frontend.ptx.memroles import address_roles
from irscan.frontend.ptx.names import FunctionNames
from irscan.frontend.ptx.opcodes import NORM_KINDS, SREGS_OPEN, norm_imms, norm_int, opcode_rule
from irscan.ir import SREG_RANGES, AddressSpace, Kind, Loc, Op, Param, ParamField


def lower_instr(
    st: Instr, names: FunctionNames, params: dict[str, Param], op_id: int, loc: Loc | None
) -> tuple[Op, bool]:
    """The op, and whether it is an OPAQUE op worth counting in :attr:`irscan.ir.Module.opaque`."""
    r = opcode_rule(st.opcode)
    ops = st.operands
    renaming = names.scoped
    pred = st.pred
    if pred is not None and renaming:
        pred = ("!" if pred[0] == "!" else "") + names.rename(pred.lstrip("!"))
    attrs: dict[str, Any] = dict(r.attrs) if r.attrs else {}
    sp = r.special
    # -- results: the first operand, unless the opcode has none or it is an [address]
    results: tuple[str, ...] = ()
    src = ops
    if r.dest is not False and ops and sp != "call" and sp != "bra":
        d = ops[0]
        if isinstance(d, str):
            results, src = ((d,) if d != "_" else ()), ops[1:]
        elif isinstance(d, Dual):
            results, src = tuple(x for x in (d.a, d.b) if x != "_"), ops[1:]
        elif isinstance(d, Vec):
            results, src = tuple(x for x in d.elems if isinstance(x, str) and x != "_"), ops[1:]
        if renaming and results:
            results = tuple(names.rename(x) for x in results)
        vecs = names.vecs
        if vecs and any(x in vecs for x in results):
            results = tuple(c for x in results for c in vecs.get(x, (x,)))
    # -- operands, flattened; address operands become their base
    operands: list[Any] = []
    addrs: list[tuple[int, Addr]] = []
    simple = not renaming and not names.vecs
    if simple:  # the common case first: registers and integers only
        for o in src:
            if isinstance(o, str):
                operands.append(o)
            elif isinstance(o, Imm):
                operands.append(o.value if o.value is not None else o.text)
            else:
                operands = []
                simple = False
                break
    if not simple and src:
        negs: list[int] = []
        _flatten(src, names, operands, addrs, negs, renaming)
        if negs:
            attrs["negated"] = tuple(negs)
    kind = r.kind
    width, src_width, signed = r.width, r.src_width, r.signed
    addr: int | None = None
    space: AddressSpace | None = None
    count = r.count
    if addrs:
        if kind is Kind.OPAQUE:
            kind, count = Kind.MEMOP, False
        addr, space = address_roles(r, st.opcode, addrs, names, attrs)
    elif kind is Kind.MEMOP:
        kind = Kind.OPAQUE

    if sp == "mov":
        s0 = src[0] if len(src) == 1 else None
        if (ops and isinstance(ops[0], Vec)) or isinstance(s0, Vec) or s0 is None or len(results) != 1:
            kind, count = Kind.OPAQUE, True
            attrs["note"] = "unpack" if ops and isinstance(ops[0], Vec) else "pack"
        elif isinstance(s0, Imm):
            kind = Kind.CONST
            if s0.value is not None:
                attrs["value"] = s0.value
        elif isinstance(s0, str):
            name = s0[1:] if s0[0] == "%" else ""
            if name in SREG_RANGES or name in SREGS_OPEN or name.startswith("envreg"):
                kind = Kind.SREG
                attrs["sreg"] = name
                rg = SREG_RANGES.get(name)
                if rg is not None:
                    attrs["range"] = rg
                operands = []
            elif not names.is_reg(operands[0]):
                attrs["symbol"] = True  # the address of a global / shared / param symbol
        elif isinstance(s0, SymOff):
            attrs["symbol"] = True
            attrs["disp"] = s0.off
    elif (
        sp == "ld"
        and space is AddressSpace.PARAM
        and addr is not None
        and attrs.get("symbol")
        and operands[addr] in params
    ):
        p = params[operands[addr]]
        kind = Kind.ARG
        del attrs["symbol"]
        attrs["param"] = p.index
        attrs["field"] = ParamField(p.index, attrs.pop("disp", 0), width)
        attrs["param_size"] = p.size
        if r.vec > 1:
            attrs["vec"] = r.vec
            attrs["elem_size"] = max(1, width // 8)
        addr, space = None, None
    elif sp == "selp":
        if len(operands) == 3:
            operands = [operands[2], operands[0], operands[1]]
    elif sp == "bra":
        if st.opcode.startswith("brx"):
            attrs["indirect"] = True
        elif operands and isinstance(operands[-1], str):
            attrs["target"] = operands.pop()
    elif sp == "call":
        operands = _call(ops, names, attrs, renaming)
    elif sp == "cvta":
        if operands and isinstance(operands[0], str) and not names.is_reg(operands[0]):
            attrs["symbol"] = True
    elif sp in ("ld", "st", "atom", "red") and not addrs:
        kind, count = Kind.OPAQUE, True
    if r.vec > 1 and kind in ir.MEMORY_KINDS:
        attrs["vec"] = r.vec
    if kind in NORM_KINDS:
        operands = norm_imms(kind, operands, width, src_width, signed)
        if kind is Kind.CONST and "value" in attrs:
            attrs["value"] = norm_int(attrs["value"], width, signed)
    op = Op(
        op_id, kind, st.opcode, results, tuple(operands), width, src_width, signed, r.flags, attrs,
        addr, space, loc, st.line, st.text, 0, pred,
    )  # fmt: skip
    return op, count and kind is Kind.OPAQUE


def _flatten(
    src: Iterable[AstOperand],
    names: FunctionNames,
    out: list[Any],
    addrs: list[tuple[int, Addr]],
    negs: list[int],
    renaming: bool,
) -> None:
    """Operands -> ``out`` (names and integers); addresses noted in ``addrs``, ``!%p`` in ``negs``."""
    rn = names.rename if renaming else None
    vecs = names.vecs
    for o in src:
        if isinstance(o, str):
            if rn:
                o = rn(o)
            if vecs and o in vecs:
                out.extend(vecs[o])  # a whole .v4 register: its four components
            else:
                out.append(o)
        elif isinstance(o, Imm):
            out.append(o.value if o.value is not None else o.text)
        elif isinstance(o, Addr):
            addrs.append((len(out), o))
            b = o.base
            out.append(b.value if isinstance(b, Imm) else (rn(b) if rn else b))
            if o.extra:
                _flatten(o.extra, names, out, [], negs, renaming)
        elif isinstance(o, (Vec, Paren)):
            _flatten(o.elems, names, out, addrs, negs, renaming)
        elif isinstance(o, Neg):
            negs.append(len(out))
            out.append(rn(o.name) if rn else o.name)
        elif isinstance(o, Dual):
            out.append(o.a)
            out.append(o.b)
        elif isinstance(o, SymOff):
            out.append(o.name)


def _call(ops: tuple[AstOperand, ...], names: FunctionNames, attrs: dict[str, Any], renaming: bool) -> list[Any]:
    """``call (ret), f, (a, b), proto`` -> operands (f, a, b); the rest in attrs."""
    rest = list(ops)
    rets: tuple[AstOperand, ...] = ()
    if rest and isinstance(rest[0], Paren):
        rets = rest[0].elems
        del rest[0]
    out: list[Any] = []
    if rest:
        callee = rest[0]
        attrs["callee"] = callee if isinstance(callee, str) else str(callee)
        out.append(names.rename(callee) if renaming and isinstance(callee, str) else callee)
    if len(rest) > 1 and isinstance(rest[1], Paren):
        args = rest[1].elems
        attrs["args"] = tuple(str(x) for x in args)
        _flatten(args, names, out, [], [], renaming)
    if len(rest) > 2:
        attrs["prototype"] = str(rest[2])
    attrs["retvals"] = tuple(str(x) for x in rets)
    return out
