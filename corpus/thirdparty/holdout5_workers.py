"""A fifth holdout set of real CuTe DSL kernels, compiled with no GPU (worker side of regen.py's
holdout-5 captures): PyTorch's own CuTe DSL ops (``torch/_native/ops``: top-K, scatter_add, RMSNorm) and
torchao's 3-D MXFP8 quantize kernel, in no earlier capture, triaged by hand before any analysis work
looked at them.

Same recipe as holdout3_workers.py (flashinfer_workers.py's :func:`pretend_gpu`): each function takes
the arch and returns a zero-argument callable that makes the kernel's real ``cute.compile`` calls
through the package's own compile function (torch's ``@jit_cache`` getters and torchao's
``@functools.cache`` ones, called through ``__wrapped__``); those build their fake cute tensors
themselves (symbolic row count, symbolic 64-bit strides for torch; symbolic 32-bit extents and
strides for torchao), so only the compile-time configuration is chosen here, as the op's dispatcher
would for the shape in the docstring.

Not captured: ``bmm_outer_product`` (Triton only), ``foreach_mm`` (cuBLASLt / aten grouped mm, no
CuTe DSL), torch/_inductor's CuTe DSL GEMM templates (Jinja sources rendered by inductor's codegen,
not standalone), fla-core 0.6.0's ``fla/ops/utils/pack.py`` (Triton: "adapted from cute-kernels"), and
torchao's 2-D MXFP8 quantize kernels (cutedsl_quantize_2d_1x32 / _32x1): with DSL 4.8.1 neither
compiles, GPU or not, in the bf16 configurations tried (full and partial tiles, plain and blocked
scales): their TMA partition (``cute.group_modes(sIN_tile, 0, 1)`` leaves the unit-stride mode out
of the TMA mode) fails to verify ("shared-memory operand stride at mode 1 is 16 bits, not a multiple
of the required 128-bit TMA smem alignment"), as does the 3-D kernel's K-fastest input.
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


# ------------------------------------------------------------------------------------ torch, sm_90a
def _bare_packages(*names: str) -> None:
    """Import packages without running their ``__init__`` (a module with just the package's
    ``__path__``), so a kernel module below them imports alone: torchao's moe_training packages import
    Triton kernels whose autotune keys triton 3.9.0 refuses, which the CuTe DSL kernels do not use."""
    import sys
    import types

    for name in names:
        if name in sys.modules:
            continue
        parent, _, leaf = name.rpartition(".")
        pkg = types.ModuleType(name)
        pkg.__path__ = [str(Path(next(iter(importlib.import_module(parent).__path__))) / leaf)]
        sys.modules[name] = pkg


def _vendored_quack() -> None:
    """torch's vendored quack (``torch._vendor.quack``, quack 0.4.1: every torch/_native CuTe DSL op
    imports its ``cache.jit_cache``, and its ``__init__`` imports its RMSNorm) names
    ``cute.core.ThrMma`` / ``cute.core.ThrCopy`` in layout_utils' annotations; DSL 4.8.1 exports the
    two classes as ``cute.ThrMma`` / ``cute.ThrCopy`` only, so they are given their old names too."""
    import cutlass.cute as cute

    for name in ("ThrMma", "ThrCopy"):
        if not hasattr(cute.core, name):
            setattr(cute.core, name, getattr(cute, name))


def torch_topk_radix(arch: str) -> Callable[[], None]:
    """torch's fused radix-select fp32 top-K (``aten::topk`` override, ``_compile_topk_radix``: one CTA
    per row, symbolic row count, row-major input and outputs with symbolic row strides): N 4096 with
    K 256 deterministic (prefix-sum gather, lex sort) and N 8192 with K 64 non-deterministic
    (atomic-counter gather)."""
    fw.pretend_gpu(arch)
    _vendored_quack()
    ck = importlib.import_module("torch._native.ops.topk.cutedsl_kernels")

    def run() -> None:
        ck._compile_topk_radix.__wrapped__(4096, 256, True)
        ck._compile_topk_radix.__wrapped__(8192, 64, False)

    return run


def torch_topk_register(arch: str) -> Callable[[], None]:
    """torch's register-resident fp32 top-K (``_compile_topk_register``: one warp per row, Int64
    (ordinal, ~index) keys, bitonic merge across lanes): K 16 over N 2048 and K 32 over N 256 (the two
    ends of ``_REGISTER_N_RANGE``)."""
    fw.pretend_gpu(arch)
    _vendored_quack()
    ck = importlib.import_module("torch._native.ops.topk.cutedsl_kernels")

    def run() -> None:
        ck._compile_topk_register.__wrapped__(2048, 16)
        ck._compile_topk_register.__wrapped__(256, 32)

    return run


def torch_scatter_add_vec(arch: str) -> Callable[[], None]:
    """torch's vector scatter_add (``aten::scatter_add`` override, ``_compile_vec_scatter``: one warp per
    index entry, 16-byte gathers, bf16x2 / f32 atomics into ``out[index[i], :]``, device asserts on the
    index): bf16 rows of 4096 contiguous, and f32 rows of 1000 with row strides of their own."""
    fw.pretend_gpu(arch)
    _vendored_quack()
    import torch

    vs = importlib.import_module("torch._native.ops.scatter_add.vec_scatter_kernel")

    def run() -> None:
        vs._compile_vec_scatter.__wrapped__(torch.bfloat16, 4096, True)
        vs._compile_vec_scatter.__wrapped__(torch.float32, 1000, False)

    return run


def torch_scatter_add_tma(arch: str) -> Callable[[], None]:
    """torch's TMA scatter_add (``_compile_tma_scatter``: bulk TMA row-chunk loads of src, then
    ``cp.reduce.async.bulk`` add into ``out[index[i], :]``, one warp per CTA, grid (rows, chunk
    splits)): bf16 rows of 4096 (chunks of 256) contiguous, and f32 rows of 96 (one chunk) with row
    strides of their own."""
    fw.pretend_gpu(arch)
    _vendored_quack()
    import torch

    tk = importlib.import_module("torch._native.ops.scatter_add.tma_kernel")

    def run() -> None:
        tk._compile_tma_scatter.__wrapped__(torch.bfloat16, 4096, True)
        tk._compile_tma_scatter.__wrapped__(torch.float32, 96, False)

    return run


def torch_rmsnorm(arch: str) -> Callable[[], None]:
    """torch's RMSNorm op (``aten::_fused_rms_norm`` override, torch/_native/ops/norm/norms.py), which
    compiles torch's vendored quack RMSNorm (torch/_vendor/quack/rmsnorm.py, quack 0.4.1, an earlier
    quack than the quack-kernels 0.6.5 captures) with the arguments ``quack_rmsnorm_fwd`` / ``quack_rmsnorm_bwd``
    pass: bf16 input, output and weight, N 4096, rstd; backward with the per-SM dw partials."""
    fw.pretend_gpu(arch)
    import cutlass

    _vendored_quack()
    rn = importlib.import_module("torch._vendor.quack.rmsnorm")
    bf = cutlass.BFloat16

    def run() -> None:
        rn._compile_rmsnorm_fwd.__wrapped__(bf, bf, None, bf, None, None, 4096, True, False, False, per_head=False)
        rn._compile_rmsnorm_bwd.__wrapped__(4096, bf, bf, bf, bf, False, None, None, True, per_head=False)

    return run


# --------------------------------------------------------------------------------- torchao, sm_100a
_MX = "torchao.prototype.moe_training.kernels.mxfp8."


def _torchao_mxfp8() -> None:
    _bare_packages(*(_MX.rstrip(".").rsplit(".", i)[0] for i in (2, 1, 0)))


def torchao_mxfp8_3d(arch: str) -> Callable[[], None]:
    """torchao's 3-D (per-expert) MXFP8 quantize (cutedsl_quantize_3d ``_compile_mxfp8_quantize_3d_cutedsl``,
    (E, N, K) bf16 weights, fp8 output column-major per expert, 32 x 128 tiles, 4 K tiles per CTA;
    RCEIL, 2 stages, as ``mxfp8_quantize_cutedsl_3d`` passes them), on the transposed expert view
    (stride(-2) == 1, the layout of MoE weights quantised for the backward): 32x1 scales with full K
    tiles, and 32x32 scales with partial K tiles and tcgen05-blocked scales (the K-fastest input does
    not compile with DSL 4.8.1: see the module docstring)."""
    fw.pretend_gpu(arch)
    _torchao_mxfp8()
    q = importlib.import_module(_MX + "cutedsl_quantize_3d")

    def run() -> None:
        c = q._compile_mxfp8_quantize_3d_cutedsl.__wrapped__
        for dim2, full, blocked in ((1, True, False), (32, False, True)):
            warps, tn, tk, tiles = q._select_cutedsl_config("torch.bfloat16", dim2, True)[1]
            c("torch.bfloat16", "rceil", warps, tn, tk, 2, tiles, full, 32, dim2, blocked, True)

    return run
