"""A ninth holdout set of real CuTe DSL kernels, compiled with no GPU (worker side of regen.py's
holdout-9 captures): flashinfer 0.7.4 and quack 0.6.5 kernels (source file + config) in no earlier
capture, triaged by hand on irscan as it was before anyone looked at them.

Same recipe as holdout3_workers.py (flashinfer_workers.py's :func:`pretend_gpu` and compile-only
stand-ins): each function takes the arch and returns a zero-argument callable that makes the
kernel's real ``cute.compile`` calls, through the package's own compile function where it has one
(its cached getter called through ``__wrapped__``, which builds the fake cute tensors itself), else
as that function does (the fake tensors it would build, said in the docstring).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from pathlib import Path

_spec = importlib.util.spec_from_file_location("flashinfer_workers", Path(__file__).with_name("flashinfer_workers.py"))
assert _spec and _spec.loader
fw = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fw)


# ------------------------------------------------------------------------------------ quack, sm_90a
def quack_layernorm(arch: str) -> Callable[[], None]:
    """quack's LayerNorm forward (rmsnorm.py ``RMSNorm(is_layernorm=True)`` through
    ``_compile_rmsnorm_fwd``, symbolic rows): bf16 x/out, bf16 residual in and f32 residual out, f32
    weight and bias, rstd and mean, N 4096; and per-head RMSNorm (weight (H, N), symbolic heads), N 128."""
    from cutlass import BFloat16, Float32

    mod = importlib.import_module("quack.rmsnorm")  # quack/__init__ shadows the module with a function

    def run() -> None:
        # dtype, out, res, weight, bias, res_out dtypes, N, has_rstd, has_mean, is_layernorm, per_head
        mod._compile_rmsnorm_fwd.__wrapped__(
            BFloat16, BFloat16, BFloat16, Float32, Float32, Float32, 4096, True, True, True, False
        )
        mod._compile_rmsnorm_fwd.__wrapped__(
            BFloat16, BFloat16, None, Float32, None, None, 128, True, False, False, True
        )

    return run


def quack_gemm_symmetric(arch: str) -> Callable[[], None]:
    """quack's symmetric GEMM D = A A^T (gemm_symmetric.py ``_compile_gemm_symmetric``,
    ``GemmSymmetricSm90``: off-diagonal tiles also store the transposed tile as PostAct), bf16,
    K-major, batched, tile 128x128, cluster 1x1, persistent, with a C (beta = 1) epilogue."""
    from cutlass import BFloat16

    gs = importlib.import_module("quack.gemm_symmetric")
    cap = (int(arch[3]), 0)

    def run() -> None:
        gs._compile_gemm_symmetric.__wrapped__(
            BFloat16, BFloat16, BFloat16, BFloat16, "n",  # a, b, d, c dtypes, c major
            BFloat16, "k", "k", "n", "m",  # postact dtype, a, b, d, postact majors
            (128, 128), (1, 1, 1),  # tile_shape_mn, cluster_shape_mnk
            False, True, False,  # pingpong, persistent, is_dynamic_persistent
            0, 1, cap,  # alpha_mode, beta_mode, device_capacity
        )  # fmt: skip

    return run


# ------------------------------------------------------------------------------ flashinfer, sm_100a
def fi_kda_chunked_prefill(arch: str) -> Callable[[], None]:
    """flashinfer's Blackwell KDA chunked prefill (kda_kernels/kda_chunked_bt16.py ``compile``, the one
    ``cute.compile(host_unified, ...)`` target with its own symbolic fakes from ``_unified_fakes``;
    its eager module load is skipped with no GPU): bf16 q/k/v, bf16 gate (safe gate), f32 state in
    and out, runtime route between the engine and the two-kernel decomposition (mode None)."""
    fw.pretend_gpu(arch)
    import cutlass

    kc = importlib.import_module("flashinfer.kda_kernels.kda_chunked_bt16")
    return lambda: kc.compile.__wrapped__(cutlass.BFloat16, cutlass.Float32, cutlass.BFloat16)


def fi_dense_blockscaled_gemm(arch: str) -> Callable[[], None]:
    """flashinfer's persistent dense block-scaled GEMM (gemm/kernels/dense_blockscaled_gemm_sm100.py
    ``Sm100BlockScaledPersistentDenseGemmKernel``, compiled by gemm_mm_fp4_cute_dsl.py's
    ``_make_blockscaled_gemm_compile_fn``: symbolic M/N/K fakes, scale factors as raw pointers, Int64
    scale-factor extents; max_active_clusters 148, what ``get_max_active_clusters`` gives on a B200):
    NVFP4 (uint8-packed, sf vec 16, e4m3 scales), bf16 out, tile 128x128, cluster 1x1: scalar alpha;
    and 2-CTA tile 256x128, cluster 2x1, per-token alpha (over M)."""
    fw.pretend_gpu(arch)
    import cutlass

    g = importlib.import_module("flashinfer.gemm.gemm_mm_fp4_cute_dsl")
    k = importlib.import_module("flashinfer.gemm.kernels.dense_blockscaled_gemm_sm100")

    def run() -> None:
        for tile, cluster, alpha in (((128, 128), (1, 1), None), ((256, 128), (2, 1), "m")):
            gemm = k.Sm100BlockScaledPersistentDenseGemmKernel(16, tile, cluster, False, True, alpha)
            g._make_blockscaled_gemm_compile_fn(
                gemm, cutlass.Uint8, cutlass.Float8E4M3FN, cutlass.BFloat16, 32, False, 64, 32, 64, 1, 148, alpha
            )()

    return run


def fi_filtered_topk(arch: str) -> Callable[[], None]:
    """flashinfer's filtered-radix decode top-k (topk_varlen's ``radix_filter`` backend,
    kernels/filtered_topk_decode.py ``_prepare_one_pass_topk``, which builds symbolic fakes: rows,
    columns, i64 row stride, batch): f32 logits, top-2048, next_n 1, REREAD overflow, its automatic
    knobs for 4 rows of 131,072 (one-pass cluster of CTAs per row) and for 1024 rows of 32,768 (one
    CTA per row, large occupancy)."""
    fw.pretend_gpu(arch)
    import torch

    ft = importlib.import_module("flashinfer.topk_varlen.kernels.filtered_topk_decode")
    fw._patch_compile_only(importlib.import_module("flashinfer.jit.cute_dsl_core"))

    def run() -> None:
        ft.compiled_filter_topk_dict.clear()
        for rows, cols in ((4, 131072), (1024, 32768)):
            logits = torch.zeros(rows, cols, dtype=torch.float32)
            ft._prepare_one_pass_topk(logits, torch.full((rows,), cols, dtype=torch.int32), 2048, 1)

    return run


def fi_grouped_gemm_masked(arch: str) -> Callable[[], None]:
    """flashinfer's Blackwell masked batched block-scaled GEMM (gemm/kernels/grouped_gemm_masked_blackwell.py
    ``get_cute_dsl_compiled_masked_gemm_kernel``, the getter ``grouped_gemm_nt_masked`` calls; static
    m/n/k/l, raw pointers, per-expert masked_m at run time): NVFP4 A/B (sf vec 16, e4m3 scales), bf16
    out, f32 per-expert alpha, 8 experts, up to 1024 tokens each, n 4096, k 7168, tile 128x128, 148
    SMs: plain (c n-major), and swap-AB (c m-major)."""
    fw.pretend_gpu(arch)
    import cutlass

    gm = importlib.import_module("flashinfer.gemm.kernels.grouped_gemm_masked_blackwell")
    sm = "sm_" + arch[3:].rstrip("a")

    def run() -> None:
        for swap in (False, True):
            gm.get_cute_dsl_compiled_masked_gemm_kernel.__wrapped__(
                1024, 4096, 7168, 8, "k", "k", "m" if swap else "n",
                cutlass.Float4E2M1FN, cutlass.Float8E4M3FN, cutlass.BFloat16, cutlass.Float32, 16,
                (128, 128), (1, 1), 148, sm, 0, False, False, False, swap,
            )  # fmt: skip

    return run


def fi_prefill_variants(arch: str) -> Callable[[], None]:
    """flashinfer's Blackwell FMHA prefill (``_get_compiled_prefill_kernel``, prefill.py) with the
    configs fi_prefill_sm100a leaves out: bf16, 32 q / 8 KV heads, hd 128; a sliding window (left and
    right window, runtime sizes) with logits soft-capping (``SoftCappingAttention``, cap 30) on a paged
    KV cache (page 64); and ALiBi (``ALiBiAttention``: per-head f32 slopes read from global memory as
    its extra params, shape (32,)) on ragged q/k, persistent, with LSE."""
    fw.pretend_gpu(arch)
    import cutlass
    import torch

    spec = importlib.util.spec_from_file_location("holdout2_workers", Path(__file__).with_name("holdout2_workers.py"))
    assert spec and spec.loader
    h2 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(h2)
    h2._fa4()  # regen.py's fake cutlass.utils.HardwareInfo: the persistent grid asks it for the SM count
    bp = importlib.import_module("flashinfer.cute_dsl.attention.wrappers.batch_prefill")
    mask = importlib.import_module("flashinfer.cute_dsl.attention.fusion.mask")
    var = importlib.import_module("flashinfer.cute_dsl.attention.fusion.variant")
    bf = cutlass.BFloat16

    def run() -> None:
        window = mask.MaskSpec(has_window_left=True, has_window_right=True)
        none = mask.MaskSpec(has_window_left=False, has_window_right=False)
        # in, out dtypes, qo heads, kv heads, head dim, mask, persistent, variant, params shape
        cap = var.SoftCappingAttention(30.0)
        bp._get_compiled_prefill_kernel.__wrapped__(bf, bf, 32, 8, 128, window, False, cap, None, page_size=64)
        alibi = var.ALiBiAttention(var.ALiBiAttention.get_slopes(32).to(torch.float32))
        bp._get_compiled_prefill_kernel.__wrapped__(bf, bf, 32, 8, 128, none, True, alibi, (32,), with_lse=True)

    return run
