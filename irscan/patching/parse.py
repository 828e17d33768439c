"""Read a captured LLVM-dialect module back into the DSL's bindings (offline ``irscan patch``).

Print -> ``ir.Module.parse`` is not a round trip in this DSL build (shared/docs/patch-and-guard.md):
``nvvm.barrier loc(#locN)`` fails, because the op's custom parser reads the trailing ``loc(...)`` as
its optional reduction attribute.  That one op's location is dropped before parsing (``nvvm.barrier`` and its
operands, no ``loc``); nothing else in the text is touched.  In-process patch mode never parses.
"""

from __future__ import annotations

import re
from typing import Any

_BARRIER_LOC = re.compile(r"^(\s*nvvm\.barrier\b[^\n]*?)[ \t]+loc\([^()\n]*\)[ \t]*$", re.M)


def parse_module(text: str) -> Any:
    """An ``ir.Module`` in the current context (the caller holds ``with ir.Context():``)."""
    from cutlass._mlir import ir

    return ir.Module.parse(  # type: ignore[attr-defined]
        _BARRIER_LOC.sub(r"\1", text)
    )
