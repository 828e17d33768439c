"""Text helpers every IR reader shares: the one top-level splitter, string literals, bracket balance."""

from __future__ import annotations

import re


def split_top(s: str) -> list[str]:
    """Top-level comma-separated items of ``s``, stripped; brackets of any kind nest, quotes are opaque."""
    out: list[str] = []
    depth, quoted = 0, False
    cur: list[str] = []
    for ch in s:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "<([{":
            depth += 1
        elif not quoted and ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0 and not quoted:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur).strip())
    return [x for x in out if x]


_STR_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"')


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
