"""The roles of an NVVM memory op's pointer operands: the one table of the MLIR front end.

Ops without an LLVM rule (``nvvm.*``, ``llvm.intr.*``, inline asm) become MEMOP when an operand is a
pointer.  An ``llvm.inline_asm`` whose PTX is a memory statement takes that statement's kind (LOAD,
STORE, ATOMIC, MEMOP) and its address and tensor-map operands, whatever their types (an ``i64`` from
``llvm.ptrtoint``), as the PTX front end reads them (:mod:`irscan.frontend.mlir.asm`).
Each pointer operand is an element address unless the table below says it is a tensor map
(``CUtensorMap``: the TMA unit computes the element address from the map and the box coordinates, so
the map's own address is not an element address).  ``Op.addr`` is the element address in global
memory where there is one (``nvvm.cp.async.shared.global %dst, %src``: the global source ``%src``,
not the shared destination; ``nvvm.cp.async.bulk.shared.cluster.global``: likewise), else a generic
one, else the first (shared, tensor memory: a small window the checks know from its space);
``attrs["addrs"]`` lists every element address ``(operand index, space, 0, False)`` when there are
several (the PTX front end's format); ``attrs["tensor_map"]`` the operand index of a map.
"""

from __future__ import annotations

from irscan import ir
from irscan.frontend.mlir.asm import AsmMemory
from irscan.frontend.mlir.types import is_ptr_text, ptr_space, space_name
from irscan.ir import AddressSpace, Kind

#: op name -> the role of each of its pointer operands, in order ("map": a tensor map, "data": an
#: element address); ops not named here: every pointer operand is an element address
ROLES: dict[str, tuple[str, ...]] = {
    "nvvm.cp.async.bulk.tensor.shared.cluster.global": ("data", "map", "data"),  # dst smem, map, mbarrier
    "nvvm.cp.async.bulk.tensor.global.shared.cta": ("map", "data"),  # map, src smem
    "nvvm.cp.async.bulk.tensor.reduce": ("map", "data"),
    "nvvm.cp.async.bulk.tensor.prefetch": ("map",),
    "nvvm.prefetch.tensormap": ("map",),
}


#: NVVM ops that are plain loads and stores with a cache hint (newer DSL releases emit them for
#: ``evict_first`` copies): LOAD / STORE like ``llvm.load`` / ``llvm.store``, the pointer their address
KINDS = {"nvvm.load.ext": Kind.LOAD, "nvvm.store.ext": Kind.STORE}


def _roles(op: ir.Op) -> tuple[str, ...]:
    if op.name == "nvvm.prefetch" and " tensormap" in op.text.split(":")[0]:
        return ("map",)  # ``nvvm.prefetch tensormap, %p``
    return ROLES.get(op.name, ())


def set_address(op: ir.Op, types: dict[str, str]) -> None:
    """Make ``op`` a MEMOP with its address slots, if any operand is a pointer; an inline asm whose
    PTX is a memory statement (:mod:`irscan.frontend.mlir.asm`) gets that statement's kind and roles."""
    mem = op.attrs.pop("asm_memory", None)
    if isinstance(mem, AsmMemory) and mem.operands == len(op.operands):
        _set_asm(op, mem, types)
        return
    roles = _roles(op)
    data: list[tuple[int, AddressSpace]] = []
    k = 0
    for i, v in enumerate(op.operands):
        t = types.get(v)  # type: ignore[arg-type]
        if not is_ptr_text(t):
            continue
        role = roles[k] if k < len(roles) else "data"
        k += 1
        if role == "map":
            op.attrs.setdefault("tensor_map", i)
            continue
        sp = space_name(ptr_space(t))  # type: ignore[arg-type]
        data.append((i, sp if sp is not None else AddressSpace.GENERIC))
    if k == 0:
        return
    op.kind = KINDS.get(op.name, Kind.MEMOP)
    _pick(op, data)


def _set_asm(op: ir.Op, mem: AsmMemory, types: dict[str, str]) -> None:
    """The asm's own roles.  Its PTX names the space; a generic address that is a typed pointer
    operand takes the pointer's space (what ``ld.u32 [$1]`` reaches is where ``$1`` points)."""
    data: list[tuple[int, AddressSpace]] = []
    for i, sp in mem.addrs:
        t = types.get(op.operands[i])  # type: ignore[arg-type]
        if sp is AddressSpace.GENERIC and is_ptr_text(t):
            sp = space_name(ptr_space(t)) or sp  # type: ignore[arg-type]
        data.append((i, sp))
    op.kind = mem.kind
    op.attrs["asm_op"] = mem.opcode
    if mem.tensor_map is not None:
        op.attrs["tensor_map"] = mem.tensor_map
    _pick(op, data)


def _pick(op: ir.Op, data: list[tuple[int, AddressSpace]]) -> None:
    """``Op.addr`` / ``Op.space`` from the element addresses ``data``: the global one, else a generic
    one, else the first; all of them in ``attrs["addrs"]`` when there are several."""
    if not data:
        return  # only a tensor map: no element address
    pick = next((d for d in data if d[1] is AddressSpace.GLOBAL), None)
    pick = pick or next((d for d in data if d[1] is AddressSpace.GENERIC), data[0])
    op.addr, op.space = pick
    if len(data) > 1:
        op.attrs["addrs"] = tuple((i, sp.value, 0, False) for i, sp in data)
