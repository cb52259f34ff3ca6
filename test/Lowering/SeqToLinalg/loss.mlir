// RUN: seq-opt %s --convert-seq-to-linalg -split-input-file | FileCheck %s

// Cross-entropy with label smoothing 0.1 over [b, n, 1000] logits: a row max,
// one pass for sum exp(l - m) and sum l, then one reduction over every
// position of the (1 - eps) nll + eps smooth losses and of the count of
// non-ignored targets; the result is their quotient, 0 when nothing counts.
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[POS3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ALL:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @cross_entropy
//  CHECK-SAME:   %[[L:.+]]: tensor<?x?x1000xf32>, %[[T:.+]]: tensor<?x?xi32>
//       CHECK:   cf.assert %{{.+}}, "seq.cross_entropy: targets and logits differ in shape"
//       CHECK:   cf.assert %{{.+}}, "seq.cross_entropy: targets and logits differ in shape"
//       CHECK:   %[[LAST:.+]] = arith.subi %{{.+}}, %{{.+}} : index
//       CHECK:   %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[POS3]]], iterator_types = ["parallel", "parallel", "reduction"]}
//  CHECK-SAME:     ins(%[[L]] : tensor<?x?x1000xf32>)
//       CHECK:     arith.maximumf
//       CHECK:   %[[SUMS:.+]]:2 = linalg.generic {indexing_maps = [#[[ID3]], #[[POS3]], #[[POS3]], #[[POS3]]], iterator_types = ["parallel", "parallel", "reduction"]}
//  CHECK-SAME:     ins(%[[L]], %[[MAX]] : tensor<?x?x1000xf32>, tensor<?x?xf32>)
//       CHECK:     math.exp
//       CHECK:     linalg.yield %{{.+}}, %{{.+}} : f32, f32
//       CHECK:   %[[TOT:.+]]:2 = linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]], #[[ID2]], #[[ID2]], #[[ALL]], #[[ALL]]], iterator_types = ["reduction", "reduction"]}
//  CHECK-SAME:     ins(%[[T]], %[[MAX]], %[[SUMS]]#0, %[[SUMS]]#1 : tensor<?x?xi32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
//  CHECK-SAME:     outs(%{{.+}}, %{{.+}} : tensor<f32>, tensor<i64>)
//       CHECK:   ^bb0(%[[TV:.+]]: i32, %[[MV:.+]]: f32, %[[SE:.+]]: f32, %[[SL:.+]]: f32, %[[ACC:.+]]: f32, %[[CNT:.+]]: i64):
//       CHECK:     %[[T64:.+]] = arith.extsi %[[TV]] : i32 to i64
//       CHECK:     %[[IGN:.+]] = arith.constant -100 : i64
//       CHECK:     %[[COUNTED:.+]] = arith.cmpi ne, %[[T64]], %[[IGN]] : i64
//       CHECK:     %[[CLS0:.+]] = arith.index_cast %[[T64]] : i64 to index
//       CHECK:     %[[CLS1:.+]] = arith.maxsi %[[CLS0]], %{{.+}} : index
//       CHECK:     %[[CLS:.+]] = arith.minsi %[[CLS1]], %[[LAST]] : index
//       CHECK:     %[[P0:.+]] = linalg.index 0 : index
//       CHECK:     %[[P1:.+]] = linalg.index 1 : index
//       CHECK:     %[[LT:.+]] = tensor.extract %[[L]][%[[P0]], %[[P1]], %[[CLS]]] : tensor<?x?x1000xf32>
//       CHECK:     %[[LOG:.+]] = math.log %[[SE]] : f32
//       CHECK:     %[[LSE:.+]] = arith.addf %{{.+}}, %[[LOG]] : f32
//       CHECK:     %[[NLL:.+]] = arith.subf %[[LSE]], %[[LT]] : f32
//       CHECK:     %[[MEANL:.+]] = arith.divf %[[SL]], %{{.+}} : f32
//       CHECK:     %[[SMOOTH:.+]] = arith.subf %[[LSE]], %[[MEANL]] : f32
//       CHECK:     %[[KEEP:.+]] = arith.constant 0.899999976 : f32
//       CHECK:     %[[EPS:.+]] = arith.constant 1.000000e-01 : f32
//       CHECK:     %[[A:.+]] = arith.mulf %[[KEEP]], %[[NLL]] : f32
//       CHECK:     %[[B:.+]] = arith.mulf %[[EPS]], %[[SMOOTH]] : f32
//       CHECK:     %[[LOSS:.+]] = arith.addf %[[A]], %[[B]] : f32
//       CHECK:     %[[SEL:.+]] = arith.select %[[COUNTED]], %[[LOSS]], %{{.+}} : f32
//       CHECK:     %[[NACC:.+]] = arith.addf %[[ACC]], %[[SEL]] : f32
//       CHECK:     %[[ONE:.+]] = arith.extui %[[COUNTED]] : i1 to i64
//       CHECK:     %[[NCNT:.+]] = arith.addi %[[CNT]], %[[ONE]] : i64
//       CHECK:     linalg.yield %[[NACC]], %[[NCNT]] : f32, i64
//       CHECK:   %[[SUM:.+]] = tensor.extract %[[TOT]]#0[] : tensor<f32>
//       CHECK:   %[[N:.+]] = tensor.extract %[[TOT]]#1[] : tensor<i64>
//       CHECK:   %[[ANY:.+]] = arith.cmpi sgt, %[[N]], %{{.+}} : i64
//       CHECK:   %[[NF:.+]] = arith.sitofp %[[N]] : i64 to f32
//       CHECK:   %[[MEAN:.+]] = arith.divf %[[SUM]], %[[NF]] : f32
//       CHECK:   %[[R:.+]] = arith.select %[[ANY]], %[[MEAN]], %{{.+}} : f32
//       CHECK:   %[[T0:.+]] = tensor.from_elements %[[R]] : tensor<f32>
//       CHECK:   return %[[T0]]
func.func @cross_entropy(%l: tensor<?x?x1000xf32>, %t: tensor<?x?xi32>) -> tensor<f32> {
  %0 = seq.cross_entropy %l, %t {label_smoothing = 1.0e-1 : f64} : tensor<?x?x1000xf32>, tensor<?x?xi32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Without smoothing the loss is the nll alone (no 0 * inf from -inf logits);
// a single position reduces over zero loops; f16 is computed in f32.
// CHECK-DAG: #[[NONE:.+]] = affine_map<() -> ()>
// CHECK-LABEL: func.func @cross_entropy_single_f16
//       CHECK:   linalg.generic {indexing_maps = [#[[NONE]], #[[NONE]], #[[NONE]], #[[NONE]], #[[NONE]], #[[NONE]]], iterator_types = []}
//       CHECK:     %[[NLL:.+]] = arith.subf
//   CHECK-NOT:     arith.mulf
//       CHECK:     arith.select %{{.+}}, %[[NLL]], %{{.+}} : f32
//       CHECK:   %[[H:.+]] = arith.truncf %{{.+}} : f32 to f16
//       CHECK:   tensor.from_elements %[[H]] : tensor<f16>
func.func @cross_entropy_single_f16(%l: tensor<10xf16>, %t: tensor<i64>) -> tensor<f16> {
  %0 = seq.cross_entropy %l, %t {ignore_index = 3 : i64} : tensor<10xf16>, tensor<i64> -> tensor<f16>
  return %0 : tensor<f16>
}
