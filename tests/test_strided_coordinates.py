"""A tile scheduler's coordinate: an unsigned division of ``ctaid.x`` (mul.hi by a multiplier, then
shifts: irscan/analysis/divmod.py), widened and multiplied by its tensor's 64-bit stride of one mode
(irscan/analysis/coords.py), as FA4 stores its LSE at ``[None, head, batch]``.

- the division's quotient is at most its dividend whatever the multiplier (a field, or a select of
  two divisors' multipliers), so its interval is capped at the dividend's;
- the widened value multiplied by the tensor's own dynamic stride of mode m is that mode's
  coordinate: in bounds, below ``argK.shape[m]`` (rule (a)), however it was computed.
"""

from __future__ import annotations

from typing import Any

from irscan.analysis import dataflow
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.checks import reporting
from irscan.frontend import ptx
from irscan.ir import Function

DYN32, DYN64 = {"kind": "dynamic", "width": 32}, {"kind": "dynamic", "width": 64}
#: f32 (?,?,?):(1,?{i64},?{i64}): ptr @0, shape @8/12/16, stride[1] @24, stride[2] @32
LSE = {
    "type": '!cute.memref<f32, gmem, "(?,?,?):(1,?{i64},?{i64})">',
    "dtype": "f32",
    "modes": [{"shape": DYN32, "stride": {"kind": "static", "value": 1}}]
    + [{"shape": DYN32, "stride": DYN64} for _ in range(2)],
}

KERNEL = """.version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .align 8 .b8 k_p0[40], .param .align 8 .b8 k_p1[40], .param .u32 k_p2,
                  .param .u32 k_p3, .param .u8 k_p4, .param .u8 k_p5, .param .u32 k_p6)
{{
.reg .pred %p<4>;
.reg .b16 %rs<4>;
.reg .b32 %r<20>;
.reg .b64 %rd<10>;
ld.param.u64 %rd1, [k_p0];
ld.param.u64 %rd2, [{stride}];
ld.param.u32 %r1, [k_p2];
ld.param.u32 %r2, [k_p3];
ld.param.u8 %rs1, [k_p4];
ld.param.u8 %rs2, [k_p5];
ld.param.u32 %r9, [k_p6];
cvt.u32.u16 %r3, %rs1;
cvt.u32.u16 %r4, %rs2;
mov.u32 %r5, %ctaid.x;
setp.lt.s32 %p1, %r5, %r9;
selp.b32 %r6, %r1, %r2, %p1;
mul.hi.u32 %r7, %r6, %r5;
sub.s32 %r8, %r5, %r7;
shr.u32 %r10, %r8, %r3;
add.s32 %r11, %r10, %r7;
shr.u32 %r12, %r11, %r4;
cvt.s64.s32 %rd3, %r12;
mul.lo.s64 %rd4, %rd2, %rd3;
shl.b64 %rd5, %rd4, {shift};
add.s64 %rd6, %rd1, %rd5;
st.global.b32 [%rd6], %r5;
ret;
}}
"""


def _kernel(stride: str = "k_p0+32", shift: int = 2) -> tuple[Ranges, Function]:
    module = ptx.parse_module(KERNEL.format(stride=stride, shift=shift), "t.ptx")
    fn = module.functions[0]
    gr = dataflow.build(module, fn, reaching_definitions)
    meta: list[dict[str, Any]] = [LSE, LSE, {"type": "i32"}, {"type": "i32"}, {}, {}, {"type": "i32"}]
    return Ranges(gr, Facts.of(fn.attrs), meta), fn


def _def(fn: Function, reg: str) -> int:
    (op,) = (o for o in fn.ops() if o.results[:1] == (reg,))
    return op.id


def test_a_division_by_a_selected_multiplier_is_at_most_its_dividend() -> None:
    rg, fn = _kernel()
    q = rg.value(_def(fn, "%r12"))
    assert rg.interval(q).hi == 2**31 - 1  # ctaid.x's top, not the shift's 2^32 - 1
    assert any("unsigned division by a multiplier" in u.fact for u in rg.uppers[q.terms[0][0]])


def test_the_coordinate_a_tensors_64_bit_stride_multiplies_is_below_that_modes_extent() -> None:
    rg, fn = _kernel()
    cvt = _def(fn, "%rd3")
    (b,) = [b for b in rg.bounds(rg.value(_def(fn, "%r12")), at=cvt) if b.tensor is not None]
    assert (b.terms, b.const, b.i32, b.tensor, b.modes) == ((("arg0.shape[2]", 1),), -1, True, 0, (2,))


def test_a_stride_of_another_tensor_or_a_scale_that_is_not_the_element_is_no_coordinate() -> None:
    for kw in ({"stride": "k_p1+32"}, {"shift": 3}):
        rg, fn = _kernel(**kw)
        cvt = _def(fn, "%rd3")
        assert [b for b in rg.bounds(rg.value(_def(fn, "%r12")), at=cvt) if b.tensor is not None] == []


def test_a_mode_of_i64_extent_gives_no_rule_a_bound_but_names_the_tensor_rule_b_weighs() -> None:
    """FlashInfer's KDA output ``out[0, token, head, d]`` on (1,?{i64},?{i64},128): the token is below
    an i64 extent, which bounds nothing below 2^31; but at the wrap that extent exceeds 2^31, and the
    tensor then holds 2^31 slices of its static modes (rule (b) weighs them)."""
    wide = {**LSE, "modes": [{"shape": {"kind": "static", "value": 128}, "stride": {"kind": "static", "value": 1}},
                             {"shape": DYN32, "stride": DYN64}, {"shape": DYN64, "stride": DYN64}]}  # fmt: skip
    rg, fn = _kernel()
    rg.meta_args[0] = wide
    cvt = _def(fn, "%rd3")
    (b,) = [b for b in rg.bounds(rg.value(_def(fn, "%r12")), at=cvt) if b.tensor is not None]
    assert (b.terms, b.const, b.i32, b.tensor, b.modes) == ((("arg0.shape[2]", 1),), -1, False, 0, (2,))
    assert reporting.rule_a(b, 2**31 - 1) is None
    need = reporting.rule_b_need(rg, b, 2**31)
    assert need is not None and need.bytes == 2**31 * 128 * 4
