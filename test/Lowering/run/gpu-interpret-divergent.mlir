// RUN: seq-opt %s --seq-nvptx-launch-to-loops | %host_to_llvm | not %run_main 2>&1 | FileCheck %s

// A barrier under control flow that differs between the threads of a block
// (a loop of t iterations in thread t) is undefined on a GPU; the
// interpreter, which runs such a loop once for the block, checks that every
// thread computes thread 0's bounds and stops with a message if not.
// CHECK: GPU interpreter: the threads of a block disagree on the upper bound of the loop at {{.*}}gpu-interpret-divergent.mlir:[[# @LINE + 9]]:5, which holds a barrier, shuffle or reduction
// CHECK-NOT: unreachable

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c4, %dy = %c1, %dz = %c1) {
    scf.for %k = %c0 to %tx step %c1 {
      gpu.barrier
    }
    gpu.terminator
  }
  return
}
