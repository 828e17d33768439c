"""Turn a candidate into a Finding a kernel engineer can act on: the Python line, the chain op by op,
the exact threshold of the dominant input, a concrete witness (true value, 32-bit value, extended
value) and the fix.

Nothing here depends on which check claimed the candidate: the check (checks/base.py ``Check``) supplies
its id, the opening clause of the message and the fix text; the rest is the same evidence for all."""

from __future__ import annotations

import linecache
from typing import TYPE_CHECKING, Any

from irscan.analysis.dataflow import Graph
from irscan.analysis.ranges import Ranges
from irscan.checks.base import Candidate, Check, Evidence, op_limit
from irscan.checks.memory import root_tensor
from irscan.checks.reporting import decide
from irscan.checks.threshold import threshold
from irscan.findings import Finding, Step
from irscan.ir import MEMORY_KINDS, Kind, Op

if TYPE_CHECKING:
    from irscan.checks.runner import Context

INPUT_KINDS = frozenset({Kind.SREG, Kind.ARG, Kind.EXTRACT, Kind.LOAD, Kind.CONST, Kind.TRUNC, Kind.PHI})


def _wrap32(v: int, signed: bool) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if signed and v >= 1 << 31 else v


def witness(true: int, signed_ext: bool) -> dict[str, Any]:
    i32 = _wrap32(true, True)
    ext = i32 if signed_ext else i32 & 0xFFFFFFFF
    return {
        "true": true,
        "i32": i32,
        "extended": ext,
        "extended_hex": f"0x{ext & 0xFFFFFFFFFFFFFFFF:016X}",
        "extension": "sign" if signed_ext else "zero",
    }


def _step(gr: Graph, rg: Ranges, n: int, role: str, wraps: bool = False, note: str = "") -> Step:
    op = gr.op(n)
    rng = None
    if role != "address" and op.width and op.kind not in MEMORY_KINDS and op.kind is not Kind.GEP:
        iv = rg.interval(rg.value(n))
        rng = [iv.lo, iv.hi]
    return Step(op.name, op.line, op.text, role, op.width, rng, wraps, note)


def _role(op: Op) -> str:
    if op.kind is Kind.TRUNC:
        return "narrowing"
    if op.kind in INPUT_KINDS:
        return "input"
    return "arithmetic"


def _line_text(file: str, line: int) -> str:
    """The source line, or "" where there is none: a location's file name is any string the IR holds."""
    try:
        return linecache.getline(file, line).strip()
    except ValueError:  # a NUL in the name names no file
        return ""


def source_of(op: Op | None, ctx: Context) -> tuple[str | None, int | None, int | None, str | None, str]:
    if op is not None and op.loc is not None:
        text = _line_text(op.loc.file, op.loc.line) or op.loc.name
        return op.loc.file, op.loc.line, op.loc.col, text, "statement"
    if ctx.kernel_file:
        text = _line_text(ctx.kernel_file, ctx.kernel_line or 0) or None
        return ctx.kernel_file, ctx.kernel_line, None, text, "kernel"
    return None, None, None, None, "none"


def _sink_info(gr: Graph, n: int) -> dict[str, Any]:
    op = gr.op(n)
    return {"op": op.name, "kind": op.kind.value, "space": op.space, "ir_line": op.line, "text": op.text}


def _path_to_sink(gr: Graph, start: int, sink: int) -> list[int]:
    """The ops between a widening point and its access: a shortest path along uses, by breadth-first
    search over the graph's adjacency (importing networkx for this one query cost more than a whole warm
    scan; the graph is still there as networkx for anyone who wants it: ``Graph.g``)."""
    parent: dict[int, int] = {start: start}
    frontier = [start]
    while frontier and sink not in parent and len(parent) < 4000:
        nxt: list[int] = []
        for n in frontier:
            for u, _slot in gr.users(n):
                if u not in parent:
                    parent[u] = n
                    nxt.append(u)
        frontier = nxt
    if sink not in parent:
        return []
    path = [sink]
    while path[-1] != start:
        path.append(parent[path[-1]])
    return path[::-1][1:-1]


def explain(gr: Graph, rg: Ranges, c: Candidate, check: Check, ctx: Context) -> Finding:
    w = c.widening
    wop = gr.op(w.node)
    culprit = gr.op(c.culprit) if c.culprit is not None else None
    where = _statement_op(gr, c, culprit, ctx)
    file, line, col, source, precision = source_of(where, ctx)
    where = where or culprit or wop
    origin = None
    if (  # the statement of the wrapping op, where it is another one (PTX line info can name an inlined
        culprit is not None  # helper's decorator for it: no statement then)
        and culprit.loc is not None
        and culprit.loc.name != "<module>"
        and (culprit.loc.file, culprit.loc.line) != (file, line)
        and not _names_a_definition(culprit, ctx)
    ):
        ofile, oline, _, osrc, _ = source_of(culprit, ctx)
        origin = {"file": ofile, "line": oline, "source": osrc}

    th = threshold(rg, c.value, c.limit)
    if c.extra.get("inner") is not None:  # a midpoint's sum (base.py, _midpoint): both halves must be large
        bound = "2^31" if c.limit.lo < 0 else "2^32"
        half = f"{c.limit.hi + 1 >> 1:,}"
        text = (f"no single-input threshold: the sum of two values wraps at {bound} once both pass {half} "
                "(a binary search over more entries than that), then is halved")  # fmt: skip
        th = {**th, "input": None, "threshold": None, "exact": False, "input_range": None,
              "input_fixed_by_launch": False, "text": text}  # fmt: skip
        th.pop("_true", None)
    if "_true" in th:
        wit: dict[str, Any] | None = witness(th.pop("_true"), w.signed)
    elif c.must:  # no single input decides it, but the launch does: the value it reaches
        at = rg.interval(c.value, least_harm=True)
        wit = witness(at.hi if at.hi > c.limit.hi else at.lo, w.signed)
    else:
        wit = None
    ub = any(
        "nsw" in gr.op(d).flags and (rg.interval(rg.value(d)).hi > op_limit(gr.op(d), True).hi)
        for d in c.slice
        if gr.op(d).width == 32
    )
    if th:
        th["undefined_behaviour_from"] = "2^31 (nsw)" if ub else None
        th["wraps_at"] = "2^31" if w.signed else "2^32"
        from irscan.checks.contract import safe_while  # the launch guard reads the same contract

        th["safe_while"] = safe_while(gr, rg, c, ctx.kernel_file, ctx.kernel_line)

    chain = [
        _step(gr, rg, d, _role(gr.op(d)), wraps=d == c.culprit) for d in c.slice if gr.op(d).kind is not Kind.CONST
    ]
    chain.append(_step(gr, rg, w.node, "widening", wraps=w.node == c.culprit,
                       note=f"{w.how}: {'sign' if w.signed else 'zero'}-extends"))  # fmt: skip
    start = w.sink_from if w.sink_from is not None else w.node
    if start != w.node:
        chain.append(_step(gr, rg, start, "widening"))
    path = _path_to_sink(gr, start, c.sinks[0])
    for d in path:
        chain.append(_step(gr, rg, d, "address"))
    chain.append(_step(gr, rg, c.sinks[0], "access"))

    expr = rg.name(c.value)
    full = rg.interval(c.value)
    sinks = [_sink_info(gr, s) for s in c.sinks]
    space = sinks[0]["space"] or "memory"
    lim = "2^31 - 1" if c.limit.lo < 0 else "2^32 - 1"
    ev = Evidence(expr, (culprit or wop).text, w.signed, th["input"])
    msg = check.headline(ev)
    if c.must:
        msg += f"; at this launch it reaches {full.hi:,} (> {lim})"
    decided = decide(gr, rg, c, th, path)
    necessary = decided.pop("necessary")
    if th["input"] is None and necessary is not None:  # no single input decides it, but one is needed
        th["necessary"] = necessary
        msg += f" ({th['text']}; a wrap needs {necessary['text']}, as {necessary['why']})"
    else:
        msg += f", wrapping when {th['text']}" if th["input"] else f" ({th['text']})"
    msg += f"{',' if c.must else ';'} and feeds the address of a {space} {sinks[0]['kind']}"
    if ub:
        msg += "; the i32 op carries nsw, so the overflow is undefined behaviour, not merely a wrap"
    return Finding(
        kernel=gr.fn.name,
        ir=gr.module.ir,
        check=check.id,
        severity=check.severity(c),
        file=file,
        line=line,
        col=col,
        source=source,
        source_precision=precision,
        message=msg,
        sink=sinks[0],
        sinks=sinks,
        chain=chain,
        wraps_when=th,
        witness=wit,
        undefined_behaviour=ub,
        fix=check.fix(ev),
        ir_file=ctx.ir_file,
        ir_line=where.line,
        expression=expr,
        origin=origin,
        access=_access(gr, rg, c.sinks),
        **decided,
    )


def _access(gr: Graph, rg: Ranges, sinks: list[int]) -> dict[str, Any]:
    """The access as both IRs see it (twins are paired by it): each sink's Python statement and kind,
    and the tensor its address starts from."""
    out = []
    for s in sinks:
        op = gr.op(s)
        loc = [op.loc.file, op.loc.line] if op.loc is not None else None
        rec = {"statement": loc, "kind": op.kind.value, "tensor": root_tensor(gr, rg, s)}
        if rec not in out:  # unrolled copies of one access are one access
            out.append(rec)
    return {"sinks": out}


def _statement_op(gr: Graph, c: Candidate, culprit: Op | None, ctx: Context) -> Op | None:
    """The op whose location best names the Python statement of the access: the widening op (where
    the index enters the address: CSE can leave a shared index computation with another access's
    location), then the way to the access, then the culprit.  Locations that only name the enclosing
    ``@cute.jit`` (the DSL labels those ``"<module>"``, e.g. an ``Int32(...)`` conversion; PTX line info
    points such ops at the decorator or the ``def``) come last."""
    order = [gr.op(n) for n in (c.widening.node, *_path_to_sink(gr, c.widening.node, c.sinks[0]), c.sinks[0])]
    if culprit is not None and culprit.kind not in (Kind.ARG, Kind.SREG, Kind.LOAD):
        order.append(culprit)
    for op in order:
        if op.loc is not None and op.loc.name != "<module>" and not _names_a_definition(op, ctx):
            return op
    return next((op for op in order if op.loc is not None), None)


def _names_a_definition(op: Op, ctx: Context) -> bool:
    """The location is a decorator or ``def`` line (an inlined helper's own location), not a statement.
    Decided without the source where it can be: the answer must not depend on whether the kernel's
    package is installed where the capture is scanned (a checked-in capture names another machine's
    files).  A statement of a kernel body is indented, so column 0 is a top-level ``def``, its decorator
    or module code; the capture's meta names the kernels' and ``@cute.jit`` functions' own lines."""
    assert op.loc is not None
    if op.loc.col == 0 or (op.loc.file, op.loc.line) in ctx.definitions:
        return True
    return _line_text(op.loc.file, op.loc.line).startswith(("@", "def ", "async def "))
