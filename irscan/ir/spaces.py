"""One address-space vocabulary for both IRs.

MLIR numbers its pointers' address spaces (``!llvm.ptr<3>``), PTX names state spaces (``.shared``,
``.shared::cluster``); both front ends translate theirs with :func:`from_nvvm` / :func:`from_ptx`, so
``Op.space`` is an :class:`AddressSpace` and nothing above the front ends reads either spelling.
"""

from __future__ import annotations

from enum import Enum


class AddressSpace(str, Enum):
    """Where a pointer points.  The value is the name reports print (``"global"``)."""

    GLOBAL = "global"
    SHARED = "shared"  # the CTA's own shared memory (PTX .shared, .shared::cta; NVVM 3)
    SHARED_CLUSTER = "shared_cluster"  # a peer CTA's shared memory (PTX .shared::cluster; NVVM 7)
    LOCAL = "local"  # per-thread stack (PTX .local; NVVM 5; an alloca)
    CONST = "const"
    PARAM = "param"  # kernel parameters (PTX .param; NVVM 101)
    GENERIC = "generic"  # any of the above, decided at run time (NVVM 0)
    TENSOR = "tensor"  # Blackwell tensor memory (PTX tcgen05 [taddr]; NVVM 6)
    OTHER = "other"  # a space neither table names

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


#: NVVM address-space numbers (the NVPTX backend's numbering)
_NVVM = {
    "0": AddressSpace.GENERIC, "1": AddressSpace.GLOBAL, "3": AddressSpace.SHARED, "4": AddressSpace.CONST,
    "5": AddressSpace.LOCAL, "6": AddressSpace.TENSOR, "7": AddressSpace.SHARED_CLUSTER, "101": AddressSpace.PARAM,
}  # fmt: skip

#: PTX state spaces, with their sub-qualifiers
_PTX = {
    "global": AddressSpace.GLOBAL, "shared": AddressSpace.SHARED, "shared::cta": AddressSpace.SHARED,
    "shared::cluster": AddressSpace.SHARED_CLUSTER, "local": AddressSpace.LOCAL, "const": AddressSpace.CONST,
    "param": AddressSpace.PARAM, "param::entry": AddressSpace.PARAM, "param::func": AddressSpace.PARAM,
    "generic": AddressSpace.GENERIC, "tmem": AddressSpace.TENSOR,
}  # fmt: skip


def from_nvvm(number: str) -> AddressSpace:
    """``"3"`` (from ``!llvm.ptr<3>``) -> SHARED."""
    return _NVVM.get(number.strip(), AddressSpace.OTHER)


def from_ptx(name: str) -> AddressSpace:
    """``"shared::cluster"`` (a state space as the opcode writes it, without the dot) -> SHARED_CLUSTER."""
    return _PTX.get(name.lstrip("."), AddressSpace.OTHER)
