"""Callbacks of the grammar's transformer for types, attributes and locations (see
:mod:`irscan.frontend.mlir.transform` for the whole transformer and why it runs inside the parser)."""

from __future__ import annotations

from typing import Any

from lark import Token
from lark.exceptions import UnexpectedInput

from irscan.frontend.mlir.records import UNIT, AttrText, Unit
from irscan.frontend.mlir.types import FLOAT_BITS, Ty


def _start(x: Any) -> int:
    return (x.start_pos or 0) if isinstance(x, Token) else int(x.start)


def _end(x: Any) -> int:
    return (x.end_pos or 0) if isinstance(x, Token) else int(x.end)


def _tys(children: list[Any]) -> list[Ty]:
    return [c for c in children if isinstance(c, Ty)]


#: MLIR's widest integer type (IntegerType::kMaxWidth)
MAX_INT_WIDTH = (1 << 24) - 1
#: element counts past this are no real vector's
MAX_COUNT = 1 << 64


class BadLiteral(UnexpectedInput):
    """A literal the grammar accepts but no value can hold (a 5,000-digit integer, an i99999999999).

    A lark error, raised from a callback at the literal's token, so that every caller that places
    lark's errors in the file (:func:`irscan.frontend.mlir.grammar.syntax_error`) places this one too.
    """

    def __init__(self, tok: Token, message: str) -> None:
        super().__init__()
        self.line, self.column = tok.line or 0, tok.column or 0
        self.message = message

    def __str__(self) -> str:
        return self.message


def lit_int(tok: Token, text: str | None = None) -> int:
    """The integer a literal token (or ``text``, a piece of it) spells; Python's limit on the
    digits of an int (4,300 by default) becomes a located error instead of a ValueError."""
    try:
        return int(tok.value if text is None else text)
    except ValueError:
        raise BadLiteral(tok, f"integer literal too long ({len(tok.value)} characters)") from None


class _Span:
    __slots__ = ("start", "end")

    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end


class TypeAttrRules:
    """Rule callbacks: types -> :class:`Ty`, attributes -> plain values, locations -> tuples."""

    src: str

    # ---------------------------------------------------------------------------- types

    def _text(self, children: list[Any]) -> tuple[str, int, int]:
        s, e = _start(children[0]), _end(children[-1])
        return self.src[s:e], s, e

    def _ty(self, c: list[Any], kind: str, **kw: Any) -> Ty:
        """A Ty over the source span of ``c``, its text cut from the source only when asked for."""
        return Ty(None, kind, start=_start(c[0]), end=_end(c[-1]), src=self.src, **kw)

    def int_type(self, c: list[Any]) -> Ty:
        tok = c[0]
        v = tok.value
        width = lit_int(tok, v.lstrip("su")[1:])
        if width > MAX_INT_WIDTH:
            raise BadLiteral(tok, f"integer type wider than MLIR's limit of {MAX_INT_WIDTH} bits")
        return Ty(v, "int", width, start=tok.start_pos, end=tok.end_pos)

    def float_type(self, c: list[Any]) -> Ty:
        tok = c[0]
        return Ty(tok.value, "float", FLOAT_BITS.get(tok.value, 0), start=tok.start_pos, end=tok.end_pos)

    def index_type(self, c: list[Any]) -> Ty:
        return Ty("index", "index", 64, start=c[0].start_pos, end=c[0].end_pos)

    def none_type(self, c: list[Any]) -> Ty:
        return Ty("none", "none", start=c[0].start_pos, end=c[0].end_pos)

    def shaped_type(self, c: list[Any]) -> Ty:
        kind = c[0].value
        elem = _tys(c)[0]
        count = 1
        for t in c:
            if isinstance(t, Token) and t.type == "DIMX":
                # a dynamic dimension (`?x`) leaves the count unknown; past MAX_COUNT it is no real one
                count = min(count * lit_int(t, t.value[:-1]), MAX_COUNT) if t.value[0] != "?" else 0
        return self._ty(c, kind, elem=elem, count=count if kind == "vector" else 0)

    def tuple_type(self, c: list[Any]) -> Ty:
        return self._ty(c, "tuple", fields=tuple(_tys(c)))

    def complex_type(self, c: list[Any]) -> Ty:
        return self._ty(c, "complex", elem=_tys(c)[0])

    def func_results(self, c: list[Any]) -> Ty:
        return self._ty(c, "tuple", fields=tuple(_tys(c)))

    def func_type(self, c: list[Any]) -> Ty:
        # fields: the inputs; elem: the results (as parsed, a tuple type or a single type)
        return self._ty(c, "func", fields=tuple(_tys(c[:-1])), elem=c[-1])

    def bang_type(self, c: list[Any]) -> Ty:
        ty: Ty = c[0]
        return ty

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
        space = c[2].value if len(c) > 2 else "0"
        return self._ty(c, "ptr", space=space)

    def struct_type(self, c: list[Any]) -> Ty:
        packed, fields = c[2]
        return self._ty(c, "struct", fields=fields, packed=packed)

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
        return self._ty(c, "array", elem=_tys(c)[0], count=lit_int(c[2]))

    def llfunc_type(self, c: list[Any]) -> Ty:
        return self._ty(c, "llfunc", fields=tuple(_tys(c)))

    def void_type(self, c: list[Any]) -> Ty:
        return self._ty(c, "void")

    def dialect_type(self, c: list[Any]) -> Ty:
        return self._ty(c, "other")

    # ----------------------------------------------------------------------- attributes

    def attr_dict(self, c: list[Any]) -> dict[str, Any]:
        return dict(c)

    def attr_entry(self, c: list[Any]) -> tuple[str, Any]:
        key = c[0].value
        if c[0].type == "STRING":
            key = key[1:-1]
        return key, (c[1] if len(c) > 1 else UNIT)

    def int_attr(self, c: list[Any]) -> int:
        return lit_int(c[0])

    def float_attr(self, c: list[Any]) -> float:
        return float(c[0].value)

    def hex_attr(self, c: list[Any]) -> AttrText:
        if len(c) > 1 and isinstance(c[1], Ty) and c[1].kind == "int":
            return int(c[0].value, 16)  # type: ignore[return-value]
        return AttrText(c[0].value)

    def str_attr(self, c: list[Any]) -> str:
        return str(c[0].value[1:-1])

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
            return tuple(lit_int(t) for t in c[1:] if isinstance(t, Token))
        return tuple(float(v) for v in vals)

    def dense_attr(self, c: list[Any]) -> AttrText:
        return AttrText(self._text(c)[0])

    def dense_elem(self, c: list[Any]) -> None:
        return None

    def distinct_attr(self, c: list[Any]) -> AttrText:
        return AttrText("distinct")

    def type_attr(self, c: list[Any]) -> Ty:
        ty: Ty = c[0]
        return ty

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

    def loc_attr(self, c: list[Any]) -> AttrText:
        """The location's text: :mod:`irscan.frontend.mlir.locations` reads it, on both paths."""
        return AttrText(self._text(c)[0])
