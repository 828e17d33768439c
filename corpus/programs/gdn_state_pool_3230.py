"""flashinfer PR #3230 shape: GDN decode reads and updates a recurrent state picked from a pool by a loaded index.

Covers: index loaded from memory (state_indices[b]), static 4-D layout, slicing with a runtime
coordinate, read-modify-write of global memory, static launch grid, vectorised 16-byte accesses.

Gated delta-net decode keeps one (K=128, V=128) f32 state per head and sequence in a pool
[P, 8, 128, 128] f32; the pool is fully static (P = 32768 slots = 16 GiB) and each sequence's slot
is state_indices[b].  Grid (64 sequences, 8 heads, 32 row blocks) x 128 threads: a CTA updates 4
state rows, a thread one 16-byte chunk of a row (k = ctaid.z * 4 + tid.x / 32, chunk tid.x % 32).
The slot stride 8 * 128 * 128 = 131,072 fits in i32, so pool[slot, h, k, None] is
slot * 131,072 + h * 16,384 + k * 128 in i32 (overflow<nsw>), used as an i32 GEP index.

Known answer (bug, may), one i32 GEP index for the row slice, used by the read and the write:
load(arg1) * 131,072 + ctaid.y * 16,384 + k * 128 with ctaid.y <= 7 and k <= 127 from the static
launch.  It leaves i32 from slot 16,384 (16,384 * 131,072 = 2^31); slot 16,383 gives at most
2,147,352,576 + 114,688 + 16,256 = 2,147,483,520.  PTX keeps it signed (shl.b32/add.s32, cvt.s64.s32):
the same threshold, a real wrap to up to 8 GiB before the pool.  The fix is gdn_state_pool_int64_fix.py.
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
    slot = state_indices[b]
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
