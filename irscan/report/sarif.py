"""SARIF 2.1.0 (the OASIS standard code-scanning services read: GitHub, GitLab, Azure DevOps).

One run per document: ``tool.driver.rules`` holds one rule per check (its title, doc and CWE, from the
``Check`` type), each finding is a ``result`` with the Python statement as its primary location, the
IR lines of its chain as related locations and as one ``codeFlow`` (inputs to the access, the op that
wraps marked), and ``partialFingerprints`` from the stable finding id (README "Finding ids"), so a
code-scanning service tracks the same bug across commits.  tests/test_sarif.py validates the output
against the official schema.
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irscan import __version__
from irscan.checks import CHECKS, Check
from irscan.findings import Finding, Step
from irscan.report.diff import narrowed_sentence

if TYPE_CHECKING:
    from irscan.diff.match import Diff

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
VERSION = "2.1.0"
INFO_URI = "https://github.com/irscan/irscan"
#: SARIF result levels: a wrap at the captured launch is an error; one some input would reach, a warning
LEVEL = {"must": "error", "may": "warning"}
#: GitHub's code scanning ranks alerts by this property (0.0 - 10.0)
SECURITY_SEVERITY = {"must": "8.1", "may": "5.9"}


def _uri(path: str) -> dict[str, Any]:
    """A relative path stays relative to the run's source root (``%SRCROOT%``); an absolute one is a file URI."""
    p = Path(path)
    if p.is_absolute():
        return {"uri": p.as_uri()}
    return {"uri": p.as_posix(), "uriBaseId": "%SRCROOT%"}


def rule(check: Check) -> dict[str, Any]:
    d = check.doc
    markdown = (
        f"**What it finds.** {d.what}\n\n**Why it is a bug.** {d.why}\n\n"
        f"**Example.**\n\n```python\n{d.example}\n```\n\n**Use instead.**\n\n```python\n{d.fix}\n```"
    )
    return {
        "id": check.id,
        "name": "".join(w.capitalize() for w in check.id.split("-")),
        "shortDescription": {"text": check.title},
        "fullDescription": {"text": d.what},
        "help": {"text": f"{d.what}\n\nWhy: {d.why}\n\nFix:\n{d.fix}", "markdown": markdown},
        "defaultConfiguration": {"level": "warning"},
        "properties": {
            "tags": ["security", "correctness", f"external/cwe/cwe-{check.cwe}"],
            "cwe": f"CWE-{check.cwe}",
            "precision": "high",
        },
        "relationships": [
            {"target": {"id": f"CWE-{check.cwe}", "toolComponent": {"name": "CWE"}}, "kinds": ["relevant"]}
        ],
    }


def _ir_location(f: Finding, step: Step, index: int | None = None) -> dict[str, Any]:
    loc: dict[str, Any] = {
        "physicalLocation": {"artifactLocation": _uri(f.ir_file), "region": {"startLine": max(step.ir_line, 1)}},
        "message": {"text": f"{step.role}: {step.text[:300]}" + (" (wraps here)" if step.wraps else "")},
    }
    if index is not None:
        loc["id"] = index
    return loc


def _primary(f: Finding) -> dict[str, Any]:
    """The Python statement, else the IR line (a capture without line info names no statement)."""
    if f.file and f.line:
        region: dict[str, Any] = {"startLine": f.line}
        if f.col:
            region["startColumn"] = f.col
        if f.source:
            region["snippet"] = {"text": f.source}
        return {"physicalLocation": {"artifactLocation": _uri(f.file), "region": region}}
    return {"physicalLocation": {"artifactLocation": _uri(f.ir_file), "region": {"startLine": max(f.ir_line, 1)}}}


def result(f: Finding, rule_index: int) -> dict[str, Any]:
    steps = [s for s in f.chain if s.ir_line > 0]
    res: dict[str, Any] = {
        "ruleId": f.check,
        "ruleIndex": rule_index,
        "level": LEVEL.get(f.severity, "warning"),
        "message": {"text": f"{f.message}. Fix: {f.fix}" if f.fix else f.message},
        "locations": [_primary(f)],
        "partialFingerprints": {"irscanFindingId/v1": f.id},
        "properties": {
            "severity": f.severity,
            "security-severity": SECURITY_SEVERITY.get(f.severity, "5.0"),
            "kernel": f.kernel,
            "ir": f.ir,
            "expression": f.expression,
            "wrapsWhen": (f.wraps_when or {}).get("text"),
            "undefinedBehaviour": f.undefined_behaviour,
        },
    }
    if steps:
        res["relatedLocations"] = [_ir_location(f, s, i) for i, s in enumerate(steps)]
        res["codeFlows"] = [
            {
                "message": {"text": f"how {f.expression} reaches the {f.sink.get('kind', 'access')}"},
                "threadFlows": [
                    {
                        "locations": [
                            {"location": _ir_location(f, s), "importance": "essential" if s.wraps else "important"}
                            for s in steps
                        ]
                    }
                ],
            }
        ]
    return res


def document(
    findings: list[Finding],
    errors: list[str] | None = None,
    properties: dict[str, Any] | None = None,
    extra: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], []),
) -> dict[str, Any]:
    """The SARIF log of one run; ``errors`` (irscan's own failures) become tool execution notifications;
    ``extra``: (rules, results) beyond the checks' (``irscan diff``'s narrowed accesses)."""
    index = {c.id: i for i, c in enumerate(CHECKS)}
    notes = [{"level": "error", "message": {"text": e}} for e in errors or []]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "irscan",
                "version": __version__,
                "informationUri": INFO_URI,
                "rules": [rule(c) for c in CHECKS] + extra[0],
            }
        },
        "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
        "results": [result(f, index.get(f.check, 0)) for f in findings] + extra[1],
        "invocations": [{"executionSuccessful": not errors, "toolExecutionNotifications": notes}],
        "columnKind": "unicodeCodePoints",
    }
    if properties:
        run["properties"] = properties
    return {"$schema": SCHEMA, "version": VERSION, "runs": [run]}


def render(findings: list[Finding], errors: list[str] | None = None, properties: dict[str, Any] | None = None) -> str:
    return json.dumps(document(findings, errors, properties), indent=2, default=str)


# -- irscan diff: the new findings, and each narrowed access as a result of its own rule --

NARROWED = "narrowed-index"
_FIELDS = {f.name for f in fields(Finding)}


def finding_of(d: dict[str, Any]) -> Finding:
    """A finding back from its JSON form (a saved report's, or a fresh scan's)."""
    kw = {k: v for k, v in d.items() if k in _FIELDS}
    kw["chain"] = [Step(**s) for s in d.get("chain", []) if isinstance(s, dict)]
    return Finding(**kw)


def _narrowed_rule() -> dict[str, Any]:
    what = (
        "The index of a global-memory access that the base build computed in 64 bits is computed in 32 bits in "
        "the new build: no shape need reach 2^31 yet for the new build to wrap where the old one did not."
    )
    return {
        "id": NARROWED,
        "name": "NarrowedIndexArithmetic",
        "shortDescription": {"text": "address arithmetic narrowed from i64 to i32 between two builds"},
        "fullDescription": {"text": what},
        "help": {"text": what + " Compare the two builds' IR of this statement; widen the index (cutlass.Int64)."},
        "defaultConfiguration": {"level": "warning"},
        "properties": {"tags": ["correctness", "external/cwe/cwe-190"], "cwe": "CWE-190"},
    }


def _narrowed_result(e: dict[str, Any], rule_index: int) -> dict[str, Any]:
    st = e["statement"]
    loc: dict[str, Any] = {"physicalLocation": {"artifactLocation": _uri(st["file"] or "unknown"),
                                                "region": {"startLine": max(st.get("line") or 1, 1)}}}  # fmt: skip
    fp = f"{e['kernel_key']}|{e['ir']}|{Path(st['file'] or '').name}|{st.get('source') or st.get('line')}|{e['kind']}"
    return {
        "ruleId": NARROWED,
        "ruleIndex": rule_index,
        "level": "warning",
        "message": {"text": narrowed_sentence(e)},
        "locations": [loc],
        "partialFingerprints": {"irscanNarrowed/v1": fp},
    }


def render_diff(d: Diff, properties: dict[str, Any] | None = None) -> str:
    rules = [_narrowed_rule()]
    results = [_narrowed_result(e, len(CHECKS)) for e in d.narrowed]
    findings = [finding_of(f) for f in d.new_findings]
    return json.dumps(document(findings, None, properties, (rules, results)), indent=2, default=str)
