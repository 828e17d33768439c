"""Every file the DSL writes is recorded and scanned (issue 8): a dump named after another arch than the
one asked for (an sm_110a target writes ``module.sm_101a.ptx``) is still the capture's PTX, and a file
meta.json names but the folder lacks is an error, never a silently skipped IR."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from irscan.capturing import store
from irscan.capturing.meta import KernelInfo
from irscan.ir import IRSyntaxError
from irscan.pipeline import scan_paths, scan_safely

ROOT = Path(__file__).resolve().parents[1]
SOURCE = sorted(ROOT.glob("corpus/captures/elementwise_static_100k/*/meta.json"))
pytestmark = pytest.mark.skipif(not SOURCE, reason="corpus/captures not checked out")


def _dump(folder: Path, names: list[str]) -> dict[str, str]:
    """Lay out what the DSL's tail leaves in a fresh capture folder: its PTX dumps under ``names``."""
    src = SOURCE[0].parent
    for n in names:
        shutil.copy(src / "module.ptx", folder / n)
    return {"dump-ptx-path": str(folder / "module"), "dump-cubin-path": str(folder / "module")}


def _write(folder: Path, names: list[str], arch: str) -> store.Capture:
    text = (SOURCE[0].parent / "module.mlir").read_text()
    kernels = [KernelInfo(k["name"]) for k in json.loads(SOURCE[0].read_text())["kernels"]]
    return store.write(folder, text, kernels, arch, _dump(folder, names), [], {})


def test_dump_under_another_arch_becomes_the_captures_ptx(tmp_path: Path) -> None:
    cap = _write(tmp_path, ["module.sm_101a.ptx"], "sm_110a")
    assert cap.meta["files"] == {"mlir": "module.mlir", "ptx": "module.ptx"}  # no cubin was dumped
    assert (tmp_path / "module.ptx").is_file() and not (tmp_path / "module.sm_101a.ptx").exists()
    res = scan_paths([tmp_path])
    assert sorted({k["ir"] for k in res.kernels}) == ["mlir", "ptx"]


def test_several_arch_dumps_are_all_recorded_and_scanned(tmp_path: Path) -> None:
    cap = _write(tmp_path, ["module.sm_100a.ptx", "module.sm_103a.ptx"], "sm_110a")
    assert cap.meta["files"] == {"mlir": "module.mlir", "ptx": "module.ptx", "ptx.sm_103a": "module.sm_103a.ptx"}
    res = scan_paths([tmp_path])
    assert sum(k["ir"] == "ptx" for k in res.kernels) == 2 * sum(k["ir"] == "mlir" for k in res.kernels)


def test_the_asked_for_arch_wins(tmp_path: Path) -> None:
    cap = _write(tmp_path, ["module.sm_90a.ptx", "module.sm_80.ptx"], "sm_90a")
    assert cap.meta["files"]["ptx"] == "module.ptx" and "ptx.sm_80" not in cap.meta["files"]


def _capture_missing_its_ptx(tmp_path: Path) -> Path:
    """The folder issue 8 met: meta.json names module.ptx, the DSL wrote module.sm_101a.ptx."""
    d = tmp_path / "000_k"
    shutil.copytree(SOURCE[0].parent, d)
    (d / "module.ptx").rename(d / "module.sm_101a.ptx")
    return d


def test_a_named_file_missing_is_an_error(tmp_path: Path) -> None:
    d = _capture_missing_its_ptx(tmp_path)
    with pytest.raises(IRSyntaxError, match=r"files\.ptx names module\.ptx.*module\.sm_101a\.ptx"):
        scan_paths([d])
    p = subprocess.run([sys.executable, "-m", "irscan", "scan", str(d)], capture_output=True, text=True)
    assert p.returncode == 2 and "meta.json:1:1: error: files.ptx names module.ptx" in p.stderr
    # the audit's scan: an errors entry, the other captures still scanned
    res = scan_safely(tmp_path, strict=False)
    assert len(res.errors) == 1 and "module.ptx" in res.errors[0]


def test_an_unnamed_ir_file_is_scanned_too(tmp_path: Path) -> None:
    d = tmp_path / "000_k"
    shutil.copytree(SOURCE[0].parent, d)
    shutil.copy(d / "module.ptx", d / "module.sm_100a.ptx")
    res = scan_paths([d])
    assert sum(k["ir"] == "ptx" for k in res.kernels) == 2 * sum(k["ir"] == "mlir" for k in res.kernels)
