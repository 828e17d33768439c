"""The fix for stacked_layers_runtime_layer.py: the runtime layer index is cast to cutlass.Int64.

Covers: stacked layer weights, static layout (constexpr strides), runtime scalar kernel argument,
cutlass.Int64 cast (the fix), vectorised 16-byte loads, static launch grid.

Same kernel as stacked_layers_runtime_layer.py except for `w[cutlass.Int64(layer), n, None]`.  The
layer coordinate is i64, so layer * 70,778,880 runs in i64 (sext of the argument, i64 mul/add).

Known answer (clean): the remaining i32 arithmetic that reaches an address is bounded by the static
launch: ctaid.x * 5120 <= 70,773,760 (sign-extended, then added in i64), tid.x * 8 <= 1016 (its own
GEP), ctaid.x * 128 + tid.x <= 1,769,471 (the out store).
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
    row = cute.zipped_divide(w[cutlass.Int64(layer), n, None], (VEC,))  # the fix: i64 layer
    frag = row[None, tidx].load()  # one 16-byte vector load per thread
    out[n, tidx] = frag.to(cutlass.Float32).reduce(cute.ReductionOp.ADD, 0.0, 0)


@cute.jit
def decode_layer(w: cute.Tensor, out: cute.Tensor, layer: cutlass.Int32):
    gate_probe(w, out, layer).launch(grid=(N, 1, 1), block=(THREADS, 1, 1))


w = make_fake_tensor(cutlass.BFloat16, (L, N, K), stride=(N * K, K, 1), assumed_align=16)
out = make_fake_tensor(cutlass.Float32, (N, THREADS), stride=(THREADS, 1), assumed_align=16)
cute.compile(decode_layer, w, out, cutlass.Int32(0))
