"""``pytest --irscan``: a session whose tests compile a buggy corpus kernel fails, a clean one passes, the
level and the report file are honoured, and without the option nothing is captured.  Each session is
a real pytest subprocess (pytester) compiling a real corpus program with the real DSL."""

from __future__ import annotations

import json
import os
from importlib.metadata import entry_points
from pathlib import Path

import pytest

pytest_plugins = ("pytester",)

PROGRAMS = Path(__file__).resolve().parent.parent / "corpus" / "programs"
MUST = "example_stacked_weights"  # a must finding (manifest)
MAY = "flat_offset_trunc_3208"  # a may finding only
CLEAN = "rmsnorm_i64_stride"  # no finding


@pytest.fixture
def session(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """``session(program, *options)``: a pytest run of one test that compiles the corpus program."""
    for k in list(os.environ):
        if k.startswith(("CUTE_DSL_", "IRSCAN_")):
            monkeypatch.delenv(k)
    # installed, irscan registers the plugin through its pytest11 entry point; from a bare checkout, by name
    registered = any(e.name == "irscan" for e in entry_points(group="pytest11"))
    plugin = () if registered else ("-p", "irscan.pytest_plugin")

    def run(program: str, *options: str) -> pytest.RunResult:
        path = str(PROGRAMS / f"{program}.py")
        pytester.makepyfile(test_compiles=f"import runpy\n\ndef test_compile():\n    runpy.run_path({path!r})\n")
        return pytester.runpytest_subprocess(*plugin, "-p", "no:cacheprovider", *options, timeout=300)

    return run


def test_a_session_compiling_a_buggy_kernel_fails(session, pytester: pytest.Pytester) -> None:  # type: ignore[no-untyped-def]
    r = session(MUST, "--irscan", "--irscan-report", "audit.json")
    assert r.ret == 1, r.stdout.str()
    r.assert_outcomes(passed=1)  # the test itself passed: irscan failed the session
    out = r.stdout.str()
    assert "narrow-widened-late" in out and "1 at or above 'must': the session fails" in out
    doc = json.loads((pytester.path / "audit.json").read_text())
    assert doc["summary"]["must"] == 1 and doc["accesses"] and doc["suppressed"]["inline"] == 0
    assert doc["rule_suppressed"] == []  # the JSON contract of `irscan scan --format json`, field for field


def test_a_session_compiling_a_clean_kernel_passes(session) -> None:  # type: ignore[no-untyped-def]
    r = session(CLEAN, "--irscan")
    assert r.ret == 0, r.stdout.str()
    assert "irscan: 2 kernel scan(s), 0 finding(s); nothing at the fail level" in r.stdout.str()


def test_the_level_decides_and_sarif_is_written(session, pytester: pytest.Pytester) -> None:  # type: ignore[no-untyped-def]
    assert session(MAY, "--irscan", "--irscan-report", "audit.sarif").ret == 0  # a may finding, the must level
    sarif = json.loads((pytester.path / "audit.sarif").read_text())
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["results"][0]["ruleId"] == "trunc-then-extend"
    r = session(MAY, "--irscan=may")
    assert r.ret == 1 and "trunc-then-extend" in r.stdout.str()


def test_without_the_option_nothing_is_captured(session) -> None:  # type: ignore[no-untyped-def]
    r = session(MUST)
    assert r.ret == 0 and "irscan:" not in r.stdout.str() and "kernel scan" not in r.stdout.str()
