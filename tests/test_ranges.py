"""Ideal-value ranges and exact affine thresholds on hand-made functions (one rule per test)."""

from __future__ import annotations

import pytest
from irbuild import FnBuilder

from irscan import checks
from irscan.analysis import dataflow
from irscan.analysis.intervals import Interval
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.ir import Kind, Loc, Param, ParamField

TENSOR = "!llvm.struct<(ptr<1>, struct<(struct<()>, struct<()>)>)>"


def _ranges(b: FnBuilder) -> tuple[dataflow.Graph, Ranges]:
    gr = dataflow.build(b.module, b.fn, reaching_definitions)
    return gr, Ranges(gr, Facts.of(b.fn.attrs))


def _static_rowmajor(grid: int | None, stride: int = 100000) -> FnBuilder:
    attrs = {"exact_block_dim": (128, 1, 1)}
    if grid:
        attrs["exact_grid_dim"] = (grid, 1, 1)
    b = FnBuilder(**attrs)
    a = b.param("%arg0", TENSOR)
    s = b.const(stride)
    tid = b.op(Kind.SREG, attrs={"sreg": "tid.x", "range": (0, 1023)})
    bid = b.op(Kind.SREG, attrs={"sreg": "ctaid.x", "range": (0, 2**31 - 1)})
    m = b.op(Kind.MUL, bid, s, flags=frozenset({"nsw"}))
    i = b.op(Kind.ADD, m, tid, flags=frozenset({"nsw"}))
    base = b.op(Kind.EXTRACT, a, width=0, attrs={"path": (0,)})
    p = b.op(Kind.GEP, base, i, width=0, space="global", attrs={"indices": [("dyn", 1, 32)], "elem_size": 4})
    b.op(Kind.LOAD, p, width=0, addr=0, space="global")
    return b


def test_affine_form_and_exact_threshold_for_static_stride() -> None:
    b = _static_rowmajor(grid=100000)
    gr, rg = _ranges(b)
    fs = checks.run(gr, rg, checks.Context("k", "test.mlir"))
    assert len(fs) == 1
    f = fs[0]
    assert f.check == "narrow-widened-late" and f.severity == "must"
    assert f.expression == "100000*ctaid.x + tid.x"
    # 21474*100000 + 127 = 2,147,400,127 fits; 21475*100000 = 2,147,500,000 does not
    assert f.wraps_when["input"] == "ctaid.x" and f.wraps_when["threshold"] == 21475
    assert f.witness["true"] == 21475 * 100000 + 127
    assert f.witness["i32"] == 21475 * 100000 + 127 - 2**32
    assert f.undefined_behaviour


def test_dynamic_grid_is_may_not_must() -> None:
    gr, rg = _ranges(_static_rowmajor(grid=None))
    (f,) = checks.run(gr, rg, checks.Context("k", "test.mlir"))
    assert f.severity == "may" and f.wraps_when["threshold"] == 21475


def test_small_grid_is_proven_safe() -> None:
    gr, rg = _ranges(_static_rowmajor(grid=21474))
    assert checks.run(gr, rg, checks.Context("k", "test.mlir")) == []


def test_unscaled_sum_of_free_inputs_is_not_reported() -> None:
    b = FnBuilder()
    a = b.param("%arg0", "!llvm.struct<(ptr<1>, struct<(i32, struct<()>)>)>")
    n = b.op(Kind.EXTRACT, a, attrs={"path": (1, 0)})
    one = b.const(1)
    i = b.op(Kind.ADD, n, one)
    base = b.op(Kind.EXTRACT, a, width=0, attrs={"path": (0,)})
    p = b.op(Kind.GEP, base, i, width=0, attrs={"indices": [("dyn", 1, 32)]})
    b.op(Kind.STORE, one, p, width=32, addr=1, space="global")
    gr, rg = _ranges(b)
    assert checks.run(gr, rg, checks.Context("k", "test.mlir")) == []


def test_fast_division_high_half_fits_so_trunc_is_safe() -> None:
    b = FnBuilder()
    a = b.param("%arg0", "!llvm.struct<(ptr<1>, struct<(i32, struct<()>)>)>")
    x = b.op(Kind.EXTRACT, a, attrs={"path": (1, 0)})
    xz = b.op(Kind.ZEXT, x, width=64, src_width=32)
    magic = b.const(2863311531, width=64)
    prod = b.op(Kind.MUL, xz, magic, width=64)
    hi = b.op(Kind.LSHR, prod, b.const(32, 64), width=64)
    q = b.op(Kind.TRUNC, hi, width=32, src_width=64)
    base = b.op(Kind.EXTRACT, a, width=0, attrs={"path": (0,)})
    p = b.op(Kind.GEP, base, q, width=0, attrs={"indices": [("dyn", 1, 32)]})
    b.op(Kind.LOAD, p, width=0, addr=0)
    gr, rg = _ranges(b)
    assert rg.interval(rg.value(6 + 1)).hi < 2**31  # the trunc's value
    assert checks.run(gr, rg, checks.Context("k", "test.mlir")) == []


def test_trunc_of_a_wide_product_then_sext_is_reported() -> None:
    # NVIDIA/cutlass#3208: llvm.mul i64 -> trunc -> sext -> gep
    b = FnBuilder()
    a = b.param("%arg0", "!llvm.struct<(ptr<1>, struct<(i32, i64)>)>")
    row = b.op(Kind.EXTRACT, a, attrs={"path": (1, 0)})
    stride = b.op(Kind.EXTRACT, a, width=64, attrs={"path": (1, 1)})
    rw = b.op(Kind.SEXT, row, width=64, src_width=32)
    off = b.op(Kind.MUL, rw, stride, width=64)
    t = b.op(Kind.TRUNC, off, width=32, src_width=64)
    e = b.op(Kind.SEXT, t, width=64, src_width=32)
    base = b.op(Kind.EXTRACT, a, width=0, attrs={"path": (0,)})
    p = b.op(Kind.GEP, base, e, width=0, attrs={"indices": [("dyn", 1, 64)]})
    b.op(Kind.LOAD, p, width=0, addr=0)
    gr, rg = _ranges(b)
    (f,) = checks.run(gr, rg, checks.Context("k", "test.mlir"))
    assert f.check == "trunc-then-extend" and f.severity == "may"
    assert f.wraps_when["input"] == "arg0.shape[0]*arg0.stride[0]" and f.wraps_when["threshold"] == 2**31


def test_loop_induction_variable_is_bounded_by_its_compare() -> None:
    b = FnBuilder(exact_block_dim=(32, 1, 1))
    a = b.param("%arg0", TENSOR)
    zero = b.const(0)
    b.branch(("loop", (zero,)))
    b.block("loop", args=("%i",), widths=(32,))
    c = b.const(4096)
    m = b.op(Kind.MUL, "%i", c, flags=frozenset({"nsw"}))
    base = b.op(Kind.EXTRACT, a, width=0, attrs={"path": (0,)})
    p = b.op(Kind.GEP, base, m, width=0, attrs={"indices": [("dyn", 1, 32)]})
    b.op(Kind.LOAD, p, width=0, addr=0)
    nxt = b.op(Kind.ADD, "%i", b.const(1))
    cmp = b.op(Kind.ICMP, nxt, b.const(64), attrs={"pred": "slt"})
    b.branch(("loop", (nxt,)), ("exit", ()), cond=cmp)
    b.block("exit")
    gr, rg = _ranges(b)
    phi = next(n for n in gr.nodes() if gr.op(n).kind is Kind.PHI)
    assert rg.interval(rg.value(phi)) == Interval(0, 64)
    assert checks.run(gr, rg, checks.Context("k", "test.mlir")) == []


CHAIN = 5000


def _chain(ir: str, steps: int, mul: int) -> tuple[dataflow.Graph, Ranges, int]:
    """``idx = tid.x; idx = idx * mul + 1`` ``steps`` times, then ``idx`` indexes a global load.

    MLIR-like: every step has its own SSA value.  PTX-like: every step rewrites one register, so the
    graph's edges come from the reaching definitions.
    """
    b = FnBuilder(ir=ir, exact_block_dim=(128, 1, 1))
    reg = "%r1" if ir == "ptx" else True
    idx = b.op(Kind.SREG, attrs={"sreg": "tid.x"}, result=reg)
    for _ in range(steps):
        if mul != 1:
            idx = b.op(Kind.MUL, idx, 3 if ir == "ptx" else b.const(mul), result=reg)
        idx = b.op(Kind.ADD, idx, 1 if ir == "ptx" else b.const(1), result=reg)
    last = b._n
    wide = b.op(Kind.SEXT, idx, width=64, src_width=32)
    b.op(Kind.LOAD, wide, width=32, addr=0, space="global")
    gr = dataflow.build(b.module, b.fn, reaching_definitions)
    return gr, Ranges(gr, Facts.of(b.fn.attrs)), last


@pytest.mark.parametrize("ir", ["mlir", "ptx"])
def test_a_5000_op_dependency_chain_evaluates_without_recursion(ir: str) -> None:
    gr, rg, last = _chain(ir, CHAIN, mul=1)
    v = rg.value(last)
    assert rg.name(v) == f"tid.x + {CHAIN}"
    assert rg.interval(v) == Interval(CHAIN, CHAIN + 127)


@pytest.mark.parametrize("ir", ["mlir", "ptx"])
def test_a_300_step_unrolled_index_chain_keeps_its_exact_affine_form(ir: str) -> None:
    # the shape of corpus/programs/long_index_chain.py: idx = idx * 3 + 1, unrolled
    gr, rg, last = _chain(ir, 300, mul=3)
    v = rg.value(last)
    ((_, coef),) = v.terms
    assert (coef, v.const) == (3**300, (3**300 - 1) // 2)
    assert rg.interval(v).hi == 127 * 3**300 + (3**300 - 1) // 2
    (f,) = checks.run(gr, rg, checks.Context("k", f"test.{ir}"))
    assert f.check == "narrow-widened-late" and f.severity == "must"


def test_a_5000_op_loop_body_is_cut_at_its_block_argument() -> None:
    b = FnBuilder()
    b.branch(("loop", (b.const(0),)))
    b.block("loop", args=("%i",), widths=(32,))
    x = "%i"
    for _ in range(CHAIN):
        x = b.op(Kind.XOR, x, b.const(5))
    b.branch(("loop", (x,)), ("exit", ()), cond=b.op(Kind.ICMP, x, b.const(7), attrs={"pred": "eq"}))
    b.block("exit")
    gr, rg = _ranges(b)
    phi = next(n for n in gr.nodes() if gr.op(n).kind is Kind.PHI)
    assert rg.interval(rg.value(phi)) == Interval(0, 2**31 - 1)  # loop-carried, unbounded: free
    assert not rg.atoms[phi].fixed


def test_mlir_extract_and_ptx_ld_param_name_the_same_field() -> None:
    # one tensor, arg0: ptr at byte 0, shape (i32) at 8, stride (i64) at 16
    modes = [{"shape": {"kind": "dynamic", "width": 32}, "stride": {"kind": "dynamic", "width": 64}}]
    m = FnBuilder()
    a = m.param("%arg0", "!llvm.struct<(ptr<1>, struct<(i32, i64)>)>")
    x = m.op(Kind.EXTRACT, a, width=64, attrs={"path": (1, 1)})
    p = FnBuilder(ir="ptx")
    p.fn.params.append(Param("k_param_0", ".param .align 8 .b8 k_param_0[24]", 0, 24))
    y = p.op(Kind.ARG, width=64, attrs={"param": 0, "field": ParamField(0, 16, 64)})
    names = []
    for b, v in ((m, x), (p, y)):
        gr = dataflow.build(b.module, b.fn, reaching_definitions)
        rg = Ranges(gr, Facts.of(b.fn.attrs), [{"modes": modes}])
        names.append(rg.name(rg.value(int(v[1:]))))
    assert names == ["arg0.stride[0]", "arg0.stride[0]"]


def test_a_warp_shuffle_keeps_the_range_of_the_value_it_hands_over() -> None:
    b = FnBuilder(exact_block_dim=(128, 1, 1))
    tid = b.op(Kind.SREG, attrs={"sreg": "tid.x"})
    s = b.op(Kind.SHUFFLE, b.const(-1), tid, b.const(16), b.const(31), attrs={"shuffled": 1})
    gr, rg = _ranges(b)
    v = rg.value(int(s[1:]))
    assert rg.interval(v) == Interval(0, 127) and rg.name(v) == "shfl(tid.x)"


def test_a_location_whose_file_name_holds_a_nul_is_reported_without_its_source_line() -> None:
    # the IR's location strings may hold any escape (loc("a\00b":3:1)); no file has such a name
    b = _static_rowmajor(grid=100000)
    for op in b.fn.ops():
        op.loc = Loc("k\0.py", 3, 1)
    gr, rg = _ranges(b)
    (f,) = checks.run(gr, rg, checks.Context("k", "test.mlir"))
    assert (f.file, f.line, f.source) == ("k\0.py", 3, None)


def test_values_past_any_integer_type_are_capped_so_they_stay_printable() -> None:
    # 3^10000 has 4,772 digits: more than Python prints (int max str digits, 4,300)
    gr, rg, last = _chain("mlir", 10_000, mul=3)
    assert rg.interval(rg.value(last)).hi < 1 << 2100
    (f,) = checks.run(gr, rg, checks.Context("k", "test.mlir"))
    assert f.severity == "must" and str(f.witness["true"]) and f.message


@pytest.mark.parametrize(
    ("name", "asm", "hi"),
    [("llvm.intr.ctpop", "", 32), ("llvm.intr.ctlz", "", 32), ("popc.b64", "", 64), ("clz.b32", "", 32),
     ("llvm.inline_asm", "clz.b32 $0, $1;", 32), ("llvm.inline_asm", "brev.b32 $0, $1;", None),
     ("llvm.inline_asm", " ", None), ("llvm.inline_asm", "clz.b32 $0, $1; add.s32 $0, $0, 1;", None)],
)  # fmt: skip
def test_a_bit_count_is_at_most_its_operand_width(name: str, asm: str, hi: int | None) -> None:
    """A popcount or a leading-zero count of any value is in [0, bits]: the set bit of a mask that picks
    an element (flashinfer's gvr2 survivor re-read) is not an i32-wide free value."""
    b = FnBuilder()
    b.param("%arg0", "i32")
    x = b.op(Kind.ARG, attrs={"param": 0})
    n = b.op(Kind.OPAQUE, x, name=name, attrs={"asm": asm} if asm else {})
    gr, rg = _ranges(b)
    iv = rg.interval(rg.value(int(n[1:])))
    assert iv == Interval(0, hi) if hi is not None else iv.hi == 2**31 - 1  # not a count: opaque, free


def test_an_asm_copy_is_a_copy_in_the_mlir_front_end() -> None:
    """``mov.b32 $0, $1;`` (a value pinned against reordering) carries its operand's range and bound."""
    from irscan.frontend.mlir import parse_module

    text = """module {
  llvm.func @k(%arg0: i32) attributes {nvvm.kernel} {
    %0 = nvvm.read.ptx.sreg.tid.x : i32
    %1 = llvm.inline_asm asm_dialect = att "mov.b32 $0, $1;", "=r,r" %0 : (i32) -> i32
    llvm.return
  }
}
"""
    m = parse_module(text, "t.mlir")
    (fn,) = m.functions
    ops = {op.name: op for blk in fn.blocks for op in blk.ops}
    assert ops["llvm.inline_asm"].kind is Kind.MOV
    gr = dataflow.build(m, fn, None)
    rg = Ranges(gr, Facts.of(fn.attrs))
    assert rg.interval(rg.value(ops["llvm.inline_asm"].id)) == Interval(0, 1023)


def test_an_accumulator_of_bounded_steps_is_tied_to_the_loop_that_counts_it() -> None:
    """``count += popc(ballot)`` per 32-lane chunk of ``for start in range(0, n, 32)``: at most 32 per
    trip, so ``32*count <= 32*n + 31*32``, i.e. the compaction cursor stays within a chunk of ``n``."""
    b = FnBuilder(exact_block_dim=(32, 1, 1))
    b.param("%arg0", "i32")
    n = b.op(Kind.ARG, attrs={"param": 0})
    zero = b.const(0)
    b.branch(("loop", (zero, zero)))
    b.block("loop", args=("%i", "%acc"), widths=(32, 32))
    cmp = b.op(Kind.ICMP, "%i", n, attrs={"pred": "slt"})
    b.branch(("body", ()), ("exit", ()), cond=cmp)
    b.block("body")
    mask = b.op(Kind.OPAQUE, "%i", name="nvvm.vote.sync")
    pop = b.op(Kind.OPAQUE, mask, name="llvm.intr.ctpop")
    acc = b.op(Kind.ADD, "%acc", pop)
    nxt = b.op(Kind.ADD, "%i", b.const(32))
    b.branch(("loop", (nxt, acc)))
    b.block("exit")
    gr, rg = _ranges(b)
    join = next(n for n in gr.nodes() if gr.op(n).kind is Kind.PHI and gr.op(n).results == ("%acc",))
    assert rg.interval(rg.value(join)).hi == 32 * -(-(2**31 - 1) // 32)  # trips of a 32-bit compare
    (bound,) = [b for b in rg.bounds(rg.value(join)) if b.terms]
    assert bound.terms == (("arg0", 1),) and bound.const == 31 and "accumulator" in bound.fact
