"""``grammars/mlir.lark`` loaded as an LALR parser whose transformer yields plain Python objects.

The grammar is data; this module turns its parse into the small records the MLIR front end
(:mod:`irscan.frontend.mlir`) assembles into :mod:`irscan.ir` objects:

* :class:`Ty`: a type, with its printed text and what the analysis asks of it (int width, pointer
  address space, struct fields, byte size);
* :class:`Body`: one op's parsed details (name, operands in order, successors, result types and a
  small ``info`` dict whose keys depend on the op's rule);
* location expressions as tuples (see :func:`resolve_loc` in :mod:`irscan.frontend.mlir.semantics`);
* :class:`RawOp` / :class:`RawRegion` / :class:`RawBlock` for the whole-module parse only.

The transformer runs inside the parser (``Lark(transformer=...)``), so no lark tree is ever built or
leaks out.  Parsing is not re-entrant (the transformer keeps the current source text to slice type
texts from); the module-level parser is used from one thread at a time.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from irscan.frontend.text import unescape
from irscan.ir import IRSyntaxError
from irscan.resources import grammar_path

GRAMMAR_PATH = grammar_path("mlir.lark")

#: the start symbols other code may parse with
STARTS = ["start", "op", "type", "block_label", "attr_dict", "loc_attr"]

_FLOAT_BITS = {"bf16": 16, "f16": 16, "tf32": 32, "f32": 32, "f64": 64, "f80": 80, "f128": 128}
#: LLVM dialect types print their nested LLVM types without the ``!llvm.`` prefix
_LLVM_SHORT = ("ptr", "struct<", "array<", "func<", "void")


# ------------------------------------------------------------------------------------------ types


class Ty:
    """A parsed type.  ``text`` is how MLIR prints it at top level (``!llvm.ptr<1>``, ``i32``)."""

    __slots__ = ("text", "kind", "width", "space", "fields", "elem", "count", "packed", "start", "end")

    def __init__(
        self,
        text: str,
        kind: str,
        width: int = 0,
        space: str | None = None,
        fields: tuple[Ty, ...] | None = None,
        elem: Ty | None = None,
        count: int = 0,
        packed: bool = False,
        start: int = 0,
        end: int = 0,
    ) -> None:
        self.text, self.kind, self.width, self.space = text, kind, width, space
        self.fields, self.elem, self.count, self.packed = fields, elem, count, packed
        self.start, self.end = start, end

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


def _layout(t: Ty) -> tuple[int, int] | None:
    """(alloc size, ABI alignment) in bytes under the NVPTX data layout, or None if unknown."""
    k = t.kind
    if k == "int":
        size = max(1, (t.width + 7) // 8)
        p = 1
        while p < size:
            p *= 2
        return p, min(p, 16) if t.width <= 128 else 8
    if k == "float":
        bits = _FLOAT_BITS.get(t.text.split("<")[0])
        if bits is None:  # f8E4M3FN etc.
            m = re.match(r"f(\d+)E", t.text)
            bits = int(m.group(1)) if m else None
        if bits is None:
            return None
        size = max(1, bits // 8)
        return (16, 16) if bits == 80 else (size, size)
    if k == "index":
        return 8, 8
    if k == "ptr":
        return 8, 8
    if k == "vector" and t.elem is not None:
        e = _layout(t.elem)
        if e is None:
            return None
        if t.elem.kind == "int" and t.elem.width < 8:
            size = max(1, (t.elem.width * t.count + 7) // 8)
        else:
            size = e[0] * t.count
        p = 1
        while p < size:
            p *= 2
        return p, p
    if k == "array" and t.elem is not None:
        e = _layout(t.elem)
        return None if e is None else (e[0] * t.count, e[1])
    if k == "struct" and t.fields is not None:
        off, align = 0, 1
        for f in t.fields:
            fl = _layout(f)
            if fl is None:
                return None
            fa = 1 if t.packed else fl[1]
            off = (off + fa - 1) // fa * fa + fl[0]
            align = max(align, fa)
        return (off + align - 1) // align * align, align
    return None


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


# ------------------------------------------------------------------------------------- op records


class Body:
    """One op as parsed: the op-specific rule's output (or the generic soup's)."""

    __slots__ = ("tag", "name", "tok", "operands", "succs", "rtypes", "info", "regions")

    def __init__(
        self,
        tag: str,
        name: str,
        tok: Token | None,
        operands: list[str],
        succs: list[tuple[str, list[str], list[Ty]]] | tuple[()] | None = None,
        rtypes: tuple[str, ...] | None = None,
        info: dict[str, Any] | None = None,
        regions: list[RawRegion] | None = None,
    ) -> None:
        self.tag, self.name, self.tok, self.operands = tag, name, tok, operands
        self.succs = succs or []
        self.rtypes = rtypes
        self.info = info or {}
        self.regions = regions or []


class RawBlock:
    __slots__ = ("label", "args", "ops", "line")

    def __init__(self, label: str, args: list[tuple[str, Ty]], ops: list[RawOp], line: int) -> None:
        self.label, self.args, self.ops, self.line = label, args, ops, line


class RawRegion:
    __slots__ = ("blocks", "line", "end_line")

    def __init__(self, blocks: list[RawBlock], line: int, end_line: int) -> None:
        self.blocks, self.line, self.end_line = blocks, line, end_line


class RawOp:
    __slots__ = ("results", "body", "loc", "line", "col")

    def __init__(self, results: tuple[str, ...], body: Body, loc: tuple | None, line: int, col: int) -> None:
        self.results, self.body, self.loc, self.line, self.col = results, body, loc, line, col


class AliasDef:
    __slots__ = ("name", "value", "line", "is_type")

    def __init__(self, name: str, value: Any, line: int, is_type: bool = False) -> None:
        self.name, self.value, self.line, self.is_type = name, value, line, is_type


class AttrText(str):
    """An attribute kept as its printed text (dialect attributes, dense literals, nested types)."""

    __slots__ = ()


class Unit:
    """A unit attribute value (``{gpu.kernel}``); truthy."""

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "unit"


UNIT = Unit()


def _start(x: Any) -> int:
    return (x.start_pos or 0) if isinstance(x, Token) else int(x.start)


def _end(x: Any) -> int:
    return (x.end_pos or 0) if isinstance(x, Token) else int(x.end)


def _ssa(children: list[Any]) -> list[str]:
    return [c.value for c in children if isinstance(c, Token) and c.type == "SSA_ID"]


def _tys(children: list[Any]) -> list[Ty]:
    return [c for c in children if isinstance(c, Ty)]


class _Succ:
    __slots__ = ("label", "operands", "types")

    def __init__(self, label: str, operands: list[str], types: list[Ty]) -> None:
        self.label, self.operands, self.types = label, operands, types

    def t(self) -> tuple[str, list[str], list[Ty]]:
        return self.label, self.operands, self.types


class _Results(tuple):
    __slots__ = ()


class _TLoc:
    __slots__ = ("expr",)

    def __init__(self, expr: tuple) -> None:
        self.expr = expr


class _Span:
    __slots__ = ("start", "end")

    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end


class _ToRecords(Transformer):
    """Callbacks of the embedded transformer: each rule's children (already transformed) -> a record."""

    def __init__(self) -> None:
        super().__init__()
        self.src = ""

    # ---------------------------------------------------------------------------- types

    def _text(self, children: list[Any]) -> tuple[str, int, int]:
        s, e = _start(children[0]), _end(children[-1])
        return self.src[s:e], s, e

    def int_type(self, c: list[Any]) -> Ty:
        tok = c[0]
        v = tok.value
        return Ty(v, "int", int(v.lstrip("su")[1:]), start=tok.start_pos, end=tok.end_pos)

    def float_type(self, c: list[Any]) -> Ty:
        tok = c[0]
        return Ty(tok.value, "float", _FLOAT_BITS.get(tok.value, 0), start=tok.start_pos, end=tok.end_pos)

    def index_type(self, c: list[Any]) -> Ty:
        return Ty("index", "index", 64, start=c[0].start_pos, end=c[0].end_pos)

    def none_type(self, c: list[Any]) -> Ty:
        return Ty("none", "none", start=c[0].start_pos, end=c[0].end_pos)

    def shaped_type(self, c: list[Any]) -> Ty:
        text, s, e = self._text(c)
        kind = c[0].value
        dims = [t.value[:-1] for t in c if isinstance(t, Token) and t.type == "DIMX"]
        elem = _tys(c)[0]
        count = 1
        for d in dims:
            count = count * int(d) if d.isdigit() else 0
        return Ty(text, kind, elem=elem, count=count if kind == "vector" else 0, start=s, end=e)

    def tuple_type(self, c: list[Any]) -> Ty:
        text, s, e = self._text(c)
        return Ty(text, "tuple", fields=tuple(_tys(c)), start=s, end=e)

    def complex_type(self, c: list[Any]) -> Ty:
        text, s, e = self._text(c)
        return Ty(text, "complex", elem=_tys(c)[0], start=s, end=e)

    def func_results(self, c: list[Any]) -> Ty:
        text, s, e = self._text(c)
        return Ty(text, "tuple", fields=tuple(_tys(c)), start=s, end=e)

    def func_type(self, c: list[Any]) -> Ty:
        text, s, e = self._text(c)
        outs = list(c[-1].fields)
        ins = _tys(c[:-1])
        ty = Ty(text, "func", fields=tuple(ins), start=s, end=e)
        ty.elem = Ty("(" + ", ".join(t.text for t in outs) + ")", "tuple", fields=tuple(outs))
        return ty

    def bang_type(self, c: list[Any]) -> Ty:
        return c[0]

    def sptr_type(self, c: list[Any]) -> Ty:
        return self.ptr_type(c)

    def sstruct_type(self, c: list[Any]) -> Ty:
        return self.struct_type(c)

    def sarray_type(self, c: list[Any]) -> Ty:
        return self.array_type(c)

    def sfunc_type(self, c: list[Any]) -> Ty:
        return self.llfunc_type(c)

    def svoid_type(self, c: list[Any]) -> Ty:
        return self.void_type(c)

    def ptr_type(self, c: list[Any]) -> Ty:
        text, s, e = self._text(c)
        space = c[2].value if len(c) > 2 else "0"
        return Ty(canonical_type_text(text), "ptr", space=space, start=s, end=e)

    def struct_type(self, c: list[Any]) -> Ty:
        text, s, e = self._text(c)
        packed, fields = c[2]
        return Ty(canonical_type_text(text), "struct", fields=fields, packed=packed, start=s, end=e)

    def struct_body(self, c: list[Any]) -> tuple[bool, tuple[Ty, ...] | None]:
        packed = any(x == "packed" for x in c if not isinstance(x, (Token, Ty)))
        if any(x == "opaque" for x in c if not isinstance(x, (Token, Ty))):
            return packed, None
        if (
            c
            and isinstance(c[0], Token)
            and c[0].type == "STRING"
            and not any(isinstance(x, Token) and x.value == "(" for x in c)
        ):
            return packed, None  # a reference to an identified struct: layout unknown here
        return packed, tuple(_tys(c))

    def packed(self, c: list[Any]) -> str:
        return "packed"

    def opaque(self, c: list[Any]) -> str:
        return "opaque"

    def array_type(self, c: list[Any]) -> Ty:
        text, s, e = self._text(c)
        return Ty(canonical_type_text(text), "array", elem=_tys(c)[0], count=int(c[2].value), start=s, end=e)

    def llfunc_type(self, c: list[Any]) -> Ty:
        text, s, e = self._text(c)
        return Ty(canonical_type_text(text), "llfunc", fields=tuple(_tys(c)), start=s, end=e)

    def void_type(self, c: list[Any]) -> Ty:
        text, s, e = self._text(c)
        return Ty(canonical_type_text(text), "void", start=s, end=e)

    def dialect_type(self, c: list[Any]) -> Ty:
        text, s, e = self._text(c)
        return Ty(text, "other", start=s, end=e)

    # ----------------------------------------------------------------------- attributes

    def attr_dict(self, c: list[Any]) -> dict[str, Any]:
        return dict(c)

    def attr_entry(self, c: list[Any]) -> tuple[str, Any]:
        key = c[0].value
        if c[0].type == "STRING":
            key = key[1:-1]
        return key, (c[1] if len(c) > 1 else UNIT)

    def int_attr(self, c: list[Any]) -> int:
        return int(c[0].value)

    def float_attr(self, c: list[Any]) -> float:
        return float(c[0].value)

    def hex_attr(self, c: list[Any]) -> AttrText:
        if len(c) > 1 and isinstance(c[1], Ty) and c[1].kind == "int":
            return int(c[0].value, 16)  # type: ignore[return-value]
        return AttrText(c[0].value)

    def str_attr(self, c: list[Any]) -> str:
        return c[0].value[1:-1]

    def true_attr(self, c: list[Any]) -> bool:
        return True

    def false_attr(self, c: list[Any]) -> bool:
        return False

    def unit_attr(self, c: list[Any]) -> Unit:
        return UNIT

    def list_attr(self, c: list[Any]) -> list[Any]:
        return list(c)

    def array_attr(self, c: list[Any]) -> tuple[Any, ...]:
        ty = c[0]
        vals = [t.value for t in c[1:] if isinstance(t, Token)]
        if isinstance(ty, Ty) and ty.kind == "int":
            return tuple(int(v) for v in vals)
        return tuple(float(v) for v in vals)

    def dense_attr(self, c: list[Any]) -> AttrText:
        return AttrText(self._text(c)[0])

    def dense_elem(self, c: list[Any]) -> None:
        return None

    def distinct_attr(self, c: list[Any]) -> AttrText:
        return AttrText("distinct")

    def type_attr(self, c: list[Any]) -> Ty:
        return c[0]

    def hash_attr(self, c: list[Any]) -> AttrText:
        return AttrText(self._text(c)[0])

    def dialect_body(self, c: list[Any]) -> _Span:
        return _Span(_start(c[0]), _end(c[-1]))

    def dsoup(self, c: list[Any]) -> None:
        return None

    def symbol_attr(self, c: list[Any]) -> AttrText:
        return AttrText("::".join(t.value for t in c))

    def bare_attr(self, c: list[Any]) -> AttrText:
        return AttrText(c[0].value)

    # ------------------------------------------------------------------------ locations

    def loc_attr(self, c: list[Any]) -> tuple:
        return c[1]

    def loc_unknown(self, c: list[Any]) -> tuple:
        return ("u",)

    def loc_file(self, c: list[Any]) -> tuple:
        ints = [int(t.value) for t in c[1:]]
        return ("f", unescape(c[0].value[1:-1]), ints[0], ints[1] if len(ints) > 1 else 0)

    def loc_name(self, c: list[Any]) -> tuple:
        return ("n", unescape(c[0].value[1:-1]), c[1] if len(c) > 1 else None)

    def loc_callsite(self, c: list[Any]) -> tuple:
        return ("c", c[0], c[1])

    def loc_fused(self, c: list[Any]) -> tuple:
        return ("fu", tuple(x for x in c if isinstance(x, tuple)))

    def loc_ref(self, c: list[Any]) -> tuple:
        return ("r", c[0].value)

    def trailing_loc(self, c: list[Any]) -> _TLoc:
        return _TLoc(c[0])

    # ------------------------------------------------------------------------ structure

    def start(self, c: list[Any]) -> list[Any]:
        return c

    def alias_def(self, c: list[Any]) -> AliasDef:
        return AliasDef(c[0].value, c[1], c[0].line)

    def type_alias_def(self, c: list[Any]) -> AliasDef:
        return AliasDef(c[0].value, c[1], c[0].line, is_type=True)

    def results(self, c: list[Any]) -> _Results:
        out: list[str] = []
        for name, n in c:
            if n is None:
                out.append(name)
            else:
                out.extend(f"{name}#{i}" for i in range(n))
        return _Results(out)

    def result(self, c: list[Any]) -> tuple[str, int | None]:
        return c[0].value, (int(c[1].value) if len(c) > 1 else None)

    def op(self, c: list[Any]) -> RawOp:
        results: tuple[str, ...] = ()
        loc = None
        body = None
        for x in c:
            if isinstance(x, Body):
                body = x
            elif isinstance(x, _TLoc):
                loc = x.expr
            elif isinstance(x, _Results):
                results = tuple(x)
        assert body is not None
        tok = body.tok
        return RawOp(results, body, loc, (tok.line or 0) if tok else 0, (tok.column or 0) if tok else 0)

    def region(self, c: list[Any]) -> RawRegion:
        entry: list[RawOp] = []
        blocks: list[RawBlock] = []
        for x in c:
            if isinstance(x, RawOp):
                entry.append(x)
            elif isinstance(x, RawBlock):
                blocks.append(x)
        first_line = entry[0].line if entry else (blocks[0].line if blocks else 0)
        return RawRegion([RawBlock("^bb0", [], entry, first_line), *blocks], first_line, 0)

    def block(self, c: list[Any]) -> RawBlock:
        label, args, line = c[0]
        return RawBlock(label, args, [x for x in c[1:] if isinstance(x, RawOp)], line)

    def block_label(self, c: list[Any]) -> tuple[str, list[tuple[str, Ty]], int]:
        return c[0].value, [a for a in c[1:] if isinstance(a, tuple)], c[0].line

    def block_arg(self, c: list[Any]) -> tuple[str, Ty]:
        return c[0].value, c[1]

    # ------------------------------------------------------------------ ops with meaning

    def op_kw(self, c: list[Any]) -> str:
        return c[0].value

    def overflow(self, c: list[Any]) -> frozenset[str]:
        return frozenset(t.value for t in c)

    def gep_flags(self, c: list[Any]) -> frozenset[str]:
        return frozenset(t.value for t in c)

    def gep_index(self, c: list[Any]) -> Token:
        return c[0]

    def mem_mod(self, c: list[Any]) -> tuple[str, str | None]:
        return c[0].value, (c[1].value[1:-1] if len(c) > 1 else None)

    def int_list(self, c: list[Any]) -> tuple[int, ...]:
        return tuple(int(t.value) for t in c)

    @staticmethod
    def _flags(c: list[Any]) -> frozenset[str]:
        fl: set[str] = set()
        for x in c:
            if isinstance(x, frozenset):
                fl |= x
            elif type(x) is str:
                fl.add(x)
        return frozenset(fl)

    @staticmethod
    def _attrs(c: list[Any]) -> dict[str, Any]:
        for x in c:
            if isinstance(x, dict):
                return x
        return {}

    @staticmethod
    def _mods(c: list[Any]) -> dict[str, Any]:
        mods: dict[str, Any] = {}
        for x in c:
            if isinstance(x, tuple) and len(x) == 2 and type(x[0]) is str:
                mods[x[0]] = x[1] if x[1] is not None else True
            elif type(x) is str:
                mods[x] = True
        return mods

    def arith(self, c: list[Any]) -> Body:
        ty = _tys(c)[-1]
        return Body("arith", c[0].value, c[0], _ssa(c), rtypes=(ty.text,), info={"type": ty, "flags": self._flags(c)})

    def icmp(self, c: list[Any]) -> Body:
        ty = _tys(c)[-1]
        rt = "i1" if ty.kind != "vector" else f"vector<{ty.count}xi1>"
        return Body("icmp", "llvm.icmp", c[0], _ssa(c), rtypes=(rt,), info={"type": ty, "pred": c[1].value[1:-1]})

    def select(self, c: list[Any]) -> Body:
        tys = _tys(c)
        return Body("select", "llvm.select", c[0], _ssa(c), rtypes=(tys[-1].text,), info={"type": tys[-1]})

    def cast(self, c: list[Any]) -> Body:
        src, dst = _tys(c)[-2:]
        return Body(
            "cast",
            c[0].value,
            c[0],
            _ssa(c),
            rtypes=(dst.text,),
            info={"src": src, "dst": dst, "flags": self._flags(c)},
        )

    def extractvalue(self, c: list[Any]) -> Body:
        ty = _tys(c)[-1]
        path = next(x for x in c if type(x) is tuple)
        res = field_type(ty, path)
        return Body(
            "extractvalue",
            "llvm.extractvalue",
            c[0],
            _ssa(c),
            rtypes=(res.text if res else "?",),
            info={"type": ty, "path": path, "res": res},
        )

    def insertvalue(self, c: list[Any]) -> Body:
        ty = _tys(c)[-1]
        path = next(x for x in c if type(x) is tuple)
        return Body(
            "insertvalue", "llvm.insertvalue", c[0], _ssa(c), rtypes=(ty.text,), info={"type": ty, "path": path}
        )

    def gep(self, c: list[Any]) -> Body:
        flags = next((x for x in c if isinstance(x, frozenset)), frozenset())
        toks = [x for x in c if isinstance(x, Token) and x.type in ("SSA_ID", "INT")]
        tys = _tys(c)
        return Body(
            "gep",
            "llvm.getelementptr",
            c[0],
            [t.value for t in toks if t.type == "SSA_ID"],
            rtypes=(tys[-2].text,),
            info={"flags": flags, "indices": toks[1:], "in_types": tys[:-2], "elem": tys[-1]},
        )

    def load(self, c: list[Any]) -> Body:
        ptr, res = _tys(c)[-2:]
        info = {"ptr": ptr, "type": res, "mods": self._mods(c), "attrs": self._attrs(c)}
        return Body("load", "llvm.load", c[0], _ssa(c), rtypes=(res.text,), info=info)

    def store(self, c: list[Any]) -> Body:
        val, ptr = _tys(c)[-2:]
        info = {"ptr": ptr, "type": val, "mods": self._mods(c), "attrs": self._attrs(c)}
        return Body("store", "llvm.store", c[0], _ssa(c), rtypes=(), info=info)

    def atomicrmw(self, c: list[Any]) -> Body:
        ptr, val = _tys(c)[-2:]
        kws = [x for x in c if type(x) is str]
        info = {"ptr": ptr, "type": val, "op": kws[-1] if kws else None, "mods": self._mods(c[1:])}
        return Body("atomicrmw", "llvm.atomicrmw", c[0], _ssa(c), rtypes=(val.text,), info=info)

    def cmpxchg(self, c: list[Any]) -> Body:
        ptr, val = _tys(c)[-2:]
        info = {"ptr": ptr, "type": val, "mods": self._mods(c)}
        return Body("cmpxchg", "llvm.cmpxchg", c[0], _ssa(c), rtypes=(f"!llvm.struct<({val.text}, i1)>",), info=info)

    def constant(self, c: list[Any]) -> Body:
        ty = c[-1]
        return Body("constant", "llvm.mlir.constant", c[0], [], rtypes=(ty.text,), info={"value": c[1], "type": ty})

    def sreg(self, c: list[Any]) -> Body:
        ty = c[-1]
        rng = next((x for x in c[1:] if type(x) is tuple), None)
        return Body("sreg", c[0].value, c[0], [], rtypes=(ty.text,), info={"type": ty, "range": rng})

    def sreg_range(self, c: list[Any]) -> tuple[int, int]:
        return int(c[1].value), int(c[2].value)

    def successor(self, c: list[Any]) -> _Succ:
        return _Succ(c[0].value, _ssa(c[1:]), _tys(c))

    def br(self, c: list[Any]) -> Body:
        return Body("br", "llvm.br", c[0], [], succs=[c[1].t()], rtypes=())

    def cond_br(self, c: list[Any]) -> Body:
        succ = [x.t() for x in c if isinstance(x, _Succ)]
        weights = next((x for x in c if isinstance(x, list)), None)
        return Body("cond_br", "llvm.cond_br", c[0], [c[1].value], succs=succ, rtypes=(), info={"weights": weights})

    def weights(self, c: list[Any]) -> list[int]:
        return list(c[0])

    def switch(self, c: list[Any]) -> Body:
        default = c[3].t()
        cases = next((x for x in c[4:] if isinstance(x, list)), [])
        info = {"type": c[2], "cases": [v for v, _ in cases]}
        return Body(
            "switch", "llvm.switch", c[0], [c[1].value], succs=[default] + [s for _, s in cases], rtypes=(), info=info
        )

    def switch_cases(self, c: list[Any]) -> list[tuple[int, tuple]]:
        return list(c)

    def switch_case(self, c: list[Any]) -> tuple[int, tuple]:
        return int(c[0].value), c[1].t()

    def ret(self, c: list[Any]) -> Body:
        return Body("ret", "llvm.return", c[0], _ssa(c), rtypes=())

    def minmax(self, c: list[Any]) -> Body:
        ty = _tys(c)[-1]
        return Body("minmax", c[0].value, c[0], _ssa(c), rtypes=(ty.text,), info={"type": ty})

    # -------------------------------------------------------------------------- functions

    def func(self, c: list[Any]) -> Body:
        sym = next(x for x in c if isinstance(x, Token) and x.type == "SYMBOL")
        params: list[tuple[str, Ty]] = []
        variadic = False
        result: Ty | None = None
        attrs: dict[str, Any] = {}
        region = None
        mods = [x for x in c if type(x) is str]
        for x in c:
            if isinstance(x, tuple) and x and x[0] == "args":
                params, variadic = x[1], x[2]
            elif isinstance(x, tuple) and x and x[0] == "result":
                result = x[1]
            elif isinstance(x, tuple) and x and x[0] == "attributes":
                attrs = x[1]
            elif isinstance(x, RawRegion):
                region = x
        name = sym.value[1:]
        if name.startswith('"'):
            name = name[1:-1]
        return Body(
            "func",
            "llvm.func",
            c[0],
            [],
            rtypes=(),
            info={
                "name": name,
                "params": params,
                "variadic": variadic,
                "result": result,
                "attrs": attrs,
                "mods": mods,
            },
            regions=[region] if region is not None else [],
        )

    def func_args(self, c: list[Any]) -> tuple[str, list[tuple[str, Ty]], bool]:
        params = [x for x in c if isinstance(x, tuple)]
        variadic = any(isinstance(x, Token) and x.type == "ELLIPSIS" for x in c)
        return ("args", params, variadic)

    def func_arg(self, c: list[Any]) -> tuple[str, Ty]:
        return c[0].value, c[1]

    def func_arg_type(self, c: list[Any]) -> tuple[str, Ty]:
        return "", c[0]

    def func_result(self, c: list[Any]) -> tuple[str, Ty]:
        return ("result", c[0])

    def func_attributes(self, c: list[Any]) -> tuple[str, dict[str, Any]]:
        return ("attributes", c[0])

    def func_modifier(self, c: list[Any]) -> None:
        return None

    # ------------------------------------------------------------------------------ soup

    def gtop(self, c: list[Any]) -> Any:
        return c[0]

    def gitem(self, c: list[Any]) -> list[Any]:
        out: list[Any] = []
        for x in c:
            if isinstance(x, Token):
                if x.type == "SSA_ID":
                    out.append(x)
            elif isinstance(x, list):
                out.extend(x)
            elif isinstance(x, RawRegion):
                out.append(x)
        return out

    ginner = gitem

    def _soup(self, tag: str, name: str, tok: Token, c: list[Any]) -> Body:
        operands: list[str] = []
        regions: list[RawRegion] = []
        for x in c:
            items = x if isinstance(x, list) else [x]
            for y in items:
                if isinstance(y, Token):
                    operands.append(y.value)
                elif isinstance(y, RawRegion):
                    regions.append(y)
        return Body(tag, name, tok, operands, regions=regions)

    def generic(self, c: list[Any]) -> Body:
        return self._soup("generic", c[0].value, c[0], c[1:])

    def generic_form(self, c: list[Any]) -> Body:
        return self._soup("generic", c[0].value[1:-1], c[0], c[1:])


# ------------------------------------------------------------------------------------- the parser


class _Parser:
    def __init__(self) -> None:
        self.transformer = _ToRecords()
        self.lark = Lark(
            GRAMMAR_PATH.read_text(),
            parser="lalr",
            lexer="contextual",
            start=STARTS,
            transformer=self.transformer,
            maybe_placeholders=False,
            propagate_positions=False,
            cache=True,
        )
        self.lock = threading.RLock()

    def parse(self, text: str, start: str = "start") -> Any:
        with self.lock:
            saved = self.transformer.src
            self.transformer.src = text
            try:
                return self.lark.parse(text, start=start)
            finally:
                self.transformer.src = saved


@lru_cache(maxsize=1)
def parser() -> _Parser:
    return _Parser()


def parse(text: str, start: str = "start") -> Any:
    """Parse ``text`` from rule ``start``; raises lark's :class:`UnexpectedInput` on bad input."""
    return parser().parse(text, start)


_type_cache: dict[str, Ty] = {}


def parse_type(text: str) -> Ty:
    """A type from its printed text (memoised: the same struct type is printed thousands of times)."""
    ty = _type_cache.get(text)
    if ty is None:
        ty = parse(text, "type")
        _type_cache[text] = ty
    return ty


def syntax_error(
    path: str, text: str, exc: UnexpectedInput, line: int | None = None, col_offset: int = 0
) -> IRSyntaxError:
    """lark's error on ``text`` -> :class:`irscan.ir.IRSyntaxError` with the file's line and column.

    ``line`` / ``col_offset`` place a one-line parse (the fast path parses single op lines) in the file.
    """
    expected = describe_expected(exc)
    if isinstance(exc, UnexpectedEOF) or getattr(exc, "line", -1) in (-1, None):
        lines = text.split("\n")
        while len(lines) > 1 and not lines[-1].strip():
            lines.pop()
        eline, ecol = len(lines), len(lines[-1]) + 1
        msg = "unexpected end of input"
    else:
        eline, ecol = exc.line, exc.column
        if isinstance(exc, UnexpectedToken):
            tok = exc.token
            what = "end of line" if tok.type == "_NL" else repr(str(tok.value))
            msg = f"unexpected {what}" if tok.type != "$END" else "unexpected end of input"
        elif isinstance(exc, UnexpectedCharacters):
            msg = f"unexpected character {exc.char!r}"
        else:
            msg = "syntax error"
    if line is not None:
        eline, ecol = line, ecol + col_offset
    return IRSyntaxError(path, eline, ecol, msg, expected)


def describe_expected(exc: UnexpectedInput) -> list[str]:
    """What the parser would have accepted at the error, as readable token texts."""
    names: set[str] = set()
    if isinstance(exc, (UnexpectedToken, UnexpectedEOF)):
        names = set(exc.expected or ())
    elif isinstance(exc, UnexpectedCharacters):
        names = set(exc.allowed or ())
    lk = parser().lark
    out = set()
    for n in names:
        if n == "$END":
            out.add("end of input")
            continue
        try:
            term = lk.get_terminal(n)
        except KeyError:
            out.add(n)
            continue
        pat = term.pattern
        if pat.type == "str":
            out.add(repr(pat.value).replace("'", '"'))
        elif n == "_NL":
            out.add("end of line")
        else:
            out.add(n)
    return sorted(out)


__all__ = [
    "AliasDef",
    "AttrText",
    "Body",
    "RawBlock",
    "RawOp",
    "RawRegion",
    "STARTS",
    "Ty",
    "UNIT",
    "UnexpectedInput",
    "canonical_type_text",
    "describe_expected",
    "field_type",
    "parse",
    "parse_type",
    "parser",
    "syntax_error",
    "type_size",
    "unescape",
]
