"""The roles of a PTX instruction's ``[address]`` operands: the one table of the PTX front end.

Every ``[...]`` operand of a memory instruction is one of: an element address (what ``ld``/``st``
vector forms, ``atom``/``red``, ``cp.async`` and its bulk forms, ``prefetch``, ``ldmatrix``/
``stmatrix``, ``mbarrier`` read or write through), or a *handle*: a tensor map (``CUtensorMap``; the
TMA unit computes the element address from the map and the coordinates inside the brackets, so the
map's own address is not an element address), a texture or a surface.  (``tensormap.replace`` and
``tensormap.cp_fenceproxy`` write a map's bytes: there the map's address is an element address.)
The state space of each address comes from the opcode's spaces in order (``cp.async.ca.shared.global
[dst], [src]``); an address past them is the trailing ``[mbarrier]`` of TMA / ``st.async`` (shared).

:func:`address_roles` sets what the analysis reads: ``Op.addr`` is the element address in global
memory where there is one (``cp.async``'s global source, not its shared destination), else the
first element address (shared, tensor memory: a small window, not this bug class, which the checks
know from its space); ``attrs["addrs"]`` lists every element address ``(operand index, space,
displacement, is a symbol)`` when there are several; ``attrs["tensor_map"]`` the operand index of a
handle.
"""

from __future__ import annotations

from typing import Any

from irscan.frontend.ptx.ast import Addr
from irscan.frontend.ptx.names import FunctionNames
from irscan.frontend.ptx.opcodes import OpcodeRule
from irscan.ir import AddressSpace
from irscan.ir.spaces import from_ptx

#: opcode prefix -> which of its [address] operands are handles, not element addresses:
#: "coords" = the one carrying coordinates (``[tmap, {%r1, %r2}]``), "all" = every one
HANDLES = {
    "cp.async.bulk.tensor": "coords",  # TMA load (shared <- tensor map) and store (tensor map <- shared)
    "cp.reduce.async.bulk.tensor": "coords",
    "cp.async.bulk.prefetch.tensor": "coords",
    "prefetch.tensormap": "all",  # prefetch{.space}.tensormap [a]: the map itself
    "prefetch.global.tensormap": "all",
    "prefetch.param.tensormap": "all",
    "prefetch.const.tensormap": "all",
    "tex": "all", "tld4": "all", "txq": "all",  # texture handles
    "suld": "all", "sust": "all", "sured": "all", "suq": "all",  # surface handles
}  # fmt: skip


def _handles(opcode: str) -> str | None:
    parts = opcode.split(".")
    for k in range(len(parts), 0, -1):
        h = HANDLES.get(".".join(parts[:k]))
        if h is not None:
            return h
    return None


def address_roles(
    r: OpcodeRule, opcode: str, addrs: list[tuple[int, Addr]], names: FunctionNames, attrs: dict[str, Any]
) -> tuple[int | None, AddressSpace | None]:
    """``(Op.addr, Op.space)`` for an instruction with ``[address]`` operands ``addrs`` (operand index,
    the address); the displacement, symbol, space qualifier and the lists above go into ``attrs``."""
    handles = _handles(opcode)
    infos = []
    for k, (idx, a) in enumerate(addrs):
        if handles == "all" or (handles == "coords" and a.extra):
            attrs.setdefault("tensor_map", idx)
            continue
        if k < len(r.spaces):
            full = r.spaces[k]
        elif r.root == "tcgen05" and not r.spaces:
            full = "tmem"
        elif k == 0:
            full = "generic"
        else:
            full = "shared" if r.spaces else "generic"  # the trailing [mbarrier] of TMA / st.async
        b = a.base
        sym = isinstance(b, str) and not names.is_reg(b)
        infos.append((idx, full, a.disp, sym))
    if not infos:
        return None, None
    pick = next((k for k, inf in enumerate(infos) if inf[1].startswith("global")), 0)
    idx, full, disp, sym = infos[pick]
    base_space = full.split("::")[0]
    if full != base_space:
        attrs["space_qual"] = full
    if disp:
        attrs["disp"] = disp
    if sym:
        attrs["symbol"] = True
    if len(infos) > 1:
        attrs["addrs"] = tuple((i, f.split("::")[0], d, s) for i, f, d, s in infos)
    return idx, from_ptx(full)
