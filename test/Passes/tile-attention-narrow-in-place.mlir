// RUN: seq-opt %s --split-input-file --seq-tile-attention="narrow-in-place" --canonicalize --cse | FileCheck %s
// RUN: seq-opt %s --split-input-file --seq-tile-attention="narrow-in-place bf16-dot remarks" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK
// RUN: seq-opt %s --split-input-file --seq-tile-attention="narrow-in-place remarks" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WIDEN

// With narrow-in-place (the CPU), bf16 Q, K and V are read in place by the
// tiles: no conversion before the loops, Q not scaled (no seq.mul), the
// tiles' seq.online_attention on bf16 slices with the scale (1/sqrt(48)) on
// their f32 scores; only the output is narrowed. Grouped-query heads, the
// decode form (one query) too.
func.func @bf16(%q: tensor<1x4x?x48xbf16>, %k: tensor<1x2x?x48xbf16>) -> tensor<1x4x?x48xbf16> {
  %a = seq.attention %q, %k, %k {mask = #seq.mask<causal = true>}
      : tensor<1x4x?x48xbf16>, tensor<1x2x?x48xbf16>, tensor<1x2x?x48xbf16> -> tensor<1x4x?x48xbf16>
  return %a : tensor<1x4x?x48xbf16>
}
// CHECK-LABEL: func.func @bf16(
//   CHECK-NOT:   arith.extf
//   CHECK-NOT:   seq.mul
//       CHECK:   scf.forall
//       CHECK:     seq.online_attention {{.*}} {scale = 0.144337565 : f32} : tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<?x48xf32>
//       CHECK:     seq.online_attention {{.*}} {mask = #seq.mask<causal = true>, scale = 0.144337565 : f32} : tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<?x48xbf16>, tensor<?x48xf32>
//       CHECK:   linalg.generic {{.*}} outs(%{{.*}} : tensor<1x4x?x48xbf16>)
//       CHECK:     arith.truncf %{{.*}} : f32 to bf16
// REMARK: remark: attention tiled: online softmax over 64x64 (query x key) tiles, the (batch, head, query tile) units in parallel, bf16 Q, K and V read in place (no f32 copy), Q K^T in bf16 pairs by vdpbf16ps, P kept in f32 times V widened in registers, f32 accumulators, the scale applied to the f32 scores; mask
// WIDEN: remark: attention tiled: {{.*}}, bf16 Q, K and V read in place (no f32 copy), Q K^T with Q and K widened to f32 in registers, P kept in f32 times V widened in registers,

// -----

// A decode step (one query per head) against a bf16 cache: the grouped form
// stacks the 2 query heads of a key/value head, bf16, in one tile.
func.func @decode(%q: tensor<?x4x1x64xbf16>, %k: tensor<?x2x?x64xbf16>) -> tensor<?x4x1x64xbf16> {
  %a = seq.attention %q, %k, %k
      : tensor<?x4x1x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x4x1x64xbf16>
  return %a : tensor<?x4x1x64xbf16>
}
// CHECK-LABEL: func.func @decode(
//   CHECK-NOT:   arith.extf
//       CHECK:   scf.forall
//       CHECK:     tensor.extract_slice %arg0{{.*}} to tensor<2x64xbf16>
//       CHECK:     seq.online_attention {{.*}} {scale = 1.250000e-01 : f32} : tensor<2x64xbf16>, tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<2x64xf32>
// REMARK: remark: attention tiled: {{.*}} bf16 Q, K and V read in place {{.*}}; with one query per head, the 2 query heads

// -----

// f16 with several query tiles (or a dynamic number of queries) keeps the
// f32 copies, whose keys are packed once per call (and without
// narrow-in-place, bf16 too: tile-attention.mlir).
func.func @f16(%q: tensor<1x2x?x4xf16>) -> tensor<1x2x?x4xf16> {
  %a = seq.attention %q, %q, %q
      : tensor<1x2x?x4xf16>, tensor<1x2x?x4xf16>, tensor<1x2x?x4xf16> -> tensor<1x2x?x4xf16>
  return %a : tensor<1x2x?x4xf16>
}
// CHECK-LABEL: func.func @f16(
//       CHECK:   arith.extf %{{.*}} : f16 to f32
//       CHECK:   seq.mul
//       CHECK:     seq.online_attention {{.*}} : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
// REMARK: remark: attention tiled: {{.*}} units in parallel, f16 Q, K and V converted to f32 copies once per call, the scale folded into Q (f16 is read in place for one query tile of a static size or queries at offsets into a cache only);

// -----

// f16 queries at offsets into a cache (a prefill): read in place, since a
// copy would convert every position of the cache while the key loops end
// at each query tile's last position.
func.func @f16_cache(%q: tensor<?x2x?x16xf16>, %k: tensor<?x2x256x16xf16>,
                     %pos: tensor<?xi32>) -> tensor<?x2x?x16xf16> {
  %a = seq.attention %q, %k, %k query_offsets(%pos : tensor<?xi32>) {mask = #seq.mask<causal = true>}
      : tensor<?x2x?x16xf16>, tensor<?x2x256x16xf16>, tensor<?x2x256x16xf16> -> tensor<?x2x?x16xf16>
  return %a : tensor<?x2x?x16xf16>
}
// CHECK-LABEL: func.func @f16_cache(
//   CHECK-NOT:   arith.extf %{{.*}} : f16 to f32
//       CHECK:     seq.online_attention {{.*}} : tensor<?x16xf16>, tensor<?x16xf16>, tensor<?x16xf16>, tensor<?x16xf32>
// REMARK: remark: attention tiled: {{.*}} units in parallel, f16 Q, K and V read in place (no f32 copy), Q K^T with Q and K widened to f32 in registers{{.*}}queries at their rows' offsets

// -----

// f16 with one tile of queries of a static size (a decode step against a
// cache): read in place, the scale on the f32 scores.
func.func @f16_decode(%q: tensor<1x2x1x4xf16>, %kv: tensor<1x2x?x4xf16>) -> tensor<1x2x1x4xf16> {
  %a = seq.attention %q, %kv, %kv
      : tensor<1x2x1x4xf16>, tensor<1x2x?x4xf16>, tensor<1x2x?x4xf16> -> tensor<1x2x1x4xf16>
  return %a : tensor<1x2x1x4xf16>
}
// CHECK-LABEL: func.func @f16_decode(
//   CHECK-NOT:   arith.extf
//       CHECK:     seq.online_attention {{.*}} {scale = 5.000000e-01 : f32} : tensor<{{.*}}xf16>, tensor<?x4xf16>, tensor<?x4xf16>
// REMARK: remark: attention tiled: {{.*}} f16 Q, K and V read in place (no f32 copy), Q K^T with Q and K widened to f32 in registers,
