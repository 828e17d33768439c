"""A tenth holdout set of real CuTe DSL kernels, compiled with no GPU (worker side of regen.py's
holdout-10 captures): kernels of nvidia-cudnn-frontend 1.32.0 (package ``cudnn``) and FlashAttention-4
(``flash_attn.cute`` 4.0.0b36) in no earlier capture, triaged by hand before any analysis work looked
at them.

Same recipe as holdout4_workers.py / regen.py's FA4 workers: each function takes the arch and returns a
zero-argument callable that makes the kernel's real ``cute.compile`` calls, through the package's own
compile path where it has one (an ``APIBase`` plan's ``check_support`` + ``compile``, FA4's
``_flash_attn_fwd`` under ``FakeTensorMode``), else as that path does (said in the docstring). Kernel
modules that import ``cutlass.primitives`` (absent from DSL 4.8.1) are not among them.
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


# ------------------------------------------------------------------------------------------ FA4
def _fa4(**kw: Any) -> Callable[[], None]:
    """FA4's ``_flash_attn_fwd`` under ``FakeTensorMode`` as regen.py's ``_fa4_fwd`` calls it (fresh JIT
    caches each round); ``kw`` gives the shapes (b, sq, sk, h, hk, d, dv) and the call's keyword options;
    ``page`` > 0 turns K/V into a paged cache of that page size with a (b, sk / page) page table."""
    import torch
    from flash_attn.cute.interface import _flash_attn_fwd
    from torch._subclasses.fake_tensor import FakeTensorMode

    regen = _sibling("regen")
    regen._fa4_setup()
    b, sq, sk, h, hk, d = (kw.pop(x) for x in ("b", "sq", "sk", "h", "hk", "d"))
    dv, page = kw.pop("dv", d), kw.pop("page", 0)
    bf = torch.bfloat16

    def run() -> None:
        regen._fa4_reset_caches()
        with FakeTensorMode():
            q = torch.empty(b, sq, h, d, dtype=bf, device="cuda")
            extra: dict[str, Any] = {}
            if page:
                n = b * sk // page
                k = torch.empty(n, page, hk, d, dtype=bf, device="cuda")
                v = torch.empty(n, page, hk, dv, dtype=bf, device="cuda")
                extra["page_table"] = torch.empty(b, sk // page, dtype=torch.int32, device="cuda")
            else:
                k = torch.empty(b, sk, hk, d, dtype=bf, device="cuda")
                v = torch.empty(b, sk, hk, dv, dtype=bf, device="cuda")
            _flash_attn_fwd(q, k, v, return_lse=True, **extra, **kw)

    return run


def fa4_fwd_local_gqa(arch: str) -> Callable[[], None]:
    """FA4 forward, causal + sliding window (left 256), hd 64, GQA 16 q / 4 KV heads (pack_gqa), bf16,
    batch 2 x 2048 tokens."""
    return _fa4(b=2, sq=2048, sk=2048, h=16, hk=4, d=64, causal=True, window_size_left=256, window_size_right=0,
                pack_gqa=True)  # fmt: skip


def fa4_fwd_softcap(arch: str) -> Callable[[], None]:
    """FA4 forward with tanh softcap 30, non-causal, hd 256, 8 heads, bf16, batch 2 x 1024 tokens."""
    return _fa4(b=2, sq=1024, sk=1024, h=8, hk=8, d=256, softcap=30.0)


def fa4_fwd_paged(arch: str) -> Callable[[], None]:
    """FA4 forward over a paged KV cache (page 128, page table (4, 32)), causal, hd 128, GQA 32 q / 8 KV
    heads, bf16, 4 sequences: 512 queries on 4096 cached keys each."""
    return _fa4(b=4, sq=512, sk=4096, h=32, hk=8, d=128, page=128, causal=True)


# ---------------------------------------------------------------------------------------- cudnn
def _aligned_workspace(*modules: Any) -> None:
    """The modules' ``allocate_byte_workspace`` gives a 128-byte aligned CPU buffer (as the CUDA allocator's
    would be); ``from_dlpack`` sees it as CUDA device 0 (holdout4_workers.py ``_on_cuda``)."""
    import torch

    def workspace(framework: Any, nbytes: int, device: Any) -> Any:
        buf = torch.zeros(nbytes + 128, dtype=torch.uint8)
        off = -buf.data_ptr() % 128
        return buf[off : off + nbytes]

    for m in modules:
        m.allocate_byte_workspace = workspace
    h4._on_cuda(*modules)


def _device_facts(arch: str) -> None:
    """cudnn._device.DeviceInfo (which asks the driver) answers as a B200 / H100 SXM would: compute
    capability, SM count (148 / 132), 227 KiB opt-in shared memory per block, 0 oversized, 50 MiB L2."""
    from cudnn import _device

    sm = int(arch.removeprefix("sm_").rstrip("af"))
    facts: dict[str, object] = {
        "compute_capability": (sm // 10, sm % 10),
        "sm_count": 148 if sm >= 100 else 132,
        "shared_memory_per_block_optin": 232448,
        "oversized_shared_memory_per_block": 0,
        "l2_cache_bytes": 50 * 1024 * 1024,
        "device_name": "NVIDIA B200" if sm >= 100 else "NVIDIA H100 80GB HBM3",
    }

    def fact(value: object) -> property:
        return property(lambda self: value)

    for name, value in facts.items():
        setattr(_device.DeviceInfo, name, fact(value))


def cudnn_grouped_gemm_discrete(arch: str) -> Callable[[], None]:
    """cudnn's unfused MoE grouped GEMM, bf16, DISCRETE expert weights (gemm/cutedsl/grouped/unfused
    ``GroupedGemmBf16API`` with ``num_experts`` / ``b_shape``: a device array of 8 per-expert B pointers,
    N and K runtime Int32; rows ``sym_int(divisibility=256)`` as its compile makes them; CPU samples, only
    their metadata is read): 8 experts, K = 2048, N = 1024, rows padded to 256 per expert, tile 128x128;
    the workspace and the pointer-array placeholder are 128-byte aligned CPU buffers typed as CUDA."""
    h4._gpu(arch)
    h4._hardware()
    import torch

    api = importlib.import_module("cudnn.gemm.cutedsl.grouped.unfused._bf16_api")
    _aligned_workspace(api)
    bf, f32 = torch.bfloat16, torch.float32

    def run() -> None:
        m, k, n, e = 4096, 2048, 1024, 8
        a = torch.zeros(m, k, 1, dtype=bf)
        c, d = torch.zeros(m, n, 1, dtype=bf), torch.zeros(m, n, 1, dtype=bf)
        offs, alpha = torch.zeros(e, dtype=torch.int32), torch.ones(e, dtype=f32)
        prob = torch.zeros(m, 1, 1, dtype=f32)
        plan = api.GroupedGemmBf16API(a, c, d, offs, alpha, sample_prob=prob, num_experts=e, b_shape=(n, k),
                                      b_dtype=bf, mma_tiler_mn=(128, 128))  # fmt: skip
        h4._plan(plan)

    return run


def cudnn_sdpa_fwd(arch: str) -> Callable[[], None]:
    """cudnn's Blackwell SDPA forward (sdpa/fwd/api_dsl.py ``SdpaFwdDslSm100``, the FROST DSL template
    kernel sm100/prefill_d128_f16.py; shapes as the plan's metadata-only descriptors give them): bf16
    BHSD, batch 2, 16 heads, 1024 tokens, hd 128, causal, with the LSE (stats) output."""
    h4._gpu(arch)
    h4._hardware()
    import torch

    api = importlib.import_module("cudnn.sdpa.fwd.api_dsl")
    bf = torch.bfloat16

    def run() -> None:
        b, h, s, d = 2, 16, 1024, 128
        q, o = h4._desc(bf, (b, h, s, d)), h4._desc(bf, (b, h, s, d))
        h4._plan(api.SdpaFwdDslSm100(q, q, q, o, h4._desc(torch.float32, (b, h, s, 1)), is_causal=True))

    return run


def cudnn_sdpa_bwd(arch: str) -> Callable[[], None]:
    """cudnn's Blackwell SDPA backward, hd 128 (sdpa/bwd/api_dsl_sm100_d128.py ``SdpaBwdDslSm100D128``,
    the plan's own ``check_support`` + ``compile`` on metadata-only descriptors; cudnn's driver-backed
    DeviceInfo answers as a B200): bf16 in compact BSHD storage (viewed BHSD), batch 2, 16 heads, 1024
    tokens, causal, f32 stats (B, H, S, 1)."""
    h4._gpu(arch)
    h4._hardware()
    _device_facts(arch)
    import torch

    api = importlib.import_module("cudnn.sdpa.bwd.api_dsl_sm100_d128")
    bf = torch.bfloat16

    def run() -> None:
        b, h, s, d = 2, 16, 1024, 128

        def t() -> Any:
            return h4._desc(bf, (b, h, s, d), (s * h * d, d, h * d, 1))

        stats = h4._desc(torch.float32, (b, h, s, 1))
        h4._plan(api.SdpaBwdDslSm100D128(t(), t(), t(), t(), t(), stats, t(), t(), t(), is_causal=True))

    return run


def cudnn_tail_rope(arch: str) -> Callable[[], None]:
    """cudnn's FROST tail RoPE forward (rope/tail.py ``TailRoPEForward``: copy bf16 [T, H, D] rotating its
    last 64 channels, flat 1-D views with T = ``sym_int(64)`` tokens as its cached ``_compile`` makes them,
    f32 [T, 32] cos/sin tables), plan ``check_support`` + ``compile`` on metadata-only descriptors: the
    64 heads x 512 configuration (vector 16) and 8 heads x 128 (vector 8)."""
    h4._gpu(arch)
    import torch

    api = importlib.import_module("cudnn.rope.tail")
    bf, f32 = torch.bfloat16, torch.float32

    def run() -> None:
        api._compile.cache_clear()
        t = 4096
        for h, d in ((64, 512), (8, 128)):
            x, tab = h4._desc(bf, (t, h, d)), h4._desc(f32, (t, 32))
            h4._plan(api.TailRoPEForward(x, tab, tab, h4._desc(bf, (t, h, d))))

    return run


def cudnn_sdpa_fwd_d512(arch: str) -> Callable[[], None]:
    """cudnn's Hopper SDPA forward, hd 512 (sdpa/fwd/api_dsl.py ``SdpaFwdDslSm90``, the FROST template
    sm90/prefill_d512_f16.py), the plan's ``check_support`` + ``compile`` on metadata-only descriptors
    (``frost.buffers.current_sm`` / ``current_device_id`` answer 90 / 0; DeviceInfo as an H100 SXM):
    bf16 BHSD, batch 1, 8 heads, 1024 tokens, causal, LSE. ``compile`` makes its one ``cute.compile``
    (``template.compile``) and then binds a launch spec to the artifact's positional TVM-FFI entry, which
    an artifact built with no GPU lacks: that NotImplementedError, after the kernel compiled, is let
    through."""
    h4._gpu(arch)
    h4._hardware()
    _device_facts(arch)
    import torch

    buffers: Any = importlib.import_module("cudnn.frost.buffers")
    buffers.current_sm = lambda: 90
    buffers.current_device_id = lambda: 0
    api = importlib.import_module("cudnn.sdpa.fwd.api_dsl")
    bf = torch.bfloat16

    def run() -> None:
        b, h, s, d = 1, 8, 1024, 512
        q, o = h4._desc(bf, (b, h, s, d)), h4._desc(bf, (b, h, s, d))
        plan = api.SdpaFwdDslSm90(q, q, q, o, h4._desc(torch.float32, (b, h, s, 1)), is_causal=True)
        plan.check_support()
        try:
            plan.compile()
        except NotImplementedError as exc:  # the launch-spec binder, after the kernel's compile
            if "positional tvm-ffi entry" not in str(exc) or plan._compiled_kernel is None:
                raise

    return run
