"""Division by a constant through a multiply-high magic number (irscan/analysis/magic.py).

``magic_divisor`` / ``magic_negative`` are checked against brute force over every 8-bit magic and
shift, so the two-point proof is tested, not trusted; the PTX tests pin the shapes NVVM emits
(``mul.hi.u32`` + ``shr``; ``mul.hi.s32`` + the sign fix-up; the add-back of a negative M; an 8-bit
division promoted to ``(x·M) >> n``) and the ones that must stay unexplained.
"""

from __future__ import annotations

import random

from irbuild import ptx_kernel

from irscan.analysis import dataflow
from irscan.analysis.magic import magic_divisor, magic_negative
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.ir import Module


def test_the_proof_agrees_with_brute_force_on_every_8_bit_magic() -> None:
    proved = 0
    for m in range(1, 256):
        for n in range(8, 13):
            for hi in (127, 200, 255):
                d = magic_divisor(m, n, hi)
                if d is not None:
                    proved += 1
                    assert all((x * m) >> n == x // d for x in range(hi + 1)), (m, n, hi, d)
                    if magic_negative(m, n, d, 128):  # the signed fix-up truncates: -y / d
                        assert all(-((-y * m) >> n) - 1 == y // d for y in range(1, 129)), (m, n, d)
    assert proved > 300  # the check proves the real magics, not nothing


def test_the_compilers_32_bit_magics_are_found_and_checked_by_sampling() -> None:
    rng = random.Random(7)
    known = ((0x55555556, 32, 2**31 - 1, 3), (0xAAAAAAAB, 33, 2**32 - 1, 3), (0x92492493, 36, 2**31 - 1, 28))
    for m, n, hi, d in known:
        assert magic_divisor(m, n, hi) == d
        assert all((x * m) >> n == x // d for x in [hi, *(rng.randrange(hi) for _ in range(20000))])
    assert magic_divisor(0x92492493, 36, 2**32 - 1) is None  # 28's signed magic is not exact for every u32
    assert magic_divisor(0x55555555, 32, 2**31 - 1) is None  # one below the magic: floors too low
    assert magic_negative(0x55555556, 32, 3, 2**31) and magic_negative(0x92492493, 36, 28, 2**31)


def _value(body: str, reg: str) -> tuple[str, int, int]:
    fn = ptx_kernel(body)
    gr = dataflow.build(Module(ir="ptx", path="t.ptx", functions=[fn]), fn, reaching_definitions)
    rg = Ranges(gr, Facts.of(fn.attrs))
    (op,) = (o for o in fn.ops() if o.results[:1] == (reg,))
    v = rg.value(op.id)
    return rg.name(v), rg.interval(v).lo, rg.interval(v).hi


def test_unsigned_mulhi_and_shift_is_a_division_so_x_minus_its_multiple_is_a_remainder() -> None:
    # flashinfer MoE finalize: ctaid.x % 28 as mul.hi.u32 by 0x92492493, shr 4, x - 28*q
    body = """mov.u32 %r1, %ctaid.x;
mul.hi.u32 %r2, %r1, -1840700269;
shr.u32 %r3, %r2, 4;
mul.lo.s32 %r4, %r3, 28;
sub.s32 %r5, %r1, %r4;
ret;"""
    assert _value(body, "%r5") == ("ctaid.x % 28", 0, 27)


SIGNED = """mov.u32 %r1, %ctaid.x;
shl.b32 %r1, %r1, 2;
{div}
mul.lo.s32 %r8, %r7, {d};
sub.s32 %r9, %r1, %r8;
ret;"""


def test_signed_mulhi_with_the_sign_fix_up_divides_every_register_value() -> None:
    # flashinfer radix top-k: (4*r) % 3; 4*ctaid.x passes 2^31, so the register may be negative:
    # only the fix-up q + (q >>> 31) makes the truncating division exact over the whole s32 range
    div = "mul.hi.s32 %r2, %r1, 1431655766;\nshr.u32 %r3, %r2, 31;\nadd.s32 %r7, %r2, %r3;"
    assert _value(SIGNED.format(div=div, d=3), "%r9") == ("4*ctaid.x % 3", 0, 2)


def test_signed_mulhi_without_the_fix_up_of_a_wrapping_value_is_no_division() -> None:
    div = "mul.hi.s32 %r7, %r1, 1431655766;"
    name, _, hi = _value(SIGNED.format(div=div, d=3), "%r9")
    assert "%" not in name and hi > 2


def test_a_negative_signed_magic_with_its_add_back_is_a_division() -> None:
    # sdiv by 28: mulhi(x, 0x92492493 - 2^32) + x, >> 4 (arithmetic), sign fix-up
    div = "mul.hi.s32 %r2, %r1, -1840700269;\nadd.s32 %r3, %r2, %r1;\nshr.s32 %r4, %r3, 4;\n" \
          "shr.u32 %r5, %r4, 31;\nadd.s32 %r7, %r4, %r5;"  # fmt: skip
    assert _value(SIGNED.format(div=div, d=28), "%r9") == ("4*ctaid.x % 28", 0, 27)


def test_a_magic_one_below_the_right_one_is_no_division() -> None:
    div = "mul.hi.s32 %r2, %r1, 1431655765;\nshr.u32 %r3, %r2, 31;\nadd.s32 %r7, %r2, %r3;"
    assert "%" not in _value(SIGNED.format(div=div, d=3), "%r9")[0]


NARROW = """mov.u32 %r1, %tid.x;
and.b32 %r2, %r1, {mask};
mul.lo.s32 %r3, %r2, 86;
shr.u32 %r4, %r3, 8;
mul.lo.s32 %r5, %r4, 3;
sub.s32 %r6, %r2, %r5;
ret;"""


def test_a_shifted_exact_product_is_a_division_within_its_range_only() -> None:
    # an 8-bit x / 3 promoted to 16 bits: (86*x) >> 8 is x / 3 for x < 128, not at x = 128
    assert _value(NARROW.format(mask=127), "%r6")[1:] == (0, 2)
    assert _value(NARROW.format(mask=255), "%r6")[2] > 2


FLOOR_THEN_DIV = """mov.u32 %r1, %ctaid.x;
{x}
ld.param.u32 %r2, [k_p];
shr.s32 %r3, %r1, 31;
shr.u32 %r3, %r3, 29;
add.s32 %r4, %r1, %r3;
and.b32 %r5, %r4, -8;
setp.ne.b32 %p1, %r1, %r5;
setp.lt.s32 %p2, %r1, 0;
and.pred %p3, %p2, %p1;
selp.b32 %r6, -1, 0, %p3;
shr.s32 %r7, %r4, 3;
add.s32 %r7, %r7, %r6;
div.s32 %r8, %r7, %r2;
mul.lo.s32 %r9, %r8, %r2;
sub.s32 %r0, %r7, %r9;
ret;"""


def test_a_floor_correction_that_never_applies_leaves_a_non_negative_dividend() -> None:
    # flashinfer NVFP4 KV materialize: floor(row / 8) (the DSL's //, NVVM's select(x < 0 and inexact,
    # -1, 0) correction), then row - (row / page_size)*page_size by a runtime divisor: a remainder
    name, lo, hi = _value(FLOOR_THEN_DIV.format(x=""), "%r0")
    assert "% arg0" in name and lo == 0 and hi < 2**31 - 1
    assert _value(FLOOR_THEN_DIV.format(x=""), "%r6")[1:] == (0, 0)


def test_a_correction_whose_condition_can_hold_stays_the_union_of_its_arms() -> None:
    name, lo, hi = _value(FLOOR_THEN_DIV.format(x="sub.s32 %r1, %r1, 5;"), "%r6")
    assert (lo, hi) == (-1, 0)


def test_a_signed_remainder_of_a_dividend_that_may_be_negative_is_within_the_divisor() -> None:
    # FA4 varlen combine: idx (a scheduler join that may be negative) - (idx / seqlen)*seqlen with
    # div.s32 by a loaded seqlen: truncating, so in (-seqlen, seqlen), never past the i32 range
    body = """mov.u32 %r1, %ctaid.x;
ld.param.u32 %r2, [k_p];
ld.global.u32 %r3, [%rd1];
sub.s32 %r4, %r1, %r2;
mul.lo.s32 %r4, %r4, 65536;
div.{t}32 %r5, %r4, %r3;
mul.lo.s32 %r6, %r5, %r3;
sub.s32 %r7, %r4, %r6;
ret;"""
    name, lo, hi = _value(body.format(t="s"), "%r7")
    assert " % " in name and (lo, hi) == (-(2**31 - 2), 2**31 - 2)
    name, _, _ = _value(body.format(t="u"), "%r7")  # unsigned: a negative ideal dividend is a wrapped one
    assert " % " not in name
