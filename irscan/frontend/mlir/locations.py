"""MLIR locations: the one parser of ``loc(...)`` text, alias resolution, and location stripping.

Both MLIR parse paths and the capture hook read locations here.  The grammar only checks that a
``loc(...)`` group is balanced; what it means is decided by :func:`parse_loc_text`, so the fast path,
the full path and the capture metadata cannot disagree about a location.

A parsed location is a small tuple: ``("u",)`` unknown, ``("f", file, line, col)``,
``("n", name, child | None)``, ``("c", callee, caller)``, ``("fu", children)``, ``("r", "#alias")``,
anything else ``("o",)``.  Parsing and resolving use explicit stacks: the nesting depth of a location
(``callsite`` chains, names, ``fused`` lists) follows the input and must not follow Python's stack.
"""

from __future__ import annotations

import re
from typing import Any

from irscan import ir
from irscan.frontend.text import STRING_P, unescape

__all__ = [
    "LocResolver",
    "LocSyntaxError",
    "file_line_col",
    "parse_loc_text",
    "split_trailing_loc",
    "strip_inline_locs",
    "strip_locations",
]

#: a location tuple (see the module docstring)
LocExpr = tuple[Any, ...]

_LOC_TOK = re.compile(STRING_P + r"|#[\w$.\-]+|\d+|[():\[\],<>]|[A-Za-z_][\w$.]*|\S")
_DI_LOCATION = re.compile(r"#llvm\.di_location<\s*(#[\w$.\-]+)")
#: deepest chain of ``#loc`` aliases that name one another (the printer writes two or three)
MAX_ALIAS_DEPTH = 64


class LocSyntaxError(Exception):
    """A location that does not parse or does not resolve; callers add the file, line and column."""


def parse_loc_text(text: str) -> LocExpr:
    """A location (``loc(...)``, or an alias value such as ``#llvm.di_location<#loc in ...>``) -> tuple."""
    text = text.strip()
    if text.startswith("#llvm.di_location<"):
        m = _DI_LOCATION.match(text)
        return ("r", m.group(1)) if m else ("o",)
    if not text.startswith("loc("):
        return ("o",)
    toks = _LOC_TOK.findall(text)
    expr, i = _parse_inner(toks, 2)
    if i >= len(toks) or toks[i] != ")" or i + 1 != len(toks):
        raise LocSyntaxError(f"bad location {text[:80]!r}")
    return expr


def _tok(toks: list[str], i: int) -> str:
    return toks[i] if i < len(toks) else ""


def _expect(toks: list[str], i: int, want: str) -> int:
    if _tok(toks, i) != want:
        raise LocSyntaxError(f"expected {want!r}")
    return i + 1


def _int(tok: str) -> int:
    if not (tok.isascii() and tok.isdigit()) or len(tok) > 20:
        raise LocSyntaxError(f"expected a line or column number, not {tok[:20]!r}")
    return int(tok)


def _file_loc(toks: list[str], i: int, file: str) -> tuple[LocExpr, int]:
    """``"file":line(:col)?( to (line)?(:col)?)?`` from the ``:`` after the file name."""
    line = _int(_tok(toks, i + 1))
    i += 2
    col = 0
    if _tok(toks, i) == ":":
        col = _int(_tok(toks, i + 1))
        i += 2
    if _tok(toks, i) == "to":
        i += 1
        while i < len(toks) and (toks[i] == ":" or toks[i].isdigit()):
            i += 1
    return ("f", file, line, col), i


def _skip_angle(toks: list[str], i: int) -> int:
    """Past a balanced ``<...>`` group at ``i`` (fused metadata), if there is one."""
    if _tok(toks, i) != "<":
        return i
    depth = 0
    while i < len(toks):
        if toks[i] == "<":
            depth += 1
        elif toks[i] == ">":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def _parse_inner(toks: list[str], i: int) -> tuple[LocExpr, int]:
    """One location expression from token ``i``; open ``name(``, ``callsite(`` and ``fused[`` wait
    on ``stack`` for their inner locations instead of recursing."""
    stack: list[list[Any]] = []
    while True:
        t = _tok(toks, i)
        val: LocExpr
        if not t:
            raise LocSyntaxError("truncated location")
        if t == "unknown":
            val, i = ("u",), i + 1
        elif t.startswith('"'):
            s = unescape(t[1:-1])
            nxt = _tok(toks, i + 1)
            if nxt == ":":
                val, i = _file_loc(toks, i + 1, s)
            elif nxt == "(":
                stack.append(["n", s])
                i += 2
                continue
            else:
                val, i = ("n", s, None), i + 1
        elif t == "callsite":
            stack.append(["c"])
            i = _expect(toks, i + 1, "(")
            continue
        elif t == "fused":
            stack.append(["fu"])
            i = _expect(toks, _skip_angle(toks, i + 1), "[")
            continue
        elif t.startswith("#"):
            val, i = ("r", t), i + 1
        else:
            raise LocSyntaxError(f"unexpected {t[:40]!r} in location")
        # hand the finished expression to the frames waiting for it
        while stack:
            fr = stack[-1]
            if fr[0] == "n":
                i = _expect(toks, i, ")")
                stack.pop()
                val = ("n", fr[1], val)
            elif fr[0] == "c":
                if len(fr) == 1:  # the callee: the caller follows `at`
                    fr.append(val)
                    i = _expect(toks, i, "at")
                    break
                i = _expect(toks, i, ")")
                stack.pop()
                val = ("c", fr[1], val)
            else:  # fused
                fr.append(val)
                if _tok(toks, i) == ",":
                    i += 1
                    break
                i = _expect(toks, i, "]")
                stack.pop()
                val = ("fu", tuple(fr[1:]))
        else:
            return val, i


class LocResolver:
    """Resolves location expressions through ``#loc`` aliases to :class:`irscan.ir.Loc` (cached).

    ``aliases`` maps an alias name to its parsed tuple, or to its raw text (parsed on first use).
    A location resolves to its first file location, looking into a call site's callee only and into
    a fused location's parts in order; the outermost name on the way names it.
    """

    def __init__(self, aliases: dict[str, Any]) -> None:
        self.aliases = aliases
        self.cache: dict[str, ir.Loc | None] = {}

    def alias(self, name: str, depth: int = 0) -> ir.Loc | None:
        if name in self.cache:
            return self.cache[name]
        if depth > MAX_ALIAS_DEPTH:
            raise LocSyntaxError(f"location aliases nested deeper than {MAX_ALIAS_DEPTH} (a cycle?) at {name}")
        v = self.aliases.get(name)
        if v is None:
            raise LocSyntaxError(f"undefined location alias {name}")
        if isinstance(v, str):
            v = parse_loc_text(v)
            self.aliases[name] = v
        loc = self.resolve(v, depth + 1)
        self.cache[name] = loc
        return loc

    def resolve(self, e: LocExpr | None, depth: int = 0) -> ir.Loc | None:
        if e is None:
            return None
        todo: list[tuple[LocExpr, str | None]] = [(e, None)]  # (expression, outermost name above it)
        while todo:
            x, name = todo.pop()
            k = x[0]
            if k == "f":
                return ir.Loc(x[1], x[2], x[3], name)
            if k == "r":
                loc = self.alias(x[1], depth)
                if loc is not None:
                    return loc if name is None else ir.Loc(loc.file, loc.line, loc.col, name)
            elif k == "n":
                if x[2] is not None:
                    todo.append((x[2], x[1] if name is None else name))
            elif k == "c":
                todo.append((x[1], name))
            elif k == "fu":
                todo.extend((c, name) for c in reversed(x[1]))
        return None


def file_line_col(loc_text: str) -> tuple[str, int, int] | None:
    """(file, line, column) that an inline location's text (``str(op.location)``) resolves to, or
    None when it names no file or does not parse (aliases cannot resolve without their module)."""
    try:
        loc = LocResolver({}).resolve(parse_loc_text(loc_text))
    except LocSyntaxError:
        return None
    return (loc.file, loc.line, loc.col) if loc is not None else None


def split_trailing_loc(body: str) -> tuple[str, str | None]:
    """(op text without its trailing ``loc(...)``, the location text or None)."""
    if body.endswith(")"):
        j = body.rfind(" loc(")
        if j >= 0:
            return body[:j].rstrip(), body[j + 1 :]
    return body, None


def strip_locations(text: str) -> str:
    """``text`` without ``#loc`` alias lines and ``loc(...)`` locations.

    The DSL's own parser (``cutlass._mlir.ir.Module.parse``) does not read back most captures as
    printed: an upstream printer bug writes ``nvvm.barrier loc(#loc9)``, and the parser takes the
    location for the op's optional attribute.  Without locations every capture parses; op names,
    counts and types do not depend on them.
    """
    out: list[str] = []
    for line in text.split("\n"):
        if line.startswith("#loc"):
            continue
        if "loc(" in line:
            line = strip_inline_locs(line)
        out.append(line)
    return "\n".join(out)


def strip_inline_locs(line: str) -> str:
    """``line`` without its ``loc(...)`` groups (and the space before each)."""
    out: list[str] = []
    i = 0
    while (j := line.find("loc(", i)) >= 0:
        if j > 0 and (line[j - 1].isalnum() or line[j - 1] in "_.$"):  # the tail of a longer word
            out.append(line[i : j + 4])
            i = j + 4
            continue
        k, depth = j + 4, 1  # skip to the matching ')', over nested parens and string literals
        while k < len(line) and depth:
            ch = line[k]
            if ch == '"':
                k += 1
                while k < len(line) and line[k] != '"':
                    k += 2 if line[k] == "\\" else 1
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            k += 1
        out.append(line[i : j - 1 if j > 0 and line[j - 1] == " " else j])
        i = k
    out.append(line[i:])
    return "".join(out)
