"""A fourth holdout set of real CuTe DSL kernels, compiled with no GPU (worker side of regen.py's
holdout-4 captures): kernels of nvidia-cudnn-frontend (package ``cudnn``), in no earlier capture,
triaged by hand before any analysis work looked at them.

Same recipe as holdout3_workers.py (flashinfer_workers.py's :func:`pretend_gpu`): each function
takes the arch and returns a zero-argument callable that makes the kernel's real ``cute.compile``
calls, through the package's own compile path where it has one (an ``APIBase`` class's
``check_support`` + ``compile`` on metadata-only ``TensorDesc`` samples, or a module's cached
``_compile``), else as that path does (said in the docstring). Kernel modules that import
``cutlass.primitives`` (absent from DSL 4.8.1) are not among them.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

_spec = importlib.util.spec_from_file_location("flashinfer_workers", Path(__file__).with_name("flashinfer_workers.py"))
assert _spec and _spec.loader
fw = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fw)


def _gpu(arch: str) -> None:
    """pretend_gpu; ``torch.cuda.device(i)`` and ``torch.cuda.nvtx.range`` (which CPU-only torch cannot
    enter) no-op contexts."""
    import torch

    fw.pretend_gpu(arch)
    torch.cuda.device = lambda device=None: contextlib.nullcontext()  # type: ignore[assignment,misc]
    torch.cuda.nvtx.range = lambda *a, **kw: contextlib.nullcontext()  # type: ignore[assignment]


def _desc(dtype: Any, shape: tuple[int, ...], stride: tuple[int, ...] | None = None) -> Any:
    """A metadata-only sample (cudnn's ``TensorDesc``) on CUDA device 0; row-major unless ``stride``."""
    import torch
    from cudnn.api_base import TensorDesc

    if stride is None:
        acc, out = 1, []
        for n in reversed(shape):
            out.append(acc)
            acc *= n
        stride = tuple(reversed(out))
    order = tuple(i for i, _ in sorted(enumerate(stride), key=lambda x: (x[1], shape[x[0]])))
    return TensorDesc(dtype, shape, stride, order, torch.device("cuda", 0))


def _plan(api: Any) -> None:
    """An ``APIBase`` plan's own compile path: ``check_support`` then ``compile``."""
    api.check_support()
    api.compile()


# --------------------------------------------------------------------------------------- sm_100a
def cudnn_rope(arch: str) -> Callable[[], None]:
    """cudnn's FROST vision RoPE backward (rope/api.py ``_compile``: T = ``sym_int(64)`` tokens, 16 heads x
    64, Q/V in HTD and K in HDT storage, f32 cos/sin tables, packed bf16 (T, 3072) dQKV)."""
    _gpu(arch)
    api = importlib.import_module("cudnn.rope.api")

    def run() -> None:
        api._compile.__wrapped__(0, (10, 0))

    return run


def cudnn_rmsnorm_rht_amax(arch: str) -> Callable[[], None]:
    """cudnn's fused RMSNorm + random Hadamard transform + per-CTA amax (``RmsNormRhtAmaxSm100``: rows
    ``sym_int``, bf16): hidden 4096 (256 threads) and 7168 (128 threads), 2 rows per CTA."""
    _gpu(arch)
    import torch

    api = importlib.import_module("cudnn.rmsnorm_rht_amax.api")
    bf = torch.bfloat16

    def run() -> None:
        for m, n in ((256, 4096), (296, 7168)):
            rpc = api.pick_rows_per_cta(m)
            x, w, o = _desc(bf, (m, n)), _desc(bf, (n,)), _desc(bf, (m, n))
            _plan(api.RmsNormRhtAmaxSm100(x, w, o, _desc(torch.float32, (m // rpc,))))

    return run


def _no_launch(*modules: Any) -> None:
    """The modules' ``cute`` compiles (through ``cutlass.cute.compile``, so regen's timer sees each call)
    and returns a callable that launches nothing: their entry points compile and then launch at once."""
    import cutlass.cute as cute

    class _Cute:
        def __getattr__(self, name: str) -> Any:
            return getattr(cute, name)

        def compile(self, *args: Any, **kwargs: Any) -> Any:
            cute.compile(*args, **kwargs)
            return lambda *a, **kw: None

    for m in modules:
        m.cute = _Cute()


def _on_cuda(*modules: Any) -> None:
    """The modules' ``from_dlpack`` sees CPU tensors as CUDA device 0 (flashinfer_workers.py's CudaView)."""
    from cutlass.cute.runtime import from_dlpack

    def wrap(tensor: Any, *a: Any, **kw: Any) -> Any:
        return from_dlpack(fw.CudaView(tensor) if hasattr(tensor, "__dlpack__") else tensor, *a, **kw)

    for m in modules:
        m.from_dlpack = wrap


def _hardware() -> None:
    """regen.py's HardwareInfo stand-in (SM count from FLASH_ATTENTION_NUM_SMS: 148 on sm_100a)."""
    import sys

    import cutlass.utils

    regen = sys.modules.get("__main__")
    if not hasattr(regen, "_FakeHardwareInfo"):
        spec = importlib.util.spec_from_file_location("regen", Path(__file__).with_name("regen.py"))
        assert spec and spec.loader
        regen = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(regen)
    cutlass.utils.HardwareInfo = regen._FakeHardwareInfo  # type: ignore[union-attr]


def cudnn_nvfp4_quant(arch: str) -> Callable[[], None]:
    """cudnn's NVFP4 block-scale quantize and dequantize (ops/nvfp4.py plans' compile functions,
    ``compile_nvfp4_block_scale_quantize`` / ``_dequantize``: M = ``sym_int64(divisibility=128)``, K fixed
    per plan), bf16 [1, M, K] <-> packed E2M1 + E4M3 scales (F8_128x4) at K = 4096 and 7168."""
    _gpu(arch)
    kn = importlib.import_module("cudnn.ops._nvfp4_block_scale_kernels")

    def run() -> None:
        for k in (4096, 7168):
            kn.compile_nvfp4_block_scale_quantize(k=k)
            kn.compile_nvfp4_block_scale_dequantize(k=k)

    return run


def cudnn_causal_conv1d(arch: str) -> Callable[[], None]:
    """cudnn's bulk causal conv1d (width 4, bf16, ``CausalConv1dBulkFwdSm100``: tokens ``sym_int``): dense
    (B=4, T=2048, D=2048, bias) and packed varlen (B=1, T=8192, 8 sequences, initial and final state)."""
    _gpu(arch)
    import torch

    api = importlib.import_module("cudnn.causal_conv1d_bulk_sm100.api")
    bf = torch.bfloat16

    def run() -> None:
        b, t, d = 4, 2048, 2048
        x = _desc(bf, (b, t, d))
        _plan(api.CausalConv1dBulkFwdSm100(x, _desc(bf, (d, 4)), x, sample_bias=_desc(bf, (d,))))
        t, n = 8192, 8
        x, st = _desc(bf, (1, t, d)), _desc(bf, (n, d, 4))
        _plan(api.CausalConv1dBulkFwdSm100(x, _desc(bf, (d, 4)), x, _desc(torch.int32, (n + 1,)), st, st))

    return run


def cudnn_gemm_swiglu(arch: str) -> Callable[[], None]:
    """cudnn's persistent dense GEMM + SwiGLU (gemm/cutedsl/dense/swiglu ``GemmSwigluSm100``, the
    unquantised ``PersistentDenseGemmKernel``; shapes static as the plan's descriptors give them): bf16
    A (M, K, L) K-major, B (N, K, L), AB12 (M, N, L) and C = SwiGLU (M, N/2, L), f32 accumulate, tile
    128x128 (1x1 cluster) and 256x128 (2-CTA, 2x2 cluster); M = 8192, N = 7168, K = 4096, L = 1."""
    _gpu(arch)
    _hardware()
    import torch

    api = importlib.import_module("cudnn.gemm.cutedsl.dense.swiglu.api")
    bf = torch.bfloat16

    def mkl(m: int, k: int, l: int) -> Any:  # noqa: E741
        return _desc(bf, (m, k, l), (k, 1, m * k))

    def run() -> None:
        m, n, k, l = 8192, 7168, 4096, 1  # noqa: E741
        for tile in ((128, 128), (256, 128)):
            _plan(api.GemmSwigluSm100(mkl(m, k, l), mkl(n, k, l), mkl(m, n, l), mkl(m, n // 2, l), mma_tiler_mn=tile))

    return run


# ---------------------------------------------------------------------------------------- sm_90a
def cudnn_bsa_fwd(arch: str) -> Callable[[], None]:
    """cudnn's Hopper block-sparse attention forward, 128-token blocks (block_sparse_attention/_interface.py
    ``_bsa_attn_fwd_sm90_blk128``, which ``bsa_attn_fwd`` calls on sm_90 with ``sparse_block_size=128``;
    ``from_dlpack(...).mark_layout_dynamic``: every extent and non-unit stride runtime): bf16, 16 q / 4 KV
    heads, hd 128, 4096 q and k tokens, 8 KV blocks per q block; fixed count, and per-block counts with
    block sizes and 2 KV splits."""
    _gpu(arch)
    import torch

    bi = importlib.import_module("cudnn.block_sparse_attention._interface")
    _on_cuda(bi)
    _no_launch(bi)
    bf, i32 = torch.bfloat16, torch.int32

    def run() -> None:
        bi._bsa_attn_fwd_sm90_blk128.compile_cache = {}
        b, h, hk, s, d, nb = 1, 16, 4, 4096, 128, 8
        q = torch.zeros(b, h, s, d, dtype=bf)
        k, v = torch.zeros(b, hk, s, d, dtype=bf), torch.zeros(b, hk, s, d, dtype=bf)
        qb = s // 128
        idx = torch.zeros(b, h, qb, nb, dtype=i32)
        bi._bsa_attn_fwd_sm90_blk128(q, k, v, idx, nb)
        counts, sizes = torch.full((b, h, qb), nb, dtype=i32), torch.full((s // 128,), 128, dtype=i32)
        bi._bsa_attn_fwd_sm90_blk128(q, k, v, idx, nb, sizes, counts, None, "bhsd", 2)

    return run


def cudnn_kda_prefill(arch: str) -> Callable[[], None]:
    """cudnn's Hopper Kimi Delta Attention chunked linear-attention prefill (linear_attention/hopper/kernel/
    kda_prefill_sm90.py ``run``: ``from_dlpack`` of each operand, static layouts as DLPack gives them;
    CPU tensors typed as CUDA, the launch skipped): varlen, 4 sequences of 2048 tokens, 16 heads, hd 128,
    bf16 q/k/v/g/beta, f32 initial and final state; 132 SMs."""
    _gpu(arch)
    import torch

    kp = importlib.import_module("cudnn.linear_attention.hopper.kernel.kda_prefill_sm90")
    _on_cuda(kp)
    _no_launch(kp)
    kp.multiprocessor_count = lambda device: 132  # asks the driver: an H100 SXM's count
    bf, f32 = torch.bfloat16, torch.float32

    def run() -> None:
        kp._CACHE.clear()
        n, s, h, d = 4, 2048, 16, 128
        t = n * s
        q, k, v, g = (torch.zeros(t, h, d, dtype=bf) for _ in range(4))
        beta = torch.zeros(t, h, dtype=bf)
        cu = torch.arange(0, t + 1, s, dtype=torch.int32)
        st = torch.zeros(n, h, d, d, dtype=f32)
        kp.run(q, k, v, g, beta, cu, st, torch.zeros(t, h, d, dtype=bf), torch.zeros_like(st))

    return run


def cudnn_moe_glu(arch: str) -> Callable[[], None]:
    """cudnn's MoE grouped GEMM + GLU, bf16 (gemm/cutedsl/grouped/glu ``GroupedGemmGluBf16API``, dense
    expert weights; rows ``sym_int(divisibility=256)`` as its compile makes them, the rest static from the
    samples: CPU tensors, only their metadata is read): 8 experts, K = 2048, N = 2 x 1024 (SwiGLU), routed
    rows padded to 256 per expert, with bias and routing probabilities; tile 256x256 (2-CTA). Its workspace
    is a 128-byte aligned CPU buffer typed as CUDA."""
    _gpu(arch)
    _hardware()
    import torch

    api = importlib.import_module("cudnn.gemm.cutedsl.grouped.glu._bf16_api")
    _on_cuda(api)
    bf, f32 = torch.bfloat16, torch.float32

    def workspace(framework: Any, nbytes: int, device: Any) -> Any:  # 128-byte aligned, as the CUDA allocator's
        buf = torch.zeros(nbytes + 128, dtype=torch.uint8)
        off = -buf.data_ptr() % 128
        return buf[off : off + nbytes]

    api.allocate_byte_workspace = workspace

    def run() -> None:
        m, k, n, e = 4096, 2048, 2048, 8
        a = torch.zeros(m, k, 1, dtype=bf)
        b = torch.zeros(e, n, k, dtype=bf).permute(1, 2, 0)  # (n, k, e) strides (k, 1, n*k)
        c, d = torch.zeros(m, n, 1, dtype=bf), torch.zeros(m, n // 2, 1, dtype=bf)
        offs, alpha = torch.zeros(e, dtype=torch.int32), torch.ones(e, dtype=f32)
        bias = torch.zeros(e, n, dtype=bf).t()  # (n, e) strides (1, n)
        prob = torch.zeros(m, 1, 1, dtype=f32)
        _plan(api.GroupedGemmGluBf16API(a, c, d, offs, alpha, b, bias, prob))

    return run


def cudnn_nsa_selection(arch: str) -> Callable[[], None]:
    """cudnn's native-sparse-attention selection forward on Hopper (native_sparse_attention/selection
    ``SelectionAttention``, HMMA; T,H,D varlen, shapes static from the plan's descriptors): bf16, 131,072
    tokens in 4 sequences (max 32,768), 64 q / 4 KV heads, hd 128, 16 selected blocks of 64 per token, causal
    within the selected blocks."""
    _gpu(arch)
    import torch

    api = importlib.import_module("cudnn.native_sparse_attention.selection.api")
    bf, f32, i32 = torch.bfloat16, torch.float32, torch.int32

    def run() -> None:
        t, hq, hk, d, nsel, b = 131072, 64, 4, 128, 16, 4
        q, k = _desc(bf, (t, hq, d)), _desc(bf, (t, hk, d))
        lm = _desc(f32, (t, hq))
        idx, cnt = _desc(i32, (t, hk, nsel)), _desc(i32, (t, hk))
        plan = api.SelectionAttention(q, k, k, q, lm, lm, idx, cnt, _desc(i32, (b + 1,)), None, t // b, t // b,
                                      is_causal=True)  # fmt: skip
        _plan(plan)

    return run


def cudnn_dsa_fwd(arch: str) -> Callable[[], None]:
    """cudnn's DeepSeek sparse-attention prefill forward on Blackwell (deepseek_sparse_attention/
    sparse_attention_forward ``_compile_kernel``, as ``sparse_attention_forward_sm100`` calls it: every
    operand through ``to_cute_tensor`` = ``from_dlpack(...).mark_layout_dynamic`` + a compact dynamic
    leading mode; CPU tensors typed as CUDA, only their metadata is read): the (H, D_qk) = (64, 576) MLA
    variant (``head64_regular``, latent 512), top-2048 KV indices per query, with attention sinks and
    per-query top-k lengths; 1024 query tokens on 4096 KV rows."""
    _gpu(arch)
    import cuda.bindings.driver as cuda
    import torch

    tc = importlib.import_module("cudnn.deepseek_sparse_attention.utils.tensor_conversion")
    fi = importlib.import_module("cudnn.deepseek_sparse_attention.sparse_attention_forward._interface_sm100")
    _on_cuda(tc)
    bf, f32 = torch.bfloat16, torch.float32

    def run() -> None:
        s, skv, h, d, topk = 1024, 4096, 64, 576, 2048
        q, kv = torch.zeros(s, h, d, dtype=bf), torch.zeros(skv, d, dtype=bf)
        idx, length = torch.zeros(s, topk, dtype=torch.int32), torch.full((s,), topk, dtype=torch.int32)
        out = torch.zeros(s, h, 512, dtype=bf)
        ml, lse, sink = torch.zeros(s, h, dtype=f32), torch.zeros(s, h, dtype=f32), torch.zeros(h, dtype=f32)
        kernel = fi._make_kernel(fi._kernel_variant(h, d), d, 0)
        dev = torch.device("cuda", 0)
        fi._compile_kernel(kernel, q, kv, idx, out, ml, lse, None, sink, length, d**-0.5, cuda.CUstream(0), dev)

    return run
