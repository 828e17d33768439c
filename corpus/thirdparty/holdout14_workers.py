"""A fourteenth holdout set of real CuTe DSL kernels, compiled with no GPU (worker side of regen.py's
holdout-14 captures): kernels of nvidia-cudnn-frontend 1.32.0 (package ``cudnn``: the sm_100 norm
family, the FROST linear-attention helpers) and flashinfer-python 0.7.4 in no earlier capture, triaged
by hand before any analysis work looked at them.

Same recipe as holdout12_workers.py / holdout13_workers.py: each function takes the arch and returns a
zero-argument callable that makes the kernel's real ``cute.compile`` calls through the package's own
public entry point (cudnn ``norm_fprop`` / ``norm_bprop`` on CPU tensors typed as CUDA device 0, the
FROST ``build_*`` recipes, flashinfer's wrappers), each compiled kernel answering a no-op launch.

One stand-in is specific to this set: cudnn's norm kernels import ``cutlass.primitives``, the name the
DSL release after 4.8.1 gives ``cutlass.experimental.primitives`` (cudnn's own FROST tile DSL imports
the latter); ``_norm`` aliases the one to the other. The kernels' code is unchanged.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
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


# ----------------------------------------------------------------------------------- cudnn norms
def _norm(arch: str) -> None:
    """cudnn's sm_100 norm kernels compile-only on CPU tensors: ``cutlass.primitives`` is the DSL's
    ``cutlass.experimental.primitives``; each kernel module's ``dyn`` (from_dlpack + dynamic layout)
    sees its CPU tensor as CUDA device 0 (flashinfer_workers.py's CudaView), its ``cur_stream`` is a
    placeholder and its ``cute.compile`` returns a no-op launcher (holdout4_workers.py ``_no_launch``)."""
    import cutlass
    import cutlass.experimental.primitives as prim

    sys.modules.setdefault("cutlass.primitives", prim)
    cutlass.primitives = prim  # type: ignore[attr-defined]
    h4._gpu(arch)
    from cutlass.cute.runtime import from_dlpack

    def dyn(t: Any) -> Any:
        if t.requires_grad:
            t = t.detach()
        return from_dlpack(h4.fw.CudaView(t), assumed_align=16).mark_layout_dynamic()

    mods = []
    for pkg in ("cudnn.norm.fprop.kernels", "cudnn.norm.bprop.kernels"):
        root = importlib.import_module(pkg)
        mods += [importlib.import_module(f"{pkg}.{m.name}") for m in pkgutil.iter_modules(root.__path__)]
    for m in mods:
        for name, value in (("dyn", dyn), ("cur_stream", lambda: None)):
            if hasattr(m, name):
                setattr(m, name, value)
    h4._no_launch(*[m for m in mods if hasattr(m, "cute")])


def _nhwc(dtype: Any, n: int, c: int, h: int, w: int) -> Any:
    import torch

    return torch.empty(n, c, h, w, dtype=dtype).to(memory_format=torch.channels_last)


def cudnn_groupnorm_nhwc(arch: str) -> Callable[[], None]:
    """cudnn's channels-last GroupNorm forward (norm/fprop/kernels/groupnorm_nhwc_sm100.py) through
    ``norm_fprop("group_norm", ...)`` on NHWC inputs with gamma and beta: bf16 [2, 256, 32, 32], 32
    groups (8 channels each); f32 [1, 512, 16, 16], 16 groups (32 channels each). The flat x/y views,
    H*W and the HW-split count are runtime; C, groups and N are compile-time."""
    _norm(arch)
    import torch
    from cudnn.norm.fprop.api import norm_fprop

    def run() -> None:
        for dt, (n, c, h, w), g in ((torch.bfloat16, (2, 256, 32, 32), 32), (torch.float32, (1, 512, 16, 16), 16)):
            x = _nhwc(dt, n, c, h, w)
            norm_fprop("group_norm", x, torch.empty(c, dtype=dt), torch.empty(c, dtype=dt), num_groups=g)

    return run


def cudnn_batchnorm_nhwc(arch: str) -> Callable[[], None]:
    """cudnn's channels-last BatchNorm forward (norm/fprop/kernels/batchnorm_nhwc_sm100.py, the fused
    cooperative split-K kernel over [M = N*H*W, C]) through ``norm_fprop("batch_norm", ...)``: bf16
    [8, 256, 28, 28] in training with running mean/var updated (momentum 0.1); and inference on the
    running statistics."""
    _norm(arch)
    import torch
    from cudnn.norm.fprop.api import norm_fprop

    def run() -> None:
        n, c, h, w = 8, 256, 28, 28
        bf = torch.bfloat16
        for training in (True, False):
            x = _nhwc(bf, n, c, h, w)
            g, b = torch.empty(c, dtype=bf), torch.empty(c, dtype=bf)
            rm, rv = torch.zeros(c, dtype=torch.float32), torch.ones(c, dtype=torch.float32)
            norm_fprop("batch_norm", x, g, b, training=training, running_mean=rm, running_var=rv)

    return run


def cudnn_norm_nhwc_bwd(arch: str) -> Callable[[], None]:
    """cudnn's channels-last norm backward kernels through ``norm_bprop``: GroupNorm
    (norm/bprop/kernels/groupnorm_nhwc_sm100.py) bf16 [2, 256, 32, 32], 32 groups; BatchNorm
    (batchnorm_nhwc_sm100.py) bf16 [8, 256, 28, 28]; dgamma/dbeta in f32."""
    _norm(arch)
    import torch
    from cudnn.norm.bprop.api import norm_bprop

    def run() -> None:
        bf, f32 = torch.bfloat16, torch.float32
        for variant, (n, c, h, w), g, stats in (
            ("group_norm", (2, 256, 32, 32), 32, 2 * 32),
            ("batch_norm", (8, 256, 28, 28), None, 256),
        ):
            x, dy = _nhwc(bf, n, c, h, w), _nhwc(bf, n, c, h, w)
            mean, rstd = torch.empty(stats, dtype=f32), torch.empty(stats, dtype=f32)
            norm_bprop(variant, dy, x, torch.empty(c, dtype=bf), mean, rstd, num_groups=g)

    return run


def cudnn_instancenorm_nhwc(arch: str) -> Callable[[], None]:
    """cudnn's channels-last InstanceNorm (norm/fprop/kernels/instancenorm_nhwc_sm100.py and
    norm/bprop/kernels/instancenorm_nhwc_sm100.py) through ``norm_fprop`` / ``norm_bprop``: bf16
    [4, 128, 64, 64] with gamma and beta, f32 per-(n, c) statistics."""
    _norm(arch)
    import torch
    from cudnn.norm.bprop.api import norm_bprop
    from cudnn.norm.fprop.api import norm_fprop

    def run() -> None:
        bf, f32 = torch.bfloat16, torch.float32
        n, c, h, w = 4, 128, 64, 64
        x, dy = _nhwc(bf, n, c, h, w), _nhwc(bf, n, c, h, w)
        g, b = torch.empty(c, dtype=bf), torch.empty(c, dtype=bf)
        norm_fprop("instance_norm", x, g, b)
        mean, rstd = torch.empty(n * c, dtype=f32), torch.empty(n * c, dtype=f32)
        norm_bprop("instance_norm", dy, x, g, mean, rstd)

    return run


# ------------------------------------------------------------------------ cudnn FROST linear attention
def cudnn_frost_l2norm(arch: str) -> Callable[[], None]:
    """cudnn FROST GDN's Q/K row L2 normalize (linear_attention/frost/common/l2norm.py ``build_l2norm_qk``,
    the helper the GDN engine runs before its main kernels) and the backward pack of q and dO onto the
    expanded sub-token timeline (common/expand.py ``build_pack_bwd``), as those recipes compile them
    (dynamic layouts, row counts runtime Int32): bf16 packed tokens [4096, 16, 128] q / [4096, 4, 128] k,
    normalised into compact copies, with the f32 inverse norms [T, H] (the bprop's form) and without (the
    prefill's); pack_bwd with 2 Householder rows per token. The modules' ``from_dlpack`` sees CPU tensors
    as CUDA device 0, ``current_device`` answers 0, each compile answers a no-op launch."""
    h4._gpu(arch)
    import torch

    l2 = importlib.import_module("cudnn.linear_attention.frost.common.l2norm")
    ex = importlib.import_module("cudnn.linear_attention.frost.common.expand")
    h4._on_cuda(l2, ex)
    h4._no_launch(l2, ex)
    for m in (l2, ex):
        setattr(m, "current_device", lambda: 0)  # noqa: B010 (mypy: the module declares no such name)
    bf, f32 = torch.bfloat16, torch.float32

    def run() -> None:
        t, hq, hk, d = 4096, 16, 4, 128
        q, k = torch.empty(t, hq, d, dtype=bf), torch.empty(t, hk, d, dtype=bf)
        qn, kn = torch.empty(t, hq, d, dtype=bf), torch.empty(t, hk, d, dtype=bf)
        for inv in (True, False):
            iq, ik = (torch.empty(t, hq, dtype=f32), torch.empty(t, hk, dtype=f32)) if inv else (None, None)
            l2.build_l2norm_qk(q, k, qn, kn, iq, ik, stream=0)
        n = 2
        qx, do, dox = (
            torch.empty(t * n, hq, d, dtype=bf),
            torch.empty(t, hq, d, dtype=bf),
            torch.empty(t * n, hq, d, dtype=bf),
        )
        ex.build_pack_bwd(q, qx, do, dox, n, stream=0)

    return run


def cudnn_norm_nchw(arch: str) -> Callable[[], None]:
    """cudnn's contiguous (NCHW) norm kernels through ``norm_fprop`` / ``norm_bprop``: BatchNorm training
    fwd + bwd, bf16 [8, 256, 28, 28] (norm/{fprop,bprop}/kernels/batchnorm_nchw_sm100.py: split-K over the
    (n, c) rows of H*W contiguous elements); GroupNorm with few (sample, group) rows, bf16 [2, 64, 32, 32],
    2 groups (the cluster kernel groupnorm_cga_sm100.py forward, and the backward norm_bprop picks). The
    DSL's driver query of shared memory per SM (``min_blocks_per_mp``) answers 228 KiB (holdout13)."""
    _norm(arch)
    _sibling("holdout13_workers")._smem_per_sm()
    import torch
    from cudnn.norm.bprop.api import norm_bprop
    from cudnn.norm.fprop.api import norm_fprop

    def run() -> None:
        bf, f32 = torch.bfloat16, torch.float32
        for variant, (n, c, h, w), g, stats in (
            ("batch_norm", (8, 256, 28, 28), None, 256),
            ("group_norm", (2, 64, 32, 32), 2, 4),
        ):
            x, dy = torch.empty(n, c, h, w, dtype=bf), torch.empty(n, c, h, w, dtype=bf)
            gamma, beta = torch.empty(c, dtype=bf), torch.empty(c, dtype=bf)
            norm_fprop(variant, x, gamma, beta, num_groups=g)
            mean, rstd = torch.empty(stats, dtype=f32), torch.empty(stats, dtype=f32)
            norm_bprop(variant, dy, x, gamma, mean, rstd, num_groups=g)

    return run


def cudnn_layernorm_warp(arch: str) -> Callable[[], None]:
    """cudnn's warp-per-row LayerNorm / RMSNorm forward (norm/fprop/kernels/layernorm_warp_sm100.py, gamma
    and beta cached in shared memory) and the rowwise LayerNorm backward (norm/bprop/kernels/
    layernorm_sm100.py) through ``norm_fprop`` / ``norm_bprop``: bf16 4096 rows x 4096, f32 statistics."""
    _norm(arch)
    import torch
    from cudnn.norm.bprop.api import norm_bprop
    from cudnn.norm.fprop.api import norm_fprop

    def run() -> None:
        bf, f32 = torch.bfloat16, torch.float32
        r, m = 4096, 4096
        x, dy = torch.empty(r, m, dtype=bf), torch.empty(r, m, dtype=bf)
        g, b = torch.empty(m, dtype=bf), torch.empty(m, dtype=bf)
        norm_fprop("layer_norm", x, g, b, normalized_shape=(m,))
        norm_fprop("rms_norm", x, g, normalized_shape=(m,))
        mean, rstd = torch.empty(r, dtype=f32), torch.empty(r, dtype=f32)
        norm_bprop("layer_norm", dy, x, g, mean, rstd, normalized_shape=(m,))

    return run


# -------------------------------------------------------------------------------- flashinfer top-k
def fi_gvr2_topk(arch: str) -> Callable[[], None]:
    """flashinfer's GVR-2 varlen top-k decode (topk_varlen/kernels/gvr2_topk_decode.py, the merged
    TRT-LLM port) through its host's capture-time launcher ``gvr2_topk_host._varlen_launcher`` (the plan
    ``top_k_varlen``'s gvr_2 route builds and caches: ``route()`` picks the family, each compile uses
    symbolic request counts and row widths): f32 logits, top-2048, next_n 1: 1024 requests x 32,768 (the
    streaming ``GvrMainKernel``); 4 requests x 131,072 (the clustered register-resident
    ``GvrRegClusKernel``). flashinfer's kernel cache compiles only (flashinfer_workers.py)."""
    h4.fw.pretend_gpu(arch)
    h4.fw._patch_compile_only(importlib.import_module("flashinfer.jit.cute_dsl_core"))
    host = importlib.import_module("flashinfer.topk_varlen.kernels.gvr2_topk_host")

    def run() -> None:
        host._VARLEN_CACHE.clear()
        for rows, n in ((1024, 32768), (4, 131072)):
            host._varlen_launcher(rows, n, 2048, n, 1, 1)

    return run
