// RUN: seq-opt %s --seq-hoist-preparation=remarks -split-input-file -verify-diagnostics | FileCheck %s

// Computations on parameters alone move into @__seqc_prepare; the model
// function takes their values after its parameters. What depends on an
// input stays, and so do metadata ops (the reshape) on the way.

// CHECK-LABEL: module attributes
// CHECK-SAME:    seqc.prepared_ranks = array<i64: 2>
// CHECK-LABEL: func.func @__seqc_prepare(
// CHECK-SAME:    %[[W:.*]]: tensor<4x6xf32>) -> tensor<4x6xf32>
// CHECK-SAME:    llvm.emit_c_interface
// CHECK:         %[[E:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[W]] :
// CHECK:           math.exp
// CHECK:         return %[[E]]
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[X:.*]]: tensor<6x4xf32>, %{{.*}}: tensor<4x6xf32>, %[[P:.*]]: tensor<4x6xf32>)
// CHECK-NOT:     math.exp
// CHECK:         tensor.collapse_shape %[[P]]
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[X]], %{{.*}} :
// CHECK-NOT:     math.exp
// CHECK:         return
#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {seqc.entry = @forward, seqc.num_inputs = 1 : i64,
                   seqc.num_params = 1 : i64} {
  func.func @forward(%x: tensor<6x4xf32>, %w: tensor<4x6xf32>)
      -> tensor<6x4xf32> {
    %empty = tensor.empty() : tensor<4x6xf32>
    // expected-remark @+1 {{computed once, when the weights are bound: prepared value 0 of type 'tensor<4x6xf32>'}}
    %e = linalg.generic {indexing_maps = [#id, #id],
                         iterator_types = ["parallel", "parallel"]}
        ins(%w : tensor<4x6xf32>) outs(%empty : tensor<4x6xf32>) {
    ^bb0(%a: f32, %b: f32):
      %0 = math.exp %a : f32
      linalg.yield %0 : f32
    } -> tensor<4x6xf32>
    %flat = tensor.collapse_shape %e [[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
    %out = tensor.empty() : tensor<6x4xf32>
    %y = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d1 * 6 + d0)>, #id],
                         iterator_types = ["parallel", "parallel"]}
        ins(%x, %flat : tensor<6x4xf32>, tensor<24xf32>)
        outs(%out : tensor<6x4xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %0 = arith.mulf %a, %b : f32
      linalg.yield %0 : f32
    } -> tensor<6x4xf32>
    return %y : tensor<6x4xf32>
  }
}

// -----

// A value on the way to a result stays in the model function, even when it
// depends on parameters alone: an output must be a fresh buffer the caller
// owns. Nothing is prepared, and the signature is unchanged.

// CHECK-LABEL: module attributes
// CHECK-NOT:     seqc.prepared_ranks
// CHECK-NOT:   __seqc_prepare
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK:         math.exp
#id1 = affine_map<(d0) -> (d0)>
module attributes {seqc.entry = @forward, seqc.num_inputs = 1 : i64,
                   seqc.num_params = 1 : i64} {
  func.func @forward(%x: tensor<4xf32>, %w: tensor<4xf32>)
      -> (tensor<4xf32>, tensor<4xf32>) {
    %empty = tensor.empty() : tensor<4xf32>
    %e = linalg.generic {indexing_maps = [#id1, #id1],
                         iterator_types = ["parallel"]}
        ins(%w : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %0 = math.exp %a : f32
      linalg.yield %0 : f32
    } -> tensor<4xf32>
    return %e, %x : tensor<4xf32>, tensor<4xf32>
  }
}

// -----

// A fill of a parameter-sized buffer, and a computation that reads an input,
// are not prepared.

// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>) -> tensor<4xf32>
// CHECK:         linalg.fill
// CHECK:         linalg.generic
#id2 = affine_map<(d0) -> (d0)>
module attributes {seqc.entry = @forward, seqc.num_inputs = 1 : i64,
                   seqc.num_params = 1 : i64} {
  func.func @forward(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<4xf32>
    %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
    %y = linalg.generic {indexing_maps = [#id2, #id2, #id2],
                         iterator_types = ["parallel"]}
        ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%fill : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %0 = arith.mulf %a, %b : f32
      %1 = arith.addf %0, %c : f32
      linalg.yield %1 : f32
    } -> tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

// Without the entry attributes of seq-build-manifest, nothing happens.

// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %{{.*}}: tensor<4xf32>) -> tensor<4xf32>
// CHECK:         math.exp
#id3 = affine_map<(d0) -> (d0)>
module {
  func.func @forward(%w: tensor<4xf32>) -> tensor<4xf32> {
    %empty = tensor.empty() : tensor<4xf32>
    %e = linalg.generic {indexing_maps = [#id3, #id3],
                         iterator_types = ["parallel"]}
        ins(%w : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %0 = math.exp %a : f32
      linalg.yield %0 : f32
    } -> tensor<4xf32>
    %y = arith.addf %e, %e : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

// Values computed alike from parameters of their own (the exponential of
// %w0 and of %w1) share one function, @__seqc_prepare_0, which
// seq-emit-invoke calls once for each from a table of their parameters.
// Two values computed from one intermediate (%t) stay together in
// @__seqc_prepare, which takes only the parameter they read.

// CHECK-LABEL: module attributes
// CHECK-SAME:    seqc.prepare_groups = [{function = @__seqc_prepare_0, params = array<i64: 0, 1>, values = array<i64: 0, 1>}]
// CHECK-SAME:    seqc.prepare_params = array<i64: 2>
// CHECK-SAME:    seqc.prepare_values = array<i64: 2, 3>
// CHECK-SAME:    seqc.prepared_ranks = array<i64: 1, 1, 1, 1>
// CHECK-LABEL: func.func @__seqc_prepare_0(
// CHECK-SAME:    %[[W:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-SAME:    llvm.emit_c_interface
// CHECK:         %[[E:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[W]] :
// CHECK:           math.exp
// CHECK:         return %[[E]]
// CHECK-NOT:   func.func @__seqc_prepare_1
// CHECK-LABEL: func.func @__seqc_prepare(
// CHECK-SAME:    %[[W2:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK:         %[[T:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[W2]] :
// CHECK:         %[[A:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[T]] :
// CHECK:           math.absf
// CHECK:         %[[B:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[T]] :
// CHECK:           arith.negf
// CHECK:         return %[[A]], %[[B]]
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>) -> tensor<4xf32>
#id5 = affine_map<(d0) -> (d0)>
module attributes {seqc.entry = @forward, seqc.num_inputs = 1 : i64,
                   seqc.num_params = 3 : i64} {
  func.func @forward(%x: tensor<4xf32>, %w0: tensor<4xf32>,
                     %w1: tensor<4xf32>, %w2: tensor<4xf32>) -> tensor<4xf32> {
    %empty = tensor.empty() : tensor<4xf32>
    // expected-remark @+1 {{prepared value 0 of type 'tensor<4xf32>'}}
    %e0 = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel"]}
        ins(%w0 : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %0 = math.exp %a : f32
      linalg.yield %0 : f32
    } -> tensor<4xf32>
    // expected-remark @+1 {{prepared value 1 of type 'tensor<4xf32>'}}
    %e1 = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel"]}
        ins(%w1 : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %0 = math.exp %a : f32
      linalg.yield %0 : f32
    } -> tensor<4xf32>
    %t = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel"]}
        ins(%w2 : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %0 = math.exp %a : f32
      linalg.yield %0 : f32
    } -> tensor<4xf32>
    // expected-remark @+1 {{prepared value 2 of type 'tensor<4xf32>'}}
    %abs = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel"]}
        ins(%t : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %0 = math.absf %a : f32
      linalg.yield %0 : f32
    } -> tensor<4xf32>
    // expected-remark @+1 {{prepared value 3 of type 'tensor<4xf32>'}}
    %neg = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel"]}
        ins(%t : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %0 = arith.negf %a : f32
      linalg.yield %0 : f32
    } -> tensor<4xf32>
    %out = tensor.empty() : tensor<4xf32>
    %y = linalg.generic {indexing_maps = [#id5, #id5, #id5, #id5, #id5, #id5],
                         iterator_types = ["parallel"]}
        ins(%x, %e0, %e1, %abs, %neg : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
        outs(%out : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32, %d: f32, %e: f32, %f: f32):
      %0 = arith.mulf %a, %b : f32
      %1 = arith.mulf %0, %c : f32
      %2 = arith.mulf %1, %d : f32
      %3 = arith.mulf %2, %e : f32
      linalg.yield %3 : f32
    } -> tensor<4xf32>
    return %y : tensor<4xf32>
  }
}
