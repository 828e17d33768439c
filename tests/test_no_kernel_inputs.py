"""Inputs with no kernel to scan get a clear error, never a clean "0 kernel scan(s)" (README, "Errors"):
a module written on one line (irscan reads MLIR as the DSL prints it, one op per line: a function on
the module's own line would otherwise be skipped as one opaque op), and IR with no kernel in it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

KERNEL = "llvm.func @k(%a: i32) attributes {nvvm.kernel} {\n    llvm.return\n  }"
CASES = {
    "one-line module.mlir": ("module { " + KERNEL.replace("\n", " ") + " }\n", ":1:10:"),
    "no kernel.mlir": ("module {\n  llvm.func @f(%a: i32) -> i32 {\n    llvm.return %a : i32\n  }\n}\n", ":1:1:"),
    "unknown op only.mlir": ("module {\n  garbage here\n}\n", ":1:1:"),
    "header only.ptx": (".version 8.5\n.target sm_90a\n.address_size 64\n", ":1:1:"),
}


def _scan(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "irscan", "scan", str(path)], capture_output=True, text=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_input_with_no_kernel_scanned_is_an_error_with_a_location(name: str, tmp_path: Path) -> None:
    text, where = CASES[name]
    p = tmp_path / name.replace(" ", "_")
    p.write_text(text)
    r = _scan(p)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith(f"{p}{where}") and "error: " in r.stderr and "Traceback" not in r.stderr, r.stderr
    if name.startswith("one-line"):  # at the function, saying what irscan reads
        assert "a module written on one line" in r.stderr and "one op per line" in r.stderr, r.stderr


def test_the_same_kernel_printed_one_op_per_line_is_scanned(tmp_path: Path) -> None:
    p = tmp_path / "k.mlir"
    p.write_text("module {\n  " + KERNEL + "\n}\n")
    r = _scan(p)
    assert r.returncode == 0 and "in 1 kernel scan(s)" in r.stdout, (r.stdout, r.stderr)
