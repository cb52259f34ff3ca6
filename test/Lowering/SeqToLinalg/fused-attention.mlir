// RUN: seq-opt %s --split-input-file --convert-seq-to-linalg="attention-block=64" \
// RUN:   --canonicalize --cse | FileCheck %s

// Causal grouped-query attention: one scf.forall over (batch, head, block of
// 64 queries); the loop over key blocks stops after the query block's last
// query (causal), carries the running max, sum and output; the scale is
// applied to Q once, before the loops, and Q K^T reads K in place; the mask
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
//       CHECK:   %[[QS:.*]] = linalg.generic
//       CHECK:     arith.mulf %{{.*}}, %cst
//       CHECK:   scf.forall (%[[B:.*]], %[[H:.*]], %[[QB:.*]]) in (%{{.*}}, 8, %{{.*}}) shared_outs(
//       CHECK:     arith.divui %[[H]], %c4
//       CHECK:     tensor.extract_slice %[[QS]]
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

// Bias, ALiBi, global tokens and f64 take the reference lowering, which
// materializes the scores.
func.func @reference(%q: tensor<1x2x8x4xf32>, %bias: tensor<1x2x8x8xf32>, %slopes: tensor<2xf32>, %d: tensor<1x2x8x4xf64>)
    -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf64>) {
  %a = seq.attention %q, %q, %q bias(%bias : tensor<1x2x8x8xf32>)
      : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %b = seq.attention %q, %q, %q alibi(%slopes : tensor<2xf32>)
      : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %c = seq.attention %q, %q, %q {mask = #seq.mask<window = 2, global_tokens = 1>}
      : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %e = seq.attention %d, %d, %d
      : tensor<1x2x8x4xf64>, tensor<1x2x8x4xf64>, tensor<1x2x8x4xf64> -> tensor<1x2x8x4xf64>
  return %a, %b, %c, %e : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf64>
}
// CHECK-LABEL: func.func @reference
//   CHECK-NOT:   scf.forall
//       CHECK:   tensor<1x2x8x8xf32>
//   CHECK-NOT:   scf.forall
