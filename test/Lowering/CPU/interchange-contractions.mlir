// RUN: seq-opt %s --seq-cpu-interchange-contractions -split-input-file | FileCheck %s
// RUN: seq-opt %s --seq-cpu-interchange-contractions -split-input-file \
// RUN:   -debug-only=seq-cpu-interchange-contractions -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEBUG

// Contractions get the output's contiguous dimension as their innermost loop
// when every input that moves with it is contiguous along it.

// x @ W: (i, j, k) -> (i, k, j); the products of each output element are
// still added in k order.
// CHECK-DAG:   #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG:   #[[B:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG:   #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @matmul(
// CHECK:         linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK:           arith.mulf
// CHECK:           arith.addf
// DEBUG:      [seq-cpu-interchange-contractions] loop order (0, 2, 1) for linalg.matmul at
func.func @matmul(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>,
                  %init: tensor<?x32xf32>) -> tensor<?x32xf32> {
  %0 = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x32xf32>)
                     outs(%init : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}

// -----

// Batched: (b, i, j, k) -> (b, i, k, j).
// CHECK-LABEL: func.func @batch_matmul(
// DEBUG-NEXT: [seq-cpu-interchange-contractions] loop order (0, 1, 3, 2) for linalg.batch_matmul at
// CHECK:         iterator_types = ["parallel", "parallel", "reduction", "parallel"]
func.func @batch_matmul(%p: tensor<?x8x8xf32>, %v: tensor<?x8x16xf32>,
                        %init: tensor<?x8x16xf32>) -> tensor<?x8x16xf32> {
  %0 = linalg.batch_matmul ins(%p, %v : tensor<?x8x8xf32>, tensor<?x8x16xf32>)
                           outs(%init : tensor<?x8x16xf32>) -> tensor<?x8x16xf32>
  return %0 : tensor<?x8x16xf32>
}

// -----

// x @ W^T reads W[j, k]: a j-inner loop would stride through W. Unchanged.
// CHECK-LABEL: func.func @matmul_transposed(
// DEBUG-NEXT: [seq-cpu-interchange-contractions] kept: input 1 is not contiguous along the output's last dimension:
// CHECK:         linalg.matmul
func.func @matmul_transposed(%x: tensor<?x64xf32>, %w: tensor<32x64xf32>,
                             %init: tensor<?x32xf32>) -> tensor<?x32xf32> {
  %0 = linalg.matmul
      indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                       affine_map<(d0, d1, d2) -> (d1, d2)>,
                       affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%x, %w : tensor<?x64xf32>, tensor<32x64xf32>)
      outs(%init : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}

// -----

// A row reduction has no input reused across the inner loop. Unchanged.
// CHECK-LABEL: func.func @row_sum(
// DEBUG-NEXT: [seq-cpu-interchange-contractions] not a contraction on tensors: linalg.generic at
// CHECK:         iterator_types = ["parallel", "reduction"]
func.func @row_sum(%x: tensor<?x64xf32>, %init: tensor<?xf32>) -> tensor<?xf32> {
  %0 = linalg.generic {
      indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>],
      iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x64xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Buffers are left alone: the pass runs before bufferization.
// CHECK-LABEL: func.func @on_buffers(
// DEBUG-NEXT: [seq-cpu-interchange-contractions] not a contraction on tensors: linalg.matmul at
// CHECK:         linalg.matmul
func.func @on_buffers(%x: memref<4x4xf32>, %w: memref<4x4xf32>, %y: memref<4x4xf32>) {
  linalg.matmul ins(%x, %w : memref<4x4xf32>, memref<4x4xf32>)
                outs(%y : memref<4x4xf32>)
  return
}
