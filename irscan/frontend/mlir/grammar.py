"""``grammars/mlir.lark`` loaded as an LALR parser (contextual lexer) whose embedded transformer
(:mod:`irscan.frontend.mlir.transform`) yields the records of :mod:`irscan.frontend.mlir.records`,
and lark's errors as located :class:`irscan.ir.IRSyntaxError`.

Parsing is not re-entrant (the transformer keeps the current source text to slice type texts from);
the module-level parser is used from one thread at a time.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from irscan.frontend import lark_tables
from irscan.frontend.mlir.transform import ToRecords
from irscan.frontend.mlir.transform_types import BadLiteral
from irscan.frontend.mlir.types import Ty
from irscan.ir import IRSyntaxError
from irscan.resources import grammar_path

GRAMMAR_PATH = grammar_path("mlir.lark")

#: the start symbols other code may parse with
STARTS = ["start", "op", "type", "block_label", "attr_dict", "loc_attr"]


# ------------------------------------------------------------------------------------- the parser


class _Parser:
    def __init__(self) -> None:
        self.transformer = ToRecords()
        self.lark = lark_tables.build(
            GRAMMAR_PATH, self.transformer, start=STARTS, maybe_placeholders=False, propagate_positions=False
        )
        self.lock = threading.RLock()

    def parse(self, text: str, start: str = "start") -> Any:
        with self.lock:
            self.transformer.reset(text)
            try:
                return self.lark.parse(text, start=start)
            finally:
                self.transformer.reset("")


@lru_cache(maxsize=1)
def parser() -> _Parser:
    return _Parser()


def parse(text: str, start: str = "start") -> Any:
    """Parse ``text`` from rule ``start``; raises lark's :class:`UnexpectedInput` on bad input."""
    return parser().parse(text, start)


_type_cache: dict[str, Ty] = {}


def parse_type(text: str) -> Ty:
    """A type from its printed text (memoised: the same struct type is printed thousands of times)."""
    ty = _type_cache.get(text)
    if ty is None:
        ty = parse(text, "type")
        _type_cache[text] = ty
    return ty


def syntax_error(
    path: str, text: str, exc: UnexpectedInput, line: int | None = None, col_offset: int = 0
) -> IRSyntaxError:
    """lark's error on ``text`` -> :class:`irscan.ir.IRSyntaxError` with the file's line and column.

    ``line`` / ``col_offset`` place a one-line parse (the fast path parses single op lines) in the file.
    """
    expected = describe_expected(exc)
    if isinstance(exc, UnexpectedEOF) or getattr(exc, "line", -1) in (-1, None):
        lines = text.split("\n")
        while len(lines) > 1 and not lines[-1].strip():
            lines.pop()
        eline, ecol = len(lines), len(lines[-1]) + 1
        msg = "unexpected end of input"
    else:
        eline, ecol = exc.line, exc.column
        if isinstance(exc, UnexpectedToken):
            tok = exc.token
            what = "end of line" if tok.type == "_NL" else repr(str(tok.value))
            msg = f"unexpected {what}" if tok.type != "$END" else "unexpected end of input"
        elif isinstance(exc, UnexpectedCharacters):
            msg = f"unexpected character {exc.char!r}"
        elif isinstance(exc, BadLiteral):
            msg = exc.message
        else:
            msg = "syntax error"
    if line is not None:
        eline, ecol = line, ecol + col_offset
    return IRSyntaxError(path, eline, ecol, msg, expected)


def describe_expected(exc: UnexpectedInput) -> list[str]:
    """What the parser would have accepted at the error, as readable token texts."""
    names: set[str] = set()
    if isinstance(exc, (UnexpectedToken, UnexpectedEOF)):
        names = set(exc.expected or ())
    elif isinstance(exc, UnexpectedCharacters):
        names = set(exc.allowed or ())
    lk = parser().lark
    out = set()
    for n in names:
        if n == "$END":
            out.add("end of input")
            continue
        try:
            term = lk.get_terminal(n)
        except KeyError:
            out.add(n)
            continue
        pat = term.pattern
        if pat.type == "str":
            out.add(repr(pat.value).replace("'", '"'))
        elif n == "_NL":
            out.add("end of line")
        else:
            out.add(n)
    return sorted(out)


__all__ = [
    "STARTS",
    "UnexpectedInput",
    "describe_expected",
    "parse",
    "parse_type",
    "parser",
    "syntax_error",
]
