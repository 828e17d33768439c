"""flashinfer's CuTe DSL kernels, compiled with no GPU (worker side of regen.py's ``fi_*`` captures).

Each ``fi_*`` function takes the arch (``sm_90a``/``sm_100a``) and returns a zero-argument callable
that makes the kernel's real ``cute.compile`` calls, through flashinfer's own code: the norm
kernels' cached getters (``_get_compiled_*_kernel.__wrapped__``: they build the fake cute tensors
themselves) and the gated delta-net decode dispatchers (``run_*_decode``, ``gated_delta_rule``) with
small CPU tensors.  Three stand-ins make that possible without a device, all set up by
:func:`pretend_gpu`:

- torch answers as one H100 (9.0, 232,448 bytes of opt-in shared memory, 132 SMs) or B200 (10.0,
  148 SMs) would, so the kernels choose their strategies (cluster size, async copy) repeatably;
- flashinfer's on-disk kernel cache (``build_and_load_cute_dsl_kernel``) is replaced by a call of the
  compile closure that returns a no-op callable: the kernel compiles for real and nothing launches;
- ``from_dlpack`` in the GDN modules sees the CPU tensors through :class:`CudaView`, whose DLPack
  capsule says CUDA device 0, so the DSL types them as global memory (with a CPU device it types
  them generic and the kernels' ``cute.copy`` from global memory fails to verify).

Also captured (same recipe): gated residual RMSNorm, RMSNorm with sigmoid gate, MXFP8/MXFP4/NVFP4
quantisation (sm_100a; the DSL's launch asks the driver for the shared memory per SM when
``min_blocks_per_mp > 1``: :func:`_patch_compile_only` answers it), LayerNorm/fused-add RMSNorm + FP8,
the GDN multi-token (bf16 state) decode, and MSA sparse decode (sm_90a; its ``run`` launches right
after compiling, and that launch's failure is caught).  Not tried yet: topk_varlen, the other msa_ops
kernels, the GDN ucache kernels; the GEMM/MoE/attention kernels are mostly sm_100a with TMA and
cluster helpers.
"""

from __future__ import annotations

import ctypes
import importlib
import types
from collections.abc import Callable
from typing import Any

H100 = {"major": 9, "minor": 0, "name": "NVIDIA H100 80GB HBM3", "multi_processor_count": 132}
B200 = {"major": 10, "minor": 0, "name": "NVIDIA B200", "multi_processor_count": 148}


def pretend_gpu(arch: str) -> None:
    """Make torch (and flashinfer's probes) answer as one H100 (sm_90a) or B200 (sm_100a) would."""
    import torch

    spec = H100 if arch.startswith("sm_90") else B200
    props = types.SimpleNamespace(
        **spec, shared_memory_per_block_optin=232_448, total_memory=80 * 2**30, L2_cache_size=50 * 2**20
    )
    torch.cuda.is_available = lambda: True
    torch.cuda.current_device = lambda: 0
    torch.cuda.device_count = lambda: 1
    torch.cuda.get_device_capability = lambda device=None: (spec["major"], spec["minor"])
    torch.cuda.get_device_properties = lambda device=None: props
    torch.cuda.current_stream = lambda device=None: types.SimpleNamespace(cuda_stream=0)
    import flashinfer.norm.utils as norm_utils

    norm_utils._probe_max_cluster_n = lambda device: None  # asks the driver; None = the documented default


def _compile_only(module_name: str, kernel_name: str, compile_fn: Callable[[], Any], *a: Any, **kw: Any) -> Any:
    """Stand-in for flashinfer's ``build_and_load_cute_dsl_kernel``: compile, cache nothing, launch nothing."""
    compile_fn()
    return lambda *args, **kwargs: None


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLTensorHead(ctypes.Structure):  # the first fields of DLPack's DLTensor
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_KDLCUDA = 2


class CudaView:
    """A CPU tensor whose DLPack capsule says CUDA device 0 (compile-only: no kernel reads it)."""

    def __init__(self, tensor: Any):
        self.tensor = tensor

    def __dlpack_device__(self) -> tuple[int, int]:
        return (_KDLCUDA, 0)

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        capsule = self.tensor.__dlpack__()  # a legacy, unversioned DLManagedTensor capsule
        _DLTensorHead.from_address(_capsule_pointer(capsule, b"dltensor")).device.device_type = _KDLCUDA
        return capsule


def _patch_gdn(*modules: Any) -> None:
    import flashinfer.gdn_kernels.device_target as dt
    from cutlass.cute.runtime import from_dlpack

    def on_cuda(tensor: Any, *a: Any, **kw: Any) -> Any:
        return from_dlpack(CudaView(tensor) if hasattr(tensor, "__dlpack__") else tensor, *a, **kw)

    dt.gdn_device_target = lambda device: dt._resolve(0)  # CPU tensors: the target is device 0
    for m in modules:
        for name, value in (
            ("gdn_device_target", dt.gdn_device_target),
            ("build_and_load_cute_dsl_kernel", _compile_only),
            ("from_dlpack", on_cuda),
        ):
            if hasattr(m, name):
                setattr(m, name, value)


def _sm(arch: str) -> int:
    return 90 if arch.startswith("sm_90") else 100


# ------------------------------------------------------------------------------------------- norms
NORM_H = 4096  # a Llama-class hidden size
QK_HEAD_DIM = 128


def fi_rmsnorm(arch: str) -> Callable[[], None]:
    """RMSNorm bf16 H=4096: the compact kernel (M*H < 2^31), the strided one, and QK-RMSNorm hd 128."""
    pretend_gpu(arch)
    from flashinfer.norm.kernels import rmsnorm as r

    sm = _sm(arch)

    def run() -> None:
        r._get_compiled_rmsnorm_kernel.__wrapped__("bfloat16", NORM_H, 0.0, False, sm, True)
        r._get_compiled_rmsnorm_kernel.__wrapped__("bfloat16", NORM_H, 0.0, False, sm, False)
        r._get_compiled_qk_rmsnorm_kernel.__wrapped__("bfloat16", QK_HEAD_DIM, 0.0, False, sm)

    return run


def fi_fused_add_rmsnorm(arch: str) -> Callable[[], None]:
    """Fused residual add + RMSNorm bf16 H=4096, compact and strided."""
    pretend_gpu(arch)
    from flashinfer.norm.kernels import fused_add_rmsnorm as f

    sm = _sm(arch)

    def run() -> None:
        f._get_compiled_fused_add_rmsnorm_kernel.__wrapped__("bfloat16", NORM_H, 0.0, False, sm, True)
        f._get_compiled_fused_add_rmsnorm_kernel.__wrapped__("bfloat16", NORM_H, 0.0, False, sm, False)

    return run


def fi_layernorm(arch: str) -> Callable[[], None]:
    """LayerNorm bf16 x/y, f32 gamma/beta, H=4096 (its only getter is the strided one)."""
    pretend_gpu(arch)
    from flashinfer.norm.kernels import layernorm as ln

    return lambda: ln._get_compiled_layernorm_kernel.__wrapped__("bfloat16", "float32", NORM_H, False)


def fi_rmsnorm_quant(arch: str) -> Callable[[], None]:
    """RMSNorm + FP8 (e4m3) output, bf16 in, H=4096, compact."""
    pretend_gpu(arch)
    from flashinfer.norm.kernels import rmsnorm as r

    sm = _sm(arch)
    return lambda: r._get_compiled_rmsnorm_quant_kernel.__wrapped__(
        "bfloat16", "float8_e4m3fn", NORM_H, 0.0, False, True, sm, True
    )


# ----------------------------------------------------------------------------- gated delta-net decode
GDN = dict(B=4, H=16, HV=32, K=128, V=128)  # Qwen3-Next's linear-attention heads


def _gdn_inputs(state_dtype: Any, pool: bool) -> dict[str, Any]:
    import torch

    b, h, hv, k, v = (GDN[x] for x in ("B", "H", "HV", "K", "V"))
    bf = torch.bfloat16
    t = {
        "q": torch.zeros(b, 1, h, k, dtype=bf),
        "k": torch.zeros(b, 1, h, k, dtype=bf),
        "v": torch.zeros(b, 1, hv, v, dtype=bf),
        "a": torch.zeros(b, 1, hv, dtype=bf),
        "b": torch.zeros(b, 1, hv, dtype=bf),
        "A_log": torch.zeros(hv),
        "dt_bias": torch.zeros(hv),
        "out": torch.zeros(b, 1, hv, v, dtype=bf),
    }
    t["state"] = torch.zeros(b, hv, v, k, dtype=state_dtype) if pool else torch.zeros(b * hv, v, k, dtype=state_dtype)
    t["indices"] = torch.arange(b, dtype=torch.int32)
    return t


def fi_gdn_decode(arch: str) -> Callable[[], None]:
    """GDN decode T=1, B=4, H=16, HV=32, K=V=128: f32 state pretranspose (V-major) and nontranspose
    (K-major), and the bf16-state pool kernel (``gated_delta_rule``)."""
    pretend_gpu(arch)
    import torch
    from flashinfer.gdn_kernels import gdn_decode_bf16_state as bs
    from flashinfer.gdn_kernels import gdn_decode_nontranspose as nt
    from flashinfer.gdn_kernels import gdn_decode_pretranspose as pt

    _patch_gdn(pt, nt, bs)
    b, h, hv, k, v = (GDN[x] for x in ("B", "H", "HV", "K", "V"))

    def run() -> None:  # each round compiles afresh: empty the dispatchers' in-process caches first
        pt._get_compiled_decode_kernel.cache_clear()
        nt._get_compiled_decode_kernel_nontranspose.cache_clear()
        bs._compiled_kernels_mtp.clear()
        bs._compiled_kernels_wide_vec.clear()
        for mod, fn in ((pt, "run_pretranspose_decode"), (nt, "run_nontranspose_decode")):
            t = _gdn_inputs(torch.float32, pool=False)
            args = (t["state"], t["A_log"], t["a"], t["dt_bias"], t["q"], t["k"], t["v"], t["b"], t["out"])
            getattr(mod, fn)(*args, b, 1, h, hv, k, v, k**-0.5, True)
        t = _gdn_inputs(torch.bfloat16, pool=True)
        bs.gated_delta_rule(
            A_log=t["A_log"], a=t["a"], dt_bias=t["dt_bias"], q=t["q"], k=t["k"], v=t["v"], b=t["b"],
            initial_state_source=t["state"], initial_state_indices=t["indices"], output=t["out"],
        )  # fmt: skip

    return run


# ------------------------------------------------ more norms and quantisation (sm_100a kernels)
def _patch_compile_only(*modules: Any) -> None:
    """The modules' ``build_and_load_cute_dsl_kernel`` compiles and launches nothing; and the DSL's
    launch, which asks the driver for the shared memory per SM when ``min_blocks_per_mp > 1``, hears
    233,472 bytes (228 KiB: H100 and B200 alike) for that one attribute."""
    from cutlass.cutlass_dsl import cutlass as dsl

    helpers = dsl.cuda_helpers
    smem_per_sm = helpers.cuda.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
    real = helpers.get_device_attribute

    def attribute(attr: Any, device_id: int = 0) -> Any:
        return 233_472 if attr == smem_per_sm else real(attr, device_id)

    helpers.get_device_attribute = attribute
    for m in modules:
        if hasattr(m, "build_and_load_cute_dsl_kernel"):
            m.build_and_load_cute_dsl_kernel = _compile_only


def fi_gated_residual_rmsnorm(arch: str) -> Callable[[], None]:
    """Gated residual RMSNorm (H=8192 fixed by the kernel): the config ``run`` picks for M > 64 rows
    (vec 4, one CTA per row, 2 blocks per SM) and for M <= 16 (vec 2, eight-way column split)."""
    pretend_gpu(arch)
    g = importlib.import_module("flashinfer.norm.kernels.gated_residual_rmsnorm")  # the package shadows it

    _patch_compile_only(g)

    def run() -> None:
        # vec, s, mode, lowreg, gain_center, eps, mbpm, cx, enable_pdl
        g._get_compiled.__wrapped__(4, 1, 0, False, 0.0, 1e-6, 2, 1, False)
        g._get_compiled.__wrapped__(2, 8, 0, False, 0.0, 1e-6, 0, 2, False)

    return run


def fi_rmsnorm_sigmoid_gate(arch: str) -> Callable[[], None]:
    """RMSNorm with a sigmoid gate, head dim 64, 32 heads, token stride 2048: the bandwidth config
    (rows > 256: 8 lanes, 8 warps, no cluster) and the latency config (16-CTA cluster)."""
    pretend_gpu(arch)
    r = importlib.import_module("flashinfer.norm.kernels.rmsnorm_sigmoid_gate")  # the package shadows it

    _patch_compile_only(r)

    def run() -> None:
        r._get_compiled.__wrapped__(32, 2048, 2048, *r._launch_config(4096), False)
        r._get_compiled.__wrapped__(32, 2048, 2048, *r._launch_config(64), False)

    return run


def fi_mx_quantize(arch: str) -> Callable[[], None]:
    """MXFP8 quantisation bf16 K=4096 (linear and 128x4-swizzled scale layouts) and MXFP4
    quantisation bf16 K=4096 (swizzled)."""
    pretend_gpu(arch)
    from flashinfer.quantization.kernels import mxfp4_quantize as q4
    from flashinfer.quantization.kernels import mxfp8_quantize as q8

    _patch_compile_only(q4, q8)

    def run() -> None:
        q8._get_compiled_kernel_mxfp8_linear.__wrapped__("bf16", 4096)
        q8._get_compiled_kernel_mxfp8_swizzled.__wrapped__("bf16", 4096)
        q4._get_compiled_kernel_mxfp4.__wrapped__(True, 4096)

    return run


def fi_nvfp4_quantize(arch: str) -> Callable[[], None]:
    """NVFP4 quantisation bf16 K=4096, 128x4-swizzled scales, global scale as a tensor."""
    pretend_gpu(arch)
    from flashinfer.quantization.kernels import nvfp4_quantize as q

    _patch_compile_only(q)
    return lambda: q._get_compiled_kernel_nvfp4.__wrapped__("bfloat16", 4096)


def fi_norm_quant(arch: str) -> Callable[[], None]:
    """LayerNorm + FP8 (e4m3) output (f32 gamma/beta) and fused add + RMSNorm + FP8 output, bf16 in,
    H=4096, compact and strided."""
    pretend_gpu(arch)
    from flashinfer.norm.kernels import fused_add_rmsnorm as f
    from flashinfer.norm.kernels import layernorm as ln

    sm = _sm(arch)

    def run() -> None:
        for contiguous in (True, False):
            ln._get_compiled_layernorm_quant_kernel.__wrapped__(
                "bfloat16", "float8_e4m3fn", NORM_H, False, True, sm, contiguous
            )
            f._get_compiled_fused_add_rmsnorm_quant_kernel.__wrapped__(
                "bfloat16", "float8_e4m3fn", NORM_H, 0.0, False, True, sm, contiguous
            )

    return run


def fi_gdn_mtp(arch: str) -> Callable[[], None]:
    """GDN multi-token decode with bf16 state (``gated_delta_rule_mtp``), T=4 tokens, B=4 H=16 HV=32
    K=V=128: plain, and with a cached intermediate-state buffer [B, T, HV, V, K]."""
    pretend_gpu(arch)
    import torch
    from flashinfer.gdn_kernels import gdn_decode_bf16_state as bs

    _patch_gdn(bs)
    b, h, hv, k, v = (GDN[x] for x in ("B", "H", "HV", "K", "V"))
    t_mtp, bf = 4, torch.bfloat16

    def run() -> None:  # each round compiles afresh: empty the dispatcher's in-process caches first
        bs._compiled_kernels_mtp.clear()
        bs._compiled_kernels_wide_vec.clear()
        for cached in (False, True):
            bs.gated_delta_rule_mtp(
                A_log=torch.zeros(hv), a=torch.zeros(b, t_mtp, hv, dtype=bf), dt_bias=torch.zeros(hv),
                q=torch.zeros(b, t_mtp, h, k, dtype=bf), k=torch.zeros(b, t_mtp, h, k, dtype=bf),
                v=torch.zeros(b, t_mtp, hv, v, dtype=bf), b=torch.zeros(b, t_mtp, hv, dtype=bf),
                initial_state_source=torch.zeros(b, hv, v, k, dtype=bf),
                initial_state_indices=torch.arange(b, dtype=torch.int32),
                intermediate_states_buffer=torch.zeros(b, t_mtp, hv, v, k, dtype=bf) if cached else None,
                output=torch.zeros(b, t_mtp, hv, v, dtype=bf),
            )  # fmt: skip

    return run


def fi_msa_sparse_decode(arch: str) -> Callable[[], None]:
    """MSA sparse decode attention, sm_90a kernel (``msa_ops/cute_dsl/sparse_decode_sm90.run``): B=4,
    one query token each, 8 query heads on 1 KV head, head dim 128, fp8 paged KV (page 128, 64 pages),
    top-16 selected blocks per token. ``run`` compiles and then launches the compiled function at
    once; without a device that launch fails after the compile, so the failure is caught there (and
    re-raised if nothing was compiled)."""
    pretend_gpu(arch)
    import torch
    from flashinfer.msa_ops.cute_dsl import sparse_decode_sm90 as sd

    _patch_gdn(sd)
    b, hq, hkv, d, page, topk, pages = 4, 8, 1, 128, 128, 16, 64

    def run() -> None:
        sd._COMPILED.clear()
        q = torch.zeros(b, hq, d, dtype=torch.bfloat16)
        kv = torch.zeros(pages, hkv, page, 2 * d, dtype=torch.uint8)
        idx = torch.zeros(hkv, b, topk, dtype=torch.int32)
        page_table = torch.zeros(b, pages // b, dtype=torch.int32)
        seqused_k = torch.full((b,), 1024, dtype=torch.int32)
        try:
            sd.run(q, kv, idx, page_table, seqused_k, torch.zeros_like(q))
        except Exception:
            if not sd._COMPILED:
                raise

    return run
