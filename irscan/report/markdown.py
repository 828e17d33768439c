"""A ready-to-file upstream bug report for one root cause, in the shape of a report that gets fixed
(shared/seeds/004): title, summary, root cause with the arithmetic, the trigger in the user's terms,
environment, version matrix, minimal repro, expected vs observed, the fix.  Every sentence is built
from the finding and from what was re-run (``Evidence``); a section with nothing behind it says so."""

from __future__ import annotations

import platform
import re
from pathlib import Path
from typing import Any

from irscan.bugreport.collect import Evidence, RootCause
from irscan.bugreport.terms import element_bytes, name_offsets, name_strides, static_strides, user_terms, witness_rows
from irscan.findings import kernel_key, portable_path

_DSL_CALL = re.compile(r"\b(cute(?:\.\w+)+)\(")


def _n(v: int) -> str:
    return f"{v:,}"


def _cell(s: str) -> str:
    return "`" + s.replace("|", "\\|").replace("`", "'").strip() + "`" if s.strip() else ""


def _where(f: dict[str, Any]) -> str:
    return f"{portable_path(f['file'])}:{f['line']}" if f.get("file") else f"{f['ir_file']}:{f['ir_line']}"


def _dsl_call(f: dict[str, Any]) -> str | None:
    for src in ((f.get("origin") or {}).get("source"), f.get("source")):
        m = _DSL_CALL.search(src or "")
        if m:
            return m.group(1)
    return None


def named_expression(rc: RootCause) -> str:
    """The wrapping expression in the user's terms, constant factors named as the static strides they are."""
    f = rc.lead
    args = rc.kernel_meta().get("args", [])
    named = name_offsets(
        name_strides(str(f.get("expression", "")), static_strides(f, args, rc.params)), f, args, rc.params
    )
    return user_terms(named, rc.params)


def trigger(rc: RootCause) -> str:
    """``mdO.stride(0) × mCuSeqlens[...] >= 2^31``, i.e. from `mCuSeqlens[...]` = 220,753 at `mdO.stride(0)` =
    9,728: the condition as the user reads it, a constant factor named as the static stride it is."""
    f, params = rc.lead, rc.params
    w = f.get("wraps_when") or {}
    strides = static_strides(f, rc.kernel_meta().get("args", []), params)
    expr = named_expression(rc)
    at = str(w.get("wraps_at") or ("2^32" if (f.get("witness") or {}).get("extension") == "zero" else "2^31"))
    if w.get("input") is None or w.get("threshold") is None:
        return f"`{expr} >= {at}`"
    out = f"`{expr} >= {at}`, i.e. from `{user_terms(str(w['input']), params)}` = {_n(int(w['threshold']))}"
    named = [f"`{name}` = {_n(v)}" for v, name in strides.items() if name in expr]
    out += f" at {', '.join(named)}" if named else ""
    launch = (w.get("safe_while") or {}).get("launch")
    return out + (f" with the launch's {launch}" if launch else "")


def title(rc: RootCause) -> str:
    f = rc.lead
    call = _dsl_call(f)
    what = f"`{call}`" if call else f"`{(f.get('source') or '').strip()[:60]}`"
    kernel = kernel_key(f["kernel"])
    return f"[CuTe DSL] `{kernel}`: 32-bit overflow of the address offset in {what} when {trigger(rc)}"


def _chains(rc: RootCause) -> list[str]:
    """MLIR and PTX side by side, only the chain's ops, in chain order."""
    lead = rc.lead
    mlir = lead if lead["ir"] == "mlir" else None
    ptx = next((f for f in rc.findings if f["ir"] == "ptx" and f["id"] == lead.get("twin")), None)
    ptx = lead if lead["ir"] == "ptx" else ptx or next((f for f in rc.findings if f["ir"] == "ptx"), None)
    cols = [c for c in (mlir, ptx) if c is not None]
    head = " | ".join(f"{c['ir'].upper()} (`{c['ir_file'].rsplit('/', 1)[-1]}`)" for c in cols)
    out = [f"| {head} |", "|" + "---|" * len(cols)]
    steps = [c["chain"] for c in cols]

    def cell(s: dict[str, Any]) -> str:
        mark = " **← wraps**" if s.get("wraps") else (f" ({s['note']})" if s.get("note") else "")
        return f"{_cell(str(s['text']).split(' loc(')[0][:110])}{mark}"

    for i in range(max(len(s) for s in steps)):
        out.append("| " + " | ".join(cell(s[i]) if i < len(s) else "" for s in steps) + " |")
    return out


def _table(f: dict[str, Any], params: list[str]) -> list[str]:
    rows = witness_rows(f, params)
    wit = f.get("witness") or {}
    size = element_bytes(f)
    out = ["| step | intended value | 32-bit value | address offset |", "|---|---:|---:|---:|"]
    if rows:
        for r in rows:
            off = f"{_n(r.intended * size)} B → {_n(r.offset)} B" if size and r.offset is not None else "n/a"
            out.append(f"| `{r.step}` | {_n(r.intended)} | {_n(r.bits32)} | {off} |")
    elif wit:
        off = f"{_n(wit['true'] * size)} B → {_n(wit['extended'] * size)} B" if size else wit.get("extended_hex", "")
        out.append(f"| `{user_terms(str(f['expression']), params)}` | {_n(wit['true'])} | {_n(wit['i32'])} | {off} |")
    else:
        return ["No witness was computed for this finding."]
    ext = "sign-extended" if wit.get("extension") != "zero" else "zero-extended"
    out.append("")
    out.append(
        f"The 32-bit value is {ext} to 64 bits ({wit.get('extended_hex', '?')}) before it is added to the pointer."
    )
    return out


def _environment(rc: RootCause) -> list[str]:
    env = dict((rc.meta or {}).get("environment") or {})
    arch = (rc.meta or {}).get("arch", "not recorded")
    out = [
        f"- `nvidia-cutlass-dsl` {env.get('dsl_version', 'not recorded')} "
        f"({env.get('wheel_flavour', 'flavour not recorded')} wheel)",
        f"- target arch: {arch} (compile only; no GPU was used)",
        f"- Python {env.get('python', platform.python_version())}",
        f"- PyTorch {env['torch']}" if env.get("torch") else f"- PyTorch: {_torch_use(rc)}",
    ]
    return out


def _torch_use(rc: RootCause) -> str:
    src = Path(str(rc.kernel_meta().get("file") or ""))
    try:
        uses = bool(re.search(r"^\s*(?:import|from) torch\b", src.read_text(), re.M)) if src.is_file() else None
    except OSError:
        uses = None
    if uses is None:
        return "not recorded (the kernel's source is not on this machine)"
    return "imported by the program, its version not recorded by the capture" if uses else "not imported by the program"


def _dsl_part(rc: RootCause) -> list[str]:
    """What the DSL does wrong, when the narrowing comes from a DSL function rather than the user's own
    arithmetic: the function, the widths of its operands and what it should do."""
    f = rc.lead
    call = _dsl_call(f)
    if call is None:
        return []
    widths = sorted(
        {int(s["width"]) for s in f["chain"] if s.get("role") in ("input", "arithmetic") and s.get("width")}
    )
    wrap = next((s for s in f["chain"] if s.get("wraps")), None)
    tensor = (f.get("memory") or {}).get("tensor")
    km = rc.kernel_meta()
    layout = next((a.get("layout") for a in km.get("args", []) if tensor and f"arg{a.get('index')}" == tensor), None)
    lay = f" (layout `{layout}`)" if layout else ""
    op = f"`{wrap['op']}`" if wrap else "the index arithmetic"
    if layout and re.search(r"\?(?!\{i64)", layout.split(":", 1)[-1]):
        return [
            "",
            f"**On the DSL's side.** `{call}` computes at the width of its operands (i{'/i'.join(map(str, widths))}); "
            f"the 32-bit dynamic stride in `{layout}` is the program's own choice (`cute.sym_int32`, "
            "`use_32bit_stride`), so the fix is the user's; the DSL could warn when a 32-bit stride indexes global "
            "memory.",
        ]
    return [
        "",
        f"**What the DSL does wrong.** `{call}` computes the offset into "
        f"{'`' + user_terms(tensor, rc.params) + '`' if tensor else 'the tensor'}{lay} at the width of its operands "
        f"(i{'/i'.join(map(str, widths)) or '32'}): {op} is 32-bit, and its result is the index of a 64-bit "
        "address. Since the value addresses global memory, the product should be formed in 64 bits (widen the "
        "coordinate or the stride before the multiply), as it is when the stride is a dynamic 64-bit one.",
    ]


def render(rc: RootCause, ev: Evidence) -> str:
    f = rc.lead
    w = f.get("wraps_when") or {}
    twin = next((x for x in rc.findings if x is not f), None)
    access = str(f.get("sink", {}).get("kind", "access"))
    lines = [f"# {title(rc)}", "", "## Summary", ""]
    lines.append(
        f"In kernel `{kernel_key(f['kernel'])}` ({_where(f)}), the {access} address is computed from "
        f"`{named_expression(rc)}` in 32 bits. It wraps when {trigger(rc)}; "
        f"the wrapped offset is {'sign' if (f.get('witness') or {}).get('extension') != 'zero' else 'zero'}-extended "
        f"and added to the tensor's base pointer, so the kernel {'writes' if access == 'store' else 'reads'} outside "
        "the tensor "
        f"({'undefined behaviour in LLVM: the op carries nsw' if f.get('undefined_behaviour') else 'a silent wrap'}). "
        f"irscan's verdict: **{f['severity']}** ({f['check']})."
    )
    rng, thr = w.get("input_range"), w.get("threshold")
    if f["severity"] == "must" and w.get("input_fixed_by_launch") and rng and thr is not None and rng[1] >= thr:
        lines.append(
            f"The launch the kernel is compiled for reaches it: `{user_terms(str(w['input']), rc.params)}` goes up "
            f"to {_n(int(rng[1]))}, so every launch of this kernel wraps, whatever the data."
        )
    if twin is not None:
        tw = twin.get("wraps_when") or {}
        lines.append(
            f"The {twin['ir'].upper()} of the same access wraps when "
            f"`{user_terms(str(tw.get('text', '?')), rc.params)}`."
        )
    lines += [f"{user_terms(n, rc.params)}." for n in f.get("notes", [])]
    if len(rc.accesses) > 1:
        lines += ["", "The same wrapping value addresses every one of these accesses:", ""]
        lines += [
            f"- the {a.get('sink', {}).get('kind', 'access')} at {_where(a)}: `{(a.get('source') or '').strip()}` "
            f"(finding {a['id']})"
            for a in rc.accesses
        ]
    lines += [
        "",
        "## Root cause",
        "",
        f"The Python statement ({_where(f)}):",
        "",
        "```python",
        (f.get("source") or "").strip(),
        "```",
    ]
    if f.get("origin"):
        o = f["origin"]
        lines += [
            "",
            f"The wrapping op itself comes from {portable_path(o['file'])}:{o['line']}: `{o.get('source', '')}`.",
        ]
    lines += [
        "",
        "The chain from the inputs to the access (only its ops):",
        "",
        *_chains(rc),
        "",
        "At the witness:",
        "",
    ]
    lines += _table(f, rc.params)
    for fact in f.get("facts", []):
        lines.append(f"- {user_terms(fact, rc.params)}")
    lines += ["", "## Trigger", "", f"{trigger(rc)}."]
    sw = w.get("safe_while") or {}
    if sw.get("solved"):
        lines.append(f"It stays correct while {user_terms(sw['solved'], rc.params)}.")
    mem = f.get("memory") or {}
    if mem.get("bytes"):
        lines.append(
            f"At the threshold the tensor `{user_terms(mem['tensor'], rc.params)}` needs {_n(int(mem['bytes']))} "
            "bytes, which fits on one GPU."
        )
    lines += ["", "## Environment", "", *_environment(rc)]
    lines += ["", "## Version matrix", ""]
    if ev.matrix:
        lines += ["| release | result |", "|---|---|", *(f"| {k} | {v} |" for k, v in ev.matrix.items())]
        if ev.first_bad:
            lines.append(f"\nFirst affected release (bisect): **{ev.first_bad}**.")
    else:
        lines.append("Not run (`irscan report --matrix 4.4.2,4.5.0,4.5.1,4.8.1` fills it).")
    if ev.bisect_note:
        lines.append(ev.bisect_note)
    lines += ["", "## Minimal repro", ""]
    if ev.reduced:
        a, b = ev.reduced_ops
        lines.append(
            f"- Reduced module [`{ev.reduced}`]({ev.reduced}): {b} ops (from {a}), re-run: `irscan scan {ev.reduced}` "
            f"reports this finding by itself. {ev.reduced_note}"
        )
    else:
        lines.append(f"- No reduced module: {ev.reduced_note or 'the captured module does not reproduce on its own'}.")
    if ev.repro:
        run = f"`irscan audit -- python {ev.repro}`"
        if ev.repro_reproduces is None:
            state = "not re-run"
        else:
            state = f"re-run, {run} {'reproduces' if ev.repro_reproduces else '**does not reproduce**'} it"
        lines.append(f"- Compile-only script [`{ev.repro}`]({ev.repro}) (no GPU needed): {state}. {ev.repro_note}")
    else:
        lines.append(f"- No repro script: {ev.repro_note or 'the kernel does not come from a file irscan can import'}.")
    lines += [
        "",
        "## Expected vs observed",
        "",
        "| | value |",
        "|---|---|",
        f"| expected offset | {_n((f.get('witness') or {}).get('true', 0))} elements |",
        f"| what the kernel's 32-bit arithmetic gives, extended | {_n((f.get('witness') or {}).get('extended', 0))} "
        "elements |",
        "",
        "Computed at the witness from the IR (compile only, no GPU run).",
        "",
        "## Fix",
        "",
        f"On the user's side: {user_terms(str(f.get('fix', '')), rc.params)}.",
        *_dsl_part(rc),
    ]
    if ev.svg:
        lines += ["", "## The chain", "", f"![chain of {rc.id}]({ev.svg})"]
    lines += ["", f"<sub>irscan finding {', '.join(x['id'] for x in rc.findings)}</sub>", ""]
    return "\n".join(lines)
