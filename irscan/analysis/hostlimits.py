"""Host values a launch itself bounds: what the host stores into grid y or z is at most 65,535.

The hardware refuses a launch whose grid y or z passes 65,535 (the PTX ISA's ``nctaid.y``/``.z``), so
a kernel that runs was launched with those values in range, and so was every host value they are
``ceil(F / t)`` of (``F <= 65,535*t``).  A field the same launch sets to a product of such values and
constants is then bounded too: CUTLASS's MLA decode launches ``split_kv`` CTAs along z and hands the
kernel a workspace of row stride ``split_kv*D``, at most ``65,535*D`` (hostfields.module_caps).
"""

from __future__ import annotations

from typing import Any

from irscan.analysis import dataflow
from irscan.analysis.hostgrid import _ceil_div, _host_field
from irscan.ir import SREG_RANGES, Kind

#: the most a launch's grid y and z hold
GRID_YZ_MAX = {1: SREG_RANGES["nctaid.y"][1], 2: SREG_RANGES["nctaid.z"][1]}
#: how many factors of a product are followed
_FACTORS = 8
#: the ops a host value is looked through (hostfields.py reads it too)
CASTS = frozenset({Kind.MOV, Kind.SEXT, Kind.ZEXT, Kind.TRUNC, Kind.CAST})


def _ids(gr: dataflow.Graph, n: int) -> set[Any]:
    """The names of host value n: the op, and the host field it reads (the same wherever it is read),
    through the casts around it."""
    out: set[Any] = set()
    for _ in range(8):
        out.add(("op", n))
        host = _host_field(gr, n)
        if host is not None:
            out.add(("host", host))
        if gr.op(n).kind not in CASTS or len(gr.defs(n, 0)) != 1:
            break
        n = gr.defs(n, 0)[0]
    return out


def grid_limited(gr: dataflow.Graph, grid: dict[int, int], tops: dict[int, int] | None = None) -> dict[Any, int]:
    """Host value name -> its most, for the values stored into grid y and z and their ceil dividends.
    ``tops``: axis -> the most CTAs the kernel's own accesses allow along it (checks/other_accesses.py,
    ``grid_caps``), where that is less than the hardware's."""
    out: dict[Any, int] = {}
    limits = dict(GRID_YZ_MAX)
    for axis, most in (tops or {}).items():
        limits[axis] = min(limits.get(axis, most), most)
    for axis, top in sorted(limits.items()):
        node = grid.get(axis)
        if node is None:
            continue
        for name in _ids(gr, node):
            out[name] = min(out.get(name, top), top)
        ct = _ceil_div(gr, node)
        if ct is not None and ct[0] is not None:  # grid = ceil(F / t) <= 65,535, so F <= 65,535*t
            for name in _ids(gr, ct[0]):
                out[name] = min(out.get(name, top * ct[1]), top * ct[1])
    return out


def product_limit(gr: dataflow.Graph, n: int, limited: dict[Any, int]) -> int | None:
    """The most op n holds when it is a product of positive constants and values ``limited`` bounds
    (at least one of them), None otherwise."""
    const, bound, todo, seen, found = 1, 1, [n], 0, False
    while todo:
        m = todo.pop()
        seen += 1
        if seen > _FACTORS:
            return None
        hit = [limited[x] for x in _ids(gr, m) if x in limited]
        op = gr.op(m)
        if hit:
            bound, found = bound * min(hit), True
        elif op.kind is Kind.CONST and isinstance(c := op.attrs.get("value"), int) and c > 0:
            const *= c
        elif op.kind is Kind.MUL and len(op.operands) == 2 and all(len(gr.defs(m, s)) == 1 for s in (0, 1)):
            todo += [gr.defs(m, 0)[0], gr.defs(m, 1)[0]]
        elif op.kind in CASTS and len(gr.defs(m, 0)) == 1:
            todo.append(gr.defs(m, 0)[0])
        else:
            return None
    return const * bound if found else None
