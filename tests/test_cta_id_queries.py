"""A CTA id that cluster launch control hands out is one of the launched grid's CTAs (irscan/ir/isa.py).

MLIR ``nvvm.clusterlaunchcontrol.query.cancel query = get_first_cta_id_y`` and PTX
``clusterlaunchcontrol.query_cancel.get_first_ctaid::y.b32.b128`` read as the special register
``clc_ctaid.y``: ctaid.y's range, and the host grid's bound on ctaid, but never pinned by the launch.
"""

from __future__ import annotations

import pytest
from irbuild import ptx_kernel

from irscan.analysis import dataflow
from irscan.analysis.hostgrid import GridDim
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.frontend import mlir
from irscan.ir import Function, Kind, Module

MLIR = """module {
  llvm.func @k(%arg0: i32, %arg1: !llvm.ptr<3>) attributes {nvvm.kernel} {
    %0 = llvm.load %arg1 : !llvm.ptr<3> -> i128
    %1 = nvvm.clusterlaunchcontrol.query.cancel query = is_canceled, %0 : i1
    %2 = nvvm.clusterlaunchcontrol.query.cancel query = get_first_cta_id_x, %0 : i32
    %3 = nvvm.clusterlaunchcontrol.query.cancel query = get_first_cta_id_y, %0 : i32
    llvm.return
  }
}
"""

PTX = """
.reg .b128 %clc_handle;
ld.shared.b128 %clc_handle, [%r9];
clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p1, %clc_handle;
clusterlaunchcontrol.query_cancel.get_first_ctaid::x.b32.b128 %r1, %clc_handle;
clusterlaunchcontrol.query_cancel.get_first_ctaid::y.b32.b128 %r2, %clc_handle;
ret;
"""


def _mlir(full: bool) -> Function:
    return mlir.parse_module(MLIR, "t.mlir", full=full).functions[0]


def _ranges(fn: Function, ir: str, facts: Facts) -> Ranges:
    gr = dataflow.build(Module(ir=ir, path="t", functions=[fn]), fn, reaching_definitions)  # type: ignore[arg-type]
    return Ranges(gr, facts)


def _queries(fn: Function) -> list[tuple[Kind, str | None, int]]:
    return [(o.kind, o.attrs.get("sreg"), o.width) for o in fn.ops() if "clusterlaunchcontrol" in o.name]


@pytest.mark.parametrize("full", [False, True])
def test_mlir_cta_id_queries_are_special_registers(full: bool) -> None:
    kinds = _queries(_mlir(full))
    assert kinds[1:] == [(Kind.SREG, "clc_ctaid.x", 32), (Kind.SREG, "clc_ctaid.y", 32)]
    assert kinds[0][0] is not Kind.SREG  # is_canceled is no id


def test_ptx_cta_id_queries_are_special_registers() -> None:
    kinds = _queries(ptx_kernel(PTX))
    assert kinds[1:] == [(Kind.SREG, "clc_ctaid.x", 32), (Kind.SREG, "clc_ctaid.y", 32)]
    assert kinds[0][0] is not Kind.SREG


def _by_sreg(fn: Function, rg: Ranges, sreg: str) -> tuple[int, int, bool]:
    (op,) = (o for o in fn.ops() if o.attrs.get("sreg") == sreg)
    v = rg.value(op.id)
    (k, _), *_ = v.terms
    return rg.interval(v).lo, rg.interval(v).hi, rg.atoms[k].fixed


def test_cta_id_queries_range_as_ctaid_with_the_host_grid() -> None:
    fn = _mlir(False)
    # the host launches ceil(arg0 / 128) CTAs along x
    rg = _ranges(fn, "mlir", Facts(host_grid=(GridDim(0, 0, (), 128),)))
    assert _by_sreg(fn, rg, "clc_ctaid.y") == (0, 65534, False)
    (op,) = (o for o in fn.ops() if o.attrs.get("sreg") == "clc_ctaid.x")
    v = rg.value(op.id)
    assert rg.interval(v).hi == -(-(2**31 - 1) // 128) - 1
    assert [b.terms for b in rg.bounds(v.scale(128))] == [(("arg0", 1),)]  # 128*id <= arg0 - 1


def test_cta_id_queries_are_never_pinned_by_an_exact_grid() -> None:
    fn = ptx_kernel(PTX)
    rg = _ranges(fn, "ptx", Facts(grid=(4, 2, 1)))
    assert _by_sreg(fn, rg, "clc_ctaid.x") == (0, 3, False)
    assert _by_sreg(fn, rg, "clc_ctaid.y") == (0, 1, False)
