// RUN: seq-opt %s --split-input-file --seq-tile-attention="query-block=32 key-block=128" \
// RUN:   -debug-only=seq-tile-attention -o /dev/null 2>&1 | FileCheck %s

// The trace of seq-tile-attention says, per attention op, the form it takes
// and why: the tile sizes, the mask's partial tiles and the key loops of a
// query tile, whether the keys may be split at run time, or why the op keeps
// the reference lowering.

// CHECK:      [seq-tile-attention] query-block 32, key-block 128, split-units 8, split-min-keys 512
// CHECK-NEXT: [seq-tile-attention] tiling at loc({{.*}}tile-attention-debug.mlir":[[@LINE+4]]:8): f32, 8 head(s) (4 per key/value head), d = 64, d_v = 64, 32x128 (query x key) tiles, mask #seq.mask<causal = true, window = 8, global_tokens = 3>: partial tiles at the causal diagonal, the window's edges, the tiles of global queries; no split-key form (positional mask); key lengths
// CHECK-NEXT: [seq-tile-attention]   no grouped decode form: global tokens
// CHECK-NEXT: [seq-tile-attention]   key loops of a query tile: [0, min(3, lo)) full (the global keys), [lo, a) partial, [a, f) full, [f, hi) partial; hi <= the tile's last query + 1 (causal); [lo, hi) within a window of 8; the tiles of the 3 global queries all partial; hi <= the key length
func.func @masked(%q: tensor<?x8x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>, %len: tensor<?xi32>) -> tensor<?x8x?x64xf32> {
  %o = seq.attention %q, %k, %v lengths(%len : tensor<?xi32>) {mask = #seq.mask<causal = true, window = 8, global_tokens = 3>}
      : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32> -> tensor<?x8x?x64xf32>
  return %o : tensor<?x8x?x64xf32>
}

// -----

// CHECK:      [seq-tile-attention] tiling at loc({{.*}}":[[@LINE+3]]:8): bf16, 1 head(s) (1 per key/value head), d = 64, d_v = 64, 32x128 (query x key) tiles, no positional mask: every tile full; split-key form (flash-decoding) when fewer than 8 units at run time, chunks of 512+ keys
// CHECK-NEXT: [seq-tile-attention]   key loop of a query tile: [lo, hi) full
func.func @decode(%q: tensor<1x1x1x64xbf16>, %k: tensor<1x1x?x64xbf16>, %v: tensor<1x1x?x64xbf16>) -> tensor<1x1x1x64xbf16> {
  %o = seq.attention %q, %k, %v
      : tensor<1x1x1x64xbf16>, tensor<1x1x?x64xbf16>, tensor<1x1x?x64xbf16> -> tensor<1x1x1x64xbf16>
  return %o : tensor<1x1x1x64xbf16>
}

// -----

// Grouped-query attention with one query per head: the grouped decode form,
// statically (n_q = 1) or behind a test of n_q at run time.

// CHECK:      [seq-tile-attention] tiling at loc({{.*}}":[[@LINE+4]]:8): f32, 8 head(s) (4 per key/value head)
// CHECK-NEXT: [seq-tile-attention]   grouped decode form: the 4 query heads of a key/value head in one tile, the keys each query sees split across the cores (chunks of 512+ keys, up to 8 units)
// CHECK-NOT:  [seq-tile-attention]   key loop
func.func @grouped_step(%q: tensor<?x8x1x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>, %pos: tensor<?xi32>) -> tensor<?x8x1x64xf32> {
  %o = seq.attention %q, %k, %v query_offsets(%pos : tensor<?xi32>) {mask = #seq.mask<causal = true>}
      : tensor<?x8x1x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32> -> tensor<?x8x1x64xf32>
  return %o : tensor<?x8x1x64xf32>
}

// CHECK:      [seq-tile-attention] tiling at loc({{.*}}":[[@LINE+4]]:8): f32, 8 head(s) (4 per key/value head)
// CHECK-NEXT: [seq-tile-attention]   grouped decode form when n_q = 1 at run time: the 4 query heads of a key/value head in one tile
// CHECK-NEXT: [seq-tile-attention]   key loops of a query tile:
func.func @grouped_any(%q: tensor<?x8x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>) -> tensor<?x8x?x64xf32> {
  %o = seq.attention %q, %k, %v {mask = #seq.mask<causal = true>}
      : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32> -> tensor<?x8x?x64xf32>
  return %o : tensor<?x8x?x64xf32>
}

// -----

// CHECK:      [seq-tile-attention] reference lowering at loc({{.*}}":[[@LINE+4]]:8): its score bias is the same for every key (broadcast along the keys)
// CHECK-NEXT: [seq-tile-attention] reference lowering at loc({{.*}}":[[@LINE+5]]:8): it is not f32, f16 or bf16 throughout
func.func @reference(%q: tensor<1x2x8x4xf32>, %bias: tensor<1x2x8x1xf32>, %d: tensor<1x2x8x4xf64>)
    -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf64>) {
  %a = seq.attention %q, %q, %q bias(%bias : tensor<1x2x8x1xf32>)
      : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %e = seq.attention %d, %d, %d
      : tensor<1x2x8x4xf64>, tensor<1x2x8x4xf64>, tensor<1x2x8x4xf64> -> tensor<1x2x8x4xf64>
  return %a, %e : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf64>
}
