"""Every corpus program's known answer (corpus/manifest.json, worked out by hand) is what irscan finds.

MLIR: each expected bug is found at its severity, Python line and exact threshold, and nothing else
is reported; clean programs give zero findings.  PTX: where the manifest states what today's PTX
does, the PTX finding has that threshold and signedness, present exactly when the launch can reach it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from irscan.findings import Finding
from irscan.pipeline import scan_paths

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())
PROGRAMS = sorted(MANIFEST["programs"])


def _scan(name: str, ir: str) -> tuple[list[Finding], list[dict[str, Any]]]:
    res = scan_paths([CORPUS / "captures" / name], (ir,))
    assert res.kernels, f"{name}: nothing scanned"
    return res.findings, res.kernels


def _matches(f: Finding, e: dict[str, Any]) -> bool:
    lines = {e["line"], *e.get("lines_ok", [])}
    return e["kernel"] in f.kernel and f.check == e["check"] and f.line in lines


def _describe(fs: list[Finding]) -> str:
    return "\n".join(
        f"  {f.severity} {f.check} line {f.line}: {f.expression} [{(f.wraps_when or {}).get('text')}]" for f in fs
    )


@pytest.mark.parametrize("name", PROGRAMS)
def test_mlir_verdicts_match_the_manifest(name: str) -> None:
    prog = MANIFEST["programs"][name]
    findings, _ = _scan(name, "mlir")
    if prog["clean"]:
        assert findings == [], f"{name} is clean but irscan reports:\n{_describe(findings)}"
        return
    for e in prog["expect"]:
        hits = [f for f in findings if _matches(f, e)]
        assert hits, f"{name}: expected {e['severity']} at line {e['line']} ({e['input']}), got:\n{_describe(findings)}"
        f = hits[0]
        assert f.severity == e["severity"], _describe(hits)
        assert f.wraps_when is not None
        assert f.wraps_when["input"] == e["input"], _describe(hits)
        assert f.wraps_when["threshold"] == e["threshold"], _describe(hits)
        assert f.wraps_when["signedness"] == e["signedness"]
        assert f.file and f.file.endswith(prog["source"].split("/")[-1])
    unexpected = [f for f in findings if not any(_matches(f, e) for e in prog["expect"])]
    assert not unexpected, f"{name}: findings the manifest does not expect:\n{_describe(unexpected)}"


def _reachable(e: dict[str, Any], kernels_meta: dict[str, Any], threshold: int) -> bool:
    """Can the launch reach the PTX threshold?  Only launch-fixed special registers are bounded."""
    sreg, _, axis = e["input"].partition(".")
    if sreg != "ctaid" or axis not in "xyz":
        return True
    for k in kernels_meta.values():
        grid = k.get("launch", {}).get("exact_grid_dim")
        if e["kernel"] in k["name"] and grid:
            return threshold <= grid["xyz".index(axis)] - 1
    return True


PTX_CASES = [(n, i) for n in PROGRAMS for i, e in enumerate(MANIFEST["programs"][n]["expect"]) if e.get("ptx")]


@pytest.mark.parametrize(("name", "index"), PTX_CASES)
def test_ptx_verdicts_match_the_manifest(name: str, index: int) -> None:
    e = MANIFEST["programs"][name]["expect"][index]
    findings, _ = _scan(name, "ptx")
    metas = {}
    for meta_path in (CORPUS / "captures" / name).rglob("meta.json"):
        for k in json.loads(meta_path.read_text())["kernels"]:
            metas[k["name"]] = k
    # NVVM rematerialises and re-locates index arithmetic (a row offset shared by a load and a store
    # in MLIR is computed twice in PTX, both carrying the load's line): accept any line the manifest
    # gives for this kernel
    lines = {x for e2 in MANIFEST["programs"][name]["expect"] if e2["kernel"] == e["kernel"]
             for x in (e2["line"], *e2.get("lines_ok", []))}  # fmt: skip
    hits = [f for f in findings if e["kernel"] in f.kernel and f.check == e["check"] and f.line in lines]
    if not _reachable(e, metas, e["ptx"]["threshold"]):
        assert not hits, f"{name}: PTX cannot wrap within the launch, yet:\n{_describe(hits)}"
        return
    assert hits, f"{name}: expected a PTX finding at line {e['line']}, got:\n{_describe(findings)}"
    assert hits[0].wraps_when["threshold"] == e["ptx"]["threshold"], _describe(hits)
    assert hits[0].wraps_when["signedness"] == e["ptx"]["signedness"]


@pytest.mark.parametrize("name", [n for n in PROGRAMS if MANIFEST["programs"][n]["clean"]])
def test_clean_programs_are_clean_in_ptx_too(name: str) -> None:
    findings, _ = _scan(name, "ptx")
    assert findings == [], _describe(findings)
