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

Not tried yet (candidates, same recipe): the other norm kernels (gated residual RMSNorm, RMSNorm with
sigmoid gate, LayerNorm/fused-add + FP8), flashinfer/quantization/kernels (mxfp8/mxfp4/nvfp4),
topk_varlen, msa_ops/cute_dsl/*_sm90, the GDN MTP/ucache decode kernels; the GEMM/MoE/attention kernels
are mostly sm_100a with TMA and cluster helpers.
"""

from __future__ import annotations

import ctypes
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
