"""Captures keyed by the DSL's own cache key, so an audit can leave the DSL's caches on.

With its caches on, the DSL serves an unchanged kernel from its JIT cache (in memory, or the file
cache under ``CUTE_DSL_CACHE_DIR``) and never lowers it again: the capture hook
(:mod:`irscan.capturing.hook`) is not asked, so there is nothing to capture.  This module keeps, for
each module the hook did capture, a copy of its capture folder under the key the DSL looked it up by
(``BaseDSL.get_module_hash``: the traced module's bytecode, the compile-affecting ``CUTE_DSL_*``
settings such as arch and line info, and the compile options), and on the DSL's cache hit puts that
copy into the session's capture folder instead.  A DSL hit with no copy of ours (its cache was filled
by a run without irscan) is turned into a miss, so the module is lowered and captured once; the DSL's
file cache then stays as it was (the key is the same).

Where: ``$IRSCAN_CACHE_DIR/captures`` or ``~/.cache/irscan/captures`` (``$XDG_CACHE_HOME`` honoured), one folder
per key.  Never stale: the key also holds irscan's version, a hash of the capture code's own source
(the folder's layout is what that code writes) and the DSL's version (the DSL's key leaves its own
version out).  A copy is only stored from a compile that captured without an error.

The audit's scan (:func:`scan_cached`, from :func:`irscan.pipeline.scan_safely`) keeps its result in
the same entry, keyed by the folder's files as scanned, the IRs and irscan's own code.

Installed by :func:`install` in the audited program's process, only when ``IRSCAN_DSL_CACHE=1`` (see
:func:`irscan.capturing.env.dsl_cache_wanted`): patch mode and the launch guard keep the caches off,
since both must see every module lowered.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
import shutil
import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from irscan.capturing import releases, store
from irscan.frontend import lark_tables

#: a restored folder carries this file (the key it came from): the audit, and tests, can tell a cache
#: hit from a fresh capture
HIT_FILE = "cache-hit.txt"
#: every folder this cache stored or restored carries its key: the audit's scan finds its findings by it
KEY_FILE = "cache-key.txt"

_local = threading.local()  # the key of the compile under way in this thread, and whether we hold a copy
_original_compile: Callable[..., Any] | None = None
_original_resolve: Callable[..., Any] | None = None


def cache_root() -> Path:
    return lark_tables.cache_root() / "captures"  # shared with the grammar tables


@lru_cache(maxsize=1)
def _salt() -> str:
    """irscan's version, the capture code's own source and the DSL's version, hashed once per process."""
    import irscan

    h = hashlib.sha256(f"irscan {irscan.__version__}\0dsl {releases.installed_version()}\0".encode())
    here = Path(__file__).parent
    for name in ("hook.py", "store.py", "meta.py", "releases.py", "cache.py"):
        p = here / name
        h.update(p.read_bytes() if p.exists() else b"")
    return h.hexdigest()


def key_for(module_hash: str) -> str:
    return hashlib.sha256(f"{_salt()}\0{module_hash}".encode()).hexdigest()[:40]


def lookup(key: str) -> Path | None:
    entry = cache_root() / key
    return entry if (entry / store.META_FILE).is_file() else None


def save(capture_dir: Path, key: str) -> None:
    """Copy a finished capture folder into the cache (atomically: a reader sees all of it or nothing)."""
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f".{key}.{os.getpid()}.{threading.get_ident()}"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(capture_dir, tmp)
    (tmp / "label.txt").write_text(capture_dir.name.split("_", 1)[-1])
    try:
        os.replace(tmp, root / key)
    except OSError:  # another process stored the same key first: theirs is as good
        shutil.rmtree(tmp, ignore_errors=True)


def restore(entry: Path, session: Any, key: str) -> None:
    """Put a stored capture into the session's folder, as the hook would have written it."""
    label_file = entry / "label.txt"
    label = label_file.read_text().strip() if label_file.exists() else "module"
    folder = session._next_dir(label)
    for f in entry.iterdir():
        if f.name != "label.txt":
            shutil.copy2(f, folder / f.name)
    (folder / HIT_FILE).write_text(key + "\n")
    (folder / KEY_FILE).write_text(key + "\n")
    cap = store.load(folder)
    session.captures.append(cap)


def _session() -> Any:
    from irscan.capturing import hook

    return hook._active[-1] if hook._active else None


def _with_cache(dsl: Any, ctx: Any) -> Any:
    """The context of a compile the DSL serves from its cache.  ``cute.compile`` (``compile_only``) turns
    the DSL's cache off for itself alone (the user's settings leave it on): under an audit its module
    is looked up and stored in the DSL's file cache too, keyed by the DSL's own ``get_module_hash``, or
    every repeated audit would lower every kernel again.  What the user turned off stays off."""
    if ctx.cache_enabled:
        return ctx
    env = dsl.envar
    if env.no_cache or env.disable_file_caching or env.keep_ptx or env.keep_cubin or env.keep_sass:
        return ctx
    return dataclasses.replace(ctx, cache_enabled=True, module_hash=dsl.get_module_hash(ctx.module, ctx.function_name))


def _cached_compile(self: Any, ctx: Any) -> Any:
    """``CompilerBackend.compile``: the DSL's lookup, lowering and cache write for one module."""
    assert _original_compile is not None
    session = _session()
    if session is None:
        return _original_compile(self, ctx)
    ctx = _with_cache(self._dsl, ctx)
    if not ctx.cache_enabled or not ctx.module_hash:
        return _original_compile(self, ctx)
    key = key_for(ctx.module_hash)
    entry = lookup(key)
    n_caps, n_errs = len(session.captures), len(session.errors)
    _local.entry = entry
    try:
        result = _original_compile(self, ctx)
    finally:
        _local.entry = None
    try:
        if len(session.captures) > n_caps:  # the hook lowered and captured it
            if len(session.errors) == n_errs:
                save(session.captures[-1].dir, key)
                (session.captures[-1].dir / KEY_FILE).write_text(key + "\n")
        elif entry is not None:  # the DSL's cache hit: ours stands in for the capture
            restore(entry, session, key)
    except Exception as exc:  # the compile stands; only the cached copy is lost
        session.warn("cache", exc)
    return result


def _resolve(self: Any, ctx: Any) -> Any:
    """``CompilerBackend._resolve_compile_cache``: a DSL hit we hold no capture for becomes a miss."""
    assert _original_resolve is not None
    state = _original_resolve(self, ctx)
    if state.cache_hit and getattr(_local, "entry", None) is None and _session() is not None:
        return type(state)(module=ctx.module, cache_hit=False, load_from_file_cache=state.load_from_file_cache)
    return state


def install() -> None:
    """Wrap the DSL's compile backend (idempotent).  Raises when this release has no such seam: the
    caller then keeps the DSL's caches off for the next run (they are read at import)."""
    global _original_compile, _original_resolve
    from cutlass.base_dsl import compile_backend

    backend = compile_backend.CompilerBackend
    if _original_compile is None:
        _original_compile, _original_resolve = backend.compile, backend._resolve_compile_cache
        backend.compile = _cached_compile  # type: ignore[method-assign]
        backend._resolve_compile_cache = _resolve  # type: ignore[method-assign]


# ----------------------------------------------------------------------------------------- findings


@lru_cache(maxsize=1)
def _scan_salt() -> str:
    """The scan's own code: every module of irscan and its grammars (a dev tree changes without a new
    version), so findings stored by other code are never read back."""
    import irscan

    h = hashlib.sha256(irscan.__version__.encode())
    pkg = Path(irscan.__file__).parent
    for f in sorted([*pkg.rglob("*.py"), *pkg.parent.joinpath("grammars").glob("*.lark")]):
        h.update(f.as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:24]


def _relocate(obj: Any, old: str, new: str) -> None:
    """Point every path under ``old`` (the folder the findings were stored from) at ``new``, in place
    (an explicit stack: the result's nesting is irscan's, but no walk here recurses)."""
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, list):
            items: Any = enumerate(o)
        elif isinstance(o, dict):
            items = list(o.items())
        elif dataclasses.is_dataclass(o) and not isinstance(o, type):
            items = [(f.name, getattr(o, f.name)) for f in dataclasses.fields(o)]
        else:
            continue
        for k, v in items:
            if isinstance(v, str) and (v == old or v.startswith(old + os.sep)):
                v = new + v[len(old) :]
                if isinstance(o, (list, dict)):
                    o[k] = v
                else:
                    object.__setattr__(o, k, v)
            elif not isinstance(v, (str, int, float, bool, type(None))):
                stack.append(v)


def _content_key(folder: Path, irs: tuple[str, ...]) -> str:
    """What the scan reads, hashed: the folder's files as they are now (the program may have changed
    them after the capture), the IRs asked for and the scan's own code."""
    h = hashlib.sha256(f"{_scan_salt()}\0{'-'.join(irs)}".encode())
    for f in sorted(folder.iterdir()):
        if f.is_file() and f.name not in (HIT_FILE, KEY_FILE):
            h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:32]


def scan_cached(folder: Path, irs: tuple[str, ...], scan: Callable[[Path, tuple[str, ...]], Any]) -> Any:
    """``scan(folder, irs)``, or the findings stored for the same files, irs and scan code.  Only a
    folder this cache stored or restored has a key (where they are kept); any other is scanned as ever."""
    marker = folder / KEY_FILE
    entry = cache_root() / marker.read_text().strip() if marker.is_file() else None
    if entry is None or not entry.is_dir():
        return scan(folder, irs)
    stored = entry / f"findings-{_content_key(folder, irs)}.pickle"
    try:  # the user's own cache folder: trusted as much as their site-packages
        old, res = pickle.loads(stored.read_bytes())
        _relocate(res, old, str(folder))
        return res
    except Exception:  # missing, or unreadable: scan
        pass
    res = scan(folder, irs)
    if not res.errors:
        tmp = stored.with_name(f".{stored.name}.{os.getpid()}")
        try:
            tmp.write_bytes(pickle.dumps((str(folder), res)))
            os.replace(tmp, stored)
        except Exception:  # a read-only cache: the findings are still this scan's
            tmp.unlink(missing_ok=True)
    return res
