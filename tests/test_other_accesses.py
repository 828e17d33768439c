"""Rule (c) across accesses (irscan/checks/other_accesses.py): an input is bounded by every tensor the
kernel addresses with it, where that access runs whenever the wrapping one does."""

from __future__ import annotations

from typing import Any

import pytest
from irbuild import FnBuilder

from irscan import checks
from irscan.analysis import dataflow
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.checks import other_accesses
from irscan.checks.reporting import finish
from irscan.findings import Finding
from irscan.frontend import ptx
from irscan.ir import Kind
from irscan.pipeline import scan_module

TENSOR = "!llvm.struct<(ptr<1>, struct<(struct<()>, struct<()>)>)>"
I64 = {"kind": "dynamic", "width": 64, "text": "?{i64}"}
#: x: bf16 (?{i64}, 8192):(8192, 1), 16 KiB per row
ROWS = {"dtype": "bf16", "layout": "(?{i64},8192):(8192,1)", "modes": [
    {"shape": I64, "stride": {"kind": "static", "value": 8192}},
    {"shape": {"kind": "static", "value": 8192}, "stride": {"kind": "static", "value": 1}},
]}  # fmt: skip
#: y: f32 (?{i64}):(1), one element per row (a per-row statistic: rstd, LSE, a split's row sum)
STATS = {"dtype": "f32", "layout": "(?{i64}):(1)", "modes": [{"shape": I64, "stride": {"kind": "static", "value": 1}}]}


def _kernel(where: str = "before", signed_row: bool = True) -> tuple[dataflow.Graph, Ranges]:
    """``x[ctaid.x, 0]`` read in 64 bits (sext first), then ``y[64*ctaid.x + tid.x]`` with an i32 row.

    ``where``: the x load ``before`` the y store in the entry block, in a block only a branch on a
    loaded flag enters (``guarded``), or ``after`` it; ``predicated``: before it, under a PTX guard."""
    b = FnBuilder(exact_block_dim=(64, 1, 1))
    x, y = b.param("%arg0", TENSOR), b.param("%arg1", TENSOR)
    tid = b.op(Kind.SREG, attrs={"sreg": "tid.x", "range": (0, 1023)})
    bid = b.op(Kind.SREG, attrs={"sreg": "ctaid.x", "range": (0, 2**31 - 1)})

    def read_x(**kw: Any) -> None:
        off = b.op(Kind.MUL, b.op(Kind.SEXT, bid, width=64, src_width=32), b.const(8192, width=64), width=64)
        base = b.op(Kind.EXTRACT, x, width=0, attrs={"path": (0,)})
        p = b.op(Kind.GEP, base, off, width=0, space="global", attrs={"indices": [("dyn", 1, 64)], "elem_size": 2})
        b.op(Kind.LOAD, p, width=16, addr=0, space="global", **kw)

    if where == "before":
        read_x()
    elif where == "predicated":
        read_x(pred="%p1")
    elif where == "guarded":
        flag = b.op(Kind.LOAD, b.op(Kind.EXTRACT, y, width=0, attrs={"path": (0,)}), addr=0, space="global")
        b.branch(("then", ()), ("join", ()), cond=b.op(Kind.ICMP, flag, b.const(0), width=1, attrs={"pred": "sgt"}))
        b.block("then")
        read_x()
        b.branch(("join", ()))
        b.block("join")
    row = b.op(Kind.ADD, b.op(Kind.MUL, bid, b.const(64)), tid, flags=frozenset({"nsw"}))
    wide = b.op(Kind.SEXT if signed_row else Kind.ZEXT, row, width=64, src_width=32)
    base = b.op(Kind.EXTRACT, y, width=0, attrs={"path": (0,)})
    p = b.op(Kind.GEP, base, wide, width=0, space="global", attrs={"indices": [("dyn", 1, 64)], "elem_size": 4})
    b.op(Kind.STORE, b.const(0), p, width=32, addr=1, space="global")
    if where == "after_call":  # a call may not return (``__assertfail``): the load may never run
        b.op(Kind.CALL, result=False, width=0, name="llvm.call")
    if where in ("after", "after_call"):
        read_x()
    gr = dataflow.build(b.module, b.fn, reaching_definitions)
    return gr, Ranges(gr, Facts.of(b.fn.attrs), [ROWS, STATS])


def _store_finding(gr: dataflow.Graph, rg: Ranges) -> Finding:
    (f,) = [f for f in checks.run(gr, rg, checks.Context("k", "test.mlir")) if f.sink["kind"] == "store"]
    return f


def test_an_access_that_runs_before_the_wrap_bounds_its_input() -> None:
    """y alone is 8.6 GB at the wrap (row 2^31), but the same thread read x[ctaid.x] first: at
    ctaid.x >= 2^25, 16 KiB per row, x is 550 GB, more than any GPU holds."""
    gr, rg = _kernel("before")
    f = _store_finding(gr, rg)
    assert f.wraps_when is not None and f.wraps_when["text"] == "ctaid.x >= 33554432"
    assert f.memory is not None and (f.memory["tensor"], f.memory["bytes"]) == ("arg0", 2**25 * 16384)
    assert f.memory["at"] == "ctaid.x >= 33554432"
    reported, (held,) = finish([f])
    assert not reported and held is f
    assert f.rule_suppressed == (
        "(c) unreachable within GPU memory: needs arg0 >= 549.8 GB at ctaid.x >= 33554432 (> 309.2 GB): the load "
        "of arg0 at IR line 8, which runs before this access, is 16,384 byte(s) per unit of ctaid.x into it: "
        "at ctaid.x >= 33554432 that is 549.8 GB"
    )


def test_an_access_later_in_the_entry_block_bounds_its_input() -> None:
    """After the store, in the same block with nothing between that may stop the thread: every thread
    runs it (irscan/analysis/cta_reach.py), in the CTA whose ctaid.x wraps too."""
    gr, rg = _kernel("after")
    f = _store_finding(gr, rg)
    assert f.memory is not None and (f.memory["tensor"], f.memory["bytes"]) == ("arg0", 2**25 * 16384)
    assert "which a thread of every CTA runs" in f.memory["why"]
    reported, _ = finish([f])
    assert not reported


@pytest.mark.parametrize("where", ["guarded", "after_call", "predicated"])
def test_an_access_that_may_not_run_with_the_wrap_bounds_nothing(where: str) -> None:
    """Under a branch on data (``if nloc > 0``), after a call that may not return, or under a guard
    predicate, the x access may not run for the inputs that wrap: y's own 8.6 GB is all."""
    gr, rg = _kernel(where)
    f = _store_finding(gr, rg)
    # y's own extent: the coordinate 2^31 needs 2^31 + 1 elements of its i64 extent (irscan/analysis/coords.py)
    assert f.memory is not None and (f.memory["tensor"], f.memory["bytes"]) == ("arg1", (2**31 + 1) * 4)
    (kept,), _ = finish([f])
    assert kept is f and any("arg1 needs 8.6 GB: fits in" in x for x in f.facts)


def test_the_ideal_offset_of_an_access_is_read_through_its_geps() -> None:
    gr, rg = _kernel("before")
    load = next(op.id for op in gr.fn.ops() if op.kind is Kind.LOAD)
    found = other_accesses.byte_offset(gr, rg, load)
    assert found is not None and found[0] == "arg0" and rg.name(found[1]) == "16384*ctaid.x"
    assert other_accesses.launch_constant(rg, found[1].terms[0][0]) == "ctaid.x"


#: LLVM's bypass of a slow 64-bit division (rmsnorm.py:576 in flashinfer's QKRMSNorm): ``row / N`` and
#: ``row % N`` on i64 values run as ``div.u32`` when the high bits of both are clear
DIV_BYPASS = """.version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_x, .param .u64 k_n)
.reqntid 128, 1, 1
{
.reg .pred %p<4>;
.reg .b32 %r<20>;
.reg .b64 %rd<32>;
ld.param.u64 %rd5, [k_x];
ld.param.u64 %rd12, [k_n];
mov.u32 %r2, %tid.x;
mov.u32 %r12, %ctaid.x;
shr.u32 %r3, %r2, 4;
shl.b32 %r13, %r12, 3;
or.b32 %r14, %r13, %r3;
cvt.s64.s32 %rd1, %r14;
or.b64 %rd14, %rd1, %rd12;
and.b64 %rd15, %rd14, -4294967296;
setp.ne.b64 %p1, %rd15, 0;
@%p1 bra $L__BB0_2;
cvt.u32.u64 %r15, %rd12;
cvt.u32.u64 %r16, %rd1;
div.u32 %r17, %r16, %r15;
mul.lo.s32 %r18, %r17, %r15;
sub.s32 %r19, %r16, %r18;
cvt.u64.u32 %rd29, %r17;
cvt.u64.u32 %rd30, %r19;
bra.uni $L__BB0_3;
$L__BB0_2:
div.s64 %rd29, %rd1, %rd12;
mul.lo.s64 %rd16, %rd29, %rd12;
sub.s64 %rd30, %rd1, %rd16;
$L__BB0_3:
mad.lo.s64 %rd22, %rd29, 4096, %rd30;
shl.b64 %rd23, %rd22, 1;
add.s64 %rd2, %rd5, %rd23;
st.global.u32 [%rd2], %r2;
ret;
}
"""


def test_the_narrowing_of_a_division_bypass_stays_held_back() -> None:
    """The ``cvt.u32.u64`` pair of the bypass narrows exactly (the guard cleared the high bits): the
    ``div.u32`` runs only there, so its quotient is below 2^32 and is no candidate at all
    (guards.guarded_interval); the remainder's trunc-then-extend is held back by (a); the i32 row that
    wraps before the division is reported."""
    res = scan_module(ptx.parse_module(DIV_BYPASS, "t.ptx"))
    reported, held = finish(res.findings)
    assert not [f for f in reported if f.check == "trunc-then-extend"]
    narrowings = sorted(f.expression for f in held if f.check == "trunc-then-extend")
    assert narrowings == ["(8*ctaid.x + tid.x >> 4) % arg1"]
    for f in held:  # the quotient and the remainder
        assert str(f.rule_suppressed).startswith("(a) it never wraps: ") and "guard: the high bits of " in str(
            f.rule_suppressed
        )
    assert [f.wraps_when["text"] for f in reported if f.wraps_when] == ["ctaid.x >= 268435456"]
