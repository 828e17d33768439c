"""PTX guards (irscan/analysis/guards.py) through a negated predicate and across blocks: the DSL's
``if row < rows and col < cols`` is ``and.pred %p1, ..``, ``not.pred %p10, %p1``, ``@%p10 bra`` out,
and a second access under the same condition branches on ``%p10`` again from a later block, where
no op of its own writes it (b12x vision.py:102, held back in MLIR by the same guard)."""

from __future__ import annotations

import pytest
from test_reporting_layouts import _scan

GUARDED = """.version 8.5
.target sm_100a
.address_size 64
.visible .entry k(.param .u32 k_p0, .param .u64 k_p1)
{{
.reg .pred %p<4>;
.reg .b32 %r<8>;
.reg .b64 %rd<8>;
ld.param.u32 %r1, [k_p0];
ld.param.u64 %rd1, [k_p1];
mov.u32 %r2, %ctaid.x;
mov.u32 %r3, %tid.x;
mul.lo.s32 %r4, %r2, 1024;
add.s32 %r5, %r4, %r3;
setp.lt.s32 %p1, %r5, %r1;
{negate}
@%p2 bra $L__BB0_2;
st.global.u32 [%rd1], %r3;
$L__BB0_2:
@%p2 bra $L__BB0_4;
mul.wide.s32 %rd2, %r5, 4;
add.s64 %rd3, %rd1, %rd2;
ld.global.u32 %r6, [%rd3];
st.global.u32 [%rd1+4], %r6;
$L__BB0_4:
ret;
}}
"""


@pytest.mark.parametrize(
    ("negate", "held_back"),
    [
        ("not.pred %p2, %p1;", True),  # the access runs when %p1 holds: row < rows
        ("mov.pred %p2, %p1;", False),  # it runs when %p1 fails: no bound
    ],
)
def test_a_negated_predicate_branched_on_from_a_later_block_guards_the_access(negate: str, held_back: bool) -> None:
    (f,) = _scan(GUARDED.format(negate=negate), [])
    assert (f.rule_suppressed is not None) == held_back, f.rule_suppressed
