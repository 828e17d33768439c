"""The fast path's template caches (:mod:`irscan.frontend.mlir.templates`), kept across processes.

The grammar is what a fresh process pays most for before its first finding: importing lark and
loading the MLIR parser's tables.  The fast path needs the grammar only for op templates, aggregate
types, block-argument lists and function headers it has not seen, and captures from one DSL repeat
them from kernel to kernel; so the specs they turned into are kept in the user's cache (the folder
of :func:`irscan.frontend.lark_tables.cache_dir`), and a scan whose templates are all known imports
no lark at all.

A spec is a function of its template text and of the front-end code that read it, so the file is
named by a hash of that code (the grammar and the modules from the grammar's transformer up to the
specs): any change to them starts a new file, never a stale spec.  The file is read once per
process and written after a scan that added templates (atomically; the last writer wins); one that
cannot be read or written costs the grammar, never an error.  Past :data:`MAX_ENTRIES` templates it is no
longer rewritten.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

from irscan.frontend.mlir import templates

MAX_ENTRIES = 50_000
#: the modules whose code decides what a template becomes (with the grammar)
_CODE = ("transform.py", "transform_types.py", "records.py", "types.py", "semantics.py", "soup.py", "header.py")
_HERE = Path(__file__).resolve().parent


def _caches() -> dict[str, dict[Any, Any]]:
    return {"t": templates._TCACHE, "e": templates._ECACHE, "l": templates._LCACHE, "h": templates.HCACHE}


class _State:
    loaded = False
    #: entries in the caches right after loading (a scan that adds none writes nothing)
    size = 0


def store_path() -> Path | None:
    """The store's file for this code (None: no cache folder to keep it in)."""
    from irscan.frontend.lark_tables import cache_dir
    from irscan.resources import grammar_path

    folder = cache_dir()
    if folder is None or os.environ.get("IRSCAN_NO_SPEC_STORE"):
        return None
    h = hashlib.sha256(grammar_path("mlir.lark").read_bytes())
    for name in _CODE:
        h.update((_HERE / name).read_bytes())
    h.update(repr(sys.version_info[:2]).encode())
    return folder / f"mlir-specs-{h.hexdigest()[:16]}.pickle"


def _total() -> int:
    return sum(len(c) for c in _caches().values())


def load() -> None:
    """Fill the process's caches from the store (once per process)."""
    if _State.loaded:
        return
    _State.loaded = True
    try:
        path = store_path()
        if path is None or not path.exists():
            return
        with path.open("rb") as f:
            saved = pickle.load(f)
        for key, cache in _caches().items():
            for k, v in saved.get(key, {}).items():
                cache.setdefault(k, v)
        for spec in (*templates._TCACHE.values(), *templates._ECACHE.values()):
            if spec.getops is None:
                spec.templatize()
    except Exception:  # noqa: BLE001 -- an unreadable store is no store: the grammar rebuilds what is needed
        for cache in _caches().values():
            cache.clear()
    _State.size = _total()


def save() -> None:
    """Write the caches to the store if this process added templates to them."""
    if _total() <= _State.size:
        return
    try:
        path = store_path()
        if path is None:
            return
        data = {key: dict(cache) for key, cache in _caches().items()}
        if sum(len(c) for c in data.values()) > MAX_ENTRIES:
            return
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".specs-")
        try:
            with os.fdopen(fd, "wb") as f:
                pickle.dump(data, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except Exception:  # noqa: BLE001 -- a store that cannot be written only costs the next process the grammar
        return
    _State.size = _total()
