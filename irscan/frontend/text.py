"""Text helpers every IR reader shares: the one top-level splitter, string literals, bracket balance."""

from __future__ import annotations

import re


def split_top(s: str, sep: str = ",") -> list[str]:
    """The top-level items of ``s`` between separators ``sep``, stripped, empty ones dropped.

    ``()``, ``[]``, ``{}`` and ``<>`` nest (the ``>`` of an arrow ``->`` closes nothing), and string
    literals are opaque, so ``a, (b, c), "d, e"`` is three items; ``sep`` may be longer than a
    character (``" -> "``, ``" to "``).  Type lists, layouts and capture metadata all split here.
    """
    if '"' not in s and not any(c in s for c in "([<{"):
        return [p.strip() for p in s.split(sep) if p and not p.isspace()]
    out: list[str] = []
    depth = cur = i = 0
    n, first = len(s), sep[0]
    while i < n:
        ch = s[i]
        if ch == '"':  # skip the literal, escapes included
            i += 1
            while i < n and s[i] != '"':
                i += 2 if s[i] == "\\" else 1
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}" or (ch == ">" and (i == 0 or s[i - 1] != "-")):
            depth -= 1
        elif depth == 0 and ch == first and s.startswith(sep, i):
            out.append(s[cur:i].strip())
            cur = i = i + len(sep)
            continue
        i += 1
    out.append(s[cur:].strip())
    return [x for x in out if x]


#: a string literal, quotes included, escapes skipped: the one pattern every reader's regexes use.
#: Unrolled (a run of plain characters, then escape + run, ...), not ``(?:[^"\\\n]|\\.)*``: Python's
#: re keeps a backtrack entry per iteration of an alternation inside a repeat, ~150 bytes a character,
#: so a 10 MB string in a PTX or MLIR file took GBs; the unrolled form matches the same text in O(1)
STRING_P = r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"'
_STR_RE = re.compile(STRING_P)


def strip_strings(s: str) -> str:
    """``s`` with every string literal's contents blanked (``"a, b"`` -> ``""``): brackets and
    separators inside strings stop counting."""
    return _STR_RE.sub('""', s) if '"' in s else s


def balanced(s: str) -> bool:
    """Whether every bracket kind in ``s`` (strings blanked) opens as often as it closes; the ``>``
    of an arrow ``->`` is no bracket."""
    return (
        s.count("(") == s.count(")")
        and s.count("[") == s.count("]")
        and s.count("{") == s.count("}")
        and s.count("<") == s.count(">") - s.count("->")
    )


def unescape(s: str) -> str:
    """MLIR string literal contents -> text (``\\22`` -> ``"``, ``\\5C`` or ``\\\\`` -> ``\\``)."""
    if "\\" not in s:
        return s
    out = bytearray()
    i, n = 0, len(s)
    hexdigits = "0123456789abcdefABCDEF"
    while i < n:
        ch = s[i]
        if ch == "\\" and i + 1 < n:
            nxt = s[i + 1]
            if nxt == "\\":
                out += b"\\"
                i += 2
                continue
            pair = s[i + 1 : i + 3]
            if len(pair) == 2 and all(c in hexdigits for c in pair):
                out.append(int(pair, 16))
                i += 3
                continue
            if nxt in 'nt"':
                out += {"n": b"\n", "t": b"\t", '"': b'"'}[nxt]
                i += 2
                continue
        out += ch.encode()
        i += 1
    return out.decode("utf-8", errors="replace")
