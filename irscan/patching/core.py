"""Patch one LLVM-dialect module in place: scan it, rewrite each finding a rule fixes, verify, re-scan.

Fail open: the module is cloned before the first rewrite; if the rewritten module does not verify,
an op could not be built, or the re-scan finds something the original did not have, the clone's body
is put back and the module compiles unchanged (``Report.reverted`` says why).  A finding the re-scan
still reports is moved from ``patches`` to ``not_patched``.  The PTX-side checks (ptxas, registers,
the PTX re-scan) run after the tail (:mod:`irscan.patching.verify`).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from irscan.findings import Finding
from irscan.patching import rules
from irscan.patching.mlir import ModuleRewriter, Refused


@dataclass
class Patch:
    id: str
    rule: str
    ops_rewritten: int
    registers_before: int | None = None
    registers_after: int | None = None
    kernel: str = ""


@dataclass
class Report:
    """What patch mode did to one module; its lists go into the JSON report unchanged."""

    patches: list[Patch] = field(default_factory=list)
    not_patched: list[dict[str, str]] = field(default_factory=list)
    rescan: list[Finding] = field(default_factory=list)  # the re-scan's findings, both IRs
    reverted: str | None = None  # why the original module was compiled instead
    verified: list[str] = field(default_factory=list)  # the checks that passed, in order
    seconds: dict[str, float] = field(default_factory=dict)
    #: a clone of the module as it was before the rewrite (compiled for registers_before, or instead)
    original: Any = field(default=None, repr=False)

    def refuse(self, fid: str, reason: str) -> None:
        self.not_patched.append({"id": fid, "reason": reason})

    def to_json(self) -> dict[str, Any]:
        return {
            "patches": [asdict(p) for p in self.patches],
            "not_patched": self.not_patched,
            "rescan_findings": [f.to_json() for f in self.rescan],
            "reverted": self.reverted,
            "verified": self.verified,
            "seconds": {k: round(v, 4) for k, v in self.seconds.items()},
        }


def scan_text(text: str, path: str, meta: dict[str, Any] | None) -> list[Finding]:
    from irscan.pipeline import parse, scan_module

    return scan_module(parse(text, path, "mlir" if not path.endswith(".ptx") else "ptx"), meta).findings


def restore(module: Any, saved: Any) -> None:
    """Put the body of ``saved`` (a clone of the module's op) back into ``module``."""
    body = module.body
    for op in list(body.operations):
        op.operation.erase()
    for op in list(saved.regions[0].blocks[0].operations):
        o = op.operation
        o.detach_from_parent()
        body.append(o)


#: rounds of rewrite and re-scan: a finding can stand for several accesses (the scan folds the chains
#: of one statement, or of one kernel without line info), and the re-scan then shows the next chain
ROUNDS = 4


def _live(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.ir == "mlir" and not getattr(f, "suppressed", None)]


def patch_module(module: Any, text: str, path: str, meta: dict[str, Any] | None) -> tuple[Report, str]:
    """Rewrite ``module`` (a ``cutlass._mlir.ir.Module``, in place); return the report and the text
    to capture (the patched module's, or ``text`` when nothing was rewritten or it was reverted)."""
    rep = Report()
    t0 = time.perf_counter()
    found = _live(scan_text(text, path, meta))
    rep.seconds["scan"] = time.perf_counter() - t0
    rw, saved, current, new_text = ModuleRewriter(module), None, found, text
    tried: set[str] = set()
    for _ in range(ROUNDS):
        t1 = time.perf_counter()
        plans = []
        for f in [f for f in current if f.id not in tried]:
            tried.add(f.id)
            rule = rules.rule_for("mlir", f.check)
            if rule is None:
                rep.refuse(f.id, f"no rule in patches/ fixes {f.check} in MLIR")
                continue
            try:
                plans.append((f, rule, rw.plan(f, rule)))
            except Refused as exc:
                rep.refuse(f.id, str(exc))
        if not plans:
            break
        if saved is None:
            saved = rep.original = module.operation.clone()  # what a failed check puts back (fail open)
        try:
            for f, rule, plan in plans:
                rep.patches.append(Patch(f.id, rule.id, rw.apply(plan), kernel=f.kernel))
            module.operation.verify()
        except Exception as exc:  # an op the bindings would not build, or a module that does not verify
            return _revert(rep, module, saved, f"the rewritten module failed: {type(exc).__name__}: {exc}"), text
        new_text = module.operation.get_asm(enable_debug_info=True)
        rep.seconds["rewrite"] = rep.seconds.get("rewrite", 0.0) + time.perf_counter() - t1
        t2 = time.perf_counter()
        try:
            after = _live(scan_text(new_text, path, meta))
        except Exception as exc:
            return _revert(rep, module, saved, f"the re-scan failed: {type(exc).__name__}: {exc}"), text
        rep.seconds["rescan"] = rep.seconds.get("rescan", 0.0) + time.perf_counter() - t2
        current = after
        rw = ModuleRewriter(module)  # the printer renumbered: names are looked up afresh
        if not [f for f in current if f.id not in tried]:
            break
    if saved is None:  # nothing rewritten
        rep.rescan = current
        return rep, text
    rep.verified.append("module verifies")
    new = [f for f in current if f.id not in {g.id for g in found} and f.id not in {p.id for p in rep.patches}]
    if new:
        return _revert(
            rep, module, saved, f"the re-scan found {len(new)} new finding(s), first: {new[0].message}"
        ), text
    still = {f.id for f in current}
    for p in [p for p in rep.patches if p.id in still]:
        rep.patches.remove(p)
        rep.refuse(p.id, "the re-scan of the rewritten module still finds it")
    rep.rescan = current
    rep.verified.append("MLIR re-scan: patched findings gone")
    return rep, new_text


def _revert(rep: Report, module: Any, saved: Any, why: str) -> Report:
    restore(module, saved)
    for p in rep.patches:
        rep.refuse(p.id, f"reverted: {why}")
    rep.patches = []
    rep.original = None
    rep.reverted = why
    return rep
