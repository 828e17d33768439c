"""Grammar-aware mutations of MLIR and PTX text.

Each mutator knows just enough of the IR's shape (SSA names, types, integer literals, operands,
lines as ops) to make a change a real front end has to reason about: a type swapped for another
the grammar accepts, a value that is never defined, a dependency chain of hundreds of ops, a type
nested a thousand deep.  Random bytes alone would die in the lexer and never reach the analysis.

A mutator is ``(rng, text, ir, scale) -> text``; ``scale`` is 1 for the bounded in-suite run and
larger for the long run (bigger nesting depths, longer chains, longer lines).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

Mutator = Callable[[random.Random, str, str, int], str]

_TOKEN = re.compile(r"[%@#!^]?[\w.$]+|\S")
_INT = re.compile(r"(?<![\w%#.$])-?\d+\b")
_MLIR_TYPES = ("i1", "i8", "i16", "i32", "i64", "i128", "f16", "bf16", "f32", "f64", "index")
_PTX_TYPES = (".s32", ".u32", ".b32", ".s64", ".u64", ".b64", ".u16", ".s8", ".f32", ".pred")
_MLIR_TYPE_RE = re.compile(r"\b(?:" + "|".join(_MLIR_TYPES) + r")\b")
_PTX_TYPE_RE = re.compile("|".join(re.escape(t) + r"\b" for t in _PTX_TYPES))
_HOSTILE_INTS = (
    "0", "-1", "1", "2147483647", "2147483648", "-2147483648", "4294967296", "9223372036854775808",
    "18446744073709551616", "-9223372036854775809", "1" + "0" * 40, "-" + "7" * 30,
)  # fmt: skip
_MLIR_DEF = re.compile(r"^(\s*)(%[\w.$-]+) = llvm\.(?:add|mul|sub|shl|or|and|xor|sext|zext|trunc)\b.*: i32\b.*$", re.M)
_PTX_DEF = re.compile(r"^\s*(?:add|mad\.lo|mul\.lo|sub|shl)\.[su]32\s+(%r\d+),", re.M)


def _pick_match(rng: random.Random, pattern: re.Pattern[str], text: str, limit: int = 4000) -> re.Match[str] | None:
    matches = []
    for i, m in enumerate(pattern.finditer(text)):
        if i >= limit:
            break
        matches.append(m)
    return rng.choice(matches) if matches else None


def _splice(text: str, m: re.Match[str], new: str) -> str:
    return text[: m.start()] + new + text[m.end() :]


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _body_line(rng: random.Random, lines: list[str]) -> int:
    """An index of a line inside a function body (indented), or any line."""
    inner = [i for i, ln in enumerate(lines) if ln.startswith(("    ", "\t"))]
    return rng.choice(inner) if inner else rng.randrange(len(lines))


def truncate(rng: random.Random, text: str, ir: str, scale: int) -> str:
    """Cut the file at a token boundary: a file that ends mid-op, mid-type, mid-function."""
    ends = [
        m.end() for _, m in zip(range(20000), _TOKEN.finditer(text, rng.randrange(max(1, len(text)))), strict=False)
    ]
    return text[: rng.choice(ends)] if ends else ""


def swap_type(rng: random.Random, text: str, ir: str, scale: int) -> str:
    """One type for another the grammar knows (i32 <-> i64, .s32 <-> .u64, ...), once or everywhere."""
    pattern, types = (_MLIR_TYPE_RE, _MLIR_TYPES) if ir == "mlir" else (_PTX_TYPE_RE, _PTX_TYPES)
    new = rng.choice(types)
    if rng.random() < 0.15:
        old = rng.choice(types)
        return re.sub(re.escape(old) + r"\b", new, text)
    for _ in range(rng.randint(1, 3)):
        m = _pick_match(rng, pattern, text)
        if m:
            text = _splice(text, m, new)
    return text


def swap_number(rng: random.Random, text: str, ir: str, scale: int) -> str:
    """An integer literal replaced by a huge, negative or boundary one, or by a 5,000-digit one (past
    Python's 4,300-digit int() limit)."""
    m = _pick_match(rng, _INT, text)
    if not m:
        return text
    if rng.random() < 0.3:
        new = rng.choice("123456789") + "".join(rng.choice("0123456789") for _ in range(rng.choice((4300, 5000))))
    else:
        new = rng.choice(_HOSTILE_INTS)
    return _splice(text, m, new)


def undefined_value(rng: random.Random, text: str, ir: str, scale: int) -> str:
    """A use of a value, block or symbol that nothing defines."""
    if ir == "mlir":
        pattern = re.compile(r"(?<=[ (\[,])%[\w.$-]+(?! =)")
        new = rng.choice(("%undefined_fuzz", "%999999", "%arg99", "^bb999", "@nosuch_fuzz"))
    else:
        pattern = re.compile(r"(?<=[ \t,\[])%(?:rd?|p|f|fd|rs)\d+")
        new = rng.choice(("%r999999", "%rd999999", "%nosuch", "%p77777", "%tid.w"))
    m = _pick_match(rng, pattern, text)
    return _splice(text, m, new) if m else text


def edit_lines(rng: random.Random, text: str, ir: str, scale: int) -> str:
    """Delete, duplicate or swap whole lines (ops): redefinitions, uses before defs, lost terminators."""
    lines = _lines(text)
    if len(lines) < 2:
        return text
    i, j = _body_line(rng, lines), _body_line(rng, lines)
    op = rng.choice(("delete", "dup", "swap"))
    if op == "delete":
        del lines[i]
    elif op == "dup":
        lines.insert(j, lines[i])
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def deep_nesting(rng: random.Random, text: str, ir: str, scale: int) -> str:
    """Nesting a thousand deep: braces, parentheses in an operand, nested !llvm.array / struct types."""
    depth = rng.choice((200, 330, 1000)) * scale
    if ir == "mlir":
        kind = rng.choice(("braces", "array", "struct", "parens", "loc"))
        nested = {
            "braces": "{" * depth + "}" * depth,
            "array": "!llvm.array<2 x " * depth + "i32" + ">" * depth,
            "struct": "!llvm.struct<(" * depth + "i32" + ")>" * depth,
            "parens": "(" * depth + "%0" + ")" * depth,
            "loc": "loc(fused[" * depth + '"x"' + "])" * depth,
        }[kind]
        if kind in ("array", "struct"):
            m = _pick_match(rng, _MLIR_TYPE_RE, text)
            if m:
                return _splice(text, m, nested)
        if kind == "loc":
            m = _pick_match(rng, re.compile(r"loc\(#loc\d*\)"), text)
            if m:
                return _splice(text, m, nested)
    else:
        kind = rng.choice(("parens", "braces", "address"))
        nested = {
            "parens": "(" * depth + "%r1" + ")" * depth,
            "braces": "{" * depth + "}" * depth,
            "address": "[%rd1+" + "(" * depth + "4" + ")" * depth + "]",
        }[kind]
        if kind in ("parens", "address"):
            pattern = re.compile(r"%r\d+(?=[,;])") if kind == "parens" else re.compile(r"\[%rd\d+\]")
            m = _pick_match(rng, pattern, text)
            if m:
                return _splice(text, m, nested)
    lines = _lines(text)
    lines.insert(_body_line(rng, lines), nested)
    return "\n".join(lines)


def long_run(rng: random.Random, text: str, ir: str, scale: int) -> str:
    """Long lines, long digit runs in a name, long space runs inside ``[...]``: the inputs that make a
    backtracking regular expression quadratic."""
    n = rng.choice((5000, 20000, 65000)) * scale
    kind = rng.choice(("digits", "spaces", "line", "comment"))
    if kind == "digits":
        pattern = re.compile(r"%r\d+" if ir == "ptx" else r"%\d+")
        m = _pick_match(rng, pattern, text)
        if m:
            return _splice(text, m, m.group()[:2] + "0" * n + m.group()[2:] + rng.choice(("", "x", "_")))
    if kind == "spaces":
        m = _pick_match(rng, re.compile(r"\[[^\]\n]{1,200}\]"), text)
        if m:
            inner = m.group()[1:-1]
            cut = rng.randrange(len(inner) + 1)
            return _splice(text, m, "[" + inner[:cut] + " " * n + inner[cut:] + rng.choice(("]", "", " x]")))
    lines = _lines(text)
    filler = rng.choice(("a", "%", "1", " ", "(", "x, "))
    line = ("// " if ir == "mlir" else "// ") + filler * n if kind == "comment" else filler * n
    lines.insert(_body_line(rng, lines), line)
    return "\n".join(lines)


def dependency_chain(rng: random.Random, text: str, ir: str, scale: int) -> str:
    """A chain of hundreds of ops feeding a real value (a 300-step unrolled index chain compiles fine in
    the DSL): a walk that recurses once per op overflows Python's stack."""
    n = rng.choice((150, 300, 1000)) * scale
    if ir == "ptx":
        m = _pick_match(rng, _PTX_DEF, text)
        if not m:
            return text
        reg = m.group(1)
        end = text.index("\n", m.end()) + 1 if "\n" in text[m.end() :] else len(text)
        steps = "".join(f"\tadd.s32 \t{reg}, {reg}, {rng.randint(1, 9)};\n" for _ in range(n))
        return text[:end] + steps + text[end:]
    m = _pick_match(rng, _MLIR_DEF, text)
    if not m:
        return text
    indent, name = m.group(1), m.group(2)
    chain = [f"{indent}%fz0 = llvm.add {name}, {name} : i32"]
    chain += [f"{indent}%fz{k} = llvm.add %fz{k - 1}, {name} : i32" for k in range(1, n)]
    end = text.find("\n", m.end())
    end = len(text) if end < 0 else end
    nxt = text.find("llvm.func", end)
    region = text[end : nxt if nxt >= 0 else len(text)]
    region = re.sub(re.escape(name) + r"(?![\w.$-])(?! =)", f"%fz{n - 1}", region)
    return text[:end] + "\n" + "\n".join(chain) + region + (text[nxt:] if nxt >= 0 else "")


def many_values(rng: random.Random, text: str, ir: str, scale: int) -> str:
    """Thousands of independent values (a 100k-register PTX file): time and memory must stay linear."""
    n = rng.choice((2000, 10000)) * scale
    lines = _lines(text)
    at = _body_line(rng, lines)
    if ir == "ptx":
        new = [f"\t.reg .b32 \t%fz<{n}>;"] + [f"\tadd.s32 \t%fz{k}, %r1, {k};" for k in range(n)]
    else:
        m = _MLIR_DEF.search(text)
        src = m.group(2) if m else "%0"
        new = [f"      %fz{k} = llvm.add {src}, {src} : i32" for k in range(n)]
    lines[at:at] = new
    return "\n".join(lines)


def splice_foreign(rng: random.Random, text: str, ir: str, scale: int) -> str:
    """A line of the other IR (or of Python) inside this one."""
    foreign = rng.choice(
        (
            "\tld.global.b32 \t%r6, [%rd4];",
            "      %8 = llvm.add %7, %6 overflow<nsw> : i32 loc(#loc10)",
            "def f(x):\n    return x",
            ".visible .entry k(\n.param .u64 p\n)\n{\nret;\n}",
            "module attributes {gpu.container_module} {",
            "}" * rng.randint(1, 5),
        )
    )
    lines = _lines(text)
    lines.insert(rng.randrange(len(lines) + 1), foreign)
    return "\n".join(lines)


def line_endings(rng: random.Random, text: str, ir: str, scale: int) -> str:
    """CRLF, bare CR, a BOM, NULs, tabs for spaces: text a Windows editor or a bad pipe produced."""
    kind = rng.choice(("crlf", "cr", "bom", "nul", "tabs"))
    if kind == "crlf":
        return text.replace("\n", "\r\n")
    if kind == "cr":
        return text.replace("\n", "\r")
    if kind == "bom":
        return "\ufeff" + text
    if kind == "nul":
        at = rng.randrange(len(text) + 1)
        return text[:at] + "\x00" + text[at:]
    return text.replace(" ", "\t")


TEXT_MUTATORS: dict[str, Mutator] = {
    f.__name__: f
    for f in (
        truncate, swap_type, swap_number, undefined_value, edit_lines, deep_nesting, long_run,
        dependency_chain, many_values, splice_foreign, line_endings,
    )
}  # fmt: skip

_BAD_UTF8 = (b"\xff", b"\xfe\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x80", b"\xe2\x82")


def flip_bytes(rng: random.Random, data: bytes) -> bytes:
    """A few bytes flipped at random: the mutation that knows nothing, to catch what the others miss."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if buf:
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
    return bytes(buf)


def invalid_utf8(rng: random.Random, data: bytes) -> bytes:
    """Bytes that are not UTF-8 (a lone continuation byte, a surrogate, an overlong form)."""
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice(_BAD_UTF8) + data[at:]


BYTE_MUTATORS: dict[str, Callable[[random.Random, bytes], bytes]] = {
    "flip_bytes": flip_bytes,
    "invalid_utf8": invalid_utf8,
}
