"""SARIF 2.1.0 output of scan, audit and diff, validated against the official schema (tests/data, its
source noted there) and checked for what code-scanning services read: rules with CWE, levels, the
Python statement as the location, IR lines as related locations, the chain as a code flow, and
fingerprints from the stable finding ids."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from irscan.checks import CHECKS
from irscan.cli import main
from irscan.diff.match import diff
from irscan.report import sarif

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
CAPTURES = ROOT / "corpus" / "captures"


def validate(doc: dict[str, Any]) -> None:
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    errors = sorted(jsonschema.Draft4Validator(SCHEMA).iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    rc = main(argv)
    return rc, json.loads(capsys.readouterr().out)


def test_the_validator_rejects_a_broken_log() -> None:
    """The schema is strict enough to catch what a careless writer gets wrong."""
    with pytest.raises(AssertionError):
        validate({"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": [{"level": "fatal"}]}]})


def test_scan_of_the_corpus_is_valid_sarif_with_rules_levels_locations_flows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rc, log = _run(["scan", str(CAPTURES), "--format", "sarif", "--fail-on", "never"], capsys)
    assert rc == 0
    validate(log)
    _, doc = _run(["scan", str(CAPTURES), "--format", "json", "--fail-on", "never"], capsys)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [c.id for c in CHECKS]
    for r, c in zip(rules, CHECKS, strict=True):
        assert f"external/cwe/cwe-{c.cwe}" in r["properties"]["tags"] and c.doc.fix in r["help"]["text"]
    results = run["results"]
    assert len(results) == len(doc["findings"]) > 0
    for res, f in zip(results, doc["findings"], strict=True):
        assert res["partialFingerprints"]["irscanFindingId/v1"] == f["id"]
        assert res["level"] == {"must": "error", "may": "warning"}[f["severity"]]
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"] == f["check"]
        loc = res["locations"][0]["physicalLocation"]
        if f["source_precision"] == "statement":
            assert loc["artifactLocation"]["uri"] == f["file"] and loc["region"]["startLine"] == f["line"]
        ir_lines = [s["ir_line"] for s in f["chain"] if s["ir_line"] > 0]
        related = [x["physicalLocation"]["region"]["startLine"] for x in res["relatedLocations"]]
        flow = res["codeFlows"][0]["threadFlows"][0]["locations"]
        assert related == ir_lines == [x["location"]["physicalLocation"]["region"]["startLine"] for x in flow]
        assert any(x["importance"] == "essential" for x in flow) == any(s["wraps"] for s in f["chain"])


def test_diff_sarif_is_valid_and_carries_new_findings_and_narrowed_accesses(capsys: pytest.CaptureFixture[str]) -> None:
    _, new = _run(["scan", str(CAPTURES / "flat_offset_trunc_3208"), "--format", "json", "--fail-on", "never"], capsys)
    base = copy.deepcopy(new)
    base["findings"] = []
    for a in base["accesses"]:
        a["index_width"], a["narrow"] = 64, []
    d = diff(base, new)
    assert d.new and d.narrowed
    log = json.loads(sarif.render_diff(d))
    validate(log)
    ids = [r["ruleId"] for r in log["runs"][0]["results"]]
    assert ids.count(sarif.NARROWED) == len(d.narrowed) and len(ids) == len(d.new) + len(d.narrowed)


def test_audit_sarif_is_valid_and_stdout_holds_only_the_log(run_python: Any) -> None:
    proc = run_python("-m", "irscan", "audit", "--format", "sarif", "--", sys.executable,
                      ROOT / "corpus" / "programs" / "example_stacked_weights.py", cwd=ROOT)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    log = json.loads(proc.stdout)
    validate(log)
    (res,) = log["runs"][0]["results"]
    assert res["level"] == "error" and res["ruleId"] == "narrow-widened-late"
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True
