// mlir-trunc-extend: a 64-bit offset truncated to i32 and used as a GEP index (sign-extended again):
// the GEP takes the 64-bit value itself.
module {
  gpu.module @kernels {
    llvm.func @k(%arg0: !llvm.ptr<1>, %arg1: i64) attributes {nvvm.kernel} {
      %0 = nvvm.read.ptx.sreg.ctaid.x : i32
      %1 = llvm.sext %0 : i32 to i64
      %2 = llvm.mul %1, %arg1 : i64
      %3 = llvm.trunc %2 : i64 to i32
      %4 = llvm.getelementptr %arg0[%3] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      %5 = llvm.load %4 : !llvm.ptr<1> -> f32
      %6 = llvm.fadd %5, %5 : f32
      llvm.store %6, %4 : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}
// CHECK: %[[W:.+]] = llvm.mul %{{.+}}, %arg1 : i64
// CHECK: llvm.getelementptr %arg0[%[[W]]] : (!llvm.ptr<1>, i64)
