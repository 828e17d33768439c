"""irscan's LALR parsers, built from ``grammars/*.lark`` once per grammar and lark version, and
their tables kept in the user's cache.

Building the MLIR parser (LALR analysis of ``grammars/mlir.lark``) takes about 0.4 s; loading its
serialized tables takes about 20 ms.  :func:`build` passes lark a cache file of ours (lark's own
``cache=`` mechanism: the file starts with a hash of the grammar text and the options, and lark
rebuilds and rewrites it when the hash differs), so a changed grammar or another lark is rebuilt,
never read stale.

Where: ``$IRSCAN_CACHE_DIR``, else ``$XDG_CACHE_HOME/irscan``, else ``~/.cache/irscan``; one file
per grammar, named by a hash of its text, the options and the lark and Python versions, so two
installs of irscan do not overwrite each other's tables.  Not lark's default (``cache=True``):
that puts the pickled tables in the shared temporary folder under a predictable name, and loading
a pickle someone else planted there runs their code.  A cache folder that cannot be made, read or
written costs the build, never an error.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

#: how every irscan grammar is parsed (the design card: LALR with a contextual lexer)
LALR = {"parser": "lalr", "lexer": "contextual"}


def cache_root() -> Path:
    """irscan's cache folder, made or not: ``$IRSCAN_CACHE_DIR``, else ``$XDG_CACHE_HOME/irscan``, else
    ``~/.cache/irscan`` (the grammar tables; the capture cache keeps ``captures/`` in it)."""
    root = os.environ.get("IRSCAN_CACHE_DIR")
    if root:
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "irscan"


def cache_dir() -> Path | None:
    """The folder the tables are kept in (made if missing), or None when there is none to use."""
    folder = cache_root()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError):  # RuntimeError: no home directory to expand
        return None
    return folder if os.access(folder, os.W_OK | os.R_OK) else None


def table_path(name: str, grammar_text: str, options: dict[str, Any]) -> Path | None:
    """Where the tables of grammar ``name`` with these ``options`` are kept (None: nowhere)."""
    import lark

    folder = cache_dir()
    if folder is None:
        return None
    h = hashlib.sha256()
    for part in (grammar_text, repr(sorted(options.items())), lark.__version__, repr(sys.version_info[:2])):
        h.update(part.encode())
        h.update(b"\0")
    return folder / f"{name}-{h.hexdigest()[:16]}.lark-tables"


def build(grammar: Path, transformer: Any = None, **options: Any) -> Any:
    """``lark.Lark`` over ``grammar`` (LALR, contextual lexer, ``options``), tables from the cache.

    ``transformer`` (embedded in the parser) is not part of the tables: lark attaches it on load.
    """
    from lark import Lark

    text = grammar.read_text()
    opts = {**LALR, **options}
    path = table_path(grammar.stem, text, opts)
    return Lark(text, transformer=transformer, cache=str(path) if path is not None else False, **opts)
