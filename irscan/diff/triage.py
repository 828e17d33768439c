"""What a run reports after the project's own decisions: inline suppressions, then the baseline.

The same for ``scan``, ``audit`` and ``diff`` (for a diff, both builds' findings go through it, so a
baselined finding is neither new nor fixed).  The counts and the unused suppressions are part of the
report (JSON ``suppressed``; text: stderr), so nothing disappears without a word.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irscan.diff import baseline, suppress
from irscan.findings import Finding


@dataclass
class Triage:
    inline: int = 0
    baselined: int = 0
    unused: list[suppress.Suppression] = field(default_factory=list)
    baseline_file: str | None = None

    def summary(self) -> dict[str, Any]:
        return {
            "inline": self.inline,
            "baseline": self.baselined,
            "baseline_file": self.baseline_file,
            "unused_suppressions": [
                {"file": s.file, "line": s.line, "suppression": s.text(), "reason": s.reason} for s in self.unused
            ],
        }

    def lines(self) -> list[str]:
        """For a text report: one line of counts, one per unused suppression (ruff's RUF100 wording)."""
        out = []
        if self.inline or self.baselined:
            out.append(
                f"irscan: {self.inline} finding(s) suppressed inline (# irscan: ignore), "
                f"{self.baselined} in the baseline{f' {self.baseline_file}' if self.baseline_file else ''}"
            )
        out += [
            f"{s.file}:{s.line}: unused suppression `{s.text()}` (no such finding on this line)" for s in self.unused
        ]
        return out


def python_files(findings: Iterable[dict[str, Any]], accesses: Iterable[dict[str, Any]]) -> set[str]:
    """The Python files whose statements the scan saw: where suppressions can be, and be unused."""
    return {str(e["file"]) for e in (*findings, *accesses) if e.get("file") and str(e["file"]).endswith(".py")}


def findings(
    fs: list[Finding], accesses: list[dict[str, Any]], baseline_file: Path | None
) -> tuple[list[Finding], Triage]:
    """``scan``/``audit``: the findings left to report, and what was set aside."""
    t = Triage(baseline_file=str(baseline_file) if baseline_file else None)
    s = suppress.apply(fs, python_files([f.to_json() for f in fs], accesses))
    t.inline, t.unused = len(s.suppressed), s.unused
    kept = s.kept
    if baseline_file is not None:
        b = baseline.apply(kept, baseline.load(baseline_file))
        kept, t.baselined = b.kept, len(b.baselined)
    return kept, t


def documents(base: dict[str, Any], new: dict[str, Any], baseline_file: Path | None) -> Triage:
    """``diff``: both reports' findings filtered in place (suppressions as written in NEW's sources)."""
    t = Triage(baseline_file=str(baseline_file) if baseline_file else None)
    entries = baseline.load(baseline_file) if baseline_file is not None else []
    for side, doc in (("base", base), ("new", new)):
        fs = doc["findings"]
        flags, unused = suppress.mark(fs, python_files(fs, doc.get("accesses", [])))
        if side == "new":
            t.inline, t.unused = sum(flags), unused
        fs = [f for f, hit in zip(fs, flags, strict=True) if not hit]
        if entries:
            known = baseline.in_baseline(fs, entries)
            if side == "new":
                t.baselined = sum(known)
            fs = [f for f, k in zip(fs, known, strict=True) if not k]
        doc["findings"] = fs
    return t
