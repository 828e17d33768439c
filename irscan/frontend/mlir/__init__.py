"""LLVM-dialect MLIR -> :class:`irscan.ir.Module` (see :mod:`irscan.frontend.mlir.assemble`)."""

from irscan.frontend.mlir.assemble import op_sequence, parse_file, parse_module, strip_locations

__all__ = ["parse_module", "parse_file", "op_sequence", "strip_locations"]
