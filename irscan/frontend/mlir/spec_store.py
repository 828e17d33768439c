"""The fast path's template specs (:mod:`irscan.frontend.mlir.templates`), kept across processes.

The grammar is what a fresh process pays most for before its first finding: importing lark and
loading the MLIR parser's tables.  The fast path needs the grammar only for op templates, aggregate
types, block-argument lists and function headers it has not seen, and captures from one DSL repeat
them from kernel to kernel; so what they turned into is kept in the user's cache (the folder of
:func:`irscan.frontend.lark_tables.cache_dir`), and a scan whose templates are all known imports no
lark at all.

A spec is a function of its template text and of the code that read it, so the file is named by a
hash of that code (the grammar, the MLIR front end and the IR vocabulary): any change to them starts
a new file, never a stale spec.  The file maps each template to its pickled spec, unpickled only
when a scan asks for that template, so reading it costs little however many kernels filled it.  It
is read once per process and rewritten after a scan that added templates (atomically; the last
writer wins); past :data:`MAX_BYTES` it starts over, and writing it removes the stores of other
code.  A file that cannot be read or written costs the grammar, never an error.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

MAX_BYTES = 32 << 20
_HERE = Path(__file__).resolve().parent
#: the code that decides what a template becomes and what the stored objects are: the MLIR front end
#: and the IR vocabulary (a field added to ir.Param must not meet Params pickled without it)
_CODE = (_HERE, _HERE.parent.parent / "ir")


class _Store:
    loaded = False
    path: Path | None = None
    #: kind ("t" op template, "e" aggregate type, "l" block arguments, "h" function header) -> key -> pickle
    raw: dict[str, dict[Any, bytes]] = {}
    #: what this process added, not yet written
    new: dict[str, dict[Any, Any]] = {}


def store_path() -> Path | None:
    """The store's file for this code (None: no cache folder to keep it in)."""
    from irscan.frontend.lark_tables import cache_dir
    from irscan.resources import grammar_path

    folder = cache_dir()
    if folder is None or os.environ.get("IRSCAN_NO_SPEC_STORE"):
        return None
    h = hashlib.sha256(grammar_path("mlir.lark").read_bytes())
    for code in _CODE:
        for src in sorted(code.glob("*.py")):
            h.update(src.name.encode() + b"\0" + src.read_bytes())
    h.update(repr(sys.version_info[:2]).encode())
    return folder / f"mlir-specs-{h.hexdigest()[:16]}.pickle"


def _load() -> None:
    _Store.loaded = True
    try:
        _Store.path = store_path()
        if _Store.path is not None and _Store.path.exists():
            with _Store.path.open("rb") as f:
                raw = pickle.load(f)
            if isinstance(raw, dict):
                _Store.raw = raw
    except Exception:  # noqa: BLE001 -- an unreadable store is no store: the grammar makes what is needed
        _Store.raw = {}


def get(kind: str, key: Any) -> Any:
    """What ``key`` of ``kind`` turned into in an earlier process, or None."""
    if not _Store.loaded:
        _load()
    blob = _Store.raw.get(kind, {}).get(key)
    if blob is None:
        return None
    try:
        return pickle.loads(blob)
    except Exception:  # noqa: BLE001 -- a damaged entry: parse the template again
        return None


def put(kind: str, key: Any, value: Any) -> None:
    """Remember what ``key`` of ``kind`` turned into (written by :func:`save`)."""
    _Store.new.setdefault(kind, {})[key] = value


def save() -> None:
    """Write the entries this process added to the store (merged with what it holds)."""
    if not _Store.new:
        return
    new, _Store.new = _Store.new, {}
    try:
        if not _Store.loaded:
            _load()
        path = _Store.path
        if path is None:
            return
        raw = {kind: dict(entries) for kind, entries in _Store.raw.items()}
        for kind, entries in new.items():
            raw.setdefault(kind, {}).update((k, pickle.dumps(v, pickle.HIGHEST_PROTOCOL)) for k, v in entries.items())
        data = pickle.dumps(raw, pickle.HIGHEST_PROTOCOL)
        if len(data) > MAX_BYTES:  # start over with this scan's templates
            raw = {kind: {k: raw[kind][k] for k in entries} for kind, entries in new.items()}
            data = pickle.dumps(raw, pickle.HIGHEST_PROTOCOL)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".specs-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
            for other in path.parent.glob("mlir-specs-*.pickle"):  # stores of code that is gone
                if other != path:
                    other.unlink(missing_ok=True)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        _Store.raw = raw
    except Exception:  # noqa: BLE001 -- a store that cannot be written only costs the next process the grammar
        return
