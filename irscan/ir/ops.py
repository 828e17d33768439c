"""The one vocabulary both front ends produce.

An ``llvm.mul : i32`` and a ``mul.lo.s32`` are the same :class:`Op` of kind ``MUL`` and width 32, so
the graph, range and check code above this floor is written once for MLIR and PTX alike.  Nothing
here knows about lark, text or checks: it is plain data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal, Union

from irscan.ir.fields import Shape
from irscan.ir.spaces import AddressSpace

IRKind = Literal["mlir", "ptx"]

#: An operand is a value name (MLIR ``%5``, PTX ``%r3``) or an immediate integer (PTX only).
Operand = Union[str, int]  # noqa: UP007 (a runtime alias; py3.10 has no `str | int` alias syntax issue but keep it explicit)


class Kind(str, Enum):
    """What an op does to integers and addresses; everything else is ``OPAQUE``."""

    CONST = "const"  # attrs["value"]: int (absent for non-integer constants)
    ARG = "arg"  # a kernel parameter (attrs["param"]: index); a field read also has attrs["field"]: ParamField
    SREG = "sreg"  # special register read: attrs["sreg"] its PTX name ("tid.x"), attrs["range"] (lo, hi) if bounded
    PHI = "phi"  # MLIR block argument: joins the successor operands of its predecessors
    MOV = "mov"  # a copy of operand 0 (PTX mov, same-width bitcast)
    ADD = "add"
    SUB = "sub"
    MUL = "mul"  # low half of the product, result width == operand width
    MULHI = "mulhi"  # high half (PTX mul.hi)
    MULWIDE = "mulwide"  # PTX mul.wide: exact 2*src_width product of src_width operands
    MAD = "mad"  # operand0 * operand1 + operand2, low half
    MADWIDE = "madwide"  # PTX mad.wide: wide product of narrow operands + wide operand2
    SHL = "shl"
    LSHR = "lshr"
    ASHR = "ashr"
    AND = "and"
    OR = "or"
    XOR = "xor"
    DIV = "div"  # signedness in Op.signed
    REM = "rem"
    MIN = "min"
    MAX = "max"
    NEG = "neg"
    SHUFFLE = "shuffle"  # a warp shuffle: another lane's value of operand attrs["shuffled"] (an index)
    SELECT = "select"  # operands: cond, a, b (PTX selp: a, b, cond is normalised to cond, a, b)
    ICMP = "icmp"  # attrs["pred"]: "slt", "ult", "eq", ... (operands: a, b)
    SEXT = "sext"
    ZEXT = "zext"
    TRUNC = "trunc"
    CAST = "cast"  # ptrtoint / inttoptr / addrspacecast / cvta: same value, other type (attrs["src_space"])
    EXTRACT = "extract"  # llvm.extractvalue (attrs["path"]: tuple[int, ...])
    INSERT = "insert"  # llvm.insertvalue
    GEP = "gep"  # operands: base, dynamic indices...; attrs["indices"], ["elem_type"], ["elem_size"]
    LOAD = "load"
    STORE = "store"
    ATOMIC = "atomic"
    MEMOP = "memop"  # any other op with an address operand (cp.async, TMA, prefetch, nvvm.* memory ops)
    BRANCH = "branch"
    RETURN = "return"
    CALL = "call"
    #: a kernel launch in a host function (MLIR ``cuda.launch_ex``): attrs["kernel"] the kernel's symbol
    #: name; operands: the launch config value, then the kernel arguments in order
    LAUNCH = "launch"
    OPAQUE = "opaque"  # parsed, but its semantics are unknown to the analysis


#: Kinds whose Op.addr names an address operand: the sinks of the analysis.
MEMORY_KINDS = frozenset({Kind.LOAD, Kind.STORE, Kind.ATOMIC, Kind.MEMOP})


@dataclass(frozen=True, slots=True)
class Loc:
    """A source location; ``name`` is the DSL's label for it (often the Python statement text)."""

    file: str
    line: int
    col: int = 0
    name: str | None = None


@dataclass(slots=True)
class Op:
    """One instruction of either IR, normalised.

    ``width`` is the bit width of the result (for stores: of the stored value; 0 for pointers/none).
    ``src_width`` is the width of the inputs where it differs (ext, trunc, cvt, mul.wide).
    ``signed`` is set where signedness changes the meaning (div, rem, shifts, cmp, cvt, mul.wide).
    ``addr`` is the index in ``operands`` of the address for memory ops, ``space`` its address space
    (also set on pointer-producing ops whose space the IR states: GEPs, casts, allocas).
    """

    id: int
    kind: Kind
    name: str
    results: tuple[str, ...] = ()
    operands: tuple[Operand, ...] = ()
    width: int = 0
    src_width: int | None = None
    signed: bool | None = None
    flags: frozenset[str] = frozenset()
    attrs: dict[str, Any] = field(default_factory=dict)
    addr: int | None = None
    space: AddressSpace | None = None
    loc: Loc | None = None
    line: int = 0  # 1-based line of the op in the IR file
    text: str = ""  # the op as written (one line, trimmed), for reports
    block: int = 0  # index of the enclosing block in Function.blocks
    pred: str | None = None  # PTX guard predicate ("%p1" / "!%p1"); a guarded def does not kill others


@dataclass(slots=True)
class Successor:
    """A control-flow edge out of a block; ``operands`` feed the target block's arguments (MLIR)."""

    label: str
    operands: tuple[Operand, ...] = ()


@dataclass(slots=True)
class Block:
    label: str
    args: tuple[str, ...] = ()
    arg_widths: tuple[int, ...] = ()
    ops: list[Op] = field(default_factory=list)
    succs: list[Successor] = field(default_factory=list)
    falls_through: bool = False  # PTX: control continues into the next block


@dataclass(slots=True)
class Param:
    """A function parameter.  ``type`` is the IR's text for it (an MLIR type, or a PTX .param decl),
    for reports; ``shape`` is its structure, for the analysis (see :data:`irscan.ir.fields.Shape`)."""

    name: str
    type: str
    index: int
    size: int | None = None  # bytes (PTX)
    shape: Shape = None


@dataclass(slots=True)
class Function:
    name: str
    kernel: bool
    params: list[Param] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    #: launch facts the IR carries: "reqntid", "maxntid", "exact_block_dim", "exact_grid_dim"
    #: (tuples of ints) and anything else a front end finds useful.
    attrs: dict[str, Any] = field(default_factory=dict)
    line: int = 0
    loc: Loc | None = None

    def ops(self) -> list[Op]:
        return [op for b in self.blocks for op in b.ops]


@dataclass(slots=True)
class Module:
    ir: IRKind
    path: str
    functions: list[Function] = field(default_factory=list)
    #: op names the front end could not give meaning to, with counts (reported as "not seen")
    opaque: dict[str, int] = field(default_factory=dict)
    attrs: dict[str, Any] = field(default_factory=dict)  # e.g. PTX .target / .version

    def kernels(self) -> list[Function]:
        return [f for f in self.functions if f.kernel]
