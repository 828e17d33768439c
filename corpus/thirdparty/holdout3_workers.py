"""A third holdout set of real CuTe DSL kernels, compiled with no GPU (worker side of regen.py's
holdout-3 captures): kernels in no earlier capture, triaged by hand before any analysis work looked
at them (holdout_workers.py and holdout2_workers.py have since been tuned on).

Same recipe as holdout2_workers.py (flashinfer_workers.py's :func:`pretend_gpu` and compile-only
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
from typing import Any

_spec = importlib.util.spec_from_file_location("flashinfer_workers", Path(__file__).with_name("flashinfer_workers.py"))
assert _spec and _spec.loader
fw = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fw)


# ------------------------------------------------------------------------------ flashinfer, sm_100a
def fi_gqa_decode(arch: str) -> Callable[[], None]:
    """flashinfer's modular Blackwell GQA decode (``GroupedQueryAttentionDecode`` through
    ``_get_compiled_decode_kernel`` / ``_get_compiled_paged_decode_kernel``, which build symbolic fake
    tensors: batch, KV length, splits, pages): bf16, 32 q / 8 KV heads, hd 128, one query token,
    split-KV with the reduction kernel and LSE; ragged (contiguous KV, symbolic strides) and paged
    (page 64)."""
    fw.pretend_gpu(arch)
    import cutlass

    bd = importlib.import_module("flashinfer.cute_dsl.attention.wrappers.batch_decode")
    bf = cutlass.BFloat16

    def run() -> None:
        # in, out dtypes, qo heads, kv heads, head dim, prediction, reduction, window l/r, lse, sink
        bd._get_compiled_decode_kernel.__wrapped__(bf, bf, 32, 8, 128, 1, "kernel", None, None, True, False)
        # in, out, page, qo, kv, hd, prediction, reduction, window l/r, threshold, lse, sink
        bd._get_compiled_paged_decode_kernel.__wrapped__(
            bf, bf, 64, 32, 8, 128, 1, "kernel", None, None, False, True, False
        )

    return run


# ------------------------------------------------------------------------------- flashinfer, sm_90a
def fi_msa_indexer(arch: str) -> Callable[[], None]:
    """flashinfer MSA's Hopper indexer kernels through their ``run`` functions (CPU tensors typed as
    device memory, flashinfer_workers.py's ``_patch_gdn``): the fp8 decode proxy score
    (proxy_score_decode_sm90: 4 requests, 4 index heads, hd 128, paged fp8 K cache of 128-token pages,
    page table (4, 2048), scores (Hq, tiles, total_q)) and the top-16 block selection
    (topk_select_sm90, ``from_dlpack(use_32bit_stride=True)``): per-token validity mask, 1 head, 4096
    score tiles for 64 tokens, and 2048 tiles for 4 tokens."""
    fw.pretend_gpu(arch)
    import torch

    ps = importlib.import_module("flashinfer.msa_ops.cute_dsl.proxy_score_decode_sm90")
    ts = importlib.import_module("flashinfer.msa_ops.cute_dsl.topk_select_sm90")
    fw._patch_gdn(ps, ts)
    f8, f32, i32 = torch.float8_e4m3fn, torch.float32, torch.int32

    def run() -> None:
        ps._CACHE.clear()
        ts._cache.clear()
        b, hq, tiles, pages = 4, 4, 2048, 256
        q = torch.zeros(b, hq, 128, dtype=f8)
        k = torch.zeros(pages, 128, 1, 128, dtype=f8)
        table = torch.zeros(b, tiles, dtype=i32)
        used = torch.full((b,), 4096, dtype=i32)
        ps.run(q, k, torch.zeros(b + 1, dtype=i32), table, used, torch.zeros(hq, tiles, b, dtype=f32))
        for t, nq in ((4096, 64), (2048, 4)):
            score = torch.zeros(1, t, nq, dtype=f32)
            out = torch.zeros(nq, 1, ts.TOPK, dtype=i32).permute(1, 0, 2)
            ts.run(score, None, None, out, torch.full((nq,), t, dtype=i32), 1, 4)

    return run


def fi_msa_sparse_prefill(arch: str) -> Callable[[], None]:
    """flashinfer MSA's Hopper sparse prefill attention (sparse_prefill_sm90 ``run``: ``MsaSparseAttnFp8``
    compiled on raw Int64 addresses and Int32 sizes, tensors rebuilt in the kernel): 16 q heads on 1 KV
    head, hd 128, fp8 paged KV (page 128), top-16 KV blocks per query, 2 sequences of 8192 tokens."""
    fw.pretend_gpu(arch)
    import torch

    sp = importlib.import_module("flashinfer.msa_ops.cute_dsl.sparse_prefill_sm90")
    fw._patch_compile_only(sp)  # raw addresses: no from_dlpack; the launch asks the driver for smem per SM
    i32 = torch.int32

    def run() -> None:
        sp._CACHE.clear()
        sp._PLAN.clear()
        b, s, hq, hkv, pages, mpg = 2, 8192, 16, 1, 1024, 64
        q = torch.zeros(b * s, hq, 128, dtype=torch.bfloat16)
        kv = torch.zeros(pages, hkv, 2, 128, 128, dtype=torch.uint8)
        idx = torch.zeros(hkv, b * s, 16, dtype=i32)
        table = torch.zeros(b, mpg, dtype=i32)
        lens = torch.full((b,), s, dtype=i32)
        sp.run(q, kv, idx, torch.zeros(b + 1, dtype=i32), table, lens, torch.zeros(b, dtype=i32), torch.zeros_like(q))

    return run


# ------------------------------------------------------------------- flashinfer experimental b12x (sm_120a)
def _gmem_ptrs(*types: Any) -> list[Any]:
    """Raw global pointers at made-up aligned addresses (compile-only), as b12x's compile functions make."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_ptr

    return [make_ptr(t, 1 << (32 + i), cute.AddressSpace.gmem, assumed_align=t.width // 8) for i, t in enumerate(types)]


def b12x_vision(arch: str) -> Callable[[], None]:
    """b12x's vision-tower row kernels (norm/vision.py ``_Vision``, compiled as ``_compile`` does: raw
    pointers, runtime Int32 rows / height / width, grid = rows): GELU (1152 channels), 2x2 spatial merge
    (1152 channels), and QKV rotary (1152 channels, 16 heads)."""
    import cutlass
    import cutlass.cute as cute
    from cutlass import Int32
    from cutlass.cute.runtime import make_fake_stream

    v = importlib.import_module("flashinfer.experimental.b12x.norm.vision")
    bf, f32 = cutlass.BFloat16, cutlass.Float32

    def run() -> None:
        for op, heads, ratio in (("gelu", 1, 1), ("merge", 1, 2), ("rope", 16, 1)):
            p = _gmem_ptrs(bf, bf, bf, bf, f32, cutlass.Int32)
            cute.compile(v._Vision(op, 1152, heads, ratio), *p, Int32(1), Int32(1), Int32(1), make_fake_stream())

    return run


def b12x_hyperconnection(arch: str) -> Callable[[], None]:
    """b12x's hyper-connection row kernels (norm/hyperconnection/_cute.py, compiled as its ``_compile``
    does: raw pointers at address 16, runtime Int32 token / row / element counts and Int64 logit
    strides), 4 streams, hidden 7168 (DeepSeek-V4 shape): grouped RMSNorm (rows = tokens x streams),
    scaled SiLU (low rank 32), gate mean, combine, and combine + RMSNorm (packed). bf16 pointers, f32
    logits."""
    import cutlass.cute as cute
    import torch
    from cutlass import Float32, Int32, Int64
    from cutlass.cute.runtime import make_fake_stream

    hc = importlib.import_module("flashinfer.experimental.b12x.norm.hyperconnection._cute")
    bf, f32 = torch.bfloat16, torch.float32

    def ptrs(*dtypes: Any) -> list[Any]:
        return [hc._fake_pointer(d) for d in dtypes]

    def run() -> None:
        s, h = 4, 7168
        stream = make_fake_stream()
        cute.compile(hc._GroupedRmsNorm(s, h, True), *ptrs(bf, bf, bf), Float32(1e-6), Int32(1), stream)
        cute.compile(hc._ScaledSilu(s, 32), *ptrs(bf, bf), Int32(1), Int64(1), stream)
        cute.compile(hc._GateMean(s, h), *ptrs(bf, f32, f32), Int32(1), stream)
        cute.compile(hc._Combine(s, h), *ptrs(bf, bf, f32, bf), Int32(1), Int64(1), stream)
        p = ptrs(bf, bf, f32, bf, bf, bf)
        cute.compile(hc._PackedCombineNorm(s, h), *p, Float32(1e-6), Int32(1), Int64(1), stream)

    return run


def b12x_paged_merge(arch: str) -> Callable[[], None]:
    """b12x paged attention's split-KV merge (``PagedPersistentMergeKernel`` from ``_build_merge_kernel``,
    bf16, hd 128, 32 x 4 threads, persistent over 188 CTAs), with the fake tensors ``_to_kernel_tensor``
    builds under fake mode: rank >= 2 tensors get i32 symbolic extents and i64 symbolic strides (unit
    stride on the contiguous mode); rank-1 metadata (merge indptr, cache lengths, chunk size, row count)
    symbolic i32 extents."""
    import cutlass
    import cutlass.cute as cute
    import torch
    from cutlass.cute.runtime import make_fake_stream, make_fake_tensor

    fwd = importlib.import_module("flashinfer.experimental.b12x.attention.paged._forward")
    bf, i32, f32 = cutlass.BFloat16, cutlass.Int32, cutlass.Float32

    def t(dtype: Any, rank: int, align: int = 16) -> Any:
        shape = tuple(cute.sym_int(32) for _ in range(rank))
        stride = (*(cute.sym_int(64) for _ in range(rank - 1)), 1)
        return make_fake_tensor(dtype, shape, stride, assumed_align=align)

    def run() -> None:
        fwd._build_merge_kernel.cache_clear()
        k = fwd._build_merge_kernel(torch.bfloat16, 128, 64, 188, False, False, False, False, False)
        # tmp_output, tmp_lse, merge_indptr, cache_seqlens, kv_chunk_size, output, lse, total_num_rows
        args = (t(bf, 3), t(f32, 2, 4), t(i32, 1, 4), t(i32, 1, 4), t(i32, 1, 4), t(bf, 3), t(f32, 2, 4))
        cute.compile(k, *args, t(i32, 1, 4), make_fake_stream())

    return run


# ----------------------------------------------------------------------------------- FlashAttention-4
def fa4_bwd_sparse_mla(arch: str) -> Callable[[], None]:
    """FA4's DeepSeek sparse-MLA backward (``_flash_attn_bwd_sparse_mla``: preprocess, the main
    ``FlashAttentionSparseMLABackwardSm100`` over gathered KV indices, the dQ/dQv and dK GEMM kernels),
    recompute-P mode, varlen: 128 q heads, 1 KV head, rope 64 + latent 512, 2048 gathered keys per
    query (index table (total_q, 2048)), 8 sequences of 4096 tokens, causal."""
    import torch

    fa = importlib.import_module("flash_attn.cute.interface")
    regen, fake = _fa4()
    bf = torch.bfloat16

    _no_ellipsis_index()

    def run() -> None:
        regen._fa4_reset_caches()
        fa._flash_attn_bwd_sparse_mla.compile_cache = {}
        with fake():
            b, s, h, L = 8, 4096, 128, 2048
            tq = b * s
            q = torch.empty(tq, h, 64, dtype=bf, device="cuda")
            qv = torch.empty(tq, h, 512, dtype=bf, device="cuda")
            k = torch.empty(tq, 1, 64, dtype=bf, device="cuda")
            v = torch.empty(tq, 1, 512, dtype=bf, device="cuda")
            out, dout = (torch.empty(tq, h, 512, dtype=bf, device="cuda") for _ in range(2))
            lse = torch.empty(h, tq, dtype=torch.float32, device="cuda")
            idx = torch.empty(tq, L, dtype=torch.int32, device="cuda")
            cu = torch.empty(b + 1, dtype=torch.int32, device="cuda")
            fa._flash_attn_bwd_sparse_mla(
                q, k, v, qv, out, dout, lse, None, None, idx, causal=True, cu_seqlens_q=cu, cu_seqlens_k=cu,
                max_seqlen_q=s, max_seqlen_k=s, recompute_p=True,
            )  # fmt: skip

    return run


def _no_ellipsis_index() -> None:
    """CPU-only torch fails basic indexing of a fake CUDA tensor (``t[..., :n]``: "not linked with support
    for cuda devices") but not ``narrow``/``select``: ``Tensor.__getitem__`` spells unit-step slices, ints
    and Ellipsis that way (anything else goes to torch as it is)."""
    import torch

    inner = torch.Tensor.__getitem__

    def getitem(self: Any, idx: Any) -> Any:
        items = idx if isinstance(idx, tuple) else (idx,)
        if not all(i is Ellipsis or isinstance(i, int) or (isinstance(i, slice) and i.step in (None, 1))
                   for i in items) or sum(i is Ellipsis for i in items) > 1:  # fmt: skip
            return inner(self, idx)
        if Ellipsis in items:
            k = items.index(Ellipsis)
            items = items[:k] + (slice(None),) * (self.dim() - len(items) + 1) + items[k + 1 :]
        out, dim = self, 0
        for i in items:
            if isinstance(i, int):
                out = out.select(dim, i)
                continue
            start, stop, _ = i.indices(out.shape[dim])
            out = out.narrow(dim, start, max(stop - start, 0))
            dim += 1
        return out

    torch.Tensor.__getitem__ = getitem  # type: ignore[method-assign,assignment]


def _fa4() -> Any:
    """holdout2_workers.py's FA4 setup: regen.py's fake HardwareInfo and fresh compile caches."""
    spec = importlib.util.spec_from_file_location("holdout2_workers", Path(__file__).with_name("holdout2_workers.py"))
    assert spec and spec.loader
    h2 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(h2)
    return h2._fa4()


# ----------------------------------------------------------------------------------------------- quack
def quack_gemm_default(arch: str) -> Callable[[], None]:
    """quack's GEMM (``_compile_gemm``) on sm_120a (``GemmDefaultSm120``, gemm_sm120.py: warp-level MMA,
    TMA loads): bf16 A/B/D, K-major, batched (L), tile 128x128, cluster 1x1, persistent, with a C
    (beta) epilogue; and variable-length M (cu_seqlens_m) with an f32 row vector."""
    from cutlass import BFloat16, Float32

    gemm = importlib.import_module("quack.gemm")
    from quack.gemm_config import SplitKMode
    from quack.rounding import RoundingMode

    cap = (12, 0)

    def compile_one(c: Any, rowvec: Any, beta: int, varlen_m: bool) -> None:
        gemm._compile_gemm.__wrapped__(
            BFloat16, BFloat16, BFloat16, c,  # a, b, d, c dtypes
            "k", "k", "n", "n" if c else None,  # a, b, d, c majors
            (128, 128), (1, 1, 1),  # tile_shape_mn, cluster_shape_mnk
            False, True, False,  # pingpong, persistent, is_dynamic_persistent
            rowvec, None, 0,  # rowvec, colvec dtypes, colvec_ndim
            0, beta, False,  # alpha_mode, beta_mode, add_to_output
            None, varlen_m, False, False, False, False,  # concat_layout, varlen_m/k, gather_A, tma_gather, permute
            cap, RoundingMode.RN, 0, None,  # device_capacity, rounding_mode, sr_seed_mode, num_warps
            split_k_mode=SplitKMode.SERIAL,
        )  # fmt: skip

    def run() -> None:
        compile_one(BFloat16, None, 1, False)
        compile_one(None, Float32, 0, True)

    return run
