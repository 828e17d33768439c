"""The JSON document: a public contract (README, "JSON output").  Add fields; never rename them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from irscan import __version__
from irscan.findings import Finding

if TYPE_CHECKING:
    from irscan.checks.base import Check

SCHEMA_VERSION = 1


def document(findings: list[Finding], kernels: list[dict[str, Any]], unseen: dict[str, int],
             environment: dict[str, Any] | None = None, errors: list[str] | None = None,
             accesses: list[dict[str, Any]] | None = None,
             rule_suppressed: list[Finding] | None = None) -> dict[str, Any]:  # fmt: skip
    """``accesses``: every global-memory access with its index width (irscan/diff/accesses.py), what
    ``irscan diff`` reads to report narrowed address arithmetic from a saved report.  ``rule_suppressed``:
    the findings the reporting rule leaves out, each with its reason in its ``rule_suppressed`` field
    (README "What is reported"); always listed, whether or not ``--all`` prints them as text."""
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "irscan", "version": __version__},
        "environment": environment or {},
        "summary": {
            "findings": len(findings),
            "must": sum(f.severity == "must" for f in findings),
            "may": sum(f.severity == "may" for f in findings),
            "kernels_scanned": len(kernels),
            "rule_suppressed": len(rule_suppressed or []),
        },
        "findings": [f.to_json() for f in findings],
        "rule_suppressed": [f.to_json() for f in rule_suppressed or []],
        "kernels": kernels,
        "unseen_ops": unseen,
        "errors": errors or [],
        "accesses": accesses or [],
    }


def render(findings: list[Finding], kernels: list[dict[str, Any]], unseen: dict[str, int], **kw: Any) -> str:
    return json.dumps(document(findings, kernels, unseen, **kw), indent=2, default=str)


def rule(check: Check) -> dict[str, Any]:
    """A check's metadata and doc (``irscan rules --format json``; the rules of a SARIF run)."""
    d = check.doc
    return {
        "id": check.id,
        "title": check.title,
        "cwe": f"CWE-{check.cwe}",
        "cwe_name": check.cwe_name,
        "doc": {"what": d.what, "why": d.why, "example": d.example, "fix": d.fix},
        "examples": list(check.examples),
    }


def render_rules(checks: list[Check]) -> str:
    return json.dumps({"schema_version": SCHEMA_VERSION, "rules": [rule(c) for c in checks]}, indent=2)
