"""Seed 000's stacked [48, 13824, 5120] bf16 weights, accessed slice-first: w[layer, None, None] then local_tile.

Covers: stacked layer weights, static layout (constexpr strides), Constexpr layer, slicing,
cute.local_tile, cute.zipped_divide, vectorised 16-byte loads, static launch grid.

Same weights and the same layer 30 as stacked_layers_seed000.py, but the kernel first slices the
layer (w[layer, None, None]) and then tiles the (N, K) matrix.  Each step becomes its own GEP: the
layer offset is a constant GEP index (30 * 70,778,880 = 2,123,366,400 fits in i32), the row tile
ctaid.x * 5120 another, the thread's tid.x * 8 a third, the k chunk a constant.  No i32 sum ever
holds the layer offset and the row offset together.

Known answer (clean): the largest i32 value that reaches an address is ctaid.x * 128 + 53,084,160
+ tid.x <= 54,853,631 for the out store (ctaid.x <= 13823); the weight GEPs take the constant
2,123,366,400, ctaid.x * 5120 <= 70,773,760 and tid.x * 8 <= 1016 separately.
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_tensor

L, N, K = 48, 13824, 5120
THREADS, VEC = 128, 8
TILE_K = THREADS * VEC  # 1024
LAYER = 30


@cute.kernel
def gate_rowsum(w: cute.Tensor, out: cute.Tensor, layer: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    n, _, _ = cute.arch.block_idx()
    w_layer = w[layer, None, None]  # (N, K)
    g_row = cute.local_tile(w_layer, (1, TILE_K), (n, None))  # (1, TILE_K, K / TILE_K)
    acc = cutlass.Float32(0.0)
    for kt in cutlass.range_constexpr(K // TILE_K):
        frag = cute.zipped_divide(g_row[0, None, kt], (VEC,))[None, tidx].load()
        acc += frag.to(cutlass.Float32).reduce(cute.ReductionOp.ADD, 0.0, 0)
    out[layer, n, tidx] = acc


@cute.jit
def run(w: cute.Tensor, out: cute.Tensor, layer: cutlass.Constexpr):
    gate_rowsum(w, out, layer).launch(grid=(N, 1, 1), block=(THREADS, 1, 1))


w = make_fake_tensor(cutlass.BFloat16, (L, N, K), stride=(N * K, K, 1), assumed_align=16)
out = make_fake_tensor(cutlass.Float32, (L, N, THREADS), stride=(N * THREADS, THREADS, 1), assumed_align=16)
cute.compile(run, w, out, LAYER)
