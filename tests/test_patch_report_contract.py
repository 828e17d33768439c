"""The error contract for ``irscan patch``, ``irscan report`` and the JSON readers (README "Exit codes"):
a path or argument irscan cannot use is ``irscan: error: ...``, a file that is not what it should be is
``path:line:col: error: ...`` (both exit 2), never an internal error; and a folder of loose IR files is
grouped by folder in one pass (was folders x files)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path, PosixPath
from typing import Any

import pytest

from irscan import pipeline
from irscan.bugreport.collect import _read_meta
from irscan.cli import main
from irscan.ir import IRSyntaxError
from irscan.patching.cli import audit_fields

CAP = Path(__file__).resolve().parent.parent / "corpus" / "captures" / "elementwise_static_100k"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(argv)
    return rc, capsys.readouterr().err


def _located(err: str, path: Path) -> re.Match[str] | None:
    return re.search(rf"^{re.escape(str(path))}:(\d+):(\d+): error: \S", err, re.M)


# -- irscan patch --


@pytest.mark.parametrize("argv", [["", "-o", "out"], ["cap", "-o", ""]], ids=["input", "out"])
def test_patch_refuses_an_empty_path(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "" is Path("."), the current folder, which nobody named (scan and diff refuse it too)."""
    monkeypatch.chdir(tmp_path)
    rc, err = _run(["patch", *argv], capsys)
    assert rc == 2 and re.search(r"^irscan: error: .* is empty$", err, re.M), err


@pytest.mark.parametrize("out", ["afile", "afile/sub", "/dev/null", "/proc/irscan-x", "loop"])
def test_patch_refuses_an_out_it_cannot_make(out: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder of captures, each patched to its folder under OUT: OUT a file, under a file, /dev/null,
    /proc or a symlink loop is bad usage (was NotADirectoryError, FileNotFoundError, RuntimeError)."""
    (tmp_path / "afile").write_text("x\n")
    (tmp_path / "loop").symlink_to("loop")
    shutil.copytree(next(CAP.iterdir()), tmp_path / "caps" / "one")
    target = out if out.startswith("/") else str(tmp_path / out)
    rc, err = _run(["patch", str(tmp_path / "caps"), "-o", target], capsys)
    assert rc == 2 and re.search(rf"^irscan: error: -o {re.escape(target)}\S*:? ", err, re.M), err


def test_patch_locates_what_the_dsl_parser_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """irscan's front end reads an unknown op (it is opaque to it); the DSL's parser does not: its error,
    at its line and column, is bad input (was the DSL's MLIRError, exit 3)."""
    pytest.importorskip("cutlass")
    src = tmp_path / "m.mlir"
    src.write_text("module {\n  llvm.func @f() {\n    %0 = llvm.foo.bar %1 : i32\n    llvm.return\n  }\n}\n")
    rc, err = _run(["patch", str(src), "-o", str(tmp_path / "out")], capsys)
    at = _located(err, src)
    assert rc == 2 and at is not None and (at[1], at[2]) == ("3", "10"), err
    assert "llvm.foo.bar" in err


def test_patch_locates_a_module_the_dsl_cannot_lower(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Inline asm ptxas refuses: the DSL's tail fails on the input's own module (nothing to patch), an
    error at the function the DSL names (was MLIRError from the pass manager, exit 3)."""
    pytest.importorskip("cutlass")
    src = tmp_path / "asm.mlir"
    src.write_text(
        "module attributes {gpu.container_module} {\n"
        '  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {\n'
        "    llvm.func @k() attributes {nvvm.kernel} {\n"
        '      llvm.inline_asm has_side_effects "garbage.op;", "" : () -> ()\n'
        "      llvm.return\n    }\n  }\n}\n"
    )
    rc, err = _run(["patch", str(src), "-o", str(tmp_path / "out")], capsys)
    at = _located(err, src)
    assert rc == 2 and at is not None and at[1] == "3", err
    assert "lowering refuses it" in err


def test_audit_patch_fields_refuse_a_patch_json_that_is_not_one(tmp_path: Path) -> None:
    """``audit --patch --out DIR`` reads every capture's patch.json under DIR; an old or hand-edited one
    is bad input at that file (was a TypeError)."""
    shutil.copytree(next(CAP.iterdir()), tmp_path / "cap")
    (tmp_path / "cap" / "patch.json").write_text("[]\n")
    with pytest.raises(IRSyntaxError, match="not a patch report"):
        audit_fields(tmp_path)


# -- irscan report --


@pytest.mark.parametrize("out", ["afile", "afile/sub", "/dev/null", "/proc/irscan-x", "loop"])
def test_report_refuses_an_out_it_cannot_make(out: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """-o a file, under a file, /dev/null, /proc or a symlink loop: bad usage (was FileExistsError and
    friends at write_report, exit 3)."""
    (tmp_path / "afile").write_text("x\n")
    (tmp_path / "loop").symlink_to("loop")
    target = out if out.startswith("/") else str(tmp_path / out)
    rc, err = _run(["report", "--all", str(CAP), "-o", target, "--no-script"], capsys)
    assert rc == 2 and f"irscan: error: -o {target}: " in err, err


def test_report_refuses_an_empty_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    rc, err = _run(["report", "--all", "", "-o", str(tmp_path / "out")], capsys)
    assert rc == 2 and "irscan: error: the source is empty" in err, err


def test_report_locates_deeply_nested_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """50,000 ``[``: json's scanner raises RecursionError, which is bad input (was exit 3)."""
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 50_000)
    rc, err = _run(["report", str(deep)], capsys)
    assert rc == 2 and err.startswith(f"{deep}:1:1: error: not a JSON report: nested too deeply"), err


def test_a_deep_meta_json_beside_a_saved_reports_module_reads_as_nothing(tmp_path: Path) -> None:
    """report reads the meta.json of a saved report's capture as irscan's scan does; one that is not a
    meta.json records nothing (was RecursionError out of json.loads)."""
    (tmp_path / "meta.json").write_text("[" * 50_000)
    assert _read_meta(tmp_path) is None


# -- every reader of a user's JSON: huge documents --


def _memory_error_on_huge(monkeypatch: pytest.MonkeyPatch) -> None:
    """json.loads runs out of memory on documents that start with the marker (as a 200 MB list of {}
    does on a small machine: read_text caps the bytes, not the objects they decode to)."""
    real = json.loads

    def loads(text: str | bytes, **kw: Any) -> Any:
        if isinstance(text, str) and text.startswith('{"huge"'):
            raise MemoryError
        return real(text, **kw)

    monkeypatch.setattr(json, "loads", loads)


@pytest.mark.parametrize("command", ["report", "diff", "baseline", "meta"])
def test_a_json_too_large_for_memory_is_located(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    huge = tmp_path / "h.json"
    huge.write_text('{"huge": []}\n')
    cap = tmp_path / "cap"
    shutil.copytree(next(CAP.iterdir()), cap)
    argv = {"report": ["report", str(huge)], "diff": ["diff", str(huge), str(cap)],
            "baseline": ["scan", "--baseline", str(huge), str(cap)], "meta": ["scan", str(cap)]}[command]  # fmt: skip
    if command == "meta":
        shutil.copy(huge, cap / "meta.json")
        huge = cap / "meta.json"
    _memory_error_on_huge(monkeypatch)
    rc, err = _run(argv, capsys)
    assert rc == 2 and err.startswith(f"{huge}:1:1: error: ") and "too large" in err, err


# -- loose IR files --


class _CountingPath(PosixPath):
    """A path that counts how often a file's folder is asked for: rglob yields this class too."""

    parents_asked = 0

    @property
    def parent(self) -> Path:  # type: ignore[override]
        _CountingPath.parents_asked += 1
        return super().parent


def test_loose_files_are_grouped_by_folder_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """40 capture-less folders of one PTX each: each file's folder is computed once, not once per
    folder (picking each folder's files out of all of them was folders x files: 2,048 folders, 10 s)."""
    for i in range(40):
        (tmp_path / f"d{i:02d}").mkdir()
        (tmp_path / f"d{i:02d}" / "k.ptx").write_text(".version 8.8\n")
    groups: list[list[str]] = []
    monkeypatch.setattr(
        pipeline,
        "scan_together",
        lambda files, meta, irs: groups.append([f.name for f in files]) or pipeline.ScanResult(),
    )
    _CountingPath.parents_asked = 0
    pipeline.scan_loose_files(_CountingPath(tmp_path), ("mlir", "ptx"))
    assert groups == [["k.ptx"]] * 40
    assert _CountingPath.parents_asked <= 2 * 40, _CountingPath.parents_asked
