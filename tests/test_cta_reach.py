"""The blocks some thread of every CTA surely runs (irscan/analysis/cta_reach.py), and what rule (c)
and the grid read from them (irscan/checks/other_accesses.py): the load warp of a warp-specialised
kernel bounds the CTA index the store warp wraps on; a static array read at ``ctaid.y`` bounds grid y."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from irbuild import FnBuilder
from test_other_accesses import ROWS, STATS, TENSOR

from irscan import checks
from irscan.analysis import cta_reach, dataflow
from irscan.analysis.hostgrid import GridDim, capped
from irscan.analysis.ranges import Facts, Ranges
from irscan.checks.other_accesses import grid_caps
from irscan.checks.reporting import finish
from irscan.ir import Kind
from irscan.pipeline import scan_paths

THIRDPARTY = Path(__file__).resolve().parents[1] / "corpus" / "thirdparty"
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "warp_roles.py"
#: z: f32 (16):(1), static (x: bf16 (?{i64}, 8192):(8192, 1), 16 KiB per row; y: f32 (?{i64}):(1))
SMALL = {"dtype": "f32", "layout": "(16):(1)",
         "modes": [{"shape": {"kind": "static", "value": 16}, "stride": {"kind": "static", "value": 1}}]}  # fmt: skip


def _load(b: FnBuilder, tensor: str, index: str, elem: int) -> None:
    base = b.op(Kind.EXTRACT, tensor, width=0, attrs={"path": (0,)})
    off = b.op(Kind.SEXT, index, width=64, src_width=32)
    p = b.op(Kind.GEP, base, off, width=0, space="global", attrs={"indices": [("dyn", 1, 64)], "elem_size": elem})
    b.op(Kind.LOAD, p, width=8 * elem, addr=0, space="global")


def _roles(block: tuple[int, int, int] | None = (64, 1, 1), on: str = "warp") -> tuple[dataflow.Graph, Ranges]:
    """Warp 1 reads ``x[ctaid.x, 0]``; warp 0 stores ``y[64*ctaid.x + tid.x]`` with an i32 row.  The
    role is ``shfl.sync.idx(tid.x / 32, 0)``, as CuTe DSL's ``make_warp_uniform(warp_idx())`` lowers;
    ``on="data"``: the branch tests a loaded flag instead."""
    b = FnBuilder(**({"exact_block_dim": block} if block else {}))
    x, y = b.param("%arg0", TENSOR), b.param("%arg1", TENSOR)
    tid = b.op(Kind.SREG, attrs={"sreg": "tid.x", "range": (0, 1023)})
    bid = b.op(Kind.SREG, attrs={"sreg": "ctaid.x", "range": (0, 2**31 - 1)})
    lane0 = b.op(Kind.DIV, tid, b.const(32), signed=True)
    mask, zero, clamp = b.const(-1), b.const(0), b.const(31)
    warp = b.op(Kind.SHUFFLE, mask, lane0, zero, clamp, name="nvvm.shfl.sync", attrs={"shuffled": 1})
    b.fn.blocks[-1].ops[-1].text = f"{warp} = nvvm.shfl.sync idx {mask}, {lane0}, {zero}, {clamp} : i32 -> i32"
    if on == "warp":
        cond = b.op(Kind.ICMP, warp, b.const(1), width=1, attrs={"pred": "eq"})
    else:
        flag = b.op(Kind.LOAD, b.op(Kind.EXTRACT, y, width=0, attrs={"path": (0,)}), addr=0, space="global")
        cond = b.op(Kind.ICMP, flag, b.const(0), width=1, attrs={"pred": "sgt"})
    b.branch(("load", ()), ("store", ()), cond=cond)
    b.block("load")
    off = b.op(Kind.MUL, b.op(Kind.SEXT, bid, width=64, src_width=32), b.const(8192, width=64), width=64)
    base = b.op(Kind.EXTRACT, x, width=0, attrs={"path": (0,)})
    p = b.op(Kind.GEP, base, off, width=0, space="global", attrs={"indices": [("dyn", 1, 64)], "elem_size": 2})
    b.op(Kind.LOAD, p, width=16, addr=0, space="global")
    b.branch(("end", ()))
    b.block("store")
    row = b.op(Kind.ADD, b.op(Kind.MUL, bid, b.const(64)), tid, flags=frozenset({"nsw"}))
    wide = b.op(Kind.SEXT, row, width=64, src_width=32)
    base = b.op(Kind.EXTRACT, y, width=0, attrs={"path": (0,)})
    p = b.op(Kind.GEP, base, wide, width=0, space="global", attrs={"indices": [("dyn", 1, 64)], "elem_size": 4})
    b.op(Kind.STORE, b.const(0), p, width=32, addr=1, space="global")
    b.branch(("end", ()))
    b.block("end")
    b.op(Kind.RETURN, result=False, width=0)
    gr = dataflow.build(b.module, b.fn)
    return gr, Ranges(gr, Facts.of(b.fn.attrs), [ROWS, STATS])


def _store(gr: dataflow.Graph, rg: Ranges) -> checks.Finding:
    (f,) = [f for f in checks.run(gr, rg, checks.Context("k", "test.mlir")) if f.sink["kind"] == "store"]
    return f


def test_the_load_warp_bounds_the_cta_index_the_store_warp_wraps_on() -> None:
    """No path through the store passes the load, yet warp 1 of every CTA runs it: at ctaid.x >= 2^25
    (where y's row wraps) x is 550 GB."""
    gr, rg = _roles()
    load = next(op for op in gr.fn.ops() if op.kind is Kind.LOAD)
    assert cta_reach.reached(gr, rg.facts.block, load.id)
    f = _store(gr, rg)
    assert f.memory is not None and (f.memory["tensor"], f.memory["bytes"]) == ("arg0", 2**25 * 16384)
    assert "which a thread of every CTA runs" in f.memory["why"]
    reported, (held,) = finish([f])
    assert not reported and held is f


@pytest.mark.parametrize(
    ("block", "on"),
    [((64, 1, 1), "data"), ((32, 1, 1), "warp"), (None, "warp")],
    ids=["role-by-data", "no-warp-1", "block-unknown"],
)
def test_a_role_no_thread_surely_takes_bounds_nothing(block: tuple[int, int, int] | None, on: str) -> None:
    """A branch on a loaded flag, a block of one warp (warp 1 does not exist), or a block size the IR
    does not fix (only thread 0 surely exists): the load may run in no thread of the CTA that wraps."""
    gr, rg = _roles(block, on)
    load = next(op for op in gr.fn.ops() if op.kind is Kind.LOAD and op.block == 1)
    assert not cta_reach.reached(gr, rg.facts.block, load.id)
    f = _store(gr, rg)
    assert f.memory is not None and f.memory["tensor"] == "arg1"
    (kept,), _ = finish([f])
    assert kept is f


def _static_read(guarded: bool) -> tuple[dataflow.Graph, Ranges]:
    """``z[ctaid.y]`` of a static (16,) f32 array, in the entry block or under a branch on data."""
    b = FnBuilder(exact_block_dim=(32, 1, 1))
    z, y = b.param("%arg0", TENSOR), b.param("%arg1", TENSOR)
    cy = b.op(Kind.SREG, attrs={"sreg": "ctaid.y", "range": (0, 65534)})
    if guarded:
        flag = b.op(Kind.LOAD, b.op(Kind.EXTRACT, y, width=0, attrs={"path": (0,)}), addr=0, space="global")
        b.branch(("then", ()), ("end", ()), cond=b.op(Kind.ICMP, flag, b.const(0), width=1, attrs={"pred": "sgt"}))
        b.block("then")
    _load(b, z, cy, 4)
    b.branch(("end", ()))
    b.block("end")
    b.op(Kind.RETURN, result=False, width=0)
    gr = dataflow.build(b.module, b.fn)
    return gr, Ranges(gr, Facts.of(b.fn.attrs), [SMALL, STATS])


def test_a_static_array_every_cta_reads_at_its_index_caps_the_grid() -> None:
    gr, rg = _static_read(guarded=False)
    caps = grid_caps(gr, rg)
    assert list(caps) == [1] and caps[1][0] == 16
    assert "nctaid.y <= 16" in caps[1][1] and "(16):(1)" in caps[1][1]
    grid = capped((), caps)
    assert grid == (GridDim(1, -1, (), 1, 16, caps[1][1]),)
    capped_rg = Ranges(gr, Facts.of(gr.fn.attrs, None, grid), [SMALL, STATS])
    cy = next(op.id for op in gr.fn.ops() if op.kind is Kind.SREG)
    assert (capped_rg.interval(capped_rg.value(cy)).lo, capped_rg.interval(capped_rg.value(cy)).hi) == (0, 15)
    # a tighter cap the host already set is kept
    assert capped((GridDim(1, 2, (1, 0), 1, 8),), caps) == (GridDim(1, 2, (1, 0), 1, 8),)


def test_a_static_array_read_under_a_data_branch_caps_nothing() -> None:
    gr, rg = _static_read(guarded=True)
    assert grid_caps(gr, rg) == {}


def test_real_warp_roles_and_static_arrays() -> None:
    """flashinfer's KDA prefill engine: warp 8 loads the state pool (64 KiB per head, head = ctaid.x)
    in a role the output store's warps never pass, so the store's head offset 128*head (i32, wraps
    from head 2^24) is held back at 1.1 TB.  cuDNN's DSA backward sum_dSink reads the static (16,)
    sink array at ctaid.y: grid y, and the head count the host stores there, are at most 16."""
    res = scan_paths([THIRDPARTY / "fi_kda_chunked_prefill_sm100a", THIRDPARTY / "cudnn_dsa_bwd_sm100a"])
    held = [f for f in res.rule_suppressed if f.line == 4375 and f.ir == "mlir" and f.memory]
    assert any(f.memory["tensor"] == "arg15" and "which a thread of every CTA runs" in f.memory["why"] for f in held)
    assert not [f for f in res.findings if f.line == 4375]
    (dsink,) = [f for f in res.findings if f.line == 813 and f.ir == "mlir"]
    assert "ctaid.y in [0, 15] (left open by the IR)" in dsink.facts
    assert "arg1.stride[1]" in dsink.expression and any(s.range == [0, 16] for s in dsink.chain)


@pytest.mark.parametrize("mode", ["warp", "limit"])
def test_a_real_warp_specialised_kernel(tmp_path: Path, mode: str) -> None:
    """tests/fixtures/warp_roles.py compiled by the real DSL: warp 1 copies the head's 32 KiB state row,
    warp 0 stores ``stats[head * 32 + tidx]`` in i32 (wraps from head 2^26).  By warp, the copy runs in
    every CTA and the store's wrap is held back in both IRs (2.2 TB of state); by ``tidx >= limit`` (an
    argument) no thread surely copies, and the wrap is reported."""
    args = [] if mode == "warp" else ["limit"]
    p = subprocess.run([sys.executable, "-m", "irscan", "audit", "--format", "json", "--all", "--fail-on", "never",
                        "--", sys.executable, str(FIXTURE), *args], capture_output=True, text=True, cwd=tmp_path,
                       timeout=600)  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(p.stdout)
    assert not doc["errors"] and doc["summary"]["kernels_scanned"] == 2
    stores = [f for f in doc["findings"] + doc["rule_suppressed"] if f["sink"]["kind"] == "store"]
    assert sorted(f["ir"] for f in stores) == ["mlir", "ptx"]
    for f in stores:
        assert f["wraps_when"]["text"] == "ctaid.x >= 67108863", f["message"]
        if mode == "warp":
            assert f["memory"]["tensor"] == "arg0" and "which a thread of every CTA runs" in f["memory"]["why"]
            assert f["rule_suppressed"].startswith("(c) unreachable within GPU memory: needs arg0 >= 2.2 TB")
        else:
            assert f["rule_suppressed"] is None and f in doc["findings"]
