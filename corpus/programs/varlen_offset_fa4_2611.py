"""FA4 #2611 shape: varlen backward preprocess, per-batch offset cu_seqlens[b] * stride in Int32.

Covers: varlen / cu_seqlens loaded from memory, cute.domain_offset, cute.local_tile, static strides
with a dynamic i32 token count, static launch grid, row-per-thread vector loads.

flash-attention's `_bwd_preprocess` computes dPsum = rowsum(O * dO) per token and head.  Each batch's
rows start at cu_seqlens[b], applied with cute.domain_offset.  dO is a view of a wider buffer after
torch.cat([attn, mlp], dim=1): shape (total_q, 16, 96), stride (9728, 96, 1).  The strides are static
and fit in i32, so domain_offset multiplies the loaded cu_seqlens[b] by the row stride in i32
(overflow<nsw>) and uses it directly as an i32 GEP index.

Known answer (bug, may), two GEPs whose only input is the loaded value load(arg2) = cu_seqlens[b]:
- dO: load * 9728 leaves i32 from 220,753 tokens (220,753 * 9728 = 2,147,485,184 > 2^31 - 1;
  220,752 * 9728 = 2,147,475,456).  The issue's witness 225,304 * 9728 = 2,191,757,312.
- O (stride 1536): load * 1536 leaves i32 from 1,398,102 tokens (1,398,102 * 1536 = 2,147,484,672).
Today's PTX happens to compute both products exactly (mul.wide.s32 by the stride: NVVM used the nsw
flag to widen), so the i32 overflow is undefined behaviour in the IR rather than a wrap in PTX.
Everything else is bounded by the static grid: m_block * 128 rows * stride <= 63 * 1,245,184.
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_tensor

B, H, D = 4, 16, 96
STREAM = 9728  # H * D + 8192: the row stride of dO after cat([attn, mlp], dim=1)
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
mO = make_fake_tensor(cutlass.BFloat16, (total_q, H, D), stride=(H * D, D, 1), assumed_align=16)
mdO = make_fake_tensor(cutlass.BFloat16, (total_q, H, D), stride=(STREAM, D, 1), assumed_align=16)
cu_seqlens = make_fake_tensor(cutlass.Int32, (B + 1,), stride=(1,), assumed_align=4)
dpsum = make_fake_tensor(cutlass.Float32, (B, H, MAX_SEQLEN), stride=(H * MAX_SEQLEN, MAX_SEQLEN, 1), assumed_align=16)
cute.compile(run, mO, mdO, cu_seqlens, dpsum)
