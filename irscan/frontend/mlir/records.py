"""The records the grammar's transformer builds: one :class:`Body` per op, :class:`RawOp` /
:class:`RawRegion` / :class:`RawBlock` for the whole-module parse, alias definitions and attribute
values kept as text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lark import Token

from irscan.frontend.mlir.types import Ty


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

    def __init__(self, results: tuple[str, ...], body: Body, loc: str | None, line: int, col: int) -> None:
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


def result_group_error(n: int, line: int) -> str:
    """Why ``%x:n`` is refused: a printed op names each of its results' types on its line, so a group
    longer than the line is not real (and would cost memory out of all proportion to the text)."""
    return f"a group of {n} results on a line of {line} characters"
