"""``grammars/ptx.lark`` as the reference PTX parser.

The grammar (LALR, contextual lexer) is the judge of what PTX text means: :func:`parse_tree` runs it
over a whole text, :func:`lark_parse` over one statement (start symbols ``stmt`` / ``top``) when the
fast path (:mod:`irscan.frontend.ptx.fast`) hands one over.  Either way the lark tree becomes the syntax
tree of :mod:`irscan.frontend.ptx.ast` (:mod:`irscan.frontend.ptx.convert`), and a lark error becomes an
:class:`irscan.ir.IRSyntaxError` with the line and column in the file and the tokens that were expected.
lark is imported inside the functions that use it, so text the fast path handles never loads it.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from irscan.frontend.ptx.ast import PtxAst
from irscan.frontend.ptx.convert import ToAst, shift_pos, shown
from irscan.frontend.ptx.lexical import blank_comments
from irscan.ir import IRSyntaxError
from irscan.resources import grammar_path

GRAMMAR_PATH = grammar_path("ptx.lark")

# ============================================================================================ the grammar

_LARK_LOCK = threading.Lock()


@functools.lru_cache(maxsize=1)
def _lark() -> Any:
    from irscan.frontend import lark_tables

    with _LARK_LOCK:
        return lark_tables.build(
            GRAMMAR_PATH, start=["start", "stmt", "top"], propagate_positions=True, maybe_placeholders=False
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
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        expected = [names.get(n, n) for n in (exc.accepts or exc.expected)]
        if tok.type == "$END":
            line, col = shift_pos(*_end_pos(text), line0, col0)
            return IRSyntaxError(path, line, col, "unexpected end of input", expected)
        line, col = shift_pos(tok.line or 1, tok.column or 1, line0, col0)
        return IRSyntaxError(path, line, col, f"unexpected {shown(str(tok))}", expected)
    if isinstance(exc, UnexpectedCharacters):
        line, col = shift_pos(exc.line, exc.column, line0, col0)
        at = exc.pos_in_stream
        ch = text[at] if at is not None and at < len(text) else ""
        expected = [names.get(n, n) for n in (exc.allowed or ())]
        return IRSyntaxError(path, line, col, f"unexpected character {ch!r}", expected)
    if isinstance(exc, UnexpectedEOF):
        line, col = shift_pos(*_end_pos(text), line0, col0)
        return IRSyntaxError(path, line, col, "unexpected end of input", [names.get(n, n) for n in exc.expected])
    return IRSyntaxError(path, line0, col0, str(exc))


def _end_pos(text: str) -> tuple[int, int]:
    line = text.count("\n") + 1
    return line, len(text) - (text.rfind("\n") + 1) + 1


def lark_parse(text: str, path: str, start: str, line0: int = 1, col0: int = 1) -> Any:
    """``text`` (which starts at ``line0:col0`` of ``path``) through the grammar's rule ``start``."""
    from lark.exceptions import LarkError

    try:
        tree = _lark().parse(text, start=start)
    except LarkError as e:
        raise _syntax_error(e, path, text, line0, col0) from None
    conv = ToAst(text, path, line0, col0)
    if start == "start":
        return conv.start(tree)
    return conv(tree)


def parse_tree(text: str, path: str = "<ptx>") -> PtxAst:
    """The reference parse: the whole text through ``grammars/ptx.lark``.  Slow (~0.35 MB/s)."""
    s = blank_comments(text)
    return PtxAst(path, lark_parse(s, path, "start"))
