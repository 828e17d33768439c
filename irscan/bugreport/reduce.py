"""Delta reduction of a captured module with irscan itself as the interestingness test.

A candidate is interesting (the reducer's convention: exit 0 = still interesting) when a scan of it
alone, with no meta.json beside it, still reports a finding of the same kernel with the same check,
severity, free input and threshold, and, for MLIR, when the DSL's own parser
(``cutlass._mlir.ir.Module.parse``) accepts it with its locations stripped (the printer writes
locations the parser does not read back: irscan.frontend.mlir.strip_locations).  Ops are removed in
chunks that halve down to single lines (ddmin over the op lines of each function body), so a
definition goes only once its users have gone and the result stays a module a maintainer can read.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irscan.findings import kernel_key
from irscan.frontend.mlir import strip_locations

#: lines that are never removed: structure (braces, headers, block labels), terminators and metadata
_KEEP = re.compile(
    r"^\s*(?:\}|\^|module\b|gpu\.module\b|llvm\.func\b|func\.func\b|llvm\.return\b|llvm\.br\b|llvm\.cond_br\b"
    r"|gpu\.return\b|ret;|\.|//|#|\{|\)|$)"
)

_ALIAS = re.compile(r"^#(?:loc|di_)\w* = ")
_FUNC = re.compile(r"^(\s*)(?:llvm\.func|func\.func|\.visible \.entry|\.entry|\.func)\s+@?([\w$.]+)")


@dataclass(frozen=True)
class Target:
    """What makes a finding the same finding: what a maintainer would check in the reduced module."""

    kernel: str
    ir: str
    check: str
    severity: str
    input: str | None
    threshold: int | None

    @classmethod
    def of(cls, f: dict[str, Any]) -> Target:
        w = f.get("wraps_when") or {}
        return cls(kernel_key(f["kernel"]), f["ir"], f["check"], f["severity"], w.get("input"), w.get("threshold"))

    def matches(self, f: dict[str, Any]) -> bool:
        return Target.of(f) == self


def scan_alone(path: Path) -> list[dict[str, Any]]:
    """The findings of one IR file scanned by itself; [] when irscan cannot read it."""
    from irscan.ir import IRSyntaxError
    from irscan.pipeline import scan_paths

    try:
        return [f.to_json() for f in scan_paths([path]).findings]
    except (IRSyntaxError, RecursionError, ValueError, KeyError, IndexError, AttributeError, TypeError):
        return []  # a candidate irscan cannot read is simply not interesting


def dsl_accepts(text: str) -> bool:
    """Whether the DSL's own MLIR parser reads ``text`` as it is (``nvvm.barrier``'s location aside: the
    one printer bug irscan.patching.parse works around)."""
    from cutlass._mlir import ir as _ir

    from irscan.patching.parse import parse_module

    ir: Any = _ir  # the bindings ship no type stubs
    try:
        with ir.Context():
            parse_module(text)
        return True
    except Exception:  # the bindings raise MLIRError and friends; any failure means "not accepted"
        return False


def reproduces(text: str, suffix: str, target: Target) -> bool:
    """The interestingness test: ``text`` scanned alone reports ``target``'s finding."""
    with tempfile.TemporaryDirectory(prefix="irscan-reduce-") as tmp:
        p = Path(tmp) / f"candidate{suffix}"
        p.write_text(text)
        return any(target.matches(f) for f in scan_alone(p))


def ddmin_lines(lines: list[str], removable: list[int], interesting: Callable[[list[str]], bool]) -> list[str]:
    """Remove as many of the ``removable`` line indices as keeps ``interesting`` true: chunks of
    halving size, bottom-up within each size (users go before their definitions)."""
    keep = set(range(len(lines)))
    cand = list(removable)
    size = max(1, len(cand) // 2)
    while True:
        i = len(cand)
        changed = False
        while i > 0:
            chunk = cand[max(0, i - size) : i]
            trial = keep - set(chunk)
            if interesting([lines[j] for j in sorted(trial)]):
                keep = trial
                cand = [c for c in cand if c not in chunk]
                changed = True
            i -= size
        if size == 1 and not changed:
            break
        size = max(1, size // 2) if not changed or size > 1 else 1
    return [lines[j] for j in sorted(keep)]


@dataclass
class Reduced:
    text: str
    ops_before: int
    ops_after: int
    dsl_parses: bool  # MLIR: the DSL's parser accepts the written text as it is
    located: bool  # the written text keeps its locations (the Python statement survives)


def _function_spans(lines: list[str]) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of each function: from its header to the ``}`` at its indent."""
    spans = []
    for i, ln in enumerate(lines):
        m = _FUNC.match(ln)
        if not m:
            continue
        if not ln.rstrip().endswith("{"):
            spans.append((m.group(2), i, i))  # a declaration
            continue
        close = m.group(1) + "}"
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith(close)), None)
        if end is not None:
            spans.append((m.group(2), i, end))
    return spans


def _drop_functions(lines: list[str], kernel: str, interesting: Callable[[list[str]], bool]) -> list[str]:
    """Whole functions other than the kernel's first (host code, other kernels), last one first."""
    for name, a, b in reversed(_function_spans(lines)):
        if kernel_key(name) == kernel:
            continue
        trial = lines[:a] + lines[b + 1 :]
        if interesting(trial):
            lines = trial
    return lines


def _ops(lines: list[str]) -> int:
    return sum(1 for ln in lines if not _KEEP.match(ln))


def reduce_module(text: str, suffix: str, target: Target) -> Reduced | None:
    """The smallest module found that still reproduces ``target``; None when the original itself does not
    (scanned alone, without meta.json).  An MLIR module keeps its locations (the Python statements) when
    the DSL's parser reads it with them, else it is reduced with them stripped."""
    mlir, located = suffix == ".mlir", True
    if mlir and not dsl_accepts(text):
        text, located = strip_locations(text), False

    def interesting(ls: list[str]) -> bool:
        t = "\n".join(ls)
        return reproduces(t, suffix, target) and (not mlir or dsl_accepts(t))

    lines = text.split("\n")
    if not interesting(lines):
        return None
    before = _ops(lines)
    lines = _drop_functions(lines, target.kernel, interesting)
    removable = [i for i, ln in enumerate(lines) if not _KEEP.match(ln) or _ALIAS.match(ln)]
    out = ddmin_lines(lines, removable, interesting)
    return Reduced("\n".join(out).rstrip("\n") + "\n", before, _ops(out), mlir, located)
