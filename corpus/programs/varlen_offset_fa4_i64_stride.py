"""The fixed form of varlen_offset_fa4_2611.py: O and dO with i64 dynamic strides, as FA4 passes them.

Covers: varlen / cu_seqlens loaded from memory, cute.domain_offset, cute.local_tile, dynamic i64
strides, dynamic i32 token count, static launch grid, row-per-thread vector loads.

Same kernel as varlen_offset_fa4_2611.py; only the tensors differ: (total_q, 16, 96) with strides
(?{i64}, ?{i64}, 1), which is what from_dlpack(t).mark_layout_dynamic() gives in CuTe DSL >= 4.3.
domain_offset now sign-extends the loaded cu_seqlens[b] and multiplies by the i64 row stride, and
the per-CTA tile, head and row offsets are i64 products of sign-extended i32 coordinates.

Known answer (clean): every i32 value that reaches an address is bounded by the static launch (grid
(64, 16, 4), block 128): the coordinates ctaid.x, ctaid.y, tid.x, the vector chunk index (< 12) and
the dPsum offset ctaid.z * 131072 + ctaid.y * 8192 + ctaid.x * 128 + tid.x <= 524,287.
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_tensor

B, H, D = 4, 16, 96
M_BLOCK = 128
MAX_SEQLEN = 8192  # grid.x = MAX_SEQLEN // M_BLOCK


@cute.kernel
def bwd_preprocess(mO: cute.Tensor, mdO: cute.Tensor, mCuSeqlens: cute.Tensor, mdPsum: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    m_block, head, batch = cute.arch.block_idx()
    seq_start = mCuSeqlens[batch]
    seqlen = mCuSeqlens[batch + 1] - seq_start
    mO_b = cute.domain_offset((seq_start, 0, 0), mO)
    mdO_b = cute.domain_offset((seq_start, 0, 0), mdO)
    gO = cute.local_tile(mO_b[None, head, None], (M_BLOCK, D), (m_block, 0))
    gdO = cute.local_tile(mdO_b[None, head, None], (M_BLOCK, D), (m_block, 0))
    row = m_block * M_BLOCK + tidx
    if row < seqlen:
        o = gO[tidx, None].load().to(cutlass.Float32)
        do = gdO[tidx, None].load().to(cutlass.Float32)
        mdPsum[batch, head, row] = (o * do).reduce(cute.ReductionOp.ADD, 0.0, 0)


@cute.jit
def run(mO: cute.Tensor, mdO: cute.Tensor, mCuSeqlens: cute.Tensor, mdPsum: cute.Tensor):
    grid = (MAX_SEQLEN // M_BLOCK, H, B)
    bwd_preprocess(mO, mdO, mCuSeqlens, mdPsum).launch(grid=grid, block=(M_BLOCK, 1, 1))


total_q = cute.sym_int()
# What FA4 actually receives: from_dlpack(t).mark_layout_dynamic(), i.e. i64 dynamic strides.
mO = make_fake_tensor(
    cutlass.BFloat16, (total_q, H, D), stride=(cute.sym_int64(), cute.sym_int64(), 1), assumed_align=16
)
mdO = make_fake_tensor(
    cutlass.BFloat16, (total_q, H, D), stride=(cute.sym_int64(), cute.sym_int64(), 1), assumed_align=16
)
cu_seqlens = make_fake_tensor(cutlass.Int32, (B + 1,), stride=(1,), assumed_align=4)
dpsum = make_fake_tensor(cutlass.Float32, (B, H, MAX_SEQLEN), stride=(H * MAX_SEQLEN, MAX_SEQLEN, 1), assumed_align=16)
cute.compile(run, mO, mdO, cu_seqlens, dpsum)
