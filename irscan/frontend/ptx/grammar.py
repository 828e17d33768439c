"""``grammars/ptx.lark`` as the reference PTX parser, and the lexical rules both parsers share.

The grammar (LALR, contextual lexer) is the judge of what PTX text means: :func:`parse_tree` runs it
over a whole text, :func:`lark_parse` over one statement (start symbols ``stmt`` / ``top``) when the
fast path (:mod:`irscan.frontend.ptx.fast`) hands one over.  Either way the lark tree becomes the syntax tree of
:mod:`irscan.frontend.ptx.ast`, and a lark error becomes an :class:`irscan.ir.IRSyntaxError` with the line and
column in the file and the tokens that were expected.

The literal rules live here because the fast path must read text exactly as the grammar does:
integer values (:func:`int_value`), comments blanked (:func:`blank_comments`), an instruction's text
on one line (:func:`one_line`).  :class:`Bail` is how either side says "the grammar must judge this".
lark is imported inside the functions that use it, so text the fast path handles never loads it.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import Any

from irscan.frontend.ptx.ast import (
    Addr,
    AddressSize,
    AstOperand,
    DeclName,
    Dual,
    FileDir,
    Func,
    Generic,
    Imm,
    Instr,
    Label,
    LocDir,
    Neg,
    ParamDecl,
    Paren,
    Pragma,
    PtxAst,
    Scope,
    Section,
    SymOff,
    Target,
    VarDecl,
    Vec,
    Version,
)
from irscan.ir import IRSyntaxError
from irscan.resources import grammar_path

GRAMMAR_PATH = grammar_path("ptx.lark")

# =============================================================================== lexical rules (shared)


class Bail(Exception):
    """The fast path does not know this statement: let the grammar have it."""


@functools.lru_cache(maxsize=4096)
def int_value(text: str) -> int:
    """PTX integer literal (decimal, 0x hex, 0b binary, 0-prefixed octal, optional U, optional -)."""
    t = text[:-1] if text[-1:] in "Uu" else text
    neg = t.startswith("-")
    if neg:
        t = t[1:]
    try:
        if t[:2] in ("0x", "0X"):
            v = int(t[2:], 16)
        elif t[:2] in ("0b", "0B"):
            v = int(t[2:], 2)
        elif len(t) > 1 and t[0] == "0":
            v = int(t, 8)
        else:
            v = int(t)
    except ValueError:
        raise Bail from None  # "0128": the grammar's lexer rejects it, with a position
    return -v if neg else v


_COMMENT_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*[\s\S]*?\*/')


def blank_comments(text: str) -> str:
    """Comments out, strings kept; line and column of everything else unchanged."""
    if "/" not in text:
        return text

    def repl(m: re.Match[str]) -> str:
        s = m.group(0)
        if s[0] == '"':
            return s
        if s[1] == "/":
            return ""
        return re.sub(r"[^\n]", " ", s)

    return _COMMENT_RE.sub(repl, text)


def one_line(text: str) -> str:
    """An instruction written over several lines, as one line (Op.text is one line)."""
    return " ".join(text.split()) if "\n" in text else text


# ============================================================================================ the grammar

_LARK_LOCK = threading.Lock()


@functools.lru_cache(maxsize=1)
def _lark() -> Any:
    from lark import Lark

    with _LARK_LOCK:
        return Lark(
            GRAMMAR_PATH.read_text(),
            parser="lalr",
            lexer="contextual",
            start=["start", "stmt", "top"],
            propagate_positions=True,
            maybe_placeholders=False,
            cache=True,
        )


@functools.lru_cache(maxsize=1)
def _terminal_names() -> dict[str, str]:
    """lark terminal name -> what a reader expects to see (``SEMICOLON`` -> ``';'``)."""
    from lark.lexer import PatternStr

    out = {}
    for t in _lark().terminals:
        out[t.name] = repr(t.pattern.value) if isinstance(t.pattern, PatternStr) else t.name
    out["$END"] = "end of input"
    return out


def _syntax_error(exc: Exception, path: str, text: str, line0: int = 1, col0: int = 1) -> IRSyntaxError:
    """lark's exception -> IRSyntaxError, positions shifted by where ``text`` starts in the file."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

    names = _terminal_names()

    def shift(line: int, col: int) -> tuple[int, int]:
        return line0 + line - 1, (col0 + col - 1 if line == 1 else col)

    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        expected = [names.get(n, n) for n in (exc.accepts or exc.expected)]
        if tok.type == "$END":
            line, col = _end_pos(text)
            line, col = shift(line, col)
            return IRSyntaxError(path, line, col, "unexpected end of input", expected)
        line, col = shift(tok.line, tok.column)
        return IRSyntaxError(path, line, col, f"unexpected {str(tok)!r}", expected)
    if isinstance(exc, UnexpectedCharacters):
        line, col = shift(exc.line, exc.column)
        ch = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else ""
        expected = [names.get(n, n) for n in (exc.allowed or ())]
        return IRSyntaxError(path, line, col, f"unexpected character {ch!r}", expected)
    if isinstance(exc, UnexpectedEOF):
        line, col = shift(*_end_pos(text))
        return IRSyntaxError(path, line, col, "unexpected end of input", [names.get(n, n) for n in exc.expected])
    return IRSyntaxError(path, line0, col0, str(exc))


def _end_pos(text: str) -> tuple[int, int]:
    line = text.count("\n") + 1
    return line, len(text) - (text.rfind("\n") + 1) + 1


class _ToAst:
    """lark tree -> syntax tree.  One instance per parse: it knows the text and where it starts."""

    def __init__(self, text: str, line0: int = 1) -> None:
        self.text, self.dl = text, line0 - 1

    # -- dispatch
    def __call__(self, t: Any) -> Any:
        from lark import Token

        if isinstance(t, Token):
            return self.token(t)
        return getattr(self, t.data)(t)

    def token(self, t: Any) -> Any:
        ty = t.type
        if ty in ("INT", "NEGINT"):
            return Imm(str(t), int_value(str(t)))
        if ty == "FLOAT":
            return Imm(str(t), None)
        return str(t)

    def line(self, t: Any) -> int:
        return t.meta.line + self.dl if not t.meta.empty else 0

    def snippet(self, t: Any) -> str:
        return one_line(self.text[t.meta.start_pos : t.meta.end_pos].strip())

    # -- module
    def start(self, t: Any) -> list[Any]:
        return [x for x in (self(c) for c in t.children) if x is not None]

    def empty(self, t: Any) -> None:
        return None

    def version(self, t: Any) -> Version:
        return Version(str(t.children[0]), self.line(t))

    def target(self, t: Any) -> Target:
        return Target(tuple(str(c) for c in t.children), self.line(t))

    def address_size(self, t: Any) -> AddressSize:
        return AddressSize(int_value(str(t.children[0])), self.line(t))

    def file_dir(self, t: Any) -> FileDir:
        c = t.children
        return FileDir(int_value(str(c[0])), str(c[1]), tuple(int_value(str(x)) for x in c[2:]), self.line(t))

    def loc_dir(self, t: Any) -> LocDir:
        c = t.children
        extra = tuple(tuple(str(x) for x in a.children) for a in c[3:])
        return LocDir(int_value(str(c[0])), int_value(str(c[1])), int_value(str(c[2])), extra, self.line(t))

    def pragma(self, t: Any) -> Pragma:
        return Pragma(tuple(str(c) for c in t.children), self.line(t))

    def section(self, t: Any) -> Section:
        return Section(str(t.children[0]), tuple(str(c.children[0]) for c in t.children[1:]), self.line(t))

    def generic_dir(self, t: Any) -> Generic:
        c = t.children
        return Generic((str(c[0]), *(str(x.children[0]) for x in c[1:] if x.data == "gen_tok")), self.line(t))

    # -- declarations
    def module_decl(self, t: Any) -> VarDecl:
        link = tuple(str(c.children[0]) for c in t.children[:-1])
        d = self.var_decl(t.children[-1])
        d.linkage = link
        d.line = self.line(t)
        return d

    def var_decl(self, t: Any) -> VarDecl:
        c = t.children
        space = str(c[0].children[0])
        attrs: list[str] = []
        names = []
        for x in c[1:]:
            if x.data == "decl_attr":
                attrs.extend(str(y) for y in x.children)
            else:
                names.append(self.decl_name(x))
        return VarDecl(space, tuple(attrs), tuple(names), (), self.line(t))

    def decl_name(self, t: Any) -> DeclName:
        name = str(t.children[0])
        rng, dims, init = None, [], None
        for x in t.children[1:]:
            if x.data == "reg_range":
                rng = int_value(str(x.children[0]))
            elif x.data == "dim":
                dims.append(int_value(str(x.children[0])) if x.children else None)
            elif x.data == "init":
                init = self.ival(x.children[0])
        return DeclName(name, rng, tuple(dims), init)

    def ival(self, t: Any) -> Any:
        from lark import Token

        if isinstance(t, Token):
            return str(t)
        if t.data == "ilist":
            return [self.ival(c) for c in t.children]
        if t.data == "call_expr":
            return f"{t.children[0]}({self.ival(t.children[1])})"
        return " ".join(self.ival(c) for c in t.children)  # iexpr

    # -- functions
    def func(self, t: Any) -> Func:
        f = self.func_header(t.children[0])
        if len(t.children) > 1:
            f.body = self.body(t.children[1])
        return f

    def func_header(self, t: Any) -> Func:
        from lark import Token

        link: list[str] = []
        kind, name, rets, params, perf = "", "", None, None, []
        for x in t.children:
            if isinstance(x, Token):
                name = str(x)
            elif x.data == "linkage":
                link.append(str(x.children[0]))
            elif x.data == "func_kind":
                kind = str(x.children[0])
            elif x.data == "ret_params":
                rets = tuple(self.param(p) for p in x.children)
            elif x.data == "params":
                params = tuple(self.param(p) for p in x.children)
            elif x.data == "perf":
                perf.append((str(x.children[0].children[0]), tuple(int_value(str(v)) for v in x.children[1:])))
        return Func(kind, name, params, rets, tuple(link), tuple(perf), None, self.line(t))

    def param(self, t: Any) -> ParamDecl:
        from lark import Token

        space = str(t.children[0].children[0])
        attrs: list[str] = []
        name = ""
        dims: list[int | None] = []
        for x in t.children[1:]:
            if isinstance(x, Token):
                name = str(x)
            elif x.data == "decl_attr":
                attrs.extend(str(y) for y in x.children)
            else:
                dims.append(int_value(str(x.children[0])) if x.children else None)
        return ParamDecl(space, tuple(attrs), name, tuple(dims))

    def body(self, t: Any) -> list[Any]:
        return [x for x in (self(c) for c in t.children) if x is not None]

    def scope(self, t: Any) -> Scope:
        return Scope(self.body(t), self.line(t))

    def label(self, t: Any) -> Label:
        s = str(t.children[0])
        return Label(s[: s.index(":")].rstrip(), self.line(t))

    # -- instructions
    def instr(self, t: Any) -> Instr:
        from lark import Token

        c = t.children
        pred = None
        i = 0
        if not isinstance(c[0], Token):  # guard
            g = c[0].children
            pred = "".join(str(x) for x in g)
            i = 1
        opcode = str(c[i])
        ops = tuple(self.operand(x) for x in c[i + 1 :])
        return Instr(opcode, ops, pred, self.line(t), self.snippet(t))

    def operand(self, t: Any) -> AstOperand:
        from lark import Token

        if isinstance(t, Token):
            return self.token(t)
        d, c = t.data, t.children
        if d == "address":
            base = self.token(c[0])
            disp = 0
            rest = c[1:]
            if rest and not isinstance(rest[0], Token) and rest[0].data == "aoff":
                disp = int_value(str(rest[0].children[-1]))
                rest = rest[1:]
            return Addr(base, disp, tuple(self.operand(x) for x in rest))
        if d == "vector":
            return Vec(tuple(self.operand(x) for x in c))
        if d == "dual":
            return Dual(str(c[0]), str(c[1]))
        if d == "neg":
            return Neg(str(c[1]))
        if d == "paren":
            return Paren(tuple(self.operand(x) for x in c))
        if d == "symoff":
            return SymOff(str(c[0]), int_value(str(c[1])))
        raise AssertionError(d)


def lark_parse(text: str, path: str, start: str, line0: int = 1, col0: int = 1) -> Any:
    from lark.exceptions import LarkError

    try:
        tree = _lark().parse(text, start=start)
    except LarkError as e:
        raise _syntax_error(e, path, text, line0, col0) from None
    conv = _ToAst(text, line0)
    if start == "start":
        return conv.start(tree)
    return conv(tree)


def parse_tree(text: str, path: str = "<ptx>") -> PtxAst:
    """The reference parse: the whole text through ``grammars/ptx.lark``.  Slow (~0.35 MB/s)."""
    s = blank_comments(text)
    return PtxAst(path, lark_parse(s, path, "start"))
