"""Read a captured LLVM-dialect module back into the DSL's bindings (offline ``irscan patch``).

Print -> ``ir.Module.parse`` is not a round trip in this DSL build (shared/docs/patch-and-guard.md):
``nvvm.barrier loc(#locN)`` fails, because the op's custom parser reads the trailing ``loc(...)`` as
its optional reduction attribute.  That one op's location is dropped before parsing (``nvvm.barrier`` and its
operands, no ``loc``); nothing else in the text is touched.  In-process patch mode never parses.
"""

from __future__ import annotations

import re
from typing import Any

from irscan.ir import IRSyntaxError

_BARRIER_LOC = re.compile(r"^(\s*nvvm\.barrier\b[^\n]*?)[ \t]+loc\([^()\n]*\)[ \t]*$", re.M)


_AT = re.compile(r'^loc\("-":(\d+):(\d+)\)$')  # a location in the parsed text itself ("-": no file name)


def parse_module(text: str, path: str | None = None) -> Any:
    """An ``ir.Module`` in the current context (the caller holds ``with ir.Context():``).  With ``path``
    (the user's file), text the DSL's parser refuses is bad input (:func:`dsl_error`)."""
    from cutlass._mlir import ir

    try:
        return ir.Module.parse(  # type: ignore[attr-defined]
            _BARRIER_LOC.sub(r"\1", text)
        )
    except ir.MLIRError as exc:  # type: ignore[attr-defined]
        if path is None:
            raise
        raise dsl_error(exc, text, path, "the DSL's MLIR parser refuses it") from None


def dsl_error(exc: Any, text: str, path: str, what: str) -> IRSyntaxError:
    """The DSL's ``MLIRError`` about a module parsed from ``text`` (the user's ``path``) as bad input, at
    its first error's location when that is a place in ``text`` (dropping a barrier's ``loc`` shifts no
    line, nor anything before it on its line), else at 1:1 with the location named."""
    diag = next(iter(exc.error_diagnostics), None)
    loc, why = (str(diag.location), str(diag.message)) if diag is not None else ("", str(exc))
    at = _AT.match(loc)
    line, col = (int(at[1]), int(at[2])) if at else (1, 1)
    lines = text.split("\n")  # kept inside the file: MLIR counts bytes, and may point past the end
    line = min(max(line, 1), len(lines))
    col = min(max(col, 1), len(lines[line - 1]) + 1)
    where = f" (at {loc})" if loc and not at else ""
    first = (why.strip().splitlines() or [""])[0][:300]
    return IRSyntaxError(path, line, col, f"{what}: {first}{where}", ["MLIR the DSL reads and lowers"])
