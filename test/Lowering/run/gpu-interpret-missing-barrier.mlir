// RUN: seq-opt %s --seq-nvptx-launch-to-loops | %host_to_llvm | not %run_main 2>&1 | FileCheck %s --check-prefix=RACE-WRITE
// RUN: seq-opt %s --seq-nvptx-launch-to-loops=reverse-threads=true | %host_to_llvm | not %run_main 2>&1 | FileCheck %s --check-prefix=RACE-READ
// RUN: seq-opt %s --seq-nvptx-launch-to-loops=check-races=false | %host_to_llvm | %run_main | FileCheck %s --check-prefix=FORWARD
// RUN: seq-opt %s --seq-nvptx-launch-to-loops="check-races=false reverse-threads=true" | %host_to_llvm | %run_main | FileCheck %s --check-prefix=REVERSE

// A kernel missing a barrier fails in the interpreter: the shift of
// gpu-interpret-barriers.mlir (y[t] = x[t] + x[(t + 1) % 8], x[t] = 5 t + 1;
// right: 7, 17, ..., 67, 37) without the barrier between the writes to
// workgroup memory and the reads.
//
// The race checks stop it at the first access that another thread's access
// since the last barrier conflicts with: run first to last, thread 1's
// write to the slot thread 0 read; run last to first, thread 6's read of
// the slot thread 7 wrote.
// RACE-WRITE: GPU interpreter: a thread writes workgroup memory that another thread of its block read or wrote since their last barrier (a missing gpu.barrier?), at {{.*}}gpu-interpret-missing-barrier.mlir:[[# @LINE + 34]]:5
// RACE-READ: GPU interpreter: a thread reads workgroup memory that another thread of its block wrote since their last barrier (a missing gpu.barrier?), at {{.*}}gpu-interpret-missing-barrier.mlir:[[# @LINE + 37]]:10
//
// Without them, the answer is wrong in both orders: run first to last,
// each thread reads its neighbour's slot before the neighbour writes it
// (the zeros of the first phase); run last to first, the last thread reads
// slot 0 too early.
// FORWARD: [1,  6,  11,  16,  21,  26,  31,  37]
// REVERSE: [7,  17,  27,  37,  47,  57,  67,  36]

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %five = arith.constant 5.0 : f32
  %one = arith.constant 1.0 : f32
  %x = memref.alloc() : memref<8xf32>
  %y = memref.alloc() : memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %g = arith.mulf %f, %five : f32
    %v = arith.addf %g, %one : f32
    memref.store %v, %x[%i] : memref<8xf32>
  }
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c8, %dy = %c1, %dz = %c1)
             workgroup(%sm : memref<8xf32, #gpu.address_space<workgroup>>) {
    memref.store %zero, %sm[%tx] : memref<8xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %v = memref.load %x[%tx] : memref<8xf32>
    memref.store %v, %sm[%tx] : memref<8xf32, #gpu.address_space<workgroup>>
    // The missing gpu.barrier.
    %n = arith.addi %tx, %c1 : index
    %m = arith.remui %n, %dx : index
    %w = memref.load %sm[%m] : memref<8xf32, #gpu.address_space<workgroup>>
    %s = arith.addf %w, %v : f32
    memref.store %s, %y[%tx] : memref<8xf32>
    gpu.terminator
  }
  %u = memref.cast %y : memref<8xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
