"""The threshold of a wrap: the smallest value of one named input at which the value leaves its range.

A threshold a user can act on names an input they know (README, "What is reported"): a parameter field
(``arg2.shape[1]``, ``arg5``), a special register (``ctaid.x``), a value loaded from a tensor
(``load(arg9)``) or a loop counter named by its bound (``loop counter (< arg5)``); it is positive and
exact where the chain is affine.  The dominant input (the largest term) is taken, the others at their
largest.  Where the dominant term is an expression of an input (``ctaid.x / 8``, ``max(m, 0)``, a
select or a join of such), the threshold is carried back through it to the input.  Where no single
input decides it (the value leaves the range only through a subtracted term, a product of two free
inputs, a shift by a variable), the text says so in words and ``input``/``threshold`` are None.
"""

from __future__ import annotations

import re
from typing import Any

from irscan.analysis.intervals import Affine, Interval
from irscan.analysis.ranges import Ranges
from irscan.ir import Kind

#: a name a user knows: argN, argN.shape[i], argN.stride[i], argN+off, tid.x, nctaid.y, laneid, load(argN)
NAMED = re.compile(r"^(?:[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)?(?:\[\d+\])?(?:\+\d+)?|load\(arg\d+\)|loop counter .+)$")
#: how many expressions a threshold is carried back through
_DEPTH = 8
#: preds of a loop's exit compare that bound its counter from above
_UPPER = ("slt", "ult", "sle", "ule")
#: the same compares with the bound as the first operand
_MIRRORED = ("sgt", "ugt", "sge", "uge")


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _free_factor(rg: Ranges, k: object) -> tuple[object, int] | None:
    """For a product atom ``x * y`` with y bounded by the launch: (x, max y), so the threshold is on x.

    ``stride * ctaid.x`` with ctaid.x <= 8191 wraps when ``stride >= ...``: the free input is what the
    user controls, the launch-bounded one is taken at its largest (the manifest's rule, and the reader's).
    """
    atom = rg.atoms[k]
    if atom.factors is None:
        return None
    a, b = atom.factors
    for x, y in ((a, b), (b, a)):
        if len(x.terms) == 1 and x.const == 0 and x.terms[0][1] > 0 and not rg.atoms[x.terms[0][0]].fixed:
            iy = rg.interval(y)
            if iy.lo >= 0 and iy.hi > 0 and all(rg.atoms[t].fixed for t, _ in y.terms):
                return x.terms[0][0], x.terms[0][1] * iy.hi
    return None


def _dominant(rg: Ranges, value: Affine) -> list[tuple[object, int]]:
    """Positive terms, largest first (coefficient times the atom's top)."""
    terms = [(k, c) for k, c in value.terms if c > 0]
    return sorted(terms, key=lambda kc: -kc[1] * max(rg.atoms[kc[0]].iv.hi, 1))


def _solve(rg: Ranges, value: Affine, need: int, k: object, c: int) -> tuple[object, int, int]:
    """Smallest value x of atom k with ``c*x + (the rest at its largest) >= need``: (atom, x, the value
    there).  A product with a launch-bounded factor puts the threshold on its free factor."""
    rest = rg.interval(Affine(tuple(t for t in value.terms if t[0] != k), value.const)).hi
    free = _free_factor(rg, k)
    if free is not None:
        k, c = free[0], c * free[1]
    x = _ceil_div(need - rest, c)
    return k, x, c * x + rest


def _loop_join(rg: Ranges, key: object) -> list[int] | None:
    """The nodes whose compares bound a loop-carried join (None: not one).

    MLIR: a block argument (Kind.PHI), compared itself or through its increment.  PTX has no block
    arguments: a register read where several definitions reach is a join of the range analysis, keyed
    ``("join", use, slot)``; the loop's compare reads the register as one of those definitions wrote it
    (``add %r6, %r6, %r3; setp.lt %p, %r6, %r5``, or ``shl %r96, %r97, 2; setp.lt %p, %r96, %r9``
    where the loop steps %r97)."""
    gr = rg.gr
    if isinstance(key, int) and key in gr and gr.op(key).kind is Kind.PHI:
        return [key] + [d for d in gr.defs(key, 0) if gr.op(d).kind is Kind.ADD]
    if isinstance(key, tuple) and len(key) == 3 and key[0] == "join" and isinstance(key[1], int) and key[1] in gr:
        use, slot = key[1], key[2]
        raw = gr.op(use).operands[slot] if isinstance(slot, int) and slot < len(gr.op(use).operands) else None
        if not isinstance(raw, str):
            return None
        updates = [d for d in gr.defs(use, slot) if gr.op(d).results[:1] == (raw,)]
        return updates or None
    return None


def loop_counter_name(rg: Ranges, key: object) -> str | None:
    """``loop counter (< arg5)``: a loop-carried value (an MLIR block argument, a PTX register its
    loop updates) whose loop compares it (or its increment) against a named input."""
    gr = rg.gr
    for n in _loop_join(rg, key) or []:
        for u, slot in gr.users(n):
            uop = gr.op(u)
            pred = uop.attrs.get("pred")
            # ``i < B`` or, written the other way round, ``B > i`` (the DSL's ``while B > i``)
            if uop.kind is not Kind.ICMP or slot not in (0, 1) or pred not in (_UPPER, _MIRRORED)[slot]:
                continue
            bound = rg.operand(u, 1 - slot)
            if len(bound.terms) == 1 and bound.terms[0][1] == 1:
                name = rg.atoms[bound.terms[0][0]].name
                if NAMED.match(name):
                    rel = "<=" if pred in ("sle", "ule", "sge", "uge") else "<"
                    return f"loop counter ({rel} {name})"
    return None


def _inverse(rg: Ranges, k: object, x: int) -> list[tuple[Affine, int]]:
    """``atom k >= x`` carried back one step: (expression, smallest value it needs) alternatives."""
    gr = rg.gr
    if not isinstance(k, int) or k not in gr:
        return []
    op = gr.op(k)
    kind = op.kind
    if kind is Kind.PHI:
        out = []
        for d in gr.defs(k, 0):
            v = rg.value(d)
            if k not in [t for t, _ in v.terms]:  # not the loop's own update
                out.append((v, x))
        return out
    if not op.operands:
        return []
    if kind in (Kind.DIV, Kind.LSHR, Kind.ASHR) and len(op.operands) == 2:
        divisor = rg.operand(k, 1)
        if not divisor.is_const() or divisor.const <= 0:
            return []
        mult = divisor.const if kind is Kind.DIV else 1 << min(divisor.const, 62)
        return [(rg.operand(k, 0), x * mult)]
    if kind in (Kind.OR, Kind.AND) and len(op.operands) == 2:
        # Of non-negative values, a | b <= a + b and a & m <= a: the value reaches x only when one
        # operand reaches x less the other's largest (a necessary condition, so not marked exact).
        a, b = rg.operand(k, 0), rg.operand(k, 1)
        ia, ib = rg.interval(a), rg.interval(b)
        if ia.lo < 0 or ib.lo < 0:
            return []
        if kind is Kind.AND:
            return [(v, x) for v in (a, b) if not v.is_const()]
        return [(a, x - ib.hi), (b, x - ia.hi)]
    if kind is Kind.MAX and len(op.operands) == 2:
        a, b = rg.operand(k, 0), rg.operand(k, 1)
        return [(v, x) for v in (a, b) if not v.is_const() or v.const < x]
    if kind is Kind.SELECT and len(op.operands) == 3:
        return [(rg.operand(k, 1), x), (rg.operand(k, 2), x)]
    if kind is Kind.SHUFFLE:
        s = op.attrs.get("shuffled")
        return [(rg.operand(k, s), x)] if isinstance(s, int) else []
    return []


def named(name: str) -> bool:
    """An input a user knows, or a product of such (``arg0.shape[0]*arg0.stride[0]``)."""
    return all(NAMED.match(part) for part in name.split("*"))


def _name(rg: Ranges, k: object) -> str | None:
    name = rg.atoms[k].name
    if named(name):
        return name
    return loop_counter_name(rg, k)


def _search(rg: Ranges, value: Affine, need: int) -> tuple[str, object, int, int] | None:
    """(name, atom, threshold, the value there) on a named input, carried back through expressions;
    the smallest threshold wins among alternatives on the same input, the first input found otherwise."""
    todo: list[tuple[Affine, int, int, int | None]] = [(value, need, 0, None)]
    found: list[tuple[str, object, int, int]] = []
    while todo:
        v, nd, depth, true = todo.pop(0)
        for k, c in _dominant(rg, v)[:3]:
            k2, x, there = _solve(rg, v, nd, k, c)
            atom = rg.atoms[k2]
            name = _name(rg, k2)
            if name is None:
                if depth < _DEPTH:
                    todo.extend((e, n, depth + 1, there if true is None else true) for e, n in _inverse(rg, k2, x))
                break
            if atom.iv.lo < x <= max(atom.iv.hi, 1) and x >= 1:
                found.append((name, k2, x, there if true is None else true))
                break
            # the wrap does not hinge on this input (it wraps at its lowest value): try the next term
    if not found:
        return None
    first = found[0][0]
    return min((f for f in found if f[0] == first), key=lambda f: f[2])


def threshold(rg: Ranges, value: Affine, limit: Interval) -> dict[str, Any]:
    """The wrap condition of ``value`` against ``limit``: on the dominant named input where one decides
    it, in words otherwise (then ``input`` and ``threshold`` are None and there is no witness)."""
    signedness = "signed" if limit.lo < 0 else "unsigned"
    base: dict[str, Any] = {"op": ">=", "limit": limit.hi, "signedness": signedness}
    iv = rg.interval(value)
    hit = _search(rg, value, limit.hi + 1) if iv.hi > limit.hi else None
    if hit is None:
        return {**base, "input": None, "threshold": None, "text": _in_words(rg, value, limit, iv),
                "input_range": None, "input_fixed_by_launch": False, "exact": False}  # fmt: skip
    name, k, x, true = hit
    atom = rg.atoms[k]
    direct = k in dict(value.terms) or any((_free_factor(rg, t) or (None,))[0] == k for t, _ in value.terms)
    exact = direct and all(not rg.atoms[t].opaque for t, _ in value.terms)
    return {
        **base,
        "input": name,
        "threshold": x,
        "text": f"{name} >= {x}",
        "input_range": [atom.iv.lo, atom.iv.hi],
        "input_fixed_by_launch": atom.fixed,
        "exact": exact,
        "_true": true,
    }


def _in_words(rg: Ranges, value: Affine, limit: Interval, iv: Interval) -> str:
    """Why no single input has a threshold, said so."""
    bound = "2^31" if limit.lo < 0 else "2^32"
    if iv.hi <= limit.hi:
        neg = [rg.atoms[k].name for k, c in value.terms if c < 0]
        through = f" through the subtracted {neg[0]}" if neg else ""
        return f"no single-input threshold: the value leaves the {bound} range only below -2^31{through}"
    product = _product_words(rg, value, limit.hi + 1)
    if product:
        return f"no single-input threshold: {value_kind(rg, value)} wraps when {product}"
    inputs = [rg.atoms[k].name for k, _ in _dominant(rg, value) if named(rg.atoms[k].name)]
    if inputs:
        return (f"no single-input threshold: {value_kind(rg, value)} wraps only with several inputs large "
                f"together ({', '.join(inputs[:3])} and the rest at their largest)")  # fmt: skip
    return f"no single-input threshold: {value_kind(rg, value)} depends on values irscan cannot name as inputs"


def _product_words(rg: Ranges, value: Affine, need: int) -> str | None:
    """``load(arg12) * arg11.stride[0] >= 2,147,483,648``: where the largest term is a product of two free
    values (a page index times a page stride), the product the wrap needs, the rest at its largest."""
    terms = _dominant(rg, value)
    if not terms or rg.atoms[terms[0][0]].factors is None:
        return None
    k, c = terms[0]
    a, b = rg.atoms[k].factors or (value, value)
    rest = rg.interval(Affine(tuple(t for t in value.terms if t[0] != k), value.const)).hi
    if 2 * rest >= need:  # the other terms come within a factor of two of the limit: not the product's wrap
        return None
    at = _ceil_div(need - rest, c)

    def factor(f: Affine) -> str:
        nm = rg.name(f)
        return nm if named(nm) or not any(ch in nm for ch in "+-| ") else f"({nm})"

    scale = "" if c == 1 else f"{c} * "
    return f"{scale}{factor(a)} * {factor(b)} >= {at:,}, the rest at its largest"


def value_kind(rg: Ranges, value: Affine) -> str:
    """What the value is made of, in a few words (for the in-words thresholds)."""
    opaque = any(rg.atoms[k].opaque for k, _ in value.terms)
    products = any(rg.atoms[k].factors is not None for k, _ in value.terms)
    if products:
        return "the value (a product of free inputs)"
    return "the value (with opaque parts)" if opaque else "the value"
