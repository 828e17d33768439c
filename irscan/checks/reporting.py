"""The reporting rule (README, "What is reported"): a wrap is reported when a user can reach it with
inputs that exist, and every finding says which facts its verdict rests on.

(a) A coordinate bounded by an i32 extent plus less than one tile (``value <= E + c``, c < 2^16) wraps
    only when that extent is itself within a tile of the i32 limit: not a finding.
(b) A coordinate loaded from memory that indexes a tensor mode is below that mode's extent: the
    tensor then holds at least the coordinate's value along that mode (rule (c) weighs its size).
(c) Memory feasibility (checks/memory.py): a threshold at which a tensor the kernel addresses with the
    wrap's inputs exceeds ``--max-memory`` is unreachable: the access's own tensor, an extent's, or
    that of another access that runs before it (checks/other_accesses.py).

(a) and (b) need relations between values and extents, which the range analysis states as *bounds*:
``Ranges.bounds(value)`` (when it has them) returns objects shaped like :class:`Bound`.  Read through
``getattr``: an analysis without bounds leaves (a) and (b) undecided, and the facts say so.

Suppressed findings are kept, with the reason, in the document's ``rule_suppressed`` list (``--all``
shows them): nothing is dropped silently.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from fractions import Fraction
from math import ceil, floor
from typing import Any, Protocol

from irscan.analysis.dataflow import Graph
from irscan.analysis.intervals import Affine
from irscan.analysis.params import PLACEHOLDER_EXTENT
from irscan.analysis.ranges import Ranges
from irscan.checks import memory, other_accesses, shared_extents
from irscan.checks.base import Candidate
from irscan.findings import Finding, fold

#: a loop counter's name ends with its bound: ``loop counter (< arg2.shape[0])``
_LOOP_BOUND = re.compile(r"\((?:<|<=) (?P<extent>[^()\s]+)\)$")
#: rule (a): how far below the i32 limit an extent's bound may reach and still be "one tile"
TILE = 1 << 16
#: how many times the need an access of another role (other_accesses.py: run by some thread of every
#: CTA, not before this access) must pass the others' to be the one rule (c) weighs: a near tie would
#: name another tensor than the access's own for no change in the verdict (the bug report reads it)
WIDE_FACTOR = 2
I32_EXTENT_MAX = (1 << 31) - 1


class Bound(Protocol):
    """``value <= Σ coef·extent + const``, as the range analysis states it (``Ranges.bounds``).

    ``terms``: (extent name, coef), the extents inputs the user knows (``arg2.shape[0]``, ``arg5``,
    ``nctaid.x`` as the host computes it); ``i32``: every extent is an i32 value (at most 2^31 - 1);
    ``fact``: the fact in words (``grid from host: nctaid.x = ceil(arg2.shape[0] / 4)``, ``guard: row <
    arg5 dominates``); ``tensor``/``modes``: rule (b), the value is a coordinate of tensor ``argK``
    along these modes (so below the product of their extents), None/() otherwise."""

    terms: Sequence[tuple[str, int | Fraction]]
    const: int
    i32: bool
    fact: str
    tensor: int | None
    modes: Sequence[int]


def bounds_of(rg: Ranges, value: Affine, at: int | None = None) -> list[Any] | None:
    """The analysis's bounds on ``value`` where it is used (``at``: the widening point, so that compares
    dominating the use refine it); None when the analysis states none (an older floor)."""
    fn = getattr(rg, "bounds", None)
    if not callable(fn):
        return None
    try:
        return list(fn(value, at=at) or [])
    except Exception:  # noqa: BLE001 (a bound we cannot read must not lose the finding)
        return []


def _term_text(name: str, c: Any) -> str:
    """``arg0``, ``128*arg0``, ``arg0/16``, ``3*arg0/16``."""
    c = Fraction(c)
    top = "" if c.numerator == 1 else f"{c.numerator}*"
    return f"{top}{name}" + ("" if c.denominator == 1 else f"/{c.denominator}")


def bound_text(b: Any) -> str:
    """``value <= 128*arg0.shape[0] + 16383 (grid from host: ...)``."""
    parts = [_term_text(n, c) for n, c in getattr(b, "terms", ())]
    const = int(getattr(b, "const", 0))
    rhs = " + ".join([*parts, *([f"{const:,}"] if const or not parts else [])]).replace("+ -", "- ")
    return f"value <= {rhs} ({getattr(b, 'fact', '')})"


def extent_threshold(b: Any, limit_hi: int) -> tuple[str, int] | None:
    """For a bound on one extent (``c*E + k``): the smallest E at which the bound reaches the wrap."""
    terms = [(str(n), Fraction(c)) for n, c in getattr(b, "terms", ()) if c > 0]
    if len(terms) != 1:
        return None
    name, c = terms[0]
    at = ceil((limit_hi + 1 - int(getattr(b, "const", 0))) / c)
    # a bound whose constant alone passes the limit keeps nothing below it: no extent threshold
    return (name, at) if at >= 1 else None


def rule_a(b: Any, limit_hi: int) -> str | None:
    """The reason rule (a) suppresses under bound ``b``, or None when ``b`` leaves the wrap open."""
    terms = [(str(n), Fraction(c)) for n, c in getattr(b, "terms", ()) if c > 0]
    const = int(getattr(b, "const", 0))
    most = getattr(b, "most", None)
    if terms and isinstance(most, int) and most <= limit_hi:  # every extent at the most the analysis allows
        return f"(a) it never wraps: {bound_text(b)}, at most {most:,} with every extent at its largest"
    if not getattr(b, "i32", False):
        return None
    if not terms and not getattr(b, "terms", ()):  # "value <= const" from a fact the interval lacks (a guard)
        return f"(a) it never wraps: {bound_text(b)}" if const <= limit_hi else None
    if not terms:
        return None
    top = floor(sum(c * I32_EXTENT_MAX for _, c in terms) + const)
    if top <= limit_hi:
        return f"(a) it never wraps: {bound_text(b)}, at most {top:,} with every i32 extent at 2^31 - 1"
    if len(terms) == 1 and terms[0][1] == 1 and 0 <= const < TILE:
        return (f"(a) a coordinate bounded by an i32 extent: {bound_text(b)}, so it wraps only when "
                f"{terms[0][0]} >= {limit_hi - const + 1:,}, within one tile of the i32 limit")  # fmt: skip
    # a 32-bit extent E plus terms that are less than a tile even at their largest (N + C - 1 with C also
    # grid y, so at most 65,535): it wraps only with E within that of the i32 limit
    tops = dict(getattr(b, "tops", ()))
    name = next((n for n, c in terms if c == 1 and tops.get(n) == I32_EXTENT_MAX), None)
    rest = most - I32_EXTENT_MAX if isinstance(most, int) else TILE
    if name is not None and 0 <= rest < TILE:
        return (f"(a) a coordinate bounded by an i32 extent: {bound_text(b)}, at most {name} + {rest:,} with "
                f"the other extents at their largest, so it wraps only when {name} >= "
                f"{limit_hi - rest + 1:,}, within one tile of the i32 limit")  # fmt: skip
    return None


def rule_b_need(rg: Ranges, b: Any, wrap_value: int) -> memory.Need | None:
    """Rule (b): a coordinate of tensor K along ``modes`` at ``wrap_value``: K's size there."""
    k = getattr(b, "tensor", None)
    if not isinstance(k, int):
        return None
    meta = rg.meta_args[k] if k < len(rg.meta_args) else None
    bits = memory.element_bits(meta)
    modes = (meta or {}).get("modes") or []
    if bits is None:
        return None
    along = set(getattr(b, "modes", ()))
    elements = wrap_value
    for i, md in enumerate(modes):
        shape = md.get("shape") or {}
        if i not in along and shape.get("kind") == "static" and isinstance(shape.get("value"), int):
            elements *= max(int(shape["value"]), 1)
    return memory.Need(f"arg{k}", elements * bits // 8, f"(b) {getattr(b, 'fact', '')}")


def decide(gr: Graph, rg: Ranges, c: Candidate, th: dict[str, Any], path: list[int]) -> dict[str, Any]:
    """The facts a candidate's verdict rests on, the reason rule (a) suppresses it (or None), the
    largest tensor size rule (c) knows it needs, and the first named input a bound says the wrap needs
    (``arg1.shape[0] >= 1,198,373``: a necessary condition, for a finding no single input decides):
    ``{"facts", "rule_suppressed", "memory", "necessary"}``."""
    facts = _input_facts(rg, c)
    wrap_value = c.limit.hi + 1
    needs: list[memory.Need] = []
    suppressed = None
    necessary: dict[str, Any] | None = None
    inner = c.extra.get("inner")  # the value is a sum inside the widened one (base.py, _midpoint): the
    # access bounds the widened value, not it, so only the sum's own facts (guards at it) hold
    bounds = bounds_of(rg, c.value, at=inner if isinstance(inner, int) else c.widening.node)
    if bounds is None:
        facts.append("(a)/(b) undecided: the range analysis states no bound relating the value to an extent")
    keys = [k for k, _ in c.value.terms]
    for b in bounds or []:
        k = getattr(b, "tensor", None)
        if isinstance(k, int) and memory.carries_stride(gr, rg, keys, k):
            facts.append(f"{bound_text(b)}: not a coordinate, the value is computed from a stride of arg{k}")
            continue  # an offset the kernel builds over the tensor's pointer (its own flat view)
        if isinstance(k, int) and memory.scales_own_extent(rg, keys, k):
            facts.append(f"{bound_text(b)}: not a coordinate, the value multiplies an extent of arg{k}")
            continue  # a flat index over several of its modes, built by the kernel
        why = rule_a(b, c.limit.hi)
        if why is not None and suppressed is None:
            suppressed = why
        need = rule_b_need(rg, b, wrap_value)
        if need is not None:
            needs.append(need)
        if why is not None:
            continue
        on_extent = extent_threshold(b, c.limit.hi)
        if on_extent is None:
            facts.append(f"{bound_text(b)}: does not keep it below {wrap_value:,}")
            continue
        name, extent_at = on_extent
        facts.append(f"{bound_text(b)}: it wraps only when {name} >= {extent_at:,}")
        if necessary is None:  # a named input the wrap needs, where no single input decides it
            necessary = {"input": name, "at_least": extent_at, "text": f"{name} >= {extent_at:,}",
                         "why": bound_text(b)}  # fmt: skip
        need = memory.extent_need(rg, name, extent_at)
        if need is not None:
            needs.append(need)
        needs += shared_extents.extent_peer_needs(rg, name, extent_at)
    start = c.widening.sink_from if c.widening.sink_from is not None else c.widening.node
    for sink in c.sinks[:1] if inner is None else ():
        need = memory.access_need(gr, rg, start, path, sink, wrap_value)
        if need is not None:
            needs.append(need)
    near, wide = other_accesses.needs(gr, rg, c.value, c.limit, c.widening.node, c.sinks)
    needs += near
    needs += shared_extents.shared_extent_needs(rg, needs)
    if suppressed is None:
        suppressed = memory.beyond_static_layout(rg, needs + wide)
    if suppressed is None and inner is None:
        suppressed = _coordinate_of_an_i32_mode(gr, rg, c, start, path)
    if suppressed is None and inner is None:
        suppressed = _stride_of_a_one_dimensional_tensor(gr, rg, c, start, path)
    if suppressed is None and inner is None:
        suppressed = _offset_into_a_checked_32bit_tensor(gr, rg, c, start, path)
    if th.get("input") and th.get("threshold") is not None:
        name, th_at = str(th["input"]), int(th["threshold"])
        loop = _LOOP_BOUND.search(name)  # a loop counter at t needs its bound above t
        extent, th_at = (loop["extent"], th_at + 1) if loop else (name, th_at)
        need = memory.extent_need(rg, extent, th_at)
        if need is not None:
            needs.append(need)
        needs += shared_extents.extent_peer_needs(rg, extent, th_at)
    at = th["text"] if th.get("input") else f"the wrap ({'2^31' if c.limit.lo < 0 else '2^32'})"
    best = max(needs, key=lambda n: n.bytes, default=None)
    far = max(wide, key=lambda n: n.bytes, default=None)
    if far is not None and (best is None or far.bytes >= WIDE_FACTOR * best.bytes):
        best = far  # an access of another warp's role: shown only where it changes the scale of the need
    if best is None:
        facts.append("(c) no tensor size at the threshold is known: memory does not bound it")
    return {"facts": facts, "rule_suppressed": suppressed, "memory": best.as_json(at) if best else None,
            "necessary": necessary}  # fmt: skip


def _coordinate_of_an_i32_mode(gr: Graph, rg: Ranges, c: Candidate, start: int, path: list[int]) -> str | None:
    """Rule (a) read off the access itself: the wrapping value is the coordinate along one mode of the
    tensor it addresses (checks/memory.py ``indexed_mode``) whose extent is a dynamic i32, so an access
    in bounds keeps it below that extent, at most 2^31 - 1.  Only values free of stride fields and
    products qualify (those are offsets, not coordinates), also where a join hides the stride
    (``memory.carries_stride``)."""
    keys = [k for k, _ in c.value.terms]
    if any(rg.atoms[k].factors is not None or "stride" in rg.atoms[k].name for k in keys):
        return None
    for sink in c.sinks:
        scale = memory.access_scale(gr, start, path, sink) if sink == c.sinks[0] else None
        tensor = memory.root_tensor(gr, rg, sink) if scale is not None else None
        coefs = [int(k) for _, k in c.value.terms]
        hit = memory.indexed_mode(rg, tensor, scale, coefs) if tensor is not None and scale is not None else None
        if hit is None or tensor is None or memory.carries_stride(gr, rg, keys, int(tensor.removeprefix("arg"))):
            continue  # a value computed from the tensor's own stride is an offset (its own flat view)
        i, md = hit
        shape = md.get("shape") or {}
        if rg.computed_extent(int(tensor.removeprefix("arg")), i):
            continue  # an extent of the host's own arithmetic is no allocation (hostfields.module_computed)
        stride = (md.get("stride") or {}).get("value")
        if shape.get("kind") == "dynamic" and shape.get("width") == 32:
            return (f"(a) a coordinate bounded by an i32 extent: it indexes mode {i} of {tensor} (stride {stride}, "
                    f"extent {tensor}.shape[{i}], an i32), so an access in bounds keeps it below 2^31 - 1")  # fmt: skip
        extent = shape.get("value") if shape.get("kind") == "static" else None
        if (
            isinstance(extent, int)
            and 0 < extent < PLACEHOLDER_EXTENT
            and all(abs(k) < extent for _, k in c.value.terms)
        ):
            # a mode of static extent beside dynamic (64-bit) strides: the row-stride part of the offset
            # is added in 64 bits, and the 32-bit value is this mode's coordinate alone (quack's
            # mX[row, target] over (?,151936):(?,1) with target an Int32 of a loaded class index); the
            # 2^31 - 1 placeholder a view over a raw pointer gets bounds nothing, and a term scaled by
            # the extent or more (`row*151936 + col` flattened by hand) is no coordinate of this mode
            return (f"(a) it never wraps: it indexes mode {i} of {tensor} (stride {stride}, static extent "
                    f"{extent:,}), so an access in bounds keeps it below {extent:,}")  # fmt: skip
    return None


def _stride_of_a_one_dimensional_tensor(gr: Graph, rg: Ranges, c: Candidate, start: int, path: list[int]) -> str | None:
    """Rule (a) for ``x * argK.stride[m]`` addressing a one-dimensional tensor ``argK`` (one mode, or
    every other mode of static extent 1) in elements: in bounds ``x`` is below the mode's i32 extent,
    so for a compact tensor (stride 1) the offset stays below 2^31 - 1.  An assumption, said in the
    reason: it wraps only for a strided one-dimensional view spanning >= 2^31 elements (a column of a
    huge matrix).  A tensor of several real modes is not covered: a row index times a row stride is
    the bug class itself."""
    if len(c.value.terms) != 1 or c.value.const != 0 or c.value.terms[0][1] != 1 or not c.sinks:
        return None
    factors = rg.atoms[c.value.terms[0][0]].factors
    names = [rg.atoms[f.terms[0][0]].name for f in factors or () if len(f.terms) == 1 and f.const == 0]
    tensor = memory.root_tensor(gr, rg, c.sinks[0])
    k = int(tensor.removeprefix("arg")) if tensor is not None else len(rg.meta_args)
    meta = rg.meta_args[k] if k < len(rg.meta_args) else None
    bits, modes = memory.element_bits(meta), (meta or {}).get("modes") or []
    if bits is None or memory.access_scale(gr, start, path, c.sinks[0]) != bits // 8:
        return None  # the product must enter the address in elements
    real = [i for i, md in enumerate(modes) if ((md or {}).get("shape") or {}).get("value") != 1]
    if len(real) != 1 or f"{tensor}.stride[{real[0]}]" not in names:
        return None
    shape = (modes[real[0]] or {}).get("shape") or {}
    if not (shape.get("kind") == "dynamic" and shape.get("width") == 32):
        return None
    return (f"(a) a coordinate of a one-dimensional tensor: a compact {tensor} keeps it below "
            f"{tensor}.shape[{real[0]}]; it wraps only for a strided view spanning >= 2^31 elements")  # fmt: skip


def _offset_into_a_checked_32bit_tensor(gr: Graph, rg: Ranges, c: Candidate, start: int, path: list[int]) -> str | None:
    """Rule (a) from the DSL's own check: ``from_dlpack(t, use_32bit_stride=True)`` gives a tensor 32-bit
    strides, and the DSL's runtime refuses such a tensor, at each call, when its span (cosize) exceeds
    INT32_MAX.  So an offset into it made of its own coordinates times its own strides (a mode's
    coordinate one term or a sum of terms), is in bounds below INT32_MAX.  Only a tensor the host
    passed on as ``cute.compile`` got it (meta.json ``origin``: a fake tensor, or one built from a
    pointer, is never checked), only an offset in its elements, and only from its own fields: another
    tensor's field or a pointer's truncation is no coordinate of this one."""
    if not c.sinks or c.limit.hi < I32_EXTENT_MAX - 1 or c.value.const != 0:
        return None
    tensor = memory.root_tensor(gr, rg, c.sinks[0])
    k = int(tensor.removeprefix("arg")) if tensor is not None else len(rg.meta_args)
    meta = rg.meta_args[k] if k < len(rg.meta_args) else None
    if not meta or meta.get("origin") != "dlpack" or meta.get("use_32bit_stride") is not True:
        return None
    modes = [md or {} for md in meta.get("modes") or []]
    if any((md.get("stride") or {}).get("width") == 64 for md in modes):
        return None
    bits = memory.element_bits(meta)
    if bits is None or memory.access_scale(gr, start, path, c.sinks[0]) != bits // 8:
        return None  # the value must enter the address in elements
    used: list[int] = []
    for key, coef in c.value.terms:
        mode = _term_mode(rg, modes, k, key, coef)
        if mode is None:
            return None
        if mode not in used:  # terms of one mode sum to its coordinate (a rank counted from comparisons)
            used.append(mode)
    if all((modes[m].get("stride") or {}).get("kind") != "dynamic" for m in used):
        return None  # no stride of its own: a coordinate, which the rules above weigh
    return (f"(a) an in-bounds offset into {tensor} ({meta.get('layout', '?')}, from_dlpack with "
            f"use_32bit_stride=True): a coordinate times its own stride per mode (modes {sorted(used)}), so below "
            "its span, and the DSL refuses at each call a tensor spanning more than INT32_MAX elements")  # fmt: skip


def _term_mode(rg: Ranges, modes: list[dict[str, Any]], k: int, key: Any, coef: int) -> int | None:
    """The mode of tensor ``argK`` whose offset the term ``coef * atom`` is: ``x * argK.stride[m]`` (x
    free of strides), or ``coef * x`` with ``coef`` the static stride of exactly one mode; None when the
    term names another tensor's field or a pointer, or matches no mode (or several)."""
    atom = rg.atoms[key]
    names = _atom_names(rg, [key])
    if any(int(m.group(1)) != k for n in names for m in re.finditer(r"\barg(\d+)\.", n)) or any(
        ".ptr" in n for n in names
    ):
        return None
    if atom.factors is not None:
        for f, x in (atom.factors, atom.factors[::-1]):
            one = rg.atoms[f.terms[0][0]].name if len(f.terms) == 1 and f.terms[0][1] == 1 and f.const == 0 else ""
            m = re.fullmatch(rf"arg{k}\.stride\[(\d+)\]", one)
            coord = [rg.atoms[t].name for t, _ in x.terms]
            if m and coef == 1 and int(m.group(1)) < len(modes) and not any("stride" in n for n in coord):
                return int(m.group(1))
        return None
    if "stride" in atom.name:
        return None
    strides = [(md.get("stride") or {}, (md.get("shape") or {}).get("value")) for md in modes]
    hits = [
        i for i, (st, ext) in enumerate(strides) if st.get("kind") == "static" and st.get("value") == coef and ext != 1
    ]
    return hits[0] if len(hits) == 1 else None


def _atom_names(rg: Ranges, keys: list[Any]) -> list[str]:
    """The names of atoms ``keys`` and of the factors of products among them (one level: a factor's
    own name spells out what it is made of)."""
    out = []
    for key in keys:
        atom = rg.atoms[key]
        out.append(atom.name)
        out += [rg.atoms[t].name for f in atom.factors or () for t, _ in f.terms]
    return out


def _input_facts(rg: Ranges, c: Candidate) -> list[str]:
    out = []
    if c.must:
        out.append("the launch the IR fixes already leaves the range")
    for k, _ in c.value.terms[:6]:
        a = rg.atoms[k]
        how = "fixed by the launch" if a.fixed else "left open by the IR"
        out.append(f"{a.name} in [{a.iv.lo:,}, {a.iv.hi:,}] ({how})")
    return out


def apply_memory(f: Finding, max_memory: int) -> None:
    """Rule (c) against ``max_memory``: suppress, or say the tensor fits (a fact either way)."""
    m = f.memory
    if not m or f.rule_suppressed or any(x.startswith("(c) at ") for x in f.facts):
        return
    size, cap = memory.human(int(m["bytes"])), memory.human(max_memory)
    if int(m["bytes"]) > max_memory:
        f.rule_suppressed = (
            f"(c) unreachable within GPU memory: needs {m['tensor']} >= {size} at {m['at']} (> {cap}): {m['why']}"
        )
    else:
        f.facts.append(f"(c) at {m['at']} {m['tensor']} needs {size}: fits in {cap} ({m['why']})")


def finish(
    findings: Iterable[Finding], max_memory: int = memory.DEFAULT_MAX_MEMORY
) -> tuple[list[Finding], list[Finding]]:
    """The rule applied to a whole scan: (reported, suppressed), one finding per access statement,
    IR and check (findings.fold)."""
    fs = list(findings)
    for f in fs:
        apply_memory(f, max_memory)
    folded = fold(fs)
    return [f for f in folded if not f.rule_suppressed], [f for f in folded if f.rule_suppressed]
