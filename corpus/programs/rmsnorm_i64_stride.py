"""The fixed form of rmsnorm_row_per_cta.py: row strides are 64-bit symbols (cute.sym_int64).

Covers: row-per-CTA reduction (RMSNorm), dynamic i32 row count, dynamic i64 strides (the
flashinfer #3005 fix, 0.6.8), dynamic launch grid, shared memory (SmemAllocator), warp shuffles,
vectorised 16-byte loads/stores.

Same kernel as rmsnorm_row_per_cta.py; x and y are (M, 8192):(?{i64, div=8}, 1).  The row offset is
sext(ctaid.x) * stride in i64, so the free ctaid.x of the dynamic grid never meets i32 arithmetic.

Known answer (clean): the i32 values that reach addresses are per-thread offsets bounded by the
block (tid.x * 8 + c * 2048 < 8192 for the global vectors, tid.x / 32 < 8 and the loop index < 2
for the shared-memory partial sums).
"""

import cutlass
import cutlass.cute as cute
import cutlass.memory
from cutlass.cute.runtime import make_fake_tensor

N = 8192
THREADS, VEC = 256, 8
CHUNKS = N // (THREADS * VEC)  # 4 vectors of 8 per thread
WARPS = THREADS // 32


@cute.kernel
def rmsnorm_kernel(mX: cute.Tensor, mW: cute.Tensor, mY: cute.Tensor, eps: cutlass.Float32):
    tidx, _, _ = cute.arch.thread_idx()
    row, _, _ = cute.arch.block_idx()
    smem = cutlass.memory.SmemAllocator()
    partial = smem.allocate_tensor(cutlass.Float32, cute.make_layout(WARPS), byte_alignment=16)
    x_vecs = cute.zipped_divide(mX[row, None], (VEC,))  # ((8), 1024)
    y_vecs = cute.zipped_divide(mY[row, None], (VEC,))
    w_vecs = cute.zipped_divide(mW, (VEC,))
    xs = []
    ss = cutlass.Float32(0.0)
    for c in cutlass.range_constexpr(CHUNKS):
        xv = x_vecs[None, c * THREADS + tidx].load().to(cutlass.Float32)
        xs.append(xv)
        ss += (xv * xv).reduce(cute.ReductionOp.ADD, 0.0, 0)
    ss = cute.arch.warp_reduction_sum(ss)
    if tidx % 32 == 0:
        partial[tidx // 32] = ss
    cute.arch.sync_threads()
    total = partial.load().reduce(cute.ReductionOp.ADD, 0.0, 0)
    rstd = cute.math.rsqrt(total / N + eps)
    for c in cutlass.range_constexpr(CHUNKS):
        wv = w_vecs[None, c * THREADS + tidx].load().to(cutlass.Float32)
        y_vecs[None, c * THREADS + tidx].store((xs[c] * rstd * wv).to(cutlass.BFloat16))


@cute.jit
def rmsnorm(mX: cute.Tensor, mW: cute.Tensor, mY: cute.Tensor, eps: cutlass.Float32):
    rmsnorm_kernel(mX, mW, mY, eps).launch(grid=(mX.shape[0], 1, 1), block=(THREADS, 1, 1))


M = cute.sym_int()
# flashinfer 0.6.8's fix for #3005: the row strides are 64-bit symbols.
x = make_fake_tensor(cutlass.BFloat16, (M, N), stride=(cute.sym_int64(divisibility=8), 1), assumed_align=16)
y = make_fake_tensor(cutlass.BFloat16, (M, N), stride=(cute.sym_int64(divisibility=8), 1), assumed_align=16)
w = make_fake_tensor(cutlass.BFloat16, (N,), stride=(1,), assumed_align=16)
cute.compile(rmsnorm, x, w, y, cutlass.Float32(1e-6))
