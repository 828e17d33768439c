"""Seed 000, the megakernel's stacked weights: one [L, N, K] bf16 tensor holds all 48 layers.

Covers: stacked layer weights, static layout with constexpr strides, compile-time layer index
(`cutlass.range_constexpr`), static launch grid.  This is the README's bundled example.

Qwen2.5-14B gate_proj stacked over layers: [48, 13824, 5120] bf16 = 6.79 GB, layer stride
13824 * 5120 = 70,778,880 elements (141,557,760 bytes).  The layout is fully static, so for each
unrolled layer the DSL emits offset = n * 5120 + layer * 70,778,880 + k.  A layer constant that fits
in i32 (layers 0..30) is added in i32 with overflow<nsw>; from layer 31 on the constant no longer fits
and the DSL switches that layer's sum to i64.

Known answer (bug, must): layer 30's offset 5120 * n + 2,123,366,400 + k is an i32 GEP index.  The
grid is static (13824 CTAs of 128 threads), so the last rows reach 5120 * 13823 + 127 + 2,123,366,400
= 2,194,140,287 > 2^31 - 1.  It wraps from n = 4711 (with k = 127).  Layers 0..29 stay below 2^31 - 1;
layers 31..47 are computed in i64.
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_tensor

L, N, K = 48, 13824, 5120  # Qwen2.5-14B: 48 layers, intermediate 13824, hidden 5120
THREADS = 128


@cute.kernel
def mlp_gate_probe(w_gate: cute.Tensor, out: cute.Tensor):
    k, _, _ = cute.arch.thread_idx()
    n, _, _ = cute.arch.block_idx()
    for layer in cutlass.range_constexpr(L):  # the megakernel unrolls its layers at trace time
        out[layer, n, k] = w_gate[layer, n, k].to(cutlass.Float32)


@cute.jit
def megakernel(w_gate: cute.Tensor, out: cute.Tensor):
    mlp_gate_probe(w_gate, out).launch(grid=(N, 1, 1), block=(THREADS, 1, 1))


# torch.stack(...) of 48 [N, K] matrices, handed over with from_dlpack: a static, compact layout.
w_gate = make_fake_tensor(cutlass.BFloat16, (L, N, K), stride=(N * K, K, 1), assumed_align=16)
out = make_fake_tensor(cutlass.Float32, (L, N, THREADS), stride=(N * THREADS, THREADS, 1), assumed_align=16)
cute.compile(megakernel, w_gate, out)
