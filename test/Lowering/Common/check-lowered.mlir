// RUN: seq-opt %s --seq-check-lowered -split-input-file -verify-diagnostics

// The last pass of every target names the first op that has no LLVM IR
// translation.

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

// -----

// The NVPTX target's embedded kernels and their launches on LLVM values.
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target, "">]
  llvm.func @h(%arg0: i64) {
    gpu.launch_func @kernels::@k blocks in (%arg0, %arg0, %arg0) threads in (%arg0, %arg0, %arg0) : i64 args(%arg0 : i64)
    llvm.return
  }
}
