"""Mutations the first set (mutators.py) does not make: cuts inside a token, a string or an attribute
dict; every Unicode character Python's ``str.splitlines`` or ``\\s`` treats as a line break or a space
(a lexer built on them counts lines differently from an editor); non-ASCII names; hostile numbers in
the slots that size things (``%r<N>``, ``.align``, vector widths, array sizes); nesting of angle
brackets and attribute dicts; semantic lies (a function defined twice, a value defined by itself, a
branch to no label, an empty body, a module with its functions gone); real lines of the other IR;
and single lines of megabytes.

Same shape as mutators.py: ``(rng, text, ir, scale) -> text``.
"""

from __future__ import annotations

import random
import re

from .mutators import Mutator, _body_line, _lines, _pick_match, _splice

#: characters str.splitlines() breaks on besides \n and \r, and Unicode spaces \s matches
_LINE_BREAKS = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
_SPACES = ("\u00a0", "\u2003", "\u3000", "\u200b", "\ufeff", "\t", "\x0c", "\x0b")
_NON_ASCII = ("é", "ß", "λ", "名", "\U0001f600", "ﬁ", "Ⅷ", "٣", "\u0301")  # combining mark, Arabic digit
_HUGE = ("0", "-1", "-2147483648", "2147483648", "4294967296", "99999999", "9223372036854775808",
         "1" + "0" * 30, "-" + "9" * 25, "0x7fffffff", "00000000000000000000001")  # fmt: skip

#: slots whose number sizes something: the number is group 2, what precedes it group 1
_SIZE_SLOTS = {
    "ptx": (
        r"(\.reg\s+\.\w+\s+%\w+<)(\d+)",
        r"(\.align\s+)(\d+)",
        r"(\.v)(\d)(?=\.)",
        r"(\[)(\d+)(\])",
        r"(\.maxntid\s+)(\d+)",
        r"(\.reqntid\s+)(\d+)",
        r"(\.version\s+)(\d+)",
        r"(\.target\s+sm_)(\d+)",
        r"(\.address_size\s+)(\d+)",
        r"(\.loc\s+)(\d+)",
        r"(\.loc\s+\d+\s+)(\d+)",
    ),
    "mlir": (
        r"(vector<)(\d+)",
        r"(!llvm\.array<)(\d+)",
        r"(alignment\s*=\s*)(\d+)",
        r"(llvm\.mlir\.constant\()(-?\d+)",
        r"(array<i\d+:\s*)(-?\d+)",
        r"(:\s*i)(\d+)\b",
        r"(loc\(\"[^\"]*\":)(\d+)",
        r"(loc\(\"[^\"]*\":\d+:)(\d+)",
        r"(addr_space\s*=\s*)(\d+)",
        r"(<)(\d+)(?=>)",
    ),
}


def cut_anywhere(rng: random.Random, text: str, ir: str, scale: int) -> str:
    """Cut at any character, inside a token, a string or an escape, or just past an opening bracket,
    a quote, an ``=`` or a ``{`` of an attribute dict (mutators.truncate cuts only at token ends)."""
    if not text:
        return text
    kind = rng.choice(("char", "opener", "opener", "string", "line_start"))
    if kind == "char":
        return text[: rng.randrange(len(text))]
    if kind == "string":
        m = _pick_match(rng, re.compile(r'"[^"\n]{2,}"'), text)
        if m:
            return text[: rng.randrange(m.start() + 1, m.end())]
    if kind == "line_start":
        starts = [m.start() for _, m in zip(range(5000), re.finditer(r"\n", text), strict=False)]
        if starts:
            return text[: rng.choice(starts) + rng.choice((0, 1))]
    m = _pick_match(rng, re.compile(r"[{(\[<\"=:,]"), text)
    return text[: m.end()] if m else text[: len(text) // 2]


def odd_whitespace(rng: random.Random, text: str, ir: str, scale: int) -> str:
    """A Unicode line break or space where an ASCII one was: vertical tab, form feed, NEL, U+2028,
    NBSP, a zero-width space, a BOM in mid-file, a CR alone on one line only."""
    kind = rng.choice(("break", "break_all", "space", "space_all", "cr_one", "mixed_endings"))
    for base, ascii_ch, choices in (("break", "\n", _LINE_BREAKS), ("space", " ", _SPACES)):
        if kind in (base, base + "_all"):
            ch = rng.choice(choices)
            if kind != base:
                return text.replace(ascii_ch, ch)
            m = _pick_match(rng, re.compile(re.escape(ascii_ch)), text)
            return _splice(text, m, ch) if m else text
    if kind == "cr_one":
        m = _pick_match(rng, re.compile(r"\n"), text)
        return _splice(text, m, "\r") if m else text
    lines = _lines(text)
    return "".join(ln + rng.choice(("\n", "\r\n", "\r")) for ln in lines)


def non_ascii_names(rng: random.Random, text: str, ir: str, scale: int) -> str:
    """A non-ASCII letter, digit or combining mark in a value, label or symbol name (``\\w`` matches it,
    the IR's grammar does not), once or in every use of the name."""
    pattern = re.compile(r"[%@^$][A-Za-z_][\w.$]*|%\d+" if ir == "mlir" else r"[%$][A-Za-z_][\w$]*")
    m = _pick_match(rng, pattern, text)
    if not m:
        return text
    name = m.group()
    at = rng.randrange(1, len(name) + 1)
    new = name[:at] + rng.choice(_NON_ASCII) + name[at:]
    if rng.random() < 0.5:
        return re.sub(re.escape(name) + r"(?![\w.$])", lambda _: new, text)
    return _splice(text, m, new)


def size_slot(rng: random.Random, text: str, ir: str, scale: int) -> str:
    """A huge, negative, zero or hex number in a slot that sizes something: a register count
    ``%r<N>``, an alignment, a vector width, an array size, an integer width ``iN``, a ``.loc`` line."""
    slots = list(_SIZE_SLOTS[ir])
    rng.shuffle(slots)
    for slot in slots:
        m = _pick_match(rng, re.compile(slot), text)
        if m:
            new = rng.choice(_HUGE)
            return text[: m.start(2)] + new + text[m.end(2) :]
    return text


def nest_brackets(rng: random.Random, text: str, ir: str, scale: int) -> str:
    """Angle brackets, attribute dicts, arrays and PTX vector braces nested deep where the grammar
    takes one level: ``vector<vector<...>>``, ``{a = {a = ...}}``, ``[[[...]]]``, ``{{{%r1}}}``."""
    depth = rng.choice((50, 500, 3000)) * scale
    if ir == "mlir":
        kind = rng.choice(("vector", "dict", "array", "ptr", "dense", "unclosed"))
        nested = {
            "vector": "vector<2 x " * depth + "i32" + ">" * depth,
            "dict": "{a = " * depth + "1" + "}" * depth,
            "array": "[" * depth + "1" + "]" * depth,
            "ptr": "!llvm.ptr<" * depth + "1" + ">" * depth,
            "dense": "dense<" + "[" * depth + "1" + "]" * depth + "> : tensor<1xi32>",
            "unclosed": rng.choice(("<", "{", "[", "(")) * depth,
        }[kind]
        if kind in ("vector", "ptr"):
            m = _pick_match(rng, re.compile(r"(?<=: )i32\b"), text)
            if m:
                return _splice(text, m, nested)
        m = _pick_match(rng, re.compile(r"\{(?=\w+ = )"), text)  # an attribute dict: add a key
        if m and kind != "unclosed":
            return _splice(text, m, "{fz = " + nested + ", ")
    else:
        kind = rng.choice(("vector", "unclosed", "address"))
        nested = {
            "vector": "{" * depth + "%r1" + "}" * depth,
            "unclosed": rng.choice(("{", "[", "(", "<")) * depth,
            "address": "[" * depth + "%rd1" + "]" * depth,
        }[kind]
        m = _pick_match(rng, re.compile(r"(?<=, )%r\d+(?=[,;])|\[%rd\d+\]"), text)
        if m and kind != "unclosed":
            return _splice(text, m, nested)
    lines = _lines(text)
    at = _body_line(rng, lines)
    lines[at] = lines[at] + nested
    return "\n".join(lines)


_MLIR_FUNC = re.compile(r"^\s*llvm\.func\b[^\n]*\{\n(?:.*\n)*?\s*\}\s*$", re.M)
_PTX_FUNC = re.compile(r"^(?:\.visible\s+|\.weak\s+)?\.(?:entry|func)\b[^\n]*\n(?:.*\n)*?\}\s*$", re.M)


def semantic_lie(rng: random.Random, text: str, ir: str, scale: int) -> str:
    """Text the grammar accepts and a compiler would not: a function defined twice, an empty body, a
    value defined by itself, a branch to a label nowhere, every function removed, the module twice."""
    func = _MLIR_FUNC if ir == "mlir" else _PTX_FUNC
    kind = rng.choice(("dup_func", "empty_body", "self_ref", "bad_branch", "no_funcs", "module_twice", "ret_only"))
    m = func.search(text)
    if kind == "dup_func" and m:
        return text[: m.end()] + "\n" + m.group() + text[m.end() :]
    if kind == "empty_body" and m:
        head = m.group().split("\n", 1)[0]
        return _splice(text, m, head + "\n}" if ir == "ptx" or head.rstrip().endswith("{") else head)
    if kind == "no_funcs":
        return func.sub("", text)
    if kind == "module_twice":
        return text + "\n" + text
    if kind == "self_ref":
        if ir == "mlir":
            d = _pick_match(rng, re.compile(r"(%[\w.$-]+) = (llvm\.\w+) (%[\w.$-]+), (%[\w.$-]+)"), text)
            return _splice(text, d, f"{d.group(1)} = {d.group(2)} {d.group(1)}, {d.group(1)}") if d else text
        # anchored at a line start, with bounded repeats: on a mutated megabyte line of words and dots
        # the unbounded (\w+(?:\.\w+)+) backtracked for minutes (the generator hung, not irscan)
        opcode = r"^[ \t]*(\w{1,32}(?:\.\w{1,16}){1,6})"
        d = _pick_match(rng, re.compile(opcode + r"[ \t]+(%\w+), (%\w+), (%\w+|\d+);", re.M), text)
        return _splice(text, d, f"{d.group(1)} {d.group(2)}, {d.group(2)}, {d.group(2)};") if d else text
    if kind == "bad_branch":
        if ir == "mlir":
            d = _pick_match(rng, re.compile(r"\^bb\d+"), text)
            return _splice(text, d, "^bb424242") if d else text
        d = _pick_match(rng, re.compile(r"\bbra(?:\.uni)?\s+\$?[\w$]+"), text)
        if d:
            return _splice(text, d, "bra $L__nowhere_fz")
        d = _pick_match(rng, re.compile(r"^\s*ret;", re.M), text)
        return _splice(text, d, "\tbra $L__nowhere_fz;\n\tret;") if d else text
    lines = _lines(text)
    at = _body_line(rng, lines)
    lines.insert(at, "      llvm.return" if ir == "mlir" else "\tret;")
    return "\n".join(lines)


def _foreign_lines(rng: random.Random, ir: str) -> list[str]:
    """A few real lines of a capture in the other IR (the corpus seeds, loaded once)."""
    from .seeds import load_seeds

    others = [s for s in load_seeds(False, 80_000) if s.ir != ir]
    if not others:
        return ["}"]
    lines = [ln for ln in rng.choice(others).text.split("\n") if ln.strip()]
    at = rng.randrange(len(lines))
    return lines[at : at + rng.choice((1, 1, 3, 20))]


def splice_real_foreign(rng: random.Random, text: str, ir: str, scale: int) -> str:
    """Real lines of a PTX capture inside an MLIR one and vice versa, or a line of this IR moved to
    the top level (an op outside any function, a directive inside one)."""
    lines = _lines(text)
    if rng.random() < 0.7:
        new = _foreign_lines(rng, ir)
    else:
        new = [lines[_body_line(rng, lines)].strip()]
    at = rng.randrange(len(lines) + 1)
    lines[at:at] = new
    return "\n".join(lines)


def huge_line(rng: random.Random, text: str, ir: str, scale: int) -> str:
    """One line of megabytes (scale 1: 1 MB; the long run up to 10 MB): a comment, an identifier, a
    string, a run of operands, a run of one punctuation character."""
    n = rng.choice((1, 1, 2, 10 if scale > 1 else 1)) << 20
    kind = rng.choice(("comment", "ident", "string", "operands", "punct"))
    if kind == "comment":
        line = "// " + "x" * n
    elif kind == "ident":
        line = ("%" if ir == "mlir" else "\t%r") + "a" * n
    elif kind == "string":
        line = '"' + "s" * n + '"'
    elif kind == "operands":
        line = ("%0, " if ir == "mlir" else "%r1, ") * (n // 5)
    else:
        line = rng.choice(".,;:=()[]{}<>!#^@") * n
    lines = _lines(text)
    lines.insert(_body_line(rng, lines), line)
    return "\n".join(lines)


NEW_TEXT_MUTATORS: dict[str, Mutator] = {
    f.__name__: f
    for f in (cut_anywhere, odd_whitespace, non_ascii_names, size_slot, nest_brackets, semantic_lie,
              splice_real_foreign, huge_line)
}  # fmt: skip
