// RUN: seq-opt %s --seq-cpu-serialize-parallel-loops=min-work=4096 -split-input-file | FileCheck %s
// RUN: seq-opt %s --seq-cpu-serialize-parallel-loops=min-work=4096 -split-input-file \
// RUN:   -debug-only=seq-cpu-serialize-parallel-loops -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEBUG

// Large and dynamic outermost loops stay parallel; loops nested in them and
// small loops become scf.for nests.

// CHECK-LABEL: func.func @nested(
// CHECK:         scf.parallel (%{{.*}}) =
// CHECK-NOT:     scf.parallel
// CHECK:           scf.for
// CHECK:             scf.for
// DEBUG:      [seq-cpu-serialize-parallel-loops] parallel (work unbounded, min-work 4096): loc(
// DEBUG-NEXT: [seq-cpu-serialize-parallel-loops] serialized (nested in a parallel loop): loc(
func.func @nested(%m: memref<?x64x64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.parallel (%j, %k) = (%c0, %c0) to (%c64, %c64) step (%c1, %c1) {
      memref.store %zero, %m[%i, %j, %k] : memref<?x64x64xf32>
    }
  }
  return
}

// -----

// 16 * 8 iterations of 2 ops: below 4096, sequential.
// CHECK-LABEL: func.func @small(
// CHECK-NOT:     scf.parallel
// CHECK:         scf.for
// CHECK:           scf.for
// DEBUG-NEXT: [seq-cpu-serialize-parallel-loops] serialized (work 272, min-work 4096): loc(
func.func @small(%m: memref<16x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    scf.for %k = %c0 to %c8 step %c1 {
      memref.store %zero, %m[%i, %k] : memref<16x8xf32>
    }
  }
  return
}

// -----

// 64 * 64 iterations, each with an inner loop of 64: large enough.
// CHECK-LABEL: func.func @large(
// CHECK:         scf.parallel
// DEBUG-NEXT: [seq-cpu-serialize-parallel-loops] parallel (work 528384, min-work 4096): loc(
func.func @large(%m: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c64) step (%c1, %c1) {
    scf.for %k = %c0 to %c64 step %c1 {
      memref.store %zero, %m[%i, %j] : memref<64x64xf32>
    }
  }
  return
}

// -----

// A large parallel loop inside a sequential one (one step of a recurrence
// over a dynamic length) runs sequentially: a fork and join per step costs
// more than the step.
// CHECK-LABEL: func.func @in_sequence(
//   CHECK-NOT:   scf.parallel
//       CHECK:   scf.for
//       CHECK:     scf.for
//   CHECK-NOT:   scf.parallel
// DEBUG-NEXT: [seq-cpu-serialize-parallel-loops] serialized (inside a sequential loop): loc(
func.func @in_sequence(%m: memref<?x4096xf32>, %steps: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  %zero = arith.constant 0.0 : f32
  scf.for %t = %c0 to %steps step %c1 {
    scf.parallel (%j) = (%c0) to (%c4096) step (%c1) {
      memref.store %zero, %m[%t, %j] : memref<?x4096xf32>
    }
  }
  return
}

// -----

// Reductions are left to OpenMP.
// CHECK-LABEL: func.func @reduction(
// CHECK:         scf.parallel
// CHECK:           scf.reduce
// DEBUG-NEXT: [seq-cpu-serialize-parallel-loops] parallel (reductions): loc(
func.func @reduction(%m: memref<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.parallel (%i) = (%c0) to (%c16) step (%c1) init (%zero) -> f32 {
    %v = memref.load %m[%i] : memref<16xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  return %sum : f32
}
