"""Rule (c) across tensors that share one extent (README, "What is reported"): fake tensors built with
one ``cute.sym_int()`` (meta.json's ``sym`` on a shape mode, written by capturing/origins.py) hold the
same number of slices, so a threshold that sets one tensor's extent sizes every tensor sharing it,
including host tensors no kernel argument is (the kernel gets a TMA descriptor or a view).  Each such
tensor gives a :class:`~irscan.checks.memory.Need`; the caller weighs the largest, never the sum (two
arguments may alias one buffer).
"""

from __future__ import annotations

from typing import Any

from irscan.analysis.params import field_by_path
from irscan.analysis.ranges import Ranges
from irscan.checks.memory import _SHAPE, Need, element_bits, extent_need, least_extent


def _dynamic_mode(tensor: dict[str, Any]) -> tuple[int, str | None] | None:
    """The one dynamic shape mode of ``tensor`` (a meta.json tensor record) and its ``sym`` (None when
    it has none), when every other mode is static; None otherwise."""
    dyn = [(i, md) for i, md in enumerate(tensor.get("modes") or []) if (md.get("shape") or {}).get("kind") != "static"]
    if len(dyn) != 1:
        return None
    sym = (dyn[0][1].get("shape") or {}).get("sym")
    return dyn[0][0], sym if isinstance(sym, str) else None


def _extent_for_offset(tensor: dict[str, Any], offset_bytes: int) -> tuple[int, str | None, int] | None:
    """(mode, its sym, smallest extent): a tensor of one dynamic mode and static strides holding an
    element ``offset_bytes`` into it spans past it, so its dynamic extent s has (s - 1)*stride + (what
    the other modes span) > the element's offset."""
    found, bits = _dynamic_mode(tensor), element_bits(tensor)
    if found is None or bits is None or bits % 8:
        return None
    mode, sym = found
    elem, other, step = offset_bytes // (bits // 8), 0, None
    for i, md in enumerate(tensor["modes"]):
        st = (md.get("stride") or {}).get("value")
        ext = (md.get("shape") or {}).get("value")
        if i != mode and ext == 1:
            continue  # a mode of one element adds nothing, whatever its stride: (1,?,16):(?,16,1)
        if (md.get("stride") or {}).get("kind") != "static" or not isinstance(st, int):
            return None
        if i == mode:
            step = st
        elif isinstance(ext, int):
            other += (max(ext, 1) - 1) * max(st, 0)
    if not step or step < 0:
        return None
    return mode, sym, max((elem - other) // step + 1, 1)


def _peer_bytes(peer: dict[str, Any], sym: str, count: int) -> int | None:
    """Bytes a host tensor holds with every mode of ``sym`` at ``count`` (its other modes at their least,
    memory.least_extent; broadcast modes not counted)."""
    bits = element_bits(peer)
    if bits is None or not any(((md.get("shape") or {}).get("sym")) == sym for md in peer.get("modes") or []):
        return None  # it shares another of the argument's syms
    elements = 1
    for md in peer.get("modes") or []:
        shape, stride = md.get("shape") or {}, md.get("stride") or {}
        if stride.get("kind") == "static" and stride.get("value") == 0:
            continue
        elements *= count if shape.get("sym") == sym else least_extent(shape)
    return elements * bits // 8


def shared_extent_needs(rg: Ranges, needs: list[Need]) -> list[Need]:
    """Rule (c) across tensors that share one extent (meta.json ``sym``, one ``cute.sym_int()`` in
    several fake tensors): a need ``bytes`` into ``argK`` (or into the host tensor ``argK`` is a view
    of) sets that extent, and every other host tensor with a mode of the same sym (``sym_peers``) holds
    that many slices.  One need per peer; the caller weighs the largest (two may alias)."""
    out = []
    for need in needs:
        k = int(need.tensor.removeprefix("arg")) if need.tensor.removeprefix("arg").isdigit() else -1
        meta = rg.meta_args[k] if 0 <= k < len(rg.meta_args) else None
        if not meta:
            continue
        if not meta.get("sym_peers"):  # the parameters the launch gives the same extent
            hit = _extent_for_offset(meta, need.bytes)
            if hit is not None:
                mode, _, count = hit
                why = f"{need.why}; that far into arg{k} needs arg{k}.shape[{mode}] >= {count:,}"
                out += [Need(p.tensor, p.bytes, f"{why}; {p.why}", need.at)
                        for p in _launch_peer_needs(rg, f"arg{k}.shape[{mode}]", count)]  # fmt: skip
            continue
        base = meta.get("view_of") or meta
        hit = _extent_for_offset(base, need.bytes)
        sym = hit[1] if hit is not None else None
        if hit is None or sym is None:
            continue
        count = hit[2]
        via = f"a view of host arg{base.get('host_arg')} {base.get('layout', '?')}" if base is not meta else "its"
        why = f"{need.why}; arg{k} is {via}: that far into it needs extent {sym} >= {count:,}"
        out += _peer_needs(meta, k, sym, count, why, need.at)
    most: dict[str, int] = {}
    for need in needs:
        most[need.tensor] = max(most.get(need.tensor, 0), need.bytes)
    return [n for n in out if n.bytes > most.get(n.tensor, -1)]  # a peer's peer is often where it began


def extent_peer_needs(rg: Ranges, input_name: str, at: int) -> list[Need]:
    """The input is tensor K's extent of mode m, a ``sym`` other host tensors share, or an extent (or a
    scalar) the host sets from the value it sets other parameters' extents from: each of them with that
    extent at ``at`` (the caller weighs the largest)."""
    return _launch_peer_needs(rg, input_name, at) + _sym_peer_needs(rg, input_name, at)


def _launch_peer_needs(rg: Ranges, input_name: str, at: int) -> list[Need]:
    """The kernel parameters whose extents every launch sets from the host value ``input_name`` is
    (irscan/analysis/hostfields.py, ``module_peers``): each tensor with that extent at ``at``."""
    out: list[Need] = []
    peers = getattr(getattr(rg, "facts", None), "peers", None) or {}  # older hosts (test stubs) have none
    for (param, path), others in peers.items() if at > 0 else ():
        atom = rg.field_atom(param, path)
        if atom is None or rg.name(atom) != input_name:
            continue
        for (j, other), tile in others:
            f = field_by_path(rg.fields_of(j), other)
            if f is None or f.part != "shape":
                continue  # a scalar peer holds no memory
            need = extent_need(rg, f.name, tile * (at - 1) + 1)  # at most ceil(F / tile) of the F f holds
            if need is not None:
                how = "also" if tile == 1 else f"at most ceil({f.name} / {tile}) of"
                why = f"{input_name} is {how} {f.name} (the launch sets both from one host value): {need.why}"
                out.append(Need(need.tensor, need.bytes, why))
        break
    return out


def _sym_peer_needs(rg: Ranges, input_name: str, at: int) -> list[Need]:
    m = _SHAPE.match(input_name)
    k = int(m.group(1)) if m else -1
    meta = rg.meta_args[k] if 0 <= k < len(rg.meta_args) else None
    modes = (meta or {}).get("modes") or []
    mode = int(m.group(2)) if m else -1
    sym = ((modes[mode] or {}).get("shape") or {}).get("sym") if 0 <= mode < len(modes) else None
    if meta is None or not isinstance(sym, str) or at <= 0:
        return []
    return _peer_needs(meta, k, sym, at, f"{input_name} is extent {sym}", None)


def _peer_needs(meta: dict[str, Any], k: int, sym: str, count: int, why: str, at: str | None) -> list[Need]:
    out = []
    for peer in meta.get("sym_peers") or []:
        size = _peer_bytes(peer, sym, count)
        if size is not None:
            j = peer.get("host_arg")
            name = f"host arg{j} ({peer.get('dtype')} {peer.get('layout', '?')}, sharing arg{k}'s extent)"
            out.append(Need(name, size, f"{why}, which host arg{j} shares", at))
    return out
