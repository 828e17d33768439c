"""Vectorised copy of a row-pitched [8192, 8192] bf16 matrix whose row pitch is a 32-bit dynamic stride.

Covers: elementwise, dynamic i32 stride (cute.sym_int32, the pre-4.3 default and what
use_32bit_stride gives), cute.zipped_divide tiling, vectorised 16-byte copies, static launch grid.

The shape is static, the row pitch is a runtime Int32 (divisible by 8 so that rows stay 16-byte
aligned).  Layout arithmetic runs at the wider of coordinate and stride, here both i32, so the CTA
tile offset bidx * pitch + bidy * 1024 is computed in i32 (overflow<nsw>) and used as an i32 GEP
index.  Grid (8192, 8) x 128 threads, each thread moves 8 elements (its tid.x * 8 is its own GEP).

Known answer (bug, may), for the load (src, arg0) and for the store (dst, arg1), each with its own
stride: ctaid.x * arg<i>.stride[0] + ctaid.y * 1024 with ctaid.x <= 8191, ctaid.y <= 7.  It leaves
i32 once 8191 * pitch + 7168 > 2^31 - 1, i.e. from pitch = 262,176 elements (8191 * 262,176 =
2,147,483,616; + 7168 = 2,147,490,784); a pitch of 262,175 stays at 2,147,482,593.
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_tensor

M = N = 8192
THREADS, VEC = 128, 8
TILE = THREADS * VEC  # 1024 columns per CTA


@cute.kernel
def pitched_copy(src: cute.Tensor, dst: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, bidy, _ = cute.arch.block_idx()
    s_tile = cute.zipped_divide(src, (1, TILE))[(0, None), (bidx, bidy)]  # (TILE,)
    d_tile = cute.zipped_divide(dst, (1, TILE))[(0, None), (bidx, bidy)]
    s_vec = cute.zipped_divide(s_tile, (VEC,))[None, tidx]
    d_vec = cute.zipped_divide(d_tile, (VEC,))[None, tidx]
    d_vec.store(s_vec.load())


@cute.jit
def copy_host(src: cute.Tensor, dst: cute.Tensor):
    pitched_copy(src, dst).launch(grid=(M, N // TILE, 1), block=(THREADS, 1, 1))


src = make_fake_tensor(cutlass.BFloat16, (M, N), stride=(cute.sym_int32(divisibility=8), 1), assumed_align=16)
dst = make_fake_tensor(cutlass.BFloat16, (M, N), stride=(cute.sym_int32(divisibility=8), 1), assumed_align=16)
cute.compile(copy_host, src, dst)
