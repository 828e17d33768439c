"""A floor division's fix-up by a runtime divisor of unknown sign (irscan/analysis/floordiv.py).

``q = x / d`` then ``select(x != q*d and (x < 0) != (d < 0), q - 1, q)`` (PTX: ``q + selp(-1, 0)``,
the sign test as ``(x ^ d) < 0``): the -1 arm is taken only for an inexact division, so |d| >= 2 and
|q| <= 2^30, and q - 1 never leaves i32; with the sign test it is floor(x / d), and x - floor(x / d)*d
is in (-|d|, |d|) for either sign of d.
"""

from __future__ import annotations

from irbuild import FnBuilder, ptx_kernel

from irscan.analysis import dataflow
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.ir import Function, Kind, Module

I32 = "!llvm.struct<(ptr<1>, struct<(i32, struct<()>)>)>"

PTX = """
ld.param.u32 %r1, [k_p];
ld.param.u32 %r2, [k_q];
sub.s32 %r3, %r1, %r2;
sub.s32 %r4, %r2, %r1;
shfl.sync.idx.b32 %r5, %r4, %r1, 31, -1;
div.s32 %r6, %r3, %r5;
mul.lo.s32 %r7, %r6, %r5;
setp.ne.b32 %p1, %r3, %r7;
{sign}
and.pred %p3, %p2, %p1;
selp.b32 %r9, -1, 0, %p3;
add.s32 %r10, %r6, %r9;
mul.lo.s32 %r11, %r10, %r5;
sub.s32 %r12, %r3, %r11;
ret;
"""
XOR_SIGN = "xor.b32 %r8, %r3, %r5;\nsetp.lt.s32 %p2, %r8, 0;"


def _ptx(body: str) -> tuple[Ranges, Function]:
    fn = ptx_kernel(body)
    gr = dataflow.build(Module(ir="ptx", path="t.ptx", functions=[fn]), fn, reaching_definitions)
    return Ranges(gr, Facts.of(fn.attrs)), fn


def _iv(rg: Ranges, fn: Function, reg: str) -> tuple[int, int]:
    (op,) = (o for o in fn.ops() if o.results[:1] == (reg,))
    iv = rg.interval(rg.value(op.id))
    return iv.lo, iv.hi


def test_ptx_floor_quotient_stays_in_i32_and_its_remainder_is_below_the_divisor() -> None:
    rg, fn = _ptx(PTX.format(sign=XOR_SIGN))
    assert _iv(rg, fn, "%r6") == (-(2**31), 2**31 - 1)
    assert _iv(rg, fn, "%r10") == (-(2**31), 2**31 - 1)  # not -2^31 - 1: the -1 arm needs |d| >= 2
    assert _iv(rg, fn, "%r12") == (-(2**31) + 2, 2**31 - 2)  # |d| <= 2^31 - 1


def test_ptx_fix_up_without_the_sign_test_is_bounded_but_no_floor() -> None:
    rg, fn = _ptx(PTX.format(sign="setp.lt.s32 %p2, %r3, 0;"))  # x < 0 alone: d may be negative
    assert _iv(rg, fn, "%r10") == (-(2**31), 2**31 - 1)
    assert _iv(rg, fn, "%r12")[1] > 2**31  # q - 1 with d < 0 leaves x - (q - 1)*d up to 2|d|


def test_ptx_correction_not_conditioned_on_an_inexact_division_stays_the_union() -> None:
    body = PTX.format(sign=XOR_SIGN).replace("setp.ne.b32 %p1, %r3, %r7;", "setp.ne.b32 %p1, %r3, %r1;")
    rg, fn = _ptx(body)
    assert _iv(rg, fn, "%r10")[0] == -(2**31) - 1


def _mlir(sign: bool) -> tuple[Ranges, str, str, str]:
    b = FnBuilder()
    a = b.param("%arg0", I32)
    n = b.op(Kind.EXTRACT, a, attrs={"path": (1, 0)})
    t = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    x = b.op(Kind.SUB, t, n)
    d = b.op(Kind.SHUFFLE, b.op(Kind.SUB, n, t), t, attrs={"shuffled": 0})
    q = b.op(Kind.DIV, x, d, signed=True)
    zero = b.const(0)
    inexact = b.op(Kind.ICMP, x, b.op(Kind.MUL, q, d), width=1, attrs={"pred": "ne"})
    xneg = b.op(Kind.ICMP, x, zero, width=1, attrs={"pred": "slt"})
    dneg = b.op(Kind.ICMP, d, zero, width=1, attrs={"pred": "slt"})
    opposite = b.op(Kind.ICMP, xneg, dneg, width=1, attrs={"pred": "ne"}) if sign else xneg
    cond = b.op(Kind.AND, inexact, opposite, width=1)
    f = b.op(Kind.SELECT, cond, b.op(Kind.ADD, q, b.const(-1)), q)
    r = b.op(Kind.SUB, x, b.op(Kind.MUL, f, d))
    gr = dataflow.build(b.module, b.fn, reaching_definitions)
    return Ranges(gr, Facts.of(b.fn.attrs)), q, f, r


def test_mlir_floor_quotient_stays_in_i32_and_its_remainder_is_below_the_divisor() -> None:
    rg, q, f, r = _mlir(sign=True)
    assert rg.interval(rg.value(int(q[1:]))).lo == -(2**31)
    fv = rg.value(int(f[1:]))
    assert rg.name(fv).startswith("floor(") and rg.interval(fv).lo == -(2**31)
    rv = rg.interval(rg.value(int(r[1:])))
    assert (rv.lo, rv.hi) == (-(2**31) + 2, 2**31 - 2)


def test_mlir_fix_up_without_the_sign_test_is_no_floor() -> None:
    rg, _, f, r = _mlir(sign=False)
    assert rg.interval(rg.value(int(f[1:]))).lo == -(2**31)
    assert rg.interval(rg.value(int(r[1:]))).hi > 2**31


def test_ptx_fix_up_of_a_dividend_wider_than_i32_uses_the_register_value() -> None:
    # the ideal x = p + q reaches 2^32; the division and the compare see its 32-bit register value
    rg, fn = _ptx(PTX.format(sign=XOR_SIGN).replace("sub.s32 %r3, %r1, %r2;", "add.s32 %r3, %r1, %r2;"))
    assert _iv(rg, fn, "%r10")[0] >= -(2**31)


def test_mlir_sign_test_of_non_negative_values_decides_the_fix_up() -> None:
    """``(x < 0) != (d < 0)`` with x and d both non-negative never holds (irscan/analysis/decide.py):
    the floor is the quotient itself, never below zero."""
    b = FnBuilder()
    n = b.op(Kind.EXTRACT, b.param("%arg0", I32), attrs={"path": (1, 0)})
    x = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    q = b.op(Kind.DIV, x, n, signed=True)
    zero = b.const(0)
    inexact = b.op(Kind.ICMP, x, b.op(Kind.MUL, q, n), width=1, attrs={"pred": "ne"})
    xneg = b.op(Kind.ICMP, x, zero, width=1, attrs={"pred": "slt"})
    dneg = b.op(Kind.ICMP, n, zero, width=1, attrs={"pred": "slt"})
    opposite = b.op(Kind.ICMP, xneg, dneg, width=1, attrs={"pred": "ne"})
    f = b.op(Kind.SELECT, b.op(Kind.AND, inexact, opposite, width=1), b.op(Kind.ADD, q, b.const(-1)), q)
    gr = dataflow.build(b.module, b.fn, reaching_definitions)
    rg = Ranges(gr, Facts.of(b.fn.attrs))
    assert rg.value(int(f[1:])) == rg.value(int(q[1:]))


def test_ptx_truncating_remainder_by_a_divisor_of_unknown_sign_is_below_it() -> None:
    body = PTX.format(sign=XOR_SIGN).replace("mul.lo.s32 %r11, %r10, %r5;", "mul.lo.s32 %r11, %r6, %r5;")
    rg, fn = _ptx(body)  # x - (x / d)*d, no fix-up: |r| < |d| and r has x's sign
    assert _iv(rg, fn, "%r12") == (-(2**31) + 2, 2**31 - 2)


#: Python's ``x // 128`` and ``x - (x // 128)*128`` on an Int32 x of either sign, as NVVM writes them
#: (flashinfer's MLA reduction, ``row_in_tile``): the signed division by 2^7 as ``(x + bias) >> 7``, the
#: multiple as ``(x + bias) & -128``, the floor's ``selp(-1, 0)``, then the remainder by a shift
POW2 = """
ld.param.u32 %r1, [k_p];
ld.param.u32 %r2, [k_q];
sub.s32 %r3, %r1, %r2;
shr.s32 %r4, %r3, 31;
shr.u32 %r5, %r4, 25;
add.s32 %r6, %r3, %r5;
shr.s32 %r7, %r6, 7;
and.b32 %r8, %r6, -128;
setp.ne.b32 %p1, %r3, %r8;
setp.lt.s32 %p2, %r3, 0;
and.pred %p3, %p2, %p1;
selp.b32 %r9, -1, 0, %p3;
add.s32 %r10, %r7, %r9;
shl.b32 %r11, %r10, 7;
sub.s32 %r12, %r3, %r11;
ret;
"""


def test_ptx_signed_division_by_a_power_of_two_floors_to_a_remainder_below_it() -> None:
    rg, fn = _ptx(POW2)
    assert _iv(rg, fn, "%r12") == (0, 127)
    rg, fn = _ptx(POW2.replace("shr.u32 %r5, %r4, 25;", "shr.u32 %r5, %r4, 24;"))  # a bias for 2^8: no quotient
    assert _iv(rg, fn, "%r12")[1] > 127


#: sigmoid_gate_bwd's delta row: row = min(ctaid.x, n - 1) (-1 at n = 0), POW2's idiom by 32 gives
#: token = floor(row / 32) (%r10) and head = row - 32*token (%r12); then batch = floor(token / s) by a
#: runtime s, and batch*32 + head
BATCH_HEAD = (
    POW2.replace("sub.s32 %r3, %r1, %r2;", "mov.u32 %r20, %ctaid.x;\nadd.s32 %r21, %r1, -1;\n"
                 "setp.lt.s32 %p9, %r20, %r1;\nselp.b32 %r3, %r20, %r21, %p9;")
    .replace("7;", "5;").replace("25;", "27;").replace("-128;", "-32;")
    .replace("ret;", """ld.param.u32 %r13, [k_r];
div.s32 %r14, %r10, %r13;
mul.lo.s32 %r15, %r14, %r13;
setp.ne.b32 %p6, %r10, %r15;
xor.b32 %r16, %r10, %r13;
setp.lt.s32 %p7, %r16, 0;
and.pred %p8, %p7, %p6;
selp.b32 %r17, -1, 0, %p8;
add.s32 %r18, %r14, %r17;
shl.b32 %r19, %r18, 5;
add.s32 %r22, %r19, %r12;
ret;""")
)  # fmt: skip


def test_ptx_batch_of_a_token_times_heads_plus_head_is_at_most_the_row() -> None:
    rg, fn = _ptx(BATCH_HEAD)
    (op,) = (o for o in fn.ops() if o.results[:1] == ("%r22",))
    bs = rg.bounds(rg.value(op.id), op.id)
    assert bs and bs[0].terms == (("arg0", 1),) and bs[0].const < 64, bs
    assert ") <= floor(" in bs[0].fact  # floor(token / s) <= token
    assert rg.interval(rg.value(op.id)).hi > 2**31  # the interval alone: the quotient free to 2^26


#: cuDNN's NCHW batch-norm chunking: per = ceil(N / C) as floor((N + C - 1) / C) by a runtime C, and the
#: chunk end per*(b + 1) for a block index b < C (a guard here; grid y = C in the kernel)
CHUNK_END = PTX.replace("sub.s32 %r3, %r1, %r2;\nsub.s32 %r4, %r2, %r1;\nshfl.sync.idx.b32 %r5, %r4, %r1, 31, -1;",
                        "add.s32 %r20, %r1, %r2;\nadd.s32 %r3, %r20, -1;\nmov.b32 %r5, %r2;").replace(
    "mul.lo.s32 %r11, %r10, %r5;\nsub.s32 %r12, %r3, %r11;\nret;",
    "mov.u32 %r13, %ctaid.y;\nsetp.ge.s32 %p4, %r13, %r2;\n@%p4 bra $L__END;\n"
    "mul.lo.s32 %r14, %r10, %r13;\nadd.s32 %r15, %r14, %r10;\n$L__END:\nret;")  # fmt: skip


def test_ptx_a_ceil_quotient_times_a_block_index_below_its_divisor_stays_below_the_dividend() -> None:
    rg, fn = _ptx(CHUNK_END.format(sign=XOR_SIGN))
    (op,) = (o for o in fn.ops() if o.results[:1] == ("%r15",))
    bs = rg.bounds(rg.value(op.id), op.id)
    # per*(b + 1) <= N + C - 1 (C, read from a parameter the header does not declare, is load(memory))
    assert bs and bs[0].terms == (("arg0", 1),), bs
    assert bs[0].fact.startswith("guard: ctaid.y < load(memory) dominates;")
    assert bs[0].fact.endswith(
        ")*ctaid.y <= -1*(floor((arg0 + load(memory) - 1) / load(memory))) + arg0 + load(memory) - 1"
    )
