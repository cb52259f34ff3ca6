// RUN: seq-opt %s -split-input-file | seq-opt -split-input-file | FileCheck %s
// RUN: seq-opt %s -split-input-file --mlir-print-op-generic | seq-opt -split-input-file | FileCheck %s

// Round trip of every seq op: custom form to custom form, and custom form
// through the generic form back to the custom form. Both runs share the
// checks below, which also pin down the custom assembly of each op.

// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<?x64xf32>, %[[B:[a-z0-9]+]]: tensor<64xf32>, %[[S:[a-z0-9]+]]: tensor<f32>, %[[I:[a-z0-9]+]]: tensor<4x1xi32>, %[[J:[a-z0-9]+]]: tensor<3xi32>)
func.func @binary(%a: tensor<?x64xf32>, %b: tensor<64xf32>, %s: tensor<f32>,
                  %i: tensor<4x1xi32>, %j: tensor<3xi32>) {
  // CHECK: seq.add %[[A]], %[[B]] : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  %0 = seq.add %a, %b : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  // CHECK: seq.sub %[[B]], %[[A]] : tensor<64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %1 = seq.sub %b, %a : tensor<64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  // CHECK: seq.mul %[[A]], %[[S]] : tensor<?x64xf32>, tensor<f32> -> tensor<?x64xf32>
  %2 = seq.mul %a, %s : tensor<?x64xf32>, tensor<f32> -> tensor<?x64xf32>
  // CHECK: seq.div %[[S]], %[[S]] : tensor<f32>, tensor<f32> -> tensor<f32>
  %3 = seq.div %s, %s : tensor<f32>, tensor<f32> -> tensor<f32>
  // CHECK: seq.max %[[I]], %[[J]] : tensor<4x1xi32>, tensor<3xi32> -> tensor<4x3xi32>
  %4 = seq.max %i, %j : tensor<4x1xi32>, tensor<3xi32> -> tensor<4x3xi32>
  // CHECK: seq.min %[[A]], %[[A]] : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  %5 = seq.min %a, %a : tensor<?x64xf32>, tensor<?x64xf32> -> tensor<?x64xf32>
  return
}

// -----

// CHECK-LABEL: func.func @compare_and_cast
// CHECK-SAME: (%[[M:[a-z0-9]+]]: tensor<?x?xi32>, %[[Z:[a-z0-9]+]]: tensor<i32>, %[[X:[a-z0-9]+]]: tensor<?x8xbf16>)
func.func @compare_and_cast(%m: tensor<?x?xi32>, %z: tensor<i32>,
                            %x: tensor<?x8xbf16>) {
  // CHECK: seq.compare eq, %[[M]], %[[Z]] : tensor<?x?xi32>, tensor<i32> -> tensor<?x?xi32>
  %0 = seq.compare eq, %m, %z : tensor<?x?xi32>, tensor<i32> -> tensor<?x?xi32>
  // CHECK: seq.compare ne, %[[X]], %[[X]] : tensor<?x8xbf16>, tensor<?x8xbf16> -> tensor<?x8xbf16>
  %1 = seq.compare ne, %x, %x : tensor<?x8xbf16>, tensor<?x8xbf16> -> tensor<?x8xbf16>
  // CHECK: seq.compare lt, %[[M]], %[[Z]]
  %2 = seq.compare lt, %m, %z : tensor<?x?xi32>, tensor<i32> -> tensor<?x?xi32>
  // CHECK: seq.compare le, %[[M]], %[[Z]]
  %3 = seq.compare le, %m, %z : tensor<?x?xi32>, tensor<i32> -> tensor<?x?xi32>
  // CHECK: seq.compare gt, %[[M]], %[[Z]]
  %4 = seq.compare gt, %m, %z : tensor<?x?xi32>, tensor<i32> -> tensor<?x?xi32>
  // CHECK: seq.compare ge, %[[M]], %[[Z]]
  %5 = seq.compare ge, %m, %z : tensor<?x?xi32>, tensor<i32> -> tensor<?x?xi32>
  // CHECK: seq.cast %[[M]] : tensor<?x?xi32> to tensor<?x?xf32>
  %6 = seq.cast %m : tensor<?x?xi32> to tensor<?x?xf32>
  // CHECK: seq.cast %[[X]] : tensor<?x8xbf16> to tensor<4x8xf32>
  %7 = seq.cast %x : tensor<?x8xbf16> to tensor<4x8xf32>
  return
}

// -----

// A dynamic size against a static size other than 1 must be that size (or
// 1) at run time, so the broadcast is static there.
// CHECK-LABEL: func.func @broadcast_dynamic
func.func @broadcast_dynamic(%a: tensor<?x?xf32>, %b: tensor<1x8xf32>) {
  // CHECK: seq.add %{{.+}}, %{{.+}} : tensor<?x?xf32>, tensor<1x8xf32> -> tensor<?x8xf32>
  %0 = seq.add %a, %b : tensor<?x?xf32>, tensor<1x8xf32> -> tensor<?x8xf32>
  return
}

// -----

// CHECK-LABEL: func.func @unary
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<?x64xf32>)
func.func @unary(%x: tensor<?x64xf32>) {
  // CHECK: seq.exp %[[X]] : tensor<?x64xf32>
  %0 = seq.exp %x : tensor<?x64xf32>
  // CHECK: seq.log %[[X]] : tensor<?x64xf32>
  %1 = seq.log %x : tensor<?x64xf32>
  // CHECK: seq.sqrt %[[X]] : tensor<?x64xf32>
  %2 = seq.sqrt %x : tensor<?x64xf32>
  // CHECK: seq.rsqrt %[[X]] : tensor<?x64xf32>
  %3 = seq.rsqrt %x : tensor<?x64xf32>
  // CHECK: seq.neg %[[X]] : tensor<?x64xf32>
  %4 = seq.neg %x : tensor<?x64xf32>
  // CHECK: seq.abs %[[X]] : tensor<?x64xf32>
  %5 = seq.abs %x : tensor<?x64xf32>
  // CHECK: seq.tanh %[[X]] : tensor<?x64xf32>
  %6 = seq.tanh %x : tensor<?x64xf32>
  // CHECK: seq.sigmoid %[[X]] : tensor<?x64xf32>
  %7 = seq.sigmoid %x : tensor<?x64xf32>
  // CHECK: seq.relu %[[X]] : tensor<?x64xf32>
  %8 = seq.relu %x : tensor<?x64xf32>
  // CHECK: seq.silu %[[X]] : tensor<?x64xf32>
  %9 = seq.silu %x : tensor<?x64xf32>
  return
}

// -----

// CHECK-LABEL: func.func @activations
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<?x256xbf16>)
func.func @activations(%x: tensor<?x256xbf16>) {
  // CHECK: seq.gelu %[[X]] : tensor<?x256xbf16>
  %0 = seq.gelu %x : tensor<?x256xbf16>
  // CHECK: seq.gelu %[[X]] approximate tanh : tensor<?x256xbf16>
  %1 = seq.gelu %x approximate tanh : tensor<?x256xbf16>
  // CHECK: seq.elu %[[X]] {alpha = 5.000000e-01 : f64} : tensor<?x256xbf16>
  %2 = seq.elu %x {alpha = 0.5 : f64} : tensor<?x256xbf16>
  // CHECK: seq.softplus %[[X]] {beta = 2.000000e+00 : f64, threshold = 1.000000e+01 : f64} : tensor<?x256xbf16>
  %3 = seq.softplus %x {beta = 2.0 : f64, threshold = 10.0 : f64} : tensor<?x256xbf16>
  // CHECK: seq.dropout %[[X]] {rate = 1.000000e-01 : f64} : tensor<?x256xbf16>
  %4 = seq.dropout %x {rate = 0.1 : f64} : tensor<?x256xbf16>
  return
}

// -----

// CHECK-LABEL: func.func @transpose
func.func @transpose(%x: tensor<?x?x64xf32>) -> tensor<?x64x?xf32> {
  // CHECK: seq.transpose %{{.+}} [0, 2, 1] : tensor<?x?x64xf32> -> tensor<?x64x?xf32>
  %0 = seq.transpose %x [0, 2, 1] : tensor<?x?x64xf32> -> tensor<?x64x?xf32>
  return %0 : tensor<?x64x?xf32>
}

// -----

// CHECK-LABEL: func.func @reshape
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<?x64xf32>, %[[Y:[a-z0-9]+]]: tensor<4x16xf32>, %[[N:[a-z0-9]+]]: index)
func.func @reshape(%x: tensor<?x64xf32>, %y: tensor<4x16xf32>, %n: index) {
  // CHECK: seq.reshape %[[X]][%[[N]]] : tensor<?x64xf32> -> tensor<?x4x16xf32>
  %0 = seq.reshape %x [%n] : tensor<?x64xf32> -> tensor<?x4x16xf32>
  // CHECK: seq.reshape %[[Y]] : tensor<4x16xf32> -> tensor<64xf32>
  %1 = seq.reshape %y : tensor<4x16xf32> -> tensor<64xf32>
  // CHECK: seq.reshape %[[Y]][%[[N]], %[[N]]] : tensor<4x16xf32> -> tensor<?x?x2xf32>
  %2 = seq.reshape %y [%n, %n] : tensor<4x16xf32> -> tensor<?x?x2xf32>
  return
}

// -----

// CHECK-LABEL: func.func @heads
func.func @heads(%x: tensor<?x?x512xf32>, %h: tensor<?x8x?x64xf32>) {
  // CHECK: seq.split_heads %{{.+}} {heads = 8 : i64} : tensor<?x?x512xf32> -> tensor<?x8x?x64xf32>
  %0 = seq.split_heads %x {heads = 8 : i64} : tensor<?x?x512xf32> -> tensor<?x8x?x64xf32>
  // CHECK: seq.merge_heads %{{.+}} : tensor<?x8x?x64xf32> -> tensor<?x?x512xf32>
  %1 = seq.merge_heads %h : tensor<?x8x?x64xf32> -> tensor<?x?x512xf32>
  return
}

// -----

// CHECK-LABEL: func.func @slice_concat
// CHECK-SAME: (%[[T:[a-z0-9]+]]: tensor<512x64xf32>, %[[A:[a-z0-9]+]]: tensor<?x32xf32>, %[[B:[a-z0-9]+]]: tensor<?x32xf32>, %[[C:[a-z0-9]+]]: tensor<8x?xf32>, %[[LO:[a-z0-9]+]]: index, %[[HI:[a-z0-9]+]]: index)
func.func @slice_concat(%t: tensor<512x64xf32>, %a: tensor<?x32xf32>,
                        %b: tensor<?x32xf32>, %c: tensor<8x?xf32>,
                        %lo: index, %hi: index) {
  // CHECK: seq.slice %[[T]][%[[LO]] : %[[HI]]] axis 0 : tensor<512x64xf32> -> tensor<?x64xf32>
  %0 = seq.slice %t[%lo : %hi] axis 0 : tensor<512x64xf32> -> tensor<?x64xf32>
  // CHECK: seq.slice %[[T]][%[[LO]] : %[[HI]]] axis 1 : tensor<512x64xf32> -> tensor<512x16xf32>
  %1 = seq.slice %t[%lo : %hi] axis 1 : tensor<512x64xf32> -> tensor<512x16xf32>
  // CHECK: seq.concat %[[A]], %[[B]] axis 1 : tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x64xf32>
  %2 = seq.concat %a, %b axis 1 : tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x64xf32>
  // The other dims join: a static size wins over a dynamic one.
  // CHECK: seq.concat %[[A]], %[[C]], %[[C]] axis 0 : tensor<?x32xf32>, tensor<8x?xf32>, tensor<8x?xf32> -> tensor<?x32xf32>
  %3 = seq.concat %a, %c, %c axis 0 : tensor<?x32xf32>, tensor<8x?xf32>, tensor<8x?xf32> -> tensor<?x32xf32>
  // CHECK: seq.concat %[[C]], %[[C]] axis 0 : tensor<8x?xf32>, tensor<8x?xf32> -> tensor<16x?xf32>
  %4 = seq.concat %c, %c axis 0 : tensor<8x?xf32>, tensor<8x?xf32> -> tensor<16x?xf32>
  return
}

// -----

// CHECK-LABEL: func.func @reduce
func.func @reduce(%x: tensor<?x64x8xf32>) {
  // CHECK: seq.reduce mean %{{.+}} axes [1] : tensor<?x64x8xf32> -> tensor<?x8xf32>
  %0 = seq.reduce mean %x axes [1] : tensor<?x64x8xf32> -> tensor<?x8xf32>
  // CHECK: seq.reduce max %{{.+}} axes [1, 2] keepdim : tensor<?x64x8xf32> -> tensor<?x1x1xf32>
  %1 = seq.reduce max %x axes [1, 2] keepdim : tensor<?x64x8xf32> -> tensor<?x1x1xf32>
  // CHECK: seq.reduce sum %{{.+}} axes [0, 1, 2] : tensor<?x64x8xf32> -> tensor<f32>
  %2 = seq.reduce sum %x axes [0, 1, 2] : tensor<?x64x8xf32> -> tensor<f32>
  // CHECK: seq.reduce min %{{.+}} axes [2] : tensor<?x64x8xf32> -> tensor<?x64xf32>
  %3 = seq.reduce min %x axes [2] : tensor<?x64x8xf32> -> tensor<?x64xf32>
  return
}

// -----

// CHECK-LABEL: func.func @arange
func.func @arange(%n: index) -> tensor<?xi32> {
  // CHECK: seq.arange %{{.+}} : tensor<?xi32>
  %0 = seq.arange %n : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

// CHECK-LABEL: func.func @matmul
func.func @matmul(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>,
                  %w: tensor<64x32xf32>, %b: tensor<4x1x64x16xf32>) {
  // CHECK: seq.matmul %{{.+}}, %{{.+}} transpose_rhs : tensor<?x?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x?xf32>
  %0 = seq.matmul %q, %k transpose_rhs : tensor<?x?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x?xf32>
  // A rank-2 operand is shared by every batch.
  // CHECK: seq.matmul %{{.+}}, %{{.+}} : tensor<?x?x64xf32>, tensor<64x32xf32> -> tensor<?x?x32xf32>
  %1 = seq.matmul %q, %w : tensor<?x?x64xf32>, tensor<64x32xf32> -> tensor<?x?x32xf32>
  // Batch dims broadcast: [?] with [4, 1] gives [4, ?].
  // CHECK: seq.matmul %{{.+}}, %{{.+}} : tensor<?x?x64xf32>, tensor<4x1x64x16xf32> -> tensor<4x?x?x16xf32>
  %2 = seq.matmul %q, %b : tensor<?x?x64xf32>, tensor<4x1x64x16xf32> -> tensor<4x?x?x16xf32>
  return
}

// -----

// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<?x?x64xf32>, %[[W:[a-z0-9]+]]: tensor<256x64xf32>, %[[B:[a-z0-9]+]]: tensor<256xf32>)
func.func @linear(%x: tensor<?x?x64xf32>, %w: tensor<256x64xf32>, %b: tensor<256xf32>) {
  // CHECK: seq.linear %[[X]], %[[W]], %[[B]] : tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
  %0 = seq.linear %x, %w, %b : tensor<?x?x64xf32>, tensor<256x64xf32>, tensor<256xf32> -> tensor<?x?x256xf32>
  // CHECK: seq.linear %[[X]], %[[W]] : tensor<?x?x64xf32>, tensor<256x64xf32> -> tensor<?x?x256xf32>
  %1 = seq.linear %x, %w : tensor<?x?x64xf32>, tensor<256x64xf32> -> tensor<?x?x256xf32>
  return
}

// -----

// CHECK-LABEL: func.func @normalization
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<?x64xf32>, %[[G:[a-z0-9]+]]: tensor<64xf32>, %[[B:[a-z0-9]+]]: tensor<64xf32>)
func.func @normalization(%x: tensor<?x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) {
  // CHECK: seq.layer_norm %[[X]], %[[G]], %[[B]] {eps = 9.9999999999999995E-7 : f64} : (tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %0 = seq.layer_norm %x, %g, %b {eps = 1.0e-06 : f64} : (tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  // CHECK: seq.layer_norm %[[X]], %[[G]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %1 = seq.layer_norm %x, %g : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  // CHECK: seq.layer_norm %[[X]] : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %2 = seq.layer_norm %x : (tensor<?x64xf32>) -> tensor<?x64xf32>
  // CHECK: seq.rms_norm %[[X]], %[[G]] : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %3 = seq.rms_norm %x, %g {eps = 1.0e-06 : f64} : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  // CHECK: seq.rms_norm %[[X]] {eps = 1.000000e-05 : f64} : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %4 = seq.rms_norm %x {eps = 1.0e-05 : f64} : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return
}

// -----

// CHECK-LABEL: func.func @softmax_embedding
func.func @softmax_embedding(%s: tensor<?x?xf32>, %table: tensor<1000x64xf32>,
                             %ids: tensor<?x?xi32>) {
  // CHECK: seq.softmax %{{.+}} axis -1 : tensor<?x?xf32>
  %0 = seq.softmax %s axis -1 : tensor<?x?xf32>
  // CHECK: seq.softmax %{{.+}} axis 0 : tensor<?x?xf32>
  %1 = seq.softmax %s axis 0 : tensor<?x?xf32>
  // CHECK: seq.embedding %{{.+}}, %{{.+}} : tensor<1000x64xf32>, tensor<?x?xi32> -> tensor<?x?x64xf32>
  %2 = seq.embedding %table, %ids : tensor<1000x64xf32>, tensor<?x?xi32> -> tensor<?x?x64xf32>
  return
}

// -----

// CHECK-LABEL: func.func @apply_mask
// CHECK-SAME: (%[[S:[a-z0-9]+]]: tensor<?x?x?xf32>, %[[L:[a-z0-9]+]]: tensor<?xi64>)
func.func @apply_mask(%s: tensor<?x?x?xf32>, %lengths: tensor<?xi64>) {
  // CHECK: seq.apply_mask %[[S]] {mask = #seq.mask<causal = true>} : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %0 = seq.apply_mask %s {mask = #seq.mask<causal = true>} : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  // CHECK: seq.apply_mask %[[S]] lengths(%[[L]] : tensor<?xi64>) {mask = #seq.mask<window = 256, global_tokens = 2>} : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %1 = seq.apply_mask %s lengths(%lengths : tensor<?xi64>) {mask = #seq.mask<window = 256, global_tokens = 2>} : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  // CHECK: seq.apply_mask %[[S]] {mask = #seq.mask<causal = true, window = 128>} : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %2 = seq.apply_mask %s {mask = #seq.mask<causal = true, window = 128>} : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  // Key padding alone: every position, padding aside, is visible.
  // CHECK: seq.apply_mask %[[S]] lengths(%[[L]] : tensor<?xi64>) {mask = #seq.mask<>} : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %3 = seq.apply_mask %s lengths(%lengths : tensor<?xi64>) {mask = #seq.mask<>} : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  return
}

// -----

// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<?x8x?x64xf32>, %[[K:[a-z0-9]+]]: tensor<?x2x?x64xf32>, %[[V:[a-z0-9]+]]: tensor<?x2x?x32xf32>, %[[L:[a-z0-9]+]]: tensor<?xi32>, %[[B:[a-z0-9]+]]: tensor<1x8x1x?xf32>, %[[AL:[a-z0-9]+]]: tensor<8xf32>)
func.func @attention(%q: tensor<?x8x?x64xf32>, %k: tensor<?x2x?x64xf32>,
                     %v: tensor<?x2x?x32xf32>, %lengths: tensor<?xi32>,
                     %bias: tensor<1x8x1x?xf32>, %alibi: tensor<8xf32>) {
  // Grouped-query attention with a causal mask.
  // CHECK: seq.attention %[[Q]], %[[K]], %[[V]] {mask = #seq.mask<causal = true>} : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x32xf32> -> tensor<?x8x?x32xf32>
  %0 = seq.attention %q, %k, %v {mask = #seq.mask<causal = true>}
      : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x32xf32> -> tensor<?x8x?x32xf32>
  // Every optional operand and attribute.
  // CHECK: seq.attention %[[Q]], %[[K]], %[[V]] lengths(%[[L]] : tensor<?xi32>) bias(%[[B]] : tensor<1x8x1x?xf32>) alibi(%[[AL]] : tensor<8xf32>) {mask = #seq.mask<window = 64>, scale = 1.250000e-01 : f64} : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x32xf32> -> tensor<?x8x?x32xf32>
  %1 = seq.attention %q, %k, %v lengths(%lengths : tensor<?xi32>)
      bias(%bias : tensor<1x8x1x?xf32>) alibi(%alibi : tensor<8xf32>)
      {mask = #seq.mask<window = 64>, scale = 0.125 : f64}
      : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x32xf32> -> tensor<?x8x?x32xf32>
  return
}

// -----

// Decoding: one query against a cache of keys, with no positional mask.
// CHECK-LABEL: func.func @attention_decode
func.func @attention_decode(%q: tensor<1x8x1x64xf32>, %k: tensor<1x8x?x64xf32>,
                            %v: tensor<1x8x?x64xf32>) -> tensor<1x8x1x64xf32> {
  // CHECK: seq.attention %{{.+}}, %{{.+}}, %{{.+}} : tensor<1x8x1x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x1x64xf32>
  %0 = seq.attention %q, %k, %v
      : tensor<1x8x1x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x1x64xf32>
  return %0 : tensor<1x8x1x64xf32>
}

// -----

// A chunk of 4 queries at positions offsets[b] + i against 9 keys: causal
// masks compare absolute positions, so n_q and n_k may differ.
// CHECK-LABEL: func.func @attention_query_offsets
func.func @attention_query_offsets(%q: tensor<2x8x4x64xf32>, %k: tensor<2x2x9x64xf32>,
                                   %offsets: tensor<2xi32>) -> tensor<2x8x4x64xf32> {
  // CHECK: seq.attention %{{.+}}, %{{.+}}, %{{.+}} query_offsets(%{{.+}} : tensor<2xi32>) {mask = #seq.mask<causal = true>} : tensor<2x8x4x64xf32>, tensor<2x2x9x64xf32>, tensor<2x2x9x64xf32> -> tensor<2x8x4x64xf32>
  %0 = seq.attention %q, %k, %k query_offsets(%offsets : tensor<2xi32>) {mask = #seq.mask<causal = true>}
      : tensor<2x8x4x64xf32>, tensor<2x2x9x64xf32>, tensor<2x2x9x64xf32> -> tensor<2x8x4x64xf32>
  return %0 : tensor<2x8x4x64xf32>
}

// -----

// The tile ops of seq-tile-attention: a full tile, a partial tile with its
// offsets and mask, ALiBi with the tile's positions, a score bias's tile
// ([c] or [r, c], f32 or narrow), and the finalization of one state and of
// partial states (flash-decoding).
// CHECK-LABEL: func.func @online_attention
func.func @online_attention(%q: tensor<?x64xf32>, %k: tensor<?x64xf32>, %v: tensor<?x32xf32>,
                            %acc: tensor<?x32xf32>, %m: tensor<?xf32>, %l: tensor<?xf32>,
                            %i0: index, %j0: index, %slope: f32,
                            %pq: tensor<?xf32>, %pk: tensor<?xf32>, %bias: tensor<?x?xbf16>) {
  // CHECK: seq.online_attention %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?xf32>, tensor<?xf32>
  %0:3 = seq.online_attention %q, %k, %v, %acc, %m, %l
      : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?xf32>, tensor<?xf32>
  // CHECK: seq.online_attention %{{.+}} offsets(%{{.+}}, %{{.+}}) {mask = #seq.mask<causal = true>}
  %1:3 = seq.online_attention %q, %k, %v, %acc, %m, %l offsets(%i0, %j0) {mask = #seq.mask<causal = true>}
      : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?xf32>, tensor<?xf32>
  // CHECK: seq.online_attention %{{.+}} alibi(%{{.+}}, %{{.+}}, %{{.+}} : tensor<?xf32>, tensor<?xf32>) :
  %2:3 = seq.online_attention %q, %k, %v, %acc, %m, %l alibi(%slope, %pq, %pk : tensor<?xf32>, tensor<?xf32>)
      : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?xf32>, tensor<?xf32>
  // CHECK: seq.online_attention %{{.+}} bias(%{{.+}} : tensor<?xf32>) :
  %3:3 = seq.online_attention %q, %k, %v, %acc, %m, %l bias(%pk : tensor<?xf32>)
      : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?xf32>, tensor<?xf32>
  // CHECK: seq.online_attention %{{.+}} offsets(%{{.+}}, %{{.+}}) bias(%{{.+}} : tensor<?x?xbf16>) {mask = #seq.mask<causal = true>}
  %4:3 = seq.online_attention %q, %k, %v, %acc, %m, %l offsets(%i0, %j0) bias(%bias : tensor<?x?xbf16>) {mask = #seq.mask<causal = true>}
      : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?xf32>, tensor<?xf32>
  return
}

// CHECK-LABEL: func.func @attention_finalize
func.func @attention_finalize(%acc: tensor<?x32xf32>, %m: tensor<?xf32>, %l: tensor<?xf32>,
                              %accs: tensor<4x?x32xf32>, %ms: tensor<4x?xf32>, %ls: tensor<4x?xf32>)
    -> (tensor<?x32xf32>, tensor<?x32xf32>) {
  // CHECK: seq.attention_finalize %{{.+}}, %{{.+}}, %{{.+}} : tensor<?x32xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<?x32xf32>
  %0 = seq.attention_finalize %acc, %m, %l : tensor<?x32xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<?x32xf32>
  // CHECK: seq.attention_finalize %{{.+}}, %{{.+}}, %{{.+}} : tensor<4x?x32xf32>, tensor<4x?xf32>, tensor<4x?xf32> -> tensor<?x32xf32>
  %1 = seq.attention_finalize %accs, %ms, %ls : tensor<4x?x32xf32>, tensor<4x?xf32>, tensor<4x?xf32> -> tensor<?x32xf32>
  return %0, %1 : tensor<?x32xf32>, tensor<?x32xf32>
}

// -----

// CHECK-LABEL: func.func @multi_head_attention
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<?x?x64xf32>, %[[W:[a-z0-9]+]]: tensor<64x64xf32>, %[[WKV:[a-z0-9]+]]: tensor<32x64xf32>, %[[B:[a-z0-9]+]]: tensor<64xf32>, %[[BKV:[a-z0-9]+]]: tensor<32xf32>, %[[L:[a-z0-9]+]]: tensor<?xi32>)
func.func @multi_head_attention(%x: tensor<?x?x64xf32>, %w: tensor<64x64xf32>,
                                %wkv: tensor<32x64xf32>, %b: tensor<64xf32>,
                                %bkv: tensor<32xf32>, %lengths: tensor<?xi32>) {
  // CHECK: seq.multi_head_attention %[[X]] weights(%[[W]], %[[W]], %[[W]], %[[W]] : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {heads = 4 : i64, kv_heads = 4 : i64, mask = #seq.mask<causal = true>, rope_theta = 1.000000e+04 : f64} : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  %0 = seq.multi_head_attention %x weights(%w, %w, %w, %w : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
      {heads = 4 : i64, kv_heads = 4 : i64, mask = #seq.mask<causal = true>, rope_theta = 1.0e4 : f64}
      : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  // Grouped-query attention (8 query heads of 8 features, 4 kv heads),
  // biases, padding lengths and ALiBi.
  // CHECK: seq.multi_head_attention %[[X]] weights(%[[W]], %[[WKV]], %[[WKV]], %[[W]] : tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>) biases(%[[B]], %[[BKV]], %[[BKV]], %[[B]] : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64xf32>) lengths(%[[L]] : tensor<?xi32>) {alibi, heads = 8 : i64, kv_heads = 4 : i64} : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  %1 = seq.multi_head_attention %x weights(%w, %wkv, %wkv, %w : tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>)
      biases(%b, %bkv, %bkv, %b : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, tensor<64xf32>)
      lengths(%lengths : tensor<?xi32>) {alibi, heads = 8 : i64, kv_heads = 4 : i64}
      : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

// Cross-attention: keys and values come from a 48-wide memory.
// CHECK-LABEL: func.func @cross_attention
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x?x64xf32>, %[[M:[a-z0-9]+]]: tensor<2x?x48xf32>, %[[WQ:[a-z0-9]+]]: tensor<64x64xf32>, %[[WKV:[a-z0-9]+]]: tensor<64x48xf32>)
func.func @cross_attention(%x: tensor<2x?x64xf32>, %mem: tensor<2x?x48xf32>,
                           %wq: tensor<64x64xf32>, %wkv: tensor<64x48xf32>) {
  // CHECK: seq.multi_head_attention %[[X]] kv(%[[M]] : tensor<2x?x48xf32>) weights(%[[WQ]], %[[WKV]], %[[WKV]], %[[WQ]] : tensor<64x64xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<64x64xf32>) {heads = 8 : i64, kv_heads = 8 : i64} : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
  %0 = seq.multi_head_attention %x kv(%mem : tensor<2x?x48xf32>) weights(%wq, %wkv, %wkv, %wq : tensor<64x64xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<64x64xf32>)
      {heads = 8 : i64, kv_heads = 8 : i64} : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
  return
}

// -----

// CHECK-LABEL: func.func @positions
func.func @positions(%n: index, %q: tensor<?x8x?x64xf32>, %offsets: tensor<?xi32>) {
  // CHECK: seq.sinusoidal_pe %{{.+}} : tensor<?x64xf32>
  %0 = seq.sinusoidal_pe %n : tensor<?x64xf32>
  // CHECK: seq.sinusoidal_pe %{{.+}} {base = 5.000000e+02 : f64} : tensor<16x8xf32>
  %1 = seq.sinusoidal_pe %n {base = 500.0 : f64} : tensor<16x8xf32>
  // CHECK: seq.rope %{{.+}} : tensor<?x8x?x64xf32>
  %2 = seq.rope %q {theta = 1.0e4 : f64} : tensor<?x8x?x64xf32>
  // Partial rotary embedding, as GPT-NeoX.
  // CHECK: seq.rope %{{.+}} {rotary_dims = 16 : i64, theta = 5.000000e+05 : f64} : tensor<?x8x?x64xf32>
  %3 = seq.rope %q {rotary_dims = 16 : i64, theta = 5.0e5 : f64} : tensor<?x8x?x64xf32>
  // Rows at absolute positions offsets[b] + i.
  // CHECK: seq.rope %{{.+}} offsets(%{{.+}} : tensor<?xi32>) : tensor<?x8x?x64xf32>
  %5 = seq.rope %q offsets(%offsets : tensor<?xi32>) : tensor<?x8x?x64xf32>
  // CHECK: seq.alibi : tensor<8xf32>
  %4 = seq.alibi : tensor<8xf32>
  return
}

// -----

// CHECK-LABEL: func.func @linear_attention
func.func @linear_attention(%q: tensor<?x4x?x32xf32>, %v: tensor<?x4x?x16xf32>) {
  // CHECK: seq.linear_attention %{{.+}}, %{{.+}}, %{{.+}} feature_map elu_plus_one causal : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %0 = seq.linear_attention %q, %q, %v feature_map elu_plus_one causal
      : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  // CHECK: seq.linear_attention %{{.+}}, %{{.+}}, %{{.+}} feature_map relu {eps = 1.000000e-03 : f64} : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %1 = seq.linear_attention %q, %q, %v feature_map relu {eps = 1.0e-3 : f64}
      : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  // CHECK: seq.linear_attention %{{.+}}, %{{.+}}, %{{.+}} feature_map identity : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %2 = seq.linear_attention %q, %q, %v feature_map identity
      : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  return
}

// CHECK-LABEL: func.func @linear_attention_state
func.func @linear_attention_state(%q: tensor<?x4x?x32xf32>, %v: tensor<?x4x?x16xf32>, %s0: tensor<?x4x32x16xf32>, %z0: tensor<?x4x32xf32>) {
  // CHECK: %{{.+}}, %[[S:.+]], %[[Z:.+]] = seq.linear_attention %{{.+}}, %{{.+}}, %{{.+}} state(%{{.+}}, %{{.+}} : tensor<?x4x32x16xf32>, tensor<?x4x32xf32>) feature_map elu_plus_one causal : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>, tensor<?x4x32x16xf32>, tensor<?x4x32xf32>
  %0, %s, %z = seq.linear_attention %q, %q, %v state(%s0, %z0 : tensor<?x4x32x16xf32>, tensor<?x4x32xf32>) feature_map elu_plus_one causal
      : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>, tensor<?x4x32x16xf32>, tensor<?x4x32xf32>
  // CHECK: seq.linear_attention %{{.+}}, %{{.+}}, %{{.+}} state(%[[S]], %[[Z]] : tensor<?x4x32x16xf32>, tensor<?x4x32xf32>) feature_map relu causal : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>{{$}}
  %1 = seq.linear_attention %q, %q, %v state(%s, %z : tensor<?x4x32x16xf32>, tensor<?x4x32xf32>) feature_map relu causal
      : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  // CHECK: seq.linear_attention %{{.+}}, %{{.+}}, %{{.+}} feature_map relu causal : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>, tensor<?x4x32x16xf32>, tensor<?x4x32xf32>
  %2:3 = seq.linear_attention %q, %q, %v feature_map relu causal
      : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>, tensor<?x4x32x16xf32>, tensor<?x4x32xf32>
  return
}

// -----

// CHECK-LABEL: func.func @ssm
// CHECK-SAME: (%[[U:[a-z0-9]+]]: tensor<?x?x8xf32>, %[[B:[a-z0-9]+]]: tensor<8x16xf32>, %[[C:[a-z0-9]+]]: tensor<8x16xf32>, %[[D:[a-z0-9]+]]: tensor<8xf32>)
func.func @ssm(%u: tensor<?x?x8xf32>, %b: tensor<8x16xf32>, %c: tensor<8x16xf32>,
               %d: tensor<8xf32>) {
  // CHECK: %[[A:.+]], %[[HB:.+]] = seq.hippo : tensor<16x16xf32>, tensor<16xf32>
  %A, %B = seq.hippo : tensor<16x16xf32>, tensor<16xf32>
  // CHECK: seq.ssm %[[U]], %[[A]], %[[B]], %[[C]], %[[D]] discretization zoh {step = 1.000000e-02 : f64} : (tensor<?x?x8xf32>, tensor<16x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %0 = seq.ssm %u, %A, %b, %c, %d discretization zoh {step = 1.0e-2 : f64}
      : (tensor<?x?x8xf32>, tensor<16x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  // CHECK: seq.ssm %[[U]], %[[A]], %[[B]], %[[C]], %[[D]] discretization bilinear {step = 1.000000e-01 : f64}
  %1 = seq.ssm %u, %A, %b, %c, %d discretization bilinear {step = 0.1 : f64}
      : (tensor<?x?x8xf32>, tensor<16x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

// CHECK-LABEL: func.func @selective_scan
// CHECK-SAME: (%[[U:[a-z0-9]+]]: tensor<?x?x64xf32>, %[[DT:[a-z0-9]+]]: tensor<?x?x64xf32>, %[[A:[a-z0-9]+]]: tensor<64x16xf32>, %[[B:[a-z0-9]+]]: tensor<?x?x16xf32>, %[[C:[a-z0-9]+]]: tensor<?x?x16xf32>, %[[D:[a-z0-9]+]]: tensor<64xf32>)
func.func @selective_scan(%u: tensor<?x?x64xf32>, %dt: tensor<?x?x64xf32>,
                          %a: tensor<64x16xf32>, %b: tensor<?x?x16xf32>,
                          %c: tensor<?x?x16xf32>, %d: tensor<64xf32>) {
  // CHECK: seq.selective_scan %[[U]], %[[DT]], %[[A]], %[[B]], %[[C]] D(%[[D]] : tensor<64xf32>) {delta_softplus} : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x64xf32>
  %0 = seq.selective_scan %u, %dt, %a, %b, %c D(%d : tensor<64xf32>) {delta_softplus}
      : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x64xf32>
  // CHECK: seq.selective_scan %[[U]], %[[DT]], %[[A]], %[[B]], %[[C]] z(%[[U]] : tensor<?x?x64xf32>) delta_bias(%[[D]] : tensor<64xf32>) : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x64xf32>
  %1 = seq.selective_scan %u, %dt, %a, %b, %c z(%u : tensor<?x?x64xf32>) delta_bias(%d : tensor<64xf32>)
      : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x64xf32>
  // CHECK: seq.selective_scan %[[U]], %[[DT]], %[[A]], %[[B]], %[[C]] : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x64xf32>
  %2 = seq.selective_scan %u, %dt, %a, %b, %c
      : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x64xf32>
  return
}

// An initial state and the final state as a second result.
// CHECK-LABEL: func.func @selective_scan_state
func.func @selective_scan_state(%u: tensor<?x?x64xf32>, %a: tensor<64x16xf32>,
                                %b: tensor<?x?x16xf32>, %h0: tensor<?x64x16xf32>)
    -> (tensor<?x?x64xf32>, tensor<?x64x16xf32>) {
  // CHECK: %{{.+}}, %{{.+}} = seq.selective_scan %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} initial_state(%{{.+}} : tensor<?x64x16xf32>) : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x64xf32>, tensor<?x64x16xf32>
  %y, %h = seq.selective_scan %u, %u, %a, %b, %b initial_state(%h0 : tensor<?x64x16xf32>)
      : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x64xf32>, tensor<?x64x16xf32>
  // CHECK: seq.selective_scan %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : {{.*}} -> tensor<?x?x64xf32>, tensor<?x64x16xf32>
  %y2, %h2 = seq.selective_scan %u, %u, %a, %b, %b
      : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x64xf32>, tensor<?x64x16xf32>
  return %y, %h : tensor<?x?x64xf32>, tensor<?x64x16xf32>
}

// -----

// CHECK-LABEL: func.func @conv1d
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<?x?x64xf32>, %[[W:[a-z0-9]+]]: tensor<64x4xf32>, %[[B:[a-z0-9]+]]: tensor<64xf32>)
func.func @conv1d(%x: tensor<?x?x64xf32>, %w: tensor<64x4xf32>, %b: tensor<64xf32>) {
  // CHECK: seq.conv1d %[[X]], %[[W]], %[[B]] : tensor<?x?x64xf32>, tensor<64x4xf32>, tensor<64xf32> -> tensor<?x?x64xf32>
  %0 = seq.conv1d %x, %w, %b : tensor<?x?x64xf32>, tensor<64x4xf32>, tensor<64xf32> -> tensor<?x?x64xf32>
  // CHECK: seq.conv1d %[[X]], %[[W]] : tensor<?x?x64xf32>, tensor<64x4xf32> -> tensor<?x?x64xf32>
  %1 = seq.conv1d %x, %w : tensor<?x?x64xf32>, tensor<64x4xf32> -> tensor<?x?x64xf32>
  return
}

// -----

// CHECK-LABEL: func.func @cross_entropy
func.func @cross_entropy(%logits: tensor<?x?x1000xf32>, %t: tensor<?x?xi32>) {
  // CHECK: seq.cross_entropy %{{.+}}, %{{.+}} {label_smoothing = 1.000000e-01 : f64} : tensor<?x?x1000xf32>, tensor<?x?xi32> -> tensor<f32>
  %0 = seq.cross_entropy %logits, %t {label_smoothing = 1.0e-1 : f64}
      : tensor<?x?x1000xf32>, tensor<?x?xi32> -> tensor<f32>
  // CHECK: seq.cross_entropy %{{.+}}, %{{.+}} {ignore_index = 0 : i64} : tensor<?x?x1000xf32>, tensor<?x?xi32> -> tensor<f32>
  %1 = seq.cross_entropy %logits, %t {ignore_index = 0 : i64}
      : tensor<?x?x1000xf32>, tensor<?x?xi32> -> tensor<f32>
  return
}

// -----

// CHECK-LABEL: func.func @state_store
func.func @state_store(%h: tensor<?x128x16xf32>, %state: tensor<?x128x16xf32>) {
  // CHECK: seq.state_store %{{.+}} into %{{.+}} : tensor<?x128x16xf32>
  seq.state_store %h into %state : tensor<?x128x16xf32>
  return
}

// -----

// CHECK-LABEL: func.func @cache_write
func.func @cache_write(%kc: tensor<?x2x128x16xf32>, %k: tensor<?x2x?x16xf32>,
                       %pos: tensor<?xi32>) -> tensor<?x2x128x16xf32> {
  // CHECK: seq.cache_write %{{.+}}, %{{.+}}, %{{.+}} : tensor<?x2x128x16xf32>, tensor<?x2x?x16xf32>, tensor<?xi32>
  %0 = seq.cache_write %kc, %k, %pos : tensor<?x2x128x16xf32>, tensor<?x2x?x16xf32>, tensor<?xi32>
  return %0 : tensor<?x2x128x16xf32>
}

// -----

// CHECK-LABEL: func.func @dequantize
func.func @dequantize(%x: tensor<?x64xf32>, %b: tensor<8x2x20xi8>) -> tensor<?x8xf32> {
  // CHECK: %[[W:.+]] = seq.dequantize %{{.+}} {format = "q4_1"} : tensor<8x2x20xi8> -> tensor<8x64xf32>
  %w = seq.dequantize %b {format = "q4_1"} : tensor<8x2x20xi8> -> tensor<8x64xf32>
  // CHECK: seq.linear %{{.+}}, %[[W]]
  %0 = seq.linear %x, %w : tensor<?x64xf32>, tensor<8x64xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// A table in a block format: the embedding reads it, and a Linear tied to it.
// CHECK-LABEL: func.func @dequantize_embedding
func.func @dequantize_embedding(%ids: tensor<?xi32>, %b: tensor<8x2x34xi8>) -> tensor<?x8xf32> {
  // CHECK: %[[W:.+]] = seq.dequantize %{{.+}} {format = "q8_0"} : tensor<8x2x34xi8> -> tensor<8x64xf32>
  %w = seq.dequantize %b {format = "q8_0"} : tensor<8x2x34xi8> -> tensor<8x64xf32>
  // CHECK: %[[E:.+]] = seq.embedding %[[W]], %{{.+}}
  %e = seq.embedding %w, %ids : tensor<8x64xf32>, tensor<?xi32> -> tensor<?x64xf32>
  // CHECK: seq.linear %[[E]], %[[W]]
  %0 = seq.linear %e, %w : tensor<?x64xf32>, tensor<8x64xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
