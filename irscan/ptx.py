"""PTX front end: text -> syntax tree (:class:`PtxAst`) -> :class:`irscan.ir.Module`.

Public API::

    parse_module(text, path) -> ir.Module       # what the scan calls (fast path + lower)
    parse_file(path) -> ir.Module                # module.ptx or module.ptx.xz
    parse_ast(text, path) -> PtxAst              # fast path, syntax tree only
    parse_tree(text, path) -> PtxAst             # the whole text through grammars/ptx.lark
    lower(ast) -> ir.Module                      # syntax tree -> shared vocabulary
    read_text(path) -> str                       # .xz aware
    irscan.ptx_print.print_module(ast) -> str    # syntax tree -> PTX text
    irscan.reaching.reaching_definitions(fn)     # PTX use -> defs, for the dataflow graph

Two ways to the same syntax tree, checked equal on the corpus (and on fuzzed text) by the tests:

* :func:`parse_tree` runs ``grammars/ptx.lark`` (LALR, contextual lexer) over the whole text.  It is
  the reference, and what reports errors; at ~0.45 MB/s it would cost as much as a big compile.
* :func:`parse_ast` splits the text into statements with compiled regexes and decodes the common
  ones itself (instructions, labels, scopes, ``.loc``, declarations, function headers), caching
  every distinct operand text (they repeat massively); a statement it does not know goes to the
  grammar on its own (start symbols ``stmt`` / ``top``).  Anything it cannot
  place, and any error, sends the whole text to the grammar, so bad input raises the grammar's
  :class:`irscan.ir.IRSyntaxError` (real line, column, expected tokens) and odd but valid input
  gets the grammar's tree.  lark is not even imported for compiler output.

:func:`lower` gives the tree meaning (see the rules by the ``_rule`` function): opcode ->
:class:`~irscan.ir.Kind`, width, signedness, results and operands (``[%rd4+16]`` -> ``"%rd4"`` with
``attrs["disp"]``), state spaces, blocks and control flow, ``.loc`` -> :class:`~irscan.ir.Loc`.
Integer immediates are given as the instruction's type sees them (``mul.hi.u32 .., -1431655765``
-> 2863311531); ``Op.flags`` holds the opcode's modifiers.

Names declared in nested ``{ }`` scopes (inline asm: ``.reg .pred P1; LAB_WAIT: ... DONE:``) are
local to that scope in PTX, and the same names recur in every copy of the asm.  :func:`lower` renames
them ``name@N`` (N = the scope's serial number in the function; ``abcd@3.x`` for a component of a
``.v4`` register) so that registers and labels are unique per function; ``Op.text`` keeps the text
as written.  A whole ``.v2``/``.v4`` register used as an operand becomes its components.
"""

from __future__ import annotations

import functools
import lzma
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irscan import ir
from irscan.ir import Block, Function, IRSyntaxError, Kind, Loc, Module, Op, Param, Successor
from irscan.resources import grammar_path

GRAMMAR_PATH = grammar_path("ptx.lark")

# ============================================================================================ syntax tree


@dataclass(frozen=True, slots=True)
class Imm:
    """An immediate as written; ``value`` is the integer, or None for a float (``0f3F800000``, ``1.5``)."""

    text: str
    value: int | None


@dataclass(frozen=True, slots=True)
class Addr:
    """``[base]``, ``[base+disp]``, ``[base, extra...]`` (tensor coordinates, texture coordinates)."""

    base: str | Imm
    disp: int = 0
    extra: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class Vec:
    """``{%r1, %r2, _}``."""

    elems: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Dual:
    """``%r1|%p1``: two destinations."""

    a: str
    b: str


@dataclass(frozen=True, slots=True)
class Neg:
    """``!%p1`` as a source operand."""

    name: str


@dataclass(frozen=True, slots=True)
class Paren:
    """``(retval0)`` / ``(param0, param1)`` in ``call``."""

    elems: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class SymOff:
    """``sym+8`` outside brackets."""

    name: str
    off: int


#: An instruction operand in the syntax tree: a register or symbol name (str) or one of the above.
AstOperand = str | Imm | Addr | Vec | Dual | Neg | Paren | SymOff


@dataclass(slots=True)
class Instr:
    opcode: str
    operands: tuple[AstOperand, ...]
    pred: str | None = None  # "%p1" / "!%p1"
    line: int = 0
    text: str = ""


@dataclass(slots=True)
class Label:
    name: str
    line: int = 0


@dataclass(slots=True)
class Scope:
    body: list[Any]
    line: int = 0


@dataclass(frozen=True, slots=True)
class DeclName:
    name: str
    range: int | None = None  # %r<7>
    dims: tuple[int | None, ...] = ()  # name[8][]
    init: Any = None  # str (an expression as text) or a list (a braced initialiser)


@dataclass(slots=True)
class VarDecl:
    space: str  # ".reg" ".global" ...
    attrs: tuple[str, ...]  # (".align", "8", ".b8")
    names: tuple[DeclName, ...]
    linkage: tuple[str, ...] = ()
    line: int = 0


@dataclass(slots=True)
class LocDir:
    file: int
    line: int
    col: int
    extra: tuple[tuple[str, ...], ...] = ()  # (("inlined_at", "1", "45", "10"), ...)
    src_line: int = 0


@dataclass(slots=True)
class FileDir:
    index: int
    name: str  # the string token, quotes included
    extra: tuple[int, ...] = ()
    line: int = 0


@dataclass(slots=True)
class Pragma:
    strings: tuple[str, ...]  # string tokens, quotes included
    line: int = 0


@dataclass(slots=True)
class Generic:
    """A directive the grammar only knows as tokens (``.alias``, ``.callprototype`` ...), ``;`` excluded."""

    tokens: tuple[str, ...]
    line: int = 0


@dataclass(slots=True)
class Section:
    name: str
    tokens: tuple[str, ...]
    line: int = 0


@dataclass(slots=True)
class Version:
    text: str
    line: int = 0


@dataclass(slots=True)
class Target:
    names: tuple[str, ...]
    line: int = 0


@dataclass(slots=True)
class AddressSize:
    size: int
    line: int = 0


@dataclass(frozen=True, slots=True)
class ParamDecl:
    space: str  # ".param" / ".reg"
    attrs: tuple[str, ...]
    name: str
    dims: tuple[int | None, ...] = ()

    def text(self) -> str:
        dims = "".join(f"[{'' if d is None else d}]" for d in self.dims)
        return " ".join((self.space, *self.attrs, self.name + dims))


@dataclass(slots=True)
class Func:
    kind: str  # ".entry" / ".func"
    name: str
    params: tuple[ParamDecl, ...] | None  # None: no parentheses at all
    rets: tuple[ParamDecl, ...] | None = None
    linkage: tuple[str, ...] = ()
    perf: tuple[tuple[str, tuple[int, ...]], ...] = ()
    body: list[Any] | None = None  # None: a declaration (prototype) only
    line: int = 0


@dataclass(slots=True)
class PtxAst:
    path: str
    items: list[Any] = field(default_factory=list)


# ============================================================================================== helpers


class _Bail(Exception):
    """The fast path does not know this statement: let the grammar have it."""


@functools.lru_cache(maxsize=4096)
def _int_value(text: str) -> int:
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
        raise _Bail from None  # "0128": the grammar's lexer rejects it, with a position
    return -v if neg else v


_COMMENT_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*[\s\S]*?\*/')


def _blank_comments(text: str) -> str:
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


def read_text(path: str | Path) -> str:
    """Read a PTX file, ``.xz`` compressed or not."""
    p = Path(path)
    if p.suffix == ".xz":
        return lzma.decompress(p.read_bytes()).decode()
    return p.read_text()


# ================================================================================ the grammar (reference)

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


def _one_line(text: str) -> str:
    """An instruction written over several lines, as one line (Op.text is one line)."""
    return " ".join(text.split()) if "\n" in text else text


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
            return Imm(str(t), _int_value(str(t)))
        if ty == "FLOAT":
            return Imm(str(t), None)
        return str(t)

    def line(self, t: Any) -> int:
        return t.meta.line + self.dl if not t.meta.empty else 0

    def snippet(self, t: Any) -> str:
        return _one_line(self.text[t.meta.start_pos : t.meta.end_pos].strip())

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
        return AddressSize(_int_value(str(t.children[0])), self.line(t))

    def file_dir(self, t: Any) -> FileDir:
        c = t.children
        return FileDir(_int_value(str(c[0])), str(c[1]), tuple(_int_value(str(x)) for x in c[2:]), self.line(t))

    def loc_dir(self, t: Any) -> LocDir:
        c = t.children
        extra = tuple(tuple(str(x) for x in a.children) for a in c[3:])
        return LocDir(_int_value(str(c[0])), _int_value(str(c[1])), _int_value(str(c[2])), extra, self.line(t))

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
                rng = _int_value(str(x.children[0]))
            elif x.data == "dim":
                dims.append(_int_value(str(x.children[0])) if x.children else None)
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
                perf.append((str(x.children[0].children[0]), tuple(_int_value(str(v)) for v in x.children[1:])))
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
                dims.append(_int_value(str(x.children[0])) if x.children else None)
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
                disp = _int_value(str(rest[0].children[-1]))
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
            return SymOff(str(c[0]), _int_value(str(c[1])))
        raise AssertionError(d)


def _lark_parse(text: str, path: str, start: str, line0: int = 1, col0: int = 1) -> Any:
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
    s = _blank_comments(text)
    return PtxAst(path, _lark_parse(s, path, "start"))


# ============================================================================================ fast path


_WS = re.compile(r"[ \t\r\n\f]*")
_NAME_P = r"(?:%[\w$]+|[A-Za-z_$][\w$]*)"  # a register or an identifier
_DOTWORD_P = r"\.[A-Za-z_$][\w$]*(?:(?:\.|::)[\w$]+)*"  # .align  .ptr.global.align  .shared::cta
_OPCODE_P = r"[a-z]\w*(?:(?:\.|::)\w+)*"  # opcode and modifiers, one token (as OPCODE in the grammar)
_ARGS_P = r"[^;{}\"]*(?:\{[^{};\"]*\}[^;{}\"]*)*"  # operands up to ';', vectors in braces allowed
#: one body statement: 1 instruction (2 guard, 3 opcode, 4 operands), 5-7 .loc, 8 label, 9 brace or ';'
_BODY = re.compile(
    r"[ \t\r\n\f]*(?:"
    rf"((?:@(!?{_NAME_P})[ \t\r\n]+)?({_OPCODE_P})(?![ \t]*:(?!:))({_ARGS_P});)"
    r"|\.loc[ \t]+(\d+)[ \t]+(\d+)[ \t]+(\d+)[ \t\r]*(?=[\n;{}]|$)"
    r"|([A-Za-z_$%][\w$]*)[ \t]*:(?!:)"
    r"|([{};])"
    r")"
)
_DIRNAME = re.compile(r"\.[A-Za-z_]\w*")
#: statement ends: up to ';' with balanced braces (initialisers), or a line's end (fixed-shape directives)
_TO_SEMI = re.compile(r"(?:[^;{}\"]|\"(?:[^\"\\\n]|\\.)*\"|\{(?:[^{}\"]|\{[^{}]*\})*\})*;")
_TO_EOL = re.compile(r"(?:[^\n{};\"]|\"(?:[^\"\\\n]|\\.)*\")*")
_HEADER = re.compile(r"[^;{}\"]*")
_SECTION = re.compile(r"[^{};]*\{[^{}]*\}")

_EOL_DIRS = frozenset(
    {
        ".version",
        ".target",
        ".address_size",
        ".file",
        ".loc",
        ".reqntid",
        ".maxntid",
        ".minnctapersm",
        ".maxnreg",
        ".explicitcluster",
        ".reqnctapercluster",
        ".maxclusterrank",
        ".noreturn",
        ".blocksareclusters",
    }
)
_HEADER_DIRS = frozenset({".visible", ".extern", ".weak", ".common", ".entry", ".func"})

_STR = r'"(?:[^"\\\n]|\\.)*"'
_DECL_ONE_P = rf"{_NAME_P}(?:<\d+>)?(?:\[\d*\])*"  # %r<7>   smem[1024]   x
_DECL_RE = re.compile(
    r"((?:\.(?:visible|extern|weak|common)[ \t]+)*)(\.reg|\.param|\.local|\.shared|\.global|\.const)"
    rf"((?:[ \t]+{_DOTWORD_P}(?:[ \t]+\d+)?)*)[ \t]+({_DECL_ONE_P}(?:[ \t]*,[ \t]*{_DECL_ONE_P})*)[ \t]*;"
)
_DECL_NAME = re.compile(r"(%[\w$]+|[A-Za-z_$][\w$]*)(?:<(\d+)>)?((?:\[\d*\])*)")


def _mk_decl(m: re.Match[str], line: int) -> VarDecl:
    names = tuple(
        DeclName(
            nm,
            _int_value(r) if r else None,
            tuple(_int_value(x) if x else None for x in re.findall(r"\[(\d*)\]", dims)),
        )
        for nm, r, dims in _DECL_NAME.findall(m.group(4))
    )
    return VarDecl(m.group(2), tuple(m.group(3).split()), names, tuple(m.group(1).split()), line)


#: directive -> (regex for its common form, builder); anything else goes to the grammar
_FAST_DIRS: dict[str, tuple[re.Pattern[str], Any]] = {
    ".loc": (
        re.compile(r"\.loc[ \t]+(\d+)[ \t]+(\d+)[ \t]+(\d+)[ \t\r]*(?=[\n;{}]|$)"),
        lambda m, line: LocDir(_int_value(m.group(1)), _int_value(m.group(2)), _int_value(m.group(3)), (), line),
    ),
    ".file": (
        re.compile(r"\.file[ \t]+(\d+)[ \t]+(" + _STR + r")((?:[ \t]*,[ \t]*\d+)*)[ \t\r]*(?=\n|$)"),
        lambda m, line: FileDir(
            _int_value(m.group(1)), m.group(2), tuple(_int_value(x) for x in re.findall(r"\d+", m.group(3))), line
        ),
    ),
    ".pragma": (
        re.compile(r"\.pragma[ \t]+(" + _STR + r")[ \t]*;"),
        lambda m, line: Pragma((m.group(1),), line),
    ),
    ".version": (
        re.compile(r"\.version[ \t]+(\d+\.\d+)[ \t\r]*(?=\n|$)"),
        lambda m, line: Version(m.group(1), line),
    ),
    ".target": (
        re.compile(r"\.target[ \t]+([A-Za-z_$][\w$]*(?:[ \t]*,[ \t]*[A-Za-z_$][\w$]*)*)[ \t\r]*(?=\n|$)"),
        lambda m, line: Target(tuple(x.strip() for x in m.group(1).split(",")), line),
    ),
    ".address_size": (
        re.compile(r"\.address_size[ \t]+(\d+)[ \t\r]*(?=\n|$)"),
        lambda m, line: AddressSize(_int_value(m.group(1)), line),
    ),
}
for _d in (".reg", ".param", ".local", ".shared", ".global", ".const", ".visible", ".extern", ".weak", ".common"):
    _FAST_DIRS[_d] = (_DECL_RE, _mk_decl)

# -- operands
_OP_REG = re.compile(r"(?:%[\w$]+|[A-Za-z_$][\w$]*)(?:\.[xyzw])?$")
_OP_INT = re.compile(r"-?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)U?$")
_OP_FLOAT = re.compile(r"-?(?:0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?)$")
_ADDR_IN = re.compile(
    r"(%[\w$]+|[A-Za-z_$][\w$]*|(?:0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)U?)"
    r"(?:\+(-?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)U?)|(-(?:0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)U?))?$"
)
_SPLIT = re.compile(r"(?:[^,{\[(]|\{[^}]*\}|\[[^\]]*\]|\([^)]*\))+")
_NAME = re.compile(r"%[\w$]+|[A-Za-z_$][\w$]*")


def _split_commas(s: str) -> list[str]:
    if "{" in s or "[" in s or "(" in s:
        parts = _SPLIT.findall(s)
        if ",".join(parts) != s:  # a stray bracket or an empty operand
            raise _Bail
        return parts
    return s.split(",")


_OPERAND_CACHE: dict[str, AstOperand] = {}


#: the common operands in one go: 1 register or symbol, 2 decimal / hex integer, 3-4 [base+disp]
_SIMPLE_OPERAND = re.compile(
    r"[ \t\r\n]*(?:((?:%[\w$]+|[A-Za-z_$][\w$]*)(?:\.[xyzw])?)|(-?(?:0[xX][0-9a-fA-F]+|[1-9][0-9]*|0)U?)"
    r"|\[[ \t]*(%[\w$]+|[A-Za-z_$][\w$]*)[ \t]*(?:\+[ \t]*(-?(?:[1-9][0-9]*|0)))?[ \t]*\])[ \t\r\n]*$"
)


_WORD_GAP = re.compile(r"[\w$%.]\s+[\w$%.]|-\s")


def _operand(raw: str) -> AstOperand:
    """One operand's text -> syntax tree (cached: the same operand text recurs thousands of times)."""
    try:
        return _OPERAND_CACHE[raw]
    except KeyError:
        pass
    m = _SIMPLE_OPERAND.match(raw)
    v: AstOperand
    if m is not None:
        li = m.lastindex
        if li == 1:
            v = m.group(1)
        elif li == 2:
            v = Imm(m.group(2), _int_value(m.group(2)))
        else:
            d = m.group(4)
            v = Addr(m.group(3), _int_value(d) if d else 0)
    else:
        s = raw.strip()
        if not s or _WORD_GAP.search(s):  # "%r5 100000": two tokens, a missing comma
            raise _Bail
        v = _decode_operand("".join(s.split()))
    if len(_OPERAND_CACHE) < 200_000:
        _OPERAND_CACHE[raw] = v
    return v


def _atom(s: str) -> str | Imm:
    if _OP_REG.match(s):
        return s
    if _OP_INT.match(s):
        return Imm(s, _int_value(s))
    if _OP_FLOAT.match(s):
        return Imm(s, None)
    raise _Bail


def _decode_operand(s: str) -> AstOperand:
    c = s[0]
    if c == "[":
        if s[-1] != "]":
            raise _Bail
        inner = s[1:-1]
        parts = _split_commas(inner) if "," in inner else [inner]
        m = _ADDR_IN.match(parts[0])
        if not m:
            raise _Bail
        b = m.group(1)
        base: str | Imm = b if not b[0].isdigit() else Imm(b, _int_value(b))
        off = m.group(2) or m.group(3)
        extra = tuple(_vec_or_atom(p) for p in parts[1:])
        return Addr(base, _int_value(off) if off else 0, extra)
    if c == "{":
        return _vec_or_atom(s)
    if c == "(":
        if s[-1] != ")":
            raise _Bail
        inner = s[1:-1]
        return Paren(tuple(_operand(p) for p in _split_commas(inner)) if inner else ())
    if c == "!":
        name = s[1:]
        if not _OP_REG.match(name):
            raise _Bail
        return Neg(name)
    if "|" in s:
        a, _, b = s.partition("|")
        if not (_OP_REG.match(a) and _OP_REG.match(b)):
            raise _Bail
        return Dual(a, b)
    if "+" in s and not s[0].isdigit() and s[0] != "-":
        a, _, b = s.partition("+")
        if _OP_REG.match(a) and a[0] != "%" and _OP_INT.match(b) and b[0] != "-":
            return SymOff(a, _int_value(b))
        raise _Bail
    return _atom(s)


def _vec_or_atom(s: str) -> Any:
    if not s:
        raise _Bail
    if s[0] == "{":
        if s[-1] != "}" or len(s) < 3:
            raise _Bail
        elems = []
        for e in s[1:-1].split(","):
            if e[:1] == "!":
                if not _OP_REG.match(e[1:]):
                    raise _Bail
                elems.append(Neg(e[1:]))
            else:
                elems.append(_atom(e))
        return Vec(tuple(elems))
    return _atom(s)


class _FastParser:
    """Statement-at-a-time scanner over comment-free text (see the module docstring)."""

    def __init__(self, s: str, path: str) -> None:
        self.s, self.path = s, path
        self.pos = 0
        self.line = 1
        self.line_pos = 0  # position at which self.line was computed

    # -- positions
    def line_at(self, pos: int) -> int:
        if pos >= self.line_pos:
            self.line += self.s.count("\n", self.line_pos, pos)
        else:
            self.line -= self.s.count("\n", pos, self.line_pos)
        self.line_pos = pos
        return self.line

    def col_at(self, pos: int) -> int:
        return pos - (self.s.rfind("\n", 0, pos) + 1) + 1

    def grammar(self, start: int, end: int, rule: str) -> Any:
        """Parse s[start:end] with the grammar's ``rule``: errors come out with file positions."""
        return _lark_parse(self.s[start:end], self.path, rule, self.line_at(start), self.col_at(start))

    def structural_error(self) -> _Bail:
        """Something the statement splitter cannot place: the full grammar will judge (parse_ast)."""
        return _Bail()

    # -- module
    def parse(self) -> list[Any]:
        items: list[Any] = []
        s = self.s
        n = len(s)
        ws = _WS.match
        while True:
            pos = ws(s, self.pos).end()
            self.pos = pos
            if pos >= n:
                return items
            c = s[pos]
            if c == ";":
                self.pos = pos + 1
                continue
            if c != ".":
                raise self.structural_error()
            m = _DIRNAME.match(s, pos)
            d = m.group(0) if m else ""
            if d in _HEADER_DIRS:
                hm = _HEADER.match(s, pos)
                end = hm.end()
                head = s[pos:end]
                if re.search(r"\.(?:entry|func)\b", head):
                    if end >= n:
                        raise self.structural_error()
                    f = self.header(pos, end)
                    if s[end] == "{":
                        self.pos = end + 1
                        f.body = self.body(end)
                    elif s[end] == ";":
                        self.pos = end + 1
                    else:
                        raise self.structural_error()
                    items.append(f)
                    continue
            items.append(self.directive(pos, d, top=True))

    def header(self, start: int, end: int) -> Func:
        f = _fast_header(self.s[start:end])
        if f is None:  # rare (hand-written PTX): the whole text goes to the grammar
            raise _Bail
        f.line = self.line_at(start)
        return f

    def directive(self, pos: int, d: str, top: bool) -> Any:
        """A directive statement at ``pos`` (module level or in a body)."""
        s = self.s
        fast = _FAST_DIRS.get(d)
        if fast is not None:
            m = fast[0].match(s, pos)
            if m:
                self.pos = m.end()
                return fast[1](m, self.line_at(pos))
        if d in _EOL_DIRS:
            end = _TO_EOL.match(s, pos).end()
        elif d == ".section":
            m = _SECTION.match(s, pos)
            if not m:
                raise self.structural_error()
            end = m.end()
        else:
            m = _TO_SEMI.match(s, pos)
            if not m:
                raise self.structural_error()
            end = m.end()
        self.pos = end
        return self.grammar(pos, end, "top" if top else "stmt")

    # -- function bodies
    def body(self, open_pos: int) -> list[Any]:
        """Statements up to the '}' matching the '{' just consumed."""
        out: list[Any] = []
        stack: list[list[Any]] = []
        cur = out
        s = self.s
        n = len(s)
        body_m = _BODY.match
        opcache = _OPERAND_CACHE
        pos = self.pos
        while True:
            m = body_m(s, pos)
            li = m.lastindex if m is not None else None
            if li == 1:  # an instruction
                start, end = m.span(1)
                pos = end
                pred, opcode, args = m.group(2, 3, 4)
                try:
                    if args and not args.isspace():
                        if "{" in args or "[" in args or "(" in args:
                            parts = _split_commas(args)
                        else:
                            parts = args.split(",")
                        ops = []
                        for p in parts:
                            v = opcache.get(p)
                            if v is None:
                                q = p.strip()
                                r = q[1:]
                                # "%r1234": most operands are registers seen once; no need to cache
                                v = q if q[:1] == "%" and r.isalnum() and r.isascii() else _operand(p)
                            ops.append(v)
                        ops_t = tuple(ops)
                    else:
                        ops_t = ()
                except _Bail:
                    cur.append(self.grammar(start, end, "stmt"))
                    continue
                text = s[start:end]
                if "\n" in text:
                    text = _one_line(text)
                cur.append(Instr(opcode, ops_t, pred, self.line_at(start), text))
            elif li == 7:  # .loc file line col
                cur.append(
                    LocDir(
                        _int_value(m.group(5)),
                        _int_value(m.group(6)),
                        _int_value(m.group(7)),
                        (),
                        self.line_at(m.start(5)),
                    )
                )
                pos = m.end()
            elif li == 8:  # label
                cur.append(Label(m.group(8), self.line_at(m.start(8))))
                pos = m.end()
            elif li == 9:  # { } ;
                c = m.group(9)
                start = m.start(9)
                pos = m.end()
                if c == "}":
                    if not stack:
                        self.pos = pos
                        return out
                    cur = stack.pop()
                elif c == "{":
                    sc = Scope([], self.line_at(start))
                    cur.append(sc)
                    stack.append(cur)
                    cur = sc.body
            else:  # a directive, or something only the grammar can judge
                pos = _WS.match(s, pos).end()
                self.pos = pos
                if pos >= n or s[pos] != ".":
                    raise self.structural_error()
                dm = _DIRNAME.match(s, pos)
                cur.append(self.directive(pos, dm.group(0) if dm else "", top=False))
                pos = self.pos


_PARAM_RE = re.compile(rf"\s*(\.param|\.reg)((?:\s+{_DOTWORD_P}(?:\s+\d+)?)*)\s+({_NAME_P})((?:\s*\[\s*\d*\s*\])*)\s*$")
_HEADER_RE = re.compile(
    r"((?:\.(?:visible|extern|weak|common)\s+)*)(\.entry|\.func)\s*(?:\(([^()]*)\)\s*)?([A-Za-z_$][\w$]*)"
    r"\s*(?:\(([^()]*)\))?((?:\s*\.\w+(?:\s+\d+(?:\s*,\s*\d+)*)?)*)\s*$"
)
_PERF_RE = re.compile(r"(\.\w+)(?:\s+(\d+(?:\s*,\s*\d+)*))?")
_PERF_NAMES = frozenset(
    {
        ".reqntid",
        ".maxntid",
        ".minnctapersm",
        ".maxnreg",
        ".explicitcluster",
        ".reqnctapercluster",
        ".maxclusterrank",
        ".noreturn",
        ".blocksareclusters",
    }
)


def _fast_params(text: str | None) -> tuple[ParamDecl, ...] | None:
    if text is None:
        return None
    if not text.strip():
        return ()
    out = []
    for p in text.split(","):
        m = _PARAM_RE.match(p)
        if not m:
            raise _Bail
        attrs = tuple(m.group(2).split())
        if any(a[0] != "." and not a.isdigit() for a in attrs):
            raise _Bail
        dims = tuple(_int_value(d) if d.strip() else None for d in re.findall(r"\[\s*(\d*)\s*\]", m.group(4)))
        out.append(ParamDecl(m.group(1), attrs, m.group(3), dims))
    return tuple(out)


def _fast_header(text: str) -> Func | None:
    """``.visible .entry name(.param ...) .reqntid 128, 1, 1`` by regex; None: let the grammar do it."""
    m = _HEADER_RE.match(text.strip())
    if not m:
        return None
    try:
        rets = _fast_params(m.group(3))
        if m.group(3) is not None and not rets:
            return None
        params = _fast_params(m.group(5))
    except _Bail:
        return None
    perf = []
    for pm in _PERF_RE.finditer(m.group(6)):
        if pm.group(1) not in _PERF_NAMES:
            return None
        vals = tuple(_int_value(v) for v in re.split(r"\s*,\s*", pm.group(2))) if pm.group(2) else ()
        perf.append((pm.group(1), vals))
    return Func(m.group(2), m.group(4), params, rets, tuple(m.group(1).split()), tuple(perf), None, 0)


def parse_ast(text: str, path: str = "<ptx>") -> PtxAst:
    """The fast parse (same result as :func:`parse_tree`)."""
    s = _blank_comments(text)
    try:
        return PtxAst(path, _FastParser(s, path).parse())
    except (IRSyntaxError, _Bail):
        # Bad input, or input the splitter cuts differently from the grammar (a directive over two
        # lines): the grammar decides on the whole text, so errors and results are the grammar's.
        return PtxAst(path, _lark_parse(s, path, "start"))


# ================================================================================================ lower

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
_TYPE_BYTES = {
    "s8": 1, "u8": 1, "b8": 1, "s16": 2, "u16": 2, "b16": 2, "f16": 2, "bf16": 2,
    "s32": 4, "u32": 4, "b32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4,
    "s64": 8, "u64": 8, "b64": 8, "f64": 8, "b128": 16, "pred": 1,
}  # fmt: skip
_SPACES = frozenset({"global", "shared", "local", "const", "param", "generic"})

#: %sreg -> inclusive ISA limits (PTX ISA "Special Registers"; launch limits of sm_80 .. sm_100).
SREG_RANGES: dict[str, tuple[int, int]] = {
    "tid.x": (0, 1023), "tid.y": (0, 1023), "tid.z": (0, 63),
    "ntid.x": (1, 1024), "ntid.y": (1, 1024), "ntid.z": (1, 64),
    "ctaid.x": (0, 2**31 - 1), "ctaid.y": (0, 65534), "ctaid.z": (0, 65534),
    "nctaid.x": (1, 2**31 - 1), "nctaid.y": (1, 65535), "nctaid.z": (1, 65535),
    "laneid": (0, 31), "warpid": (0, 63), "nwarpid": (1, 64),
    "clusterid.x": (0, 2**31 - 1), "clusterid.y": (0, 65534), "clusterid.z": (0, 65534),
    "nclusterid.x": (1, 2**31 - 1), "nclusterid.y": (1, 65535), "nclusterid.z": (1, 65535),
    "cluster_ctaid.x": (0, 15), "cluster_ctaid.y": (0, 15), "cluster_ctaid.z": (0, 15),
    "cluster_nctaid.x": (1, 16), "cluster_nctaid.y": (1, 16), "cluster_nctaid.z": (1, 16),
    "cluster_ctarank": (0, 15), "cluster_nctarank": (1, 16),
}  # fmt: skip
#: special registers without a fixed range (still SREG, attrs["range"] absent)
_SREGS_OPEN = frozenset(
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
class _Rule:
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
def _rule(opcode: str) -> _Rule:
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
        w = _TYPE_BYTES.get(t, 0) * 8
    r = _Rule(Kind.OPAQUE, w, None, sg, flags, {}, dest, "", spaces, False, vec, root)

    def opaque(count: bool) -> _Rule:
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
        r = _rule(st.opcode)
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
        space: str | None = None
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
                if name in SREG_RANGES or name in _SREGS_OPEN or name.startswith("envreg"):
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
        elif sp == "ld" and space == "param" and attrs.get("symbol") and operands[addr] in ctx.params:
            p = ctx.params[operands[addr]]
            kind = Kind.ARG
            del attrs["symbol"]
            attrs["param"] = p.index
            attrs["offset"] = attrs.pop("disp", 0)
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
        if kind in _NORM_KINDS:
            operands = _norm_imms(kind, operands, width, src_width, signed)
            if kind is Kind.CONST and "value" in attrs:
                attrs["value"] = _norm_int(attrs["value"], width, signed)
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

    def addresses(self, r: _Rule, addrs: list[tuple[int, Addr]], attrs: dict[str, Any]) -> tuple[int, str]:
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
        return idx, base_space

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


_NORM_KINDS = frozenset(
    {Kind.ADD, Kind.SUB, Kind.MUL, Kind.MULHI, Kind.MAD, Kind.MULWIDE, Kind.MADWIDE, Kind.AND, Kind.OR, Kind.XOR,
     Kind.DIV, Kind.REM, Kind.MIN, Kind.MAX, Kind.NEG, Kind.SHL, Kind.LSHR, Kind.ASHR, Kind.ICMP, Kind.SELECT,
     Kind.CONST}
)  # fmt: skip


def _norm_int(v: int, w: int, signed: bool | None) -> int:
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


def _norm_imms(kind: Kind, operands: list[Any], width: int, src_width: int | None, signed: bool | None) -> list[Any]:
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
            nv = _norm_int(v, w, sg)
            if nv != v:
                out = list(out) if out is operands else out
                out[k] = nv
            continue
        else:
            w = width
        nv = _norm_int(v, w, signed)
        if nv != v:
            if out is operands:
                out = list(operands)
            out[k] = nv
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
        if a2 in _TYPE_BYTES:
            size = _TYPE_BYTES[a2]
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


def parse_module(text: str, path: str = "<ptx>") -> Module:
    """PTX text -> :class:`irscan.ir.Module` (fast path).  Bad input: :class:`irscan.ir.IRSyntaxError`."""
    return lower(parse_ast(text, path))


def parse_file(path: str | Path) -> Module:
    """:func:`parse_module` on a file (``module.ptx`` or ``module.ptx.xz``)."""
    return parse_module(read_text(path), str(path))
