"""``irscan diff`` in words (text, markdown for a PR comment) and as its JSON document (README,
"irscan diff": a public contract like the scan's, fields only added)."""

from __future__ import annotations

import json
from typing import Any

from irscan import __version__
from irscan.diff.match import Diff, Entry

SCHEMA_VERSION = 1


def document(d: Diff, base: str, new: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """``builds``: what BASE and NEW were (paths); ``extra``: the suppression and baseline counts."""
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "irscan", "version": __version__},
        "builds": {"base": base, "new": new},
        "summary": {
            "new": len(d.new),
            "fixed": len(d.fixed),
            "changed": len(d.changed),
            "narrowed": len(d.narrowed),
            "widened": len(d.widened),
            "unchanged": d.unchanged,
        },
        "new": d.new,
        "fixed": d.fixed,
        "changed": d.changed,
        "narrowed": d.narrowed,
        "widened": d.widened,
        "notes": d.notes,
        **(extra or {}),
    }


def render_json(d: Diff, base: str, new: str, extra: dict[str, Any] | None = None) -> str:
    return json.dumps(document(d, base, new, extra), indent=2, default=str)


def _at(e: Entry) -> str:
    st = e["statement"]
    if st.get("file"):
        return f"{st['file']}:{st.get('line') or 0}"
    return f"kernel {e['kernel_key']}"


def _src(e: Entry) -> str:
    s = e["statement"].get("source")
    return f"`{s}`" if s else "(no statement text)"


def _finding_line(e: Entry, side: str) -> str:
    f = e[side]
    th = f" wraps when {f['threshold']}" if f.get("threshold") else ""
    return (f"{_at(e)}: {e['check']} [{f['severity']}] in {e['kernel_key']} ({e['ir']}): "
            f"{f['expression']}{th}")  # fmt: skip


def narrowed_sentence(e: Entry) -> str:
    """ "the index of `gB[row, col]` at kernel.py:12 was computed in i64 in BASE and is i32 in NEW"."""
    b, n = e["base"], e["new"]
    how = ""
    if n["narrow"]:
        x = n["narrow"][0]
        how = f" ({x['expression']}, {x['extension']}-extended from 32 bits: {n['threshold']})"
    many = f" ({e['accesses']} accesses)" if e.get("accesses", 1) > 1 else ""
    return (f"the index of the {e['kind']} {_src(e)} at {_at(e)} in {e['kernel_key']} ({e['ir']}){many} was "
            f"computed in i{b['index_width']} in BASE and is i{n['index_width']} in NEW{how}")  # fmt: skip


def render_text(d: Diff) -> str:
    out = []
    for e in d.new:
        out.append(f"new: {_finding_line(e, 'new')}")
    for e in d.narrowed:
        out.append(f"narrowed: {narrowed_sentence(e)}")
    for e in d.changed:
        out.append(f"changed: {_finding_line(e, 'new')}: {'; '.join(e['changes'])}")
    for e in d.fixed:
        out.append(f"fixed: {_finding_line(e, 'base')}")
    for e in d.widened:
        out.append(f"widened: {narrowed_sentence(e)}")
    out += [f"note: {n}" for n in d.notes]
    out.append(
        f"irscan diff: {len(d.new)} new, {len(d.narrowed)} narrowed, {len(d.changed)} changed, "
        f"{len(d.fixed)} fixed, {d.unchanged} unchanged finding(s)"
    )
    return "\n".join(out)


def _cell(s: object) -> str:
    return str(s if s is not None else "").replace("|", "\\|").replace("\n", " ")


def render_markdown(d: Diff) -> str:
    """A pull-request comment: one table per non-empty list."""
    out = [
        "## irscan diff",
        "",
        f"**{len(d.new)} new**, **{len(d.narrowed)} narrowed**, {len(d.changed)} changed, {len(d.fixed)} fixed, "
        f"{d.unchanged} unchanged finding(s).",
    ]
    sections: list[tuple[str, list[Entry], str]] = [
        ("New findings", d.new, "new"),
        ("Changed findings", d.changed, "new"),
        ("Fixed findings", d.fixed, "base"),
    ]
    for title, entries, side in sections:
        if not entries:
            continue
        out += ["", f"### {title}", "", "| where | check | severity | kernel (IR) | expression | wraps when |",
                "|---|---|---|---|---|---|"]  # fmt: skip
        for e in entries:
            f = e[side]
            cells = [_at(e), e["check"], f["severity"], f"{e['kernel_key']} ({e['ir']})", f"`{f['expression']}`",
                     f["threshold"]]  # fmt: skip
            out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
            if "changes" in e:
                out.append(f"| | | | | {_cell('; '.join(e['changes']))} | |")
    if d.narrowed:
        out += ["", "### Narrowed address arithmetic", ""]
        out += [f"- {narrowed_sentence(e)}" for e in d.narrowed]
    if d.notes:
        out += ["", *[f"> {n}" for n in d.notes]]
    return "\n".join(out)
