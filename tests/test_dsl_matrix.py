"""The version matrix: irscan next to every supported CuTe DSL release, each in its own venv.

    python -m pytest -m matrix tests/test_dsl_matrix.py -v

Off by default (the ``matrix`` marker; pyproject's addopts deselects it): the first run installs one
venv per release from PyPI under ``~/.cache/irscan-matrix/<release>`` (about 1 GB each; later runs
reuse them, ``IRSCAN_MATRIX_CACHE`` moves the cache), with irscan itself taken from this checkout
(PYTHONPATH), so the matrix tests the working tree.

Per minor release (its newest patch): ``pip install`` of this checkout resolves without touching
the DSL, and a small corpus program (flat_offset_trunc_3208, a may finding
in both IRs on every release) is audited; the test asserts the capture worked by whichever cut the
release offers (llvm-only halves: MLIR and PTX; else PTX only), that the finding is there in what was
captured, and that the DSL version is recorded in the JSON.  On 4.3 and 4.4 the DSL's ``cute.compile``
JITs the module and fails without a CUDA driver (CudaDriverDependencyError, as it does without
irscan): the capture is written before that, and the audit reports the program's failure (exit 4).

Then NVIDIA/cutlass#3208 (corpus/programs/domain_offset_3208.py) across releases of the ``[cu13]``
flavour, where 4.5.0 carries the bug (the base wheels of 4.5.0 do not: measured, same PTX as 4.5.1):
4.5.1 -> 4.5.0 reports the truncation new and the store's index narrowed, 4.5.0 -> 4.5.1 fixed and
widened, and 4.4.2 -> 4.5.0 (4.4.2 offers only the PTX cut) the same regression in the PTX.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import clean_env

from irscan.bugreport.matrix import venv  # the same cached venvs as ``irscan bugreport --matrix``

pytestmark = pytest.mark.matrix

ROOT = Path(__file__).resolve().parent.parent
#: the newest patch of each supported minor release, and the cuts each offers (measured)
RELEASES = {"4.3.5": ("ptx",), "4.4.2": ("ptx",), "4.5.3": ("ptx",), "4.6.3": ("mlir", "ptx"),
            "4.7.1": ("mlir", "ptx"), "4.8.1": ("mlir", "ptx")}  # fmt: skip
#: releases whose cute.compile needs a CUDA driver (it JITs): the program fails after the capture
JIT_NEEDS_DRIVER = {"4.3.5", "4.4.2"}
SMALL = ROOT / "corpus" / "programs" / "flat_offset_trunc_3208.py"
DOMAIN_OFFSET = ROOT / "corpus" / "programs" / "domain_offset_3208.py"


def audit(py: Path, program: Path, out: Path) -> tuple[int, dict[str, Any], str]:
    """``irscan audit --format json --out OUT -- python PROGRAM`` in the venv, irscan from this tree."""
    env = clean_env({"PYTHONPATH": str(ROOT)}, keep_pythonpath=False)
    proc = subprocess.run(
        [py, "-m", "irscan", "audit", "--format", "json", "--fail-on", "never", "--arch", "sm_90a", "--out", out,
         "--", "python", program],
        capture_output=True, text=True, env=env, cwd=out.parent, timeout=600,
    )  # fmt: skip
    return proc.returncode, json.loads(proc.stdout), proc.stderr


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_a_small_program_is_captured_and_scanned(release: str, tmp_path: Path) -> None:
    rc, doc, err = audit(venv(release), SMALL, tmp_path / "cap")
    assert doc["environment"]["dsl_version"] == release and doc["environment"]["dsl_tested"] is True
    irs = tuple(sorted({k["ir"] for k in doc["kernels"]}))
    assert irs == RELEASES[release], (irs, err[-2000:])
    found = {(f["ir"], f["check"]) for f in doc["findings"]}
    assert found == {(ir, "trunc-then-extend") for ir in irs}, doc["findings"]
    if release in JIT_NEEDS_DRIVER:
        assert rc == 4 and any("exited with status 1" in e for e in doc["errors"]), doc["errors"]
        assert "CudaDriverDependencyError" in err
    else:
        assert rc == 0 and doc["errors"] == [], doc["errors"]
    assert "Traceback" not in err or release in JIT_NEEDS_DRIVER  # the hook never broke the compile


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_pip_install_irscan_resolves_next_to_the_release(release: str, tmp_path: Path) -> None:
    """``pip install irscan`` next to the release installs irscan alone: the DSL stays as it is."""
    report = tmp_path / "report.json"
    subprocess.run([venv(release), "-m", "pip", "install", "--dry-run", "--quiet", "--report", report, ROOT],
                   check=True, capture_output=True, timeout=600)  # fmt: skip
    installs = {i["metadata"]["name"]: i["metadata"]["version"] for i in json.loads(report.read_text())["install"]}
    assert installs == {"irscan": installs["irscan"]}, installs


@pytest.fixture(scope="module")
def domain_offset(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """corpus/programs/domain_offset_3208.py captured under each [cu13] release, as one file name."""
    out = {}
    for release in ("4.4.2", "4.5.0", "4.5.1"):
        d = tmp_path_factory.mktemp(f"do{release}")
        (d / "kernel.py").write_text(DOMAIN_OFFSET.read_text())
        rc, doc, err = audit(venv(release, "cu13"), d / "kernel.py", d / "cap")
        assert doc["kernels"], err[-2000:]
        out[release] = d / "cap"
    return out


def _diff(base: Path, new: Path, *opts: str) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run([sys.executable, "-m", "irscan", "diff", base, new, "--format", "json", *opts],
                          capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    return proc.returncode, json.loads(proc.stdout)


def test_3208_appears_from_4_5_1_to_4_5_0(domain_offset: dict[str, Path]) -> None:
    rc, doc = _diff(domain_offset["4.5.1"], domain_offset["4.5.0"])
    assert rc == 1
    assert {(e["ir"], e["check"]) for e in doc["new"]} == {("mlir", "trunc-then-extend"), ("ptx", "trunc-then-extend")}
    assert {(e["ir"], e["kind"]) for e in doc["narrowed"]} == {("mlir", "store"), ("ptx", "store")}
    for e in doc["narrowed"]:
        assert (e["base"]["index_width"], e["new"]["index_width"]) == (64, 32)
        assert e["statement"]["source"] == "shifted[0] = cutlass.Uint8(100)"


def test_3208_is_fixed_from_4_5_0_to_4_5_1(domain_offset: dict[str, Path]) -> None:
    rc, doc = _diff(domain_offset["4.5.0"], domain_offset["4.5.1"])
    assert rc == 0 and len(doc["fixed"]) == 2 and not doc["new"] and not doc["narrowed"]
    assert {e["ir"] for e in doc["widened"]} == {"mlir", "ptx"}


def test_3208_regression_from_4_4_2_in_the_ptx(domain_offset: dict[str, Path]) -> None:
    """4.4.2 offers only the PTX cut: the regression shows in the PTX (the MLIR finding has no 4.4.2 side
    to compare with, so it counts as new too)."""
    rc, doc = _diff(domain_offset["4.4.2"], domain_offset["4.5.0"])
    assert rc == 1
    assert ("ptx", "trunc-then-extend") in {(e["ir"], e["check"]) for e in doc["new"]}
    assert {(e["ir"], e["kind"]) for e in doc["narrowed"]} == {("ptx", "store")}
