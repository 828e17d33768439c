"""Both IRs side by side: pair the MLIR and PTX findings that concern the same access, and say how
they differ.  MLIR is what the DSL meant (an ``nsw`` overflow there is undefined behaviour); PTX is
what runs (NVVM may have zero-extended, so the hardware wraps at 2^32, not 2^31)."""

from __future__ import annotations

from irscan.findings import Finding


def _key(f: Finding) -> tuple[str, object]:
    if f.source_precision == "statement" and f.file:
        return (f.kernel, (f.file, f.line))
    return (f.kernel, f.expression)


def _fate(f: Finding) -> str:
    w = f.witness or {}
    if w.get("extension") == "zero":
        return "zero-extended, so the binary wraps at 2^32, modulo 4 GiB: a silent access inside or past the tensor"
    return "sign-extended, so the binary wraps at 2^31 to an address up to 2 GiB before the base: usually a fault"


def _thr(f: Finding) -> str:
    return f" ({f.wraps_when['text']})" if f.wraps_when else ""


def pair(findings: list[Finding], scanned: set[tuple[str, str]]) -> None:
    """Link twins in place (``twin`` ids) and add a note on each saying how the two IRs differ.

    ``scanned``: (ir, kernel) pairs that were scanned; a missing twin is only worth a note when the
    other IR of that kernel was scanned too.
    """
    ptx: dict[tuple[str, object], list[Finding]] = {}
    for f in findings:
        if f.ir == "ptx":
            ptx.setdefault(_key(f), []).append(f)
    kernels_with_ptx = {k for ir, k in scanned if ir == "ptx"}
    kernels_with_mlir = {k for ir, k in scanned if ir == "mlir"}
    for m in findings:
        if m.ir != "mlir":
            continue
        cands = ptx.get(_key(m), [])
        if not cands:
            if m.kernel in kernels_with_ptx:
                m.notes.append(
                    "PTX: no finding: today's binary does not wrap here (NVVM widened the arithmetic, or its "
                    "zero-extension keeps the value below 2^32); the MLIR is still undefined behaviour to rely on"
                    if m.undefined_behaviour
                    else "PTX: no finding: NVVM widened or removed this arithmetic in the binary"
                )
            continue
        p = cands.pop(0)
        m.twin, p.twin = p.id, m.id
        mlir_side = "nsw overflow, undefined behaviour from 2^31" if m.undefined_behaviour else "wraps"
        text = f"MLIR: {mlir_side}{_thr(m)}; PTX: {_fate(p)}{_thr(p)}"
        m.notes.append(text)
        p.notes.append(text)
    for group in ptx.values():
        for p in group:
            if not p.twin and p.kernel in kernels_with_mlir:
                p.notes.append("MLIR: no matching finding; the narrowing appears only after NVVM's optimisation")
