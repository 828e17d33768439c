"""Regenerate the third-party captures: real quack, FlashAttention-4 and flashinfer kernels, compiled
with no GPU (flashinfer's ``fi_*`` captures through flashinfer_workers.py, beside this file).

    python corpus/thirdparty/regen.py                 # all of them
    python corpus/thirdparty/regen.py quack_rmsnorm_fwd_sm90a fa4_fwd_sm100a
    python corpus/thirdparty/regen.py --list
    python corpus/thirdparty/regen.py --out /tmp/x --no-timing quack_rmsnorm_fwd_sm90a

Each capture runs in its own subprocess (fresh DSL state, env vars set before ``import cutlass``),
through the kernels' OWN compile paths (quack's undecorated ``_compile_*`` functions, FA4's
``_flash_attn_fwd`` / ``_flash_attn_bwd`` under ``FakeTensorMode``, flashinfer's getters and
dispatchers), inside
``irscan.capture(out=..., lineinfo=True)``.  Needs ``pip install -r corpus/thirdparty/requirements.txt``.

Per capture the worker times every ``cute.compile`` call of the kernel's compile path in one process:
a warm-up compile (no capture; ``compile_s_cold``), then ``--repeat`` (default 2) alternating rounds
with and without ``irscan.capture`` (minimum of each kept); and the DSL's native parse
(``cutlass._mlir.ir.Module.parse``, see :func:`native_parse`) of each captured module.

The parent then moves the folders to ``corpus/thirdparty/<name>/<NNN_module>/``, compresses
``module.mlir``/``module.ptx``/``module.cubin`` with xz (preset 9; ``--drop-cubin`` drops the cubin
instead and says ``"cubin_dropped": true`` in meta.json), and writes ``index.json`` and
``versions.json``.  ``loc(...)`` paths and PTX ``.file`` lines keep the absolute site-packages paths
of the machine that ran this.

One workaround lives here: :func:`loc_safe` (the printer's location-bearing output does not parse
back as it is).
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
INDEX = HERE / "index.json"
VERSIONS = HERE / "versions.json"
PACKAGES = [
    "nvidia-cutlass-dsl",
    "nvidia-cutlass-dsl-libs-base",
    "nvidia-cutlass-dsl-libs-core",
    "nvidia-cutlass-dsl-libs-cu12",
    "quack-kernels",
    "flash-attn-4",
    "flashinfer-python",
    "nvidia-cudnn-frontend",
    "torchao",
    "torch",
    "triton",
    "numpy",
    "einops",
    "apache-tvm-ffi",
]
XZ_PRESET = 9

# name -> (arch, description, worker function name)
CAPTURES: dict[str, tuple[str, str, str]] = {
    "quack_rmsnorm_fwd_sm90a": (
        "sm_90a",
        "quack RMSNorm forward, bf16 x/out, f32 weight, N=4096, rstd",
        "_quack_rmsnorm",
    ),
    "quack_softmax_fwd_sm90a": ("sm_90a", "quack Softmax forward, bf16, N=4096", "_quack_softmax"),
    "quack_cross_entropy_fwd_sm90a": (
        "sm_90a",
        "quack CrossEntropy forward, bf16 logits, i64 target, N=32768, lse",
        "_quack_cross_entropy",
    ),
    "quack_gemm_sm90a": (
        "sm_90a",
        "quack GEMM sm90, bf16 A/B/D, K-major A/B, tile 128x256, cluster 2x1, persistent",
        "_quack_gemm",
    ),
    "fa4_fwd_sm90a": ("sm_90a", "FA4 forward sm90, bf16, hdim 128, causal", "_fa4_fwd"),
    "fa4_fwd_sm100a": ("sm_100a", "FA4 forward sm100, bf16, hdim 128, causal", "_fa4_fwd"),
    "fa4_bwd_sm100a": (
        "sm_100a",
        "FA4 backward sm100, bf16, hdim 128, causal (preprocess, main, postprocess)",
        "_fa4_bwd",
    ),
    "fa4_bwd_sm90a": (
        "sm_90a",
        "FA4 backward sm90, bf16, hdim 128, causal (preprocess, main, postprocess)",
        "_fa4_bwd",
    ),
    # flashinfer's CuTe DSL kernels (corpus/thirdparty/flashinfer_workers.py says how they compile)
    "fi_rmsnorm_sm90a": (
        "sm_90a",
        "flashinfer RMSNorm bf16 H=4096 (compact, strided) and QK-RMSNorm head_dim 128",
        "flashinfer_workers:fi_rmsnorm",
    ),
    "fi_fused_add_rmsnorm_sm90a": (
        "sm_90a",
        "flashinfer fused add + RMSNorm bf16 H=4096 (compact, strided)",
        "flashinfer_workers:fi_fused_add_rmsnorm",
    ),
    "fi_layernorm_sm90a": (
        "sm_90a",
        "flashinfer LayerNorm bf16 x/y, f32 gamma/beta, H=4096",
        "flashinfer_workers:fi_layernorm",
    ),
    "fi_rmsnorm_quant_sm90a": (
        "sm_90a",
        "flashinfer RMSNorm + FP8 e4m3 output, bf16 H=4096 (compact)",
        "flashinfer_workers:fi_rmsnorm_quant",
    ),
    "fi_gdn_decode_sm90a": (
        "sm_90a",
        "flashinfer gated delta-net decode T=1, B=4 H=16 HV=32 K=V=128: f32 state pretranspose and "
        "nontranspose, bf16-state pool kernel",
        "flashinfer_workers:fi_gdn_decode",
    ),
    "fi_rmsnorm_sm100a": (
        "sm_100a",
        "flashinfer RMSNorm bf16 H=4096 (compact, strided) and QK-RMSNorm head_dim 128",
        "flashinfer_workers:fi_rmsnorm",
    ),
    "fi_gdn_decode_sm100a": (
        "sm_100a",
        "flashinfer gated delta-net decode T=1, B=4 H=16 HV=32 K=V=128: f32 state pretranspose and "
        "nontranspose, bf16-state pool kernel",
        "flashinfer_workers:fi_gdn_decode",
    ),
    # more quack kernels (corpus/thirdparty/quack_workers.py)
    "quack_rmsnorm_bwd_sm90a": (
        "sm_90a",
        "quack RMSNorm backward, bf16 x/dout/dx, f32 weight, N=4096, dw_partial",
        "quack_workers:quack_rmsnorm_bwd",
    ),
    "quack_softmax_bwd_sm90a": ("sm_90a", "quack Softmax backward, bf16, N=4096", "quack_workers:quack_softmax_bwd"),
    "quack_cross_entropy_bwd_sm90a": (
        "sm_90a",
        "quack CrossEntropy backward, bf16 logits, i64 target, N=32768",
        "quack_workers:quack_cross_entropy_bwd",
    ),
    "quack_topk_sm90a": (
        "sm_90a",
        "quack TopK forward and backward, bf16, N=4096, k=32, softmax",
        "quack_workers:quack_topk",
    ),
    "quack_rotary_sm90a": (
        "sm_90a",
        "quack rotary embedding bf16, dim 128, f32 cos/sin: seqlen offsets, and varlen cu_seqlens",
        "quack_workers:quack_rotary",
    ),
    "quack_reduce_sm90a": (
        "sm_90a",
        "quack split-K reduce (bf16 out, split 4, C and row vector, beta pointer) and RMS final reduce (N=4096)",
        "quack_workers:quack_reduce",
    ),
    "quack_gemm_varlen_sm90a": (
        "sm_90a",
        "quack GEMM sm90, variable-length M (cu_seqlens_m), f32 row-vector epilogue, tile 128x192, persistent",
        "quack_workers:quack_gemm_varlen",
    ),
    # more flashinfer kernels (sm_100a-only families)
    "fi_gated_residual_rmsnorm_sm100a": (
        "sm_100a",
        "flashinfer gated residual RMSNorm, H=8192: M > 64 config (vec 4, S 1) and M <= 16 (vec 2, S 8)",
        "flashinfer_workers:fi_gated_residual_rmsnorm",
    ),
    "fi_rmsnorm_sigmoid_gate_sm100a": (
        "sm_100a",
        "flashinfer RMSNorm + sigmoid gate, head dim 64, 32 heads: bandwidth and latency (cluster 16) configs",
        "flashinfer_workers:fi_rmsnorm_sigmoid_gate",
    ),
    "fi_mx_quantize_sm100a": (
        "sm_100a",
        "flashinfer MXFP8 quantisation bf16 K=4096 (linear, 128x4 swizzled scales) and MXFP4 (swizzled)",
        "flashinfer_workers:fi_mx_quantize",
    ),
    "fi_nvfp4_quantize_sm100a": (
        "sm_100a",
        "flashinfer NVFP4 quantisation bf16 K=4096, 128x4 swizzled scales, tensor global scale",
        "flashinfer_workers:fi_nvfp4_quantize",
    ),
    "fi_norm_quant_sm90a": (
        "sm_90a",
        "flashinfer LayerNorm + FP8 and fused add + RMSNorm + FP8, bf16 H=4096, compact and strided",
        "flashinfer_workers:fi_norm_quant",
    ),
    "fi_gdn_mtp_sm90a": (
        "sm_90a",
        "flashinfer GDN multi-token decode, bf16 state, T=4, B=4 H=16 HV=32 K=V=128 (wide-vec kernel), "
        "plain and with an intermediate-state cache",
        "flashinfer_workers:fi_gdn_mtp",
    ),
    "fi_msa_sparse_decode_sm90a": (
        "sm_90a",
        "flashinfer MSA sparse decode attention (sm90 kernel): B=4, 8 q heads / 1 KV head, hd 128, fp8 paged KV, "
        "top-16",
        "flashinfer_workers:fi_msa_sparse_decode",
    ),
    # a holdout set, triaged before any tuning (corpus/thirdparty/holdout_workers.py)
    "fi_causal_conv1d_sm90a": (
        "sm_90a",
        "flashinfer Mamba causal conv1d bf16 (width 4): varlen prefill with chunk map, initial states, bias; decode",
        "holdout_workers:fi_causal_conv1d",
    ),
    "fi_qk_l2norm_sm90a": ("sm_90a", "flashinfer GDN Q/K L2 norm, bf16, head dim 128", "holdout_workers:fi_qk_l2norm"),
    "fi_radix_topk_sm90a": (
        "sm_90a",
        "flashinfer single-pass multi-CTA radix top-2048 of f32 rows of 131,072 (4 rows: multi-CTA; 1024: one CTA)",
        "holdout_workers:fi_radix_topk",
    ),
    "fa4_fwd_combine_sm90a": (
        "sm_90a",
        "FA4 split-KV combine, bf16 out, f32 partials, hdim 128, 16 heads, LSE: batched and varlen",
        "holdout_workers:fa4_fwd_combine",
    ),
    "fi_rmsnorm_fp4quant_sm100a": (
        "sm_100a",
        "flashinfer RMSNorm + NVFP4 output, bf16 H=4096, swizzled and linear scales",
        "holdout_workers:fi_rmsnorm_fp4quant",
    ),
    "fi_add_rmsnorm_fp4quant_sm100a": (
        "sm_100a",
        "flashinfer fused add + RMSNorm + NVFP4 (and bf16 norm output), H=4096, configs for M=8 and M=8192",
        "holdout_workers:fi_add_rmsnorm_fp4quant",
    ),
    "fi_bi_quantize_sm100a": (
        "sm_100a",
        "flashinfer batch-invariant MXFP8 (tile and row tiers) and NVFP4 (per-tensor, per-token), bf16 K=4096",
        "holdout_workers:fi_bi_quantize",
    ),
    "fi_fp8_paged_mqa_logits_sm100a": (
        "sm_100a",
        "flashinfer DSA indexer FP8 paged MQA logits, block 64, 64 heads, hd 128, f32 logits",
        "holdout_workers:fi_fp8_paged_mqa_logits",
    ),
    "fi_nvfp4_kv_materialize_sm100a": (
        "sm_100a",
        "flashinfer paged NVFP4 KV cache to FP8 paged workspace, head dim 128",
        "holdout_workers:fi_nvfp4_kv_materialize",
    ),
    "fi_moe_finalize_sm100a": (
        "sm_100a",
        "flashinfer Blackwell MoE finalize (unpermute, top-8 weighted sum), bf16 hidden 7168: three configs",
        "holdout_workers:fi_moe_finalize",
    ),
    # a second holdout set, triaged before any tuning (corpus/thirdparty/holdout2_workers.py)
    "fi_fp4_paged_mqa_logits_sm100a": (
        "sm_100a",
        "flashinfer DSA indexer MXFP4 paged MQA logits, block 64, 64 heads, hd 128, f32 logits; and its "
        "GPU schedule kernel",
        "holdout2_workers:fi_fp4_paged_mqa_logits",
    ),
    "fi_mla_decode_sm100a": (
        "sm_100a",
        "flashinfer monolithic Blackwell MLA decode, kv_lora 512, rope 64, 128 heads, paged (64): bf16 and fp8",
        "holdout2_workers:fi_mla_decode",
    ),
    "fi_prefill_sm100a": (
        "sm_100a",
        "flashinfer Blackwell FMHA prefill bf16, 32/8 heads, hd 128, ragged: causal with LSE; paged KV (64)",
        "holdout2_workers:fi_prefill",
    ),
    "b12x_embedding_gemv_sm120a": (
        "sm_120a",
        "flashinfer b12x embedding gather (bf16 and q8_0, width 7168) and bf16 projection (SIMT GEMV, MMA GEMM)",
        "holdout2_workers:b12x_embedding_gemv",
    ),
    "fa4_prepare_scheduler_sm90a": (
        "sm_90a",
        "FA4 varlen scheduler metadata (64 sequences, 32/8 heads, hd 128): causal split 4; seqused split 8",
        "holdout2_workers:fa4_prepare_scheduler",
    ),
    "fa4_block_sparsity_sm90a": (
        "sm_90a",
        "FA4 block-sparsity precompute, causal document mask from an aux tensor, batch 2, 16 heads, 32k tokens",
        "holdout2_workers:fa4_block_sparsity",
    ),
    "fa4_fwd_mla_sm100a": (
        "sm_100a",
        "FA4 MLA forward (absorbed, 2-CTA kernel): 128 q heads, decode over a paged KV cache (page 64), LSE",
        "holdout2_workers:fa4_fwd_mla",
    ),
    "fa4_bwd_varlen_sm120a": (
        "sm_120a",
        "FA4 backward sm120 (flash_bwd.py sm80 mainloop), varlen, GQA 32/8, hd 128, bf16, causal",
        "holdout2_workers:fa4_bwd_varlen",
    ),
    "quack_gemm_gather_sm100a": (
        "sm_100a",
        "quack GEMM sm100, varlen M with gathered A rows (index table), f32 rowvec and C (beta), bf16",
        "holdout2_workers:quack_gemm_gather",
    ),
    # a third holdout set, triaged before any tuning (corpus/thirdparty/holdout3_workers.py)
    "fi_gqa_decode_sm100a": (
        "sm_100a",
        "flashinfer modular Blackwell GQA decode bf16, 32/8 heads, hd 128, split-KV + reduction, LSE: ragged; paged",
        "holdout3_workers:fi_gqa_decode",
    ),
    "b12x_vision_sm120a": (
        "sm_120a",
        "flashinfer b12x vision-tower row kernels on raw pointers, 1152 channels: GELU, 2x2 spatial merge, QKV rotary",
        "holdout3_workers:b12x_vision",
    ),
    "b12x_paged_merge_sm120a": (
        "sm_120a",
        "flashinfer b12x paged attention split-KV merge, bf16 hd 128, persistent (188 CTAs), symbolic tensors",
        "holdout3_workers:b12x_paged_merge",
    ),
    "fa4_bwd_sparse_mla_sm100a": (
        "sm_100a",
        "FA4 sparse-MLA backward (recompute P), varlen, 128 q heads / 1 KV, rope 64 + latent 512, top-2048 KV indices",
        "holdout3_workers:fa4_bwd_sparse_mla",
    ),
    "quack_gemm_default_sm120a": (
        "sm_120a",
        "quack GEMM sm120 (GemmDefaultSm120), bf16, tile 128x128, persistent: with C (beta); varlen M, f32 rowvec",
        "holdout3_workers:quack_gemm_default",
    ),
    "fi_msa_indexer_sm90a": (
        "sm_90a",
        "flashinfer MSA Hopper indexer: fp8 paged decode proxy score (4 heads, page 128); top-16 block select (masked)",
        "holdout3_workers:fi_msa_indexer",
    ),
    "fi_msa_sparse_prefill_sm90a": (
        "sm_90a",
        "flashinfer MSA Hopper sparse prefill on raw addresses: 16/1 heads, hd 128, fp8 paged KV (128), top-16 blocks",
        "holdout3_workers:fi_msa_sparse_prefill",
    ),
    "b12x_hyperconnection_sm120a": (
        "sm_120a",
        "flashinfer b12x hyper-connection row kernels, raw pointers, 4 streams x 7168: RMSNorm, SiLU, gate, combine",
        "holdout3_workers:b12x_hyperconnection",
    ),
    # a fourth holdout set, triaged before any tuning (corpus/thirdparty/holdout4_workers.py)
    "cudnn_rope_sm100a": (
        "sm_100a",
        "cudnn FROST vision RoPE backward: symbolic T tokens, 16 heads x 64, HTD/HDT inputs, packed bf16 dQKV",
        "holdout4_workers:cudnn_rope",
    ),
    "cudnn_rmsnorm_rht_amax_sm100a": (
        "sm_100a",
        "cudnn fused RMSNorm + Hadamard transform + per-CTA amax, bf16, symbolic rows: hidden 4096; 7168",
        "holdout4_workers:cudnn_rmsnorm_rht_amax",
    ),
    "cudnn_nvfp4_quant_sm100a": (
        "sm_100a",
        "cudnn NVFP4 block-scale quantize + dequantize, bf16 [1, M, K], symbolic i64 M: K 4096; 7168",
        "holdout4_workers:cudnn_nvfp4_quant",
    ),
    "cudnn_causal_conv1d_sm100a": (
        "sm_100a",
        "cudnn bulk causal conv1d width 4, bf16, symbolic tokens: dense with bias; packed varlen with states",
        "holdout4_workers:cudnn_causal_conv1d",
    ),
    "cudnn_gemm_swiglu_sm100a": (
        "sm_100a",
        "cudnn persistent dense GEMM + SwiGLU, bf16, static 8192x7168x4096: tile 128x128; 256x128 2-CTA",
        "holdout4_workers:cudnn_gemm_swiglu",
    ),
    "cudnn_bsa_fwd_sm90a": (
        "sm_90a",
        "cudnn Hopper block-sparse attention fwd, 128-token blocks, 16/4 heads, hd 128: fixed; counts + 2 splits",
        "holdout4_workers:cudnn_bsa_fwd",
    ),
    "cudnn_kda_prefill_sm90a": (
        "sm_90a",
        "cudnn Hopper Kimi Delta Attention chunked prefill, varlen 4 x 2048 tokens, 16 heads, hd 128",
        "holdout4_workers:cudnn_kda_prefill",
    ),
    "cudnn_moe_glu_sm100a": (
        "sm_100a",
        "cudnn MoE grouped GEMM + SwiGLU bf16, 8 experts, K 2048, N 2x1024, symbolic rows, bias + probs, 2-CTA 256x256",
        "holdout4_workers:cudnn_moe_glu",
    ),
    "cudnn_nsa_selection_sm90a": (
        "sm_90a",
        "cudnn native sparse attention selection fwd (HMMA), varlen 131,072 tokens, 64/4 heads, hd 128, top-16 x 64",
        "holdout4_workers:cudnn_nsa_selection",
    ),
    "cudnn_dsa_fwd_sm100a": (
        "sm_100a",
        "cudnn DeepSeek sparse-attention prefill fwd, MLA 64 heads x 576, top-2048 + sinks, dynamic layouts",
        "holdout4_workers:cudnn_dsa_fwd",
    ),
    # a fifth holdout set, triaged before any tuning (corpus/thirdparty/holdout5_workers.py)
    "torch_topk_radix_sm90a": (
        "sm_90a",
        "torch native fp32 radix-select top-K, symbolic rows: N 4096 K 256 deterministic; N 8192 K 64 atomic gather",
        "holdout5_workers:torch_topk_radix",
    ),
    "torch_topk_register_sm90a": (
        "sm_90a",
        "torch native fp32 register-resident top-K, one warp per row, symbolic rows: N 2048 K 16; N 256 K 32",
        "holdout5_workers:torch_topk_register",
    ),
    "torch_scatter_add_vec_sm90a": (
        "sm_90a",
        "torch native vector scatter_add (atomics), symbolic rows + i64 strides: bf16 N 4096 contiguous; f32 N 1000",
        "holdout5_workers:torch_scatter_add_vec",
    ),
    "torch_scatter_add_tma_sm90a": (
        "sm_90a",
        "torch native TMA scatter_add (bulk load + cp.reduce.async.bulk): bf16 N 4096 contiguous; f32 N 96 strided",
        "holdout5_workers:torch_scatter_add_tma",
    ),
    "torch_rmsnorm_sm90a": (
        "sm_90a",
        "torch native RMSNorm (vendored quack 0.4.1), bf16 x/out/weight, N 4096: forward with rstd; backward, dw",
        "holdout5_workers:torch_rmsnorm",
    ),
    "torchao_mxfp8_3d_sm100a": (
        "sm_100a",
        "torchao MXFP8 per-expert 3-D quantize, bf16 (E, N, K) transposed view, TMA: 32x1 scales; 32x32 blocked",
        "holdout5_workers:torchao_mxfp8_3d",
    ),
    # a sixth holdout set, triaged before any tuning (corpus/thirdparty/holdout6_workers.py)
    "fi_mega_safe_quant_sm90a": (
        "sm_90a",
        "flashinfer MegaMoE post-amax E4M3 activation quantize, f32 in, sym tokens, TVM-FFI: hidden 7168; 4096",
        "holdout6_workers:fi_mega_safe_quant",
    ),
    "fi_mega_routing_sm90a": (
        "sm_90a",
        "flashinfer MegaMoE top-8 route staging (i64 ids, masked scores) and route validation (i32 ids, 256 experts)",
        "holdout6_workers:fi_mega_routing",
    ),
    "fi_moe_gemm_finalize_sm90a": (
        "sm_90a",
        "flashinfer Hopper MoE GEMM2 + finalize, bf16, 8 experts, 4096x2048, top-8, raw pointers: fused; expanded",
        "holdout6_workers:fi_moe_gemm_finalize",
    ),
    "fi_moe_gather_gemm_act_sm90a": (
        "sm_90a",
        "flashinfer Hopper MoE GEMM1, token gather in the A load, bf16, 8 experts, 2x2048x4096: SwiGLU; ReLU^2",
        "holdout6_workers:fi_moe_gather_gemm_act",
    ),
    "fi_megamoe_stage_sm100a": (
        "sm_100a",
        "flashinfer MegaMoE input staging, hidden 7168, top-8: NVFP4 + i64 routes; MXFP8 + i32 route checks; bf16",
        "holdout6_workers:fi_megamoe_stage",
    ),
    "fi_moe_blockscaled_finalize_sm100a": (
        "sm_100a",
        "flashinfer Blackwell NVFP4 MoE GEMM2 + finalize, 256x128 2-CTA, raw pointers: fused; expanded + A scale",
        "holdout6_workers:fi_moe_blockscaled_finalize",
    ),
    "fi_moe_blockscaled_gather_act_sm100a": (
        "sm_100a",
        "flashinfer Blackwell NVFP4 MoE GEMM1, token gather, SwiGLU, NVFP4 out + scales, 256x128 2-CTA, top-8",
        "holdout6_workers:fi_moe_blockscaled_gather_act",
    ),
    # a seventh holdout set, triaged before any tuning (corpus/thirdparty/holdout7_workers.py)
    "cudnn_csa_compressor_sm100a": (
        "sm_100a",
        "cudnn CSA KV compressor ratio 4, coff 2, hd 512, raw pointers on flat int32 layouts: fwd; deterministic bwd",
        "holdout7_workers:cudnn_csa_compressor",
    ),
    "cudnn_engram_gate_sm100a": (
        "sm_100a",
        "cudnn Engram saved-state gate, 4 heads x 5120, raw pointers, runtime tokens: forward; backward apply",
        "holdout7_workers:cudnn_engram_gate",
    ),
    "cudnn_dsa_indexer_topk_sm100a": (
        "sm_100a",
        "cudnn DSA indexer radix top-2048, f32, sym rows/cols: 64 x 65,536; 1024 x 32,768 next_n 2 deterministic",
        "holdout7_workers:cudnn_dsa_indexer_topk",
    ),
    "cudnn_hstu_fwd_sm100a": (
        "sm_100a",
        "cudnn HSTU SiLU attention fwd, packed varlen 8 x 1024 tokens, 4 heads x 128, bf16, dynamic: causal; local 256",
        "holdout7_workers:cudnn_hstu_fwd",
    ),
    "cudnn_qsa_fwd_sm100a": (
        "sm_100a",
        "cudnn QSA sparse attention fwd, THD, sym_int64 tokens, 12/1 heads x 256, bf16: prepare, dense and sparse "
        "kernels",
        "holdout7_workers:cudnn_qsa_fwd",
    ),
    "cudnn_gab_qk_norm_rope_sm100a": (
        "sm_100a",
        "cudnn gated-attention block Q/K RMSNorm + RoPE, bf16, sym tokens: 32/8 heads x 128, rope 64, rstd; RoPE-only "
        "256",
        "holdout7_workers:cudnn_gab_qk_norm_rope",
    ),
    "cudnn_gab_cache_write_sm100a": (
        "sm_100a",
        "cudnn gated-attention block paged KV-cache write, bf16, page 64: K+V 8 x 128 int32 slots; 1 x 128 int64 "
        "slots, PDL",
        "holdout7_workers:cudnn_gab_cache_write",
    ),
    "cudnn_dsa_indexer_bwd_sm90a": (
        "sm_90a",
        "cudnn DSA indexer backward (Hopper): score-grad precompute; WGMMA dQ/dW/dK GEMM, 64 heads x 128, top-2048",
        "holdout7_workers:cudnn_dsa_indexer_bwd",
    ),
    # an eighth holdout set, triaged before any tuning (corpus/thirdparty/holdout8_workers.py)
    "fi_gated_residual_next_rmsnorm_sm100a": (
        "sm_100a",
        "flashinfer gated residual + next RMSNorm, H 8192, 8-CTA cluster rows: plain; post weight, alpha, router",
        "holdout8_workers:fi_gated_residual_next_rmsnorm",
    ),
    "fi_dense_bf16_gemm_direct_sm100a": (
        "sm_100a",
        "flashinfer direct SIMT bf16 GEMM for small M, dynamic M, N 4096 K 7168: default tactics for M 8; M 1",
        "holdout8_workers:fi_dense_bf16_gemm_direct",
    ),
    "fi_fused_kda_decode_sm100a": (
        "sm_100a",
        "flashinfer fused KDA decode hd 128, symbolic rows/heads/slots: f32 state softplus; bf16 packed T=1 DS conv",
        "holdout8_workers:fi_fused_kda_decode",
    ),
    "quack_hadamard_sm90a": (
        "sm_90a",
        "quack fast Hadamard transform bf16, symbolic batch: N 3072 (padded, tail stores); N 32768 persistent",
        "holdout8_workers:quack_hadamard",
    ),
    "fi_gvr_topk_sm100a": (
        "sm_100a",
        "flashinfer GVR top-2048 decode, f32, symbolic requests and row width: plain; LB prepare + clustered LB",
        "holdout8_workers:fi_gvr_topk",
    ),
    "fi_mnnvl_allgather_norm_sm100a": (
        "sm_100a",
        "flashinfer MNNVL LL column all-gather, H 8192 TP 4, 2048 rows: publisher; RMSNorm + NVFP4; dual norm",
        "holdout8_workers:fi_mnnvl_allgather_norm",
    ),
    "fi_sage_prepare_sm100a": (
        "sm_100a",
        "flashinfer prims_ts Sage scale prepare, context plan 32/8 heads hd 128, 8192 tokens: Q1/K16; Q64/K64 + V mean",
        "holdout8_workers:fi_sage_prepare",
    ),
    "fi_gdn_prefix_materialize_sm100a": (
        "sm_100a",
        "flashinfer GDN prefix-state materialise, bf16 state pool (16, 32, 128, 128), 32-deep MTP rings, 8 requests",
        "holdout8_workers:fi_gdn_prefix_materialize",
    ),
    # a tenth holdout set, triaged before any tuning (corpus/thirdparty/holdout10_workers.py)
    "fa4_fwd_local_gqa_sm100a": (
        "sm_100a",
        "FA4 forward sm100, causal + sliding window 256, hd 64, GQA 16/4 packed, bf16, 2 x 2048 tokens",
        "holdout10_workers:fa4_fwd_local_gqa",
    ),
    "fa4_fwd_softcap_sm90a": (
        "sm_90a",
        "FA4 forward sm90, tanh softcap 30, hd 256, 8 heads, bf16, 2 x 1024 tokens",
        "holdout10_workers:fa4_fwd_softcap",
    ),
    "fa4_fwd_paged_sm100a": (
        "sm_100a",
        "FA4 forward sm100, paged KV (page 128), causal, hd 128, GQA 32/8, bf16, 4 x 512 queries on 4096 keys",
        "holdout10_workers:fa4_fwd_paged",
    ),
    "cudnn_grouped_gemm_discrete_sm100a": (
        "sm_100a",
        "cudnn unfused MoE grouped GEMM bf16, discrete expert B pointers (8), K 2048 N 1024, symbolic rows, tile "
        "128x128",
        "holdout10_workers:cudnn_grouped_gemm_discrete",
    ),
    "cudnn_sdpa_fwd_sm100a": (
        "sm_100a",
        "cudnn FROST SDPA forward (prefill d128 template), bf16 BHSD 2 x 16 heads x 1024 tokens, hd 128, causal, LSE",
        "holdout10_workers:cudnn_sdpa_fwd",
    ),
    "cudnn_sdpa_bwd_sm100a": (
        "sm_100a",
        "cudnn FROST SDPA backward hd 128 (sm100 d128 plan), bf16 BSHD 2 x 16 heads x 1024 tokens, causal, f32 stats",
        "holdout10_workers:cudnn_sdpa_bwd",
    ),
    "cudnn_tail_rope_sm100a": (
        "sm_100a",
        "cudnn FROST tail RoPE forward, bf16 [T, H, D] flat views, sym tokens, f32 [T, 32] tables: 64 x 512; 8 x 128",
        "holdout10_workers:cudnn_tail_rope",
    ),
    "cudnn_sdpa_fwd_d512_sm90a": (
        "sm_90a",
        "cudnn FROST SDPA forward sm90 (prefill d512 template), bf16 BHSD 1 x 8 heads x 1024 tokens, hd 512, causal, "
        "LSE",
        "holdout10_workers:cudnn_sdpa_fwd_d512",
    ),
    # a ninth holdout set, triaged before any tuning (corpus/thirdparty/holdout9_workers.py)
    "quack_layernorm_sm90a": (
        "sm_90a",
        "quack LayerNorm fwd bf16 N 4096, bf16 residual in / f32 out, f32 weight+bias, rstd+mean; per-head RMSNorm N "
        "128",
        "holdout9_workers:quack_layernorm",
    ),
    "quack_gemm_symmetric_sm90a": (
        "sm_90a",
        "quack symmetric GEMM A A^T sm90, bf16, tile 128x128, persistent, C (beta) and transposed PostAct",
        "holdout9_workers:quack_gemm_symmetric",
    ),
    "fi_kda_chunked_prefill_sm100a": (
        "sm_100a",
        "flashinfer Blackwell KDA chunked prefill (BT 16), bf16 qkv + gate, f32 state in/out, engine + decomp routes",
        "holdout9_workers:fi_kda_chunked_prefill",
    ),
    "fi_dense_blockscaled_gemm_sm100a": (
        "sm_100a",
        "flashinfer dense NVFP4 block-scaled GEMM, bf16 out, sym M/N/K: 128x128 scalar alpha; 256x128 2-CTA per-token "
        "alpha",
        "holdout9_workers:fi_dense_blockscaled_gemm",
    ),
    "fi_filtered_topk_sm100a": (
        "sm_100a",
        "flashinfer filtered-radix decode top-2048, f32, sym rows/cols: 4 x 131,072 clustered one-pass; 1024 x 32,768 "
        "one CTA per row",
        "holdout9_workers:fi_filtered_topk",
    ),
    "fi_grouped_gemm_masked_sm100a": (
        "sm_100a",
        "flashinfer masked batched NVFP4 GEMM, bf16 out, f32 alpha, 8 experts x 1024 x 4096 x 7168: plain; swap-AB",
        "holdout9_workers:fi_grouped_gemm_masked",
    ),
    "fi_prefill_variants_sm100a": (
        "sm_100a",
        "flashinfer Blackwell FMHA prefill bf16, 32/8 heads, hd 128: sliding window + soft-cap, paged (64); ALiBi, "
        "ragged, persistent, LSE",
        "holdout9_workers:fi_prefill_variants",
    ),
    # an eleventh holdout set, triaged before any tuning (corpus/thirdparty/holdout11_workers.py)
    "b12x_bf16_prefill_gemm_sm120a": (
        "sm_120a",
        "flashinfer b12x TMA BF16 prefill GEMM, N 1024 K 5120, sym M rows, tile 64x64x64: bf16 out; f32 out",
        "holdout11_workers:b12x_bf16_prefill_gemm",
    ),
    "b12x_iq2_xs_gemv_sm120a": (
        "sm_120a",
        "flashinfer b12x weight-only codebook GEMV on raw pointers, N 4096 K 4096, runtime rows, tile_m 4: iq2_xs; "
        "q8_0",
        "holdout11_workers:b12x_iq2_xs_gemv",
    ),
    "b12x_mxfp8_rows_quant_sm120a": (
        "sm_120a",
        "flashinfer b12x MXFP8 row quantiser, K 7168 bf16, raw pointers, runtime rows: subgroup 8 trellis order; "
        "whole-warp 128 threads",
        "holdout11_workers:b12x_mxfp8_rows_quant",
    ),
    "b12x_nvfp4_quant_sm120a": (
        "sm_120a",
        "flashinfer b12x persistent BF16 -> NVFP4 TMA quantiser, M 2048 K 4096 static, 188 CTAs: retain; packed "
        "liveness",
        "holdout11_workers:b12x_nvfp4_quant",
    ),
    "b12x_qsa_score_sm120a": (
        "sm_120a",
        "flashinfer b12x QSA representative scores, 4 index heads x 128 (MMA), ratio 4, page 64, 32,768 groups, raw "
        "pointers",
        "holdout11_workers:b12x_qsa_score",
    ),
    "b12x_csmla_rotary_sm120a": (
        "sm_120a",
        "flashinfer b12x compressed sparse-MLA rotary, 64 heads x 512, rope 64, raw pointers, runtime rows: f32 "
        "table; inverse ratio 4 bf16",
        "holdout11_workers:b12x_csmla_rotary",
    ),
    "b12x_mtp_norm_sm120a": (
        "sm_120a",
        "flashinfer b12x MTP-feedback RMSNorm, bf16 raw pointers, runtime tokens: token norm 4096; state norm 4 x 4096",
        "holdout11_workers:b12x_mtp_norm",
    ),
    "b12x_moe_tiny_decode_sm120a": (
        "sm_120a",
        "flashinfer b12x tiny-M W4A8-MX MoE decode, 4 tokens, hidden 2048, inter 768, top-8 of 128 experts: FC1; FC2",
        "holdout11_workers:b12x_moe_tiny_decode",
    ),
    "b12x_dense_mla_merge_sm120a": (
        "sm_120a",
        "flashinfer b12x dense-MLA split-KV merge, 8 splits, 64 heads x 512, 256 tokens, sym bf16 output: bf16; f32 "
        "partials",
        "holdout11_workers:b12x_dense_mla_merge",
    ),
    # a twelfth holdout set, triaged before any tuning (corpus/thirdparty/holdout12_workers.py)
    "fa4_fwd_varlen_sm100a": (
        "sm_100a",
        "FA4 forward sm100, varlen (4 sequences, 4096 packed tokens), causal, hd 128, GQA 16/4, bf16, LSE",
        "holdout12_workers:fa4_fwd_varlen",
    ),
    "fa4_bwd_gqa_sm100a": (
        "sm_100a",
        "FA4 backward sm100, GQA 32/8, non-causal, hd 128, bf16, 2 x 1024 tokens (preprocess, main, postprocess)",
        "holdout12_workers:fa4_bwd_gqa",
    ),
    "fa4_bwd_gqa_causal_sm90a": (
        "sm_90a",
        "FA4 backward sm90, GQA 16/2, causal, hd 64, bf16, 2 x 1024 tokens (preprocess, main, postprocess)",
        "holdout12_workers:fa4_bwd_gqa_causal",
    ),
    "cudnn_conv1d_update_sm100a": (
        "sm_100a",
        "cudnn causal conv1d decode update bf16 K 4, 256 rows x 4096 channels, state (512, 4096, 3), indices, bias, "
        "SiLU",
        "holdout12_workers:cudnn_conv1d_update",
    ),
    "cudnn_nsa_topk_sm100a": (
        "sm_100a",
        "cudnn NSA top-16 reduction bf16 B,H,S,D 2 x 32/2 heads, 2048 q on 64 compressed keys, hd 128, causal",
        "holdout12_workers:cudnn_nsa_topk",
    ),
    "cudnn_nsa_compression_sm100a": (
        "sm_100a",
        "cudnn NSA compressed attention (Blackwell FMHA) bf16 B,H,S,D 2 x 32/2 heads, 2048 q on 64 keys, hd 128, LSE",
        "holdout12_workers:cudnn_nsa_compression",
    ),
    "cudnn_dsa_bwd_sm100a": (
        "sm_100a",
        "cudnn DSA sparse attention backward sm100, bf16 4096 q x 16 heads, dims 576/512, 8192 KV, top-2048",
        "holdout12_workers:cudnn_dsa_bwd",
    ),
    "cudnn_gab_bwd_sm100a": (
        "sm_100a",
        "cudnn gated attention block bwd: sigmoid gate (O_gated, delta) bf16 32 x 128; Q/K RMSNorm + RoPE adjoint "
        "32/8 x 128 + dW",
        "holdout12_workers:cudnn_gab_bwd",
    ),
    # a thirteenth holdout set, triaged before any tuning (corpus/thirdparty/holdout13_workers.py)
    "fi_token_sparse_sm100a": (
        "sm_100a",
        "flashinfer token-sparse attention inputs, int32: K/V slot lists of 1024 tokens x top-2048 (2 requests "
        "each, pages of 64); group union masks, groups of 8, 65,536 keys",
        "holdout13_workers:fi_token_sparse",
    ),
    "fi_sdsa_scores_sm100a": (
        "sm_100a",
        "flashinfer SDSA indexer paged scorer (tcgen05), decode, 64 groups x 2 rows, 1 head x 128, pages of 64, "
        "f32 scores [128, 32768]: BF16 keys; NVFP4 keys + E4M3 scales",
        "holdout13_workers:fi_sdsa_scores",
    ),
    "fi_sdsa_select_sm100a": (
        "sm_100a",
        "flashinfer SDSA indexer threshold select (tcgen05), BF16, 32 query tiles x 128, 8192 pages of 64, "
        "context 65,536, top-2048 + 2048 slots, with repair",
        "holdout13_workers:fi_sdsa_select",
    ),
    "fi_sdsa_topk_sm100a": (
        "sm_100a",
        "flashinfer SDSA indexer small kernels: thresholds from a sample (4096 x 1024); top-2048 from 4096 "
        "candidates per row; BF16 paged key sample, 8 x 1024",
        "holdout13_workers:fi_sdsa_topk",
    ),
    "fi_sdsa_qk_write_sm100a": (
        "sm_100a",
        "flashinfer SDSA indexer NVFP4 quantize-write: BF16 keys 4096 x 128, int64 slots, paged uint8 cache "
        "(8192, 64, 64) + E4M3 scales; queries 512 x 128, int64 rows",
        "holdout13_workers:fi_sdsa_qk_write",
    ),
    "quack_gemm_act_sm90a": (
        "sm_90a",
        "quack GEMM + activation epilogue mod (gemm_act), bf16 4096x8192x4096, default config: bias + GELU tanh, "
        "D and PostAct; gated SwiGLU PostAct",
        "holdout13_workers:quack_gemm_act",
    ),
    "fi_gdn_wy_decode_sm100a": (
        "sm_100a",
        "flashinfer GDN MTP decode, WY-parallel output-only kernel (frozen bf16 state pool 64 x 32 x 128 x 128), "
        "B=8 T=8 H=16 HV=32, TMA + inline PTX",
        "holdout13_workers:fi_gdn_wy_decode",
    ),
    "quack_gemm_dact_sm100a": (
        "sm_100a",
        "quack GEMM + activation-backward epilogue mod (gemm_dact), bf16 8192x8192x4096, default config: ReLU^2; "
        "SiLU with f32 row scale + reduce",
        "holdout13_workers:quack_gemm_dact",
    ),
    # a fourteenth holdout set, triaged before any tuning (corpus/thirdparty/holdout14_workers.py)
    "cudnn_groupnorm_nhwc_sm100a": (
        "sm_100a",
        "cudnn channels-last GroupNorm fwd (norm_fprop), gamma + beta, f32 stats: bf16 [2, 256, 32, 32] 32 groups; "
        "f32 [1, 512, 16, 16] 16 groups",
        "holdout14_workers:cudnn_groupnorm_nhwc",
    ),
    "cudnn_batchnorm_nhwc_sm100a": (
        "sm_100a",
        "cudnn channels-last BatchNorm fwd (norm_fprop), bf16 [8, 256, 28, 28]: training + running stats "
        "(cooperative split-K); inference",
        "holdout14_workers:cudnn_batchnorm_nhwc",
    ),
    "cudnn_norm_nhwc_bwd_sm100a": (
        "sm_100a",
        "cudnn channels-last norm bwd (norm_bprop), bf16, f32 dgamma/dbeta: GroupNorm [2, 256, 32, 32] 32 groups; "
        "BatchNorm [8, 256, 28, 28]",
        "holdout14_workers:cudnn_norm_nhwc_bwd",
    ),
    "cudnn_instancenorm_nhwc_sm100a": (
        "sm_100a",
        "cudnn channels-last InstanceNorm fwd + bwd (norm_fprop / norm_bprop), bf16 [4, 128, 64, 64], gamma + beta",
        "holdout14_workers:cudnn_instancenorm_nhwc",
    ),
    "cudnn_frost_l2norm_sm100a": (
        "sm_100a",
        "cudnn FROST GDN Q/K row L2 normalize, bf16 4096 tokens x 16/4 heads x 128: with f32 inverse norms; "
        "without; backward q/dO pack onto 2 sub-tokens",
        "holdout14_workers:cudnn_frost_l2norm",
    ),
    "cudnn_norm_nchw_sm100a": (
        "sm_100a",
        "cudnn NCHW norm fwd + bwd: BatchNorm training bf16 [8, 256, 28, 28] (split-K over (n, c) rows); "
        "GroupNorm cluster kernels bf16 [2, 64, 32, 32], 2 groups",
        "holdout14_workers:cudnn_norm_nchw",
    ),
    "cudnn_layernorm_warp_sm100a": (
        "sm_100a",
        "cudnn warp-per-row LayerNorm / RMSNorm fwd and rowwise LayerNorm bwd, bf16 4096 x 4096, f32 stats",
        "holdout14_workers:cudnn_layernorm_warp",
    ),
    "fi_gvr2_topk_sm100a": (
        "sm_100a",
        "flashinfer GVR-2 varlen top-2048 decode, f32, symbolic requests and row width: 1024 x 32,768 streaming "
        "main kernel; 4 x 131,072 clustered register-resident",
        "holdout14_workers:fi_gvr2_topk",
    ),
    # a fifteenth holdout set, triaged before any tuning (corpus/thirdparty/holdout15_workers.py)
    "cudnn_dsa_index_utils_sm100a": (
        "sm_100a",
        "cudnn DSA top-K index utilities, int32, dynamic layouts: local_to_global BSHD [2, 4096, 2048] and THD "
        "[8192, 2048] + cu_seqlens; compactify 2048 columns, runtime rows",
        "holdout15_workers:cudnn_dsa_index_utils",
    ),
    "fa4_cu_blocks_sm100a": (
        "sm_100a",
        "FA4 varlen scheduler aids: tile cumsum from cu_seqlens (513,) + dynamic splits, pack-GQA 4; from "
        "seqused (512,) + virtual batch; flat block -> batch inversion, 8192 blocks",
        "holdout15_workers:fa4_cu_blocks",
    ),
    "b12x_x4t_scales_sm120a": (
        "sm_120a",
        "flashinfer b12x X4T MoE E8M0 scale-plane decode, raw pointers, runtime experts: base + exception "
        "scatter, 4096 x 224, logical; W4A16 packed + BF16 clamp",
        "holdout15_workers:b12x_x4t_scales",
    ),
    "b12x_csf_routing_sm120a": (
        "sm_120a",
        "flashinfer b12x CSF MoE active-expert mask, raw pointers, runtime route and expert counts: int32 ids; "
        "int64 ids",
        "holdout15_workers:b12x_csf_routing",
    ),
    "b12x_mla_kv_cache_sm120a": (
        "sm_120a",
        "flashinfer b12x MLA paged KV-cache writers, bf16 kv 4096 x 512, sym tokens: GLM-next FP8 (2048, 64, 528) "
        "int64 slots; DeepSeek-V4.1 compressed NVFP4 pages (2048, 64*288) int32 slots",
        "holdout15_workers:b12x_mla_kv_cache",
    ),
    "cudnn_bsa_k2q_csr_sm100a": (
        "sm_100a",
        "cudnn block-sparse attention bwd K-to-Q CSR builder, int32 dynamic layouts, q2k [2, 8, 64, 64] onto 64 KV "
        "blocks, buckets of 4: fixed 16 per Q block; variable counts, warp-parallel offsets",
        "holdout15_workers:cudnn_bsa_k2q_csr",
    ),
    "cudnn_mxfp8_scale_pack_sm100a": (
        "sm_100a",
        "cudnn DSA MXFP8 scale pack to F8_128x4, raw byte pointers, Int64 runtime extents: MKL; Q THD varlen, "
        "4 Q heads per KV head; fused Q/K BSHD pair",
        "holdout15_workers:cudnn_mxfp8_scale_pack",
    ),
    "b12x_x4t_packed_scales_sm120a": (
        "sm_120a",
        "flashinfer b12x X4T packed W4A16 scale decode, one launch, raw pointers, runtime experts: 7168 x 64, "
        "512-row tasks: int32 ids + BF16 clamp; int64 ids, unique, sorted route blocks",
        "holdout15_workers:b12x_x4t_packed_scales",
    ),
    # a sixteenth holdout set, triaged before any tuning (corpus/thirdparty/holdout16_workers.py)
    "quack_layernorm_bwd_sm90a": (
        "sm_90a",
        "quack LayerNorm bwd bf16 N 4096, f32 weight, mean + rstd, dw + db partials, bf16 dresidual in/out; "
        "per-head RMSNorm bwd (QK-norm) head dim 128, dw partials",
        "holdout16_workers:quack_layernorm_bwd",
    ),
    "quack_cross_entropy_vocab_sm90a": (
        "sm_90a",
        "quack CrossEntropy, vocabulary 151,936 (cluster rows), bf16 logits, i64 target, f32 class weight: fwd + "
        "LSE; bwd",
        "holdout16_workers:quack_cross_entropy_vocab",
    ),
    "cudnn_flex_mask_plan_sm100a": (
        "sm_100a",
        "cudnn flex-attention arbitrary-mask planner, interval mask over BSHD 2 x 2048, 8/2 heads x 128: Q-major "
        "classify, K-major count, fwd and K-to-Q materialise",
        "holdout16_workers:cudnn_flex_mask_plan",
    ),
    "cudnn_sdpa_split_combine_sm100a": (
        "sm_100a",
        "cudnn SDPA prepared split-KV combine, raw pointers, runtime B/H/S_q/D_v, splits and Int64 strides, bf16 O "
        "from f32 partials + LSE: dense; packed THD + sink",
        "holdout16_workers:cudnn_sdpa_split_combine",
    ),
    "cudnn_sdpa_metadata_sm100a": (
        "sm_100a",
        "cudnn SDPA torch-op metadata, raw pointers, Int64 sizes: varlen lengths + offsets from int32 cu_seqlens; "
        "packed Stats copy; compact lengths + sinks",
        "holdout16_workers:cudnn_sdpa_metadata",
    ),
    "cudnn_gab_quantize_sm100a": (
        "sm_100a",
        "cudnn gated-attention-block FP8 E4M3 activation quantiser, bf16 [T, H, 128], sym tokens: given scale 32 "
        "heads; amax-partials scale, 2 alphas, persistent, 8 heads; amax pass",
        "holdout16_workers:cudnn_gab_quantize",
    ),
    "b12x_static_fp8_quant_sm120a": (
        "sm_120a",
        "flashinfer b12x static-scale FP8 query quantiser, flat byte views, runtime Int32 count, capacity grid: "
        "4096 x 64 x 576 bf16; 1 x 128 x 512",
        "holdout16_workers:b12x_static_fp8_quant",
    ),
}


# ----------------------------------------------------------------------------------------- helpers


def native_context() -> Any:
    """An MLIR context of the DSL's own bindings in which the captured text parses.

    ``import cutlass.cute`` registers the DSL's dialects (llvm, nvvm, gpu, cuda, cute, ...) with the
    bindings' site initialisers, so every ``ir.Context()`` created afterwards loads them; unregistered
    dialects are allowed on top in case a module carries an op nothing registers.
    """
    import cutlass.cute  # noqa: F401  (registers the DSL's dialects)
    from cutlass._mlir import ir

    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    return ctx


# An op line with no results that ends in its location: ``nvvm.barrier id = %4 number_of_threads = %5 loc(#loc9)``.
_OP_LOC_LINE = re.compile(r"^([ \t]*)([a-z_][\w.]*)((?: [^\n]*?)?) (loc\([^\n]*\))[ \t]*$", re.M)
_ANY_LOC_LINE = re.compile(r"^([^\n]*?) loc\([^\n]*\)[ \t]*$")
_SSA = re.compile(r"%[\w.$-]+(?:#\d+)?")
_ARG = re.compile(r"%arg(\d+)\b")
_ALIAS_ERR = re.compile(r'"-":(\d+):\d+: undefined symbol alias id')
_generic_cache: dict[tuple[str, str], str | None] = {}


def _key(op: str, rest: str) -> tuple[tuple[str, str], list[str]]:
    names = list(dict.fromkeys(_SSA.findall(rest)))
    return (op, _SSA.sub(lambda m: f"%p{names.index(m.group(0))}", rest)), names


def _generic_form(key: tuple[str, str], ctx: Any) -> str | None:
    """Generic form of a result-less op (operands as ``%argN``), parsed with i32 operands; None if that fails."""
    from cutlass._mlir import ir

    if key not in _generic_cache:
        op, rest = key
        nargs = len(set(re.findall(r"%p\d+", rest)))
        args = ", ".join(f"%p{i}: i32" for i in range(nargs))
        _generic_cache[key] = None
        for tail in ("\n    llvm.unreachable", ""):  # as an ordinary op, then as a terminator
            try:
                with ctx:
                    module = ir.Module.parse(f"llvm.func @f({args}) {{\n    {op}{rest}{tail}\n}}\n")
            except Exception:
                continue
            first = module.body.operations[0].regions[0].blocks[0].operations[0]
            _generic_cache[key] = first.get_asm(print_generic_op_form=True).strip()
            break
    return _generic_cache[key]


def _parse_loc_safe(text: str, ctx: Any) -> tuple[str, Any, float, dict[str, int]]:
    """Parse, rewriting the lines the upstream printer bug makes unparsable; see :func:`loc_safe`."""
    from cutlass._mlir import ir

    stats = {"generic": 0, "loc_dropped": 0}
    for _ in range(1000):
        try:
            with ctx:
                t0 = time.perf_counter()
                module = ir.Module.parse(text)
                return text, module, time.perf_counter() - t0, stats
        except ir.MLIRError as exc:
            m = _ALIAS_ERR.search(str(exc))
            if m is None:
                raise
            lines = text.split("\n")
            bad = int(m.group(1)) - 1
            om = _OP_LOC_LINE.match(lines[bad])
            key = _key(om.group(2), om.group(3))[0] if om else None
            generic = _generic_form(key, ctx) if key else None
            if generic is None:  # drop this one op's location
                lm = _ANY_LOC_LINE.match(lines[bad])
                if lm is None:
                    raise
                lines[bad] = lm.group(1)
                stats["loc_dropped"] += 1
                text = "\n".join(lines)
                continue

            def sub(mm: re.Match[str], key: tuple[str, str] = key, generic: str = generic) -> str:
                k, names = _key(mm.group(2), mm.group(3))
                if k != key:
                    return mm.group(0)
                stats["generic"] += 1
                return f"{mm.group(1)}{_ARG.sub(lambda a: names[int(a.group(1))], generic)} {mm.group(4)}"

            text = _OP_LOC_LINE.sub(sub, text)
    raise RuntimeError("loc_safe: too many rewrites")


def loc_safe(text: str, ctx: Any = None) -> str:
    """Work around the upstream printer bug that makes location-bearing text fail to parse back.

    The printer writes ``nvvm.barrier loc(#loc9)``; ``nvvm.barrier``'s custom syntax ends with an
    optional attribute (``$reductionOp``), so the parser reads ``loc(#loc9)`` as that attribute, and as
    the ``#loc`` aliases are printed at the end of the file it fails with "undefined symbol alias id"
    (likewise ``nvvm.cp.async.wait.group 0``, ``nvvm.wgmma.wait.group.sync.aligned 1``, ...).  Driven
    by the parser's own errors, every op of the failing form is rewritten into its generic form,
    ``"nvvm.barrier"(%4, %5) <{operandSegmentSizes = ...}> : (i32, i32) -> () loc(#loc9)``: the same
    op, same location.  Where no generic form can be built (only i32 operands are tried) that one op's
    location is dropped.  Text that parses as it is comes back unchanged.
    """
    return _parse_loc_safe(text, ctx or native_context())[0]


def native_parse(text: str, ctx: Any = None) -> tuple[Any, float]:
    """Parse captured MLIR text with the DSL's own parser, ``cutlass._mlir.ir.Module.parse``.

    Returns (module, seconds of the final, successful parse).  ``ctx`` defaults to
    :func:`native_context`.  The text goes through :func:`loc_safe`'s rewrites first, because the
    printer's output with locations does not parse back as it is.
    """
    _, module, secs, _ = _parse_loc_safe(text, ctx or native_context())
    return module, secs


def read_text(folder: Path, name: str) -> str:
    """``name`` or ``name.xz`` from a capture folder, as text."""
    p = folder / name
    if p.exists():
        return p.read_text()
    return lzma.decompress((folder / (name + ".xz")).read_bytes()).decode()


def package_versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": sys.version.split()[0]}
    for dist in PACKAGES:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return out


# ----------------------------------------------------------------------------------------- worker side


def _set_env(arch: str) -> None:
    from irscan.capturing.hook import prepare_environment

    prepare_environment(arch, lineinfo=True)
    os.environ["QUACK_CACHE_ENABLED"] = "0"
    sm = arch.removeprefix("sm_").rstrip("af")
    os.environ["FLASH_ATTENTION_ARCH"] = f"sm_{sm}"
    os.environ["FLASH_ATTENTION_NUM_SMS"] = "132" if sm == "90" else "148"


class _CompileTimer:
    """Stand-in for ``cutlass.cute.compile`` that records each call's wall time."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.times: list[float] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return self.inner(*args, **kwargs)
        finally:
            self.times.append(time.perf_counter() - t0)

    def __getitem__(self, item: Any) -> Any:  # ``cute.compile[options](...)``: time that call too
        compile_with_options = self.inner[item]

        def call(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return compile_with_options(*args, **kwargs)
            finally:
                self.times.append(time.perf_counter() - t0)

        return call

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class _FakeHardwareInfo:
    """``cutlass.utils.HardwareInfo`` asks the driver; FA4 sm100 asks it for the SM count while tracing."""

    def __init__(self, device_id: int = 0):
        self.sms = int(os.environ.get("FLASH_ATTENTION_NUM_SMS", "132"))

    def get_device_multiprocessor_count(self) -> int:
        return self.sms

    def get_max_active_clusters(self, cluster_size: int = 1) -> int:
        return self.sms // cluster_size

    def get_l2_cache_size_in_bytes(self) -> int:
        return 50 * 1024 * 1024


def _quack_rmsnorm(arch: str):
    import importlib

    from cutlass import BFloat16, Float32

    mod = importlib.import_module("quack.rmsnorm")  # quack/__init__ shadows the module with a function
    return lambda: mod._compile_rmsnorm_fwd.__wrapped__(
        BFloat16, BFloat16, None, Float32, None, None, 4096, True, False, False, False
    )


def _quack_softmax(arch: str):
    from cutlass import BFloat16
    from quack.softmax import Softmax

    return lambda: Softmax.compile.__wrapped__(BFloat16, BFloat16, 4096)


def _quack_cross_entropy(arch: str):
    from cutlass import BFloat16, Int64
    from quack.cross_entropy import CrossEntropy

    # dtype, target_dtype, target_logit_dtype, N, has_lse, has_dx, weight_dtype, target_logit_ndim
    return lambda: CrossEntropy.compile.__wrapped__(BFloat16, Int64, None, 32768, True, False, None, 1)


def _quack_gemm(arch: str):
    import importlib

    from cutlass import BFloat16

    gemm = importlib.import_module("quack.gemm")
    from quack.gemm_config import SplitKMode
    from quack.rounding import RoundingMode

    cap = (9, 0) if arch.startswith("sm_90") else (10, 0)
    return lambda: gemm._compile_gemm.__wrapped__(
        BFloat16, BFloat16, BFloat16, None,  # a, b, d, c dtypes
        "k", "k", "n", None,  # a, b, d, c majors
        (128, 256), (2, 1, 1),  # tile_shape_mn, cluster_shape_mnk
        False, True, False,  # pingpong, persistent, is_dynamic_persistent
        None, None, 0,  # rowvec, colvec dtypes, colvec_ndim
        0, 0, False,  # alpha_mode, beta_mode, add_to_output
        None, False, False, False, False, False,  # concat_layout, varlen_m/k, gather_A, tma_gather, batch_idx_permute
        cap, RoundingMode.RN, 0, None,  # device_capacity, rounding_mode, sr_seed_mode, num_warps
        split_k_mode=SplitKMode.SERIAL,
    )  # fmt: skip


def _fa4_reset_caches() -> None:
    from flash_attn.cute import interface
    from flash_attn.cute.cache_utils import JITCache

    for obj in vars(interface).values():
        if callable(obj) and hasattr(obj, "compile_cache"):
            obj.compile_cache = JITCache()


def _fa4_setup() -> None:
    import cutlass.utils
    from flash_attn.cute import tile_scheduler

    cutlass.utils.HardwareInfo = _FakeHardwareInfo
    tile_scheduler.HardwareInfo = _FakeHardwareInfo


FA4_SHAPE = dict(batch=2, seqlen=1024, nheads=16, hdim=128)


def _fa4_fwd(arch: str):
    import torch
    from flash_attn.cute.interface import _flash_attn_fwd
    from torch._subclasses.fake_tensor import FakeTensorMode

    _fa4_setup()
    b, s, h, d = (FA4_SHAPE[k] for k in ("batch", "seqlen", "nheads", "hdim"))

    def run() -> None:
        _fa4_reset_caches()
        with FakeTensorMode():
            q, k, v = (torch.empty(b, s, h, d, dtype=torch.bfloat16, device="cuda") for _ in range(3))
            _flash_attn_fwd(q, k, v, causal=True, return_lse=True)

    return run


def _fa4_bwd(arch: str):
    import torch
    from flash_attn.cute.interface import _flash_attn_bwd
    from torch._subclasses.fake_tensor import FakeTensorMode

    _fa4_setup()
    b, s, h, d = (FA4_SHAPE[k] for k in ("batch", "seqlen", "nheads", "hdim"))

    def run() -> None:
        _fa4_reset_caches()
        with FakeTensorMode():
            q, k, v, out, dout = (torch.empty(b, s, h, d, dtype=torch.bfloat16, device="cuda") for _ in range(5))
            lse = torch.empty(b, h, s, dtype=torch.float32, device="cuda")
            _flash_attn_bwd(q, k, v, out, dout, lse, causal=True)

    return run


def _worker_function(fn_name: str) -> Any:
    """A worker function of this file, or ``module:function`` of a sibling file (flashinfer_workers.py)."""
    if ":" not in fn_name:
        return globals()[fn_name]
    import importlib.util

    mod_name, func = fn_name.split(":")
    spec = importlib.util.spec_from_file_location(mod_name, HERE / f"{mod_name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, func)


def worker(name: str, out: Path, repeat: int) -> dict[str, Any]:
    """Compile one capture (in this fresh process) into ``out``; return what index.json records.

    ``repeat`` = 0: one compile, inside the capture.  Otherwise a warm-up compile without capture
    (``compile_s_cold``), then ``repeat`` rounds of (with capture, without capture); the minimum of
    each is recorded.  Only the first captured round is kept; later ones go to a scratch folder.
    """
    arch, _desc, fn_name = CAPTURES[name]
    _set_env(arch)
    import cutlass.cute as cute

    from irscan.capturing.hook import capture

    timer = _CompileTimer(cute.compile)
    cute.compile = timer
    run = _worker_function(fn_name)(arch)

    def timed(out_dir: Path | None) -> tuple[float, int, Any]:
        timer.times.clear()
        if out_dir is None:
            run()
            return sum(timer.times), len(timer.times), None
        with capture(out=out_dir, lineinfo=True, strict=True) as cap:
            run()
        return sum(timer.times), len(timer.times), cap

    result: dict[str, Any] = {"name": name, "arch": arch}
    if repeat:  # warm-up: first-use costs of the DSL and the library, no capture
        result["compile_s_cold"] = round(timed(None)[0], 3)
    with_s, calls, cap = timed(out)
    result["compile_calls"] = calls
    result["capture_hook_s"] = round(cap.seconds, 3)
    if cap.errors:
        result["capture_errors"] = cap.errors
    if repeat:
        withs, withouts = [with_s], []
        with tempfile.TemporaryDirectory() as scratch:
            for i in range(repeat):
                withouts.append(timed(None)[0])
                if i + 1 < repeat:
                    withs.append(timed(Path(scratch) / str(i))[0])
        result["compile_s_with_capture"] = round(min(withs), 3)
        result["compile_s_without_capture"] = round(min(withouts), 3)
        result["capture_added_s"] = round(min(withs) - min(withouts), 3)
        result["timing_rounds"] = repeat
    else:
        result["compile_s_with_capture"] = round(with_s, 3)

    ctx = native_context()
    modules = []
    for c in cap.captures:
        text = c.mlir_path.read_text()
        _parse_loc_safe(text, ctx)  # warm the context once per module, then time a second parse
        _, _, secs, stats = _parse_loc_safe(text, ctx)
        modules.append({"module": c.dir.name, "native_parse_s": round(secs, 4), "loc_safe_rewrites": stats})
    result["modules"] = modules
    return result


# ----------------------------------------------------------------------------------------- parent side


def _entries(ptx: str) -> list[str]:
    return re.findall(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([\w$.]+)", ptx, re.M)


def _compress(folder: Path, drop_cubin: bool) -> dict[str, Any]:
    """xz the module files in place, note it in meta.json; return sizes for index.json."""
    info: dict[str, Any] = {}
    meta_path = folder / "meta.json"
    meta = json.loads(meta_path.read_text())
    info["kernels"] = [k["name"] for k in meta["kernels"]]
    if drop_cubin and (folder / "module.cubin").exists():
        info["cubin_bytes"] = (folder / "module.cubin").stat().st_size
        (folder / "module.cubin").unlink()
        meta["cubin_dropped"] = True
        meta["files"].pop("cubin", None)
    for key in ("mlir", "ptx", "cubin"):
        p = folder / f"module.{key}"
        if not p.exists():
            continue
        data = p.read_bytes()
        xz = lzma.compress(data, preset=XZ_PRESET)
        (folder / (p.name + ".xz")).write_bytes(xz)
        p.unlink()
        info[f"{key}_bytes"] = len(data)
        info[f"{key}_xz_bytes"] = len(xz)
        meta["files"][key] = p.name + ".xz"
        if key == "ptx":
            info["ptx_entries"] = _entries(data.decode())
    meta["compression"] = "xz"
    # one line: the argument records (sym_peers, views) of a hundred captures are a megabyte indented
    meta_path.write_text(json.dumps(meta, separators=(",", ":")) + "\n")
    return info


def run_one(name: str, out_root: Path, repeat: int, drop_cubin: bool) -> dict[str, Any]:
    arch, desc, _ = CAPTURES[name]
    with tempfile.TemporaryDirectory(prefix=f"irscan-{name}-") as tmp:
        res_path = Path(tmp) / "result.json"
        cap_dir = Path(tmp) / "cap"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, "--out", str(cap_dir)]
        cmd += ["--result", str(res_path), "--repeat", str(repeat)]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0 or not res_path.exists():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
            raise RuntimeError(f"{name}: worker failed (rc={proc.returncode}):\n" + "\n".join(tail))
        result = json.loads(res_path.read_text())
        dest = out_root / name
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        modules = []
        for m in result.pop("modules"):
            shutil.move(str(cap_dir / m["module"]), str(dest / m["module"]))
            modules.append({**m, **_compress(dest / m["module"], drop_cubin)})
    entry = {"name": name, "arch": arch, "description": desc}
    entry["kernels"] = [k for m in modules for k in m["kernels"]]
    for key in ("mlir_bytes", "ptx_bytes", "mlir_xz_bytes", "ptx_xz_bytes", "cubin_bytes", "cubin_xz_bytes"):
        if any(key in m for m in modules):
            entry[key] = sum(m.get(key, 0) for m in modules)
    entry["stored_bytes"] = _dir_size(dest)
    entry.update({k: v for k, v in result.items() if k not in ("name", "arch")})
    entry["native_parse_s"] = round(sum(m["native_parse_s"] for m in modules), 4)
    entry["worker_wall_s"] = round(wall, 1)
    entry["modules"] = modules
    return entry


def _dir_size(p: Path) -> int:
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="captures to regenerate (default: all)")
    ap.add_argument("--out", type=Path, default=HERE, help="root folder (default: corpus/thirdparty)")
    ap.add_argument("--list", action="store_true")
    ap.add_argument(
        "--repeat", type=int, default=2, help="timing rounds (with/without capture) after a warm-up; 0: one compile"
    )
    ap.add_argument("--no-timing", dest="repeat", action="store_const", const=0, help="same as --repeat 0")
    ap.add_argument("--drop-cubin", action="store_true", help="drop module.cubin (default: kept, xz-compressed)")
    ap.add_argument("--keep-going", action="store_true", help="record failures in index.json and go on")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        result = worker(args.worker, args.out, args.repeat)
        args.result.write_text(json.dumps(result, indent=2) + "\n")
        return 0
    if args.list:
        for n, (arch, desc, _) in CAPTURES.items():
            print(f"{n:32} {arch:8} {desc}")
        return 0

    names = args.names or list(CAPTURES)
    unknown = [n for n in names if n not in CAPTURES]
    if unknown:
        ap.error(f"unknown capture(s): {unknown}; see --list")
    out_root: Path = args.out
    out_root.mkdir(parents=True, exist_ok=True)
    index_path = out_root / "index.json"
    index = json.loads(index_path.read_text()) if index_path.exists() else {"captures": []}
    by_name = {e["name"]: e for e in index.get("captures", [])}
    failed = []
    for name in names:
        print(f"[regen] {name} ...", file=sys.stderr, flush=True)
        try:
            entry = run_one(name, out_root, args.repeat, args.drop_cubin)
        except Exception as exc:
            if not args.keep_going:
                raise
            print(f"[regen] {exc}", file=sys.stderr)
            failed.append(name)
            by_name.pop(name, None)
            index.setdefault("failed", {})[name] = str(exc)[-2000:]
            continue
        index.get("failed", {}).pop(name, None)
        by_name[name] = entry
        print(
            f"[regen] {name}: {len(entry['modules'])} module(s), MLIR {entry.get('mlir_bytes', 0) / 1e6:.2f} MB, "
            f"compile {entry.get('compile_s_without_capture', '-')} s / with capture "
            f"{entry['compile_s_with_capture']} s, parse {entry['native_parse_s']} s",
            file=sys.stderr,
        )
    order = {n: i for i, n in enumerate(CAPTURES)}
    index["captures"] = sorted(by_name.values(), key=lambda e: order.get(e["name"], 99))
    if not index.get("failed"):
        index.pop("failed", None)
    index["note"] = (
        "compile_s_*: summed wall time of the cute.compile calls the kernel's own compile path made, in one "
        "fresh process per capture: cold = the first (warm-up, no capture); with/without capture = minimum "
        "over timing_rounds alternating rounds after it; capture_added_s = their difference (noise-level "
        "when small); capture_hook_s = time irscan's hook itself spent. *_bytes: uncompressed sizes, "
        "*_xz_bytes: stored. native_parse_s: cutlass._mlir.ir.Module.parse of the captured MLIR (second "
        "parse in a warm context, after regen.loc_safe's rewrites, counted in loc_safe_rewrites)."
    )
    index["machine"] = {"cpus": os.cpu_count(), "platform": sys.platform}
    index["regen"] = "python corpus/thirdparty/regen.py [names...]"
    index_path.write_text(json.dumps(index, indent=2) + "\n")
    (out_root / "versions.json").write_text(json.dumps(package_versions(), indent=2) + "\n")
    print(f"[regen] {out_root}: {_dir_size(out_root) / 1e6:.2f} MB on disk", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
