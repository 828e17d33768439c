"""The rewrite rules, read from ``patches/*.json`` (data, not code: README.md "Patch mode").

A rule names the finding shape it fixes (the IR, the checks, the widening ops a chain may end in) and
the ops it may recompute in 64 bits; the rewriters (:mod:`irscan.patching.mlir`,
:mod:`irscan.patching.ptx`) read those lists instead of hard-coding them, so a rule's scope is what
its file says and nothing more.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

#: irscan/patches/ in an installed wheel (setup.py copies it there), else the source tree's patches/
_PACKAGED = Path(__file__).resolve().parents[1] / "patches"
PATCHES_DIR = _PACKAGED if _PACKAGED.is_dir() else Path(__file__).resolve().parents[2] / "patches"


@dataclass(frozen=True)
class Rule:
    id: str
    ir: str  # "mlir" | "ptx"
    checks: tuple[str, ...]
    summary: str
    widening: tuple[str, ...]
    recompute: tuple[str, ...]
    leaves: str  # "as-widening": signed for a GEP index / sext / .s32, unsigned for zext / .u32
    drop_trunc: bool
    examples: tuple[Path, ...]

    def fixes(self, ir: str, check: str) -> bool:
        return self.ir == ir and check in self.checks


class RuleError(Exception):
    """A rule file that does not say what a rule must (a broken patches/ folder, not bad user input)."""


_REQUIRED = ("id", "ir", "checks", "widening", "recompute")


def _rule(path: Path) -> Rule:
    data = json.loads(path.read_text())
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise RuleError(f"{path}: missing {', '.join(missing)}")
    if data["ir"] not in ("mlir", "ptx"):
        raise RuleError(f"{path}: ir must be mlir or ptx, not {data['ir']!r}")
    return Rule(
        id=str(data["id"]),
        ir=str(data["ir"]),
        checks=tuple(data["checks"]),
        summary=str(data.get("summary", "")),
        widening=tuple(data["widening"]),
        recompute=tuple(data["recompute"]),
        leaves=str(data.get("leaves", "as-widening")),
        drop_trunc=bool(data.get("drop_trunc", False)),
        examples=tuple(path.parent / e for e in data.get("examples", [])),
    )


@cache
def load(folder: Path = PATCHES_DIR) -> tuple[Rule, ...]:
    """Every rule in ``folder``, in file-name order (the first rule that fixes a finding wins)."""
    if not folder.is_dir():  # an install without the repository's patches/: say so, never patch nothing quietly
        raise RuleError(f"no rules: {folder} is not a folder (patch mode reads patches/*.json from the source tree)")
    return tuple(_rule(p) for p in sorted(folder.glob("*.json")))


def rule_for(ir: str, check: str, rules: tuple[Rule, ...] | None = None) -> Rule | None:
    for r in rules if rules is not None else load():
        if r.fixes(ir, check):
            return r
    return None
