"""elementwise_add as in the CuTe DSL examples: dynamic shapes, i64 dynamic strides, TV-layout tiled copy.

Covers: elementwise, dynamic i32 shapes, dynamic i64 strides (from_dlpack(t).mark_layout_dynamic()
since CuTe DSL 4.3, the fix for NVIDIA/cutlass#2312), cute.zipped_divide, cute.make_tiled_copy_tv
(CopyUniversalOp), per-element identity-tensor predication, dynamic 2-D launch grid.

C = A + B over (M, N) f32 with layout (?, ?):(?{i64}, 1).  Tiles of (4, 128) per CTA of 128 threads
(thread layout (4, 32), 1 x 4 values each); the tile grid is 2-D: ctaid.x walks the M tiles,
ctaid.y the N tiles.

Known answer (clean): the M-tile offset is sext(ctaid.x) * (4 * stride) and each thread's row
offset sext(row) * stride, both i64.  The i32 arithmetic that reaches an address is
ctaid.y * 128 (ctaid.y < 65536 by the hardware range: at most 8,388,480) and per-thread column
offsets below 128.  The i32 coordinates of the identity tensor feed only the bounds predicates.
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_tensor

TM, TN = 4, 128


@cute.kernel
def add_kernel(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, tv_thr: cute.Layout, tv_val: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, bidy, _ = cute.arch.block_idx()
    blk = ((None, None), (bidx, bidy))
    gA = cute.zipped_divide(mA, (TM, TN))[blk]
    gB = cute.zipped_divide(mB, (TM, TN))[blk]
    gC = cute.zipped_divide(mC, (TM, TN))[blk]
    cC = cute.zipped_divide(cute.make_identity_tensor(mC.shape), (TM, TN))[blk]
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), mA.element_type)
    thr = cute.make_tiled_copy_tv(atom, tv_thr, tv_val).get_slice(tidx)
    tA, tB, tC = thr.partition_S(gA), thr.partition_S(gB), thr.partition_D(gC)
    tCrd = thr.partition_S(cC)
    pred = cute.make_rmem_tensor(tCrd.shape, cutlass.Boolean)
    for i in cutlass.range_constexpr(cute.size(pred)):
        pred[i] = cute.elem_less(tCrd[i], mC.shape)
    fA, fB = cute.make_fragment_like(tA), cute.make_fragment_like(tB)
    cute.copy(atom, tA, fA, pred=pred)
    cute.copy(atom, tB, fB, pred=pred)
    fA.store(fA.load() + fB.load())
    cute.copy(atom, fA, tC, pred=pred)


@cute.jit
def elementwise_add(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    thr = cute.make_ordered_layout((4, 32), order=(1, 0))
    val = cute.make_ordered_layout((1, 4), order=(1, 0))
    grid = (cute.ceil_div(mC.shape[0], TM), cute.ceil_div(mC.shape[1], TN), 1)
    add_kernel(mA, mB, mC, thr, val).launch(grid=grid, block=(128, 1, 1))


M, N = cute.sym_int(), cute.sym_int(divisibility=4)
a, b, c = (
    make_fake_tensor(cutlass.Float32, (M, N), stride=(cute.sym_int64(divisibility=4), 1), assumed_align=16)
    for _ in range(3)
)
cute.compile(elementwise_add, a, b, c)
