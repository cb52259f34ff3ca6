// RUN: seq-opt %s --seq-nvptx-launch-to-loops | %host_to_llvm | %run_main | FileCheck %s
// RUN: seq-opt %s --seq-nvptx-launch-to-loops=reverse-threads=true | %host_to_llvm | %run_main | FileCheck %s

// The GPU interpreter runs the threads of a block together between
// barriers: kernels whose threads exchange data through workgroup memory,
// keep private buffers and loop-carried values across barriers, and meet at
// barriers inside loops and uniform branches give the same results with the
// threads of each phase run first to last and last to first.

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

func.func @print(%m: memref<?xf32>) {
  %u = memref.cast %m : memref<?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

/// x[i] = i * s.
func.func @iota(%n: index, %s: f32) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %v = arith.mulf %f, %s : f32
    memref.store %v, %x[%i] : memref<?xf32>
  }
  return %x : memref<?xf32>
}

// Each thread publishes x[t] and reads its neighbour's after the barrier:
// y[t] = x[t] + x[(t + 1) % 8], with x[t] = 5 t.
// CHECK-LABEL: sizes = [8]
// CHECK-NEXT: [5,  15,  25,  35,  45,  55,  65,  35]
func.func @shift() {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %five = arith.constant 5.0 : f32
  %x = call @iota(%c8, %five) : (index, f32) -> memref<?xf32>
  %y = memref.alloc(%c8) : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c8, %dy = %c1, %dz = %c1)
             workgroup(%sm : memref<8xf32, #gpu.address_space<workgroup>>) {
    %v = memref.load %x[%tx] : memref<?xf32>
    memref.store %v, %sm[%tx] : memref<8xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %n = arith.addi %tx, %c1 : index
    %m = arith.remui %n, %dx : index
    %w = memref.load %sm[%m] : memref<8xf32, #gpu.address_space<workgroup>>
    %s = arith.addf %w, %v : f32
    memref.store %s, %y[%tx] : memref<?xf32>
    gpu.terminator
  }
  call @print(%y) : (memref<?xf32>) -> ()
  return
}

// A tree reduction in workgroup memory, a barrier in each step of a loop:
// the sum of 0..63 by 64 threads (two warps), in each of 3 blocks, the
// block's id added.
// CHECK-LABEL: sizes = [3]
// CHECK-NEXT: [2016,  2017,  2018]
func.func @tree() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  %x = call @iota(%c64, %one) : (index, f32) -> memref<?xf32>
  %y = memref.alloc(%c3) : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c3, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c64, %dy = %c1, %dz = %c1)
             workgroup(%sm : memref<64xf32, #gpu.address_space<workgroup>>) {
    %v = memref.load %x[%tx] : memref<?xf32>
    memref.store %v, %sm[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    scf.for %k = %c0 to %c6 step %c1 {
      %s = arith.shrui %c32, %k : index
      %active = arith.cmpi ult, %tx, %s : index
      scf.if %active {
        %j = arith.addi %tx, %s : index
        %a = memref.load %sm[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
        %b = memref.load %sm[%j] : memref<64xf32, #gpu.address_space<workgroup>>
        %c = arith.addf %a, %b : f32
        memref.store %c, %sm[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
    }
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      %r = memref.load %sm[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      %bi = arith.index_cast %bx : index to i32
      %bf = arith.sitofp %bi : i32 to f32
      %t = arith.addf %r, %bf : f32
      memref.store %t, %y[%bx] : memref<?xf32>
    }
    gpu.terminator
  }
  call @print(%y) : (memref<?xf32>) -> ()
  return
}

// A private buffer written before a barrier and read after it keeps each
// thread's value; loop-carried values (swapped in each iteration, a barrier
// in each) stay the thread's: y[t] = t + 10 * 1 + 100 * (t + 2).
// CHECK-LABEL: sizes = [6]
// CHECK-NEXT: [210,  311,  412,  513,  614,  715]
func.func @privates() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ten = arith.constant 10.0 : f32
  %hundred = arith.constant 100.0 : f32
  %x = call @iota(%c6, %one) : (index, f32) -> memref<?xf32>
  %y = memref.alloc(%c6) : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c6, %dy = %c1, %dz = %c1) {
    %p = memref.alloca() : memref<2xf32>
    %v = memref.load %x[%tx] : memref<?xf32>
    memref.store %v, %p[%c0] : memref<2xf32>
    gpu.barrier
    %r:2 = scf.for %k = %c0 to %c3 step %c1 iter_args(%a = %v, %b = %zero) -> (f32, f32) {
      %a2 = arith.addf %a, %one : f32
      gpu.barrier
      scf.yield %b, %a2 : f32, f32
    }
    %q = memref.load %p[%c0] : memref<2xf32>
    %r0 = arith.mulf %r#0, %ten : f32
    %r1 = arith.mulf %r#1, %hundred : f32
    %s = arith.addf %q, %r0 : f32
    %t = arith.addf %s, %r1 : f32
    memref.store %t, %y[%tx] : memref<?xf32>
    gpu.terminator
  }
  call @print(%y) : (memref<?xf32>) -> ()
  return
}

// A branch on the block id (the same in every thread) holding a barrier,
// with a result: block 0 reads its neighbour's value, block 1 yields -1.
// CHECK-LABEL: sizes = [8]
// CHECK-NEXT: [1,  2,  3,  0,  -1,  -1,  -1,  -1]
func.func @branch() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  %minus = arith.constant -1.0 : f32
  %x = call @iota(%c4, %one) : (index, f32) -> memref<?xf32>
  %y = memref.alloc(%c8) : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c2, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c4, %dy = %c1, %dz = %c1)
             workgroup(%sm : memref<4xf32, #gpu.address_space<workgroup>>) {
    %is0 = arith.cmpi eq, %bx, %c0 : index
    %r = scf.if %is0 -> f32 {
      %v = memref.load %x[%tx] : memref<?xf32>
      memref.store %v, %sm[%tx] : memref<4xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %n = arith.addi %tx, %c1 : index
      %m = arith.remui %n, %dx : index
      %w = memref.load %sm[%m] : memref<4xf32, #gpu.address_space<workgroup>>
      scf.yield %w : f32
    } else {
      scf.yield %minus : f32
    }
    %base = arith.muli %bx, %dx : index
    %i = arith.addi %base, %tx : index
    memref.store %r, %y[%i] : memref<?xf32>
    gpu.terminator
  }
  call @print(%y) : (memref<?xf32>) -> ()
  return
}

// A tiled matrix product through workgroup memory, as CUDA's samples write
// it: 2 x 2 blocks of 4 x 4 threads, 4 x 4 tiles of A [8, 12] and B [12, 8]
// staged per step of the reduction, a barrier after the loads and one after
// the products. The result matches host loops exactly (small integers).
// CHECK-LABEL: sizes = [2]
// CHECK-NEXT: [0,  {{[1-9][0-9]*}}]
func.func @matmul() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %c12 = arith.constant 12 : index
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<8x12xf32>
  %b = memref.alloc() : memref<12x8xf32>
  %c = memref.alloc() : memref<8x8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %k = %c0 to %c12 step %c1 {
      %s = arith.addi %i, %k : index
      %m = arith.remui %s, %c5 : index
      %mi = arith.index_cast %m : index to i32
      %mf = arith.sitofp %mi : i32 to f32
      memref.store %mf, %a[%i, %k] : memref<8x12xf32>
      %t = arith.muli %k, %c3 : index
      %u = arith.addi %t, %i : index
      %v = arith.remui %u, %c4 : index
      %vi = arith.index_cast %v : index to i32
      %vf = arith.sitofp %vi : i32 to f32
      memref.store %vf, %b[%k, %i] : memref<12x8xf32>
    }
  }
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c2, %sy = %c2, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c4, %dy = %c4, %dz = %c1)
             workgroup(%as : memref<4x4xf32, #gpu.address_space<workgroup>>,
                       %bs : memref<4x4xf32, #gpu.address_space<workgroup>>) {
    %r0 = arith.muli %by, %c4 : index
    %row = arith.addi %r0, %ty : index
    %c0c = arith.muli %bx, %c4 : index
    %col = arith.addi %c0c, %tx : index
    %acc = scf.for %kt = %c0 to %c3 step %c1 iter_args(%acc0 = %zero) -> f32 {
      %k0 = arith.muli %kt, %c4 : index
      %ka = arith.addi %k0, %tx : index
      %kb = arith.addi %k0, %ty : index
      %av = memref.load %a[%row, %ka] : memref<8x12xf32>
      memref.store %av, %as[%ty, %tx] : memref<4x4xf32, #gpu.address_space<workgroup>>
      %bv = memref.load %b[%kb, %col] : memref<12x8xf32>
      memref.store %bv, %bs[%ty, %tx] : memref<4x4xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %sum = scf.for %k = %c0 to %c4 step %c1 iter_args(%s = %acc0) -> f32 {
        %p = memref.load %as[%ty, %k] : memref<4x4xf32, #gpu.address_space<workgroup>>
        %q = memref.load %bs[%k, %tx] : memref<4x4xf32, #gpu.address_space<workgroup>>
        %pq = arith.mulf %p, %q : f32
        %s2 = arith.addf %s, %pq : f32
        scf.yield %s2 : f32
      }
      gpu.barrier
      scf.yield %sum : f32
    }
    memref.store %acc, %c[%row, %col] : memref<8x8xf32>
    gpu.terminator
  }
  // [sum of |c - host product|, sum of c]
  %out = memref.alloc(%c2) : memref<?xf32>
  %r:2 = scf.for %i = %c0 to %c8 step %c1 iter_args(%e = %zero, %t = %zero) -> (f32, f32) {
    %r2:2 = scf.for %j = %c0 to %c8 step %c1 iter_args(%e1 = %e, %t1 = %t) -> (f32, f32) {
      %ref = scf.for %k = %c0 to %c12 step %c1 iter_args(%s = %zero) -> f32 {
        %p = memref.load %a[%i, %k] : memref<8x12xf32>
        %q = memref.load %b[%k, %j] : memref<12x8xf32>
        %pq = arith.mulf %p, %q : f32
        %s2 = arith.addf %s, %pq : f32
        scf.yield %s2 : f32
      }
      %g = memref.load %c[%i, %j] : memref<8x8xf32>
      %d = arith.subf %g, %ref : f32
      %ad = math.absf %d : f32
      %e2 = arith.addf %e1, %ad : f32
      %t2 = arith.addf %t1, %g : f32
      scf.yield %e2, %t2 : f32, f32
    }
    scf.yield %r2#0, %r2#1 : f32, f32
  }
  memref.store %r#0, %out[%c0] : memref<?xf32>
  memref.store %r#1, %out[%c1] : memref<?xf32>
  call @print(%out) : (memref<?xf32>) -> ()
  return
}

func.func @main() {
  call @shift() : () -> ()
  call @tree() : () -> ()
  call @privates() : () -> ()
  call @branch() : () -> ()
  call @matmul() : () -> ()
  return
}
