"""A twelfth holdout set of real CuTe DSL kernels, compiled with no GPU (worker side of regen.py's
holdout-12 captures): kernels of nvidia-cudnn-frontend 1.32.0 (package ``cudnn``) and FlashAttention-4
(``flash_attn.cute`` 4.0.0b36) in no earlier capture, triaged by hand before any analysis work looked
at them.

Same recipe as holdout10_workers.py: each function takes the arch and returns a zero-argument callable
that makes the kernel's real ``cute.compile`` calls, through the package's own compile path (an
``APIBase`` plan's ``check_support`` + ``compile`` on metadata-only ``TensorDesc`` samples, FA4's
``_flash_attn_fwd`` / ``_flash_attn_bwd`` under ``FakeTensorMode``), else as that path does (said in the
docstring).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _sibling(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


h4 = _sibling("holdout4_workers")
h10 = _sibling("holdout10_workers")


# ------------------------------------------------------------------------------------------ FA4
def fa4_fwd_varlen(arch: str) -> Callable[[], None]:
    """FA4 forward, varlen (cu_seqlens_q / cu_seqlens_k of 4 sequences, 4096 packed tokens, max 2048),
    causal, hd 128, GQA 16 q / 4 KV heads, bf16, with the LSE."""
    import torch
    from flash_attn.cute.interface import _flash_attn_fwd
    from torch._subclasses.fake_tensor import FakeTensorMode

    regen = _sibling("regen")
    regen._fa4_setup()
    bf, i32 = torch.bfloat16, torch.int32

    def run() -> None:
        regen._fa4_reset_caches()
        with FakeTensorMode():
            t, h, hk, d = 4096, 16, 4, 128
            q = torch.empty(t, h, d, dtype=bf, device="cuda")
            k, v = (torch.empty(t, hk, d, dtype=bf, device="cuda") for _ in range(2))
            cu = torch.empty(5, dtype=i32, device="cuda")
            _flash_attn_fwd(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=2048, max_seqlen_k=2048,
                            causal=True, return_lse=True)  # fmt: skip

    return run


def _fa4_bwd(b: int, s: int, h: int, hk: int, d: int, **kw: Any) -> Callable[[], None]:
    """FA4's ``_flash_attn_bwd`` under ``FakeTensorMode`` as regen.py's ``_fa4_bwd`` calls it, with
    ``hk`` KV heads (GQA when below ``h``) and the call's keyword options ``kw``."""
    import torch
    from flash_attn.cute.interface import _flash_attn_bwd
    from torch._subclasses.fake_tensor import FakeTensorMode

    regen = _sibling("regen")
    regen._fa4_setup()
    bf = torch.bfloat16

    def run() -> None:
        regen._fa4_reset_caches()
        with FakeTensorMode():
            q, out, dout = (torch.empty(b, s, h, d, dtype=bf, device="cuda") for _ in range(3))
            k, v = (torch.empty(b, s, hk, d, dtype=bf, device="cuda") for _ in range(2))
            lse = torch.empty(b, h, s, dtype=torch.float32, device="cuda")
            _flash_attn_bwd(q, k, v, out, dout, lse, **kw)

    return run


def fa4_bwd_gqa(arch: str) -> Callable[[], None]:
    """FA4 backward (preprocess, main, postprocess), GQA 32 q / 8 KV heads, non-causal, hd 128, bf16,
    batch 2 x 1024 tokens."""
    return _fa4_bwd(2, 1024, 32, 8, 128)


def fa4_bwd_gqa_causal(arch: str) -> Callable[[], None]:
    """FA4 backward (preprocess, main, postprocess), GQA 16 q / 2 KV heads, causal, hd 64, bf16,
    batch 2 x 1024 tokens."""
    return _fa4_bwd(2, 1024, 16, 2, 64, causal=True)


# ---------------------------------------------------------------------------------------- cudnn
def cudnn_conv1d_update(arch: str) -> Callable[[], None]:
    """cudnn's causal conv1d decode update (causal_conv1d_update_sm100/api.py ``_CausalConv1dUpdatePlan``,
    BF16 K = 4), the plan's ``check_support`` + ``compile`` on metadata-only descriptors: x [256, 4096],
    weight [4096, 4], state [512, 4096, 3] advanced in place, int32 state indices [256], bias, SiLU."""
    h4._gpu(arch)
    import torch

    api = importlib.import_module("cudnn.causal_conv1d_update_sm100.api")
    bf = torch.bfloat16

    def run() -> None:
        n, d, s = 256, 4096, 512
        x, o = h4._desc(bf, (n, d)), h4._desc(bf, (n, d))
        w, state, idx = h4._desc(bf, (d, 4)), h4._desc(bf, (s, d, 3)), h4._desc(torch.int32, (n,))
        plan = api._CausalConv1dUpdatePlan(x, w, state, o, idx, h4._desc(bf, (d,)), activation="silu")
        h4._plan(plan)

    return run


def cudnn_nsa_topk(arch: str) -> Callable[[], None]:
    """cudnn's native-sparse-attention top-K reduction (native_sparse_attention/top_k/api.py
    ``TopKReduction``, kernel nsa_top_k_reduction_fwd.py), the plan's ``check_support`` + ``compile`` on
    metadata-only descriptors: bf16 B,H,S,D, batch 2, 32 q / 2 KV heads, 2048 queries on 64 compressed
    keys, hd 128, f32 LSE, top-16 scores (f32) and int32 indices, causal."""
    h4._gpu(arch)
    import torch

    api = importlib.import_module("cudnn.native_sparse_attention.top_k.api")
    bf, f32 = torch.bfloat16, torch.float32

    def run() -> None:
        b, hq, hk, sq, sk, d, kv = 2, 32, 2, 2048, 64, 128, 16
        q, k = h4._desc(bf, (b, hq, sq, d)), h4._desc(bf, (b, hk, sk, d))
        lse = h4._desc(f32, (b, hq, sq))
        sc, ix = h4._desc(f32, (b, hk, sq, kv)), h4._desc(torch.int32, (b, hk, sq, kv))
        h4._plan(api.TopKReduction(q, k, lse, sc, ix, k_value=kv))

    return run


def cudnn_nsa_compression(arch: str) -> Callable[[], None]:
    """cudnn's native-sparse-attention compressed attention (native_sparse_attention/compression/api.py
    ``CompressionAttention``, the Blackwell FMHA of compression/fmha.py with the compressed causal mask),
    the plan's ``check_support`` + ``compile`` on metadata-only descriptors: bf16 B,H,S,D, batch 2, 32 q /
    2 KV heads, 2048 queries on 64 compressed keys, hd 128, with the LSE."""
    h4._gpu(arch)
    import torch

    api = importlib.import_module("cudnn.native_sparse_attention.compression.api")
    bf, f32 = torch.bfloat16, torch.float32

    def run() -> None:
        b, hq, hk, sq, sk, d = 2, 32, 2, 2048, 64, 128
        q, o = h4._desc(bf, (b, hq, sq, d)), h4._desc(bf, (b, hq, sq, d))
        k, v = h4._desc(bf, (b, hk, sk, d)), h4._desc(bf, (b, hk, sk, d))
        h4._plan(api.CompressionAttention(q, k, v, o, h4._desc(f32, (b, hq, sq))))

    return run


def cudnn_dsa_bwd(arch: str) -> Callable[[], None]:
    """cudnn's DeepSeek sparse attention backward (deepseek_sparse_attention/sparse_attention_backward/api.py
    ``SparseAttentionBackward``, the SM100 non-deterministic backend its ``check_support`` selects), the
    plan's ``check_support`` + ``compile`` on metadata-only descriptors (DeviceInfo as a B200): bf16,
    4096 query tokens x 16 heads, MLA dims 576 / 512, 8192 KV rows (K = V), f32 LSE and attention sink,
    int32 top-2048 indices."""
    h4._gpu(arch)
    h4._hardware()
    h10._device_facts(arch)
    import torch

    api = importlib.import_module("cudnn.deepseek_sparse_attention.sparse_attention_backward.api")
    bf, f32 = torch.bfloat16, torch.float32

    def run() -> None:
        t, h, d, dv, kv, top = 4096, 16, 576, 512, 8192, 2048
        q = h4._desc(bf, (t, h, d))
        o, do = h4._desc(bf, (t, h, dv)), h4._desc(bf, (t, h, dv))
        plan = api.SparseAttentionBackward(q, h4._desc(bf, (kv, d)), o, do, h4._desc(f32, (t, h)),
                                           h4._desc(f32, (h,)), h4._desc(torch.int32, (t, top)))  # fmt: skip
        h4._plan(plan)

    return run


def cudnn_gab_bwd(arch: str) -> Callable[[], None]:
    """cudnn's gated-attention-block backward elementwise kernels, as the block's plan-time compile makes
    them (tokens ``sym_int``, row counts runtime Int32): ``compile_sigmoid_gate_bwd`` (sigmoid_gate_bwd.py:
    dO_gated -> dO and dG, with the gated output O_gated and the fp32 delta = rowsum(O * dO)), bf16, 32
    heads x 128; and ``compile_qk_norm_rope_bwd`` (qk_norm_rope_bwd.py: the RMSNorm + RoPE adjoint with the
    dW partials and their reduce), bf16, 32 q / 8 KV heads x 128, rope 64. The modules' ``current_device``
    answers device 0, the FROST compiled-plan cache is off (holdout7_workers.py ``_frost``); DeviceInfo
    answers as a B200 (148 SMs: the qk adjoint's persistent CTA cap)."""
    h4._gpu(arch)
    h4._hardware()
    h10._device_facts(arch)
    import torch

    h7 = _sibling("holdout7_workers")
    sg = importlib.import_module("cudnn.gated_attention_block.kernels.sigmoid_gate_bwd")
    qk = importlib.import_module("cudnn.gated_attention_block.kernels.qk_norm_rope_bwd")
    h7._frost(sg, qk)
    bf = torch.bfloat16

    def run() -> None:
        sg.compiled_cache.clear()
        qk.compiled_cache.clear()
        sg.compile_sigmoid_gate_bwd(dtype=bf, h=32, d=128, has_og=True, has_seq_lens=False, has_delta=True)
        qk.compile_qk_norm_rope_bwd(dtype=bf, h_q=32, h_kv=8, d=128, rope_dim=64, eps=1e-6, apply_norm=True,
                                    want_dw=True, has_seq_lens=False)  # fmt: skip

    return run
