"""An eighth holdout set of real CuTe DSL kernels, compiled with no GPU (worker side of regen.py's
holdout-8 captures): kernels (source file + config) in no earlier capture, triaged by hand before any
analysis work looked at them.

Same recipe as holdout3_workers.py (flashinfer_workers.py's :func:`pretend_gpu` and compile-only
stand-ins): each function takes the arch and returns a zero-argument callable that makes the
kernel's real ``cute.compile`` calls, through the package's own compile function where it has one
(its cached getter called through ``__wrapped__``, which builds the fake cute tensors itself), else
as that function does (the tensors it would build, said in the docstring).
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


def _launch_fails(compiled: Callable[[], bool], call: Callable[[], None]) -> None:
    """``call`` compiles, then launches the compiled function at once; without a device the launch fails
    after the compile, so the failure is caught there (and re-raised if nothing was compiled)."""
    try:
        call()
    except Exception:
        if not compiled():
            raise


# ------------------------------------------------------------------------------ flashinfer, sm_100a
def fi_gated_residual_next_rmsnorm(arch: str) -> Callable[[], None]:
    """flashinfer's fused gated residual + next-layer RMSNorm (norm/kernels/gated_residual_next_rmsnorm.py,
    ``_get_compiled``: symbolic rows, H=8192 fixed, 8-CTA cluster per row with DSMEM row sums): plain, and
    with a post weight, scalar alpha and the f32 router output."""
    fw.pretend_gpu(arch)
    g = importlib.import_module("flashinfer.norm.kernels.gated_residual_next_rmsnorm")  # the package shadows it
    fw._patch_compile_only(g)

    def run() -> None:
        # post_eps, next_eps, next_gain_center, has_post_weight, post_gain_center, alpha_mode, pdl, router
        g._get_compiled.__wrapped__(1e-6, 1e-6, 0.0, False, 0.0, 0, False, False)
        g._get_compiled.__wrapped__(1e-6, 1e-6, 1.0, True, 1.0, 2, False, True)

    return run


def fi_dense_bf16_gemm_direct(arch: str) -> Callable[[], None]:
    """flashinfer's direct (SIMT, no MMA) bf16 GEMM for small M (gemm/kernels/dense_bf16_gemm_direct.py,
    ``_get_compiled_direct_kernel``): A (rows, K) and out (rows, N) with M dynamic (compact, K static),
    B (N, K) static; N 4096, K 7168, the default tactic for M 8 and for M 1. CPU tensors typed as
    device memory stand for the ``device="cuda"`` tensors of ``_make_compile_repr_tensors``."""
    fw.pretend_gpu(arch)
    import torch

    d: Any = importlib.import_module("flashinfer.gemm.kernels.dense_bf16_gemm_direct")
    from cutlass.cute.runtime import from_dlpack

    def as_cute(t: Any, *, dynamic_m: bool = False) -> Any:
        tensor = from_dlpack(fw.CudaView(t), assumed_align=32)
        return tensor.mark_compact_shape_dynamic(mode=0, stride_order=(0, 1), divisibility=1) if dynamic_m else tensor

    def repr_tensors(dtype: Any, rows: int, n: int, k: int) -> tuple[Any, ...]:
        shapes = (((rows, k), True), ((n, k), False), ((rows, n), True))
        return tuple(as_cute(torch.empty(s, dtype=dtype), dynamic_m=m) for s, m in shapes)

    d._make_compile_repr_tensors = repr_tensors
    torch.cuda.device = lambda index: _Null()

    def run() -> None:
        n, k = 4096, 7168
        for m in (8, 1):
            d._get_compiled_direct_kernel.__wrapped__(0, torch.bfloat16, n, k, d.default_tactic(m, n, k), False)

    return run


class _Null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def fi_fused_kda_decode(arch: str) -> Callable[[], None]:
    """flashinfer's fused Kimi Delta Attention decode (kda_kernels/fused_kda_decode.py,
    ``_get_compiled_kernel``: symbolic rows, heads, conv and state slots; hd 128, conv width 4): f32
    state with the softplus gate, and bf16 state, packed T=1 with state indices, lower-bound gate,
    channel-major (DS) conv state."""
    fw.pretend_gpu(arch)
    import torch

    kd = importlib.import_module("flashinfer.kda_kernels.fused_kda_decode")
    fw._patch_compile_only(kd)

    def run() -> None:
        # state dtype, lower_bound, norm_eps, packed_t1, conv_dim_first
        kd._get_compiled_kernel.__wrapped__(torch.float32, None, 1e-6, False, False)
        kd._get_compiled_kernel.__wrapped__(torch.bfloat16, -5.0, 1e-6, True, True)

    return run


# ----------------------------------------------------------------------------------------------- quack
def quack_hadamard(arch: str) -> Callable[[], None]:
    """quack's fast Hadamard transform (transform/hadamard.py, ``HadamardTransform.compile``: symbolic
    batch, static N): bf16 N 3072 (non power of two: padded, tail-predicated stores), one row block per
    CTA, and bf16 N 32768 persistent (the one case the dispatcher runs persistent)."""
    from cutlass import BFloat16

    h = importlib.import_module("quack.transform.hadamard")

    def run() -> None:
        h.HadamardTransform.compile.__wrapped__(BFloat16, 3072, False)
        h.HadamardTransform.compile.__wrapped__(BFloat16, 32768, True)

    return run


def fi_gvr_topk(arch: str) -> Callable[[], None]:
    """flashinfer's GVR (guess-verify-refine) top-k decode (topk_varlen/kernels/gvr_topk_decode.py and
    gvr_topk_decode_lb.py, through ``_compile_gvr`` / ``_compile_gvr_lb_prepare`` / ``_compile_gvr_lb``:
    symbolic request count and row width): f32 logits, top-2048, next_n 1, 512 threads, the plain
    kernel with its default knobs; and the load-balanced path for up to 64 requests: the prepare
    kernel (rows sorted by length) and the clustered LB kernel (its default knobs)."""
    fw.pretend_gpu(arch)
    import cutlass

    t = importlib.import_module("flashinfer.topk_varlen.topk_varlen")
    fw._patch_compile_only(importlib.import_module("flashinfer.jit.cute_dsl_core"))
    f32 = cutlass.Float32

    def run() -> None:
        t._compile_gvr.__wrapped__(f32, 2048, 1, 1, 512, False)
        mbs = t._lb_max_batch_size(64)
        cfg = t.GvrTopKLBConfig(max_batch_size=mbs)
        t._compile_gvr_lb_prepare.__wrapped__(mbs, cfg.long_threshold, 1)
        t._compile_gvr_lb.__wrapped__(f32, 2048, 1, 1, mbs, 512, cfg.cluster_size, False)

    return run


def fi_mnnvl_allgather_norm(arch: str) -> Callable[[], None]:
    """flashinfer's MNNVL low-latency column all-gather kernels (comm/mnnvl_cutedsl/kernel_ll): the
    publisher (``compile_shared_only_publish``: a rank's [m, H/TP] bf16 shard multicast into the
    Lamport mailbox) and the two consumers compiled by ``LLAllGatherNormQuant._compile`` (RMSNorm +
    NVFP4) and ``LLAllGatherDualNorm._compile`` (gated residual + next RMSNorm, default tuning): hidden
    8192, TP 4, capacity 2048 rows. The objects are built without their collective ``__init__`` (it
    allocates symmetric multicast memory over a process group): only the fields ``_compile`` reads,
    the mailbox a meta tensor of the [3, tp, capacity, H/TP] shape ``create_ll_state`` allocates."""
    fw.pretend_gpu(arch)
    import types

    import torch

    proto = importlib.import_module("flashinfer.comm.mnnvl_cutedsl.kernel_ll.protocol")
    nq = importlib.import_module("flashinfer.comm.mnnvl_cutedsl.kernel_ll.all_gather_norm_quant")
    dn = importlib.import_module("flashinfer.comm.mnnvl_cutedsl.kernel_ll.all_gather_dual_norm")
    hidden, tp, cap = 8192, 4, 2048

    def gather(cls: Any, **fields: Any) -> Any:
        obj = object.__new__(cls)
        mailbox = torch.empty(3, tp, cap, hidden // tp, dtype=torch.bfloat16, device="meta")
        fields.update(hidden_size=hidden, hidden_local=hidden // tp, tp_size=tp, capacity_m=cap)
        fields["state"] = types.SimpleNamespace(contribution_mailbox=types.SimpleNamespace(tensor=mailbox))
        for k, v in fields.items():
            setattr(obj, k, v)
        return obj

    def run() -> None:
        proto.compile_shared_only_publish(
            hidden=hidden // tp, tp=tp, rank=1, capacity_m=cap, elements_per_thread=8, threads=128,
            release_before_store=False, enable_pdl=True,
        )  # fmt: skip
        gather(nq.LLAllGatherNormQuant, enable_pdl=True)._compile(nq._NormQuantConstants(1e-6, 0.0))
        tuning = dn.LLAllGatherDualNormTuning()
        gather(dn.LLAllGatherDualNorm, tuning=tuning)._compile(dn._NormConstants(1e-6, 1e-6, 0.0, 0.0, False))

    return run


def fi_sage_prepare(arch: str) -> Callable[[], None]:
    """flashinfer prims_ts attention's Sage scale prepare kernel (attention/prims_ts/sage/prepare.py,
    through ``get_compiled_sage_prepare``: symbolic batch and scale lengths), on the scale layout
    ``_context_sage_layout`` builds for a dense context plan: 32 q / 8 KV heads, hd 128, 8192 tokens;
    TensorRT-LLM's recipe (Q block 1, K block 16, no V mean), and Q block 64, K block 64 with V mean."""
    fw.pretend_gpu(arch)
    import types

    import torch

    plan = importlib.import_module("flashinfer.attention.prims_ts.sage.plan")
    ctx = importlib.import_module("flashinfer.attention.prims_ts.context")
    cfg = importlib.import_module("flashinfer.attention.prims_ts.sage.config")
    torch.cuda.device = lambda index: _Null()

    def run() -> None:
        for sage in (cfg.SageAttentionConfig(), cfg.SageAttentionConfig(64, 64, True)):
            geometry = types.SimpleNamespace(
                sage=sage, max_seq_len_k=8192, max_q_len=8192, num_qo_heads=32, num_kv_heads=8, head_dim=128
            )
            plan.get_compiled_sage_prepare.__wrapped__(0, ctx._context_sage_layout(geometry), 32, 8)

    return run


def fi_gdn_prefix_materialize(arch: str) -> Callable[[], None]:
    """flashinfer's GDN prefix-state materialisation (gdn_kernels/gdn_prefix_materialize.py, through its
    entry point ``gdn_prefix_materialize``: pool mode 0 dynamic, the rest of each layout static): bf16
    state pool of 16 slots [pool, HV 32, V 128, K 128], the 32-deep MTP rings (k: H 16; u, g: HV 32),
    8 requests, persistent grid. CPU tensors typed as device memory (flashinfer_workers.py's
    ``_patch_gdn``, ``_patch_compile_only``); ``num_active`` answers ``is_cuda`` as a device tensor
    would; the launch after the compile fails without a device and is caught."""
    fw.pretend_gpu(arch)
    import torch

    gp = importlib.import_module("flashinfer.gdn_kernels.gdn_prefix_materialize")
    fw._patch_gdn(gp)
    fw._patch_compile_only(gp)  # the launch (min_blocks_per_mp 8) asks the driver for smem per SM

    on_device = type("_OnDevice", (torch.Tensor,), {"is_cuda": property(lambda self: True)})

    bf, f32, i32 = gp.state_ty_torch(), torch.float32, torch.int32

    def run() -> None:
        gp._CACHE.clear()
        pool, h, hv, ring, b = 16, 16, 32, 32, 8
        state = torch.zeros(pool, hv, 128, 128, dtype=bf)
        k = torch.zeros(pool, h, ring, 128, dtype=gp.ring_ty_torch())
        u = torch.zeros(pool, hv, ring, 128, dtype=gp.ring_ty_torch())
        g = torch.zeros(pool, hv, ring, dtype=f32)
        slots = torch.arange(b, dtype=i32)
        active = torch.arange(b, dtype=i32)
        num = torch.tensor([b], dtype=i32).as_subclass(on_device)
        args = (state, slots, slots + b, k, u, g, torch.zeros(b, dtype=i32), torch.full((b,), 4, dtype=i32))
        _launch_fails(lambda: bool(gp._CACHE), lambda: gp.gdn_prefix_materialize(*args, active, num))

    return run
