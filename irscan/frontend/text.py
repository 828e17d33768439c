"""Split type and layout text at its top-level commas (``a, (b, c), d``), the one small parser that
capture metadata and parameter naming both need."""

from __future__ import annotations


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
