// RUN: seq-opt %s --split-input-file --convert-seq-to-linalg --canonicalize --cse | FileCheck %s
// RUN: seq-opt %s --split-input-file --seq-tile-attention --convert-seq-to-linalg \
// RUN:   --canonicalize --cse | FileCheck %s --check-prefix=NOSCORES

// The lowering of the tile ops of seq-tile-attention (the tiling itself is
// test/Passes/tile-attention.mlir). Through both stages, no function of
// this file but @reference (static shapes) has a tensor of scores
// [b, h, n_q, n_k], ALiBi's included.
// NOSCORES-NOT: x?x?xf32>

// A full tile: S = Q K^T with K read in place (no transpose), a plain
// multiply-add the contraction kernels take; no mask arithmetic; the online
// softmax updates the max, sum and accumulator in place, then P V.
// CHECK-DAG:   #[[QMAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG:   #[[KMAP:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG:   #[[VMAP:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-LABEL: func.func @full_tile(
//  CHECK-SAME:     %[[Q:[^:]*]]: tensor<?x16xf32>, %[[K:[^:]*]]: tensor<?x16xf32>, %[[V:[^:]*]]: tensor<?x8xf32>, %[[ACC:[^:]*]]: tensor<?x8xf32>, %[[M:[^:]*]]: tensor<?xf32>, %[[L:[^:]*]]: tensor<?xf32>)
//   CHECK-NOT:   linalg.transpose
//       CHECK:   %[[S:.*]] = linalg.generic {indexing_maps = [#[[QMAP]], #[[KMAP]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[Q]], %[[K]] :
//  CHECK-NEXT:   ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32):
//  CHECK-NEXT:     %[[P:.*]] = arith.mulf %[[A]], %[[B]]
//  CHECK-NEXT:     %[[SUM:.*]] = arith.addf %[[C]], %[[P]]
//  CHECK-NEXT:     linalg.yield %[[SUM]]
//   CHECK-NOT:   linalg.index
//       CHECK:   %[[BMAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[S]]
//       CHECK:     arith.maximumf
//       CHECK:   %[[ALPHA:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[BMAX]]
//       CHECK:     math.exp
//       CHECK:   %[[PR:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[BMAX]] : tensor<?xf32>, tensor<?xf32>) outs(%[[S]] : tensor<?x?xf32>)
//       CHECK:     math.exp
//       CHECK:   %[[BSUM:.*]] = linalg.generic {{.*}} ins(%[[PR]]
//       CHECK:   %[[MNEW:.*]] = linalg.generic {{.*}} ins(%[[BMAX]] : tensor<?xf32>) outs(%[[M]] : tensor<?xf32>)
//       CHECK:   %[[LNEW:.*]] = linalg.generic {{.*}} ins(%[[ALPHA]], %[[BSUM]] : tensor<?xf32>, tensor<?xf32>) outs(%[[L]] : tensor<?xf32>)
//       CHECK:   %[[OS:.*]] = linalg.generic {{.*}} ins(%[[ALPHA]] : tensor<?xf32>) outs(%[[ACC]] : tensor<?x8xf32>)
//       CHECK:   %[[ONEW:.*]] = linalg.generic {indexing_maps = [#[[QMAP]], #[[VMAP]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[PR]], %[[V]] : tensor<?x?xf32>, tensor<?x8xf32>) outs(%[[OS]] : tensor<?x8xf32>)
//       CHECK:   return %[[ONEW]], %[[MNEW]], %[[LNEW]]
func.func @full_tile(%q: tensor<?x16xf32>, %k: tensor<?x16xf32>, %v: tensor<?x8xf32>, %acc: tensor<?x8xf32>, %m: tensor<?xf32>, %l: tensor<?xf32>)
    -> (tensor<?x8xf32>, tensor<?xf32>, tensor<?xf32>) {
  %0:3 = seq.online_attention %q, %k, %v, %acc, %m, %l
      : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?xf32>, tensor<?xf32>
  return %0#0, %0#1, %0#2 : tensor<?x8xf32>, tensor<?xf32>, tensor<?xf32>
}

// -----

// A bf16 tile read in place: Q K^T and P V widen their bf16 operands in the
// body (arith.extf, which the CPU's kernels read as bf16: pairs or
// widening in registers), P stays f32; the scale multiplies the f32 scores
// in place before the softmax.
// CHECK-LABEL: func.func @bf16_tile(
//  CHECK-SAME:     %[[Q:[^:]*]]: tensor<?x16xbf16>, %[[K:[^:]*]]: tensor<?x16xbf16>, %[[V:[^:]*]]: tensor<?x8xbf16>,
//       CHECK:   %[[S:.*]] = linalg.generic {{.*}} ins(%[[Q]], %[[K]] : tensor<?x16xbf16>, tensor<?x16xbf16>)
//  CHECK-NEXT:   ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %[[C:.*]]: f32):
//  CHECK-NEXT:     %[[A32:.*]] = arith.extf %[[A]] : bf16 to f32
//  CHECK-NEXT:     %[[B32:.*]] = arith.extf %[[B]] : bf16 to f32
//  CHECK-NEXT:     %[[P:.*]] = arith.mulf %[[A32]], %[[B32]]
//       CHECK:   %[[SC:.*]] = linalg.generic {{.*}} outs(%[[S]] : tensor<?x?xf32>)
//  CHECK-NEXT:   ^bb0(%[[X:.*]]: f32):
//  CHECK-NEXT:     arith.mulf %[[X]], %cst{{.*}} : f32
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[SC]]
//       CHECK:   linalg.generic {{.*}} ins(%{{.*}}, %[[V]] : tensor<?x?xf32>, tensor<?x8xbf16>) outs(%{{.*}} : tensor<?x8xf32>)
//  CHECK-NEXT:   ^bb0(%{{.*}}: f32, %[[VB:.*]]: bf16, %{{.*}}: f32):
//  CHECK-NEXT:     arith.extf %[[VB]] : bf16 to f32
func.func @bf16_tile(%q: tensor<?x16xbf16>, %k: tensor<?x16xbf16>, %v: tensor<?x8xbf16>, %acc: tensor<?x8xf32>, %m: tensor<?xf32>, %l: tensor<?xf32>)
    -> (tensor<?x8xf32>, tensor<?xf32>, tensor<?xf32>) {
  %0:3 = seq.online_attention %q, %k, %v, %acc, %m, %l {scale = 0.25 : f32}
      : tensor<?x16xbf16>, tensor<?x16xbf16>, tensor<?x8xbf16>, tensor<?x8xf32>, tensor<?xf32>, tensor<?xf32>
  return %0#0, %0#1, %0#2 : tensor<?x8xf32>, tensor<?xf32>, tensor<?xf32>
}

// -----

// A partial tile: the mask predicate on the absolute positions
// (offset + linalg.index) selects -inf, in one generic after the product.
// CHECK-LABEL: func.func @partial_tile(
//  CHECK-SAME:     %[[I0:[^:]*]]: index, %[[J0:[^:]*]]: index)
//       CHECK:   %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} outs(%[[S]] : tensor<?x?xf32>)
//       CHECK:     %[[R:.*]] = linalg.index 0
//       CHECK:     %[[I:.*]] = arith.addi %[[I0]], %[[R]]
//       CHECK:     %[[C:.*]] = linalg.index 1
//       CHECK:     %[[J:.*]] = arith.addi %[[J0]], %[[C]]
//       CHECK:     %[[OK:.*]] = arith.cmpi sle, %[[J]], %[[I]]
//       CHECK:     arith.select %[[OK]]
//       CHECK:   math.exp
func.func @partial_tile(%q: tensor<?x16xf32>, %acc: tensor<?x16xf32>, %m: tensor<?xf32>, %i0: index, %j0: index)
    -> (tensor<?x16xf32>, tensor<?xf32>, tensor<?xf32>) {
  %0:3 = seq.online_attention %q, %q, %q, %acc, %m, %m offsets(%i0, %j0) {mask = #seq.mask<causal = true>}
      : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?xf32>, tensor<?xf32>
  return %0#0, %0#1, %0#2 : tensor<?x16xf32>, tensor<?xf32>, tensor<?xf32>
}

// -----

// ALiBi on a full tile: s - slope |pq - pk| in an elementwise generic of f32
// arithmetic only (no linalg.index), which the row kernels vectorize along
// the keys; on a partial tile, in the mask's generic.
// CHECK-DAG:   #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG:   #[[COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG:   #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @alibi_tiles(
//  CHECK-SAME:     %[[SLOPE:[^:]*]]: f32, %[[PQ:[^:]*]]: tensor<?xf32>, %[[PK:[^:]*]]: tensor<?xf32>)
//       CHECK:   %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
//       CHECK:   linalg.generic {indexing_maps = [#[[ROW]], #[[COL]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[PQ]], %[[PK]] : tensor<?xf32>, tensor<?xf32>) outs(%[[S]] : tensor<?x?xf32>)
//  CHECK-NEXT:   ^bb0(%[[I:.*]]: f32, %[[J:.*]]: f32, %[[X:.*]]: f32):
//  CHECK-NEXT:     %[[D:.*]] = arith.subf %[[I]], %[[J]]
//  CHECK-NEXT:     %[[AD:.*]] = math.absf %[[D]]
//  CHECK-NEXT:     %[[BIAS:.*]] = arith.mulf %[[SLOPE]], %[[AD]]
//  CHECK-NEXT:     %[[R:.*]] = arith.subf %[[X]], %[[BIAS]]
//  CHECK-NEXT:     linalg.yield %[[R]]
//       CHECK:   linalg.generic {indexing_maps = [#[[ROW]], #[[COL]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[PQ]], %[[PK]] : tensor<?xf32>, tensor<?xf32>)
//       CHECK:     linalg.index
//       CHECK:     math.absf
//       CHECK:     arith.mulf %[[SLOPE]]
//       CHECK:     arith.select
func.func @alibi_tiles(%q: tensor<?x16xf32>, %acc: tensor<?x16xf32>, %m: tensor<?xf32>, %i0: index, %j0: index,
                       %s: f32, %pq: tensor<?xf32>, %pk: tensor<?xf32>)
    -> (tensor<?x16xf32>, tensor<?x16xf32>) {
  %0:3 = seq.online_attention %q, %q, %q, %acc, %m, %m alibi(%s, %pq, %pk : tensor<?xf32>, tensor<?xf32>)
      : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?xf32>, tensor<?xf32>
  %1:3 = seq.online_attention %q, %q, %q, %acc, %m, %m offsets(%i0, %j0) alibi(%s, %pq, %pk : tensor<?xf32>, tensor<?xf32>) {mask = #seq.mask<window = 4>}
      : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?xf32>, tensor<?xf32>
  return %0#0, %1#0 : tensor<?x16xf32>, tensor<?x16xf32>
}

// -----

// A score bias's tile: s + bias in the elementwise generic after the
// product, [c] (a key-padding bias, the same for every row) through the
// columns' map, [r, c] through the identity, bf16 widened there; with
// ALiBi, the bias before the distance term; on a partial tile, in the
// mask's generic.
// CHECK-DAG:   #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG:   #[[COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG:   #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @bias_tiles(
//  CHECK-SAME:     %[[SLOPE:[^:]*]]: f32, %[[PQ:[^:]*]]: tensor<?xf32>, %[[PK:[^:]*]]: tensor<?xf32>, %[[KB:[^:]*]]: tensor<?xf32>, %[[FB:[^:]*]]: tensor<?x?xbf16>)
//       CHECK:   %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
//       CHECK:   linalg.generic {indexing_maps = [#[[COL]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[KB]] : tensor<?xf32>) outs(%[[S]] : tensor<?x?xf32>)
//  CHECK-NEXT:   ^bb0(%[[B:.*]]: f32, %[[X:.*]]: f32):
//  CHECK-NEXT:     %[[R:.*]] = arith.addf %[[X]], %[[B]]
//  CHECK-NEXT:     linalg.yield %[[R]]
//       CHECK:   linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]], #[[COL]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[FB]], %[[PQ]], %[[PK]] : tensor<?x?xbf16>, tensor<?xf32>, tensor<?xf32>)
//  CHECK-NEXT:   ^bb0(%[[B:.*]]: bf16, %[[I:.*]]: f32, %[[J:.*]]: f32, %[[X:.*]]: f32):
//  CHECK-NEXT:     %[[B32:.*]] = arith.extf %[[B]] : bf16 to f32
//  CHECK-NEXT:     %[[Y:.*]] = arith.addf %[[X]], %[[B32]]
//  CHECK-NEXT:     %[[D:.*]] = arith.subf %[[I]], %[[J]]
//  CHECK-NEXT:     %[[AD:.*]] = math.absf %[[D]]
//  CHECK-NEXT:     %[[AL:.*]] = arith.mulf %[[SLOPE]], %[[AD]]
//  CHECK-NEXT:     %[[R:.*]] = arith.subf %[[Y]], %[[AL]]
//  CHECK-NEXT:     linalg.yield %[[R]]
//       CHECK:   linalg.generic {indexing_maps = [#[[COL]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[KB]] : tensor<?xf32>)
//       CHECK:     linalg.index
//       CHECK:     arith.addf
//       CHECK:     arith.select
func.func @bias_tiles(%q: tensor<?x16xf32>, %acc: tensor<?x16xf32>, %m: tensor<?xf32>, %i0: index, %j0: index,
                      %s: f32, %pq: tensor<?xf32>, %pk: tensor<?xf32>, %kb: tensor<?xf32>, %fb: tensor<?x?xbf16>)
    -> (tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) {
  %0:3 = seq.online_attention %q, %q, %q, %acc, %m, %m bias(%kb : tensor<?xf32>)
      : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?xf32>, tensor<?xf32>
  %1:3 = seq.online_attention %q, %q, %q, %acc, %m, %m alibi(%s, %pq, %pk : tensor<?xf32>, tensor<?xf32>) bias(%fb : tensor<?x?xbf16>)
      : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?xf32>, tensor<?xf32>
  %2:3 = seq.online_attention %q, %q, %q, %acc, %m, %m offsets(%i0, %j0) bias(%kb : tensor<?xf32>) {mask = #seq.mask<causal = true>}
      : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?xf32>, tensor<?xf32>
  return %0#0, %1#0, %2#0 : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>
}

// -----

// Finalization: O / l in place, 0 where l = 0 (no key seen); with partial
// states, M = max over the parts, then the sums and accumulators weighted
// by exp(m_k - M) (0 for parts that saw no key), reduced over the parts.
// CHECK-LABEL: func.func @finalize(
//       CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg1 : tensor<?xf32>) outs(%arg0 : tensor<?x8xf32>)
//       CHECK:     arith.cmpf ogt
//       CHECK:     arith.divf
//       CHECK:     arith.select
//       CHECK:   %[[TOP:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg3 : tensor<?x?xf32>)
//       CHECK:     arith.maximumf
//       CHECK:   %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg3, %[[TOP]], %arg4 :
//       CHECK:     arith.cmpf oeq
//       CHECK:     math.exp
//       CHECK:     arith.select
//       CHECK:   %[[ACC:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg3, %[[TOP]], %arg2 :
//       CHECK:     math.exp
//       CHECK:   linalg.generic {{.*}} ins(%[[SUM]] : tensor<?xf32>) outs(%[[ACC]] : tensor<?x8xf32>)
//       CHECK:     arith.divf
func.func @finalize(%acc: tensor<?x8xf32>, %l: tensor<?xf32>, %accs: tensor<?x?x8xf32>, %ms: tensor<?x?xf32>, %ls: tensor<?x?xf32>)
    -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %0 = seq.attention_finalize %acc, %l, %l : tensor<?x8xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<?x8xf32>
  %1 = seq.attention_finalize %accs, %ms, %ls : tensor<?x?x8xf32>, tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x8xf32>
  return %0, %1 : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Both stages: causal grouped-query attention, ALiBi, global tokens and
// decode hold no tensor of scores (NOSCORES above).
func.func @stages(%q: tensor<?x8x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>, %slopes: tensor<8xf32>,
                  %dq: tensor<1x8x1x64xf32>, %len: tensor<1xi32>)
    -> (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<1x8x1x64xf32>) {
  %a = seq.attention %q, %k, %v {mask = #seq.mask<causal = true>}
      : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32> -> tensor<?x8x?x64xf32>
  %b = seq.attention %q, %k, %v alibi(%slopes : tensor<8xf32>) {mask = #seq.mask<causal = true>}
      : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32> -> tensor<?x8x?x64xf32>
  %c = seq.attention %k, %k, %k {mask = #seq.mask<window = 8, global_tokens = 3>}
      : tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32> -> tensor<?x2x?x64xf32>
  %d = seq.attention %dq, %k, %v lengths(%len : tensor<1xi32>)
      : tensor<1x8x1x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32> -> tensor<1x8x1x64xf32>
  return %a, %b, %c, %d : tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<1x8x1x64xf32>
}
// (No seq op is left; the per-score exp keeps its `{seq.fast_exp}`
// attribute, for the CPU's shorter polynomial.)
// NOSCORES-LABEL: func.func @stages
//   NOSCORES-NOT:   x?x?xf32>
//   NOSCORES-NOT:   {{ seq\.}}
//       NOSCORES:   scf.forall
//   NOSCORES-NOT:   x?x?xf32>
//   NOSCORES-NOT:   {{ seq\.}}
//       NOSCORES:   return

// -----

// A score bias that is the same for every key and f64 take the reference
// lowering, which materializes the scores.
func.func @reference(%q: tensor<1x2x8x4xf32>, %bias: tensor<1x2x8x1xf32>, %d: tensor<1x2x8x4xf64>)
    -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf64>) {
  %a = seq.attention %q, %q, %q bias(%bias : tensor<1x2x8x1xf32>)
      : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %e = seq.attention %d, %d, %d
      : tensor<1x2x8x4xf64>, tensor<1x2x8x4xf64>, tensor<1x2x8x4xf64> -> tensor<1x2x8x4xf64>
  return %a, %e : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf64>
}
// NOSCORES-LABEL: func.func @reference
//   NOSCORES-NOT:   scf.forall
//       NOSCORES:   tensor<1x2x8x8xf32>
//   NOSCORES-NOT:   scf.forall
