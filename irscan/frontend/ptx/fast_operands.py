"""The fast path's operand decoder: an instruction's operand text -> syntax-tree operands.

Compiler output repeats a few thousand distinct operand texts millions of times, so each distinct raw
text is decoded once and cached.  What the decoder does not know raises :class:`Bail` and the grammar
reads the statement instead (:mod:`irscan.frontend.ptx.fast`); the result must be the grammar's, which
the tests check on the corpus and on fuzzed text.

Every pattern here is linear: no two adjacent quantifiers can share a character (``[ \\t]*`` around an
optional ``+disp`` once was, and 65 KB of spaces in ``[...]`` took a minute), and a bracket that is not
closed is read to the end once (the decoder then bails on it) instead of once per bracket.
"""

from __future__ import annotations

import re

from irscan.frontend.ptx.ast import Addr, AddrExtra, AstOperand, Dual, Imm, Neg, Paren, SymOff, Vec, VecElem
from irscan.frontend.ptx.lexical import NAME_P, Bail, int_value

_OP_REG = re.compile(NAME_P + r"(?:\.[xyzw])?$")
_OP_INT = re.compile(r"-?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)U?$")
_OP_FLOAT = re.compile(r"-?(?:0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?)$")
_ADDR_IN = re.compile(
    r"(%[\w$]+|[A-Za-z_$][\w$]*|(?:0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)U?)"
    r"(?:\+(-?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)U?)|(-(?:0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)U?))?$"
)
#: top-level comma-separated parts; a bracket runs to its first closer (PTX operands do not nest
#: brackets of one kind), or to the end when there is none (one read, and the decoder bails on it)
_SPLIT = re.compile(r"(?:[^,{\[(]|\{[^}]*\}?|\[[^\]]*\]?|\([^)]*\)?)+")
#: the common operands in one go: 1 register or symbol, 2 decimal / hex integer, 3-4 [base+disp]
_SIMPLE_OPERAND = re.compile(
    rf"[ \t\r\n]*(?:({NAME_P}(?:\.[xyzw])?)|(-?(?:0[xX][0-9a-fA-F]+|[1-9][0-9]*|0)U?)"
    rf"|\[[ \t]*({NAME_P})[ \t]*(?:\+[ \t]*(-?(?:[1-9][0-9]*|0))[ \t]*)?\])[ \t\r\n]*$"
)
#: two words with only white space between them: "%r5 100000" is two tokens, a missing comma
_WORD_GAP = re.compile(r"[\w$%.]\s+[\w$%.]|-\s")

#: raw operand text -> its operand.  Bounded in entries and in key length, so that it cannot grow with
#: hostile input; it lives across modules (the same operands recur in every kernel a compiler emits).
_CACHE: dict[str, AstOperand] = {}
_CACHE_ENTRIES = 200_000
_CACHE_KEY_CHARS = 128


def split_commas(s: str) -> list[str]:
    """``s`` split at its top-level commas; a stray bracket or an empty part: :class:`Bail`."""
    if "{" in s or "[" in s or "(" in s:
        parts = _SPLIT.findall(s)
        if ",".join(parts) != s:
            raise Bail
        return parts
    return s.split(",")


def operands(args: str) -> tuple[AstOperand, ...]:
    """An instruction's operand text (between the opcode and the ``;``) -> its operands."""
    if not args or args.isspace():
        return ()
    parts = split_commas(args)
    cache = _CACHE
    out: list[AstOperand] = []
    for p in parts:
        v = cache.get(p)
        if v is None:
            q = p.strip()
            r = q[1:]
            # "%r1234": most operands are registers seen once; no need to cache
            v = q if q[:1] == "%" and r.isalnum() and r.isascii() else operand(p)
        out.append(v)
    return tuple(out)


def operand(raw: str) -> AstOperand:
    """One operand's text -> syntax tree (cached: the same operand text recurs thousands of times)."""
    try:
        return _CACHE[raw]
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
        if not s or _WORD_GAP.search(s):
            raise Bail
        v = _decode("".join(s.split()))
    if len(_CACHE) < _CACHE_ENTRIES and len(raw) <= _CACHE_KEY_CHARS:
        _CACHE[raw] = v
    return v


def _atom(s: str) -> str | Imm:
    if _OP_REG.match(s):
        return s
    if _OP_INT.match(s):
        return Imm(s, int_value(s))
    if _OP_FLOAT.match(s):
        return Imm(s, None)
    raise Bail


def _decode(s: str) -> AstOperand:
    """An operand other than the simple ones, white space removed."""
    c = s[0]
    if c == "[":
        if s[-1] != "]":
            raise Bail
        inner = s[1:-1]
        parts = split_commas(inner) if "," in inner else [inner]
        m = _ADDR_IN.match(parts[0])
        if not m:
            raise Bail
        b = m.group(1)
        base: str | Imm = b if not b[0].isdigit() else Imm(b, int_value(b))
        off = m.group(2) or m.group(3)
        extra = tuple(_addr_extra(p) for p in parts[1:])
        return Addr(base, int_value(off) if off else 0, extra)
    if c == "{":
        return _vector(s)
    if c == "(":
        inner = s[1:-1]
        if s[-1] != ")" or "(" in inner or ")" in inner:  # no parentheses in parentheses (the grammar's rule)
            raise Bail
        return Paren(tuple(operand(p) for p in split_commas(inner)) if inner else ())
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


def _vector(s: str) -> Vec:
    """``{%r1,_,!%p1}`` (white space removed)."""
    if s[-1] != "}" or len(s) < 3:
        raise Bail
    elems: list[VecElem] = []
    for e in s[1:-1].split(","):
        if e[:1] == "!":
            if not _OP_REG.match(e[1:]):
                raise Bail
            elems.append(Neg(e[1:]))
        else:
            elems.append(_atom(e))
    return Vec(tuple(elems))


def _addr_extra(s: str) -> AddrExtra:
    """What follows an address's base: ``{%r1,%r2}`` (tensor coordinates) or an atom."""
    if not s:
        raise Bail
    return _vector(s) if s[0] == "{" else _atom(s)
