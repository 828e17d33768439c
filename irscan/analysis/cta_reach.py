"""The blocks some thread of every CTA is sure to reach: the roles of a warp-specialised kernel.

A warp-specialised kernel sends each warp down its own branch (``if warp_idx == 8: load the state``,
``elif warp_idx >= 12: store the output``), with ``warp_idx`` a shuffle of ``tid.x // 32`` from lane 0.
An access in one role does not dominate an access in another, yet both run in every CTA: a thread
whose path to the access turns only on its own thread index runs it whatever the CTA, the arguments
or the data.  Rule (c) across accesses (irscan/checks/other_accesses.py) may then weigh that access
for an input every thread of the CTA shares (``ctaid.x``, a parameter field).

Found by running a few threads concretely from the entry: lane 0 of each warp the launch surely has
(every warp of an exact block size, else thread 0 alone), ``tid.y = tid.z = 0``.  A branch is followed
only where its condition evaluates from constants and the thread's own index (through arithmetic,
compares, selects and a full-warp ``shfl.sync.idx``); the walk stops at any other branch, at a block
seen before (a loop: its exit depends on values the walk does not follow) and at a return, ``exit``,
``trap``, a call or inline assembly that may exit.  Every block the walk entered, that thread executes
up to such an op: its path was forced.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable

from irscan.analysis.dataflow import Graph
from irscan.ir import Kind, Op

#: how many blocks one thread's walk follows, and how deep a value is evaluated (a bound on the cost)
_MAX_STEPS = 4096
_MAX_DEPTH = 48
#: ops after which a thread does not go on
_STOPS = frozenset({"trap", "exit", "llvm.intr.trap", "llvm.unreachable", "nvvm.exit"})
Thread = tuple[int, int, int]
_MLIR_IDX = re.compile(r"\bshfl\.sync\s+idx\b")

_LAST: tuple[weakref.ref[Graph], dict[int, int]] | None = None


def reached(gr: Graph, block_dims: tuple[int, ...] | None, op_id: int) -> bool:
    """Whether some thread of every CTA executes op ``op_id`` (its block entered on a forced path and
    no stop before it in that block)."""
    entered = _entered(gr, block_dims)
    op = gr.op(op_id)
    if op.block not in entered:
        return False
    for prior in gr.fn.blocks[op.block].ops:
        if prior.id == op_id:
            return True
        if prior.kind is Kind.RETURN or _may_stop(prior):
            return False
    return False


def _may_stop(op: Op) -> bool:
    """An op after which the thread may not go on: ``exit``, ``trap``, a call (``__assertfail`` does not
    return) or inline assembly that says ``exit`` or ``trap``."""
    if op.name in _STOPS or op.kind is Kind.CALL:
        return True
    return "inline_asm" in op.name and any(w in op.text for w in ("exit", "trap"))


def _entered(gr: Graph, block_dims: tuple[int, ...] | None) -> dict[int, int]:
    """Block -> the tid.x of a thread that surely enters it (memoised for the last graph)."""
    global _LAST
    if _LAST is not None and _LAST[0]() is gr:
        return _LAST[1]
    dims = tuple(block_dims or ())
    bdx = dims[0] if dims else None
    threads: list[Thread] = [(0, 0, 0)]
    if bdx is not None and bdx % 32 == 0:
        threads = [(32 * w, 0, 0) for w in range(bdx // 32)]
    out: dict[int, int] = {}
    for t in threads:
        for b in _walk(gr, t, dims):
            out.setdefault(b, t[0])
    _LAST = (weakref.ref(gr), out)
    return out


def _walk(gr: Graph, t: Thread, dims: tuple[int, ...]) -> set[int]:
    """The blocks thread ``t`` surely enters from the entry block."""
    ev = _Evaluator(gr, dims)
    fn = gr.fn
    index = {blk.label: i for i, blk in enumerate(fn.blocks)}
    once: set[int] = set()
    b: int | None = 0 if fn.blocks else None
    while b is not None and b not in once and len(once) < _MAX_STEPS:
        once.add(b)
        blk = fn.blocks[b]
        nxt: int | None = None
        for op in blk.ops:
            if _may_stop(op) or (op.kind is Kind.RETURN and ev.pred(op, t, once) is not False):
                return once
        last = blk.ops[-1] if blk.ops else None
        labels = [index.get(s.label) for s in blk.succs]
        if last is None or last.kind is not Kind.BRANCH:
            nxt = b + 1 if blk.falls_through and b + 1 < len(fn.blocks) else None
        elif gr.module.ir == "mlir":
            if len(labels) == 1:
                nxt = labels[0]
            elif len(labels) == 2 and last.operands:
                cond = ev.slot(last.id, 0, t)
                nxt = None if cond is None else labels[0] if cond & 1 else labels[1]
        else:
            taken = ev.pred(last, t, once)
            target = labels[0] if len(labels) == 1 else None
            nxt = target if taken else (b + 1 if taken is False and blk.falls_through else None)
        b = nxt
    return once


class _Evaluator:
    """Concrete values of one thread's registers, from their definitions (None: not known)."""

    def __init__(self, gr: Graph, dims: tuple[int, ...]):
        self.gr = gr
        self.dims = dims
        self.memo: dict[tuple[int, Thread], int | None] = {}
        self.writers: dict[str, list[int]] | None = None

    def pred(self, op: Op, t: Thread, path: set[int]) -> bool | None:
        """Whether a PTX guard predicate (``@%p``, ``@!%p``) holds; True for an unguarded op.  Read off
        the predicate's one writer, where thread t ran it: in a block of its ``path`` so far (each ran
        to its end) or earlier in op's own block."""
        p = op.pred
        if p is None:
            return True
        reg = p.lstrip("!")
        if self.writers is None:
            self.writers = {}
            for o in self.gr.fn.ops():
                for r in o.results:
                    self.writers.setdefault(r, []).append(o.id)
        ws = self.writers.get(reg, [])
        if len(ws) != 1:  # a predicate written once: its value does not depend on the path
            return None
        w = self.gr.op(ws[0])
        if w.block not in path or (w.block == op.block and w.line > op.line):
            return None
        v = self.value(ws[0], t, 0)
        return None if v is None else bool(v & 1) != p.startswith("!")

    def slot(self, n: int, i: int, t: Thread, depth: int = 0) -> int | None:
        op = self.gr.op(n)
        if i >= len(op.operands):
            return None
        o = op.operands[i]
        if isinstance(o, int):
            return o
        defs = self.gr.defs(n, i)
        return self.value(defs[0], t, depth + 1) if len(defs) == 1 else None

    def value(self, n: int, t: Thread, depth: int) -> int | None:
        """Op n's result for thread t, as a signed integer of its width."""
        key = (n, t)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = None  # a cycle reads as unknown
        v = self._compute(n, t, depth) if depth < _MAX_DEPTH else None
        op = self.gr.op(n)
        if v is not None and op.width:
            v = _signed(v, op.width)
        self.memo[key] = v
        return v

    def _compute(self, n: int, t: Thread, depth: int) -> int | None:
        op = self.gr.op(n)
        k = op.kind
        if getattr(op, "pred", None) is not None:
            return None  # a guarded write keeps the old value where the guard fails
        if k is Kind.CONST:
            val = op.attrs.get("value")
            return val if isinstance(val, int) else None
        if k is Kind.SREG:
            return self._sreg(str(op.attrs.get("sreg", "")), t)
        if k is Kind.SHUFFLE:
            return self._shuffle(n, t, depth)
        args = [self.slot(n, i, t, depth) for i in range(len(op.operands))]
        if k is Kind.SELECT and len(args) == 3 and args[0] is not None:
            return args[1] if args[0] & 1 else args[2]
        if k is Kind.OPAQUE and op.name == "not.pred" and len(args) == 1 and args[0] is not None:
            return 1 - (args[0] & 1)
        if any(a is None for a in args):
            return None
        xs = [int(a) for a in args if a is not None]
        if k in (Kind.MOV, Kind.CAST, Kind.TRUNC, Kind.SEXT) and xs:
            return xs[0]
        if k is Kind.ZEXT and xs:
            src = op.src_width or self._width(n, 0)
            return xs[0] % (1 << src) if src else None
        if k is Kind.ICMP and len(xs) == 2:
            return self._compare(n, str(op.attrs.get("pred", "")), xs[0], xs[1])
        f = _ARITH.get(k)
        if f is None or len(xs) < 2:
            return -xs[0] if k is Kind.NEG and xs else None
        if k is Kind.LSHR or (k in (Kind.DIV, Kind.REM, Kind.MIN, Kind.MAX) and op.signed is False):
            w = op.width or 32
            xs = [x % (1 << w) for x in xs]
        return f(xs)

    def _width(self, n: int, i: int) -> int | None:
        defs = self.gr.defs(n, i) if i < len(self.gr.op(n).operands) else []
        return self.gr.op(defs[0]).width or None if len(defs) == 1 else None

    def _compare(self, n: int, pred: str, a: int, b: int) -> int | None:
        if pred.startswith("u"):
            w = self._width(n, 0) or self._width(n, 1)
            if w is None:
                return None
            a, b = a % (1 << w), b % (1 << w)
        test = _PREDS.get(pred.lstrip("su"))
        return None if test is None else int(test(a, b))

    def _sreg(self, name: str, t: Thread) -> int | None:
        axis = "xyz".find(name[-1:]) if "." in name else -1
        if name.startswith("tid.") and axis >= 0:
            return t[axis]
        if name.startswith("ntid.") and 0 <= axis < len(self.dims):
            return self.dims[axis]
        if name == "laneid" and self.dims and self.dims[0] % 32 == 0:
            return t[0] % 32
        return None

    def _shuffle(self, n: int, t: Thread, depth: int) -> int | None:
        """``shfl.sync.idx`` over the whole warp (clamp 31): the value of the source lane, where lanes
        are tid.x's low bits (an exact block width that is a multiple of 32, tid.y = tid.z = 0)."""
        op = self.gr.op(n)
        if not (".idx" in op.name or _MLIR_IDX.search(op.text)) or not self.dims:
            return None
        if self.dims[0] % 32 or t[1] or t[2]:
            return None
        mlir = self.gr.module.ir == "mlir"
        val, lane, clamp = (1, 2, 3) if mlir else (0, 1, 2)
        src, c = self.slot(n, lane, t, depth), self.slot(n, clamp, t, depth)
        if src is None or c != 31 or not 0 <= src < 32:
            return None
        other = ((t[0] & ~31) | src, 0, 0)
        return self.slot(n, val, other, depth)


def _signed(v: int, w: int) -> int:
    v %= 1 << w
    return v - (1 << w) if w > 1 and v >> (w - 1) else v


def _div(a: int, b: int) -> int | None:
    if b == 0:
        return None
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _rem(a: int, b: int) -> int | None:
    q = _div(a, b)
    return None if q is None else a - q * b


_ARITH: dict[Kind, Callable[[list[int]], int | None]] = {
    Kind.ADD: lambda x: x[0] + x[1],
    Kind.SUB: lambda x: x[0] - x[1],
    Kind.MUL: lambda x: x[0] * x[1],
    Kind.MAD: lambda x: x[0] * x[1] + x[2] if len(x) == 3 else None,
    Kind.SHL: lambda x: x[0] << x[1] if 0 <= x[1] < 64 else None,
    Kind.LSHR: lambda x: x[0] >> x[1] if 0 <= x[1] < 64 else None,
    Kind.ASHR: lambda x: x[0] >> x[1] if 0 <= x[1] < 64 else None,
    Kind.AND: lambda x: x[0] & x[1],
    Kind.OR: lambda x: x[0] | x[1],
    Kind.XOR: lambda x: x[0] ^ x[1],
    Kind.DIV: lambda x: _div(x[0], x[1]),
    Kind.REM: lambda x: _rem(x[0], x[1]),
    Kind.MIN: lambda x: min(x[0], x[1]),
    Kind.MAX: lambda x: max(x[0], x[1]),
}
_PREDS: dict[str, Callable[[int, int], bool]] = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}
