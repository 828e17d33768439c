"""The reporting rule's facts from where a tensor came from (meta.json ``origin``, ``use_32bit_stride``,
a shape mode's ``sym``; README, "What is reported"):

- an offset into a ``from_dlpack(t, use_32bit_stride=True)`` tensor made of its coordinates times its
  own strides is below its span, which the DSL's runtime refuses above INT32_MAX at each call: held
  back, rule (a); a fake tensor with the same i32 strides is never checked, and stays reported, as
  does an offset that uses another tensor's stride;
- fake tensors built with one ``cute.sym_int()`` share that extent: an access far into a view of one
  host tensor's memory (``view_of``) sets the extent, and rule (c) weighs the largest host tensor
  sharing it (``sym_peers``), named in the reason.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from test_reporting_layouts import DYN32, _scan

from irscan.checks import shared_extents
from irscan.checks.reporting import finish

STATIC1 = {"kind": "static", "value": 1}

#: ``t[ctaid.x, tid.x]`` of a (?,?):(?,1) i32 tensor with an i32 row stride (ptr @0, shapes @8/@12,
#: the row stride @16); ``{stride}`` picks whose row stride the row index is multiplied by
ROW = """.version 8.5
.target sm_100a
.address_size 64
.visible .entry k(.param .align 8 .b8 k_p0[24], .param .align 8 .b8 k_p1[24])
{{
.reg .b32 %r<8>;
.reg .b64 %rd<8>;
ld.param.u64 %rd1, [k_p0];
ld.param.u32 %r1, [{stride}];
mov.u32 %r2, %ctaid.x;
mov.u32 %r3, %tid.x;
mul.lo.s32 %r4, %r2, %r1;
add.s32 %r5, %r4, %r3;
mul.wide.s32 %rd2, %r5, 4;
add.s64 %rd3, %rd1, %rd2;
ld.global.u32 %r6, [%rd3];
st.global.u32 [%rd3+4], %r6;
ret;
}}
"""


def _tensor(**facts: Any) -> dict[str, Any]:
    modes = [{"shape": DYN32, "stride": DYN32}, {"shape": DYN32, "stride": STATIC1}]
    return {"type": "!cute.memref<i32, gmem>", "dtype": "i32", "layout": "(?,?):(?,1)", "modes": modes, **facts}


@pytest.mark.parametrize(
    ("facts", "stride", "held_back"),
    [
        ({"origin": "dlpack", "use_32bit_stride": True}, "k_p0+16", True),
        ({"origin": "fake", "use_32bit_stride": True}, "k_p0+16", False),  # fake tensors are never checked
        ({"origin": "dlpack", "use_32bit_stride": False}, "k_p0+16", False),
        ({}, "k_p0+16", False),  # a capture from before the fields: as it was
        ({"origin": "dlpack", "use_32bit_stride": True}, "k_p1+16", False),  # another tensor's stride
    ],
)
def test_an_offset_into_a_tensor_the_dsl_checks_is_below_int32_max(
    facts: dict[str, Any], stride: str, held_back: bool
) -> None:
    (f,) = _scan(ROW.format(stride=stride), [_tensor(**facts), _tensor(**facts)])
    if held_back:
        assert f.rule_suppressed == (
            "(a) an in-bounds offset into arg0 ((?,?):(?,1), from_dlpack with use_32bit_stride=True): a coordinate "
            "times its own stride per mode (modes [0, 1]), so below its span, and the DSL refuses at each call a "
            "tensor spanning more than INT32_MAX elements"
        )
    else:
        assert f.rule_suppressed is None, f.rule_suppressed


def _host(dtype: str, layout: str, shape: list[Any], stride: list[int], host_arg: int) -> dict[str, Any]:
    modes = [{"shape": s if isinstance(s, dict) else {"kind": "static", "value": s},
              "stride": {"kind": "static", "value": d}} for s, d in zip(shape, stride, strict=True)]  # fmt: skip
    return {"host_arg": host_arg, "dtype": dtype, "layout": layout, "origin": "fake", "modes": modes}


S0, S1 = {**DYN32, "sym": "s0"}, {**DYN32, "sym": "s1"}
LSE = _host("i32", "(?,32):(32,1)", [S0, 32], [32, 1], 18)  # the memory arg0 is a view of
Q = _host("bf16", "(?,32,128):(4096,128,1)", [S0, 32, 128], [4096, 128, 1], 0)
LENS = _host("i32", "(?):(1)", [S0], [1], 5)


@pytest.mark.parametrize(
    ("peers", "held_by"),
    [
        ([LENS, Q], "host arg0 (bf16 (?,32,128):(4096,128,1), sharing arg0's extent) >= 549.8 GB"),  # the largest
        ([LENS], None),  # 268 MB: fits
        (
            [{**Q, "modes": [{**m, "shape": S1} if i == 0 else m for i, m in enumerate(Q["modes"])]}],
            None,
        ),  # another sym
        ([], None),
    ],
)
def test_a_tensor_sharing_the_extent_of_the_memory_a_view_reaches_is_weighed(
    peers: list[dict[str, Any]], held_by: str | None
) -> None:
    """``lse[row, head]`` through a view of a host (?,32) tensor: at the wrap (2^31 elements into it) that
    tensor holds 67,108,864 rows, and so does every host tensor sharing its extent: q is 549.8 GB."""
    arg0 = {**_tensor(), "view_of": LSE, **({"sym_peers": peers} if peers else {})}
    (f,) = _scan(ROW.format(stride="k_p0+16"), [arg0, _tensor()])
    finish([f])  # rule (c) against the default --max-memory
    if held_by is None:
        assert f.rule_suppressed is None, f.rule_suppressed
        return
    why = f.rule_suppressed or ""
    assert why.startswith(f"(c) unreachable within GPU memory: needs {held_by}")
    assert "arg0 is a view of host arg18 (?,32):(32,1): that far into it needs extent s0 >= 67,108,864" in why


def test_a_threshold_on_an_extent_sizes_the_host_tensors_sharing_its_sym() -> None:
    """``arg0.shape[0] >= T`` with that mode made from one SymInt: each host tensor sharing it holds T
    slices (its static modes as they are); one that shares another sym, or none, gives nothing."""
    lens = {**_tensor(), "modes": [{"shape": S0, "stride": STATIC1}], "sym_peers": [Q, LENS]}
    rg = SimpleNamespace(meta_args=[lens])
    needs = shared_extents.extent_peer_needs(rg, "arg0.shape[0]", 67_108_864)  # type: ignore[arg-type]
    assert [(n.tensor, n.bytes) for n in needs] == [
        ("host arg0 (bf16 (?,32,128):(4096,128,1), sharing arg0's extent)", 67_108_864 * 4096 * 2),
        ("host arg5 (i32 (?):(1), sharing arg0's extent)", 67_108_864 * 4),
    ]
    assert needs[0].why == "arg0.shape[0] is extent s0, which host arg0 shares"
    assert shared_extents.extent_peer_needs(rg, "arg0.shape[1]", 5) == []  # type: ignore[arg-type]
    rg.meta_args = [{**lens, "modes": [{"shape": S1, "stride": STATIC1}]}]
    assert shared_extents.extent_peer_needs(rg, "arg0.shape[0]", 5) == []  # type: ignore[arg-type]
