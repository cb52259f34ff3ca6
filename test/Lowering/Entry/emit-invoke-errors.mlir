// RUN: seq-opt %s --seq-emit-invoke -split-input-file -verify-diagnostics

// seq-emit-invoke needs seq-build-manifest's mark and the C interface.

// expected-error @+1 {{expected the module attribute 'seqc.entry' naming the model function (set by seq-build-manifest)}}
module {
}

// -----

// expected-error @+1 {{expected the C interface '_mlir_ciface_forward' of the model function in the LLVM dialect; run seq-emit-invoke after convert-func-to-llvm}}
module attributes {seqc.entry = @forward} {
  func.func @forward() {
    return
  }
}

// -----

module attributes {seqc.entry = @forward} {
  // expected-error @+1 {{parameter 1 of the C interface has type 'i64'; seqc_invoke passes only memref descriptors}}
  llvm.func @_mlir_ciface_forward(%arg0: !llvm.ptr, %arg1: i64) {
    llvm.return
  }
}

// -----

module attributes {seqc.entry = @forward} {
  llvm.func @_mlir_ciface_forward(%arg0: !llvm.ptr) {
    llvm.return
  }
  // expected-error @+1 {{the symbol 'seqc_invoke' is reserved for the model entry point}}
  llvm.func @seqc_invoke() {
    llvm.return
  }
}

// -----

// The preparation functions must compute each prepared value once: here
// prepared value 1 is computed by no function.

// expected-error @+1 {{expected the preparation functions to compute each of the 2 prepared values once, of the same ranks at every call of a function, from parameters among the 2 of the model}}
module attributes {seqc.entry = @forward, seqc.num_params = 2 : i64,
                   seqc.prepared_ranks = array<i64: 1, 1>,
                   seqc.prepare_params = array<i64>,
                   seqc.prepare_values = array<i64>,
                   seqc.prepare_groups = [{function = @__seqc_prepare_0,
                                           params = array<i64: 0>,
                                           values = array<i64: 0>}]} {
  llvm.func @_mlir_ciface_forward(%arg0: !llvm.ptr, %arg1: !llvm.ptr,
                                  %arg2: !llvm.ptr, %arg3: !llvm.ptr,
                                  %arg4: !llvm.ptr, %arg5: !llvm.ptr) {
    llvm.return
  }
  llvm.func @_mlir_ciface___seqc_prepare_0(%arg0: !llvm.ptr, %arg1: !llvm.ptr) {
    llvm.return
  }
}

// -----

// A group names the function it calls, with a C interface.

// expected-error @+1 {{expected each group of 'seqc.prepare_groups' to name a defined preparation function with a C interface and parameters (function), the parameters of each call (params) and the values each call computes (values)}}
module attributes {seqc.entry = @forward, seqc.num_params = 1 : i64,
                   seqc.prepared_ranks = array<i64: 1>,
                   seqc.prepare_params = array<i64>,
                   seqc.prepare_values = array<i64>,
                   seqc.prepare_groups = [{function = @__seqc_prepare_0,
                                           params = array<i64: 0>,
                                           values = array<i64: 0>}]} {
  llvm.func @_mlir_ciface_forward(%arg0: !llvm.ptr, %arg1: !llvm.ptr,
                                  %arg2: !llvm.ptr) {
    llvm.return
  }
}
