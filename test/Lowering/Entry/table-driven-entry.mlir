// RUN: seq-opt %s --seq-lower-to-llvm -split-input-file | FileCheck %s
// RUN: seq-opt %s --seq-lower-to-llvm -split-input-file \
// RUN:   | awk '/^  llvm.func @seqc_(prepare|release)\(/ {name = $2; sub(/[(].*/, "", name); n = 0} name {n++} name && /^  }$/ {print name, n; name = ""}' \
// RUN:   | FileCheck %s --check-prefix=SIZE
// RUN: seq-opt %s --seq-lower-to-llvm -split-input-file -debug-only=seq-emit-invoke -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DEBUG

// The entry code is of constant size in the number of parameters: a model of
// two layers and one of five, each packing its layers' weights, get
// seqc_prepare and seqc_release of the same number of lines (SIZE), which
// differ only in their constants. seqc_prepare calls the one preparation
// function of the packed weights, @__seqc_prepare_0, in a loop over
// @__seqc_prepare_params_0 (the weights' indices in the parameters), and
// writes the r-th packed weight's descriptor into the block at 8 + r * 72;
// seqc_release walks @__seqc_prepared_offsets, the descriptors' offsets in
// the state, and frees each buffer that is neither a constant (0xdeadbeef)
// nor one an earlier descriptor holds.

// CHECK-LABEL: module attributes
// CHECK-SAME:    seqc.prepare_groups = [{function = @__seqc_prepare_0, params = array<i64: 0, 1>, values = array<i64: 0, 1>}]
// CHECK-SAME:    seqc.prepare_params = array<i64>, seqc.prepare_values = array<i64>
// CHECK:       llvm.mlir.global internal constant @__seqc_prepared_offsets(dense<[8, 80]> : tensor<2xi64>)
// CHECK:       llvm.mlir.global internal constant @__seqc_prepare_params_0(dense<[0, 1]> : tensor<2xi64>)
// Each layer's packed weight has a key of its own (its parameter differs).
// CHECK:       llvm.mlir.global internal constant @__seqc_prepared_table(dense<[2, 8, 80, 3, 3, [[K0:-?[0-9]+]], [[K1:-?[0-9]+]]]> : tensor<7xi64>)
// CHECK-NOT:   llvm.func {{.*}}@__seqc_prepare(
// CHECK-LABEL: llvm.func @seqc_prepare(
// CHECK-SAME:    %[[PARAMS:.*]]: !llvm.ptr) -> !llvm.ptr {
// CHECK:         %[[STATE:.*]] = llvm.call @malloc(
// CHECK:         llvm.br ^[[HEADER:.*]](%{{.*}} : i64)
// CHECK-NEXT:  ^[[HEADER]](%[[R:.*]]: i64):
// CHECK-NEXT:    %[[M:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT:    %[[LT:.*]] = llvm.icmp "ult" %[[R]], %[[M]] : i64
// CHECK-NEXT:    llvm.cond_br %[[LT]], ^[[BODY:.*]], ^[[DONE:.*]]
// CHECK-NEXT:  ^[[BODY]]:
// CHECK:         %[[OUT:.*]] = llvm.getelementptr inbounds %[[STATE]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK:         llvm.mlir.addressof @__seqc_prepare_params_0
// CHECK:         %[[INDEX:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK-NEXT:    %[[SLOT:.*]] = llvm.getelementptr inbounds %[[PARAMS]][%[[INDEX]]]
// CHECK-NEXT:    %[[W:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    llvm.call @_mlir_ciface___seqc_prepare_0(%[[OUT]], %[[W]])
// CHECK-NOT:     llvm.call
// CHECK:         llvm.br ^[[HEADER]]
// CHECK-NEXT:  ^[[DONE]]:
// CHECK-NEXT:    llvm.return %[[STATE]]
// CHECK-NEXT:  }
// CHECK-LABEL: llvm.func @seqc_release(
// CHECK:         %[[MARKER:.*]] = llvm.mlir.constant(3735928559 : i64)
// CHECK:         %[[COUNT:.*]] = llvm.mlir.constant(2 : i64)
// CHECK:         %[[OFFSETS:.*]] = llvm.mlir.addressof @__seqc_prepared_offsets
// CHECK:       ^[[LOOP:.*]](%[[I:.*]]: i64):
// CHECK-NEXT:    llvm.icmp "ult" %[[I]], %[[COUNT]]
// CHECK:         llvm.getelementptr inbounds %[[OFFSETS]][%[[I]]]
// CHECK:         %[[P:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[BITS:.*]] = llvm.ptrtoint %[[P]]
// CHECK:         llvm.icmp "ne" %[[BITS]], %[[MARKER]]
// CHECK:         llvm.call @free(%[[P]])
// CHECK-NOT:     llvm.call @free(%[[P]])
// CHECK:         llvm.br ^[[LOOP]]
// CHECK-LABEL: llvm.func @seqc_invoke(

// DEBUG:       [seq-emit-invoke] prepared block of 152 bytes: prepared descriptors at offsets 8 80
// DEBUG-NEXT:  [seq-emit-invoke] seqc_prepare calls @_mlir_ciface___seqc_prepare_0 2 times, on the parameters of @__seqc_prepare_params_0 (1 per call), into the block at 8 + 72 r

// SIZE:        @seqc_prepare [[PREPARE:[0-9]+]]
// SIZE-NEXT:   @seqc_release [[RELEASE:[0-9]+]]
module attributes {seq.model = "two_layers"} {
  func.func @forward(
      %x: tensor<?x16xf32> {seq.input = "x", seq.dims = ["n", 16]},
      %w0: tensor<16x16xf32> {seq.param = "w0"},
      %w1: tensor<16x16xf32> {seq.param = "w1"})
      -> (tensor<?x16xf32> {seq.output = "y", seq.dims = ["n", 16]}) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %n = tensor.dim %x, %c0 : tensor<?x16xf32>
    %empty = tensor.empty(%n) : tensor<?x16xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x16xf32>)
        -> tensor<?x16xf32>
    %h0 = linalg.matmul ins(%x, %w0 : tensor<?x16xf32>, tensor<16x16xf32>)
                        outs(%init : tensor<?x16xf32>) -> tensor<?x16xf32>
    %h1 = linalg.matmul ins(%h0, %w1 : tensor<?x16xf32>, tensor<16x16xf32>)
                        outs(%init : tensor<?x16xf32>) -> tensor<?x16xf32>
    return %h1 : tensor<?x16xf32>
  }
}

// -----

// CHECK-LABEL: module attributes
// CHECK-SAME:    seqc.prepare_groups = [{function = @__seqc_prepare_0, params = array<i64: 0, 1, 2, 3, 4>, values = array<i64: 0, 1, 2, 3, 4>}]
// CHECK-SAME:    seqc.prepare_params = array<i64>, seqc.prepare_values = array<i64>
// CHECK:       llvm.mlir.global internal constant @__seqc_prepared_offsets(dense<[8, 80, 152, 224, 296]> : tensor<5xi64>)
// CHECK:       llvm.mlir.global internal constant @__seqc_prepare_params_0(dense<[0, 1, 2, 3, 4]> : tensor<5xi64>)
// CHECK-NOT:   llvm.func {{.*}}@__seqc_prepare(
// CHECK-LABEL: llvm.func @seqc_prepare(
// CHECK-SAME:    %[[PARAMS:.*]]: !llvm.ptr) -> !llvm.ptr {
// CHECK:         %[[STATE:.*]] = llvm.call @malloc(
// CHECK:         llvm.br ^[[HEADER:.*]](%{{.*}} : i64)
// CHECK-NEXT:  ^[[HEADER]](%[[R:.*]]: i64):
// CHECK-NEXT:    %[[M:.*]] = llvm.mlir.constant(5 : i64) : i64
// CHECK-NEXT:    %[[LT:.*]] = llvm.icmp "ult" %[[R]], %[[M]] : i64
// CHECK-NEXT:    llvm.cond_br %[[LT]], ^[[BODY:.*]], ^[[DONE:.*]]
// CHECK-NEXT:  ^[[BODY]]:
// CHECK:         %[[OUT:.*]] = llvm.getelementptr inbounds %[[STATE]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK:         llvm.mlir.addressof @__seqc_prepare_params_0
// CHECK:         %[[INDEX:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK-NEXT:    %[[SLOT:.*]] = llvm.getelementptr inbounds %[[PARAMS]][%[[INDEX]]]
// CHECK-NEXT:    %[[W:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:    llvm.call @_mlir_ciface___seqc_prepare_0(%[[OUT]], %[[W]])
// CHECK-NOT:     llvm.call
// CHECK:         llvm.br ^[[HEADER]]
// CHECK-NEXT:  ^[[DONE]]:
// CHECK-NEXT:    llvm.return %[[STATE]]
// CHECK-NEXT:  }
// CHECK-LABEL: llvm.func @seqc_release(
// CHECK:         %[[MARKER:.*]] = llvm.mlir.constant(3735928559 : i64)
// CHECK:         %[[COUNT:.*]] = llvm.mlir.constant(5 : i64)
// CHECK:         %[[OFFSETS:.*]] = llvm.mlir.addressof @__seqc_prepared_offsets
// CHECK:       ^[[LOOP:.*]](%[[I:.*]]: i64):
// CHECK-NEXT:    llvm.icmp "ult" %[[I]], %[[COUNT]]
// CHECK:         llvm.getelementptr inbounds %[[OFFSETS]][%[[I]]]
// CHECK:         %[[P:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[BITS:.*]] = llvm.ptrtoint %[[P]]
// CHECK:         llvm.icmp "ne" %[[BITS]], %[[MARKER]]
// CHECK:         llvm.call @free(%[[P]])
// CHECK-NOT:     llvm.call @free(%[[P]])
// CHECK:         llvm.br ^[[LOOP]]
// CHECK-LABEL: llvm.func @seqc_invoke(

// DEBUG:       [seq-emit-invoke] prepared block of 368 bytes: prepared descriptors at offsets 8 80 152 224 296
// DEBUG-NEXT:  [seq-emit-invoke] seqc_prepare calls @_mlir_ciface___seqc_prepare_0 5 times, on the parameters of @__seqc_prepare_params_0 (1 per call), into the block at 8 + 72 r

// SIZE:        @seqc_prepare [[PREPARE]]
// SIZE-NEXT:   @seqc_release [[RELEASE]]
module attributes {seq.model = "five_layers"} {
  func.func @forward(
      %x: tensor<?x16xf32> {seq.input = "x", seq.dims = ["n", 16]},
      %w0: tensor<16x16xf32> {seq.param = "w0"},
      %w1: tensor<16x16xf32> {seq.param = "w1"},
      %w2: tensor<16x16xf32> {seq.param = "w2"},
      %w3: tensor<16x16xf32> {seq.param = "w3"},
      %w4: tensor<16x16xf32> {seq.param = "w4"})
      -> (tensor<?x16xf32> {seq.output = "y", seq.dims = ["n", 16]}) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %n = tensor.dim %x, %c0 : tensor<?x16xf32>
    %empty = tensor.empty(%n) : tensor<?x16xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x16xf32>)
        -> tensor<?x16xf32>
    %h0 = linalg.matmul ins(%x, %w0 : tensor<?x16xf32>, tensor<16x16xf32>)
                        outs(%init : tensor<?x16xf32>) -> tensor<?x16xf32>
    %h1 = linalg.matmul ins(%h0, %w1 : tensor<?x16xf32>, tensor<16x16xf32>)
                        outs(%init : tensor<?x16xf32>) -> tensor<?x16xf32>
    %h2 = linalg.matmul ins(%h1, %w2 : tensor<?x16xf32>, tensor<16x16xf32>)
                        outs(%init : tensor<?x16xf32>) -> tensor<?x16xf32>
    %h3 = linalg.matmul ins(%h2, %w3 : tensor<?x16xf32>, tensor<16x16xf32>)
                        outs(%init : tensor<?x16xf32>) -> tensor<?x16xf32>
    %h4 = linalg.matmul ins(%h3, %w4 : tensor<?x16xf32>, tensor<16x16xf32>)
                        outs(%init : tensor<?x16xf32>) -> tensor<?x16xf32>
    return %h4 : tensor<?x16xf32>
  }
}
