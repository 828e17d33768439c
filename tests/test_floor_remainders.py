"""A value minus its floor multiple is a remainder (irscan/analysis/relate.py, remainder_idiom).

``x - (x & -2^k)``, ``x - 2^k*(x >> k)`` and ``x - d*(x / d)`` are ``x % 2^k`` (``x % d``), in
``[0, 2^k - 1]``, whichever way the two x are one value: one SSA value, equal affine forms, or, in
PTX, one register read where the same definitions' value reaches both reads (a loop-carried index
read twice in the loop body).  Two reads of a register with equal definition sets are *not* one
value when the loop steps the register between them; those stay apart.
"""

from __future__ import annotations

from irbuild import FnBuilder, ptx_kernel

from irscan.analysis import dataflow
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.ir import Function, Kind, Module


def _ranges(b: FnBuilder) -> Ranges:
    gr = dataflow.build(b.module, b.fn, reaching_definitions)
    return Ranges(gr, Facts.of(b.fn.attrs))


def _ptx(body: str) -> tuple[Ranges, Function]:
    fn = ptx_kernel(body)
    gr = dataflow.build(Module(ir="ptx", path="t.ptx", functions=[fn]), fn, reaching_definitions)
    return Ranges(gr, Facts.of(fn.attrs)), fn


def _at(rg: Ranges, fn: Function, reg: str) -> tuple[str, int, int]:
    """Name and interval of the value of register ``reg`` (written once)."""
    (op,) = (o for o in fn.ops() if o.results[:1] == (reg,))
    v = rg.value(op.id)
    iv = rg.interval(v)
    return rg.name(v), iv.lo, iv.hi


def test_x_minus_its_masked_floor_is_x_mod_the_power_of_two() -> None:
    b = FnBuilder()
    x = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    r = b.op(Kind.SUB, x, b.op(Kind.AND, x, b.const(-128)))
    rg = _ranges(b)
    v = rg.value(int(r[1:]))
    assert (rg.name(v), rg.interval(v).lo, rg.interval(v).hi) == ("ctaid.x % 128", 0, 127)


def test_x_minus_its_shifted_floor_is_x_mod_the_power_of_two() -> None:
    b = FnBuilder()
    x = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    r = b.op(Kind.SUB, x, b.op(Kind.SHL, b.op(Kind.LSHR, x, b.const(7)), b.const(7)))
    rg = _ranges(b)
    v = rg.value(int(r[1:]))
    assert (rg.name(v), rg.interval(v).lo, rg.interval(v).hi) == ("ctaid.x % 128", 0, 127)


def test_an_unsigned_mask_is_a_floor_only_for_a_value_within_its_width() -> None:
    b = FnBuilder()
    x = b.op(Kind.SREG, attrs={"sreg": "tid.x"})  # [0, 1023]: 0xFFFFFF80 clears its low 7 bits only
    r = b.op(Kind.SUB, x, b.op(Kind.AND, x, b.const(0xFFFFFF80)))
    rg = _ranges(b)
    assert rg.interval(rg.value(int(r[1:]))).hi == 127


LOOP = """
mov.u32 %r1, %ctaid.x;
ld.param.u32 %r2, [k_p];
mov.u32 %r3, %nctaid.x;
shl.b32 %r3, %r3, 8;
LOOP:
{floor}
sub.s32 %r6, %r1, %r5;
shl.b32 %r7, %r6, 5;
cvt.s64.s32 %rd1, %r7;
add.s32 %r1, %r1, %r3;
setp.lt.s32 %p1, %r1, %r2;
@%p1 bra LOOP;
ret;
"""


def test_a_loop_carried_register_read_twice_is_one_value() -> None:
    # flashinfer's mxfp8 quantize: sf_idx stepped by the grid, its column sf_idx % 128 written by NVVM
    # as sf_idx - (sf_idx & -128); both reads of %r1 see the loop's one value of it
    rg, fn = _ptx(LOOP.format(floor="and.b32 %r5, %r1, -128;"))
    name, lo, hi = _at(rg, fn, "%r7")
    assert name.endswith("% 128)") and (lo, hi) == (0, 4064)


def test_the_signed_remainder_idiom_of_a_loop_carried_register() -> None:
    # x srem 128 = x - ((x + ((x >> 31) >>> 25)) & -128): in [-127, 127], [0, 127] when x >= 0
    srem = "shr.s32 %r8, %r1, 31;\nshr.u32 %r8, %r8, 25;\nadd.s32 %r4, %r1, %r8;\nand.b32 %r5, %r4, -128;"
    rg, fn = _ptx(LOOP.format(floor=srem))
    assert _at(rg, fn, "%r6")[1:] == (0, 127)


def test_two_reads_with_the_same_definitions_but_a_step_between_are_two_values() -> None:
    # LOOP: %r5 = %r1 & -128; maybe %r1 += 1 | SKIP: %r6 = %r1 - %r5.  Both reads of %r1 are reached by
    # the same two definitions, yet SKIP's %r1 can be LOOP's + 1, so %r6 can be 128: no remainder
    body = """
mov.u32 %r1, %ctaid.x;
ld.param.u32 %r2, [k_p];
LOOP:
and.b32 %r5, %r1, -128;
setp.lt.s32 %p1, %r5, %r2;
@%p1 bra SKIP;
add.s32 %r1, %r1, 1;
SKIP:
sub.s32 %r6, %r1, %r5;
cvt.s64.s32 %rd1, %r6;
setp.lt.s32 %p2, %r1, %r2;
@%p2 bra LOOP;
ret;
"""
    rg, fn = _ptx(body)
    name, _, hi = _at(rg, fn, "%r6")
    assert "% 128" not in name and hi > 127
