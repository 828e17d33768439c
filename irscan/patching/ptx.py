"""Rewrite a PTX finding's chain into 64-bit registers (PTX from any compiler; ``irscan patch x.ptx``).

PTX has no bindings, so this works on the instruction lines the scan located (the finding's chain
carries each op's line).  For the 32-bit chain that a widening instruction (``mul.wide``, ``cvt``,
``mad.wide``) extends: each op is recomputed into a new ``%rd`` register right after its own
definition (``mul.lo.s32`` of two leaves becomes ``mul.wide.s32``, ``mad.lo`` of two leaves
``mad.wide``, adds/shifts their ``.s64``/``.b64`` forms), leaves are extended once (``cvt``) right
after theirs, the widening instruction reads the 64-bit register, and ``setp`` users of a recomputed
register compare in 64 bits.  The ``.reg .b64 %rd<N>`` declaration is raised to cover the new ones.

Refused (``Refused``): a register of the chain defined more than once (a loop-carried value: PTX
has no block arguments to retype), a predicated definition, a ``selp`` user, an op outside the rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from irscan.findings import Finding
from irscan.patching.mlir import Refused
from irscan.patching.rules import Rule

_INSTR = re.compile(r"^(\s*)(@!?%\w+\s+)?([a-z][\w.]*)\s+([^;]*);")
_REG = re.compile(r"%[A-Za-z_$][\w$]*")
_RD_DECL = re.compile(r"^\s*\.reg\s+\.b64\s+%rd<(\d+)>;", re.M)
_SETP = re.compile(r"^setp\.(\w+)\.([su])32$")
_UNSIGNED_CMP = {"lo", "ls", "hi", "hs"}


@dataclass
class _Line:
    indent: str
    pred: str | None
    op: str
    args: list[str]


def _parse(line: str) -> _Line | None:
    m = _INSTR.match(line)
    if not m:
        return None
    return _Line(m.group(1), m.group(2), m.group(3), [a.strip() for a in m.group(4).split(",")])


@dataclass
class PtxPatch:
    id: str
    rule: str
    ops_rewritten: int
    kernel: str


@dataclass
class PtxRewrite:
    """One function's lines, rewritten finding by finding; inserts applied at the end."""

    lines: list[str]
    start: int  # 0-based line of the function's first line, end exclusive
    end: int
    next_rd: int
    after: dict[int, list[str]] = field(default_factory=dict)  # line index -> lines inserted after it
    before: dict[int, list[str]] = field(default_factory=dict)
    replace: dict[int, str] = field(default_factory=dict)
    #: 32-bit register (or ``reg/signedness`` for an extended leaf) -> its 64-bit register, shared by
    #: every finding of the function so a leaf or a common sub-chain is extended once
    twin: dict[str, str] = field(default_factory=dict)

    def new_rd(self) -> str:
        self.next_rd += 1
        return f"%rd{self.next_rd - 1}"


def function_range(lines: list[str], kernel: str) -> tuple[int, int]:
    start = next((i for i, ln in enumerate(lines) if re.search(rf"\.entry\s+{re.escape(kernel)}\b", ln)), None)
    if start is None:
        raise Refused(f"kernel {kernel} is not in the PTX")
    end = next(
        (
            i
            for i in range(start + 1, len(lines))
            if re.match(r"\s*(\.visible\s+|\.weak\s+)?\.(entry|func)\b", lines[i])
        ),
        len(lines),
    )
    return start, end


def _defs(lines: list[str], start: int, end: int) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i in range(start, end):
        ins = _parse(lines[i])
        if ins and ins.args and _REG.fullmatch(ins.args[0]) and not ins.op.startswith(("st.", "bra", "ret", "bar")):
            out.setdefault(ins.args[0], []).append(i)
    return out


def patch_function(rw: PtxRewrite, finding: Finding, rule: Rule) -> int:
    lines = rw.lines
    defs = _defs(lines, rw.start, rw.end)
    wid = [s for s in finding.chain if s.role == "widening"]
    if not wid:
        raise Refused("the chain has no widening instruction")
    wi = wid[0].ir_line - 1
    w = _parse(lines[wi]) if 0 <= wi < len(lines) else None
    if w is None or w.op not in rule.widening:
        raise Refused(f"widening instruction is not one of {', '.join(rule.widening)}")
    signed = ".s32" in w.op
    src = w.args[1]
    twin = rw.twin
    order: list[int] = []  # def lines to recompute, operands first
    seen: set[str] = set()
    stack = [(src, False)]
    while stack:
        reg, ready = stack.pop()
        if reg in seen or reg in twin or not _REG.fullmatch(reg):
            continue
        d = defs.get(reg, [])
        if len(d) != 1:
            raise Refused(f"register {reg} is defined {len(d)} times (loop-carried or not found); not rewritten")
        ins = _parse(lines[d[0]])
        assert ins is not None
        if ins.op not in rule.recompute:
            continue  # a leaf
        if ins.pred:
            raise Refused(f"{reg} is defined under a predicate")
        if ready:
            seen.add(reg)
            order.append(d[0])
        else:
            stack.append((reg, True))
            stack.extend((a, False) for a in ins.args[1:] if a not in seen)
    if not order and src not in twin:
        raise Refused("no 32-bit op of the rule in the chain")

    def wide(arg: str, as_signed: bool = signed, at_use: int | None = None) -> str:
        if arg in twin:
            return twin[arg]
        if not _REG.fullmatch(arg):
            return arg  # an immediate reads as 64-bit
        key = f"{arg}/{as_signed}"
        if key in twin:
            return twin[key]
        new = rw.new_rd()
        text = f"\t{'cvt.s64.s32' if as_signed else 'cvt.u64.u32'} \t{new}, {arg};"
        d = defs.get(arg, [])
        if len(d) == 1:
            rw.after.setdefault(d[0], []).append(text)
            twin[key] = new
        elif at_use is not None:
            rw.before.setdefault(at_use, []).append(text)
        else:
            raise Refused(f"leaf {arg} has no single definition")
        return new

    count = 0
    recomputed = set()
    for i in order:
        ins = _parse(lines[i])
        assert ins is not None
        dst, ops = ins.args[0], ins.args[1:]
        base = ins.op.split(".")[0]
        leaves = all(a not in twin for a in ops[:2])
        new = rw.new_rd()
        s = "s" if signed else "u"
        if base in ("mul", "mad") and leaves:
            rest = [wide(o) for o in ops[2:]]
            text = f"\t{base}.wide.{s}32 \t{new}, {', '.join([*ops[:2], *rest])};"
        elif base in ("mul", "mad"):
            text = f"\t{base}.lo.s64 \t{new}, {', '.join(wide(o) for o in ops)};"
        elif base == "shl":
            text = f"\tshl.b64 \t{new}, {wide(ops[0])}, {ops[1]};"
        else:
            text = f"\t{base}.s64 \t{new}, {', '.join(wide(o) for o in ops)};"
        rw.after.setdefault(i, []).append(text)
        twin[dst] = new
        recomputed.add(dst)
        count += 1
    r64 = twin[src] if src in twin else wide(src)
    if w.op.startswith("cvt"):
        rw.replace[wi] = f"{w.indent}mov.b64 \t{w.args[0]}, {r64};"
    else:
        base = w.op.split(".")[0]
        others = [wide(a, signed, wi) for a in w.args[2:]]
        rw.replace[wi] = f"{w.indent}{base}.lo.s64 \t{w.args[0]}, {', '.join([r64, *others])};"
    count += 1
    count += _widen_setps(rw, recomputed, twin, wide, signed)
    return count


def _widen_setps(rw: PtxRewrite, recomputed: set[str], twin: dict[str, str], wide: object, signed: bool) -> int:
    """``setp.<cmp>.[su]32`` on a recomputed register compares the 64-bit values instead."""
    n = 0
    for i in range(rw.start, rw.end):
        ins = _parse(rw.lines[i])
        if ins is None or not any(a in recomputed for a in ins.args[1:]):
            continue
        if ins.op.startswith("selp"):
            raise Refused(f"a recomputed register feeds selp at PTX line {i + 1}; not rewritten")
        m = _SETP.match(ins.op)
        if not m:
            continue
        cmp_signed = m.group(2) == "s" if m.group(1) not in ("eq", "ne") else signed
        if m.group(1) in _UNSIGNED_CMP:
            cmp_signed = False
        ops = [wide(a, cmp_signed, i) for a in ins.args[1:]]  # type: ignore[operator]
        rw.replace[i] = (
            f"{ins.indent}{ins.pred or ''}setp.{m.group(1)}.{m.group(2)}64 \t{ins.args[0]}, {', '.join(ops)};"
        )
        n += 1
    return n


def render(lines: list[str], rws: list[PtxRewrite]) -> str:
    """The lines with every function's edits (functions are disjoint line ranges)."""
    out: list[str] = []
    owner = {i: rw for rw in rws for i in range(rw.start, rw.end)}
    for i, line in enumerate(lines):
        rw = owner.get(i)
        if rw is None:
            out.append(line)
            continue
        out += rw.before.get(i, [])
        text = rw.replace.get(i, line)
        m = _RD_DECL.match(text)
        if m and int(m.group(1)) < rw.next_rd:
            text = text.replace(f"%rd<{m.group(1)}>", f"%rd<{rw.next_rd}>")
        out.append(text)
        out += rw.after.get(i, [])
    return "\n".join(out) + "\n"


def rewrite(text: str, findings: list[Finding], rule_of: object) -> tuple[str, list[PtxPatch], list[dict[str, str]]]:
    """Patch every PTX finding a rule fixes; returns the new text, the patches and the refusals."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    patches: list[PtxPatch] = []
    refused: list[dict[str, str]] = []
    by_kernel: dict[str, PtxRewrite] = {}
    for f in findings:
        rule = rule_of("ptx", f.check)  # type: ignore[operator]
        if rule is None:
            refused.append({"id": f.id, "reason": f"no rule in patches/ fixes {f.check} in PTX"})
            continue
        try:
            if f.kernel not in by_kernel:
                start, end = function_range(lines, f.kernel)
                decl = [int(m.group(1)) for ln in lines[start:end] if (m := _RD_DECL.match(ln))]
                if not decl:
                    raise Refused("the function declares no %rd registers to extend")
                by_kernel[f.kernel] = PtxRewrite(lines, start, end, max(decl))
            rw = by_kernel[f.kernel]
            saved = ({k: list(v) for k, v in rw.after.items()}, {k: list(v) for k, v in rw.before.items()},
                     dict(rw.replace), rw.next_rd, dict(rw.twin))  # fmt: skip
            try:
                patches.append(PtxPatch(f.id, rule.id, patch_function(rw, f, rule), f.kernel))
            except Refused:
                rw.after, rw.before, rw.replace, rw.next_rd, rw.twin = saved
                raise
        except Refused as exc:
            refused.append({"id": f.id, "reason": str(exc)})
    if not patches:
        return text, patches, refused
    return render(lines, list(by_kernel.values())), patches, refused
