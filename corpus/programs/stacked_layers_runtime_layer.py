"""Seed 000 shape with a runtime layer index: stacked [48, 13824, 5120] bf16 weights, layer as an Int32 argument.

Covers: stacked layer weights, static layout (constexpr strides), runtime scalar kernel argument,
vectorised 16-byte loads, static launch grid.

A decode kernel that takes the layer to run as a runtime `cutlass.Int32` instead of unrolling the
layers.  The strides are static (70,778,880 / 5120 / 1), so w[layer, n, k] is computed as
layer * 70,778,880 + n * 5120 + k in i32 with overflow<nsw> and used as an i32 GEP index.

Known answer (bug, may): the slice w[layer, n, None] is one i32 GEP index,
arg2 * 70,778,880 + ctaid.x * 5120 (overflow<nsw>); the thread's tid.x * 8 is a separate GEP.  With
ctaid.x <= 13823 from the static grid (13823 * 5120 = 70,773,760) it leaves i32 at layer = 30
(2,123,366,400 + 70,773,760 = 2,194,140,160 > 2^31 - 1); from layer 31 every row wraps.  PTX keeps it
signed (mad.lo.s32 + cvt.s64.s32): the byte offset crosses 2^32 exactly where seed 000 saw it.
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_tensor

L, N, K = 48, 13824, 5120
THREADS = 128
VEC = 8  # 8 x bf16 = 16 bytes per thread


@cute.kernel
def gate_probe(w: cute.Tensor, out: cute.Tensor, layer: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    n, _, _ = cute.arch.block_idx()
    row = cute.zipped_divide(w[layer, n, None], (VEC,))  # ((VEC), K / VEC)
    frag = row[None, tidx].load()  # one 16-byte vector load per thread
    out[n, tidx] = frag.to(cutlass.Float32).reduce(cute.ReductionOp.ADD, 0.0, 0)


@cute.jit
def decode_layer(w: cute.Tensor, out: cute.Tensor, layer: cutlass.Int32):
    gate_probe(w, out, layer).launch(grid=(N, 1, 1), block=(THREADS, 1, 1))


w = make_fake_tensor(cutlass.BFloat16, (L, N, K), stride=(N * K, K, 1), assumed_align=16)
out = make_fake_tensor(cutlass.Float32, (N, THREADS), stride=(THREADS, 1), assumed_align=16)
cute.compile(decode_layer, w, out, cutlass.Int32(0))
