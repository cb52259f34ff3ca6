// RUN: seq-opt %s --seq-lower-dynamic-expand-shape -split-input-file | FileCheck %s
// RUN: seq-opt %s --seq-lower-dynamic-expand-shape --expand-strided-metadata -split-input-file | FileCheck %s --check-prefix=ESM

// A group with two dynamic result dimensions: what 22's
// expand-strided-metadata crashes on. The strides inside the group are
// row-major over the output shape, starting from the source stride.

// CHECK-LABEL: func.func @split_rows(
// CHECK-SAME:    %[[X:.*]]: memref<?x64xf32>, %[[B:.*]]: index, %[[N:.*]]: index)
// CHECK:         %[[C64:.*]] = arith.constant 64 : index
// CHECK:         %[[BASE:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[X]]
// CHECK:         %[[S0:.*]] = arith.muli %[[N]], %[[C64]] : index
// CHECK:         memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%[[B]], %[[N]], 64], strides: [%[[S0]], 64, 1]
// CHECK-SAME:      : memref<f32> to memref<?x?x64xf32>
// ESM-LABEL:   func.func @split_rows(
// ESM-NOT:       memref.expand_shape
func.func @split_rows(%x: memref<?x64xf32>, %b: index, %n: index) -> memref<?x?x64xf32> {
  %e = memref.expand_shape %x [[0, 1], [2]] output_shape [%b, %n, 64]
      : memref<?x64xf32> into memref<?x?x64xf32>
  return %e : memref<?x?x64xf32>
}

// -----

// A strided source: the group's innermost stride is the source's.
// CHECK-LABEL: func.func @strided_source(
// CHECK:         %[[BASE:.*]], %[[OFF:.*]], %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata
// CHECK:         %[[S1:.*]] = arith.muli %[[STRIDES]]#0, %{{.*}} : index
// CHECK:         memref.reinterpret_cast %[[BASE]] to offset: [%[[OFF]]], sizes: [%{{.*}}, %{{.*}}, 4], strides: [%[[S1]], %[[STRIDES]]#0, 1]
func.func @strided_source(%x: memref<?x4xf32, strided<[?, 1], offset: ?>>, %b: index, %n: index)
    -> memref<?x?x4xf32, strided<[?, ?, 1], offset: ?>> {
  %e = memref.expand_shape %x [[0, 1], [2]] output_shape [%b, %n, 4]
      : memref<?x4xf32, strided<[?, 1], offset: ?>> into memref<?x?x4xf32, strided<[?, ?, 1], offset: ?>>
  return %e : memref<?x?x4xf32, strided<[?, ?, 1], offset: ?>>
}

// -----

// One dynamic dimension per group: left to expand-strided-metadata.
// CHECK-LABEL: func.func @one_dynamic(
// CHECK:         memref.expand_shape
func.func @one_dynamic(%x: memref<?x64xf32>, %n: index) -> memref<?x4x16xf32> {
  %e = memref.expand_shape %x [[0], [1, 2]] output_shape [%n, 4, 16]
      : memref<?x64xf32> into memref<?x4x16xf32>
  return %e : memref<?x4x16xf32>
}
