"""A seventh holdout set of real CuTe DSL kernels, compiled with no GPU (worker side of regen.py's
holdout-7 captures): kernels of nvidia-cudnn-frontend 1.32.0 (package ``cudnn``), in no earlier capture
(holdout-4 took rope, rmsnorm_rht_amax, NVFP4, causal conv1d bulk, GEMM+SwiGLU, MoE GLU, BSA, KDA
prefill, NSA selection, DSA prefill), triaged by hand before any analysis work looked at them.

Same recipe as holdout4_workers.py: each function takes the arch and returns a zero-argument callable
that makes the kernel's real ``cute.compile`` calls, through the package's own compile path where it has
one (an ``APIBase`` plan's ``check_support`` + ``compile`` on metadata-only samples), else as that path
does (said in the docstring). Every module used imports on DSL 4.8.1 (none reaches ``cutlass.primitives``).
"""

from __future__ import annotations

import importlib
import importlib.util
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

_spec = importlib.util.spec_from_file_location("holdout4_workers", Path(__file__).with_name("holdout4_workers.py"))
assert _spec and _spec.loader
h4 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h4)


def _gpu(arch: str) -> None:
    """holdout4_workers' pretend_gpu + no-op device contexts; no stream capture is ever under way."""
    import torch

    h4._gpu(arch)
    torch.cuda.is_current_stream_capturing = lambda: False


def _cpu_scratch(*modules: Any) -> None:
    """The modules' ``torch.zeros`` / ``torch.empty`` make CPU tensors whatever ``device`` they are asked
    for: their precompile helpers allocate 16-element scratch tensors on the GPU only to pass the kernel a
    pointer (the address is a runtime argument; nothing is launched or read)."""
    import torch

    def cpu(fn: Callable[..., Any]) -> Callable[..., Any]:
        def make(*a: Any, device: Any = None, **kw: Any) -> Any:
            return fn(*a, **kw)

        return make

    proxy = types.SimpleNamespace(**{k: getattr(torch, k) for k in dir(torch) if not k.startswith("__")})
    proxy.zeros, proxy.empty = cpu(torch.zeros), cpu(torch.empty)
    for m in modules:
        m.torch = proxy


def _meta(dtype: Any, *shape: int) -> Any:
    """A metadata-only sample on the meta device (the plans accept meta samples and pin device 0)."""
    import torch

    return torch.empty(*shape, dtype=dtype, device="meta")


# --------------------------------------------------------------------------------------- sm_100a
def cudnn_csa_compressor(arch: str) -> Callable[[], None]:
    """cudnn's CSA (compressed sparse attention) KV compressor, ratio 4, coff 2 (the production CSA/HCA
    overlapping-window form), head dim 512: forward and deterministic backward (with its dAPE reduction),
    through ``CSACompressorForward`` / ``CSACompressorBackward`` ``check_support`` + ``compile`` on meta
    samples (8 sequences, 8192 tokens, 2048 compressed rows). The kernels take raw pointers over flat
    ``(2**31 - 1)`` layouts (int32 offsets; the plan checks ``total_tokens * coff * head_dim < 2**31``)."""
    _gpu(arch)
    import torch

    api = importlib.import_module("cudnn.csa.compressor.api")
    _cpu_scratch(importlib.import_module("cudnn.csa.compressor.compressor_sm100"))
    bf, f32, i32 = torch.bfloat16, torch.float32, torch.int32

    def run() -> None:
        t, b, r, c, d = 8192, 8, 4, 2, 512
        tc = t // r
        samples = (_meta(bf, t, c * d), _meta(bf, t, c * d), _meta(f32, r, c * d), _meta(i32, b + 1), _meta(i32, b + 1))
        h4._plan(api.CSACompressorForward(*samples, _meta(bf, tc, d), ratio=r, coff=c))
        h4._plan(api.CSACompressorBackward(*samples, _meta(bf, tc, d), ratio=r, coff=c, deterministic=True))

    return run


def cudnn_engram_gate(arch: str) -> Callable[[], None]:
    """cudnn's Engram saved-state gate (engram/api.py): the forward through ``EngramGateSavedForward``
    ``check_support`` + ``compile`` (raw pointers over ``(2**63 - 1)`` layouts, tokens a runtime Int32,
    d = 5120 fixed); the backward's CuTe apply kernel as ``_compile_backward`` compiles it (its two Triton
    reductions are not CuTe and are left out): 8192 tokens, 4 heads."""
    _gpu(arch)
    import cuda.bindings.driver as cuda
    import cutlass
    import cutlass.cute as cute
    import torch

    api = importlib.import_module("cudnn.engram.api")
    bwd = importlib.import_module("cudnn.engram._backward")
    bf, f32 = torch.bfloat16, torch.float32

    def run() -> None:
        n, d = 8192, 5120
        x, kv = h4._desc(bf, (n, 4, d)), h4._desc(bf, (n, 5 * d))
        h4._plan(api.EngramGateSavedForward(x, kv, h4._desc(f32, (4, d)), h4._desc(torch.bool, (n,))))
        kinds = (bf, bf, f32, bf, f32, bf, bf, bf, f32)
        s, w, v = api._APPLY_STEPS, api._APPLY_WARPS, api._APPLY_VECTOR
        ptrs = (api._ptr(k, 0) for k in kinds)
        cute.compile(bwd.launch_apply, *ptrs, cutlass.Int32(0), cuda.CUstream(0), d, 5 * d, 5 * d, 5 * d, s, w, v)

    return run


def cudnn_dsa_indexer_topk(arch: str) -> Callable[[], None]:
    """cudnn's DeepSeek sparse-attention indexer top-K (deepseek_sparse_attention/indexer_top_k
    ``IndexerTopK`` ``check_support`` + ``compile``: fake compact tensors with ``sym_int`` rows, columns
    and batch, the column count bucketed): f32 scores, top-2048 with values, 64 rows of 65,536 columns
    (one CTA per row), and 1024 rows of 32,768 with next_n = 2 (large-occupancy, deterministic)."""
    _gpu(arch)
    import torch

    api = importlib.import_module("cudnn.deepseek_sparse_attention.indexer_top_k.api")
    f32, i32 = torch.float32, torch.int32

    def run() -> None:
        h4._plan(api.IndexerTopK(h4._desc(f32, (64, 65536)), h4._desc(i32, (64,)), 2048))
        plan = api.IndexerTopK(h4._desc(f32, (1024, 32768)), h4._desc(i32, (512,)), 2048, next_n=2, deterministic=True)
        h4._plan(plan)

    return run


def _frost(*modules: Any) -> None:
    """FROST kernels: the persistent compiled-plan cache off (``CUDNN_FRONTEND_DISABLE_COMPILED_CACHE``:
    every ``compile_cached`` then calls ``cute.compile`` itself) and the modules' ``current_device`` (a
    driver query, part of their cache keys) device 0."""
    import os

    os.environ["CUDNN_FRONTEND_DISABLE_COMPILED_CACHE"] = "1"
    for m in modules:
        m.current_device = lambda: 0


def cudnn_gab_qk_norm_rope(arch: str) -> Callable[[], None]:
    """cudnn's gated-attention-block Q/K RMSNorm + RoPE (gated_attention_block/kernels/qk_norm_rope.py
    ``compile_qk_norm_rope``, the block's plan-time compile: tokens ``sym_int``, row counts runtime Int32,
    a symbolic token stride): bf16, 32 q / 8 KV heads, head dim 128, rope 64, with rstd; and the RoPE-only
    form at head dim 256 with compact operands."""
    _gpu(arch)
    import torch

    k = importlib.import_module("cudnn.gated_attention_block.kernels.qk_norm_rope")
    _frost(k)

    def run() -> None:
        k.compiled_cache.clear()
        bf = torch.bfloat16
        k.compile_qk_norm_rope(dtype=bf, h_q=32, h_kv=8, d=128, rope_dim=64, eps=1e-6, want_rstd=True)
        k.compile_qk_norm_rope(dtype=bf, h_q=16, h_kv=2, d=256, rope_dim=64, eps=1e-6, want_rstd=False,
                               dynamic_token_stride=False, apply_norm=False)  # fmt: skip

    return run


def cudnn_gab_cache_write(arch: str) -> Callable[[], None]:
    """cudnn's gated-attention-block paged KV-cache write (gated_attention_block/kernels/cache_write.py
    ``compile_cache_write``: pools ``(sym pages, H, page, D)`` with free 64-bit strides, tokens ``sym_int``,
    rows / slots runtime): bf16 K and V in one launch, 8 heads x 128, page 64, int32 slot_mapping; and one
    operand (the indexer key), 1 head x 128, page 64, int64 slots, PDL."""
    _gpu(arch)
    import torch

    k = importlib.import_module("cudnn.gated_attention_block.kernels.cache_write")
    _frost(k)

    def run() -> None:
        k.compiled_cache.clear()
        bf = torch.bfloat16
        k.compile_cache_write(dtype=bf, h=8, d=128, page_size=64)
        k.compile_cache_write(dtype=bf, h=1, d=128, page_size=64, slot_dtype=torch.int64, two_operands=False,
                              use_pdl=True)  # fmt: skip

    return run


# ---------------------------------------------------------------------------------------- sm_90a
def cudnn_dsa_indexer_bwd(arch: str) -> Callable[[], None]:
    """cudnn's DeepSeek sparse-attention indexer backward on Hopper (deepseek_sparse_attention/
    indexer_backward ``IndexerBackward`` ``check_support`` + ``compile``: on sm_90 a closure that compiles
    its two kernels on first execute from the real tensors, each through ``to_cute_tensor`` =
    ``from_dlpack(...).mark_layout_dynamic``); that closure run on CPU tensors typed as CUDA, its launches
    and the dK memset skipped, the score-grad kernel entered past its ``is_cuda`` gate: in-place score-grad
    precompute and the warp-specialised WGMMA gradient GEMM; B 1, 2048 q / 4096 k tokens, 64 heads x 128,
    top-2048 local indices, bf16 dK through the workspace accumulator."""
    _gpu(arch)
    import torch

    tc = importlib.import_module("cudnn.deepseek_sparse_attention.utils.tensor_conversion")
    api = importlib.import_module("cudnn.deepseek_sparse_attention.indexer_backward.api")
    kb: Any = importlib.import_module("cudnn.deepseek_sparse_attention.indexer_backward.indexer_backward_sm90")
    h4._on_cuda(tc)
    h4._no_launch(kb)
    kb.memset_zero_async = lambda *a, **kw: None
    kb._score_grad_inplace = kb._score_grad_inplace_cute  # its gate: contiguous f32 CUDA tensors (met but for is_cuda)
    bf, f32, i32 = torch.bfloat16, torch.float32, torch.int32

    def run() -> None:
        kb._compile_cache.clear()
        kb._score_grad_cute_cache.clear()
        b, s, sk, h, d, k = 1, 2048, 4096, 64, 128, 2048
        shapes = ((bf, (b, s, h, d)), (bf, (b, s, h)), (bf, (b, sk, d)), (bf, (b, s, h, d)), (bf, (b, s, h)),
                  (bf, (b, sk, d)), (f32, (b, s, k)), (f32, (b, s, k)), (i32, (b, s, k)))  # fmt: skip
        plan = api.IndexerBackward(*(h4._desc(t, sh) for t, sh in shapes), sm_scale=d**-0.5)
        h4._plan(plan)
        iq, w, ik, diq, dw, dik, attn, score, idx = (torch.zeros(sh, dtype=t) for t, sh in shapes)
        ws = torch.zeros(dik.numel() * 4 + 256, dtype=torch.uint8)
        plan._compiled_kernel(iq, w, ik, diq, dw, dik, attn, score, idx, torch.ones(1, dtype=f32), 1.0, workspace=ws)

    return run


def cudnn_hstu_fwd(arch: str) -> Callable[[], None]:
    """cudnn's HSTU attention forward on Blackwell (hstu/hstu_attention ``HSTUFwdSm100.compile`` calls
    ``_interface.hstu_varlen_fwd_100(..., _compile_only=True)`` on its samples: that call, its
    ``from_dlpack(...).mark_layout_dynamic`` of CPU tensors typed as CUDA; the plan's ``check_support``
    wants CUDA tensors and is skipped): packed varlen (T, H, D) bf16, 8 sequences of 1024 tokens,
    4 heads x 128, SiLU attention; causal, and local with a 256-token left window."""
    _gpu(arch)
    import torch

    itf = importlib.import_module("cudnn.hstu.hstu_attention._interface")
    h4._on_cuda(itf)
    bf = torch.bfloat16

    def run() -> None:
        itf.hstu_varlen_fwd_100.compile_cache = {}
        b, s, h, d = 8, 1024, 4, 128
        t = b * s
        cu = torch.arange(0, t + 1, s, dtype=torch.int32)
        for window in ((-1, 0), (256, 0)):
            q, k, v, o = (torch.zeros(t, h, d, dtype=bf) for _ in range(4))
            itf.hstu_varlen_fwd_100(q, k, v, cu, cu, s, s, *window, d**-0.5, None, out=o, _compile_only=True)

    return run


def cudnn_qsa_fwd(arch: str) -> Callable[[], None]:
    """cudnn's QSA (query-selected sparse attention) forward, packed THD on Blackwell (QSA/_forward.py
    ``compile_kernel`` as its ``launch`` calls it for 512 < T <= 16384, the gated form: one host function
    launching the current-input scan, tile bounds, tile schedule and packed key-mask kernels
    (kernels/fprop_prepare.py), the dense masked attention (fprop_dense.py) and the sparse selected-block
    attention (fprop_sm100.py)); fake compact tensors, T and the block count ``sym_int64``: 12 q / 1 KV
    heads, head dim 256, bf16."""
    _gpu(arch)
    fwd = importlib.import_module("cudnn.QSA._forward")
    _frost()

    def run() -> None:
        fwd.compile_kernel(12, 1, 100, True)

    return run
