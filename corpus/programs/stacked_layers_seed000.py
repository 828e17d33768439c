"""Seed 000: a megakernel MLP over stacked [L, N, K] bf16 weights of Qwen2.5-14B, layer as a Constexpr.

Covers: stacked layer weights, static layout (constexpr strides), Constexpr kernel argument, two
kernels in one module, vectorised 16-byte loads, cute.zipped_divide, static launch grid.

gate/up: [48, 13824, 5120] bf16, down: [48, 5120, 13824] bf16; every layer stride is 70,778,880
elements (141,557,760 bytes).  The layer is a compile-time constant, so the slice w[layer, n, None]
is the constant layer * 70,778,880 plus n * row_stride.  The DSL keeps that sum in i32 (overflow<nsw>)
while the constant fits in i32, i.e. for layers 0..30; from layer 31 the constant is an i64 and the
whole sum is i64 (compile with LAYER = 31 to see it; example_stacked_weights.py shows both in one
kernel).  This program compiles layer 30, the last layer whose constant still fits.

Known answer (bug, must), three GEPs whose i32 index is one slice offset (the thread's tid.x * 8 and
the chunk offsets are separate GEPs):
- mlp_gate_up, w_gate and w_up slices (one shared value): 2,123,366,400 + ctaid.x * 5120 with
  ctaid.x <= 13823 reaches 2,194,140,160 > 2^31 - 1; wraps from n = 4711
  (2,123,366,400 + 4711 * 5120 = 2,147,486,720).
- mlp_down, w_down slice: 2,123,366,400 + ctaid.x * 13824 with ctaid.x <= 5119 wraps from m = 1745
  (2,123,366,400 + 1745 * 13824 = 2,147,489,280).
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_tensor

L, INTER, H = 48, 13824, 5120  # layers, intermediate size, hidden size
VEC = 8  # 8 x bf16 = one 16-byte load
T_UP, T_DOWN = 320, 576  # H / (320 * 8) = 2 chunks, INTER / (576 * 8) = 3 chunks


@cute.kernel
def mlp_gate_up(w_gate: cute.Tensor, w_up: cute.Tensor, x: cute.Tensor, h: cute.Tensor, layer: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    n, _, _ = cute.arch.block_idx()
    g_row = cute.zipped_divide(w_gate[layer, n, None], (VEC * T_UP,))  # ((2560), 2)
    u_row = cute.zipped_divide(w_up[layer, n, None], (VEC * T_UP,))
    xs = cute.zipped_divide(x, (VEC * T_UP,))
    g = cutlass.Float32(0.0)
    u = cutlass.Float32(0.0)
    for c in cutlass.range_constexpr(H // (VEC * T_UP)):
        xv = cute.zipped_divide(xs[None, c], (VEC,))[None, tidx].load().to(cutlass.Float32)
        gv = cute.zipped_divide(g_row[None, c], (VEC,))[None, tidx].load().to(cutlass.Float32)
        uv = cute.zipped_divide(u_row[None, c], (VEC,))[None, tidx].load().to(cutlass.Float32)
        g += (gv * xv).reduce(cute.ReductionOp.ADD, 0.0, 0)
        u += (uv * xv).reduce(cute.ReductionOp.ADD, 0.0, 0)
    h[n, tidx] = g * u  # partial sums; a warp/CTA reduction would follow


@cute.kernel
def mlp_down(w_down: cute.Tensor, hv: cute.Tensor, y: cute.Tensor, layer: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    m, _, _ = cute.arch.block_idx()
    d_row = cute.zipped_divide(w_down[layer, m, None], (VEC * T_DOWN,))  # ((4608), 3)
    hs = cute.zipped_divide(hv, (VEC * T_DOWN,))
    acc = cutlass.Float32(0.0)
    for c in cutlass.range_constexpr(INTER // (VEC * T_DOWN)):
        dv = cute.zipped_divide(d_row[None, c], (VEC,))[None, tidx].load().to(cutlass.Float32)
        hx = cute.zipped_divide(hs[None, c], (VEC,))[None, tidx].load().to(cutlass.Float32)
        acc += (dv * hx).reduce(cute.ReductionOp.ADD, 0.0, 0)
    y[m, tidx] = acc


@cute.jit
def mlp_layer(w_gate, w_up, w_down, x, h, hv, y, layer: cutlass.Constexpr):
    mlp_gate_up(w_gate, w_up, x, h, layer).launch(grid=(INTER, 1, 1), block=(T_UP, 1, 1))
    mlp_down(w_down, hv, y, layer).launch(grid=(H, 1, 1), block=(T_DOWN, 1, 1))


def bf16(shape):
    acc = 1
    stride = []
    for extent in reversed(shape):
        stride.insert(0, acc)
        acc *= extent
    return make_fake_tensor(cutlass.BFloat16, shape, stride=tuple(stride), assumed_align=16)


w_gate, w_up, w_down = bf16((L, INTER, H)), bf16((L, INTER, H)), bf16((L, H, INTER))
x, hv = bf16((H,)), bf16((INTER,))
h = make_fake_tensor(cutlass.Float32, (INTER, T_UP), stride=(T_UP, 1), assumed_align=16)
y = make_fake_tensor(cutlass.Float32, (H, T_DOWN), stride=(T_DOWN, 1), assumed_align=16)
LAYER = 30  # the last layer whose constant layer * 70,778,880 fits in i32
cute.compile(mlp_layer, w_gate, w_up, w_down, x, h, hv, y, LAYER)
