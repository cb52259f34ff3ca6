// RUN: seq-opt %s --split-input-file --seq-tensor-parallel="ranks=2 remarks=true" --verify-diagnostics | FileCheck %s

// A decode step of a Pre-LN block with grouped-query attention over a KV
// cache and a SwiGLU MLP, then an LM head: attention split by heads
// (4 query heads, 2 key/value heads -> 2 and 1 per rank), the MLP
// column-then-row, one all-reduce after each pair, the bias of the row
// projection added once after it; the head split by vocabulary, its logits
// all-gathered; norms and the embedding replicated.

// CHECK: module attributes {seq.model = "m", seq.tensor_parallel = 2 : i64}
// CHECK: shard.grid @tensor_parallel(shape = 2)
// CHECK-LABEL: func.func @forward
//  CHECK-SAME: %[[WQ:[^:]*]]: tensor<32x64xf32> {seq.param = "wq", seq.shard_axis = 0 : i64}
//  CHECK-SAME: %[[WK:[^:]*]]: tensor<16x64xf32> {seq.param = "wk", seq.shard_axis = 0 : i64}
//  CHECK-SAME: %[[WV:[^:]*]]: tensor<16x64xf32> {seq.param = "wv", seq.shard_axis = 0 : i64}
//  CHECK-SAME: %[[WO:[^:]*]]: tensor<64x32xf32> {seq.param = "wo", seq.shard_axis = 1 : i64}
//  CHECK-SAME: %[[BO:[^:]*]]: tensor<64xf32> {seq.param = "bo"}
//  CHECK-SAME: %[[WG:[^:]*]]: tensor<86x64xf32> {seq.param = "gate", seq.shard_axis = 0 : i64}
//  CHECK-SAME: %[[WU:[^:]*]]: tensor<86x64xf32> {seq.param = "up", seq.shard_axis = 0 : i64}
//  CHECK-SAME: %[[WD:[^:]*]]: tensor<64x86xf32> {seq.param = "down", seq.shard_axis = 1 : i64}
//  CHECK-SAME: %[[HEAD:[^:]*]]: tensor<128x64xf32> {seq.param = "head", seq.shard_axis = 0 : i64}
//  CHECK-SAME: %[[KC:[^:]*]]: tensor<?x1x128x16xf32> {seq.dims = ["b", 1, 128, 16], seq.shard_axis = 1 : i64, seq.state = "k_cache"
//  CHECK-SAME: %[[VC:[^:]*]]: tensor<?x1x128x16xf32> {seq.dims = ["b", 1, 128, 16], seq.shard_axis = 1 : i64, seq.state = "v_cache"
//       CHECK: seq.split_heads %{{.*}} {heads = 2 : i64} : tensor<?x1x32xf32> -> tensor<?x2x1x16xf32>
//       CHECK: seq.split_heads %{{.*}} {heads = 1 : i64} : tensor<?x1x16xf32> -> tensor<?x1x1x16xf32>
//       CHECK: seq.cache_write %[[KC]]
//       CHECK: %[[O:.*]] = seq.attention {{.*}} -> tensor<?x2x1x16xf32>
//       CHECK: %[[M:.*]] = seq.merge_heads %[[O]] : tensor<?x2x1x16xf32> -> tensor<?x1x32xf32>
//       CHECK: %[[P:.*]] = seq.linear %[[M]], %[[WO]] : tensor<?x1x32xf32>, tensor<64x32xf32> -> tensor<?x1x64xf32>
//       CHECK: %[[S:.*]] = shard.all_reduce %[[P]] on @tensor_parallel grid_axes = [0] : tensor<?x1x64xf32> -> tensor<?x1x64xf32>
//       CHECK: seq.add %[[S]], %[[BO]] : tensor<?x1x64xf32>, tensor<64xf32> -> tensor<?x1x64xf32>
//       CHECK: seq.mul {{.*}} : tensor<?x1x86xf32>, tensor<?x1x86xf32> -> tensor<?x1x86xf32>
//       CHECK: %[[D:.*]] = seq.linear %{{.*}}, %[[WD]] : tensor<?x1x86xf32>, tensor<64x86xf32> -> tensor<?x1x64xf32>
//       CHECK: shard.all_reduce %[[D]]
//       CHECK: %[[L:.*]] = seq.linear %{{.*}}, %[[HEAD]] : tensor<?x1x64xf32>, tensor<128x64xf32> -> tensor<?x1x128xf32>
//       CHECK: %[[G:.*]] = shard.all_gather %[[L]] on @tensor_parallel grid_axes = [0] gather_axis = 2 : tensor<?x1x128xf32> -> tensor<?x1x256xf32>
//       CHECK: return %[[G]]
module attributes {seq.model = "m"} {
// expected-remark @below {{tensor-parallel over 2 ranks: 2 all-reduces and 1 all-gather per call; each rank holds 123392 bytes of split parameters and 66304 bytes replicated ('emb', 'ln1', 'bo', 'ln2')}}
func.func @forward(%tokens: tensor<?x1xi32> {seq.dims = ["b", 1], seq.input = "tokens", seq.range = [0, 255]},
                   %pos: tensor<?xi32> {seq.dims = ["b"], seq.input = "pos", seq.range = [0, 127]},
                   %emb: tensor<256x64xf32> {seq.param = "emb"},
                   %ln1: tensor<64xf32> {seq.param = "ln1"},
                   %wq: tensor<64x64xf32> {seq.param = "wq"},
                   %wk: tensor<32x64xf32> {seq.param = "wk"},
                   %wv: tensor<32x64xf32> {seq.param = "wv"},
                   %wo: tensor<64x64xf32> {seq.param = "wo"},
                   %bo: tensor<64xf32> {seq.param = "bo"},
                   %ln2: tensor<64xf32> {seq.param = "ln2"},
                   %gate: tensor<172x64xf32> {seq.param = "gate"},
                   %up: tensor<172x64xf32> {seq.param = "up"},
                   %down: tensor<64x172xf32> {seq.param = "down"},
                   %head: tensor<256x64xf32> {seq.param = "head"},
                   %kc: tensor<?x2x128x16xf32> {seq.dims = ["b", 2, 128, 16], seq.state = "k_cache", seq.state_write = {axis = 2 : i64, count = 1 : i64, input = "pos"}},
                   %vc: tensor<?x2x128x16xf32> {seq.dims = ["b", 2, 128, 16], seq.state = "v_cache", seq.state_write = {axis = 2 : i64, count = 1 : i64, input = "pos"}})
    -> (tensor<?x1x256xf32> {seq.dims = ["b", 1, 256], seq.output = "logits"}) {
  %x = seq.embedding %emb, %tokens : tensor<256x64xf32>, tensor<?x1xi32> -> tensor<?x1x64xf32>
  %h = seq.rms_norm %x, %ln1 {eps = 1.0e-05 : f64} : (tensor<?x1x64xf32>, tensor<64xf32>) -> tensor<?x1x64xf32>
  %q0 = seq.linear %h, %wq : tensor<?x1x64xf32>, tensor<64x64xf32> -> tensor<?x1x64xf32>
  %q1 = seq.split_heads %q0 {heads = 4 : i64} : tensor<?x1x64xf32> -> tensor<?x4x1x16xf32>
  %q = seq.rope %q1 offsets(%pos : tensor<?xi32>) : tensor<?x4x1x16xf32>
  %k0 = seq.linear %h, %wk : tensor<?x1x64xf32>, tensor<32x64xf32> -> tensor<?x1x32xf32>
  %k1 = seq.split_heads %k0 {heads = 2 : i64} : tensor<?x1x32xf32> -> tensor<?x2x1x16xf32>
  %k = seq.rope %k1 offsets(%pos : tensor<?xi32>) : tensor<?x2x1x16xf32>
  %v0 = seq.linear %h, %wv : tensor<?x1x64xf32>, tensor<32x64xf32> -> tensor<?x1x32xf32>
  %v = seq.split_heads %v0 {heads = 2 : i64} : tensor<?x1x32xf32> -> tensor<?x2x1x16xf32>
  %kc1 = seq.cache_write %kc, %k, %pos : tensor<?x2x128x16xf32>, tensor<?x2x1x16xf32>, tensor<?xi32>
  %vc1 = seq.cache_write %vc, %v, %pos : tensor<?x2x128x16xf32>, tensor<?x2x1x16xf32>, tensor<?xi32>
  %o = seq.attention %q, %kc1, %vc1 query_offsets(%pos : tensor<?xi32>) {mask = #seq.mask<causal = true>} : tensor<?x4x1x16xf32>, tensor<?x2x128x16xf32>, tensor<?x2x128x16xf32> -> tensor<?x4x1x16xf32>
  %m = seq.merge_heads %o : tensor<?x4x1x16xf32> -> tensor<?x1x64xf32>
  // expected-remark @below {{tensor-parallel over 2 ranks: row-parallel projection 'wo' after 'wq' (axis 0), 'k_cache' (axis 1), 'wk' (axis 0), 'v_cache' (axis 1), 'wv' (axis 0); all-reduce (sum) of 'tensor<?x1x64xf32>', 256 bytes per token}}
  %a = seq.linear %m, %wo, %bo : tensor<?x1x64xf32>, tensor<64x64xf32>, tensor<64xf32> -> tensor<?x1x64xf32>
  %x1 = seq.add %x, %a : tensor<?x1x64xf32>, tensor<?x1x64xf32> -> tensor<?x1x64xf32>
  %h2 = seq.rms_norm %x1, %ln2 {eps = 1.0e-05 : f64} : (tensor<?x1x64xf32>, tensor<64xf32>) -> tensor<?x1x64xf32>
  %g0 = seq.linear %h2, %gate : tensor<?x1x64xf32>, tensor<172x64xf32> -> tensor<?x1x172xf32>
  %g = seq.silu %g0 : tensor<?x1x172xf32>
  %u = seq.linear %h2, %up : tensor<?x1x64xf32>, tensor<172x64xf32> -> tensor<?x1x172xf32>
  %gu = seq.mul %g, %u : tensor<?x1x172xf32>, tensor<?x1x172xf32> -> tensor<?x1x172xf32>
  // expected-remark @below {{tensor-parallel over 2 ranks: row-parallel projection 'down' after 'gate' (axis 0), 'up' (axis 0); all-reduce (sum) of 'tensor<?x1x64xf32>', 256 bytes per token}}
  %d = seq.linear %gu, %down : tensor<?x1x172xf32>, tensor<64x172xf32> -> tensor<?x1x64xf32>
  %x2 = seq.add %x1, %d : tensor<?x1x64xf32>, tensor<?x1x64xf32> -> tensor<?x1x64xf32>
  // expected-remark @below {{tensor-parallel over 2 ranks: vocabulary-parallel projection 'head' (axis 0); all-gather of 'tensor<?x1x256xf32>', 1024 bytes per token}}
  %logits = seq.linear %x2, %head : tensor<?x1x64xf32>, tensor<256x64xf32> -> tensor<?x1x256xf32>
  return %logits : tensor<?x1x256xf32>
}
}

// -----

// A head tied to the embedding stays replicated: the table is read whole
// by the lookup.
module attributes {seq.model = "m"} {
// expected-remark @below {{tensor-parallel over 2 ranks: 0 all-reduces and 0 all-gathers per call; each rank holds 0 bytes of split parameters and 2048 bytes replicated ('emb')}}
func.func @forward(%tokens: tensor<?x?xi32> {seq.dims = ["b", "n"], seq.input = "tokens", seq.range = [0, 63]},
                   %emb: tensor<64x8xf32> {seq.param = "emb"})
    -> (tensor<?x?x64xf32> {seq.dims = ["b", "n", 64], seq.output = "logits"}) {
  %x = seq.embedding %emb, %tokens : tensor<64x8xf32>, tensor<?x?xi32> -> tensor<?x?x8xf32>
  // expected-remark @below {{replicated on every rank: projection 'emb' (it is not row-parallel: its input reaches 'seq.embedding', which does not split; not vocabulary-parallel: its weight is also read elsewhere (a tied embedding))}}
  %y = seq.linear %x, %emb : tensor<?x?x8xf32>, tensor<64x8xf32> -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}
}

// -----

// The product of a projection and a projection of it: the second reads the
// first's result whole, so the first cannot be split by rows for the
// product; the pair stays replicated.
module attributes {seq.model = "m"} {
// expected-remark @below {{tensor-parallel over 2 ranks: 0 all-reduces and 0 all-gathers per call}}
func.func @forward(%x: tensor<?x?x8xf32> {seq.dims = ["b", "n"], seq.input = "x"},
                   %wa: tensor<8x8xf32> {seq.param = "wa"},
                   %wb: tensor<8x8xf32> {seq.param = "wb"},
                   %wc: tensor<8x8xf32> {seq.param = "wc"})
    -> (tensor<?x?x8xf32> {seq.dims = ["b", "n", 8], seq.output = "y"}) {
  // expected-remark @below {{replicated on every rank: projection 'wa'}}
  %h = seq.linear %x, %wa : tensor<?x?x8xf32>, tensor<8x8xf32> -> tensor<?x?x8xf32>
  // expected-remark @below {{replicated on every rank: projection 'wb'}}
  %g = seq.linear %h, %wb : tensor<?x?x8xf32>, tensor<8x8xf32> -> tensor<?x?x8xf32>
  %z = seq.mul %h, %g : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  // expected-remark @below {{replicated on every rank: projection 'wc' (it is not row-parallel: a projection it splits by rows reads a value it splits; not vocabulary-parallel: its result is not only a model output)}}
  %y = seq.linear %z, %wc : tensor<?x?x8xf32>, tensor<8x8xf32> -> tensor<?x?x8xf32>
  %r = seq.add %y, %x : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  return %r : tensor<?x?x8xf32>
}
}
