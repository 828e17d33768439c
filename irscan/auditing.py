"""Capture and scan in one go: the compile-time audit, from code (``with irscan.audit():``) or the CLI."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from irscan.findings import Finding
from irscan.scan import ScanResult, scan_capture

FAIL_LEVELS = {"must": ("must",), "may": ("must", "may"), "never": ()}


class AuditError(Exception):
    """Raised on leaving ``irscan.audit(fail_on=...)`` when findings reach the level."""

    def __init__(self, findings: list[Finding]):
        self.findings = findings
        super().__init__(f"irscan: {len(findings)} finding(s) at or above the fail-on level")


def reaches(findings: list[Finding], fail_on: str) -> list[Finding]:
    return [f for f in findings if f.severity in FAIL_LEVELS[fail_on]]


def scan_safely(folder: Path, strict: bool, irs: tuple[str, ...] = ("mlir", "ptx")) -> ScanResult:
    """Scan each captured module on its own; irscan's failure on one becomes a note on the result and
    the others are still scanned, unless strict (the user's run is not ours to break)."""
    from irscan.capture import find_captures

    res = ScanResult()
    for capture in find_captures(folder) if folder.exists() else []:
        try:
            res.extend(scan_capture(capture, irs))
        except Exception as exc:  # IRSyntaxError included: a capture we cannot read is our failure
            if strict:
                raise
            res.errors.append(f"irscan could not scan {capture}: {type(exc).__name__}: {exc}")
    return res


@dataclass
class Audit:
    out: Path
    result: ScanResult = field(default_factory=ScanResult)

    @property
    def findings(self) -> list[Finding]:
        return self.result.findings


@contextmanager
def audit(
    out: str | None = None, fail_on: str = "never", strict: bool = False, report: bool = True, arch: str | None = None
) -> Iterator[Audit]:
    """``with irscan.audit(fail_on="must") as a: cute.compile(...)``: findings in ``a.findings``."""
    from irscan.capture import capture
    from irscan.report import text

    tmp = None if out else tempfile.TemporaryDirectory(prefix="irscan-audit-")
    folder = Path(out or tmp.name)  # type: ignore[union-attr]
    a = Audit(folder)
    try:
        with capture(out=folder, strict=strict, arch=arch):
            yield a
        a.result = scan_safely(folder, strict)
        if report and (a.result.findings or a.result.errors):
            print(text.render(a.result.findings, a.result.kernels, a.result.unseen), file=sys.stderr)
            for e in a.result.errors:
                print(e, file=sys.stderr)
        bad = reaches(a.result.findings, fail_on)
        if bad:
            raise AuditError(bad)
    finally:
        if tmp is not None:
            tmp.cleanup()
