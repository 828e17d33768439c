"""The reporting rule (README, "What is reported"): (a) against the analysis's bounds, (c) memory
feasibility, facts on every finding, nothing dropped silently; one finding per access statement, IR and
check; thresholds that name an input or say why none does; twins paired by the access."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from irbuild import FnBuilder
from irbuild import finding as _finding

from irscan import checks
from irscan.analysis import dataflow
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.checks import memory
from irscan.checks.reporting import finish
from irscan.checks.threshold import named
from irscan.checks.twins import pair_twins
from irscan.findings import Finding, access_key, fold
from irscan.ir import Kind
from irscan.pipeline import scan_paths

ROOT = Path(__file__).resolve().parents[1]
TENSOR = "!llvm.struct<(ptr<1>, struct<(struct<()>, struct<()>)>)>"
#: a bf16 tensor (?, 4096):(4096, 1) as meta.json records it
ROWS = {"dtype": "bf16", "layout": "(?{i64},4096):(4096,1)", "modes": [
    {"shape": {"kind": "dynamic", "width": 64}, "stride": {"kind": "static", "value": 4096}},
    {"shape": {"kind": "static", "value": 4096}, "stride": {"kind": "static", "value": 1}},
]}  # fmt: skip


@dataclass(frozen=True)
class StubBound:
    """What ``Ranges.bounds`` returns (checks/reporting.py ``Bound``), built by hand."""

    terms: tuple[tuple[str, int], ...]
    const: int
    fact: str
    i32: bool = True
    tensor: int | None = None
    modes: tuple[int, ...] = ()
    most: int | None = None
    tops: tuple[tuple[str, int], ...] = ()


def _row_kernel(row_stride: int = 4096) -> tuple[dataflow.Graph, Ranges]:
    """``y[64*ctaid.x + tid.x, :]``: an i32 row, sign-extended, times a 64-bit row stride, bf16."""
    b = FnBuilder(exact_block_dim=(64, 1, 1))
    a = b.param("%arg0", TENSOR)
    tid = b.op(Kind.SREG, attrs={"sreg": "tid.x", "range": (0, 1023)})
    bid = b.op(Kind.SREG, attrs={"sreg": "ctaid.x", "range": (0, 2**31 - 1)})
    row = b.op(Kind.ADD, b.op(Kind.MUL, bid, b.const(64)), tid, flags=frozenset({"nsw"}))
    wide = b.op(Kind.SEXT, row, width=64, src_width=32)
    off = b.op(Kind.MUL, wide, b.const(row_stride, width=64), width=64)
    base = b.op(Kind.EXTRACT, a, width=0, attrs={"path": (0,)})
    p = b.op(Kind.GEP, base, off, width=0, space="global", attrs={"indices": [("dyn", 1, 64)], "elem_size": 2})
    b.op(Kind.LOAD, p, width=0, addr=0, space="global")
    gr = dataflow.build(b.module, b.fn, reaching_definitions)
    return gr, Ranges(gr, Facts.of(b.fn.attrs), [ROWS])


def _run(gr: dataflow.Graph, rg: Ranges) -> Finding:
    (f,) = checks.run(gr, rg, checks.Context("k", "test.mlir"))
    return f


def test_rule_c_a_row_index_that_wraps_needs_more_memory_than_any_gpu() -> None:
    gr, rg = _row_kernel()
    f = _run(gr, rg)
    assert f.memory is not None and f.memory["tensor"] == "arg0"
    assert f.memory["bytes"] == 2**31 * 4096 * 2  # the row at 2^31 times 8 KiB rows
    reported, suppressed = finish([f])
    assert not reported and suppressed == [f]
    assert f.rule_suppressed is not None
    assert f.rule_suppressed.startswith("(c) unreachable within GPU memory: needs arg0 >= 17.6 TB at ctaid.x >= ")


def test_rule_c_a_tensor_that_fits_is_reported_and_says_so() -> None:
    gr, rg = _row_kernel(row_stride=1)  # the row is an element index: 2^31 bf16 = 4.3 GB
    f = _run(gr, rg)
    (kept,), none = finish([f])
    assert kept is f and not none and f.rule_suppressed is None
    assert any(x.startswith("(c) at ctaid.x >= ") and "arg0 needs 4.3 GB: fits in" in x for x in f.facts)
    assert any(x.startswith("ctaid.x in [0, ") and "left open by the IR" in x for x in f.facts)
    _, small = finish([_run(*_row_kernel(row_stride=1))], max_memory=10**9)  # a 1 GB GPU
    assert small and "(> 1.0 GB)" in str(small[0].rule_suppressed)


def test_rule_c_an_extent_at_its_threshold_sizes_its_tensor() -> None:
    _, rg = _row_kernel()
    need = memory.extent_need(rg, "arg0.shape[0]", 2**24)
    assert need is not None and (need.tensor, need.bytes) == ("arg0", 2**24 * 4096 * 2)
    assert memory.extent_need(rg, "ctaid.x", 2**24) is None  # not an extent
    rg.meta_args[0] = {**ROWS, "modes": [ROWS["modes"][0], {**ROWS["modes"][1], "stride": {"kind": "static",
                                                                                          "value": 0}}]}  # fmt: skip
    broadcast = memory.extent_need(rg, "arg0.shape[0]", 2**24)
    assert broadcast is not None and broadcast.bytes == 2**24 * 2  # a stride-0 mode holds no memory


I32 = {"kind": "dynamic", "width": 32, "text": "?"}
I64 = {"kind": "dynamic", "width": 64, "text": "?{i64}"}


@pytest.mark.parametrize(
    ("modes", "held_back"),
    [
        ([{"shape": I32, "stride": {"kind": "static", "value": 1}}, {"shape": I32, "stride": I64}], True),
        ([{"shape": I64, "stride": {"kind": "static", "value": 1}}, {"shape": I32, "stride": I64}], False),  # i64
        ([{"shape": I32, "stride": {"kind": "static", "value": 1}},
          {"shape": I32, "stride": {"kind": "static", "value": 4096}}], False),  # could be a flattened offset
        # a 32-bit dynamic stride of a multiple of 2: 64*ctaid.x may be that mode's offset (SDSA words[2*i + 1])
        ([{"shape": I32, "stride": {"kind": "static", "value": 1}},
          {"shape": I32, "stride": {"kind": "dynamic", "width": 32, "text": "?{div=2}"}}], False),
        # ... of a multiple of 128: no term of the value is one (SDSA's out[slot] of a row slice)
        ([{"shape": I32, "stride": {"kind": "static", "value": 1}},
          {"shape": I32, "stride": {"kind": "dynamic", "width": 32, "text": "?{div=128}"}}], True),
    ],
)  # fmt: skip
def test_rule_a_a_coordinate_of_an_i32_mode_stays_below_its_extent(modes: list[Any], held_back: bool) -> None:
    """``lse[64*ctaid.x + tid.x]`` along a stride-1 mode whose extent is an i32: in bounds, below 2^31."""
    gr, rg = _row_kernel(row_stride=1)
    rg.meta_args[0] = {"dtype": "f16", "layout": "?", "modes": modes}
    f = _run(gr, rg)
    assert bool(f.rule_suppressed) == held_back
    if held_back:  # the coordinate read off the access (irscan/analysis/coords.py, or reporting's own)
        assert f.rule_suppressed is not None and f.rule_suppressed.startswith("(a) ")
        assert "mode 0 of arg0 (stride 1" in f.rule_suppressed


@pytest.mark.parametrize(
    ("bound", "suppressed"),
    [
        (StubBound((("arg2", 1),), 63, "grid from host: nctaid.x = ceil(arg2 / 64)"), "(a) a coordinate bounded"),
        (StubBound((("arg2", 1),), 63, "not i32", i32=False), None),
        (StubBound((("arg2", 64),), 63, "grid from host"), None),  # 64*arg2 reaches 2^31 at arg2 = 2^25
        (StubBound((("arg2", 1),), 1 << 20, "more than a tile"), None),
        # a host-computed ceil(F / 128) of a 32-bit F is at most 2^24: 128*arg2 - 1 never reaches 2^31
        (StubBound((("arg2", 128),), -1, "in bounds", i32=False, most=2**31 - 1), "(a) it never wraps"),
        (StubBound((("arg2", 128),), -1, "in bounds", i32=False, most=2**31), None),
        # N + C - 1 with C also grid y (at most 65,535): N must be within 65,533 of 2^31 - 1
        (
            StubBound(
                (("arg2", 1), ("arg3", 1)), -1, "grid", most=2**31 + 65532, tops=(("arg2", 2**31 - 1), ("arg3", 65535))
            ),
            "(a) a coordinate bounded",
        ),
        # the same excess over a capped extent alone (grid y at 65,535 is a launch anyone makes): reported
        (StubBound((("arg3", 32769),), 0, "grid", most=32769 * 65535, tops=(("arg3", 65535),)), None),
    ],
)
def test_rule_a_reads_the_analysis_bounds(bound: StubBound, suppressed: str | None, monkeypatch: Any) -> None:
    gr, rg = _row_kernel(row_stride=1)
    monkeypatch.setattr(rg, "bounds", lambda value, at=None: [bound], raising=False)
    f = _run(gr, rg)
    assert (f.rule_suppressed or "").startswith(suppressed or "") and bool(f.rule_suppressed) == bool(suppressed)
    if suppressed is None:
        assert any(x.startswith("value <= ") and bound.fact in x for x in f.facts)
    if bound.most is not None and suppressed == "(a) it never wraps":
        assert "at most 2,147,483,647 with every extent at its largest" in (f.rule_suppressed or "")
    if bound.tops and suppressed:
        assert "so it wraps only when arg2 >= 2,147,418,115" in (f.rule_suppressed or "")
    if bound.terms[0][1] == 64:
        assert any("it wraps only when arg2 >= 33,554,432" in x for x in f.facts)


def test_without_bounds_the_facts_say_rules_a_and_b_are_undecided(monkeypatch: Any) -> None:
    gr, rg = _row_kernel(row_stride=1)
    monkeypatch.setattr(rg, "bounds", None, raising=False)
    f = _run(gr, rg)
    assert f.rule_suppressed is None and any(x.startswith("(a)/(b) undecided") for x in f.facts)


# -- the corpus: one finding per access, thresholds that mean something, nothing dropped silently --


@pytest.fixture(scope="module")
def corpus() -> tuple[list[Finding], list[Finding]]:
    res = scan_paths([ROOT / "corpus" / "captures", ROOT / "corpus" / "thirdparty"])
    return res.findings, res.rule_suppressed


THRESHOLD = re.compile(r"^(?P<input>.+) >= (?P<at>[1-9]\d*)$")


def test_every_threshold_names_an_input_with_a_positive_value_or_says_why(
    corpus: tuple[list[Finding], list[Finding]],
) -> None:
    for f in corpus[0] + corpus[1]:
        w = f.wraps_when
        assert w is not None, f.id
        m = THRESHOLD.match(w["text"])
        if m:
            assert named(m["input"]) and "%" not in m["input"], w["text"]
            assert (w["input"], w["threshold"]) == (m["input"], int(m["at"])), w
        else:
            assert w["text"].startswith("no single-input threshold: ") and w["input"] is None, w["text"]
            need = w.get("necessary")  # a named input the wrap needs, from a bound (reporting.decide)
            if need is not None:
                assert named(need["input"]) and "%" not in need["input"] and need["at_least"] > 0, need
                assert f"a wrap needs {need['text']}" in f.message, f.message


def test_a_finding_no_single_input_decides_names_an_input_the_wrap_needs(
    corpus: tuple[list[Finding], list[Finding]],
) -> None:
    """flashinfer b12x MXFP8 rows: the payload store's offset is made of a loop counter's quotient and
    remainder (no single input), and in bounds of its (?,1792) tensor it wraps only from 1,198,373 rows."""
    store = [f for f in corpus[0] if f.file and f.file.endswith("mxfp8_rows.py") and f.line == 240 and f.ir == "mlir"]
    assert store and store[0].wraps_when is not None and store[0].wraps_when["input"] is None
    assert store[0].wraps_when["necessary"]["text"] == "arg1.shape[0] >= 1,198,373"


def test_one_finding_per_access_statement_ir_and_check(corpus: tuple[list[Finding], list[Finding]]) -> None:
    everything = corpus[0] + corpus[1]
    assert max(Counter(access_key(f) for f in everything).values()) == 1
    assert max(Counter(f.id for f in everything).values()) == 1
    unrolled = [f for f in everything if f.file and f.file.endswith("gdn_decode_nontranspose.py") and f.line == 292]
    assert unrolled and all(f.occurrences >= 16 and len(f.modules) == 2 for f in unrolled)


def test_no_finding_names_a_decorator_or_def_line(corpus: tuple[list[Finding], list[Finding]]) -> None:
    for f in corpus[0] + corpus[1]:
        assert not (f.source or "").startswith(("@", "def ")), (f.id, f.file, f.line, f.source)
        origin = (f.origin or {}).get("source") or ""
        assert not origin.startswith(("@", "def ")), (f.id, f.origin)
    # decided without the source too: the third-party captures name files of the machine that captured
    # them, absent here, and a kernel body's statements are indented (a location at column 0 is a def)
    for f in corpus[0] + corpus[1]:
        if f.source_precision == "statement":
            assert f.col != 0, (f.id, f.file, f.line)


def test_a_statement_line_does_not_depend_on_the_source_being_installed() -> None:
    """The capture's meta names the @cute.jit launcher's def line; a location there is not the access's
    statement whether or not the package's source is on this machine (fi_rmsnorm_sigmoid_gate: the PTX
    sign-extension carries the launcher's line 257, the address add the statement at line 68)."""
    cap = ROOT / "corpus" / "thirdparty" / "fi_rmsnorm_sigmoid_gate_sm100a"
    ptx = [f for f in scan_paths([cap]).findings if f.ir == "ptx"]
    assert ptx and {(f.line, f.col) for f in ptx} == {(68, 16)}


def _irscan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "irscan", *args], capture_output=True, text=True, cwd=ROOT)


def test_suppressed_findings_are_listed_with_their_reason_and_shown_with_all() -> None:
    tp = str(ROOT / "corpus" / "thirdparty")
    every = json.loads(_irscan("scan", "--format", "json", tp).stdout)
    tight = json.loads(_irscan("scan", "--format", "json", "--max-memory", "1GB", tp).stdout)
    assert tight["rule_suppressed"] and tight["summary"]["rule_suppressed"] == len(tight["rule_suppressed"])
    assert all(re.match(r"\([abc]\) ", f["rule_suppressed"]) for f in tight["rule_suppressed"])
    assert len(tight["rule_suppressed"]) > len(every["rule_suppressed"])  # (c) holds more back on a small GPU
    assert {f["id"] for f in tight["findings"] + tight["rule_suppressed"]} == {
        f["id"] for f in every["findings"] + every["rule_suppressed"]
    }  # nothing dropped: what the rule holds back is listed
    assert all(f["facts"] for f in every["findings"])
    text = _irscan("scan", "--max-memory", "1GB", tp).stdout
    assert "suppressed by the reporting rule (--all shows them" in text and "suppressed[may]" not in text
    shown = _irscan("scan", "--all", "--max-memory", "1GB", tp).stdout
    assert "suppressed[may]" in shown and "  suppressed: (c) unreachable within GPU memory: needs arg" in shown
    assert _irscan("scan", "--max-memory", "lots", tp).returncode == 2


# -- folding and twins, on findings made by hand --


def test_fold_keeps_one_finding_per_access_with_counts_and_modules() -> None:
    a = _finding(expression="8*ctaid.x + tid.x")
    b = _finding(expression="8*ctaid.x + tid.x + 128", sinks=[{"kind": "store"}])  # an unrolled copy
    c = _finding(ir_file="other/module.mlir", kernel="kernel_cutlass_copy_kernel_tensorptrf32gmemalign16o2000_3")
    d = _finding(line=32)
    out = fold([a, b, c, d])
    assert out == [a, d]
    assert a.occurrences == 3 and a.modules == ["cap/module.mlir", "other/module.mlir"]
    assert a.sinks == [{"kind": "load"}, {"kind": "store"}]


def test_a_held_back_twin_does_not_speak_for_a_ptx_line_reported_in_another_module() -> None:
    """Module A's PTX has only another widening point of the access (held back), which its MLIR finding
    pairs with; module B's PTX has the wrapping one, reported.  The PTX line stays reported, twinned."""
    m_a = _finding(id="ma", twin="pa", ir_file="a/module.mlir")
    p_a = _finding(id="pa", twin="ma", ir="ptx", ir_file="a/module.ptx", rule_suppressed="(a) held back")
    m_b = _finding(id="mb", twin="pb", ir_file="b/module.mlir")
    p_b = _finding(id="pb", twin="mb", ir="ptx", ir_file="b/module.ptx")
    out = fold([m_a, p_a, m_b, p_b])
    assert [(f.ir, f.id, f.twin) for f in out] == [("mlir", "mb", "pb"), ("ptx", "pb", "mb")]
    assert not out[1].rule_suppressed


def test_a_twin_held_back_by_memory_does_not_hide_the_access_s_other_reported_ptx_finding() -> None:
    """One module, one access, two PTX widening points: the MLIR finding's twin (a token offset) is held
    back by rule (c), the other (a head offset) is reported; the PTX line is reported, not dropped."""
    m = _finding(id="m", twin="p1", ir_file="a/module.mlir", rule_suppressed="(c) needs 550 GB")
    p1 = _finding(id="p1", twin="m", ir="ptx", ir_file="a/module.ptx", rule_suppressed="(c) needs 550 GB")
    p2 = _finding(id="p2", ir="ptx", ir_file="a/module.ptx", ir_line=23, expression="128*ctaid.x")
    out = fold([m, p1, p2])
    assert [(f.ir, f.id, bool(f.rule_suppressed)) for f in out] == [("mlir", "m", True), ("ptx", "p2", False)]


def _sink(line: int, kind: str = "load", tensor: str = "arg1") -> dict[str, Any]:
    return {"sinks": [{"statement": ["/home/me/prog/k.py", line], "kind": kind, "tensor": tensor}]}


def test_twins_are_paired_by_the_access_when_line_info_moved_the_shared_multiply() -> None:
    """PTX line info gave the CSE-shared multiply line 40; the access (line 31, a load of arg1) is one."""
    m = _finding(id="m", access=_sink(31))
    p = _finding(id="p", ir="ptx", ir_file="cap/module.ptx", line=40, access=_sink(31))
    other = _finding(id="o", ir="ptx", ir_file="cap/module.ptx", line=31, access=_sink(31, "store", "arg2"))
    pair_twins([m, p, other], {("mlir", m.kernel), ("ptx", m.kernel)})
    assert (m.twin, p.twin) == ("p", "m") and other.twin is None
    assert not any("no finding" in n or "no matching finding" in n for n in m.notes + p.notes)
    (note,) = [n for n in other.notes if "no matching finding" in n]
    assert "NVVM may have narrowed" in note and "(a division, a remainder)" in note  # either, not a verdict


@pytest.mark.parametrize(
    ("mlir_held", "ptx_check", "held"),
    [("(a) it never wraps: value <= 8,191 (guard: count <= 4096 dominates)", "narrow-widened-late", True),
     ("(c) at the wrap arg0 needs 550 GB: more than 309.2 GB", "narrow-widened-late", False),
     ("(a) it never wraps: value <= 8,191", "trunc-then-extend", False),
     (None, "narrow-widened-late", False)],
)  # fmt: skip
def test_a_ptx_twin_is_held_back_by_its_mlir_twins_proof(mlir_held: str | None, ptx_check: str, held: bool) -> None:
    """The MLIR proves the access's index in range (rule (a)): its PTX twin, which lost the proof (a
    guard moved to a rotated loop's latch), is held back with it.  Memory (c), a narrowing NVVM made
    (another check) or a reported MLIR twin do not carry over."""
    m = _finding(id="m", access=_sink(31), rule_suppressed=mlir_held)
    p = _finding(id="p", ir="ptx", ir_file="cap/module.ptx", access=_sink(31), check=ptx_check)
    pair_twins([m, p], {("mlir", m.kernel), ("ptx", m.kernel)})
    assert p.twin == "m"
    assert bool(p.rule_suppressed) == held
    if held:
        assert (
            p.rule_suppressed
            == "(a) as its MLIR twin (the same access): it never wraps: value <= 8,191 (guard: count <= 4096 dominates)"
        )


def test_an_mlir_twin_is_never_held_back_by_its_ptx_twins_proof() -> None:
    """flashinfer's SDSA NVFP4 write (holdout 13): NVVM widened ``i*stride``, so the PTX's 32-bit value is
    only ``i``, which a guard keeps in range; the MLIR's i32 product still wraps (undefined behaviour)."""
    m = _finding(id="m", access=_sink(31), wraps_when={"text": "x", "wraps_at": "2^31"})
    p = _finding(id="p", ir="ptx", ir_file="cap/module.ptx", access=_sink(31),
                 rule_suppressed="(a) it never wraps: value <= 2,147,483,646 (guard: i < n dominates)",
                 wraps_when={"text": "x", "wraps_at": "2^31"})  # fmt: skip
    pair_twins([m, p], {("mlir", m.kernel), ("ptx", m.kernel)})
    assert m.twin == "p" and m.rule_suppressed is None


def test_a_ptx_finding_shared_by_two_statements_is_named_by_both_mlir_findings() -> None:
    """NVVM computed one row offset for two statements' accesses: the second MLIR finding is told which
    PTX finding that is, not that the binary does not wrap."""
    m1 = _finding(id="m1", access=_sink(31))
    m2 = _finding(id="m2", line=32, access=_sink(41, "store", "arg2"))
    both = {"sinks": _sink(31)["sinks"] + _sink(41, "store", "arg2")["sinks"]}
    p = _finding(id="p", ir="ptx", ir_file="cap/module.ptx", line=36, access=both)
    pair_twins([m1, m2, p], {("mlir", m1.kernel), ("ptx", m1.kernel)})
    assert (m1.twin, p.twin, m2.twin) == ("p", "m1", None)
    assert m2.notes == [
        "PTX: the same access's finding is p, which NVVM shares with another statement's access (one index "
        "computation for both)"
    ]
    assert "MLIR: this access is also finding m2 (another statement of the source)" in p.notes


def test_rule_c_a_loop_counter_sizes_the_tensor_whose_extent_bounds_it() -> None:
    from irscan.checks.base import evaluate, widening_points
    from irscan.checks.reporting import decide

    gr, rg = _row_kernel(row_stride=1)
    (c,) = [c for c in (evaluate(gr, rg, w) for w in widening_points(gr)) if c is not None]
    name = "loop counter (< arg0.shape[0])"
    th = {"input": name, "threshold": 2**27, "text": f"{name} >= {2**27}"}
    m = decide(gr, rg, c, th, [])["memory"]
    assert (m["tensor"], m["bytes"]) == ("arg0", (2**27 + 1) * 4096 * 2)  # the counter at t: the extent > t


def test_a_folded_access_keeps_its_id_whichever_member_speaks_for_it() -> None:
    """Two widening points of one statement (an inlined helper's line serving a load and a store): the
    reporting rule decides which speaks (a smaller --max-memory holds one back), never the id."""
    from irscan.findings import assign_ids

    def group(held: str) -> Finding:
        a = _finding(expression="4096*ctaid.x", rule_suppressed="(c) held" if held == "a" else None)
        b = _finding(expression="16*tid.x + %r5", rule_suppressed="(c) held" if held == "b" else None)
        (f,) = fold([a, b])
        assign_ids([f])
        return f

    one, other = group("a"), group("b")
    assert (one.expression, other.expression) == ("16*tid.x + %r5", "4096*ctaid.x")  # the reported one speaks
    assert one.id == other.id
    assert "id_expression" not in one.to_json()


def test_a_bound_whose_constant_alone_passes_the_limit_names_no_extent_threshold() -> None:
    """``value <= arg0.shape[2] + 140,733,193,322,497`` says nothing about arg0.shape[2]: no
    'wraps only when arg0.shape[2] >= -140,731,045,838,849' (flashinfer MSA indexer, a held-back fact)."""
    from irscan.checks.reporting import extent_threshold

    assert extent_threshold(StubBound((("arg0.shape[2]", 1),), 140_733_193_322_497, "f"), 2**31 - 1) is None
    assert extent_threshold(StubBound((("arg0.shape[2]", 128),), -128, "f"), 2**31 - 1) == ("arg0.shape[2]", 16_777_217)
