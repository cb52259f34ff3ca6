// RUN: seq-opt %s --split-input-file --seq-reassociate-linear-attention=remarks --verify-diagnostics | FileCheck %s

// Static lengths where the reassociated form is cheaper (n = m = 512, d =
// e = 32): phi(Q) (phi(K)^T V) and phi(Q) sum(phi(K))^T replace the scores.
// CHECK-LABEL: func.func @static_long
//  CHECK-SAME:   (%[[Q:.*]]: tensor<2x512x32xf32>, %[[K:.*]]: tensor<2x512x32xf32>, %[[V:.*]]: tensor<2x512x32xf32>)
//   CHECK-NOT:   tensor<2x512x512xf32>
//   CHECK-DAG:   %[[KT:.*]] = seq.transpose %[[K]] [0, 2, 1] : tensor<2x512x32xf32> -> tensor<2x32x512xf32>
//   CHECK-DAG:   %[[KV:.*]] = seq.matmul %[[KT]], %[[V]] : tensor<2x32x512xf32>, tensor<2x512x32xf32> -> tensor<2x32x32xf32>
//   CHECK-DAG:   %[[NUM:.*]] = seq.matmul %[[Q]], %[[KV]] : tensor<2x512x32xf32>, tensor<2x32x32xf32> -> tensor<2x512x32xf32>
//   CHECK-DAG:   %[[Z:.*]] = seq.reduce sum %[[K]] axes [1] keepdim : tensor<2x512x32xf32> -> tensor<2x1x32xf32>
//   CHECK-DAG:   %[[DEN:.*]] = seq.matmul %[[Q]], %[[Z]] transpose_rhs : tensor<2x512x32xf32>, tensor<2x1x32xf32> -> tensor<2x512x1xf32>
//       CHECK:   seq.div %[[NUM]], %[[DEN]]
func.func @static_long(%q: tensor<2x512x32xf32>, %k: tensor<2x512x32xf32>, %v: tensor<2x512x32xf32>) -> tensor<2x512x32xf32> {
  // expected-remark @below {{linear attention: reassociated form chosen (1081344 multiply-adds reassociated, 17039360 quadratic, per batch element)}}
  %s = seq.matmul %q, %k transpose_rhs : tensor<2x512x32xf32>, tensor<2x512x32xf32> -> tensor<2x512x512xf32>
  %num = seq.matmul %s, %v : tensor<2x512x512xf32>, tensor<2x512x32xf32> -> tensor<2x512x32xf32>
  %den = seq.reduce sum %s axes [2] keepdim : tensor<2x512x512xf32> -> tensor<2x512x1xf32>
  %y = seq.div %num, %den : tensor<2x512x32xf32>, tensor<2x512x1xf32> -> tensor<2x512x32xf32>
  return %y : tensor<2x512x32xf32>
}

// -----

// Short static lengths (n = m = 16, d = e = 64): the quadratic form is
// cheaper and stays.
// CHECK-LABEL: func.func @static_short
//       CHECK:   seq.matmul %{{.*}}, %{{.*}} transpose_rhs : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x16xf32>
//   CHECK-NOT:   seq.transpose
func.func @static_short(%q: tensor<1x16x64xf32>, %k: tensor<1x16x64xf32>, %v: tensor<1x16x64xf32>) -> tensor<1x16x64xf32> {
  // expected-remark @below {{linear attention: quadratic form chosen (131072 multiply-adds reassociated, 32768 quadratic, per batch element)}}
  %s = seq.matmul %q, %k transpose_rhs : tensor<1x16x64xf32>, tensor<1x16x64xf32> -> tensor<1x16x16xf32>
  %y = seq.matmul %s, %v : tensor<1x16x16xf32>, tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

// -----

// Symbolic lengths: both forms, behind the costs compared at run time.
// CHECK-LABEL: func.func @symbolic
//       CHECK:   %[[N:.*]] = tensor.dim %{{.*}}, %c2 : tensor<?x4x?x64xf32>
//       CHECK:   %[[M:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x4x?x64xf32>
//       CHECK:   %[[NM:.*]] = arith.muli %[[N]], %[[M]]
//       CHECK:   %[[QUAD:.*]] = arith.muli %[[NM]], %c128
//       CHECK:   %[[SUM:.*]] = arith.addi %[[M]], %[[N]]
//       CHECK:   %[[RE:.*]] = arith.muli %[[SUM]], %c4096
//       CHECK:   %[[CHEAPER:.*]] = arith.cmpi ult, %[[RE]], %[[QUAD]]
//       CHECK:   scf.if %[[CHEAPER]] -> (tensor<?x4x?x64xf32>) {
//       CHECK:     seq.transpose
//       CHECK:   } else {
//       CHECK:     seq.matmul %{{.*}}, %{{.*}} transpose_rhs : tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x?x?xf32>
func.func @symbolic(%q: tensor<?x4x?x64xf32>, %k: tensor<?x4x?x64xf32>, %v: tensor<?x4x?x64xf32>) -> tensor<?x4x?x64xf32> {
  // expected-remark @below {{linear attention: reassociated form when 4096 (n + m) < 128 n m multiply-adds at run time (n, m symbolic), else the quadratic form}}
  %s = seq.matmul %q, %k transpose_rhs : tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x?x?xf32>
  %y = seq.matmul %s, %v : tensor<?x4x?x?xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x?x64xf32>
  return %y : tensor<?x4x?x64xf32>
}

// -----

// Where it must not fire: softmax attention (the scores have another use),
// and scores that are also returned.
// CHECK-LABEL: func.func @softmax_attention
//   CHECK-NOT:   seq.transpose
// CHECK-LABEL: func.func @scores_escape
//   CHECK-NOT:   seq.transpose
func.func @softmax_attention(%q: tensor<1x512x32xf32>, %k: tensor<1x512x32xf32>, %v: tensor<1x512x32xf32>) -> tensor<1x512x32xf32> {
  %s = seq.matmul %q, %k transpose_rhs : tensor<1x512x32xf32>, tensor<1x512x32xf32> -> tensor<1x512x512xf32>
  %p = seq.softmax %s axis -1 : tensor<1x512x512xf32>
  %y = seq.matmul %p, %v : tensor<1x512x512xf32>, tensor<1x512x32xf32> -> tensor<1x512x32xf32>
  return %y : tensor<1x512x32xf32>
}
func.func @scores_escape(%q: tensor<1x512x32xf32>, %k: tensor<1x512x32xf32>, %v: tensor<1x512x32xf32>) -> (tensor<1x512x32xf32>, tensor<1x512x512xf32>) {
  %s = seq.matmul %q, %k transpose_rhs : tensor<1x512x32xf32>, tensor<1x512x32xf32> -> tensor<1x512x512xf32>
  %y = seq.matmul %s, %v : tensor<1x512x512xf32>, tensor<1x512x32xf32> -> tensor<1x512x32xf32>
  return %y, %s : tensor<1x512x32xf32>, tensor<1x512x512xf32>
}
