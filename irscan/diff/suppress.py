"""Inline suppressions: ``# irscan: ignore[narrow-widened-late] reason`` on the Python line of a finding's
statement silences that check's findings there; ``# irscan: ignore`` (no brackets) every check's.

A suppression is a claim about one line ("this offset is bounded: the tensor never passes 2^31"), so
it is honoured only for findings located at that statement (``source_precision`` ``statement``), never
for a finding that falls back to the kernel's def line.  A suppression that silenced nothing in a run
is reported, as ruff's RUF100 reports an unused ``noqa``: the bug it excused was fixed (or moved), and
a stale excuse would silence the next one on that line.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irscan.findings import Finding

#: the comment's form: ``irscan: ignore`` then optional ``[id, id]`` then an optional reason
_COMMENT = re.compile(r"#\s*irscan:\s*ignore(?:\[(?P<ids>[^\]\n]*)\])?(?P<reason>[^\n]*)")
#: Python files larger than this are not searched for comments (a generated file is no user's code)
_MAX_BYTES = 4 << 20


@dataclass(frozen=True)
class Suppression:
    file: str
    line: int
    checks: frozenset[str] | None  # None: every check
    reason: str

    def covers(self, check: str) -> bool:
        return self.checks is None or check in self.checks

    def text(self) -> str:
        ids = "" if self.checks is None else f"[{', '.join(sorted(self.checks))}]"
        return f"# irscan: ignore{ids}"


@dataclass
class Outcome:
    kept: list[Finding] = field(default_factory=list)
    suppressed: list[Finding] = field(default_factory=list)
    unused: list[Suppression] = field(default_factory=list)


def comments(path: str) -> list[Suppression]:
    """The suppressions in one Python file, from its comment tokens (a ``# irscan: ignore`` inside a
    string is no suppression).  A file that cannot be read or tokenized has none: its findings stand."""
    p = Path(path)
    try:
        if not p.is_file() or p.stat().st_size > _MAX_BYTES:
            return []
        text = p.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    if "irscan:" not in text:
        return []
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                m = _COMMENT.match(tok.string)
                if m:
                    ids = m.group("ids")
                    checks = None if ids is None else frozenset(x.strip() for x in ids.split(",") if x.strip())
                    out.append(Suppression(path, tok.start[0], checks, m.group("reason").strip()))
    except (tokenize.TokenError, SyntaxError):
        return []
    return out


def mark(findings: list[dict[str, Any]], files: Iterable[str]) -> tuple[list[bool], list[Suppression]]:
    """For each finding (its JSON form), whether a comment in ``files`` (the Python files the scan saw:
    its findings' and accesses' statements) suppresses it; and the suppressions that silenced nothing."""
    found: dict[tuple[str, int], list[Suppression]] = {}
    for path in sorted(set(files)):
        for s in comments(path):
            found.setdefault((s.file, s.line), []).append(s)
    used: set[Suppression] = set()
    flags = []
    for f in findings:
        hit = None
        if f.get("source_precision") == "statement" and f.get("file") and f.get("line"):
            hit = next((s for s in found.get((f["file"], f["line"]), []) if s.covers(str(f.get("check")))), None)
        if hit is not None:
            used.add(hit)
        flags.append(hit is not None)
    return flags, [s for group in found.values() for s in group if s not in used]


def apply(findings: list[Finding], files: Iterable[str]) -> Outcome:
    """Split ``findings`` into kept and suppressed (``mark``)."""
    flags, unused = mark([f.to_json() for f in findings], files)
    out = Outcome(unused=unused)
    for f, hit in zip(findings, flags, strict=True):
        (out.suppressed if hit else out.kept).append(f)
    return out
