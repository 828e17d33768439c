"""Row softmax, one warp per row and four rows per CTA, over a dynamic number of rows with i64 strides.

Covers: softmax (row max + row sum), warp shuffles, cute.local_tile, dynamic i32 row count,
dynamic i64 row stride (the default for dynamic strides since CuTe DSL 4.3), dynamic launch grid,
vectorised 16-byte loads/stores, row predication.

x and y are (M, 512) f32 with M = cute.sym_int() and strides (?{i64}, 1).  Each CTA takes the tile
local_tile(x, (4, 512), (bidx, 0)); warp w normalises row w of it, lane l owns the 16-byte vectors
l, l + 32, l + 64, l + 96.

Known answer (clean): the tile offset is sext(ctaid.x) * (4 * stride) and the row offset
sext(warp) * stride, both i64.  The remaining i32 arithmetic on the way to an address is bounded by
the block: (k * 32 + lane) * 4 < 512 for the vector offsets.  ctaid.x * 4 + warp (i32, unbounded)
appears only in the row < M comparison, not in an address.
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_tensor

N = 512
ROWS = 4  # warps per CTA, one row each
VEC = 4  # 4 x f32 = 16 bytes
PER_LANE = N // (32 * VEC)  # 4 vectors per lane


@cute.kernel
def softmax_kernel(mX: cute.Tensor, mY: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    warp, lane = tidx // 32, tidx % 32
    gX = cute.local_tile(mX, (ROWS, N), (bidx, 0))
    gY = cute.local_tile(mY, (ROWS, N), (bidx, 0))
    x_vecs = cute.zipped_divide(gX[warp, None], (VEC,))  # ((4), 128)
    y_vecs = cute.zipped_divide(gY[warp, None], (VEC,))
    if bidx * ROWS + warp < mX.shape[0]:
        xs = [x_vecs[None, k * 32 + lane].load() for k in range(PER_LANE)]
        m = -cutlass.Float32.inf
        for k in cutlass.range_constexpr(PER_LANE):
            m = cute.arch.fmax(m, xs[k].reduce(cute.ReductionOp.MAX, -cutlass.Float32.inf, 0))
        m = cute.arch.warp_reduction_max(m)
        es = [cute.math.exp(xs[k] - m) for k in range(PER_LANE)]
        s = cutlass.Float32(0.0)
        for k in cutlass.range_constexpr(PER_LANE):
            s += es[k].reduce(cute.ReductionOp.ADD, 0.0, 0)
        s = cute.arch.warp_reduction_sum(s)
        for k in cutlass.range_constexpr(PER_LANE):
            y_vecs[None, k * 32 + lane].store(es[k] / s)


@cute.jit
def softmax(mX: cute.Tensor, mY: cute.Tensor):
    grid = (cute.ceil_div(mX.shape[0], ROWS), 1, 1)
    softmax_kernel(mX, mY).launch(grid=grid, block=(ROWS * 32, 1, 1))


M = cute.sym_int()
x = make_fake_tensor(cutlass.Float32, (M, N), stride=(cute.sym_int64(divisibility=4), 1), assumed_align=16)
y = make_fake_tensor(cutlass.Float32, (M, N), stride=(cute.sym_int64(divisibility=4), 1), assumed_align=16)
cute.compile(softmax, x, y)
