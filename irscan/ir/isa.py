"""What the PTX ISA fixes about special registers, shared by both front ends and the ranges.

Both front ends name a special register as PTX does (``tid.x``, ``cluster_ctarank``, ``lanemask_eq``):
:func:`sreg_name` turns NVVM's spelling (``cluster.ctarank``) into it, and an SREG op carries the ISA's
range (:data:`SREG_RANGES`) unless the IR states a tighter one.
"""

from __future__ import annotations

#: PTX ISA limits of the special registers (inclusive), by their PTX names; both front ends and the
#: range analysis read them.
SREG_RANGES: dict[str, tuple[int, int]] = {
    "tid.x": (0, 1023), "tid.y": (0, 1023), "tid.z": (0, 63),
    "ntid.x": (1, 1024), "ntid.y": (1, 1024), "ntid.z": (1, 64),
    "ctaid.x": (0, 2**31 - 1), "ctaid.y": (0, 65534), "ctaid.z": (0, 65534),
    "nctaid.x": (1, 2**31 - 1), "nctaid.y": (1, 65535), "nctaid.z": (1, 65535),
    "laneid": (0, 31), "warpid": (0, 63), "nwarpid": (1, 64),
    "clusterid.x": (0, 2**31 - 1), "clusterid.y": (0, 65534), "clusterid.z": (0, 65534),
    "nclusterid.x": (1, 2**31 - 1), "nclusterid.y": (1, 65535), "nclusterid.z": (1, 65535),
    "cluster_ctaid.x": (0, 15), "cluster_ctaid.y": (0, 15), "cluster_ctaid.z": (0, 15),
    "cluster_nctaid.x": (1, 16), "cluster_nctaid.y": (1, 16), "cluster_nctaid.z": (1, 16),
    "cluster_ctarank": (0, 15), "cluster_nctarank": (1, 16),
}  # fmt: skip

#: values the hardware hands out that are the id of one CTA of the launched grid, by the special register
#: they range as: cluster launch control's cancelled CTA (a persistent kernel's next tile), named
#: ``clc_ctaid.{x,y,z}``.  They share ctaid's range and the host grid's bound, but no launch pins which
#: CTAs come back (the analysis keeps them free).
CTA_ID_OF = {"clc_ctaid": "ctaid"}
SREG_RANGES.update({f"clc_ctaid.{a}": SREG_RANGES[f"ctaid.{a}"] for a in "xyz"})
#: how each IR spells the query of a cancelled CTA's id: MLIR's ``query = get_first_cta_id_y``
#: (nvvm.clusterlaunchcontrol.query.cancel), PTX's ``get_first_ctaid::y`` modifier
#: (clusterlaunchcontrol.query_cancel)
_CTA_ID_QUERIES = {q + a: f"clc_ctaid.{a}" for q in ("get_first_cta_id_", "get_first_ctaid::") for a in "xyz"}

_AXES = (".x", ".y", ".z")


def cta_id_query(spelling: str) -> str | None:
    """The special register (``clc_ctaid.y``) a cluster-launch-control query returns, from its spelling
    in either IR (``get_first_cta_id_y``, ``get_first_ctaid::y``); None for other queries (is_canceled)."""
    return _CTA_ID_QUERIES.get(spelling)


def sreg_name(name: str) -> str:
    """A special register's PTX name from NVVM's (``cluster.ctaid.x`` -> ``cluster_ctaid.x``).

    NVVM writes ``.`` where PTX writes ``_``, except before the axis; PTX names come back unchanged.
    """
    axis = name[-2:] if name.endswith(_AXES) else ""
    return name[: len(name) - len(axis)].replace(".", "_") + axis


#: Bit counts: popcount, count of leading / trailing zeros.  Their result is at most the operand's bit
#: width whatever the operand, a fact the range analysis needs where a set bit of a mask picks an
#: element (a 32-bit ``popc`` is in [0, 32], never the i32 range).  MLIR intrinsics, PTX opcodes, and the
#: PTX statement of a one-statement ``llvm.inline_asm`` (``clz.b32 $0, $1;``).
_BIT_COUNT_INTRINSICS = ("llvm.intr.ctpop", "llvm.intr.ctlz", "llvm.intr.cttz")
_BIT_COUNT_OPCODES = ("popc", "clz")


def bit_count_limit(name: str, asm: str = "", operand_width: int | None = None) -> int | None:
    """The largest result of a bit-count op (its operand's width), None when ``name`` (an op name, or
    ``llvm.inline_asm`` with its PTX text ``asm``) is not one."""
    if name in _BIT_COUNT_INTRINSICS:
        return operand_width or None
    words = asm.strip().rstrip(";").split() if name == "llvm.inline_asm" and asm.count(";") <= 1 else [name]
    if not words:
        return None
    opcode, _, typ = words[0].partition(".")
    if opcode in _BIT_COUNT_OPCODES and typ in ("b32", "b64"):
        return int(typ[1:])
    return None
