"""PTX's ``mad.lo d, a, b, a`` is ``a*(b + 1)``: the product of a stride and a coordinate plus one, as the
MLIR twin writes it (irscan/analysis/ranges.py), so a rule that reads a product's factors (a coordinate
times its tensor's stride, checks/reporting.py rule (a)) sees the same product in both IRs."""

from __future__ import annotations

import pytest
from irbuild import ptx_kernel

from irscan.analysis import dataflow
from irscan.analysis.intervals import Affine
from irscan.analysis.ranges import Facts, Ranges
from irscan.analysis.reaching import reaching_definitions
from irscan.ir import Module

BODY = """
ld.param.u32 %r1, [k_p];
mov.u32 %r2, %ctaid.x;
{mad}
ret;
"""


def _value(mad: str) -> tuple[Ranges, Affine]:
    fn = ptx_kernel(BODY.format(mad=mad))
    gr = dataflow.build(Module(ir="ptx", path="t.ptx", functions=[fn]), fn, reaching_definitions)
    rg = Ranges(gr, Facts.of(fn.attrs))
    (op,) = (o for o in fn.ops() if o.results[:1] == ("%r3",))
    return rg, rg.value(op.id)


@pytest.mark.parametrize("mad", ["mad.lo.s32 %r3, %r1, %r2, %r1;", "mad.lo.s32 %r3, %r2, %r1, %r1;"])
def test_a_product_plus_one_factor_is_one_product(mad: str) -> None:
    rg, v = _value(mad)
    assert len(v.terms) == 1 and v.terms[0][1] == 1 and not v.const
    factors = rg.atoms[v.terms[0][0]].factors
    assert factors is not None and {rg.name(f) for f in factors} == {"arg0", "ctaid.x + 1"}


def test_a_product_plus_another_value_stays_a_sum() -> None:
    rg, v = _value("mov.u32 %r4, %tid.x;\nmad.lo.s32 %r3, %r1, %r2, %r4;")
    assert len(v.terms) == 2
