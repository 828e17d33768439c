"""The launch guard on real hardware: a fault and a silent corruption turned into WrapError.

Two kernels, the two failures of shared/docs/gpu-results.md:

* ``poke``: ``t[row, 0] = 1`` on a static (2^29 + 1, 4) f32 layout with an ``Int32`` row: the offset
  ``row * 4`` is formed in i32 and sign-extended (``mul.wide.s32``), so ``row = 2^29`` addresses
  8 GiB before the tensor: ``CUDA error: an illegal memory access``.
* ``fill_rows``: each CTA writes its row number into its row of an int32 (rows, 12288) tensor, tile
  chosen with ``block_idx`` against the static row stride; NVVM zero-extends the 32-bit product
  (``mul.wide.u32``), so past 2^32 elements the CTAs write into the first rows instead: no fault,
  rows silently wrong (the first at 349,526).

One process per case (an illegal address poisons the process's CUDA context):
``python bench/gpu/guard_proof.py CASE`` prints one JSON line; ``bench/gpu/run_guard_proof.sh`` runs
them all.  Cases: ``{poke,fill}-{plain,guarded,guarded-tvm}``.
"""

import contextlib
import json
import sys
from typing import Any

POKE_ROWS, POKE_BAD = 2**29 + 1, 2**29
FILL_COLS, FILL_BAD_ROWS = 12288, 349_530  # 349,526 * 12288 > 2^32: the first wrong row
FILL_GOOD_ROWS = 174_763  # the largest row count whose 12288 * (rows - 1) stays <= 2^31 - 1 (the MLIR's nsw)


def kernels() -> tuple[Any, Any]:
    import cutlass
    import cutlass.cute as cute

    @cute.kernel
    def poke(t: cute.Tensor, row: cutlass.Int32):
        t[row, 0] = 1.0

    @cute.jit
    def poke_host(t: cute.Tensor, row: cutlass.Int32):
        poke(t, row).launch(grid=(1, 1, 1), block=(1, 1, 1))

    @cute.kernel
    def fill_rows(t: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        tile = cute.local_tile(t, (1, 128), (bidx, 0))
        tile[0, tidx] = bidx

    @cute.jit
    def fill_host(t: cute.Tensor):
        fill_rows(t).launch(grid=(cute.size(t, mode=[0]), 1, 1), block=(128, 1, 1))

    return poke_host, fill_host


def _launch(f: Any, *args: Any) -> dict[str, Any]:
    """One launch and a synchronize; the outcome as data (WrapError, a CUDA error, or ran)."""
    import torch

    try:
        f(*args)
        torch.cuda.synchronize()
        return {"outcome": "ran"}
    except Exception as e:
        return {"outcome": type(e).__name__, "message": " ".join(str(e).split())[:300]}


def _arg(t: Any, tvm: bool, dynamic_rows: bool) -> Any:
    """What the user passes: the torch tensor itself (TVM-FFI), or its DSL view (plain JIT)."""
    from cutlass.cute.runtime import from_dlpack

    if tvm:
        return t
    v = from_dlpack(t, assumed_align=16)
    return v.mark_compact_shape_dynamic(mode=0) if dynamic_rows else v


def case(name: str) -> dict[str, Any]:
    import torch

    kernel, mode = name.split("-", 1)
    guarded, tvm = mode.startswith("guarded"), mode.endswith("tvm")
    out: dict[str, Any] = {"case": name, "gpu": torch.cuda.get_device_name(0)}
    options = "--enable-tvm-ffi" if tvm else ""

    import irscan

    ctx = irscan.guard(mode="raise") if guarded else contextlib.nullcontext()
    with ctx:
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.runtime import from_dlpack

        poke_host, fill_host = kernels()
        if kernel == "poke":
            t = torch.zeros((POKE_ROWS, 4), dtype=torch.float32, device="cuda")
            f = cute.compile(poke_host, from_dlpack(t, assumed_align=16), cutlass.Int32(0), options=options)
        else:
            t = torch.zeros((FILL_GOOD_ROWS, FILL_COLS), dtype=torch.int32, device="cuda")
            sample = from_dlpack(t, assumed_align=16).mark_compact_shape_dynamic(mode=0)
            f = cute.compile(fill_host, sample, options=options)
    out["guarded_class"] = type(f).__name__
    if kernel == "poke":  # the wrapping row first, then a correct launch in the same process
        out["bad"] = _launch(f, _arg(t, tvm, False), POKE_BAD)
        out["good"] = _launch(f, _arg(t, tvm, False), POKE_BAD - 1)
        if out["good"]["outcome"] == "ran":
            nz = torch.nonzero(t).tolist()
            out["good"]["written"] = nz
            out["good"]["right"] = nz == [[POKE_BAD - 1, 0]]  # exactly one element, the right one
        return out
    del t
    for label, rows in (("bad", FILL_BAD_ROWS), ("good", FILL_GOOD_ROWS)):
        t = torch.full((rows, FILL_COLS), -1, dtype=torch.int32, device="cuda")
        res = _launch(f, _arg(t, tvm, True))
        if res["outcome"] == "ran":
            want = torch.arange(rows, dtype=torch.int32, device="cuda")
            wrong = torch.nonzero(t[:, :128].ne(want[:, None]).any(dim=1)).flatten()
            res["rows_wrong"] = int(wrong.numel())
            res["first_wrong"] = int(wrong[0]) if wrong.numel() else None
            res["wrong_sample"] = wrong[:8].tolist()
        out[label] = res
        del t
        torch.cuda.empty_cache()
    return out


if __name__ == "__main__":
    print(json.dumps(case(sys.argv[1])), flush=True)
