"""One way to name a field of a kernel parameter, whichever IR reads it.

A CuTe tensor reaches a kernel as a struct passed by value.  PTX reads a field with ``ld.param`` at a
byte offset into the parameter; MLIR with ``llvm.extractvalue`` at a path into the parameter's struct
type, which the analysis resolves to the same byte offset through the struct's layout.  Either way the
field is a :class:`ParamField`, and the field names (``arg1.stride[0]``) are looked up by it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

#: A pointer member of a :data:`Shape`
PTR = "ptr"

#: A by-value parameter's type as the analysis reads it: an integer's width in bits, :data:`PTR`, a
#: tuple of members (a struct, in order), or None for anything else (floats, arrays, vectors, packed
#: structs).  MLIR's front end derives it from the declared type; PTX declares byte arrays (None).
Shape = Union[int, str, tuple["Shape", ...], None]  # noqa: UP007 (a runtime alias on Python 3.10)


@dataclass(frozen=True, slots=True)
class ParamField:
    """``width`` bits at byte ``offset`` of kernel parameter ``param`` (its index in the signature)."""

    param: int
    offset: int
    width: int
