"""The fix for gdn_state_pool_3230.py (flashinfer PR #3230): the loaded pool index is cast to cutlass.Int64.

Covers: index loaded from memory, cutlass.Int64 cast (the fix), static 4-D layout, slicing with a
runtime coordinate, read-modify-write of global memory, static launch grid, vectorised accesses.

Same kernel as gdn_state_pool_3230.py except `slot = cutlass.Int64(state_indices[b])`.  The slot
coordinate is i64, so slot * 131,072 is an i64 multiply of the sign-extended load.

Known answer (clean): the i32 arithmetic left on the way to an address is bounded by the static
launch (grid (64, 8, 32), block 128): ctaid.y * 16,384 + k * 128 <= 130,944 (sign-extended into the
i64 sum), the chunk offset (tid.x % 32) * 4 < 128, ctaid.x * 8 + ctaid.y <= 511 for decay and the
out offset ctaid.x * 32,768 + ctaid.y * 4096 + k * 32 + tid.x % 32 <= 2,097,151.
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_tensor

P, H, K, V = 32768, 8, 128, 128
B = 64  # decode batch
ROWS = 4  # state rows per CTA: 128 threads = 4 rows x 32 chunks of 4 floats


@cute.kernel
def gdn_decode(pool: cute.Tensor, state_indices: cute.Tensor, decay: cute.Tensor, out: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    b, h, kb = cute.arch.block_idx()
    k, v = kb * ROWS + tidx // 32, tidx % 32
    slot = cutlass.Int64(state_indices[b])  # the fix: widen the loaded index
    chunk = cute.zipped_divide(pool[slot, h, k, None], (4,))[None, v]
    s = chunk.load() * decay[b, h]
    chunk.store(s)
    out[b, h, k, v] = s.reduce(cute.ReductionOp.ADD, 0.0, 0)


@cute.jit
def run(pool: cute.Tensor, state_indices: cute.Tensor, decay: cute.Tensor, out: cute.Tensor):
    gdn_decode(pool, state_indices, decay, out).launch(grid=(B, H, K // ROWS), block=(128, 1, 1))


pool = make_fake_tensor(cutlass.Float32, (P, H, K, V), stride=(H * K * V, K * V, V, 1), assumed_align=16)
state_indices = make_fake_tensor(cutlass.Int32, (B,), stride=(1,), assumed_align=4)
decay = make_fake_tensor(cutlass.Float32, (B, H), stride=(H, 1), assumed_align=4)
out = make_fake_tensor(cutlass.Float32, (B, H, K, 32), stride=(H * K * 32, K * 32, 32, 1), assumed_align=4)
cute.compile(run, pool, state_indices, decay, out)
