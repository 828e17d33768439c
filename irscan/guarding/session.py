"""Turning the guard on: ``with irscan.guard(mode="raise"):``, or ``IRSCAN_GUARD=raise|warn`` beside
``IRSCAN_CAPTURE`` (``irscan audit --guard`` sets both).

The guard rides on a capture session: the capture hook runs the first half of each compile, and its
extension point (``LLVM_ONLY_CALLBACKS``) hands the LLVM-dialect module here, where it is scanned
in-process and its launch checks are compiled (prepare.py) and registered for the compiled function
the DSL is about to build (runtime.py).  Functions compiled under the guard stay guarded, in the mode
they were compiled under, for as long as they live.
"""

from __future__ import annotations

import atexit
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from irscan.findings import kernel_key
from irscan.guarding import runtime
from irscan.guarding.prepare import ModuleGuard, prepare


@dataclass
class GuardSession:
    mode: str
    out: Path
    modules: list[dict[str, ModuleGuard]] = field(default_factory=list)
    seconds: float = 0.0  # what preparing the checks added to the compiles (scan, host grids, codegen)

    def report(self) -> list[str]:
        """One line per kernel launch compiled under the guard: how it is guarded, or why not."""
        lines = []
        for guards in self.modules:
            for host, mg in guards.items():
                for lg in mg.launches:
                    n = len(lg.conditions) + len(lg.spans)
                    lines.append(
                        f"{kernel_key(lg.kernel)} (launched by {kernel_key(host)}): {n} condition(s); {lg.how}"
                    )
        return lines


class _Callback:
    """The capture hook's callbacks: read the host arguments' layouts before lowering (``early``),
    then scan the lowered module and register its checks."""

    def __init__(self, session: GuardSession):
        self.session = session
        self.__qualname__ = "irscan guard"
        self.host_args: dict[int, dict[str, list[dict[str, Any]]]] = {}  # id(module) -> by host function

    def early(self, module: Any) -> None:
        from irscan.capturing.meta import host_signatures

        t0 = time.perf_counter()
        self.host_args[id(module)] = host_signatures(module)
        self.session.seconds += time.perf_counter() - t0

    def __call__(self, module: Any, text: str, infos: dict[str, Any]) -> None:
        from irscan.frontend import mlir

        t0 = time.perf_counter()
        parsed = mlir.parse_module(text, str(self.session.out / "module.mlir"))
        guards = prepare(parsed, [asdict(k) for k in infos.values()], self.host_args.pop(id(module), {}))
        self.session.modules.append(guards)
        runtime.register(module, guards, self.session.mode)
        self.session.seconds += time.perf_counter() - t0


def _check_mode(mode: str) -> None:
    if mode not in runtime.MODES:
        raise ValueError(f"irscan.guard: mode must be one of {', '.join(runtime.MODES)}, not {mode!r}")


@contextmanager
def guard(
    mode: str = "raise", out: str | os.PathLike[str] | None = None, strict: bool = False
) -> Iterator[GuardSession]:
    """Guard every kernel compiled inside the block: each launch is checked before it reaches the GPU
    and raises :class:`irscan.WrapError` (``mode="raise"``) or warns once (``"warn"``) when it wraps.

    ``out``: where the capture of each module goes (a temporary folder by default)."""
    _check_mode(mode)
    from irscan.capturing import hook

    with ExitStack() as stack:
        if hook._active and out is None:  # inside a capture already: ride on it, its folder keeps the captures
            folder = hook._active[-1].out
        else:
            tmp = None if out else stack.enter_context(tempfile.TemporaryDirectory(prefix="irscan-guard-"))
            folder = Path(out or str(tmp))
            stack.enter_context(hook.capture(out=folder, strict=strict, lineinfo=True))
        session = GuardSession(mode, folder)
        stack.callback(disarm, arm_session(session))
        yield session


def arm_session(session: GuardSession) -> _Callback:
    """Register ``session``'s callback with the capture hook (which must be installed or about to be)."""
    from irscan.capturing import hook

    runtime.install()
    callback = _Callback(session)
    hook.PRE_LOWERING_CALLBACKS.append(callback.early)
    hook.LLVM_ONLY_CALLBACKS.append(callback)
    return callback


def disarm(callback: _Callback) -> None:
    from irscan.capturing import hook

    hook.PRE_LOWERING_CALLBACKS.remove(callback.early)
    hook.LLVM_ONLY_CALLBACKS.remove(callback)


def _summary(session: GuardSession) -> None:
    for line in session.report():
        print(f"irscan guard: {line}", file=sys.stderr)


def arm(mode: str, out: str) -> GuardSession | None:
    """``IRSCAN_GUARD``: guard the rest of the process (called by the environment capture at start)."""
    try:
        _check_mode(mode)
        session = GuardSession(mode, Path(out))
        arm_session(session)
        atexit.register(_summary, session)  # which kernels were guarded how: said once, at the end
        return session
    except Exception as exc:  # fail open: the program runs unguarded, and says so
        print(f"irscan: could not start the launch guard ({type(exc).__name__}: {exc})", file=sys.stderr)
        return None
