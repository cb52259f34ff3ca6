// RUN: seq-opt %s --split-input-file --seq-tile-attention --canonicalize --cse | FileCheck %s
// RUN: seq-opt %s --split-input-file --seq-tile-attention="query-block=32 key-block=128 split-units=0" \
// RUN:   --canonicalize --cse | FileCheck %s --check-prefix=OPTS
// RUN: seq-opt %s --split-input-file --seq-tile-attention="remarks=true" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK
// RUN: not seq-opt %s --split-input-file --seq-tile-attention="query-block=0 key-block=64" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD
// BAD: error: seq-tile-attention: expected positive query-block and key-block, got 0 and 64

// Causal grouped-query attention: the scale folded into Q once (seq.mul),
// one scf.forall over (batch, head, tile of 64 queries), the kv head h / 4;
// the key tiles below the causal diagonal [0, f) in a loop without mask
// (no offsets), the diagonal [f, hi) with the mask and the tile's offsets;
// the key range stops after the tile's last query (empty tiles never
// visited), and no split form (the mask is positional).
func.func @causal(%q: tensor<?x8x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>) -> tensor<?x8x?x64xf32> {
  %o = seq.attention %q, %k, %v {mask = #seq.mask<causal = true>}
      : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32> -> tensor<?x8x?x64xf32>
  return %o : tensor<?x8x?x64xf32>
}
// CHECK-LABEL: func.func @causal(
//   CHECK-NOT:   scf.if
//       CHECK:   %[[QS:.*]] = seq.mul %arg0, %{{.*}} : tensor<?x8x?x64xf32>, tensor<f32>
//       CHECK:   scf.forall (%[[B:.*]], %[[H:.*]], %[[QB:.*]]) in (%{{.*}}, 8, %{{.*}}) shared_outs(
//       CHECK:     %[[Q0:.*]] = arith.muli %[[QB]], %c64
//       CHECK:     %[[KVH:.*]] = arith.divui %[[H]], %c4
//       CHECK:     %[[QT:.*]] = tensor.extract_slice %[[QS]][%[[B]], %[[H]], %[[Q0]], 0]
//       CHECK:     %[[NEXT:.*]] = arith.addi %[[Q0]], %c1
//       CHECK:     %[[FULL:.*]] = arith.minsi %{{.*}}, %[[NEXT]]
//       CHECK:     %[[F:.*]] = arith.muli %{{.*}}, %c64
//       CHECK:     %[[S1:.*]]:3 = scf.for %[[K0:.*]] = %c0 to %[[F]] step %c64 iter_args(
//       CHECK:       %[[KT:.*]] = tensor.extract_slice %arg1[%[[B]], %[[KVH]], %[[K0]], 0]
//       CHECK:       seq.online_attention %[[QT]], %[[KT]], %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} : tensor<?x64xf32>
//       CHECK:     %[[S2:.*]]:3 = scf.for %[[K1:.*]] = %[[F]] to %{{.*}} step %c64 iter_args(%{{.*}} = %[[S1]]#0, %{{.*}} = %[[S1]]#1, %{{.*}} = %[[S1]]#2)
//       CHECK:       seq.online_attention %[[QT]], {{.*}} offsets(%[[Q0]], %[[K1]]) {mask = #seq.mask<causal = true>}
//       CHECK:     %[[OUT:.*]] = seq.attention_finalize %[[S2]]#0, %[[S2]]#1, %[[S2]]#2 : tensor<?x64xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<?x64xf32>
//       CHECK:     scf.forall.in_parallel
//       CHECK:       tensor.parallel_insert_slice %[[OUT]] into %{{.*}}[%[[B]], %[[H]], %[[Q0]], 0]
// OPTS-LABEL: func.func @causal(
//       OPTS:   scf.forall
//       OPTS:     arith.muli %{{.*}}, %c32
//       OPTS:     scf.for %{{.*}} step %c128
//       OPTS:     scf.for %{{.*}} step %c128
// REMARK: tile-attention.mlir:[[@LINE-27]]:8: remark: attention tiled: online softmax over 64x64 (query x key) tiles, the (batch, head, query tile) units in parallel, the scale folded into Q; mask #seq.mask<causal = true>: empty tiles skipped by the loop bounds, full tiles unmasked, partial tiles (the causal diagonal) masked

// -----

// A sliding window: the key range starts at the first key the tile's first
// query sees (q0 - 255) and ends after the last query's reach; the full
// tiles inside the window run unmasked between two masked runs, the
// window's edges.
func.func @window(%q: tensor<?x4x?x32xf32>, %k: tensor<?x4x?x32xf32>, %v: tensor<?x4x?x32xf32>) -> tensor<?x4x?x32xf32> {
  %o = seq.attention %q, %k, %v {mask = #seq.mask<window = 256>}
      : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x32xf32>
  return %o : tensor<?x4x?x32xf32>
}
// CHECK-LABEL: func.func @window(
//   CHECK-NOT:   scf.if
//       CHECK:   scf.forall
//       CHECK:     %[[REACH:.*]] = arith.maxsi %[[Q0:.*]], %c255
//       CHECK:     %[[LO:.*]] = arith.subi %[[REACH]], %c255
//       CHECK:     %[[S1:.*]]:3 = scf.for %{{.*}} = %[[LO]] to %[[A:[^ ]*]] step %c64
//       CHECK:       seq.online_attention {{.*}} offsets({{.*}}) {mask = #seq.mask<window = 256>}
//       CHECK:     %[[S2:.*]]:3 = scf.for %{{.*}} = %[[A]] to %[[F:[^ ]*]] step %c64 iter_args(%{{.*}} = %[[S1]]#0
//   CHECK-NOT:       offsets
//       CHECK:       seq.online_attention %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}}, %{{[^ ]*}} :
//       CHECK:     scf.for %{{.*}} = %[[F]] to %{{.*}} step %c64 iter_args(%{{.*}} = %[[S2]]#0
//       CHECK:       seq.online_attention {{.*}} offsets({{.*}}) {mask = #seq.mask<window = 256>}
//       CHECK:     seq.attention_finalize
// REMARK: tile-attention.mlir:[[@LINE-17]]:8: remark: {{.*}} partial tiles (the window's edges) masked

// -----

// Global tokens with a window, causal, and key lengths: a tile holding a
// global query (q0 < 3) visits every key up to its causal end, all of its
// tiles partial (the selects on q0 < 3); the others first visit the global
// keys [0, min(3, lo)) unmasked (every query of the tile sees them), then
// their window. The lengths (clamped at 0) end every key range.
func.func @global_tokens(%q: tensor<?x2x?x16xf32>, %len: tensor<?xi32>) -> tensor<?x2x?x16xf32> {
  %c = seq.attention %q, %q, %q lengths(%len : tensor<?xi32>) {mask = #seq.mask<causal = true, window = 8, global_tokens = 3>}
      : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x2x?x16xf32>
  return %c : tensor<?x2x?x16xf32>
}
// CHECK-LABEL: func.func @global_tokens(
//       CHECK:   scf.forall
//       CHECK:     %[[L:.*]] = tensor.extract %arg1[%{{.*}}] : tensor<?xi32>
//       CHECK:     %[[LI:.*]] = arith.index_cast %[[L]]
//       CHECK:     %[[LEN:.*]] = arith.maxsi %[[LI]], %c0
//       CHECK:     %[[GLOBALROWS:.*]] = arith.cmpi slt, %[[Q0:.*]], %c3
//       CHECK:     %[[GEND0:.*]] = arith.select %[[GLOBALROWS]], %c0, %{{.*}}
//       CHECK:     %[[GEND:.*]] = arith.minui %[[GEND0]], %[[LEN]]
//       CHECK:     %[[A:.*]] = arith.select %[[GLOBALROWS]], %[[HI:.*]], %{{.*}}
//       CHECK:     %[[F:.*]] = arith.select %[[GLOBALROWS]], %[[HI]], %{{.*}}
//       CHECK:     scf.for %{{.*}} = %c0 to %[[GEND]] step %c64
//   CHECK-NOT:       offsets
//       CHECK:       seq.online_attention
//       CHECK:     scf.for %{{.*}} to %[[A]] step %c64
//       CHECK:       seq.online_attention {{.*}} offsets
//       CHECK:     scf.for %{{.*}} = %[[A]] to %[[F]] step %c64
//   CHECK-NOT:       offsets
//       CHECK:       seq.online_attention
//       CHECK:     scf.for %{{.*}} = %[[F]] to %[[HI]] step %c64
//       CHECK:       seq.online_attention {{.*}} offsets
// REMARK: tile-attention.mlir:[[@LINE-24]]:8: remark: {{.*}} partial tiles (the causal diagonal, the window's edges, the tiles of global queries) masked; the key range ends at the lengths

// -----

// ALiBi: positions 0, 1, ... as f32 once per call (the size of the slopes
// checked at run time); every tile gets the head's slope and its query and
// key positions, slices of that table; only the diagonal tiles the mask.
func.func @alibi(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>, %slopes: tensor<?xf32>) -> tensor<?x4x?x16xf32> {
  %o = seq.attention %q, %k, %v alibi(%slopes : tensor<?xf32>) {mask = #seq.mask<causal = true>}
      : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}
// CHECK-LABEL: func.func @alibi(
//       CHECK:   cf.assert %{{.*}}, "seq.attention: alibi size differs from the heads"
//       CHECK:   %[[POS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?xf32>)
//       CHECK:     linalg.index 0
//       CHECK:     arith.uitofp
//       CHECK:   scf.forall (%{{.*}}, %[[H:[^,)]*]], %{{.*}}) in
//       CHECK:     %[[SLOPE:.*]] = tensor.extract %arg3[%[[H]]] : tensor<?xf32>
//       CHECK:     %[[QPOS:.*]] = tensor.extract_slice %[[POS]]
//       CHECK:     scf.for %[[K0:.*]] = %c0 to
//       CHECK:       %[[KPOS:.*]] = tensor.extract_slice %[[POS]][%[[K0]]]
//       CHECK:       seq.online_attention {{.*}} alibi(%[[SLOPE]], %[[QPOS]], %[[KPOS]] : tensor<?xf32>, tensor<?xf32>) :
//       CHECK:     scf.for %[[K1:.*]] = %{{.*}} to
//       CHECK:       %[[KPOS1:.*]] = tensor.extract_slice %[[POS]][%[[K1]]]
//       CHECK:       seq.online_attention {{.*}} offsets({{.*}}, %[[K1]]) alibi(%[[SLOPE]], %[[QPOS]], %[[KPOS1]] : tensor<?xf32>, tensor<?xf32>) {mask = #seq.mask<causal = true>}
// REMARK: tile-attention.mlir:[[@LINE-18]]:8: remark: {{.*}}; ALiBi in the tile

// -----

// Decode: one query of one head against a cache of keys, with lengths. The
// units (batch x heads x query tiles = 1) are fewer than 8, so at run time
// the keys split into min(8, n_k / 512) chunks of whole key tiles when
// that makes two or more (n_k >= 1024): a first forall over the chunks
// gives each chunk's partial state (its keys end at the length), a second
// one merges them (seq.attention_finalize over the chunks); otherwise, the
// plain form. The partial states are made before the test, with room for 8
// chunks (0 without the split), so that their size is known at the
// function's entry (the arena) and no allocation ends a thread team.
func.func @decode(%q: tensor<1x1x1x64xf32>, %k: tensor<1x1x?x64xf32>, %v: tensor<1x1x?x64xf32>, %len: tensor<1xi32>) -> tensor<1x1x1x64xf32> {
  %o = seq.attention %q, %k, %v lengths(%len : tensor<1xi32>)
      : tensor<1x1x1x64xf32>, tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32> -> tensor<1x1x1x64xf32>
  return %o : tensor<1x1x1x64xf32>
}
// CHECK-LABEL: func.func @decode(
//       CHECK:   %[[NK:.*]] = tensor.dim %arg1, %c2
//       CHECK:   %[[SPLIT:.*]] = arith.cmpi uge, %[[NK]], %c1024
//       CHECK:   %[[ROOM:.*]] = arith.select %[[SPLIT]], %c8, %c0
//       CHECK:   %[[ACCS:.*]] = bufferization.alloc_tensor(%[[ROOM]]) : tensor<1x1x?x1x64xf32>
//       CHECK:   scf.if %[[SPLIT]]
//       CHECK:     %[[MOST:.*]] = arith.divui %[[NK]], %c512
//       CHECK:     %[[SPLITS:.*]] = arith.minui %[[MOST]], %c8
//       CHECK:     %[[PER:.*]] = arith.ceildivui %[[NK]], %[[SPLITS]]
//       CHECK:     %[[TILES:.*]] = arith.ceildivui %[[PER]], %c64
//       CHECK:     %[[CHUNK:.*]] = arith.muli %[[TILES]], %c64
//       CHECK:     %[[PARTS:.*]]:3 = scf.forall (%[[S:.*]]) in (%[[SPLITS]]) shared_outs(%{{.*}} = %[[ACCS]],
//       CHECK:       %[[C0:.*]] = arith.muli %[[S]], %[[CHUNK]]
//       CHECK:       %[[C1:.*]] = arith.addi %[[C0]], %[[CHUNK]]
//       CHECK:       %[[END:.*]] = arith.minui %[[NK]], %[[C1]]
//       CHECK:       %[[HI:.*]] = arith.minui %[[END]], %{{.*}}
//       CHECK:       %[[LO:.*]] = arith.minui %[[C0]], %[[HI]]
//       CHECK:       scf.for %{{.*}} = %[[LO]] to %[[HI]] step %c64
//   CHECK-NOT:         offsets
//       CHECK:         seq.online_attention
//       CHECK:       scf.forall.in_parallel
//       CHECK:         tensor.parallel_insert_slice %{{.*}} into %{{.*}}[0, 0, %[[S]], 0, 0] [1, 1, 1, 1, 64]
//       CHECK:         tensor.parallel_insert_slice %{{.*}} into %{{.*}}[0, 0, %[[S]], 0] [1, 1, 1, 1]
//       CHECK:         tensor.parallel_insert_slice %{{.*}} into %{{.*}}[0, 0, %[[S]], 0] [1, 1, 1, 1]
//       CHECK:     tensor.extract_slice %[[PARTS]]#0[0, 0, 0, 0, 0] [1, 1, %[[SPLITS]], 1, 64]
//       CHECK:     seq.attention_finalize %{{.*}} : tensor<?x?x64xf32>, tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x64xf32>
//       CHECK:   } else {
//       CHECK:     scf.for %{{.*}} = %c0 to %{{.*}} step %c64
//       CHECK:     seq.attention_finalize %{{.*}} : tensor<?x64xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<?x64xf32>
// OPTS-LABEL: func.func @decode(
//   OPTS-NOT:   scf.if
//       OPTS:   scf.for %{{.*}} step %c128
// REMARK: tile-attention.mlir:[[@LINE-36]]:8: remark: {{.*}}; no positional mask: every tile full; with fewer than 8 units at run time, the keys split into chunks of at least 512 keys across the cores, their partial states merged (flash-decoding); the key range ends at the lengths

// -----

// A score bias: each tile reads its slice, [c] where the bias is the same
// for every query of the tile (BERT's key padding [b, 1, 1, n_k]: one row
// per batch row, also in the grouped decode form, whose stacked heads share
// it), [r, c] where it varies along the queries (a bias of rank 3,
// [heads, n_q, n_k], aligned with the scores' last dimensions). A dynamic
// dimension of the bias, or one the scores have dynamic, is checked against
// the scores' at run time.
func.func @bias(%q: tensor<?x2x?x4xf32>, %k: tensor<?x1x?x4xf32>, %pad: tensor<?x1x1x?xf32>, %full: tensor<2x?x?xf32>)
    -> (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) {
  %a = seq.attention %q, %k, %k bias(%pad : tensor<?x1x1x?xf32>)
      : tensor<?x2x?x4xf32>, tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32> -> tensor<?x2x?x4xf32>
  %b = seq.attention %q, %k, %k bias(%full : tensor<2x?x?xf32>)
      : tensor<?x2x?x4xf32>, tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32> -> tensor<?x2x?x4xf32>
  return %a, %b : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>
}
// CHECK-LABEL: func.func @bias(
//  CHECK-SAME:     %[[PAD:[^:]*]]: tensor<?x1x1x?xf32>, %[[FULL:[^:]*]]: tensor<2x?x?xf32>)
//       CHECK:   cf.assert %{{.*}}, "seq.attention: dimension 0 of the score bias differs from the scores'"
//       CHECK:   cf.assert %{{.*}}, "seq.attention: dimension 3 of the score bias differs from the scores'"
//       CHECK:   scf.if
// The grouped decode form: the 2 heads of the one query share the row.
//       CHECK:     scf.forall (%[[B:[^,)]*]]{{.*}}) in
//       CHECK:       scf.for %[[K0:[^ ]*]] =
//       CHECK:         %[[T:.*]] = tensor.extract_slice %[[PAD]][%[[B]], 0, 0, %[[K0]]] [1, 1, 1, %{{.*}}] [1, 1, 1, 1] : tensor<?x1x1x?xf32> to tensor<?xf32>
//       CHECK:         seq.online_attention {{.*}} bias(%[[T]] : tensor<?xf32>) : tensor<2x4xf32>,
//       CHECK:   } else {
//       CHECK:     scf.forall (%[[B:[^,)]*]], %{{.*}}, %{{.*}}) in
//       CHECK:       scf.for %[[K0:[^ ]*]] =
//       CHECK:         %[[T:.*]] = tensor.extract_slice %[[PAD]][%[[B]], 0, 0, %[[K0]]] [1, 1, 1, %{{.*}}] [1, 1, 1, 1] : tensor<?x1x1x?xf32> to tensor<?xf32>
//       CHECK:         seq.online_attention {{.*}} bias(%[[T]] : tensor<?xf32>) : tensor<?x4xf32>,
//       CHECK:   cf.assert %{{.*}}, "seq.attention: dimension 1 of the score bias differs from the scores'"
//       CHECK:   cf.assert %{{.*}}, "seq.attention: dimension 2 of the score bias differs from the scores'"
//       CHECK:   scf.forall
//       CHECK:     scf.for %[[K0:[^ ]*]] =
//       CHECK:       %[[T:.*]] = tensor.extract_slice %[[FULL]][%{{[^,]*}}, %{{[^,]*}}, %[[K0]]] [1, %{{[^,]*}}, %{{[^,]*}}] [1, 1, 1] : tensor<2x?x?xf32> to tensor<?x?xf32>
//       CHECK:       seq.online_attention {{.*}} bias(%[[T]] : tensor<?x?xf32>)
// REMARK: tile-attention.mlir:[[@LINE-27]]:8: remark: attention tiled: {{.*}}; the score bias added in the tile (one row of it per query tile); with one query per head
// REMARK: tile-attention.mlir:[[@LINE-26]]:8: remark: attention tiled: {{.*}}; the score bias added in the tile{{$}}

// -----

// Must not fire: a score bias that is the same for every key, f64, dynamic
// head counts. The op stays for the reference lowering, which materializes
// the scores, and says why.
func.func @reference(%q: tensor<1x2x8x4xf32>, %bias: tensor<1x2x8x1xf32>, %d: tensor<1x2x8x4xf64>, %g: tensor<1x?x8x4xf32>)
    -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf64>, tensor<1x?x8x4xf32>) {
  %a = seq.attention %q, %q, %q bias(%bias : tensor<1x2x8x1xf32>)
      : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %e = seq.attention %d, %d, %d
      : tensor<1x2x8x4xf64>, tensor<1x2x8x4xf64>, tensor<1x2x8x4xf64> -> tensor<1x2x8x4xf64>
  %h = seq.attention %g, %g, %g
      : tensor<1x?x8x4xf32>, tensor<1x?x8x4xf32>, tensor<1x?x8x4xf32> -> tensor<1x?x8x4xf32>
  return %a, %e, %h : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf64>, tensor<1x?x8x4xf32>
}
// CHECK-LABEL: func.func @reference(
//   CHECK-NOT:   scf.forall
//       CHECK:   seq.attention %arg0, %arg0, %arg0 bias(%arg1
//       CHECK:   seq.attention %arg2, %arg2, %arg2 :
//       CHECK:   seq.attention %arg3, %arg3, %arg3 :
//   CHECK-NOT:   scf.forall
// REMARK: tile-attention.mlir:[[@LINE-14]]:8: remark: attention takes the reference lowering, which materializes the scores: its score bias is the same for every key (broadcast along the keys)
// REMARK: tile-attention.mlir:[[@LINE-13]]:8: remark: attention takes the reference lowering, which materializes the scores: it is not f32, f16 or bf16 throughout
// REMARK: tile-attention.mlir:[[@LINE-12]]:8: remark: attention takes the reference lowering, which materializes the scores: its head counts or head sizes are not static

// -----

// bf16 (and f16) attention is tiled in f32: Q, K and V are widened once,
// the tiles are the f32 ones, and the output is narrowed back.
func.func @bf16(%q: tensor<1x2x?x4xbf16>) -> tensor<1x2x?x4xbf16> {
  %a = seq.attention %q, %q, %q
      : tensor<1x2x?x4xbf16>, tensor<1x2x?x4xbf16>, tensor<1x2x?x4xbf16> -> tensor<1x2x?x4xbf16>
  return %a : tensor<1x2x?x4xbf16>
}
// CHECK-LABEL: func.func @bf16(
//       CHECK:   %[[WIDE:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<1x2x?x4xbf16>) outs(%{{.*}} : tensor<1x2x?x4xf32>)
//       CHECK:     arith.extf %{{.*}} : bf16 to f32
//       CHECK:   seq.mul %[[WIDE]]
//       CHECK:   scf.forall
//       CHECK:     seq.online_attention {{.*}} tensor<?x4xf32>
//       CHECK:   linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x?x4xbf16>)
//       CHECK:     arith.truncf %{{.*}} : f32 to bf16
