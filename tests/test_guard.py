"""The launch guard's conditions, host grids and contracts on real captures, without compiling or
launching anything: each corpus kernel's guard is built from its capture (the same inputs the
in-process hook has) and called with "virtual" tensors (numpy views over a small buffer), so the
verdicts at and around the manifest's known thresholds can be checked exactly."""

from __future__ import annotations

import ctypes
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from irscan.analysis import dataflow
from irscan.frontend import mlir
from irscan.guarding import WrapError
from irscan.guarding.codegen import compile_guard, span_bytes
from irscan.guarding.dryrun import VirtualTensor, virtual
from irscan.guarding.host import field_source, launches
from irscan.guarding.prepare import LaunchGuard, ModuleGuard, kernel_paths, prepare
from irscan.guarding.runtime import Checker, wrap_error
from irscan.guarding.values import DLTensor, dims

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "corpus" / "captures"


def view(shape: tuple[int, ...], strides: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    """A tensor of any size over a few KB: every element aliases the same buffer (never read)."""
    return virtual(shape, strides, dtype)


def guards(name: str) -> dict[str, ModuleGuard]:
    (folder,) = [p for p in (CAPTURES / name).iterdir() if p.is_dir()]
    meta = json.loads((folder / "meta.json").read_text())
    return prepare(mlir.parse_file(str(next(folder.glob("module.mlir*")))), meta["kernels"])


def only(name: str) -> tuple[ModuleGuard, LaunchGuard]:
    (mg,) = guards(name).values()
    (lg,) = mg.launches
    return mg, lg


def check(lg: LaunchGuard, *args: Any) -> int | None:
    assert lg.compiled is not None, lg.how
    return lg.compiled.check(args)


# -- conditions at the manifest's thresholds


def test_dynamic_i32_pitch_is_refused_from_exactly_the_static_threshold() -> None:
    """elementwise_i32_stride: ctaid.x * pitch + 1024 * ctaid.y on a static (8192, 8) grid leaves i32
    from pitch 262,176 (manifest); 262,175 is the last safe pitch."""
    mg, lg = only("elementwise_i32_stride")
    assert mg.host_params == 2 and len(lg.conditions) == 2
    assert lg.names == ("src", "dst")
    ok, bad = view((8192, 8192), (262_175, 1), np.float16), view((8192, 8192), (262_176, 1), np.float16)
    verdicts = [check(lg, ok, ok), check(lg, bad, ok), check(lg, ok, bad)]
    assert verdicts == [None, 0, 1]  # dst's access has its own stride and its own condition
    err = wrap_error(lg, 0, (bad, ok))
    assert err.value == 8191 * 262_176 + 7168 and err.limit == 2**31 - 1
    assert err.values == {"grid.x": 8192, "grid.y": 8, "src.stride[0]": 262_176}
    assert str(err).startswith("corpus/programs/elementwise_i32_stride.py:30: ctaid.x*src.stride[0] + 1024*ctaid.y")
    assert "reaches 2,147,490,784 > 2^31-1 (grid.x = 8,192, grid.y = 8, src.stride[0] = 262,176)" in str(err)


def test_a_static_grid_that_always_wraps_is_refused_on_every_call() -> None:
    """elementwise_static_100k (must): the index wraps whatever the tensors are."""
    _, lg = only("elementwise_static_100k")
    t = view((100_000, 100_000), (100_000, 1))
    verdict = check(lg, t, t)  # (a virtual tensor must never reach an assertion's repr: it reads the memory)
    assert verdict == 0


def test_loaded_coordinates_are_bounded_by_the_extent_of_the_mode_they_index() -> None:
    """varlen_offset_fa4_2611: cu_seqlens[b] * 9728 (dO) and * 1536 (O); the contract takes the loaded
    offset inside the token mode, so the verdict is on dO.shape[0]: safe up to 220,753 tokens."""
    _, lg = only("varlen_offset_fa4_2611")
    assert all(c.bounded for c in lg.conditions)

    def args(tokens: int) -> tuple[Any, ...]:
        o = view((tokens, 16, 96), (1536, 96, 1), np.float16)
        do = view((tokens, 16, 96), (9728, 96, 1), np.float16)
        return (o, do, view((5,), (1,), np.int32), view((4, 16, 8192), (131072, 8192, 1)))

    below, above = check(lg, *args(220_753)), check(lg, *args(220_754))
    assert below is None and above is not None
    i = above
    err = wrap_error(lg, i, args(220_754))
    assert err.contract and "mdO.shape[0] = 220,754" in str(err)
    assert "assuming each loaded coordinate stays inside the mode it indexes" in str(err)


def test_the_grid_is_the_host_functions_own_computation() -> None:
    """A grid the host derives from a shape: the explain path reports the grid the host computed."""
    _, lg = only("rmsnorm_row_per_cta")
    assert lg.compiled is not None
    for rows in (4096, 3000):
        x = view((rows, 4096), (4096, 1), np.float16)
        env = lg.compiled.explain((x, view((4096,), (1,), np.float16), x, 1e-6))
        assert (env["grid.x"], env["block.x"]) == (rows, 256)


def test_a_tensor_indexed_by_unbounded_32_bit_arithmetic_is_refused_past_its_span() -> None:
    """flashinfer's GDN decode: the state pool is indexed with 524288 * a loaded pool index, which no
    stride bounds; the byte-span preflight refuses a pool of more than 2^31 - 1 elements, and names it."""
    folder = next((ROOT / "corpus" / "thirdparty" / "fi_gdn_decode_sm90a").glob("001_*"))
    meta = json.loads((folder / "meta.json").read_text())
    (mg,) = prepare(mlir.parse_file(str(next(folder.glob("module.mlir*")))), meta["kernels"]).values()
    (lg,) = mg.launches
    (span,) = lg.spans
    assert span.limit == 2**31 - 1 and not lg.conditions

    def args(pool_entries: int) -> tuple[Any, ...]:
        rest: list[Any] = [None] * mg.host_params
        pool = lg.params[span.param]
        assert pool is not None
        rest[pool] = virtual((pool_entries, 32, 128, 128), (524288, 16384, 128, 1))
        return tuple(rest)

    small, big = check(lg, *args(4095)), check(lg, *args(4096))  # 4096 * 524288 = 2^31 elements
    assert small is None and big == 0
    err = wrap_error(lg, 0, args(4096))
    assert "tensor arg0 spans 2,147,483,648 elements, past 2^31-1" in str(err), str(err)


def test_a_ceil_divided_grid_is_the_host_codes_own_arithmetic() -> None:
    """elementwise_add_dynamic_i64 launches ceil_div(M, 4) x ceil_div(N, 128) CTAs: the host's sdiv,
    mul, icmp, and, add, select sequence, evaluated at the ops' widths, for exact multiples and not."""
    (folder,) = [p for p in (CAPTURES / "elementwise_add_dynamic_i64").iterdir() if p.is_dir()]
    meta = json.loads((folder / "meta.json").read_text())
    module = mlir.parse_file(str(next(folder.glob("module.mlir*"))))
    host = next(fn for fn in module.functions if not fn.kernel and launches(dataflow.build(module, fn, None)))
    (hl,) = launches(dataflow.build(module, host, None))
    assert hl.reason is None and hl.params == [0, 1, 2]
    kargs = meta["kernels"][0]["args"]
    compiled, skipped = compile_guard(hl, [], [], ("mA", "mB", "mC"), 3, {j: kargs[j] for j in range(3)})
    assert compiled is not None and not skipped
    for m, n, grid in ((4096, 4096, (1024, 32)), (4097, 4095, (1025, 32)), (1, 1, (1, 1)), (0, 128, (0, 1))):
        a = view((m, n), (n + 4, 1))
        env = compiled.explain((a, a, a))
        assert (env["grid.x"], env["grid.y"], env["grid.z"], env["block.x"]) == (*grid, 1, 128), (m, n)


def test_a_struct_the_host_builds_is_traced_to_the_arguments_fields() -> None:
    """FA4's backward kernel takes coordinate tensors the host assembles with insertvalue from its
    arguments' shape fields (a permuted view): each kernel field is traced to the host field it holds;
    without that argument's layout the guard says so instead of guessing which mode the field is."""
    folder = next((ROOT / "corpus" / "thirdparty" / "fa4_bwd_sm90a").glob("001_*"))
    meta = json.loads((folder / "meta.json").read_text())
    module = mlir.parse_file(str(next(folder.glob("module.mlir*"))))
    host = next(fn for fn in module.functions if not fn.kernel and launches(dataflow.build(module, fn, None)))
    (hl,) = launches(dataflow.build(module, host, None))
    kfn = next(fn for fn in module.functions if fn.name == hl.kernel)
    paths = kernel_paths(kfn, {k["name"]: k for k in meta["kernels"]}[hl.kernel]["args"])
    assert hl.params[0] is None and paths[(0, "shape", 0)] == (1, 0, 0)
    assert field_source(hl, 0, paths[(0, "shape", 0)]) == (0, (1, 0, 1))  # the argument's second shape leaf
    assert field_source(hl, 0, paths[(0, "shape", 1)]) == (0, (1, 0, 3))
    (mg,) = prepare(module, meta["kernels"]).values()
    assert all(lg.compiled is None and "layout of host argument" in lg.how for lg in mg.launches if lg.conditions)


def test_kernels_without_findings_get_no_check() -> None:
    for name in ("elementwise_add_dynamic_i64", "rmsnorm_i64_stride", "elementwise_static_100k_int64"):
        assert all(not mg.active for mg in guards(name).values()), name


def test_two_launches_from_one_host_function_are_both_guarded() -> None:
    (mg,) = guards("stacked_layers_seed000").values()
    assert len(mg.launches) == 2 and all(lg.compiled is not None for lg in mg.launches), [lg.how for lg in mg.launches]


# -- the checker: modes and messages


def test_raise_mode_raises_and_warn_mode_warns_once(capsys: pytest.CaptureFixture[str]) -> None:
    mg, _ = only("elementwise_i32_stride")
    bad = view((8192, 8192), (262_176, 1), np.float16)
    with pytest.raises(WrapError, match=r"elementwise_i32_stride\.py:30: .* reaches 2,147,490,784"):
        Checker(mg, "raise")((bad, bad), {})
    warn = Checker(mg, "warn")
    for _ in range(3):
        warn((bad, bad), {})
    assert capsys.readouterr().err.count("irscan guard: WARNING") == 1


def test_a_call_the_guard_cannot_bind_is_let_through_and_said_once(capsys: pytest.CaptureFixture[str]) -> None:
    mg, _ = only("elementwise_i32_stride")
    bad = view((8192, 8192), (262_176, 1), np.float16)
    checker = Checker(mg, "raise")
    for _ in range(2):
        checker((bad,), {})  # a different arity: not this host function's call
        checker((), {"src": bad, "dst": bad})
    err = capsys.readouterr().err
    assert err.count("called with 1 positional arguments") == 1 and err.count("keyword arguments") == 1


# -- contracts in the static report


def test_every_corpus_finding_whose_inputs_the_launch_sees_has_a_contract() -> None:
    from irscan.pipeline import scan_paths

    fs = scan_paths([CAPTURES]).findings
    by = {(Path(f.file or "").name, f.line, f.ir): (f.wraps_when or {}).get("safe_while") for f in fs}
    assert by[("elementwise_i32_stride.py", 30, "mlir")]["solved"] == "src.stride[0] <= 262,175"
    assert by[("varlen_offset_fa4_2611.py", 38, "mlir")]["text"] == "9728*(mdO.shape[0] - 1) <= 2^31-1"
    assert by[("varlen_offset_fa4_2611.py", 38, "mlir")]["assumes_extent"] is True
    missing = [k for k, v in by.items() if v is None]
    assert len(missing) <= 1, missing  # gdn_state_pool's PTX: a loaded pool index scaled by no stride


# -- reading arguments


def test_dims_of_numpy_dlpack_and_non_tensors() -> None:
    a = view((3, 5), (10, 2))
    assert dims(a) == ((3, 5), (10, 2), 4)
    assert dims(7) == ((), (), 0)

    class Exported:  # anything that speaks DLPack, read from its capsule
        def __dlpack__(self, stream: Any = None) -> Any:
            return a.__dlpack__()

    assert dims(Exported()) == ((3, 5), (10, 2), 4)
    assert dims(VirtualTensor((8192, 8192), (262_176, 1))) == ((8192, 8192), (262_176, 1), 2)
    assert ctypes.sizeof(DLTensor) == 48  # the DLPack ABI's layout on 64-bit hosts


def test_span_is_first_to_last_element() -> None:
    assert span_bytes((2, 3), (10, 1), 4) == (10 + 2 + 1) * 4
    assert span_bytes((0, 3), (10, 1), 4) == 0
