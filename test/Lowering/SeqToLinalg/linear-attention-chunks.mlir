// RUN: seq-opt %s --split-input-file --verify-diagnostics \
// RUN:   --convert-seq-to-linalg="linear-attention-chunk=16 remarks=true" \
// RUN:   --canonicalize --cse | FileCheck %s
// RUN: seq-opt %s --split-input-file \
// RUN:   --convert-seq-to-linalg="linear-attention-chunk=16 linear-attention-per-head=true" \
// RUN:   --canonicalize --cse | FileCheck %s --check-prefix=PERHEAD

// Causal, f32, chunks of 16 tokens: one loop over the chunks carrying
// S: [b, h, d, e], z: [b, h, 1, d] and the output; per chunk the rows
// [c, c + len) of phi(Q), phi(K) and V with len = min(16, n - c), and six
// batched `C += A * B` contractions (scores, the two parts of the normalizer
// and of the numerator, the state update) besides the causal mask and the
// division.

// CHECK-DAG:   #[[$LHS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG:   #[[$RHST:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG:   #[[$ACC:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[$ONES:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4)>
// CHECK-DAG:   #[[$RHS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-DAG:   #[[$DEN:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
// CHECK-DAG:   #[[$KT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d2)>
// CHECK-DAG:   #[[$ONESZ:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, d4)>
// Per head (the CPU): a parallel loop over (batch, heads) holds the loop
// over the chunks, on each pair's [1, 1, ...] slices of phi(Q), phi(K), V,
// the state and the output, and inserts the pair's output.

// PERHEAD-LABEL: func.func @chunked
// PERHEAD:         %[[B:.+]] = tensor.dim %arg0, %c0
// PERHEAD:         scf.forall (%[[I:.+]], %[[H:.+]]) in (%[[B]], 4) shared_outs(%[[OUT:.+]] = %{{.+}}) -> (tensor<?x4x?x24xf32>)
// PERHEAD:           tensor.extract_slice %{{.+}}[%[[I]], %[[H]], 0, 0] [1, 1, %{{.+}}, 32] [1, 1, 1, 1] : tensor<?x4x?x32xf32> to tensor<1x1x?x32xf32>
// PERHEAD:           %[[LOOP:.+]]:3 = scf.for {{.*}} -> (tensor<1x1x32x24xf32>, tensor<1x1x1x32xf32>, tensor<1x1x?x24xf32>)
// PERHEAD:             linalg.generic {{.*}} outs(%{{.+}} : tensor<1x1x?x?xf32>)
// PERHEAD:           scf.forall.in_parallel
// PERHEAD-NEXT:        tensor.parallel_insert_slice %[[LOOP]]#2 into %[[OUT]][%[[I]], %[[H]], 0, 0] [1, 1, %{{.+}}, 24] [1, 1, 1, 1]

// CHECK-LABEL: func.func @chunked
// CHECK-SAME:    %[[Q:[a-zA-Z0-9]+]]: tensor<?x4x?x32xf32>, %[[K:[a-zA-Z0-9]+]]: tensor<?x4x?x32xf32>, %[[V:[a-zA-Z0-9]+]]: tensor<?x4x?x24xf32>
// CHECK-DAG:     %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG:     %[[EPS:.+]] = arith.constant 9.99999997E-7 : f32
// CHECK:         %[[ONE:.+]] = linalg.fill {{.*}} -> tensor<1x16xf32>
// CHECK:         %[[LOOP:.+]]:3 = scf.for %[[C:.+]] = %{{.+}} to %[[N:.+]] step %[[C16]] iter_args(%[[S:.+]] = %{{.+}}, %[[Z:.+]] = %{{.+}}, %[[O:.+]] = %{{.+}}) -> (tensor<?x4x32x24xf32>, tensor<?x4x1x32xf32>, tensor<?x4x?x24xf32>)
// CHECK:           %[[REST:.+]] = arith.subi %[[N]], %[[C]] : index
// CHECK:           %[[LEN:.+]] = arith.minsi %[[REST]], %[[C16]] : index
// The chunk's features, computed in the loop with the short exp.
// CHECK:           %[[QROWS:.+]] = tensor.extract_slice %[[Q]][0, 0, %[[C]], 0] [%{{.+}}, 4, %[[LEN]], 32] [1, 1, 1, 1]
// CHECK:           %[[QC:.+]] = linalg.generic {{.*}} ins(%[[QROWS]] : tensor<?x4x?x32xf32>)
// CHECK:             math.exp %{{.+}} {seq.fast_exp} : f32
// CHECK:           %[[KROWS:.+]] = tensor.extract_slice %[[K]][0, 0, %[[C]], 0] [%{{.+}}, 4, %[[LEN]], 32] [1, 1, 1, 1]
// CHECK:           %[[KC:.+]] = linalg.generic {{.*}} ins(%[[KROWS]] : tensor<?x4x?x32xf32>)
// CHECK-DAG:       %[[VC:.+]] = tensor.extract_slice %[[V]][0, 0, %[[C]], 0] [%{{.+}}, 4, %[[LEN]], 24] [1, 1, 1, 1]
// CHECK-DAG:       %[[ONEC:.+]] = tensor.extract_slice %[[ONE]][0, 0] [1, %[[LEN]]] [1, 1]
// A = Q_c K_c^T.
// CHECK:           %[[A:.+]] = linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHST]], #[[$ACC]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[QC]], %[[KC]] : {{.*}}) outs(%{{.+}} : tensor<?x4x?x?xf32>)
// CHECK:             arith.mulf
// CHECK-NEXT:        arith.addf
// Query i sees keys j <= i.
// CHECK:           %[[AM:.+]] = linalg.generic {{.*}} ins(%[[A]] : tensor<?x4x?x?xf32>)
// CHECK:             %[[I:.+]] = linalg.index 2 : index
// CHECK:             %[[J:.+]] = linalg.index 3 : index
// CHECK:             arith.cmpi ule, %[[J]], %[[I]] : index
// den = Q_c z + rowsum(A), num = Q_c S + A V_c.
// CHECK:           %[[D1:.+]] = linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHST]], #[[$ACC]]], {{.*}} ins(%[[QC]], %[[Z]] : {{.*}}) outs(%{{.+}} : tensor<?x4x?x1xf32>)
// CHECK:           %[[N1:.+]] = linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHS]], #[[$ACC]]], {{.*}} ins(%[[QC]], %[[S]] : {{.*}}) outs(%{{.+}} : tensor<?x4x?x24xf32>)
// CHECK:           %[[D2:.+]] = linalg.generic {indexing_maps = [#[[$LHS]], #[[$ONES]], #[[$ACC]]], {{.*}} ins(%[[AM]], %[[ONEC]] : {{.*}}) outs(%[[D1]] : tensor<?x4x?x1xf32>)
// CHECK:           %[[N2:.+]] = linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHS]], #[[$ACC]]], {{.*}} ins(%[[AM]], %[[VC]] : {{.*}}) outs(%[[N1]] : tensor<?x4x?x24xf32>)
// CHECK:           %[[OC:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #[[$DEN]], #{{.+}}], {{.*}} ins(%[[N2]], %[[D2]] : {{.*}})
// CHECK:             %[[DE:.+]] = arith.addf %{{.+}}, %[[EPS]] : f32
// CHECK:             arith.divf %{{.+}}, %[[DE]] : f32
// CHECK:           %[[O2:.+]] = tensor.insert_slice %[[OC]] into %[[O]][0, 0, %[[C]], 0] [%{{.+}}, 4, %[[LEN]], 24] [1, 1, 1, 1]
// S += K_c^T V_c, z += colsum(K_c), after the chunk's output used the old state.
// CHECK:           %[[S2:.+]] = linalg.generic {indexing_maps = [#[[$KT]], #[[$RHS]], #[[$ACC]]], {{.*}} ins(%[[KC]], %[[VC]] : {{.*}}) outs(%[[S]] : tensor<?x4x32x24xf32>)
// CHECK:           %[[Z2:.+]] = linalg.generic {indexing_maps = [#[[$ONESZ]], #[[$RHS]], #[[$ACC]]], {{.*}} ins(%[[ONEC]], %[[KC]] : {{.*}}) outs(%[[Z]] : tensor<?x4x1x32xf32>)
// CHECK:           scf.yield %[[S2]], %[[Z2]], %[[O2]]
// CHECK:         return %[[LOOP]]#2
func.func @chunked(%q: tensor<?x4x?x32xf32>, %k: tensor<?x4x?x32xf32>,
                   %v: tensor<?x4x?x24xf32>) -> tensor<?x4x?x24xf32> {
  %o = seq.linear_attention %q, %k, %v feature_map elu_plus_one causal
        : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x24xf32> -> tensor<?x4x?x24xf32>
  return %o : tensor<?x4x?x24xf32>
}

// -----

// Not f32: the recurrent form (a loop over every token, step 1), with a
// remark saying why.

// CHECK-LABEL: func.func @causal_f16
// CHECK:         %[[ONE:.+]] = arith.constant 1 : index
// CHECK:         scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[ONE]] iter_args({{.*}}) -> (tensor<2x4x32x16xf32>, tensor<2x4x32xf32>, tensor<2x4xf32>, tensor<2x4x?x16xf32>)
func.func @causal_f16(%q: tensor<2x4x?x32xf16>, %k: tensor<2x4x?x32xf16>,
                      %v: tensor<2x4x?x16xf16>) -> tensor<2x4x?x16xf16> {
  // expected-remark @below {{causal linear attention takes the token-by-token recurrent lowering: an operand is not f32}}
  %o = seq.linear_attention %q, %k, %v feature_map relu causal
        : tensor<2x4x?x32xf16>, tensor<2x4x?x32xf16>, tensor<2x4x?x16xf16> -> tensor<2x4x?x16xf16>
  return %o : tensor<2x4x?x16xf16>
}

// -----

// Non-causal without per-head loops: the reassociated form, no loop and no
// remark (linear-attention-chunks-global.mlir has it per head).

// CHECK-LABEL: func.func @global
// CHECK-NOT:     scf.for
// CHECK:         return
func.func @global(%q: tensor<?x4x?x32xf32>, %k: tensor<?x4x?x32xf32>,
                  %v: tensor<?x4x?x24xf32>) -> tensor<?x4x?x24xf32> {
  %o = seq.linear_attention %q, %k, %v feature_map relu
        : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x24xf32> -> tensor<?x4x?x24xf32>
  return %o : tensor<?x4x?x24xf32>
}
