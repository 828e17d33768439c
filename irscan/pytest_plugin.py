"""``pytest --irscan[=must|may]``: audit every CuTe DSL kernel the test session compiles.

Registered through the ``pytest11`` entry point, so installing irscan is enough; without ``--irscan`` the
plugin does nothing at all (it imports neither the DSL nor the analysis).  With it, the capture hook
(``irscan.capture``) is armed in-process for the whole session, before the first conftest imports the
DSL (caches off, line info on, as ``irscan audit`` runs a program); at the end the captures are scanned,
inline suppressions and ``--irscan-baseline`` applied, one summary printed, ``--irscan-report FILE``
written (SARIF when the name ends in ``.sarif``, else the JSON document), and the session fails (exit 1)
when findings reach the level: ``must`` (the default) or ``may``.  irscan's own failure to scan a module
fails the session too (a note says which), unless the level is ``never``.
"""

from __future__ import annotations

import json
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from irscan.pipeline import ScanResult

_STATE = pytest.StashKey["_Audit"]()


class _Audit:
    def __init__(self, level: str, report: str | None, baseline: str | None, out: str | None) -> None:
        self.level, self.report, self.baseline = level, report, baseline
        self.tmp = None if out else tempfile.TemporaryDirectory(prefix="irscan-pytest-")
        self.out = Path(out or self.tmp.name)  # type: ignore[union-attr]
        self.stack = ExitStack()
        self.result: ScanResult | None = None
        self.lines: list[str] = []
        self.failed = False


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("irscan", "irscan: 32-bit address arithmetic in the kernels the tests compile")
    g.addoption(
        "--irscan",
        nargs="?",
        const="must",
        default=None,
        choices=("must", "may", "never"),
        help="audit every kernel compiled during the session; fail it at this level (default must)",
    )
    g.addoption("--irscan-report", metavar="FILE", help="write the audit as JSON (or SARIF: FILE.sarif)")
    g.addoption("--irscan-baseline", metavar="FILE", help="leave out findings in this irscan baseline")
    g.addoption("--irscan-out", metavar="DIR", help="keep the captures in DIR (default: a temporary folder)")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """The DSL reads its environment at import: set it before any conftest imports cutlass."""
    ns = early_config.known_args_namespace
    if getattr(ns, "irscan", None):
        from irscan.capturing.env import prepare_environment

        prepare_environment(None, True)


def pytest_configure(config: pytest.Config) -> None:
    level = config.getoption("irscan", None)
    if not level:
        return
    from irscan.capturing.hook import capture

    a = _Audit(level, config.getoption("irscan_report"), config.getoption("irscan_baseline"),
               config.getoption("irscan_out"))  # fmt: skip
    a.stack.enter_context(capture(out=a.out, lineinfo=True))
    config.stash[_STATE] = a


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    a = session.config.stash.get(_STATE, None)
    if a is None:
        return
    from irscan.diff import triage
    from irscan.pipeline import reaches, scan_safely
    from irscan.report import text

    a.stack.close()
    try:
        res = scan_safely(a.out, strict=False)
        res.findings, t = triage.findings(res.findings, res.accesses, Path(a.baseline) if a.baseline else None)
        a.result = res
        if a.report:
            _write(Path(a.report), res, {"suppressed": t.summary()})
        bad = reaches(res.findings, a.level)
        a.failed = a.level != "never" and bool(bad or res.errors)
        n = len(res.kernels)
        a.lines = [text.render(res.findings, res.kernels, res.unseen)] if res.findings else []
        a.lines += [*res.errors, *t.lines()]
        verdict = f"{len(bad)} at or above '{a.level}': the session fails" if a.failed else "nothing at the fail level"
        a.lines.append(f"irscan: {n} kernel scan(s), {len(res.findings)} finding(s); {verdict}")
        if a.failed and exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    finally:
        if a.tmp is not None:
            a.tmp.cleanup()


def _write(path: Path, res: ScanResult, extra: dict[str, Any]) -> None:
    from irscan.capturing.meta import dsl_environment
    from irscan.report import json as json_report
    from irscan.report import sarif

    if path.name.endswith(".sarif"):
        path.write_text(sarif.render(res.findings, res.errors, extra) + "\n")
        return
    doc = json_report.document(res.findings, res.kernels, res.unseen, environment=dsl_environment(),
                               errors=res.errors, accesses=res.accesses,
                               rule_suppressed=res.rule_suppressed)  # fmt: skip
    path.write_text(json.dumps({**doc, **extra}, indent=2, default=str) + "\n")


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    a = config.stash.get(_STATE, None)
    if a is None or not a.lines:
        return
    terminalreporter.section("irscan")
    for line in a.lines:
        terminalreporter.write_line(line)
