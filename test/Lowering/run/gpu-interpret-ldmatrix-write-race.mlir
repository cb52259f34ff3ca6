// RUN: seq-opt %s --seq-nvptx-launch-to-loops | %host_to_llvm | not %run_main 2>&1 | FileCheck %s
// RUN: seq-opt %s --seq-nvptx-launch-to-loops=reverse-threads=true | %host_to_llvm | not %run_main 2>&1 | FileCheck %s

// A warp reads a tile of workgroup memory with nvgpu.ldmatrix, then
// overwrites it (the next step of a staged loop) without the barrier
// between: on a GPU a lane could overwrite rows another lane's fragment
// load has not read yet. The interpreter runs the fragment load and the
// stores in separate loops over the threads, and its race checks stop the
// first store that conflicts with another thread's read.
// CHECK: GPU interpreter: a thread writes workgroup memory that another thread of its block read or wrote since their last barrier (a missing gpu.barrier?), at {{.*}}gpu-interpret-ldmatrix-write-race.mlir:[[# @LINE + 29]]:7

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f16
  %two = arith.constant 2.0 : f16
  %out = memref.alloc() : memref<32xf16>
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c32, %dy = %c1, %dz = %c1)
             workgroup(%sa : memref<16x16xf16, #gpu.address_space<workgroup>>) {
    scf.for %i = %tx to %c256 step %c32 {
      %r = arith.divui %i, %c16 : index
      %q = arith.remui %i, %c16 : index
      memref.store %one, %sa[%r, %q] : memref<16x16xf16, #gpu.address_space<workgroup>>
    }
    gpu.barrier
    %row = arith.remui %tx, %c16 : index
    %fa = nvgpu.ldmatrix %sa[%row, %c0] {numTiles = 4 : i32, transpose = false}
        : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
    %e = vector.extract %fa[0, 0] : f16 from vector<4x2xf16>
    memref.store %e, %out[%tx] : memref<32xf16>
    // The missing gpu.barrier.
    scf.for %i = %tx to %c256 step %c32 {
      %r = arith.divui %i, %c16 : index
      %q = arith.remui %i, %c16 : index
      memref.store %two, %sa[%r, %q] : memref<16x16xf16, #gpu.address_space<workgroup>>
    }
    gpu.terminator
  }
  return
}
