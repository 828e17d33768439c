"""Run every check on one function: each candidate goes to the first check that claims it, and the
findings of one access are merged."""

from __future__ import annotations

from dataclasses import dataclass

from irscan.analysis.dataflow import Graph
from irscan.analysis.ranges import Ranges
from irscan.checks.base import Widening, evaluate, point_sinks, widening_points
from irscan.checks.explain import explain
from irscan.checks.registry import CHECKS
from irscan.findings import Finding, fold


@dataclass
class Context:
    kernel: str
    ir_file: str
    kernel_file: str | None = None
    kernel_line: int | None = None
    #: (file, line) of every ``def`` the capture's meta.json names (kernels, ``@cute.jit`` functions):
    #: a location there names a definition even where the source file is not on this machine
    definitions: frozenset[tuple[str, int]] = frozenset()


def points(gr: Graph) -> list[tuple[Widening, list[int]]]:
    """Every widening point of the function with the accesses it feeds: computed once per function
    for the checks and the access records (irscan/diff/accesses.py)."""
    return [(w, point_sinks(gr, w)) for w in widening_points(gr)]


def run(gr: Graph, rg: Ranges, ctx: Context, pts: list[tuple[Widening, list[int]]] | None = None) -> list[Finding]:
    """``pts``: ``points(gr)`` where the caller has it already."""
    out: list[Finding] = []
    for w, sinks in points(gr) if pts is None else pts:
        c = evaluate(gr, rg, w, sinks)
        if c is None:
            continue
        check = next((ch for ch in CHECKS if ch.claims(gr, c)), None)
        if check is not None:
            out.append(explain(gr, rg, c, check, ctx))
    return _merge_same_access(out)


def _merge_same_access(fs: list[Finding]) -> list[Finding]:
    """One finding per access statement and check: ``dst[i] = src[i]`` is one bug, not two, and the
    64 unrolled copies of one store are one finding with ``occurrences`` 64 (findings.fold)."""
    return sorted(fold(fs), key=lambda f: (f.ir_line, f.check))
