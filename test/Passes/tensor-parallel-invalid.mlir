// RUN: seq-opt %s --split-input-file --seq-tensor-parallel=ranks=4 --verify-diagnostics

// Four ranks cannot split two key/value heads (grouped-query attention keeps
// each key/value head with its query heads).
module attributes {seq.model = "m"} {
func.func @forward(%x: tensor<?x?x64xf32> {seq.dims = ["b", "n"], seq.input = "x"},
                   %wq: tensor<64x64xf32> {seq.param = "wq"},
                   %wk: tensor<32x64xf32> {seq.param = "wk"},
                   %wv: tensor<32x64xf32> {seq.param = "wv"},
                   %wo: tensor<64x64xf32> {seq.param = "wo"})
    -> (tensor<?x?x64xf32> {seq.dims = ["b", "n", 64], seq.output = "y"}) {
  %q0 = seq.linear %x, %wq : tensor<?x?x64xf32>, tensor<64x64xf32> -> tensor<?x?x64xf32>
  %q = seq.split_heads %q0 {heads = 4 : i64} : tensor<?x?x64xf32> -> tensor<?x4x?x16xf32>
  %k0 = seq.linear %x, %wk : tensor<?x?x64xf32>, tensor<32x64xf32> -> tensor<?x?x32xf32>
  %k = seq.split_heads %k0 {heads = 2 : i64} : tensor<?x?x32xf32> -> tensor<?x2x?x16xf32>
  %v0 = seq.linear %x, %wv : tensor<?x?x64xf32>, tensor<32x64xf32> -> tensor<?x?x32xf32>
  %v = seq.split_heads %v0 {heads = 2 : i64} : tensor<?x?x32xf32> -> tensor<?x2x?x16xf32>
  // expected-error @below {{--tensor-parallel=4 does not divide the key/value heads of this attention (2)}}
  %o = seq.attention %q, %k, %v : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x4x?x16xf32>
  %m = seq.merge_heads %o : tensor<?x4x?x16xf32> -> tensor<?x?x64xf32>
  %y = seq.linear %m, %wo : tensor<?x?x64xf32>, tensor<64x64xf32> -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}
}

// -----

// An MLP whose hidden width (6) four ranks do not divide.
module attributes {seq.model = "m"} {
func.func @forward(%x: tensor<?x?x8xf32> {seq.dims = ["b", "n"], seq.input = "x"},
                   %w1: tensor<6x8xf32> {seq.param = "w1"},
                   %w2: tensor<8x6xf32> {seq.param = "w2"})
    -> (tensor<?x?x8xf32> {seq.dims = ["b", "n", 8], seq.output = "y"}) {
  // expected-error @below {{--tensor-parallel=4 does not divide the output features of this projection (6)}}
  %h = seq.linear %x, %w1 : tensor<?x?x8xf32>, tensor<6x8xf32> -> tensor<?x?x6xf32>
  %g = seq.gelu %h : tensor<?x?x6xf32>
  %y = seq.linear %g, %w2 : tensor<?x?x6xf32>, tensor<8x6xf32> -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}
}
