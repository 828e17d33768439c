"""Patch mode's rules (patches/*.json) and their before/after examples, checked FileCheck-style.

Each example under patches/examples/ is the IR before the rewrite with ``// CHECK`` lines about the
IR after it: the example is scanned, every finding rewritten by the rule the loader picks (MLIR through
the DSL's bindings, PTX as text), and the output must match the checks (the ``filecheck`` package).
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from irscan.patching import rules
from irscan.patching.core import patch_module, scan_text

EXAMPLES = sorted({e for r in rules.load() for e in r.examples})
filecheck = shutil.which("filecheck") or str(Path(sys.executable).with_name("filecheck"))


def _rewrite_mlir(text: str) -> tuple[str, dict]:
    from cutlass._mlir import ir

    from irscan.patching.parse import parse_module

    with ir.Context(), ir.Location.unknown():
        module = parse_module(text)
        printed = module.operation.get_asm(enable_debug_info=True)  # the names the rewriter looks up
        rep, new = patch_module(module, printed, "example.mlir", None)
        module.operation.verify()
    return new, rep.to_json()


def _rewrite_ptx(text: str) -> tuple[str, dict]:
    from irscan.patching.ptx import rewrite

    found = [f for f in scan_text(text, "example.ptx", None) if f.ir == "ptx"]
    new, patches, refused = rewrite(text, found, rules.rule_for)
    return new, {"patches": patches, "not_patched": refused}


def test_rules_load_and_name_their_shapes():
    loaded = rules.load()
    assert {r.id for r in loaded} >= {"mlir-widen-chain", "mlir-trunc-extend", "ptx-widen-chain"}
    assert rules.rule_for("mlir", "narrow-widened-late").id == "mlir-widen-chain"
    assert rules.rule_for("mlir", "trunc-then-extend").id == "mlir-trunc-extend"
    assert rules.rule_for("ptx", "narrow-widened-late").id == "ptx-widen-chain"
    assert rules.rule_for("mlir", "no-such-check") is None
    for r in loaded:
        assert r.examples and all(e.exists() for e in r.examples), r.id


def test_a_broken_rule_file_is_named(tmp_path):
    (tmp_path / "bad.json").write_text('{"id": "x", "ir": "mlir"}')
    with pytest.raises(rules.RuleError, match="missing checks"):
        rules.load.__wrapped__(tmp_path)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_rewrites_as_its_checks_say(example, tmp_path):
    text = example.read_text()
    before = [f for f in scan_text(text, str(example), None) if f.ir in ("mlir", "ptx")]
    assert before, "an example must have a finding to fix"
    new, rep = (_rewrite_ptx if example.suffix == ".ptx" else _rewrite_mlir)(text)
    assert rep["patches"] and not rep["not_patched"], rep
    after = scan_text(new, str(example), None)
    assert not after, [f.message for f in after]
    checks = tmp_path / "checks"
    checks.write_text("\n".join(ln.lstrip("/ ") for ln in text.splitlines() if ln.lstrip("/ ").startswith("CHECK")))
    out = tmp_path / "after"
    out.write_text("\n".join(ln for ln in new.splitlines() if not ln.lstrip().startswith("//")))
    proc = subprocess.run([filecheck, str(checks), "--input-file", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr + "\n--- rewritten:\n" + new
