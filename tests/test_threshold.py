"""Thresholds name an input a user knows (issue #8, item 4): a PTX loop's counter by its bound, and
values assembled with ``or``/``and`` carried back to the input they come from."""

from __future__ import annotations

from irbuild import ptx_kernel

from irscan import checks
from irscan.analysis import dataflow
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.findings import Finding
from irscan.ir import Module

#: a grid-stride loop over rows (flashinfer's quantisation kernels): the row index starts at ctaid.x,
#: steps by nctaid.x and runs while it is below the row count (the kernel's first parameter)
GRID_STRIDE = """
ld.param.u32 %r5, [k_p];
mov.u32 %r1, %ctaid.x;
mov.u32 %r2, %nctaid.x;
{init}
setp.ge.s32 %p1, %r6, %r5;
@%p1 bra DONE;
LOOP:
shl.b32 %r7, %r6, 12;
mul.wide.s32 %rd2, %r7, 2;
ld.param.u64 %rd1, [k_p];
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r7;
{step}
setp.lt.s32 %p2, %r6, %r5;
@%p2 bra LOOP;
DONE:
ret;
"""

#: a load of the kernel's first pointer at a 2-byte element offset held in ``reg``, then the end
LOAD_THROUGH = """
mul.wide.s32 %rd2, {reg}, 2;
ld.param.u64 %rd1, [k_p];
add.s64 %rd3, %rd1, %rd2;
ld.global.u32 %r6, [%rd3];
ret;
"""


def _findings(body: str) -> list[Finding]:
    fn = ptx_kernel(body)
    gr = dataflow.build(Module(ir="ptx", path="t.ptx", functions=[fn]), fn, reaching_definitions)
    return checks.run(gr, Ranges(gr, Facts.of(fn.attrs), []), checks.Context("k", "t.ptx"))


def test_a_ptx_loop_counter_is_named_by_its_bound() -> None:
    body = GRID_STRIDE.format(init="mov.u32 %r6, %r1;", step="add.s32 %r6, %r6, %r2;")
    (f,) = _findings(body)
    assert f.wraps_when["input"] == "loop counter (< arg0)"
    assert f.wraps_when["threshold"] == 524288  # 4096 * 524288 = 2^31


def test_a_counter_the_loop_compares_as_a_multiple_of_its_step_variable_is_named_too() -> None:
    # the loop steps %r9 and compares (and indexes with) %r6 = 4 * %r9
    body = GRID_STRIDE.format(
        init="mov.u32 %r9, %r1;\nshl.b32 %r6, %r9, 2;", step="add.s32 %r9, %r9, %r2;\nshl.b32 %r6, %r9, 2;"
    )
    (f,) = _findings(body)
    assert f.wraps_when["input"] == "loop counter (< arg0)"
    assert f.wraps_when["threshold"] == 524288


def test_a_loop_that_compares_its_bound_first_names_the_counter_too() -> None:
    # ``while B > i`` (flashinfer radix top-k's row loop: setp.gt.s32 %p, %r4, %r1015)
    body = GRID_STRIDE.format(init="mov.u32 %r6, %r1;", step="add.s32 %r6, %r6, %r2;").replace(
        "setp.lt.s32 %p2, %r6, %r5;", "setp.gt.s32 %p2, %r5, %r6;"
    )
    (f,) = _findings(body)
    assert f.wraps_when["input"] == "loop counter (< arg0)"


def test_a_register_without_a_bounding_compare_is_not_called_a_loop_counter() -> None:
    body = GRID_STRIDE.format(init="mov.u32 %r6, %r1;", step="add.s32 %r6, %r6, %r2;").replace(
        "setp.lt.s32 %p2, %r6, %r5;", "setp.ne.s32 %p2, %r2, %r5;"
    )
    (f,) = _findings(body)
    assert f.wraps_when["input"] is None
    assert f.wraps_when["text"].startswith("no single-input threshold: ")


def test_an_or_of_disjoint_bits_is_carried_back_to_its_input() -> None:
    # (4096*ctaid.x + (16*tid.x & 3968)) | (16*tid.x & 112) (flashinfer's rmsnorm_sigmoid_gate row view):
    # the range analysis keeps the or as a value of its own
    body = """
mov.u32 %r1, %ctaid.x;
mov.u32 %r2, %tid.x;
shl.b32 %r3, %r1, 12;
shl.b32 %r7, %r2, 4;
and.b32 %r8, %r7, 3968;
add.s32 %r9, %r3, %r8;
and.b32 %r4, %r7, 112;
or.b32 %r5, %r9, %r4;
"""
    (f,) = _findings(body + LOAD_THROUGH.format(reg="%r5"))
    assert f.wraps_when["input"] == "ctaid.x"
    # the or reaches 2^31 only if 4096*x + 3968 >= 2^31 - 112: first at x = 524288 (a necessary
    # condition: the or is at most the sum of its operands), so not called exact
    assert f.wraps_when["threshold"] == 524288
    assert f.wraps_when["exact"] is False


def test_a_product_of_two_free_inputs_says_which_product_must_reach_the_limit() -> None:
    # a page index loaded from a block table (clamped to the page count less one) times the cache's
    # page stride (flashinfer's paged MQA logits): no single input decides it, the product does
    body = """
ld.param.u64 %rd4, [k_p];
ld.global.u32 %r1, [%rd4];
ld.param.u32 %r2, [k_p+8];
ld.param.u32 %r4, [k_p+12];
add.s32 %r5, %r4, -1;
min.s32 %r7, %r1, %r5;
mul.lo.s32 %r3, %r7, %r2;
"""
    (f,) = _findings(body + LOAD_THROUGH.format(reg="%r3"))
    assert f.wraps_when["input"] is None
    assert f.wraps_when["text"] == (
        "no single-input threshold: the value (a product of free inputs) wraps when "
        "(min(load(arg0), arg0+12 - 1)) * arg0+8 >= 2,147,483,648, the rest at its largest"
    )
