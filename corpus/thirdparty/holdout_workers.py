"""A holdout set of real CuTe DSL kernels, compiled with no GPU (worker side of regen.py's holdout
captures): kernels nobody tuned irscan on, triaged by hand before any analysis work looked at them,
so their precision estimates how irscan does on kernels it has not seen.

Same recipe as flashinfer_workers.py (whose :func:`pretend_gpu` and :func:`_compile_only` stand-ins
are reused): each function takes the arch and returns a zero-argument callable that makes the
kernel's real ``cute.compile`` calls through the package's own compile function (its cached getter
called through ``__wrapped__``, which builds the fake cute tensors itself).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

_spec = importlib.util.spec_from_file_location("flashinfer_workers", Path(__file__).with_name("flashinfer_workers.py"))
assert _spec and _spec.loader
fw = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fw)


def _no_cache(*modules: Any) -> None:
    """The modules' ``build_and_load_cute_dsl_kernel`` compiles and returns a no-op (nothing cached)."""
    fw._patch_compile_only(*modules)


# ------------------------------------------------------------------------------- flashinfer, sm_90a
def fi_causal_conv1d(arch: str) -> Callable[[], None]:
    """Mamba causal conv1d (width 4), bf16, channel-last state (slots, channels, history): the varlen
    prefill kernel (packed tokens, cu_seqlens, initial states, bf16 bias) with its chunk map, and the
    decode kernel (one token per sequence, state slots by index)."""
    fw.pretend_gpu(arch)
    c = importlib.import_module("flashinfer.cute_dsl.causal_conv1d")
    _no_cache(c)
    a = arch

    def run() -> None:
        c.get_chunk_map_kernel.cache_clear()
        c.get_conv_kernel.cache_clear()
        c.get_chunk_map_kernel(a, 0)
        # prefill, packed, has_initial, speculative, weight_fp32, bias_kind, arch, device,
        # channel_contiguous, max_tokens, inline_prefix, weight_alignment
        c.get_conv_kernel(True, True, True, False, False, "bf16", a, 0, False, 0, False, 8, full_tile=True)
        c.get_conv_kernel(False, False, False, False, False, "bf16", a, 0, False, 0, False, 8, block_t=16)

    return run


def fi_qk_l2norm(arch: str) -> Callable[[], None]:
    """GDN Q/K L2 normalisation of rows (bf16, head dim 128; rows = tokens x heads, 64-bit extents)."""
    fw.pretend_gpu(arch)
    import torch

    q = importlib.import_module("flashinfer.gdn_kernels.qk_l2norm")
    fw._patch_gdn(q)
    key = (0, arch.removesuffix("a").removeprefix("sm_"))
    return lambda: q._compiled.__wrapped__(torch.bfloat16, 128, key)


def fi_radix_topk(arch: str) -> Callable[[], None]:
    """Single-pass multi-CTA radix top-k over rows of f32 logits (top-2048 of a 131,072-wide row, the
    DSA indexer's decode shape): the config flashinfer picks for 4 rows on 132 SMs (several CTAs per
    row, global histograms) and for 1024 rows (one CTA per row)."""
    fw.pretend_gpu(arch)
    import cutlass
    import torch

    t = importlib.import_module("flashinfer.topk_varlen.topk_varlen")
    n, sms = 131072, 132

    def run() -> None:
        for rows in (4, 1024):
            ctas, chunk = t._radix_get_chunk_config(n, torch.float32, rows, sms, 232_448)
            t._compile_radix.__wrapped__(cutlass.Float32, 2048, 1, 1, n, False, ctas, chunk, sms)

    _no_cache(importlib.import_module("flashinfer.jit.cute_dsl_core"))
    return run


# ------------------------------------------------------------------------------ flashinfer, sm_100a
def fi_rmsnorm_fp4quant(arch: str) -> Callable[[], None]:
    """RMSNorm + NVFP4 output (block 16, e4m3 scales), bf16 H=4096: 128x4-swizzled and linear scales."""
    fw.pretend_gpu(arch)
    r = importlib.import_module("flashinfer.cute_dsl.rmsnorm_fp4quant")
    sm = fw._sm(arch)

    def run() -> None:
        for swizzled in (True, False):
            r._get_compiled_kernel.__wrapped__(4096, 16, False, sm, "e4m3", swizzled)

    return run


def fi_add_rmsnorm_fp4quant(arch: str) -> Callable[[], None]:
    """Fused residual add + RMSNorm + NVFP4 output, bf16 H=4096, swizzled scales, with the normalised
    bf16 output too: the launch configs flashinfer picks for 8 and for 8192 rows."""
    fw.pretend_gpu(arch)
    import cutlass

    r = importlib.import_module("flashinfer.cute_dsl.add_rmsnorm_fp4quant")
    sm = fw._sm(arch)
    kern = r.AddRMSNormFP4QuantKernel

    def run() -> None:
        for m in (8, 8192):
            cfg = kern._compute_launch_config(4096, m, cutlass.BFloat16, sm)
            r._get_compiled_kernel.__wrapped__(4096, 16, False, sm, "e4m3", True, cfg, False, False, True)

    return run


def fi_bi_quantize(arch: str) -> Callable[[], None]:
    """flashinfer's batch-invariant MXFP8 and NVFP4 quantisation (bf16, K=4096, 128x4 scales; M, K and
    the row strides are runtime arguments, M a 64-bit extent): the configs its dispatcher picks for
    M=8192 on 148 SMs (tile tier) and M=16 (row tier); NVFP4 per-tensor and per-token."""
    fw.pretend_gpu(arch)
    jit = importlib.import_module("flashinfer.batch_invariant.jit")
    mk = importlib.import_module("flashinfer.batch_invariant.quantization.mx_kernel")
    ms = importlib.import_module("flashinfer.batch_invariant.quantization.mx_schedule")
    spec = importlib.import_module("flashinfer.batch_invariant.quantization.mx_spec")
    nk = importlib.import_module("flashinfer.batch_invariant.quantization.nvfp4_kernel")
    ns = importlib.import_module("flashinfer.batch_invariant.quantization.nvfp4_schedule")
    nspec = importlib.import_module("flashinfer.batch_invariant.quantization.nvfp4_spec")
    jit.build_and_load = lambda module, kernel, compile_fn: fw._compile_only(module, kernel, compile_fn)
    k, sms = 4096, 148

    def run() -> None:
        for m in (8192, 16):
            cfg = ms.default_config(m, k, 2, sms, "128x4")
            mk._compile_bucket.__wrapped__("bf16", cfg.bucket(k), cfg, spec.MXFP8, spec.DEFAULT_RULE, "128x4", False)
        for variant in (nspec.PER_TENSOR, nspec.PER_TOKEN):
            cfg = ns.default_config(k, 8192, 2, variant.per_token, sms, "128x4")
            nk._compile_bucket.__wrapped__("bf16", cfg.bucket(k), cfg, variant, False, "128x4")

    return run


# ----------------------------------------------------------------------------------- FlashAttention-4
def fa4_fwd_combine(arch: str) -> Callable[[], None]:
    """FA4's split-KV combine (``_compile_fwd_combine``, its own fake tensors): bf16 out, f32 partials,
    hdim 128, 16 heads, up to 32 splits (tile_m 8), with LSE: batched (num_splits, b, s, h, d), and
    varlen (num_splits, total_q, h, d) with cu_seqlens and seqused."""
    import cutlass
    from flash_attn.cute import interface as fa

    bf, f32 = cutlass.BFloat16, cutlass.Float32
    sm = int(arch.removeprefix("sm_").rstrip("af"))

    def run() -> None:
        # arch, dtype, dtype_partial, head_dim, num_head, tile_m, k_block_size, log_max_splits,
        # has_cu_seqlens, has_seqused, has_lse, has_virtual_batch_idx, has_num_splits_dynamic, has_semaphore
        fa._compile_fwd_combine(sm, bf, f32, 128, 16, 8, 128, 5, False, False, True, False, False, False)
        fa._compile_fwd_combine(sm, bf, f32, 128, 16, 8, 128, 5, True, True, True, False, False, False)

    return run


def fi_fp8_paged_mqa_logits(arch: str) -> Callable[[], None]:
    """The DSA indexer's FP8 paged MQA logits (``_cached_compile_fp8_kernel``): paged fp8 K cache
    (block 64, hd 128 + 4 scale bytes, block table), 64 heads, next_n 1, f32 logits (B, max_ctx), 148 SMs."""
    fw.pretend_gpu(arch)
    import cutlass

    a = importlib.import_module("flashinfer.attn_scores.attn_scores")
    _no_cache(importlib.import_module("flashinfer.jit.cute_dsl_core"))
    f32 = cutlass.Float32
    sub, regs = a._fp8_epilogue_policy(64, 1, f32)
    return lambda: a._cached_compile_fp8_kernel.__wrapped__(64, 64, 128, 1, 148, f32, f32, f32, sub, regs, arch)


def fi_nvfp4_kv_materialize(arch: str) -> Callable[[], None]:
    """Paged NVFP4 K/V cache (data + e4m3 scales, page tables) dequantised into an FP8 paged workspace,
    head dim 128: physical pages, heads, page size and the tables are runtime extents."""
    fw.pretend_gpu(arch)
    m = importlib.import_module("flashinfer.quantization.kernels.nvfp4_kv_materialize")
    _no_cache(m)
    return lambda: m._get_compiled_kernel.__wrapped__(128)


def fi_moe_finalize(arch: str) -> Callable[[], None]:
    """The Blackwell MoE finalize (unpermute + top-k weighted sum, ``moe_unpermute``): bf16 expert rows,
    hidden 7168, top-8, f32 routing scales; the configs ``moe_unpermute`` picks for > 1024 tokens
    (128 threads, 4 vectors each; permuted and expanded input) and for <= 8 tokens. Compiled as
    ``moe_unpermute`` does (``cute.compile(kernel, *pointers, num_tokens, stream)``), with pointers
    made from made-up aligned addresses and a fake stream."""
    fw.pretend_gpu(arch)
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_ptr

    f = importlib.import_module("flashinfer.fused_moe.cute_dsl.blackwell.moe_finalize")
    gmem = cute.AddressSpace.gmem
    dtypes = (cutlass.BFloat16, cutlass.BFloat16, cutlass.Int32, cutlass.Float32)

    def run() -> None:
        # hidden_size, top_k, threads, enable_pdl, input_is_expanded, vectors_per_thread
        for cfg in ((7168, 8, 128, False, False, 4), (7168, 8, 128, False, True, 7), (7168, 8, 32, False, False, 1)):
            ptrs = [make_ptr(dt, 1 << (32 + i), gmem, assumed_align=16) for i, dt in enumerate(dtypes)]
            cute.compile(f._MoeFinalizeKernel(*cfg), *ptrs, cutlass.Int32(1), cute.runtime.make_fake_stream())

    return run
