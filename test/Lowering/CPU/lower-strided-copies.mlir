// RUN: seq-opt %s --seq-cpu-lower-strided-copies -split-input-file | FileCheck %s

// Copies that finalize-memref-to-llvm would lower to a memrefCopy call
// become linalg.copy; contiguous ones stay memref.copy (llvm.memcpy).

// CHECK-LABEL: func.func @strided(
// CHECK-SAME:    %[[SRC:.*]]: memref<4x4xf32, strided<[8, 1]>>, %[[DST:.*]]: memref<4x4xf32>)
// CHECK:         linalg.copy ins(%[[SRC]] : memref<4x4xf32, strided<[8, 1]>>) outs(%[[DST]] : memref<4x4xf32>)
// CHECK-NOT:     memref.copy
func.func @strided(%src: memref<4x4xf32, strided<[8, 1]>>, %dst: memref<4x4xf32>) {
  memref.copy %src, %dst : memref<4x4xf32, strided<[8, 1]>> to memref<4x4xf32>
  return
}

// -----

// CHECK-LABEL: func.func @contiguous(
// CHECK:         memref.copy
// CHECK-NOT:     linalg.copy
func.func @contiguous(%src: memref<?x4xf32>, %dst: memref<?x4xf32>) {
  memref.copy %src, %dst : memref<?x4xf32> to memref<?x4xf32>
  return
}

// -----

// A static layout that is row-major contiguous (with an offset) is contiguous.
// CHECK-LABEL: func.func @offset(
// CHECK:         memref.copy
func.func @offset(%src: memref<4x4xf32, strided<[4, 1], offset: 16>>, %dst: memref<4x4xf32>) {
  memref.copy %src, %dst : memref<4x4xf32, strided<[4, 1], offset: 16>> to memref<4x4xf32>
  return
}
