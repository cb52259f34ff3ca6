// RUN: seq-opt %s --seq-lower-to-llvm="opt-level=0 emit-entry=false" -split-input-file \
// RUN:   | FileCheck %s --check-prefix=CHECK --implicit-check-not=omp. \
// RUN:       --implicit-check-not=unrealized_conversion_cast \
// RUN:       --implicit-check-not=seq. --implicit-check-not=linalg. --implicit-check-not=tensor. \
// RUN:       --implicit-check-not=memref. --implicit-check-not=scf. --implicit-check-not=bufferization.
// RUN: seq-opt %s --seq-lower-to-llvm="opt-level=2 emit-entry=false" -split-input-file \
// RUN:   | FileCheck %s --check-prefixes=CHECK,O2 --implicit-check-not=unrealized_conversion_cast \
// RUN:       --implicit-check-not=seq. --implicit-check-not=linalg. --implicit-check-not=tensor. \
// RUN:       --implicit-check-not=memref. --implicit-check-not=scf. --implicit-check-not=bufferization.
// RUN: seq-opt %s --seq-lower-to-llvm="opt-level=2 openmp=false emit-entry=false" -split-input-file \
// RUN:   | FileCheck %s --check-prefix=CHECK --implicit-check-not=omp.

// seq-lower-to-llvm reaches the LLVM dialect: nothing of seq, linalg, tensor,
// memref, scf, bufferization and no unrealized cast survives, at -O0
// (sequential loops) and at -O2 (OpenMP across cores).

// A matmul with a bias and an activation; n is dynamic, so the loops over
// it are large enough to be parallel at -O1 and above: each thread of the
// team runs its block of the iterations (seq-cpu-static-schedule).
// CHECK-LABEL: llvm.func @dense(
// CHECK:       llvm.call @malloc
// O2:          omp.parallel
// O2:          llvm.call @omp_get_thread_num()
// O2:          llvm.call @omp_get_num_threads()
// CHECK:       llvm.return
func.func @dense(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>,
                 %b: tensor<32xf32>) -> tensor<?x32xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %empty = tensor.empty(%n) : tensor<?x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x32xf32>)
      -> tensor<?x32xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x32xf32>)
                      outs(%init : tensor<?x32xf32>) -> tensor<?x32xf32>
  %y = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<?x32xf32>, tensor<32xf32>) outs(%empty : tensor<?x32xf32>) {
  ^bb0(%m: f32, %bias: f32, %out: f32):
    %s = arith.addf %m, %bias : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}

// -----

// A 4x4 op is far below min-parallel-work: no thread team for it.
// CHECK-LABEL: llvm.func @scale(
// CHECK-NOT:   omp.parallel
// CHECK:       llvm.return
// The C interface of a public function takes every descriptor by pointer.
// CHECK-LABEL: llvm.func @_mlir_ciface_scale(
// CHECK-SAME:    %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
func.func @scale(%x: tensor<4x4xf32>) -> tensor<4x4xf32>
    attributes {llvm.emit_c_interface} {
  %empty = tensor.empty() : tensor<4x4xf32>
  %y = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%empty : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %two = arith.constant 2.0 : f32
    %m = arith.mulf %in, %two : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
