"""Tiled scale-copy of a static 65536 x 65536 bf16 matrix (8 GB): cute.local_tile + a TV-layout tiled copy.

Covers: tiled copy (cute.make_tiled_copy_tv, CopyUniversalOp, 128-bit vectors), cute.local_tile,
static layout, static launch grid (512 x 512 CTAs of 128 threads), register fragments.

The row stride 65536 is static and fits in i32, so the tile offset of local_tile(m, (128, 128),
(bidx, bidy)) is bidx * 8,388,608 + bidy * 128, computed in i32 (overflow<nsw>) and used as an i32
GEP index.  The per-thread partition adds its own (bounded) offsets on top.

Known answer (bug, must), the same i32 tile offset for the load (src) and the store (dst):
ctaid.x * 8,388,608 + ctaid.y * 128 with ctaid.x, ctaid.y <= 511 reaches 4,286,644,096 > 2^31 - 1.
With ctaid.y = 511 it wraps from ctaid.x = 256 (256 * 8,388,608 = 2^31); ctaid.x = 255 gives
2,139,160,448.  It stays below 2^32, so a zero-extending PTX would still address it correctly.
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_tensor

M = N = 65536
TILE = 128


@cute.kernel
def scale_copy_kernel(mS: cute.Tensor, mD: cute.Tensor, alpha: cutlass.Float32):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, bidy, _ = cute.arch.block_idx()
    gS = cute.local_tile(mS, (TILE, TILE), (bidx, bidy))
    gD = cute.local_tile(mD, (TILE, TILE), (bidx, bidy))
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), mS.element_type, num_bits_per_copy=128)
    thr_layout = cute.make_ordered_layout((8, 16), order=(1, 0))  # 128 threads, 16 across a row
    val_layout = cute.make_ordered_layout((1, 8), order=(1, 0))  # 8 x bf16 = 128 bits
    tiled_copy = cute.make_tiled_copy_tv(atom, thr_layout, val_layout)  # covers (8, 128) per step
    thr_copy = tiled_copy.get_slice(tidx)
    tS = thr_copy.partition_S(gS)
    tD = thr_copy.partition_D(gD)
    frg = cute.make_fragment_like(tS)
    cute.copy(atom, tS, frg)
    frg.store((frg.load().to(cutlass.Float32) * alpha).to(cutlass.BFloat16))
    cute.copy(atom, frg, tD)


@cute.jit
def scale_copy(mS: cute.Tensor, mD: cute.Tensor, alpha: cutlass.Float32):
    scale_copy_kernel(mS, mD, alpha).launch(grid=(M // TILE, N // TILE, 1), block=(128, 1, 1))


src = make_fake_tensor(cutlass.BFloat16, (M, N), stride=(N, 1), assumed_align=16)
dst = make_fake_tensor(cutlass.BFloat16, (M, N), stride=(N, 1), assumed_align=16)
cute.compile(scale_copy, src, dst, cutlass.Float32(2.0))
