"""Rule (c) across accesses: the other accesses of a kernel weigh the inputs a wrap needs.

An input is bounded by *every* tensor the kernel addresses with it (README, "What is reported"), not
only by the tensor of the access that wraps.  When the wrapping value ``v`` grows with an input ``X``
(a launch coordinate, ``ctaid.x``, or a parameter field, ``arg3.shape[0]``), ``v`` leaves its range
only where ``X >= T``, with ``T`` the smallest ``X`` at which ``v`` reaches the limit with everything
else at its largest: a necessary condition of the wrap.  Another access of the same kernel whose
*ideal* byte offset (what the source meant, before any i32 wrap: the range analysis's affine form)
is ``s*X + rest`` is then at least ``s*T + min(rest)`` bytes into its tensor, and in a correct program
that tensor holds it.  So ``y[row]`` (4 bytes per row) wrapping at row 2^31 is unreachable when the
same thread also reads ``x[row, :]`` at 16 KiB per row: ``x`` would be 35 TB.

Sound only where the other access runs whenever the wrap matters, with the same ``X``:

- ``X`` is a launch constant (a launch-geometry special register, a parameter field), so any
  execution of the other access in the same thread sees the same ``X`` (a loop counter or a loaded
  value would differ between the two points);
- the other access *dominates* the widening point (it is in a block every path to the widening
  passes through, or earlier in the same block), so whenever the wrapped value is formed it has
  already run.  Weaker conditions are not enough: an access under a condition independent of ``X``
  (``if nloc > 0``) may not run at all for the inputs that wrap, and a post-dominating one may be cut
  short by an early ``exit`` or ``trap`` the block graph does not show.  Or, for an input every
  thread of the CTA shares (``ctaid.x``, a parameter field, not ``tid``), some thread of every CTA
  surely runs it (irscan/analysis/cta_reach.py: the state load of a warp-specialised kernel's
  load warp, which no path through the store warp passes): then it runs in the CTA whose ``X``
  wraps, whatever the data;
- it is a plain load, store or atomic without a PTX guard predicate (a masked or guarded copy, a
  ``cp.async`` with a zero source size, moves nothing);
- ``v`` cannot leave its range from below (then ``X >= T`` is not necessary).
"""

from __future__ import annotations

import re
import weakref
from collections import defaultdict
from dataclasses import dataclass

from irscan.analysis import cta_reach
from irscan.analysis.dataflow import Graph
from irscan.analysis.guards import immediate_dominators
from irscan.analysis.inputs import SREG_LAUNCH
from irscan.analysis.intervals import Affine, Interval
from irscan.analysis.ranges import Ranges
from irscan.analysis.reaching import cfg_successors
from irscan.checks.base import small_window
from irscan.checks.memory import Need, gep_size, human, static_bytes
from irscan.ir import Kind

#: how far an address is followed back to its tensor's pointer
_PATH_LIMIT = 64
#: the accesses weighed per input, largest rate first: a candidate's cost stays bounded
_PER_INPUT = 256
_PTR = re.compile(r"^(arg\d+)\.ptr$")
_PLAIN = (Kind.LOAD, Kind.STORE, Kind.ATOMIC)


@dataclass(frozen=True)
class Rate:
    """Access ``sink`` is at least ``rate*X + rest`` bytes into ``tensor``."""

    sink: int
    tensor: str
    rate: int
    rest: int


@dataclass
class _Index:
    rates: dict[str, list[Rate]]
    pre: list[int]  # the dominator tree's DFS numbering: a dominates b iff a's interval holds b's
    post: list[int]
    pos: dict[int, tuple[int, int]]  # op id -> (block, index in it)


_LAST: tuple[weakref.ref[Ranges], _Index] | None = None


def launch_constant(rg: Ranges, key: object) -> str | None:
    """The atom's name when its value is one for the whole thread: a launch-geometry special register
    (``ctaid.x``, ``tid.y``, ``nctaid.x``) or a kernel parameter field; None otherwise."""
    a = rg.atoms[key]
    if a.extent:
        return a.name
    if a.node is not None and a.node in rg.gr and rg.gr.op(a.node).kind is Kind.SREG:
        return a.name if a.name.partition(".")[0] in SREG_LAUNCH else None
    return None


def byte_offset(gr: Graph, rg: Ranges, sink: int) -> tuple[str, Affine] | None:
    """(``argK``, the ideal byte offset of ``sink``'s address from argK's pointer), following GEPs
    (index times element size), casts and copies back to where the value is ``argK.ptr + offset``."""
    op = gr.op(sink)
    if op.addr is None:
        return None
    disp = op.attrs.get("disp")
    acc = Affine.of_const(disp if isinstance(disp, int) else 0)
    n, slot = sink, op.addr
    for _ in range(_PATH_LIMIT):
        defs = gr.defs(n, slot)
        if len(defs) != 1:
            return None
        d = defs[0]
        dop = gr.op(d)
        if dop.kind is Kind.GEP:
            idx = list(dop.attrs.get("indices", ()))
            size = gep_size(gr, d)
            if size is None or len(idx) != 1 or idx[0][0] not in ("dyn", "const"):
                return None
            step = rg.operand(d, int(idx[0][1])) if idx[0][0] == "dyn" else Affine.of_const(int(idx[0][1]))
            acc = acc.add(step.scale(size))
        elif dop.kind not in (Kind.CAST, Kind.MOV):
            v = rg.value(d)
            ptrs = [(k, c) for k, c in v.terms if _PTR.match(rg.atoms[k].name)]
            if len(ptrs) != 1 or ptrs[0][1] != 1:
                return None
            m = _PTR.match(rg.atoms[ptrs[0][0]].name)
            assert m is not None
            rest = Affine(tuple(t for t in v.terms if t != ptrs[0]), v.const)
            return m.group(1), acc.add(rest)
        n, slot = d, 0
    return None


def _split(rg: Ranges, v: Affine) -> dict[str, tuple[int, Affine]]:
    """Per launch-constant input named in ``v``: (its coefficient, the rest of ``v``).  Atoms of one
    name are one value (two reads of ``ctaid.x``), so their coefficients add up."""
    names = {k: launch_constant(rg, k) for k, _ in v.terms}
    out: dict[str, tuple[int, Affine]] = {}
    for name in {n for n in names.values() if n is not None}:
        coef = sum(c for k, c in v.terms if names[k] == name)
        out[name] = (coef, Affine(tuple(t for t in v.terms if names[t[0]] != name), v.const))
    return out


def _index(gr: Graph, rg: Ranges) -> _Index:
    """Every plain global access of the function with its rate per input, and the dominator tree."""
    global _LAST
    if _LAST is not None and _LAST[0]() is rg:
        return _LAST[1]
    rates: dict[str, list[Rate]] = defaultdict(list)
    pos: dict[int, tuple[int, int]] = {}
    for bi, blk in enumerate(gr.fn.blocks):
        for i, op in enumerate(blk.ops):
            pos[op.id] = (bi, i)
            if op.kind not in _PLAIN or op.pred is not None or op.id not in gr or small_window(gr, op.id):
                continue
            found = byte_offset(gr, rg, op.id)
            if found is None:
                continue
            for name, (s, rest) in _split(rg, found[1]).items():
                if s > 0:
                    rates[name].append(Rate(op.id, found[0], s, rg.interval(rest).lo))
    for lst in rates.values():
        lst.sort(key=lambda r: -r.rate)
    pre, post = _numbering(immediate_dominators(cfg_successors(gr.fn)))
    idx = _Index(dict(rates), pre, post, pos)
    _LAST = (weakref.ref(rg), idx)
    return idx


def _numbering(idom: list[int]) -> tuple[list[int], list[int]]:
    """Pre- and post-order numbers of the dominator tree (iterative); -1 for unreachable blocks."""
    n = len(idom)
    kids: list[list[int]] = [[] for _ in range(n)]
    for b, d in enumerate(idom):
        if d >= 0 and d != b:
            kids[d].append(b)
    pre, post = [-1] * n, [-1] * n
    clock = 0
    stack = [(b, 0) for b in range(n) if idom[b] == b]
    while stack:
        b, i = stack.pop()
        if i == 0:
            pre[b], clock = clock, clock + 1
        if i < len(kids[b]):
            stack.append((b, i + 1))
            stack.append((kids[b][i], 0))
        else:
            post[b], clock = clock, clock + 1
    return pre, post


def _dominates(idx: _Index, a: int, b: int) -> bool:
    """Op ``a`` runs before op ``b`` on every path to ``b``."""
    if a not in idx.pos or b not in idx.pos:
        return False
    (ba, ia), (bb, ib) = idx.pos[a], idx.pos[b]
    if ba == bb:
        return ia < ib
    if min(idx.pre[ba], idx.pre[bb]) < 0:
        return False
    return idx.pre[ba] < idx.pre[bb] and idx.post[bb] < idx.post[ba]


def _cta_wide(name: str) -> bool:
    """Whether every thread of a CTA sees one value of the input: its CTA's coordinates, the grid and
    block sizes, a parameter field (not ``tid``: another thread's access has another)."""
    return name.startswith(("ctaid.", "nctaid.", "ntid.", "arg"))


def needs(
    gr: Graph, rg: Ranges, value: Affine, limit: Interval, at: int, own: list[int]
) -> tuple[list[Need], list[Need]]:
    """What the other accesses need when ``value`` wraps, one :class:`Need` per input the wrap hinges on
    from the access that needs the most: (those that dominate the widening point ``at``, those only
    some thread of every CTA surely runs: reporting.py weighs the second only where they need far more)."""
    if rg.interval(value).lo < limit.lo:
        return [], []
    idx = _index(gr, rg)
    near: list[Need] = []
    wide: list[Need] = []
    for name, (coef, rest) in sorted(_split(rg, value).items()):
        rates = idx.rates.get(name)
        if coef <= 0 or not rates:
            continue
        t = -(-(limit.hi + 1 - rg.interval(rest).hi) // coef)
        if t <= min(rg.atoms[k].iv.lo for k, _ in value.terms if rg.atoms[k].name == name):
            continue  # the value wraps at the input's least: the wrap does not hinge on it
        before: list[Rate] = []
        somewhere: list[Rate] = []
        for r in rates[:_PER_INPUT]:
            if r.sink in own:
                continue
            if _dominates(idx, r.sink, at):
                before.append(r)
            elif _cta_wide(name) and cta_reach.reached(gr, rg.facts.block, r.sink):
                somewhere.append(r)
        for out, rs, runs in ((near, before, "which runs before this access"),
                              (wide, somewhere, "which a thread of every CTA runs")):  # fmt: skip
            best = max(rs, key=lambda r: r.rate * t + r.rest, default=None)
            if best is not None and best.rate * t + best.rest > 0:
                out.append(_need(gr, best, name, t, runs))
    return near, wide


def _where(gr: Graph, sink: int) -> str:
    op = gr.op(sink)
    return f"{op.loc.file.rsplit('/', 1)[-1]}:{op.loc.line}" if op.loc is not None else f"IR line {op.line}"


def _need(gr: Graph, r: Rate, name: str, t: int, runs: str) -> Need:
    why = (f"the {gr.op(r.sink).kind.value} of {r.tensor} at {_where(gr, r.sink)}, {runs}, is {r.rate:,} "
           f"byte(s) per unit of {name} into it: at {name} >= {t} that is {human(r.rate * t + r.rest)}")  # fmt: skip
    return Need(r.tensor, r.rate * t + r.rest, why, at=f"{name} >= {t}")


def grid_caps(gr: Graph, rg: Ranges) -> dict[int, tuple[int, str]]:
    """Axis -> (the most CTAs a correct launch has along it, why), from the accesses some thread of every
    CTA runs (irscan/analysis/cta_reach.py) into a tensor of static layout at ``s`` bytes per unit of
    ``ctaid``: each CTA's access is inside the tensor's bytes, so ``s*ctaid + least(rest)`` is below
    them.  cuDNN's DSA backward sums over heads with ``ctaid.y`` as the head and reads a static
    ``(16,)`` f32 array at it: at most 16 CTAs along y, and then the head count the host stores there
    is at most 16 too (hostfields.kernel_caps).  Only offsets that stay below 2^31 for every CTA the
    launch may have count (the access's own arithmetic cannot wrap back inside the tensor)."""
    idx = _index(gr, rg)
    out: dict[int, tuple[int, str]] = {}
    for axis, dim in enumerate("xyz"):
        for r in idx.rates.get(f"ctaid.{dim}", [])[:_PER_INPUT]:
            k = int(r.tensor.removeprefix("arg"))
            meta = rg.meta_args[k] if 0 <= k < len(rg.meta_args) else None
            size = static_bytes(meta)
            if size is None or not size > r.rest >= 0:
                continue
            most = (size - 1 - r.rest) // r.rate + 1
            if most >= out.get(axis, (1 << 31, ""))[0] or not cta_reach.reached(gr, rg.facts.block, r.sink):
                continue
            found = byte_offset(gr, rg, r.sink)
            if found is None or rg.interval(found[1]).hi >= 1 << 31:
                continue
            layout = (meta or {}).get("layout", "?")
            out[axis] = (most, f"in bounds of a static layout: every CTA runs the {gr.op(r.sink).kind.value} of "
                               f"{r.tensor} ({layout}) at {_where(gr, r.sink)}, {r.rate:,} byte(s) per unit of "
                               f"ctaid.{dim}: nctaid.{dim} <= {most:,}")  # fmt: skip
    return out
