"""The checks own their logic: each claims its candidates, writes its message's opening and its fix;
explain is generic; the registry, the docs and ``irscan rules`` agree with the corpus."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from irbuild import FnBuilder

from irscan import checks
from irscan.analysis import dataflow
from irscan.analysis.intervals import Affine, Interval
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.checks import narrow_widened_late, trunc_then_extend
from irscan.checks.base import CWE_NAMES, Candidate, Check, Doc, Evidence, Widening
from irscan.ir import Kind
from irscan.pipeline import scan_paths

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = json.loads((ROOT / "corpus" / "manifest.json").read_text())["programs"]
TENSOR = "!llvm.struct<(ptr<1>, struct<(struct<()>, struct<()>)>)>"
NWL, TTE = narrow_widened_late.CHECK, trunc_then_extend.CHECK


def _candidate(*, narrowing: bool = False, must: bool = False, scaled: bool = False) -> Candidate:
    w = Widening(node=0, slot=0, signed=True, how="sext")
    return Candidate(w, Affine.of_const(0), Interval(0, 0), [1], [], None, narrowing, must, scaled)


@pytest.mark.parametrize(
    ("kw", "claimed_by"),
    [
        ({"must": True}, "narrow-widened-late"),
        ({"scaled": True}, "narrow-widened-late"),
        ({}, None),  # an unscaled sum of free inputs: the reporting rule leaves it out
        ({"narrowing": True}, "trunc-then-extend"),
        ({"narrowing": True, "must": True, "scaled": True}, "trunc-then-extend"),
    ],
)
def test_each_candidate_is_claimed_by_at_most_one_check(kw: dict[str, bool], claimed_by: str | None) -> None:
    c = _candidate(**kw)
    claims = [ch.id for ch in checks.CHECKS if ch.claims(None, c)]  # type: ignore[arg-type]
    assert claims == ([claimed_by] if claimed_by else [])


def test_each_check_writes_its_own_message_opening_and_fix() -> None:
    ev = Evidence("8192*ctaid.x", "%5 = llvm.trunc %4 : i64 to i32", signed=False, wrap_input="ctaid.x")
    assert NWL.headline(ev) == "8192*ctaid.x is computed in 32 bits"
    assert TTE.headline(ev) == (
        "64-bit value 8192*ctaid.x is narrowed to 32 bits (%5 = llvm.trunc %4 : i64 to i32) and zero-extended back"
    )
    assert "cast ctaid.x (or the coordinate it scales) with cutlass.Int64" in NWL.fix(ev)
    assert "cast the coordinate" in NWL.fix(Evidence("x", "y", signed=True, wrap_input=None))
    assert TTE.fix(ev).startswith("keep the value in 64 bits")


def _static_rowmajor() -> tuple[dataflow.Graph, Ranges]:
    b = FnBuilder(exact_block_dim=(128, 1, 1), exact_grid_dim=(100000, 1, 1))
    a = b.param("%arg0", TENSOR)
    s = b.const(100000)
    tid = b.op(Kind.SREG, attrs={"sreg": "tid.x", "range": (0, 1023)})
    bid = b.op(Kind.SREG, attrs={"sreg": "ctaid.x", "range": (0, 2**31 - 1)})
    i = b.op(Kind.ADD, b.op(Kind.MUL, bid, s), tid)
    base = b.op(Kind.EXTRACT, a, width=0, attrs={"path": (0,)})
    p = b.op(Kind.GEP, base, i, width=0, space="global", attrs={"indices": [("dyn", 1, 32)], "elem_size": 4})
    b.op(Kind.LOAD, p, width=0, addr=0, space="global")
    gr = dataflow.build(b.module, b.fn, reaching_definitions)
    return gr, Ranges(gr, Facts.of(b.fn.attrs))


def test_explain_is_generic_a_new_check_needs_no_change_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """A check the rest of irscan has never heard of gets its id, severity, message opening and fix
    into the finding, with the same evidence as any other."""
    probe = Check(
        id="probe",
        title="probe",
        cwe=190,
        doc=Doc("w", "y", "e", "f"),
        claims=lambda gr, c: True,
        headline=lambda ev: f"PROBE {ev.expression} via {ev.wrap_input}",
        fix=lambda ev: f"FIX {ev.signed}",
        severity=lambda c: "may",
    )
    monkeypatch.setattr("irscan.checks.runner.CHECKS", (probe,))
    gr, rg = _static_rowmajor()
    (f,) = checks.run(gr, rg, checks.Context("k", "test.mlir"))
    assert (f.check, f.severity, f.fix) == ("probe", "may", "FIX True")
    assert f.message == (
        "PROBE 100000*ctaid.x + tid.x via ctaid.x; at this launch it reaches 9,999,900,127 (> 2^31 - 1), "
        "wrapping when ctaid.x >= 21475, and feeds the address of a global load"
    )
    monkeypatch.setattr("irscan.checks.runner.CHECKS", checks.CHECKS)
    (g,) = checks.run(gr, rg, checks.Context("k", "test.mlir"))
    assert g.check == "narrow-widened-late" and g.severity == "must"
    assert g.message == f.message.replace("PROBE 100000*ctaid.x + tid.x via ctaid.x", "100000*ctaid.x + tid.x is "
                                          "computed in 32 bits")  # fmt: skip


def test_registry_ids_cwes_and_docs() -> None:
    ids = [c.id for c in checks.CHECKS]
    assert ids == ["narrow-widened-late", "trunc-then-extend"]
    assert checks.get("trunc-then-extend") is TTE
    with pytest.raises(KeyError, match="narrow-widened-late"):
        checks.get("no-such-check")
    assert (NWL.cwe, TTE.cwe) == (190, 197) and all(c.cwe in CWE_NAMES for c in checks.CHECKS)
    for c in checks.CHECKS:
        d = c.doc
        assert all(len(part) > 40 for part in (d.what, d.why, d.example, d.fix)), c.id
        assert "@cute.kernel" in d.example and "@cute.kernel" in d.fix and d.example != d.fix


@pytest.mark.parametrize("check", checks.CHECKS, ids=lambda c: c.id)
def test_each_checks_examples_are_corpus_programs_where_it_fires(check: Check) -> None:
    """The doc's example is real: its corpus programs expect the check (manifest) and the scan of their
    captures reports it and no other."""
    assert check.examples
    for name in check.examples:
        assert {e["check"] for e in MANIFEST[name]["expect"]} == {check.id}, name
        found = scan_paths([ROOT / "corpus" / "captures" / name]).findings
        assert found and {f.check for f in found} == {check.id}, name
    named = {e["check"] for p in MANIFEST.values() for e in p["expect"]}
    assert named <= {c.id for c in checks.CHECKS}


def _irscan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "irscan", *args], capture_output=True, text=True, cwd=ROOT)


def test_cli_rules_prints_every_doc_in_ruffs_four_parts() -> None:
    p = _irscan("rules")
    assert p.returncode == 0, p.stderr
    for c in checks.CHECKS:
        assert f"{c.id}: {c.title}" in p.stdout and f"CWE-{c.cwe}" in p.stdout
    for heading in ("What it finds", "Why is this a bug", "Example", "Fix"):
        assert p.stdout.count(f"\n{heading}\n") == len(checks.CHECKS), heading
    one = _irscan("rules", "trunc-then-extend")
    assert one.returncode == 0 and "trunc-then-extend:" in one.stdout and "narrow-widened-late:" not in one.stdout


def test_cli_rules_json_and_unknown_id() -> None:
    doc = json.loads(_irscan("rules", "--format", "json").stdout)
    assert [r["id"] for r in doc["rules"]] == [c.id for c in checks.CHECKS]
    assert doc["rules"][1]["cwe"] == "CWE-197" and set(doc["rules"][0]["doc"]) == {"what", "why", "example", "fix"}
    bad = _irscan("rules", "no-such-check")
    assert bad.returncode == 2 and "no check 'no-such-check'" in bad.stderr and not bad.stdout
