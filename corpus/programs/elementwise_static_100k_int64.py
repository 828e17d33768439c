"""The fix for elementwise_static_100k.py: the row coordinate is a cutlass.Int64.

Covers: elementwise, static layout, static launch grid, cutlass.Int64 cast (the fix).

Same 40 GB static (100000, 100000):(100000, 1) f32 copy, but row = cutlass.Int64(block_idx.x).  The
layout arithmetic runs at the wider of coordinate and stride, so row * 100000 is an i64 multiply
(sext of ctaid.x, the stride as an i64 constant) and col is sign-extended before the i64 add.

Known answer (clean): the only i32 arithmetic left on the way to an address is
col = ctaid.y * 160 + tid.x <= 624 * 160 + 159 = 99,999 (static launch), sign-extended into the
i64 sum for both the load and the store.
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_tensor

M = N = 100_000
THREADS = 160  # 625 * 160 = 100000: every column is covered exactly


@cute.kernel
def copy_kernel(src: cute.Tensor, dst: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, bidy, _ = cute.arch.block_idx()
    row = cutlass.Int64(bidx)  # the fix
    col = bidy * THREADS + tidx
    dst[row, col] = src[row, col]


@cute.jit
def copy_host(src: cute.Tensor, dst: cute.Tensor):
    copy_kernel(src, dst).launch(grid=(M, N // THREADS, 1), block=(THREADS, 1, 1))


src = make_fake_tensor(cutlass.Float32, (M, N), stride=(N, 1), assumed_align=16)
dst = make_fake_tensor(cutlass.Float32, (M, N), stride=(N, 1), assumed_align=16)
cute.compile(copy_host, src, dst)
