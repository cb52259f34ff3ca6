// RUN: seq-opt %s --convert-seq-to-linalg -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @matmul_2d
//  CHECK-SAME:   %[[A:.+]]: tensor<?x64xf32>, %[[B:.+]]: tensor<64x32xf32>
//       CHECK:   %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
//       CHECK:   %[[INIT:.+]] = tensor.empty(%{{.+}}) : tensor<?x32xf32>
//       CHECK:   %[[ACC:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[INIT]] : tensor<?x32xf32>)
//       CHECK:   %[[R:.+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<?x64xf32>, tensor<64x32xf32>) outs(%[[ACC]] : tensor<?x32xf32>)
//       CHECK:   return %[[R]]
func.func @matmul_2d(%a: tensor<?x64xf32>, %b: tensor<64x32xf32>) -> tensor<?x32xf32> {
  %0 = seq.matmul %a, %b : tensor<?x64xf32>, tensor<64x32xf32> -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}

// -----

// A shared rank-2 rhs: the lhs batch dims become rows of one matmul, here
// with transposed-B maps.
// CHECK-DAG: #[[MA:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[MB:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[MC:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @matmul_shared_rhs
//  CHECK-SAME:   %[[A:.+]]: tensor<?x?x64xf32>, %[[B:.+]]: tensor<32x64xf32>
//       CHECK:   %[[D0:.+]] = tensor.dim %[[A]], %{{.+}}
//       CHECK:   %[[D1:.+]] = tensor.dim %[[A]], %{{.+}}
//       CHECK:   %[[ROWS:.+]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1], [2]] : tensor<?x?x64xf32> into tensor<?x64xf32>
//       CHECK:   %[[MM:.+]] = linalg.matmul indexing_maps = [#[[MA]], #[[MB]], #[[MC]]]
//  CHECK-SAME:     ins(%[[ROWS]], %[[B]] : tensor<?x64xf32>, tensor<32x64xf32>)
//       CHECK:   %[[R:.+]] = tensor.expand_shape %[[MM]] {{\[}}[0, 1], [2]] output_shape [%[[D0]], %[[D1]], 32]
//       CHECK:   return %[[R]]
func.func @matmul_shared_rhs(%a: tensor<?x?x64xf32>, %b: tensor<32x64xf32>) -> tensor<?x?x32xf32> {
  %0 = seq.matmul %a, %b transpose_rhs : tensor<?x?x64xf32>, tensor<32x64xf32> -> tensor<?x?x32xf32>
  return %0 : tensor<?x?x32xf32>
}

// -----

// Equal batch dims: one batch_matmul over the collapsed batch, after checking
// the dynamic batch sizes agree.
// CHECK-LABEL: func.func @matmul_batched
//  CHECK-SAME:   %[[Q:.+]]: tensor<?x8x?x64xf32>, %[[K:.+]]: tensor<?x8x?x64xf32>
//       CHECK:   cf.assert
//       CHECK:   %[[Q3:.+]] = tensor.collapse_shape %[[Q]] {{\[}}[0, 1], [2], [3]] : tensor<?x8x?x64xf32> into tensor<?x?x64xf32>
//       CHECK:   %[[K3:.+]] = tensor.collapse_shape %[[K]] {{\[}}[0, 1], [2], [3]] : tensor<?x8x?x64xf32> into tensor<?x?x64xf32>
//       CHECK:   %[[ACC:.+]] = linalg.fill
//       CHECK:   %[[S:.+]] = linalg.batch_matmul indexing_maps = [{{.+}}] ins(%[[Q3]], %[[K3]] : tensor<?x?x64xf32>, tensor<?x?x64xf32>) outs(%[[ACC]] : tensor<?x?x?xf32>)
//       CHECK:   tensor.expand_shape %[[S]] {{\[}}[0, 1], [2], [3]] output_shape [%{{.+}}, 8, %{{.+}}, %{{.+}}] : tensor<?x?x?xf32> into tensor<?x8x?x?xf32>
func.func @matmul_batched(%q: tensor<?x8x?x64xf32>, %k: tensor<?x8x?x64xf32>) -> tensor<?x8x?x?xf32> {
  %0 = seq.matmul %q, %k transpose_rhs : tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32> -> tensor<?x8x?x?xf32>
  return %0 : tensor<?x8x?x?xf32>
}

// -----

// Broadcast batch dims: a generic contraction (batch..., m, n, k), the
// broadcast batch dim read at 0, the missing one dropped; f16 accumulates in
// f32.
// CHECK-DAG: #[[LHS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d4)>
// CHECK-DAG: #[[RHS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @matmul_broadcast_batch
//       CHECK:   %[[ACC:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<4x6x3x7xf32>)
//       CHECK:   %[[P:.+]] = linalg.generic
//  CHECK-SAME:     indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]]
//  CHECK-SAME:     iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
//  CHECK-SAME:     outs(%[[ACC]] : tensor<4x6x3x7xf32>)
//       CHECK:   ^bb0(%[[X:.+]]: f16, %[[Y:.+]]: f16, %[[Z:.+]]: f32):
//       CHECK:     %[[XF:.+]] = arith.extf %[[X]] : f16 to f32
//       CHECK:     %[[YF:.+]] = arith.extf %[[Y]] : f16 to f32
//       CHECK:     %[[M:.+]] = arith.mulf %[[XF]], %[[YF]] : f32
//       CHECK:     arith.addf %[[Z]], %[[M]] : f32
//       CHECK:   linalg.generic {{.+}} ins(%[[P]] : tensor<4x6x3x7xf32>) outs(%{{.+}} : tensor<4x6x3x7xf16>)
//       CHECK:     arith.truncf
func.func @matmul_broadcast_batch(%a: tensor<4x1x3x5xf16>, %b: tensor<6x5x7xf16>) -> tensor<4x6x3x7xf16> {
  %0 = seq.matmul %a, %b : tensor<4x1x3x5xf16>, tensor<6x5x7xf16> -> tensor<4x6x3x7xf16>
  return %0 : tensor<4x6x3x7xf16>
}

// -----

// y = x W^T + b: rows of x times W with transposed-B maps, accumulating onto
// the bias broadcast over the rows.
// CHECK-DAG: #[[MA:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[MB:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[MC:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[BIAS:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @linear_bias
//  CHECK-SAME:   %[[X:.+]]: tensor<?x?x64xf32>, %[[W:.+]]: tensor<256x64xf32>, %[[B:.+]]: tensor<256xf32>
//       CHECK:   %[[D0:.+]] = tensor.dim %[[X]]
//       CHECK:   %[[D1:.+]] = tensor.dim %[[X]]
//       CHECK:   %[[ROWS:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<?x?x64xf32> into tensor<?x64xf32>
//       CHECK:   %[[INIT:.+]] = tensor.empty(%{{.+}}) : tensor<?x256xf32>
//       CHECK:   %[[ACC:.+]] = linalg.generic {indexing_maps = [#[[BIAS]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
//  CHECK-SAME:     ins(%[[B]] : tensor<256xf32>) outs(%[[INIT]] : tensor<?x256xf32>)
//       CHECK:   %[[MM:.+]] = linalg.matmul indexing_maps = [#[[MA]], #[[MB]], #[[MC]]]
//  CHECK-SAME:     ins(%[[ROWS]], %[[W]] : tensor<?x64xf32>, tensor<256x64xf32>) outs(%[[ACC]] : tensor<?x256xf32>)
//       CHECK:   %[[Y:.+]] = tensor.expand_shape %[[MM]] {{\[}}[0, 1], [2]] output_shape [%[[D0]], %[[D1]], 256]
//       CHECK:   return %[[Y]]
func.func @linear_bias(%x: tensor<?x?x64xf32>, %w: tensor<256x64xf32>, %b: tensor<256xf32>) -> tensor<?x?x256xf32> {
  %y = seq.linear %x, %w, %b : tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
  return %y : tensor<?x?x256xf32>
}

// -----

// A vector input becomes one row.
// CHECK-LABEL: func.func @linear_vector
//       CHECK:   %[[ROW:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0, 1]] output_shape [1, 64] : tensor<64xf32> into tensor<1x64xf32>
//       CHECK:   %[[ACC:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<1x256xf32>)
//       CHECK:   %[[MM:.+]] = linalg.matmul indexing_maps = [{{.+}}] ins(%[[ROW]], %{{.+}} : tensor<1x64xf32>, tensor<256x64xf32>) outs(%[[ACC]] : tensor<1x256xf32>)
//       CHECK:   tensor.collapse_shape %[[MM]] {{\[}}[0, 1]] : tensor<1x256xf32> into tensor<256xf32>
func.func @linear_vector(%x: tensor<64xf32>, %w: tensor<256x64xf32>) -> tensor<256xf32> {
  %y = seq.linear %x, %w : tensor<64xf32>, tensor<256x64xf32> -> tensor<256xf32>
  return %y : tensor<256xf32>
}

// -----

// A gather with the index clamped to [0, vocab).
// CHECK-DAG: #[[IDS:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @embedding
//  CHECK-SAME:   %[[T:.+]]: tensor<?x64xf32>, %[[IDS_ARG:.+]]: tensor<?x?xi32>
//       CHECK:   %[[V:.+]] = tensor.dim %[[T]], %{{.+}} : tensor<?x64xf32>
//       CHECK:   %[[LAST:.+]] = arith.subi %[[V]], %{{.+}} : index
//       CHECK:   linalg.generic {indexing_maps = [#[[IDS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel"]}
//  CHECK-SAME:     ins(%[[IDS_ARG]] : tensor<?x?xi32>) outs(%{{.+}} : tensor<?x?x64xf32>)
//       CHECK:   ^bb0(%[[ID:.+]]: i32, %{{.+}}: f32):
//       CHECK:     %[[I:.+]] = arith.index_cast %[[ID]] : i32 to index
//       CHECK:     %[[LO:.+]] = arith.maxsi %[[I]], %{{.+}} : index
//       CHECK:     %[[ROW:.+]] = arith.minsi %[[LO]], %[[LAST]] : index
//       CHECK:     %[[COL:.+]] = linalg.index 2 : index
//       CHECK:     %[[E:.+]] = tensor.extract %[[T]][%[[ROW]], %[[COL]]] : tensor<?x64xf32>
//       CHECK:     linalg.yield %[[E]] : f32
func.func @embedding(%t: tensor<?x64xf32>, %ids: tensor<?x?xi32>) -> tensor<?x?x64xf32> {
  %0 = seq.embedding %t, %ids : tensor<?x64xf32>, tensor<?x?xi32> -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}
