"""PTX syntax tree (:mod:`irscan.frontend.ptx.ast`) -> :class:`irscan.ir.Module`, the vocabulary both IRs share.

:func:`lower` walks the tree once: module attributes (version, target, globals, the ``.file``
table), functions and their params (with byte sizes), blocks and control flow (labels, branches,
fall-through), ``.loc`` -> :class:`~irscan.ir.Loc`, and each instruction as an :class:`~irscan.ir.Op`
whose kind, width and signedness come from :func:`irscan.frontend.ptx.opcodes.opcode_rule`.  Operands are
flattened (``[%rd4+16]`` -> ``"%rd4"`` with ``attrs["disp"]``), state spaces given to addresses,
integer immediates read as the instruction's type sees them (``mul.hi.u32 .., -1431655765`` ->
2863311531); ``Op.flags`` holds the opcode's modifiers.

Names declared in nested ``{ }`` scopes (inline asm: ``.reg .pred P1; LAB_WAIT: ... DONE:``) are
local to that scope in PTX, and the same names recur in every copy of the asm.  :func:`lower` renames
them ``name@N`` (N = the scope's serial number in the function; ``abcd@3.x`` for a component of a
``.v4`` register) so that registers and labels are unique per function; ``Op.text`` keeps the text
as written.  A whole ``.v2``/``.v4`` register used as an operand becomes its components.
"""

from __future__ import annotations

import re
from typing import Any

from irscan import ir
from irscan.frontend.ptx.ast import (
    Addr,
    AddressSize,
    DeclName,
    Dual,
    FileDir,
    Func,
    Imm,
    Instr,
    Label,
    LocDir,
    Neg,
    ParamDecl,
    Paren,
    PtxAst,
    Scope,
    SymOff,
    Target,
    VarDecl,
    Vec,
    Version,
)
from irscan.frontend.ptx.opcodes import (
    NORM_KINDS,
    SREGS_OPEN,
    TYPE_BYTES,
    OpcodeRule,
    norm_imms,
    norm_int,
    opcode_rule,
)
from irscan.ir import SREG_RANGES, AddressSpace, Block, Function, Kind, Loc, Module, Op, Param, ParamField, Successor
from irscan.ir.spaces import from_ptx


class _FnCtx:
    """Per-function state while lowering: declared registers (with scope renaming), params, labels."""

    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self.params = {p.name: p for p in fn.params}
        self.regs: set[str] = set()
        self.ranges: dict[str, int] = {}  # "%r" -> 8 for %r<8>  ("tmp_@3" -> 4 in scope 3)
        #: one per open nested scope: (serial, plain names declared there, range prefixes declared there)
        self.scopes: list[tuple[int, set[str], set[str]]] = []
        self.serial = 0
        self.is_reg_cache: dict[str, bool] = {}
        self.vecs: dict[str, tuple[str, ...]] = {}  # .v4 register -> its components ("abcd.x", ...)

    def declare(self, name: str, rng: int | None, vec: int = 1) -> None:
        if self.scopes:
            serial, plain, prefixes = self.scopes[-1]
            (plain if rng is None else prefixes).add(name)
            name = f"{name}@{serial}"
        if rng is None:
            self.regs.add(name)
            if vec > 1:
                self.vecs[name] = tuple(f"{name}.{c}" for c in "xyzw"[:vec])
        else:
            self.ranges[name] = rng
        self.is_reg_cache.clear()

    def rename(self, name: str) -> str:
        """The function-unique name of ``name`` as seen from the innermost open scope."""
        comp = ""
        if len(name) > 2 and name[-2] == "." and name[-1] in "xyzw":
            name, comp = name[:-2], name[-2:]
        for serial, plain, prefixes in reversed(self.scopes):
            if name in plain:
                return f"{name}@{serial}{comp}"
            if prefixes:
                m = _TRAILING_NUM.match(name)
                if m and m.group(1) in prefixes:
                    return f"{name}@{serial}{comp}"
        return name + comp

    def is_reg(self, name: str) -> bool:
        try:
            return self.is_reg_cache[name]
        except KeyError:
            pass
        key = name
        if len(name) > 2 and name[-2] == "." and name[-1] in "xyzw":
            name = name[:-2]
        v = name in self.regs
        if not v:
            base, at, tag = name.partition("@")
            m = _TRAILING_NUM.match(base)
            if m:
                n = self.ranges.get(m.group(1) + at + tag)
                v = n is not None and int(m.group(2)) < n
        self.is_reg_cache[key] = v
        return v


_TRAILING_NUM = re.compile(r"(.*?)(\d+)$")


class _Lowerer:
    def __init__(self, ast: PtxAst) -> None:
        self.ast = ast
        self.mod = Module("ptx", ast.path)
        self.next_id = 0
        self.files: dict[int, str] = {}
        self.loc_cache: dict[tuple[int, int, int], Loc | None] = {}

    def run(self) -> Module:
        mod = self.mod
        for it in self.ast.items:
            if isinstance(it, Version):
                mod.attrs["version"] = it.text
            elif isinstance(it, Target):
                mod.attrs["target"] = it.names[0]
                if len(it.names) > 1:
                    mod.attrs["target_options"] = list(it.names[1:])
            elif isinstance(it, AddressSize):
                mod.attrs["address_size"] = it.size
            elif isinstance(it, FileDir):
                self.files[it.index] = _unquote(it.name)
            elif isinstance(it, VarDecl):
                mod.attrs.setdefault("globals", {}).update(
                    {n.name: {"space": it.space[1:], "decl": _decl_text(it, n)} for n in it.names}
                )
        # (NVVM prints the .file table after the code: it was read above, before any function)
        for it in self.ast.items:
            if isinstance(it, Func) and it.body is not None:
                mod.functions.append(self.function(it))
            elif isinstance(it, Func):
                mod.attrs.setdefault("declarations", []).append(it.name)
        return mod

    def loc(self, key: tuple[int, int, int]) -> Loc | None:
        try:
            return self.loc_cache[key]
        except KeyError:
            f, line, col = key
            v = Loc(self.files.get(f, f"<file {f}>"), line, col) if line > 0 else None
            self.loc_cache[key] = v
            return v

    # -- functions
    def function(self, f: Func) -> Function:
        params = [Param(p.name, p.text(), i, _param_size(p)) for i, p in enumerate(f.params or ())]
        fn = Function(f.name, f.kind == ".entry", params, [], {}, f.line)
        for name, vals in f.perf:
            key = name[1:]
            if key in ("reqntid", "maxntid", "reqnctapercluster"):
                fn.attrs[key] = tuple(vals) + (1,) * (3 - len(vals))
            elif not vals:
                fn.attrs[key] = True
            else:
                fn.attrs[key] = vals[0] if len(vals) == 1 else tuple(vals)
        if f.linkage:
            fn.attrs["linkage"] = f.linkage
        self.ctx = _FnCtx(fn)
        self.cur_loc: Loc | None = None
        self.block = Block("entry")
        fn.blocks.append(self.block)
        self.after_term = False
        self.walk(f.body or [])
        self.finish_blocks(fn)
        return fn

    def walk(self, body: list[Any]) -> None:
        ctx = self.ctx
        for st in body:
            t = type(st)
            if t is Instr:
                self.instr(st)
            elif t is LocDir:
                self.cur_loc = self.loc((st.file, st.line, st.col))
            elif t is Label:
                self.label(ctx.rename(st.name))
            elif t is VarDecl:
                if st.space == ".reg":
                    vec = next((int(a[2:]) for a in st.attrs if a in (".v2", ".v4")), 1)
                    for n in st.names:
                        ctx.declare(n.name, n.range, vec)
            elif t is Scope:
                ctx.serial += 1
                # labels are local to their scope too, and branches may jump forward to them
                labels = {x.name for x in st.body if type(x) is Label}
                ctx.scopes.append((ctx.serial, labels, set()))
                self.walk(st.body)
                ctx.scopes.pop()

    def label(self, name: str) -> None:
        nb = Block(name)
        self.ctx.fn.blocks.append(nb)
        self.block = nb
        self.after_term = False

    def finish_blocks(self, fn: Function) -> None:
        blocks = fn.blocks
        labels = {b.label for b in blocks}
        n = len(blocks)
        for i, b in enumerate(blocks):
            last = b.ops[-1] if b.ops else None
            if last is not None and last.kind is Kind.BRANCH:
                tg = last.attrs.get("target")
                targets = [tg] if tg is not None else sorted(labels - {"entry"})  # brx.idx: any label
                b.succs = [Successor(x) for x in targets if x in labels]
                b.falls_through = last.pred is not None and i + 1 < n
            elif last is not None and last.kind is Kind.RETURN:
                b.falls_through = last.pred is not None and i + 1 < n
            else:
                b.falls_through = i + 1 < n
            for op in b.ops:
                op.block = i

    # -- instructions
    def instr(self, st: Instr) -> None:
        op, count = self.lower_instr(st)
        if self.after_term:
            nb = Block(f".bb{len(self.ctx.fn.blocks)}")  # '.' cannot start a PTX label: no clash
            self.ctx.fn.blocks.append(nb)
            self.block = nb
            self.after_term = False
        self.block.ops.append(op)
        if op.kind is Kind.BRANCH or op.kind is Kind.RETURN:
            self.after_term = True
        if count:
            self.mod.opaque[op.name] = self.mod.opaque.get(op.name, 0) + 1

    def lower_instr(self, st: Instr) -> tuple[Op, bool]:
        ctx = self.ctx
        r = opcode_rule(st.opcode)
        ops = st.operands
        renaming = bool(ctx.scopes)
        pred = st.pred
        if pred is not None and renaming:
            pred = ("!" if pred[0] == "!" else "") + ctx.rename(pred.lstrip("!"))
        attrs: dict[str, Any] = dict(r.attrs) if r.attrs else {}
        sp = r.special
        # -- results: the first operand, unless the opcode has none or it is an [address]
        results: tuple[str, ...] = ()
        src = ops
        if r.dest is not False and ops and sp != "call" and sp != "bra":
            d = ops[0]
            td = type(d)
            if td is str:
                results, src = ((d,) if d != "_" else ()), ops[1:]
            elif td is Dual:
                results, src = tuple(x for x in (d.a, d.b) if x != "_"), ops[1:]
            elif td is Vec:
                results, src = tuple(x for x in d.elems if type(x) is str and x != "_"), ops[1:]
            if renaming and results:
                results = tuple(ctx.rename(x) for x in results)
            if ctx.vecs and any(x in ctx.vecs for x in results):
                results = tuple(c for x in results for c in ctx.vecs.get(x, (x,)))
        # -- operands, flattened; address operands become their base
        operands: list[Any] = []
        addrs: list[tuple[int, Addr]] = []
        rest = src
        if not renaming and not ctx.vecs:  # the common case first: registers and integers only
            for o in src:
                t = type(o)
                if t is str:
                    operands.append(o)
                elif t is Imm:
                    operands.append(o.value if o.value is not None else o.text)
                else:
                    operands = []
                    break
            else:
                rest = ()
        if rest:
            negs: list[int] = []
            self.flatten(src, operands, addrs, negs, renaming)
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
            addr, space = self.addresses(r, addrs, attrs)
        elif kind is Kind.MEMOP:
            kind = Kind.OPAQUE

        if sp == "mov":
            s0 = src[0] if len(src) == 1 else None
            ts = type(s0)
            if ops and type(ops[0]) is Vec or ts is Vec or s0 is None or len(results) != 1:
                kind, count = Kind.OPAQUE, True
                attrs["note"] = "unpack" if ops and type(ops[0]) is Vec else "pack"
            elif ts is Imm:
                kind = Kind.CONST
                if s0.value is not None:
                    attrs["value"] = s0.value
            elif ts is str:
                name = s0[1:] if s0[0] == "%" else ""
                if name in SREG_RANGES or name in SREGS_OPEN or name.startswith("envreg"):
                    kind = Kind.SREG
                    attrs["sreg"] = name
                    rg = SREG_RANGES.get(name)
                    if rg is not None:
                        attrs["range"] = rg
                    operands = []
                elif not ctx.is_reg(operands[0]):
                    attrs["symbol"] = True  # the address of a global / shared / param symbol
            elif ts is SymOff:
                attrs["symbol"] = True
                attrs["disp"] = s0.off
        elif sp == "ld" and space is AddressSpace.PARAM and attrs.get("symbol") and operands[addr] in ctx.params:
            p = ctx.params[operands[addr]]
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
            elif operands and type(operands[-1]) is str:
                attrs["target"] = operands.pop()
        elif sp == "call":
            operands = self.call(ops, attrs, renaming)
        elif sp == "cvta":
            if operands and type(operands[0]) is str and not ctx.is_reg(operands[0]):
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
            self.next_id, kind, st.opcode, results, tuple(operands), width, src_width, signed, r.flags, attrs,
            addr, space, self.cur_loc, st.line, st.text, 0, pred,
        )  # fmt: skip
        self.next_id += 1
        return op, count and kind is Kind.OPAQUE

    def flatten(
        self, src: tuple[Any, ...], out: list[Any], addrs: list[tuple[int, Addr]], negs: list[int], renaming: bool
    ) -> None:
        rn = self.ctx.rename if renaming else None
        vecs = self.ctx.vecs
        for o in src:
            t = type(o)
            if t is str:
                if rn:
                    o = rn(o)
                if vecs and o in vecs:
                    out.extend(vecs[o])  # a whole .v4 register: its four components
                else:
                    out.append(o)
            elif t is Imm:
                out.append(o.value if o.value is not None else o.text)
            elif t is Addr:
                addrs.append((len(out), o))
                b = o.base
                out.append(b.value if type(b) is Imm else (rn(b) if rn else b))
                if o.extra:
                    self.flatten(o.extra, out, [], negs, renaming)
            elif t is Vec or t is Paren:
                self.flatten(o.elems, out, addrs, negs, renaming)
            elif t is Neg:
                negs.append(len(out))
                out.append(rn(o.name) if rn else o.name)
            elif t is Dual:
                out.append(o.a)
                out.append(o.b)
            elif t is SymOff:
                out.append(o.name)

    def addresses(
        self, r: OpcodeRule, addrs: list[tuple[int, Addr]], attrs: dict[str, Any]
    ) -> tuple[int, AddressSpace]:
        """Give each [address] its state space (in the order the opcode names them) and pick the one the
        analysis follows: the first global one, else the first."""
        infos = []
        for k, (idx, a) in enumerate(addrs):
            if k < len(r.spaces):
                full = r.spaces[k]
            elif r.root == "tcgen05" and not r.spaces:
                full = "tmem"
            elif k == 0:
                full = "generic"
            else:
                full = "shared" if r.spaces else "generic"  # the trailing [mbarrier] of TMA / st.async
            b = a.base
            sym = type(b) is str and not self.ctx.is_reg(b)
            infos.append((idx, full, a.disp, sym))
        pick = next((k for k, inf in enumerate(infos) if inf[1].startswith("global")), 0)
        idx, full, disp, sym = infos[pick]
        base_space = full.split("::")[0]
        if full != base_space:
            attrs["space_qual"] = full
        if disp:
            attrs["disp"] = disp
        if sym:
            attrs["symbol"] = True
        if len(infos) > 1:
            attrs["addrs"] = tuple((i, f.split("::")[0], d, s) for i, f, d, s in infos)
        return idx, from_ptx(full)

    def call(self, ops: tuple[Any, ...], attrs: dict[str, Any], renaming: bool) -> list[Any]:
        """``call (ret), f, (a, b), proto`` -> operands (f, a, b); the rest in attrs."""
        rest = list(ops)
        rets: tuple[Any, ...] = ()
        if rest and type(rest[0]) is Paren:
            rets = rest.pop(0).elems
        out: list[Any] = []
        if rest:
            callee = rest[0]
            attrs["callee"] = callee if type(callee) is str else str(callee)
            out.append(self.ctx.rename(callee) if renaming and type(callee) is str else callee)
        if len(rest) > 1 and type(rest[1]) is Paren:
            args = rest[1].elems
            attrs["args"] = tuple(str(x) for x in args)
            self.flatten(args, out, [], [], renaming)
        if len(rest) > 2:
            attrs["prototype"] = str(rest[2])
        attrs["retvals"] = tuple(str(x) for x in rets)
        return out


def _unquote(s: str) -> str:
    if len(s) >= 2 and s[0] == '"' and s[-1] == '"':
        return re.sub(r"\\(.)", r"\1", s[1:-1])
    return s


def _param_size(p: ParamDecl) -> int | None:
    size = None
    vec = 1
    for a in p.attrs:
        a2 = a[1:]
        if a2 in TYPE_BYTES:
            size = TYPE_BYTES[a2]
        elif a2 in ("v2", "v4", "v8"):
            vec = int(a2[1:])
    if size is None:
        return None
    size *= vec
    for d in p.dims:
        if d is None:
            return None
        size *= d
    return size


def _decl_text(d: VarDecl, n: DeclName) -> str:
    dims = "".join(f"[{'' if x is None else x}]" for x in n.dims)
    return " ".join((*d.linkage, d.space, *d.attrs, n.name + dims))


def lower(ast: PtxAst) -> Module:
    """Syntax tree -> the shared vocabulary."""
    return _Lowerer(ast).run()
