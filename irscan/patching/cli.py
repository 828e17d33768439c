"""The command line of patch mode: ``irscan patch`` and what ``irscan audit --patch`` adds to a report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from irscan.patching.inhook import ORIGINAL_DIR, PATCH_FILE


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "patch",
        help="rewrite captured IR's wrapping chains to 64 bits: patched IR, PTX, cubin and a diff in OUT",
    )
    p.add_argument("input", metavar="CAPTURE_DIR|FILE.mlir|FILE.ptx")
    p.add_argument("-o", "--out", required=True, help="folder for the patched files (never the input's own)")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--strict", action="store_true", help="exit 1 when a finding is not patched or a patch is reverted")
    p.set_defaults(func=cmd_patch)


def cmd_patch(args: argparse.Namespace) -> int:
    from irscan.cliopts import path_arg
    from irscan.patching.inhook import PatchError
    from irscan.patching.offline import patch_tree

    src, out = path_arg(args.input, "the input path"), path_arg(args.out, "-o")  # "" is no folder anyone named
    try:
        reps = {k: r.to_json() for k, r in patch_tree(src, out, args.strict).items()}
    except PatchError as exc:
        print(f"irscan: patch: {exc}", file=sys.stderr)
        return 1
    if args.format == "json":
        print(json.dumps(reps, indent=2, default=str))
    else:
        for line in summary_lines(reps):
            print(line)
    return 0


def summary_lines(reports: dict[str, dict[str, Any]]) -> list[str]:
    out = []
    for folder, r in reports.items():
        for p in r["patches"]:
            regs = f", registers {p['registers_before']} -> {p['registers_after']}" if p.get("registers_after") else ""
            out.append(
                f"irscan: patched {p['id']} ({p['rule']}, {p['ops_rewritten']} op(s) rewritten{regs}) in {folder}"
            )
        for n in r["not_patched"]:
            out.append(f"irscan: not patched {n['id']}: {n['reason']}")
        if r.get("reverted"):
            out.append(f"irscan: {folder}: the original was compiled unchanged: {r['reverted']}")
        left = len(r.get("rescan_findings", []))
        out.append(f"irscan: re-scan of {folder}: {left} finding(s) left")
    return out


def _reports(out: Path) -> dict[str, dict[str, Any]]:
    from irscan.capturing.store import find_captures

    caps = find_captures(out) if out.is_dir() else []
    return {str(c): _read_report(c / PATCH_FILE) for c in caps if (c / PATCH_FILE).exists()}


#: what summary_lines and audit_fields read of each patch.json entry
_ENTRY_KEYS = {"patches": ("id", "rule", "ops_rewritten"), "not_patched": ("id", "reason")}


def _read_report(path: Path) -> dict[str, Any]:
    """A capture's patch.json; ``audit --out DIR`` may find an old or hand-edited one: one that does not
    read as patch mode wrote it is bad input at that file (exit 2), not a KeyError."""
    from irscan.ir import IRSyntaxError
    from irscan.resources import read_text

    text, want = read_text(path), ["patch.json as irscan patch mode writes it"]
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IRSyntaxError(str(path), exc.lineno, exc.colno, f"not JSON: {exc.msg}", want) from None
    except (RecursionError, MemoryError):  # nested too deeply, or too large: json stops cleanly
        raise IRSyntaxError(str(path), 1, 1, "not a patch report: nested too deeply or too large", want) from None
    for key, needed in _ENTRY_KEYS.items():
        items = doc.get(key) if isinstance(doc, dict) else None
        if not isinstance(items, list) or not all(isinstance(e, dict) and all(k in e for k in needed) for e in items):
            raise IRSyntaxError(str(path), 1, 1, f"not a patch report: '{key}' is not a list of entries", want)
    return doc  # type: ignore[no-any-return]


def audit_fields(out: Path) -> tuple[dict[str, Any], list[str]]:
    """The JSON fields ``irscan audit --patch`` adds (every capture's patches, refusals, reverts; the
    findings of the report are already the re-scan's) and the text summary lines."""
    reports = _reports(out)
    fields: dict[str, Any] = {
        "patches": [{**p, "capture": c} for c, r in reports.items() for p in r["patches"]],
        "not_patched": [{**n, "capture": c} for c, r in reports.items() for n in r["not_patched"]],
        "patch_reverted": [{"capture": c, "reason": r["reverted"]} for c, r in reports.items() if r.get("reverted")],
        "patch_originals": [str(Path(c) / ORIGINAL_DIR) for c in reports],
    }
    return fields, summary_lines(reports)
