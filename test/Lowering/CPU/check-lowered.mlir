// RUN: seq-opt %s --seq-cpu-check-lowered -split-input-file -verify-diagnostics

// The last CPU pass names the first op that has no LLVM IR translation.

module {
  llvm.func @f(%arg0: i64) -> i64 {
    // expected-error @+1 {{'arith.addi' survived the lowering to the LLVM dialect}}
    %0 = arith.addi %arg0, %arg0 : i64
    llvm.return %0 : i64
  }
}

// -----

// LLVM and OpenMP ops are what the translation accepts.
module {
  llvm.func @g(%arg0: i64) -> i64 {
    omp.parallel {
      omp.terminator
    }
    llvm.return %arg0 : i64
  }
}
