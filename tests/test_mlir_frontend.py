"""The fast MLIR path (irscan.frontend.mlir.indexer) against the whole-grammar path.

On every corpus capture, the tiny capture and the syntax module of test_mlir_grammar:
``parse_module(text)`` (line indexer + grammar for the ops that matter) and ``parse_module(text,
full=True)`` (every byte through the grammar) give equal :class:`irscan.ir.Module` objects: every
function, parameter, block, successor and op field, the module's opaque-op counts and structure.
The fast path never falls back to the full parse on this corpus, and finds truncation itself.

Bad input, generated: nesting thousands deep (regions, aggregate types, locations, attributes, soup)
parses on both paths without recursion, and literals no value can hold are located syntax errors.
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


# ------------------------------------------------------------------------------ the error contract

#: deeper than Python's default recursion limit (1000): a recursive walk anywhere would fail
DEEP = 3000
HUGE = "9" * 5000  # past Python's 4,300-digit limit on int(str)


def _kernel(body: str, attrs: str = "{nvvm.kernel}") -> str:
    head = "module {\n  llvm.func @k(%arg0: !llvm.ptr<1>) attributes " + attrs + " {\n"
    return head + body + "    llvm.return\n  }\n}\n"


def _both(text: str) -> list[ir.Module]:
    """The module on both paths (the fast one may defer to the grammar; either way no exception)."""
    return [mlir.parse_module(text, "deep.mlir"), mlir.parse_module(text, "deep.mlir", full=True)]


def test_deep_regions_parse() -> None:
    nest = '"test.op"() ({\n' * DEEP + "}) : () -> ()\n" * DEEP
    for text, in_function in ((_kernel(nest), 1), ("module {\n" + nest + "}\n", 0)):
        for m in _both(text):
            # an op of a function body is the function's; the ones in its regions are outlined
            outlined = sum(1 for row in m.attrs["structure"] if row[1] == "test.op")
            assert outlined == DEEP - in_function
            assert [op.name for f in m.functions for op in f.ops()][:in_function] == ["test.op"] * in_function


def test_deep_aggregate_types_parse_with_their_sizes() -> None:
    arr = "!llvm.array<1 x " + "array<1 x " * (DEEP - 1) + "i32" + ">" * DEEP
    st = "!llvm.struct<(" + "struct<(i64, " * (DEEP - 1) + "i32" + ")>" * (DEEP - 1) + ")>"
    text = _kernel(
        f"    %0 = llvm.load %arg0 : !llvm.ptr<1> -> {arr}\n"
        f"    %1 = llvm.getelementptr %arg0[%0] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {st}\n"
        f"    %2 = llvm.mlir.undef : {st}\n"
        f"    %3 = llvm.extractvalue %2[0] : {st}\n"
    )
    for m in _both(text):
        load, gep, _, extract = m.functions[0].blocks[0].ops[:4]
        assert load.attrs["size"] == 4 and load.attrs["result_types"] == (arr,)
        # each level below the outer one: an i64 and the next struct at offset 8; the innermost is 16 bytes
        assert gep.attrs["elem_size"] == 8 * DEEP
        assert extract.attrs["result_types"] == ("!llvm." + "struct<(i64, " * (DEEP - 1) + "i32" + ")>" * (DEEP - 1),)


def test_deep_locations_and_attributes_parse() -> None:
    callsite = "loc(" + "callsite(" * DEEP + '"a.py":1:2' + ' at "b.py":3:4)' * DEEP + ")"
    named = "#loc1 = loc(" + '"n"(' * DEEP + '"c.py":5:6' + ")" * DEEP + ")\n"
    attrs = "{nvvm.kernel, a = " + "{b = " * DEEP + "1" + "}" * DEEP + ", c = " + "[" * DEEP + "]" * DEEP + "}"
    body = (
        f"    %0 = llvm.mlir.constant(1 : i32) : i32 {callsite}\n"
        "    %1 = llvm.mlir.constant(2 : i32) : i32 loc(#loc1)\n"
    )
    for m in _both(_kernel(body, attrs) + named):
        fn = m.functions[0]
        a, b = fn.blocks[0].ops[:2]
        assert a.loc == ir.Loc("a.py", 1, 2) and b.loc == ir.Loc("c.py", 5, 6, "n")
        inner = fn.attrs["attributes"]["a"]
        for _ in range(DEEP - 1):
            inner = inner["b"]
        assert inner == {"b": 1}


def test_deep_soup_keeps_its_operands() -> None:
    text = _kernel("    test.op " + "(" * DEEP + "%arg0, [%arg0]" + ")" * DEEP + "\n")
    for m in _both(text):
        assert m.functions[0].blocks[0].ops[0].operands == ("%arg0", "%arg0")


@pytest.mark.parametrize(
    "line, at",
    [
        (f"    %0 = llvm.mlir.constant({HUGE} : i32) : i32", HUGE),
        (f"    %0 = llvm.mlir.constant(1 : i{HUGE}) : i{HUGE}", "i" + HUGE),
        ("    %0 = llvm.mlir.constant(1 : i99999999) : i99999999", "i99999999"),  # wider than MLIR allows
        (f"    %0 = llvm.getelementptr %arg0[{HUGE}] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i32", HUGE),
        (f"    %0 = llvm.load %arg0 : !llvm.ptr<1> -> !llvm.array<{HUGE} x i32>", HUGE),
        (f"    %0 = llvm.load %arg0 : !llvm.ptr<1> -> vector<{HUGE}xi32>", HUGE),
        (f"    llvm.store %arg0, %arg0 {{alignment = {HUGE} : i64}} : !llvm.ptr<1>, !llvm.ptr<1>", HUGE),
        (
            f"    %0 = llvm.mlir.undef : i32\n    %1 = llvm.extractvalue %0[{HUGE}] : !llvm.struct<(i32)>",
            HUGE,
        ),
        (f"    %0 = nvvm.read.ptx.sreg.tid.x range <i32, 0, {HUGE}> : i32", HUGE),
        (f'    %0 = "test.op"() : () -> i32 loc("a.py":{HUGE}:1)', "loc("),
        (f'    %0:{HUGE} = "test.op"() : () -> i32', HUGE),
        ('    %0:99999999 = "test.op"() : () -> i32', "99999999"),  # more results than the line is long
    ],
    ids=["const", "width", "wide", "gep", "array", "vector", "attr", "path", "sreg", "loc", "results", "group"],
)
def test_literals_no_value_can_hold_are_located(line: str, at: str) -> None:
    text = _kernel(line + "\n")
    lines = text.split("\n")
    row = next(i for i, x in enumerate(lines) if at in x)
    for full in (False, True):
        with pytest.raises(ir.IRSyntaxError) as ei:
            mlir.parse_module(text, "big.mlir", full=full)
        e = ei.value
        assert (e.path, e.line, e.col) == ("big.mlir", row + 1, lines[row].index(at) + 1), (full, str(e))


_PARSE_TWICE = """
import sys
from irscan.frontend import mlir
m = mlir.parse_module(open(sys.argv[1]).read(), "m.mlir")
print("lark" in sys.modules, [(op.name, op.kind, op.width, op.attrs) for f in m.functions for op in f.ops()])
"""


def test_known_templates_need_no_grammar_in_a_fresh_process(run_python, tmp_path, syntax_file) -> None:  # noqa: F811
    """The specs a scan made are kept (spec_store): a second process reads them and never imports lark,
    with the same ops; a corrupt store costs the grammar, not the result."""
    env = {"IRSCAN_CACHE_DIR": str(tmp_path / "cache")}
    first = run_python("-c", _PARSE_TWICE, syntax_file, env=env)
    second = run_python("-c", _PARSE_TWICE, syntax_file, env=env)
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert first.stdout.startswith("True") and second.stdout.startswith("False")
    assert first.stdout[4:] == second.stdout[5:]
    (store,) = (tmp_path / "cache").glob("mlir-specs-*")
    store.write_bytes(b"garbage")
    third = run_python("-c", _PARSE_TWICE, syntax_file, env=env)
    assert third.returncode == 0 and third.stdout.startswith("True") and third.stdout[4:] == first.stdout[4:]
