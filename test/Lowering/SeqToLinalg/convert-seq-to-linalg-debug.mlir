// RUN: seq-opt %s --split-input-file \
// RUN:   --convert-seq-to-linalg="scan-vector-lanes=16 row-forms=1" \
// RUN:   -debug-only=convert-seq-to-linalg -o /dev/null 2>&1 | FileCheck %s

// The trace of convert-seq-to-linalg says the form each op takes, and why a
// fast form does not apply even without `remarks`.

// CHECK:      [convert-seq-to-linalg] scan-vector-lanes 16, linear-attention-chunk 0, row-forms on
// CHECK-NEXT: [convert-seq-to-linalg] seq.selective_scan at loc({{.*}}":[[@LINE+6]]:8): fused scan, 2 block(s) of 16 channels, state size 4 in registers, exp by exponent bits
// CHECK-NEXT: [convert-seq-to-linalg] seq.selective_scan at loc({{.*}}":[[@LINE+7]]:9): selective scan takes the step-by-step reference lowering: the 24 channels are not a multiple of the 16 vector lanes
// CHECK-NEXT: [convert-seq-to-linalg] seq.selective_scan at loc({{.*}}":[[@LINE+6]]:9): the step-by-step reference form, in f32
func.func @scans(%u: tensor<?x?x32xf32>, %a: tensor<32x4xf32>, %b: tensor<?x?x4xf32>,
                 %u2: tensor<?x?x24xf32>, %a2: tensor<24x4xf32>)
    -> (tensor<?x?x32xf32>, tensor<?x?x24xf32>) {
  %y = seq.selective_scan %u, %u, %a, %b, %b
       : tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<32x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32> -> tensor<?x?x32xf32>
  %y2 = seq.selective_scan %u2, %u2, %a2, %b, %b
       : tensor<?x?x24xf32>, tensor<?x?x24xf32>, tensor<24x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32> -> tensor<?x?x24xf32>
  return %y, %y2 : tensor<?x?x32xf32>, tensor<?x?x24xf32>
}

// -----

// CHECK:      [convert-seq-to-linalg] seq.softmax at loc({{.*}}":[[@LINE+5]]:8): the row-block form over axis 1
// CHECK-NEXT: [convert-seq-to-linalg]   blocks of 2 rows of 2048 features
// CHECK:      [convert-seq-to-linalg] seq.softmax at loc({{.*}}":[[@LINE+4]]:8): softmax takes the reference lowering: the axis 0 is not the last of rank 2 (its rows are not contiguous)
func.func @rows(%x: tensor<?x2048xf32>, %y: tensor<4x8xf32>)
    -> (tensor<?x2048xf32>, tensor<4x8xf32>) {
  %0 = seq.softmax %x axis -1 : tensor<?x2048xf32>
  %1 = seq.softmax %y axis 0 : tensor<4x8xf32>
  return %0, %1 : tensor<?x2048xf32>, tensor<4x8xf32>
}
