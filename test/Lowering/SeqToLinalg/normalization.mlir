// RUN: seq-opt %s --convert-seq-to-linalg -split-input-file | FileCheck %s

// Two-pass layer norm over the last dim: mean, biased variance of the
// centered values, then (x - mean) * rsqrt(var + eps) * gamma + beta.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[FEAT:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @layer_norm
//  CHECK-SAME:   %[[X:.+]]: tensor<?x64xf32>, %[[G:.+]]: tensor<64xf32>, %[[B:.+]]: tensor<64xf32>
//       CHECK:   %[[D:.+]] = arith.constant 6.400000e+01 : f32
//       CHECK:   %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
//  CHECK-SAME:     ins(%[[X]] : tensor<?x64xf32>)
//       CHECK:     arith.addf
//       CHECK:   %[[MEAN:.+]] = linalg.generic {{.+}} ins(%[[SUM]] : tensor<?xf32>)
//       CHECK:     arith.divf %{{.+}}, %[[D]] : f32
//       CHECK:   %[[SQ:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
//  CHECK-SAME:     ins(%[[X]], %[[MEAN]] : tensor<?x64xf32>, tensor<?xf32>)
//       CHECK:   ^bb0(%[[XV:.+]]: f32, %[[MV:.+]]: f32, %[[ACC:.+]]: f32):
//       CHECK:     %[[C:.+]] = arith.subf %[[XV]], %[[MV]] : f32
//       CHECK:     %[[C2:.+]] = arith.mulf %[[C]], %[[C]] : f32
//       CHECK:     arith.addf %[[C2]], %[[ACC]] : f32
//       CHECK:   %[[VAR:.+]] = linalg.generic {{.+}} ins(%[[SQ]] : tensor<?xf32>)
//       CHECK:     arith.divf %{{.+}}, %[[D]] : f32
//       CHECK:   linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]], #[[FEAT]], #[[FEAT]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
//  CHECK-SAME:     ins(%[[X]], %[[MEAN]], %[[VAR]], %[[G]], %[[B]] :
//       CHECK:   ^bb0(%[[XV:.+]]: f32, %[[MV:.+]]: f32, %[[VV:.+]]: f32, %[[GV:.+]]: f32, %[[BV:.+]]: f32, %{{.+}}: f32):
//       CHECK:     %[[EPS:.+]] = arith.constant 9.99999974E-6 : f32
//       CHECK:     %[[C:.+]] = arith.subf %[[XV]], %[[MV]] : f32
//       CHECK:     %[[VE:.+]] = arith.addf %[[VV]], %[[EPS]] : f32
//       CHECK:     %[[RSTD:.+]] = math.rsqrt %[[VE]] : f32
//       CHECK:     %[[N:.+]] = arith.mulf %[[C]], %[[RSTD]] : f32
//       CHECK:     %[[S:.+]] = arith.mulf %[[N]], %[[GV]] : f32
//       CHECK:     %[[Y:.+]] = arith.addf %[[S]], %[[BV]] : f32
//       CHECK:     linalg.yield %[[Y]] : f32
func.func @layer_norm(%x: tensor<?x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %0 = seq.layer_norm %x, %g, %b {eps = 1.0e-05 : f64} : (tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// -----

// bf16 statistics are computed in f32.
// CHECK-LABEL: func.func @rms_norm_bf16
//  CHECK-SAME:   %[[X:.+]]: tensor<?x?x64xbf16>, %[[G:.+]]: tensor<64xbf16>
//       CHECK:   %[[SQ:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]
//  CHECK-SAME:     ins(%[[X]] : tensor<?x?x64xbf16>) outs(%{{.+}} : tensor<?x?xf32>)
//       CHECK:     %[[V:.+]] = arith.extf %{{.+}} : bf16 to f32
//       CHECK:     %[[V2:.+]] = arith.mulf %[[V]], %[[V]] : f32
//       CHECK:   %[[MS:.+]] = linalg.generic {{.+}} ins(%[[SQ]] : tensor<?x?xf32>)
//       CHECK:   linalg.generic {{.+}} ins(%[[X]], %[[MS]], %[[G]] : tensor<?x?x64xbf16>, tensor<?x?xf32>, tensor<64xbf16>) outs(%{{.+}} : tensor<?x?x64xbf16>)
//       CHECK:     %[[EPS:.+]] = arith.constant 9.99999997E-7 : f32
//       CHECK:     %[[A:.+]] = arith.addf %{{.+}}, %[[EPS]] : f32
//       CHECK:     %[[R:.+]] = math.rsqrt %[[A]] : f32
//       CHECK:     arith.truncf %{{.+}} : f32 to bf16
func.func @rms_norm_bf16(%x: tensor<?x?x64xbf16>, %g: tensor<64xbf16>) -> tensor<?x?x64xbf16> {
  %0 = seq.rms_norm %x, %g {eps = 1.0e-06 : f64} : (tensor<?x?x64xbf16>, tensor<64xbf16>) -> tensor<?x?x64xbf16>
  return %0 : tensor<?x?x64xbf16>
}

// -----

// Safe softmax: the row max is replaced by 0 when it is -inf, and a row whose
// exponentials sum to 0 gives zeros.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @softmax_axis1
//  CHECK-SAME:   %[[X:.+]]: tensor<4x?x3xf32>
//       CHECK:   %[[NINF:.+]] = arith.constant 0xFF800000 : f32
//       CHECK:   %[[MINIT:.+]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.+}} : tensor<4x3xf32>)
//       CHECK:   %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction", "parallel"]}
//  CHECK-SAME:     ins(%[[X]] : tensor<4x?x3xf32>) outs(%[[MINIT]] : tensor<4x3xf32>)
// The maximum only shifts the exps (nnan nsz: one vmaxps on x86), and the
// exps take the CPU's short form (seq.fast_exp).
//       CHECK:     arith.maximumf %{{.+}}, %{{.+}} fastmath<nnan,nsz> : f32
//       CHECK:   %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]]], iterator_types = ["parallel", "reduction", "parallel"]}
//  CHECK-SAME:     ins(%[[X]], %[[MAX]] : tensor<4x?x3xf32>, tensor<4x3xf32>)
//       CHECK:   ^bb0(%[[XV:.+]]: f32, %[[MV:.+]]: f32, %[[ACC:.+]]: f32):
//       CHECK:     %[[ISNINF:.+]] = arith.cmpf oeq, %[[MV]], %{{.+}} : f32
//       CHECK:     %[[SAFE:.+]] = arith.select %[[ISNINF]], %{{.+}}, %[[MV]] : f32
//       CHECK:     %[[SH:.+]] = arith.subf %[[XV]], %[[SAFE]] : f32
//       CHECK:     %[[E:.+]] = math.exp %[[SH]] {seq.fast_exp} : f32
//       CHECK:     arith.addf %[[E]], %[[ACC]] : f32
//       CHECK:   linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
//  CHECK-SAME:     ins(%[[X]], %[[MAX]], %[[SUM]] :
//       CHECK:   ^bb0(%{{.+}}: f32, %{{.+}}: f32, %[[SV:.+]]: f32, %{{.+}}: f32):
//       CHECK:     %[[E:.+]] = math.exp %{{.+}} {seq.fast_exp}
//       CHECK:     %[[P:.+]] = arith.divf %[[E]], %[[SV]] : f32
//       CHECK:     %[[POS:.+]] = arith.cmpf ogt, %[[SV]], %[[ZERO:.+]] : f32
//       CHECK:     %[[Y:.+]] = arith.select %[[POS]], %[[P]], %[[ZERO]] : f32
//       CHECK:     linalg.yield %[[Y]] : f32
func.func @softmax_axis1(%x: tensor<4x?x3xf32>) -> tensor<4x?x3xf32> {
  %0 = seq.softmax %x axis 1 : tensor<4x?x3xf32>
  return %0 : tensor<4x?x3xf32>
}

// -----

// A negative axis counts from the end.
// CHECK-LABEL: func.func @softmax_last
//       CHECK:   linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]
//       CHECK:   linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]
//       CHECK:   linalg.generic {{.+}} iterator_types = ["parallel", "parallel"]
func.func @softmax_last(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = seq.softmax %x axis -1 : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
