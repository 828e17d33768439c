"""The fast path's structure (:mod:`irscan.frontend.mlir.indexer`): block labels, the ops that open
regions (functions, modules, other region ops), the end of a function, and ops outside functions."""

from __future__ import annotations

import dataclasses
from collections import Counter

from irscan import ir
from irscan.frontend.mlir import spec_store
from irscan.frontend.mlir.grammar_lazy import grammar
from irscan.frontend.mlir.header import function_from_header
from irscan.frontend.mlir.semantics import (
    finish_function,
)
from irscan.frontend.mlir.soup import soup_rtypes
from irscan.frontend.mlir.templates import (
    _LABEL,
    _NAME,
    HCACHE,
    NeedFullParse,
    SpecSource,
    _bad_char,
)
from irscan.frontend.mlir.types import Ty
from irscan.frontend.text import balanced, strip_strings

#: the ops that hold functions: one written on a single line is an error at its first function (or,
#: holding none, left to the grammar)
_MODULES = frozenset({"module", "builtin.module", "gpu.module"})


class _Frame:
    __slots__ = ("kind", "line", "fn", "arg_types", "post", "gpu", "name")

    def __init__(self, kind: str, line: int, name: str, gpu: bool, fn: ir.Function | None = None) -> None:
        self.kind, self.line, self.name, self.gpu, self.fn = kind, line, name, gpu, fn
        self.arg_types: dict[str, str] = {}
        self.post: list[ir.Op] = []


class Outline(SpecSource):
    """Region and function bookkeeping of the indexer (``module``, ``structure``, ``opaque``: its own)."""

    module: ir.Module
    structure: list[tuple[int, str, tuple[str, ...]]]
    opaque: Counter[str]

    def block_label(self, s: str, raw: str, lineno: int, types: dict[str, str]) -> ir.Block:
        k = s.rfind("  //")
        lab = s[:k].rstrip() if k > 0 else s
        m = _LABEL.fullmatch(lab)
        if m is None:
            raise self.fail(lineno, raw, raw.find(s), s, "bad block label")
        arg_names: list[str] = []
        arg_tys: list[Ty] = []
        if m.group(2):
            try:
                arg_tys, arg_names = self.label_args(m.group(2))
            except Exception as exc:
                g = grammar()
                if not isinstance(exc, g.UnexpectedInput):
                    raise
                raise g.syntax_error(self.path, lab, exc, line=lineno, col_offset=raw.find(s)) from None
            for n_, t_ in zip(arg_names, arg_tys, strict=False):
                types[n_] = t_.text
        return ir.Block(m.group(1), tuple(arg_names), tuple(t.int_width for t in arg_tys))

    # --------------------------------------------------------------------------- regions

    def header_function(self, header: str, lineno: int, col: int, gpu: bool, has_body: bool) -> ir.Function:
        """The function an ``llvm.func`` header (``col``: where it starts on its line) declares; the
        grammar parses each distinct header once (:data:`HCACHE`)."""
        key = (header, gpu, has_body)
        tmpl = HCACHE.get(key) or spec_store.get("h", key)
        if tmpl is None:
            g = grammar()
            try:
                rop = g.parse(header, "op")
            except g.UnexpectedInput as exc:
                raise g.syntax_error(self.path, header, exc, line=lineno, col_offset=col) from None
            tmpl = function_from_header(rop.body, 0, gpu, has_body=has_body)
            spec_store.put("h", key, tmpl)
        HCACHE[key] = tmpl
        params = [dataclasses.replace(p) for p in tmpl.params]
        return ir.Function(tmpl.name, tmpl.kernel, params, [], dict(tmpl.attrs), lineno)

    def open_region(self, body: str, lineno: int, raw: str, stack: list[_Frame]) -> None:
        nm = _NAME.match(body)
        name = nm.group(0) if nm else body[1 : body.find('"', 1)]
        gpu = bool(stack) and stack[-1].gpu
        if name == "llvm.func":
            fn = self.header_function(body[:-1].rstrip(), lineno, raw.find(body), gpu, True)
            fn.blocks.append(ir.Block("^bb0"))
            fr = _Frame("func", lineno, name, gpu, fn)
            fr.arg_types = {p.name: p.type for p in fn.params}
            self.structure.append((lineno, "llvm.func", ()))
            self.module.functions.append(fn)
            stack.append(fr)
            return
        if stack and stack[-1].kind == "func":
            raise NeedFullParse(f"line {lineno}: a region op inside a function")
        self.structure.append((lineno, name, ()))
        stack.append(_Frame("other", lineno, name, gpu or name == "gpu.module"))

    def close_function(self, fr: _Frame, loc: str | None, types: dict[str, str]) -> None:
        fn = fr.fn
        assert fn is not None
        # the location text for now: resolved with the ops' locations after the loop
        fn.loc = loc  # type: ignore[assignment]
        finish_function(types, fr.post, self.opaque)

    def top_level_op(
        self, name: str, body: str, results: tuple[str, ...], loc: str | None, lineno: int, raw: str, gpu: bool
    ) -> None:
        if name in _MODULES:  # a whole module on one line (`module { llvm.func @k ... }`): its functions
            # are no top-level ops, and skipping them would report a kernel it never scanned as clean
            at = min((k for k in (body.find("llvm.func"), body.find("gpu.module", 1)) if k > 0), default=-1)
            if at > 0:
                col = raw.find(body) + at + 1
                why = "a module written on one line: irscan reads MLIR as the DSL prints it, one op per line"
                raise ir.IRSyntaxError(self.path, lineno, col, why, ["a line break before this op"])
            raise NeedFullParse(f"line {lineno}: a module on one line")
        if name == "llvm.func":  # a declaration
            fn = self.header_function(body, lineno, raw.find(body), gpu, False)
            fn.loc = loc  # type: ignore[assignment]
            self.structure.append((lineno, "llvm.func", ()))
            self.module.functions.append(fn)
            return
        sb = strip_strings(body) if '"' in body else body
        if not balanced(sb) or _bad_char(sb):
            raise self.fail(lineno, raw, raw.find(body), body, "not an op")
        self.structure.append((lineno, name, soup_rtypes(name, sb, len(results)) or ()))
