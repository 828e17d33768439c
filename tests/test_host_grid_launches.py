"""Every grid dimension the host stores, per launch (irscan/analysis/hostgrid.py): a launch constant
(``grid=[n, 1, 1]``) is a cap, so ``ctaid.y`` of a grid y of 1 is 0; and a host function launching two
kernels builds one config each, so neither kernel's grid is taken from the other's config."""

from __future__ import annotations

from irbuild import FnBuilder
from test_bounds import TENSOR, _ranges, _val

from irscan.analysis import dataflow
from irscan.analysis.hostfields import module_caps
from irscan.analysis.hostgrid import CONFIG_STRUCT, GridDim, module_grids
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.ir import Kind


def _launch(b: FnBuilder, kernel: str, grid: tuple[str, str, str], arg: str) -> None:
    """The DSL's launch: a config alloca whose grid fields are stored, its address stored into a
    one-pointer array, the array handed to cuda.launch_ex."""
    cfg = b.op(Kind.OPAQUE, b.const(1), width=0, name="llvm.alloca")
    for axis, v in enumerate(grid):
        at = b.op(Kind.GEP, cfg, width=0, attrs={"indices": [("const", 0), ("const", 0), ("const", axis)],
                                                 "elem_type": CONFIG_STRUCT + " i64, ptr, ptr, i32)>"})  # fmt: skip
        b.op(Kind.STORE, v, at, width=32, addr=1, result=False)
    arr = b.op(Kind.OPAQUE, b.const(1), width=0, name="llvm.alloca")
    slot = b.op(Kind.GEP, arr, width=0, attrs={"indices": [("const", 0)]})
    b.op(Kind.STORE, cfg, slot, width=64, addr=1, result=False)
    b.op(Kind.LAUNCH, arr, arg, width=0, name="cuda.launch_ex", attrs={"kernel": f"@kernels::@{kernel}"})


def _module() -> tuple[FnBuilder, str, str]:
    """Kernel k reads 32768*ctaid.y; k2 is launched second, from a later block, with grid.x = rows."""
    b = FnBuilder()
    b.param("%arg0", TENSOR)
    row = b.op(Kind.MUL, b.op(Kind.SREG, attrs={"sreg": "ctaid.y"}), b.const(32768))
    b.function("k2", kernel=True)
    b.param("%arg0", TENSOR)
    bid = b.op(Kind.SREG, attrs={"sreg": "ctaid.x"})
    b.function("host")
    a = b.param("%arg0", TENSOR)
    rows = b.op(Kind.EXTRACT, a, attrs={"path": (1, 0)})
    _launch(b, "k", (b.const(1), b.const(1), b.const(1)), a)
    b.branch(("next", ()))
    b.block("next")
    _launch(b, "k2", (rows, b.const(1), b.const(1)), a)
    return b, row, bid


def test_a_constant_grid_dimension_caps_its_block_index() -> None:
    b, row, _ = _module()
    grids = module_grids(b.module, None)
    assert grids["k"] == tuple(GridDim(axis, -1, (), 1, 1) for axis in range(3))
    rg = _ranges(b, grid=grids["k"])
    assert (rg.interval(_val(rg, row)).lo, rg.interval(_val(rg, row)).hi) == (0, 0)  # grid y = 1: ctaid.y = 0
    assert all(rg.atoms[k].fixed for k, _ in _val(rg, row).terms)  # fixed by the launch, not left open


def test_each_launch_takes_the_grid_of_its_own_config() -> None:
    b, _, _ = _module()
    grids = module_grids(b.module, None)
    assert grids["k2"][0] == GridDim(0, 0, (1, 0), 1)  # rows, not the first launch's constant 1
    assert [g.cap for g in grids["k2"]] == [None, 1, 1]


def test_a_grid_that_is_a_kernel_field_bounds_ctaid_though_its_dividend_is_none() -> None:
    """flashinfer's SDSA scorer: ``jobs = query.shape[0] // 2`` is the grid and the extent of the TMA
    tensor the kernel gets (the query itself is no kernel argument): ctaid.x < that field; and the
    field, a quotient of a 32-bit host value by 2, is at most 2^30 (hostfields.module_caps), so
    ``2*ctaid.x`` never reaches 2^31."""
    b = FnBuilder()
    b.param("%arg0", TENSOR)
    twice = b.op(Kind.MUL, b.op(Kind.SREG, attrs={"sreg": "ctaid.x"}), b.const(2))
    b.function("host")
    q = b.param("%arg0", TENSOR)
    jobs = b.op(Kind.DIV, b.op(Kind.EXTRACT, q, attrs={"path": (1, 0)}), b.const(2), attrs={"signed": True})
    view = b.op(Kind.INSERT, jobs, b.op(Kind.OPAQUE, width=0, name="llvm.mlir.undef"), width=0,
                attrs={"path": (1, 0)})  # fmt: skip
    _launch(b, "k", (jobs, b.const(1), b.const(1)), view)
    grids = module_grids(b.module, None)
    assert grids["k"][0] == GridDim(0, 0, (1, 0), 1)  # the field itself, tile 1
    caps = module_caps(b.module, None)
    assert caps == {"k": {(0, (1, 0)): 2**30}}
    rg = _ranges(b, grid=grids["k"])
    assert rg.interval(_val(rg, twice)).hi > 2**31  # without the cap the field is any i32
    fn = b.module.functions[0]
    facts = Facts.of(fn.attrs, None, grids["k"], None, None, None, caps["k"])
    rg = Ranges(dataflow.build(b.module, fn, reaching_definitions), facts)
    assert rg.interval(_val(rg, twice)).hi == 2 * (2**30 - 1)
