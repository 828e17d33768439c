"""PTX syntax tree (:mod:`irscan.frontend.ptx.ast`) -> :class:`irscan.ir.Module`, the vocabulary both IRs share.

:func:`lower` walks the tree once: module attributes (version, target, globals, the ``.file``
table), functions and their params (with byte sizes), blocks and control flow (labels, branches,
fall-through), ``.loc`` -> :class:`~irscan.ir.Loc`, and each instruction as an :class:`~irscan.ir.Op`
(:func:`irscan.frontend.ptx.instr.lower_instr`: kind, width, signedness, flattened operands, address
spaces, immediates as the instruction's type sees them).

Names declared in nested ``{ }`` scopes are renamed ``name@N`` so that registers and labels are unique
per function (:mod:`irscan.frontend.ptx.names`); ``Op.text`` keeps the text as written.  Scopes nest to
any depth: the walk keeps them on an explicit stack, never Python's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from irscan.frontend.ptx.ast import (
    AddressSize,
    DeclName,
    FileDir,
    Func,
    Instr,
    Label,
    LocDir,
    ParamDecl,
    PtxAst,
    Scope,
    Target,
    VarDecl,
    Version,
)
from irscan.frontend.ptx.idioms import NarrowingIdioms
from irscan.frontend.ptx.instr import lower_instr
from irscan.frontend.ptx.names import FunctionNames
from irscan.frontend.ptx.opcodes import TYPE_BYTES
from irscan.ir import Block, Function, Kind, Loc, Module, Op, Param, ParamField, Successor


class _Lowerer:
    def __init__(self, ast: PtxAst) -> None:
        self.ast = ast
        self.mod = Module("ptx", ast.path)
        self.next_id = 0
        self.files: dict[int, str] = {}
        self.loc_cache: dict[tuple[int, int, int], Loc | None] = {}
        # per function (set by function())
        self.fn = Function("", False, [], [], {}, 0)
        self.names = FunctionNames()
        self.params: dict[str, Param] = {}
        self.cur_loc: Loc | None = None
        self.block = Block("entry")
        self.after_term = False
        self.idioms = NarrowingIdioms()  # PTX spellings of trunc + ext (irscan/frontend/ptx/idioms.py)
        self.idiom_block: Block | None = None

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
        self.fn, self.names, self.params = fn, FunctionNames(), {p.name: p for p in fn.params}
        self.cur_loc = None
        self.block = Block("entry")
        fn.blocks.append(self.block)
        self.after_term = False
        self.walk(f.body or [])
        self.finish_blocks(fn)
        return fn

    def walk(self, body: list[Any]) -> None:
        """The statements in order; a nested scope's iterator is pushed, and popped when it runs out."""
        names = self.names
        stack: list[Iterator[Any]] = [iter(body)]
        while stack:
            for st in stack[-1]:
                if isinstance(st, Instr):
                    self.instr(st)
                elif isinstance(st, LocDir):
                    self.cur_loc = self.loc((st.file, st.line, st.col))
                elif isinstance(st, Label):
                    self.label(names.rename(st.name))
                elif isinstance(st, VarDecl):
                    if st.space == ".reg":
                        vec = next((int(a[2:]) for a in st.attrs if a in (".v2", ".v4")), 1)
                        for n in st.names:
                            names.declare(n.name, n.range, vec)
                elif isinstance(st, Scope):
                    # labels are local to their scope too, and branches may jump forward to them
                    names.open_scope({x.name for x in st.body if isinstance(x, Label)})
                    stack.append(iter(st.body))
                    break
            else:
                stack.pop()
                if stack:  # the body that ran out was a nested scope's
                    names.close_scope()

    def label(self, name: str) -> None:
        nb = Block(name)
        self.fn.blocks.append(nb)
        self.block = nb
        self.after_term = False

    def finish_blocks(self, fn: Function) -> None:
        blocks = fn.blocks
        labels = {b.label for b in blocks}
        any_label: list[Successor] | None = None  # brx.idx may go to any label: one list, shared
        n = len(blocks)
        for i, b in enumerate(blocks):
            last = b.ops[-1] if b.ops else None
            if last is not None and last.kind is Kind.BRANCH:
                tg = last.attrs.get("target")
                if tg is not None:
                    b.succs = [Successor(tg)] if tg in labels else []
                else:
                    if any_label is None:
                        any_label = [Successor(x) for x in sorted(labels - {"entry"})]
                    b.succs = any_label
                b.falls_through = last.pred is not None and i + 1 < n
            elif last is not None and last.kind is Kind.RETURN:
                b.falls_through = last.pred is not None and i + 1 < n
            else:
                b.falls_through = i + 1 < n
            for op in b.ops:
                op.block = i

    # -- instructions
    def instr(self, st: Instr) -> None:
        op, count = lower_instr(st, self.names, self.params, self.next_id, self.cur_loc)
        self.next_id += 1
        if self.after_term:
            nb = Block(f".bb{len(self.fn.blocks)}")  # '.' cannot start a PTX label: no clash
            self.fn.blocks.append(nb)
            self.block = nb
            self.after_term = False
        if self.block is not self.idiom_block:  # the narrowing idioms are matched within a block
            self.idioms.new_block()
            self.idiom_block = self.block
        out = [x for one in _param_elements(op, self._new_id) for x in self.idioms.lower(one, self._new_id)]
        self.block.ops.extend(out)
        if op.kind is Kind.BRANCH or op.kind is Kind.RETURN:
            self.after_term = True
        if count and out[0] is op:
            self.mod.opaque[op.name] = self.mod.opaque.get(op.name, 0) + 1

    def _new_id(self) -> int:
        self.next_id += 1
        return self.next_id - 1


def _param_elements(op: Op, new_id: Callable[[], int]) -> list[Op]:
    """``ld.param.v2.b32 {%r70, %r71}, [p+8]`` as two reads, of p+8 and p+12: each register is its own
    parameter field (a shape and a stride, say); as one op both would read the field at p+8."""
    f = op.attrs.get("field")
    if op.kind is not Kind.ARG or not isinstance(f, ParamField) or len(op.results) < 2:
        return [op]
    size = int(op.attrs.get("elem_size", max(1, op.width // 8)))
    out = []
    for i, r in enumerate(op.results):
        attrs = {k: v for k, v in op.attrs.items() if k not in ("vec", "elem_size")}
        attrs["field"] = ParamField(f.param, f.offset + i * size, f.width)
        out.append(replace(op, id=op.id if i == 0 else new_id(), results=(r,), attrs=attrs))
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
