"""The hand triage of irscan's findings on real third-party kernels (corpus/thirdparty/triage.json).

Every access line irscan reports on the checked-in captures (quack, FlashAttention-4, flashinfer, cuDNN frontend,
torch, torchao) has a triage entry: a real i32 limit a user reaches (``true``, with the smallest such input), a false
alarm (``false``, with its cause as numbered in issue #8) or ``unclear``.  So:

- a new finding fails here until someone triages it (add an entry; the reason says why);
- a ``true`` entry that is no longer reported fails: a real limit was lost;
- a ``false`` entry that is no longer reported is fine: that is precision work succeeding.

Lines are keyed by kernel, IR, check, the source file's name and line: not by finding ids, which
follow their own rule.  The kernel of an entry is the Python name the DSL keeps verbatim at the start
of its symbol name (``kernel_quackrmsnormRMSNorm``, ``gdn_decode_kernel_small_batch_pretranspose``):
a finding belongs to the entry whose kernel name its symbol contains, the longest one when several do.

``pytest -s`` prints the precision (true lines / reported lines), per package and overall.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path, PurePath
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
THIRDPARTY = REPO / "corpus" / "thirdparty"
TRIAGE = json.loads((THIRDPARTY / "triage.json").read_text())
ENTRIES: list[dict[str, Any]] = TRIAGE["entries"]

Key = tuple[str, str, str, str, int]  # kernel, ir, check, file name, line


def entry_key(e: dict[str, Any]) -> Key:
    return (e["kernel"], e["ir"], e["check"], PurePath(e["file"] or "?").name, e["line"])


BY_KEY = {entry_key(e): e for e in ENTRIES}
#: the holdout sets: kernels captured and triaged before any tuning for them (holdout_workers.py, then
#: holdout2_workers.py once irscan had been tuned on the first, then holdout3_workers.py, holdout4_workers.py:
#: nvidia-cudnn-frontend's kernels, then holdout5_workers.py: torch's and torchao's CuTe DSL ops)
HOLDOUTS = {
    label: set(re.findall(r"^def (\w+)\(arch", (THIRDPARTY / name).read_text(), re.M))
    for label, name in (
        ("holdout", "holdout_workers.py"),
        ("holdout-2", "holdout2_workers.py"),
        ("holdout-3", "holdout3_workers.py"),
        ("holdout-4", "holdout4_workers.py"),
        ("holdout-5", "holdout5_workers.py"),
        ("holdout-6", "holdout6_workers.py"),
        ("holdout-7", "holdout7_workers.py"),
        ("holdout-8", "holdout8_workers.py"),
        ("holdout-9", "holdout9_workers.py"),
        ("holdout-10", "holdout10_workers.py"),
        ("holdout-11", "holdout11_workers.py"),
        ("holdout-12", "holdout12_workers.py"),
        ("holdout-13", "holdout13_workers.py"),
        ("holdout-14", "holdout14_workers.py"),
        ("holdout-15", "holdout15_workers.py"),
        ("holdout-16", "holdout16_workers.py"),
    )
}


def subset(e: dict[str, Any]) -> str:
    """``holdout`` / ``holdout-2`` / ... / ``holdout-5`` when every capture of the entry comes from that set's
    workers file, else ``tuned on``."""
    workers = {re.sub(r"_sm\d+a?$", "", c) for c in e["captures"]}
    return next((label for label, names in HOLDOUTS.items() if workers <= names), "tuned on")


@pytest.fixture(scope="module")
def reported() -> dict[Key, list[dict[str, Any]]]:
    """The findings of ``irscan scan --format json corpus/thirdparty``, grouped by triage key."""
    p = subprocess.run(
        [sys.executable, "-m", "irscan", "scan", "--format", "json", str(THIRDPARTY)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert p.returncode in (0, 1), p.stderr[-2000:]
    doc = json.loads(p.stdout)
    assert not doc["errors"], doc["errors"][:3]
    kernels = sorted({e["kernel"] for e in ENTRIES}, key=len, reverse=True)
    out: dict[Key, list[dict[str, Any]]] = defaultdict(list)
    for f in doc["findings"]:
        kernel = next((k for k in kernels if k in f["kernel"]), f["kernel"])
        out[(kernel, f["ir"], f["check"], PurePath(f["file"] or "?").name, f["line"])].append(f)
    return out


def test_entries_are_well_formed() -> None:
    assert len(BY_KEY) == len(ENTRIES), "two triage entries share a key"
    for e in ENTRIES:
        assert e["verdict"] in ("true", "false", "unclear"), e
        assert e["package"] in TRIAGE["packages"], e
        assert e["findings"] >= 1 and e["reason"].strip(), e
        if e["verdict"] == "false":  # the cause, numbered as in issue #8, comes first
            assert re.match(r"[1-6] ", e["reason"]), e
        if e["verdict"] == "true":  # the smallest input that reaches it
            assert re.search(r"\d", e["reason"]), e
    for m in TRIAGE["missed"]:
        assert m["file"] and m["what"] and m["reachable_from"] and m["why_missed"], m


def test_every_reported_line_is_triaged(reported: dict[Key, list[dict[str, Any]]]) -> None:
    untriaged = [
        f"{k}: {fs[0]['message'][:160]} ({len(fs)} finding(s))" for k, fs in reported.items() if k not in BY_KEY
    ]
    assert not untriaged, "triage these in corpus/thirdparty/triage.json:\n" + "\n".join(untriaged)


def test_no_true_limit_is_lost(reported: dict[Key, list[dict[str, Any]]]) -> None:
    lost = [e for e in ENTRIES if e["verdict"] == "true" and entry_key(e) not in reported]
    assert not lost, lost


def test_precision(reported: dict[Key, list[dict[str, Any]]]) -> None:
    """Precision = true lines / reported lines; printed, not asserted (issue #8 sets the target)."""
    lines: Counter[tuple[str, str]] = Counter()
    findings: Counter[str] = Counter()
    for k, fs in reported.items():
        e = BY_KEY.get(k)
        if e is None:
            continue  # test_every_reported_line_is_triaged reports it
        # a kernel limit the package's host code keeps inputs away from ("kernel limit; ..."): true by
        # the set's convention, counted apart so the strict figure (those as false) prints beside it
        verdict = "guarded" if e["verdict"] == "true" and e["reason"].startswith("kernel limit") else e["verdict"]
        for group in (e["package"], f"[{subset(e)}]"):
            lines[(group, verdict)] += 1
            findings[group] += len(fs)
    print("\nthirdparty triage: package (and [set]), findings, lines, true/false/unclear, precision"
          " (strict: host-guarded kernel limits counted as false)")  # fmt: skip
    packages = sorted(p for p in {p for p, _ in lines} if not p.startswith("["))
    for pkg in [*packages, "all", *sorted(p for p in {p for p, _ in lines} if p.startswith("["))]:
        t, g, fa, u = (sum(n for (p, v), n in lines.items() if v == want and _in(p, pkg)) for want in
                       ("true", "guarded", "false", "unclear"))  # fmt: skip
        total = t + g + fa + u
        nf = sum(n for p, n in findings.items() if _in(p, pkg))
        prec = f"{(t + g) / total:.0%} (strict {t / total:.0%})" if total else "-"
        print(f"  {pkg:20} {nf:4} findings {total:3} lines  {t + g}/{fa}/{u}  precision {prec}")
    assert sum(lines.values()) == 2 * len([k for k in reported if k in BY_KEY])


def _in(group: str, row: str) -> bool:
    """Whether counts kept under ``group`` belong to the printed ``row`` ("all": every package)."""
    return group == row or (row == "all" and not group.startswith("["))
