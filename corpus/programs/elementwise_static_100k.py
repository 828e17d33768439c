"""Elementwise copy of a static (100000, 100000):(100000, 1) f32 tensor (40 GB), one element per thread.

Covers: elementwise, static layout, static launch grid, block_idx/thread_idx indexing.

The layout is fully static and its row stride 100000 fits in i32, so src[row, col] is computed as
row * 100000 + col in i32 (overflow<nsw>) and used directly as an i32 GEP index (implicit sext).
The launch is static: grid (100000, 625, 1) x block (160, 1, 1), so row = ctaid.x <= 99999 and
col = ctaid.y * 160 + tid.x <= 624 * 160 + 159 = 99999, with no bounds check needed.

Known answer (bug, must), the same i32 value indexes the load and the store:
ctaid.x * 100000 + ctaid.y * 160 + tid.x reaches 99999 * 100000 + 99999 = 9,999,999,999 > 2^31 - 1.
With col at its largest (99999) it wraps from row 21474 (21474 * 100000 + 99999 = 2,147,499,999);
from row 21475 every column wraps.  Today's PTX zero-extends (mad.lo.s32 + mul.wide.u32), so it
wraps at 2^32 instead: from row 42949 (42949 * 100000 + 99999 = 4,294,999,999 > 2^32 - 1).
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
    row = bidx
    col = bidy * THREADS + tidx
    dst[row, col] = src[row, col]


@cute.jit
def copy_host(src: cute.Tensor, dst: cute.Tensor):
    copy_kernel(src, dst).launch(grid=(M, N // THREADS, 1), block=(THREADS, 1, 1))


src = make_fake_tensor(cutlass.Float32, (M, N), stride=(N, 1), assumed_align=16)
dst = make_fake_tensor(cutlass.Float32, (M, N), stride=(N, 1), assumed_align=16)
cute.compile(copy_host, src, dst)
