"""The launch guard on a compiled corpus kernel, both launch paths, without a GPU.

Each case runs in a child (the DSL reads its environment once per process): it compiles
corpus/programs/elementwise_i32_stride.py as it stands, under the guard, and calls the function
``cute.compile`` returned with "virtual" [8192, 8192] tensors whose row pitch is 262,176 (numpy
``as_strided`` views over a small buffer on the plain JIT path; DLPack tensors that claim device
memory on the TVM-FFI path, which accepts nothing else).  A wrapping launch must raise WrapError
before the DSL's own call path runs at all (the first thing it does, packing the arguments, is
counted); a launch below the threshold must get through to the CUDA runtime, whose own "no driver"
error on this machine proves the guard let it pass.  Run as a script, this file is that child.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "corpus" / "programs" / "elementwise_i32_stride.py"
CLEAN = ROOT / "corpus" / "programs" / "elementwise_add_dynamic_i64.py"
TVM = "--enable-tvm-ffi"
#: the manifest's threshold for this program's pitch, and the largest safe pitch the kernel accepts
#: (it is declared divisible by 8, which the TVM-FFI path checks)
WRAP, BELOW = 262_176, 262_168
NO_DRIVER = ("cudaErrorInsufficientDriver", "cudaErrorNoDevice", "no CUDA-capable device", "CUDA driver")


# ------------------------------------------------------------------------------------------ the child


def _compile(program: Path, options: str) -> Any:
    from irscan.guarding.dryrun import compiled_by

    return compiled_by(program, options)[-1]


def _count_dsl_entry(f: Any, options: str) -> list[int]:
    """Count entries into the DSL's call path: argument packing (plain) or the TVM-FFI function."""
    calls = [0]
    owner, name = (f, "_kwargs_wrapper") if options else (f.execution_args, "generate_execution_args")
    inner = getattr(owner, name)

    def counted(*a: Any, **k: Any) -> Any:
        calls[0] += 1
        return inner(*a, **k)

    setattr(owner, name, counted)
    return calls


def child(program: Path, mode: str, options: str, from_env: bool) -> dict[str, Any]:
    import irscan
    from irscan.guarding.dryrun import VirtualTensor, virtual

    if from_env:  # IRSCAN_GUARD / IRSCAN_CAPTURE armed the guard at start-up
        f, report = _compile(program, options), []
    else:
        with irscan.guard(mode=mode) as g:
            f = _compile(program, options)
        report = g.report()
    calls = _count_dsl_entry(f, options)

    def tensor(pitch: int) -> Any:
        return VirtualTensor((8192, 8192), (pitch, 1)) if options else virtual((8192, 8192), (pitch, 1), "float16")

    out: dict[str, Any] = {"class": type(f).__name__, "report": report, "calls": []}
    for pitch in (WRAP, BELOW, WRAP, BELOW):  # a refused launch leaves the process usable
        before = calls[0]
        try:
            f(tensor(pitch), tensor(pitch))
            res = {"outcome": "ran"}
        except Exception as e:
            res = {"outcome": type(e).__name__, "message": str(e)[:400]}
        out["calls"].append({"pitch": pitch, "reached_dsl": calls[0] > before, **res})
    return out


# ------------------------------------------------------------------------------------------ the tests


def run_child(run_python: Any, *args: Any, env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = run_python(__file__, *map(str, args), env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {**json.loads(proc.stdout.strip().splitlines()[-1]), "stderr": proc.stderr}


def _no_gpu() -> None:
    from irscan.capturing.env import has_gpu

    if has_gpu():
        pytest.skip("a launch below the threshold would run on this GPU with fake pointers")


@pytest.mark.parametrize("options", ["", TVM], ids=["plain-jit", "tvm-ffi"])
def test_a_wrapping_launch_raises_before_the_dsl_and_one_below_reaches_the_driver(run_python, options) -> None:
    if options:
        pytest.importorskip("tvm_ffi")
    _no_gpu()
    out = run_child(run_python, PROGRAM, "raise", options or "-", "context")
    assert out["class"].startswith("TVMFFI" if options else "CudaDialect"), out["class"]
    assert any("checked in Python before the launch" in line for line in out["report"]), out["report"]
    wrap, below = out["calls"][0::2], out["calls"][1::2]
    for c in wrap:
        assert c["outcome"] == "WrapError" and not c["reached_dsl"], c
        assert c["message"].startswith(f"{PROGRAM}:30: ctaid.x*src.stride[0] + 1024*ctaid.y reaches"), c
        assert "reaches 2,147,490,784 > 2^31-1 (grid.x = 8,192, grid.y = 8, src.stride[0] = 262,176)" in c["message"]
    for c in below:
        assert c["reached_dsl"] and any(s in c.get("message", "") for s in NO_DRIVER), c


def test_warn_mode_warns_once_and_launches(run_python) -> None:
    _no_gpu()
    out = run_child(run_python, PROGRAM, "warn", "-", "context")
    assert all(c["reached_dsl"] for c in out["calls"]), out["calls"]
    assert out["stderr"].count(f"irscan guard: WARNING: {PROGRAM}:30: ") == 1


def test_irscan_audit_guard_arms_the_guard_in_the_program(run_python, tmp_path) -> None:
    """``irscan audit --guard -- python prog.py``: IRSCAN_GUARD beside the environment capture."""
    _no_gpu()
    proc = run_python(
        "-m", "irscan", "audit", "--guard", "--out", tmp_path / "cap", "--fail-on", "never", "--",
        "python", __file__, PROGRAM, "raise", "-", "env", cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads([ln for ln in proc.stdout.splitlines() if ln.startswith("{")][-1])
    assert [c["outcome"] for c in out["calls"]][0] == "WrapError", out["calls"]
    assert not out["calls"][0]["reached_dsl"] and out["calls"][1]["reached_dsl"]
    assert "irscan guard: pitched_copy (launched by copy_host): 2 condition(s); checked in Python" in proc.stderr


def test_a_kernel_without_findings_keeps_the_dsls_own_class(run_python) -> None:
    """No finding, no check: the compiled function is the DSL's object, untouched (zero cost)."""
    code = (
        "import sys; sys.path.insert(0, 'tests'); import irscan\n"
        "from test_guard_launch import _compile, CLEAN\n"
        "with irscan.guard() as g:\n    f = _compile(CLEAN, '')\n"
        "print(type(f).__module__, type(f).__name__, hasattr(f, '_irscan_guard'))\n"
    )
    proc = run_python("-c", code, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split()[-3:] == [
        "cutlass.cutlass_dsl.cuda_jit_executor",
        "CudaDialectJitCompiledFunction",
        "False",
    ]


if __name__ == "__main__":
    prog, mode, opts, how = sys.argv[1:5]
    print(json.dumps(child(Path(prog), mode, "" if opts == "-" else opts, how == "env")))


def test_a_guard_inside_a_capture_rides_on_it(run_python, tmp_path) -> None:
    """``with irscan.capture(out=D): with irscan.guard():``: the captures still go to D."""
    code = (
        "import sys; sys.path.insert(0, 'tests'); import irscan\n"
        "from test_guard_launch import _compile, PROGRAM\n"
        f"with irscan.capture(out={str(tmp_path)!r}):\n    with irscan.guard():\n        f = _compile(PROGRAM, '')\n"
        "print(hasattr(f, '_irscan_guard'))\n"
    )
    proc = run_python("-c", code, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split()[-1] == "True"
    assert [p.name.startswith("000_kernel_cutlass_pitched_copy") for p in tmp_path.iterdir()] == [True]


HOST_BUILT = """
import irscan
from irscan.guarding.dryrun import virtual
with irscan.guard() as g:
    import cutlass, cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_tensor

    @cute.kernel
    def col_copy(t: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        t[tidx, bidx] = t[tidx, bidx] + 1.0

    @cute.jit
    def host(a: cute.Tensor):  # the kernel gets a view the host builds: a's row stride as its mode 1
        t = cute.make_tensor(a.iterator, cute.make_layout((a.shape[1], a.shape[0]), stride=(1, a.stride[0])))
        col_copy(t).launch(grid=(cute.size(a, mode=[0]), 1, 1), block=(128, 1, 1))

    a = make_fake_tensor(cutlass.Float32, (cute.sym_int32(), 128), stride=(cute.sym_int32(), 1), assumed_align=16)
    f = cute.compile(host, a)
for pitch in (262_144, 262_176):
    try:
        f(virtual((8192, 128), (pitch, 1)))
    except Exception as e:
        print(pitch, type(e).__name__, str(e).strip().splitlines()[0])
"""


def test_a_view_the_host_builds_is_checked_through_the_arguments_fields(run_python, tmp_path) -> None:
    """The kernel's tensor is a view the host assembles from the argument's fields, and the grid is the
    argument's row count: the guard reads the argument's layout before lowering, traces the view's
    stride to the argument's row pitch, and decides at the pitch where ctaid.x * pitch + tid.x leaves i32."""
    _no_gpu()
    prog = tmp_path / "host_built.py"
    prog.write_text(HOST_BUILT)
    proc = run_python(prog, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    below, above = proc.stdout.strip().splitlines()[-2:]
    assert below.startswith("262144 DSLCudaRuntimeError") or below.startswith("262144 RuntimeError"), below
    assert above.startswith("262176 WrapError") and "ctaid.x*t.stride[1] + tid.x reaches 2,147,483,743" in above
    assert "(grid.x = 8,192, block.x = 128, t.stride[1] = 262,176)" in above, above
