"""MLIR type text and the type model: :class:`Ty` (what the grammar builds), layout under the NVPTX
data layout, and the string helpers that read types off printed op text without the grammar
(trailing type lists, integer widths, pointer address spaces)."""

from __future__ import annotations

import re

from irscan.frontend.text import balanced, split_top
from irscan.ir.fields import PTR, Shape
from irscan.ir.spaces import AddressSpace, from_nvvm

FLOAT_BITS = {"bf16": 16, "f16": 16, "tf32": 32, "f32": 32, "f64": 64, "f80": 80, "f128": 128}
#: LLVM dialect types print their nested LLVM types without the ``!llvm.`` prefix
_LLVM_SHORT = ("ptr", "struct<", "array<", "func<", "void")


class Ty:
    """A parsed type.  ``text`` is how MLIR prints it at top level (``!llvm.ptr<1>``, ``i32``).

    The grammar builds a Ty for every nested type too; their texts are slices of the parsed source,
    made only when asked for.  Slicing every level eagerly made time and memory quadratic in the
    nesting depth of aggregate types (each level copies all the levels inside it).
    """

    __slots__ = ("_text", "src", "kind", "width", "space", "fields", "elem", "count", "packed", "start", "end")

    def __init__(
        self,
        text: str | None,
        kind: str,
        width: int = 0,
        space: str | None = None,
        fields: tuple[Ty, ...] | None = None,
        elem: Ty | None = None,
        count: int = 0,
        packed: bool = False,
        start: int = 0,
        end: int = 0,
        src: str = "",
    ) -> None:
        self._text, self.kind, self.width, self.space = text, kind, width, space
        self.fields, self.elem, self.count, self.packed = fields, elem, count, packed
        self.start, self.end, self.src = start, end, src

    @property
    def text(self) -> str:
        """The printed text; a nested LLVM type's short form (``ptr<1>``) gets its ``!llvm.``."""
        if self._text is None:
            self._text = canonical_type_text(self.src[self.start : self.end])
            self.src = ""  # the source is no longer needed once the text is cut
        return self._text

    def __repr__(self) -> str:
        return f"Ty({self.text!r})"

    @property
    def int_width(self) -> int:
        """Bit width if this is a scalar integer type, else 0."""
        return self.width if self.kind == "int" else 0

    @property
    def is_ptr(self) -> bool:
        return self.kind == "ptr"


def canonical_type_text(text: str) -> str:
    """A nested LLVM type's text (``ptr<1>``, ``struct<(...)>``) as printed at top level."""
    if text.startswith(_LLVM_SHORT):
        return "!llvm." + text
    return text


#: sizes past this are no real type's (and would make the layout arithmetic grow with the input)
_MAX_SIZE = 1 << 64


def _scalar_layout(t: Ty) -> tuple[int, int] | None:
    k = t.kind
    if k == "int":
        size = max(1, (t.width + 7) // 8)
        p = 1
        while p < size:
            p *= 2
        return p, min(p, 16) if t.width <= 128 else 8
    if k == "float":
        bits = FLOAT_BITS.get(t.text.split("<")[0])
        if bits is None:  # f8E4M3FN etc.
            m = re.match(r"f(\d+)E", t.text)
            bits = int(m.group(1)) if m else None
        if bits is None:
            return None
        size = max(1, bits // 8)
        return (16, 16) if bits == 80 else (size, size)
    if k in ("index", "ptr"):
        return 8, 8
    return None


def _aggregate_layout(t: Ty, parts: list[tuple[int, int] | None]) -> tuple[int, int] | None:
    """The layout of a vector, array or struct from its parts' layouts."""
    if any(p is None for p in parts):
        return None
    if t.kind == "vector":
        e = parts[0]
        assert e is not None and t.elem is not None
        if t.elem.kind == "int" and t.elem.width < 8:
            size = max(1, (t.elem.width * t.count + 7) // 8)
        else:
            size = e[0] * t.count
        p = 1
        while p < size and p < _MAX_SIZE:
            p *= 2
        out = (p, p)
    elif t.kind == "array":
        e = parts[0]
        assert e is not None
        out = (e[0] * t.count, e[1])
    else:
        off, align = 0, 1
        for fl in parts:
            assert fl is not None
            fa = 1 if t.packed else fl[1]
            off = (off + fa - 1) // fa * fa + fl[0]
            align = max(align, fa)
        out = ((off + align - 1) // align * align, align)
    return out if out[0] <= _MAX_SIZE else None


def _parts(t: Ty) -> tuple[Ty, ...] | None:
    """The types an aggregate's layout depends on (None: not an aggregate with a known layout)."""
    if t.kind in ("vector", "array") and t.elem is not None:
        return (t.elem,)
    if t.kind == "struct" and t.fields is not None:
        return t.fields
    return None


def _layout(t: Ty) -> tuple[int, int] | None:
    """(alloc size, ABI alignment) in bytes under the NVPTX data layout, or None if unknown.

    Post-order over the type on an explicit stack: aggregate nesting is the input's to choose."""
    done: dict[int, tuple[int, int] | None] = {}
    stack: list[tuple[Ty, bool]] = [(t, False)]
    while stack:
        cur, expanded = stack.pop()
        parts = _parts(cur)
        if parts is None:
            done[id(cur)] = _scalar_layout(cur)
        elif expanded:
            done[id(cur)] = _aggregate_layout(cur, [done[id(p)] for p in parts])
        else:
            stack.append((cur, True))
            stack.extend((p, False) for p in parts)
    return done[id(t)]


def type_size(t: Ty | None) -> int | None:
    """Bytes one element of ``t`` occupies in memory (what a GEP index strides by), if computable."""
    if t is None:
        return None
    lay = _layout(t)
    return lay[0] if lay else None


def field_type(t: Ty, path: tuple[int, ...]) -> Ty | None:
    """The type ``llvm.extractvalue`` yields for ``path`` into aggregate ``t``."""
    cur: Ty | None = t
    for i in path:
        if cur is None:
            return None
        if cur.kind == "struct" and cur.fields is not None and 0 <= i < len(cur.fields):
            cur = cur.fields[i]
        elif cur.kind == "array" and cur.elem is not None:
            cur = cur.elem
        else:
            return None
    return cur


def shape_of(t: Ty) -> Shape:
    """What the analysis reads of a parameter's type (:data:`irscan.ir.Shape`), built without
    recursion: the nesting is the input's."""
    done: dict[int, Shape] = {}
    stack = [(t, False)]
    while stack:
        cur, expanded = stack.pop()
        if cur.kind == "int":
            done[id(cur)] = cur.width
        elif cur.kind == "ptr":
            done[id(cur)] = PTR
        elif cur.kind != "struct" or cur.fields is None or cur.packed:
            done[id(cur)] = None
        elif expanded:
            done[id(cur)] = tuple(done[id(f)] for f in cur.fields)
        else:
            stack.append((cur, True))
            stack.extend((f, False) for f in cur.fields)
    return done[id(t)]


def space_name(num: str | None) -> AddressSpace | None:
    """The address space of ``!llvm.ptr<num>`` (None: not a pointer)."""
    return None if num is None else from_nvvm(num)


def int_width_of(t: Ty | None) -> int:
    return t.width if t is not None and t.kind == "int" else 0


_BRACKETS = ("(", ")", "[", "]", "{", "}", "<", ">", "->")
_VECTOR_DIMS = re.compile(r"vector<(?:\d++x)++")


def find_type_tail(body: str) -> int:
    """Index just past the top-level ``' : '`` that starts an op's trailing type list, or -1.

    ``body`` is the op text from its name to before its location, with strings blanked.  The last
    ``' : '`` whose remainder is bracket-balanced is the one; a colon inside an attribute dictionary
    (``{alignment = 4 : i64}``) leaves an unbalanced remainder.
    """
    # bracket counts of body[end:], grown leftwards one segment at a time: each character is counted
    # once (re-checking every candidate's whole remainder was quadratic in the number of colons)
    counts = dict.fromkeys(_BRACKETS, 0)
    j = end = len(body)
    while True:
        j = body.rfind(" : ", 0, j)
        if j < 0:
            return -1
        seg = body[j + 3 : end]  # ends with the space of the previous " : ": no "->" spans the cut
        for b in _BRACKETS:
            counts[b] += seg.count(b)
        end = j + 3
        if (
            counts["("] == counts[")"]
            and counts["["] == counts["]"]
            and counts["{"] == counts["}"]
            and counts["<"] == counts[">"] - counts["->"]
        ):
            return end


def unparen(part: str) -> list[str]:
    part = part.strip()
    if part.startswith("(") and part.endswith(")") and balanced(part[1:-1]):
        return split_top(part[1:-1])
    return split_top(part)


_tail_cache: dict[str, tuple[list[str], list[str] | None]] = {}


def parse_type_tail(tail: str) -> tuple[list[str], list[str] | None]:
    """(operand types, result types or None) of a trailing type list ``a, b -> c`` / ``a to b`` / ``a, b``."""
    hit = _tail_cache.get(tail)
    if hit is not None:
        return hit
    res: tuple[list[str], list[str] | None]
    arrow = split_top(tail, " -> ") if "->" in tail else [tail]
    if len(arrow) >= 2:
        res = (unparen(" -> ".join(arrow[:-1])), unparen(arrow[-1]))
    else:
        to = split_top(tail, " to ") if " to " in tail else [tail]
        if len(to) == 2:
            res = (split_top(to[0]), split_top(to[1]))
        else:
            res = (split_top(tail), None)
    _tail_cache[tail] = res
    return res


def vector_elem(t: str) -> str | None:
    """The element type of ``vector<4x8xi32>``; the dims are matched possessively, so a long run of
    them costs linear time whether or not the text ends the way a vector does."""
    if not t.endswith(">"):
        return None
    m = _VECTOR_DIMS.match(t)
    return t[m.end() : -1] or None if m else None


def may_count(rtypes: tuple[str, ...]) -> bool:
    return any(rtype_width(t) > 1 or t.startswith("!llvm.ptr") for t in rtypes)


_width_cache: dict[str, int] = {}
_INT_RE = re.compile(r"[su]?i(\d+)")


def rtype_width(t: str) -> int:
    w = _width_cache.get(t)
    if w is None:
        m = _INT_RE.fullmatch(t)
        # wider than MLIR's widest integer (2^24 - 1 bits, 8 digits): no integer the analysis knows
        w = int(m.group(1)) if m and len(m.group(1)) <= 8 else 0
        _width_cache[t] = w
    return w


def is_ptr_text(t: str | None) -> bool:
    return t is not None and t.startswith("!llvm.ptr")


def ptr_space(t: str) -> str:
    return t[len("!llvm.ptr<") : -1] if t.startswith("!llvm.ptr<") else "0"
