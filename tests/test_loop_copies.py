"""Values a loop only passes around (irscan/analysis/loops.py ``_copy_cycle``), a loop body's counter
under its entry compare (guards.py ``guarded_copy``) and ``min`` written as a select (decide.py
``_extreme``): torch's TMA scatter_add keeps ``prev_chunk = chunk`` across iterations, with ``chunk``
running from a free start while ``chunk < min(start + n, 16)``, and its offset ``256*prev_chunk`` can
never pass 3,840."""

from __future__ import annotations

import pytest
from irbuild import FnBuilder, ptx_kernel
from test_ranges import TENSOR, _ranges

from irscan import checks
from irscan.analysis.intervals import Interval
from irscan.ir import Kind, Module
from irscan.pipeline import scan_module


def _chunk_loop(clamp: bool = True, carry: bool = True) -> tuple[FnBuilder, str, str]:
    """``start = ctaid.y * arg1; end = min(start + arg1, 16)`` (``clamp``: else ``end = start + arg1``);
    ``for chunk in range(start, end): prev = chunk if tid.x == 0 else prev; load x[256*prev]``
    (``carry``: else ``prev = chunk + 1``, a value computed from the loop's own counter)."""
    b = FnBuilder(exact_block_dim=(32, 1, 1))
    x = b.param("%arg0", TENSOR)
    n = b.param("%arg1", "i32")
    tid = b.op(Kind.SREG, attrs={"sreg": "tid.x", "range": (0, 31)})
    bid = b.op(Kind.SREG, attrs={"sreg": "ctaid.y", "range": (0, 65534)})
    start = b.op(Kind.MUL, bid, n)
    stop = b.op(Kind.ADD, start, n)
    sixteen = b.const(16)
    over = b.op(Kind.ICMP, stop, sixteen, width=1, attrs={"pred": "sgt"})
    end = b.op(Kind.SELECT, over, sixteen, stop) if clamp else stop
    first = b.op(Kind.ICMP, tid, b.const(0), width=1, attrs={"pred": "eq"})
    b.branch(("head", (start, b.const(0))))
    b.block("head", args=("%c", "%p"), widths=(32, 32))
    more = b.op(Kind.ICMP, "%c", end, width=1, attrs={"pred": "slt"})
    b.branch(("body", ("%c", "%p")), ("exit", ()), cond=more)
    b.block("body", args=("%cb", "%pb"), widths=(32, 32))
    kept = b.op(Kind.ADD, "%cb", b.const(1)) if not carry else "%cb"
    prev = b.op(Kind.SELECT, first, kept, "%pb")
    off = b.op(Kind.MUL, prev, b.const(256))
    base = b.op(Kind.EXTRACT, x, width=0, attrs={"path": (0,)})
    at = b.op(Kind.GEP, base, off, width=0, space="global", attrs={"indices": [("dyn", 1, 32)], "elem_size": 2})
    b.op(Kind.LOAD, at, width=0, addr=0, space="global")
    nxt = b.op(Kind.ADD, "%cb", b.const(1))
    b.branch(("head", (nxt, prev)))
    b.block("exit")
    return b, end, off


def test_a_copied_loop_value_keeps_the_range_of_what_it_copies() -> None:
    b, end, off = _chunk_loop()
    gr, rg = _ranges(b)
    assert rg.interval(rg.value(int(end[1:]))).hi == 16  # min(start + n, 16), not the union of the arms
    assert rg.interval(rg.value(int(off[1:]))) == Interval(0, 256 * 15)
    assert checks.run(gr, rg, checks.Context("k", "test.mlir")) == []


@pytest.mark.parametrize(("clamp", "carry"), [(False, True), (True, False)])
def test_without_the_clamp_or_with_a_computed_carry_the_offset_stays_open(clamp: bool, carry: bool) -> None:
    """No constant end: the counter is free, and so is its copy.  A carry computed from the counter
    (``chunk + 1``) is its own recurrence, which the copy rule does not take for a copy."""
    b, _, off = _chunk_loop(clamp=clamp, carry=carry)
    gr, rg = _ranges(b)
    top = rg.interval(rg.value(int(off[1:]))).hi
    assert top >= 2**31 if not clamp else top > 256 * 15
    if not clamp:
        assert [f.check for f in checks.run(gr, rg, checks.Context("k", "test.mlir"))] == ["narrow-widened-late"]


#: the same loop as NVVM writes it in PTX: rotated, the entry test before the preheader's copy of the
#: start into the counter, the previous chunk a ``selp`` of the counter and itself
ROTATED = """.reg .b64 %rd<8>;
ld.param.u64 %rd1, [k_p];
mov.u32 %r1, %tid.x;
mov.u32 %r2, %ctaid.y;
shl.b32 %r3, %r2, 20;
add.s32 %r4, %r3, 64;
min.s32 %r5, %r4, 16;
mov.b32 %r9, 0;
setp.ge.s32 %p1, %r3, %r5;
@%p1 bra $L__EXIT;
mov.b32 %r6, %r3;
$L__LOOP:
setp.eq.b32 %p2, %r1, 0;
selp.b32 %r9, %r6, %r9, %p2;
shl.b32 %r7, %r9, 8;
mul.wide.s32 %rd2, %r7, 2;
add.s64 %rd3, %rd1, %rd2;
ld.global.u16 %rs1, [%rd3];
add.s32 %r6, %r6, 1;
setp.lt.s32 %p3, %r6, %r5;
@%p3 bra $L__LOOP;
$L__EXIT:
ret;"""


def test_the_rotated_ptx_loop_copies_its_start_under_the_entry_test() -> None:
    fn = ptx_kernel(".reg .b16 %rs<2>;\n" + ROTATED.replace(".reg .b64 %rd<8>;\n", ""))
    res = scan_module(Module(ir="ptx", path="t.ptx", functions=[fn]))  # type: ignore[arg-type]
    assert res.findings == []


def test_without_the_entry_test_the_ptx_start_is_free() -> None:
    body = ROTATED.replace(".reg .b64 %rd<8>;\n", "").replace("@%p1 bra $L__EXIT;\n", "")
    fn = ptx_kernel(".reg .b16 %rs<2>;\n" + body)
    res = scan_module(Module(ir="ptx", path="t.ptx", functions=[fn]))  # type: ignore[arg-type]
    assert [f.check for f in res.findings] == ["narrow-widened-late"]


def test_a_clamp_select_is_at_most_its_bound() -> None:
    """``row < n ? row : n - 1`` (cudnn's FROST row kernels clamp the row they read): at most n - 1,
    whatever the row's own range, as rule (a) reads a guard ``if row < n``."""
    from test_bounds import _kernel, _ranges, _val

    b, n = _kernel()
    bid = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    row = b.op(Kind.MUL, bid, b.const(8))
    lt = b.op(Kind.ICMP, row, n, width=1, attrs={"pred": "slt"})
    clamp = b.op(Kind.SELECT, lt, row, b.op(Kind.SUB, n, b.const(1)))
    off = b.op(Kind.SELECT, lt, row, b.op(Kind.SUB, n, b.const(2)))  # not a clamp of n: no bound
    rg = _ranges(b)
    assert rg.interval(_val(rg, clamp)).hi == 2**31 - 2
    assert rg.interval(_val(rg, off)).hi > 2**31
