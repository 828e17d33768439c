"""A fifteenth holdout set of real CuTe DSL kernels, compiled with no GPU (worker side of regen.py's
holdout-15 captures): index-building, routing, scale-decode and paged-cache kernels of
nvidia-cudnn-frontend 1.32.0 (package ``cudnn``), flash-attn-4 4.0.0b36 and flashinfer-python 0.7.4
(its experimental b12x sm_120 library) in no earlier capture, triaged by hand before any analysis work
looked at them.

Same recipe as holdout13_workers.py / holdout14_workers.py: each function takes the arch and returns a
zero-argument callable that makes the kernel's real ``cute.compile`` calls through the package's own
compile path (the module's launcher with its compile cache, or, where that path also launches, the
same ``cute.compile`` call it makes, said in the docstring), on CPU tensors typed as CUDA device 0
(flashinfer_workers.py's CudaView), FakeTensorMode tensors (FA4) or raw pointers at address 16 (b12x),
each compiled kernel answering a no-op launch.
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


def _b12x(name: str) -> Any:
    return importlib.import_module(f"flashinfer.experimental.b12x.{name}")


def _ptr(t: Any, align: int) -> Any:
    """A raw global pointer at address 16 (compile-only), as b12x's compile functions make them."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_ptr

    return make_ptr(t, 16, cute.AddressSpace.gmem, assumed_align=align)


# ------------------------------------------------------------------ cudnn DSA top-k index utilities
def cudnn_dsa_index_utils(arch: str) -> Callable[[], None]:
    """cudnn's DeepSeek sparse-attention top-K index utilities (deepseek_sparse_attention/indexer_top_k):
    ``local_to_global`` (local_to_global_dsl.py, its ``_launch_local_to_global`` compile-and-launch: the
    module's ``to_cute_tensor`` dynamic layouts) for BSHD int32 local ids [2, 4096, 2048] with seqlen_k
    8192, and THD int32 ids [8192, 2048] with cu_seqlens (5,); ``compactify`` (compactify.py: warp-per-row
    stable compaction of valid ids, the ``cute.compile`` its ``compactify`` makes for cols 2048, rows a
    runtime Int32) on [8192, 2048]. Tensors are CPU tensors seen as CUDA device 0."""
    h4._gpu(arch)
    import torch
    from cutlass import Int32
    from cutlass.cute.runtime import make_fake_stream

    tc = importlib.import_module("cudnn.deepseek_sparse_attention.utils.tensor_conversion")
    l2g = importlib.import_module("cudnn.deepseek_sparse_attention.indexer_top_k.local_to_global_dsl")
    cp = importlib.import_module("cudnn.deepseek_sparse_attention.indexer_top_k.compactify")
    h4._on_cuda(tc)
    h4._no_launch(l2g, cp)
    i32 = torch.int32
    stream = make_fake_stream()

    def run() -> None:
        l2g._compile_cache.clear()
        cp._compile_cache.clear()
        bshd = torch.empty(2, 4096, 2048, dtype=i32)
        l2g._launch_local_to_global(bshd, torch.empty_like(bshd), 8192, None, None, stream)
        thd = torch.empty(8192, 2048, dtype=i32)
        cu = torch.zeros(5, dtype=i32)
        l2g._launch_local_to_global(thd, torch.empty_like(thd), 0, cu, cu.clone(), stream)
        rows, cols = thd.shape
        length = torch.empty(rows, dtype=i32)
        cp._compile_or_fetch(
            (cols,),
            cp.CompactifyKernel(cols=cols),
            tc.to_cute_tensor(thd),
            tc.to_cute_tensor(torch.empty_like(thd)),
            tc.to_cute_tensor(length),
            Int32(int(rows)),
            stream,
        )

    return run


# ---------------------------------------------------------------------- FA4 varlen tile cumsum
def fa4_cu_blocks(arch: str) -> Callable[[], None]:
    """FA4's varlen scheduler aids (flash_attn/cute/cu_blocks_kernel.py) through interface.py's
    ``_compute_tile_cumsum`` / ``_compute_blocks_to_batch`` under FakeTensorMode (they compile, then
    skip the launch in fake mode): cumulative m-block counts from cu_seqlens (513,) with dynamic
    split counts (tile 128, q_stage 2, pack-GQA 4); from seqused (512,) with a virtual batch index
    (tile 128); the flat block -> batch inversion over 8192 blocks."""
    h4._gpu(arch)
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    fi = importlib.import_module("flash_attn.cute.interface")
    i32 = torch.int32

    def run() -> None:
        with FakeTensorMode():
            cu = torch.empty(513, dtype=i32, device="cuda")
            splits = torch.empty(512, dtype=i32, device="cuda")
            fi._compute_tile_cumsum(
                cu_seqlens=cu, num_splits_dynamic=splits, tile_size=128, q_stage=2, qhead_per_kvhead=4, pack_gqa=True
            )
            used = torch.empty(512, dtype=i32, device="cuda")
            vb = torch.empty(512, dtype=i32, device="cuda")
            fi._compute_tile_cumsum(seqused=used, virtual_batch_idx=vb, tile_size=128)
            fi._compute_blocks_to_batch(torch.empty(513, dtype=i32, device="cuda"), 8192, "cuda")

    return run


# --------------------------------------------------------------------- flashinfer b12x (sm_120a)
def b12x_x4t_scales(arch: str) -> Callable[[], None]:
    """b12x's X4T MoE scale-plane decoders (_lib/quant/x4t_scales.py ``_X4TBaseDecodeLaunch`` and
    ``_X4TExceptionScatterLaunch``, compiled as ``_compiled_x4t_base`` / ``_compiled_x4t_scatter`` do:
    raw pointers at 16, the runtime ints given as 1), the expert-indexed E8M0 scale bytes of an FC1 plane
    rows 4096 x columns 224 (K 7168 / 32), 256 threads: logical [E, N, K/32] layout; the W4A16 packed
    [E, K/32, N] permutation with the BF16 clamp."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_stream

    x4 = _b12x("_lib.quant.x4t_scales")
    u8, u32, i32, i64 = cutlass.Uint8, cutlass.Uint32, cutlass.Int32, cutlass.Int64

    def run() -> None:
        for packed, clamp in ((False, False), (True, True)):
            kw = {"packed_w4a16": packed, "row_rotation": 0, "clamp_e8m0_bf16": clamp, "threads": 256}
            base = x4._X4TBaseDecodeLaunch(4096, 224, **kw)
            cute.compile(base, _ptr(u8, 16), _ptr(i32, 4), _ptr(u8, 16), 1, 1, 1, make_fake_stream())
            scatter = x4._X4TExceptionScatterLaunch(4096, 224, **kw)
            p = (_ptr(u32, 16), _ptr(i64, 8), _ptr(i32, 4), _ptr(u8, 16))
            cute.compile(scatter, *p, 1, 1, 1, 1, make_fake_stream())

    return run


def b12x_csf_routing(arch: str) -> Callable[[], None]:
    """b12x's CSF MoE active-expert mask (_lib/quant/csf_routing.py ``_ActiveExperts``, compiled as
    ``compile_csf_active_experts`` does: raw route and mask pointers at 16, runtime route and expert
    counts given as 1): int32 route ids; int64 route ids."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_stream

    cr = _b12x("_lib.quant.csf_routing")

    def run() -> None:
        for ids64 in (False, True):
            ids = _ptr(cutlass.Int64, 8) if ids64 else _ptr(cutlass.Int32, 4)
            cute.compile(cr._ActiveExperts(), ids, _ptr(cutlass.Int32, 4), 1, 1, make_fake_stream())

    return run


def b12x_mla_kv_cache(arch: str) -> Callable[[], None]:
    """b12x's MLA paged KV-cache writers (attention/_shared/mla/kv_cache.py), through their argument
    builders ``_glm_next_cache_writer_launch`` / ``_compressed_cache_writer_args`` on FakeTensorMode
    tensors (``_to_kernel_tensor`` makes sym_int extents and sym_int64 strides) and plain
    ``cute.compile``: the GLM-next BF16 -> FP8 writer, kv_c [4096, 512] into a (2048, 64, 528) u8 cache
    with int64 slots; the DeepSeek-V4.1 compressed NVFP4 writer (no RoPE, per-group E4M3 scales), kv
    [4096, 512] into (2048, 64*288) u8 pages with int32 slots."""
    h4._gpu(arch)
    import cutlass.cute as cute
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    kc = _b12x("attention._shared.mla.kv_cache")
    kc.current_cuda_stream = lambda: cute.runtime.make_fake_stream()

    def run() -> None:
        with FakeTensorMode():
            kv = torch.empty(4096, 512, dtype=torch.bfloat16, device="cuda")
            cache = torch.empty(2048, 64, 528, dtype=torch.uint8, device="cuda")
            slots = torch.empty(4096, dtype=torch.int64, device="cuda")
            kernel, args, _ = kc._glm_next_cache_writer_launch(kv, cache, slots)
            pages = torch.empty(2048, 64 * 288, dtype=torch.uint8, device="cuda")
            slots32 = torch.empty(4096, dtype=torch.int32, device="cuda")
            kernel2 = kc._build_compressed_cache_writer.__wrapped__(64, "csa")
            args2 = kc._compressed_cache_writer_args(kv, pages, slots32, 64, "csa")
        cute.compile(kernel, *args)
        cute.compile(kernel2, *args2)

    return run


# ------------------------------------------------------------------- cudnn sparse-attention metadata
def cudnn_bsa_k2q_csr(arch: str) -> Callable[[], None]:
    """cudnn block-sparse attention backward's K-to-Q CSR builder (block_sparse_attention/csrc/bwd/
    bucketed_k2q_csr.py ``BucketedK2QCsrUniversal``: count edges, per-group local offsets, finalize,
    scatter Q indices), the ``cute.compile`` ``build_bucketed_k2q_csr_cutedsl`` makes on the int32
    tensors it allocates (its ``_to_cute_tensor`` dynamic layouts, CPU tensors seen as CUDA device 0):
    q2k block index [2, 8, 64, 64] onto 64 KV blocks, buckets of 4 Q blocks: 16 blocks per Q block
    (fixed count); per-Q-block counts [2, 8, 64] with warp-parallel offsets."""
    h4._gpu(arch)
    import cutlass.cute as cute
    import torch

    k2q = importlib.import_module("cudnn.block_sparse_attention.csrc.bwd.bucketed_k2q_csr")
    h4._on_cuda(k2q)
    i32 = torch.int32

    def run() -> None:
        b, h, nq, nkv, bucket = 2, 8, 64, 64, 4
        groups = (nq + bucket - 1) // bucket
        for sparse_num, variable, parallel in ((16, False, False), (0, True, True)):
            index = torch.empty(b, h, nq, nkv, dtype=i32)
            nums = torch.empty(b, h, nq, dtype=i32) if variable else index
            edges = nq * (nkv if variable else sparse_num)
            counts = torch.zeros(b, h, groups, nkv, dtype=i32)
            local = torch.empty(b, h, groups, nkv + 1, dtype=i32)
            tensors = (
                counts,
                local,
                torch.empty(b, h, groups, dtype=i32),
                torch.empty_like(local),
                torch.empty_like(counts),
                torch.empty(b, h, max(1, edges), dtype=i32),
                index,
                nums,
            )
            kernel = k2q.BucketedK2QCsrUniversal(sparse_num, bucket, variable, nkv, parallel)
            cute.compile(
                kernel,
                *(k2q._to_cute_tensor(t) for t in tensors),
                cute.runtime.make_fake_stream(use_tvm_ffi_env_stream=False),
                options="--enable-tvm-ffi",
            )

    return run


def cudnn_mxfp8_scale_pack(arch: str) -> Callable[[], None]:
    """cudnn DSA's MXFP8 scale packer into the F8_128x4 MMA layout (deepseek_sparse_attention/utils/sm100/
    mxfp8_scale_pack.py, its cached ``_compile`` / ``_compile_qk_bshd``: raw byte pointers, Int64 runtime
    extents): the MKL source; the Q THD source (varlen prefixes, 4 Q heads per KV head); the fused Q/K
    BSHD pair (4 Q heads per KV head)."""
    h4._gpu(arch)
    sp = importlib.import_module("cudnn.deepseek_sparse_attention.utils.sm100.mxfp8_scale_pack")

    def run() -> None:
        sp._compile.__wrapped__(sp._MKL, 1, 0)
        sp._compile.__wrapped__(sp._Q_THD, 4, 0)
        sp._compile_qk_bshd.__wrapped__(4, 0)

    return run


def b12x_x4t_packed_scales(arch: str) -> Callable[[], None]:
    """b12x's one-launch X4T packed W4A16 scale decoder (_lib/quant/x4t_packed_scales.py
    ``_PackedScaleDecode``, compiled as ``_compiled_packed_scale`` does: raw pointers at 16, runtime
    experts / exception count / capacity given as 1): an FC2 plane rows 7168 x columns 64 (K 2048 / 32),
    512-row exception tasks: int32 expert ids with the BF16 clamp; int64 ids, unique, sorted route
    blocks."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_stream

    xp = _b12x("_lib.quant.x4t_packed_scales")

    def run() -> None:
        for clamp, unique, ids64, sorted_ids in ((True, False, False, False), (False, True, True, True)):
            launch = xp._PackedScaleDecode(7168, 64, 512, 0, clamp, unique, False, ids64, sorted_ids)
            ids = _ptr(cutlass.Int64, 8) if ids64 else _ptr(cutlass.Int32, 4)
            fixed, exceptions, offsets = _ptr(cutlass.Uint8, 16), _ptr(cutlass.Uint32, 16), _ptr(cutlass.Int64, 8)
            cute.compile(launch, fixed, exceptions, offsets, ids, _ptr(cutlass.Uint8, 16), 1, 1, 1, make_fake_stream())

    return run
