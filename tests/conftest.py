"""Shared fixtures: Python children with a clean DSL environment, and one real capture made once."""

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

FIXTURES = Path(__file__).parent / "fixtures"

# irscan's caches (grammar tables, parsed op templates, captures of cached audits) start empty in every
# test session, so a run on a machine that already ran irscan tests what a fresh machine would; child
# processes inherit it (clean_env keeps XDG_CACHE_HOME).
if "IRSCAN_TEST_KEEP_CACHE" not in os.environ:
    import tempfile

    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="irscan-test-cache-")
    os.environ.pop("IRSCAN_CACHE_DIR", None)
#: what the session capture compiles, in order (names of kernels.COMPILES); a direct @cute.jit call follows
SESSION_COMPILES = ("copy", "two", "smem", "copy")


def clean_env(extra: dict[str, str] | None = None, keep_pythonpath: bool = True) -> dict[str, str]:
    """This process's environment without CUTE_DSL_* / IRSCAN_* settings (nor PYTHONPATH), plus ``extra``."""
    drop = ("CUTE_DSL_", "IRSCAN_") if keep_pythonpath else ("CUTE_DSL_", "IRSCAN_", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(extra or {})
    return env


@pytest.fixture(scope="session")
def run_python():
    """``run_python(*args, env=None, cwd=None)``: run this interpreter (or ``python=``) with ``args``, output
    captured as text.  Each compile gets its own process: the DSL reads its environment once.  ``env`` is
    added to a clean environment (see clean_env)."""

    def run(*args, env=None, cwd=None, timeout=300, python=sys.executable, keep_pythonpath=True):
        return subprocess.run(
            [str(python), *map(str, args)],
            env=clean_env(env, keep_pythonpath),
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run


@pytest.fixture(scope="session")
def captured(run_python, tmp_path_factory):
    """``irscan capture`` of fixtures/compile_kernels.py, run once: .out (the capture root), .folders (one
    capture folder per compile, in order: copy, two, smem, copy, direct @cute.jit copy), .proc (its result)."""
    root = tmp_path_factory.mktemp("captured")
    out = root / "cap"
    script = FIXTURES / "compile_kernels.py"
    proc = run_python(
        "-m", "irscan", "capture", "--out", out, "--", "python", script, "--direct", *SESSION_COMPILES, cwd=root
    )
    assert proc.returncode == 0, proc.stderr
    folders = sorted(p for p in out.iterdir() if p.is_dir()) if out.is_dir() else []
    return SimpleNamespace(out=out, folders=folders, proc=proc)
