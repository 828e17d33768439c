"""The PTX syntax tree: plain dataclasses, one per statement kind, and the operand types.

It is its own module because four others share it: both parsers build it (:mod:`irscan.frontend.ptx.fast`
by regex, :mod:`irscan.frontend.ptx.grammar` through ``grammars/ptx.lark``), :mod:`irscan.frontend.ptx.lower` gives it
meaning and :mod:`irscan.frontend.ptx.printer` prints it back.  The tests compare the two parsers' trees with
``==``, so every field is plain data (strings, ints, tuples; operands are frozen), and no lark object
ever appears in it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Addr",
    "AddrExtra",
    "AddressSize",
    "AstOperand",
    "DeclName",
    "Dual",
    "FileDir",
    "Func",
    "Generic",
    "Imm",
    "Instr",
    "Label",
    "LocDir",
    "Neg",
    "ParamDecl",
    "Paren",
    "Pragma",
    "PtxAst",
    "Scope",
    "Section",
    "SymOff",
    "Target",
    "VarDecl",
    "Vec",
    "VecElem",
    "Version",
]


@dataclass(frozen=True, slots=True)
class Imm:
    """An immediate as written; ``value`` is the integer, or None for a float (``0f3F800000``, ``1.5``)."""

    text: str
    value: int | None


@dataclass(frozen=True, slots=True)
class Addr:
    """``[base]``, ``[base+disp]``, ``[base, extra...]`` (tensor coordinates, texture coordinates)."""

    base: str | Imm
    disp: int = 0
    extra: tuple[AddrExtra, ...] = ()


@dataclass(frozen=True, slots=True)
class Vec:
    """``{%r1, %r2, _}``."""

    elems: tuple[VecElem, ...]


@dataclass(frozen=True, slots=True)
class Dual:
    """``%r1|%p1``: two destinations."""

    a: str
    b: str


@dataclass(frozen=True, slots=True)
class Neg:
    """``!%p1`` as a source operand."""

    name: str


@dataclass(frozen=True, slots=True)
class Paren:
    """``(retval0)`` / ``(param0, param1)`` in ``call`` (never nested: PTX has no parentheses in them)."""

    elems: tuple[AstOperand, ...]


@dataclass(frozen=True, slots=True)
class SymOff:
    """``sym+8`` outside brackets."""

    name: str
    off: int


#: An instruction operand in the syntax tree: a register or symbol name (str) or one of the above.
AstOperand = str | Imm | Addr | Vec | Dual | Neg | Paren | SymOff
#: an element of a vector: ``{%r1, 0, !%p1, _}``
VecElem = str | Imm | Neg
#: what may follow an address's base: ``[tmap, {%r1, %r2}]``, ``[%rd1, %r2]``
AddrExtra = str | Imm | Vec


@dataclass(slots=True)
class Instr:
    opcode: str
    operands: tuple[AstOperand, ...]
    pred: str | None = None  # "%p1" / "!%p1"
    line: int = 0
    text: str = ""


@dataclass(slots=True)
class Label:
    name: str
    line: int = 0


@dataclass(slots=True)
class Scope:
    body: list[Any]
    line: int = 0


@dataclass(frozen=True, slots=True)
class DeclName:
    name: str
    range: int | None = None  # %r<7>
    dims: tuple[int | None, ...] = ()  # name[8][]
    init: Any = None  # str (an expression as text) or a list (a braced initialiser)


@dataclass(slots=True)
class VarDecl:
    space: str  # ".reg" ".global" ...
    attrs: tuple[str, ...]  # (".align", "8", ".b8")
    names: tuple[DeclName, ...]
    linkage: tuple[str, ...] = ()
    line: int = 0


@dataclass(slots=True)
class LocDir:
    file: int
    line: int
    col: int
    extra: tuple[tuple[str, ...], ...] = ()  # (("inlined_at", "1", "45", "10"), ...)
    src_line: int = 0


@dataclass(slots=True)
class FileDir:
    index: int
    name: str  # the string token, quotes included
    extra: tuple[int, ...] = ()
    line: int = 0


@dataclass(slots=True)
class Pragma:
    strings: tuple[str, ...]  # string tokens, quotes included
    line: int = 0


@dataclass(slots=True)
class Generic:
    """A directive the grammar only knows as tokens (``.alias``, ``.callprototype`` ...), ``;`` excluded."""

    tokens: tuple[str, ...]
    line: int = 0


@dataclass(slots=True)
class Section:
    name: str
    tokens: tuple[str, ...]
    line: int = 0


@dataclass(slots=True)
class Version:
    text: str
    line: int = 0


@dataclass(slots=True)
class Target:
    names: tuple[str, ...]
    line: int = 0


@dataclass(slots=True)
class AddressSize:
    size: int
    line: int = 0


@dataclass(frozen=True, slots=True)
class ParamDecl:
    space: str  # ".param" / ".reg"
    attrs: tuple[str, ...]
    name: str
    dims: tuple[int | None, ...] = ()

    def text(self) -> str:
        dims = "".join(f"[{'' if d is None else d}]" for d in self.dims)
        return " ".join((self.space, *self.attrs, self.name + dims))


@dataclass(slots=True)
class Func:
    kind: str  # ".entry" / ".func"
    name: str
    params: tuple[ParamDecl, ...] | None  # None: no parentheses at all
    rets: tuple[ParamDecl, ...] | None = None
    linkage: tuple[str, ...] = ()
    perf: tuple[tuple[str, tuple[int, ...]], ...] = ()
    body: list[Any] | None = None  # None: a declaration (prototype) only
    line: int = 0


@dataclass(slots=True)
class PtxAst:
    path: str
    items: list[Any] = field(default_factory=list)
