"""The guard at run time: attach each compiled module's checks to the function ``cute.compile``
returned, and run them on every call before the DSL packs a single argument.

Attaching: the capture hook hands over each module it compiled (:func:`register`, keyed by the
``ir.Module`` object, which the compiled function keeps as ``.ir_module``).  When the DSL builds its
compiled-function object (``JitCompiledFunction.__init__``, both launch paths: the plain JIT's
``CudaDialectJitCompiledFunction`` and TVM-FFI's classes derive from it), the object of a module
with something to check gets a subclass of its own class whose ``__call__`` checks first.  A kernel
with no finding keeps the DSL's class: it costs nothing per launch.

Checking happens in ``__call__``, before ``ExecutionArgs`` and before the host function: no CUDA
call of this launch has been made when a WrapError is raised, so the process and its context stay
usable.  ``warn`` prints once per kernel and access, then launches.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

from irscan.checks.conditions import Condition
from irscan.checks.contract import limit_text, plain, render
from irscan.findings import kernel_key
from irscan.guarding.codegen import UNBOUND
from irscan.guarding.errors import WrapError
from irscan.guarding.prepare import LaunchGuard, ModuleGuard

MODES = ("raise", "warn")
_ATTR = "_irscan_guard"

_lock = threading.Lock()
#: id(ir.Module) -> (the module, its guards by host function, the mode); the module is held so that
#: its id stays its own until the compiled function claims it
_pending: dict[int, tuple[Any, dict[str, ModuleGuard], str]] = {}
_subclasses: dict[type, type] = {}
_original_init: Callable[..., None] | None = None


def register(module: Any, guards: dict[str, ModuleGuard], mode: str) -> None:
    """Called for every module compiled while a guard is active."""
    with _lock:
        _pending[id(module)] = (module, guards, mode)
    for mg in guards.values():
        for lg in mg.launches:
            if lg.compiled is None and (lg.conditions or lg.spans):
                _say(f"irscan guard: {lg.kernel}: {lg.how}")


def _say(msg: str) -> None:
    print(msg, file=sys.stderr)


class Checker:
    """The checks of one compiled function: every launch its host function makes."""

    def __init__(self, mg: ModuleGuard, mode: str):
        self.mode = mode
        self.checks = tuple((g, g.compiled.check) for g in mg.active if g.compiled is not None)
        self.warned: set[tuple[str, int | str]] = set()

    def __call__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if kwargs:
            return self._unbound("keyword arguments")
        for g, check in self.checks:
            i = check(args)
            if i == UNBOUND:
                self._unbound(f"{len(args)} positional arguments where the host function takes others")
            elif i is not None:
                self._violated(g, i, args)

    def _unbound(self, why: str) -> None:
        if ("unbound", why) not in self.warned:
            self.warned.add(("unbound", why))
            _say(f"irscan guard: called with {why}; this call's launches are not checked")

    def _violated(self, g: LaunchGuard, i: int, args: tuple[Any, ...]) -> None:
        err = wrap_error(g, i, args)
        if self.mode == "raise":
            raise err
        if (g.kernel, i) not in self.warned:
            self.warned.add((g.kernel, i))
            print(f"irscan guard: WARNING: {err}", file=sys.stderr)


def wrap_error(g: LaunchGuard, i: int, args: tuple[Any, ...]) -> WrapError:
    """The error for condition ``i`` of ``g`` broken by ``args`` (the slow path: explain's values)."""
    assert g.compiled is not None
    env = g.compiled.explain(args)
    named = sorted(
        g.compiled.names.get(i, []), key=lambda k: (not k.startswith("grid."), not k.startswith("block."), k)
    )
    shown = {k: env[k] for k in named if k in env}
    vals = ", ".join(f"{k} = {v:,}" for k, v in shown.items())
    reached = int(env.get(f"#{i}", 0))
    if i < len(g.conditions):
        c = g.conditions[i]
        expr = render(c.value, plain(g.names))
        msg = f"{_where(c)}{expr} reaches {reached:,} > {limit_text(c.hi)} ({vals})"
        if c.bounded:
            msg += "; assuming each loaded coordinate stays inside the mode it indexes"
    else:
        s = g.spans[i - len(g.conditions)]
        c = s.condition
        expr = render(c.value, plain(g.names))
        msg = (
            f"{_where(c)}tensor {s.name} spans {reached:,} elements, past {limit_text(s.limit)}, and the kernel"
            f" indexes it with 32-bit arithmetic the launch cannot bound ({expr})"
        )
    msg += f" [kernel {kernel_key(c.kernel)}, finding {c.finding}]"
    return WrapError(
        msg, kernel=c.kernel, file=c.file, line=c.line, expression=expr, value=reached, limit=c.hi,
        values=shown, finding=c.finding, contract=c.bounded,
    )  # fmt: skip


def _where(c: Condition) -> str:
    return f"{c.file}:{c.line}: " if c.file else ""


# -- attaching to the DSL's compiled functions


def _guarded_class(cls: type) -> type:
    """``cls`` with a ``__call__`` that checks first (one subclass per DSL class)."""
    sub = _subclasses.get(cls)
    if sub is None:
        base_call = cls.__call__

        def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
            getattr(self, _ATTR)(args, kwargs)
            return base_call(self, *args, **kwargs)

        sub = _subclasses[cls] = type(cls.__name__, (cls,), {"__call__": __call__, "__module__": cls.__module__})
    return sub


def attach(fn: Any, guards: dict[str, ModuleGuard], mode: str = "raise") -> bool:
    """Give compiled function ``fn`` the checks of its host function; False when it has none."""
    mg = guards.get(getattr(fn, "function_name", None) or "")
    if mg is None and len(guards) == 1:
        mg = next(iter(guards.values()))
    if mg is None or not mg.active:
        return False
    setattr(fn, _ATTR, Checker(mg, mode))
    fn.__class__ = _guarded_class(type(fn))
    return True


def _init_then_attach(self: Any, *args: Any, **kwargs: Any) -> None:
    assert _original_init is not None
    _original_init(self, *args, **kwargs)
    with _lock:
        entry = _pending.pop(id(getattr(self, "ir_module", None)), None)
    if entry is not None:
        try:
            attach(self, entry[1], entry[2])
        except Exception as exc:  # fail open: the user's compiled function works unguarded
            _say(f"irscan guard: could not attach to {type(self).__name__} ({type(exc).__name__}: {exc})")


def install() -> None:
    """Wrap ``JitCompiledFunction.__init__`` (idempotent)."""
    global _original_init
    from cutlass.base_dsl.jit_executor import JitCompiledFunction

    if _original_init is None:
        _original_init = JitCompiledFunction.__init__
        JitCompiledFunction.__init__ = _init_then_attach  # type: ignore[method-assign]
