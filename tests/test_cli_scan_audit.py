"""irscan scan / irscan audit / irscan.audit(), as a user runs them: exit codes, output, bad input."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
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
    assert p.returncode == 2 and p.stderr.startswith(f"{tmp_path / 'nope'}:1:1: error: no such file or folder")
    assert "Traceback" not in p.stderr


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


# ---------------------------------------------------------------------------------- the error contract of scan

MLIR_EXPECTED = "expected one of: !alias = ..., #alias = ..., gpu.module @name"


@pytest.mark.parametrize(
    ("name", "data", "where", "what"),
    [
        ("prose.mlir", b"hello world\nthis is not IR\n", ":1:1:", "not MLIR text: unexpected 'hello'"),
        ("indented.mlir", b"\n\n   // a comment\n  hello\n", ":4:3:", "not MLIR text"),
        ("empty.mlir", b"", ":1:1:", "empty file"),
        ("blank.ptx", b"  \n// only a comment\n", ":1:1:", "empty file"),
        ("notes.txt", b"some notes\n", ":1:1:", "not MLIR or PTX text"),
        ("bytes.mlir", b"module {\n  \xc3\xa9\xff }\n", ":2:4:", "invalid UTF-8 (byte 0xff)"),
        ("broken.mlir.xz", b"\xfd7zXZ\x00garbage", ":1:1:", "not a valid xz stream"),
    ],
)
def test_input_that_is_not_ir_is_a_located_error(tmp_path: Path, name: str, data: bytes, where: str, what: str) -> None:
    f = tmp_path / name
    f.write_bytes(data)
    p = irscan("scan", str(f))
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.startswith(f"{f}{where} error: {what}"), p.stderr
    assert "Traceback" not in p.stderr and p.stdout == ""


def test_a_fifo_named_like_ir_is_refused_without_opening_it(tmp_path: Path) -> None:
    fifo = tmp_path / "x.mlir"
    os.mkfifo(fifo)
    p = irscan("scan", str(fifo), timeout=60)  # opening it would block until a writer came
    assert p.returncode == 2 and p.stderr.startswith(f"{fifo}:1:1: error: a FIFO, not a regular file"), p.stderr


def test_a_folder_of_ir_files_without_meta_json_is_scanned(tmp_path: Path) -> None:
    for f in next((CAPTURES / "elementwise_static_100k").iterdir()).glob("module.*"):
        (tmp_path / "copied").mkdir(exist_ok=True)
        (tmp_path / "copied" / f.name).write_bytes(f.read_bytes())
    p = irscan("scan", "--format", "json", str(tmp_path))
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    assert {k["ir"] for k in doc["kernels"]} == {"mlir", "ptx"} and doc["summary"]["must"] >= 1
    mlir = next(f for f in doc["findings"] if f["ir"] == "mlir")
    assert mlir["twin"]  # the two files of one folder are still paired


def test_a_folder_with_no_ir_says_so(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing here\n")
    p = irscan("scan", str(tmp_path))
    assert p.returncode == 2 and p.stderr.startswith(f"{tmp_path}:1:1: error: no capture folder (meta.json) and no IR")


def _grid(value: str) -> str:
    return f'{{"schema": 1, "kernels": [{{"name": "k", "launch": {{"exact_grid_dim": [{value}, 1, 1]}}}}]}}'


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("[1, 2]", "meta.json: expected an object, got a list"),
        ('"a string"', "meta.json: expected an object, got a string"),
        ("null", "meta.json: expected an object, got null"),
        ('{"schema": 1}', "kernels: expected a list of kernels (the field is missing)"),
        ('{"schema": 2, "kernels": []}', "schema: expected 1, got 2"),
        ('{"schema": 1, "kernels": [{"line": 3}]}', "kernels[0].name: expected a kernel name, got null"),
        (_grid("null"), "kernels[0].launch.exact_grid_dim[0]: expected an integer from 1 to 2147483647, got null"),
        (_grid("Infinity"), "exact_grid_dim[0]: expected an integer from 1 to 2147483647, got a number too large"),
        (_grid("-1"), "exact_grid_dim[0]: expected an integer from 1 to 2147483647, got -1"),
        (_grid("0"), "exact_grid_dim[0]: expected an integer from 1 to 2147483647, got 0"),
        (_grid("1" + "0" * 40), "exact_grid_dim[0]: expected an integer from 1 to 2147483647, got a number too large"),
        (_grid("1" + "0" * 5000), "got a number too large"),  # past Python's int-from-text limit
        (_grid("2.5"), "exact_grid_dim[0]: expected an integer from 1 to 2147483647, got 2.5"),
        (_grid("2147483648"), "exact_grid_dim[0]: expected an integer from 1 to 2147483647, got 2147483648"),
        (
            '{"schema": 1, "kernels": [{"name": "k", "args": [{"modes": "x"}]}]}',
            "kernels[0].args[0].modes: expected a list, got a string",
        ),
        (
            '{"schema": 1, "kernels": [{"name": "k", "args": [{"modes": [{"shape": {"kind": "dynamic"}}]}]}]}',
            "kernels[0].args[0].modes[0].shape.width: expected 32 or 64, got null",
        ),
        ("[" * 100_000, "JSON nested too deeply"),
    ],
)
def test_a_bad_meta_json_names_the_field(tmp_path: Path, text: str, what: str) -> None:
    """meta.json decides verdicts (a grid dim bounds ctaid): a wrong one is an error, never a verdict."""
    good = next((CAPTURES / "elementwise_static_100k").iterdir())
    shutil.copytree(good, tmp_path / "cap")
    (tmp_path / "cap" / "meta.json").write_text(text)
    p = irscan("scan", str(tmp_path / "cap"))
    assert p.returncode == 2, (p.stdout[-500:], p.stderr)
    assert p.stderr.startswith(f"{tmp_path / 'cap' / 'meta.json'}:1:1: error: "), p.stderr
    assert what in p.stderr and "Traceback" not in p.stderr


def test_meta_json_that_is_not_json_is_located(tmp_path: Path) -> None:
    good = next((CAPTURES / "elementwise_static_100k").iterdir())
    shutil.copytree(good, tmp_path / "cap")
    (tmp_path / "cap" / "meta.json").write_text('{\n  "schema": 1,\n  oops\n}\n')
    p = irscan("scan", str(tmp_path / "cap"))
    assert p.returncode == 2 and "meta.json:3:3: error: not valid JSON" in p.stderr, p.stderr


def _boom(*args: object, **kwargs: object) -> None:
    raise RuntimeError("a bug of irscan's\nsecond line")


def test_an_internal_error_is_exit_3_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bug is not a usage error: its own exit code, one line, where to report it."""
    import irscan.pipeline
    from irscan import cli

    monkeypatch.setattr(irscan.pipeline, "scan_paths", _boom)
    monkeypatch.delenv("IRSCAN_DEBUG", raising=False)
    assert cli.main(["scan", str(CAPTURES / "elementwise_static_100k")]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("irscan: internal error: RuntimeError: a bug of irscan's (")
    assert "please report it" in err and "IRSCAN_DEBUG=1" in err
    monkeypatch.setenv("IRSCAN_DEBUG", "1")
    with pytest.raises(RuntimeError, match="a bug of irscan's"):
        cli.main(["scan", str(CAPTURES / "elementwise_static_100k")])


def test_a_usage_error_inside_is_still_exit_2() -> None:
    p = irscan("scan", "--ir", "sass", str(CAPTURES / "elementwise_static_100k"))
    assert p.returncode == 2 and p.stderr.startswith("irscan: error: --ir takes mlir, ptx or mlir,ptx")


# ---------------------------------------------------------------------------------- audit tells the truth

AUDIT_PROGRAM = FIXTURES / "audit_program.py"


def audit_json(mode: str, *options: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], dict]:
    p = irscan("audit", "--format", "json", *options, "--", "python", str(AUDIT_PROGRAM), mode, cwd=cwd)
    assert 'Traceback (most recent call last):\n  File "' + str(ROOT / "irscan") not in p.stderr
    return p, json.loads(p.stdout)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "status", "exit_code", "says"),
    [
        ("fail-before", 1, 4, "the audited program exited with status 1"),
        ("kernel-error", 1, 4, "the audited program exited with status 1"),
        ("compile-then-3", 3, 4, "the audited program exited with status 3; what it compiled before that was scanned"),
        ("nothing", 0, 5, "no kernel was captured"),
    ],
)
def test_audit_of_a_failing_program_says_so(tmp_path: Path, mode: str, status: int, exit_code: int, says: str) -> None:
    p, doc = audit_json(mode, cwd=tmp_path)
    assert p.returncode == exit_code, p.stderr
    assert doc["program"]["exit_status"] == status and doc["program"]["argv"][-1] == mode
    assert any(says in e for e in doc["errors"]), doc["errors"]
    if mode == "compile-then-3":
        assert doc["summary"]["kernels_scanned"] == 2  # what it compiled is still scanned
    text = irscan("audit", "--", "python", str(AUDIT_PROGRAM), mode, cwd=tmp_path)
    assert text.returncode == exit_code and says in text.stderr


@pytest.mark.slow
def test_audit_of_a_module_that_cannot_be_scanned(tmp_path: Path) -> None:
    """An error in the JSON errors list and exit 5; --keep-going lets the findings decide."""
    p, doc = audit_json("corrupt", cwd=tmp_path)
    assert p.returncode == 5, p.stderr
    assert doc["program"]["exit_status"] == 0
    (err,) = doc["errors"]
    assert err.startswith("irscan could not scan ") and "not MLIR text" in err
    p, doc = audit_json("corrupt", "--keep-going", cwd=tmp_path)
    assert p.returncode == 0 and len(doc["errors"]) == 1
    p = irscan("audit", "--strict", "--", "python", str(AUDIT_PROGRAM), "corrupt", cwd=tmp_path)
    assert p.returncode == 2 and "module.mlir:1:1: error: not MLIR text" in p.stderr
    assert "Traceback" not in p.stderr


def test_audit_strict_internal_failure_is_exit_3_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--strict makes irscan's own failure fatal, as an internal error, never as a traceback."""
    import irscan.capturing.runner
    import irscan.pipeline
    from irscan import cli

    def run_program(argv: list[str], out: str, *args: object, **kwargs: object) -> int:
        shutil.copytree(next((CAPTURES / "elementwise_static_100k").iterdir()), Path(out) / "000_k", dirs_exist_ok=True)
        return 0

    monkeypatch.setattr(irscan.capturing.runner, "run_program", run_program)
    monkeypatch.setattr(irscan.pipeline, "scan_capture", _boom)
    monkeypatch.delenv("IRSCAN_DEBUG", raising=False)
    out = str(tmp_path / "caps")
    assert cli.main(["audit", "--strict", "--out", out, "--", "python", "x.py"]) == 3
    assert capsys.readouterr().err.startswith("irscan: internal error: RuntimeError: a bug of irscan's")
    assert cli.main(["audit", "--format", "json", "--out", out, "--", "python", "x.py"]) == 5
    doc = json.loads(capsys.readouterr().out)
    assert doc["errors"] == [f"irscan could not scan {out}/000_k: RuntimeError: a bug of irscan's\nsecond line"]


@pytest.mark.slow
@pytest.mark.parametrize("out_exists", [False, True], ids=["new-out", "existing-out"])
def test_ctrl_c_during_the_compile_ends_cleanly(tmp_path: Path, out_exists: bool) -> None:
    """SIGINT to irscan alone: the program is stopped, no traceback, exit 130, no empty capture folder."""
    out, ready = tmp_path / "caps", tmp_path / "ready"
    if out_exists:
        out.mkdir()
    argv = [sys.executable, "-m", "irscan", "audit", "--out", str(out), "--", "python", str(AUDIT_PROGRAM)]
    proc = subprocess.Popen([*argv, "hang-in-compile", str(ready)], stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(1200):
            if ready.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert ready.exists(), "the program never reached its compile"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip().endswith("irscan: interrupted")
    assert out.is_dir() == out_exists and (not out_exists or list(out.iterdir()) == [])
