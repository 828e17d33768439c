"""The vocabulary both front ends produce (plain data); everything above this floor speaks it."""

from irscan.ir.errors import IRSyntaxError
from irscan.ir.fields import PTR, ParamField, Shape
from irscan.ir.isa import SREG_RANGES, sreg_name
from irscan.ir.ops import (
    MEMORY_KINDS,
    Block,
    Function,
    IRKind,
    Kind,
    Loc,
    Module,
    Op,
    Operand,
    Param,
    Successor,
)
from irscan.ir.spaces import AddressSpace

__all__ = [
    "IRSyntaxError", "SREG_RANGES", "MEMORY_KINDS", "Block", "Function", "IRKind", "Kind", "Loc",
    "Module", "Op", "Operand", "Param", "Successor", "ParamField", "PTR", "Shape", "AddressSpace",
    "sreg_name",
]  # fmt: skip
