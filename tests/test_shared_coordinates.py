"""A widened coordinate that feeds several addresses (irscan/analysis/coords.py, ``_either``): PTX
shares one ``cvt.s64.s32`` of FA4's head index between the O_partial load and the LSE store, each
multiplied by its own tensor's i64 stride.  Whichever access runs, in bounds the value is below that
tensor's i32 extent, so at most 2^31 - 2; a use that addresses no tensor leaves it unbounded."""

from __future__ import annotations

from typing import Any

from irscan.analysis import dataflow
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.frontend import ptx

DYN32, DYN64 = {"kind": "dynamic", "width": 32}, {"kind": "dynamic", "width": 64}
#: f32 (?,?):(1,?{i64}): ptr @0, shapes @8/12, stride[1] @16
UNIT = {"kind": "static", "value": 1}
LSE = {"type": '!cute.memref<f32, gmem, "(?,?):(1,?{i64})">', "dtype": "f32",
       "modes": [{"shape": DYN32, "stride": UNIT}, {"shape": DYN32, "stride": DYN64}]}  # fmt: skip

KERNEL = """.version 8.5
.target sm_90a
.address_size 64
.visible .entry k(.param .align 8 .b8 k_p0[24], .param .align 8 .b8 k_p1[24])
{{
.reg .b32 %r<4>;
.reg .b64 %rd<12>;
ld.param.u64 %rd1, [k_p0];
ld.param.u64 %rd2, [k_p0+16];
ld.param.u64 %rd3, [k_p1];
ld.param.u64 %rd4, [k_p1+16];
mov.u32 %r1, %ctaid.x;
mul.lo.s32 %r2, %r1, %r1;
cvt.s64.s32 %rd5, %r2;
mul.lo.s64 %rd6, %rd2, %rd5;
shl.b64 %rd7, %rd6, 2;
add.s64 %rd8, %rd1, %rd7;
ld.global.f32 %r3, [%rd8];
{second}
ret;
}}
"""
STORE = (
    "mul.lo.s64 %rd9, %rd4, %rd5;\nshl.b64 %rd10, %rd9, 2;\nadd.s64 %rd11, %rd3, %rd10;\nst.global.f32 [%rd11], %r3;"
)


def _bounds(second: str) -> list[Any]:
    module = ptx.parse_module(KERNEL.format(second=second), "t.ptx")
    fn = module.functions[0]
    rg = Ranges(dataflow.build(module, fn, reaching_definitions), Facts.of(fn.attrs), [LSE, LSE])
    (cvt,) = (o for o in fn.ops() if o.results[:1] == ("%rd5",))
    return [b for b in rg.bounds(rg.value(cvt.id), at=cvt.id) if "in bounds" in b.fact]


def test_a_coordinate_of_two_tensors_is_below_2_31_whichever_access_runs() -> None:
    (b,) = _bounds(STORE)
    assert (b.terms, b.const, b.tensor) == ((), 2**31 - 2, None)
    assert "arg0.shape[1]" in b.fact and "arg1.shape[1]" in b.fact


def test_one_use_that_addresses_no_tensor_leaves_it_unbounded() -> None:
    assert _bounds("add.s64 %rd9, %rd5, %rd4;\nst.global.f32 [%rd9], %r3;") == []
