"""Inline suppressions and baselines on scan and audit: ``# irscan: ignore[check] reason`` on the
statement's line silences that check there (and only there), an unused one is reported, counts are in
the report; a baseline written by one run leaves the next run nothing to report, also after an
unrelated line moved the statement."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from test_diff import PROGRAM, UNRELATED, capture_variants

from irscan.cli import main
from irscan.diff.suppress import comments

LINE = 30  # the statement of the program's two trunc-then-extend findings (MLIR and PTX)


@pytest.fixture(scope="module")
def caps(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    text = PROGRAM.read_text()
    moved = text.replace(
        "    row, _, _ = cute.arch.block_idx()\n", "    row, _, _ = cute.arch.block_idx()\n" + UNRELATED
    )
    return capture_variants(tmp_path_factory.mktemp("triage"), {"buggy": text, "moved": moved})


def _with_comment(caps: SimpleNamespace, line: int | None, comment: str = "") -> Path:
    """The captured program's source with ``comment`` at the end of ``line`` (no line moves); as
    captured when ``line`` is None."""
    src = caps.root / "buggy" / "kernel.py"
    lines = PROGRAM.read_text().splitlines(keepends=True)
    if line is not None:
        lines[line - 1] = lines[line - 1].rstrip("\n") + f"  {comment}\n"
    src.write_text("".join(lines))
    return src


def _scan(folder: Path, capsys: pytest.CaptureFixture[str], *opts: str) -> tuple[int, dict[str, Any], str]:
    rc = main(["scan", str(folder), "--format", "json", "--fail-on", "may", *opts])
    out = capsys.readouterr()
    return rc, json.loads(out.out), out.err


def test_a_suppression_on_the_statement_silences_its_check(
    caps: SimpleNamespace, capsys: pytest.CaptureFixture[str]
) -> None:
    _with_comment(caps, LINE, "# irscan: ignore[trunc-then-extend] strides stay below 32769 rows")
    rc, doc, _ = _scan(caps.buggy, capsys)
    assert rc == 0 and doc["findings"] == []
    assert doc["suppressed"]["inline"] == 2 and doc["suppressed"]["unused_suppressions"] == []


def test_every_check_or_none_and_only_on_its_line(caps: SimpleNamespace, capsys: pytest.CaptureFixture[str]) -> None:
    _with_comment(caps, LINE, "# irscan: ignore")
    assert _scan(caps.buggy, capsys)[1]["suppressed"]["inline"] == 2
    _with_comment(caps, LINE, "# irscan: ignore[narrow-widened-late]")  # another check: not suppressed, unused
    rc, doc, _ = _scan(caps.buggy, capsys)
    assert rc == 1 and len(doc["findings"]) == 2
    (unused,) = doc["suppressed"]["unused_suppressions"]
    assert unused["line"] == LINE and unused["suppression"] == "# irscan: ignore[narrow-widened-late]"
    _with_comment(caps, LINE - 2, "# irscan: ignore[trunc-then-extend]")  # the line above: no finding there
    rc, doc, _ = _scan(caps.buggy, capsys)
    assert rc == 1 and len(doc["findings"]) == 2
    assert [u["line"] for u in doc["suppressed"]["unused_suppressions"]] == [LINE - 2]


def test_the_text_report_names_the_counts_and_the_unused_suppression(
    caps: SimpleNamespace, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _with_comment(caps, LINE - 2, "# irscan: ignore[trunc-then-extend] stale")
    assert main(["scan", str(caps.buggy), "--fail-on", "never"]) == 0
    err = capsys.readouterr().err
    assert f"{src}:{LINE - 2}: unused suppression `# irscan: ignore[trunc-then-extend]`" in err


def test_comment_tokens_only() -> None:
    """A ``# irscan: ignore`` inside a string is text, not a suppression; an unreadable file has none."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "k.py"
        p.write_text('s = "# irscan: ignore"\nx = 1  # irscan: ignore[a, b] why\n')
        (c,) = comments(str(p))
        assert (c.line, c.checks, c.reason) == (2, frozenset({"a", "b"}), "why")
        p.write_text('s = """\n')  # an unterminated string: no tokens, no suppressions
        assert comments(str(p)) == []
    assert comments("/nonexistent/k.py") == []


def test_a_written_baseline_leaves_nothing_to_report(
    caps: SimpleNamespace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _with_comment(caps, None)  # no suppression
    b = tmp_path / "irscan-baseline.json"
    assert main(["scan", str(caps.buggy), "--write-baseline", str(b)]) == 0
    capsys.readouterr()
    entries = json.loads(b.read_text())["findings"]
    assert len(entries) == 2 and {e["file"] for e in entries} == {"kernel.py"}  # checked in: no machine's path
    rc, doc, _ = _scan(caps.buggy, capsys, "--baseline", str(b))
    assert rc == 0 and doc["findings"] == [] and doc["suppressed"]["baseline"] == 2
    # an unrelated statement above moved the findings a line down: still the same bugs
    rc, doc, _ = _scan(caps.moved, capsys, "--baseline", str(b))
    assert rc == 0 and doc["findings"] == [] and doc["suppressed"]["baseline"] == 2


def test_a_saved_report_is_a_baseline_and_a_bad_one_is_located(
    caps: SimpleNamespace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _with_comment(caps, None)
    rc, doc, _ = _scan(caps.buggy, capsys)
    (tmp_path / "report.json").write_text(json.dumps(doc))
    assert _scan(caps.buggy, capsys, "--baseline", str(tmp_path / "report.json"))[1]["findings"] == []
    (tmp_path / "bad.json").write_text('{"findings": 3}')
    assert main(["scan", str(caps.buggy), "--baseline", str(tmp_path / "bad.json")]) == 2
    assert f"{tmp_path / 'bad.json'}:1:1: error: not an irscan report" in capsys.readouterr().err
