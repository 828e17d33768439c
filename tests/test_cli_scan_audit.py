"""irscan scan / irscan audit / irscan.audit(), as a user runs them: exit codes, output, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "corpus" / "captures"
FIXTURES = Path(__file__).parent / "fixtures"
FINDING_FIELDS = {
    "id", "kernel", "ir", "check", "severity", "file", "line", "col", "source", "source_precision", "message",
    "expression", "sink", "sinks", "chain", "wraps_when", "witness", "undefined_behaviour", "fix", "ir_file",
    "ir_line", "twin", "notes", "origin",
}  # fmt: skip


def irscan(*args: str, cwd: Path | None = None, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "irscan", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)  # fmt: skip


def test_scan_reports_a_must_bug_like_a_compiler_and_exits_1() -> None:
    p = irscan("scan", str(CAPTURES / "elementwise_static_100k"))
    assert p.returncode == 1, p.stderr
    assert "elementwise_static_100k.py:31:" in p.stdout and "error[must]: narrow-widened-late" in p.stdout
    assert "dst[row, col] = src[row, col]" in p.stdout  # the Python statement
    assert "ctaid.x >= 21474" in p.stdout and "witness:" in p.stdout and "fix:" in p.stdout
    assert "Traceback" not in p.stderr


def test_fail_on_levels() -> None:
    may_only = str(CAPTURES / "varlen_offset_fa4_2611")
    assert irscan("scan", may_only).returncode == 0  # default --fail-on must
    assert irscan("scan", "--fail-on", "may", may_only).returncode == 1
    assert irscan("scan", "--fail-on", "never", str(CAPTURES / "elementwise_static_100k")).returncode == 0


def test_clean_program_scans_clean() -> None:
    p = irscan("scan", str(CAPTURES / "elementwise_static_100k_int64"))
    assert p.returncode == 0 and "0 finding(s)" in p.stdout


def test_json_document_carries_the_documented_fields_and_twins() -> None:
    p = irscan("scan", "--format", "json", str(CAPTURES / "elementwise_static_100k"))
    doc = json.loads(p.stdout)
    assert doc["schema_version"] == 1 and doc["summary"]["must"] == 2
    by_ir = {f["ir"]: f for f in doc["findings"]}
    for f in doc["findings"]:
        assert FINDING_FIELDS <= set(f), FINDING_FIELDS - set(f)
        assert f["wraps_when"]["input"] == "ctaid.x"
    # the same access in both IRs: linked, and the difference is spelled out (2^31 UB vs 2^32 wrap)
    assert by_ir["mlir"]["twin"] == by_ir["ptx"]["id"] and by_ir["ptx"]["twin"] == by_ir["mlir"]["id"]
    assert by_ir["mlir"]["wraps_when"]["threshold"] == 21474 and by_ir["ptx"]["wraps_when"]["threshold"] == 42949
    assert any("2^32" in n for n in by_ir["mlir"]["notes"])


def test_scan_one_ir_only_and_single_files() -> None:
    folder = next((CAPTURES / "elementwise_static_100k").iterdir())
    p = irscan("scan", "--format", "json", "--ir", "ptx", str(folder / "module.ptx"))
    doc = json.loads(p.stdout)
    assert {f["ir"] for f in doc["findings"]} == {"ptx"} and all(not f["notes"] for f in doc["findings"])


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("cut.mlir", "module {\n  llvm.func @k(%arg0: i32) {\n    %0 = llvm.add %arg0, %arg0 : i32\n", ":3:"),
        ("bad.mlir", "module {\n  llvm.func @k() {\n    %0 = llvm.mlir.constant(1 : i32) : i32 loc(\n  }\n}\n", ":3:"),
        (
            "bad.ptx",
            ".version 8.8\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n  add.s32 %r1, ;\n",
            ":6:",
        ),
    ],
)
def test_malformed_input_is_a_located_error_with_exit_2(tmp_path: Path, name: str, text: str, where: str) -> None:
    f = tmp_path / name
    f.write_text(text)
    p = irscan("scan", str(f))
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert f"{f}{where}" in p.stderr and "error:" in p.stderr
    assert "Traceback" not in p.stderr


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    p = irscan("scan", str(tmp_path / "nope"))
    assert p.returncode == 2 and "no such file" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.slow
def test_audit_of_an_unseen_program_json_stdout_is_only_json(tmp_path: Path) -> None:
    p = irscan("audit", "--format", "json", "--", "python", str(FIXTURES / "unseen_kernel.py"), cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)  # nothing else on stdout
    assert "hello from the audited program" in p.stderr
    (f,) = [f for f in doc["findings"] if f["ir"] == "mlir"]
    assert f["severity"] == "must" and f["line"] == 19 and f["wraps_when"]["text"] == "ctaid.x >= 128"
    assert doc["environment"]["dsl_version"]


@pytest.mark.slow
def test_audit_keeps_captures_with_out_and_text_report(tmp_path: Path) -> None:
    out = tmp_path / "caps"
    p = irscan("audit", "--out", str(out), "--fail-on", "never", "--", "python", str(FIXTURES / "unseen_kernel.py"))
    assert p.returncode == 0, p.stderr
    assert "error[must]" in p.stdout and (next(out.iterdir()) / "module.mlir").exists()


@pytest.mark.slow
def test_audit_context_manager_in_code(tmp_path: Path) -> None:
    script = tmp_path / "use_api.py"
    script.write_text(
        "import runpy, sys\n"
        "import irscan\n"
        "with irscan.audit(report=False) as a:\n"
        f"    runpy.run_path({str(FIXTURES / 'unseen_kernel.py')!r})\n"
        "print(sorted({(f.ir, f.severity, f.wraps_when['threshold']) for f in a.findings}))\n"
        "try:\n"
        "    with irscan.audit(fail_on='must', report=False):\n"
        f"        runpy.run_path({str(FIXTURES / 'unseen_kernel.py')!r})\n"
        "except irscan.pipeline.AuditError as e:\n"
        "    print('raised', len(e.findings))\n"
    )
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "[('mlir', 'must', 128), ('ptx', 'must', 128)]" in p.stdout and "raised 2" in p.stdout


def test_audit_scan_fails_open_per_capture(tmp_path: Path) -> None:
    """A capture irscan cannot read is reported; the others are still scanned (strict makes it fatal)."""
    import shutil

    from irscan.pipeline import scan_safely

    good = next((CAPTURES / "elementwise_static_100k").iterdir())
    shutil.copytree(good, tmp_path / "000_good")
    bad = tmp_path / "001_bad"
    shutil.copytree(good, bad)
    (bad / "module.mlir").write_text("module {\n  llvm.func @k() {\n")
    (bad / "module.ptx").unlink()
    res = scan_safely(tmp_path, strict=False)
    assert {f.ir for f in res.findings} == {"mlir", "ptx"}
    assert len(res.errors) == 1 and "001_bad" in res.errors[0] and "IRSyntaxError" in res.errors[0]
    with pytest.raises(Exception, match="001_bad|expected"):
        scan_safely(tmp_path, strict=True)
