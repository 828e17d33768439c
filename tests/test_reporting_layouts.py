"""The reporting rule's in-bounds facts read off a tensor's layout (README, "What is reported"):

- a fully static layout holds its cosize elements: an access in bounds is less than that far into it,
  so a wrap that needs the access farther is unreachable (and the tensor is never sized by the
  threshold, as a dynamic one is);
- ``x * argK.stride[m]`` into a one-dimensional tensor is its coordinate times its stride: below
  2^31 - 1 for a compact tensor, held back with that assumption in the reason; a tensor of several
  real modes is not (a row index times a row stride is the bug class itself);
- a value computed from a stride of the tensor it addresses (or a truncation of one of its 64-bit
  fields) is an offset the kernel builds over the pointer, not a coordinate of one mode: rule (a)'s
  "a coordinate of mode m is below its extent" does not hold it back.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_reporting import ROWS, _row_kernel, _run

from irscan import checks
from irscan.analysis import dataflow
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.checks import memory
from irscan.checks.reporting import finish
from irscan.findings import Finding
from irscan.frontend import ptx

DYN32, DYN64 = {"kind": "dynamic", "width": 32}, {"kind": "dynamic", "width": 64}


def _static(shape: tuple[int, ...], stride: tuple[int, ...], dtype: str = "bf16") -> dict[str, Any]:
    modes = [{"shape": {"kind": "static", "value": s}, "stride": {"kind": "static", "value": d}}
             for s, d in zip(shape, stride, strict=True)]  # fmt: skip
    layout = f"({','.join(map(str, shape))}):({','.join(map(str, stride))})"
    return {"dtype": dtype, "layout": layout, "modes": modes}


def test_a_static_layout_bounds_an_access_in_bounds_by_its_cosize() -> None:
    """``row_states[64*ctaid.x + tid.x]`` into a static (8, 770) bf16 tensor: in bounds the access is
    below 6,160 elements, so the 4.3 GB the wrap needs is an access out of bounds."""
    gr, rg = _row_kernel(row_stride=1)
    rg.meta_args[0] = _static((8, 770), (770, 1))
    f = _run(gr, rg)
    assert f.rule_suppressed == (
        "(a) in bounds of a static layout: arg0 is (8,770):(770,1), 6,160 elements (12,320 bytes), so an access "
        "in bounds is below that, but the wrap needs 4.3 GB into it (the access is 2 byte(s) per unit of the "
        "wrapping value)"
    )
    _, held = finish([f])
    assert held == [f]  # shown by --all with its reason


@pytest.mark.parametrize("extent", [2**31 - 1, 2**32])
def test_a_placeholder_extent_over_a_raw_pointer_bounds_nothing(extent: int) -> None:
    """cudnn's CSA compressor wraps raw pointers as ``make_layout((1 << 31) - 1)`` ("int32 offsets, no
    bounds checks"): in bounds of that layout proves nothing about the buffer behind the pointer, so
    neither the static-layout rule nor the static-extent coordinate bound holds the wrap back."""
    gr, rg = _row_kernel(row_stride=1)
    rg.meta_args[0] = _static((extent,), (1,))
    f = _run(gr, rg)
    assert f.rule_suppressed is None
    assert memory.static_cosize(rg.meta_args[0]) is None
    assert memory.static_cosize(_static((2**31 - 2,), (1,))) == 2**31 - 2  # a real (if large) extent


def test_a_dynamic_extent_counts_at_its_layout_divisibility() -> None:
    """Sizing a tensor at a threshold: its other dynamic modes hold at least what ``div=`` says (a
    multiple of 128 that is not 0, or the tensor were empty), not 1."""
    assert memory.least_extent({"kind": "dynamic", "width": 32, "text": "?{div=128}"}) == 128
    assert memory.least_extent({"kind": "dynamic", "width": 64, "text": "?{i64}"}) == 1
    assert memory.least_extent({"kind": "static", "value": 7, "text": "7"}) == 7


def test_a_static_layout_that_holds_the_wrap_is_still_weighed() -> None:
    gr, rg = _row_kernel(row_stride=1)
    rg.meta_args[0] = _static((2**20, 4096), (4096, 1))  # 2^32 bf16 elements: the wrap is inside it
    f = _run(gr, rg)
    assert f.rule_suppressed is None
    assert memory.static_cosize(rg.meta_args[0]) == 2**32
    assert memory.static_cosize(ROWS) is None  # a dynamic extent: sized by the threshold instead
    assert memory.static_cosize(_static((4, 8), (-8, 1))) == 8  # a negative stride reaches below the pointer


#: ``t[ctaid.x]`` of a tensor whose stride is a dynamic i32 (ptr @0, then its dynamic leaves: shape
#: @8, stride @12, or for two modes shapes @8/@12 and the row stride @16)
#: a kernel of one 24-byte tensor parameter, its pointer in %rd1 (the fixtures below add their bodies)
HEADER = """.version 8.5
.target sm_100a
.address_size 64
.visible .entry k(.param .align 8 .b8 k_p0[24])
{
.reg .b16 %rs<2>;
.reg .b32 %r<8>;
.reg .b64 %rd<8>;
ld.param.u64 %rd1, [k_p0];
"""
ONE_DIM = (
    HEADER
    + """ld.param.u32 %r1, [k_p0+{stride}];
mov.u32 %r2, %ctaid.x;
mul.lo.s32 %r3, %r2, %r1;
mul.wide.s32 %rd2, %r3, 4;
add.s64 %rd3, %rd1, %rd2;
ld.global.u32 %r4, [%rd3];
st.global.u32 [%rd3+4], %r4;
ret;
}
"""
)


def _scan(text: str, meta: list[dict[str, Any]]) -> list[Finding]:
    module = ptx.parse_module(text, "t.ptx")
    fn = module.functions[0]
    gr = dataflow.build(module, fn, reaching_definitions)
    return checks.run(gr, Ranges(gr, Facts.of(fn.attrs), meta), checks.Context("k", "t.ptx"))


@pytest.mark.parametrize(
    ("modes", "stride", "mode", "held_back"),
    [
        ([{"shape": DYN32, "stride": DYN32}], 12, 0, True),  # (?):(?): mContextLens[i]
        ([{"shape": {"kind": "static", "value": 1}, "stride": {"kind": "static", "value": 0}},
          {"shape": DYN32, "stride": DYN32}], 12, 1, True),  # (1,?):(0,?): one real mode
        ([{"shape": DYN32, "stride": DYN32}, {"shape": DYN32, "stride": {"kind": "static", "value": 1}}],
         16, 0, False),  # (?,?):(?,1): a row index times the row stride
        ([{"shape": DYN64, "stride": DYN32}], 16, 0, False),  # an i64 extent: the coordinate may pass 2^31
    ],
)  # fmt: skip
def test_a_coordinate_of_a_one_dimensional_tensor_times_its_stride(
    modes: list[dict[str, Any]], stride: int, mode: int, held_back: bool
) -> None:
    meta = [{"type": "!cute.memref<i32, gmem>", "dtype": "i32", "layout": "?", "modes": modes}]
    (f,) = _scan(ONE_DIM.replace("{stride}", str(stride)), meta)
    assert f.expression.endswith(f"*arg0.stride[{mode}]")
    if held_back:
        assert f.rule_suppressed == (
            f"(a) a coordinate of a one-dimensional tensor: a compact arg0 keeps it below arg0.shape[{mode}]; "
            "it wraps only for a strided view spanning >= 2^31 elements"
        )
    else:
        assert f.rule_suppressed is None


#: ``out[q*stride0 + tid.x]`` through the kernel's own flat view of a (?,?):(?{i64},1) f32 tensor (ptr
#: @0, shapes @8/@12, the row stride @16): the row offset is joined from a branch, so the value's terms
#: do not show the stride; it is an i32 truncation of the tensor's own 64-bit row stride
FLAT = """.version 8.5
.target sm_100a
.address_size 64
.visible .entry k(.param .align 8 .b8 k_p0[24], .param .u32 k_p1, .param .u64 k_p2)
{{
.reg .pred %p<4>;
.reg .b32 %r<12>;
.reg .f32 %f<4>;
.reg .b64 %rd<8>;
ld.param.u64 %rd1, [k_p0];
ld.param.u64 %rd2, [{field}];
ld.param.u32 %r9, [k_p1];
cvt.u32.u64 %r1, %rd2;
mov.u32 %r2, %ctaid.x;
mov.u32 %r3, %tid.x;
setp.lt.u32 %p1, %r2, %r9;
mov.u32 %r4, 0;
@%p1 bra $L1;
mul.lo.s32 %r4, %r2, %r1;
$L1:
add.s32 %r5, %r4, %r3;
setp.lt.s32 %p2, %r3, 64;
@%p2 bra $L2;
ret;
$L2:
mul.wide.s32 %rd3, %r5, 4;
add.s64 %rd4, %rd1, %rd3;
mov.f32 %f1, 0f3F800000;
st.global.f32 [%rd4], %f1;
ret;
}}
"""
FLAT_META: list[dict[str, Any]] = [
    {"type": "!cute.memref<f32, gmem>", "dtype": "f32", "layout": "(?,?):(?{i64},1)",
     "modes": [{"shape": DYN32, "stride": DYN64}, {"shape": DYN32, "stride": {"kind": "static", "value": 1}}]},
    {"type": "i32"},
    {"type": "i64"},
]  # fmt: skip


@pytest.mark.parametrize("field", ["k_p0+16", "k_p2"])
def test_a_value_computed_from_its_tensors_stride_is_an_offset_not_a_coordinate(field: str) -> None:
    """From arg0's own row stride the sum is an offset (reported); from a scalar argument it is still
    read as a coordinate of mode 1 (stride 1), below arg0.shape[1] in bounds (held back)."""
    (f,) = _scan(FLAT.format(field=field), FLAT_META)
    if field == "k_p2":
        assert f.rule_suppressed is not None and "a coordinate of mode 1 of arg0 (stride 1)" in f.rule_suppressed
        return
    assert f.rule_suppressed is None
    assert any(x.endswith("not a coordinate, the value is computed from a stride of arg0") for x in f.facts)


#: ``k_scale[head*k_scale.shape[1] + slot]`` (flashinfer's sage scales) on the same (?,?):(?{i64},1) f32
#: tensor: a flat index over both modes that the kernel builds from the tensor's own extent
OWN_EXTENT = """.version 8.5
.target sm_100a
.address_size 64
.visible .entry k(.param .align 8 .b8 k_p0[24], .param .u32 k_p1, .param .u64 k_p2)
{{
.reg .b32 %r<12>;
.reg .f32 %f<4>;
.reg .b64 %rd<8>;
ld.param.u64 %rd1, [k_p0];
ld.param.u32 %r1, [{field}];
mov.u32 %r2, %ctaid.x;
mov.u32 %r3, %tid.x;
mul.lo.s32 %r4, %r2, %r1;
add.s32 %r5, %r4, %r3;
mul.wide.s32 %rd3, %r5, 4;
add.s64 %rd4, %rd1, %rd3;
mov.f32 %f1, 0f3F800000;
st.global.f32 [%rd4], %f1;
ret;
}}
"""


@pytest.mark.parametrize("field", ["k_p0+12", "k_p1"])
def test_a_value_that_multiplies_its_tensors_own_extent_is_a_flat_index_not_a_coordinate(field: str) -> None:
    """``ctaid.x * arg0.shape[1] + tid.x`` into arg0 spans both modes: the in-bounds bound on mode 1's
    coordinate does not hold it (reported); times a scalar argument it is still read as mode 1's
    coordinate (held back)."""
    (f,) = _scan(OWN_EXTENT.format(field=field), FLAT_META)
    if field == "k_p1":
        assert f.rule_suppressed is not None and "a coordinate of mode 1 of arg0 (stride 1)" in f.rule_suppressed
        return
    assert f.rule_suppressed is None
    assert any(x.endswith("not a coordinate, the value multiplies an extent of arg0") for x in f.facts)


#: ``x[row, 4*ctaid.x]`` of a bf16 tensor (?,N):(?,1): the 32-bit value is the column, and the row's
#: part of the offset (a 64-bit stride field) is added in 64 bits
COLUMN = (
    HEADER
    + """mov.u32 %r2, %ctaid.x;
shl.b32 %r3, %r2, 2;
mul.wide.s32 %rd2, %r3, 2;
add.s64 %rd3, %rd1, %rd2;
ld.global.u16 %rs1, [%rd3];
ret;
}
"""
)


@pytest.mark.parametrize(("extent", "held_back"), [(151_936, True), (2**31 - 1, False), (4, False)])
def test_a_coordinate_of_a_mode_of_static_extent_is_below_it(extent: int, held_back: bool) -> None:
    """quack's cross entropy reads ``mX[row, target]`` over (?,151936):(?,1) with ``target`` an Int32
    of a loaded class index: in bounds the column is below 151,936, whatever the row stride.  The
    placeholder 2^31 - 1 of a view over a raw pointer bounds nothing, and ``4*ctaid.x`` is no
    coordinate of a mode of extent 4 (a row flattened by hand into the column)."""
    modes = [{"shape": DYN64, "stride": DYN64}, {"shape": {"kind": "static", "value": extent},
                                                 "stride": {"kind": "static", "value": 1}}]  # fmt: skip
    meta = [{"type": "!cute.memref<bf16, gmem>", "dtype": "bf16", "layout": f"(?,{extent}):(?,1)", "modes": modes}]
    (f,) = _scan(COLUMN, meta)
    if held_back:
        assert f.rule_suppressed == (
            "(a) it never wraps: it indexes mode 1 of arg0 (stride 1, static extent 151,936), so an access in "
            "bounds keeps it below 151,936"
        )
    else:
        _, held = finish([f])
        assert f.rule_suppressed is None and not held
