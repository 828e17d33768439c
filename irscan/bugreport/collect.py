"""The findings a report is about, read from a capture folder (scanned now) or a saved ``--format json``
report, grouped by root cause: an MLIR finding and its PTX twin are one bug, so are the findings of one
kernel whose wrapping op sits in the same Python statement under the same check."""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irscan.capturing.store import META_FILE


@dataclass
class RootCause:
    """One report: the findings it covers (the first speaks for them) and the capture they came from."""

    findings: list[dict[str, Any]]
    capture: Path | None
    meta: dict[str, Any] | None
    params: list[str] = field(default_factory=list)  # the kernel's Python parameter names, when readable

    @property
    def lead(self) -> dict[str, Any]:
        """The MLIR finding whose statement is the wrapping op's own (no ``origin``: its chain carries the
        Python statement's ops), else any MLIR finding, else the first."""
        mlir = [f for f in self.findings if f["ir"] == "mlir"]
        return next((f for f in mlir if not f.get("origin")), mlir[0] if mlir else self.findings[0])

    @property
    def accesses(self) -> list[dict[str, Any]]:
        """One finding per access the wrapping value reaches (the MLIR one where there is one)."""
        mlir = [f for f in self.findings if f["ir"] == "mlir"]
        return mlir or self.findings

    @property
    def id(self) -> str:
        return str(self.lead["id"])

    def kernel_meta(self) -> dict[str, Any]:
        ks = (self.meta or {}).get("kernels")
        for k in ks if isinstance(ks, list) else []:  # a hostile meta.json is read as recording nothing
            if isinstance(k, dict) and k.get("name") == self.lead["kernel"]:
                return dict(k)
        return {}

    def ir_file(self, ir: str) -> Path | None:
        """The captured module of this IR kind, when it is still on disk."""
        for f in self.findings:
            if f["ir"] == ir and Path(f["ir_file"]).exists():
                return Path(f["ir_file"])
        if self.capture is not None:
            cand = self.capture / f"module.{ir}"
            return cand if cand.exists() else None
        return None


#: what a finding of a saved report must carry for a bug report to be written from it
_NEEDED = ("id", "kernel", "ir", "check", "severity", "ir_file", "chain", "expression")


def load_findings(source: Path) -> list[dict[str, Any]]:
    """A saved JSON report's findings, or a fresh scan's of a capture folder or IR file.  A JSON file that
    is not an irscan report is bad input (exit 2), whatever it holds."""
    if source.is_file() and source.suffix == ".json":
        from irscan.ir import IRSyntaxError
        from irscan.resources import read_text

        text = read_text(source)  # bad bytes, a special file or one too big: located errors of their own
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise IRSyntaxError(
                str(source), exc.lineno, exc.colno, f"not a JSON report ({exc.msg})", ["irscan scan --format json"]
            ) from None
        except (RecursionError, MemoryError) as exc:  # json's C scanner stops cleanly on either
            why = "nested too deeply" if isinstance(exc, RecursionError) else "too large to hold in memory"
            raise IRSyntaxError(str(source), 1, 1, f"not a JSON report: {why}", ["irscan scan --format json"]) from None
        found = doc.get("findings") if isinstance(doc, dict) else None
        if not isinstance(found, list) or not all(isinstance(f, dict) and all(k in f for k in _NEEDED) for f in found):
            want = ["a document of `irscan scan --format json` (findings with " + ", ".join(_NEEDED) + ")"]
            raise IRSyntaxError(str(source), 1, 1, "not an irscan report", want)
        return found
    from irscan.pipeline import scan_paths

    return [f.to_json() for f in scan_paths([source]).findings]


def _capture_of(f: dict[str, Any]) -> Path | None:
    folder = Path(f["ir_file"]).parent
    return folder if (folder / META_FILE).exists() else None


def _read_meta(cap: Path) -> dict[str, Any] | None:
    """The capture's meta.json; None when it cannot be read (the report then says what is not recorded)."""
    from irscan.capturing.store import parse_meta
    from irscan.ir import IRSyntaxError
    from irscan.resources import read_text

    try:  # irscan's own reader: a FIFO, bad bytes, deep nesting or a bad field is "cannot be read" too
        return parse_meta(read_text(cap / META_FILE), str(cap / META_FILE))
    except IRSyntaxError:
        return None


def _wrapping_ops(f: dict[str, Any]) -> list[tuple[str, str, int]]:
    """The ops of ``f``'s chain that wrap, as (module, IR, line): two findings that share one are one bug
    (one wrapping value that several accesses use)."""
    return [(str(f["ir_file"]), str(f["ir"]), int(s["ir_line"])) for s in f.get("chain", []) if s.get("wraps")]


def group(findings: list[dict[str, Any]]) -> list[RootCause]:
    """Root causes in the order their first finding was reported: a finding, its twin in the other IR,
    and every finding whose wrapping op is the same op of the same module are one."""
    ids = [f["id"] for f in findings]
    parent = {i: i for i in ids}

    def find(i: str) -> str:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb, key=ids.index)] = min(ra, rb, key=ids.index)

    first_with: dict[object, str] = {}
    for f in findings:
        if f.get("twin") in parent:
            union(f["id"], f["twin"])
        for key in _wrapping_ops(f):
            union(f["id"], first_with.setdefault(key, f["id"]))
    groups: dict[str, list[dict[str, Any]]] = {}
    for f in findings:
        groups.setdefault(find(f["id"]), []).append(f)
    out = []
    for members in groups.values():
        cap = _capture_of(members[0])
        meta = _read_meta(cap) if cap else None
        rc = RootCause(members, cap, meta)
        rc.params = kernel_params(rc.kernel_meta())
        out.append(rc)
    return out


def function_at(path: Path, line: int) -> ast.FunctionDef | None:
    """The def at ``line`` (its own line or a decorator's) in ``path``."""
    try:
        tree = ast.parse(path.read_text())
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and line in (node.lineno, *(d.lineno for d in node.decorator_list)):
            return node
    return None


def kernel_params(km: dict[str, Any]) -> list[str]:
    """The kernel's Python parameter names (``self`` dropped), read from its def; [] when unreadable."""
    if not km.get("file") or not km.get("line"):
        return []
    node = function_at(Path(km["file"]), int(km["line"]))
    if node is None:
        return []
    names = [a.arg for a in node.args.args]
    return names[1:] if names[:1] == ["self"] else names


@dataclass
class Evidence:
    """What was re-run for one report, so the text says only what was checked.  ``reduced``: the file
    name of the reduced module, None when none reproduces; ``repro``: the repro script's file name and
    whether ``irscan audit`` of it reproduced; ``matrix``: release -> affected / not affected / does not
    compile; ``first_bad``: what ``--bisect`` found."""

    svg: str | None = None
    reduced: str | None = None
    reduced_ops: tuple[int, int] = (0, 0)
    reduced_note: str = ""
    repro: str | None = None
    repro_reproduces: bool | None = None
    repro_note: str = ""
    matrix: dict[str, str] = field(default_factory=dict)
    first_bad: str | None = None
    bisect_note: str = ""
