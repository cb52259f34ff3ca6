// RUN: seq-opt %s --convert-seq-to-linalg -split-input-file | FileCheck %s

// Non-causal: phi(Q) (phi(K)^T V) / (phi(Q) . sum phi(K) + eps), never an
// n x n matrix and no loop.

// CHECK-DAG:   #[[$MAP_K:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d2)>
// CHECK-DAG:   #[[$MAP_V:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-DAG:   #[[$MAP_S:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @global_elu
// CHECK-SAME:    %[[Q:[a-zA-Z0-9]+]]: tensor<?x4x?x32xf32>, %[[K:[a-zA-Z0-9]+]]: tensor<?x4x?x32xf32>, %[[V:[a-zA-Z0-9]+]]: tensor<?x4x?x16xf32>
// CHECK-NOT:     scf.for
// elu(x) + 1 = x > 0 ? x + 1 : exp(x).
// CHECK:         %[[PHIQ:.+]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<?x4x?x32xf32>)
// CHECK:           ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK:             %[[POS:.+]] = arith.cmpf ogt, %[[X]], %{{.+}} : f32
// CHECK:             %[[SHIFT:.+]] = arith.addf %[[X]], %{{.+}} : f32
// CHECK:             %[[EXP:.+]] = math.exp %[[X]] : f32
// CHECK:             arith.select %[[POS]], %[[SHIFT]], %[[EXP]] : f32
// CHECK:         %[[PHIK:.+]] = linalg.generic {{.*}} ins(%[[K]] : tensor<?x4x?x32xf32>)
// S = phi(K)^T V: [b, h, d, e], reduced over the sequence.
// CHECK:         %[[KV:.+]] = linalg.generic {indexing_maps = [#[[$MAP_K]], #[[$MAP_V]], #[[$MAP_S]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[PHIK]], %[[V]] : tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32>) outs(%{{.+}} : tensor<?x4x32x16xf32>)
// z = sum_j phi(k_j): [b, h, d].
// CHECK:         %[[Z:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[PHIK]] : tensor<?x4x?x32xf32>) outs(%{{.+}} : tensor<?x4x32xf32>)
// CHECK:         %[[DEN:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[PHIQ]], %[[Z]] : tensor<?x4x?x32xf32>, tensor<?x4x32xf32>) outs(%{{.+}} : tensor<?x4x?xf32>)
// CHECK:         %[[NUM:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[PHIQ]], %[[KV]] : tensor<?x4x?x32xf32>, tensor<?x4x32x16xf32>) outs(%{{.+}} : tensor<?x4x?x16xf32>)
// CHECK:         %[[EPS:.+]] = arith.constant 9.99999997E-7 : f32
// CHECK:         %[[OUT:.+]] = linalg.generic {{.*}} ins(%[[NUM]], %[[DEN]] : tensor<?x4x?x16xf32>, tensor<?x4x?xf32>)
// CHECK:           ^bb0(%[[N:.+]]: f32, %[[D:.+]]: f32, %{{.+}}: f32):
// CHECK:             %[[DE:.+]] = arith.addf %[[D]], %[[EPS]] : f32
// CHECK:             arith.divf %[[N]], %[[DE]] : f32
// CHECK:         return %[[OUT]]
func.func @global_elu(%q: tensor<?x4x?x32xf32>, %k: tensor<?x4x?x32xf32>,
                      %v: tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %o = seq.linear_attention %q, %k, %v feature_map elu_plus_one
        : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

// -----

// The identity feature map copies; relu is a maximum with 0.

// CHECK-LABEL: func.func @global_identity
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:      linalg.yield %[[X]] : f32
// CHECK-NOT:     scf.for
// CHECK:         return
func.func @global_identity(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>,
                           %v: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %o = seq.linear_attention %q, %k, %v feature_map identity
        : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}

// -----

// Causal, f16: the recurrent form, a loop over the sequence carrying
// S: [b, h, d, e], z: [b, h, d], the normalizer [b, h] and the output, all in
// f32; the output is rounded to f16 after the loop.

// CHECK-LABEL: func.func @causal_relu_f16
// CHECK-SAME:    %[[Q:[a-zA-Z0-9]+]]: tensor<2x4x?x32xf16>, %[[K:[a-zA-Z0-9]+]]: tensor<2x4x?x32xf16>, %[[V:[a-zA-Z0-9]+]]: tensor<2x4x?x16xf16>
// CHECK:         %[[PHIQ:.+]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<2x4x?x32xf16>) outs(%{{.+}} : tensor<2x4x?x32xf32>)
// CHECK:           %[[XQ:.+]] = arith.extf %{{.+}} : f16 to f32
// CHECK:           arith.maximumf %[[XQ]], %{{.+}} : f32
// CHECK:         %[[PHIK:.+]] = linalg.generic {{.*}} ins(%[[K]] : tensor<2x4x?x32xf16>) outs(%{{.+}} : tensor<2x4x?x32xf32>)
// CHECK:         %[[EPS:.+]] = arith.constant 1.000000e-03 : f32
// CHECK:         %[[LOOP:.+]]:4 = scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[S:.+]] = %{{.+}}, %[[ZS:.+]] = %{{.+}}, %[[DS:.+]] = %{{.+}}, %[[O:.+]] = %{{.+}}) -> (tensor<2x4x32x16xf32>, tensor<2x4x32xf32>, tensor<2x4xf32>, tensor<2x4x?x16xf32>)
// CHECK-DAG:       %[[QI:.+]] = tensor.extract_slice %[[PHIQ]][0, 0, %[[I]], 0] [2, 4, 1, 32] [1, 1, 1, 1] : tensor<2x4x?x32xf32> to tensor<2x4x1x32xf32>
// CHECK-DAG:       %[[KI:.+]] = tensor.extract_slice %[[PHIK]][0, 0, %[[I]], 0] [2, 4, 1, 32] [1, 1, 1, 1] : tensor<2x4x?x32xf32> to tensor<2x4x1x32xf32>
// CHECK-DAG:       %[[VI:.+]] = tensor.extract_slice %[[V]][0, 0, %[[I]], 0] [2, 4, 1, 16] [1, 1, 1, 1] : tensor<2x4x?x16xf16> to tensor<2x4x1x16xf16>
// S += phi(k_i) v_i^T, in place.
// CHECK:           %[[S2:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[KI]], %[[VI]] : tensor<2x4x1x32xf32>, tensor<2x4x1x16xf16>) outs(%[[S]] : tensor<2x4x32x16xf32>)
// z += phi(k_i).
// CHECK:           %[[Z2:.+]] = linalg.generic {{.*}} ins(%[[KI]] : tensor<2x4x1x32xf32>) outs(%[[ZS]] : tensor<2x4x32xf32>)
// CHECK:           %[[D0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[DS]] : tensor<2x4xf32>)
// CHECK:           %[[D1:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[QI]], %[[Z2]] : tensor<2x4x1x32xf32>, tensor<2x4x32xf32>) outs(%[[D0]] : tensor<2x4xf32>)
// CHECK:           %[[OI:.+]] = tensor.extract_slice %[[O]][0, 0, %[[I]], 0] [2, 4, 1, 16] [1, 1, 1, 1] : tensor<2x4x?x16xf32> to tensor<2x4x1x16xf32>
// CHECK:           %[[NUM:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[QI]], %[[S2]] : tensor<2x4x1x32xf32>, tensor<2x4x32x16xf32>) outs(%[[OI]] : tensor<2x4x1x16xf32>)
// CHECK:           %[[ROW:.+]] = linalg.generic {{.*}} ins(%[[D1]] : tensor<2x4xf32>) outs(%[[NUM]] : tensor<2x4x1x16xf32>)
// CHECK:             %[[DE:.+]] = arith.addf %{{.+}}, %[[EPS]] : f32
// CHECK:             arith.divf %{{.+}}, %[[DE]] : f32
// CHECK:           %[[O2:.+]] = tensor.insert_slice %[[ROW]] into %[[O]][0, 0, %[[I]], 0] [2, 4, 1, 16] [1, 1, 1, 1] : tensor<2x4x1x16xf32> into tensor<2x4x?x16xf32>
// CHECK:           scf.yield %[[S2]], %[[Z2]], %[[D1]], %[[O2]]
// CHECK:         %[[OUT:.+]] = linalg.generic {{.*}} ins(%[[LOOP]]#3 : tensor<2x4x?x16xf32>) outs(%{{.+}} : tensor<2x4x?x16xf16>)
// CHECK:           arith.truncf %{{.+}} : f32 to f16
// CHECK:         return %[[OUT]]
func.func @causal_relu_f16(%q: tensor<2x4x?x32xf16>, %k: tensor<2x4x?x32xf16>,
                           %v: tensor<2x4x?x16xf16>) -> tensor<2x4x?x16xf16> {
  %o = seq.linear_attention %q, %k, %v feature_map relu causal {eps = 1.0e-3 : f64}
        : tensor<2x4x?x32xf16>, tensor<2x4x?x32xf16>, tensor<2x4x?x16xf16> -> tensor<2x4x?x16xf16>
  return %o : tensor<2x4x?x16xf16>
}
