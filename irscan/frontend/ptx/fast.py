"""The fast PTX parser: compiled regexes split the text into statements and decode the common ones.

Compiler output is megabytes of a few statement shapes, and the grammar (:mod:`irscan.frontend.ptx.grammar`)
reads about 0.45 MB/s, as long as a big compile takes.  :func:`parse_ast` decodes instructions,
labels, scopes, ``.loc``, declarations and function headers itself, caching every distinct operand
text (they repeat massively); a statement it does not know goes to the grammar on its own.  Anything it
cannot place, and any error, sends the whole text to the grammar, so bad input raises the grammar's
:class:`irscan.ir.IRSyntaxError` and odd but valid input gets the grammar's tree.  The result equals
:func:`irscan.frontend.ptx.grammar.parse_tree`'s, which the tests check on the corpus and on fuzzed text.
"""

from __future__ import annotations

import re
from typing import Any

from irscan.frontend.ptx.ast import (
    Addr,
    AddressSize,
    AstOperand,
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
    Pragma,
    PtxAst,
    Scope,
    SymOff,
    Target,
    VarDecl,
    Vec,
    Version,
)
from irscan.frontend.ptx.grammar import Bail, blank_comments, int_value, lark_parse, one_line
from irscan.ir import IRSyntaxError

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

#: performance directives of an .entry/.func header
_PERF_NAMES = frozenset(
    {".reqntid", ".maxntid", ".minnctapersm", ".maxnreg", ".explicitcluster", ".reqnctapercluster",
     ".maxclusterrank", ".noreturn", ".blocksareclusters"}
)  # fmt: skip
#: directives that end at the end of their line
_EOL_DIRS = frozenset({".version", ".target", ".address_size", ".file", ".loc"}) | _PERF_NAMES
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
            int_value(r) if r else None,
            tuple(int_value(x) if x else None for x in re.findall(r"\[(\d*)\]", dims)),
        )
        for nm, r, dims in _DECL_NAME.findall(m.group(4))
    )
    return VarDecl(m.group(2), tuple(m.group(3).split()), names, tuple(m.group(1).split()), line)


#: directive -> (regex for its common form, builder); anything else goes to the grammar
_FAST_DIRS: dict[str, tuple[re.Pattern[str], Any]] = {
    ".loc": (
        re.compile(r"\.loc[ \t]+(\d+)[ \t]+(\d+)[ \t]+(\d+)[ \t\r]*(?=[\n;{}]|$)"),
        lambda m, line: LocDir(int_value(m.group(1)), int_value(m.group(2)), int_value(m.group(3)), (), line),
    ),
    ".file": (
        re.compile(r"\.file[ \t]+(\d+)[ \t]+(" + _STR + r")((?:[ \t]*,[ \t]*\d+)*)[ \t\r]*(?=\n|$)"),
        lambda m, line: FileDir(
            int_value(m.group(1)), m.group(2), tuple(int_value(x) for x in re.findall(r"\d+", m.group(3))), line
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
        lambda m, line: AddressSize(int_value(m.group(1)), line),
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
            raise Bail
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
            v = Imm(m.group(2), int_value(m.group(2)))
        else:
            d = m.group(4)
            v = Addr(m.group(3), int_value(d) if d else 0)
    else:
        s = raw.strip()
        if not s or _WORD_GAP.search(s):  # "%r5 100000": two tokens, a missing comma
            raise Bail
        v = _decode_operand("".join(s.split()))
    if len(_OPERAND_CACHE) < 200_000:
        _OPERAND_CACHE[raw] = v
    return v


def _atom(s: str) -> str | Imm:
    if _OP_REG.match(s):
        return s
    if _OP_INT.match(s):
        return Imm(s, int_value(s))
    if _OP_FLOAT.match(s):
        return Imm(s, None)
    raise Bail


def _decode_operand(s: str) -> AstOperand:
    c = s[0]
    if c == "[":
        if s[-1] != "]":
            raise Bail
        inner = s[1:-1]
        parts = _split_commas(inner) if "," in inner else [inner]
        m = _ADDR_IN.match(parts[0])
        if not m:
            raise Bail
        b = m.group(1)
        base: str | Imm = b if not b[0].isdigit() else Imm(b, int_value(b))
        off = m.group(2) or m.group(3)
        extra = tuple(_vec_or_atom(p) for p in parts[1:])
        return Addr(base, int_value(off) if off else 0, extra)
    if c == "{":
        return _vec_or_atom(s)
    if c == "(":
        if s[-1] != ")":
            raise Bail
        inner = s[1:-1]
        return Paren(tuple(_operand(p) for p in _split_commas(inner)) if inner else ())
    if c == "!":
        name = s[1:]
        if not _OP_REG.match(name):
            raise Bail
        return Neg(name)
    if "|" in s:
        a, _, b = s.partition("|")
        if not (_OP_REG.match(a) and _OP_REG.match(b)):
            raise Bail
        return Dual(a, b)
    if "+" in s and not s[0].isdigit() and s[0] != "-":
        a, _, b = s.partition("+")
        if _OP_REG.match(a) and a[0] != "%" and _OP_INT.match(b) and b[0] != "-":
            return SymOff(a, int_value(b))
        raise Bail
    return _atom(s)


def _vec_or_atom(s: str) -> Any:
    if not s:
        raise Bail
    if s[0] == "{":
        if s[-1] != "}" or len(s) < 3:
            raise Bail
        elems = []
        for e in s[1:-1].split(","):
            if e[:1] == "!":
                if not _OP_REG.match(e[1:]):
                    raise Bail
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
        return lark_parse(self.s[start:end], self.path, rule, self.line_at(start), self.col_at(start))

    def structural_error(self) -> Bail:
        """Something the statement splitter cannot place: the full grammar will judge (parse_ast)."""
        return Bail()

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
            raise Bail
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
                except Bail:
                    cur.append(self.grammar(start, end, "stmt"))
                    continue
                text = s[start:end]
                if "\n" in text:
                    text = one_line(text)
                cur.append(Instr(opcode, ops_t, pred, self.line_at(start), text))
            elif li == 7:  # .loc file line col
                cur.append(
                    LocDir(
                        int_value(m.group(5)),
                        int_value(m.group(6)),
                        int_value(m.group(7)),
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


def _fast_params(text: str | None) -> tuple[ParamDecl, ...] | None:
    if text is None:
        return None
    if not text.strip():
        return ()
    out = []
    for p in text.split(","):
        m = _PARAM_RE.match(p)
        if not m:
            raise Bail
        attrs = tuple(m.group(2).split())
        if any(a[0] != "." and not a.isdigit() for a in attrs):
            raise Bail
        dims = tuple(int_value(d) if d.strip() else None for d in re.findall(r"\[\s*(\d*)\s*\]", m.group(4)))
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
    except Bail:
        return None
    perf = []
    for pm in _PERF_RE.finditer(m.group(6)):
        if pm.group(1) not in _PERF_NAMES:
            return None
        vals = tuple(int_value(v) for v in re.split(r"\s*,\s*", pm.group(2))) if pm.group(2) else ()
        perf.append((pm.group(1), vals))
    return Func(m.group(2), m.group(4), params, rets, tuple(m.group(1).split()), tuple(perf), None, 0)


def parse_ast(text: str, path: str = "<ptx>") -> PtxAst:
    """The fast parse (same result as :func:`parse_tree`)."""
    s = blank_comments(text)
    try:
        return PtxAst(path, _FastParser(s, path).parse())
    except (IRSyntaxError, Bail):
        # Bad input, or input the splitter cuts differently from the grammar (a directive over two
        # lines): the grammar decides on the whole text, so errors and results are the grammar's.
        return PtxAst(path, lark_parse(s, path, "start"))
