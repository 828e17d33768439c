"""The grammar module, imported on first use: the fast path needs the grammar only for templates it
has not seen (kept across processes by :mod:`irscan.frontend.mlir.spec_store`), so a scan whose
templates are all known never imports lark or loads its parser tables."""

from __future__ import annotations

import sys
from types import ModuleType


def grammar() -> ModuleType:
    """:mod:`irscan.frontend.mlir.grammar` (imported now if it was not)."""
    from irscan.frontend.mlir import grammar as g

    return g


def is_parse_error(exc: BaseException) -> bool:
    """Whether ``exc`` is lark's error on bad text (false without importing lark: when lark was never
    imported, no lark error can have been raised)."""
    mod = sys.modules.get("lark.exceptions")
    return mod is not None and isinstance(exc, mod.UnexpectedInput)
