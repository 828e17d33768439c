"""The DSL's environment for a capture, and turning capture on for a whole Python process from the
environment: ``IRSCAN_CAPTURE=DIR``.

The DSL reads its settings (caches, target arch, line info) once, at ``import cutlass``: whatever
captures must set them first (:func:`prepare_environment`).

Started from a ``.pth`` line (installed with the package) or from ``irscan/capturing/_boot/sitecustomize.py``
(put on PYTHONPATH by ``irscan capture``/``irscan audit``).  It must not import the DSL itself: it
sets the DSL's environment first, then waits for ``cutlass.base_dsl.compiler`` to be imported and
installs the hook right after, so processes that never touch the DSL pay nothing.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ENV_OUT = "IRSCAN_CAPTURE"
ENV_STRICT = "IRSCAN_STRICT"
ENV_GUARD = "IRSCAN_GUARD"  # raise|warn: also check every launch (irscan.guarding)
ENV_CACHE = "IRSCAN_DSL_CACHE"  # 1: leave the DSL's caches on, captures keyed by its key (capturing/cache.py)
TARGET = "cutlass.base_dsl.compiler"

#: Environment the DSL must see *before* ``import cutlass`` so that no compile is served from a cache.
NO_CACHE_ENV = {"CUTE_DSL_NO_CACHE": "1", "CUTE_DSL_DISABLE_FILE_CACHING": "1", "CUTE_DSL_CACHE_ENABLED": "0"}
#: What to compile for on a machine with no GPU (with one, the DSL targets it; forcing sm_90a there
#: would break the launches on other GPUs).
DEFAULT_ARCH = "sm_90a"


def has_gpu() -> bool:
    return any(Path(p).exists() for p in ("/dev/nvidia0", "/dev/nvidiactl"))


def dsl_cache_wanted() -> bool:
    """Whether this process's capture leaves the DSL's caches on (``IRSCAN_DSL_CACHE=1``, set by
    ``irscan audit``).  Patch mode and the launch guard must see every module lowered: caches off."""
    return os.environ.get(ENV_CACHE) == "1" and os.environ.get("IRSCAN_PATCH") != "1" and not os.environ.get(ENV_GUARD)


def prepare_environment(arch: str | None = None, lineinfo: bool | None = None) -> None:
    """Set the DSL's environment for a capture; only effective before the first ``import cutlass``."""
    for k, v in NO_CACHE_ENV.items() if not dsl_cache_wanted() else ():
        os.environ[k] = v
    if arch:
        os.environ["CUTE_DSL_ARCH"] = arch
    elif "CUTE_DSL_ARCH" not in os.environ and not has_gpu():
        os.environ["CUTE_DSL_ARCH"] = DEFAULT_ARCH
    if lineinfo is not None:
        os.environ["CUTE_DSL_LINEINFO"] = "1" if lineinfo else "0"


class _Finder(importlib.abc.MetaPathFinder):
    """Finds nothing itself; wraps the real loader of ``target`` (TARGET) so that ``then`` (the hook)
    runs after it executes."""

    def __init__(self, target: str = TARGET, then: Callable[[], None] | None = None):
        self.target, self.then = target, then

    def find_spec(self, fullname: str, path: Any, target: ModuleType | None = None) -> Any:
        if fullname != self.target:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader, self.then or _start)
                return spec
        return None


def after_import(module: str, then: Callable[[], None]) -> None:
    """Run ``then`` once ``module`` has been imported: now if it has, else right after its import."""
    if module in sys.modules:
        then()
    else:
        sys.meta_path.insert(0, _Finder(module, then))


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: importlib.abc.Loader, then: Callable[[], None]):
        self.inner, self.then = inner, then

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        self.then()


_context: Any = None  # the open capture context; a dropped reference would close it


def _start() -> None:
    global _context
    try:
        from irscan.capturing.hook import capture

        _context = capture(out=os.environ[ENV_OUT], strict=os.environ.get(ENV_STRICT) == "1")
        session = _context.__enter__()  # kept open for the life of the process
        if dsl_cache_wanted():  # a DSL cache hit then restores the capture stored under its key
            try:
                from irscan.capturing.cache import install as install_cache

                install_cache()
            except Exception as exc:  # cached modules would go uncaptured: say so in the audit's errors
                session.warn("cache install", exc)
        if os.environ.get(ENV_GUARD):  # the launch guard rides on this capture (irscan/guarding/session.py)
            from irscan.guarding.session import arm

            arm(os.environ[ENV_GUARD], os.environ[ENV_OUT])
        if os.environ.get("IRSCAN_PATCH") == "1":  # patch mode rides on it too (irscan/patching/inhook.py)
            from irscan.patching.inhook import Patcher, install

            install(Patcher(strict=os.environ.get(ENV_STRICT) == "1"))
    except Exception as exc:  # fail open: the user's program runs as if irscan were not there
        if os.environ.get(ENV_STRICT) == "1":
            raise
        print(f"irscan: could not start capture ({type(exc).__name__}: {exc})", file=sys.stderr)


def activate() -> None:
    """Called at interpreter start-up; does nothing unless IRSCAN_CAPTURE is set."""
    if not os.environ.get(ENV_OUT) or any(isinstance(f, _Finder) and f.target == TARGET for f in sys.meta_path):
        return
    try:
        prepare_environment(lineinfo=True if os.environ.get(ENV_GUARD) else None)  # the guard names statements
        if TARGET in sys.modules:
            _start()
        else:
            sys.meta_path.insert(0, _Finder())
    except Exception as exc:
        print(f"irscan: could not arm capture ({type(exc).__name__}: {exc})", file=sys.stderr)
