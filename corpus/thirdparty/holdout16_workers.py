"""A sixteenth holdout set of real CuTe DSL kernels, compiled with no GPU (worker side of regen.py's
holdout-16 captures): training norms and losses of quack 0.6.5, a query quantiser of flashinfer-python
0.7.4 (its experimental b12x library), and nvidia-cudnn-frontend 1.32.0's (package ``cudnn``)
flex-attention mask planner, SDPA split-KV combine, SDPA metadata preparation and FP8 activation
quantiser, in no earlier capture (kernel source file + configuration), triaged by hand before any
analysis work looked at them.

Same recipe as holdout13..15_workers.py: each function takes the arch and returns a zero-argument
callable that makes the kernel's real ``cute.compile`` calls through the package's own compile path
(quack's ``@jit_cache``d compile functions through ``__wrapped__``; cudnn's shape-only compile
functions and its planner under FakeTensorMode, with the FROST compiled-plan cache off so every
``compile_cached`` calls ``cute.compile`` itself; b12x's compile arguments under FakeTensorMode).
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


# ------------------------------------------------------------------------------------ quack (sm_90a)
def quack_layernorm_bwd(arch: str) -> Callable[[], None]:
    """quack's LayerNorm backward (rmsnorm.py ``RMSNormBackward`` with ``is_layernorm``, the path
    ``layernorm_bwd`` compiles through ``_compile_rmsnorm_bwd``): bf16 x / dout / dx, f32 weight, N 4096,
    mean + rstd, dw and db partials, with a bf16 residual gradient in and out; and the per-head RMSNorm
    backward (QK-norm, head dim 128, per-head weight [H, 128]) with dw partials."""
    from cutlass import BFloat16, Float32

    mod = importlib.import_module("quack.rmsnorm")  # quack/__init__ shadows the module with a function
    bf, f32 = BFloat16, Float32

    def run() -> None:
        # N, dtype, dout, dx, weight dtypes, has_db_partial, dres, dres_out dtypes, has_dw_partial
        mod._compile_rmsnorm_bwd.__wrapped__(4096, bf, bf, bf, f32, True, bf, bf, True, is_layernorm=True)
        mod._compile_rmsnorm_bwd.__wrapped__(128, bf, bf, bf, f32, False, None, None, True, per_head=True)

    return run


def quack_cross_entropy_vocab(arch: str) -> Callable[[], None]:
    """quack's CrossEntropy at a 151,936-token vocabulary (cluster-split rows), bf16 logits, i64 target,
    f32 per-class weight: the forward with LSE (``CrossEntropy.compile``) and the backward
    (``CrossEntropyBackward.compile``)."""
    from cutlass import BFloat16, Float32, Int64
    from quack.cross_entropy import CrossEntropy, CrossEntropyBackward

    n = 151936

    def run() -> None:
        # dtype, target_dtype, target_logit_dtype, N, has_lse, has_dx, weight_dtype, target_logit_ndim
        CrossEntropy.compile.__wrapped__(BFloat16, Int64, None, n, True, False, Float32, 1)
        CrossEntropyBackward.compile.__wrapped__(BFloat16, Int64, n, Float32)

    return run


# ----------------------------------------------------------------------------------- cudnn (sm_100a)
def _frost(*modules: Any) -> None:
    """holdout7_workers.py's FROST stand-ins: compiled-plan cache off, ``current_device`` device 0."""
    import os

    os.environ["CUDNN_FRONTEND_DISABLE_COMPILED_CACHE"] = "1"
    for m in modules:
        setattr(m, "current_device", lambda: 0)  # noqa: B010 (mypy: the module declares no such name)


def cudnn_flex_mask_plan(arch: str) -> Callable[[], None]:
    """cudnn flex-attention's arbitrary-mask planner (flex_attention/plan/builder.py ``create_mask_plan``
    under FakeTensorMode, the target named by ``FLEX_ATTENTION_ARCH``, its no-GPU path): an interval mask
    [1, 1, 4096] over bf16 BSHD q [2, 2048, 8, 128], k/v [2, 2048, 2, 128], with the backward plan:
    Q-major classify (q2k_classify.py, twice), K-major count (k2q_count.py), forward materialise
    (materialize_sm100.py) and K-to-Q materialise. One host stand-in: ``_exclusive_offsets`` (a
    host-side cumsum with a leading 0) is built by ``pad`` instead of item assignment, which fake CUDA
    tensors on a CPU-only torch refuse; same values."""
    import os

    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    h4._gpu(arch)
    os.environ["FLEX_ATTENTION_ARCH"] = arch
    b = importlib.import_module("cudnn.flex_attention.plan.builder")
    offsets = lambda c: torch.nn.functional.pad(torch.cumsum(c.reshape(-1), 0, dtype=torch.int32), (1, 0))  # noqa: E731
    setattr(b, "_exclusive_offsets", offsets)  # noqa: B010 (mypy: the module's name is private)
    bf = torch.bfloat16

    def run() -> None:
        for name, cache in vars(b).items():
            if name.endswith("_COMPILE_CACHE") and hasattr(cache, "clear"):
                cache.clear()
        with FakeTensorMode():
            q = torch.empty(2, 2048, 8, 128, dtype=bf, device="cuda")
            k = torch.empty(2, 2048, 2, 128, dtype=bf, device="cuda")
            mask = torch.empty(1, 1, 2 * 2048, dtype=torch.int32, device="cuda")
            b.create_mask_plan(mask, q, k, k, build_backward=True)

    return run


def cudnn_sdpa_split_combine(arch: str) -> Callable[[], None]:
    """cudnn SDPA's prepared split-KV combine (sdpa/fwd/kernels/sm100/split_combine.py ``compile_ptr``:
    raw pointers, runtime (B, H, S_q, D_v), split count and Int64 strides): bf16 O from f32 partials with
    LSE (the module's three-way kernel rule); packed THD partials (row per warp) with a sink."""
    _frost()
    sc = importlib.import_module("cudnn.sdpa.fwd.kernels.sm100.split_combine")

    def run() -> None:
        sc.compile_ptr(dtype_o="bf16", dtype_partial="f32", has_lse=True)
        sc.compile_ptr(dtype_o="bf16", dtype_partial="f32", has_lse=True, packed=True, has_sink=True)

    return run


def cudnn_sdpa_metadata(arch: str) -> Callable[[], None]:
    """cudnn SDPA torch op's small metadata kernels, each its module's shape-only compile (raw pointers,
    Int64 runtime sizes): varlen lengths + element offsets from int32 cu_seqlens q / kv, 1 Q and 2 KV
    offset columns (sdpa/fwd/kernels/varlen_metadata.py); packed Stats copy + padded-row zeroing from
    int32 prefixes (packed_lse.py); compact Int32 lengths + f32 sinks (forward_metadata.py, int64 q / kv
    lengths, bf16 sinks)."""
    _frost()
    vm = importlib.import_module("cudnn.sdpa.fwd.kernels.varlen_metadata")
    pl = importlib.import_module("cudnn.sdpa.fwd.kernels.packed_lse")
    fm = importlib.import_module("cudnn.sdpa.fwd.kernels.forward_metadata")

    def run() -> None:
        for f in (vm.compile_metadata, pl.compile_packed_lse, fm.compile_metadata):
            f.cache_clear()
        vm.compile_metadata("torch.int32", "torch.int32", 1, 2, 0, arch)
        pl.compile_packed_lse("torch.int32", 0, arch)
        fm.compile_metadata(("torch.int64", "torch.int64", "torch.bfloat16"), 0, arch)

    return run


def cudnn_gab_quantize(arch: str) -> Callable[[], None]:
    """cudnn gated-attention-block FP8 activation quantiser (gated_attention_block/kernels/quantize.py, its
    shape-only ``compile_quantize`` / ``compile_amax``: tokens ``sym_int``, a symbolic token stride, row
    counts runtime Int32): bf16 [T, 32, 128] -> E4M3 with the caller's scale; [T, 8, 128] with the scale
    derived from per-CTA amax partials, 2 alpha products, persistent grid; and the amax pass over
    [T, 32, 128]. ``current_device`` answers 0, DeviceInfo as a B200."""
    import torch

    h4._gpu(arch)
    _sibling("holdout10_workers")._device_facts(arch)  # DeviceInfo as a B200 (the persistent grid's SM count)
    qz = importlib.import_module("cudnn.gated_attention_block.kernels.quantize")
    _frost(qz)
    bf = torch.bfloat16

    def run() -> None:
        qz.compiled_cache.clear()
        qz.amax_compiled_cache.clear()
        qz.compile_quantize(dtype_in=bf, h=32, d=128)
        qz.compile_quantize(dtype_in=bf, h=8, d=128, scale_src="amax", amax_src="partials", n_alpha=2, persistent=True)
        qz.compile_amax(dtype_in=bf, h=32, d=128)

    return run


# ------------------------------------------------------------------------- flashinfer b12x (sm_120a)
def b12x_static_fp8_quant(arch: str) -> Callable[[], None]:
    """b12x's static-scale FP8 query quantiser (attention/_shared/static_fp8_quant.py: the sparse-MLA
    query path, flat byte views, a runtime Int32 element count, a grid fixed by the planned capacity):
    the ``cute.compile`` its ``compile`` makes (through b12x's ``compile_cute``, whose program cache
    would answer from disk) on the arguments its ``_launch`` builds under FakeTensorMode (the module's
    own fake path: ``make_fake_tensor`` of ``sym_int(32)`` extent): bf16 queries of 4096 tokens x 64
    heads x 576 planned; and 1 x 128 x 512 (decode)."""
    import cutlass.cute as cute
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    h4._gpu(arch)
    sq = importlib.import_module("flashinfer.experimental.b12x.attention._shared.static_fp8_quant")
    torch.cuda.current_stream = lambda device=None: type("S", (), {"cuda_stream": 0})()

    def run() -> None:
        sq.clear_caches()
        with FakeTensorMode():
            for shape in ((4096, 64, 576), (1, 128, 512)):
                src = torch.empty(shape, dtype=torch.bfloat16, device="cuda")
                out = torch.empty(shape, dtype=torch.float8_e4m3fn, device="cuda")
                scale = torch.empty((), dtype=torch.float32, device="cuda")
                entry, args, _spec = sq._launch(sq.bind(source=src, output=out, scale=scale, max_numel=src.numel()))
                cute.compile(entry, *args)

    return run
