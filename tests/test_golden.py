"""The corpus's scan output is pinned (tests/golden/): a refactor leaves it unchanged, an intended change
in behaviour is regenerated with ``python tests/golden/snapshot.py --write`` and reviewed as a diff."""

from __future__ import annotations

import json

import pytest
from golden.snapshot import SETS, path, snapshot


@pytest.mark.parametrize("name", sorted(SETS))
def test_scan_output_matches_the_golden_snapshot(name: str) -> None:
    want = json.loads(path(name).read_text())
    got = json.loads(json.dumps(snapshot(SETS[name])))
    assert got["exit"] == want["exit"]
    assert got["errors"] == want["errors"]
    assert got["summary"] == want["summary"]
    missing = [r for r in want["findings"] if r not in got["findings"]]
    extra = [r for r in got["findings"] if r not in want["findings"]]
    assert not missing and not extra, {"missing": missing[:5], "extra": extra[:5]}
