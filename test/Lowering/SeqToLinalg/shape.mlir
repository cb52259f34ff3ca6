// RUN: seq-opt %s --convert-seq-to-linalg -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @transpose
//  CHECK-SAME:   %[[X:.+]]: tensor<?x?x64xf32>
//       CHECK:   %[[D0:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<?x?x64xf32>
//       CHECK:   %[[D1:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<?x?x64xf32>
//       CHECK:   %[[INIT:.+]] = tensor.empty(%[[D0]], %[[D1]]) : tensor<?x64x?xf32>
//       CHECK:   %[[T:.+]] = linalg.transpose ins(%[[X]] : tensor<?x?x64xf32>)
//  CHECK-SAME:     outs(%[[INIT]] : tensor<?x64x?xf32>) permutation = [0, 2, 1]
//       CHECK:   return %[[T]]
func.func @transpose(%x: tensor<?x?x64xf32>) -> tensor<?x64x?xf32> {
  %0 = seq.transpose %x [0, 2, 1] : tensor<?x?x64xf32> -> tensor<?x64x?xf32>
  return %0 : tensor<?x64x?xf32>
}

// -----

// A reshape that splits one dimension is an expand_shape, after checking the
// element counts.
// CHECK-LABEL: func.func @reshape_expand
//  CHECK-SAME:   %[[X:.+]]: tensor<?x64xf32>, %[[N:.+]]: index
//       CHECK:   %[[D:.+]] = tensor.dim %[[X]], %{{.+}}
//       CHECK:   %[[SRC:.+]] = arith.muli %[[D]], %{{.+}} : index
//       CHECK:   %[[DST:.+]] = arith.muli %[[N]], %{{.+}} : index
//       CHECK:   %[[EQ:.+]] = arith.cmpi eq, %[[SRC]], %[[DST]] : index
//       CHECK:   cf.assert %[[EQ]], "seq.reshape: element counts of input and result differ"
//       CHECK:   %[[E:.+]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2]] output_shape [%[[N]], 4, 16]
//  CHECK-SAME:     : tensor<?x64xf32> into tensor<?x4x16xf32>
//       CHECK:   return %[[E]]
func.func @reshape_expand(%x: tensor<?x64xf32>, %n: index) -> tensor<?x4x16xf32> {
  %0 = seq.reshape %x [%n] : tensor<?x64xf32> -> tensor<?x4x16xf32>
  return %0 : tensor<?x4x16xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_collapse
//       CHECK:   cf.assert
//       CHECK:   tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2]] : tensor<?x4x16xf32> into tensor<?x64xf32>
func.func @reshape_collapse(%x: tensor<?x4x16xf32>, %n: index) -> tensor<?x64xf32> {
  %0 = seq.reshape %x [%n] : tensor<?x4x16xf32> -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// -----

// Static shapes that do not regroup go through 1-D, with no run-time check.
// CHECK-LABEL: func.func @reshape_regroup
//   CHECK-NOT:   cf.assert
//       CHECK:   %[[F:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0, 1]] : tensor<6x4xf32> into tensor<24xf32>
//       CHECK:   tensor.expand_shape %[[F]] {{\[}}[0, 1]] output_shape [3, 8] : tensor<24xf32> into tensor<3x8xf32>
func.func @reshape_regroup(%x: tensor<6x4xf32>) -> tensor<3x8xf32> {
  %0 = seq.reshape %x : tensor<6x4xf32> -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

// Several dynamic groups cannot be matched from the types: through 1-D.
// CHECK-LABEL: func.func @reshape_dynamic_groups
//  CHECK-SAME:   %[[X:.+]]: tensor<?x?xf32>, %[[A:.+]]: index, %[[B:.+]]: index, %[[C:.+]]: index
//       CHECK:   cf.assert
//       CHECK:   %[[F:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
//       CHECK:   tensor.expand_shape %[[F]] {{\[}}[0, 1, 2]] output_shape [%[[A]], %[[B]], %[[C]]]
func.func @reshape_dynamic_groups(%x: tensor<?x?xf32>, %a: index, %b: index, %c: index) -> tensor<?x?x?xf32> {
  %0 = seq.reshape %x [%a, %b, %c] : tensor<?x?xf32> -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

// -----

// Rank 0 needs tensor.reshape with a shape operand.
// CHECK-LABEL: func.func @reshape_to_scalar
//       CHECK:   %[[SHAPE:.+]] = tensor.empty() : tensor<0xindex>
//       CHECK:   tensor.reshape %{{.+}}(%[[SHAPE]]) : (tensor<1x1xf32>, tensor<0xindex>) -> tensor<f32>
func.func @reshape_to_scalar(%x: tensor<1x1xf32>) -> tensor<f32> {
  %0 = seq.reshape %x : tensor<1x1xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// [b, n, h*d] -> [b, n, h, d] -> [b, h, n, d].
// CHECK-LABEL: func.func @split_heads
//  CHECK-SAME:   %[[X:.+]]: tensor<?x?x512xf32>
//       CHECK:   %[[B:.+]] = tensor.dim %[[X]], %{{.+}}
//       CHECK:   %[[N:.+]] = tensor.dim %[[X]], %{{.+}}
//       CHECK:   %[[E:.+]] = tensor.expand_shape %[[X]] {{\[}}[0], [1], [2, 3]] output_shape [%[[B]], %[[N]], 8, 64]
//  CHECK-SAME:     : tensor<?x?x512xf32> into tensor<?x?x8x64xf32>
//       CHECK:   %[[INIT:.+]] = tensor.empty(%[[B]], %[[N]]) : tensor<?x8x?x64xf32>
//       CHECK:   %[[T:.+]] = linalg.transpose ins(%[[E]] : tensor<?x?x8x64xf32>) outs(%[[INIT]] : tensor<?x8x?x64xf32>) permutation = [0, 2, 1, 3]
//       CHECK:   return %[[T]]
func.func @split_heads(%x: tensor<?x?x512xf32>) -> tensor<?x8x?x64xf32> {
  %0 = seq.split_heads %x {heads = 8 : i64} : tensor<?x?x512xf32> -> tensor<?x8x?x64xf32>
  return %0 : tensor<?x8x?x64xf32>
}

// -----

// A dynamic feature size is checked to divide by the heads.
// CHECK-LABEL: func.func @split_heads_dynamic
//       CHECK:   %[[C2:.+]] = arith.constant 2 : index
//       CHECK:   %[[F:.+]] = tensor.dim %{{.+}}, %[[C2]] : tensor<?x?x?xf32>
//       CHECK:   %[[REM:.+]] = arith.remui %[[F]], %[[H:.+]] : index
//       CHECK:   %[[OK:.+]] = arith.cmpi eq, %[[REM]], %{{.+}} : index
//       CHECK:   cf.assert %[[OK]], "seq.split_heads: features not divisible by heads"
//       CHECK:   %[[D:.+]] = arith.divui %[[F]], %[[H]] : index
//       CHECK:   tensor.expand_shape {{.+}} output_shape [%{{.+}}, %{{.+}}, 8, %[[D]]]
func.func @split_heads_dynamic(%x: tensor<?x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %0 = seq.split_heads %x {heads = 8 : i64} : tensor<?x?x?xf32> -> tensor<?x8x?x?xf32>
  return %0 : tensor<?x8x?x?xf32>
}

// -----

// CHECK-LABEL: func.func @merge_heads
//  CHECK-SAME:   %[[X:.+]]: tensor<?x8x?x64xf32>
//       CHECK:   %[[T:.+]] = linalg.transpose ins(%[[X]] : tensor<?x8x?x64xf32>) outs(%{{.+}} : tensor<?x?x8x64xf32>) permutation = [0, 2, 1, 3]
//       CHECK:   %[[C:.+]] = tensor.collapse_shape %[[T]] {{\[}}[0], [1], [2, 3]] : tensor<?x?x8x64xf32> into tensor<?x?x512xf32>
//       CHECK:   return %[[C]]
func.func @merge_heads(%x: tensor<?x8x?x64xf32>) -> tensor<?x?x512xf32> {
  %0 = seq.merge_heads %x : tensor<?x8x?x64xf32> -> tensor<?x?x512xf32>
  return %0 : tensor<?x?x512xf32>
}

// -----

// CHECK-LABEL: func.func @slice
//  CHECK-SAME:   %[[T:.+]]: tensor<512x64xf32>, %[[S:.+]]: index, %[[E:.+]]: index
//   CHECK-DAG:   %[[C0:.+]] = arith.constant 0 : index
//   CHECK-DAG:   %[[SIZE:.+]] = arith.constant 512 : index
//       CHECK:   %[[LO:.+]] = arith.cmpi sle, %[[C0]], %[[S]] : index
//       CHECK:   %[[MID:.+]] = arith.cmpi sle, %[[S]], %[[E]] : index
//       CHECK:   %[[HI:.+]] = arith.cmpi sle, %[[E]], %[[SIZE]] : index
//       CHECK:   %[[UP:.+]] = arith.andi %[[MID]], %[[HI]] : i1
//       CHECK:   %[[OK:.+]] = arith.andi %[[LO]], %[[UP]] : i1
//       CHECK:   cf.assert %[[OK]], "seq.slice: expected 0 <= start <= end <= size"
//       CHECK:   %[[LEN:.+]] = arith.subi %[[E]], %[[S]] : index
//       CHECK:   %[[R:.+]] = tensor.extract_slice %[[T]][%[[S]], 0] [%[[LEN]], 64] [1, 1] : tensor<512x64xf32> to tensor<?x64xf32>
//       CHECK:   return %[[R]]
func.func @slice(%t: tensor<512x64xf32>, %s: index, %e: index) -> tensor<?x64xf32> {
  %0 = seq.slice %t[%s : %e] axis 0 : tensor<512x64xf32> -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// -----

// CHECK-LABEL: func.func @concat
//  CHECK-SAME:   %[[A:.+]]: tensor<?x32xf32>, %[[B:.+]]: tensor<?x16xf32>
//       CHECK:   %[[N:.+]] = tensor.dim %[[A]]
//       CHECK:   %[[M:.+]] = tensor.dim %[[B]]
//       CHECK:   %[[EQ:.+]] = arith.cmpi eq, %[[M]], %[[N]] : index
//       CHECK:   cf.assert %[[EQ]], "seq.concat: inputs differ in a dimension other than the axis"
//       CHECK:   %[[INIT:.+]] = tensor.empty(%[[N]]) : tensor<?x48xf32>
//       CHECK:   %[[I0:.+]] = tensor.insert_slice %[[A]] into %[[INIT]][0, 0] [%{{.+}}, 32] [1, 1] : tensor<?x32xf32> into tensor<?x48xf32>
//       CHECK:   %[[I1:.+]] = tensor.insert_slice %[[B]] into %[[I0]][0, 32] [%{{.+}}, 16] [1, 1] : tensor<?x16xf32> into tensor<?x48xf32>
//       CHECK:   return %[[I1]]
func.func @concat(%a: tensor<?x32xf32>, %b: tensor<?x16xf32>) -> tensor<?x48xf32> {
  %0 = seq.concat %a, %b axis 1 : tensor<?x32xf32>, tensor<?x16xf32> -> tensor<?x48xf32>
  return %0 : tensor<?x48xf32>
}

// -----

// mean: a sum from 0 over the reduced dims, then one division; keepdim
// re-inserts the unit dimension.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @reduce_mean_keepdim
//  CHECK-SAME:   %[[X:.+]]: tensor<?x64x8xf32>
//       CHECK:   %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
//       CHECK:   %[[FILL:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<?x8xf32>)
//       CHECK:   %[[SUM:.+]] = linalg.generic
//  CHECK-SAME:     indexing_maps = [#[[IN]], #[[OUT]]]
//  CHECK-SAME:     iterator_types = ["parallel", "reduction", "parallel"]
//  CHECK-SAME:     ins(%[[X]] : tensor<?x64x8xf32>) outs(%[[FILL]] : tensor<?x8xf32>)
//       CHECK:     arith.addf
//       CHECK:   %[[COUNT:.+]] = arith.constant 6.400000e+01 : f32
//       CHECK:   %[[MEAN:.+]] = linalg.generic
//  CHECK-SAME:     ins(%[[SUM]] : tensor<?x8xf32>)
//       CHECK:     arith.divf %{{.+}}, %[[COUNT]] : f32
//       CHECK:   %[[R:.+]] = tensor.expand_shape %[[MEAN]] {{\[}}[0], [1, 2]] output_shape [%{{.+}}, 1, 8] : tensor<?x8xf32> into tensor<?x1x8xf32>
//       CHECK:   return %[[R]]
func.func @reduce_mean_keepdim(%x: tensor<?x64x8xf32>) -> tensor<?x1x8xf32> {
  %0 = seq.reduce mean %x axes [1] keepdim : tensor<?x64x8xf32> -> tensor<?x1x8xf32>
  return %0 : tensor<?x1x8xf32>
}

// -----

// max starts from -inf and propagates NaN (maximumf); f16 accumulates in f32.
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @reduce_max_f16
//       CHECK:   %[[NINF:.+]] = arith.constant 0xFF800000 : f32
//       CHECK:   %[[FILL:.+]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.+}} : tensor<4xf32>)
//       CHECK:   %[[MAX:.+]] = linalg.generic
//  CHECK-SAME:     iterator_types = ["parallel", "reduction"]
//  CHECK-SAME:     outs(%[[FILL]] : tensor<4xf32>)
//       CHECK:     %[[V:.+]] = arith.extf %{{.+}} : f16 to f32
//       CHECK:     arith.maximumf %[[V]], %{{.+}} : f32
//       CHECK:   linalg.generic
//  CHECK-SAME:     ins(%[[MAX]] : tensor<4xf32>) outs(%{{.+}} : tensor<4xf16>)
//       CHECK:     arith.truncf %{{.+}} : f32 to f16
func.func @reduce_max_f16(%x: tensor<4x?xf16>) -> tensor<4xf16> {
  %0 = seq.reduce max %x axes [1] : tensor<4x?xf16> -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Reducing everything gives a rank-0 accumulator.
// CHECK-DAG: #[[ALL:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @reduce_min_all
//       CHECK:   %[[INF:.+]] = arith.constant 0x7F800000 : f32
//       CHECK:   linalg.generic
//  CHECK-SAME:     #[[ALL]]
//  CHECK-SAME:     iterator_types = ["reduction", "reduction"]
//       CHECK:     arith.minimumf
//       CHECK:   tensor.expand_shape %{{.+}} [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
func.func @reduce_min_all(%x: tensor<?x3xf32>) -> tensor<1x1xf32> {
  %0 = seq.reduce min %x axes [0, 1] keepdim : tensor<?x3xf32> -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}

// -----

// CHECK-LABEL: func.func @arange
//  CHECK-SAME:   %[[N:.+]]: index
//       CHECK:   %[[INIT:.+]] = tensor.empty(%[[N]]) : tensor<?xi32>
//       CHECK:   linalg.generic {{.+}} outs(%[[INIT]] : tensor<?xi32>)
//       CHECK:     %[[I:.+]] = linalg.index 0 : index
//       CHECK:     %[[V:.+]] = arith.index_cast %[[I]] : index to i32
//       CHECK:     linalg.yield %[[V]] : i32
func.func @arange(%n: index) -> tensor<?xi32> {
  %0 = seq.arange %n : tensor<?xi32>
  return %0 : tensor<?xi32>
}
