// mlir-widen-chain, soundness: the bounds compare that guards the access moves to 64 bits with the
// chain (otherwise the wrapped i32 still decides, and a fault becomes a silent access past the limit).
module {
  gpu.module @kernels {
    llvm.func @k(%arg0: !llvm.ptr<1>) attributes {nvvm.kernel} {
      %c = llvm.mlir.constant(100000 : i32) : i32
      %lim = llvm.mlir.constant(2000000000 : i32) : i32
      %0 = nvvm.read.ptx.sreg.ctaid.x : i32
      %t = nvvm.read.ptx.sreg.tid.x : i32
      %1 = llvm.mul %0, %c overflow<nsw> : i32
      %2 = llvm.add %1, %t overflow<nsw> : i32
      %3 = llvm.icmp "slt" %2, %lim : i32
      llvm.cond_br %3, ^bb1, ^bb2
    ^bb1:
      %4 = llvm.getelementptr %arg0[%2] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      %5 = llvm.load %4 : !llvm.ptr<1> -> f32
      %6 = llvm.fadd %5, %5 : f32
      llvm.store %6, %4 : f32, !llvm.ptr<1>
      llvm.br ^bb2
    ^bb2:
      llvm.return
    }
  }
}
// CHECK: %[[LIM:.+]] = llvm.mlir.constant(2000000000 : i64) : i64
// CHECK: %[[A:.+]] = llvm.add %{{.+}}, %{{.+}} : i64
// CHECK: %[[C:.+]] = llvm.icmp "slt" %[[A]], %[[LIM]] : i64
// CHECK-NEXT: llvm.cond_br %[[C]], ^bb1, ^bb2
// CHECK: llvm.getelementptr %arg0[%[[A]]] : (!llvm.ptr<1>, i64)
