// RUN: seq-opt %s -split-input-file -verify-diagnostics

// One case per verifier rule of the seq dialect, in the order of SeqOps.td.

//===----------------------------------------------------------------------===//
// Elementwise binary ops
//===----------------------------------------------------------------------===//

func.func @add_element_type(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'rhs' expected element type 'f32' (of 'lhs'), got 'tensor<4xf16>'}}
  %0 = seq.add %a, %b : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  return
}

// -----

func.func @add_not_broadcastable(%a: tensor<4x3xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'lhs' and 'rhs' expected broadcastable shapes (trailing dims equal or 1), got 'tensor<4x3xf32>' and 'tensor<5xf32>'}}
  %0 = seq.add %a, %b : tensor<4x3xf32>, tensor<5xf32> -> tensor<4x3xf32>
  return
}

// -----

// The broadcast is static where either operand is: the result must say so.
func.func @add_result_shape(%a: tensor<?x3xf32>, %b: tensor<4x1xf32>) {
  // expected-error @+1 {{result expected shape [4, 3] (the broadcast of 'lhs' and 'rhs'), got 'tensor<?x3xf32>'}}
  %0 = seq.add %a, %b : tensor<?x3xf32>, tensor<4x1xf32> -> tensor<?x3xf32>
  return
}

// -----

func.func @add_result_element_type(%a: tensor<4xi32>) {
  // expected-error @+1 {{result expected element type 'i32' (of 'lhs'), got 'tensor<4xi64>'}}
  %0 = seq.add %a, %a : tensor<4xi32>, tensor<4xi32> -> tensor<4xi64>
  return
}

// -----

// A comparison gives 1 or 0 in its operands' element type.
func.func @compare_result_element_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{result expected element type 'f32' (of 'lhs'), got 'tensor<4xi32>'}}
  %0 = seq.compare lt, %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xi32>
  return
}

// -----

func.func @compare_element_types(%a: tensor<4xf32>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{'rhs' expected element type 'f32' (of 'lhs'), got 'tensor<4xbf16>'}}
  %0 = seq.compare eq, %a, %b : tensor<4xf32>, tensor<4xbf16> -> tensor<4xf32>
  return
}

// -----

func.func @cast_shape(%a: tensor<4x?xi32>) {
  // expected-error @+1 {{expected the result to have the shape of the input, got 'tensor<4x?xi32>' and 'tensor<5x?xf32>'}}
  %0 = seq.cast %a : tensor<4x?xi32> to tensor<5x?xf32>
  return
}

// -----

func.func @cast_rank(%a: tensor<4xf32>) {
  // expected-error @+1 {{expected the result to have the shape of the input, got 'tensor<4xf32>' and 'tensor<4x1xbf16>'}}
  %0 = seq.cast %a : tensor<4xf32> to tensor<4x1xbf16>
  return
}

// -----

func.func @sub_not_broadcastable(%a: tensor<2xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'lhs' and 'rhs' expected broadcastable shapes}}
  %0 = seq.sub %a, %b : tensor<2xf32>, tensor<3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @mul_not_broadcastable(%a: tensor<2xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'lhs' and 'rhs' expected broadcastable shapes}}
  %0 = seq.mul %a, %b : tensor<2xf32>, tensor<3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @div_not_broadcastable(%a: tensor<2xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'lhs' and 'rhs' expected broadcastable shapes}}
  %0 = seq.div %a, %b : tensor<2xf32>, tensor<3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @max_not_broadcastable(%a: tensor<2xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'lhs' and 'rhs' expected broadcastable shapes}}
  %0 = seq.max %a, %b : tensor<2xf32>, tensor<3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @min_not_broadcastable(%a: tensor<2xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'lhs' and 'rhs' expected broadcastable shapes}}
  %0 = seq.min %a, %b : tensor<2xf32>, tensor<3xf32> -> tensor<3xf32>
  return
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

// -----

func.func @softplus_beta(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected positive 'beta', got 0.000000e+00}}
  %0 = seq.softplus %x {beta = 0.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @dropout_rate(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected 'rate' in [0, 1), got 1.000000e+00}}
  %0 = seq.dropout %x {rate = 1.0 : f64} : tensor<4xf32>
  return
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

// -----

func.func @transpose_permutation_size(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{expected 'permutation' of size 3 (rank of 'input'), got 2}}
  %0 = seq.transpose %x [1, 0] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  return
}

// -----

func.func @transpose_not_a_permutation(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{expected 'permutation' to be a permutation of [0, 3), got [0, 0, 2]}}
  %0 = seq.transpose %x [0, 0, 2] : tensor<2x3x4xf32> -> tensor<2x2x4xf32>
  return
}

// -----

func.func @transpose_result_shape(%x: tensor<2x?x4xf32>) {
  // expected-error @+1 {{result expected shape [2, 4, ?] (the dims of 'input' permuted), got 'tensor<2x?x4xf32>'}}
  %0 = seq.transpose %x [0, 2, 1] : tensor<2x?x4xf32> -> tensor<2x?x4xf32>
  return
}

// -----

func.func @transpose_result_element_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{result expected element type 'f32' (of 'input'), got 'tensor<3x2xf16>'}}
  %0 = seq.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf16>
  return
}

// -----

func.func @reshape_element_type(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{result expected element type 'f32' (of 'input'), got 'tensor<64xi32>'}}
  %0 = seq.reshape %x : tensor<4x16xf32> -> tensor<64xi32>
  return
}

// -----

func.func @reshape_dynamic_sizes(%x: tensor<?x64xf32>, %n: index) {
  // expected-error @+1 {{expected 2 'dynamic_sizes' (one per dynamic dim of the result), got 1}}
  %0 = seq.reshape %x [%n] : tensor<?x64xf32> -> tensor<?x?x16xf32>
  return
}

// -----

func.func @reshape_element_count(%x: tensor<4x16xf32>) {
  // expected-error @+1 {{result expected 64 elements (as many as 'input'), got 48 in 'tensor<3x16xf32>'}}
  %0 = seq.reshape %x : tensor<4x16xf32> -> tensor<3x16xf32>
  return
}

// -----

func.func @reshape_result_cannot_hold(%x: tensor<4x16xf32>, %n: index) {
  // expected-error @+1 {{result expected static dims whose product divides 64 (elements of 'input'), got 'tensor<?x3xf32>'}}
  %0 = seq.reshape %x [%n] : tensor<4x16xf32> -> tensor<?x3xf32>
  return
}

// -----

func.func @reshape_input_cannot_fill(%x: tensor<?x3xf32>) {
  // expected-error @+1 {{'input' expected static dims whose product divides 64 (elements of the result), got 'tensor<?x3xf32>'}}
  %0 = seq.reshape %x : tensor<?x3xf32> -> tensor<4x16xf32>
  return
}

// -----

func.func @split_heads_heads(%x: tensor<?x?x512xf32>) {
  // expected-error @+1 {{expected positive 'heads', got 0}}
  %0 = seq.split_heads %x {heads = 0 : i64} : tensor<?x?x512xf32> -> tensor<?x0x?x64xf32>
  return
}

// -----

func.func @split_heads_rank(%x: tensor<?x512xf32>) {
  // expected-error @+1 {{'input' expected rank 3 ([batch, length, heads*head_dim]), got 'tensor<?x512xf32>'}}
  %0 = seq.split_heads %x {heads = 8 : i64} : tensor<?x512xf32> -> tensor<?x8x?x64xf32>
  return
}

// -----

func.func @split_heads_divisible(%x: tensor<?x?x100xf32>) {
  // expected-error @+1 {{'input' expected a last dim divisible by 'heads' = 8, got 'tensor<?x?x100xf32>'}}
  %0 = seq.split_heads %x {heads = 8 : i64} : tensor<?x?x100xf32> -> tensor<?x8x?x12xf32>
  return
}

// -----

func.func @split_heads_result(%x: tensor<?x?x512xf32>) {
  // expected-error @+1 {{result expected shape [?, 8, ?, 64] ([batch, heads, length, head_dim]), got 'tensor<?x8x?x32xf32>'}}
  %0 = seq.split_heads %x {heads = 8 : i64} : tensor<?x?x512xf32> -> tensor<?x8x?x32xf32>
  return
}

// -----

func.func @merge_heads_rank(%x: tensor<?x?x512xf32>) {
  // expected-error @+1 {{'input' expected rank 4 ([batch, heads, length, head_dim]), got 'tensor<?x?x512xf32>'}}
  %0 = seq.merge_heads %x : tensor<?x?x512xf32> -> tensor<?x?x512xf32>
  return
}

// -----

// The feature size is only known when both heads and head_dim are.
func.func @merge_heads_result(%x: tensor<?x8x?x?xf32>) {
  // expected-error @+1 {{result expected shape [?, ?, ?] ([batch, length, heads*head_dim]), got 'tensor<?x?x512xf32>'}}
  %0 = seq.merge_heads %x : tensor<?x8x?x?xf32> -> tensor<?x?x512xf32>
  return
}

// -----

func.func @slice_axis(%x: tensor<512x64xf32>, %a: index, %b: index) {
  // expected-error @+1 {{expected 'axis' in [0, 2) (rank of 'input'), got 2}}
  %0 = seq.slice %x[%a : %b] axis 2 : tensor<512x64xf32> -> tensor<512x64xf32>
  return
}

// -----

func.func @slice_element_type(%x: tensor<512x64xf32>, %a: index, %b: index) {
  // expected-error @+1 {{result expected element type 'f32' (of 'input'), got 'tensor<?x64xf16>'}}
  %0 = seq.slice %x[%a : %b] axis 0 : tensor<512x64xf32> -> tensor<?x64xf16>
  return
}

// -----

func.func @slice_other_dims(%x: tensor<512x64xf32>, %a: index, %b: index) {
  // expected-error @+1 {{result expected the shape of 'input' [512, 64] with any size along axis 0, got 'tensor<?x32xf32>'}}
  %0 = seq.slice %x[%a : %b] axis 0 : tensor<512x64xf32> -> tensor<?x32xf32>
  return
}

// -----

func.func @slice_too_large(%x: tensor<512x64xf32>, %a: index, %b: index) {
  // expected-error @+1 {{result expected at most 512 elements along axis 0 (dim 0 of 'input'), got 'tensor<600x64xf32>'}}
  %0 = seq.slice %x[%a : %b] axis 0 : tensor<512x64xf32> -> tensor<600x64xf32>
  return
}

// -----

func.func @concat_no_inputs() {
  // expected-error @+1 {{expected at least one input}}
  %0 = "seq.concat"() {axis = 0 : i64} : () -> tensor<?xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<?x32xf32>) {
  // expected-error @+1 {{expected 'axis' in [0, 2) (rank of the inputs), got -1}}
  %0 = seq.concat %a, %a axis -1 : tensor<?x32xf32>, tensor<?x32xf32> -> tensor<?x64xf32>
  return
}

// -----

func.func @concat_element_type(%a: tensor<?x32xf32>, %b: tensor<?x32xf16>) {
  // expected-error @+1 {{'inputs' #1 expected element type 'f32' (of 'inputs' #0), got 'tensor<?x32xf16>'}}
  %0 = seq.concat %a, %b axis 1 : tensor<?x32xf32>, tensor<?x32xf16> -> tensor<?x64xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<?x32xf32>, %b: tensor<32xf32>) {
  // expected-error @+1 {{'inputs' #1 expected rank 2 (of 'inputs' #0), got 'tensor<32xf32>'}}
  %0 = seq.concat %a, %b axis 1 : tensor<?x32xf32>, tensor<32xf32> -> tensor<?x64xf32>
  return
}

// -----

func.func @concat_other_dims(%a: tensor<4x32xf32>, %b: tensor<?x32xf32>, %c: tensor<5x32xf32>) {
  // expected-error @+1 {{'inputs' #2 expected dim 0 = 4 (as in the inputs before it, all dims but axis 1 agree), got 'tensor<5x32xf32>'}}
  %0 = seq.concat %a, %b, %c axis 1 : tensor<4x32xf32>, tensor<?x32xf32>, tensor<5x32xf32> -> tensor<4x96xf32>
  return
}

// -----

func.func @concat_result(%a: tensor<4x32xf32>, %b: tensor<4x16xf32>) {
  // expected-error @+1 {{result expected shape [4, 48] (the inputs concatenated along axis 1), got 'tensor<4x?xf32>'}}
  %0 = seq.concat %a, %b axis 1 : tensor<4x32xf32>, tensor<4x16xf32> -> tensor<4x?xf32>
  return
}

// -----

func.func @reduce_axes(%x: tensor<?x64xf32>) {
  // expected-error @+1 {{expected 'axes' sorted, unique and in [0, 2), got [1, 0]}}
  %0 = seq.reduce sum %x axes [1, 0] : tensor<?x64xf32> -> tensor<f32>
  return
}

// -----

func.func @reduce_result(%x: tensor<?x64xf32>) {
  // expected-error @+1 {{result expected shape [?] ('input' without the reduced dims), got 'tensor<?x1xf32>'}}
  %0 = seq.reduce sum %x axes [1] : tensor<?x64xf32> -> tensor<?x1xf32>
  return
}

// -----

func.func @reduce_keepdim_result(%x: tensor<?x64xf32>) {
  // expected-error @+1 {{result expected shape [?, 1] ('input' with the reduced dims kept as 1), got 'tensor<?xf32>'}}
  %0 = seq.reduce mean %x axes [1] keepdim : tensor<?x64xf32> -> tensor<?xf32>
  return
}

// -----

func.func @arange_rank(%n: index) {
  // expected-error @+1 {{result expected rank 1 ([length]), got 'tensor<?x1xi32>'}}
  %0 = seq.arange %n : tensor<?x1xi32>
  return
}

//===----------------------------------------------------------------------===//
// Dense layers and normalization
//===----------------------------------------------------------------------===//

// -----

func.func @matmul_rank(%a: tensor<64xf32>, %b: tensor<64x32xf32>) {
  // expected-error @+1 {{'lhs' expected rank >= 2 ([..., m, k]), got 'tensor<64xf32>'}}
  %0 = seq.matmul %a, %b : tensor<64xf32>, tensor<64x32xf32> -> tensor<32xf32>
  return
}

// -----

func.func @matmul_element_type(%a: tensor<8x64xf32>, %b: tensor<64x32xf16>) {
  // expected-error @+1 {{'rhs' expected element type 'f32' (of 'lhs'), got 'tensor<64x32xf16>'}}
  %0 = seq.matmul %a, %b : tensor<8x64xf32>, tensor<64x32xf16> -> tensor<8x32xf32>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<8x64xf32>, %b: tensor<32x64xf32>) {
  // expected-error @+1 {{'rhs' expected shape [..., k, n] with k = 64 (last dim of 'lhs'), got 'tensor<32x64xf32>'}}
  %0 = seq.matmul %a, %b : tensor<8x64xf32>, tensor<32x64xf32> -> tensor<8x64xf32>
  return
}

// -----

func.func @matmul_transposed_contraction(%a: tensor<8x64xf32>, %b: tensor<64x32xf32>) {
  // expected-error @+1 {{'rhs' expected shape [..., n, k] with k = 64 (last dim of 'lhs'), got 'tensor<64x32xf32>'}}
  %0 = seq.matmul %a, %b transpose_rhs : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x64xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x8x64xf32>, %b: tensor<3x64x32xf32>) {
  // expected-error @+1 {{'lhs' and 'rhs' expected broadcastable batch dims, got [2] and [3]}}
  %0 = seq.matmul %a, %b : tensor<2x8x64xf32>, tensor<3x64x32xf32> -> tensor<2x8x32xf32>
  return
}

// -----

func.func @matmul_result(%a: tensor<?x8x64xf32>, %b: tensor<64x32xf32>) {
  // expected-error @+1 {{result expected shape [?, 8, 32] ([..., m, n]), got 'tensor<?x8x64xf32>'}}
  %0 = seq.matmul %a, %b : tensor<?x8x64xf32>, tensor<64x32xf32> -> tensor<?x8x64xf32>
  return
}

// -----

func.func @linear_weight(%x: tensor<?x64xf32>, %w: tensor<128x32xf32>) {
  // expected-error @+1 {{'weight' expected shape [out, in] with in = 64 (last dim of 'input'), got 'tensor<128x32xf32>'}}
  %0 = seq.linear %x, %w : tensor<?x64xf32>, tensor<128x32xf32> -> tensor<?x128xf32>
  return
}

// -----

func.func @linear_weight_rank(%x: tensor<?x64xf32>, %w: tensor<64xf32>) {
  // expected-error @+1 {{'weight' expected rank 2 ([out, in]), got 'tensor<64xf32>'}}
  %0 = seq.linear %x, %w : tensor<?x64xf32>, tensor<64xf32> -> tensor<?xf32>
  return
}

// -----

func.func @linear_input_rank(%x: tensor<f32>, %w: tensor<8x1xf32>) {
  // expected-error @+1 {{'input' expected rank >= 1 ([..., in]), got 'tensor<f32>'}}
  %0 = seq.linear %x, %w : tensor<f32>, tensor<8x1xf32> -> tensor<8xf32>
  return
}

// -----

func.func @linear_bias(%x: tensor<?x64xf32>, %w: tensor<128x64xf32>, %b: tensor<64xf32>) {
  // expected-error @+1 {{'bias' expected shape [out] with out = 128 (dim 0 of 'weight'), got 'tensor<64xf32>'}}
  %0 = seq.linear %x, %w, %b : tensor<?x64xf32>, tensor<128x64xf32>, tensor<64xf32> -> tensor<?x128xf32>
  return
}

// -----

func.func @linear_result(%x: tensor<?x?x64xf32>, %w: tensor<128x64xf32>) {
  // expected-error @+1 {{result expected shape [?, ?, 128] ([..., out]), got 'tensor<?x128xf32>'}}
  %0 = seq.linear %x, %w : tensor<?x?x64xf32>, tensor<128x64xf32> -> tensor<?x128xf32>
  return
}

// -----

// The custom form cannot express a shift without a scale.
func.func @layer_norm_beta_without_gamma(%x: tensor<?x64xf32>, %b: tensor<64xf32>) {
  // expected-error @+1 {{expected 'gamma' when 'beta' is present}}
  %0 = "seq.layer_norm"(%x, %b) <{eps = 1.0e-5 : f64, operandSegmentSizes = array<i32: 1, 0, 1>}> : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @layer_norm_eps(%x: tensor<?x64xf32>) {
  // expected-error @+1 {{expected non-negative 'eps', got -1.000000e-05}}
  %0 = seq.layer_norm %x {eps = -1.0e-5 : f64} : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @layer_norm_gamma(%x: tensor<?x64xf32>, %g: tensor<32xf32>) {
  // expected-error @+1 {{'gamma' expected shape [d] with d = 64 (last dim of 'input'), got 'tensor<32xf32>'}}
  %0 = seq.layer_norm %x, %g : (tensor<?x64xf32>, tensor<32xf32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @layer_norm_beta(%x: tensor<?x64xf32>, %g: tensor<64xf32>, %b: tensor<1x64xf32>) {
  // expected-error @+1 {{'beta' expected rank 1 ([d]), got 'tensor<1x64xf32>'}}
  %0 = seq.layer_norm %x, %g, %b : (tensor<?x64xf32>, tensor<64xf32>, tensor<1x64xf32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @layer_norm_result(%x: tensor<?x64xf32>) {
  // expected-error @+1 {{result expected shape [?, 64] ([..., d]), got 'tensor<8x64xf32>'}}
  %0 = seq.layer_norm %x : (tensor<?x64xf32>) -> tensor<8x64xf32>
  return
}

// -----

func.func @rms_norm_gamma_element_type(%x: tensor<?x64xf32>, %g: tensor<64xbf16>) {
  // expected-error @+1 {{'gamma' expected element type 'f32' (of 'input'), got 'tensor<64xbf16>'}}
  %0 = seq.rms_norm %x, %g : (tensor<?x64xf32>, tensor<64xbf16>) -> tensor<?x64xf32>
  return
}

// -----

func.func @rms_norm_eps(%x: tensor<?x64xf32>) {
  // expected-error @+1 {{expected non-negative 'eps', got -1.000000e+00}}
  %0 = seq.rms_norm %x {eps = -1.0 : f64} : (tensor<?x64xf32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @softmax_axis(%x: tensor<?x?xf32>) {
  // expected-error @+1 {{expected 'axis' in [-2, 2) (rank of 'input'), got -3}}
  %0 = seq.softmax %x axis -3 : tensor<?x?xf32>
  return
}

// -----

func.func @embedding_table_rank(%t: tensor<1000xf32>, %ids: tensor<?xi32>) {
  // expected-error @+1 {{'table' expected rank 2 ([vocab, dim]), got 'tensor<1000xf32>'}}
  %0 = seq.embedding %t, %ids : tensor<1000xf32>, tensor<?xi32> -> tensor<?xf32>
  return
}

// -----

func.func @embedding_result(%t: tensor<1000x64xf32>, %ids: tensor<2x?xi32>) {
  // expected-error @+1 {{result expected shape [2, ?, 64] (the shape of 'indices' followed by dim 1 of 'table'), got 'tensor<?x?x64xf32>'}}
  %0 = seq.embedding %t, %ids : tensor<1000x64xf32>, tensor<2x?xi32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @embedding_result_element_type(%t: tensor<1000x64xf32>, %ids: tensor<?xi32>) {
  // expected-error @+1 {{result expected element type 'f32' (of 'table'), got 'tensor<?x64xf16>'}}
  %0 = seq.embedding %t, %ids : tensor<1000x64xf32>, tensor<?xi32> -> tensor<?x64xf16>
  return
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

// -----

func.func @apply_mask_rank(%s: tensor<?xf32>) {
  // expected-error @+1 {{'scores' expected rank >= 2 ([..., n_q, n_k]), got 'tensor<?xf32>'}}
  %0 = seq.apply_mask %s {mask = #seq.mask<causal = true>} : tensor<?xf32> -> tensor<?xf32>
  return
}

// -----

func.func @apply_mask_lengths_without_batch(%s: tensor<?x?xf32>, %l: tensor<?xi32>) {
  // expected-error @+1 {{'scores' expected rank >= 3 ([batch, ..., n_q, n_k]) with 'lengths', got 'tensor<?x?xf32>'}}
  %0 = seq.apply_mask %s lengths(%l : tensor<?xi32>) {mask = #seq.mask<>} : tensor<?x?xf32> -> tensor<?x?xf32>
  return
}

// -----

func.func @apply_mask_lengths(%s: tensor<4x?x?xf32>, %l: tensor<5xi32>) {
  // expected-error @+1 {{'lengths' expected shape [batch] with batch = 4 (dim 0 of 'scores'), got 'tensor<5xi32>'}}
  %0 = seq.apply_mask %s lengths(%l : tensor<5xi32>) {mask = #seq.mask<>} : tensor<4x?x?xf32> -> tensor<4x?x?xf32>
  return
}

// -----

func.func @apply_mask_causal_positions(%s: tensor<?x4x8xf32>) {
  // expected-error @+1 {{expected n_q = n_k with mask #seq.mask<causal = true> (queries and keys index the same positions), got n_q = 4 and n_k = 8}}
  %0 = seq.apply_mask %s {mask = #seq.mask<causal = true>} : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  return
}

// -----

func.func @apply_mask_window_positions(%s: tensor<1x8xf32>) {
  // expected-error @+1 {{expected n_q = n_k with mask #seq.mask<window = 4> (queries and keys index the same positions), got n_q = 1 and n_k = 8}}
  %0 = seq.apply_mask %s {mask = #seq.mask<window = 4>} : tensor<1x8xf32> -> tensor<1x8xf32>
  return
}

// -----

func.func @apply_mask_result(%s: tensor<?x8x8xf32>) {
  // expected-error @+1 {{result expected shape [?, 8, 8] (the shape of 'scores'), got 'tensor<?x?x?xf32>'}}
  %0 = seq.apply_mask %s {mask = #seq.mask<causal = true>} : tensor<?x8x8xf32> -> tensor<?x?x?xf32>
  return
}

// -----

func.func @attention_query_rank(%q: tensor<?x?x64xf32>, %k: tensor<?x8x?x64xf32>) {
  // expected-error @+1 {{'query' expected rank 4 ([batch, heads, n_q, d]), got 'tensor<?x?x64xf32>'}}
  %0 = seq.attention %q, %k, %k : tensor<?x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @attention_key_element_type(%q: tensor<?x8x?x64xf32>, %k: tensor<?x8x?x64xf16>) {
  // expected-error @+1 {{'key' expected element type 'f32' (of 'query'), got 'tensor<?x8x?x64xf16>'}}
  %0 = seq.attention %q, %k, %k : tensor<?x8x?x64xf32>, tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16> -> tensor<?x8x?x64xf32>
  return
}

// -----

func.func @attention_key_batch(%q: tensor<2x8x?x64xf32>, %k: tensor<3x8x?x64xf32>) {
  // expected-error @+1 {{'key' expected shape [batch, kv_heads, n_k, d] with batch = 2 (dim 0 of 'query'), got 'tensor<3x8x?x64xf32>'}}
  %0 = seq.attention %q, %k, %k : tensor<2x8x?x64xf32>, tensor<3x8x?x64xf32>, tensor<3x8x?x64xf32> -> tensor<2x8x?x64xf32>
  return
}

// -----

func.func @attention_key_head_dim(%q: tensor<?x8x?x64xf32>, %k: tensor<?x8x?x32xf32>) {
  // expected-error @+1 {{'key' expected shape [batch, kv_heads, n_k, d] with d = 64 (dim 3 of 'query'), got 'tensor<?x8x?x32xf32>'}}
  %0 = seq.attention %q, %k, %k : tensor<?x8x?x64xf32>, tensor<?x8x?x32xf32>, tensor<?x8x?x32xf32> -> tensor<?x8x?x32xf32>
  return
}

// -----

func.func @attention_value_heads(%q: tensor<?x8x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x4x?x64xf32>) {
  // expected-error @+1 {{'value' expected shape [batch, kv_heads, n_k, d_v] with kv_heads = 2 (dim 1 of 'key'), got 'tensor<?x4x?x64xf32>'}}
  %0 = seq.attention %q, %k, %v : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x4x?x64xf32> -> tensor<?x8x?x64xf32>
  return
}

// -----

func.func @attention_value_length(%q: tensor<?x8x?x64xf32>, %k: tensor<?x8x16x64xf32>, %v: tensor<?x8x17x64xf32>) {
  // expected-error @+1 {{'value' expected shape [batch, kv_heads, n_k, d_v] with n_k = 16 (dim 2 of 'key'), got 'tensor<?x8x17x64xf32>'}}
  %0 = seq.attention %q, %k, %v : tensor<?x8x?x64xf32>, tensor<?x8x16x64xf32>, tensor<?x8x17x64xf32> -> tensor<?x8x?x64xf32>
  return
}

// -----

func.func @attention_gqa(%q: tensor<?x8x?x64xf32>, %k: tensor<?x3x?x64xf32>) {
  // expected-error @+1 {{expected heads = 8 (dim 1 of 'query') to be a multiple of kv_heads = 3 (dim 1 of 'key')}}
  %0 = seq.attention %q, %k, %k : tensor<?x8x?x64xf32>, tensor<?x3x?x64xf32>, tensor<?x3x?x64xf32> -> tensor<?x8x?x64xf32>
  return
}

// -----

func.func @attention_lengths(%q: tensor<2x8x?x64xf32>, %l: tensor<4xi32>) {
  // expected-error @+1 {{'lengths' expected shape [batch] with batch = 2 (dim 0 of 'query'), got 'tensor<4xi32>'}}
  %0 = seq.attention %q, %q, %q lengths(%l : tensor<4xi32>) : tensor<2x8x?x64xf32>, tensor<2x8x?x64xf32>, tensor<2x8x?x64xf32> -> tensor<2x8x?x64xf32>
  return
}

// -----

func.func @attention_alibi(%q: tensor<?x8x?x64xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'alibi' expected shape [heads] with heads = 8 (dim 1 of 'query'), got 'tensor<4xf32>'}}
  %0 = seq.attention %q, %q, %q alibi(%s : tensor<4xf32>) : tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32> -> tensor<?x8x?x64xf32>
  return
}

// -----

func.func @attention_bias_broadcast(%q: tensor<?x8x?x64xf32>, %b: tensor<4x1x1xf32>) {
  // expected-error @+1 {{'bias' expected a shape broadcastable to [batch, heads, n_q, n_k] = [?, 8, ?, ?], got 'tensor<4x1x1xf32>'}}
  %0 = seq.attention %q, %q, %q bias(%b : tensor<4x1x1xf32>) : tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32> -> tensor<?x8x?x64xf32>
  return
}

// -----

func.func @attention_bias_element_type(%q: tensor<?x8x?x64xf32>, %b: tensor<?x?xf16>) {
  // expected-error @+1 {{'bias' expected element type 'f32' (of 'query'), got 'tensor<?x?xf16>'}}
  %0 = seq.attention %q, %q, %q bias(%b : tensor<?x?xf16>) : tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32> -> tensor<?x8x?x64xf32>
  return
}

// -----

func.func @attention_scale(%q: tensor<?x8x?x64xf32>) {
  // expected-error @+1 {{expected positive 'scale', got -1.250000e-01}}
  %0 = seq.attention %q, %q, %q {scale = -0.125 : f64} : tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32> -> tensor<?x8x?x64xf32>
  return
}

// -----

func.func @attention_dynamic_head_dim(%q: tensor<?x8x?x?xf32>) {
  // expected-error @+1 {{expected a 'scale' attribute when the head dim (dim 3 of 'query') is dynamic, got 'tensor<?x8x?x?xf32>'}}
  %0 = seq.attention %q, %q, %q : tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32> -> tensor<?x8x?x?xf32>
  return
}

// -----

// A causal mask on 4 queries against 8 keys would let query 0 see key 0
// only, whichever 4 positions the queries stand for.
func.func @attention_causal_positions(%q: tensor<1x8x4x64xf32>, %k: tensor<1x8x8x64xf32>) {
  // expected-error @+1 {{expected n_q = n_k with mask #seq.mask<causal = true> (queries and keys index the same positions), got n_q = 4 and n_k = 8}}
  %0 = seq.attention %q, %k, %k {mask = #seq.mask<causal = true>} : tensor<1x8x4x64xf32>, tensor<1x8x8x64xf32>, tensor<1x8x8x64xf32> -> tensor<1x8x4x64xf32>
  return
}

// -----

func.func @attention_query_offsets_batch(%q: tensor<2x8x4x64xf32>, %k: tensor<2x8x8x64xf32>, %o: tensor<3xi32>) {
  // expected-error @+1 {{'query_offsets' expected shape [batch] with batch = 2 (dim 0 of 'query'), got 'tensor<3xi32>'}}
  %0 = seq.attention %q, %k, %k query_offsets(%o : tensor<3xi32>) {mask = #seq.mask<causal = true>} : tensor<2x8x4x64xf32>, tensor<2x8x8x64xf32>, tensor<2x8x8x64xf32> -> tensor<2x8x4x64xf32>
  return
}

// -----

func.func @attention_result(%q: tensor<?x8x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x32xf32>) {
  // expected-error @+1 {{result expected shape [?, 8, ?, 32] ([batch, heads, n_q, d_v]), got 'tensor<?x8x?x64xf32>'}}
  %0 = seq.attention %q, %k, %v : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x32xf32> -> tensor<?x8x?x64xf32>
  return
}

// -----

// A bias dim other than 1 fixes the size it is aligned with.
func.func @attention_result_refined_by_bias(%q: tensor<?x8x?x64xf32>, %b: tensor<16x16xf32>) {
  // expected-error @+1 {{result expected shape [?, 8, 16, 64] ([batch, heads, n_q, d_v]), got 'tensor<?x8x?x64xf32>'}}
  %0 = seq.attention %q, %q, %q bias(%b : tensor<16x16xf32>) : tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32> -> tensor<?x8x?x64xf32>
  return
}

// -----

func.func @online_attention_head_dim(%q: tensor<?x64xf32>, %k: tensor<?x32xf32>, %acc: tensor<?x32xf32>, %m: tensor<?xf32>) {
  // expected-error @+1 {{'key' expected shape [c, d] with d = 64 (dim 1 of 'query'), got 'tensor<?x32xf32>'}}
  %0:3 = seq.online_attention %q, %k, %k, %acc, %m, %m
      : tensor<?x64xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?xf32>, tensor<?xf32>
  return
}

// -----

func.func @online_attention_mixed(%q: tensor<?x64xbf16>, %k: tensor<?x64xf32>, %acc: tensor<?x64xf32>, %m: tensor<?xf32>) {
  // expected-error @+1 {{expected 'query' and 'key' of one element type, got 'bf16' and 'f32'}}
  %0:3 = seq.online_attention %q, %k, %k, %acc, %m, %m
      : tensor<?x64xbf16>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xf32>, tensor<?xf32>
  return
}

// -----

func.func @online_attention_rows(%q: tensor<16x64xf32>, %acc: tensor<8x64xf32>, %m: tensor<16xf32>) {
  // expected-error @+1 {{'acc' expected shape [r, d_v] with r = 16 (dim 0 of 'query'), got 'tensor<8x64xf32>'}}
  %0:3 = seq.online_attention %q, %q, %q, %acc, %m, %m
      : tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<8x64xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @online_attention_mask_offsets(%q: tensor<?x64xf32>, %m: tensor<?xf32>) {
  // expected-error @+1 {{expected the query and key offsets (2) with a mask, got 0}}
  %0:3 = seq.online_attention %q, %q, %q, %q, %m, %m {mask = #seq.mask<causal = true>}
      : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xf32>, tensor<?xf32>
  return
}

// -----

func.func @online_attention_offsets_unmasked(%q: tensor<?x64xf32>, %m: tensor<?xf32>, %i: index) {
  // expected-error @+1 {{expected no offsets without a mask, got 2}}
  %0:3 = seq.online_attention %q, %q, %q, %q, %m, %m offsets(%i, %i)
      : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xf32>, tensor<?xf32>
  return
}

// -----

func.func @online_attention_key_positions(%q: tensor<?x64xf32>, %k: tensor<8x64xf32>, %m: tensor<?xf32>, %s: f32, %pk: tensor<4xf32>) {
  // expected-error @+1 {{'key_positions' expected shape [c] with c = 8 (dim 0 of 'key'), got 'tensor<4xf32>'}}
  %0:3 = seq.online_attention %q, %k, %k, %q, %m, %m alibi(%s, %m, %pk : tensor<?xf32>, tensor<4xf32>)
      : tensor<?x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<?x64xf32>, tensor<?xf32>, tensor<?xf32>
  return
}

// -----

func.func @online_attention_bias_rank(%q: tensor<?x64xf32>, %m: tensor<?xf32>, %b: tensor<1x?x?xf32>) {
  // expected-error @+1 {{expected 'bias' of rank 1 ([c]) or 2 ([r, c]), got 'tensor<1x?x?xf32>'}}
  %0:3 = seq.online_attention %q, %q, %q, %q, %m, %m bias(%b : tensor<1x?x?xf32>)
      : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?xf32>, tensor<?xf32>
  return
}

// -----

func.func @online_attention_bias_keys(%q: tensor<16x64xf32>, %k: tensor<8x64xf32>, %m: tensor<16xf32>, %b: tensor<16x4xf32>) {
  // expected-error @+1 {{'bias' expected shape [r, c] with c = 8 (dim 0 of 'key'), got 'tensor<16x4xf32>'}}
  %0:3 = seq.online_attention %q, %k, %k, %q, %m, %m bias(%b : tensor<16x4xf32>)
      : tensor<16x64xf32>, tensor<8x64xf32>, tensor<8x64xf32>, tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @attention_finalize_rank(%acc: tensor<?xf32>) {
  // expected-error @+1 {{expected 'acc' of rank 2 ([r, d_v]) or 3 ([p, r, d_v]), got 'tensor<?xf32>'}}
  %0 = seq.attention_finalize %acc, %acc, %acc : tensor<?xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<?x64xf32>
  return
}

// -----

func.func @attention_finalize_parts(%acc: tensor<4x?x64xf32>, %m: tensor<2x?xf32>) {
  // expected-error @+1 {{'max' expected shape [p, r] with p = 4 (dim 0 of 'acc'), got 'tensor<2x?xf32>'}}
  %0 = seq.attention_finalize %acc, %m, %m : tensor<4x?x64xf32>, tensor<2x?xf32>, tensor<2x?xf32> -> tensor<?x64xf32>
  return
}

// -----

func.func @attention_finalize_result(%acc: tensor<?x64xf32>, %m: tensor<?xf32>) {
  // expected-error @+1 {{result expected shape [?, 64] ([r, d_v]), got 'tensor<?x32xf32>'}}
  %0 = seq.attention_finalize %acc, %m, %m : tensor<?x64xf32>, tensor<?xf32>, tensor<?xf32> -> tensor<?x32xf32>
  return
}

// -----

func.func @mha_heads(%x: tensor<?x?x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{expected positive 'heads', got 0}}
  %0 = seq.multi_head_attention %x weights(%w, %w, %w, %w : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
      {heads = 0 : i64, kv_heads = 1 : i64} : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @mha_kv_heads(%x: tensor<?x?x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{expected positive 'kv_heads', got -1}}
  %0 = seq.multi_head_attention %x weights(%w, %w, %w, %w : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
      {heads = 4 : i64, kv_heads = -1 : i64} : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @mha_gqa(%x: tensor<?x?x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{expected 'heads' = 4 to be a multiple of 'kv_heads' = 3}}
  %0 = seq.multi_head_attention %x weights(%w, %w, %w, %w : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
      {heads = 4 : i64, kv_heads = 3 : i64} : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @mha_input_rank(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{'input' expected rank 3 ([batch, n, model_dim]), got 'tensor<?x64xf32>'}}
  %0 = seq.multi_head_attention %x weights(%w, %w, %w, %w : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
      {heads = 4 : i64, kv_heads = 4 : i64} : tensor<?x64xf32> -> tensor<?x64xf32>
  return
}

// -----

func.func @mha_kv_batch(%x: tensor<2x?x64xf32>, %m: tensor<3x?x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{'kv' expected shape [batch, n_kv, kv_dim] with batch = 2 (dim 0 of 'input'), got 'tensor<3x?x64xf32>'}}
  %0 = seq.multi_head_attention %x kv(%m : tensor<3x?x64xf32>) weights(%w, %w, %w, %w : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
      {heads = 4 : i64, kv_heads = 4 : i64} : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
  return
}

// -----

func.func @mha_wq(%x: tensor<?x?x64xf32>, %wq: tensor<64x32xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{'wq' expected shape [heads*d, model_dim] with model_dim = 64 (dim 2 of 'input'), got 'tensor<64x32xf32>'}}
  %0 = seq.multi_head_attention %x weights(%wq, %w, %w, %w : tensor<64x32xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
      {heads = 4 : i64, kv_heads = 4 : i64} : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @mha_wq_heads(%x: tensor<?x?x64xf32>, %wq: tensor<60x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{'wq' expected dim 0 divisible by 'heads' = 8 ([heads*d, model_dim]), got 'tensor<60x64xf32>'}}
  %0 = seq.multi_head_attention %x weights(%wq, %w, %w, %w : tensor<60x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
      {heads = 8 : i64, kv_heads = 8 : i64} : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

// 8 query heads of 8 features with 2 kv heads project keys to 2 * 8 = 16.
func.func @mha_wk(%x: tensor<?x?x64xf32>, %w: tensor<64x64xf32>, %wkv: tensor<32x64xf32>) {
  // expected-error @+1 {{'wk' expected shape [kv_heads*d, model_dim] with kv_heads*d = 16 ('kv_heads' = 2 times d = 8 from 'wq'), got 'tensor<32x64xf32>'}}
  %0 = seq.multi_head_attention %x weights(%w, %wkv, %wkv, %w : tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>)
      {heads = 8 : i64, kv_heads = 2 : i64} : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @mha_wk_kv_dim(%x: tensor<?x?x64xf32>, %m: tensor<?x?x48xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{'wk' expected shape [kv_heads*d, kv_dim] with kv_dim = 48 (dim 2 of 'kv'), got 'tensor<64x64xf32>'}}
  %0 = seq.multi_head_attention %x kv(%m : tensor<?x?x48xf32>) weights(%w, %w, %w, %w : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
      {heads = 4 : i64, kv_heads = 4 : i64} : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @mha_wv(%x: tensor<?x?x64xf32>, %w: tensor<64x64xf32>, %wv: tensor<64x32xf32>) {
  // expected-error @+1 {{'wv' expected shape [kv_heads*d, model_dim] with model_dim = 64 (dim 2 of 'input'), got 'tensor<64x32xf32>'}}
  %0 = seq.multi_head_attention %x weights(%w, %w, %wv, %w : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x32xf32>, tensor<64x64xf32>)
      {heads = 4 : i64, kv_heads = 4 : i64} : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @mha_wo(%x: tensor<?x?x64xf32>, %w: tensor<64x64xf32>, %wo: tensor<64x32xf32>) {
  // expected-error @+1 {{'wo' expected shape [model_dim, heads*d] with heads*d = 64 (dim 0 of 'wq'), got 'tensor<64x32xf32>'}}
  %0 = seq.multi_head_attention %x weights(%w, %w, %w, %wo : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x32xf32>)
      {heads = 4 : i64, kv_heads = 4 : i64} : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @mha_weight_element_type(%x: tensor<?x?x64xf32>, %w: tensor<64x64xf32>, %wh: tensor<64x64xf16>) {
  // expected-error @+1 {{'wv' expected element type 'f32' (of 'input'), got 'tensor<64x64xf16>'}}
  %0 = seq.multi_head_attention %x weights(%w, %w, %wh, %w : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf16>, tensor<64x64xf32>)
      {heads = 4 : i64, kv_heads = 4 : i64} : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @mha_bias_count(%x: tensor<?x?x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) {
  // expected-error @+1 {{expected 0 or 4 'biases' (bq, bk, bv, bo), got 2}}
  %0 = seq.multi_head_attention %x weights(%w, %w, %w, %w : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
      biases(%b, %b : tensor<64xf32>, tensor<64xf32>)
      {heads = 4 : i64, kv_heads = 4 : i64} : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @mha_bias_shape(%x: tensor<?x?x64xf32>, %w: tensor<64x64xf32>, %wkv: tensor<32x64xf32>, %b: tensor<64xf32>) {
  // expected-error @+1 {{'biases' #1 (bk) expected shape [kv_heads*d] with kv_heads*d = 32 ('kv_heads' = 4 times d = 8 from 'wq'), got 'tensor<64xf32>'}}
  %0 = seq.multi_head_attention %x weights(%w, %wkv, %wkv, %w : tensor<64x64xf32>, tensor<32x64xf32>, tensor<32x64xf32>, tensor<64x64xf32>)
      biases(%b, %b, %b, %b : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
      {heads = 8 : i64, kv_heads = 4 : i64} : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @mha_lengths(%x: tensor<2x?x64xf32>, %w: tensor<64x64xf32>, %l: tensor<2x1xi32>) {
  // expected-error @+1 {{'lengths' expected rank 1 ([batch]), got 'tensor<2x1xi32>'}}
  %0 = seq.multi_head_attention %x weights(%w, %w, %w, %w : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
      lengths(%l : tensor<2x1xi32>) {heads = 4 : i64, kv_heads = 4 : i64} : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
  return
}

// -----

func.func @mha_rope_theta(%x: tensor<?x?x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{expected positive 'rope_theta', got 0.000000e+00}}
  %0 = seq.multi_head_attention %x weights(%w, %w, %w, %w : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
      {heads = 4 : i64, kv_heads = 4 : i64, rope_theta = 0.0 : f64} : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @mha_rope_odd_head_dim(%x: tensor<?x?x60xf32>, %w: tensor<60x60xf32>) {
  // expected-error @+1 {{expected an even head dim with 'rope_theta', got d = 15 (dim 0 of 'wq' over 'heads')}}
  %0 = seq.multi_head_attention %x weights(%w, %w, %w, %w : tensor<60x60xf32>, tensor<60x60xf32>, tensor<60x60xf32>, tensor<60x60xf32>)
      {heads = 4 : i64, kv_heads = 4 : i64, rope_theta = 1.0e4 : f64} : tensor<?x?x60xf32> -> tensor<?x?x60xf32>
  return
}

// -----

func.func @mha_causal_cross(%x: tensor<1x4x64xf32>, %m: tensor<1x8x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{expected n_q = n_k with mask #seq.mask<causal = true> (queries and keys index the same positions), got n_q = 4 and n_k = 8}}
  %0 = seq.multi_head_attention %x kv(%m : tensor<1x8x64xf32>) weights(%w, %w, %w, %w : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
      {heads = 4 : i64, kv_heads = 4 : i64, mask = #seq.mask<causal = true>} : tensor<1x4x64xf32> -> tensor<1x4x64xf32>
  return
}

// -----

func.func @mha_result(%x: tensor<?x?x64xf32>, %w: tensor<64x64xf32>) {
  // expected-error @+1 {{result expected shape [?, ?, 64] ([batch, n, model_dim]), got 'tensor<?x?x32xf32>'}}
  %0 = seq.multi_head_attention %x weights(%w, %w, %w, %w : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>)
      {heads = 4 : i64, kv_heads = 4 : i64} : tensor<?x?x64xf32> -> tensor<?x?x32xf32>
  return
}

//===----------------------------------------------------------------------===//
// Position encodings
//===----------------------------------------------------------------------===//

// -----

func.func @sinusoidal_pe_base(%n: index) {
  // expected-error @+1 {{expected positive 'base', got -1.000000e+04}}
  %0 = seq.sinusoidal_pe %n {base = -1.0e4 : f64} : tensor<?x64xf32>
  return
}

// -----

func.func @sinusoidal_pe_rank(%n: index) {
  // expected-error @+1 {{result expected rank 2 ([length, d]), got 'tensor<?xf32>'}}
  %0 = seq.sinusoidal_pe %n : tensor<?xf32>
  return
}

// -----

func.func @sinusoidal_pe_odd(%n: index) {
  // expected-error @+1 {{result expected a static even d (dim 1), got 'tensor<?x63xf32>'}}
  %0 = seq.sinusoidal_pe %n : tensor<?x63xf32>
  return
}

// -----

func.func @sinusoidal_pe_dynamic(%n: index) {
  // expected-error @+1 {{result expected a static even d (dim 1), got 'tensor<?x?xf32>'}}
  %0 = seq.sinusoidal_pe %n : tensor<?x?xf32>
  return
}

// -----

func.func @rope_theta(%x: tensor<?x8x?x64xf32>) {
  // expected-error @+1 {{expected positive 'theta', got -1.000000e+00}}
  %0 = seq.rope %x {theta = -1.0 : f64} : tensor<?x8x?x64xf32>
  return
}

// -----

func.func @rope_rank(%x: tensor<?x?x64xf32>) {
  // expected-error @+1 {{'input' expected rank 4 ([batch, heads, n, d]), got 'tensor<?x?x64xf32>'}}
  %0 = seq.rope %x : tensor<?x?x64xf32>
  return
}

// -----

func.func @rope_rotary_dims_odd(%x: tensor<?x8x?x64xf32>) {
  // expected-error @+1 {{expected positive even 'rotary_dims', got 15}}
  %0 = seq.rope %x {rotary_dims = 15 : i64} : tensor<?x8x?x64xf32>
  return
}

// -----

func.func @rope_rotary_dims_too_large(%x: tensor<?x8x?x64xf32>) {
  // expected-error @+1 {{expected 'rotary_dims' at most d = 64 (dim 3 of 'input'), got 128}}
  %0 = seq.rope %x {rotary_dims = 128 : i64} : tensor<?x8x?x64xf32>
  return
}

// -----

func.func @rope_offsets_batch(%x: tensor<2x8x?x64xf32>, %o: tensor<3xi32>) {
  // expected-error @+1 {{'offsets' expected shape [batch] with batch = 2 (dim 0 of 'input'), got 'tensor<3xi32>'}}
  %0 = seq.rope %x offsets(%o : tensor<3xi32>) : tensor<2x8x?x64xf32>
  return
}

// -----

func.func @rope_odd_head_dim(%x: tensor<?x8x?x63xf32>) {
  // expected-error @+1 {{'input' expected an even d (dim 3) when 'rotary_dims' is absent, got 'tensor<?x8x?x63xf32>'}}
  %0 = seq.rope %x : tensor<?x8x?x63xf32>
  return
}

// -----

func.func @alibi_dynamic() {
  // expected-error @+1 {{result expected a static shape [heads] with heads > 0, got 'tensor<?xf32>'}}
  %0 = seq.alibi : tensor<?xf32>
  return
}

//===----------------------------------------------------------------------===//
// Linear attention
//===----------------------------------------------------------------------===//

// -----

func.func @linear_attention_eps(%q: tensor<?x4x?x32xf32>) {
  // expected-error @+1 {{expected non-negative 'eps', got -1.000000e+00}}
  %0 = seq.linear_attention %q, %q, %q feature_map relu {eps = -1.0 : f64}
      : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x32xf32>
  return
}

// -----

func.func @linear_attention_key_length(%q: tensor<?x4x8x32xf32>, %k: tensor<?x4x9x32xf32>) {
  // expected-error @+1 {{'key' expected shape [batch, heads, n, d] with n = 8 (dim 2 of 'query'), got 'tensor<?x4x9x32xf32>'}}
  %0 = seq.linear_attention %q, %k, %k feature_map relu
      : tensor<?x4x8x32xf32>, tensor<?x4x9x32xf32>, tensor<?x4x9x32xf32> -> tensor<?x4x8x32xf32>
  return
}

// -----

func.func @linear_attention_state_not_causal(%q: tensor<?x4x?x32xf32>, %s0: tensor<?x4x32x32xf32>, %z0: tensor<?x4x32xf32>) {
  // expected-error @+1 {{expected 'causal' with a carried state (the non-causal form has no recurrence)}}
  %0 = seq.linear_attention %q, %q, %q state(%s0, %z0 : tensor<?x4x32x32xf32>, tensor<?x4x32xf32>) feature_map relu
      : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x32xf32>
  return
}

// -----

func.func @linear_attention_final_state_not_causal(%q: tensor<?x4x?x32xf32>) {
  // expected-error @+1 {{expected 'causal' with a carried state (the non-causal form has no recurrence)}}
  %0:3 = seq.linear_attention %q, %q, %q feature_map relu
      : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x32xf32>, tensor<?x4x32x32xf32>, tensor<?x4x32xf32>
  return
}

// -----

func.func @linear_attention_state_shape(%q: tensor<?x4x?x32xf32>, %v: tensor<?x4x?x16xf32>, %s0: tensor<?x4x16x32xf32>, %z0: tensor<?x4x32xf32>) {
  // expected-error @+1 {{'initial_state' expected shape [batch, heads, d, d_v] with d = 32 (dim 3 of 'query'), got 'tensor<?x4x16x32xf32>'}}
  %0 = seq.linear_attention %q, %q, %v state(%s0, %z0 : tensor<?x4x16x32xf32>, tensor<?x4x32xf32>) feature_map relu causal
      : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  return
}

// -----

func.func @linear_attention_normalizer_shape(%q: tensor<?x4x?x32xf32>, %s0: tensor<?x4x32x32xf32>, %z0: tensor<?x2x32xf32>) {
  // expected-error @+1 {{'initial_normalizer' expected shape [batch, heads, d] with heads = 4 (dim 1 of 'query'), got 'tensor<?x2x32xf32>'}}
  %0 = seq.linear_attention %q, %q, %q state(%s0, %z0 : tensor<?x4x32x32xf32>, tensor<?x2x32xf32>) feature_map relu causal
      : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x32xf32>
  return
}

// -----

func.func @linear_attention_final_state_shape(%q: tensor<?x4x?x32xf32>) {
  // expected-error @+1 {{'final_state' expected shape [?, 4, 32, 32] ([batch, heads, d, d_v]), got 'tensor<?x4x32x16xf32>'}}
  %0:3 = seq.linear_attention %q, %q, %q feature_map relu causal
      : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32> -> tensor<?x4x?x32xf32>, tensor<?x4x32x16xf32>, tensor<?x4x32xf32>
  return
}

// -----

func.func @linear_attention_state_pair(%q: tensor<?x4x?x32xf32>, %s0: tensor<?x4x32x32xf32>) {
  // expected-error @+1 {{expected both an initial state and an initial normalizer, or neither}}
  %0 = "seq.linear_attention"(%q, %q, %q, %s0) <{causal, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>, resultSegmentSizes = array<i32: 1, 0, 0>}>
      : (tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x32x32xf32>) -> tensor<?x4x?x32xf32>
  return
}

// -----

// Linear attention has no grouped-query form.
func.func @linear_attention_value_heads(%q: tensor<?x4x?x32xf32>, %v: tensor<?x2x?x32xf32>) {
  // expected-error @+1 {{'value' expected shape [batch, heads, n, d_v] with heads = 4 (dim 1 of 'query'), got 'tensor<?x2x?x32xf32>'}}
  %0 = seq.linear_attention %q, %q, %v feature_map relu
      : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x2x?x32xf32> -> tensor<?x4x?x32xf32>
  return
}

// -----

func.func @linear_attention_result(%q: tensor<?x4x?x32xf32>, %v: tensor<?x4x?x16xf32>) {
  // expected-error @+1 {{result expected shape [?, 4, ?, 16] ([batch, heads, n, d_v]), got 'tensor<?x4x?x32xf32>'}}
  %0 = seq.linear_attention %q, %q, %v feature_map relu causal
      : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x32xf32>
  return
}

//===----------------------------------------------------------------------===//
// State-space models
//===----------------------------------------------------------------------===//

// -----

func.func @hippo_dynamic() {
  // expected-error @+1 {{'a' expected a static shape [N, N] with N > 0, got 'tensor<?x?xf32>'}}
  %a, %b = seq.hippo : tensor<?x?xf32>, tensor<?xf32>
  return
}

// -----

func.func @hippo_square() {
  // expected-error @+1 {{'a' expected shape [N, N] with N = 16 (dim 0 of 'a'), got 'tensor<16x8xf32>'}}
  %a, %b = seq.hippo : tensor<16x8xf32>, tensor<16xf32>
  return
}

// -----

func.func @hippo_b() {
  // expected-error @+1 {{'b' expected shape [16] ([N]), got 'tensor<?xf32>'}}
  %a, %b = seq.hippo : tensor<16x16xf32>, tensor<?xf32>
  return
}

// -----

func.func @hippo_b_element_type() {
  // expected-error @+1 {{'b' expected element type 'f32' (of 'a'), got 'tensor<16xf64>'}}
  %a, %b = seq.hippo : tensor<16x16xf32>, tensor<16xf64>
  return
}

// -----

func.func @ssm_step(%u: tensor<?x?x8xf32>, %a: tensor<16x16xf32>, %b: tensor<8x16xf32>, %d: tensor<8xf32>) {
  // expected-error @+1 {{expected positive 'step', got 0.000000e+00}}
  %0 = seq.ssm %u, %a, %b, %b, %d discretization zoh {step = 0.0 : f64}
      : (tensor<?x?x8xf32>, tensor<16x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @ssm_a(%u: tensor<?x?x8xf32>, %a: tensor<16x8xf32>, %b: tensor<8x16xf32>, %d: tensor<8xf32>) {
  // expected-error @+1 {{'a' expected shape [N, N] with N = 16 (dim 0 of 'a'), got 'tensor<16x8xf32>'}}
  %0 = seq.ssm %u, %a, %b, %b, %d discretization zoh {step = 1.0e-2 : f64}
      : (tensor<?x?x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @ssm_b(%u: tensor<?x?x8xf32>, %a: tensor<16x16xf32>, %b: tensor<4x16xf32>, %c: tensor<8x16xf32>, %d: tensor<8xf32>) {
  // expected-error @+1 {{'b' expected shape [H, N] with H = 8 (dim 2 of 'input'), got 'tensor<4x16xf32>'}}
  %0 = seq.ssm %u, %a, %b, %c, %d discretization zoh {step = 1.0e-2 : f64}
      : (tensor<?x?x8xf32>, tensor<16x16xf32>, tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @ssm_c(%u: tensor<?x?x8xf32>, %a: tensor<16x16xf32>, %b: tensor<8x16xf32>, %c: tensor<8x12xf32>, %d: tensor<8xf32>) {
  // expected-error @+1 {{'c' expected shape [H, N] with N = 16 (dim 0 of 'a'), got 'tensor<8x12xf32>'}}
  %0 = seq.ssm %u, %a, %b, %c, %d discretization bilinear {step = 1.0e-2 : f64}
      : (tensor<?x?x8xf32>, tensor<16x16xf32>, tensor<8x16xf32>, tensor<8x12xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @ssm_d(%u: tensor<?x?x8xf32>, %a: tensor<16x16xf32>, %b: tensor<8x16xf32>, %d: tensor<16xf32>) {
  // expected-error @+1 {{'d' expected shape [H] with H = 8 (dim 2 of 'input'), got 'tensor<16xf32>'}}
  %0 = seq.ssm %u, %a, %b, %b, %d discretization zoh {step = 1.0e-2 : f64}
      : (tensor<?x?x8xf32>, tensor<16x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<?x?x8xf32>
  return
}

// -----

func.func @ssm_result(%u: tensor<?x?x8xf32>, %a: tensor<16x16xf32>, %b: tensor<8x16xf32>, %d: tensor<8xf32>) {
  // expected-error @+1 {{result expected shape [?, ?, 8] ([batch, L, H]), got 'tensor<?x?x16xf32>'}}
  %0 = seq.ssm %u, %a, %b, %b, %d discretization zoh {step = 1.0e-2 : f64}
      : (tensor<?x?x8xf32>, tensor<16x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x?x16xf32>
  return
}

// -----

func.func @selective_scan_initial_state(%u: tensor<2x?x64xf32>, %a: tensor<64x16xf32>, %b: tensor<2x?x16xf32>, %h0: tensor<2x64x8xf32>) {
  // expected-error @+1 {{'initial_state' expected shape [batch, D, N] with N = 16 (dim 1 of 'a'), got 'tensor<2x64x8xf32>'}}
  %0 = seq.selective_scan %u, %u, %a, %b, %b initial_state(%h0 : tensor<2x64x8xf32>)
      : tensor<2x?x64xf32>, tensor<2x?x64xf32>, tensor<64x16xf32>, tensor<2x?x16xf32>, tensor<2x?x16xf32> -> tensor<2x?x64xf32>
  return
}

// -----

func.func @selective_scan_initial_batch(%u: tensor<2x?x64xf32>, %a: tensor<64x16xf32>, %b: tensor<2x?x16xf32>, %h0: tensor<3x64x16xf32>) {
  // expected-error @+1 {{'initial_state' expected shape [batch, D, N] with batch = 2 (dim 0 of 'input'), got 'tensor<3x64x16xf32>'}}
  %0 = seq.selective_scan %u, %u, %a, %b, %b initial_state(%h0 : tensor<3x64x16xf32>)
      : tensor<2x?x64xf32>, tensor<2x?x64xf32>, tensor<64x16xf32>, tensor<2x?x16xf32>, tensor<2x?x16xf32> -> tensor<2x?x64xf32>
  return
}

// -----

func.func @selective_scan_final_state(%u: tensor<?x?x64xf32>, %a: tensor<64x16xf32>, %b: tensor<?x?x16xf32>) {
  // expected-error @+1 {{'final_state' expected shape [?, 64, 16] ([batch, D, N]), got 'tensor<?x16x64xf32>'}}
  %0, %1 = seq.selective_scan %u, %u, %a, %b, %b
      : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x64xf32>, tensor<?x16x64xf32>
  return
}

// -----

func.func @selective_scan_delta(%u: tensor<?x?x64xf32>, %dt: tensor<?x?x32xf32>, %a: tensor<64x16xf32>, %b: tensor<?x?x16xf32>) {
  // expected-error @+1 {{'delta' expected shape [batch, L, D] with D = 64 (dim 2 of 'input'), got 'tensor<?x?x32xf32>'}}
  %0 = seq.selective_scan %u, %dt, %a, %b, %b
      : tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @selective_scan_a(%u: tensor<?x?x64xf32>, %a: tensor<32x16xf32>, %b: tensor<?x?x16xf32>) {
  // expected-error @+1 {{'a' expected shape [D, N] with D = 64 (dim 2 of 'input'), got 'tensor<32x16xf32>'}}
  %0 = seq.selective_scan %u, %u, %a, %b, %b
      : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<32x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @selective_scan_b(%u: tensor<2x?x64xf32>, %a: tensor<64x16xf32>, %b: tensor<3x?x16xf32>) {
  // expected-error @+1 {{'b' expected shape [batch, L, N] with batch = 2 (dim 0 of 'input'), got 'tensor<3x?x16xf32>'}}
  %0 = seq.selective_scan %u, %u, %a, %b, %b
      : tensor<2x?x64xf32>, tensor<2x?x64xf32>, tensor<64x16xf32>, tensor<3x?x16xf32>, tensor<3x?x16xf32> -> tensor<2x?x64xf32>
  return
}

// -----

func.func @selective_scan_c(%u: tensor<?x?x64xf32>, %a: tensor<64x16xf32>, %b: tensor<?x?x16xf32>, %c: tensor<?x?x8xf32>) {
  // expected-error @+1 {{'c' expected shape [batch, L, N] with N = 16 (dim 1 of 'a'), got 'tensor<?x?x8xf32>'}}
  %0 = seq.selective_scan %u, %u, %a, %b, %c
      : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?x8xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @selective_scan_d(%u: tensor<?x?x64xf32>, %a: tensor<64x16xf32>, %b: tensor<?x?x16xf32>, %d: tensor<16xf32>) {
  // expected-error @+1 {{'d' expected shape [D] with D = 64 (dim 2 of 'input'), got 'tensor<16xf32>'}}
  %0 = seq.selective_scan %u, %u, %a, %b, %b D(%d : tensor<16xf32>)
      : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @selective_scan_z(%u: tensor<?x8x64xf32>, %a: tensor<64x16xf32>, %b: tensor<?x?x16xf32>, %z: tensor<?x9x64xf32>) {
  // expected-error @+1 {{'z' expected shape [batch, L, D] with L = 8 (dim 1 of 'input'), got 'tensor<?x9x64xf32>'}}
  %0 = seq.selective_scan %u, %u, %a, %b, %b z(%z : tensor<?x9x64xf32>)
      : tensor<?x8x64xf32>, tensor<?x8x64xf32>, tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x8x64xf32>
  return
}

// -----

func.func @selective_scan_delta_bias(%u: tensor<?x?x64xf32>, %a: tensor<64x16xf32>, %b: tensor<?x?x16xf32>, %db: tensor<?x64xf32>) {
  // expected-error @+1 {{'delta_bias' expected rank 1 ([D]), got 'tensor<?x64xf32>'}}
  %0 = seq.selective_scan %u, %u, %a, %b, %b delta_bias(%db : tensor<?x64xf32>)
      : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x64xf32>
  return
}

// -----

// B fixes the sequence length the result must carry.
func.func @selective_scan_result(%u: tensor<?x?x64xf32>, %a: tensor<64x16xf32>, %b: tensor<?x128x16xf32>) {
  // expected-error @+1 {{result expected shape [?, 128, 64] ([batch, L, D]), got 'tensor<?x?x64xf32>'}}
  %0 = seq.selective_scan %u, %u, %a, %b, %b
      : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64x16xf32>, tensor<?x128x16xf32>, tensor<?x128x16xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @conv1d_weight(%x: tensor<?x?x64xf32>, %w: tensor<32x4xf32>) {
  // expected-error @+1 {{'weight' expected shape [C, K] with C = 64 (dim 2 of 'input'), got 'tensor<32x4xf32>'}}
  %0 = seq.conv1d %x, %w : tensor<?x?x64xf32>, tensor<32x4xf32> -> tensor<?x?x64xf32>
  return
}

// -----

func.func @conv1d_bias(%x: tensor<?x?x64xf32>, %w: tensor<64x4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'bias' expected shape [C] with C = 64 (dim 2 of 'input'), got 'tensor<4xf32>'}}
  %0 = seq.conv1d %x, %w, %b : tensor<?x?x64xf32>, tensor<64x4xf32>, tensor<4xf32> -> tensor<?x?x64xf32>
  return
}

// -----

// The weight fixes the channel count of a dynamic input.
func.func @conv1d_result(%x: tensor<?x?x?xf32>, %w: tensor<64x4xf32>) {
  // expected-error @+1 {{result expected shape [?, ?, 64] ([batch, L, C]), got 'tensor<?x?x?xf32>'}}
  %0 = seq.conv1d %x, %w : tensor<?x?x?xf32>, tensor<64x4xf32> -> tensor<?x?x?xf32>
  return
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

// -----

func.func @cross_entropy_smoothing(%l: tensor<?x1000xf32>, %t: tensor<?xi32>) {
  // expected-error @+1 {{expected 'label_smoothing' in [0, 1], got 1.500000e+00}}
  %0 = seq.cross_entropy %l, %t {label_smoothing = 1.5 : f64} : tensor<?x1000xf32>, tensor<?xi32> -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_logits_rank(%l: tensor<f32>, %t: tensor<i32>) {
  // expected-error @+1 {{'logits' expected rank >= 1 ([..., C]), got 'tensor<f32>'}}
  %0 = seq.cross_entropy %l, %t : tensor<f32>, tensor<i32> -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_targets(%l: tensor<4x?x1000xf32>, %t: tensor<4x?x1000xi32>) {
  // expected-error @+1 {{'targets' expected shape [4, ?] (the shape of 'logits' without its last dim), got 'tensor<4x?x1000xi32>'}}
  %0 = seq.cross_entropy %l, %t : tensor<4x?x1000xf32>, tensor<4x?x1000xi32> -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_result(%l: tensor<?x1000xf32>, %t: tensor<?xi32>) {
  // expected-error @+1 {{result expected element type 'f32' (of 'logits'), got 'tensor<f64>'}}
  %0 = seq.cross_entropy %l, %t : tensor<?x1000xf32>, tensor<?xi32> -> tensor<f64>
  return
}

//===----------------------------------------------------------------------===//
// #seq.mask
//===----------------------------------------------------------------------===//

// -----

func.func @mask_negative_window(%s: tensor<?x?xf32>) {
  // expected-error @+1 {{expected a non-negative window, got -1}}
  %0 = seq.apply_mask %s {mask = #seq.mask<window = -1>} : tensor<?x?xf32> -> tensor<?x?xf32>
  return
}

// -----

func.func @mask_negative_global_tokens(%s: tensor<?x?xf32>) {
  // expected-error @+1 {{expected a non-negative number of global tokens, got -2}}
  %0 = seq.apply_mask %s {mask = #seq.mask<window = 4, global_tokens = -2>} : tensor<?x?xf32> -> tensor<?x?xf32>
  return
}

// -----

func.func @mask_global_tokens_without_window(%s: tensor<?x?xf32>) {
  // expected-error @+1 {{expected global tokens only with a sliding window}}
  %0 = seq.apply_mask %s {mask = #seq.mask<global_tokens = 2>} : tensor<?x?xf32> -> tensor<?x?xf32>
  return
}

// -----

func.func @cache_write_too_many_rows(%kc: tensor<1x2x8x16xf32>, %k: tensor<1x2x9x16xf32>, %pos: tensor<1xi32>) {
  // expected-error @+1 {{expected at most max_len = 8 (dim 2 of 'cache') new rows, got n = 9}}
  %0 = seq.cache_write %kc, %k, %pos : tensor<1x2x8x16xf32>, tensor<1x2x9x16xf32>, tensor<1xi32>
  return
}

// -----

func.func @cache_write_heads(%kc: tensor<1x2x8x16xf32>, %k: tensor<1x4x1x16xf32>, %pos: tensor<1xi32>) {
  // expected-error @+1 {{'values' expected shape [batch, heads, n, d] with heads = 2 (dim 1 of 'cache'), got 'tensor<1x4x1x16xf32>'}}
  %0 = seq.cache_write %kc, %k, %pos : tensor<1x2x8x16xf32>, tensor<1x4x1x16xf32>, tensor<1xi32>
  return
}

// -----

func.func @dequantize_format(%b: tensor<8x2x34xi8>) {
  // expected-error @+1 {{'seq.dequantize' op has unknown format 'q5_0' (expected one of "q8_0", "q4_0", "q4_1", "int8")}}
  %0 = seq.dequantize %b {format = "q5_0"} : tensor<8x2x34xi8> -> tensor<8x64xf32>
  return
}

// -----

func.func @dequantize_blocks(%b: tensor<8x2x18xi8>) {
  // expected-error @+1 {{'seq.dequantize' op blocks 'tensor<8x2x18xi8>' of q8_0 must be [out, in / 32, 34] for a result 'tensor<8x64xf32>'}}
  %0 = seq.dequantize %b {format = "q8_0"} : tensor<8x2x18xi8> -> tensor<8x64xf32>
  return
}

// -----

func.func @dequantize_int8_rows(%b: tensor<8x2x41xi8>) {
  // expected-error @+1 {{'seq.dequantize' op blocks 'tensor<8x2x41xi8>' of int8 must be [out, 1, in + 4] for a result 'tensor<8x37xf32>'}}
  %0 = seq.dequantize %b {format = "int8"} : tensor<8x2x41xi8> -> tensor<8x37xf32>
  return
}

// -----

func.func @dequantize_int8_bytes(%b: tensor<8x1x37xi8>) {
  // expected-error @+1 {{'seq.dequantize' op blocks 'tensor<8x1x37xi8>' of int8 must be [out, 1, in + 4] for a result 'tensor<8x37xf32>'}}
  %0 = seq.dequantize %b {format = "int8"} : tensor<8x1x37xi8> -> tensor<8x37xf32>
  return
}

// -----

func.func @dequantize_int8_use(%b: tensor<8x1x41xi8>) -> tensor<8x37xf32> {
  // expected-error @+1 {{'seq.dequantize' op result is used by 'seq.relu': a weight stored in int8 can only be the weight of a Linear (x @ W^T)}}
  %0 = seq.dequantize %b {format = "int8"} : tensor<8x1x41xi8> -> tensor<8x37xf32>
  %1 = seq.relu %0 : tensor<8x37xf32>
  return %1 : tensor<8x37xf32>
}

// -----

func.func @dequantize_use(%b: tensor<8x2x18xi8>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'seq.dequantize' op result is used by 'seq.relu': a weight stored in q4_0 can only be the weight of a Linear (x @ W^T) or the table of an embedding}}
  %0 = seq.dequantize %b {format = "q4_0"} : tensor<8x2x18xi8> -> tensor<8x64xf32>
  %1 = seq.relu %0 : tensor<8x64xf32>
  return %1 : tensor<8x64xf32>
}

// -----

func.func @dequantize_linear_input(%b: tensor<8x2x34xi8>, %w: tensor<4x64xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'seq.dequantize' op result is used by 'seq.linear': a weight stored in q8_0 can only be the weight of a Linear (x @ W^T) or the table of an embedding}}
  %0 = seq.dequantize %b {format = "q8_0"} : tensor<8x2x34xi8> -> tensor<8x64xf32>
  %1 = seq.linear %0, %w : tensor<8x64xf32>, tensor<4x64xf32> -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

func.func @state_store_not_argument(%h: tensor<1x4x2xf32>) {
  %0 = seq.exp %h : tensor<1x4x2xf32>
  // expected-error @+1 {{expected 'state' to be an argument of the enclosing function}}
  seq.state_store %h into %0 : tensor<1x4x2xf32>
  return
}

// -----

func.func @state_store_type(%h: tensor<1x4x3xf32>, %state: tensor<1x4x2xf32>) {
  // expected-error @+1 {{failed to verify that all of {value, state} have same type}}
  "seq.state_store"(%h, %state) : (tensor<1x4x3xf32>, tensor<1x4x2xf32>) -> ()
  return
}

// -----

func.func @state_store_read_after(%h: tensor<1x4x2xf32>, %state: tensor<1x4x2xf32>) -> tensor<1x4x2xf32> {
  // expected-error @+1 {{expected no use of 'state' after the store}}
  seq.state_store %h into %state : tensor<1x4x2xf32>
  %0 = seq.exp %state : tensor<1x4x2xf32>
  return %0 : tensor<1x4x2xf32>
}
