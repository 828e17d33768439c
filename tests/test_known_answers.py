"""Every corpus program's known answer (corpus/manifest.json, worked out by hand) is exactly what irscan
finds, in both IRs.

Each expected entry must be matched by exactly one finding and each finding by exactly one entry: an
extra finding, a duplicate on an accepted line, or a missing one fails, and so does a right line with
the wrong severity, input, threshold or signedness.  Clean programs have no finding in either IR.

MLIR: an entry is (kernel, check, severity, line or one of ``lines_ok``, input, threshold, signedness,
the program's source file).  PTX: an entry with a ``ptx`` part expects a PTX finding of that threshold
and signedness (same kernel, check, severity and lines) when the launch can reach the threshold;
beyond the launch, or with no ``ptx`` part (the ``why`` says NVVM computed the value exactly), it
expects no PTX finding.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from irscan.findings import Finding
from irscan.pipeline import scan_paths

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())
PROGRAMS = sorted(MANIFEST["programs"])

Entry = dict[str, Any]


def _scan(name: str, ir: str) -> list[Finding]:
    res = scan_paths([CORPUS / "captures" / name], (ir,))
    assert res.kernels, f"{name}: nothing scanned"
    assert not res.errors, f"{name}: {res.errors}"
    return res.findings


def _kernel_metas(name: str) -> list[dict[str, Any]]:
    return [
        k for p in sorted((CORPUS / "captures" / name).rglob("meta.json")) for k in json.loads(p.read_text())["kernels"]
    ]


def _reachable(e: Entry, kernels: list[dict[str, Any]]) -> bool:
    """Can the launch reach the PTX threshold?  Only a launch-fixed grid bounds ``ctaid``."""
    sreg, _, axis = e["input"].partition(".")
    if sreg != "ctaid" or axis not in ("x", "y", "z"):
        return True
    for k in kernels:
        grid = k.get("launch", {}).get("exact_grid_dim")
        if e["kernel"] in k["name"] and grid:
            return bool(e["ptx"]["threshold"] <= grid["xyz".index(axis)] - 1)
    return True


def _mlir_fits(prog: dict[str, Any]) -> Callable[[Finding, Entry], bool]:
    source = prog["source"].split("/")[-1]

    def fits(f: Finding, e: Entry) -> bool:
        w = f.wraps_when or {}
        return (
            _where_fits(f, e)
            and (w.get("input"), w.get("threshold"), w.get("signedness"))
            == (e["input"], e["threshold"], e["signedness"])
            and bool(f.file and f.file.endswith(source))
        )

    return fits


def _where_fits(f: Finding, e: Entry) -> bool:
    lines = {e["line"], *e.get("lines_ok", [])}
    return e["kernel"] in f.kernel and f.check == e["check"] and f.severity == e["severity"] and f.line in lines


def _ptx_fits(f: Finding, e: Entry) -> bool:
    w = f.wraps_when or {}
    return _where_fits(f, e) and (w.get("threshold"), w.get("signedness")) == (
        e["ptx"]["threshold"],
        e["ptx"]["signedness"],
    )


def _match(findings: list[Finding], expected: list[Entry], fits: Callable[[Finding, Entry], bool]) -> dict[int, int]:
    """A largest one-to-one matching of expected entries to findings (entry index -> finding index):
    augmenting paths, so an entry whose lines_ok overlap another's never steals the other's finding."""
    owner: dict[int, int] = {}  # finding -> entry

    def augment(ei: int, seen: set[int]) -> bool:
        for fi, f in enumerate(findings):
            if fi in seen or not fits(f, expected[ei]):
                continue
            seen.add(fi)
            if fi not in owner or augment(owner[fi], seen):
                owner[fi] = ei
                return True
        return False

    for ei in range(len(expected)):
        augment(ei, set())
    return {ei: fi for fi, ei in owner.items()}


def _describe(fs: list[Finding]) -> str:
    return (
        "\n".join(
            f"  {f.severity} {f.check} {f.kernel[:40]} line {f.line}: {f.expression} "
            f"[{(f.wraps_when or {}).get('input')} >= {(f.wraps_when or {}).get('threshold')}, "
            f"{(f.wraps_when or {}).get('signedness')}]"
            for f in fs
        )
        or "  (none)"
    )


def _assert_exactly(
    name: str, ir: str, findings: list[Finding], expected: list[Entry], fits: Callable[[Finding, Entry], bool]
) -> None:
    matched = _match(findings, expected, fits)
    missing = [e for i, e in enumerate(expected) if i not in matched]
    extra = [f for i, f in enumerate(findings) if i not in matched.values()]
    assert not missing and not extra, (
        f"{name} ({ir}): the findings are not the manifest's\n"
        + "".join(
            f"missing: {e['severity']} {e['check']} {e['kernel']} line {e['line']} {e.get('lines_ok', [])} "
            f"({e.get('input')} >= {e.get('ptx', e).get('threshold')})\n"
            for e in missing
        )
        + f"unexpected or duplicate:\n{_describe(extra)}\nall {ir} findings:\n{_describe(findings)}"
    )


@pytest.mark.parametrize("name", PROGRAMS)
def test_mlir_findings_are_exactly_the_manifest(name: str) -> None:
    prog = MANIFEST["programs"][name]
    assert prog["clean"] == (not prog["expect"])
    _assert_exactly(name, "mlir", _scan(name, "mlir"), prog["expect"], _mlir_fits(prog))


@pytest.mark.parametrize("name", PROGRAMS)
def test_ptx_findings_are_exactly_the_manifest(name: str) -> None:
    prog = MANIFEST["programs"][name]
    kernels = _kernel_metas(name)
    expected = [e for e in prog["expect"] if "ptx" in e and _reachable(e, kernels)]
    _assert_exactly(name, "ptx", _scan(name, "ptx"), expected, _ptx_fits)


def test_the_matching_counts_every_finding() -> None:
    """The comparison itself can fail: a duplicate on an accepted line is left over, an entry whose
    lines_ok cover another's line does not take that one's finding, a wrong severity does not match."""
    real = _scan("elementwise_static_100k", "mlir")[0]
    e1 = {"kernel": "copy_kernel", "check": real.check, "severity": real.severity, "line": 10, "lines_ok": [11]}
    e2 = {**e1, "line": 11, "lines_ok": []}

    def at(line: int, severity: str = real.severity) -> Finding:
        return dataclasses.replace(real, line=line, severity=severity)

    assert _match([at(11), at(10)], [e1, e2], _where_fits) == {0: 1, 1: 0}
    assert len(_match([at(10), at(10)], [e1], _where_fits)) == 1
    assert _match([at(10, "must" if real.severity == "may" else "may")], [e1], _where_fits) == {}
    with pytest.raises(AssertionError, match="unexpected or duplicate"):
        _assert_exactly("x", "mlir", [at(10), at(10)], [e1], _where_fits)
    with pytest.raises(AssertionError, match="missing"):
        _assert_exactly("x", "mlir", [], [e1], _where_fits)
