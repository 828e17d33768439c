"""Run one case through ``irscan scan`` in this process and judge it against the error contract.

The contract: exit 0 or 1 with a result, or exit 2 with ``<path>:<line>:<col>: error: <what>`` on
stderr; never a traceback, never exit 3 (an internal error), never a hang.  The CLI's own ``main`` is
called in-process (a subprocess per case costs ~0.3 s of start-up, more than most scans), and a
failure is classified by exception type and the innermost irscan frame, so one bug found a thousand
times is one finding.
"""

from __future__ import annotations

import contextlib
import io
import lzma
import os
import re
import signal
import sys
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType, TracebackType

from .case import Case

_LOCATED = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): error: \S.*$", re.M)
_IRSCAN = f"{Path(__file__).resolve().parents[2] / 'irscan'}/"
_AREAS = (("frontend/mlir", "frontend/mlir"), ("frontend/ptx", "frontend/ptx"), ("frontend/", "frontend"),
          ("analysis/", "analysis"), ("checks/", "analysis"), ("findings", "analysis"))  # fmt: skip


class CaseTimeout(BaseException):
    """Raised by the alarm inside a case that runs too long; a BaseException so that no ``except
    Exception`` in irscan swallows it."""


@dataclass
class Outcome:
    rc: int | None
    seconds: float
    size: int
    failure: str | None = None  # the class key; None when the contract holds
    area: str = ""
    last_line: str = ""
    detail: str = ""  # the traceback or the offending stderr, for the findings file

    @property
    def ok(self) -> bool:
        return self.failure is None


def _innermost(tb: TracebackType | None) -> str:
    """``irscan/<module>.py:<function>`` of the deepest irscan frame in a traceback."""
    where = "outside irscan"
    for frame, _ in traceback.walk_tb(tb):
        name = frame.f_code.co_filename
        if name.startswith(_IRSCAN):
            where = f"irscan/{name[len(_IRSCAN) :]}:{frame.f_code.co_name}"
    return where


def _area(where: str, case: Case) -> str:
    if case.area == "meta.json" and not where.startswith(("irscan/frontend", "irscan/analysis", "irscan/checks")):
        return "meta.json"
    for key, area in _AREAS:
        if where.startswith(f"irscan/{key}"):
            return area
    return "capturing/CLI"


def _exception_outcome(exc: BaseException, case: Case, out: Outcome, kind: str) -> Outcome:
    where = _innermost(exc.__traceback__)
    out.failure = f"{kind}:{type(exc).__name__}@{where}"
    out.area = _area(where, case)
    out.last_line = f"{type(exc).__name__}: {str(exc)[:200]}"
    out.detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-12))[-4000:]
    return out


def _template(message: str) -> str:
    """A stderr message with its paths and numbers taken out, so equal messages dedupe."""
    text = re.sub(r"(?:/[^\s:'\"]+)+", "<path>", message)
    return re.sub(r"\d+", "N", text)[:100]


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    def fire(signum: int, frame: FrameType | None) -> None:
        raise CaseTimeout(f"over {seconds:g} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@contextlib.contextmanager
def _chdir(path: Path) -> Iterator[None]:  # contextlib.chdir is Python 3.11+
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _call_cli(argv: list[str]) -> tuple[int | None, str, str, BaseException | None]:
    from irscan import cli

    so, se = io.StringIO(), io.StringIO()
    rc: int | None = None
    err: BaseException | None = None
    with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
        try:
            rc = cli.main(argv)
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 2
        except CaseTimeout:
            raise
        except BaseException as exc:  # noqa: BLE001 (any escape is the finding)
            err = exc
    return rc, so.getvalue(), se.getvalue(), err


def _internal_exception(argv: list[str]) -> BaseException | None:
    """The exception behind an exit 3: the CLI prints one line, so the command is repeated with
    IRSCAN_DEBUG=1, under which the CLI lets it through."""
    old = os.environ.get("IRSCAN_DEBUG")
    os.environ["IRSCAN_DEBUG"] = "1"
    try:
        return _call_cli(argv)[3]
    finally:
        if old is None:
            del os.environ["IRSCAN_DEBUG"]
        else:
            os.environ["IRSCAN_DEBUG"] = old


def case_argv(case: Case, target: Path) -> list[str]:
    """The command line of a case: ``scan TARGET`` (in JSON when a twin's answer is compared), or the
    case's own with ``{}`` the case folder."""
    if not case.argv:
        return ["scan", str(target)] if case.twin is None else ["scan", "--format", "json", str(target)]
    return [a.replace("{}", str(target)) for a in case.argv]


#: the slowest a scan may be (README "Fuzzing"): a case of N MB gets max(timeout, N * this) seconds
SECONDS_PER_MB = 5.0


def judge(case: Case, target: Path, timeout: float = 10.0) -> Outcome:
    """Scan ``target`` (the materialised ``case``) and say whether the contract held.  A timeout is
    ``timeout`` seconds or SECONDS_PER_MB per MB of input, whichever is longer: a 10 MB input may take
    50 s, a 10 KB one not."""
    out = Outcome(rc=None, seconds=0.0, size=case.size())
    timeout = max(timeout, SECONDS_PER_MB * out.size / 1e6)
    t0 = time.perf_counter()
    try:
        with _alarm(timeout):
            argv = case_argv(case, target)
            # a command line's relative paths (".", "-") are the case folder's, never the repository's
            with _chdir(target if case.argv else Path.cwd()):
                rc, stdout, stderr, err = _call_cli(argv)
            out.rc = rc
            if err is not None:
                return _exception_outcome(err, case, out, "escaped")
            if rc == 3:
                with _chdir(target if case.argv else Path.cwd()):
                    inner = _internal_exception(argv)
                if inner is not None:
                    return _exception_outcome(inner, case, out, "internal")
    except CaseTimeout as exc:
        return _exception_outcome(exc, case, out, "timeout")
    finally:
        out.seconds = time.perf_counter() - t0
        sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    # relative paths in the messages are the command line's, read in the folder it ran in
    with _chdir(target if case.argv else Path.cwd()):
        both = stdout + stderr
        if "Traceback (most recent call last)" in both:
            out.failure, out.area = "traceback-in-output", _area("", case)
            out.detail = both[-3000:]
            out.last_line = both.strip().splitlines()[-1][:200]
        elif rc not in (0, 1, 2):
            last = stderr.strip().splitlines()[-1] if stderr.strip() else "(nothing on stderr)"
            out.failure, out.area = f"exit{rc}:{_template(last)}", _area("", case)
            out.last_line, out.detail = last[:200], stderr[-3000:]
        elif rc == 2 and not (
            _located(stderr, target, argv[1:] if case.argv else [])
            or _no_ir_usage_error(stderr, target)
            or _usage(stderr, case)
        ):
            first = stderr.strip().splitlines()[0] if stderr.strip() else "(nothing on stderr)"
            out.failure, out.area = f"exit2-unlocated:{_template(first)}", _area("", case)
            out.last_line, out.detail = first[:200], stderr[-3000:]
        elif rc == 2 and (bad := _unreal_location(stderr)):
            out.failure, out.area = f"exit2-location-outside-input:{_template(bad)}", _area("", case)
            out.last_line, out.detail = bad[:200], stderr[-3000:]
        elif case.twin is not None:
            _compare_twin(case, target, rc, stdout, stderr, out, timeout)
    return out


def _compare_twin(
    case: Case, target: Path, rc: int | None, stdout: str, stderr: str, out: Outcome, timeout: float
) -> None:
    """A meaning-preserving change must not change the answer (metamorphic.py)."""
    from .metamorphic import answer, twin_root

    assert case.twin is not None
    _, where = twin_root(case, target)
    twin_target = case.twin.materialize(where)
    with _alarm(timeout):
        trc, tout, terr, _ = _call_cli(["scan", "--format", "json", str(twin_target)])
    mine, theirs = answer(rc, stdout), answer(trc, tout)
    if mine != theirs:
        how = case.what[-1]
        out.failure, out.area = f"metamorphic:{how}", "frontend"
        out.last_line = f"rc {rc} vs {trc} for the original; {stderr.strip()[:150]}"
        out.detail = f"this case: {str(mine)[:1200]}\noriginal:  {str(theirs)[:1200]}\n{stderr[-800:]}"


def _usage(stderr: str, case: Case) -> bool:
    """A command-line case may end in a usage error: ``irscan: error: ...`` or argparse's."""
    return bool(case.argv) and any(_USAGE.match(ln) for ln in stderr.splitlines())


_USAGE = re.compile(r"^irscan(?: \w+)?: error: \S")


def _unreal_location(stderr: str) -> str | None:
    """The first located error whose line or column is not in the file it names (the file read as
    irscan reads it, .xz decompressed; lines end at \n, \r\n or \r, as editors count them): a
    location must be somewhere a reader can go.  Line 1, column 1 is always real (an empty file)."""
    for m in _LOCATED.finditer(stderr):
        line, col = int(m.group("line")), int(m.group("col"))
        if (line, col) == (1, 1):
            continue
        try:
            path = Path(m.group("path"))
            data = path.read_bytes() if path.is_file() else None
            if data is not None and path.suffix == ".xz":  # a bomb is read no further than a location needs
                data = lzma.LZMADecompressor().decompress(data, max_length=1 << 27)
        except (OSError, lzma.LZMAError):
            continue
        if data is None:
            continue
        lines = re.split(r"\r\n|\r|\n", data.decode("utf-8", "replace"))
        if line < 1 or line > len(lines) or col < 1 or col > len(lines[line - 1]) + 1:
            return m.group()
    return None


def _resolved(path: str) -> str:
    with contextlib.suppress(OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11)
        return str(Path(path).resolve())
    return path


def _located(stderr: str, target: Path, named: list[str] | tuple[str, ...] = ()) -> bool:
    """A ``path:line:col: error:`` line whose path is the target, inside it, or (for a file) beside it in
    its capture folder: a bad meta.json next to a scanned module.mlir is that file's error.  ``named``:
    the paths a command line gave (``/dev/null``, ``-``), each of which may be what is wrong."""
    roots = {_resolved(str(target)), *(_resolved(n) for n in named if n)}
    if not target.is_dir():
        roots.add(_resolved(str(target.parent)))
    for m in _LOCATED.finditer(stderr):
        path = _resolved(m.group("path"))
        if any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots):
            return True
    return False


def _no_ir_usage_error(stderr: str, target: Path) -> bool:
    """A folder with no IR file in it has no line to point at: the README's exit 2 for bad usage,
    ``irscan: error: <folder>: ...``, is the right answer there."""
    if not target.is_dir() or any(p.suffix in (".mlir", ".ptx", ".xz") for p in target.rglob("*") if p.is_file()):
        return False
    return any(ln.startswith("irscan: error: ") and str(target) in ln for ln in stderr.splitlines())
