"""The golden snapshot: what ``irscan scan --format json`` says about the checked-in corpus, projected
onto the fields a reader reviews (ids aside: they have their own stability test).

A refactor must leave it unchanged; a change in behaviour shows up as a diff of these files in review.
Regenerate after an intended change with ``python tests/golden/snapshot.py --write``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SETS = {"captures": ROOT / "corpus" / "captures", "thirdparty": ROOT / "corpus" / "thirdparty"}


def _finding(f: dict[str, Any]) -> dict[str, Any]:
    ww = f.get("wraps_when") or {}
    return {
        "ir": f["ir"],
        "kernel": f["kernel"][:80],
        "check": f["check"],
        "severity": f["severity"],
        "at": f"{Path(f['file']).name if f['file'] else '?'}:{f['line']}:{f['col']}",
        "sink": f"{f['sink']['kind']}@{f['ir_line']}",
        "expression": f["expression"],
        "wraps_when": ww.get("text"),
        "message": f["message"],
    }


def snapshot(folder: Path) -> dict[str, Any]:
    p = subprocess.run(
        [sys.executable, "-m", "irscan", "scan", "--format", "json", str(folder)], capture_output=True, text=True
    )
    doc = json.loads(p.stdout)
    rows = sorted((_finding(f) for f in doc["findings"]), key=lambda r: json.dumps(r, sort_keys=True))
    return {"exit": p.returncode, "summary": doc["summary"], "errors": doc["errors"], "findings": rows}


def path(name: str) -> Path:
    return HERE / f"{name}.json"


if __name__ == "__main__":
    for name, folder in SETS.items():
        if "--write" in sys.argv:
            path(name).write_text(json.dumps(snapshot(folder), indent=1, sort_keys=True) + "\n")
            print("wrote", path(name))
