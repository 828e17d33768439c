"""irscan audit with the DSL's caches on (irscan/capturing/cache.py): a repeated audit of an unchanged
program reuses the stored capture (the DSL serves the module from its cache and the hook is not asked
to lower it), an edited one is captured afresh, and patch mode / the guard keep the caches off."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from irscan.capturing import cache, releases
from irscan.capturing.env import ENV_CACHE, NO_CACHE_ENV, dsl_cache_wanted
from irscan.capturing.runner import capture_env

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "corpus" / "programs" / "elementwise_i32_stride.py"  # 4 findings: load and store, MLIR and PTX
DSL_LOG = {"CUTE_DSL_LOG_LEVEL": "20", "CUTE_DSL_LOG_TO_CONSOLE": "1"}  # the DSL says hit or miss on stderr


def _audit(prog: Path, out: Path, env: dict[str, str], *extra: str) -> tuple[dict, str]:  # type: ignore[type-arg]
    argv = [sys.executable, "-m", "irscan", "audit", "--format", "json", "--fail-on", "never", *extra]
    proc = subprocess.run(
        [*argv, "--out", str(out), "--", sys.executable, str(prog)],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.replace(str(out), "OUT")), proc.stderr


def _folders(out: Path) -> list[Path]:
    return sorted(p for p in out.iterdir() if p.is_dir())


@pytest.fixture
def cache_env(tmp_path: Path) -> dict[str, str]:
    env = {
        **os.environ,
        **DSL_LOG,
        "CUTE_DSL_CACHE_DIR": str(tmp_path / "dsl"),
        "IRSCAN_CACHE_DIR": str(tmp_path / "ir"),
    }
    for k in (*NO_CACHE_ENV, ENV_CACHE, "IRSCAN_PATCH", "IRSCAN_GUARD"):
        env.pop(k, None)
    return env


def test_repeated_audit_reuses_the_capture_and_an_edited_program_is_recaptured(
    tmp_path: Path, cache_env: dict[str, str]
) -> None:
    prog = tmp_path / PROGRAM.name
    shutil.copy(PROGRAM, prog)

    first, err1 = _audit(prog, tmp_path / "a", cache_env)
    assert "JIT cache miss" in err1
    [fresh] = _folders(tmp_path / "a")
    assert not (fresh / cache.HIT_FILE).exists()
    assert len(first["findings"]) == 4
    [entry] = (tmp_path / "ir" / "captures").iterdir()
    assert (fresh / cache.KEY_FILE).read_text().strip() == entry.name
    assert len(list(entry.glob("findings-*.pickle"))) == 1  # the scan's result, stored with the capture

    second, err2 = _audit(prog, tmp_path / "b", cache_env)
    assert "JIT cache hit" in err2 and "JIT cache miss" not in err2  # the DSL did not lower it again
    [hit] = _folders(tmp_path / "b")
    assert (hit / cache.HIT_FILE).exists()  # written only where the hook captured nothing
    assert hit.name == fresh.name
    for f in ("module.mlir", "module.ptx", "module.cubin"):
        assert (hit / f).read_bytes() == (fresh / f).read_bytes()
    assert second["findings"] == first["findings"]  # read back, its paths moved to the new folder
    assert second["kernels"] == first["kernels"]
    assert second["errors"] == first["errors"] == []

    prog.write_text(prog.read_text().replace("THREADS, VEC = 128, 8", "THREADS, VEC = 64, 8"))
    edited, err3 = _audit(prog, tmp_path / "c", cache_env)
    assert "JIT cache miss" in err3
    [again] = _folders(tmp_path / "c")
    assert not (again / cache.HIT_FILE).exists()
    assert edited["findings"] != first["findings"]
    assert len(list((tmp_path / "ir" / "captures").iterdir())) == 2


def test_a_dsl_cache_filled_without_irscan_is_not_trusted(tmp_path: Path, cache_env: dict[str, str]) -> None:
    """The DSL's file cache holds the module but irscan's does not: the hit is turned into a miss, so
    the module is lowered and captured (and stored for the next audit)."""
    first, _ = _audit(PROGRAM, tmp_path / "a", cache_env)
    shutil.rmtree(tmp_path / "ir" / "captures")
    second, err = _audit(PROGRAM, tmp_path / "b", cache_env)
    [folder] = _folders(tmp_path / "b")
    assert not (folder / cache.HIT_FILE).exists()
    assert second["findings"] == first["findings"]
    assert len(list((tmp_path / "ir" / "captures").iterdir())) == 1


def test_no_cache_audits_as_before(tmp_path: Path, cache_env: dict[str, str]) -> None:
    _audit(PROGRAM, tmp_path / "a", cache_env, "--no-cache")
    _, err = _audit(PROGRAM, tmp_path / "b", cache_env, "--no-cache")
    assert "JIT cache hit" not in err
    assert not (tmp_path / "ir" / "captures").exists()


def test_patch_mode_and_the_guard_keep_the_caches_off(monkeypatch: pytest.MonkeyPatch) -> None:
    on = capture_env("/tmp/x", None, True, False, cache=True)
    assert on[ENV_CACHE] == "1" and not any(on.get(k) == v for k, v in NO_CACHE_ENV.items() if k not in os.environ)
    off = capture_env("/tmp/x", None, True, False)
    assert ENV_CACHE not in off and all(off[k] == v for k, v in NO_CACHE_ENV.items())
    monkeypatch.setenv(ENV_CACHE, "1")
    monkeypatch.delenv("IRSCAN_PATCH", raising=False)
    monkeypatch.delenv("IRSCAN_GUARD", raising=False)
    assert dsl_cache_wanted()
    monkeypatch.setenv("IRSCAN_PATCH", "1")
    assert not dsl_cache_wanted()
    monkeypatch.delenv("IRSCAN_PATCH")
    monkeypatch.setenv("IRSCAN_GUARD", "raise")
    assert not dsl_cache_wanted()


def test_the_key_holds_irscan_and_dsl_versions(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import irscan

    cache._salt.cache_clear()
    base = cache.key_for("abc")
    assert cache.key_for("abd") != base
    monkeypatch.setattr(irscan, "__version__", "99.0")
    cache._salt.cache_clear()
    assert cache.key_for("abc") != base
    monkeypatch.undo()
    monkeypatch.setattr(releases, "installed_version", lambda: "9.9.9")
    cache._salt.cache_clear()
    assert cache.key_for("abc") != base
    monkeypatch.undo()
    cache._salt.cache_clear()
    assert cache.key_for("abc") == base
    monkeypatch.setenv("IRSCAN_CACHE_DIR", str(tmp_path))
    assert cache.cache_root() == tmp_path / "captures" and cache.lookup(base) is None
