// RUN: seq-opt %s --split-input-file --seq-tile-attention="pack-keys=true" --canonicalize --cse | FileCheck %s

// pack-keys (the CPU's choice): with several query tiles, the f32 keys are
// packed once per call into [b, kv heads, key tiles, d, 64] (one forall over
// (batch, kv head, key tile), each transposing its [c, d] keys), and every
// tile reads its [d, c] slice as `key_transposed`; with a symbolic n_q, a
// test n_q > 64 keeps the in-place keys for a single query tile (a decode
// step would otherwise transpose its whole cache; here the grouped decode
// form's test of n_q = 1 comes first). The packed tensor is made before
// the tests, outside their branches.
func.func @causal(%q: tensor<?x8x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>) -> tensor<?x8x?x64xf32> {
  %o = seq.attention %q, %k, %v {mask = #seq.mask<causal = true>}
      : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32> -> tensor<?x8x?x64xf32>
  return %o : tensor<?x8x?x64xf32>
}
// CHECK-LABEL: func.func @causal(
//       CHECK:   %[[INTO:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x2x?x64x64xf32>
//       CHECK:   %[[SEVERAL:.*]] = arith.cmpi ugt, %{{.*}}, %c64
//       CHECK:   scf.if %[[SEVERAL]]
//       CHECK:     %[[PACKED:.*]] = scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}}, 2, %{{.*}}) shared_outs(%{{.*}} = %[[INTO]])
//       CHECK:       linalg.transpose ins(%{{.*}} : tensor<?x64xf32>) outs(%{{.*}} : tensor<64x?xf32>) permutation = [1, 0]
//       CHECK:     scf.forall
//       CHECK:       tensor.extract_slice %[[PACKED]]
//       CHECK:       seq.online_attention {{.*}} {key_transposed} : tensor<?x64xf32>, tensor<64x?xf32>
//       CHECK:       seq.online_attention {{.*}} {key_transposed, mask = #seq.mask<causal = true>}
//       CHECK:   } else {
//   CHECK-NOT:     key_transposed
//       CHECK:     seq.online_attention %{{.*}} : tensor<?x64xf32>, tensor<?x64xf32>

// -----

// A static n_q of one query tile keeps the keys in place: no copy to share.
func.func @one_tile(%q: tensor<1x8x64x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>) -> tensor<1x8x64x64xf32> {
  %o = seq.attention %q, %k, %v {mask = #seq.mask<causal = true>}
      : tensor<1x8x64x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x64x64xf32>
  return %o : tensor<1x8x64x64xf32>
}
// CHECK-LABEL: func.func @one_tile(
//   CHECK-NOT:   key_transposed
//   CHECK-NOT:   linalg.transpose
//       CHECK:   return

// -----

// A sliding window with packed keys: the key loop starts on the 64-key grid
// (its first tile masked), static n_q of 256: no test.
func.func @window(%q: tensor<1x8x256x64xf32>, %k: tensor<1x8x256x64xf32>, %v: tensor<1x8x256x64xf32>) -> tensor<1x8x256x64xf32> {
  %o = seq.attention %q, %k, %v {mask = #seq.mask<window = 100>}
      : tensor<1x8x256x64xf32>, tensor<1x8x256x64xf32>, tensor<1x8x256x64xf32> -> tensor<1x8x256x64xf32>
  return %o : tensor<1x8x256x64xf32>
}
// CHECK-LABEL: func.func @window(
//   CHECK-NOT:   scf.if
//       CHECK:   linalg.transpose
//       CHECK:   scf.forall
//       CHECK:     arith.divui %{{.*}}, %c64
//       CHECK:     arith.muli %{{.*}}, %c64
//       CHECK:     seq.online_attention {{.*}}key_transposed
