"""The ``cute.compile`` hook: capture each kernel module's LLVM-dialect MLIR, PTX and cubin.

The DSL runs its whole lowering in one place, ``cutlass.base_dsl.compiler.Compiler.compile(module,
pipeline)``.  We wrap it and run the same pipeline in two halves: ``cute-to-nvvm{llvm-only=true}``
(which stops right before ``cuda-to-binary``), save the module text, then the registered tail
(``cuda-to-binary`` ... ``cuda-error-handling``) with dump paths pointing into our folder.  The two
halves are exactly the passes of the whole, so the PTX and cubin are byte-identical to a plain
compile (tests/test_capture.py proves it).

Fail open: anything of ours that breaks before the first pass runs falls back to the original
compile; anything that breaks afterwards only loses the capture.  Either way the reason goes to
stderr and the user's compile succeeds.  ``strict=True`` turns our failures into errors.

What goes on disk is :mod:`irscan.capturing.store`'s; what is read off the module,
:mod:`irscan.capturing.meta`'s.  The hook looks those functions up in this module's namespace at
each compile, so a test can break one of them here (tests/fixtures/api_capture.py).
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from irscan.capturing import releases, store
from irscan.capturing.env import DEFAULT_ARCH, NO_CACHE_ENV, dsl_cache_wanted, prepare_environment
from irscan.capturing.meta import (
    KernelInfo,
    dsl_environment,
    jit_functions,
    kernel_signatures,
    launch_facts,
)
from irscan.capturing.origins import watch_host_tensors
from irscan.capturing.releases import ALIAS, TAIL_START
from irscan.capturing.store import Capture

# ----------------------------------------------------------------------------------------- pipeline


def split_pipeline(pipeline: str, expanded: str) -> tuple[str, str]:
    """Return (first half with ``llvm-only=true``, tail starting at ``cuda-to-binary``).

    ``expanded`` is ``str(PassManager.parse(pipeline))``: the alias expanded to its ~45 passes,
    whose tail is the only part that re-parses as a pipeline of its own.
    """
    if ALIAS not in pipeline:
        raise ValueError("pipeline has no cute-to-nvvm{...}")
    first = pipeline.replace(ALIAS, f"{ALIAS}llvm-only=true ", 1)
    at = expanded.find(TAIL_START)
    if at < 0:
        raise ValueError("expanded pipeline has no cuda-to-binary pass")
    return first, "builtin.module(" + expanded[at:]


_DUMP_RE = {k: re.compile(rf"{k}=('[^']*'|[^ ,}}]*)") for k in ("dump-ptx-path", "dump-cubin-path")}


def set_dump_paths(tail: str, prefix: str) -> tuple[str, dict[str, str]]:
    """Point the tail's empty dump paths at ``prefix``; keep the user's own where they set one.

    Returns the new tail and, per kind, the prefix the file will be written under.
    """
    used: dict[str, str] = {}
    for key, rx in _DUMP_RE.items():
        m = rx.search(tail)
        if m is None:
            raise ValueError(f"cuda-to-binary has no {key} option")
        value = m.group(1).strip("'")
        if value:
            used[key] = value
        else:
            used[key] = prefix
            tail = tail[: m.start()] + f"{key}='{prefix}'" + tail[m.end() :]
    return tail, used


def pipeline_arch(pipeline: str) -> str | None:
    m = re.search(r"cubin-chip='?(sm_[0-9a-z]+)", pipeline)
    return m.group(1) if m else None


# ----------------------------------------------------------------------------------------- the hook


class Session:
    """An active capture: where modules go, and what has been captured so far."""

    def __init__(self, out: str | os.PathLike[str], strict: bool = False):
        self.out = Path(out)
        self.strict = strict
        self.captures: list[Capture] = []
        self.errors: list[str] = []
        self.seconds = 0.0  # time our hook added on top of the compile itself
        self._lock = threading.Lock()

    @property
    def kernels(self) -> list[KernelInfo]:
        return [k for c in self.captures for k in c.kernels]

    def _next_dir(self, label: str) -> Path:
        with self._lock:
            return store.new_folder(self.out, label)

    def warn(self, what: str, exc: BaseException) -> None:
        msg = f"irscan: capture {what} failed ({type(exc).__name__}: {exc}); the compile goes on without it"
        self.errors.append(msg)
        print(msg, file=sys.stderr)
        store.record_error(self.out, msg)  # for the audit in the parent process: its report's errors


_active: list[Session] = []
_original: Callable[..., Any] | None = None

#: The extension point for what else runs on each module a session compiles, between the two halves
#: (the launch guard, the patcher): ``callback(module, text, infos)`` with the DSL's ``ir.Module`` (still
#: LLVM-dialect; a callback may rewrite it, and the tail then lowers what it left), its text with
#: locations, and the kernels' facts.  A callback's failure is the session's warning, not the compile's.
#: A callback that rewrote the module returns its new text: later callbacks and the capture get that.
LLVM_ONLY_CALLBACKS: list[Callable[[Any, str, dict[str, KernelInfo]], str | None]] = []
#: After the tail and the capture's write-out: ``callback(module, folder, result, recompile) -> result``
#: (the patcher's PTX-side checks); ``recompile(other_module, dump_prefix)`` runs the same tail on
#: another module (the unpatched original, to compare, or to compile instead: fail open).
AFTER_TAIL_CALLBACKS: list[Callable[[Any, Path, Any, Callable[[Any, str], Any]], Any]] = []
#: Before the first half: ``callback(module)`` on the CuTe-level module, to read (not change) what
#: lowering erases, such as which modes of a host argument are dynamic (the launch guard).
PRE_LOWERING_CALLBACKS: list[Callable[[Any], None]] = []


def _hooked_compile(self: Any, module: Any, pipeline: str, *args: Any, **kwargs: Any) -> Any:
    assert _original is not None
    session = _active[-1] if _active else None
    if session is None or ALIAS not in pipeline:
        return _original(self, module, pipeline, *args, **kwargs)
    t0 = time.perf_counter()
    try:
        from cutlass._mlir import passmanager

        # what this release offers: two halves, or (a release without the llvm-only cut) the whole, dumps set
        first, tail = releases.cut(pipeline, passmanager.PassManager.parse, split_pipeline)  # type: ignore[attr-defined]
        infos = kernel_signatures(module)
        jits = jit_functions(module)
        label = next(iter(infos), "module")
        folder = session._next_dir(label)
        tail, dumps = set_dump_paths(tail, str(folder / "module"))
    except Exception as exc:  # fail open: nothing has run yet, so the plain compile is untouched
        if session.strict:
            raise
        session.warn("set-up", exc)
        return _original(self, module, pipeline, *args, **kwargs)
    for early in list(PRE_LOWERING_CALLBACKS):
        _call_back(session, early, None, module)
    overhead = time.perf_counter() - t0

    # The DSL's post-compile hook (TVM-FFI wrapping, verification) expects a fully lowered module:
    # it must run once, after the tail, exactly as in a plain compile.
    post_hook = getattr(self, "_post_compile_hook", None)
    self._post_compile_hook = None
    try:
        if first is not None:
            _original(self, module, first, *args, **kwargs)  # user errors surface here unchanged
    except BaseException:  # the user's error or Ctrl-C: no empty capture folder stays behind
        _discard(folder)
        raise
    finally:
        self._post_compile_hook = post_hook

    t1 = time.perf_counter()
    text = None
    try:
        if first is not None:
            text = module.operation.get_asm(enable_debug_info=True)
            launch_facts(module, infos)
    except Exception as exc:
        if session.strict:
            raise
        session.warn("of the LLVM-dialect module", exc)
    if text is not None:
        for callback in list(LLVM_ONLY_CALLBACKS):
            text = _call_back(session, callback, None, module, text, infos) or text
    overhead += time.perf_counter() - t1

    try:
        result = _original(self, module, tail, *args, **kwargs)
    except BaseException:
        _discard(folder)
        raise

    t2 = time.perf_counter()
    try:
        arch = pipeline_arch(pipeline) or DEFAULT_ARCH
        _finish(session, folder, text, infos, arch, dumps, jits)
    except Exception as exc:
        if session.strict:
            raise
        session.warn("write-out", exc)

    def recompile(other: Any, prefix: str) -> Any:
        self._post_compile_hook = None  # the DSL's post-compile hook sees only the module it gets back
        try:
            return _original(self, other, tail.replace(str(folder / "module"), prefix), *args, **kwargs)
        finally:
            self._post_compile_hook = post_hook

    for after in list(AFTER_TAIL_CALLBACKS):
        result = _call_back(session, after, result, module, folder, result, recompile)
    session.seconds += overhead + time.perf_counter() - t2
    return result


def _call_back(session: Session, callback: Callable[..., Any], failed: Any, *args: Any) -> Any:
    """``callback(*args)``; its failure is the session's warning (or, strict, raised), giving ``failed``."""
    try:
        return callback(*args)
    except Exception as exc:
        if session.strict:
            raise
        session.warn(f"callback {getattr(callback, '__qualname__', callback)}", exc)
        return failed


def _discard(folder: Path) -> None:
    """Remove the folder of a compile that did not finish, if nothing was written into it yet (a
    folder with partial dumps stays; ``irscan audit`` names it as unfinished)."""
    try:
        folder.rmdir()
    except OSError:
        pass


def _finish(
    session: Session,
    folder: Path,
    text: str | None,
    infos: dict[str, KernelInfo],
    arch: str,
    dumps: dict[str, str],
    jits: list[dict[str, Any]] | None = None,
) -> None:
    kernels = [k for k in infos.values() if k.launch or k.name.startswith("kernel")]
    kernels = kernels or list(infos.values())
    env = dsl_environment()
    session.captures.append(store.write(folder, text, kernels, arch, dumps, jits or [], env))


def install() -> None:
    """Wrap ``Compiler.compile`` (idempotent)."""
    global _original
    from cutlass.base_dsl import compiler

    if _original is None:
        _original = compiler.Compiler.compile
        compiler.Compiler.compile = _hooked_compile  # type: ignore[method-assign]
        watch_host_tensors()


@contextmanager
def capture(
    out: str | os.PathLike[str] = "irscan-capture",
    arch: str | None = None,
    strict: bool = False,
    lineinfo: bool | None = None,
) -> Iterator[Session]:
    """Capture every module compiled inside the block: ``with irscan.capture(out=DIR) as cap: ...``.

    Caches are switched off and the arch defaults to sm_90a, as far as the DSL has not been imported
    yet; when it has, the settings it already read stay (a note goes to stderr).
    """
    cached = dsl_cache_wanted()  # caches on by design: capturing/cache.py stands in for the DSL's hits
    if "cutlass" in sys.modules and not cached and not all(os.environ.get(k) == v for k, v in NO_CACHE_ENV.items()):
        print(
            "irscan: cutlass was imported before capture started; set CUTE_DSL_NO_CACHE=1 "
            "(or use `irscan capture`) so that cached compiles are not skipped",
            file=sys.stderr,
        )
    prepare_environment(arch, lineinfo)
    releases.warn_if_untested(releases.installed_version())
    session = Session(out, strict=strict)
    try:
        install()
    except Exception as exc:
        if strict:
            raise
        session.warn("install", exc)
    _active.append(session)
    try:
        yield session
    finally:
        _active.remove(session)
