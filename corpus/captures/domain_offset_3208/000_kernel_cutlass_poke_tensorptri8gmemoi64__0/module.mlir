#loc = loc("corpus/programs/domain_offset_3208.py":31:0)
#loc1 = loc("corpus/programs/domain_offset_3208.py":25:0)
#loc6 = loc("<module>"(#loc))
#loc7 = loc("<module>"(#loc1))
module attributes {gpu.container_module} {
  llvm.mlir.global internal constant @"%s\0A"("%s\0A\00") {addr_space = 0 : i32} loc(#loc7)
  llvm.mlir.global internal constant @"ERROR: Reached max number of attributes, unable to add more attributes."("ERROR: Reached max number of attributes, unable to add more attributes.\00") {addr_space = 0 : i32} loc(#loc7)
  llvm.func @printf(!llvm.ptr, ...) -> i32 loc(#loc11)
  llvm.mlir.global internal constant @printfFormat_0("\0AError: kernel '@kernels::@kernel_cutlass_poke_tensorptri8gmemoi64__0' launch shared memory exceeds current GPU arch sm_90a allowed. Allocated: %lld bytes. Max: 232448 bytes.\0A\0A\00") {addr_space = 0 : i32} loc(#loc6)
  gpu.module @kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx88">] attributes {compute_targets = [#cuda.compute_target<sass, conditional, [sm_90]>]} {
    llvm.func @kernel_cutlass_poke_tensorptri8gmemoi64__0(%arg0: !llvm.struct<(ptr<1>, struct<(i32, i64)>)> loc("<module>"(#loc1)), %arg1: i32 loc("<module>"(#loc1))) attributes {cu_attrs = {max_dynamic_shared_size_bytes = #cuda.dev_max_shared_memory_optin, non_portable_cluster_size_allowed = 1 : i32}, cutlass_launch_facts = {cluster_launch = false, cooperative_launch = false, exact_block_dim = array<i64: 1, 1, 1>, exact_grid_dim = array<i64: 1, 1, 1>, schema_version = 1 : i64}, gpu.kernel, nvvm.kernel, nvvm.reqntid = array<i32: 1, 1, 1>, smem.hint_smem_base_uniform, smem.partition_num = 2 : i32} {
      %0 = llvm.mlir.constant(100 : i8) : i8 loc(#loc8)
      %1 = llvm.extractvalue %arg0[0] : !llvm.struct<(ptr<1>, struct<(i32, i64)>)>  loc(#loc9)
      %2 = llvm.extractvalue %arg0[1, 1] : !llvm.struct<(ptr<1>, struct<(i32, i64)>)>  loc(#loc10)
      %3 = llvm.sext %arg1 : i32 to i64 loc(#loc10)
      %4 = llvm.mul %3, %2 overflow<nsw> : i64 loc(#loc10)
      %5 = llvm.getelementptr %1[%4] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8 loc(#loc10)
      llvm.store %0, %5 {alignment = 1 : i64} : i8, !llvm.ptr<1> loc(#loc8)
      llvm.return loc(#loc6)
    } loc(#loc12)
  } loc(#loc6)
  llvm.func @cutlass_launch_FakeTensorUint8div1i64div1_(%arg0: !llvm.struct<(ptr<1>, struct<(i32, i64)>)> loc("<module>"(#loc)), %arg1: i32 loc("<module>"(#loc))) -> i32 attributes {llvm.emit_c_interface} {
    %0 = llvm.mlir.constant(2 : i32) : i32 loc(#loc5)
    %1 = llvm.mlir.constant(17 : i32) : i32 loc(#loc5)
    %2 = llvm.mlir.addressof @"%s\0A" : !llvm.ptr loc(#loc5)
    %3 = llvm.mlir.addressof @"ERROR: Reached max number of attributes, unable to add more attributes." : !llvm.ptr loc(#loc5)
    %4 = llvm.mlir.constant(6 : i32) : i32 loc(#loc7)
    %5 = llvm.mlir.constant(0 : i64) : i64 loc(#loc5)
    %6 = llvm.mlir.constant(1 : i32) : i32 loc(#loc5)
    %7 = llvm.mlir.constant(0 : i32) : i32 loc(#loc5)
    %8 = llvm.inttoptr %5 : i64 to !llvm.ptr loc(#loc7)
    %9 = llvm.alloca %6 x !llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)> : (i32) -> !llvm.ptr loc(#loc7)
    %10 = llvm.alloca %6 x !llvm.array<17 x struct<(i32, array<4 x i8>, array<64 x i8>)>> : (i32) -> !llvm.ptr loc(#loc7)
    %11 = llvm.getelementptr %9[0, 4] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)> loc(#loc7)
    llvm.store %10, %11 : !llvm.ptr, !llvm.ptr loc(#loc7)
    %12 = llvm.getelementptr %9[0, 1, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)> loc(#loc7)
    llvm.store %6, %12 : i32, !llvm.ptr loc(#loc7)
    %13 = llvm.getelementptr %9[0, 1, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)> loc(#loc7)
    llvm.store %6, %13 : i32, !llvm.ptr loc(#loc7)
    %14 = llvm.getelementptr %9[0, 1, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)> loc(#loc7)
    llvm.store %6, %14 : i32, !llvm.ptr loc(#loc7)
    %15 = llvm.getelementptr %9[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)> loc(#loc7)
    llvm.store %5, %15 : i64, !llvm.ptr loc(#loc7)
    %16 = llvm.getelementptr %9[0, 0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)> loc(#loc7)
    llvm.store %6, %16 : i32, !llvm.ptr loc(#loc7)
    %17 = llvm.getelementptr %9[0, 0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)> loc(#loc7)
    llvm.store %6, %17 : i32, !llvm.ptr loc(#loc7)
    %18 = llvm.getelementptr %9[0, 0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)> loc(#loc7)
    llvm.store %6, %18 : i32, !llvm.ptr loc(#loc7)
    %19 = llvm.getelementptr %9[0, 5] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)> loc(#loc7)
    llvm.store %7, %19 : i32, !llvm.ptr loc(#loc7)
    %20 = llvm.getelementptr %9[0, 3] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)> loc(#loc7)
    llvm.store %8, %20 : !llvm.ptr, !llvm.ptr loc(#loc7)
    %21 = llvm.alloca %6 x !llvm.array<1 x ptr> : (i32) -> !llvm.ptr loc(#loc7)
    %22 = builtin.unrealized_conversion_cast %21 : !llvm.ptr to !cuda.launch_cfg<max_attrs = 17> loc(#loc7)
    %23 = llvm.getelementptr %21[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<1 x ptr> loc(#loc7)
    llvm.store %9, %23 : !llvm.ptr, !llvm.ptr loc(#loc7)
    %24 = llvm.load %23 : !llvm.ptr -> !llvm.ptr loc(#loc7)
    %25 = llvm.getelementptr %24[0, 5] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)> loc(#loc7)
    %26 = llvm.load %25 : !llvm.ptr -> i32 loc(#loc7)
    %27 = llvm.getelementptr %24[0, 4] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)> loc(#loc7)
    %28 = llvm.load %27 : !llvm.ptr -> !llvm.ptr loc(#loc7)
    llvm.br ^bb7(%7 : i32) loc(#loc7)
  ^bb1(%29: i32 loc("<module>"(#loc1))):  // 2 preds: ^bb3, ^bb5
    %30 = llvm.getelementptr %28[%29] : (!llvm.ptr, i32) -> !llvm.ptr, !llvm.struct<(i32, array<4 x i8>, array<64 x i8>)> loc(#loc7)
    %31 = llvm.getelementptr %30[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i32, array<4 x i8>, array<64 x i8>)> loc(#loc7)
    llvm.store %4, %31 : i32, !llvm.ptr loc(#loc7)
    %32 = llvm.getelementptr %30[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i32, array<4 x i8>, array<64 x i8>)> loc(#loc7)
    llvm.store %7, %32 : i32, !llvm.ptr loc(#loc7)
    llvm.br ^bb8 loc(#loc7)
  ^bb2:  // pred: ^bb4
    %33 = llvm.getelementptr %3[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<72 x i8> loc(#loc7)
    %34 = llvm.getelementptr %2[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<4 x i8> loc(#loc7)
    %35 = llvm.call @printf(%34, %33) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, !llvm.ptr) -> i32 loc(#loc7)
    llvm.intr.trap loc(#loc7)
    llvm.unreachable loc(#loc7)
  ^bb3:  // pred: ^bb4
    %36 = llvm.add %26, %6 : i32 loc(#loc7)
    llvm.store %36, %25 : i32, !llvm.ptr loc(#loc7)
    llvm.br ^bb1(%26 : i32) loc(#loc7)
  ^bb4:  // pred: ^bb7
    %37 = llvm.icmp "uge" %26, %1 : i32 loc(#loc7)
    llvm.cond_br %37, ^bb2, ^bb3 loc(#loc7)
  ^bb5:  // pred: ^bb6
    llvm.br ^bb1(%43 : i32) loc(#loc7)
  ^bb6:  // pred: ^bb7
    %38 = llvm.getelementptr %28[%43] : (!llvm.ptr, i32) -> !llvm.ptr, !llvm.struct<(i32, array<4 x i8>, array<64 x i8>)> loc(#loc7)
    %39 = llvm.getelementptr %38[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i32, array<4 x i8>, array<64 x i8>)> loc(#loc7)
    %40 = llvm.load %39 : !llvm.ptr -> i32 loc(#loc7)
    %41 = llvm.icmp "eq" %40, %4 : i32 loc(#loc7)
    %42 = llvm.add %43, %6 : i32 loc(#loc7)
    llvm.cond_br %41, ^bb5, ^bb7(%42 : i32) loc(#loc7)
  ^bb7(%43: i32 loc("<module>"(#loc1))):  // 2 preds: ^bb0, ^bb6
    %44 = llvm.icmp "uge" %43, %26 : i32 loc(#loc7)
    llvm.cond_br %44, ^bb4, ^bb6 loc(#loc7)
  ^bb8:  // pred: ^bb1
    %45 = llvm.load %23 : !llvm.ptr -> !llvm.ptr loc(#loc7)
    %46 = llvm.getelementptr %45[0, 5] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)> loc(#loc7)
    %47 = llvm.load %46 : !llvm.ptr -> i32 loc(#loc7)
    %48 = llvm.getelementptr %45[0, 4] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(array<3 x i32>, array<3 x i32>, i64, ptr, ptr, i32)> loc(#loc7)
    %49 = llvm.load %48 : !llvm.ptr -> !llvm.ptr loc(#loc7)
    llvm.br ^bb15(%7 : i32) loc(#loc7)
  ^bb9(%50: i32 loc("<module>"(#loc1))):  // 2 preds: ^bb11, ^bb13
    %51 = llvm.getelementptr %49[%50] : (!llvm.ptr, i32) -> !llvm.ptr, !llvm.struct<(i32, array<4 x i8>, array<64 x i8>)> loc(#loc7)
    %52 = llvm.getelementptr %51[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i32, array<4 x i8>, array<64 x i8>)> loc(#loc7)
    llvm.store %0, %52 : i32, !llvm.ptr loc(#loc7)
    %53 = llvm.getelementptr %51[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i32, array<4 x i8>, array<64 x i8>)> loc(#loc7)
    llvm.store %7, %53 : i32, !llvm.ptr loc(#loc7)
    llvm.br ^bb16 loc(#loc7)
  ^bb10:  // pred: ^bb12
    %54 = llvm.getelementptr %3[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<72 x i8> loc(#loc7)
    %55 = llvm.getelementptr %2[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<4 x i8> loc(#loc7)
    %56 = llvm.call @printf(%55, %54) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, !llvm.ptr) -> i32 loc(#loc7)
    llvm.intr.trap loc(#loc7)
    llvm.unreachable loc(#loc7)
  ^bb11:  // pred: ^bb12
    %57 = llvm.add %47, %6 : i32 loc(#loc7)
    llvm.store %57, %46 : i32, !llvm.ptr loc(#loc7)
    llvm.br ^bb9(%47 : i32) loc(#loc7)
  ^bb12:  // pred: ^bb15
    %58 = llvm.icmp "uge" %47, %1 : i32 loc(#loc7)
    llvm.cond_br %58, ^bb10, ^bb11 loc(#loc7)
  ^bb13:  // pred: ^bb14
    llvm.br ^bb9(%64 : i32) loc(#loc7)
  ^bb14:  // pred: ^bb15
    %59 = llvm.getelementptr %49[%64] : (!llvm.ptr, i32) -> !llvm.ptr, !llvm.struct<(i32, array<4 x i8>, array<64 x i8>)> loc(#loc7)
    %60 = llvm.getelementptr %59[0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i32, array<4 x i8>, array<64 x i8>)> loc(#loc7)
    %61 = llvm.load %60 : !llvm.ptr -> i32 loc(#loc7)
    %62 = llvm.icmp "eq" %61, %0 : i32 loc(#loc7)
    %63 = llvm.add %64, %6 : i32 loc(#loc7)
    llvm.cond_br %62, ^bb13, ^bb15(%63 : i32) loc(#loc7)
  ^bb15(%64: i32 loc("<module>"(#loc1))):  // 2 preds: ^bb8, ^bb14
    %65 = llvm.icmp "uge" %64, %47 : i32 loc(#loc7)
    llvm.cond_br %65, ^bb12, ^bb14 loc(#loc7)
  ^bb16:  // pred: ^bb9
    %66 = cuda.launch_ex @kernels::@kernel_cutlass_poke_tensorptri8gmemoi64__0<%22> (%arg0, %arg1) {assume_kernel_attr = #cuda.assume_kernel_attr<true>} : !cuda.launch_cfg<max_attrs = 17>, (!llvm.struct<(ptr<1>, struct<(i32, i64)>)>, i32) -> !cuda.result loc(#loc7)
    %67 = builtin.unrealized_conversion_cast %66 : !cuda.result to i32 loc(#loc7)
    cuda.return_if_error %67 : i32 loc(#loc7)
    llvm.return %7 : i32 loc(#loc6)
  } loc(#loc13)
  llvm.func @_mlir_ciface_cutlass_launch_FakeTensorUint8div1i64div1_(%arg0: !llvm.struct<(ptr<1>, struct<(i32, i64)>)> loc("<module>"(#loc)), %arg1: i32 loc("<module>"(#loc))) -> i32 attributes {llvm.emit_c_interface} {
    %0 = llvm.call @cutlass_launch_FakeTensorUint8div1i64div1_(%arg0, %arg1) : (!llvm.struct<(ptr<1>, struct<(i32, i64)>)>, i32) -> i32 loc(#loc6)
    llvm.return %0 : i32 loc(#loc6)
  } loc(#loc14)
} loc(#loc6)
#di_file = #llvm.di_file<"domain_offset_3208.py" in "corpus/programs">
#di_subroutine_type = #llvm.di_subroutine_type<callingConvention = DW_CC_normal>
#loc2 = loc("corpus/programs/domain_offset_3208.py":28:4)
#loc3 = loc("corpus/programs/domain_offset_3208.py":33:4)
#loc4 = loc("corpus/programs/domain_offset_3208.py":27:14)
#loc5 = loc(unknown)
#di_compile_unit = #llvm.di_compile_unit<id = distinct[0]<>, sourceLanguage = DW_LANG_C, file = #di_file, producer = "MLIR", isOptimized = true, emissionKind = DebugDirectivesOnly>
#di_subprogram = #llvm.di_subprogram<scope = #di_file, name = "printf", linkageName = "printf", file = #di_file, line = 31, scopeLine = 31, subprogramFlags = Optimized, type = #di_subroutine_type>
#loc8 = loc("shifted[0] = cutlass.Uint8(100)"(#loc2))
#loc9 = loc("poke(view, row).launch(grid=(1, 1, 1), block=(1, 1, 1))"(#loc3))
#loc10 = loc("shifted = cute.domain_offset((row,), t)"(#loc4))
#di_subprogram1 = #llvm.di_subprogram<id = distinct[1]<>, compileUnit = #di_compile_unit, scope = #di_file, name = "kernel_cutlass_poke_tensorptri8gmemoi64__0", linkageName = "kernel_cutlass_poke_tensorptri8gmemoi64__0", file = #di_file, line = 25, scopeLine = 25, subprogramFlags = "Definition|Optimized", type = #di_subroutine_type>
#di_subprogram2 = #llvm.di_subprogram<id = distinct[2]<>, compileUnit = #di_compile_unit, scope = #di_file, name = "cutlass_launch_FakeTensorUint8div1i64div1_", linkageName = "cutlass_launch_FakeTensorUint8div1i64div1_", file = #di_file, line = 31, scopeLine = 31, subprogramFlags = "Definition|Optimized", type = #di_subroutine_type>
#di_subprogram3 = #llvm.di_subprogram<id = distinct[3]<>, compileUnit = #di_compile_unit, scope = #di_file, name = "_mlir_ciface_cutlass_launch_FakeTensorUint8div1i64div1_", linkageName = "_mlir_ciface_cutlass_launch_FakeTensorUint8div1i64div1_", file = #di_file, line = 31, scopeLine = 31, subprogramFlags = "Definition|Optimized", type = #di_subroutine_type>
#loc11 = #llvm.di_location<#loc in #di_subprogram>
#loc12 = #llvm.di_location<#loc1 in #di_subprogram1>
#loc13 = #llvm.di_location<#loc in #di_subprogram2>
#loc14 = #llvm.di_location<#loc in #di_subprogram3>
