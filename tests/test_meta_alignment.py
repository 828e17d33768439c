"""meta.json's argument entries against the kernel's parameters (irscan/analysis/params.py align_meta).

The DSL's signature lists compile-time arguments too, and which of them become parameters depends on
the kernel: a TMA descriptor's coordinate tensor with nothing dynamic in it has none, an sm_80 tiled
MMA none while an sm_100 one is a struct parameter, a layout with dynamic leaves one.  A wrong
alignment hands a tensor's layout facts to another parameter (cudnn's NSA selection kernel: the
block-index tensor read as a TMA coordinate tensor, its static extent lost), so every real capture's
kernels must line up.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from irscan.analysis.params import align_meta, meta_fields
from irscan.ir import Param

REPO = Path(__file__).resolve().parents[1]
TMA = {"type": "!cute_nvgpu.atom.non_exec_tiled_tma_load<sm_90, bf16, copy_bits = 2048>"}
STATIC_COORD = {"type": '!cute.coord_tensor<"(0,0,0)", "(131072,128,4):(1@1,1@0,1@2)">', "modes": []}
MMA80 = {"type": "!cute.tiled_mma<!cute_nvgpu.sm80.mma<16x8x16, elem_type = (bf16, bf16, f32) >>"}
MMA100 = {"type": "!cute.tiled_mma<!cute_nvgpu.sm100.mma<128x128x16, num_cta = 1>>"}
I32 = {"type": "i32"}
DYN_LAYOUT = {"type": '!cute.layout<"((32,4,?{i64}),(4,?{i64})):((16,4,?{i64}),(1,?{i64}))">'}
STATIC_LAYOUT = {"type": '!cute.layout<"(1):(0)">'}


def _params(*shapes: Any, sizes: tuple[int, ...] = ()) -> list[Param]:
    return [
        Param(name=f"%arg{i}", type="", index=i, shape=s, size=sizes[i] if sizes else None)
        for i, s in enumerate(shapes)
    ]


def test_a_static_coordinate_tensor_beside_each_descriptor_has_no_parameter() -> None:
    params = _params("ptr", "ptr", 32)
    assert align_meta(params, [TMA, STATIC_COORD, TMA, STATIC_COORD, I32]) == [0, 2, 4]
    ptx_params = _params(None, None, None, sizes=(128, 128, 4))
    assert align_meta(ptx_params, [TMA, STATIC_COORD, TMA, STATIC_COORD, I32], ptx=True) == [0, 2, 4]


def test_a_tiled_mma_is_a_parameter_only_where_the_kernel_has_one() -> None:
    """sm_80: none (the descriptor after it takes the first parameter); sm_100: a struct parameter."""
    assert align_meta(_params("ptr", 32), [MMA80, TMA, I32]) == [1, 2]
    assert align_meta(_params((1, 1, 1, None), "ptr", 32), [MMA100, TMA, I32]) == [0, 1, 2]
    # PTX: byte arrays; a 4-byte parameter after an sm_80 MMA is the i32, seen from the rest lining up
    i64 = {"type": "i64"}
    assert align_meta(_params(None, None, None, sizes=(4, 4, 8)), [MMA80, I32, I32, i64], ptx=True) == [1, 2, 3]
    assert align_meta(_params(None, None, None, sizes=(4, 4, 8)), [MMA80, I32, i64], ptx=True) == [0, 1, 2]


def test_a_layout_with_dynamic_leaves_is_a_parameter() -> None:
    params = _params(((64, 64), (64, 64)), 64)
    assert align_meta(params, [STATIC_LAYOUT, DYN_LAYOUT, {"type": "i64"}]) == [1, 2]


def test_every_third_party_kernel_lines_up_with_its_meta() -> None:
    """The scan says so per kernel (``meta_unaligned`` in the report's ``kernels``)."""
    p = subprocess.run(
        [sys.executable, "-m", "irscan", "scan", "--format", "json", str(REPO / "corpus/thirdparty")],
        capture_output=True, text=True, cwd=REPO,
    )  # fmt: skip
    assert p.returncode in (0, 1), p.stderr[-2000:]
    kernels = json.loads(p.stdout)["kernels"]
    assert kernels and not [(k["ir"], k["kernel"][:60]) for k in kernels if k["meta_unaligned"]]


def test_entries_that_do_not_line_up_give_no_facts() -> None:
    """By position, the second entry would describe the tensor parameter: no entry is used instead
    (with one entry per parameter, positions are kept: hand-written meta in tests, simple kernels)."""
    from irbuild import FnBuilder
    from test_ranges import TENSOR

    from irscan.analysis import dataflow
    from irscan.analysis.ranges import Facts, Ranges

    b = FnBuilder()
    b.param("%arg0", TENSOR)
    gr = dataflow.build(b.module, b.fn)
    assert Ranges(gr, Facts.of(b.fn.attrs), [I32, I32]).meta_args == []
    assert Ranges(gr, Facts.of(b.fn.attrs), [I32]).meta_args == [I32]
    mode = {"shape": {"kind": "static", "value": 4}, "stride": {"kind": "static", "value": 1}}
    memref = {"type": '!cute.memref<f32, gmem, "(4):(1)">', "modes": [mode]}
    assert Ranges(gr, Facts.of(b.fn.attrs), [memref]).meta_args == [memref]


def test_a_tma_coordinate_tensor_takes_its_atoms_element_type() -> None:
    """The DSL's (TMA atom, coordinate tensor) pair: the tensor's extents are the global tensor's, of the
    atom's element (bf16, 16 bits: rule (c) can weigh it); a coordinate tensor after anything else stays
    of unknown element."""
    from irscan.analysis.params import with_tma_elements
    from irscan.checks.memory import element_bits

    atom = {"type": "!cute_nvgpu.atom.non_exec_tiled_tma_load<sm_90, bf16, copy_bits = 65536, tma_gbasis = <>>"}
    coord = {"type": '!cute.coord_tensor<"(0,0,0)", "(2,128,?):(1@1,1@0,1@2)">', "dtype": "coord"}
    paired, alone = with_tma_elements([atom, coord, {"type": "i32"}, coord])[1::2]
    assert element_bits(paired) == 16 and paired["element"] == "bf16"
    assert element_bits(alone) is None and "element" not in coord  # the caller's entries are left as they were


def test_a_dynamic_coordinate_tensor_has_no_pointer_field() -> None:
    """PTX lays a TMA coordinate tensor out as its dynamic extents alone (cudnn NSA's 20-byte param of
    (?,?,((?,?),?))): its first word is shape[0], not a pointer; a dynamic origin is not laid out."""
    dyn = {"i": {"kind": "dynamic", "width": 32, "text": "?"}}
    modes = [{"shape": dyn["i"], "stride": {"kind": "static", "value": f"1@{k}", "text": f"1@{k}"}} for k in range(5)]
    coord = {"type": '!cute.coord_tensor<"(0,0,0,0,0)", "(?,?,((?,?),?)):(1@1,1@0,((1@2,1@3),1@4))">',
             "dtype": "coord", "modes": modes}  # fmt: skip
    fields = meta_fields(3, coord)
    assert [(f.offset, f.width, f.name) for f in fields[:2]] == [(0, 32, "arg3.shape[0]"), (4, 32, "arg3.shape[1]")]
    assert len(fields) == 5 and not any(f.name.endswith(".ptr") for f in fields)
    moved = {**coord, "type": coord["type"].replace('"(0,0,0,0,0)"', '"(?,0,0,0,0)"')}
    assert meta_fields(3, moved) == []
    tensor = {"type": "!cute.memref<bf16, gmem>", "dtype": "bf16", "modes": modes[:1]}
    assert [f.name for f in meta_fields(0, tensor)] == ["arg0.ptr", "arg0.shape[0]"]
