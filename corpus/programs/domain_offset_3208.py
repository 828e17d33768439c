"""NVIDIA/cutlass#3208: cute.domain_offset on a tensor with a dynamic 64-bit stride.

Covers: cute.domain_offset, dynamic i64 stride, a constant coordinate past 2^31 / stride, the DSL
release as the variable (the program does nothing wrong).

CuTe DSL 4.5.0's domain_offset computed the offset coordinate x stride in i64, truncated it to i32 and
sign-extended it back before the GEP; 4.4.2 and 4.5.1 keep it in i64.  Here the kernel offsets a
1-D uint8 tensor of dynamic shape and dynamic i64 stride by 2^30 elements and stores one byte
there: with stride 4 the true byte offset is 2^32, which 4.5.0 wraps to 0 (the issue's reproducer,
with the offset taken inside the kernel, where irscan looks, rather than on the host).

Known answer on the releases after the fix (4.5.1 and later): clean: the index 2^30 * stride is
computed in i64 and reaches the store without narrowing.  On 4.5.0 (tests/test_dsl_matrix.py):
trunc-then-extend, and `irscan diff` of the 4.5.1 and 4.5.0 captures reports it new and the access
narrowed; 4.5.0 -> 4.5.1 reports it fixed.
"""

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import make_fake_tensor

BIG = 2**30


@cute.kernel
def poke(t: cute.Tensor, row: cutlass.Int32):
    shifted = cute.domain_offset((row,), t)
    shifted[0] = cutlass.Uint8(100)


@cute.jit
def launch(view: cute.Tensor, row: cutlass.Int32):
    poke(view, row).launch(grid=(1, 1, 1), block=(1, 1, 1))


view = make_fake_tensor(cutlass.Uint8, (cute.sym_int(),), stride=(cute.sym_int64(),), assumed_align=1)
cute.compile(launch, view, cutlass.Int32(BIG))
