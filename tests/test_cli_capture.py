"""``irscan capture [--out DIR] -- python script.py args``: an unmodified program, run with capture armed."""

import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
COMPILE = FIXTURES / "compile_kernels.py"
FILES = ["meta.json", "module.cubin", "module.mlir", "module.ptx"]
NO_PROGRAM = "irscan: error: give the program to run after --"


def irscan(run_python, *args, cwd):
    return run_python("-m", "irscan", "capture", *args, cwd=cwd)


def test_unmodified_script_gets_both_irs_for_every_kernel(captured):
    """The session capture: compile_kernels.py with its own arguments, five compiles, six kernels."""
    proc = captured.proc
    assert proc.returncode == 0
    # the script got its arguments, and irscan wrote nothing of its own to stdout
    assert proc.stdout.splitlines()[:4] == ["compiled copy", "compiled two", "compiled smem", "compiled copy"]
    assert all(line.startswith(("compiled ", "direct call ")) for line in proc.stdout.splitlines())
    assert len(captured.folders) == 5
    n_kernels = 0
    for folder in captured.folders:
        assert sorted(p.name for p in folder.iterdir()) == FILES
        mlir = (folder / "module.mlir").read_text()
        ptx = (folder / "module.ptx").read_text()
        names = re.findall(r"^\.visible \.entry (\w+)\(", ptx, re.M)
        assert names, folder
        for name in names:
            assert f"llvm.func @{name}(" in mlir
        n_kernels += len(names)
        assert f"irscan: captured {folder} ({', '.join(FILES)})" in proc.stderr
    assert n_kernels == 6
    assert "no kernel was compiled" not in proc.stderr and "Traceback" not in proc.stderr


def test_exit_code_of_the_program_is_passed_through(run_python, tmp_path):
    out = tmp_path / "cap"
    proc = irscan(run_python, "--out", out, "--", "python", COMPILE, "--exit", "3", "copy", cwd=tmp_path)
    assert proc.returncode == 3
    assert "irscan: the program exited with status 3" in proc.stderr
    (folder,) = out.iterdir()  # what it compiled before failing is captured
    assert sorted(p.name for p in folder.iterdir()) == FILES


@pytest.mark.parametrize("args", [[], ["--"], ["--out", "cap"], ["--out", "cap", "--strict", "--"]])
def test_no_program_is_a_usage_error(run_python, tmp_path, args):
    proc = irscan(run_python, *args, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith(NO_PROGRAM) and "Traceback" not in proc.stderr
    assert proc.stdout == "" and not (tmp_path / "cap").exists()


@pytest.mark.parametrize("argv", [["python", "missing.py"], ["missing.py"]], ids=["python-missing.py", "missing.py"])
def test_nonexistent_script_reports_the_childs_error(run_python, tmp_path, argv):
    proc = irscan(run_python, "--out", "cap", "--", *argv, cwd=tmp_path)
    assert proc.returncode == 2  # python's own status for a file it cannot open
    assert "can't open file" in proc.stderr and "missing.py" in proc.stderr  # the child's message
    assert "irscan: no kernel was compiled" in proc.stderr
    assert "irscan: the program exited with status 2" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_nonexistent_program_is_irscans_own_error(run_python, tmp_path):
    proc = irscan(run_python, "--", "no-such-program-for-irscan", "x", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("irscan: error: cannot run 'no-such-program-for-irscan'")
    assert "Traceback" not in proc.stderr


def test_console_script(tmp_path):
    """The installed `irscan` command is the same entry point."""
    exe = shutil.which("irscan", path=sysconfig.get_path("scripts"))
    if exe is None:
        pytest.skip("no irscan script next to this interpreter")
    proc = subprocess.run([exe, "capture"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.startswith(NO_PROGRAM)
