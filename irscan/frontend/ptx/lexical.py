"""The lexical rules both PTX parsers share, so that the fast path reads text exactly as the grammar does.

Integer values (:func:`int_value`, 64 bits as in PTX), comments blanked (:func:`blank_comments`), an
instruction's text on one line (:func:`one_line`).  :class:`Bail` is how either side says "the grammar
must judge this": the fast path (:mod:`irscan.frontend.ptx.fast`) raises it for any statement it does not
know, and the grammar path (:mod:`irscan.frontend.ptx.convert`) turns the one that reaches it, an integer
out of range, into a located :class:`irscan.ir.IRSyntaxError`.  Nothing here may backtrack: every scan is
linear in its input.
"""

from __future__ import annotations

import functools
import re


class Bail(Exception):
    """The fast path does not know this statement: let the grammar have it."""


class LiteralOutOfRange(Bail):
    """An integer literal no PTX integer holds (over 64 bits); the grammar path turns it into a located
    :class:`irscan.ir.IRSyntaxError` (:meth:`_ToAst.int`)."""


#: the most digits a literal below 2**64 can have in any base (64 binary digits); more is out of range,
#: decided before converting, so a million-digit literal costs no quadratic ``int()`` (nor Python's
#: 4,300-digit ValueError)
_MAX_DIGITS = 64


@functools.lru_cache(maxsize=4096)
def int_value(text: str) -> int:
    """PTX integer literal (decimal, 0x hex, 0b binary, 0-prefixed octal, optional U, optional -).

    PTX integers are 64 bits: a literal whose magnitude is 2**64 or more raises :class:`LiteralOutOfRange`
    (ptxas rejects it too); text that is not a literal raises :class:`Bail`."""
    t = text[:-1] if text[-1:] in "Uu" else text
    neg = t.startswith("-")
    if neg:
        t = t[1:]
    if t[:2] in ("0x", "0X"):
        digits, base = t[2:], 16
    elif t[:2] in ("0b", "0B"):
        digits, base = t[2:], 2
    elif len(t) > 1 and t[0] == "0":
        digits, base = t[1:], 8
    else:
        digits, base = t, 10
    sig = digits.lstrip("0")
    if len(sig) > _MAX_DIGITS:
        raise LiteralOutOfRange
    try:
        v = int(sig or "0", base) if digits else int(digits, base)
    except ValueError:
        raise Bail from None  # "0128": the grammar's lexer rejects it, with a position
    if v >= 1 << 64:
        raise LiteralOutOfRange
    return -v if neg else v


#: what can open a comment or a string: comments are blanked, strings skipped (a "//" in one is text)
_COMMENT_OR_STRING = re.compile(r'"|//|/\*')
#: a string's body after its opening quote, and its closing quote if the line has one.  Each character
#: is read once (the two alternatives start differently), so an unclosed string costs its length.
_STRING_REST = re.compile(r'[^"\\\n]*(?:\\.[^"\\\n]*)*"?')  # unrolled: see text.STRING_P


def blank_comments(text: str) -> str:
    """Comments out, strings kept; line and column of everything else unchanged.

    A hand-written scan rather than one ``re.sub``: with a regex, each unclosed ``/*`` or ``"`` would
    be read to the end again from every later opener (quadratic).  At an unclosed ``/*`` the scan
    stops and leaves the rest as it is: the grammar's lexer rejects the text at that ``/`` whatever
    follows, so nothing after it can change the verdict.
    """
    if "/" not in text:
        return text
    out: list[str] = []
    pos = 0  # text[:pos] is done (copied to out)
    i = 0
    n = len(text)
    while True:
        m = _COMMENT_OR_STRING.search(text, i)
        if m is None:
            break
        j = m.start()
        opener = m.group()
        if opener == '"':
            rest = _STRING_REST.match(text, j + 1)  # (never None: it matches the empty string)
            i = rest.end() if rest is not None else j + 1
            continue
        out.append(text[pos:j])
        if opener == "//":
            k = text.find("\n", j)
            pos = i = n if k < 0 else k
            continue
        k = text.find("*/", j + 2)
        if k < 0:  # unclosed: the lexer stops here
            pos = j
            break
        out.append("".join("\n" if c == "\n" else " " for c in text[j : k + 2]))
        pos = i = k + 2
    out.append(text[pos:])
    return "".join(out)


def one_line(text: str) -> str:
    """An instruction written over several lines, as one line (Op.text is one line)."""
    return " ".join(text.split()) if "\n" in text else text


# -- the grammar's terminals as regex text, for the fast path's patterns (grammars/ptx.lark has the originals)
#: a register or an identifier (REG / IDENT without the vector component)
NAME_P = r"(?:%[\w$]+|[A-Za-z_$][\w$]*)"
#: .align  .ptr.global.align  .shared::cta
DOTWORD_P = r"\.[A-Za-z_$][\w$]*(?:(?:\.|::)[\w$]+)*"
#: an opcode and all its modifiers, one token (OPCODE)
OPCODE_P = r"[a-z]\w*(?:(?:\.|::)\w+)*"
#: what cannot follow a whole OPCODE_P match.  Put after it, it makes the match atomic: the opcode can
#: give back no character on a failed match (each one given back would be followed by one of these), so
#: a failing statement costs its length once, not its length times the opcode's
OPCODE_END_P = r"(?!\w|(?:\.|::)\w)"
