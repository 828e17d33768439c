"""What the printed text of an op without a grammar rule says: its result types (read off its
trailing type list, or worked out for the few ops that print none) and name-specific details
(a call's callee, inline asm text).  Both MLIR parse paths read rule-less ops here."""

from __future__ import annotations

import re
from typing import Any

from irscan.frontend.mlir.asm import asm_memory
from irscan.frontend.mlir.types import canonical_type_text, find_type_tail, parse_type_tail, unparen, vector_elem
from irscan.frontend.text import STRING_P, balanced, unescape

_SYM_RE = re.compile(r"@(?:[\w$.\-]+|" + STRING_P + ")")
_MASK_RE = re.compile(r"\[([-\d, ]*)\]")


def soup_rtypes(name: str, body: str, nres: int) -> tuple[str, ...] | None:
    """Result types of an op with no rule of its own, from its printed text (None: not printed).

    ``body`` runs from the op name to before the location, strings blanked.
    """
    if nres == 0:
        return ()
    k = find_type_tail(body)
    if k < 0:
        # `nvvm.elect.sync -> i1`: a result type with no colon
        j = body.rfind(" -> ")
        if j >= 0 and balanced(body[j + 4 :]):
            outs = unparen(body[j + 4 :])
            return tuple(canonical_type_text(t) for t in outs[:nres]) if len(outs) >= nres else None
        return None
    tail = body[k:].strip()
    ins, maybe_outs = parse_type_tail(tail)
    if name == "llvm.extractelement" and ins:
        e = vector_elem(ins[-1])
        return (e,) if e else None
    if name == "llvm.shufflevector" and ins:
        e = vector_elem(ins[-1])
        m = _MASK_RE.search(body)
        if e and m:
            n = len([x for x in m.group(1).split(",") if x.strip()])
            return (f"vector<{n}x{e}>",)
        return None
    if name == "llvm.fcmp" and ins:
        t = ins[-1]
        m = re.fullmatch(r"vector<(\d+)x.+>", t)
        return (f"vector<{m.group(1)}xi1>",) if m else ("i1",)
    outs = maybe_outs if maybe_outs is not None else (ins[-nres:] if len(ins) >= nres else [])
    if len(outs) < nres:
        return None
    return tuple(canonical_type_text(_TYPE_THEN_OPERAND.sub(r"\1", t)) for t in outs[:nres])


#: a custom format that prints a type operand after the result type: `: i16(f8E4M3FN)`
#: (nvvm.convert.f32x2.to.f8x2); the result is the integer type, the parenthesised one is an attribute
_TYPE_THEN_OPERAND = re.compile(r"^(i\d+)\([\w.]+\)$")


_ASM_RE = re.compile(r'"([^"\\\n]*(?:\\.[^"\\\n]*)*)"')  # unrolled: see text.STRING_P
_QUERY_RE = re.compile(r"\bquery\s*=\s*(\w+)")
_LAUNCHED_RE = re.compile(r"cuda\.launch_ex\s+@(?:[\w$.]+::@)?([\w$.]+)")


def launched_kernel(text: str) -> str | None:
    """The kernel symbol of a ``cuda.launch_ex @kernels::@kernel<%cfg> (args...)``.  Read from each op's
    own text, never from a spec: specs of rule-less ops are shared by every op of one type tail."""
    m = _LAUNCHED_RE.search(text)
    return m.group(1) if m else None


def soup_info(name: str, raw_body: str) -> dict[str, Any]:
    """Name-specific details of a rule-less op, read from its text (same on both parse paths)."""
    info: dict[str, Any] = {}
    if name == "llvm.call":
        m = _SYM_RE.search(raw_body)
        if m:
            callee = m.group(0)[1:]
            info["callee"] = callee[1:-1] if callee.startswith('"') else callee
    elif name == "llvm.call_intrinsic":
        m = _ASM_RE.search(raw_body)
        if m:
            info["intrinsic"] = unescape(m.group(1))[:200]
    elif name == "nvvm.clusterlaunchcontrol.query.cancel":
        m = _QUERY_RE.search(raw_body)
        if m:
            info["query"] = m.group(1)  # get_first_cta_id_y: a CTA id of the grid (irscan/ir/isa.py)
    elif name == "llvm.inline_asm":
        strings = [unescape(m.group(1)) for _, m in zip(range(2), _ASM_RE.finditer(raw_body), strict=False)]
        if strings:
            info["asm"] = strings[0][:200]  # for reports
        if len(strings) == 2:  # the asm text and its constraints: what memory it accesses, if any
            mem = asm_memory(strings[0], strings[1])
            if mem is not None:
                info["asm_memory"] = mem
    return info
