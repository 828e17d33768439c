"""More of quack's CuTe DSL kernels, compiled with no GPU (worker side of regen.py's ``quack_*``
captures beyond the first four, which live in regen.py itself).

Same recipe as regen.py's quack workers: quack's compile functions are ``@jit_cache``d; calling the
undecorated function through ``__wrapped__`` builds quack's own fake tensors (``cute.sym_int()``
batch, the divisibility quack derives from N) and calls ``cute.compile`` for real.  Each function
takes the arch and returns a zero-argument callable that makes the compile calls.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable


def quack_rmsnorm_bwd(arch: str) -> Callable[[], None]:
    """RMSNorm backward bf16 x/dout/dx, f32 weight, N=4096, with dw_partial (quack's training path)."""
    from cutlass import BFloat16, Float32

    mod = importlib.import_module("quack.rmsnorm")
    # N, dtype, dout, dx, weight dtypes, has_db_partial, dres, dres_out dtypes, has_dw_partial
    return lambda: mod._compile_rmsnorm_bwd.__wrapped__(
        4096, BFloat16, BFloat16, BFloat16, Float32, False, None, None, True
    )


def quack_softmax_bwd(arch: str) -> Callable[[], None]:
    """Softmax backward bf16, N=4096."""
    from cutlass import BFloat16
    from quack.softmax import SoftmaxBackward

    return lambda: SoftmaxBackward.compile.__wrapped__(BFloat16, BFloat16, BFloat16, 4096)


def quack_cross_entropy_bwd(arch: str) -> Callable[[], None]:
    """CrossEntropy backward bf16 logits, i64 target, N=32768 (a 32k vocabulary), no weight."""
    from cutlass import BFloat16, Int64
    from quack.cross_entropy import CrossEntropyBackward

    return lambda: CrossEntropyBackward.compile.__wrapped__(BFloat16, Int64, 32768, None)


def quack_topk(arch: str) -> Callable[[], None]:
    """TopK forward and backward, bf16, N=4096, k=32, with softmax (MoE-router style)."""
    from cutlass import BFloat16
    from quack.topk import TopK, TopKBackward

    def run() -> None:
        TopK.compile.__wrapped__(BFloat16, 4096, 32, True)
        TopKBackward.compile.__wrapped__(BFloat16, BFloat16, BFloat16, 4096, 32, True)

    return run


def quack_rotary(arch: str) -> Callable[[], None]:
    """Rotary embedding bf16, head dim 128, f32 cos/sin: fixed-length with i32 seqlen offsets, and
    varlen (i32 cu_seqlens)."""
    from cutlass import BFloat16, Float32, Int32
    from quack.rotary import RotaryKernel

    def run() -> None:
        # dtype, cossin dtype, seqlen_offsets dtype, cu_seqlens dtype, dim, interleaved, conjugate
        RotaryKernel.compile.__wrapped__(BFloat16, Float32, Int32, None, 128, False, False)
        RotaryKernel.compile.__wrapped__(BFloat16, Float32, None, Int32, 128, False, False)

    return run


def quack_reduce(arch: str) -> Callable[[], None]:
    """Two small reductions: the split-K reduce of quack's GEMM (bf16 out, split 4, 4-element vectors,
    with C and a row vector; beta from a pointer) and the RMS final reduce (bf16, N=4096)."""
    from cutlass import BFloat16

    sk = importlib.import_module("quack.split_k_reduce")
    rf = importlib.import_module("quack.rms_final_reduce")

    def run() -> None:
        # out dtype, split_k, add_to_output, vec_elems, alpha_mode, beta_mode, c, rowvec, colvec dtypes
        sk._compile_split_k_reduce.__wrapped__(BFloat16, 4, False, 4, 1, 2, BFloat16, BFloat16, None)
        rf._compile_rms_final_reduce.__wrapped__(BFloat16, 4096)

    return run


def quack_gemm_varlen(arch: str) -> Callable[[], None]:
    """quack GEMM sm90 with variable-length M (cu_seqlens_m, MoE-style grouped rows) and a row-vector
    epilogue (bf16 A/B/D, f32 rowvec), tile 128x192, cluster 1x1, persistent."""
    from cutlass import BFloat16, Float32

    gemm = importlib.import_module("quack.gemm")
    from quack.gemm_config import SplitKMode
    from quack.rounding import RoundingMode

    cap = (9, 0) if arch.startswith("sm_90") else (10, 0)
    return lambda: gemm._compile_gemm.__wrapped__(
        BFloat16, BFloat16, BFloat16, None,  # a, b, d, c dtypes
        "k", "k", "n", None,  # a, b, d, c majors
        (128, 192), (1, 1, 1),  # tile_shape_mn, cluster_shape_mnk
        False, True, False,  # pingpong, persistent, is_dynamic_persistent
        Float32, None, 0,  # rowvec, colvec dtypes, colvec_ndim
        0, 0, False,  # alpha_mode, beta_mode, add_to_output
        None, True, False, False, False, False,  # concat_layout, varlen_m/k, gather_A, tma_gather, batch_idx_permute
        cap, RoundingMode.RN, 0, None,  # device_capacity, rounding_mode, sr_seed_mode, num_warps
        split_k_mode=SplitKMode.SERIAL,
    )  # fmt: skip
