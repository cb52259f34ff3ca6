// RUN: seq-opt %s --seq-nvptx-launch-to-loops | %host_to_llvm | not %run_main 2>&1 | FileCheck %s
// RUN: seq-opt %s --seq-nvptx-launch-to-loops=reverse-threads=true | %host_to_llvm | not %run_main 2>&1 | FileCheck %s

// The race checks see the reads of nvgpu.ldmatrix, and a barrier, not a
// warp-level op, ends the stretch in which two threads' accesses are
// concurrent: a warp stages a 16 x 16 f16 tile in workgroup memory and reads
// it as an A fragment without the barrier between. The interpreter runs the
// stores and the fragment load in separate loops over the threads (the
// right answer), but on a GPU the load could read the tile before the other
// lanes wrote it.
// CHECK: GPU interpreter: a thread reads workgroup memory that another thread of its block wrote since their last barrier (a missing gpu.barrier?), at {{.*}}gpu-interpret-ldmatrix-read-race.mlir:[[# @LINE + 23]]:11

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f16
  %out = memref.alloc() : memref<32xf16>
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c32, %dy = %c1, %dz = %c1)
             workgroup(%sa : memref<16x16xf16, #gpu.address_space<workgroup>>) {
    scf.for %i = %tx to %c256 step %c32 {
      %r = arith.divui %i, %c16 : index
      %q = arith.remui %i, %c16 : index
      memref.store %one, %sa[%r, %q] : memref<16x16xf16, #gpu.address_space<workgroup>>
    }
    // The missing gpu.barrier.
    %row = arith.remui %tx, %c16 : index
    %col = arith.muli %c8, %c0 : index
    %fa = nvgpu.ldmatrix %sa[%row, %col] {numTiles = 4 : i32, transpose = false}
        : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
    %e = vector.extract %fa[0, 0] : f16 from vector<4x2xf16>
    memref.store %e, %out[%tx] : memref<32xf16>
    gpu.terminator
  }
  return
}
