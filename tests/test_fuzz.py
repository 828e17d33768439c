"""The error contract under hostile input: a bounded, deterministic slice of the fuzzer (tests/fuzzing).

For any input, ``irscan scan`` exits 0/1 with a result, or 2 with ``path:line:col: error: ...``; never
a traceback, never exit 3 (an internal error), never a hang.  Each family of cases (mutated IR text,
hostile meta.json, corrupt .xz, files that are not IR) gets its own test, so a failure names the part
of irscan to look at; the named hostile inputs below are the classes the long run found, kept as
fixed regression cases.  The long run: ``python -m tests.fuzzing --cases 20000 --seed 1`` (README).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzzing.bounded import SEEDS, family_test
from fuzzing.bounded import check as _check
from fuzzing.case import Case, generate
from fuzzing.harness import judge

test_contract_holds_for_mutated_ir = family_test(generate, "ir", 200)
test_contract_holds_for_hostile_meta = family_test(generate, "meta", 60)
test_contract_holds_for_corrupt_xz = family_test(generate, "xz", 25)
test_contract_holds_for_non_ir = family_test(generate, "whole", 25)


def _seed(ir: str) -> str:
    """The elementwise_static_100k capture: small, and its index chain feeds a global load."""
    return next(s.text for s in SEEDS if s.name.startswith("captures/elementwise_static_100k/") and s.ir == ir)


def _sub(text: str, old: str, new: str) -> bytes:
    """``text`` with the first ``old`` replaced; the seed must contain it, or the case would test nothing."""
    assert old in text, f"the seed no longer contains {old!r}: update the hostile input"
    return text.replace(old, new, 1).encode()


def _hostile() -> dict[str, tuple[str, bytes]]:
    """Named inputs, one per class of bad input the issue and the long run found."""
    ptx, mlir = _seed("ptx"), _seed("mlir")
    mad, add = "mad.lo.s32 \t%r4, %r3, 160, %r1;", "%6 = llvm.add %5, %2 : i32"
    mlir_chain = [add.replace("%6", "%fz0")] + [f"      %fz{k} = llvm.add %fz{k - 1}, %5 : i32" for k in range(1, 300)]
    mlir_chain.append("      %6 = llvm.add %fz299, %2 : i32")
    ptx_ir, mlir_ir = "module.ptx", "module.mlir"
    return {
        "ptx-300-op-chain": (ptx_ir, _sub(ptx, mad, mad + "\n" + "\tadd.s32 \t%r4, %r4, 1;\n" * 300)),
        "mlir-300-op-chain": (mlir_ir, _sub(mlir, add, "\n".join(mlir_chain))),
        "mlir-1000-braces": (mlir_ir, _sub(mlir, "\n", "\n" + "{" * 1000 + "}" * 1000 + "\n")),
        "mlir-1000-deep-llvm-array": (
            mlir_ir,
            _sub(mlir, ": i32", ": " + "!llvm.array<2 x " * 1000 + "i32" + ">" * 1000),
        ),
        "mlir-1000-deep-struct": (mlir_ir, _sub(mlir, ": i32", ": " + "!llvm.struct<(" * 1000 + "i32" + ")>" * 1000)),
        "ptx-330-parens-operand": (ptx_ir, _sub(ptx, "%r3, 160", "(" * 330 + "%r3" + ")" * 330 + ", 160")),
        "ptx-long-digit-run": (ptx_ir, _sub(ptx, "%r4,", "%r" + "0" * 65000 + "4x,")),
        "ptx-long-spaces-in-brackets": (ptx_ir, _sub(ptx, "[%rd4]", "[%rd4" + " " * 65000 + "x]")),
        "mlir-5000-digit-int": (mlir_ir, _sub(mlir, "array<i64: 160,", "array<i64: 1" + "0" * 5000 + ",")),
        "ptx-5000-digit-int": (ptx_ir, _sub(ptx, " 160,", " 1" + "0" * 5000 + ",")),
        "mlir-invalid-utf8": (mlir_ir, mlir.encode()[:500] + b"\xff\xfe" + mlir.encode()[500:]),
        "ptx-invalid-utf8": (ptx_ir, b"\xc3\x28" + ptx.encode()),
        "corrupt-xz": ("module.mlir.xz", b"\xfd7zXZ\x00\x00garbage"),
        "empty-mlir": (mlir_ir, b""),
        "empty-ptx": (ptx_ir, b""),
        "non-ir-text": (mlir_ir, b"hello, this is not IR\n"),
        "python-as-ptx": (ptx_ir, b"def f(x):\n    return x + 1\n"),
        "ptx-undefined-register": (ptx_ir, _sub(ptx, "%r3, 160", "%r99999, 160")),
        "mlir-nul-in-location-file": (mlir_ir, mlir.replace('.py":', '.py\x00":').encode()),
        "mlir-undefined-value": (mlir_ir, _sub(mlir, add, "%6 = llvm.add %5, %undefined : i32")),
    }


HOSTILE = _hostile()


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_contract_holds_for_known_hostile_input(name: str, tmp_path: Path) -> None:
    filename, data = HOSTILE[name]
    _check(Case({filename: data}, filename, [name], filename), tmp_path)


_META = {
    "list": b"[]",
    "string": b'"x"',
    "null": b"null",
    "null-grid": b'{"kernels": [{"name": "k", "launch": {"exact_grid_dim": null}}]}',
    "infinite-grid": b'{"kernels": [{"name": "k", "launch": {"exact_grid_dim": [Infinity, 1, 1]}}]}',
    "negative-grid": b'{"kernels": [{"name": "k", "launch": {"exact_grid_dim": [-5, 1, 1]}}]}',
    "huge-grid": b'{"kernels": [{"name": "k", "launch": {"exact_grid_dim": [1' + b"0" * 40 + b", 1, 1]}}]}",
    "string-modes": b'{"kernels": [{"name": "k", "args": [{"index": 0, "modes": "abc"}]}]}',
    "invalid-utf8": b"\xff\xfe{}",
    "deep-json": b"[" * 100000 + b"]" * 100000,
}


@pytest.mark.parametrize("name", sorted(_META))
@pytest.mark.parametrize("ir", ["mlir", "ptx"])
def test_contract_holds_for_hostile_meta_json(name: str, ir: str, tmp_path: Path) -> None:
    text = _seed(ir)
    case = Case({f"module.{ir}": text.encode(), "meta.json": _META[name]}, "", [name], "meta.json", "meta.json")
    _check(case, tmp_path)


def test_capture_folder_without_meta_json_is_scanned_or_rejected_with_a_location(tmp_path: Path) -> None:
    _check(Case({"module.ptx": _seed("ptx").encode()}, "", ["no meta.json"]), tmp_path)


def test_a_fifo_named_like_ir_is_refused_not_read(tmp_path: Path) -> None:
    _check(Case({}, "module.mlir", ["FIFO"], fifos=("module.mlir",)), tmp_path)


def test_the_judge_catches_a_broken_contract(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fuzz tests can fail: an exception escaping the scan, an unlocated exit 2, and a hang each
    break the contract in the judge's eyes."""
    import irscan.pipeline as pipeline

    case = Case({"module.ptx": _seed("ptx").encode()}, "module.ptx", ["intact"])
    target = case.materialize(tmp_path)
    assert judge(case, target).ok

    def boom(*_a: object, **_k: object) -> None:
        raise KeyError("internal")

    monkeypatch.setattr(pipeline, "scan_paths", boom)
    assert (judge(case, target).failure or "").startswith(("escaped:KeyError", "internal:KeyError"))

    def usage(*_a: object, **_k: object) -> None:
        raise FileNotFoundError("no such thing")

    monkeypatch.setattr(pipeline, "scan_paths", usage)
    assert (judge(case, target).failure or "").split(":")[0] in ("exit2-unlocated", "escaped", "internal", "exit3")

    def hang(*_a: object, **_k: object) -> None:
        while True:
            pass

    monkeypatch.setattr(pipeline, "scan_paths", hang)
    assert (judge(case, target, timeout=0.5).failure or "").startswith("timeout")
