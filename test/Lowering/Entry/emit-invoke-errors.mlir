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
