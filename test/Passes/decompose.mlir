// RUN: seq-opt %s --seq-decompose -split-input-file | FileCheck %s

// Self-attention with grouped kv heads, biases, RoPE, ALiBi, a causal mask and
// key lengths: projections, head splits, rope on q and k, the ALiBi slopes
// (folded to a constant), attention, head merge and output projection.
// CHECK-LABEL: func.func @self_attention
//  CHECK-SAME:   %[[X:[^:]+]]: tensor<?x?x64xf32>, %[[WQ:[^:]+]]: tensor<64x64xf32>, %[[WK:[^:]+]]: tensor<32x64xf32>, %[[WV:[^:]+]]: tensor<32x64xf32>, %[[WO:[^:]+]]: tensor<64x64xf32>,
//  CHECK-SAME:   %[[BQ:[^:]+]]: tensor<64xf32>, %[[BK:[^:]+]]: tensor<32xf32>, %[[BV:[^:]+]]: tensor<32xf32>, %[[BO:[^:]+]]: tensor<64xf32>, %[[LEN:[^:]+]]: tensor<?xi32>
//       CHECK:   %[[SLOPES:.+]] = arith.constant dense<[2.500000e-01, 6.250000e-02, 1.562500e-02, 3.906250e-03]> : tensor<4xf32>
//       CHECK:   %[[Q0:.+]] = seq.linear %[[X]], %[[WQ]], %[[BQ]] : tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64xf32> -> tensor<?x?x64xf32>
//       CHECK:   %[[Q1:.+]] = seq.split_heads %[[Q0]] {heads = 4 : i64} : tensor<?x?x64xf32> -> tensor<?x4x?x16xf32>
//       CHECK:   %[[K0:.+]] = seq.linear %[[X]], %[[WK]], %[[BK]] : tensor<?x?x64xf32>, tensor<32x64xf32>, tensor<32xf32> -> tensor<?x?x32xf32>
//       CHECK:   %[[K1:.+]] = seq.split_heads %[[K0]] {heads = 2 : i64} : tensor<?x?x32xf32> -> tensor<?x2x?x16xf32>
//       CHECK:   %[[V0:.+]] = seq.linear %[[X]], %[[WV]], %[[BV]]
//       CHECK:   %[[V1:.+]] = seq.split_heads %[[V0]] {heads = 2 : i64} : tensor<?x?x32xf32> -> tensor<?x2x?x16xf32>
//       CHECK:   %[[Q2:.+]] = seq.rope %[[Q1]] {theta = 5.000000e+02 : f64} : tensor<?x4x?x16xf32>
//       CHECK:   %[[K2:.+]] = seq.rope %[[K1]] {theta = 5.000000e+02 : f64} : tensor<?x2x?x16xf32>
//       CHECK:   %[[O:.+]] = seq.attention %[[Q2]], %[[K2]], %[[V1]] lengths(%[[LEN]] : tensor<?xi32>) alibi(%[[SLOPES]] : tensor<4xf32>) {mask = #seq.mask<causal = true>}
//  CHECK-SAME:     : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x4x?x16xf32>
//       CHECK:   %[[M:.+]] = seq.merge_heads %[[O]] : tensor<?x4x?x16xf32> -> tensor<?x?x64xf32>
//       CHECK:   %[[Y:.+]] = seq.linear %[[M]], %[[WO]], %[[BO]] : tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64xf32> -> tensor<?x?x64xf32>
//       CHECK:   return %[[Y]]
func.func @self_attention(%x: tensor<?x?x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<32x64xf32>, %wv: tensor<32x64xf32>, %wo: tensor<64x64xf32>,
                          %bq: tensor<64xf32>, %bk: tensor<32xf32>, %bv: tensor<32xf32>, %bo: tensor<64xf32>, %len: tensor<?xi32>) -> tensor<?x?x64xf32> {
  %y = seq.multi_head_attention %x weights(%wq, %wk, %wv, %wo : tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>)
      biases(%bq, %bk, %bv, %bo : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64xf32>) lengths(%len : tensor<?xi32>)
      {heads = 4 : i64, kv_heads = 2 : i64, mask = #seq.mask<causal = true>, rope_theta = 5.0e2 : f64, alibi}
      : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Cross-attention: keys and values come from `kv`, whose static batch fixes
// the batch of the attention and of everything after it.
// CHECK-LABEL: func.func @cross_attention
//  CHECK-SAME:   %[[X:[^:]+]]: tensor<?x?x64xf32>, %[[KV:[^:]+]]: tensor<2x?x32xf32>
//   CHECK-NOT:   seq.rope
//       CHECK:   %[[Q:.+]] = seq.split_heads %{{.+}} {heads = 8 : i64} : tensor<?x?x64xf32> -> tensor<?x8x?x8xf32>
//       CHECK:   %[[K0:.+]] = seq.linear %[[KV]], %{{.+}} : tensor<2x?x32xf32>, tensor<64x32xf32> -> tensor<2x?x64xf32>
//       CHECK:   %[[K:.+]] = seq.split_heads %[[K0]] {heads = 8 : i64} : tensor<2x?x64xf32> -> tensor<2x8x?x8xf32>
//       CHECK:   %[[V0:.+]] = seq.linear %[[KV]], %{{.+}} : tensor<2x?x32xf32>, tensor<64x32xf32> -> tensor<2x?x64xf32>
//       CHECK:   %[[V:.+]] = seq.split_heads %[[V0]]
//       CHECK:   %[[O:.+]] = seq.attention %[[Q]], %[[K]], %[[V]] : tensor<?x8x?x8xf32>, tensor<2x8x?x8xf32>, tensor<2x8x?x8xf32> -> tensor<2x8x?x8xf32>
//       CHECK:   %[[M:.+]] = seq.merge_heads %[[O]] : tensor<2x8x?x8xf32> -> tensor<2x?x64xf32>
//       CHECK:   seq.linear %[[M]], %{{.+}} : tensor<2x?x64xf32>, tensor<64x64xf32> -> tensor<2x?x64xf32>
func.func @cross_attention(%x: tensor<?x?x64xf32>, %kv: tensor<2x?x32xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x32xf32>, %wv: tensor<64x32xf32>, %wo: tensor<64x64xf32>) -> tensor<2x?x64xf32> {
  %y = seq.multi_head_attention %x kv(%kv : tensor<2x?x32xf32>) weights(%wq, %wk, %wv, %wo : tensor<64x64xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x64xf32>)
      {heads = 8 : i64, kv_heads = 8 : i64}
      : tensor<?x?x64xf32> -> tensor<2x?x64xf32>
  return %y : tensor<2x?x64xf32>
}
