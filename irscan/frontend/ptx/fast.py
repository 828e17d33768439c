"""The fast PTX parser: compiled regexes split the text into statements and decode the common ones.

Compiler output is megabytes of a few statement shapes, and the grammar (:mod:`irscan.frontend.ptx.grammar`)
reads about 0.45 MB/s, as long as a big compile takes.  :func:`parse_ast` decodes instructions,
labels, scopes, ``.loc``, declarations and function headers itself (operands:
:mod:`irscan.frontend.ptx.fast_operands`; directives and headers: :mod:`irscan.frontend.ptx.fast_directives`);
a statement it does not know goes to the grammar on its own.  Anything it cannot place, and any error,
sends the whole text to the grammar, so bad input raises the grammar's :class:`irscan.ir.IRSyntaxError`
and odd but valid input gets the grammar's tree.  The result equals
:func:`irscan.frontend.ptx.grammar.parse_tree`'s, which the tests check on the corpus and on fuzzed text.

Linear by construction: the scanner only moves forward, its patterns cannot backtrack over what they
matched (the opcode is made atomic by :data:`~irscan.frontend.ptx.lexical.OPCODE_END_P`), line and column
are counted incrementally, and the fallback reads the text once more, with the grammar.
"""

from __future__ import annotations

import re
from typing import Any

from irscan.frontend.ptx.ast import Func, Instr, Label, LocDir, PtxAst, Scope
from irscan.frontend.ptx.fast_directives import EOL_DIRS, FAST_DIRS, HEADER_DIRS, fast_header
from irscan.frontend.ptx.fast_operands import operands
from irscan.frontend.ptx.grammar import lark_parse
from irscan.frontend.ptx.lexical import NAME_P, OPCODE_END_P, OPCODE_P, Bail, blank_comments, int_value, one_line
from irscan.frontend.text import STRING_P
from irscan.ir import IRSyntaxError

_WS = re.compile(r"[ \t\r\n\f]*")
_ARGS_P = r"[^;{}\"]*(?:\{[^{};\"]*\}[^;{}\"]*)*"  # operands up to ';', vectors in braces allowed
#: one body statement: 1 instruction (2 guard, 3 opcode, 4 operands), 5-7 .loc, 8 label, 9 brace or ';'
_BODY = re.compile(
    r"[ \t\r\n\f]*(?:"
    rf"((?:@(!?{NAME_P})[ \t\r\n]+)?({OPCODE_P}){OPCODE_END_P}(?![ \t]*:(?!:))({_ARGS_P});)"
    r"|\.loc[ \t]+(\d+)[ \t]+(\d+)[ \t]+(\d+)[ \t\r]*(?=[\n;{}]|$)"
    r"|([A-Za-z_$%][\w$]*)[ \t]*:(?!:)"
    r"|([{};])"
    r")"
)
_DIRNAME = re.compile(r"\.[A-Za-z_]\w*")
_FUNC_KIND = re.compile(r"\.(?:entry|func)\b")
#: statement ends: up to ';' with balanced braces (initialisers), or a line's end (fixed-shape directives)
#: (unrolled, as text.STRING_P is: a per-character alternation in a repeat costs ~120 bytes a character)
_TO_SEMI = re.compile(r'[^;{}"]*(?:(?:' + STRING_P + r'|\{[^{}"]*(?:\{[^{}]*\}[^{}"]*)*\})[^;{}"]*)*;')
_TO_EOL = re.compile(r'[^\n{};"]*(?:' + STRING_P + r'[^\n{};"]*)*')
_HEADER = re.compile(r"[^;{}\"]*")
_SECTION = re.compile(r"[^{};]*\{[^{}]*\}")


class _FastParser:
    """Statement-at-a-time scanner over comment-free text (see the module docstring)."""

    def __init__(self, s: str, path: str) -> None:
        self.s, self.path = s, path
        self.pos = 0
        self.line = 1
        self.line_pos = 0  # position at which self.line was computed
        self.line_start = 0  # where that line starts

    # -- positions, counted from the last one asked (positions only grow, so linear in all)
    def line_at(self, pos: int) -> int:
        s = self.s
        if pos >= self.line_pos:
            n = s.count("\n", self.line_pos, pos)
            if n:
                self.line += n
                self.line_start = s.rfind("\n", self.line_pos, pos) + 1
        else:
            self.line -= s.count("\n", pos, self.line_pos)
            self.line_start = s.rfind("\n", 0, pos) + 1
        self.line_pos = pos
        return self.line

    def col_at(self, pos: int) -> int:
        self.line_at(pos)
        return pos - self.line_start + 1

    def grammar(self, start: int, end: int, rule: str) -> Any:
        """Parse s[start:end] with the grammar's ``rule``: errors come out with file positions."""
        line = self.line_at(start)
        return lark_parse(self.s[start:end], self.path, rule, line, self.col_at(start))

    # -- module
    def parse(self) -> list[Any]:
        items: list[Any] = []
        s = self.s
        n = len(s)
        while True:
            pos = _skip_ws(s, self.pos)
            self.pos = pos
            if pos >= n:
                return items
            c = s[pos]
            if c == ";":
                self.pos = pos + 1
                continue
            if c != ".":
                raise Bail  # something only the grammar can place
            m = _DIRNAME.match(s, pos)
            d = m.group(0) if m else ""
            if d in HEADER_DIRS:
                end = _match_end(_HEADER, s, pos)
                if _FUNC_KIND.search(s, pos, end):
                    if end >= n:
                        raise Bail
                    f = self.header(pos, end)
                    if s[end] == "{":
                        self.pos = end + 1
                        f.body = self.body()
                    elif s[end] == ";":
                        self.pos = end + 1
                    else:
                        raise Bail
                    items.append(f)
                    continue
            items.append(self.directive(pos, d, top=True))

    def header(self, start: int, end: int) -> Func:
        f = fast_header(self.s[start:end])
        if f is None:  # rare (hand-written PTX): the whole text goes to the grammar
            raise Bail
        f.line = self.line_at(start)
        return f

    def directive(self, pos: int, d: str, top: bool) -> Any:
        """A directive statement at ``pos`` (module level or in a body)."""
        s = self.s
        fast = FAST_DIRS.get(d)
        if fast is not None:
            m = fast[0].match(s, pos)
            if m:
                self.pos = m.end()
                return fast[1](m, self.line_at(pos))
        if d in EOL_DIRS:
            end = _match_end(_TO_EOL, s, pos)
        else:
            m = (_SECTION if d == ".section" else _TO_SEMI).match(s, pos)
            if not m:
                raise Bail
            end = m.end()
        self.pos = end
        return self.grammar(pos, end, "top" if top else "stmt")

    # -- function bodies
    def body(self) -> list[Any]:
        """Statements up to the '}' matching the '{' just consumed; nested scopes on an explicit stack."""
        out: list[Any] = []
        stack: list[list[Any]] = []
        cur = out
        s = self.s
        n = len(s)
        body_m = _BODY.match
        pos = self.pos
        while True:
            m = body_m(s, pos)
            li = m.lastindex if m is not None else None
            if m is None or li is None:  # a directive, or something only the grammar can judge
                pos = _skip_ws(s, pos)
                self.pos = pos
                if pos >= n or s[pos] != ".":
                    raise Bail
                dm = _DIRNAME.match(s, pos)
                cur.append(self.directive(pos, dm.group(0) if dm else "", top=False))
                pos = self.pos
            elif li == 1:  # an instruction
                start, end = m.span(1)
                pos = end
                pred, opcode, args = m.group(2, 3, 4)
                try:
                    ops = operands(args)
                except Bail:
                    cur.append(self.grammar(start, end, "stmt"))
                    continue
                text = s[start:end]
                if "\n" in text:
                    text = one_line(text)
                cur.append(Instr(opcode, ops, pred, self.line_at(start), text))
            elif li == 7:  # .loc file line col
                line = self.line_at(m.start(5))
                cur.append(LocDir(int_value(m.group(5)), int_value(m.group(6)), int_value(m.group(7)), (), line))
                pos = m.end()
            elif li == 8:  # label
                cur.append(Label(m.group(8), self.line_at(m.start(8))))
                pos = m.end()
            else:  # { } ;
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


def _match_end(rx: re.Pattern[str], s: str, pos: int) -> int:
    """Where a pattern that matches the empty string (``x*``) ends when matched at ``pos``."""
    m = rx.match(s, pos)
    return m.end() if m is not None else pos


def _skip_ws(s: str, pos: int) -> int:
    return _match_end(_WS, s, pos)


def parse_ast(text: str, path: str = "<ptx>") -> PtxAst:
    """The fast parse (same result as :func:`irscan.frontend.ptx.grammar.parse_tree`)."""
    s = blank_comments(text)
    try:
        return PtxAst(path, _FastParser(s, path).parse())
    except (IRSyntaxError, Bail):
        # Bad input, or input the splitter cuts differently from the grammar (a directive over two
        # lines): the grammar decides on the whole text, so errors and results are the grammar's.
        return PtxAst(path, lark_parse(s, path, "start"))
