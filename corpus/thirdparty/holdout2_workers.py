"""A second holdout set of real CuTe DSL kernels, compiled with no GPU (worker side of regen.py's
holdout-2 captures): kernels in no earlier capture, triaged by hand before any analysis work looked
at them, so their precision estimates how irscan does on kernels it has not seen (the first holdout,
holdout_workers.py, has since been tuned on).

Same recipe as flashinfer_workers.py and holdout_workers.py (whose :func:`pretend_gpu` and
compile-only stand-ins are reused): each function takes the arch and returns a zero-argument
callable that makes the kernel's real ``cute.compile`` calls, through the package's own compile
function where it has one (its cached getter called through ``__wrapped__``, which builds the fake
cute tensors itself), else as that function does.
"""

from __future__ import annotations

import importlib
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


# ------------------------------------------------------------------------------ flashinfer, sm_100a
def fi_fp4_paged_mqa_logits(arch: str) -> Callable[[], None]:
    """The DSA indexer's MXFP4 paged MQA logits (``_cached_compile_fp4_kernel``): paged fp4 K cache
    (block 64, hd 128 packed + 4 scale bytes, block table), 64 heads, next_n 1, f32 logits (B, max_ctx),
    148 SMs; and its GPU schedule kernel (``_compile_schedule_kernel``, 32-row bucket)."""
    fw.pretend_gpu(arch)
    import cutlass

    a = importlib.import_module("flashinfer.attn_scores.attn_scores")
    s = importlib.import_module("flashinfer.attn_scores.kernels.schedule_kernel")
    _no_cache(importlib.import_module("flashinfer.jit.cute_dsl_core"))
    f32 = cutlass.Float32

    def run() -> None:
        # block, heads, head_dim, next_n, sms, epi, out, subtiles, kv_sf_interleaved, arch, next_n_atoms
        a._cached_compile_fp4_kernel.__wrapped__(64, 64, 128, 1, 148, f32, f32, 1, False, arch, 1)
        s._compile_schedule_kernel.__wrapped__(32, a._SPLIT_KV, 148, arch)

    return run


# ----------------------------------------------------------------------------------- FlashAttention-4
def _fa4() -> Any:
    """regen.py's FA4 setup (fake HardwareInfo, fresh compile caches) and FakeTensorMode."""
    import sys

    from torch._subclasses.fake_tensor import FakeTensorMode

    regen = sys.modules.get("__main__")
    setup = getattr(regen, "_fa4_setup", None)
    if setup is None:  # run from elsewhere (a test): load regen.py beside this file
        spec = importlib.util.spec_from_file_location("regen", Path(__file__).with_name("regen.py"))
        assert spec and spec.loader
        regen = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(regen)
    regen._fa4_setup()
    return regen, FakeTensorMode


def fa4_prepare_scheduler(arch: str) -> Callable[[], None]:
    """FA4's varlen scheduler-metadata kernel (``_get_scheduler_metadata``: per-batch m-blocks, dynamic
    split counts, batch sort, heads in L2): 64 sequences (cu_seqlens_q/k), 32 q / 8 KV heads, hdim 128,
    causal, split-KV 4; and the batched, non-causal split-only config."""
    import torch
    from flash_attn.cute import interface as fa

    regen, fake = _fa4()
    i32 = torch.int32

    def run() -> None:
        regen._fa4_reset_caches()
        with fake():
            b = 64
            cu_q = torch.empty(b + 1, dtype=i32, device="cuda")
            cu_k = torch.empty(b + 1, dtype=i32, device="cuda")
            # num_batch, max_seqlen_q, max_seqlen_k, nheads, nheads_kv, headdim, num_splits, tile_m, tile_n
            fa._get_scheduler_metadata(
                b, 4096, 131072, 32, 8, 128, 4, 128, 128, causal=True,
                cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, total_q=b * 4096,
            )  # fmt: skip
            used = torch.empty(b, dtype=i32, device="cuda")
            fa._get_scheduler_metadata(b, 1, 131072, 32, 8, 128, 8, 128, 128, seqused_k=used)

    return run


def _document_mask_fn() -> Any:
    import cutlass.cute as cute

    return cute.jit(_document_mask)


def _document_mask(batch: Any, head: Any, q_idx: Any, kv_idx: Any, seqlen_info: Any, aux: Any) -> Any:
    """Causal document masking: a key is visible to a query of the same document at or before it
    (``aux[0]`` is the (batch, seqlen) document id of each token), FA4's documented mask_mod form."""
    import cutlass
    from flash_attn.cute.utils import scalar_to_ssa

    doc = aux[0]
    b, q, k = batch[0], q_idx[0], kv_idx[0]
    return scalar_to_ssa((q >= k) & (doc[b, q] == doc[b, k]), cutlass.Boolean)


def fa4_block_sparsity(arch: str) -> Callable[[], None]:
    """FA4's block-sparsity precompute (``compute_block_sparsity``) for a causal document mask read from
    an aux tensor of document ids: batch 2, 16 heads, 32k tokens, tiles 128x128, full blocks too;
    batched, and varlen q/k (cu_seqlens, cumulative m-block and block-index offsets)."""
    import torch
    from flash_attn.cute import compute_block_sparsity as cbs

    regen, fake = _fa4()
    i32 = torch.int32

    def run() -> None:
        cbs.compute_block_sparsity.compile_cache = {}
        with fake():
            b, h, s = 2, 16, 32768
            doc = torch.empty(b, s, dtype=i32, device="cuda")
            cbs.compute_block_sparsity(128, 128, b, h, s, s, _document_mask_fn(), [doc], "cuda")

    return run


def fa4_fwd_mla(arch: str) -> Callable[[], None]:
    """FA4's DeepSeek MLA forward (absorbed: q/k rope dim 64, qv/v 512), the 2-CTA kernel
    (``FlashAttentionMLAForwardSm100``; FLASH_ATTENTION_MLA_1CTA=0): 128 q heads, 1 KV head, decode
    (4 sequences, 1 query token) over a paged KV cache (page 64, page table (4, 2048)) with LSE."""
    import os

    import torch
    from flash_attn.cute.interface import _flash_attn_fwd

    regen, fake = _fa4()
    os.environ["FLASH_ATTENTION_MLA_1CTA"] = "0"
    bf = torch.bfloat16

    def run() -> None:
        regen._fa4_reset_caches()
        with fake():
            b, h, pages, page = 4, 128, 8192, 64
            q = torch.empty(b, 1, h, 64, dtype=bf, device="cuda")
            qv = torch.empty(b, 1, h, 512, dtype=bf, device="cuda")
            k = torch.empty(pages, page, 1, 64, dtype=bf, device="cuda")
            v = torch.empty(pages, page, 1, 512, dtype=bf, device="cuda")
            table = torch.empty(b, 2048, dtype=torch.int32, device="cuda")
            used = torch.empty(b, dtype=torch.int32, device="cuda")
            _flash_attn_fwd(q, k, v, qv=qv, page_table=table, seqused_k=used, return_lse=True)

    return run


# ----------------------------------------------------------------------------------------------- quack
def quack_gemm_gather(arch: str) -> Callable[[], None]:
    """quack's GEMM (``_compile_gemm``) on sm_100a (GemmSm100): MoE-style grouped rows, variable-length
    M (cu_seqlens_m) with A gathered through a row-index table (gather_A, cp.async gather), f32
    row-vector and C (beta) epilogue, bf16, tile 128x128, cluster 1x1, persistent."""
    from cutlass import BFloat16, Float32

    gemm = importlib.import_module("quack.gemm")
    from quack.gemm_config import SplitKMode
    from quack.rounding import RoundingMode

    cap = (9, 0) if arch.startswith("sm_90") else (10, 0)
    return lambda: gemm._compile_gemm.__wrapped__(
        BFloat16, BFloat16, BFloat16, BFloat16,  # a, b, d, c dtypes
        "k", "k", "n", "n",  # a, b, d, c majors
        (128, 128), (1, 1, 1),  # tile_shape_mn, cluster_shape_mnk
        False, True, False,  # pingpong, persistent, is_dynamic_persistent
        Float32, None, 0,  # rowvec, colvec dtypes, colvec_ndim
        0, 1, False,  # alpha_mode, beta_mode, add_to_output
        None, True, False, True, False, False,  # concat_layout, varlen_m/k, gather_A, tma_gather, batch_idx_permute
        cap, RoundingMode.RN, 0, None,  # device_capacity, rounding_mode, sr_seed_mode, num_warps
        split_k_mode=SplitKMode.SERIAL,
    )  # fmt: skip


def fi_mla_decode(arch: str) -> Callable[[], None]:
    """flashinfer's monolithic Blackwell MLA decode (``_get_compiled_mla_kernel``: DeepSeek shape,
    kv_lora_rank 512, rope 64, 128 heads, paged latent cache, page 64, 2-CTA clusters): bf16 and fp8
    (e4m3 in, bf16 out), persistent, variable sequence lengths, one query token, split-KV reducer."""
    fw.pretend_gpu(arch)
    import torch

    torch.cuda.is_current_stream_capturing = lambda: False  # asks the driver
    m = importlib.import_module("flashinfer.cute_dsl.attention.monolithic.mla_decode")
    _no_cache(m, importlib.import_module("flashinfer.jit.cute_dsl_core"))
    bf = torch.bfloat16

    def run() -> None:
        for dt in (bf, torch.float8_e4m3fn):
            # arch, dtype, out dtype, page, kv_lora_rank, rope, heads, seq_q, persistent, var_seq, var_q,
            # var_split_kv
            m._get_compiled_mla_kernel.__wrapped__(arch, dt, bf, 64, 512, 64, 128, 1, True, True, False, False)

    return run


# ------------------------------------------------------------------- flashinfer experimental b12x (sm_120a)
def b12x_embedding_gemv(arch: str) -> Callable[[], None]:
    """flashinfer's b12x (RTX Blackwell) row kernels on raw pointers with runtime i64 strides, compiled
    as their compile functions do (``cute.compile(kernel, *pointers, scalars..., stream)``, pointers at a
    made-up aligned address): the embedding row gather (width 7168, bf16 table and q8_0 blocks, i64 ids,
    runtime row count / table rows / row stride) and the unquantised projection's SIMT small-M GEMV
    (8 rows per tile) and MMA GEMM (N=7168, K=4096, bf16, bias)."""
    import cutlass
    import cutlass.cute as cute
    from cutlass import Int32, Int64
    from cutlass.cute.runtime import make_fake_stream, make_ptr

    emb = importlib.import_module("flashinfer.experimental.b12x.sequence.embedding._kernel")
    gk = importlib.import_module("flashinfer.experimental.b12x.gemm.bf16_gemv._kernel")
    gmem = cute.AddressSpace.gmem
    bf, u8 = cutlass.BFloat16, cutlass.Uint8

    def ptrs(*types: Any) -> list[Any]:
        return [make_ptr(t, 1 << (32 + i), gmem, assumed_align=t.width // 8) for i, t in enumerate(types)]

    def run() -> None:
        width, n, k = 7168, 7168, 4096
        for q8 in (False, True):
            p = ptrs(u8 if q8 else bf, cutlass.Int64, bf, cutlass.Int32)
            cute.compile(emb._Embedding(width, q8), *p, Int32(1), Int64(1), Int64(width), Int32(0), make_fake_stream())
        for kern in (gk.SmallNGemvKernel(n, k, True, True, 8), gk.Bf16GemmKernel(n, k, True)):
            p = ptrs(bf, bf, bf, bf)
            args = (Int32(1), Int64(k), Int64(k), Int64(n), Int64(1), Int64(1), Int32(0))
            cute.compile(kern, *p, *args, make_fake_stream())

    return run


def fa4_bwd_varlen(arch: str) -> Callable[[], None]:
    """FA4's backward on sm_120a (``FlashAttentionBackwardSm120``: flash_bwd.py's sm_80 mainloop, with its
    preprocess and dq postprocess kernels) through ``_flash_attn_bwd``: varlen (64 sequences packed,
    cu_seqlens q/k), GQA 32 q / 8 KV heads, hdim 128, bf16, causal."""
    import torch
    from flash_attn.cute.interface import _flash_attn_bwd

    regen, fake = _fa4()
    bf = torch.bfloat16

    def run() -> None:
        regen._fa4_reset_caches()
        with fake():
            b, total, h, hk, d = 64, 65536, 32, 8, 128
            q, out, dout = (torch.empty(total, h, d, dtype=bf, device="cuda") for _ in range(3))
            k, v = (torch.empty(total, hk, d, dtype=bf, device="cuda") for _ in range(2))
            lse = torch.empty(h, total, dtype=torch.float32, device="cuda")
            cu = torch.empty(b + 1, dtype=torch.int32, device="cuda")
            _flash_attn_bwd(
                q, k, v, out, dout, lse, causal=True, cu_seqlens_q=cu, cu_seqlens_k=cu,
                max_seqlen_q=4096, max_seqlen_k=4096,
            )  # fmt: skip

    return run


def fi_prefill(arch: str) -> Callable[[], None]:
    """flashinfer's Blackwell FMHA prefill (``_get_compiled_prefill_kernel``, prefill.py's
    BlackwellFusedMultiHeadAttentionForward): bf16, 32 q / 8 KV heads, hdim 128, ragged q/k (indptr);
    causal (non-persistent) with LSE, and a paged KV cache (page 64) with no mask (persistent)."""
    fw.pretend_gpu(arch)
    import cutlass

    _fa4()  # regen.py's fake cutlass.utils.HardwareInfo: the persistent grid asks it for the SM count
    bp = importlib.import_module("flashinfer.cute_dsl.attention.wrappers.batch_prefill")
    mask = importlib.import_module("flashinfer.cute_dsl.attention.fusion.mask")
    bf = cutlass.BFloat16

    def run() -> None:
        causal = mask.MaskSpec(has_window_left=False, has_window_right=True)
        none = mask.MaskSpec(has_window_left=False, has_window_right=False)
        # in, out dtypes, qo heads, kv heads, head dim, mask, persistent, variant, params shape
        bp._get_compiled_prefill_kernel.__wrapped__(bf, bf, 32, 8, 128, causal, False, None, None, with_lse=True)
        bp._get_compiled_prefill_kernel.__wrapped__(bf, bf, 32, 8, 128, none, True, None, None, page_size=64)

    return run
