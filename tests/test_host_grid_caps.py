"""A host grid clamped to a constant (irscan/analysis/hostgrid.py): ``min(num_sms // 16, rows) * 16``
with num_sms a compile-time constant launches at most 128 blocks, whatever rows is; ``ctaid.x`` is then
below 128 (flashinfer's radix top-k, ``row_states + 770*(ctaid.x / 16)``).  ``max`` gives no cap."""

from __future__ import annotations

from typing import Any

import pytest
from irbuild import FnBuilder
from test_bounds import TENSOR, _kernel, _ranges, _val

from irscan.analysis.hostgrid import CONFIG_STRUCT, GridDim, module_grids
from irscan.ir import Kind


def _host(b: FnBuilder, grid: Any) -> None:
    """Host code storing grid(b, rows) into grid.x (grid.y = grid.z = 1), then the launch of @k."""
    b.function("host")
    a = b.param("%arg0", TENSOR)
    rows = b.op(Kind.EXTRACT, a, attrs={"path": (1, 0)})
    cfg = b.op(Kind.OPAQUE, b.const(1), width=0, name="llvm.alloca")
    for axis, v in enumerate((grid(b, rows), b.const(1), b.const(1))):
        at = b.op(Kind.GEP, cfg, width=0, attrs={"indices": [("const", 0), ("const", 0), ("const", axis)],
                                                 "elem_type": CONFIG_STRUCT + " i64, ptr, ptr, i32)>"})  # fmt: skip
        b.op(Kind.STORE, v, at, width=32, addr=1, result=False)
    b.op(Kind.LAUNCH, cfg, a, width=0, name="cuda.launch_ex", attrs={"kernel": "@kernels::@k"})


def _min_select(b: FnBuilder, rows: str, pred: str = "slt") -> str:
    eight = b.const(8)
    lt = b.op(Kind.ICMP, rows, eight, width=1, attrs={"pred": pred})
    return b.op(Kind.MUL, b.op(Kind.SELECT, lt, rows, eight), b.const(16))  # select(rows < 8, rows, 8) * 16


def _block_row(grid: Any) -> tuple[Any, Any, tuple[GridDim, ...]]:
    b, _ = _kernel()
    bid = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    row = b.op(Kind.MUL, b.op(Kind.DIV, bid, b.const(16), signed=False), b.const(770))
    _host(b, grid)
    grids = module_grids(b.module, None)["k"]
    return _ranges(b, grid=grids), row, grids


def test_a_grid_clamped_by_min_to_a_constant_caps_the_block_index() -> None:
    rg, row, grids = _block_row(_min_select)
    assert grids[0] == GridDim(0, -1, (), 1, 128)  # grid y, z = 1 are caps of 1 (test_host_grid_launches.py)
    assert rg.interval(_val(rg, row)).hi == 770 * 7
    assert GridDim.of_json(grids[0].as_json()) == grids[0]  # the PTX scan gets it through meta


def test_a_min_op_and_a_tiled_field_keep_both_bounds() -> None:
    def grid(b: FnBuilder, rows: str) -> str:  # min(ceil(rows / 4), 32): at most 32, and ceil(rows / 4)
        q = b.op(Kind.DIV, b.op(Kind.ADD, rows, b.const(3)), b.const(4), signed=True)
        return b.op(Kind.MIN, q, b.const(32))

    rg, _, grids = _block_row(grid)
    assert grids[0] == GridDim(0, 0, (1, 0), 4, 32)


def test_max_with_a_constant_is_no_cap() -> None:
    def grid(b: FnBuilder, rows: str) -> str:  # select(rows < 8, 8, rows): max, at least 8 blocks
        eight = b.const(8)
        return b.op(Kind.SELECT, b.op(Kind.ICMP, rows, eight, width=1, attrs={"pred": "slt"}), eight, rows)

    rg, row, grids = _block_row(grid)
    assert all(g.cap is None for g in grids if g.axis == 0)
    assert rg.interval(_val(rg, row)).hi > 770 * 7


def test_a_floor_divided_scalar_argument_bounds_the_block_index() -> None:
    """``grid = ((rows + 31) // 32, 1, 1)`` with ``rows`` an Int32 scalar argument (raw-pointer kernels):
    Python's floor division is the quotient or one less, so ``32*ctaid.x <= rows - 1``."""
    b = FnBuilder()
    b.param("%arg0", "i32")
    bid = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    row = b.op(Kind.ADD, b.op(Kind.MUL, bid, b.const(32)), b.const(31))
    b.function("host")
    rows = b.param("%arg0", "i32")
    num = b.op(Kind.ADD, rows, b.const(31))
    q = b.op(Kind.DIV, num, b.const(32), signed=True)
    inexact = b.op(Kind.ICMP, num, b.op(Kind.MUL, q, b.const(32)), width=1, attrs={"pred": "ne"})
    neg = b.op(Kind.ICMP, num, b.const(0), width=1, attrs={"pred": "slt"})
    floor = b.op(Kind.SELECT, b.op(Kind.AND, inexact, neg, width=1), b.op(Kind.ADD, q, b.const(-1)), q)
    cfg = b.op(Kind.OPAQUE, b.const(1), width=0, name="llvm.alloca")
    for axis, v in enumerate((floor, b.const(1), b.const(1))):
        at = b.op(Kind.GEP, cfg, width=0, attrs={"indices": [("const", 0), ("const", 0), ("const", axis)],
                                                 "elem_type": CONFIG_STRUCT + " i64, ptr, ptr, i32)>"})  # fmt: skip
        b.op(Kind.STORE, v, at, width=32, addr=1, result=False)
    b.op(Kind.LAUNCH, cfg, rows, width=0, name="cuda.launch_ex", attrs={"kernel": "@kernels::@k"})
    grids = module_grids(b.module, None)["k"]
    assert grids[0] == GridDim(0, 0, (), 32)
    rg = _ranges(b, grid=grids)
    assert rg.interval(_val(rg, row)).hi == 2**31 - 1  # ctaid.x <= 2^26 - 1
    assert [(x.terms, x.const) for x in rg.bounds(_val(rg, row))][0] == ((("arg0", 1),), 30)


@pytest.mark.parametrize("offsets", [(3,), (4, -1), (2, 1)])
def test_a_ceil_numerator_written_in_several_steps_bounds_the_block_index(offsets: tuple[int, ...]) -> None:
    """``(M + ROWS - 1) // ROWS`` on DSL integers is an add and a sub before the division (torch's
    register top-k): still ``ceil(M / 4)``, so ``4*ctaid.x <= M - 1``."""

    def grid(b: FnBuilder, rows: str) -> str:
        num = rows
        for c in offsets:
            num = b.op(Kind.ADD, num, b.const(c)) if c > 0 else b.op(Kind.SUB, num, b.const(-c))
        return b.op(Kind.DIV, num, b.const(4), signed=True)

    _, _, grids = _block_row(grid)
    assert grids[0] == GridDim(0, 0, (1, 0), 4)


def test_a_numerator_past_one_tile_is_no_ceil() -> None:
    """``(M + 4) // 4`` launches one block more than ceil(M / 4) when 4 divides M: no bound from it."""

    def grid(b: FnBuilder, rows: str) -> str:
        return b.op(Kind.DIV, b.op(Kind.SUB, b.op(Kind.ADD, rows, b.const(5)), b.const(1)), b.const(4), signed=True)

    _, _, grids = _block_row(grid)
    assert not [g for g in grids if g.axis == 0]


def test_a_constant_over_a_size_and_a_product_of_capped_sizes_cap_the_grid() -> None:
    """CUTLASS's elementwise_apply: ``m = min(ceil(rows / 64), 16)``, ``n = 16 // m``, grid ``m * n``: at
    most 16 * 16 blocks (a constant divided by a size of at least 1 is at most the constant)."""

    def grid(b: FnBuilder, rows: str) -> str:
        m = b.op(Kind.MIN, b.op(Kind.DIV, b.op(Kind.ADD, rows, b.const(63)), b.const(64), signed=True), b.const(16))
        return b.op(Kind.MUL, m, b.op(Kind.DIV, b.const(16), m, signed=True))

    rg, row, grids = _block_row(grid)
    assert grids[0].cap == 256
    assert rg.interval(_val(rg, row)).hi == 770 * 15


def test_a_stride_the_host_computes_as_a_constant_over_a_size_is_capped() -> None:
    """``stride = 256 * (64 // m)`` of a size m: at most 16,384 (hostfields.module_caps reads strides too)."""
    from irscan.analysis.hostfields import module_caps

    strided = "!llvm.struct<(ptr<1>, struct<(i32, i32)>)>"  # one dynamic extent, one dynamic stride
    b = FnBuilder()
    b.param("%arg0", strided)
    b.function("host")
    a = b.param("%arg0", strided)
    m = b.op(Kind.EXTRACT, a, attrs={"path": (1, 0)})
    stride = b.op(Kind.MUL, b.op(Kind.DIV, b.const(64), m, signed=True), b.const(256))
    view = b.op(Kind.INSERT, stride, b.op(Kind.INSERT, m, a, width=0, attrs={"path": (1, 0)}), width=0,
                attrs={"path": (1, 1)})  # fmt: skip
    b.op(Kind.LAUNCH, b.const(0), view, width=0, name="cuda.launch_ex", attrs={"kernel": "@kernels::@k"})
    assert module_caps(b.module, {})["k"][(0, (1, 1))] == 16384


def test_a_field_the_host_multiplies_from_a_grid_z_value_is_capped_by_the_grid_limit() -> None:
    """CUTLASS's MLA decode: ``split_kv`` CTAs along z and a workspace row stride ``split_kv*512``: a
    launch that runs has grid z <= 65,535, so the stride is at most 65,535*512 (hostlimits.py)."""
    from irscan.analysis.hostfields import module_caps

    strided = "!llvm.struct<(ptr<1>, struct<(i32, i32)>)>"
    b = FnBuilder()
    b.param("%arg0", strided)
    b.function("host")
    a = b.param("%arg0", strided)
    b.param("%arg1", "i32")
    splits = b.op(Kind.ARG, attrs={"param": 1})
    rows = b.op(Kind.EXTRACT, a, attrs={"path": (1, 0)})
    cfg = b.op(Kind.OPAQUE, b.const(1), width=0, name="llvm.alloca")
    for axis, v in enumerate((rows, b.const(1), splits)):
        at = b.op(Kind.GEP, cfg, width=0, attrs={"indices": [("const", 0), ("const", 0), ("const", axis)],
                                                 "elem_type": CONFIG_STRUCT + " i64, ptr, ptr, i32)>"})  # fmt: skip
        b.op(Kind.STORE, v, at, width=32, addr=1, result=False)
    stride = b.op(Kind.MUL, splits, b.const(512))
    view = b.op(Kind.INSERT, stride, b.op(Kind.INSERT, rows, a, width=0, attrs={"path": (1, 0)}), width=0,
                attrs={"path": (1, 1)})  # fmt: skip
    b.op(Kind.LAUNCH, cfg, view, width=0, name="cuda.launch_ex", attrs={"kernel": "@kernels::@k"})
    caps = module_caps(b.module, {})["k"]
    assert caps[(0, (1, 1))] == 65535 * 512
    assert (0, (1, 0)) not in caps  # grid x is no such limit
