"""A thirteenth holdout set of real CuTe DSL kernels, compiled with no GPU (worker side of regen.py's
holdout-13 captures): kernels of flashinfer-python 0.7.4 and quack-kernels 0.6.5 in no earlier capture,
triaged by hand before any analysis work looked at them.

Same recipe as holdout3_workers.py (flashinfer_workers.py's :func:`pretend_gpu`): each function takes the
arch and returns a zero-argument callable that makes the kernel's real ``cute.compile`` calls through the
package's own entry point. flashinfer's token-sparse and SDSA-indexer ops launch through
``flashinfer/cute_dsl/launch.py``, which compiles once per argument kind (dtype, rank, alignment, whether
a tensor spans 2^31 elements) with symbolic extents and row strides and a grid of runtime Int32s; here the
public op is called on ``FakeTensorMode`` CUDA tensors (only shapes, strides and dtypes are read), the
disk-cache loader compiles and caches nothing (``fw._compile_only``), ``torch.cuda.device`` is a no-op
and nothing is launched.
"""

from __future__ import annotations

import contextlib
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


fw = _sibling("flashinfer_workers")


def _fi_launch(arch: str) -> Any:
    """flashinfer's ``cute_dsl.launch`` made compile-only (see the module docstring); its ``compiled``
    cache is cleared so each call compiles."""
    fw.pretend_gpu(arch)
    import torch

    torch.cuda.device = lambda device=None: contextlib.nullcontext()
    torch.cuda.is_current_stream_capturing = lambda: False
    launch = importlib.import_module("flashinfer.cute_dsl.launch")
    launch.build_and_load_cute_dsl_kernel = fw._compile_only
    launch.compiled.cache_clear()
    return launch


def _smem_per_sm() -> None:
    """The DSL asks the driver for the shared memory per SM (for ``smem.max_smem_per_mp``) when a kernel
    launches with ``min_blocks_per_mp > 1``; answer as a B200 would (228 KiB)."""
    from cutlass.base_dsl.runtime import cuda as cuda_helpers

    attr = cuda_helpers.cuda.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
    inner = cuda_helpers.get_device_attribute

    def attribute(attribute: Any, device_id: int = 0) -> Any:
        return 233_472 if attribute == attr else inner(attribute, device_id)

    cuda_helpers.get_device_attribute = attribute


def _fake(*shape: int, dtype: Any = None) -> Any:
    import torch

    return torch.empty(*shape, dtype=dtype or torch.int32, device="cuda")


# ------------------------------------------------------------------------------ flashinfer, sm_100a
def fi_token_sparse(arch: str) -> Callable[[], None]:
    """flashinfer token-sparse attention inputs (token_sparse.py) through the public ops:
    ``token_sparse_kv_indices`` (kv_indices_kernel: 1024 tokens x top-2048 key positions, 2 requests per
    token, block table 64 requests x 1024 pages of 64, K/V slot lists [2048, 2, 2048]) and
    ``group_union_masks`` (union_masks_kernel: groups of 8 of those tokens, 65,536 keys, union [128,
    16384] slots, bit masks [1024, 512] words). All int32, contiguous."""
    launch = _fi_launch(arch)
    from torch._subclasses.fake_tensor import FakeTensorMode

    ts = importlib.import_module("flashinfer.token_sparse")

    def run() -> None:
        launch.compiled.cache_clear()
        with FakeTensorMode():
            t, k, reqs, pages = 1024, 2048, 64, 1024
            pos, req, table = _fake(t, k), _fake(t), _fake(reqs, pages)
            ts.token_sparse_kv_indices(pos, req, table, block_tables=_fake(2 * t, 2, k), seq_lens=_fake(2 * t),
                                       requests_per_token=2)  # fmt: skip
            groups = t // 8
            ts.group_union_masks(pos, _fake(t), _fake(groups), _fake(groups), table, union=_fake(groups, 16384),
                                 union_sizes=_fake(groups), mask=_fake(t, 512), num_keys=65536)  # fmt: skip

    return run


def fi_sdsa_scores(arch: str) -> Callable[[], None]:
    """flashinfer SDSA indexer scorer (sdsa/indexer_sm100.py ``PagedScorer``, tcgen05) through the public
    ``indexer_scores`` in decode mode: 64 request groups of 2 query rows, one head of 128, paged keys
    (pages of 64; 4096 pages), block table 64 x 512, f32 scores [128, 32768]: BF16 keys; NVFP4 keys with
    E4M3 scales (one per 16 values). The DSL's driver query of shared memory per SM answers 228 KiB."""
    launch = _fi_launch(arch)
    _smem_per_sm()
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    sdsa = importlib.import_module("flashinfer.sdsa.indexer")
    sm100 = importlib.import_module("flashinfer.sdsa.indexer_sm100")
    bf, u8, e4 = torch.bfloat16, torch.uint8, torch.float8_e4m3fn

    def run() -> None:
        launch.compiled.cache_clear()
        sm100.scorers.cache_clear()
        with FakeTensorMode():
            groups, rows, pages, ctx = 64, 2, 4096, 32768
            tables = (_fake(groups, 512), _fake(groups))
            for nvfp4 in (False, True):
                d, dt = (64, u8) if nvfp4 else (128, bf)
                q, kc = _fake(groups * rows, d, dtype=dt), _fake(pages, 64, d, dtype=dt)
                scales = dict(query_scales=_fake(groups * rows, 8, dtype=e4), key_scales=_fake(pages, 64, 8, dtype=e4))
                sdsa.indexer_scores(q, kc, tables[0], tables[1], requests=_fake(groups),
                                    scores=_fake(groups * rows, ctx, dtype=torch.float32),
                                    **(scales if nvfp4 else {}))  # fmt: skip

    return run


def fi_sdsa_select(arch: str) -> Callable[[], None]:
    """flashinfer SDSA indexer threshold select (``PagedScorer`` in select mode, tcgen05) through the public
    ``indexer_threshold_select``: BF16, 32 query tiles of 128 rows (4096 rows), paged keys (8192 pages of
    64), block table 8 x 1024, context 65,536, top-2048 with 2048 candidate slots, with the repair
    (arrivals, ranges)."""
    launch = _fi_launch(arch)
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    sdsa = importlib.import_module("flashinfer.sdsa.indexer")
    sm100 = importlib.import_module("flashinfer.sdsa.indexer_sm100")
    bf = torch.bfloat16

    def run() -> None:
        launch.compiled.cache_clear()
        sm100.scorers.cache_clear()
        with FakeTensorMode():
            tiles, pages, top = 32, 8192, 2048
            rows = 128 * tiles
            sdsa.indexer_threshold_select(
                _fake(rows, 128, dtype=bf), _fake(pages, 64, 128, dtype=bf), _fake(rows), _fake(tiles),
                _fake(8, 1024), thresholds=_fake(rows, dtype=torch.float32), counters=_fake(rows, 2),
                candidates=_fake(rows, 2 * top, 2), max_context=65536, top_k=top, arrivals=_fake(tiles),
                ranges=_fake(2, rows),
            )  # fmt: skip

    return run


def fi_sdsa_topk(arch: str) -> Callable[[], None]:
    """flashinfer SDSA indexer's small kernels (sdsa/indexer_sm100.py) through the public ops:
    ``thresholds_from_sample`` (thresholds_kernel: 4096 rows, 1024 samples, top 16 sample positions),
    ``top_k_from_candidates`` (candidate_top_k_kernel: 4096 rows x 4096 (key, score) slots, top-2048), and
    ``gather_key_sample`` (key_sample_kernel: BF16 paged keys (8192 pages of 64), 8 requests x 1024
    samples, 16 samples per run of 4 pages). All int32 / f32 / bf16, contiguous."""
    launch = _fi_launch(arch)
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    sdsa = importlib.import_module("flashinfer.sdsa.indexer")
    f32, bf = torch.float32, torch.bfloat16

    def run() -> None:
        launch.compiled.cache_clear()
        with FakeTensorMode():
            rows = 4096
            sdsa.thresholds_from_sample(_fake(rows, 1024, dtype=f32), _fake(rows, 16),
                                        thresholds=_fake(rows, dtype=f32), counters=_fake(rows, 2))  # fmt: skip
            sdsa.top_k_from_candidates(_fake(rows, 4096, 2), _fake(2, rows), top_keys=_fake(rows, 2048))
            sdsa.gather_key_sample(_fake(8192, 64, 128, dtype=bf), _fake(8, 1024), _fake(1024, dtype=torch.uint8),
                                   _fake(8), sample_keys=_fake(8, 1024, 128, dtype=bf), samples_per_run=16,
                                   pages_per_run=4)  # fmt: skip

    return run


def fi_sdsa_qk_write(arch: str) -> Callable[[], None]:
    """flashinfer SDSA indexer NVFP4 quantize-write (index_qk_write_kernel) through the public
    ``quantize_write_index_qk_nvfp4``: BF16 keys [4096, 128] with int64 cache slots into a paged uint8 key
    cache [8192, 64, 64] + E4M3 scales [8192, 64, 8], BF16 queries [512, 128] with int64 rows into packed
    rows [512, 64] + scales [512, 8]."""
    launch = _fi_launch(arch)
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    sdsa = importlib.import_module("flashinfer.sdsa.indexer")
    bf, i64, u8, e4 = torch.bfloat16, torch.int64, torch.uint8, torch.float8_e4m3fn

    def run() -> None:
        launch.compiled.cache_clear()
        with FakeTensorMode():
            t, q, pages = 4096, 512, 8192
            sdsa.quantize_write_index_qk_nvfp4(
                _fake(t, 128, dtype=bf), _fake(t, dtype=i64), _fake(q, 128, dtype=bf), _fake(q, dtype=i64),
                key_cache=_fake(pages, 64, 64, dtype=u8), key_scales=_fake(pages, 64, 8, dtype=e4),
                packed_query=_fake(q, 64, dtype=u8), query_scales=_fake(q, 8, dtype=e4),
            )  # fmt: skip

    return run


# ----------------------------------------------------------------------------------- quack, sm_90a
def quack_gemm_act(arch: str) -> Callable[[], None]:
    """quack's GEMM with a fused activation epilogue (gemm_interface ``gemm_act``'s mod,
    epilogue/library.py ``linear_act_mod``: D = A @ B + bias row vector, PostAct = act(D)), compiled
    through the mod's ``plan`` (resolve and compile, no launch) on ``FakeTensorMode`` CUDA tensors, the
    per-arch default config: bf16 A (4096, 4096) K-major, B (4096, 8192), bf16 bias (8192,), bf16 D and
    PostAct (4096, 8192): GELU (tanh approximation); and the gated SwiGLU form (``gemm_gated``: PostAct
    (4096, 4096) from interleaved gate/up columns), no bias."""
    fw.pretend_gpu(arch)
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    _sibling("holdout4_workers")._hardware()
    lib = importlib.import_module("quack.epilogue.library")
    bf = torch.bfloat16

    def run() -> None:
        with FakeTensorMode():
            m, n, k = 4096, 8192, 4096
            a, b = torch.empty(m, k, dtype=bf, device="cuda"), torch.empty(k, n, dtype=bf, device="cuda")
            d, post = (torch.empty(m, n, dtype=bf, device="cuda") for _ in range(2))
            bias = torch.empty(n, dtype=bf, device="cuda")
            mod = lib.linear_act_mod("gelu_tanh_approx", gated=False, has_c=False, has_rowvec=True, has_colvec=False)
            mod.plan(a, b, out={"D": d, "mAuxOut": post}, mRowVecBroadcast=bias)
            gated = lib.linear_act_mod("swiglu", gated=True, has_c=False, has_rowvec=False, has_colvec=False)
            gated.plan(a, b, out={"D": d, "mAuxOut": torch.empty(m, n // 2, dtype=bf, device="cuda")})

    return run


# ------------------------------------------------------------------------------ flashinfer, sm_100a
def fi_gdn_wy_decode(arch: str) -> Callable[[], None]:
    """flashinfer GDN multi-token decode, WY-parallel output-only kernel with a frozen bf16 state
    (gdn_kernels/gdn_decode_bf16_wy_output_only.py ``gated_delta_rule_mtp``: TMA H tile, SW128 swizzle,
    inline-PTX loads/stores on raw addresses), on CPU tensors typed as device memory
    (flashinfer_workers.py ``_patch_gdn``): B=8 requests, T=8 tokens (the native-T path), H=16 q/k heads,
    HV=32 v heads, K=V=128, a state pool of 64 (pool, HV, V, K) bf16 with int32 state indices. Its
    compiled-kernel cache answers a no-op for the launch that follows the compile."""
    fw.pretend_gpu(arch)
    _smem_per_sm()
    import torch

    wy = importlib.import_module("flashinfer.gdn_kernels.gdn_decode_bf16_wy_output_only")
    fw._patch_gdn(wy)

    class _NoLaunch(dict):  # type: ignore[type-arg]
        def __getitem__(self, key: Any) -> Any:
            return lambda *args: None

    bf = torch.bfloat16

    def run() -> None:
        wy._CACHE = _NoLaunch()
        b, t, h, hv, d, pool = 8, 8, 16, 32, 128, 64
        wy.gated_delta_rule_mtp(
            A_log=torch.zeros(hv), a=torch.zeros(b, t, hv, dtype=bf), dt_bias=torch.zeros(hv),
            q=torch.zeros(b, t, h, d, dtype=bf), k=torch.zeros(b, t, h, d, dtype=bf),
            v=torch.zeros(b, t, hv, d, dtype=bf), b=torch.zeros(b, t, hv, dtype=bf),
            initial_state_source=torch.zeros(pool, hv, d, d, dtype=bf),
            initial_state_indices=torch.arange(b, dtype=torch.int32), output=torch.zeros(b, t, hv, d, dtype=bf),
        )  # fmt: skip

    return run


# ---------------------------------------------------------------------------------- quack, sm_100a
def quack_gemm_dact(arch: str) -> Callable[[], None]:
    """quack's GEMM with the activation-backward epilogue (gemm_interface ``gemm_dact``'s mod,
    epilogue/library.py ``dact_mod``: dX = (dOut @ W^T) * act'(PreAct), PostAct = act(PreAct) recomputed,
    optional per-row scale and its colvec reduce), through the mod's ``plan`` on ``FakeTensorMode`` CUDA
    tensors, the per-arch default config (GemmSm100): bf16 dOut (8192, 4096), W^T (4096, 8192), PreAct /
    dX / PostAct (8192, 8192): ReLU^2 plain; SiLU with an f32 row scale (8192,) and its f32 reduce."""
    fw.pretend_gpu(arch)
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    _sibling("holdout4_workers")._hardware()
    lib = importlib.import_module("quack.epilogue.library")
    bf = torch.bfloat16

    def run() -> None:
        with FakeTensorMode():
            m, n, k = 8192, 8192, 4096
            a, b = torch.empty(m, k, dtype=bf, device="cuda"), torch.empty(k, n, dtype=bf, device="cuda")
            pre, dx, post = (torch.empty(m, n, dtype=bf, device="cuda") for _ in range(3))
            lib.dact_mod("relu_sq").plan(a, b, pre, out={"D": dx, "mAuxOut": post})
            scale = torch.empty(m, dtype=torch.float32, device="cuda")
            mod = lib.dact_mod("silu", has_scale=True, has_reduce=True)
            mod.plan(a, b, pre, out={"D": dx, "mAuxOut": post}, mColVecBroadcast=scale)

    return run
