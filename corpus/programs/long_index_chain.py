"""A global load indexed by a 300-step unrolled index chain: idx = idx + bidx, 300 times.

Covers: long dependency chains (the range analysis follows 300 dependent ops from ctaid.x to the
address, and must not recurse as deep as the chain: ~200 dependent ops once raised RecursionError),
cutlass.range_constexpr unrolling, static layout, static launch grid.

The loop is unrolled at trace time, so the MLIR holds 300 dependent i32 adds between tid.x and the
GEP index (LLVM folds them to one multiply-add in the PTX).  The ideal value is the exact affine
form 300 * ctaid.x + tid.x, with the launch grid (2^23, 1, 1) x block (128, 1, 1).

Known answer (bug, must): the i32 index, sign-extended into the GEP of the src load, reaches
300 * 8,388,607 + 127 = 2,516,582,227 > 2^31 - 1.  With tid.x at its largest (127) it first leaves i32
at ctaid.x = 7,158,279 (300 * 7,158,279 + 127 = 2,147,483,827; 7,158,278 gives 2,147,483,527).
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_tensor

STEPS = 300
GRID = 1 << 23
THREADS = 128
N = STEPS * GRID + THREADS  # every index the kernel computes is inside src


@cute.kernel
def chain_kernel(src: cute.Tensor, dst: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    idx = tidx
    for _ in cutlass.range_constexpr(STEPS):
        idx = idx + bidx
    dst[bidx * THREADS + tidx] = src[idx]


@cute.jit
def chain_host(src: cute.Tensor, dst: cute.Tensor):
    chain_kernel(src, dst).launch(grid=(GRID, 1, 1), block=(THREADS, 1, 1))


src = make_fake_tensor(cutlass.Float32, (N,), stride=(1,), assumed_align=16)
dst = make_fake_tensor(cutlass.Float32, (GRID * THREADS,), stride=(1,), assumed_align=16)
cute.compile(chain_host, src, dst)
