// RUN: seq-opt %s --seq-hoist-preparation=remarks -split-input-file -verify-diagnostics | FileCheck %s
// RUN: seq-opt %s --seq-hoist-preparation=remarks -split-input-file -verify-diagnostics \
// RUN:   -debug-only=seq-hoist-preparation -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEBUG

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

// Values computed alike from parameters of their own (the exponentials
// of %w0 and %w1) share one function, @__seqc_prepare_0, which
// seq-emit-invoke calls once for each from a table of their parameters.
// Values computed from one intermediate (the absolute value and the
// negation of exp(%w2)) are computed by one call, and calls alike (those of
// %w3) share a function too: @__seqc_prepare_1 returns both. A value
// computed like no other (the square root of %w4) or from constants alone
// (the exponential of %table) stays in @__seqc_prepare, which takes only
// the parameters it reads.

// The trace says which function computes each value, and why.
// DEBUG:      [seq-hoist-preparation] prepared value 7 reads no parameter: computed by @__seqc_prepare
// DEBUG-NEXT: [seq-hoist-preparation] @__seqc_prepare_0 computes 1 prepared value(s) from 1 parameter(s), 2 times: prepared values 0 1
// DEBUG-NEXT: [seq-hoist-preparation] @__seqc_prepare_1 computes 2 prepared value(s) from 1 parameter(s), 2 times: prepared values 2 3 4 5
// DEBUG-NEXT: [seq-hoist-preparation] prepared value 6 is computed like no other: computed by @__seqc_prepare
// DEBUG-NEXT: [seq-hoist-preparation] @__seqc_prepare takes 1 parameters and computes 2 values with 4 ops

// CHECK-LABEL: module attributes
// CHECK-SAME:    seqc.prepare_groups = [{function = @__seqc_prepare_0, params = array<i64: 0, 1>, values = array<i64: 0, 1>}, {function = @__seqc_prepare_1, params = array<i64: 2, 3>, values = array<i64: 2, 3, 4, 5>}]
// CHECK-SAME:    seqc.prepare_params = array<i64: 4>
// CHECK-SAME:    seqc.prepare_values = array<i64: 6, 7>
// CHECK-SAME:    seqc.prepared_ranks = array<i64: 1, 1, 1, 1, 1, 1, 1, 1>
// CHECK-LABEL: func.func @__seqc_prepare_0(
// CHECK-SAME:    %[[W:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-SAME:    llvm.emit_c_interface
// CHECK:         %[[E:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[W]] :
// CHECK:           math.exp
// CHECK:         return %[[E]]
// CHECK-LABEL: func.func @__seqc_prepare_1(
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
// CHECK-NOT:   func.func @__seqc_prepare_2
// CHECK-LABEL: func.func @__seqc_prepare(
// CHECK-SAME:    %[[W4:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK:         %[[S:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[W4]] :
// CHECK:           math.sqrt
// CHECK:         %[[C:.*]] = linalg.generic
// CHECK:           math.exp
// CHECK:         return %[[S]], %[[C]]
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    -> tensor<4xf32>
#id5 = affine_map<(d0) -> (d0)>
module attributes {seqc.entry = @forward, seqc.num_inputs = 1 : i64,
                   seqc.num_params = 5 : i64} {
  func.func @forward(%x: tensor<4xf32>, %w0: tensor<4xf32>, %w1: tensor<4xf32>,
                     %w2: tensor<4xf32>, %w3: tensor<4xf32>, %w4: tensor<4xf32>)
      -> tensor<4xf32> {
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
    %t2 = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel"]}
        ins(%w2 : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %0 = math.exp %a : f32
      linalg.yield %0 : f32
    } -> tensor<4xf32>
    // expected-remark @+1 {{prepared value 2 of type 'tensor<4xf32>'}}
    %abs2 = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel"]}
        ins(%t2 : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %0 = math.absf %a : f32
      linalg.yield %0 : f32
    } -> tensor<4xf32>
    // expected-remark @+1 {{prepared value 3 of type 'tensor<4xf32>'}}
    %neg2 = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel"]}
        ins(%t2 : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %0 = arith.negf %a : f32
      linalg.yield %0 : f32
    } -> tensor<4xf32>
    %t3 = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel"]}
        ins(%w3 : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %0 = math.exp %a : f32
      linalg.yield %0 : f32
    } -> tensor<4xf32>
    // expected-remark @+1 {{prepared value 4 of type 'tensor<4xf32>'}}
    %abs3 = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel"]}
        ins(%t3 : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %0 = math.absf %a : f32
      linalg.yield %0 : f32
    } -> tensor<4xf32>
    // expected-remark @+1 {{prepared value 5 of type 'tensor<4xf32>'}}
    %neg3 = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel"]}
        ins(%t3 : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %0 = arith.negf %a : f32
      linalg.yield %0 : f32
    } -> tensor<4xf32>
    // expected-remark @+1 {{prepared value 6 of type 'tensor<4xf32>'}}
    %s4 = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel"]}
        ins(%w4 : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %0 = math.sqrt %a : f32
      linalg.yield %0 : f32
    } -> tensor<4xf32>
    %table = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    // expected-remark @+1 {{prepared value 7 of type 'tensor<4xf32>'}}
    %c = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel"]}
        ins(%table : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %0 = math.exp %a : f32
      linalg.yield %0 : f32
    } -> tensor<4xf32>
    %out = tensor.empty() : tensor<4xf32>
    %y = linalg.generic {indexing_maps = [#id5, #id5, #id5, #id5, #id5, #id5, #id5, #id5, #id5, #id5],
                         iterator_types = ["parallel"]}
        ins(%x, %e0, %e1, %abs2, %neg2, %abs3, %neg3, %s4, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
        outs(%out : tensor<4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %a2: f32, %a3: f32, %a4: f32, %a5: f32, %a6: f32, %a7: f32, %a8: f32, %a9: f32):
      %m1 = arith.mulf %a0, %a1 : f32
      %m2 = arith.mulf %m1, %a2 : f32
      %m3 = arith.mulf %m2, %a3 : f32
      %m4 = arith.mulf %m3, %a4 : f32
      %m5 = arith.mulf %m4, %a5 : f32
      %m6 = arith.mulf %m5, %a6 : f32
      %m7 = arith.mulf %m6, %a7 : f32
      %m8 = arith.mulf %m7, %a8 : f32
      linalg.yield %m8 : f32
    } -> tensor<4xf32>
    return %y : tensor<4xf32>
  }
}
