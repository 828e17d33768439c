"""RMSNorm, one row per CTA, hidden size 8192 static, row count dynamic (the quack/flashinfer layout).

Covers: row-per-CTA reduction (RMSNorm), dynamic i32 row count with static row stride, dynamic
launch grid, shared memory (SmemAllocator) for the cross-warp sum, warp shuffles, vectorised
16-byte loads/stores.

x and y are (M, 8192):(8192, 1) bf16 with M = cute.sym_int(): the shape is dynamic but the compact
strides are static, and 8192 fits in i32, so mX[row, None] is row * 8192 in i32 (overflow<nsw>),
used directly as an i32 GEP index.  grid.x = M is dynamic, so ctaid.x is free.

Known answer (bug, may), one GEP per tensor (x load, y store) with the same i32 value
ctaid.x * 8192: it leaves i32 from row 262,144 (262,144 * 8192 = 2^31); row 262,143 gives
2,147,475,456.  The per-thread vector offsets (c * 256 + tid.x) * 8 < 8192 are separate GEPs.
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
x = make_fake_tensor(cutlass.BFloat16, (M, N), stride=(N, 1), assumed_align=16)
y = make_fake_tensor(cutlass.BFloat16, (M, N), stride=(N, 1), assumed_align=16)
w = make_fake_tensor(cutlass.BFloat16, (N,), stride=(1,), assumed_align=16)
cute.compile(rmsnorm, x, w, y, cutlass.Float32(1e-6))
