"""An offset into a tensor whose 32-bit part holds only modes of static extent (irscan/analysis/coords.py,
``_mode_bound``): in bounds it is at most ``Σ (extent - 1)*stride`` over them, however the value was
computed.  FA4's ``((128,?),1):((1,?{i64}),128)`` LSE view: ``128*head_idx`` with head_idx a varlen
scheduler's decoded index indexes the mode of static extent 1, so in bounds it is 0 (plus < 128 of
mode 0); the mode of 64-bit dynamic stride is added in 64 bits and is not in it."""

from __future__ import annotations

from irbuild import FnBuilder
from test_view_coordinates import DYN32, TENSOR, _gep, _static

from irscan.analysis import dataflow
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.ir import Kind

LSE = {"dtype": "f32", "modes": [{"shape": _static(128), "stride": _static(1)},
                                 {"shape": DYN32, "stride": {"kind": "dynamic", "width": 64}},
                                 {"shape": _static(1), "stride": _static(128)}]}  # fmt: skip


def _found(product: bool) -> list[tuple[object, int]]:
    b = FnBuilder()
    a = b.param("%arg0", TENSOR)
    ptr = b.op(Kind.EXTRACT, a, width=0, attrs={"path": (0,)})
    head = b.op(Kind.LOAD, ptr, width=32, addr=0, space="global")  # a decoded index: unbounded
    by = b.op(Kind.LOAD, ptr, width=32, addr=0, space="global") if product else b.const(128)
    off = b.op(Kind.MUL, head, by)
    g = _gep(b, ptr, off)
    b.op(Kind.LOAD, g, width=32, addr=0, space="global")
    fn = b.module.functions[0]
    rg = Ranges(dataflow.build(b.module, fn, reaching_definitions), Facts.of(fn.attrs), [LSE])
    return [(x.terms, x.const) for x in rg.bounds(rg.value(int(off[1:])), at=int(g[1:])) if "in bounds" in x.fact]


def test_a_coordinate_of_a_mode_of_static_extent_one_is_bounded_by_the_static_offsets() -> None:
    assert _found(product=False) == [((), 127)]


def test_a_product_of_two_values_may_be_a_dynamic_stride_modes_offset_and_gets_no_static_bound() -> None:
    assert _found(product=True) == []  # row*stride[0] narrowed to i32 (NVIDIA/cutlass#3208) is not mode 2
