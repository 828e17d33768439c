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
from irscan.checks.conditions import (
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
    if isinstance(nd, Product):  # the launch-bounded factor first: (grid.x - 1)*src.stride[0]
        a, b = (nd.b, nd.a) if _has_field(nd.a) and not _has_field(nd.b) else (nd.a, nd.b)
        return f"{_paren(render(a, leaf))}*{_paren(render(b, leaf))}"
    if isinstance(nd, Select):
        return f"select({render(nd.a, leaf)}, {render(nd.b, leaf)})"
    if isinstance(nd, Binary):
        return f"{nd.kind.value}({render(nd.a, leaf)}, {render(nd.b, leaf)})"
    return leaf(nd)


def _has_field(x: Lin) -> bool:
    return any(isinstance(n, Field) for n, _ in x.terms)


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


def at_top(names: tuple[str, ...]) -> Leaf:
    """Leaves at their largest value in the user's terms (the contract)."""

    def leaf(nd: Node) -> str:
        if isinstance(nd, Sreg):
            dim = launch_name(nd)
            return dim if nd.base.startswith("n") else f"{dim} - 1"
        if isinstance(nd, Extent):
            return f"{nd.name(names)} - 1" if isinstance(nd.extent, Field) else str(int(nd.extent) - 1)
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
        elif isinstance(nd, Extent) and isinstance(nd.extent, Field):  # c*(shape - 1)
            free.append((nd.extent, c))
            rest -= c
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


def safe_while(
    gr: Graph, rg: Ranges, c: Candidate, kernel_file: str | None, kernel_line: int | None
) -> dict[str, Any] | None:
    """The contract of one candidate, for the static report: ``{"text", "solved", "assumes_extent"}``;
    None when some input is neither a parameter, a launch dimension nor a bounded coordinate."""
    from irscan.guarding.prepare import param_names  # the kernel's Python names, read from its def

    names = param_names({"file": kernel_file, "line": kernel_line}, len(gr.fn.params))
    rw = Rewriter(gr, rg, rg.meta_args)
    tensor = accessed_tensor(gr, c.sinks[0]) if c.sinks else None
    value, bound = bind_extents(rw, rw.lin(c.value), tensor)
    if unbounded(value):
        return None
    fixed = rw.fixed
    text = f"{render(value, at_top(names))} <= {limit_text(c.limit.hi)}"
    solved = solve(value, c.limit.hi, names, fixed)
    dims = sorted({launch_name(s): s.base for s in fixed}.items())
    pinned = ", ".join(f"{d} = {fixed_dim(fixed, d):,}" for d, _ in dims)
    return {"text": text, "solved": solved, "launch": pinned or None, "assumes_extent": bound}


def fixed_dim(fixed: dict[Sreg, int], dim: str) -> int:
    """A launch dimension the compile pins, from the top value of its register (``ctaid.x`` <= grid.x - 1)."""
    for s, hi in fixed.items():
        if launch_name(s) == dim:
            return hi if s.base.startswith("n") else hi + 1
    raise KeyError(dim)
