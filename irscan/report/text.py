"""Compiler-diagnostic style text: the Python line first, then the chain op by op, the witness, the fix."""

from __future__ import annotations

from collections.abc import Iterable
from textwrap import fill, indent
from typing import TYPE_CHECKING

from irscan.findings import Finding

if TYPE_CHECKING:
    from irscan.checks.base import Check

LABEL = {"must": "error", "may": "warning"}


def _where(f: Finding) -> str:
    if f.file:
        return f"{f.file}:{f.line}:{f.col or 0}"
    return f"{f.ir_file}:{f.ir_line}"


def _num(v: int) -> str:
    return f"{v:,}"


def render_finding(f: Finding) -> str:
    label = f"suppressed[{f.severity}]" if f.rule_suppressed else f"{LABEL.get(f.severity, f.severity)}[{f.severity}]"
    lines = [f"{_where(f)}: {label}: {f.check} in {f.kernel} ({f.ir})"]
    if f.rule_suppressed:
        lines.append(f"  suppressed: {f.rule_suppressed}")
    if f.source:
        lines.append(f"    {f.source}")
    if f.source_precision == "kernel":
        lines.append(
            "    (no line info in the IR: this is the kernel's definition; rerun with line info for the statement)"
        )
    lines.append(f"  {f.message}")
    if f.origin:
        lines.append(
            f"  the wrapping arithmetic comes from line {f.origin['line']}: {f.origin['source'] or ''}".rstrip()
        )
    lines.append(f"  chain ({f.ir_file}):")
    width = max((len(s.text[:90]) for s in f.chain), default=0)
    for s in f.chain:
        rng = f"[{_num(s.range[0])}, {_num(s.range[1])}]" if s.range else ""
        mark = "  <- wraps" if s.wraps else ""
        note = f"  ({s.note})" if s.note else ""
        lines.append(f"    {s.ir_line:>6} | {s.text[:90]:<{width}}  {rng}{mark}{note}")
    if f.witness and f.wraps_when:
        w = f.witness
        lines.append(
            f"  witness: {f.wraps_when['text'].replace('>=', '=')}: true value {_num(w['true'])} -> i32 "
            f"{_num(w['i32'])} -> {w['extension']}-extended {w['extended_hex']}"
        )
        sw = f.wraps_when.get("safe_while")
        if sw:
            pinned = f"; the compile fixes {sw['launch']}" if sw.get("launch") else ""
            solved = f", so {sw['solved']}" if sw.get("solved") else ""
            lines.append(f"  safe while {sw['text']}{pinned}{solved}")
        if f.wraps_when.get("input_fixed_by_launch"):
            lo, hi = f.wraps_when["input_range"]
            lines.append(f"  the launch reaches {f.wraps_when['input']} in [{_num(lo)}, {_num(hi)}]")
    if f.undefined_behaviour:
        lines.append("  note: the i32 op is nsw: overflow is undefined behaviour in LLVM, whatever today's PTX does")
    for n in f.notes:
        lines.append(f"  note: {n}")
    if f.twin:
        lines.append(f"  same access in the other IR: finding {f.twin}")
    if f.occurrences > 1 or len(f.modules) > 1:
        lines.append(f"  folded: {f.occurrences} widening point(s) of this statement in {len(f.modules)} module(s)")
    if f.facts:
        lines.append("  rests on: " + "; ".join(f.facts))
    lines.append(f"  fix: {f.fix}")
    return "\n".join(lines)


def render(findings: Iterable[Finding], kernels: list[dict[str, object]], unseen: dict[str, int],
           suppressed: Iterable[Finding] = (), show_all: bool = False) -> str:  # fmt: skip
    """The findings, then (``show_all``: ``--all``) the suppressed ones with their reasons, then the
    summary, which always counts the suppressed ones: nothing is left out silently."""
    fs, sup = list(findings), list(suppressed)
    out = [render_finding(f) + "\n" for f in fs]
    if show_all:
        out += [render_finding(f) + "\n" for f in sup]
    must = sum(f.severity == "must" for f in fs)
    irs = sorted({str(k["ir"]) for k in kernels})
    out.append(
        f"irscan: {len(fs)} finding(s) ({must} must, {len(fs) - must} may) in {len(kernels)} kernel scan(s) "
        f"[{', '.join(irs) or 'no IR'}]"
    )
    if sup:
        how = "shown above with the reason" if show_all else "--all shows them with the reason"
        out.append(f"irscan: {len(sup)} more suppressed by the reporting rule ({how}; README 'What is reported')")
    if unseen:
        top = ", ".join(f"{k} x{v}" for k, v in sorted(unseen.items(), key=lambda kv: -kv[1])[:8])
        out.append(f"irscan: ops the analysis could not see into (treated as unknown inputs): {top}")
    return "\n".join(out)


def render_rule(check: Check) -> str:
    """A check's doc as ``irscan rules`` prints it, in ruff's order: what it finds, why it is a bug, an
    example, the fix."""
    d = check.doc
    return "\n".join(
        [
            f"{check.id}: {check.title}",
            f"  {check.cwe_name} (https://cwe.mitre.org/data/definitions/{check.cwe}.html)",
            "",
            "What it finds",
            fill(d.what, width=100, initial_indent="  ", subsequent_indent="  "),
            "",
            "Why is this a bug",
            fill(d.why, width=100, initial_indent="  ", subsequent_indent="  "),
            "",
            "Example",
            indent(d.example, "    "),
            "",
            "Fix",
            indent(d.fix, "    "),
            *(["", f"Real cases: corpus/manifest.json {', '.join(check.examples)}"] if check.examples else []),
        ]
    )


def render_rules(checks: Iterable[Check]) -> str:
    return "\n\n".join(render_rule(c) for c in checks)
