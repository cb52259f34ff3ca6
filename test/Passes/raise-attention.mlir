// RUN: seq-opt %s --split-input-file --seq-raise-attention=remarks --verify-diagnostics | FileCheck %s

// The multi-head textbook formula: softmax(q k^T / sqrt(d)) v, scale 1/8.
// CHECK-LABEL: func.func @heads
//  CHECK-SAME:   (%[[Q:.*]]: tensor<?x4x?x64xf32>, %[[K:.*]]: tensor<?x4x?x64xf32>, %[[V:.*]]: tensor<?x4x?x32xf32>)
//       CHECK:   %[[O:.*]] = seq.attention %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f64}
//  CHECK-NEXT:   return %[[O]]
func.func @heads(%q: tensor<?x4x?x64xf32>, %k: tensor<?x4x?x64xf32>, %v: tensor<?x4x?x32xf32>) -> tensor<?x4x?x32xf32> {
  %s = seq.matmul %q, %k transpose_rhs : tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x?x?xf32>
  %c = arith.constant dense<8.0> : tensor<f32>
  %t = seq.div %s, %c : tensor<?x4x?x?xf32>, tensor<f32> -> tensor<?x4x?x?xf32>
  %p = seq.softmax %t axis -1 : tensor<?x4x?x?xf32>
  // expected-remark @below {{softmax(q @ k^T * 1.250000e-01) @ v raised to seq.attention}}
  %o = seq.matmul %p, %v : tensor<?x4x?x?xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x32xf32>
  return %o : tensor<?x4x?x32xf32>
}

// -----

// One head ([b, n, d]), a causal mask with key lengths after the scale (a
// multiplication, constant first), and the softmax axis spelled positively.
// CHECK-LABEL: func.func @one_head
//       CHECK:   tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2], [3]] output_shape [%{{.*}}, 1, %{{.*}}, 16] : tensor<?x?x16xf32> into tensor<?x1x?x16xf32>
//       CHECK:   %[[O:.*]] = seq.attention %{{.*}}, %{{.*}}, %{{.*}} lengths(%{{.*}} : tensor<?xi32>) {mask = #seq.mask<causal = true>, scale = 2.500000e-01 : f64}
//       CHECK:   tensor.collapse_shape %[[O]] {{\[}}[0, 1], [2], [3]] : tensor<?x1x?x16xf32> into tensor<?x?x16xf32>
func.func @one_head(%q: tensor<?x?x16xf32>, %k: tensor<?x?x16xf32>, %v: tensor<?x?x16xf32>, %len: tensor<?xi32>) -> tensor<?x?x16xf32> {
  %s = seq.matmul %q, %k transpose_rhs : tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x?xf32>
  %c = arith.constant dense<0.25> : tensor<f32>
  %t = seq.mul %c, %s : tensor<f32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %m = seq.apply_mask %t lengths(%len : tensor<?xi32>) {mask = #seq.mask<causal = true>} : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %p = seq.softmax %m axis 2 : tensor<?x?x?xf32>
  // expected-remark @below {{softmax(q @ k^T * 2.500000e-01, masked #seq.mask<causal = true>) @ v raised to seq.attention}}
  %o = seq.matmul %p, %v : tensor<?x?x?xf32>, tensor<?x?x16xf32> -> tensor<?x?x16xf32>
  return %o : tensor<?x?x16xf32>
}

// -----

// The mask before the scale, no scale at all elsewhere, and keys and values
// of one head shared by the query heads (multi-query).
// CHECK-LABEL: func.func @shared_kv
//       CHECK:   seq.attention %{{.*}}, %{{.*}}, %{{.*}} {mask = #seq.mask<window = 8>, scale = 5.000000e-01 : f64} : tensor<2x4x?x8xf32>, tensor<2x1x?x8xf32>, tensor<2x1x?x8xf32> -> tensor<2x4x?x8xf32>
// CHECK-LABEL: func.func @unscaled
//       CHECK:   seq.attention %{{.*}}, %{{.*}}, %{{.*}} {scale = 1.000000e+00 : f64}
func.func @shared_kv(%q: tensor<2x4x?x8xf32>, %k: tensor<2x1x?x8xf32>, %v: tensor<2x1x?x8xf32>) -> tensor<2x4x?x8xf32> {
  %s = seq.matmul %q, %k transpose_rhs : tensor<2x4x?x8xf32>, tensor<2x1x?x8xf32> -> tensor<2x4x?x?xf32>
  %m = seq.apply_mask %s {mask = #seq.mask<window = 8>} : tensor<2x4x?x?xf32> -> tensor<2x4x?x?xf32>
  %c = arith.constant dense<2.0> : tensor<f32>
  %t = seq.div %m, %c : tensor<2x4x?x?xf32>, tensor<f32> -> tensor<2x4x?x?xf32>
  %p = seq.softmax %t axis -1 : tensor<2x4x?x?xf32>
  // expected-remark @below {{raised to seq.attention}}
  %o = seq.matmul %p, %v : tensor<2x4x?x?xf32>, tensor<2x1x?x8xf32> -> tensor<2x4x?x8xf32>
  return %o : tensor<2x4x?x8xf32>
}
func.func @unscaled(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %v: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %s = seq.matmul %q, %k transpose_rhs : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x?xf32>
  %p = seq.softmax %s axis -1 : tensor<1x2x?x?xf32>
  // expected-remark @below {{raised to seq.attention}}
  %o = seq.matmul %p, %v : tensor<1x2x?x?xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}

// -----

// Where it must not fire: the weights are also returned; the softmax runs
// over the queries; the scale is not a constant; the batch of k may
// broadcast against the queries'; q @ k without the transpose.
// CHECK-LABEL: func.func @weights_escape
//   CHECK-NOT:   seq.attention
// CHECK-LABEL: func.func @wrong_axis
//   CHECK-NOT:   seq.attention
// CHECK-LABEL: func.func @variable_scale
//   CHECK-NOT:   seq.attention
// CHECK-LABEL: func.func @broadcast_batch
//   CHECK-NOT:   seq.attention
// CHECK-LABEL: func.func @not_transposed
//   CHECK-NOT:   seq.attention
func.func @weights_escape(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %s = seq.matmul %q, %k transpose_rhs : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %p = seq.softmax %s axis -1 : tensor<1x2x4x4xf32>
  %o = seq.matmul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o, %p : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}
func.func @wrong_axis(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = seq.matmul %q, %k transpose_rhs : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %p = seq.softmax %s axis 2 : tensor<1x2x4x4xf32>
  %o = seq.matmul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}
func.func @variable_scale(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %c: tensor<f32>) -> tensor<1x2x4x8xf32> {
  %s = seq.matmul %q, %k transpose_rhs : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  %t = seq.div %s, %c : tensor<1x2x4x4xf32>, tensor<f32> -> tensor<1x2x4x4xf32>
  %p = seq.softmax %t axis -1 : tensor<1x2x4x4xf32>
  %o = seq.matmul %p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}
func.func @broadcast_batch(%q: tensor<3x4x8xf32>, %k: tensor<1x4x8xf32>, %v: tensor<1x4x8xf32>) -> tensor<3x4x8xf32> {
  %s = seq.matmul %q, %k transpose_rhs : tensor<3x4x8xf32>, tensor<1x4x8xf32> -> tensor<3x4x4xf32>
  %p = seq.softmax %s axis -1 : tensor<3x4x4xf32>
  %o = seq.matmul %p, %v : tensor<3x4x4xf32>, tensor<1x4x8xf32> -> tensor<3x4x8xf32>
  return %o : tensor<3x4x8xf32>
}
func.func @not_transposed(%q: tensor<1x4x8xf32>, %k: tensor<1x8x4xf32>, %v: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %s = seq.matmul %q, %k : tensor<1x4x8xf32>, tensor<1x8x4xf32> -> tensor<1x4x4xf32>
  %p = seq.softmax %s axis -1 : tensor<1x4x4xf32>
  %o = seq.matmul %p, %v : tensor<1x4x4xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  return %o : tensor<1x4x8xf32>
}
