"""Conditions in the user's words: the expression a WrapError names, and the "safe while" contract.

A contract is the condition's largest value written over what the user controls: each launch-bounded
input at its top (``ctaid.x`` is ``grid.x - 1``; a grid fixed at compile time gives the number), each
loaded coordinate at the top of the mode it indexes (``dout.shape[0] - 1``), parameters by the names
of the kernel's Python ``def``.  ``(dout.shape[0] - 1)*dout.stride[0] <= 2^31-1`` is checkable at
launch without reading device memory, and readable in a static report.  With one input left free,
it is also solved for that input (``src.stride[0] <= 262,175``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from irscan.analysis.dataflow import Graph
from irscan.analysis.ranges import Ranges
from irscan.checks.base import Candidate
from irscan.guarding.conditions import (
    Binary,
    Extent,
    Field,
    Known,
    Lin,
    Node,
    Product,
    Rewriter,
    Select,
    Sreg,
    accessed_tensor,
    bind_extents,
    launch_name,
    unbounded,
)

Leaf = Callable[[Node], str]


def render(x: Lin, leaf: Leaf) -> str:
    """``Σ c·node + const``, products and large coefficients first."""
    parts = []
    for nd, c in sorted(x.terms, key=lambda t: (not isinstance(t[0], Product), -abs(t[1]))):
        s = _node(nd, leaf)
        s = f"({s})" if c != 1 and " " in s else s
        parts.append(s if c == 1 else f"{c}*{s}")
    if x.const or not parts:
        parts.append(str(x.const))
    return " + ".join(parts).replace("+ -", "- ")


def _node(nd: Node, leaf: Leaf) -> str:
    if isinstance(nd, Product):
        return f"{_paren(render(nd.a, leaf))}*{_paren(render(nd.b, leaf))}"
    if isinstance(nd, Select):
        return f"select({render(nd.a, leaf)}, {render(nd.b, leaf)})"
    if isinstance(nd, Binary):
        return f"{nd.kind.value}({render(nd.a, leaf)}, {render(nd.b, leaf)})"
    return leaf(nd)


def _paren(s: str) -> str:
    return f"({s})" if " " in s else s


def plain(names: tuple[str, ...]) -> Leaf:
    """Leaves as the kernel reads them: ``ctaid.x``, ``src.stride[0]``, ``load(arg2)``."""

    def leaf(nd: Node) -> str:
        if isinstance(nd, (Field, Sreg, Known)):
            return nd.name(names)
        if isinstance(nd, Extent):
            return nd.label
        return "?"

    return leaf


def at_top(names: tuple[str, ...], fixed: dict[Sreg, int] | None = None) -> Leaf:
    """Leaves at their largest value in the user's terms (the contract)."""
    fixed = fixed or {}

    def leaf(nd: Node) -> str:
        if isinstance(nd, Sreg):
            if nd in fixed:
                return str(fixed[nd])
            dim = launch_name(nd)
            return dim if nd.base.startswith("n") else f"({dim} - 1)"
        if isinstance(nd, Extent):
            return f"({nd.name(names)} - 1)" if isinstance(nd.extent, Field) else str(int(nd.extent) - 1)
        if isinstance(nd, Known):
            return f"{nd.hi:,}" if nd.hi < (1 << 31) - 1 else nd.label
        return nd.name(names) if isinstance(nd, Field) else "?"

    return leaf


def limit_text(hi: int) -> str:
    return "2^31-1" if hi == (1 << 31) - 1 else "2^32-1" if hi == (1 << 32) - 1 else f"{hi:,}"


def solve(x: Lin, hi: int, names: tuple[str, ...], fixed: dict[Sreg, int]) -> str | None:
    """With every input but one field at a number, the largest safe value of that field."""
    free: list[tuple[Field, int]] = []
    rest = x.const
    for nd, c in x.terms:
        if isinstance(nd, Field):
            free.append((nd, c))
        elif isinstance(nd, Sreg) and nd in fixed and not nd.base.startswith("n"):
            rest += c * fixed[nd]
        elif isinstance(nd, Product):
            f = _field_times_fixed(nd, fixed)
            if f is None:
                return None
            free.append((f[0], c * f[1]))
        else:
            return None
    if len({f for f, _ in free}) != 1 or any(c <= 0 for _, c in free):
        return None
    coef = sum(c for _, c in free)
    return f"{free[0][0].name(names)} <= {(hi - rest) // coef:,}"


def _field_times_fixed(p: Product, fixed: dict[Sreg, int]) -> tuple[Field, int] | None:
    for a, b in ((p.a, p.b), (p.b, p.a)):
        if len(a.terms) == 1 and not a.const and isinstance(a.terms[0][0], Field):
            if len(b.terms) == 1 and not b.const and b.terms[0][0] in fixed:
                return a.terms[0][0], a.terms[0][1] * b.terms[0][1] * fixed[b.terms[0][0]]
    return None


def safe_while(gr: Graph, rg: Ranges, c: Candidate, names: tuple[str, ...]) -> dict[str, Any] | None:
    """The contract of one candidate, for the static report: ``{"text", "solved", "assumes_extent"}``;
    None when some input is neither a parameter, a launch dimension nor a bounded coordinate."""
    rw = Rewriter(gr, rg, rg.meta_args)
    tensor = accessed_tensor(gr, c.sinks[0]) if c.sinks else None
    value, bound = bind_extents(rw, rw.lin(c.value), tensor)
    if unbounded(value):
        return None
    fixed = rw.fixed
    text = f"{render(value, at_top(names, fixed))} <= {limit_text(c.limit.hi)}"
    return {"text": text, "solved": solve(value, c.limit.hi, names, fixed), "assumes_extent": bound}
