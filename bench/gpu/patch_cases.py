"""One GPU case of the patch-mode hardware proof, in this process: ``python patch_cases.py CASE MODE``.

CASE: ``fault`` (static layout x Int32 row: the offset passes 2^31 and is sign-extended, the address
lands before the tensor), ``corrupt`` (block_idx x static row stride, zero-extended by NVVM: CTAs past
2^32 elements write into the first rows), ``ub`` (stacked layers, a constant layer offset added in i32
with nsw: undefined behaviour that today's PTX happens to get right), ``speed`` (the ``corrupt``
kernel below its threshold: a bandwidth-bound write, timed).  MODE: ``plain`` or ``patched`` (compiled
inside ``irscan.patch()``).  Prints one JSON line: the outcome against a torch reference.

An illegal address poisons the CUDA context of the process it happens in: one process per case and
mode (bench/gpu/patch_proof.py runs them all).  The shapes follow shared/docs/gpu-results.md.
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
import time
from typing import Any

CASE, MODE = sys.argv[1], sys.argv[2]
DRY = "--dry" in sys.argv  # compile only, at a made-up address (a machine with no GPU: checks the script)
OUT = tempfile.mkdtemp(prefix=f"irscan-gpu-{CASE}-{MODE}-")


def compiling() -> Any:
    if MODE == "patched":
        import irscan

        return irscan.patch(out=OUT, registers=False)
    return contextlib.nullcontext()


ctx = compiling()  # before `import cutlass`: capture sets the DSL's environment (caches off)
patcher = ctx.__enter__()

if not DRY:
    import torch  # noqa: F401

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402
from cutlass.cute.runtime import make_ptr  # noqa: E402


def ptr(t: Any, dtype: Any) -> Any:
    return make_ptr(dtype, 2**20 if DRY else t.data_ptr(), cute.AddressSpace.gmem, assumed_align=16)


def dry_run() -> dict[str, Any]:
    fn, args = {
        "fault": (write_one_host, (ptr(None, cutlass.Float32), cutlass.Int32(2**28))),
        "corrupt": (fill_host_for(CORRUPT_ROWS), (ptr(None, cutlass.Int8),)),
        "speed": (fill_dyn_host, (ptr(None, cutlass.Int8), cutlass.Int32(SPEED_ROWS))),
        "ub": (scale_host, (ptr(None, cutlass.BFloat16), ptr(None, cutlass.BFloat16))),
    }[CASE]
    cute.compile(fn, *args)
    return {"case": CASE, "mode": MODE, "right": None, "detail": "compiled only (--dry)"}


# -- fault: t[row, 0] = 1 for a static (2^28 + 1, 8) f32 layout, row = 2^28: row * 8 = 2^31 wraps
FAULT_ROWS, FAULT_COLS = 2**28 + 1, 8


@cute.kernel
def write_one(t: cute.Tensor, row: cutlass.Int32):
    t[row, 0] = cutlass.Float32(1.0)


@cute.jit
def write_one_host(p: cute.Pointer, row: cutlass.Int32):
    t = cute.make_tensor(p, cute.make_layout((FAULT_ROWS, FAULT_COLS), stride=(FAULT_COLS, 1)))
    write_one(t, row).launch(grid=(1, 1, 1), block=(1, 1, 1))


# -- corrupt / speed: CTA b writes row b of a static (rows, 1024) int8 layout with (b % 127) + 1
COLS = 1024
CORRUPT_ROWS, SPEED_ROWS = 2**22 + 2**12, 2**21  # 4.3e9 elements (past 2^32) and 2.1e9 (below 2^31)


@cute.kernel
def fill_rows(t: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    t[bidx, tidx] = cutlass.Int8(bidx % 127 + 1)


def fill_host_for(rows: int) -> Any:
    @cute.jit
    def fill_host(p: cute.Pointer):
        t = cute.make_tensor(p, cute.make_layout((rows, COLS), stride=(COLS, 1)))
        fill_rows(t).launch(grid=(rows, 1, 1), block=(COLS, 1, 1))

    return fill_host


@cute.jit
def fill_dyn_host(p: cute.Pointer, nrows: cutlass.Int32):
    """The ``corrupt`` layout with a runtime grid: patched (the grid is not known at compile time),
    launched below the threshold for the timing."""
    t = cute.make_tensor(p, cute.make_layout((CORRUPT_ROWS, COLS), stride=(COLS, 1)))
    fill_rows(t).launch(grid=(nrows, 1, 1), block=(COLS, 1, 1))


# -- ub: out[l, i] = w[l, i] * 2 for a static stack of layers (43, 48 Mi) bf16; the layer offset
# l * 48 Mi is a compile-time constant added in i32 with nsw: 42 * 48 Mi + i passes 2^31 (not 2^32)
LAYERS, WIDTH = 43, 48 * 2**20


@cute.kernel
def scale_layers(w: cute.Tensor, out: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * 256 + tidx
    for layer in cutlass.range_constexpr(LAYERS):
        out[layer, i] = w[layer, i] * cutlass.BFloat16(2.0)


@cute.jit
def scale_host(pw: cute.Pointer, po: cute.Pointer):
    lay = cute.make_layout((LAYERS, WIDTH), stride=(WIDTH, 1))
    scale_layers(cute.make_tensor(pw, lay), cute.make_tensor(po, lay)).launch(
        grid=(WIDTH // 256, 1, 1), block=(256, 1, 1)
    )


def run() -> dict[str, Any]:
    res: dict[str, Any] = {"case": CASE, "mode": MODE}
    if CASE == "fault":
        t = torch.zeros(FAULT_ROWS, FAULT_COLS, dtype=torch.float32, device="cuda")
        f = cute.compile(write_one_host, ptr(t, cutlass.Float32), cutlass.Int32(2**28))
        f(ptr(t, cutlass.Float32), cutlass.Int32(2**28))
        torch.cuda.synchronize()
        res["right"] = bool(t[2**28, 0].item() == 1.0 and t.sum().item() == 1.0)
        res["detail"] = f"t[2**28, 0] = {t[2**28, 0].item()}, sum {t.sum().item()}"
    elif CASE in ("corrupt", "speed"):
        rows = CORRUPT_ROWS if CASE == "corrupt" else SPEED_ROWS
        t = torch.zeros(CORRUPT_ROWS, COLS, dtype=torch.int8, device="cuda")
        if CASE == "corrupt":
            f = cute.compile(fill_host_for(rows), ptr(t, cutlass.Int8))
            args: tuple[Any, ...] = (ptr(t, cutlass.Int8),)
        else:
            f = cute.compile(fill_dyn_host, ptr(t, cutlass.Int8), cutlass.Int32(rows))
            args = (ptr(t, cutlass.Int8), cutlass.Int32(rows))
        f(*args)
        torch.cuda.synchronize()
        t = t[:rows]
        want = (torch.arange(rows, device="cuda", dtype=torch.int64) % 127 + 1).to(torch.int8)
        wrong = (t != want[:, None]).any(dim=1)
        n = int(wrong.sum().item())
        res["right"] = n == 0
        res["detail"] = f"{n} rows wrong" + (f", the first at row {int(wrong.nonzero()[0].item()):,}" if n else "")
        if CASE == "speed":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            times = []
            for _ in range(20):
                start.record()
                f(*args)
                end.record()
                torch.cuda.synchronize()
                times.append(start.elapsed_time(end))
            times.sort()
            res["kernel_ms_median"] = times[len(times) // 2]
            res["GBps"] = rows * COLS / (times[len(times) // 2] * 1e6)
    elif CASE == "ub":
        w = torch.randn(LAYERS, WIDTH, dtype=torch.bfloat16, device="cuda")
        o = torch.zeros_like(w)
        f = cute.compile(scale_host, ptr(w, cutlass.BFloat16), ptr(o, cutlass.BFloat16))
        f(ptr(w, cutlass.BFloat16), ptr(o, cutlass.BFloat16))
        torch.cuda.synchronize()
        n = int((o != w * 2).sum().item())
        res["right"] = n == 0
        res["detail"] = f"{n} mismatches of {o.numel():,}"
    else:
        raise SystemExit(f"unknown case {CASE}")
    return res


if __name__ == "__main__":
    t0 = time.perf_counter()
    try:
        out = dry_run() if DRY else run()
    except Exception as exc:  # a fault: CUDA's message is the outcome
        out = {"case": CASE, "mode": MODE, "right": False, "detail": f"{type(exc).__name__}: {str(exc)[:200]}"}
    ctx.__exit__(None, None, None)
    if patcher is not None:
        reps = [r.to_json() for r in patcher.reports.values()]
        out["patches"] = [p for r in reps for p in r["patches"]]
        out["not_patched"] = [n for r in reps for n in r["not_patched"]]
        out["rescan_findings"] = sum(len(r["rescan_findings"]) for r in reps)
    out["seconds"] = round(time.perf_counter() - t0, 2)
    print(json.dumps(out, default=str))
