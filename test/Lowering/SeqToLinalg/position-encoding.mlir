// RUN: seq-opt %s --convert-seq-to-linalg -split-input-file | FileCheck %s

// pe[p, c] = sin(p * div) for even c, cos(p * div) for odd c, with
// div = exp(2i * (-ln(10000) / 64)) and 2i = c - c % 2.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @sinusoidal_pe
//  CHECK-SAME:   %[[N:.+]]: index
//       CHECK:   %[[INIT:.+]] = tensor.empty(%[[N]]) : tensor<?x64xf32>
//       CHECK:   linalg.generic {indexing_maps = [#[[ID]]], iterator_types = ["parallel", "parallel"]} outs(%[[INIT]] : tensor<?x64xf32>)
//       CHECK:     %[[P:.+]] = linalg.index 0 : index
//       CHECK:     %[[C:.+]] = linalg.index 1 : index
//       CHECK:     %[[PAR:.+]] = arith.andi %[[C]], %{{.+}} : index
//       CHECK:     %[[EVEN:.+]] = arith.subi %[[C]], %[[PAR]] : index
//       CHECK:     %[[K:.+]] = arith.constant -0.14391157 : f32
//       CHECK:     %[[E:.+]] = arith.sitofp %{{.+}} : i64 to f32
//       CHECK:     %[[X:.+]] = arith.mulf %[[E]], %[[K]] : f32
//       CHECK:     %[[DIV:.+]] = math.exp %[[X]] : f32
//       CHECK:     %[[PF:.+]] = arith.sitofp %{{.+}} : i64 to f32
//       CHECK:     %[[A:.+]] = arith.mulf %[[PF]], %[[DIV]] : f32
//       CHECK:     %[[SIN:.+]] = math.sin %[[A]] : f32
//       CHECK:     %[[COS:.+]] = math.cos %[[A]] : f32
//       CHECK:     %[[ISEVEN:.+]] = arith.cmpi eq, %[[PAR]], %{{.+}} : index
//       CHECK:     %[[R:.+]] = arith.select %[[ISEVEN]], %[[SIN]], %[[COS]] : f32
//       CHECK:     linalg.yield %[[R]] : f32
func.func @sinusoidal_pe(%n: index) -> tensor<?x64xf32> {
  %pe = seq.sinusoidal_pe %n : tensor<?x64xf32>
  return %pe : tensor<?x64xf32>
}

// -----

// Rotate-half RoPE on the first 32 of 64 features: feature c < 16 pairs with
// c + 16 (negated), 16 <= c < 32 with c - 16; the angle is
// p / theta^(2i / 32); features >= 32 pass through.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @rope_partial
//  CHECK-SAME:   %[[X:.+]]: tensor<?x8x?x64xf32>
//   CHECK-DAG:   %[[R:.+]] = arith.constant 32 : index
//       CHECK:   %[[HALF:.+]] = arith.divui %[[R]], %{{.+}} : index
//       CHECK:   linalg.generic {indexing_maps = [#[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
//  CHECK-SAME:     ins(%[[X]] : tensor<?x8x?x64xf32>)
//       CHECK:   ^bb0(%[[XV:.+]]: f32, %{{.+}}: f32):
//       CHECK:     %[[B:.+]] = linalg.index 0 : index
//       CHECK:     %[[H:.+]] = linalg.index 1 : index
//       CHECK:     %[[P:.+]] = linalg.index 2 : index
//       CHECK:     %[[C:.+]] = linalg.index 3 : index
//       CHECK:     %[[ROT:.+]] = arith.cmpi ult, %[[C]], %[[R]] : index
//       CHECK:     %[[FIRST:.+]] = arith.cmpi ult, %[[C]], %[[HALF]] : index
//       CHECK:     %[[CMH:.+]] = arith.subi %[[C]], %[[HALF]] : index
//       CHECK:     %[[PAIR:.+]] = arith.select %[[FIRST]], %[[C]], %[[CMH]] : index
//       CHECK:     %[[CPH:.+]] = arith.addi %[[C]], %[[HALF]] : index
//       CHECK:     %[[PART0:.+]] = arith.select %[[FIRST]], %[[CPH]], %[[CMH]] : index
//       CHECK:     %[[PART:.+]] = arith.select %[[ROT]], %[[PART0]], %[[C]] : index
//       CHECK:     %[[THETA:.+]] = arith.constant 1.000000e+04 : f32
//       CHECK:     %[[POW:.+]] = math.powf %[[THETA]], %{{.+}} : f32
//       CHECK:     %[[INV:.+]] = arith.divf %{{.+}}, %[[POW]] : f32
//       CHECK:     %[[ANG:.+]] = arith.mulf %{{.+}}, %[[INV]] : f32
//       CHECK:     %[[COS:.+]] = math.cos %[[ANG]] : f32
//       CHECK:     %[[SIN:.+]] = math.sin %[[ANG]] : f32
//       CHECK:     %[[OTHER:.+]] = tensor.extract %[[X]][%[[B]], %[[H]], %[[P]], %[[PART]]] : tensor<?x8x?x64xf32>
//       CHECK:     %[[NEG:.+]] = arith.negf %[[OTHER]] : f32
//       CHECK:     %[[SIGNED:.+]] = arith.select %[[FIRST]], %[[NEG]], %[[OTHER]] : f32
//       CHECK:     %[[XC:.+]] = arith.mulf %[[XV]], %[[COS]] : f32
//       CHECK:     %[[OS:.+]] = arith.mulf %[[SIGNED]], %[[SIN]] : f32
//       CHECK:     %[[Y:.+]] = arith.addf %[[XC]], %[[OS]] : f32
//       CHECK:     %[[OUT:.+]] = arith.select %[[ROT]], %[[Y]], %[[XV]] : f32
//       CHECK:     linalg.yield %[[OUT]] : f32
func.func @rope_partial(%x: tensor<?x8x?x64xf32>) -> tensor<?x8x?x64xf32> {
  %0 = seq.rope %x {theta = 1.0e4 : f64, rotary_dims = 32 : i64} : tensor<?x8x?x64xf32>
  return %0 : tensor<?x8x?x64xf32>
}

// -----

// A dynamic head dim rotates all features; it must be even.
// CHECK-LABEL: func.func @rope_dynamic
//       CHECK:   %[[C3:.+]] = arith.constant 3 : index
//       CHECK:   %[[D:.+]] = tensor.dim %{{.+}}, %[[C3]] : tensor<?x8x?x?xf32>
//       CHECK:   %[[REM:.+]] = arith.remui %[[D]], %{{.+}} : index
//       CHECK:   %[[EVEN:.+]] = arith.cmpi eq, %[[REM]], %{{.+}} : index
//       CHECK:   cf.assert %[[EVEN]], "seq.rope: the head dim must be even"
//       CHECK:   linalg.generic
func.func @rope_dynamic(%x: tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %0 = seq.rope %x : tensor<?x8x?x?xf32>
  return %0 : tensor<?x8x?x?xf32>
}

// -----

// Six heads: the slopes of 4 heads, then every other slope of 8.
// CHECK-LABEL: func.func @alibi
//       CHECK:   %[[S:.+]] = arith.constant dense<[2.500000e-01, 6.250000e-02, 1.562500e-02, 3.906250e-03, 5.000000e-01, 1.250000e-01]> : tensor<6xf32>
//       CHECK:   return %[[S]]
func.func @alibi() -> tensor<6xf32> {
  %0 = seq.alibi : tensor<6xf32>
  return %0 : tensor<6xf32>
}
