// RUN: seq-opt %s --convert-seq-to-linalg -split-input-file | FileCheck %s

// Trailing dimensions align: the rank-1 operand is read through (d1).
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add_broadcast_rank
//  CHECK-SAME:   %[[A:.+]]: tensor<?x64xf32>, %[[B:.+]]: tensor<64xf32>
//       CHECK:   %[[D0:.+]] = tensor.dim %[[A]], %{{.+}} : tensor<?x64xf32>
//       CHECK:   %[[INIT:.+]] = tensor.empty(%[[D0]]) : tensor<?x64xf32>
//       CHECK:   %[[R:.+]] = linalg.generic
//  CHECK-SAME:     indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]]
//  CHECK-SAME:     iterator_types = ["parallel", "parallel"]
//  CHECK-SAME:     ins(%[[A]], %[[B]] : tensor<?x64xf32>, tensor<64xf32>)
//  CHECK-SAME:     outs(%[[INIT]] : tensor<?x64xf32>)
//       CHECK:   ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %{{.+}}: f32):
//       CHECK:     %[[S:.+]] = arith.addf %[[X]], %[[Y]] : f32
//       CHECK:     linalg.yield %[[S]] : f32
//       CHECK:   return %[[R]]
func.func @add_broadcast_rank(%a: tensor<?x64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %0 = seq.add %a, %b : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// -----

// Statically-1 dimensions broadcast: they are collapsed away, and the
// operand is read through a projected permutation (which the CPU's row
// vectorizer takes; a constant 0 in the map would leave an index division
// per element once the loops are collapsed). A [?, 1, 1, ?] operand in a
// 4-D nest is read as [?, ?] through (d0, d3); one of only unit dimensions
// keeps its constant map.
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[PAD:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// CHECK-DAG: #[[ONE:.+]] = affine_map<(d0, d1, d2, d3) -> (0, 0)>
// CHECK-DAG: #[[ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @mul_outer
//  CHECK-SAME:   %[[A:.+]]: tensor<?x1xf32>, %[[B:.+]]: tensor<1x?xf32>, %[[S:.+]]: tensor<?x4x8x?xf32>, %[[M:.+]]: tensor<?x1x1x?xf32>, %[[U:.+]]: tensor<1x1xf32>
//   CHECK-NOT:   cf.assert
//   CHECK-DAG:   %[[AC:.+]] = tensor.collapse_shape %[[A]] {{\[\[}}0, 1]] : tensor<?x1xf32> into tensor<?xf32>
//   CHECK-DAG:   %[[BC:.+]] = tensor.collapse_shape %[[B]] {{\[\[}}0, 1]] : tensor<1x?xf32> into tensor<?xf32>
//       CHECK:   linalg.generic
//  CHECK-SAME:     indexing_maps = [#[[COL]], #[[ROW]], #[[ID]]]
//  CHECK-SAME:     ins(%[[AC]], %[[BC]] :
//       CHECK:     arith.mulf
//       CHECK:   %[[MC:.+]] = tensor.collapse_shape %[[M]] {{\[\[}}0], [1, 2, 3]] : tensor<?x1x1x?xf32> into tensor<?x?xf32>
//       CHECK:   linalg.generic
//  CHECK-SAME:     indexing_maps = [#[[ID4]], #[[PAD]], #[[ID4]]]
//  CHECK-SAME:     ins(%[[S]], %[[MC]] :
//       CHECK:     arith.addf
//       CHECK:   linalg.generic
//  CHECK-SAME:     indexing_maps = [#[[ID4]], #[[ONE]], #[[ID4]]]
//  CHECK-SAME:     ins(%[[S]], %[[U]] :
func.func @mul_outer(%a: tensor<?x1xf32>, %b: tensor<1x?xf32>, %s: tensor<?x4x8x?xf32>, %m: tensor<?x1x1x?xf32>,
                     %u: tensor<1x1xf32>)
    -> (tensor<?x?xf32>, tensor<?x4x8x?xf32>, tensor<?x4x8x?xf32>) {
  %0 = seq.mul %a, %b : tensor<?x1xf32>, tensor<1x?xf32> -> tensor<?x?xf32>
  %1 = seq.add %s, %m : tensor<?x4x8x?xf32>, tensor<?x1x1x?xf32> -> tensor<?x4x8x?xf32>
  %2 = seq.add %s, %u : tensor<?x4x8x?xf32>, tensor<1x1xf32> -> tensor<?x4x8x?xf32>
  return %0, %1, %2 : tensor<?x?xf32>, tensor<?x4x8x?xf32>, tensor<?x4x8x?xf32>
}

// -----

// A dynamic dimension never broadcasts: its size is checked against the
// result's at run time.
// CHECK-LABEL: func.func @max_dynamic
//  CHECK-SAME:   %[[A:.+]]: tensor<?x?xf32>, %[[B:.+]]: tensor<?xf32>
//       CHECK:   tensor.dim %[[A]], %{{.+}} : tensor<?x?xf32>
//       CHECK:   %[[N:.+]] = tensor.dim %[[A]], %{{.+}} : tensor<?x?xf32>
//       CHECK:   %[[M:.+]] = tensor.dim %[[B]], %{{.+}} : tensor<?xf32>
//       CHECK:   %[[EQ:.+]] = arith.cmpi eq, %[[M]], %[[N]] : index
//       CHECK:   cf.assert %[[EQ]], "dynamic dimension does not broadcast
//       CHECK:   linalg.generic
//       CHECK:     arith.maximumf
func.func @max_dynamic(%a: tensor<?x?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %0 = seq.max %a, %b : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// A dynamic dimension against a static one: the result is static and the
// operand's size is checked.
// CHECK-LABEL: func.func @sub_dynamic_static
//       CHECK:   %[[D:.+]] = tensor.dim %{{.+}}, %{{.+}} : tensor<?x3xf32>
//       CHECK:   %[[EQ:.+]] = arith.cmpi eq, %[[D]], %{{.+}} : index
//       CHECK:   cf.assert %[[EQ]]
//       CHECK:   tensor.empty() : tensor<4x3xf32>
//       CHECK:   arith.subf
func.func @sub_dynamic_static(%a: tensor<?x3xf32>, %b: tensor<4x1xf32>) -> tensor<4x3xf32> {
  %0 = seq.sub %a, %b : tensor<?x3xf32>, tensor<4x1xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Integers: signed ops; a rank-0 operand is a scalar.
// CHECK-DAG: #[[SCALAR:.+]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @int_div_min
//       CHECK:   linalg.generic
//  CHECK-SAME:     #[[SCALAR]]
//       CHECK:     arith.divsi %{{.+}}, %{{.+}} : i32
//       CHECK:   linalg.generic
//       CHECK:     arith.minsi %{{.+}}, %{{.+}} : i32
func.func @int_div_min(%a: tensor<4xi32>, %b: tensor<i32>) -> tensor<4xi32> {
  %0 = seq.div %a, %b : tensor<4xi32>, tensor<i32> -> tensor<4xi32>
  %1 = seq.min %0, %a : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  return %1 : tensor<4xi32>
}

// -----

// Exact GELU: 0.5 x (1 + erf(x / sqrt(2))).
// CHECK-LABEL: func.func @gelu_exact
//       CHECK:   linalg.generic
//       CHECK:   ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
//   CHECK-DAG:     %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
//   CHECK-DAG:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
//   CHECK-DAG:     %[[RSQRT2:.+]] = arith.constant 0.707106769 : f32
//       CHECK:     %[[SCALED:.+]] = arith.mulf %[[X]], %[[RSQRT2]] : f32
//       CHECK:     %[[ERF:.+]] = math.erf %[[SCALED]] : f32
//       CHECK:     %[[SUM:.+]] = arith.addf %[[ONE]], %[[ERF]] : f32
//       CHECK:     %[[HX:.+]] = arith.mulf %[[HALF]], %[[X]] : f32
//       CHECK:     %[[Y:.+]] = arith.mulf %[[HX]], %[[SUM]] : f32
//       CHECK:     linalg.yield %[[Y]]
func.func @gelu_exact(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = seq.gelu %x : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
// CHECK-LABEL: func.func @gelu_tanh
//   CHECK-DAG:     %[[K0:.+]] = arith.constant 0.797884583 : f32
//   CHECK-DAG:     %[[K1:.+]] = arith.constant 4.471500e-02 : f32
//       CHECK:     %[[X2:.+]] = arith.mulf %[[X:.+]], %[[X]] : f32
//       CHECK:     %[[X3:.+]] = arith.mulf %[[X]], %[[X2]] : f32
//       CHECK:     %[[T:.+]] = arith.mulf %[[K1]], %[[X3]] : f32
//       CHECK:     %[[P:.+]] = arith.addf %[[X]], %[[T]] : f32
//       CHECK:     %[[A:.+]] = arith.mulf %[[K0]], %[[P]] : f32
//       CHECK:     math.tanh %[[A]] : f32
func.func @gelu_tanh(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = seq.gelu %x approximate tanh : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// Half precision is computed in f32 and rounded once.
// CHECK-LABEL: func.func @silu_f16
//       CHECK:   linalg.generic
//  CHECK-SAME:     outs(%{{.+}} : tensor<?x8xf16>)
//       CHECK:   ^bb0(%[[IN:.+]]: f16, %{{.+}}: f16):
//       CHECK:     %[[X:.+]] = arith.extf %[[IN]] : f16 to f32
//       CHECK:     %[[NEG:.+]] = arith.negf %[[X]] : f32
//       CHECK:     %[[E:.+]] = math.exp %[[NEG]] : f32
//       CHECK:     %[[D:.+]] = arith.addf %{{.+}}, %[[E]] : f32
//       CHECK:     %[[SIG:.+]] = arith.divf %{{.+}}, %[[D]] : f32
//       CHECK:     %[[Y:.+]] = arith.mulf %[[X]], %[[SIG]] : f32
//       CHECK:     %[[R:.+]] = arith.truncf %[[Y]] : f32 to f16
//       CHECK:     linalg.yield %[[R]] : f16
func.func @silu_f16(%x: tensor<?x8xf16>) -> tensor<?x8xf16> {
  %0 = seq.silu %x : tensor<?x8xf16>
  return %0 : tensor<?x8xf16>
}

// -----

// softplus switches to the identity above the threshold, like torch.
// CHECK-LABEL: func.func @softplus
//   CHECK-DAG:     %[[BETA:.+]] = arith.constant 2.000000e+00 : f32
//   CHECK-DAG:     %[[THRESHOLD:.+]] = arith.constant 5.000000e+00 : f32
//       CHECK:     %[[BX:.+]] = arith.mulf %[[X:.+]], %[[BETA]] : f32
//       CHECK:     %[[E:.+]] = math.exp %[[BX]] : f32
//       CHECK:     %[[L:.+]] = math.log1p %[[E]] : f32
//       CHECK:     %[[S:.+]] = arith.divf %[[L]], %[[BETA]] : f32
//       CHECK:     %[[BIG:.+]] = arith.cmpf ogt, %[[BX]], %[[THRESHOLD]] : f32
//       CHECK:     arith.select %[[BIG]], %[[X]], %[[S]] : f32
func.func @softplus(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = seq.softplus %x {beta = 2.0 : f64, threshold = 5.0 : f64} : tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// expm1(x) by Kahan's method on exp and log (math.expm1 would become
// exp(x) - 1 in the LLVM conversion): (u - 1) * (x / log(u)), u = exp(x),
// then the cases u = +inf, u - 1 = -1 and u = 1 or NaN.
// CHECK-LABEL: func.func @elu
//       CHECK:     %[[ALPHA:.+]] = arith.constant 5.000000e-01 : f32
//       CHECK:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
//       CHECK:     %[[U:.+]] = math.exp %[[X:.+]] : f32
//       CHECK:     %[[UM1:.+]] = arith.subf %[[U]], %[[ONE]] : f32
//       CHECK:     %[[LOG:.+]] = math.log %[[U]] : f32
//       CHECK:     %[[Q:.+]] = arith.divf %[[X]], %[[LOG]] : f32
//       CHECK:     %[[K:.+]] = arith.mulf %[[UM1]], %[[Q]] : f32
//       CHECK:     %[[INF:.+]] = arith.cmpf oeq, %[[LOG]], %[[U]] : f32
//       CHECK:     %[[K1:.+]] = arith.select %[[INF]], %[[U]], %[[K]] : f32
//       CHECK:     %[[SAT:.+]] = arith.cmpf oeq, %[[UM1]], %{{.+}} : f32
//       CHECK:     %[[K2:.+]] = arith.select %[[SAT]], %{{.+}}, %[[K1]] : f32
//       CHECK:     %[[UNIT:.+]] = arith.cmpf ueq, %[[U]], %[[ONE]] : f32
//       CHECK:     %[[EM1:.+]] = arith.select %[[UNIT]], %[[X]], %[[K2]] : f32
//       CHECK:     %[[NEG:.+]] = arith.mulf %[[ALPHA]], %[[EM1]] : f32
//       CHECK:     %[[POS:.+]] = arith.cmpf ogt, %[[X]], %{{.+}} : f32
//       CHECK:     arith.select %[[POS]], %[[X]], %[[NEG]] : f32
func.func @elu(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = seq.elu %x {alpha = 0.5 : f64} : tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// CHECK-LABEL: func.func @unary_chain
//       CHECK:   math.exp
//       CHECK:   math.log
//       CHECK:   math.sqrt
//       CHECK:   math.rsqrt
//       CHECK:   arith.negf
//       CHECK:   math.absf
//       CHECK:   math.tanh
//       CHECK:   arith.maximumf %{{.+}}, %{{.+}} : f32
func.func @unary_chain(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = seq.exp %x : tensor<16xf32>
  %1 = seq.log %0 : tensor<16xf32>
  %2 = seq.sqrt %1 : tensor<16xf32>
  %3 = seq.rsqrt %2 : tensor<16xf32>
  %4 = seq.neg %3 : tensor<16xf32>
  %5 = seq.abs %4 : tensor<16xf32>
  %6 = seq.tanh %5 : tensor<16xf32>
  %7 = seq.relu %6 : tensor<16xf32>
  return %7 : tensor<16xf32>
}

// -----

// Dropout is the identity at inference.
// CHECK-LABEL: func.func @dropout
//  CHECK-SAME:   %[[X:.+]]: tensor<?x8xf32>
//   CHECK-NOT:   linalg
//       CHECK:   return %[[X]]
func.func @dropout(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = seq.dropout %x {rate = 0.1 : f64} : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// A comparison selects 1 or 0 of the operands' element type; floats compare
// ordered (NaN compares false), except '!=', which is unordered.
// CHECK-LABEL: func.func @compare
//       CHECK:   linalg.generic
//       CHECK:     %[[LT:.+]] = arith.cmpf olt, %{{.+}}, %{{.+}} : bf16
//       CHECK:     %[[ONE:.+]] = arith.constant 1.000000e+00 : bf16
//       CHECK:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : bf16
//       CHECK:     arith.select %[[LT]], %[[ONE]], %[[ZERO]] : bf16
//       CHECK:   linalg.generic
//       CHECK:     arith.cmpf une
//       CHECK:   linalg.generic
//       CHECK:     %[[EQ:.+]] = arith.cmpi eq, %{{.+}}, %{{.+}} : i64
//       CHECK:     arith.select %[[EQ]], %{{.+}}, %{{.+}} : i64
//       CHECK:   linalg.generic
//       CHECK:     arith.cmpi sge
func.func @compare(%a: tensor<?x8xbf16>, %b: tensor<8xbf16>, %i: tensor<?xi64>, %z: tensor<i64>)
    -> (tensor<?x8xbf16>, tensor<?x8xbf16>, tensor<?xi64>, tensor<?xi64>) {
  %0 = seq.compare lt, %a, %b : tensor<?x8xbf16>, tensor<8xbf16> -> tensor<?x8xbf16>
  %1 = seq.compare ne, %a, %b : tensor<?x8xbf16>, tensor<8xbf16> -> tensor<?x8xbf16>
  %2 = seq.compare eq, %i, %z : tensor<?xi64>, tensor<i64> -> tensor<?xi64>
  %3 = seq.compare ge, %i, %z : tensor<?xi64>, tensor<i64> -> tensor<?xi64>
  return %0, %1, %2, %3 : tensor<?x8xbf16>, tensor<?x8xbf16>, tensor<?xi64>, tensor<?xi64>
}

// -----

// A cast converts each element: sitofp for integers, extf/truncf between
// floats, fptosi to integers; a cast to the same type is its input.
// CHECK-LABEL: func.func @cast
//  CHECK-SAME:   %[[M:.+]]: tensor<?x?xi32>, %[[X:.+]]: tensor<4xbf16>, %[[Y:.+]]: tensor<4xf32>
//       CHECK:   linalg.generic
//  CHECK-SAME:     ins(%[[M]] : tensor<?x?xi32>)
//       CHECK:     arith.sitofp %{{.+}} : i32 to f32
//       CHECK:   linalg.generic
//       CHECK:     arith.extf %{{.+}} : bf16 to f32
//       CHECK:   linalg.generic
//       CHECK:     arith.truncf %{{.+}} : f32 to bf16
//       CHECK:   linalg.generic
//       CHECK:     arith.fptosi %{{.+}} : f32 to i64
//       CHECK:   return %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[Y]]
func.func @cast(%m: tensor<?x?xi32>, %x: tensor<4xbf16>, %y: tensor<4xf32>)
    -> (tensor<?x?xf32>, tensor<4xf32>, tensor<4xbf16>, tensor<4xi64>, tensor<4xf32>) {
  %0 = seq.cast %m : tensor<?x?xi32> to tensor<?x?xf32>
  %1 = seq.cast %x : tensor<4xbf16> to tensor<4xf32>
  %2 = seq.cast %y : tensor<4xf32> to tensor<4xbf16>
  %3 = seq.cast %y : tensor<4xf32> to tensor<4xi64>
  %4 = seq.cast %y : tensor<4xf32> to tensor<4xf32>
  return %0, %1, %2, %3, %4 : tensor<?x?xf32>, tensor<4xf32>, tensor<4xbf16>, tensor<4xi64>, tensor<4xf32>
}
