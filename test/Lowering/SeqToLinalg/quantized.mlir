// RUN: seq-opt %s --convert-seq-to-linalg -split-input-file | FileCheck %s

// A Linear whose weight is a seq.dequantize of q4_0 blocks: one generic over
// (rows, out, block, j) reading x as [rows, in / 32, 32], the nibble of
// weight j (byte j mod 16 after the scale) and the scale's two bytes; the
// dequantize is erased, no f32 weight is built.
// CHECK-DAG: #[[X:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[Q:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3 mod 16 + 2)>
// CHECK-DAG: #[[D0:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, 0)>
// CHECK-DAG: #[[D1:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, 1)>
// CHECK-LABEL: func.func @linear_q4_0
//  CHECK-SAME:   %[[IN:.+]]: tensor<?x64xf32>, %[[B:.+]]: tensor<8x2x18xi8>
//   CHECK-NOT:   seq.dequantize
//       CHECK:   %[[XB:.+]] = tensor.expand_shape %[[IN]] {{\[\[}}0], [1, 2]] output_shape [%{{.+}}, 2, 32] : tensor<?x64xf32> into tensor<?x2x32xf32>
//       CHECK:   linalg.generic {indexing_maps = [#[[X]], #[[Q]], #[[D0]], #[[D1]], #{{.+}}], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[XB]], %[[B]], %[[B]], %[[B]] : {{.*}}) outs(%{{.+}} : tensor<?x8xf32>) attrs = {seq.quantized = "q4_0"}
//       CHECK:     arith.bitcast %{{.+}} : i16 to f16
//       CHECK:     linalg.index 3
//       CHECK:     arith.shrui
//   CHECK-NOT:   tensor<8x64xf32>
func.func @linear_q4_0(%x: tensor<?x64xf32>, %b: tensor<8x2x18xi8>) -> tensor<?x8xf32> {
  %w = seq.dequantize %b {format = "q4_0"} : tensor<8x2x18xi8> -> tensor<8x64xf32>
  %0 = seq.linear %x, %w : tensor<?x64xf32>, tensor<8x64xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// An embedding whose table is a seq.dequantize of q8_0 blocks: one generic
// over the ids and the dim that reads the id's row (clamped to the table)
// and, per element c, byte c mod 32 + 2 of block c / 32 and the block's
// scale; no f32 table is built.
// CHECK-LABEL: func.func @embedding_q8_0
//  CHECK-SAME:   %[[B:.+]]: tensor<10x2x34xi8>, %[[IDS:.+]]: tensor<?xi32>
//   CHECK-NOT:   seq.dequantize
//       CHECK:   linalg.generic {{.*}} ins(%[[IDS]] : tensor<?xi32>) outs(%{{.+}} : tensor<?x64xf32>)
//       CHECK:     arith.minsi %{{.+}}, %[[LAST:.+]] : index
//       CHECK:     %[[C:.+]] = linalg.index 1
//       CHECK:     %[[KB:.+]] = arith.divui %[[C]]
//       CHECK:     %[[J:.+]] = arith.remui %[[C]]
//       CHECK:     tensor.extract %[[B]]
//       CHECK:     arith.bitcast %{{.+}} : i16 to f16
//       CHECK:     arith.sitofp %{{.+}} : i8 to f32
//   CHECK-NOT:   tensor<10x64xf32>
func.func @embedding_q8_0(%b: tensor<10x2x34xi8>, %ids: tensor<?xi32>) -> tensor<?x64xf32> {
  %w = seq.dequantize %b {format = "q8_0"} : tensor<10x2x34xi8> -> tensor<10x64xf32>
  %0 = seq.embedding %w, %ids : tensor<10x64xf32>, tensor<?xi32> -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}
