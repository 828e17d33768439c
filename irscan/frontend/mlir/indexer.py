"""The fast path of the MLIR front end: a line indexer that feeds the grammar only what it must.

MLIR's printer writes one op per line (``%res = op.name operands : types loc(#locN)``); a region
opens with ``{`` at the end of its op's line and closes with ``}`` on a line of its own.  So a loop
over lines with string methods finds every op, its results, its operand names and its location.
The grammar parses only

* the ops whose details the analysis needs (integer arithmetic, casts, GEP, memory, constants,
  special registers, branches), once per distinct *template*: the op text with its SSA names, block
  labels, constant values and GEP constant indices abstracted (the 9.6k such ops of the FA4 sm_90a
  forward kernel are 145 templates);
* ``llvm.extractvalue`` / ``insertvalue`` are split by a regex, and their aggregate type -- the 64-
  or 128-field struct that is 63 % of FA4's bytes -- is parsed once per distinct type;
* function headers and block-argument lists (templated too).

Every other op keeps its name, operands (every ``%name`` outside string literals, like the grammar's
token soup) and result types read off its trailing type list; a cheap character and bracket check
stands in for the grammar there.  A line the indexer cannot place but that may be valid (a region op
inside a function, text after a region's ``}``) raises :class:`NeedFullParse` and the caller runs the
grammar over the whole module; bad or truncated input raises :class:`irscan.ir.IRSyntaxError` with the
column the grammar finds on that line.  :func:`irscan.frontend.mlir.parse_module` with ``full=True`` is the
oracle this is tested against.  The template caches live as long as the process.
"""

from __future__ import annotations

import gc
from collections import Counter
from typing import Any

from irscan import ir
from irscan.frontend.mlir import spec_store
from irscan.frontend.mlir.grammar_lazy import is_parse_error
from irscan.frontend.mlir.header import finish_module
from irscan.frontend.mlir.locations import (
    LocResolver,
    LocSyntaxError,
    parse_loc_text,
    split_trailing_loc,
)
from irscan.frontend.mlir.outline import Outline, _Frame
from irscan.frontend.mlir.semantics import (
    SREG_PREFIX,
)
from irscan.frontend.mlir.soup import launched_kernel
from irscan.frontend.mlir.templates import (
    _ECACHE,
    _EXTRACT_HEAD,
    _GCACHE,
    _INSERT_HEAD,
    _LCACHE,
    _MISSING,
    _NAME,
    _OP_START,
    _OTHER_RULE_OPS,
    _REF_SPLIT,
    _SSA,
    _TCACHE,
    _TEMPLATE_OPS,
    _UNCACHED_GENERIC,
    NeedFullParse,
    _abstract_literals,
    _bad_char,
    _put_literals,
    _results,
    _template,
)
from irscan.frontend.text import balanced, strip_strings
from irscan.ir import IRSyntaxError


class _Indexer(Outline):
    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.module = ir.Module(ir="mlir", path=path)
        self.structure: list[tuple[int, str, tuple[str, ...]]] = []
        self.opaque: Counter[str] = Counter()
        self.aliases: dict[str, Any] = {}
        self.tcache = _TCACHE
        self.gcache = _GCACHE
        self.ecache = _ECACHE
        self.lcache = _LCACHE
        self.loc_cache: dict[str, Any] = {}
        self.ops: list[ir.Op] = []

    # -------------------------------------------------------------------------------- main

    def _alias_line(self, s: str) -> bool:
        """Record ``#name = ...`` alias lines; False at the first line that is module text."""
        if s.startswith("#"):
            eq = s.find(" = ")
            if eq > 0:
                self.aliases[s[:eq]] = s[eq + 3 :].rstrip()
            return True
        return not (s.strip() and not s.startswith(("!", "//")))

    def prescan_aliases(self, lines: list[str]) -> None:
        """The printer writes ``#loc`` aliases above and below the module: read both ends first, so
        that op locations resolve in the main loop (aliases anywhere else are read there too)."""
        n = len(lines)
        i = 0
        while i < n and self._alias_line(lines[i]):
            i += 1
        j = n - 1
        while j > i and self._alias_line(lines[j]):
            j -= 1

    def run(self) -> ir.Module:
        lines = self.text.split("\n")
        self.prescan_aliases(lines)
        resolver = LocResolver(self.aliases)
        loc_cache = self.loc_cache
        late: list[ir.Op] = []  # ops whose location names an alias not seen yet
        stack: list[_Frame] = []
        fn: ir.Function | None = None
        frame: _Frame | None = None
        block: ir.Block | None = None
        types: dict[str, str] = {}
        bi = 0
        op_new = ir.Op
        template_ops = _TEMPLATE_OPS
        tcache = self.tcache
        gcache = self.gcache
        ssa_find = _SSA.findall
        name_match = _NAME.match
        extract_head = _EXTRACT_HEAD.match
        ref_split = _REF_SPLIT.split
        bad_char = _bad_char
        next_id = 0
        in_meta = False
        lineno = 0
        it = iter(lines)
        for raw in it:
            lineno += 1
            s = raw.strip()
            if not s:
                continue
            if in_meta:  # inside the file-level metadata block `{-# ... #-}`
                if "#-}" in s:
                    in_meta = False
                continue
            first_line = lineno
            if s[-1] == "[":  # an op printed on several lines (llvm.switch cases): join them
                joined = [s]
                last_raw = raw  # the end of input is on the last line read, not on the op's first
                for more in it:
                    lineno += 1
                    last_raw = more
                    joined.append(more.strip())
                    if joined[-1].startswith("]"):
                        break
                else:
                    raise IRSyntaxError(self.path, lineno, len(last_raw) + 1, "unexpected end of input", ["]"])
                first_text = s
                s = " ".join(joined)
            else:
                first_text = None
            c = s[0]
            if c == "%":
                eq = s.find(" = ")
                if eq < 0:
                    raise self.fail(lineno, raw, raw.find(s), s, "an op's results without '='")
                rtext = s[:eq]
                results = (rtext,) if ("," not in rtext and ":" not in rtext) else _results(rtext, len(raw))
                body = s[eq + 3 :]
            elif c in _OP_START:
                results = ()
                body = s
            else:
                # ------------------------------------------------------- not an op line
                if c == "}":
                    if not stack:
                        raise IRSyntaxError(self.path, lineno, raw.find("}") + 1, "unexpected '}'", [])
                    rest, end_loc = split_trailing_loc(s)
                    if rest != "}":
                        raise NeedFullParse(f"line {lineno}: text after a region's end")
                    closed = stack.pop()
                    if closed.kind == "func":
                        self.close_function(closed, end_loc, types)
                        types = {}
                    frame = stack[-1] if stack else None
                    if frame is not None and frame.kind == "func":
                        raise NeedFullParse(f"line {lineno}: a region inside a function")
                    fn, block = None, None
                    continue
                if c == "^":
                    if fn is None or frame is None:
                        raise NeedFullParse(f"line {lineno}: a block label outside a function")
                    block = self.block_label(s, raw, lineno, types)
                    fn.blocks.append(block)
                    bi = len(fn.blocks) - 1
                    continue
                if c == "#" or c == "!":
                    if stack:
                        raise NeedFullParse(f"line {lineno}: an alias definition inside a region")
                    eq = s.find(" = ")
                    if eq < 0:
                        raise self.fail(lineno, raw, 0, s, "bad alias definition")
                    if c == "#":
                        v = s[eq + 3 :]
                        if not (v.endswith(")") or v.endswith(">") or v[-1].isalnum()):
                            raise IRSyntaxError(
                                self.path, lineno, len(raw) + 1, "truncated alias definition", [")", ">"]
                            )
                        self.aliases[s[:eq]] = v
                    continue
                if c == "/" and s.startswith("//"):
                    continue
                if c == "{" and s.startswith("{-#"):
                    in_meta = "#-}" not in s
                    continue
                raise self.fail(lineno, raw, raw.find(s), s, "a line that is not an op")

            # ------------------------------------------------------------------- an op
            if body[-1] == "{":
                self.open_region(body, lineno, raw, stack)
                frame = stack[-1]
                if frame.kind == "func":
                    fn = frame.fn
                    block = fn.blocks[0]  # type: ignore[union-attr]
                    types = frame.arg_types
                    bi = 0
                else:
                    fn, block = None, None
                continue
            if body[0] == '"':
                name = body[1 : body.find('"', 1)]
            else:
                sp = body.find(" ")
                name = body[:sp] if sp > 0 else body
                if "(" in name or "<" in name:
                    nm = name_match(body)
                    if nm is None:
                        raise self.fail(lineno, raw, raw.find(body), body, "no op name")
                    name = nm.group(0)
            loctext = None
            if body[-1] == ")":
                j = body.rfind(" loc(")
                if j >= 0:
                    loctext = body[j + 1 :]
                    body = body[:j].rstrip()
            if block is None:
                # an op outside any function body: module level (globals, declarations)
                self.top_level_op(name, body, results, loctext, lineno, raw, bool(stack) and stack[-1].gpu)
                continue
            lits: Any = None
            if name in template_ops or name.startswith(SREG_PREFIX):
                kbody = body
                if name == "llvm.mlir.constant" or name == "llvm.getelementptr":
                    # integer literals (a constant's value, a GEP's constant indices) are not part of
                    # the template: FA4's 250 such templates become a handful
                    kbody, lits = _abstract_literals(name, body)
                if "^" in kbody or '"' in kbody and name != "llvm.icmp":
                    spec, names = self.template_spec(kbody, lineno, raw, body)
                else:
                    parts = ref_split(kbody)
                    names = parts[1::2]
                    hit = tcache.get("%".join(parts[::2]))
                    spec = hit if hit is not None else self.template_spec(kbody, lineno, raw, body)[0]
                operands = spec.getops(names)
                if spec.succ_idx:
                    for lk, oks in spec.succ_idx:
                        block.succs.append(ir.Successor(names[lk], tuple([names[k] for k in oks])))
            elif name == "llvm.extractvalue" and (m := extract_head(body)) is not None:
                spec = self.extract_spec(m.group(2), body[m.end() :], False, lineno, raw, body)
                operands = (m.group(1),)
            elif name == "llvm.insertvalue" and (m := _INSERT_HEAD.match(body)) is not None:
                spec = self.extract_spec(m.group(3), body[m.end() :], True, lineno, raw, body)
                operands = (m.group(1), m.group(2))
            elif name in _OTHER_RULE_OPS:
                spec, names = self.template_spec(body, lineno, raw)
                operands = spec.getops(names)
            else:
                sb = strip_strings(body) if '"' in body else body
                if not balanced(sb) or bad_char(sb):
                    raise self.fail(lineno, raw, raw.find(body), body, "not an op")
                if name in _UNCACHED_GENERIC:
                    key = (name, len(results), _template(body)[0])
                else:
                    j = sb.rfind(" : ")
                    key = (name, len(results), sb[j:] if j >= 0 else (sb[sb.rfind(" -> ") :] if " -> " in sb else ""))
                hit = gcache.get(key)
                spec = hit if hit is not None else self.generic_spec(name, body, len(results), key)
                operands = tuple(ssa_find(sb))
            loc: Any = None
            if loctext is not None:
                loc = loc_cache.get(loctext, _MISSING)
                if loc is _MISSING:
                    try:
                        loc = resolver.resolve(parse_loc_text(loctext))
                        loc_cache[loctext] = loc
                    except LocSyntaxError:
                        loc = loctext  # an alias not seen yet: resolved after the loop
            op = op_new(
                next_id,
                spec.kind,
                spec.name,
                results,
                operands,
                spec.width,
                spec.src_width,
                spec.signed,
                spec.flags,
                dict(spec.attrs),
                spec.addr,
                spec.space,
                loc,
                first_line,
                (first_text or s)[:300],
                bi,
            )
            next_id += 1
            if lits is not None:
                _put_literals(op, lits)
            if spec.kind is ir.Kind.LAUNCH:  # the launched symbol is the op's own, never its spec's
                op.attrs["kernel"] = launched_kernel(body)
            block.ops.append(op)
            if loc.__class__ is str:
                late.append(op)
            if results:
                rt = spec.attrs["result_types"]
                if rt:
                    if len(results) == 1:
                        types[results[0]] = rt[0]
                    else:
                        for r_, t_ in zip(results, rt, strict=False):
                            types[r_] = t_
            if spec.post:
                frame.post.append(op)  # type: ignore[union-attr]
        if stack:
            last = len(lines)
            while last > 1 and not lines[last - 1].strip():
                last -= 1
            raise IRSyntaxError(
                self.path,
                last,
                len(lines[last - 1]) + 1,
                f"unexpected end of input: the region opened at line {stack[-1].line} is not closed",
                ["}"],
            )
        if in_meta:
            raise IRSyntaxError(self.path, len(lines), 1, "unexpected end of input in file metadata", ["#-}"])
        self.resolve_late(resolver, late)
        return finish_module(self.module, self.opaque, self.structure, "fast")

    # ------------------------------------------------------------------------- locations

    def resolve_late(self, resolver: LocResolver, late: list[ir.Op]) -> None:
        """Locations the main loop could not resolve yet, and the functions' (from their ``}`` line)."""

        lines = self.text.split("\n") if late or self.module.functions else []

        def loc_of(t: str, line: int) -> ir.Loc | None:
            try:
                return resolver.resolve(parse_loc_text(t))
            except LocSyntaxError as exc:
                raw = lines[line - 1] if 0 < line <= len(lines) else ""
                col = raw.rfind("loc(") + 1
                raise IRSyntaxError(self.path, line, col, f"bad location: {exc}", []) from None

        for op in late:
            op.loc = loc_of(op.loc, op.line)  # type: ignore[arg-type]
        for fn in self.module.functions:
            if isinstance(fn.loc, str):
                fn.loc = loc_of(fn.loc, fn.line)


#: failures of the indexer's own reading of a line: the whole-module grammar parse decides instead
_DEFERRED = (LocSyntaxError, ValueError, IndexError, KeyError, AttributeError)


def index_module(text: str, path: str) -> ir.Module:
    """The fast path of :func:`irscan.frontend.mlir.parse_module` (raises :class:`NeedFullParse` to defer)."""
    enabled = gc.isenabled()
    gc.disable()  # ~15k small objects with no cycles: the collector only costs time here
    try:
        module = _Indexer(text, path).run()
    except (IRSyntaxError, NeedFullParse):
        raise
    except Exception as exc:
        if isinstance(exc, _DEFERRED) or is_parse_error(exc):  # the grammar decides
            raise NeedFullParse(f"{type(exc).__name__}: {exc}") from None
        raise
    finally:
        if enabled:
            gc.enable()
    spec_store.save()
    return module
