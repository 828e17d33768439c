"""Rule (a) (irscan/checks/reporting.py) reads a mode's coordinate made of several terms: a rank
counted from comparisons, ``rank = (x > a) + (x > b)`` (PTX ``selp 1, 0`` of ``setp``; MLIR ``zext``
of ``icmp``), is one coordinate of the stride-1 mode, so ``t[row, rank]`` into a
``from_dlpack(use_32bit_stride=True)`` tensor is below its span like ``t[row, col]``."""

from __future__ import annotations

from test_reporting_layouts import _scan
from test_reporting_origins import _tensor

RANK = """.version 8.5
.target sm_100a
.address_size 64
.visible .entry k(.param .align 8 .b8 k_p0[24])
{
.reg .pred %p<4>;
.reg .b32 %r<16>;
.reg .b64 %rd<8>;
ld.param.u64 %rd1, [k_p0];
ld.param.u32 %r1, [k_p0+16];
mov.u32 %r2, %ctaid.x;
mov.u32 %r3, %tid.x;
ld.global.u32 %r7, [%rd1];
setp.gt.s32 %p1, %r3, %r7;
setp.gt.s32 %p2, %r7, 5;
selp.b32 %r8, 1, 0, %p1;
selp.b32 %r9, 1, 0, %p2;
add.s32 %r10, %r8, %r9;
mul.lo.s32 %r4, %r2, %r1;
add.s32 %r5, %r4, %r10;
mul.wide.s32 %rd2, %r5, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r7;
ret;
}
"""


def test_a_rank_summed_from_comparisons_is_one_coordinate_of_its_mode() -> None:
    (f,) = _scan(RANK, [_tensor(origin="dlpack", use_32bit_stride=True)])
    assert f.rule_suppressed is not None and "(modes [0, 1])" in f.rule_suppressed, f.rule_suppressed


def test_the_same_sum_into_a_fake_tensor_stays_reported() -> None:
    (f,) = _scan(RANK, [_tensor(origin="fake", use_32bit_stride=True)])
    assert f.rule_suppressed is None
