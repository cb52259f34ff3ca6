// RUN: seq-opt %s --convert-seq-to-linalg="row-forms=1 remarks=1" --canonicalize --cse -split-input-file -verify-diagnostics | FileCheck %s

// Softmax over the last axis with row-forms: an scf.forall over blocks of
// rows (4096 / 2048 = 2 per block), each block's max (nnan nsz: it only
// shifts the exps), the exps into the output block and their row sums in
// one reduction with two outputs, one reciprocal per row and the scaling in
// place.
// CHECK-LABEL: func.func @softmax
//  CHECK-SAME:   %[[X:.+]]: tensor<?x2048xf32>
//   CHECK-DAG:   %[[C2:.+]] = arith.constant 2 : index
//       CHECK:   %[[ROWS:.+]] = tensor.dim %[[X]]
//       CHECK:   %[[BLOCKS:.+]] = arith.ceildivui %[[ROWS]], %[[C2]]
//       CHECK:   scf.forall (%[[I:.+]]) in (%[[BLOCKS]]) shared_outs(%[[OUT:.+]] = %{{.+}}) -> (tensor<?x2048xf32>)
//       CHECK:     %[[R0:.+]] = arith.muli %[[I]], %[[C2]]
//       CHECK:     %[[XB:.+]] = tensor.extract_slice %[[X]][%[[R0]], 0]
//       CHECK:     %[[OB:.+]] = tensor.extract_slice %[[OUT]][%[[R0]], 0]
//       CHECK:     %[[MAX:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%[[XB]] :
//       CHECK:       arith.maximumf %{{.+}}, %{{.+}} fastmath<nnan,nsz>
//       CHECK:     %[[ES:.+]]:2 = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%[[XB]], %[[MAX]] : {{.+}}) outs(%[[OB]], %{{.+}} :
//       CHECK:       %[[EXP:.+]] = math.exp %{{.+}} {seq.fast_exp}
//       CHECK:       %[[ADD:.+]] = arith.addf %[[EXP]]
//       CHECK:       linalg.yield %[[EXP]], %[[ADD]]
//       CHECK:     %[[INV:.+]] = linalg.generic {{.+}} ins(%[[ES]]#1 :
//       CHECK:       arith.divf
//       CHECK:     %[[Y:.+]] = linalg.generic {{.+}} ins(%[[ES]]#1, %[[INV]] : {{.+}}) outs(%[[ES]]#0 :
//       CHECK:       arith.mulf
//       CHECK:     tensor.parallel_insert_slice %[[Y]] into %[[OUT]][%[[R0]], 0]
func.func @softmax(%x: tensor<?x2048xf32>) -> tensor<?x2048xf32> {
  %0 = seq.softmax %x axis -1 : tensor<?x2048xf32>
  return %0 : tensor<?x2048xf32>
}

// -----

// A dynamic feature size: the rows per block are computed at run time
// (4096 / max(d, 1), clamped to [1, 16]); leading dims are collapsed.
// CHECK-LABEL: func.func @layer_norm_dynamic
//       CHECK:   tensor.collapse_shape
//       CHECK:   arith.divui
//       CHECK:   arith.minui
//       CHECK:   scf.forall
//       CHECK:     math.rsqrt
//       CHECK:   tensor.expand_shape
func.func @layer_norm_dynamic(%x: tensor<2x?x?xf32>, %g: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<2x?x?xf32> {
  %0 = seq.layer_norm %x, %g, %b {eps = 1.0e-05 : f64} : (tensor<2x?x?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<2x?x?xf32>
  return %0 : tensor<2x?x?xf32>
}

// -----

// 37 rows of 1029 features: blocks of 3 rows, the last one partial.
// CHECK-LABEL: func.func @rms_norm
//       CHECK:   scf.forall
func.func @rms_norm(%x: tensor<37x1029xf32>) -> tensor<37x1029xf32> {
  %0 = seq.rms_norm %x {eps = 1.0e-06 : f64} : (tensor<37x1029xf32>) -> tensor<37x1029xf32>
  return %0 : tensor<37x1029xf32>
}

// -----

// Non-f32 and non-last axes keep the reference lowering, with a remark.
// CHECK-LABEL: func.func @fallbacks
//   CHECK-NOT:   scf.forall
func.func @fallbacks(%x: tensor<4x8xbf16>, %y: tensor<4x8xf32>) -> (tensor<4x8xbf16>, tensor<4x8xf32>) {
  // expected-remark @below {{layer_norm takes the reference lowering: the element type is bf16, not f32 (the row kernels are f32)}}
  %0 = seq.layer_norm %x {eps = 1.0e-05 : f64} : (tensor<4x8xbf16>) -> tensor<4x8xbf16>
  // expected-remark @below {{softmax takes the reference lowering: the axis 0 is not the last of rank 2 (its rows are not contiguous)}}
  %1 = seq.softmax %y axis 0 : tensor<4x8xf32>
  return %0, %1 : tensor<4x8xbf16>, tensor<4x8xf32>
}
