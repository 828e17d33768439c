"""An eleventh holdout set of real CuTe DSL kernels, compiled with no GPU (worker side of regen.py's
holdout-11 captures): kernels of flashinfer 0.7.4's experimental b12x tree (RTX Blackwell, sm_120a) in no
earlier capture -- a TMA BF16 prefill GEMM, an IQ2-XS/Q8_0 weight-only GEMV, MXFP8 and NVFP4 row
quantisers, QSA representative scores, compressed sparse-MLA rotary, MTP-feedback norms, a tiny-M W4A8
MoE decode and the dense-MLA split merge -- triaged by hand before any analysis work looked at them.

Same recipe as holdout3_workers.py's b12x workers: each function takes the arch and returns a
zero-argument callable that makes the kernel's real ``cute.compile`` calls with the arguments b12x's own
compile function builds. Those functions wrap ``cute.compile`` in b12x's caching ``compile`` under
``torch.cuda.device(ordinal)`` and take ``current_cuda_stream()``, which need a device, so the workers call
``cute.compile`` as they do (same kernel object, same fake pointers / fake tensors / scalars, a fake
stream in place of the current one), said in each docstring.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def _b12x(name: str) -> Any:
    return importlib.import_module(f"flashinfer.experimental.b12x.{name}")


def _ptrs(*types: Any, align: int | None = None) -> list[Any]:
    """Raw global pointers at address 16 (compile-only), as b12x's compile functions make them
    (``make_ptr(t, 16, gmem, assumed_align=...)``)."""
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_ptr

    return [make_ptr(t, 16, cute.AddressSpace.gmem, assumed_align=align or t.width // 8) for t in types]


def b12x_bf16_prefill_gemm(arch: str) -> Callable[[], None]:
    """b12x's TMA-fed BF16 prefill GEMM (gemm/bf16_gemv/_prefill.py ``Bf16PrefillKernel``, as
    ``compile_prefill`` builds it under ``FakeTensorMode``: x [M, K] and out [M, N] with symbolic i32
    extents and i64 row stride, weight [N, K] static; runtime Int32 rows), N 1024, K 5120 (one of the
    shapes ``supports_prefill`` admits), bf16 and f32 output."""
    import cutlass
    import cutlass.cute as cute
    import torch
    from cutlass import Int32
    from cutlass.cute.runtime import make_fake_stream
    from torch._subclasses.fake_tensor import FakeTensorMode

    pf = _b12x("gemm.bf16_gemv._prefill")

    def run() -> None:
        for out_dtype, cdt in ((torch.bfloat16, cutlass.BFloat16), (torch.float32, cutlass.Float32)):
            with FakeTensorMode():
                x = torch.empty((8192, 5120), dtype=torch.bfloat16, device="cuda")
                w = torch.empty((1024, 5120), dtype=torch.bfloat16, device="cuda")
                out = torch.empty((8192, 1024), dtype=out_dtype, device="cuda")
                args = (
                    pf._to_kernel_tensor(x, cutlass.BFloat16, dynamic_layout=True),
                    pf._to_kernel_tensor(w, cutlass.BFloat16),
                    pf._to_kernel_tensor(out, cdt, dynamic_layout=True),
                )
            cute.compile(pf.Bf16PrefillKernel(1024, 5120), *args, Int32(1), make_fake_stream())

    return run


def b12x_iq2_xs_gemv(arch: str) -> Callable[[], None]:
    """b12x's weight-only SIMT GEMV over IQ2-XS / Q8_0 codebook weights (gemm/blockscaled/_iq2_xs_gemv.py
    ``IQ2XSGemv``, compiled as its ``compile_gemv``: raw pointers bf16 / u16 / u8 / u16 / bf16 at 16,
    runtime Int32 rows), N 4096, K 4096, tile_m 4: iq2_xs; q8_0."""
    import cutlass.cute as cute
    from cutlass import BFloat16, Int32, Uint8, Uint16
    from cutlass.cute.runtime import make_fake_stream

    g = _b12x("gemm.blockscaled._iq2_xs_gemv")

    def run() -> None:
        for codec in ("iq2_xs", "q8_0"):
            p = _ptrs(BFloat16, Uint16, Uint8, Uint16, BFloat16, align=16)
            cute.compile(g.IQ2XSGemv(4096, 4096, 4, codec), *p, Int32(1), make_fake_stream())

    return run


def b12x_mxfp8_rows_quant(arch: str) -> Callable[[], None]:
    """b12x's MXFP8 row quantiser (_lib/quant/mxfp8_rows.py ``_MXFP8RowsQuantLaunch``, compiled as
    ``_get_compiled_mxfp8_rows_quant`` does: raw pointers source / u32 values / u8 row scales / u8 MMA
    scales at 16, three runtime ints (rows, grid, tasks) given as 1), K 7168 bf16: subgroup 8 with
    trellis-native MMA order, 256 threads; whole-warp groups (subgroup 0), 128 threads, min amax 1e-4."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_stream

    q = _b12x("_lib.quant.mxfp8_rows")

    def run() -> None:
        for sub, threads, trellis, amax in ((8, 256, True, 0.0), (0, 128, False, 1e-4)):
            launch = q._MXFP8RowsQuantLaunch(7168, cutlass.BFloat16, sub, threads, trellis, amax)
            p = _ptrs(cutlass.BFloat16, cutlass.Uint32, cutlass.Uint8, cutlass.Uint8, align=16)
            cute.compile(launch, *p, 1, 1, 1, make_fake_stream())

    return run


def b12x_nvfp4_quant(arch: str) -> Callable[[], None]:
    """b12x's persistent BF16 -> NVFP4 TMA quantiser (quantization/nvfp4/_kernel.py ``Bf16ToFp4TmaKernel``,
    compiled as ``compile_bf16_to_fp4_tma`` does: compact fake tensors of static (M, K), OptLevel(1),
    grid = max active clusters, here 188 SMs), M 2048, K 4096: retain; packed liveness."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.base_dsl.compiler import OptLevel
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream

    k_ = _b12x("quantization.nvfp4._kernel")
    m, k = 2048, 4096

    def run() -> None:
        for strategy in ("retain", "packed"):
            args = (
                make_fake_compact_tensor(cutlass.BFloat16, (m, k), stride_order=(1, 0), assumed_align=16),
                make_fake_compact_tensor(cutlass.Float32, (1,), assumed_align=4),
                make_fake_compact_tensor(cutlass.Float4E2M1FN, (m, k, 1), stride_order=(1, 0, 2), assumed_align=16),
                make_fake_compact_tensor(cutlass.Uint8, (m * k // 16,), assumed_align=16),
            )
            cute.compile[OptLevel(1)](k_.Bf16ToFp4TmaKernel(strategy), *args, 188, make_fake_stream())

    return run


def b12x_qsa_score(arch: str) -> Callable[[], None]:
    """b12x QSA decode's representative-score kernel (attention/qsa/_score_cute.py
    ``_RepresentativeScoreKernel``, compiled as ``compile_score_representatives`` does: a tuple of nine
    raw pointers at 16 -- bf16 prepared query, i64 positions, i32 request ids / lengths, bf16 compressed
    cache, i32 compressed block table, f32 scores, i32 eligible / merge counts --, four Int64 strides,
    Int32 group offset / count), the Caps defaults: 4 index heads x 128 (MMA path), compress ratio 4,
    compressed page 64, max_seq_len 131,072 (32,768 groups), budget 2048, no DCP."""
    import cutlass.cute as cute
    from cutlass import BFloat16, Float32, Int32, Int64
    from cutlass.cute.runtime import make_fake_stream

    s = _b12x("attention.qsa._score_cute")

    def run() -> None:
        kernel = s._RepresentativeScoreKernel(4, 128, 4, 64, 131072 // 4, 2048, 1, 0, 1)
        p = tuple(_ptrs(BFloat16, Int64, Int32, Int32, BFloat16, Int32, Float32, Int32, Int32))
        cute.compile(kernel, p, (Int64(1),) * 4, Int32(1), Int32(0), Int32(1), make_fake_stream())

    return run


def b12x_csmla_rotary(arch: str) -> Callable[[], None]:
    """b12x compressed sparse-MLA rotary (attention/compressed_sparse_mla/rotary.py ``_Rotate``, compiled
    as ``compile_rotation`` does: raw pointers bf16 x / i64 positions / cos-sin table / bf16 out at 16,
    runtime Int32 rows, Int64 strides x / head / table; grid = (rows, heads)): 64 heads x 512, rope 64,
    f32 table; inverse, ratio 4, bf16 table."""
    import cutlass.cute as cute
    from cutlass import BFloat16, Float32, Int32, Int64
    from cutlass.cute.runtime import make_fake_stream

    r = _b12x("attention.compressed_sparse_mla.rotary")

    def run() -> None:
        for inverse, ratio, cs in ((False, 1, Float32), (True, 4, BFloat16)):
            p = _ptrs(BFloat16, Int64, cs, BFloat16)
            entry = r._Rotate(64, 512, 64, inverse, ratio)
            cute.compile(entry, *p, Int32(1), Int64(1), Int64(1), Int64(1), make_fake_stream())

    return run


def b12x_mtp_norm(arch: str) -> Callable[[], None]:
    """b12x's Qwen3.8 MTP-feedback RMSNorm stages (sequence/mtp_feedback/_cute_norm.py, compiled as
    ``_launch`` does: three bf16 raw pointers at 16 (align 2), Float32 eps, runtime Int32 tokens): token
    norm, hidden 4096; state norm, 4 streams x 4096."""
    import cutlass.cute as cute
    from cutlass import Float32, Int32
    from cutlass.cute.runtime import make_fake_stream

    n = _b12x("sequence.mtp_feedback._cute_norm")

    def run() -> None:
        for entry in (n._TokenNorm(4096), n._StateNorm(4, 4096)):
            p = (n._fake_pointer(), n._fake_pointer(), n._fake_pointer())
            cute.compile(entry, *p, Float32(1.0e-6), Int32(1), make_fake_stream())

    return run


def b12x_moe_tiny_decode(arch: str) -> Callable[[], None]:
    """b12x's tiny-M W4A8-MX MoE decode, FC1 (SiLU gate) and FC2 phases (moe/_shared/kernels/tiny_decode.py,
    compiled as fused_moe/_impl.py ``_get_tiny_decode_kernel`` does: ``configure(m, k, n, top-k, E)`` then
    nine raw pointers at 16), Qwen3-30B-A3B geometry: 4 tokens, hidden 2048, intermediate 768, top-8 of
    128 experts."""
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_stream

    t = _b12x("moe._shared.kernels.tiny_decode")
    c = cutlass

    def run() -> None:
        for cls in (t.MoETinyDecodeKernelBackendPhase1, t.MoETinyDecodeKernelBackendPhase2):
            kernel = cls()
            kernel.configure(4, 2048, 768, 8, 128)
            p = _ptrs(c.BFloat16, c.Uint8, c.Uint8, c.Float32, c.Uint8, c.Uint8, c.Int32, c.Float32, c.BFloat16,
                      align=16)  # fmt: skip
            cute.compile(kernel, *p, make_fake_stream())

    return run


def b12x_dense_mla_merge(arch: str) -> Callable[[], None]:
    """b12x dense-MLA split-KV merge (attention/dense_mla/_merge.py ``DenseMlaMergeKernel``, with the
    tensors dense_mla/_kernel.py ``_merge_launch`` passes, built as its ``_to_cute`` does under fake mode:
    partial output / LSE and final LSE static, the bf16 output [tokens, heads, 512] with symbolic i32
    extents and i64 strides; runtime Int32 active splits), 8 splits, 64 heads, 256 query tokens: bf16
    partials; f32 partials."""
    import cutlass
    import cutlass.cute as cute
    from cutlass import Int32
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_stream, make_fake_tensor

    m = _b12x("attention.dense_mla._merge")
    t, h, d, s = 256, 64, 512, 8

    def run() -> None:
        for fp32 in (False, True):
            pdt = cutlass.Float32 if fp32 else cutlass.BFloat16
            args = (
                make_fake_compact_tensor(pdt, (t, h, s, d), stride_order=(3, 2, 1, 0), assumed_align=16),
                make_fake_compact_tensor(cutlass.Float32, (t, h, s), stride_order=(2, 1, 0), assumed_align=4),
                make_fake_tensor(
                    cutlass.BFloat16,
                    tuple(cute.sym_int(32) for _ in range(3)),
                    (cute.sym_int(64), cute.sym_int(64), 1),
                    assumed_align=16,
                ),  # fmt: skip
                make_fake_compact_tensor(cutlass.Float32, (t, h), stride_order=(1, 0), assumed_align=4),
            )
            cute.compile(m.DenseMlaMergeKernel(s, d, partial_fp32=fp32), *args, Int32(s), make_fake_stream())

    return run
