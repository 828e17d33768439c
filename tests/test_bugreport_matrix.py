"""``irscan report --matrix`` / ``--bisect`` on NVIDIA/cutlass#3208 (corpus/programs/domain_offset_3208.py):
the program is captured under 4.5.0[cu13], where the DSL truncates domain_offset's offset; the report's
repro script, re-run under each release in its cached venv, is affected on 4.5.0[cu13] only, and the
bisect from 4.4.2[cu13] to 4.5.0[cu13] names 4.5.0[cu13].

    python -m pytest -m matrix tests/test_bugreport_matrix.py

Off by default (the ``matrix`` marker); uses the venvs of tests/test_dsl_matrix.py (made on first use).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from irscan.bugreport.matrix import ROOT, venv
from irscan.cli import main

pytestmark = pytest.mark.matrix


@pytest.fixture(scope="module")
def capture_450(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("c450")
    py = venv("4.5.0", "cu13")
    subprocess.run(
        [py, "-m", "irscan", "audit", "--format", "json", "--fail-on", "never", "--arch", "sm_90a", "--out", d / "cap",
         "--", str(py), str(ROOT / "corpus" / "programs" / "domain_offset_3208.py")],
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, cwd=d, capture_output=True, timeout=900,
    )  # fmt: skip
    # its exit status is not the point (an irscan note on an old release makes it 5): the capture is
    assert list((d / "cap").glob("*/meta.json")), "the 4.5.0[cu13] capture was not written"
    return d / "cap"


def test_matrix_shows_exactly_the_affected_release(capture_450: Path, tmp_path: Path) -> None:
    spec = "4.4.2[cu13],4.5.0[cu13],4.5.1[cu13],4.8.1"
    assert main(["report", "--all", str(capture_450), "-o", str(tmp_path), "--matrix", spec]) == 0
    (md,) = tmp_path.glob("*.md")
    text = md.read_text()
    assert "re-run, `irscan audit -- python 84d3bf6e935a_repro.py` reproduces it." in text
    assert "Re-run under 4.5.0[cu13], the release it was captured with." in text
    for line in ("| 4.4.2[cu13] | not affected |", "| 4.5.0[cu13] | affected |", "| 4.5.1[cu13] | not affected |",
                 "| 4.8.1 | not affected |"):  # fmt: skip
        assert line in text


def test_bisect_finds_the_first_affected_release(capture_450: Path, tmp_path: Path) -> None:
    assert (
        main(["report", "--all", str(capture_450), "-o", str(tmp_path), "--bisect", "4.4.2[cu13]", "4.5.0[cu13]"]) == 0
    )
    (md,) = tmp_path.glob("*.md")
    assert "First affected release (bisect): **4.5.0[cu13]**." in md.read_text()
