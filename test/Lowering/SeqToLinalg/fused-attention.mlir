// RUN: seq-opt %s --split-input-file --convert-seq-to-linalg="attention-block=64" \
// RUN:   --canonicalize --cse | FileCheck %s
// RUN: seq-opt %s --split-input-file --convert-seq-to-linalg="attention-block=64" \
// RUN:   --canonicalize --cse | FileCheck %s --check-prefix=NOSCORES

// No function of this file but @reference (static shapes) has a tensor of
// scores [b, h, n_q, n_k], ALiBi's included.
// NOSCORES-NOT: x?x?xf32>

// Causal grouped-query attention: one scf.forall over (batch, head, block of
// 64 queries); the loop over key blocks stops after the query block's last
// query (causal), carries the running max, sum and output; the scale is
// applied to the block of Q once (a linalg.map, which elementwise fusion
// leaves out of the product), and Q K^T reads K in place; the mask
// predicate runs only where the block is cut (scf.if), and elsewhere the
// scores pass unchanged.
func.func @causal(%q: tensor<?x8x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>) -> tensor<?x8x?x64xf32> {
  %o = seq.attention %q, %k, %v {mask = #seq.mask<causal = true>}
      : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32> -> tensor<?x8x?x64xf32>
  return %o : tensor<?x8x?x64xf32>
}
// CHECK-DAG:   #[[QMAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG:   #[[KMAP:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @causal
//       CHECK:   scf.forall (%[[B:.*]], %[[H:.*]], %[[QB:.*]]) in (%{{.*}}, 8, %{{.*}}) shared_outs(
//       CHECK:     arith.divui %[[H]], %c4
//       CHECK:     %[[QSLICE:.*]] = tensor.extract_slice %arg0
//       CHECK:     linalg.map ins(%[[QSLICE]]
//       CHECK:       arith.mulf %{{.*}}, %cst
//       CHECK:     %[[HI:.*]] = arith.minui
//       CHECK:     scf.for %{{.*}} = %c0 to %{{.*}} step %c64 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x64xf32>)
//   CHECK-NOT:       linalg.transpose
//       CHECK:       linalg.generic {indexing_maps = [#[[QMAP]], #[[KMAP]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]
//       CHECK:       scf.if
//       CHECK:         linalg.index
//       CHECK:         arith.select
//       CHECK:       } else {
//   CHECK-NOT:         linalg.index
//       CHECK:       }
//       CHECK:       math.exp
//       CHECK:       math.exp
//       CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
//       CHECK:       scf.yield
//       CHECK:     arith.divf
//       CHECK:     scf.forall.in_parallel
//       CHECK:       tensor.parallel_insert_slice

// -----

// A window starts the key loop at the first key the block's first query can
// see; lengths end it at the row's length. No mask predicate is needed for
// the lengths alone.
func.func @window_lengths(%q: tensor<?x4x?x32xf32>, %k: tensor<?x4x?x32xf32>, %v: tensor<?x4x?x32xf32>, %len: tensor<?xi32>) -> (tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>) {
  %o = seq.attention %q, %k, %v {mask = #seq.mask<window = 256>}
      : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x32xf32>
  %p = seq.attention %q, %k, %v lengths(%len : tensor<?xi32>)
      : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x32xf32>
  return %o, %p : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>
}
// CHECK-LABEL: func.func @window_lengths
//       CHECK:   scf.forall
//       CHECK:     %[[LO:.*]] = arith.subi %{{.*}}, %c255
//       CHECK:     scf.for %{{.*}} = %[[LO]] to %{{.*}} step %c64
//       CHECK:       scf.if
//       CHECK:   scf.forall
//       CHECK:     tensor.extract %{{.*}}[%{{.*}}] : tensor<?xi32>
//       CHECK:     arith.maxsi
//       CHECK:     scf.for
//   CHECK-NOT:       scf.if
//       CHECK:       scf.yield

// -----

// ALiBi: positions 0, 1, ... as f32, once per call; per (batch, head, query
// block) the head's slope and the block's query positions; in the key loop,
// after the Q K^T contraction (still a plain multiply-add), the bias
// s - slope |i - j| from the block's query and key positions: on blocks the
// causal mask cuts in the same generic as the mask (select), elsewhere in an
// elementwise generic of f32 arithmetic only (no linalg.index), which the
// row kernels vectorize along the keys. Nothing of size n_q x n_k.
func.func @alibi(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>, %slopes: tensor<4xf32>) -> tensor<?x4x?x16xf32> {
  %o = seq.attention %q, %k, %v alibi(%slopes : tensor<4xf32>) {mask = #seq.mask<causal = true>}
      : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}
// CHECK-DAG:   #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG:   #[[COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG:   #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @alibi(
//  CHECK-SAME:     %{{[^:]*}}: tensor<?x4x?x16xf32>, %{{[^:]*}}: tensor<?x2x?x16xf32>, %{{[^:]*}}: tensor<?x2x?x16xf32>, %[[SLOPES:[^:]*]]: tensor<4xf32>)
//       CHECK:   %[[POS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?xf32>)
//       CHECK:     linalg.index 0
//       CHECK:     arith.sitofp
//       CHECK:   scf.forall (%{{.*}}, %[[H:.*]], %{{.*}}) in
//       CHECK:     %[[SLOPE:.*]] = tensor.extract %[[SLOPES]][%[[H]]] : tensor<4xf32>
//       CHECK:     %[[QPOS:.*]] = tensor.extract_slice %[[POS]]
//       CHECK:     scf.for %[[K0:.*]] = %c0 to
//       CHECK:       %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
//  CHECK-NEXT:       ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32):
//  CHECK-NEXT:         %[[P:.*]] = arith.mulf %[[A]], %[[B]]
//  CHECK-NEXT:         %[[SUM:.*]] = arith.addf %[[C]], %[[P]]
//  CHECK-NEXT:         linalg.yield %[[SUM]]
//       CHECK:       %[[KPOS:.*]] = tensor.extract_slice %[[POS]][%[[K0]]]
//       CHECK:       scf.if
//       CHECK:         linalg.generic {indexing_maps = [#[[ROW]], #[[COL]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[QPOS]], %[[KPOS]] : tensor<?xf32>, tensor<?xf32>) outs(%[[S]] : tensor<?x?xf32>)
//       CHECK:           linalg.index
//       CHECK:           arith.subf
//       CHECK:           math.absf
//       CHECK:           arith.mulf %[[SLOPE]]
//       CHECK:           arith.subf
//       CHECK:           arith.select
//       CHECK:       } else {
//       CHECK:         linalg.generic {indexing_maps = [#[[ROW]], #[[COL]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[QPOS]], %[[KPOS]] : tensor<?xf32>, tensor<?xf32>) outs(%[[S]] : tensor<?x?xf32>)
//  CHECK-NEXT:         ^bb0(%[[I:.*]]: f32, %[[J:.*]]: f32, %[[X:.*]]: f32):
//  CHECK-NEXT:           %[[D:.*]] = arith.subf %[[I]], %[[J]]
//  CHECK-NEXT:           %[[AD:.*]] = math.absf %[[D]]
//  CHECK-NEXT:           %[[BIAS:.*]] = arith.mulf %[[SLOPE]], %[[AD]]
//  CHECK-NEXT:           %[[R:.*]] = arith.subf %[[X]], %[[BIAS]]
//  CHECK-NEXT:           linalg.yield %[[R]]
//       CHECK:       }
//       CHECK:       math.exp
//       CHECK:     scf.forall.in_parallel

// -----

// Without a mask no block is cut: the bias generic runs on every block, with
// no scf.if.
func.func @alibi_full(%q: tensor<1x2x?x8xf32>, %slopes: tensor<?xf32>) -> tensor<1x2x?x8xf32> {
  %o = seq.attention %q, %q, %q alibi(%slopes : tensor<?xf32>)
      : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}
// CHECK-LABEL: func.func @alibi_full
//       CHECK:   cf.assert %{{.*}}, "seq.attention: alibi size differs from the heads"
//       CHECK:   scf.forall
//       CHECK:     scf.for
//   CHECK-NOT:       scf.if
//       CHECK:       math.absf
//   CHECK-NOT:       scf.if
//       CHECK:       scf.yield

// -----

// Global tokens: a first key loop over the global key blocks [0, min(g, lo))
// before the window's, and a block holding a global query sees every key
// (the select on q0 < g).
// CHECK-LABEL: func.func @global_tokens
//       CHECK:   scf.forall
//       CHECK:     %[[GLOBALROWS:.*]] = arith.cmpi ult, %{{.*}}, %c3
//       CHECK:     %[[GEND:.*]] = arith.select %[[GLOBALROWS]], %c0, %{{.*}}
//       CHECK:     scf.for %{{.*}} = %c0 to %[[GEND]] step %c64
//       CHECK:     scf.for
func.func @global_tokens(%q: tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32> {
  %c = seq.attention %q, %q, %q {mask = #seq.mask<window = 8, global_tokens = 3>}
      : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x2x?x16xf32>
  return %c : tensor<?x2x?x16xf32>
}

// -----

// A score bias tensor and f64 take the reference lowering, which
// materializes the scores.
func.func @reference(%q: tensor<1x2x8x4xf32>, %bias: tensor<1x2x8x8xf32>, %d: tensor<1x2x8x4xf64>)
    -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf64>) {
  %a = seq.attention %q, %q, %q bias(%bias : tensor<1x2x8x8xf32>)
      : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %e = seq.attention %d, %d, %d
      : tensor<1x2x8x4xf64>, tensor<1x2x8x4xf64>, tensor<1x2x8x4xf64> -> tensor<1x2x8x4xf64>
  return %a, %e : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf64>
}
// CHECK-LABEL: func.func @reference
//   CHECK-NOT:   scf.forall
//       CHECK:   tensor<1x2x8x8xf32>
//   CHECK-NOT:   scf.forall
