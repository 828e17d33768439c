"""Holdout 18 (Blackwell half), regenerated: irscan captures of three NVIDIA CUTLASS CuTe DSL example
kernels, compiled with no GPU for sm_100a, as REPORT_b.md describes ("How each kernel was compiled").

Captures (each in its own fresh process and its own out dir):

- ``mla_decode_fp16``: attention/mla/mla_decode_fp16.py,
  ``BlackwellMultiHeadLatentAttentionForwardFP16.__call__`` as its ``run()`` compiles it, with the
  example's defaults (B 1, seq_q 1, 128 heads, latent 512, rope 64, f16 in/out, f32 acc/lse,
  tilers (128,128)/(128,256), page 128, not persistent) except seq_len_k 4096, so the auto split_kv is 32
  and the workspace and the reduction kernel are compiled too.
- ``fmha_bwd``: attention/fmha/fmha_bwd.py, ``BlackwellFusedMultiHeadAttentionBackward.__call__``:
  f16, f32 acc, causal, b 2, s_q = s_k 2048, h_q 16, h_k 4, d 128, tiler (128,128) (3 kernels).
- ``mixed_input_fmha_decode``: attention/mixed_input_fmha/mixed_input_fmha_decode.py,
  ``MixedInputFusedMultiHeadAttentionDecode.__call__`` (raw pointers) with the example's defaults:
  b 1, s_k 1024, 32/4 heads, d 512, bf16 q/o, int8 KV, f32 acc, kv_splits auto = 148 // 4 = 37.

How: the example module is imported from the exported CUTLASS tree (example files unchanged), its host
path is compiled with ``cute.compile`` inside ``irscan.capture(out=DIR, arch="sm_100a", lineinfo=True)``.
Gmem tensors are fake: ``like()`` takes ``from_dlpack`` of a CPU torch tensor of the example's shape and
permutation, applies the example's own ``mark_layout_dynamic`` / ``mark_compact_shape_dynamic`` calls,
and rebuilds that layout (static entries, i32/i64 dynamic entries, divisibility, assumed alignment) as
``make_fake_tensor`` on gmem; pointers are ``make_ptr(..., gmem, assumed_align=16)``. Device stand-ins:
``cutlass.utils.HardwareInfo`` -> 148 SMs (``get_max_active_clusters(c)`` = 148 // c), streams are
``make_fake_stream()``. Compile options are the ones each ``run()`` passes.

Run (the system python3.11 with nvidia-cutlass-dsl 4.8.1 and irscan, plus CPU torch, e.g. the venv
``python -m venv --system-site-packages /tmp/h18venv && /tmp/h18venv/bin/pip install torch==2.13.0``)::

    /tmp/h18venv/bin/python workers.py NAME OUTDIR     # one capture, NAME as above
    /tmp/h18venv/bin/python workers.py all [ROOT]      # all three, one subprocess each, ROOT/<name>
                                                       # (ROOT defaults to /tmp/h18/captures)

The CUTLASS examples tree is taken from ``$H18_SRC`` (the ``examples/python/CuTeDSL`` folder),
default /tmp/h18/src/examples/python/CuTeDSL, exported with
``git --git-dir=<mirror> archive HEAD examples/python/CuTeDSL | tar -x -C /tmp/h18/src`` (HEAD 7107b05).
Then ``python -m irscan scan --format json --all ROOT``.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ARCH = "sm_100a"
SMS = 148
SRC = Path(os.environ.get("H18_SRC", "/tmp/h18/src/examples/python/CuTeDSL"))
ATTN = SRC / "cute" / "blackwell" / "kernel" / "attention"
DEFAULT_ROOT = "/tmp/h18/captures"


# ---------------------------------------------------------------------------------------- helpers
class FakeHardwareInfo:
    """``cutlass.utils.HardwareInfo`` asks the driver; stand in a B200 (148 SMs)."""

    def __init__(self, device_id: int = 0):
        self.sms = SMS

    def get_device_multiprocessor_count(self) -> int:
        return self.sms

    def get_max_active_clusters(self, cluster_size: int = 1) -> int:
        return self.sms // cluster_size

    def get_l2_cache_size_in_bytes(self) -> int:
        return 126 * 1024 * 1024


def _stand_ins() -> None:
    import cutlass.utils

    cutlass.utils.HardwareInfo = FakeHardwareInfo  # type: ignore[misc,assignment]


def _load(rel: str) -> Any:
    """Import an example file by path as module ``bw_<stem>`` (the DSL puts the module name into kernel
    symbols; ``bw_`` is what the old holdout-18 captures carry). Its own imports (``cute.blackwell...``,
    ``helpers``) resolve against the CuTeDSL root, as its ``__main__`` sys.path line arranges."""
    if str(SRC) not in sys.path:
        sys.path.insert(0, str(SRC))
    path = ATTN / rel
    name = f"bw_{path.stem}"  # module name as in the old captures' kernel symbols (..._bw_fmha_bwd...)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


_ENTRY = re.compile(r"^(\?|-?\d+)(?:\{([^}]*)\})?$")


def _split(s: str) -> list[str]:
    return [e.strip() for e in s.strip("()").split(",")] if s.strip("()") else []


def _entry(text: str) -> Any:
    import cutlass.cute as cute

    m = _ENTRY.match(text)
    if not m:
        raise ValueError(f"cannot read layout entry {text!r}")
    if m.group(1) != "?":
        return int(m.group(1))
    attrs = (m.group(2) or "").split()
    width = 64 if "i64" in attrs else 32
    div = 1
    for a in attrs:
        if a.startswith("div="):
            div = int(a[4:])
    return cute.sym_int(width, divisibility=div)


def like(t: Any) -> Any:
    """Rebuild a runtime ``from_dlpack`` tensor (with its dynamic marks) as a fake gmem tensor."""
    from cutlass.base_dsl.enums import AddressSpace
    from cutlass.cute.runtime import make_fake_tensor

    t.load_dltensor()
    text = t._dltensor_wrapper.str  # e.g. "0x..@generic o (?,?{div=8}):(?{i64 div=8},1)"
    layout = text[text.index("(") :]
    shape_s, stride_s = layout.split("):(")
    shape = tuple(_entry(e) for e in _split(shape_s + ")"))
    stride = tuple(_entry(e) for e in _split("(" + stride_s))
    assert len(shape) == len(stride) == len(t.shape), (text, t.shape)
    for e, v in zip(shape + stride, tuple(t.shape) + tuple(t.stride), strict=True):
        assert not isinstance(e, int) or e == v, (text, t.shape, t.stride)
    return make_fake_tensor(t.element_type, shape, stride, memspace=AddressSpace.gmem, assumed_align=t._assumed_align)


def _ptr(dtype: Any, align: int = 16) -> Any:
    from cutlass.base_dsl.enums import AddressSpace
    from cutlass.cute.runtime import make_ptr

    return make_ptr(dtype, 1 << 20, AddressSpace.gmem, assumed_align=align)


def _stream() -> Any:
    from cutlass.cute.runtime import make_fake_stream

    return make_fake_stream()


# ------------------------------------------------------------------------------------ the captures
def mla_decode_fp16() -> None:
    """mla_decode_fp16.py run() with its defaults but seq_len_k 4096 (split_kv auto = 32)."""
    import cutlass
    import cutlass.cute as cute
    import cutlass.torch as cutlass_torch
    import cutlass.utils as utils
    import torch
    from cutlass.cute.runtime import from_dlpack

    _stand_ins()
    m = _load("mla/mla_decode_fp16.py")
    Mla = m.BlackwellMultiHeadLatentAttentionForwardFP16
    ceil_div = m.ceil_div

    batch_size, seq_len_q, seq_len_k, num_heads = 1, 1, 4096, 128
    latent_dim, rope_dim = 512, 64
    in_dtype = out_dtype = cutlass.Float16
    acc_dtype = lse_dtype = cutlass.Float32
    mma_qk_tiler_mn, mma_pv_tiler_mn = (128, 128), (128, 256)
    split_kv, is_persistent, is_var_seq, is_var_split_kv, page_size = -1, False, False, False, 128
    softmax_scale, output_scale, skip_correction_threshold = 0.0416, 1.0, 0.0

    assert Mla.can_implement(
        batch_size,
        seq_len_q,
        seq_len_k,
        num_heads,
        latent_dim,
        rope_dim,
        in_dtype,
        out_dtype,
        acc_dtype,
        lse_dtype,
        mma_qk_tiler_mn,
        mma_pv_tiler_mn,
        split_kv,
        is_persistent,
        is_var_seq,
        is_var_split_kv,
        page_size,
    )

    def create_data_tensor(B, HK, D, dtype, page_table=None, cache_seqs=None, is_lse=False, seq_len_q=None):
        # run()'s create_data_tensor (is_dynamic_layout=True), CPU tensors
        shape = (B, HK, D)
        if page_table is not None:
            if cache_seqs is not None:
                max_seq_len = int(torch.max(cache_seqs))
                shape = (B * ceil_div(max_seq_len, page_size), page_size, D)
            else:
                shape = (B * ceil_div(HK, page_size), page_size, D)
        if seq_len_q is not None:
            shape = (B, seq_len_q, HK, D)
        permute_order, stride_order, leading_dim = (1, 2, 0), (2, 0, 1), 1
        if is_lse:
            shape = (B, seq_len_q, HK)
            permute_order, stride_order, leading_dim = (2, 1, 0), (2, 1, 0), 0
        elif seq_len_q is not None:
            permute_order, stride_order, leading_dim = (2, 3, 1, 0), (3, 2, 0, 1), 1
        torch_dtype = cutlass_torch.dtype(dtype)
        x = torch.empty(*shape, dtype=torch_dtype).permute(permute_order)
        t = from_dlpack(x, assumed_align=16)
        t.element_type = dtype
        t = t.mark_layout_dynamic(leading_dim=leading_dim)
        if not is_lse:
            t = t.mark_compact_shape_dynamic(
                mode=leading_dim, stride_order=stride_order, divisibility=128 // dtype.width
            )
        return like(t)

    cache_seqs_ref = torch.ones(batch_size, dtype=torch.int32) * seq_len_k
    cache_seqs = like(from_dlpack(cache_seqs_ref, assumed_align=16).mark_layout_dynamic())
    page_count = ceil_div(seq_len_k, page_size)
    page_table_ref = torch.empty([batch_size, page_count], dtype=torch.int32)
    page_table = like(from_dlpack(page_table_ref.permute(1, 0), assumed_align=16).mark_layout_dynamic(leading_dim=0))

    cluster_shape_mnk = (2, 1, 1)
    max_active_clusters = utils.HardwareInfo().get_max_active_clusters(cluster_shape_mnk[0] * cluster_shape_mnk[1])
    split_kv = Mla.get_split_kv(
        batch_size, seq_len_q, int(cache_seqs_ref[0]), mma_qk_tiler_mn, max_active_clusters * cluster_shape_mnk[0]
    )
    assert split_kv == 32, split_kv
    block_split_kvs = None

    q_latent = create_data_tensor(batch_size, num_heads, latent_dim, in_dtype, seq_len_q=seq_len_q)
    q_rope = create_data_tensor(batch_size, num_heads, rope_dim, in_dtype, seq_len_q=seq_len_q)
    c_latent = create_data_tensor(
        batch_size, seq_len_k, latent_dim, in_dtype, page_table=page_table, cache_seqs=cache_seqs_ref
    )
    c_rope = create_data_tensor(
        batch_size, seq_len_k, rope_dim, in_dtype, page_table=page_table, cache_seqs=cache_seqs_ref
    )
    o = create_data_tensor(batch_size, num_heads, latent_dim, out_dtype, seq_len_q=seq_len_q)
    lse = create_data_tensor(batch_size, num_heads, 1, lse_dtype, is_lse=True, seq_len_q=seq_len_q)
    workspace_size = Mla.get_workspace_size(num_heads, seq_len_q, latent_dim, batch_size, split_kv, acc_dtype)
    assert workspace_size > 0
    workspace = like(from_dlpack(torch.empty([workspace_size], dtype=torch.int8), assumed_align=32))

    mla = Mla(
        acc_dtype,
        lse_dtype,
        mma_qk_tiler_mn,
        mma_pv_tiler_mn,
        max_active_clusters,
        page_size,
        skip_correction_threshold,
        is_persistent,
        is_var_seq,
        is_var_split_kv,
    )
    cute.compile(
        mla,
        q_latent,
        q_rope,
        c_latent,
        c_rope,
        page_table,
        o,
        lse,
        workspace,
        split_kv,
        cache_seqs,
        block_split_kvs,
        softmax_scale,
        output_scale,
        _stream(),
        options="--opt-level 2",
    )


def fmha_bwd() -> None:
    """fmha_bwd.py run(): f16, causal, b 2, s 2048, h_q 16, h_k 4, d 128 (parser defaults otherwise)."""
    import cutlass
    import cutlass.cute as cute
    import cutlass.torch as cutlass_torch
    import torch
    from cutlass import Float16, Float32, Int32
    from cutlass.cute.runtime import from_dlpack

    _stand_ins()
    m = _load("fmha/fmha_bwd.py")
    fmha_utils = m.fmha_utils

    s_q = s_k = 2048
    h_q, h_k, d, b = 16, 4, 128, 2
    is_causal, bottom_right_align = True, False
    element_dtype, acc_dtype, mma_tiler_mn = Float16, Float32, (128, 128)
    window_size_left = window_size_right = None
    h_r, orig_b = h_q // h_k, b
    scale_softmax = 1.0 / math.sqrt(d)

    def create_and_permute_tensor(shape, permute_order, dtype):
        x = torch.empty(*shape, dtype=cutlass_torch.dtype(dtype)).permute(permute_order)
        t = from_dlpack(x, assumed_align=16)
        t.element_type = dtype
        t = t.mark_layout_dynamic(leading_dim=1).mark_compact_shape_dynamic(
            mode=1, stride_order=(4, 0, 3, 2, 1), divisibility=64
        )
        return like(t)

    varlen = False
    s_q_max, s_k_max = s_q, s_k
    mask_type = fmha_utils.MaskEnum.WINDOW_MASK_BWD
    if bottom_right_align:
        mask_type = fmha_utils.MaskEnum.WINDOW_MASK_BWD_INFERENCE
    if is_causal:
        window_size_right = 0
    problem_shape = (s_q_max, s_k_max, d, ((h_r, h_k), orig_b))

    qshape, kshape, perm = (b, s_q, h_k, h_r, d), (b, s_k, h_k, 1, d), (1, 4, 3, 2, 0)
    q, dq, do, o = (create_and_permute_tensor(qshape, perm, element_dtype) for _ in range(4))
    k, dk, v, dv = (create_and_permute_tensor(kshape, perm, element_dtype) for _ in range(4))
    lse_x = torch.empty(b, h_k, h_r, s_q, dtype=cutlass_torch.dtype(acc_dtype)).permute(3, 2, 1, 0)
    lse = like(from_dlpack(lse_x, assumed_align=16).mark_layout_dynamic(leading_dim=0))

    fmha = m.BlackwellFusedMultiHeadAttentionBackward(element_dtype, acc_dtype, (*mma_tiler_mn, d), varlen, mask_type)
    workspace_size = m.BlackwellFusedMultiHeadAttentionBackward._get_workspace_size(
        s_q_max, s_k_max, d, h_q, orig_b, acc_dtype
    )
    workspace = like(
        from_dlpack(torch.zeros(workspace_size, dtype=torch.uint8), assumed_align=16).mark_layout_dynamic()
    )

    cute.compile(
        fmha,
        problem_shape,
        q,
        k,
        v,
        o,
        dq,
        dk,
        dv,
        do,
        lse,
        None,
        None,
        scale_softmax,
        window_size_left if window_size_left is None else Int32(window_size_left),
        window_size_right if window_size_right is None else Int32(window_size_right),
        workspace,
        _stream(),
        options="--opt-level=2" if cutlass.__version__[0:3] == "4.6" else "",
    )


def mixed_input_fmha_decode() -> None:
    """mixed_input_fmha_decode.py run() defaults: b 1, s_k 1024, 32/4 heads, d 512, int8 KV, kv_splits 37."""
    import cutlass
    import cutlass.cute as cute

    _stand_ins()
    m = _load("mixed_input_fmha/mixed_input_fmha_decode.py")

    batches, seqlen, heads_q, heads_k, headdim, block_scaledim, kv_splits = 1, 1024, 32, 4, 512, 512, 0
    q_dtype, kv_dtype, o_dtype, acc_dtype = cutlass.BFloat16, cutlass.Int8, cutlass.BFloat16, cutlass.Float32
    scale_q, scale_o, scale_s = 1.0, 1.0, 0.0

    grouped_heads = heads_q // heads_k
    convert_warpgroups = 1
    if headdim == 512 and grouped_heads == 8 and kv_dtype.width == 4:
        convert_warpgroups = 4
    elif headdim > 128:
        convert_warpgroups = 2
    fmha = m.MixedInputFusedMultiHeadAttentionDecode(
        headdim=headdim,
        block_scaledim=block_scaledim,
        grouped_head_tile=min(cute.round_up(grouped_heads, 8), 32),
        convert_warpgroups=convert_warpgroups,
    )
    if scale_s == 0.0:
        scale_s = 1.0 / math.sqrt(headdim)
    scale_qs = scale_q * scale_s
    if kv_splits == 0:
        sm_count = cutlass.utils.HardwareInfo().get_device_multiprocessor_count()
        sm_count = 148 if sm_count <= 0 else sm_count
        grid_yz = batches * heads_k * math.ceil(grouped_heads / fmha.grouped_head_tile)
        kv_splits = max(1, sm_count // grid_yz)
        if sm_count == 148 and grid_yz == 32:
            kv_splits = 9
    assert kv_splits == 37, kv_splits
    problem_shape = (batches, heads_q, heads_k, seqlen, headdim)
    fmha.can_implement(problem_shape, kv_splits, q_dtype, kv_dtype, o_dtype, acc_dtype)

    # run() passes only the tensors' .iterator (from_dlpack(..., assumed_align=16))
    cute.compile(
        fmha,
        problem_shape,
        kv_splits,
        _ptr(q_dtype),
        _ptr(kv_dtype),
        _ptr(kv_dtype),
        _ptr(q_dtype),
        _ptr(q_dtype),  # q, k, v, k_scale, v_scale
        _ptr(o_dtype),
        _ptr(acc_dtype),
        _ptr(acc_dtype),  # o, m, l
        _ptr(acc_dtype),
        _ptr(acc_dtype),
        _ptr(acc_dtype),  # o_partial, m_partial, l_partial
        scale_qs,
        scale_o,
        _stream(),
        options="--opt-level 2",
    )


WORKERS: dict[str, Callable[[], None]] = {
    "mla_decode_fp16": mla_decode_fp16,
    "fmha_bwd": fmha_bwd,
    "mixed_input_fmha_decode": mixed_input_fmha_decode,
}


def capture(name: str, out: str) -> None:
    """One capture in this (fresh) process: the DSL must not be imported yet."""
    assert "cutlass" not in sys.modules, "run each capture in a fresh process"
    import irscan

    with irscan.capture(out=out, arch=ARCH, lineinfo=True):
        WORKERS[name]()


def main(argv: list[str]) -> int:
    if len(argv) >= 1 and argv[0] == "all":
        root = Path(argv[1] if len(argv) > 1 else DEFAULT_ROOT)
        rc = 0
        for name in WORKERS:
            r = subprocess.run([sys.executable, __file__, name, str(root / name)])
            print(f"{name}: rc {r.returncode}", file=sys.stderr)
            rc = rc or r.returncode
        return rc
    if len(argv) != 2 or argv[0] not in WORKERS:
        print(f"usage: workers.py {{{'|'.join(WORKERS)}}} OUTDIR | workers.py all [ROOT]", file=sys.stderr)
        return 2
    capture(argv[0], argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
