"""What both checks share: where i32 values are widened into addresses, and what they are worth.

A *widening point* is where a 32-bit value enters 64-bit address arithmetic: an ``llvm.sext``/
``llvm.zext``/``cvt`` to 64 bits, an i32 GEP index (LLVM sign-extends it implicitly) or a narrow
operand of PTX ``mul.wide``/``mad.wide``.  Each one that reaches the address operand of a memory op
is evaluated: its ideal value (ranges.py) against the range the extension preserves.  The op in its
32-bit slice that first leaves its range is the *culprit*; its kind decides which check reports it.

Also the shape of a check (``Check``): each check module builds one from its rule, its message and its
fix, and the registry (checks/registry.py) runs them in order; ``explain`` stays generic.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from irscan.analysis.dataflow import Graph
from irscan.analysis.intervals import Affine, Interval, signed_range, unsigned_range
from irscan.analysis.ranges import Ranges
from irscan.ir import MEMORY_KINDS, AddressSpace, Kind, Op

I32_SIGNED = signed_range(32)
I32_UNSIGNED = unsigned_range(32)

#: Ops through which an address keeps flowing on its way to a memory op (a clamp is an offset too: PTX's
#: ``min.s64(last, sext(k))`` of a gathered column, where the MLIR has a select).
ADDRESS_FLOW = frozenset(
    {Kind.GEP, Kind.ADD, Kind.SUB, Kind.MUL, Kind.MULWIDE, Kind.MAD, Kind.MADWIDE, Kind.SHL, Kind.CAST, Kind.MOV,
     Kind.SELECT, Kind.PHI, Kind.SEXT, Kind.ZEXT, Kind.OR, Kind.MIN, Kind.MAX}
)  # fmt: skip
#: Ops that make up a 32-bit index computation (the backward slice stops at anything else).
NARROW_ARITH = frozenset(
    {Kind.ADD, Kind.SUB, Kind.MUL, Kind.MAD, Kind.SHL, Kind.OR, Kind.XOR, Kind.AND, Kind.NEG, Kind.SELECT,
     Kind.MOV, Kind.PHI, Kind.DIV, Kind.REM, Kind.MIN, Kind.MAX, Kind.LSHR, Kind.ASHR, Kind.MULHI}
)  # fmt: skip


@dataclass
class Widening:
    node: int  # the op that widens (ext, GEP, mul.wide)
    slot: int  # which operand of it is the narrow value
    signed: bool
    how: str  # "sext", "zext", "gep-index", "mul.wide.s32", ...
    sink_from: int | None = None  # where the widened value continues (default: node)


@dataclass
class Candidate:
    """A widening point whose narrow value can leave the range its extension preserves."""

    widening: Widening
    value: Affine
    limit: Interval
    sinks: list[int]
    slice: list[int]  # narrow ops feeding the widening point, in IR order
    culprit: int | None
    narrowing: bool  # the culprit narrows a 64-bit value (trunc, 32-bit load of a 64-bit field, shl/shr idiom)
    must: bool
    scaled: bool  # some free input is scaled (coef >= 2 or a product): see narrow_widened_late.py
    extra: dict[str, object] = field(default_factory=dict)


#: The two weaknesses irscan reports, as CWE numbers and names (SARIF and the rule docs use them).
CWE_NAMES = {190: "Integer Overflow or Wraparound", 197: "Numeric Truncation Error"}


@dataclass(frozen=True)
class Doc:
    """A check's documentation in the four parts ruff uses for a rule."""

    what: str  # what it finds
    why: str  # why it is a bug
    example: str  # CuTe DSL code that has it
    fix: str  # the same code fixed


@dataclass(frozen=True)
class Evidence:
    """What ``explain`` worked out about a candidate, in the words a check's message and fix need."""

    expression: str  # the ideal value at the widening point, e.g. "100000*ctaid.x + tid.x"
    culprit: str  # IR text of the op that leaves the range (the widening op when none does alone)
    signed: bool  # the widening sign-extends
    wrap_input: str | None  # the input that crosses the threshold first, when one is known


def must_or_may(c: Candidate) -> str:
    """The default severity policy: ``must`` when the launch the IR fixes already leaves the range,
    ``may`` when some launch or input the IR leaves open would."""
    return "must" if c.must else "may"


@dataclass(frozen=True)
class Check:
    """One check: its identity and doc, and the three things that are its own: which candidates it
    claims (its rule), the opening clause of its message, and its fix.  The rest of a finding (the
    launch reached, the threshold, the access, the chain) is the same for every check (explain.py)."""

    id: str
    title: str
    cwe: int  # a key of CWE_NAMES
    doc: Doc
    claims: Callable[[Graph, Candidate], bool]
    headline: Callable[[Evidence], str]
    fix: Callable[[Evidence], str]
    severity: Callable[[Candidate], str] = must_or_may
    examples: tuple[str, ...] = ()  # corpus/manifest.json programs that show it (the doc's example first)

    @property
    def cwe_name(self) -> str:
        return f"CWE-{self.cwe}: {CWE_NAMES[self.cwe]}"


def widening_points(gr: Graph) -> list[Widening]:
    out: list[Widening] = []
    for n in gr.nodes():
        op = gr.op(n)
        k = op.kind
        if k in (Kind.SEXT, Kind.ZEXT) and op.width == 64 and (op.src_width or 32) <= 32 and op.operands:
            out.append(Widening(n, 0, k is Kind.SEXT, k.value))
        elif k is Kind.GEP:
            for item in op.attrs.get("indices", ()):
                if isinstance(item, tuple) and item and item[0] == "dyn" and item[2] <= 32:
                    out.append(Widening(n, int(item[1]), True, "gep-index"))
        elif k in (Kind.MULWIDE, Kind.MADWIDE) and (op.src_width or 32) <= 32:
            for slot in (0, 1):
                if slot < len(op.operands) and not isinstance(op.operands[slot], int):
                    out.append(Widening(n, slot, bool(op.signed), op.name))
        elif k in (Kind.ASHR, Kind.LSHR) and op.width == 64 and gr.const_operand(n, 1) == 32:
            # PTX's extend-in-register idiom: (x << 32) >> 32 keeps only x's low 32 bits, re-extended
            for d in gr.defs(n, 0):
                dop = gr.op(d)
                if dop.width == 64 and ((dop.kind is Kind.SHL and gr.const_operand(d, 1) == 32) or
                                        (dop.kind is Kind.MUL and gr.const_operand(d, 1) == 1 << 32)):  # fmt: skip
                    how = f"{dop.name} 32 + {op.name} 32 ({'sign' if k is Kind.ASHR else 'zero'}-extend in register)"
                    out.append(Widening(d, 0, k is Kind.ASHR, how, sink_from=n))
    return out


#: Windows smaller than 4 GiB, addressed with 32-bit offsets by design: not this bug class.
SMALL_SPACES = frozenset(
    {AddressSpace.SHARED, AddressSpace.SHARED_CLUSTER, AddressSpace.LOCAL, AddressSpace.PARAM, AddressSpace.TENSOR}
)


def small_window(gr: Graph, sink: int) -> bool:
    """The access goes to shared or local memory: its own space, or the root of its address
    (an ``llvm.alloca``, or a cast from a shared pointer) says so."""
    op = gr.op(sink)
    if op.space in SMALL_SPACES:
        return True
    n, seen = sink, set()
    slot = op.addr if op.addr is not None else 0
    while n not in seen:
        seen.add(n)
        defs = gr.defs(n, slot)
        if len(defs) != 1:
            return False
        n, slot = defs[0], 0
        d = gr.op(n)
        if d.space in SMALL_SPACES or d.attrs.get("src_space") in SMALL_SPACES:
            return True
        if d.kind not in (Kind.GEP, Kind.CAST, Kind.MOV):
            return False
    return False


def _other_address(op: Op, slot: int) -> bool:
    """``slot`` is another element address of ``op`` than ``op.addr``, in global or generic memory
    (the front ends list every one in ``attrs["addrs"]``: ``(operand index, space, ...)``)."""
    return slot != op.addr and any(a[0] == slot and a[1] in ("global", "generic") for a in op.attrs.get("addrs", ()))


def sinks_of(gr: Graph, start: int, limit: int = 4000) -> list[int]:
    """Memory ops whose address operand the value of ``start`` flows into (outside shared/local)."""
    found: list[int] = []
    seen = {start}
    todo = deque([start])
    while todo and len(seen) < limit:
        n = todo.popleft()
        for u, slot in gr.users(n):
            uop = gr.op(u)
            if uop.kind in MEMORY_KINDS:
                if u not in found and ((uop.addr == slot and not small_window(gr, u)) or _other_address(uop, slot)):
                    found.append(u)
                continue
            if uop.kind in ADDRESS_FLOW and (uop.kind is Kind.GEP or uop.width >= 64 or uop.width == 0):
                if u not in seen:
                    seen.add(u)
                    todo.append(u)
    return sorted(found, key=lambda s: gr.op(s).line)


def narrow_slice(gr: Graph, n: int, slot: int, limit: int = 400) -> list[int]:
    """The 32-bit ops that compute operand ``slot`` of ``n``, plus the inputs they start from."""
    out: list[int] = []
    seen: set[int] = set()
    todo = deque(gr.defs(n, slot))
    while todo and len(out) < limit:
        d = todo.popleft()
        if d in seen:
            continue
        seen.add(d)
        out.append(d)
        op = gr.op(d)
        if op.kind in NARROW_ARITH and (op.width <= 32 or op.kind is Kind.PHI):
            for s in range(len(op.operands)):
                todo.extend(gr.defs(d, s))
    return sorted(out, key=lambda x: (gr.op(x).line, x))


def op_limit(op: Op, widening_signed: bool) -> Interval:
    """The range an op's result must stay in: signed for nsw ops and sign-extended values."""
    if "nsw" in op.flags or widening_signed:
        return I32_SIGNED
    return I32_UNSIGNED


def point_sinks(gr: Graph, w: Widening) -> list[int]:
    """The accesses widening point ``w`` feeds the address of."""
    return sinks_of(gr, w.sink_from if w.sink_from is not None else w.node)


def evaluate(gr: Graph, rg: Ranges, w: Widening, sinks: list[int] | None = None) -> Candidate | None:
    """``sinks``: ``point_sinks(gr, w)`` where the caller has it already."""
    sinks = point_sinks(gr, w) if sinks is None else sinks
    if not sinks:
        return None
    value = rg.operand(w.node, w.slot)
    limit = I32_SIGNED if w.signed else I32_UNSIGNED
    if not leaves(rg.interval(value), limit):
        return _midpoint(gr, rg, w, sinks)
    must = leaves(rg.interval(value, least_harm=True), limit)
    sl = narrow_slice(gr, w.node, w.slot)
    culprit, narrowing = None, False
    if w.sink_from is not None:  # the idiom itself is the narrowing
        culprit, narrowing = w.node, True
    for d in sl if culprit is None else ():
        op = gr.op(d)
        if op.kind is Kind.ARG and rg.narrow_param(d):
            culprit, narrowing = d, True
            break
        if op.kind is Kind.TRUNC and op.operands:
            iv = rg.interval(rg.operand(d, 0))
            if leaves(iv, limit) and not _lossless_trunc(gr, d):
                culprit, narrowing = d, True
                break
        elif op.kind in NARROW_ARITH - {Kind.MOV, Kind.PHI, Kind.SELECT} and op.width and op.width <= 32:
            iv = rg.interval(rg.value(d))
            lim = op_limit(op, w.signed)
            if leaves(iv, lim):
                culprit = d
                break
    scaled = any(not rg.atoms[k].fixed and (abs(c) >= 2 or rg.atoms[k].scaled) for k, c in value.terms)
    if not (narrowing or must or scaled):  # no check claims it (a plain `mid + 1` passes 2^31 only
        # with mid at the limit), but the midpoint it is made of may wrap first (FA4's `(lo + hi) // 2`,
        # whose MLIR floor division leaves `floor(...) + 1` one past 2^31 - 1 ideally)
        inner = _midpoint(gr, rg, w, sinks)
        if inner is not None and inner.culprit is not None and gr.op(inner.culprit).block == gr.op(w.node).block:
            return inner  # (in the search's own iteration: `lo` after the loop is another question)
    return Candidate(w, value, limit, sinks, sl, culprit, narrowing, must, scaled)


def _lossless_trunc(gr: Graph, d: int) -> bool:
    """A trunc of an extension of a value no wider than its result gives that value back bit for bit
    (``cvt.u32.u64`` of ``cvt.u64.u32 %r``: a 32-bit loop counter NVVM keeps widened): it narrows
    nothing, so whatever wraps is the 32-bit value's own arithmetic, which the slice weighs on."""
    defs = gr.defs(d, 0)
    while len(defs) == 1 and gr.op(defs[0]).kind is Kind.MOV:
        defs = gr.defs(defs[0], 0)
    if len(defs) != 1:
        return False
    ext = gr.op(defs[0])
    return ext.kind in (Kind.SEXT, Kind.ZEXT) and 0 < (ext.src_width or 64) <= (gr.op(d).width or 0)


def leaves(iv: Interval, limit: Interval) -> bool:
    """Above the top of the range, or (signed ranges only) below its bottom.

    Negative ideal values under a zero-extension are not counted: they come from subtracting free
    inputs, whose order the IR does not know, and would flag every difference of two indices.
    """
    return iv.hi > limit.hi or (limit.lo < 0 and iv.lo < limit.lo)


#: how many ops of the slice, nearest first, a midpoint is looked for in
_NEAR = 24


def _midpoint(gr: Graph, rg: Ranges, w: Widening, sinks: list[int]) -> Candidate | None:
    """A midpoint ``(lo + hi) >> 1`` (or ``/ 2``) whose ideal value fits while its 32-bit sum wraps: a
    binary search over more than 2^30 entries indexes memory before the array.  Only a sum of two
    free inputs that may each pass 2^30 counts (a sum of one large input and a tile wraps only with
    the input at the limit); the candidate is the sum, checked against its own range.  A search
    halves right before it indexes: the nearest ops of the slice are enough (every widening whose
    value fits comes here, so the whole slice would cost the scan)."""
    sl = narrow_slice(gr, w.node, w.slot, limit=_NEAR)
    inside = set(sl)
    for d in sl:
        op = gr.op(d)
        if op.kind is not Kind.ADD or not op.width or op.width > 32:
            continue
        halved = any(u in inside and slot == 0 and _halves(gr, u, 1) for u, slot in gr.users(d))
        v, lim = rg.value(d), op_limit(op, w.signed)
        if not halved or not leaves(rg.interval(v), lim):
            continue
        free = [rg.atoms[k].iv.hi for k, c in v.terms if c == 1 and not rg.atoms[k].fixed]
        if len(free) != 2 or min(free) <= (lim.hi >> 1):
            continue
        must = leaves(rg.interval(v, least_harm=True), lim)
        return Candidate(w, v, lim, sinks, sl, d, False, must, True, {"inner": d})
    return None


def _halves(gr: Graph, u: int, fixups: int = 0) -> bool:
    """Whether op u divides its first operand by 2 (``>> 1``, ``/ 2``), also through ``fixups`` adds
    first (PTX's floor division of a signed sum: ``add s, (s >>> 31)`` then ``shr.s32 1``)."""
    op = gr.op(u)
    k = gr.const_operand(u, 1)
    if (op.kind in (Kind.LSHR, Kind.ASHR) and k == 1) or (op.kind is Kind.DIV and k == 2):
        return True
    return fixups > 0 and op.kind is Kind.ADD and any(s == 0 and _halves(gr, x, fixups - 1) for x, s in gr.users(u))
