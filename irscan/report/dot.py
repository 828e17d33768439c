"""A picture of one finding's chain: the ops from the inputs to the access as a graph, each op with its
width and ideal range, the op that wraps marked, the access at the bottom.

The graph comes from the chain's own SSA names (an op's operands are the steps that define them), so
a mad that reads three inputs shows three edges.  It is written as Graphviz DOT (``irscan scan --dot``)
and drawn as SVG: by ``dot`` when Graphviz is installed, otherwise by the small layered layout below
(rank = longest path from an input, which is what ``dot`` would do for a chain this small).
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from dataclasses import asdict
from pathlib import Path
from typing import Any

import networkx as nx

_NAME = re.compile(r"%[\w.$]+")
_MLIR_DEF = re.compile(r"^\s*(%[\w.$]+)(?::\d+)?\s*=")
#: what an input is, when its text says: a special register, a kernel argument's field, a parameter
_INPUT_WHAT = re.compile(r"%(?:ctaid|tid|ntid|nctaid)\.[xyz]|%arg\d+\[[\d, ]+\]|(?<=_)param_\d+(?:\+\d+)?")
_COLOURS = {"input": "#dbeafe", "narrowing": "#fde68a", "widening": "#fde68a", "access": "#e5e7eb"}


def _def_and_uses(text: str) -> tuple[str | None, list[str]]:
    m = _MLIR_DEF.match(text)
    names = _NAME.findall(text)
    if m:
        return m.group(1), names[1:]
    op = text.split(None, 1)[0] if text.strip() else ""
    if names and not op.startswith(("st.", "red.", "atom.")):  # PTX: the first operand is the result
        return names[0], names[1:]
    return None, names


def label(step: dict[str, Any]) -> str:
    """The op, its width and its ideal range; the wrapping op says so."""
    rng = step.get("range")
    d, _ = _def_and_uses(str(step.get("text", "")))
    what = _INPUT_WHAT.search(str(step.get("text", ""))) if step.get("role") == "input" else None
    parts = [
        f"{d} =" if d else "",
        str(step["op"]),
        what.group(0).lstrip("%") if what else "",
        f"i{step['width']}" if step.get("width") else "",
    ]
    if rng:
        parts.append(f"[{rng[0]:,}, {rng[1]:,}]")
    if step.get("wraps"):
        parts.append("WRAPS")
    if step.get("note"):
        parts.append(str(step["note"]))
    return " ".join(p for p in parts if p)


def chain_graph(chain: list[dict[str, Any]]) -> nx.DiGraph:
    """Steps as nodes 0..n-1, an edge from the step that defines a name to each step that uses it; a step
    with no operand on the chain hangs from the one before it (the address arithmetic the chain elides)."""
    g = nx.DiGraph()
    defs: dict[str, int] = {}
    for i, s in enumerate(chain):
        g.add_node(i, step=s, label=label(s))
        d, uses = _def_and_uses(str(s.get("text", "")))
        preds = {defs[u] for u in uses if u in defs}
        if not preds and i > 0 and s.get("role") != "input":
            preds = {i - 1}
        for p in preds:
            g.add_edge(p, i)
        if d:
            defs[d] = i
    return g


def to_dot(chain: list[dict[str, Any]], title: str) -> str:
    g = chain_graph(chain)
    out = [
        f'digraph chain {{\n  label="{_esc(title)}"; labelloc=t; node [shape=box, style=filled, fontname="monospace"];'
    ]
    for n, data in g.nodes(data=True):
        out.append(f'  n{n} [label="{_esc(data["label"])}", fillcolor="{_colour(data["step"])}"];')
    out += [f"  n{a} -> n{b};" for a, b in g.edges]
    return "\n".join(out) + "\n}\n"


def _colour(step: dict[str, Any]) -> str:
    return "#fca5a5" if step.get("wraps") else _COLOURS.get(str(step.get("role")), "#ffffff")


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def to_svg(chain: list[dict[str, Any]], title: str) -> str:
    """SVG through Graphviz when ``dot`` is on PATH, else the pure-Python layout."""
    exe = shutil.which("dot")
    if exe:
        try:
            return subprocess.run(
                [exe, "-Tsvg"], input=to_dot(chain, title), capture_output=True, text=True, check=True, timeout=30
            ).stdout
        except (OSError, subprocess.SubprocessError):
            pass  # a broken Graphviz: the picture is still drawn below
    return _layered_svg(chain, title)


def _layered_svg(chain: list[dict[str, Any]], title: str) -> str:
    g = chain_graph(chain)
    rank: dict[int, int] = {}
    for n in nx.topological_sort(g):
        rank[n] = max((rank[p] + 1 for p in g.predecessors(n)), default=0)
    rows: dict[int, list[int]] = {}
    for n in sorted(g.nodes):
        rows.setdefault(rank[n], []).append(n)
    char_w, box_h, gap_x, gap_y, pad = 7.2, 28, 24, 36, 20
    width = {n: len(g.nodes[n]["label"]) * char_w + 16 for n in g.nodes}
    row_w = {r: sum(width[n] for n in ns) + gap_x * (len(ns) - 1) for r, ns in rows.items()}
    total_w = max(row_w.values(), default=200) + 2 * pad
    pos: dict[int, tuple[float, float]] = {}
    for r, ns in rows.items():
        x = (total_w - row_w[r]) / 2
        for n in ns:
            pos[n] = (x, pad + 24 + r * (box_h + gap_y))
            x += width[n] + gap_x
    height = pad * 2 + 24 + len(rows) * (box_h + gap_y)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w:.0f}" height="{height:.0f}" '
        'font-family="monospace" font-size="12">',
        '<defs><marker id="a" markerWidth="8" markerHeight="8" refX="8" refY="4" orient="auto">'
        '<path d="M0,0 L8,4 L0,8 z"/></marker></defs>',
        f'<text x="{pad}" y="{pad + 4}" font-weight="bold">{html.escape(title)}</text>',
    ]
    for a, b in g.edges:
        (xa, ya), (xb, yb) = pos[a], pos[b]
        out.append(
            f'<line x1="{xa + width[a] / 2:.0f}" y1="{ya + box_h:.0f}" x2="{xb + width[b] / 2:.0f}" y2="{yb:.0f}" '
            'stroke="black" marker-end="url(#a)"/>'
        )
    for n, data in g.nodes(data=True):
        s, (x, y) = data["step"], pos[n]
        colour = _colour(s)
        stroke = ' stroke-width="3"' if s.get("wraps") else ""
        out.append(
            f'<g><title>{html.escape(str(s.get("text", "")))}</title><rect x="{x:.0f}" y="{y:.0f}" '
            f'width="{width[n]:.0f}" height="{box_h}" rx="4" fill="{colour}" stroke="black"{stroke}/>'
            f'<text x="{x + 8:.0f}" y="{y + 18:.0f}">{html.escape(data["label"])}</text></g>'
        )
    return "\n".join(out) + "\n</svg>\n"


def write_all(findings: list[Any], folder: Path) -> None:
    """``irscan scan --dot DIR``: ``<id>.dot`` and ``<id>.svg`` per finding."""
    folder.mkdir(parents=True, exist_ok=True)
    for f in findings:
        chain = [asdict(s) for s in f.chain]
        title = f"{f.id}: {f.expression}"
        (folder / f"{f.id}.dot").write_text(to_dot(chain, title))
        (folder / f"{f.id}.svg").write_text(to_svg(chain, title))
