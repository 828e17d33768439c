"""irscan diff on real captures: the same program twice, or with an unrelated statement added, or its
IR renumbered, diffs empty; the #3208 shape (a correct i64 row offset narrowed to Int32) against its
fixed form reports the narrowing (new finding and narrowed accesses), and the other way round as fixed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import clean_env
from test_finding_ids import _copy

from irscan.cli import main
from irscan.diff.match import changes, diff

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "corpus" / "programs" / "flat_offset_trunc_3208.py"
BUGGY = "    off = cutlass.Int32(cutlass.Int64(row) * mX.stride[0])  # correct in i64, then narrowed\n"
FIXED = "    off = cutlass.Int64(row) * mX.stride[0]  # kept in i64\n"
UNRELATED = "    unused = tidx + 1  # an unrelated statement\n"

#: variant name -> the program's text: each is captured as <variant>/kernel.py (the same file name, so
#: statements match by file and line or text, as two builds of one repository do)
VARIANTS = {
    "buggy": lambda s: s,
    "again": lambda s: s,
    "added": lambda s: s.replace(
        "    row, _, _ = cute.arch.block_idx()\n", "    row, _, _ = cute.arch.block_idx()\n" + UNRELATED
    ),
    "fixed": lambda s: s.replace(BUGGY, FIXED),
}


def capture_variants(root: Path, texts: dict[str, str]) -> SimpleNamespace:
    """Each program text captured (in parallel) as ``root/<name>/kernel.py`` into ``root/<name>/cap``."""
    procs = {}
    for name, text in texts.items():
        (root / name).mkdir()
        (root / name / "kernel.py").write_text(text)
        cmd = [
            sys.executable,
            "-m",
            "irscan",
            "capture",
            "--arch",
            "sm_90a",
            "--out",
            "cap",
            "--",
            "python",
            "kernel.py",
        ]
        procs[name] = subprocess.Popen(
            cmd, cwd=root / name, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    for name, p in procs.items():
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, (name, err.decode())
    return SimpleNamespace(root=root, **{n: root / n / "cap" for n in texts})


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """Each variant captured and its capture folder; the variants' texts differ as named."""
    text = PROGRAM.read_text()
    assert BUGGY in text
    b = capture_variants(tmp_path_factory.mktemp("diff"), {n: make(text) for n, make in VARIANTS.items()})
    assert (b.root / "added" / "kernel.py").read_text() != text
    return b


def _diff(base: Path, new: Path, *opts: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    rc = main(["diff", str(base), str(new), "--format", "json", *opts])
    return rc, json.loads(capsys.readouterr().out)


def _empty(doc: dict[str, Any]) -> bool:
    return not any(doc[k] for k in ("new", "fixed", "changed", "narrowed", "widened"))


def test_the_same_program_captured_twice_diffs_empty(
    builds: SimpleNamespace, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, doc = _diff(builds.buggy, builds.again, capsys=capsys)
    assert rc == 0 and _empty(doc), doc
    assert doc["summary"]["unchanged"] == 2  # the MLIR and the PTX finding, matched


def test_an_unrelated_statement_added_diffs_empty(builds: SimpleNamespace, capsys: pytest.CaptureFixture[str]) -> None:
    """Every statement below the new one moved down a line: matched by its text."""
    rc, doc = _diff(builds.buggy, builds.added, capsys=capsys)
    assert rc == 0 and _empty(doc), doc
    assert doc["summary"]["unchanged"] == 2
    after = load_report_of(builds.added, capsys)
    assert {f["line"] for f in after["findings"]} == {31}  # was 30: the lines did move


def load_report_of(folder: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    main(["scan", str(folder), "--format", "json", "--fail-on", "never"])
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def test_renumbered_and_padded_ir_diffs_empty(
    builds: SimpleNamespace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SSA values and registers renamed, unrelated ops and comment lines inserted (test_finding_ids's mutation)."""
    folder = next(p for p in builds.buggy.iterdir() if p.is_dir())
    mutated = _copy(folder, tmp_path / "mutated" / folder.name, mutate=True)
    assert (mutated / "module.mlir").read_text() != (folder / "module.mlir").read_text()
    rc, doc = _diff(builds.buggy, mutated.parent, capsys=capsys)
    assert rc == 0 and _empty(doc), doc


def test_the_narrowing_is_reported_new_and_narrowed(
    builds: SimpleNamespace, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, doc = _diff(builds.fixed, builds.buggy, capsys=capsys)
    assert rc == 1
    assert {(e["ir"], e["check"], e["statement"]["line"]) for e in doc["new"]} == {
        ("mlir", "trunc-then-extend", 30),
        ("ptx", "trunc-then-extend", 30),
    }
    assert all(e["base"] is None and e["new"]["threshold"] == "arg0.stride[0] >= 32769" for e in doc["new"])
    # the load of x narrowed in both IRs; the store to y (its own i64 stride, untouched) did not
    narrowed = {(e["ir"], e["kind"], e["statement"]["line"]) for e in doc["narrowed"]}
    assert narrowed == {("mlir", "load", 34), ("ptx", "load", 34)}, doc["narrowed"]
    for e in doc["narrowed"]:
        assert e["kernel_key"] == "row_copy"
        assert (e["base"]["index_width"], e["new"]["index_width"]) == (64, 32)
        assert e["base"]["threshold"] is None and e["new"]["threshold"] == "wraps from 2^31"
        assert e["new"]["narrow"][0]["truncates"] is (e["ir"] == "mlir")  # PTX multiplies the low halves
        assert "arg0.stride[0]" in e["new"]["expression"] and "ctaid.x" in e["base"]["expression"]
    assert not doc["fixed"] and not doc["changed"]


def test_the_other_way_round_it_is_fixed_and_widened(
    builds: SimpleNamespace, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, doc = _diff(builds.buggy, builds.fixed, capsys=capsys)
    assert rc == 0
    assert len(doc["fixed"]) == 2 and not doc["new"] and not doc["narrowed"]
    assert {e["ir"] for e in doc["widened"]} == {"mlir", "ptx"}


def test_fail_on_levels_and_text_and_markdown(builds: SimpleNamespace, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(builds.fixed), str(builds.buggy), "--fail-on", "never"]) == 0
    text = capsys.readouterr().out
    assert "narrowed: the index of the load `y_vecs[None, c * THREADS + tidx].store(" in text
    assert "was computed in i64 in BASE and is i32 in NEW" in text and "wraps from 2^31" in text
    assert main(["diff", str(builds.fixed), str(builds.buggy), "--format", "markdown", "--fail-on", "worse"]) == 1
    md = capsys.readouterr().out
    assert "### New findings" in md and "### Narrowed address arithmetic" in md


def test_saved_reports_diff_like_capture_folders(
    builds: SimpleNamespace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = {}
    for name in ("fixed", "buggy"):
        saved[name] = tmp_path / f"{name}.json"
        saved[name].write_text(json.dumps(load_report_of(getattr(builds, name), capsys)))
    rc, from_files = _diff(saved["fixed"], saved["buggy"], capsys=capsys)
    rc2, from_folders = _diff(builds.fixed, builds.buggy, capsys=capsys)
    assert rc == rc2 == 1
    for k in ("new", "fixed", "changed", "narrowed"):
        assert from_files[k] == from_folders[k]


def test_a_report_without_accesses_says_narrowing_was_not_compared(
    builds: SimpleNamespace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = load_report_of(builds.buggy, capsys)
    del old["accesses"]
    (tmp_path / "old.json").write_text(json.dumps(old))
    rc, doc = _diff(tmp_path / "old.json", builds.buggy, capsys=capsys)
    assert rc == 0 and any("no 'accesses'" in n for n in doc["notes"])


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{\n  "findings": [,]\n}', ":2:16: error: not JSON"),
        ("[1, 2]", ":1:1: error: not an irscan report: no 'findings' list"),
        ('{"findings": [{"kernel": 3}]}', ":1:1: error: not an irscan report: findings[0].kernel: expected a string"),
        (
            '{"findings": [], "accesses": [{"kernel": "k", "ir": "mlir", "kind": "load", "expression": "x", '
            '"index_width": "64"}]}',
            "accesses[0].index_width: expected an integer",
        ),
        ("", ":1:1: error: not JSON"),
    ],
)
def test_bad_reports_are_located_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, where: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    assert main(["diff", str(bad), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(str(bad)) and where in err, err


def test_a_missing_side_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(tmp_path / "nothing"), str(tmp_path / "nothing")]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def _finding(**kw: Any) -> dict[str, Any]:
    base = {
        "kernel": "kernel_cutlass_copy_kernel_0",
        "ir": "mlir",
        "check": "narrow-widened-late",
        "severity": "may",
        "file": "k.py",
        "line": 12,
        "col": 5,
        "source": "gB[row, col] = x",
        "expression": "2*ctaid.x + tid.x",
        "sink": {"kind": "store"},
        "id": "x",
        "wraps_when": {"input": "ctaid.x", "threshold": 100, "limit": 2**31 - 1, "text": "ctaid.x >= 100"},
    }
    return {**base, **kw}


def test_changed_threshold_and_severity_are_worded_and_rank_worse() -> None:
    b = _finding()
    n = _finding(
        severity="must", wraps_when={"input": "ctaid.x", "threshold": 50, "limit": 2**30 - 1, "text": "ctaid.x >= 50"}
    )
    what, worse = changes(b, n)
    assert "severity may -> must" in what and "now wraps from 2^30 instead of 2^31" in what
    assert "now wraps when ctaid.x >= 50 instead of ctaid.x >= 100" in what and worse
    d = diff({"findings": [b], "accesses": []}, {"findings": [n], "accesses": []})
    assert len(d.changed) == 1 and not d.new and not d.fixed
    assert not d.reaches("new") and d.reaches("worse") and not d.reaches("never")
    # a changed expression at the same statement is the same access computed differently: changed, not new
    d = diff(
        {"findings": [b], "accesses": []}, {"findings": [_finding(expression="4*ctaid.x + tid.x")], "accesses": []}
    )
    assert len(d.changed) == 1 and "the wrapping value is now" in d.changed[0]["changes"][0]
    # the better way round is not worse
    assert changes(n, b)[1] is False


def test_matching_ignores_term_order_and_the_kernel_s_mangled_suffix() -> None:
    b = _finding(
        kernel="kernel_cutlass_copy_kernel_tensorptrf32gmemalign16o1000_0",
        expression="ctaid.x*arg0.stride[0] + arg0.ptr",
    )
    n = _finding(
        kernel="kernel_cutlass_copy_kernel_tensorptrf32gmemalign16o2000_3",
        expression="arg0.ptr + arg0.stride[0]*ctaid.x",
    )
    d = diff({"findings": [b], "accesses": []}, {"findings": [n], "accesses": []})
    assert d.unchanged == 1 and not (d.new or d.fixed or d.changed)


def test_a_baseline_takes_accepted_findings_out_of_the_diff(
    builds: SimpleNamespace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The narrowing is still reported: a baseline holds findings, and the access did narrow."""
    b = tmp_path / "baseline.json"
    assert main(["scan", str(builds.buggy), "--write-baseline", str(b)]) == 0
    capsys.readouterr()
    rc, doc = _diff(builds.fixed, builds.buggy, "--baseline", str(b), capsys=capsys)
    assert rc == 1 and doc["new"] == [] and doc["narrowed"] and doc["suppressed"]["baseline"] == 2
