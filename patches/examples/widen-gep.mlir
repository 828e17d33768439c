// mlir-widen-chain: ctaid.x * stride + col in i32 (nsw) indexes a global load and store.
// The chain is recomputed in i64 from sign-extended leaves; both GEPs take the i64 index.
module {
  gpu.module @kernels {
    llvm.func @k(%arg0: !llvm.ptr<1>) attributes {nvvm.kernel} {
      %c = llvm.mlir.constant(100000 : i32) : i32
      %lim = llvm.mlir.constant(2000000000 : i32) : i32
      %0 = nvvm.read.ptx.sreg.ctaid.x : i32
      %t = nvvm.read.ptx.sreg.tid.x : i32
      %1 = llvm.mul %0, %c overflow<nsw> : i32
      %2 = llvm.add %1, %t overflow<nsw> : i32
      %3 = llvm.getelementptr %arg0[%2] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      %4 = llvm.load %3 : !llvm.ptr<1> -> f32
      %5 = llvm.fadd %4, %4 : f32
      llvm.store %5, %3 : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}
// CHECK: %[[X:.+]] = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK-NEXT: %[[X64:.+]] = llvm.sext %[[X]] : i32 to i64
// CHECK: %[[M:.+]] = llvm.mul %[[X64]], %{{.+}} : i64
// CHECK: %[[A:.+]] = llvm.add %[[M]], %{{.+}} : i64
// CHECK: llvm.getelementptr %arg0[%[[A]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK-NOT: (!llvm.ptr<1>, i32)
