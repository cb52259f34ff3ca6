// RUN: seq-opt %s --split-input-file --verify-diagnostics \
// RUN:   --convert-seq-to-linalg="linear-attention-chunk=16 linear-attention-per-head=true remarks=true" \
// RUN:   --canonicalize --cse | FileCheck %s

// Non-causal, f32, per head (the CPU at -O2): a parallel loop over (batch,
// heads) whose body reads its pair's [1, 1, n, ...] slices of Q, K and V.
// A first loop over chunks of 16 tokens sums S = phi(K)^T V and z =
// colsum(phi(K)) from zeros, the features of each chunk computed in the
// loop; a second computes each chunk's rows num / (den + eps) with num =
// phi(Q_c) S and den = phi(Q_c) z. Only the output goes back to the shared
// tensor: the state is the pair's own.

// CHECK-DAG:   #[[$KT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d2)>
// CHECK-DAG:   #[[$RHS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-DAG:   #[[$ACC:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[$ONESZ:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, d4)>
// CHECK-DAG:   #[[$LHS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG:   #[[$RHST:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG:   #[[$DEN:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>

// CHECK-LABEL: func.func @global
// CHECK-SAME:    %[[Q:[a-zA-Z0-9]+]]: tensor<?x4x?x32xf32>, %[[K:[a-zA-Z0-9]+]]: tensor<?x4x?x32xf32>, %[[V:[a-zA-Z0-9]+]]: tensor<?x4x?x24xf32>
// CHECK-DAG:     %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG:     %[[EPS:.+]] = arith.constant 9.99999997E-7 : f32
// CHECK:         %[[B:.+]] = tensor.dim %[[Q]], %c0
// CHECK:         %[[N:.+]] = tensor.dim %[[Q]], %c2
// CHECK:         %[[RES:.+]] = scf.forall (%[[I:.+]], %[[H:.+]]) in (%[[B]], 4) shared_outs(%[[OUT:.+]] = %{{.+}}) -> (tensor<?x4x?x24xf32>)
// CHECK-DAG:       %[[OUTP:.+]] = tensor.extract_slice %[[OUT]][%[[I]], %[[H]], 0, 0] [1, 1, %[[N]], 24]
// CHECK-DAG:       %[[QP:.+]] = tensor.extract_slice %[[Q]][%[[I]], %[[H]], 0, 0] [1, 1, %[[N]], 32]
// CHECK-DAG:       %[[KP:.+]] = tensor.extract_slice %[[K]][%[[I]], %[[H]], 0, 0] [1, 1, %[[N]], 32]
// CHECK-DAG:       %[[VP:.+]] = tensor.extract_slice %[[V]][%[[I]], %[[H]], 0, 0] [1, 1, %[[N]], 24]
// CHECK:           %[[SUMS:.+]]:2 = scf.for %[[C:.+]] = %c0 to %[[N]] step %[[C16]] iter_args(%[[S:.+]] = %{{.+}}, %[[Z:.+]] = %{{.+}}) -> (tensor<1x1x32x24xf32>, tensor<1x1x1x32xf32>)
// CHECK:             %[[LEN:.+]] = arith.minsi %{{.+}}, %[[C16]] : index
// CHECK:             %[[KROWS:.+]] = tensor.extract_slice %[[KP]][0, 0, %[[C]], 0] [1, 1, %[[LEN]], 32]
// CHECK:             %[[KC:.+]] = linalg.generic {{.*}} ins(%[[KROWS]] : tensor<1x1x?x32xf32>)
// CHECK:               math.exp %{{.+}} {seq.fast_exp} : f32
// CHECK:             %[[VC:.+]] = tensor.extract_slice %[[VP]][0, 0, %[[C]], 0] [1, 1, %[[LEN]], 24]
// CHECK:             %[[ONEC:.+]] = tensor.extract_slice %{{.+}}[0, 0] [1, %[[LEN]]] [1, 1]
// CHECK:             %[[S2:.+]] = linalg.generic {indexing_maps = [#[[$KT]], #[[$RHS]], #[[$ACC]]], {{.*}} ins(%[[KC]], %[[VC]] : {{.*}}) outs(%[[S]] : tensor<1x1x32x24xf32>)
// CHECK:             %[[Z2:.+]] = linalg.generic {indexing_maps = [#[[$ONESZ]], #[[$RHS]], #[[$ACC]]], {{.*}} ins(%[[ONEC]], %[[KC]] : {{.*}}) outs(%[[Z]] : tensor<1x1x1x32xf32>)
// CHECK:             scf.yield %[[S2]], %[[Z2]]
// CHECK:           %[[ROWS:.+]] = scf.for %[[C:.+]] = %c0 to %[[N]] step %[[C16]] iter_args(%[[O:.+]] = %[[OUTP]]) -> (tensor<1x1x?x24xf32>)
// CHECK:             %[[LEN:.+]] = arith.minsi %{{.+}}, %[[C16]] : index
// CHECK:             %[[QROWS:.+]] = tensor.extract_slice %[[QP]][0, 0, %[[C]], 0] [1, 1, %[[LEN]], 32]
// CHECK:             %[[QC:.+]] = linalg.generic {{.*}} ins(%[[QROWS]] : tensor<1x1x?x32xf32>)
// CHECK:             %[[D:.+]] = linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHST]], #[[$ACC]]], {{.*}} ins(%[[QC]], %[[SUMS]]#1 : {{.*}}) outs(%{{.+}} : tensor<1x1x?x1xf32>)
// CHECK:             %[[NUM:.+]] = linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHS]], #[[$ACC]]], {{.*}} ins(%[[QC]], %[[SUMS]]#0 : {{.*}}) outs(%{{.+}} : tensor<1x1x?x24xf32>)
// CHECK:             %[[OC:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #[[$DEN]], #{{.+}}], {{.*}} ins(%[[NUM]], %[[D]] : {{.*}})
// CHECK:               %[[DE:.+]] = arith.addf %{{.+}}, %[[EPS]] : f32
// CHECK:               arith.divf %{{.+}}, %[[DE]] : f32
// CHECK:             %[[O2:.+]] = tensor.insert_slice %[[OC]] into %[[O]][0, 0, %[[C]], 0] [1, 1, %[[LEN]], 24]
// CHECK:             scf.yield %[[O2]]
// CHECK:           scf.forall.in_parallel
// CHECK-NEXT:        tensor.parallel_insert_slice %[[ROWS]] into %[[OUT]][%[[I]], %[[H]], 0, 0] [1, 1, %[[N]], 24] [1, 1, 1, 1]
// CHECK-NEXT:      }
// CHECK:         return %[[RES]]
func.func @global(%q: tensor<?x4x?x32xf32>, %k: tensor<?x4x?x32xf32>,
                  %v: tensor<?x4x?x24xf32>) -> tensor<?x4x?x24xf32> {
  %o = seq.linear_attention %q, %k, %v feature_map elu_plus_one
        : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x24xf32> -> tensor<?x4x?x24xf32>
  return %o : tensor<?x4x?x24xf32>
}

// -----

// Not f32: the reassociated reference form (whole-sequence contractions, no
// loop), with a remark saying why.

// CHECK-LABEL: func.func @global_bf16
// CHECK-NOT:     scf.for
// CHECK-NOT:     scf.forall
// CHECK:         return
func.func @global_bf16(%q: tensor<2x4x?x32xbf16>, %k: tensor<2x4x?x32xbf16>,
                       %v: tensor<2x4x?x16xbf16>) -> tensor<2x4x?x16xbf16> {
  // expected-remark @below {{linear attention takes the reassociated reference lowering (whole-sequence contractions): an operand is not f32}}
  %o = seq.linear_attention %q, %k, %v feature_map relu
        : tensor<2x4x?x32xbf16>, tensor<2x4x?x32xbf16>, tensor<2x4x?x16xbf16> -> tensor<2x4x?x16xbf16>
  return %o : tensor<2x4x?x16xbf16>
}
