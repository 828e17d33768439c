"""A small tensor-core GEMM: cp.async global->shared copies, a warp MMA atom (mma.sync 16x8x16), f32 epilogue.

Covers: shared memory (SmemAllocator tensors), cp.async copy atom (cpasync.CopyG2SOp, 128-bit),
tiled copy, warp MMA atom (warp.MmaF16BF16Op) and cute.gemm, cute.local_tile with a k-mode, runtime
k-loop (cutlass.range), static layout, static launch grid.

C[512, 512] f32 = A[512, 512] f16 (K-major) x B[512, 512]^T f16 (K-major).  CTA tile 64 x 64 x 32,
128 threads = 2 x 2 warps of 16x8x16 MMAs; grid 8 x 8.  Each k-step copies the A and B tiles to
shared memory with cp.async, then every warp reads its fragments from shared memory and issues MMAs.

Known answer (clean): every tensor is small and static.  The largest i32 offsets that reach a
global address are the tile offsets ctaid.x * 32,768 + kt * 32 (<= 7 * 32,768 + 15 * 32 = 229,856)
and the C tile offset ctaid.x * 32,768 + ctaid.y * 64 (<= 229,824) plus per-thread offsets below
32,768; shared-memory offsets stay below 2,048 elements per tile.
"""

import cutlass
import cutlass.cute as cute
import cutlass.memory
from cutlass.cute.runtime import make_fake_tensor

M = N = K = 512
BM, BN, BK = 64, 64, 32
THREADS = 128


@cute.kernel
def gemm_kernel(
    mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, tiled_copy: cute.TiledCopy, tiled_mma: cute.TiledMma
):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, bidy, _ = cute.arch.block_idx()
    gA = cute.local_tile(mA, (BM, BK), (bidx, None))  # (BM, BK, k)
    gB = cute.local_tile(mB, (BN, BK), (bidy, None))  # (BN, BK, k)
    gC = cute.local_tile(mC, (BM, BN), (bidx, bidy))
    smem = cutlass.memory.SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float16, cute.make_layout((BM, BK), stride=(BK, 1)), 16)
    sB = smem.allocate_tensor(cutlass.Float16, cute.make_layout((BN, BK), stride=(BK, 1)), 16)

    thr_copy = tiled_copy.get_slice(tidx)
    tAgA, tAsA = thr_copy.partition_S(gA), thr_copy.partition_D(sA)
    tBgB, tBsB = thr_copy.partition_S(gB), thr_copy.partition_D(sB)

    thr_mma = tiled_mma.get_slice(tidx)
    tCsA, tCsB = thr_mma.partition_A(sA), thr_mma.partition_B(sB)
    tCrA, tCrB = tiled_mma.make_fragment_A(tCsA), tiled_mma.make_fragment_B(tCsB)
    tCgC = thr_mma.partition_C(gC)
    tCrC = tiled_mma.make_fragment_C(tCgC)
    tCrC.fill(0.0)

    for kt in cutlass.range(K // BK):
        cute.copy(tiled_copy, tAgA[None, None, None, kt], tAsA)
        cute.copy(tiled_copy, tBgB[None, None, None, kt], tBsB)
        cute.arch.cp_async_commit_group()
        cute.arch.cp_async_wait_group(0)
        cute.arch.sync_threads()
        cute.autovec_copy(tCsA, tCrA)
        cute.autovec_copy(tCsB, tCrB)
        cute.gemm(tiled_mma, tCrC, tCrA, tCrB, tCrC)
        cute.arch.sync_threads()
    cute.autovec_copy(tCrC, tCgC)


@cute.jit
def gemm(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    atom = cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), cutlass.Float16, num_bits_per_copy=128)
    # 128 threads as (32, 4): 4 threads x 8 halves cover the 32-wide k of a row, 32 rows per step
    tiled_copy = cute.make_tiled_copy_tv(atom, cute.make_layout((32, 4), stride=(4, 1)), cute.make_layout((1, 8)))
    mma_op = cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16))
    tiled_mma = cute.make_tiled_mma(mma_op, (2, 2, 1), permutation_mnk=(32, 32, 16))
    gemm_kernel(mA, mB, mC, tiled_copy, tiled_mma).launch(grid=(M // BM, N // BN, 1), block=(THREADS, 1, 1))


a = make_fake_tensor(cutlass.Float16, (M, K), stride=(K, 1), assumed_align=16)
b = make_fake_tensor(cutlass.Float16, (N, K), stride=(K, 1), assumed_align=16)
c = make_fake_tensor(cutlass.Float32, (M, N), stride=(N, 1), assumed_align=16)
cute.compile(gemm, a, b, c)
