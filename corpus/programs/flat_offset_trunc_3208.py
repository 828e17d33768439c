"""NVIDIA/cutlass#3208 shape in user code: a correct 64-bit row offset narrowed to Int32, then used as an address.

Covers: trunc-then-extend (i64 -> i32 -> address), dynamic i64 stride, pointer arithmetic on a
tensor iterator (cute.make_tensor(ptr + offset, layout)), static launch grid, vectorised copy.

CuTe DSL 4.5.0's cute.domain_offset computed the offset in i64, truncated it to i32 and
sign-extended it back (#3208, fixed in 4.5.1).  The same chain appears whenever user code narrows an
offset: here a row-gather kernel computes Int64(row) * stride correctly and then stores it in an
Int32 "to save registers".  x is (65536, 4096) bf16 with an i64 row stride; grid 65536 x 128 threads.

Known answer (bug, may, trunc-then-extend): the i64 value sext(ctaid.x) * arg0.stride[0] is
truncated to i32 and then used as an i32 GEP index (implicit sext).  With ctaid.x <= 65535 (static
grid) it leaves i32 once 65535 * stride > 2^31 - 1, i.e. from stride = 32,769 elements
(65535 * 32,769 = 2,147,516,415); 32,768 gives 2,147,450,880.
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_tensor

M, N = 65536, 4096
THREADS, VEC = 128, 8  # 128 x 8 x 4 = 4096 columns


@cute.kernel
def row_copy(mX: cute.Tensor, mY: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    row, _, _ = cute.arch.block_idx()
    off = cutlass.Int32(cutlass.Int64(row) * mX.stride[0])  # correct in i64, then narrowed
    x_row = cute.make_tensor(mX.iterator + off, cute.make_layout(N))
    x_vecs = cute.zipped_divide(x_row, (VEC,))
    y_vecs = cute.zipped_divide(mY[row, None], (VEC,))
    for c in cutlass.range_constexpr(N // (THREADS * VEC)):
        y_vecs[None, c * THREADS + tidx].store(x_vecs[None, c * THREADS + tidx].load())


@cute.jit
def gather(mX: cute.Tensor, mY: cute.Tensor):
    row_copy(mX, mY).launch(grid=(M, 1, 1), block=(THREADS, 1, 1))


x = make_fake_tensor(cutlass.BFloat16, (M, N), stride=(cute.sym_int64(), 1), assumed_align=16)
y = make_fake_tensor(cutlass.BFloat16, (M, N), stride=(cute.sym_int64(divisibility=8), 1), assumed_align=16)
cute.compile(gather, x, y)
