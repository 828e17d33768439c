"""Run a user's unmodified Python program with capture armed (``irscan capture -- python x.py``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from irscan.capturing.env import DEFAULT_ARCH, ENV_CACHE, ENV_OUT, ENV_STRICT, NO_CACHE_ENV, has_gpu
from irscan.resources import UsageError

#: after Ctrl-C: how long the program may take to end on its own (a terminal's Ctrl-C reached it
#: too), then after a forwarded SIGINT, before it is killed
GRACE_S, STOP_S = 1.0, 10.0

BOOT_DIR = str(Path(__file__).with_name("_boot"))


def capture_env(out: str, arch: str | None, lineinfo: bool, strict: bool, cache: bool = False) -> dict[str, str]:
    """The child's environment: our start-up hook first on PYTHONPATH, the DSL's caches off; with
    ``cache``, on (what the user set stays), captures then keyed by the DSL's key (capturing/cache.py)."""
    env = dict(os.environ)
    env[ENV_OUT] = str(Path(out).resolve())
    env["PYTHONPATH"] = os.pathsep.join(p for p in (BOOT_DIR, env.get("PYTHONPATH", "")) if p)
    if cache:
        env[ENV_CACHE] = "1"
    else:
        env.pop(ENV_CACHE, None)
        env.update(NO_CACHE_ENV)
    if arch:
        env["CUTE_DSL_ARCH"] = arch
    elif not has_gpu():  # with a GPU the DSL compiles for it; forcing sm_90a would break other GPUs' launches
        env.setdefault("CUTE_DSL_ARCH", DEFAULT_ARCH)
    if lineinfo:
        env["CUTE_DSL_LINEINFO"] = "1"
    if strict:
        env[ENV_STRICT] = "1"
    return env


def run_program(
    argv: list[str],
    out: str,
    arch: str | None,
    lineinfo: bool,
    strict: bool,
    stdout_to_stderr: bool = False,
    cache: bool = False,
) -> int:
    """Run ``argv`` (``python script.py ...``; a bare ``script.py`` gets this interpreter) and return
    its exit status (negative: the signal that ended it).

    On KeyboardInterrupt the program is stopped first (it may have had the terminal's SIGINT too; if
    not, it gets one forwarded, then is killed) and the interrupt goes on to the caller."""
    if not argv:
        raise UsageError("no program given after --")
    if argv[0].endswith(".py"):
        argv = [sys.executable, *argv]
    elif argv[0] in ("python", "python3"):
        argv = [sys.executable, *argv[1:]]  # the interpreter irscan itself runs in has the DSL
    env = capture_env(out, arch, lineinfo, strict, cache)
    stdout = sys.stderr if stdout_to_stderr else None
    try:
        proc = subprocess.Popen(argv, env=env, stdout=stdout)
    except OSError as exc:
        raise UsageError(f"cannot run {argv[0]!r}: {exc.strerror or exc}") from exc
    try:
        return proc.wait()
    except KeyboardInterrupt:
        _stop(proc)
        raise


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """End an interrupted program without leaving it running behind irscan."""
    for send, wait in ((None, GRACE_S), (signal.SIGINT, STOP_S), (signal.SIGKILL, None)):
        if send is not None and proc.poll() is None:
            proc.send_signal(send)
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue
        except KeyboardInterrupt:  # a second Ctrl-C: stop waiting politely
            continue
