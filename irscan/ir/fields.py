"""One way to name a field of a kernel parameter, whichever IR reads it.

A CuTe tensor reaches a kernel as a struct passed by value.  PTX reads a field with ``ld.param`` at a
byte offset into the parameter; MLIR with ``llvm.extractvalue`` at a path into the parameter's struct
type, which the analysis resolves to the same byte offset through the struct's layout.  Either way the
field is a :class:`ParamField`, and the field names (``arg1.stride[0]``) are looked up by it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ParamField:
    """``width`` bits at byte ``offset`` of kernel parameter ``param`` (its index in the signature)."""

    param: int
    offset: int
    width: int
