"""Two builds side by side: which findings are new, fixed or changed, and which accesses narrowed.

Both sides are scan reports (the JSON document of report/json.py, from a saved file or a fresh scan of a
capture folder).  Kernels are matched by their Python name (findings.kernel_key: the DSL's
layout-mangled suffix and counter dropped), accesses by their Python statement, sink kind and
canonical expression, never by SSA names or IR lines, so a renumbered or reordered module diffs empty.

Matching goes in tiers, each on what is left unmatched by the one before:

1. the statement's file and line (what a finding id hashes);
2. the statement's text instead of its line: an unrelated statement added above it moves the line
   but not the bug;
3. findings only: the same statement, check and access kind with another expression.  That is the
   same access computed differently: a *changed* finding (its threshold moved), not a fixed and a new.

Within one key, entries are paired in the order of their column, then scan order.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from irscan.diff.accesses import normal_form
from irscan.findings import kernel_key, portable_path

Entry = dict[str, Any]
Key = Callable[[Entry], Hashable]

#: ``--fail-on`` levels: which lists of the diff fail the run
FAIL_ON = ("new", "worse", "never")


def _where(e: Entry) -> tuple[str, str]:
    return (kernel_key(str(e.get("kernel", ""))), str(e.get("ir", "")))


def _file(e: Entry) -> str:
    f = e.get("file")
    return portable_path(f) if isinstance(f, str) and f else ""


def _text(e: Entry) -> str:
    """The statement's text, blanks normalised and a trailing comment dropped (adding a suppression or
    a note to the line leaves the statement what it was)."""
    s = e.get("source")
    return " ".join(_code(s).split()) if isinstance(s, str) and s else f"line {e.get('line') or 0}"


def _code(line: str) -> str:
    """``line`` up to its comment: the first ``#`` outside a string literal."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote and line[i - 1] != "\\":
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return line[:i]
    return line


def _kind(e: Entry) -> str:
    if "check" in e:  # a finding: the kind of its first access
        sink = e.get("sink") if isinstance(e.get("sink"), dict) else {}
        return str(sink.get("kind", ""))  # type: ignore[union-attr]
    return str(e.get("kind", ""))


def _expr(e: Entry) -> str:
    return normal_form(str(e.get("expression", "")))


def _check(e: Entry) -> str:
    return str(e.get("check", ""))


FINDING_TIERS: tuple[Key, ...] = (
    lambda e: (*_where(e), _check(e), _file(e), e.get("line") or 0, _kind(e), _expr(e)),
    lambda e: (*_where(e), _check(e), _file(e), _text(e), _kind(e), _expr(e)),
    lambda e: (*_where(e), _check(e), _file(e), _text(e), _kind(e)),
)
ACCESS_TIERS: tuple[Key, ...] = FINDING_TIERS[:2]


Paired = tuple[list[tuple[Entry, Entry]], list[Entry], list[Entry]]


def pair(base: list[Entry], new: list[Entry], tiers: tuple[Key, ...]) -> Paired:
    """(matched pairs, unmatched base entries, unmatched new entries)."""
    pairs: list[tuple[Entry, Entry]] = []
    left_b, left_n = list(base), list(new)
    for key in tiers:
        by: dict[Hashable, list[Entry]] = {}
        for e in sorted(left_b, key=lambda e: e.get("col") or 0):
            by.setdefault(key(e), []).append(e)
        rest_n = []
        for e in sorted(left_n, key=lambda e: e.get("col") or 0):
            group = by.get(key(e))
            if group:
                pairs.append((group.pop(0), e))
            else:
                rest_n.append(e)
        matched_b = {id(b) for b, _ in pairs}
        left_b = [e for e in left_b if id(e) not in matched_b]
        left_n = rest_n
    return pairs, left_b, left_n


# -- what changed between two matched findings --

_SEVERITY_RANK = {"may": 1, "must": 2}


def _wraps_at(f: Entry) -> int | None:
    """The power of two the wrapping value leaves: 31 (signed), 32 (unsigned), from ``wraps_when.limit``."""
    w = f.get("wraps_when") or {}
    lim = w.get("limit") if isinstance(w, dict) else None
    return int(lim).bit_length() if isinstance(lim, int) and lim > 0 else None


def _threshold(f: Entry) -> str | None:
    w = f.get("wraps_when") or {}
    t = w.get("text") if isinstance(w, dict) else None
    return t if isinstance(t, str) else None


def _threshold_value(f: Entry) -> int | None:
    w = f.get("wraps_when") or {}
    v = w.get("threshold") if isinstance(w, dict) else None
    return v if isinstance(v, int) else None


def changes(b: Entry, n: Entry) -> tuple[list[str], bool]:
    """What a reader would call a change of the same bug, in words; and whether NEW is worse."""
    out, worse = [], False
    sb, sn = b.get("severity"), n.get("severity")
    if sb != sn:
        out.append(f"severity {sb} -> {sn}")
        worse |= _SEVERITY_RANK.get(str(sn), 0) > _SEVERITY_RANK.get(str(sb), 0)
    ab, an = _wraps_at(b), _wraps_at(n)
    eb, en = _expr(b), _expr(n)
    tb, tn = _threshold(b), _threshold(n)
    if eb != en:
        out.append(f"the wrapping value is now {en} instead of {eb}")
    if ab and an and ab != an:
        out.append(f"now wraps from 2^{an} instead of 2^{ab}")
        worse |= an < ab
    if tb != tn:
        out.append(f"now wraps when {tn or '(unknown)'} instead of {tb or '(unknown)'}")
        vb, vn = _threshold_value(b), _threshold_value(n)
        same_input = (b.get("wraps_when") or {}).get("input") == (n.get("wraps_when") or {}).get("input")
        worse |= vb is not None and vn is not None and same_input and vn < vb
    return out, worse


@dataclass
class Diff:
    """The lists of ``irscan diff`` (README, "irscan diff"): each entry a dict, ready for JSON."""

    new: list[Entry] = field(default_factory=list)
    fixed: list[Entry] = field(default_factory=list)
    changed: list[Entry] = field(default_factory=list)
    narrowed: list[Entry] = field(default_factory=list)
    widened: list[Entry] = field(default_factory=list)  # the reverse of narrowed: informational
    unchanged: int = 0
    notes: list[str] = field(default_factory=list)
    new_findings: list[Entry] = field(default_factory=list)  # the new findings as NEW reported them (SARIF)

    def reaches(self, fail_on: str) -> bool:
        if fail_on == "never":
            return False
        if self.new or self.narrowed:
            return True
        return fail_on == "worse" and any(c["worse"] for c in self.changed)


def _statement(e: Entry) -> dict[str, Any]:
    return {"file": e.get("file"), "line": e.get("line"), "col": e.get("col"), "source": e.get("source")}


def _finding_side(f: Entry | None) -> dict[str, Any] | None:
    if f is None:
        return None
    return {
        "id": f.get("id"),
        "severity": f.get("severity"),
        "expression": f.get("expression"),
        "threshold": _threshold(f),
        "wraps_at": f"2^{_wraps_at(f)}" if _wraps_at(f) else None,
        "message": f.get("message"),
        "file": f.get("file"),
        "line": f.get("line"),
    }


def _finding_entry(b: Entry | None, n: Entry | None) -> Entry:
    e = n if n is not None else b
    assert e is not None
    return {
        "kernel": e.get("kernel"),
        "kernel_key": kernel_key(str(e.get("kernel", ""))),
        "ir": e.get("ir"),
        "check": e.get("check"),
        "statement": _statement(e),
        "base": _finding_side(b),
        "new": _finding_side(n),
    }


def _access_side(a: Entry) -> dict[str, Any]:
    narrow = [x for x in a.get("narrow", []) if isinstance(x, dict)]
    return {
        "expression": a.get("expression"),
        "index_width": a.get("index_width"),
        "narrow": narrow,
        "threshold": f"wraps from {narrow[0].get('wraps_at')}" if narrow else None,
        "file": a.get("file"),
        "line": a.get("line"),
    }


def diff(base: dict[str, Any], new: dict[str, Any]) -> Diff:
    """The diff of two scan reports (report/json.py documents, already validated by diff/load.py)."""
    d = Diff()
    pairs, gone, came = pair(base["findings"], new["findings"], FINDING_TIERS)
    d.new = [_finding_entry(None, n) for n in came]
    d.new_findings = came
    d.fixed = [_finding_entry(b, None) for b in gone]
    for b, n in pairs:
        what, worse = changes(b, n)
        if what:
            d.changed.append({**_finding_entry(b, n), "changes": what, "worse": worse})
        else:
            d.unchanged += 1
    for side, doc in (("BASE", base), ("NEW", new)):
        if "accesses" not in doc:
            d.notes.append(f"{side} has no 'accesses' (a report of an older irscan): narrowed arithmetic not compared")
    apairs, _, _ = pair(base.get("accesses", []), new.get("accesses", []), ACCESS_TIERS)
    for b, n in apairs:
        wb, wn = b.get("index_width"), n.get("index_width")
        if isinstance(wb, int) and isinstance(wn, int) and wb != wn:
            entry = {
                "kernel": n.get("kernel"),
                "kernel_key": kernel_key(str(n.get("kernel", ""))),
                "ir": n.get("ir"),
                "kind": n.get("kind"),
                "statement": _statement(n),
                "base": _access_side(b),
                "new": _access_side(n),
            }
            (d.narrowed if wn < wb else d.widened).append(entry)
    d.narrowed, d.widened = _per_statement(d.narrowed), _per_statement(d.widened)
    return d


def _per_statement(entries: list[Entry]) -> list[Entry]:
    """One entry per kernel, IR, statement and access kind: a statement's unrolled accesses (one per
    constant offset) narrow together; ``accesses`` says how many."""
    by: dict[tuple[Any, ...], Entry] = {}
    for e in entries:
        st = e["statement"]
        k = (e["kernel_key"], e["ir"], st["file"], st["line"], e["kind"])
        if k in by:
            by[k]["accesses"] += 1
        else:
            by[k] = {**e, "accesses": 1}
    return list(by.values())
