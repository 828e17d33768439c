"""Every global-memory access of a kernel, with the width its index arithmetic is done in.

``irscan diff`` reports *narrowed* address arithmetic even where no finding says it wraps: an access
whose index BASE computed in i64 and NEW computes in i32 is a compiler (or source) regression before
any shape reaches it.  A finding needs a wrap the ranges can prove at the captured launch; this
record needs only the width, so it is taken over the *open* ranges: the launch facts of meta.json
and the IR's grid/block attributes dropped, so a static grid small enough today does not hide an
i32 product of the block index and a stride.

An access's index is *32-bit* when some widening point (checks/base.py) feeding its address carries
i32 arithmetic that could leave the range its extension preserves for some launch or shape: a sum
or product of inputs, or a 64-bit value truncated to 32 bits.  A bare input extended (``sext(tid.x)``)
and thread-local i32 offsets (``8*tid.x + 2048``, bounded by the ISA's block limits) are not: the DSL
computes those in i32 in correct code too, so they are not a narrowing.

A record is plain JSON data (the scan's ``accesses`` list, README "JSON output"); its ``key`` is
built like a finding id (findings.py): from the kernel's Python name, the IR, the Python statement
and the canonical ideal index, never from IR lines or SSA names.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from irscan.analysis.dataflow import Graph
from irscan.analysis.intervals import Affine
from irscan.analysis.ranges import Facts, Ranges
from irscan.checks.base import I32_SIGNED, I32_UNSIGNED, Widening, leaves, narrow_slice, small_window
from irscan.checks.explain import source_of
from irscan.checks.runner import Context, points
from irscan.findings import canonical_expression, kernel_key, portable_path
from irscan.ir import MEMORY_KINDS, Kind

#: how far back an address's pointer chain is followed (GEP of GEP of cast ...)
_CHAIN_LIMIT = 64


def _index_value(gr: Graph, rg: Ranges, sink: int) -> Affine:
    """The ideal index of the access: the GEP indices along its pointer chain, summed (element units
    of each GEP), or the ideal value of the address itself where no GEP builds it (PTX: base + offset,
    the base an ``argN.ptr`` input).  Width-independent by construction, so the same access in an i32
    and an i64 build has the same value."""
    op = gr.op(sink)
    n, slot = sink, op.addr if op.addr is not None else 0
    total = Affine.of_const(0)
    for _ in range(_CHAIN_LIMIT):
        defs = gr.defs(n, slot)
        if len(defs) != 1:
            break
        d = defs[0]
        dop = gr.op(d)
        if dop.kind is Kind.GEP:
            for item in dop.attrs.get("indices", ()):
                if isinstance(item, tuple) and item and item[0] == "dyn":
                    total = total.add(rg.operand(d, int(item[1])))
                elif isinstance(item, tuple) and item and item[0] == "const" and isinstance(item[1], int):
                    total = total.add(Affine.of_const(item[1]))
            n, slot = d, 0
            continue
        if dop.kind in (Kind.CAST, Kind.MOV):
            n, slot = d, 0
            continue
        return total.add(rg.value(d))
    return total


def _bare(rg: Ranges, a: Affine) -> bool:
    """One input, extended as it is: no arithmetic happened in the narrow width."""
    return len(a.terms) == 1 and a.terms[0][1] == 1 and a.const == 0 and not rg.atoms[a.terms[0][0]].scaled


def _narrow_parts(gr: Graph, rg: Ranges, open_rg: Ranges, ws: list[Widening]) -> list[dict[str, Any]]:
    """The 32-bit index arithmetic among the widening points ``ws`` of one access."""
    out = []
    for w in ws:
        value = rg.operand(w.node, w.slot)
        limit = I32_SIGNED if w.signed else I32_UNSIGNED
        sl = narrow_slice(gr, w.node, w.slot)
        truncates = w.sink_from is not None or any(gr.op(d).kind is Kind.TRUNC for d in sl)
        if not truncates and _bare(rg, value):
            continue
        if not leaves(open_rg.interval(open_rg.operand(w.node, w.slot)), limit):
            continue  # bounded for every launch: thread-local offsets, constants
        out.append(
            {
                "expression": canonical_expression(rg.name(value)),
                "how": w.how,
                "extension": "sign" if w.signed else "zero",
                "wraps_at": "2^31" if w.signed else "2^32",
                "truncates": truncates,
            }
        )
    return out


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` cut at each ``sep`` outside brackets (one regular-expression pass: linear)."""
    parts, depth, start = [], 0, 0
    for m in re.finditer(r"[(\[{]|[)\]}]|" + re.escape(sep), text):
        tok = m.group()
        if tok in "([{":
            depth += 1
        elif tok in ")]}":
            depth -= 1
        elif depth == 0:
            parts.append(text[start : m.start()])
            start = m.end()
    parts.append(text[start:])
    return parts


def normal_form(expression: str) -> str:
    """The canonical expression (findings.canonical_expression) with its terms, and each term's
    factors, in a fixed order: the readable form orders terms by their range, which a new stride type
    changes (``ctaid.x*arg0.stride[0] + arg0.ptr`` in i64, ``arg0.ptr + ctaid.x*arg0.stride[0]`` in
    i32), and products name their factors in operand order."""
    e = canonical_expression(expression).replace(" - ", " + -")
    terms = ["*".join(sorted(_split_top(t.strip(), "*"))) for t in _split_top(e, " + ")]
    return " + ".join(sorted(terms))


def access_key(rec: dict[str, Any]) -> str:
    """The record's identity across builds (the finding-id rule, README "Finding ids")."""
    where = [portable_path(rec["file"]), rec["line"] or 0] if rec.get("file") else ["", 0]
    key = [kernel_key(rec["kernel"]), rec["ir"], *where, rec["kind"], normal_form(rec["expression"])]
    return hashlib.sha1(json.dumps(key).encode()).hexdigest()[:12]


def records(
    gr: Graph,
    rg: Ranges,
    ctx: Context,
    meta_args: list[dict[str, Any]],
    pts: list[tuple[Widening, list[int]]] | None = None,
) -> list[dict[str, Any]]:
    """One record per global-memory access of the function and distinct key, in IR order (module doc).
    ``pts``: checks.runner.points(gr), which the checks' run has computed already."""
    by_sink: dict[int, list[Widening]] = {}
    for w, sinks in points(gr) if pts is None else pts:
        for s in sinks:
            by_sink.setdefault(s, []).append(w)
    open_rg = Ranges(gr, Facts(), meta_args)
    out: dict[str, dict[str, Any]] = {}
    accesses = [n for n in gr.nodes() if gr.op(n).kind in MEMORY_KINDS and gr.op(n).addr is not None]
    for n in sorted(accesses, key=lambda x: (gr.op(x).line, x)):
        op = gr.op(n)
        if small_window(gr, n):
            continue
        file, line, col, source, precision = source_of(_located(gr, n), ctx)
        narrow = _narrow_parts(gr, rg, open_rg, by_sink.get(n, []))
        rec: dict[str, Any] = {
            "kernel": gr.fn.name,
            "ir": gr.module.ir,
            "file": file,
            "line": line,
            "col": col,
            "source": source,
            "source_precision": precision,
            "kind": op.kind.value,
            "space": op.space,
            "ir_line": op.line,
            "expression": canonical_expression(rg.name(_index_value(gr, rg, n))),
            "index_width": 32 if narrow else 64,
            "narrow": narrow,
        }
        rec["key"] = access_key(rec)
        same = out.get(rec["key"])
        if same is None:
            out[rec["key"]] = {**rec, "count": 1}
        else:  # one statement's unrolled or vectorised copies of one access: one record, its narrowest
            same["count"] += 1
            if rec["index_width"] < same["index_width"]:
                same.update(index_width=rec["index_width"], narrow=rec["narrow"])
    return list(out.values())


def _located(gr: Graph, sink: int) -> Any:
    """The op naming the access's Python statement: the access, else the nearest op of its pointer
    chain with a location (PTX accesses and some DSL stores carry none of their own)."""
    n, slot = sink, gr.op(sink).addr or 0
    for _ in range(_CHAIN_LIMIT):
        op = gr.op(n)
        if op.loc is not None and op.loc.name != "<module>":
            return op
        defs = gr.defs(n, slot)
        if len(defs) != 1:
            break
        n, slot = defs[0], 0
    return gr.op(sink) if gr.op(sink).loc is not None else None
