"""Both IRs side by side: pair the MLIR and PTX findings of one access (its *twins*).

MLIR is what the DSL meant (an nsw overflow there is undefined behaviour); PTX is what runs (NVVM may
have zero-extended, so the hardware wraps at 2^32, not 2^31).  Two findings are one access's when
their accesses meet: a sink of each has the same Python statement, the same kind (load, store, ...)
and the same tensor at the root of its address.  The finding's own line is not enough: PTX line info
can give a multiply that CSE shared between two statements the other statement's line, and the two
findings of one access then name different lines.  Findings without such sinks (no line info) fall
back to the finding's statement, then to the expression.
"""

from __future__ import annotations

from collections.abc import Iterator

from irscan.findings import Finding

Key = tuple[object, ...]


def access_keys(f: Finding) -> Iterator[Key]:
    """Keys under which ``f`` meets its twin, the most specific first: the access and the finding's
    statement, the access alone, the statement alone, the expression."""
    sinks = [(*s["statement"], s.get("kind"), s.get("tensor")) for s in (f.access or {}).get("sinks", [])
             if s.get("statement")]  # fmt: skip
    for s in sinks:
        yield (f.kernel, "access+line", *s, f.line)
    for s in sinks:
        yield (f.kernel, "access", *s)
    if f.source_precision == "statement" and f.file:
        yield (f.kernel, "line", f.file, f.line)
    yield (f.kernel, "expression", f.expression)


def _fate(f: Finding) -> str:
    w = f.witness or {}
    if w.get("extension") == "zero":
        return "zero-extended, so the binary wraps at 2^32, modulo 4 GiB: a silent access inside or past the tensor"
    return "sign-extended, so the binary wraps at 2^31 to an address up to 2 GiB before the base: usually a fault"


def _thr(f: Finding) -> str:
    return f" ({f.wraps_when['text']})" if f.wraps_when else ""


def pair_twins(findings: list[Finding], scanned: set[tuple[str, str]]) -> None:
    """Link twins in place (``twin`` ids) and add a note on each saying how the two IRs differ.

    ``scanned``: (ir, kernel) pairs that were scanned; a missing twin is only worth a note when the
    other IR of that kernel was scanned too.  Each MLIR finding takes the first unpaired PTX finding
    that meets it, by access before statement before expression.
    """
    ptx: dict[Key, list[Finding]] = {}
    for f in findings:
        if f.ir == "ptx":
            for k in access_keys(f):
                ptx.setdefault(k, []).append(f)
    kernels_with_ptx = {k for ir, k in scanned if ir == "ptx"}
    kernels_with_mlir = {k for ir, k in scanned if ir == "mlir"}
    taken: set[int] = set()
    for m in findings:
        if m.ir != "mlir":
            continue
        p = next((p for k in access_keys(m) for p in ptx.get(k, []) if id(p) not in taken), None)
        shared = next((p for k in access_keys(m) if k[1] == "access" for p in ptx.get(k, [])), None)
        if p is None and shared is not None:  # NVVM computes one index for several statements' accesses
            m.notes.append(
                f"PTX: the same access's finding is {shared.id}, which NVVM shares with another statement's "
                "access (one index computation for both)"
            )
            shared.notes.append(f"MLIR: this access is also finding {m.id} (another statement of the source)")
            continue
        if p is None:
            if m.kernel in kernels_with_ptx:
                m.notes.append(
                    "PTX: no finding: today's binary does not wrap here (NVVM widened the arithmetic, or its "
                    "zero-extension keeps the value below 2^32); the MLIR is still undefined behaviour to rely on"
                    if m.undefined_behaviour
                    else "PTX: no finding: NVVM widened or removed this arithmetic in the binary"
                )
            continue
        taken.add(id(p))
        m.twin, p.twin = p.id, m.id
        _held_as_twin(m, p)
        mlir_side = "nsw overflow, undefined behaviour from 2^31" if m.undefined_behaviour else "wraps"
        text = f"MLIR: {mlir_side}{_thr(m)}; PTX: {_fate(p)}{_thr(p)}"
        m.notes.append(text)
        p.notes.append(text)
    for f in findings:
        if f.ir == "ptx" and not f.twin and f.kernel in kernels_with_mlir:
            # Not "NVVM narrowed it": as often the MLIR is as narrow, but reaches the address through an
            # op the scan does not follow (flashinfer's QKRMSNorm: the i32 row, sign-extended, then
            # sdiv/srem by N; PTX's division bypass spells the remainder x - q*N, which it follows).
            f.notes.append(
                "MLIR: no matching finding: the MLIR scan saw no 32-bit value that wraps on its way to this "
                "access's address; NVVM may have narrowed the arithmetic, or the MLIR reaches the address "
                "through ops the scan does not follow (a division, a remainder)"
            )


def _held_as_twin(m: Finding, p: Finding) -> None:
    """A PTX finding whose MLIR twin of the same check rule (a) proves in range is held back with it.

    The PTX computes the same access's index from the same inputs; where the MLIR value provably stays
    below the limit, so does the PTX one (NVVM may reassociate, but a wrap of an intermediate is undone
    modulo 2^32 when the final value fits).  What PTX loses on the way is the proof: a guard moved to
    a rotated loop's latch, a shuffled copy of a scheduler's tile, a bound spread over two registers.
    A narrowing of NVVM's own is another check (trunc-then-extend), never held back this way.  Never the
    other way: where NVVM widened a multiply, the PTX's 32-bit value is only a coordinate of the MLIR's
    (``i`` of ``i*stride``), and its proof says nothing of the MLIR's product."""
    why = m.rule_suppressed or ""
    if m.check == p.check and why.startswith("(a)") and not p.rule_suppressed:
        p.rule_suppressed = f"(a) as its MLIR twin (the same access): {why.removeprefix('(a) ')}"
