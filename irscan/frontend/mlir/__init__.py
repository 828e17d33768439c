"""LLVM-dialect MLIR -> :class:`irscan.ir.Module` (see :mod:`irscan.frontend.mlir.assemble`).

The names below load :mod:`~irscan.frontend.mlir.assemble` on first use (PEP 562), so that importing
one part (the capture hook's :mod:`~irscan.frontend.mlir.locations`) does not load the whole front end.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from irscan.frontend.mlir.assemble import op_sequence, parse_file, parse_module, strip_locations

__all__ = ["parse_module", "parse_file", "op_sequence", "strip_locations"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from irscan.frontend.mlir import assemble

        return getattr(assemble, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
