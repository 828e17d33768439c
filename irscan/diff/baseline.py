"""Baselines: the findings a project has accepted for now, so a run reports only what is not in it.

``--write-baseline FILE`` writes the run's findings; ``--baseline FILE`` drops those that match one of
its entries.  Matching is ``irscan diff``'s (diff/match.py): the kernel's Python name, the IR, the
check, the statement (its line, else its text, so an edit above it does not resurrect it) and the
canonical expression; a finding whose expression changed at the same statement is *not* baselined
(its threshold moved: a reviewer should see it).  A saved ``--format json`` report is a baseline too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irscan import __version__
from irscan.diff.load import load_report
from irscan.diff.match import FINDING_TIERS, pair
from irscan.findings import Finding, kernel_key, portable_path

BASELINE_VERSION = 1
#: the fields of a finding a baseline keeps: enough to match it and for a reader to recognise it
_KEPT = ("id", "kernel", "ir", "check", "severity", "file", "line", "col", "source", "expression", "sink")


def entry(f: Finding) -> dict[str, Any]:
    d = f.to_json()
    e = {k: d[k] for k in _KEPT}
    e["file"] = portable_path(f.file) if f.file else None  # a baseline is checked in: no machine's paths
    e["sink"] = {"kind": f.sink.get("kind")}
    e["kernel_key"] = kernel_key(f.kernel)
    return e


def write(path: Path, findings: list[Finding]) -> None:
    doc = {
        "schema_version": 1,
        "baseline_version": BASELINE_VERSION,
        "tool": {"name": "irscan", "version": __version__},
        "findings": [entry(f) for f in findings],
    }
    path.write_text(json.dumps(doc, indent=2) + "\n")


def load(path: Path) -> list[dict[str, Any]]:
    """The baseline's entries (a located error, exit 2, when the file is not a baseline or report)."""
    return list(load_report(path)["findings"])


def _portable(e: dict[str, Any]) -> dict[str, Any]:
    return {**e, "file": portable_path(e["file"]) if e.get("file") else None}


def in_baseline(findings: list[dict[str, Any]], entries: list[dict[str, Any]]) -> list[bool]:
    """For each finding (its JSON form), whether a baseline entry absorbs it (one entry, one finding)."""
    mine = [_portable(f) for f in findings]
    pairs, _, _ = pair([_portable(e) for e in entries], mine, FINDING_TIERS[:2])
    matched = {id(n) for _, n in pairs}
    return [id(e) in matched for e in mine]


@dataclass
class Outcome:
    kept: list[Finding] = field(default_factory=list)
    baselined: list[Finding] = field(default_factory=list)


def apply(findings: list[Finding], entries: list[dict[str, Any]]) -> Outcome:
    """Split ``findings`` into those not in the baseline and those in it."""
    out = Outcome()
    for f, known in zip(findings, in_baseline([f.to_json() for f in findings], entries), strict=True):
        (out.baselined if known else out.kept).append(f)
    return out
