"""Which operands of an ``llvm.inline_asm`` are memory addresses: its PTX read by the PTX front end.

CuTe DSL code issues loads and stores as inline PTX (``ld.global.v4.u32 {$0, $1, $2, $3}, [$4];``
with constraints ``"=r,=r,=r,=r,l"``, the address an ``i64`` made by ``llvm.ptrtoint`` of a GEP).
The MLIR sees only an opaque call; the asm string says what it does.  :func:`asm_memory` reads the
string as PTX statements with the PTX front end's own operand decoder and opcode rules
(:func:`irscan.frontend.ptx.instr.lower_instr`: kind, state space, which ``[...]`` is an element
address and which a tensor map), with each ``$N`` standing for a register ``%$N``, and maps every
address back to the asm operand it comes from through the constraint string: operands are numbered
over the constraints in order (clobbers ``~{...}`` have no number), and a direct output (``=r``,
``=&r``) is a result, every other constraint (inputs, tied ``0``, indirect ``=*m`` / ``*m``) the next
operand of the op.  An address held in a register the asm computes itself is followed back through
copies, ``cvta`` and ``add`` of an immediate to the ``$N`` it starts from.

Anything else (no ``[...]``, no memory statement, an address that starts nowhere in the operands, a
statement the decoder does not know) gives None: the op stays as the generic rule leaves it.
Linear in the string: one split at ``;``, anchored patterns, one decode per statement.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from irscan.frontend.ptx.ast import Instr
from irscan.frontend.ptx.fast_operands import operands as decode_operands
from irscan.frontend.ptx.instr import lower_instr
from irscan.frontend.ptx.lexical import NAME_P, OPCODE_END_P, OPCODE_P, Bail, blank_comments
from irscan.frontend.ptx.names import FunctionNames
from irscan.ir import MEMORY_KINDS, AddressSpace, Kind, Op
from irscan.ir.spaces import from_ptx

#: LLVM's operand references: ``$N``, ``${N}``, ``${N:modifier}``, and ``$$`` (a literal ``$``)
_REF = re.compile(r"\$(?:(\d+)|\{(\d+)(?::\w*)?\}|(\$))")
_LABEL = re.compile(rf"[ \t\r\n\f{{}}]*{NAME_P}[ \t]*:(?!:)")
_HEAD = re.compile(rf"[ \t\r\n\f{{}}]*(?:@(!?{NAME_P})[ \t\r\n]+)?({OPCODE_P}){OPCODE_END_P}")
#: a placeholder register as the decoder returns it (``%$4``), with the operand number
_PLACEHOLDER = re.compile(r"%\$(\d{1,6})")


@dataclass(frozen=True, slots=True)
class AsmMemory:
    """What an inline asm does to memory: ``kind`` (LOAD, STORE, ATOMIC, or MEMOP when its statements
    differ), each element address as ``(operand index, space)``, the operand index of a tensor map,
    how many operands its constraints take, and the first memory statement's opcode (for reports)."""

    kind: Kind
    addrs: tuple[tuple[int, AddressSpace], ...]
    tensor_map: int | None
    operands: int
    opcode: str


def operand_slots(constraints: str) -> tuple[tuple[int | None, ...], int]:
    """For each ``$N`` (in order), the index of the op operand it names, None for a result; and the
    number of operands."""
    slots: list[int | None] = []
    k = 0
    for c in constraints.split(","):
        c = c.strip()
        if c.startswith("~"):
            continue  # a clobber: no operand and no number
        if c.startswith("=") and not c[1:].lstrip("&").startswith("*"):
            slots.append(None)  # a direct output: the op's result
        else:
            slots.append(k)
            k += 1
    return tuple(slots), k


def _placeholders(asm: str) -> str:
    """``$4`` -> ``%$4`` (a register name the PTX decoder reads), ``$$`` -> ``$``."""

    def sub(m: re.Match[str]) -> str:
        return "$" if m.group(3) else "%$" + (m.group(1) or m.group(2))

    return _REF.sub(sub, asm)


#: how many copies, ``cvta`` and ``add`` an address may go through inside the asm (an address is short)
_CHAIN = 8


def _statements(asm: str) -> tuple[list[Op], list[tuple[int | None, ...]]]:
    """The asm's instructions lowered by the PTX front end (directives and statements it does not know
    skipped), and for each, the statement that defines each of its operands (None: none before it)."""
    names = FunctionNames()
    ops: list[Op] = []
    origin: list[tuple[int | None, ...]] = []
    last: dict[object, int] = {}
    for stmt in blank_comments(_placeholders(asm)).split(";"):
        pos = 0
        while (lab := _LABEL.match(stmt, pos)) is not None:
            pos = lab.end()
        m = _HEAD.match(stmt, pos)
        if m is None:
            continue  # a directive (``.reg .b32 lo;``), a brace, or nothing PTX
        try:
            args = decode_operands(stmt[m.end() :])
        except Bail:
            continue
        for reg in _PLACEHOLDER.findall(stmt, m.end()):
            names.declare("%$" + reg, None)  # an operand register, not a symbol
        op, _ = lower_instr(Instr(m.group(2), args, m.group(1)), names, {}, len(ops), None)
        origin.append(tuple(last.get(v) for v in op.operands))
        for r in op.results:
            last[r] = len(ops)
        ops.append(op)
    return ops, origin


def _source(
    ops: list[Op], origin: list[tuple[int | None, ...]], at: int, slot: int, slots: tuple[int | None, ...]
) -> int | None:
    """The op operand that operand ``slot`` of statement ``at`` starts from: a placeholder, or through
    the statement defining it, a copy, ``cvta`` or ``add`` of an immediate of one."""
    for _ in range(_CHAIN):
        reg = ops[at].operands[slot]
        m = _PLACEHOLDER.fullmatch(reg) if isinstance(reg, str) else None
        if m is not None:
            n = int(m.group(1))
            return slots[n] if n < len(slots) else None
        d = origin[at][slot]
        if d is None:
            return None
        dop = ops[d]
        if not (
            (dop.kind in (Kind.MOV, Kind.CAST) and len(dop.operands) == 1)
            or (dop.kind is Kind.ADD and len(dop.operands) == 2 and isinstance(dop.operands[1], int))
        ):
            return None
        at, slot = d, 0
    return None


#: asm strings up to this long are read once per process (a kernel repeats a few helpers' asm many
#: times); longer ones each time, so the cache's memory stays bounded whatever the input
_CACHED_CHARS = 4096


def asm_memory(asm: str, constraints: str) -> AsmMemory | None:
    """The memory access an inline asm performs (see the module docstring), None where it is not one."""
    if "[" not in asm:
        return None  # no PTX address operand: arithmetic, a fence, a move
    return _cached(asm, constraints) if len(asm) <= _CACHED_CHARS else _read(asm, constraints)


@functools.lru_cache(maxsize=4096)
def _cached(asm: str, constraints: str) -> AsmMemory | None:
    return _read(asm, constraints)


def _read(asm: str, constraints: str) -> AsmMemory | None:
    slots, n_operands = operand_slots(constraints)
    ops, origin = _statements(asm)
    addrs: list[tuple[int, AddressSpace]] = []
    kinds: set[Kind] = set()
    opcode, tmap = "", None
    for i, op in enumerate(ops):
        if op.kind not in MEMORY_KINDS:
            continue
        listed = op.attrs.get("addrs")
        where = [(a[0], from_ptx(a[1])) for a in listed] if listed else [(op.addr, op.space)]
        for idx, space in where:
            src = _source(ops, origin, i, idx, slots) if idx is not None else None
            if src is not None and all(src != a[0] for a in addrs):
                addrs.append((src, space or AddressSpace.GENERIC))
        t = op.attrs.get("tensor_map")
        if isinstance(t, int) and tmap is None:
            tmap = _source(ops, origin, i, t, slots)
        kinds.add(op.kind)
        opcode = opcode or op.name
    if not addrs and tmap is None:
        return None
    kind = kinds.pop() if len(kinds) == 1 else Kind.MEMOP
    return AsmMemory(kind, tuple(addrs), tmap, n_operands, opcode)
