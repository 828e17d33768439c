"""A sixth holdout set of real CuTe DSL kernels, compiled with no GPU (worker side of regen.py's
holdout-6 captures): flashinfer 0.7.4's MoE kernels (``flashinfer/fused_moe`` and ``flashinfer/moe_ep``)
in no earlier capture, triaged by hand before any analysis work looked at them.

Same recipe as holdout3_workers.py / holdout4_workers.py (flashinfer_workers.py's :func:`pretend_gpu`):
each function takes the arch and returns a zero-argument callable that makes the kernel's real
``cute.compile`` calls, through the package's own compile path where it has one (a module's cached
compile function, or its public entry point with the launch skipped), else as that path does (said in
the docstring). CPU tensors stand for CUDA ones where only their metadata is read.
"""

from __future__ import annotations

import importlib
import importlib.util
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _sibling(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


fw = _sibling("flashinfer_workers")
h4 = _sibling("holdout4_workers")


def _gpu(arch: str) -> None:
    """holdout4_workers.py's ``_gpu``; and no stream is capturing a CUDA graph (CPU-only torch's probe
    raises)."""
    import torch

    h4._gpu(arch)
    torch.cuda.is_current_stream_capturing = lambda: False


def _global_no_launch() -> None:
    """``cutlass.cute.compile`` (regen's timer by now) returns a callable that launches nothing, for entry
    points that ``import cutlass.cute`` inside the function and launch right after compiling."""
    import cutlass.cute as cute

    timed = cute.compile

    def compile_only(*args: Any, **kwargs: Any) -> Any:
        timed(*args, **kwargs)
        return lambda *a, **kw: None

    cute.compile = compile_only


def _global_on_cuda() -> None:
    """``cutlass.torch.from_dlpack`` sees CPU tensors as CUDA device 0 (flashinfer_workers.py's CudaView)."""
    import cutlass.torch as cutlass_torch

    real = cutlass_torch.from_dlpack

    def wrap(tensor: Any, *a: Any, **kw: Any) -> Any:
        return real(fw.CudaView(tensor) if hasattr(tensor, "__dlpack__") else tensor, *a, **kw)

    cutlass_torch.from_dlpack = wrap


def _cuda_probes(*modules: Any, sms: int) -> None:
    """The modules' device probes answer as the pretended GPU: compute capability, active clusters."""
    import torch

    cap = torch.cuda.get_device_capability()
    for m in modules:
        if hasattr(m, "get_compute_capability"):
            m.get_compute_capability = lambda device=None: cap
        if hasattr(m, "get_max_active_clusters"):
            m.get_max_active_clusters = lambda cluster_size: sms // cluster_size
        if hasattr(m, "get_num_sm"):
            m.get_num_sm = lambda device=None: sms


# ---------------------------------------------------------------------------------------- sm_90a
def fi_mega_safe_quant(arch: str) -> Callable[[], None]:
    """MegaMoE (sm90 pull backend) post-amax E4M3 activation quantisation (safe_quantize.py, its cached
    ``_compiled_quantizer``: tokens ``sym_int``, f32 (T, H) input, (T, 1) amax, TVM-FFI): hidden 7168; 4096."""
    _gpu(arch)
    sq = importlib.import_module(
        "flashinfer.moe_ep.backends.mega.kernel.sm90.fp8_mxfp4_bf16_pull_cutedsl.safe_quantize"
    )

    def run() -> None:
        for hidden in (7168, 4096):
            sq._compiled_quantizer.__wrapped__(hidden, 0)

    return run


def fi_mega_routing(arch: str) -> Callable[[], None]:
    """MegaMoE route staging (routing_staging.py ``stage_routes``' compile: ``from_dlpack(assumed_align=1)
    .mark_layout_dynamic``, top-8 int64 ids / f32 scores into an int32 / f32 workspace, masked scores
    zeroed) and the Rubin route validation (sm107/routing_validation.py ``check_routing``: top-8 int32 ids,
    bf16 scores, 256 experts, one pass over all routes), both without TVM-FFI. Compiled as ``stage_routes``
    does (it takes the torch path for non-CUDA tensors); ``check_routing`` itself, launch skipped."""
    _gpu(arch)
    import cuda.bindings.driver as cuda
    import cutlass.cute as cute
    import torch
    from cutlass.cute.runtime import from_dlpack

    rs = importlib.import_module("flashinfer.moe_ep.backends.mega.kernel.routing_staging")
    rv = importlib.import_module("flashinfer.moe_ep.backends.mega.kernel.sm107.routing_validation")
    _global_on_cuda()
    h4._no_launch(rv)
    torch._assert_async = lambda *a, **kw: None  # checks the (unlaunched) result on the host

    def run() -> None:
        t, k = 4096, 8
        tensors = (
            torch.zeros(t, k, dtype=torch.int64),
            torch.zeros(t, k, dtype=torch.float32),
            torch.zeros(t, k, dtype=torch.int32),
            torch.zeros(t, k, dtype=torch.float32),
        )
        args = [from_dlpack(fw.CudaView(x), assumed_align=1).mark_layout_dynamic(leading_dim=1) for x in tensors]
        cute.compile(rs._kernel_class()(k, True), *args, cuda.CUstream(0), options="")
        rv._COMPILED.clear()
        import os

        os.environ["FLASHINFER_SM107_PREP_TVM_FFI"] = "0"
        ids, w = torch.zeros(t, k, dtype=torch.int32), torch.zeros(t, k, dtype=torch.bfloat16)
        rv.check_routing(ids, w, 256, workspace=types.SimpleNamespace())

    return run


def fi_moe_gemm_finalize(arch: str) -> Callable[[], None]:
    """Hopper MoE GEMM2 with fused finalize (sm90_contiguous_grouped_gemm_finalize_fusion, its public
    entry point; raw pointers, every extent a runtime Int32): bf16, 8 experts, hidden 4096, I 2048,
    top-8, tile 128x128: fused (atomic scatter-add into token rows) and deterministic (expanded rows)."""
    _gpu(arch)
    import torch

    g = importlib.import_module("flashinfer.fused_moe.cute_dsl.sm90_contiguous_grouped_gemm_finalize_fusion")
    h4._no_launch(g)
    _cuda_probes(g, sms=132)
    bf, i32 = torch.bfloat16, torch.int32

    def run() -> None:
        e, n, k, t, topk, tile = 8, 4096, 2048, 64, 8, 128
        m = (t * topk // e + tile) * e
        a, w = torch.zeros(m, k, dtype=bf), torch.zeros(e, n, k, dtype=bf)
        tiles = m // tile
        maps = (torch.zeros(tiles, dtype=i32), torch.zeros(tiles, dtype=i32), torch.zeros(m, dtype=i32))
        scales = torch.zeros(t, topk, dtype=torch.float32)
        for fused in (True, False):
            out = torch.zeros(t if fused else t * topk, n, dtype=bf)
            g.sm90_contiguous_grouped_gemm_finalize_fusion(
                a, w, maps[0], maps[1], maps[2], torch.zeros(1, dtype=i32), scales, out, topk=topk,
                use_fused_finalize=fused,
            )  # fmt: skip

    return run


def fi_moe_gather_gemm_act(arch: str) -> Callable[[], None]:
    """Hopper MoE GEMM1 (sm90_contiguous_gather_grouped_gemm_act_fusion, its public entry point; token
    gather fused into the A load, raw pointers, runtime Int32 extents): bf16, 8 experts, hidden 4096,
    I 2048, top-8, tile 128x128: SwiGLU (gated, 2I) and ReLU^2 (non-gated)."""
    _gpu(arch)
    import torch

    g = importlib.import_module("flashinfer.fused_moe.cute_dsl.sm90_contiguous_gather_grouped_gemm_act_fusion")
    h4._no_launch(g)
    _cuda_probes(g, sms=132)
    bf, i32 = torch.bfloat16, torch.int32
    act = g.ActivationType

    def run() -> None:
        e, i, k, t, topk, tile = 8, 2048, 4096, 64, 8, 128
        m = (t * topk // e + tile) * e
        x = torch.zeros(t, k, dtype=bf)
        tiles = m // tile
        for kind, n in ((act.Swiglu.value, 2 * i), (act.Relu2.value, i)):
            g.sm90_contiguous_gather_grouped_gemm_act_fusion(
                x, torch.zeros(e, n, k, dtype=bf), torch.zeros(tiles, dtype=i32), torch.zeros(tiles, dtype=i32),
                torch.zeros(m, dtype=i32), torch.zeros(1, dtype=i32), topk=topk, permuted_m=m, activation_type=kind,
            )  # fmt: skip

    return run


# --------------------------------------------------------------------------------------- sm_100a
def fi_megamoe_stage(arch: str) -> Callable[[], None]:
    """MegaMoE (sm100 cutedsl backend) input staging into the symmetric-buffer views, 4096-token capacity,
    2048 live, hidden 7168, top-8: the fused quantise + route repack (shim/quant_stage.py
    ``fused_quant_stage``, its own compile path, launch skipped; ``DataPreprocess`` of
    src/inputs_process.py): NVFP4 with an offline norm constant and int64 routes, and MXFP8 E4M3 with
    int32 routes and the in-kernel route checks (256 experts); and the BF16 staging kernel
    (shim/bf16_stage.py, compiled as ``fused_bf16_stage`` does: it takes the torch path for non-CUDA
    tensors)."""
    _gpu(arch)
    import torch

    qs = importlib.import_module("flashinfer.moe_ep.kernel_src.sm100.cutedsl_megamoe.shim.quant_stage")
    bs = importlib.import_module("flashinfer.moe_ep.kernel_src.sm100.cutedsl_megamoe.shim.bf16_stage")
    _global_on_cuda()
    _global_no_launch()

    def run() -> None:
        import cuda.bindings.driver as cuda
        import cutlass.cute as cute
        import cutlass.torch as cutlass_torch

        cap, live, h, k = 4096, 2048, 7168, 8
        x = torch.zeros(live, h, dtype=torch.bfloat16)
        ids, w = torch.zeros(live, k, dtype=torch.int64), torch.zeros(live, k, dtype=torch.float32)
        qs._STAGERS.clear()
        qs.fused_quant_stage(
            x, ids, w, torch.empty(cap, h // 2, dtype=torch.float4_e2m1fn_x2),
            torch.zeros(cap, h // 16, dtype=torch.float8_e4m3fn), torch.zeros(cap, k, dtype=torch.int64),
            torch.zeros(cap, k, dtype=torch.float32), quant_type="nvfp4", norm_const=1.0,
        )  # fmt: skip
        qs.fused_quant_stage(
            x, ids.to(torch.int32), w, torch.zeros(cap, h, dtype=torch.float8_e4m3fn),
            torch.zeros(cap, h // 32, dtype=torch.float8_e8m0fnu), torch.zeros(cap, k, dtype=torch.int32),
            torch.zeros(cap, k, dtype=torch.float32), quant_type="mxfp8_e4m3", num_experts=256,
        )  # fmt: skip
        tensors = (
            x, ids, w, torch.zeros(cap, h, dtype=torch.bfloat16), torch.zeros(cap, k, dtype=torch.int64),
            torch.zeros(cap, k, dtype=torch.float32),
        )  # fmt: skip
        args = [
            cutlass_torch.from_dlpack(t, assumed_align=16 if i in (0, 3) else 1).mark_layout_dynamic(leading_dim=1)
            for i, t in enumerate(tensors)
        ]
        cute.compile(bs._kernel_class()(h, k), *args, cuda.CUstream(0))

    return run


def fi_moe_blockscaled_finalize(arch: str) -> Callable[[], None]:
    """Blackwell block-scaled MoE GEMM2 with fused finalize (blockscaled_contiguous_grouped_gemm_finalize_
    fusion.py's ``_get_compiled_finalize_kernel``, called as the public entry point calls it: raw pointers
    at made-up aligned addresses, every extent a runtime Int32): NVFP4 A/B with E4M3 scales (vec 16), bf16
    out, f32 router scales, tile 256x128, 2x1 cluster, 74 active clusters: fused atomic scatter-add; and
    deterministic expanded rows with a per-token A scale."""
    _gpu(arch)
    import cuda.bindings.driver as cuda
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_ptr

    g = importlib.import_module("flashinfer.fused_moe.cute_dsl.blockscaled_contiguous_grouped_gemm_finalize_fusion")
    gmem = cute.AddressSpace.gmem
    f4, sf, i32, f32 = cutlass.Float4E2M1FN, cutlass.Float8E4M3FN, cutlass.Int32, cutlass.Float32

    def ptr(dt: Any, i: int, align: int = 16) -> Any:
        return make_ptr(dt, 1 << (32 + i), gmem, assumed_align=align)

    def run() -> None:
        g._finalize_kernel_cache.clear()
        for fused in (True, False):
            g._get_compiled_finalize_kernel(
                seq_len=2048, permuted_m=18432, n=7168, k=2048, num_experts=8, topk=8,
                a_ptr=ptr(f4, 0, 32), b_ptr=ptr(f4, 1, 32), a_sf_ptr=ptr(sf, 2), b_sf_ptr=ptr(sf, 3),
                c_ptr=ptr(cutlass.BFloat16, 4, 32), alpha_ptr=ptr(f32, 5, 4), tile_idx_ptr=ptr(i32, 6, 4),
                mn_limit_ptr=ptr(i32, 7, 4), permuted_idx_ptr=ptr(i32, 8, 4), num_tiles_ptr=ptr(i32, 9, 4),
                token_scales_ptr=ptr(f32, 10), a_per_token_scale_ptr=None if fused else ptr(f32, 11, 4),
                max_active_clusters=74, stream=cuda.CUstream(0), sf_vec_size=16, tile_size=256,
                cluster_shape_mn=(2, 1), raster_along_m=False, a_dtype=f4, b_dtype=f4, sf_dtype=sf,
                out_dtype=cutlass.BFloat16, final_scale_dtype=f32, mma_tiler_mn=(256, 128),
                enable_pdl=True, use_a_per_token_scale=not fused, use_fused_finalize=fused,
            )  # fmt: skip

    return run


def fi_moe_blockscaled_gather_act(arch: str) -> Callable[[], None]:
    """Blackwell block-scaled MoE GEMM1 (blockscaled_contiguous_gather_grouped_gemm_act_fusion.py's
    ``_get_compiled_gather_kernel``, called as the public entry point calls it: raw pointers at made-up
    aligned addresses, runtime Int32 extents; token gather fused into the A load): NVFP4 A/B, E4M3 scales
    (vec 16), SwiGLU with NVFP4-quantised output and its scale factors, top-8, tile 256x128, 2x1 cluster,
    74 active clusters."""
    _gpu(arch)
    import cuda.bindings.driver as cuda
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_ptr

    g = importlib.import_module("flashinfer.fused_moe.cute_dsl.blockscaled_contiguous_gather_grouped_gemm_act_fusion")
    gmem = cute.AddressSpace.gmem
    f4, sf, i32, f32 = cutlass.Float4E2M1FN, cutlass.Float8E4M3FN, cutlass.Int32, cutlass.Float32

    def ptr(dt: Any, i: int, align: int = 16) -> Any:
        return make_ptr(dt, 1 << (32 + i), gmem, assumed_align=align)

    def run() -> None:
        g._gather_kernel_cache.clear()
        g._get_compiled_gather_kernel(
            orig_m=2048, permuted_m=18432, n=2 * 2048, k=7168, num_experts=8,
            a_ptr=ptr(f4, 0, 32), b_ptr=ptr(f4, 1, 32), a_sf_ptr=ptr(sf, 2), b_sf_ptr=ptr(sf, 3),
            c_ptr=ptr(f4, 4, 32), c_sf_ptr=ptr(sf, 5), alpha_ptr=ptr(f32, 6, 4), tile_idx_ptr=ptr(i32, 7, 4),
            mn_limit_ptr=ptr(i32, 8, 4), token_id_ptr=ptr(i32, 9, 4), num_tiles_ptr=ptr(i32, 10, 4),
            norm_const_ptr=ptr(f32, 11, 4), a_per_token_scale_ptr=None, clamped_relu2_limit_ptr=None,
            max_active_clusters=74, stream=cuda.CUstream(0), a_dtype="float4_e2m1fn", b_dtype="float4_e2m1fn",
            sf_dtype="float8_e4m3fn", c_dtype="float4_e2m1fn", quantize_output=True, sf_vec_size=16,
            tile_size=256, topk=8, cluster_shape_mn=(2, 1), vectorized_f32=True, raster_along_m=False,
            mma_tiler_mn=(256, 128),
        )  # fmt: skip

    return run
