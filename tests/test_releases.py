"""What the hook does on a release it has not met: the cut is chosen by what the release's own pass
parser accepts (capturing/releases.py), and a release that offers no cut fails open with the reason
in the audit's errors and a non-zero exit, never by breaking the compile.  The real releases are
tests/test_dsl_matrix.py's (marked); these run in the default suite."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from irscan.capturing import releases
from irscan.capturing.hook import split_pipeline

ROOT = Path(__file__).resolve().parent.parent
PIPELINE = "builtin.module(cute-to-nvvm{cubin-format=bin cubin-chip=sm_90a})"
EXPANDED = "builtin.module(a-pass,b-pass,cuda-to-binary{dump-ptx-path= dump-cubin-path=},cuda-to-llvm)"


def parser(accepts: set[str], expanded: str = EXPANDED) -> Any:
    """A release's parser that knows the options in ``accepts`` (``llvm-only``, ``dump-ptx-path``)."""

    def parse(p: str) -> str:
        opts = p.split("cute-to-nvvm{", 1)[1].split("}", 1)[0].split()
        unknown = [o for o in opts if o.split("=")[0] not in {"cubin-format", "cubin-chip", *accepts}]
        if unknown:
            raise ValueError(f"failed to add cute-to-nvvm with options {' '.join(unknown)}")
        return expanded

    return parse


def test_a_release_with_llvm_only_is_cut_in_two_halves() -> None:
    first, tail = releases.cut(PIPELINE, parser({"llvm-only", "dump-ptx-path", "dump-cubin-path"}), split_pipeline)
    assert first is not None and "llvm-only=true" in first
    assert tail == "builtin.module(cuda-to-binary{dump-ptx-path= dump-cubin-path=},cuda-to-llvm)"


def test_a_release_without_llvm_only_runs_whole_with_its_dump_options(capsys: pytest.CaptureFixture[str]) -> None:
    first, whole = releases.cut(PIPELINE, parser({"dump-ptx-path", "dump-cubin-path"}), split_pipeline)
    assert first is None and "dump-ptx-path= dump-cubin-path=" in whole and "llvm-only" not in whole
    releases._warned.discard("ptx-only")
    releases.cut(PIPELINE, parser({"dump-ptx-path", "dump-cubin-path"}), split_pipeline)
    assert "capturing PTX and cubin only" in capsys.readouterr().err
    # the user's own dump path is kept (set_dump_paths then leaves it), not given twice
    mine = PIPELINE.replace("cubin-chip", "dump-ptx-path=/mine cubin-chip")
    _, whole = releases.cut(mine, parser({"dump-ptx-path", "dump-cubin-path"}), split_pipeline)
    assert whole.count("dump-ptx-path=") == 1 and "dump-cubin-path=" in whole


@pytest.mark.parametrize(
    ("accepts", "expanded", "lacks"),
    [
        (set(), EXPANDED, "no llvm-only option on cute-to-nvvm"),
        ({"llvm-only"}, "builtin.module(a-pass,b-pass)", "no cuda-to-binary pass in its expanded pipeline"),
    ],
)
def test_a_release_with_no_cut_is_refused_before_anything_runs(accepts: set[str], expanded: str, lacks: str) -> None:
    with pytest.raises(ValueError, match=lacks):
        releases.cut(PIPELINE, parser(accepts, expanded), split_pipeline)


@pytest.mark.parametrize(
    ("version", "tested"),
    [("4.3.0", True), ("4.8.1", True), ("4.5.0.dev1", True), ("4.2.1", False), ("4.9.0", False), ("5.0", False),
     ("", None), ("weird", None)],
)  # fmt: skip
def test_tested_releases(version: str, tested: bool | None) -> None:
    assert releases.is_tested(version) is tested


def test_an_untested_release_is_warned_about_once(capsys: pytest.CaptureFixture[str]) -> None:
    releases._warned.discard("untested")
    releases.warn_if_untested("4.9.0")
    releases.warn_if_untested("4.9.0")
    releases.warn_if_untested("4.8.1")
    err = capsys.readouterr().err
    assert err.count("nvidia-cutlass-dsl 4.9.0 is not among the releases irscan was tested with") == 1


PROGRAM_WITHOUT_CUT = """\
import runpy, sys
import irscan.capturing.releases as releases

def no_cut(*args):
    raise ValueError("this nvidia-cutlass-dsl release offers no capture cut (simulated)")

releases.cut = no_cut  # what a release with neither llvm-only nor dump-ptx-path looks like to the hook
runpy.run_path(sys.argv[1], run_name="__main__")
print("the program went on")
"""


def test_an_audit_on_a_release_without_a_cut_says_so_and_exits_non_zero(run_python: Any, tmp_path: Path) -> None:
    """The compile runs untouched (the program finishes), the reason is in the JSON errors, exit 5."""
    (tmp_path / "wrap.py").write_text(PROGRAM_WITHOUT_CUT)
    program = ROOT / "corpus" / "programs" / "flat_offset_trunc_3208.py"
    proc = run_python("-m", "irscan", "audit", "--format", "json", "--", sys.executable, tmp_path / "wrap.py",
                      program, cwd=tmp_path)  # fmt: skip
    doc = json.loads(proc.stdout)
    assert proc.returncode == 5, proc.stderr
    assert "the program went on" in proc.stderr  # its stdout goes to stderr under --format json
    assert any("capture set-up failed" in e and "offers no capture cut (simulated)" in e for e in doc["errors"])
    assert doc["program"]["exit_status"] == 0
