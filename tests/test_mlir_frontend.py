"""The fast MLIR path (irscan.frontend.mlir.indexer) against the whole-grammar path.

On every corpus capture, the tiny capture and the syntax module of test_mlir_grammar:
``parse_module(text)`` (line indexer + grammar for the ops that matter) and ``parse_module(text,
full=True)`` (every byte through the grammar) give equal :class:`irscan.ir.Module` objects: every
function, parameter, block, successor and op field, the module's opaque-op counts and structure.
The fast path never falls back to the full parse on this corpus, and finds truncation itself.

The timing table (fast cold and warm, full) is ``bench/bench_mlir_parse.py``.
"""

from __future__ import annotations

import time
from dataclasses import fields
from pathlib import Path

import pytest
from test_mlir_grammar import BIG, CORPUS, REPO, read, rel, syntax_file, tiny  # noqa: F401 (fixtures)

from irscan import ir
from irscan.frontend import mlir
from irscan.frontend.mlir import assemble as mlir_assemble

_FULL: dict[str, tuple[ir.Module, float]] = {}


def full_parse(path: Path) -> tuple[ir.Module, float]:
    """The full-grammar parse of ``path`` and its seconds (memoised: it is the slow one)."""
    key = str(path)
    if key not in _FULL:
        text = read(path)
        t0 = time.perf_counter()
        m = mlir.parse_module(text, key, full=True)
        _FULL[key] = (m, time.perf_counter() - t0)
    return _FULL[key]


def diff_modules(a: ir.Module, b: ir.Module) -> list[str]:
    """Human-readable differences between two parses of one file (empty: equal)."""
    out: list[str] = []
    if a.opaque != b.opaque:
        out.append(f"opaque {a.opaque} != {b.opaque}")
    for key in ("structure", "loc_granularity"):
        if a.attrs.get(key) != b.attrs.get(key):
            out.append(f"module attrs[{key!r}] differ")
    if len(a.functions) != len(b.functions):
        return out + [f"{len(a.functions)} functions != {len(b.functions)}"]
    for fa, fb in zip(a.functions, b.functions, strict=False):
        for f in ("name", "kernel", "params", "attrs", "line", "loc"):
            if getattr(fa, f) != getattr(fb, f):
                out.append(f"{fa.name}: {f} {getattr(fa, f)!r} != {getattr(fb, f)!r}")
        if len(fa.blocks) != len(fb.blocks):
            out.append(f"{fa.name}: {len(fa.blocks)} blocks != {len(fb.blocks)}")
            continue
        for ba, bb in zip(fa.blocks, fb.blocks, strict=False):
            for f in ("label", "args", "arg_widths", "succs", "falls_through"):
                if getattr(ba, f) != getattr(bb, f):
                    out.append(f"{fa.name} {ba.label}: {f} {getattr(ba, f)!r} != {getattr(bb, f)!r}")
            if len(ba.ops) != len(bb.ops):
                out.append(f"{fa.name} {ba.label}: {len(ba.ops)} ops != {len(bb.ops)}")
                continue
            for oa, ob in zip(ba.ops, bb.ops, strict=False):
                for f in fields(ir.Op):
                    x, y = getattr(oa, f.name), getattr(ob, f.name)
                    if x != y:
                        out.append(f"line {oa.line} {f.name}: {x!r} != {y!r}   ({oa.text[:120]})")
    return out


def check_same(path: Path) -> ir.Module:
    fast = mlir.parse_module(read(path), str(path))
    full, _ = full_parse(path)
    assert fast.attrs["path"] == "fast", "the fast path fell back to the full parse"
    assert full.attrs["path"] == "full"
    diffs = diff_modules(fast, full)
    assert not diffs, f"{len(diffs)} differences, first ones:\n" + "\n".join(diffs[:20])
    return fast


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, id=rel(p), marks=[pytest.mark.slow] if p.stat().st_size > BIG else []) for p in CORPUS],
)
def test_fast_equals_full_corpus(path: Path) -> None:
    check_same(path)


def test_fast_equals_full_fixtures(tiny, syntax_file) -> None:  # noqa: F811 (pytest fixtures)
    check_same(tiny[0])
    check_same(syntax_file)


def test_fast_path_finds_truncation_itself(monkeypatch, syntax_file) -> None:  # noqa: F811
    """Unbalanced regions at the end: an IRSyntaxError from the indexer, without the grammar's help."""

    def no_full(text: str, path: str) -> ir.Module:
        raise AssertionError("the fast path deferred to the full parse")

    monkeypatch.setattr(mlir_assemble, "_parse_full", no_full)
    lines = syntax_file.read_text().split("\n")
    for cut in (12, 30, len(lines) - 8):
        with pytest.raises(ir.IRSyntaxError) as ei:
            mlir.parse_module("\n".join(lines[:cut]), "cut.mlir")
        assert "end of input" in ei.value.message and ei.value.expected == ["}"]
