"""A Hopper TMA tile copy: cp.async.bulk.tensor global->shared with an mbarrier, then TMA shared->global.

Covers: TMA (cpasync.make_tiled_tma_atom, CopyBulkTensorTileG2SOp / CopyBulkTensorTileS2GOp,
tma_partition), mbarrier, shared memory, sm_90a, dynamic i32 shapes, dynamic i64 strides, dynamic
launch grid.

dst = src for (M, N) bf16 tensors with layout (?, ?):(?{i64}, 1), in (64, 64) tiles, one tile per
CTA of 128 threads.  Thread 0 issues one TMA load into shared memory and, after the mbarrier
completes, one TMA store back to global memory.

Known answer (clean): TMA addresses through a descriptor (built on the host) plus i32 tile
coordinates (ctaid.x * 64, ctaid.y * 64); no global-memory GEP is computed in the kernel.  The only
address arithmetic is in shared memory (the tile and the mbarrier, offsets below 8,200 bytes).
"""

import cutlass
import cutlass.cute as cute
import cutlass.memory
from cutlass.cute.nvgpu import cpasync
from cutlass.cute.runtime import make_fake_tensor

TILE = (64, 64)
TILE_BYTES = 64 * 64 * 2


@cute.kernel
def tma_copy_kernel(
    load_atom: cute.CopyAtom,
    tma_src: cute.Tensor,
    store_atom: cute.CopyAtom,
    tma_dst: cute.Tensor,
    smem_layout: cute.Layout,
):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, bidy, _ = cute.arch.block_idx()
    smem = cutlass.memory.SmemAllocator()
    sT = smem.allocate_tensor(cutlass.BFloat16, smem_layout, 128)
    mbar = smem.allocate_array(cutlass.Int64, 1)
    gS = cute.local_tile(tma_src, TILE, (bidx, bidy))
    gD = cute.local_tile(tma_dst, TILE, (bidx, bidy))
    tSs, tSg = cpasync.tma_partition(
        load_atom, 0, cute.make_layout(1), cute.group_modes(sT, 0, 2), cute.group_modes(gS, 0, 2)
    )
    tDs, tDg = cpasync.tma_partition(
        store_atom, 0, cute.make_layout(1), cute.group_modes(sT, 0, 2), cute.group_modes(gD, 0, 2)
    )
    if tidx == 0:
        cute.arch.mbarrier_init(mbar, 1)
        cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(mbar, TILE_BYTES)
        cute.copy(load_atom, tSg, tSs, tma_bar_ptr=mbar)
    cute.arch.mbarrier_wait(mbar, 0)
    cute.arch.sync_threads()
    if tidx == 0:
        cute.copy(store_atom, tDs, tDg)
        cute.arch.cp_async_bulk_commit_group()
        cute.arch.cp_async_bulk_wait_group(0, read=True)


@cute.jit
def tma_copy(src: cute.Tensor, dst: cute.Tensor):
    smem_layout = cute.make_layout(TILE, stride=(TILE[1], 1))
    load_atom, tma_src = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), src, smem_layout, TILE)
    store_atom, tma_dst = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), dst, smem_layout, TILE)
    grid = (cute.ceil_div(src.shape[0], TILE[0]), cute.ceil_div(src.shape[1], TILE[1]), 1)
    tma_copy_kernel(load_atom, tma_src, store_atom, tma_dst, smem_layout).launch(grid=grid, block=(128, 1, 1))


M, N = cute.sym_int(), cute.sym_int(divisibility=8)
src = make_fake_tensor(cutlass.BFloat16, (M, N), stride=(cute.sym_int64(divisibility=8), 1), assumed_align=16)
dst = make_fake_tensor(cutlass.BFloat16, (M, N), stride=(cute.sym_int64(divisibility=8), 1), assumed_align=16)
cute.compile(tma_copy, src, dst)
