// RUN: seq-opt %s --seq-nvptx-launch-to-loops | %host_to_llvm | %run_main | FileCheck %s
// RUN: seq-opt %s --seq-nvptx-launch-to-loops=reverse-threads=true | %host_to_llvm | %run_main | FileCheck %s

// Warp-level matrix products in the GPU interpreter, with PTX's fragment
// layouts (groupID g = lane / 4, threadID_in_group t = lane % 4): one warp
// computes D = A B + C for A [16, k], B [k, 8], C [16, 8]. Each kernel
// prints [sum of |D - host reference|, sum of D]; the inputs are small
// integers, so a right layout gives an error of exactly 0.

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

/// x[i, j] = v (1 + e) for v = ((3 i + 5 j) % 7) - 3.
func.func @fill(%m: memref<?x?xf32>, %e: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %three = arith.constant 3.0 : f32
  %one = arith.constant 1.0 : f32
  %rows = memref.dim %m, %c0 : memref<?x?xf32>
  %cols = memref.dim %m, %c1 : memref<?x?xf32>
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %cols step %c1 {
      %a = arith.muli %i, %c3 : index
      %b = arith.muli %j, %c5 : index
      %s = arith.addi %a, %b : index
      %r = arith.remui %s, %c7 : index
      %ri = arith.index_cast %r : index to i32
      %f = arith.sitofp %ri : i32 to f32
      %g = arith.subf %f, %three : f32
      %scale = arith.addf %e, %one : f32
      %v = arith.mulf %g, %scale : f32
      memref.store %v, %m[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

/// Prints [sum |d - (a b + c)|, sum d], with a and b rounded as `round`
/// says (0: as they are, 1: to integers, which the tf32 kernel's inputs
/// become).
func.func @report(%a: memref<?x?xf32>, %b: memref<?x?xf32>,
                  %c: memref<?x?xf32>, %d: memref<?x?xf32>, %round: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %k = memref.dim %a, %c1 : memref<?x?xf32>
  %n = memref.dim %b, %c1 : memref<?x?xf32>
  %r:2 = scf.for %i = %c0 to %m step %c1 iter_args(%e = %zero, %t = %zero) -> (f32, f32) {
    %r2:2 = scf.for %j = %c0 to %n step %c1 iter_args(%e1 = %e, %t1 = %t) -> (f32, f32) {
      %c_ij = memref.load %c[%i, %j] : memref<?x?xf32>
      %ref = scf.for %l = %c0 to %k step %c1 iter_args(%s = %c_ij) -> f32 {
        %p0 = memref.load %a[%i, %l] : memref<?x?xf32>
        %q0 = memref.load %b[%l, %j] : memref<?x?xf32>
        %pr = math.roundeven %p0 : f32
        %qr = math.roundeven %q0 : f32
        %p = arith.select %round, %pr, %p0 : f32
        %q = arith.select %round, %qr, %q0 : f32
        %pq = arith.mulf %p, %q : f32
        %s2 = arith.addf %s, %pq : f32
        scf.yield %s2 : f32
      }
      %g = memref.load %d[%i, %j] : memref<?x?xf32>
      %diff = arith.subf %g, %ref : f32
      %ad = math.absf %diff : f32
      %e2 = arith.addf %e1, %ad : f32
      %t2 = arith.addf %t1, %g : f32
      scf.yield %e2, %t2 : f32, f32
    }
    scf.yield %r2#0, %r2#1 : f32, f32
  }
  %out = memref.alloc() : memref<2xf32>
  memref.store %r#0, %out[%c0] : memref<2xf32>
  memref.store %r#1, %out[%c1] : memref<2xf32>
  %u = memref.cast %out : memref<2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

// f16 m16n8k16 with fragments from workgroup memory through ldmatrix: A's
// four 8 x 8 tiles (x4), B's two as column fragments (x2, transposed).
// CHECK-LABEL: sizes = [2]
// CHECK-NEXT: [0,  {{-?[1-9][0-9]*}}]
func.func @ldmatrix_f16() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %a = memref.alloc(%c16, %c16) : memref<?x?xf32>
  %b = memref.alloc(%c16, %c8) : memref<?x?xf32>
  %c = memref.alloc(%c16, %c8) : memref<?x?xf32>
  %d = memref.alloc(%c16, %c8) : memref<?x?xf32>
  call @fill(%a, %zero) : (memref<?x?xf32>, f32) -> ()
  call @fill(%b, %one) : (memref<?x?xf32>, f32) -> ()
  call @fill(%c, %zero) : (memref<?x?xf32>, f32) -> ()
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c32, %dy = %c1, %dz = %c1)
             workgroup(%sa : memref<16x16xf16, #gpu.address_space<workgroup>>,
                       %sb : memref<16x8xf16, #gpu.address_space<workgroup>>) {
    scf.for %i = %tx to %c256 step %c32 {
      %r = arith.divui %i, %c16 : index
      %q = arith.remui %i, %c16 : index
      %v = memref.load %a[%r, %q] : memref<?x?xf32>
      %h = arith.truncf %v : f32 to f16
      memref.store %h, %sa[%r, %q] : memref<16x16xf16, #gpu.address_space<workgroup>>
    }
    scf.for %i = %tx to %c128 step %c32 {
      %r = arith.divui %i, %c8 : index
      %q = arith.remui %i, %c8 : index
      %v = memref.load %b[%r, %q] : memref<?x?xf32>
      %h = arith.truncf %v : f32 to f16
      memref.store %h, %sb[%r, %q] : memref<16x8xf16, #gpu.address_space<workgroup>>
    }
    gpu.barrier
    // Lane l gives row l % 8 of A's tile l / 8: tiles (rows, columns)
    // [0:8, 0:8], [8:16, 0:8], [0:8, 8:16], [8:16, 8:16].
    %tile = arith.divui %tx, %c8 : index
    %row = arith.remui %tx, %c8 : index
    %half = arith.remui %tile, %c2 : index
    %rowOff = arith.muli %half, %c8 : index
    %rowA = arith.addi %row, %rowOff : index
    %colT = arith.divui %tile, %c2 : index
    %colA = arith.muli %colT, %c8 : index
    %fa = nvgpu.ldmatrix %sa[%rowA, %colA] {numTiles = 4 : i32, transpose = false}
        : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
    // Lane l < 16 gives row l of B (tiles [0:8], [8:16] of k).
    %rowB = arith.remui %tx, %c16 : index
    %fb = nvgpu.ldmatrix %sb[%rowB, %c0] {numTiles = 2 : i32, transpose = true}
        : memref<16x8xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
    %g = arith.divui %tx, %c4 : index
    %t = arith.remui %tx, %c4 : index
    %g8 = arith.addi %g, %c8 : index
    %col0 = arith.muli %t, %c2 : index
    %col1 = arith.addi %col0, %c1 : index
    %c00 = memref.load %c[%g, %col0] : memref<?x?xf32>
    %c01 = memref.load %c[%g, %col1] : memref<?x?xf32>
    %c10 = memref.load %c[%g8, %col0] : memref<?x?xf32>
    %c11 = memref.load %c[%g8, %col1] : memref<?x?xf32>
    %fc = vector.from_elements %c00, %c01, %c10, %c11 : vector<2x2xf32>
    %fd = nvgpu.mma.sync (%fa, %fb, %fc) {mmaShape = [16, 8, 16]}
        : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
    %d00 = vector.extract %fd[0, 0] : f32 from vector<2x2xf32>
    %d01 = vector.extract %fd[0, 1] : f32 from vector<2x2xf32>
    %d10 = vector.extract %fd[1, 0] : f32 from vector<2x2xf32>
    %d11 = vector.extract %fd[1, 1] : f32 from vector<2x2xf32>
    memref.store %d00, %d[%g, %col0] : memref<?x?xf32>
    memref.store %d01, %d[%g, %col1] : memref<?x?xf32>
    memref.store %d10, %d[%g8, %col0] : memref<?x?xf32>
    memref.store %d11, %d[%g8, %col1] : memref<?x?xf32>
    gpu.terminator
  }
  %false = arith.constant false
  call @report(%a, %b, %c, %d, %false) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, i1) -> ()
  return
}

// tf32 m16n8k8, fragments loaded from global memory as PTX lays them out:
// A (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4); B (t, g), (t + 4, g).
// A and B are integers times 1 + 2^-12, which tf32 (10 mantissa bits, the
// low 13 bits of the f32 ignored) makes integers again: the product matches
// the integers' exactly (the host's reference rounds them).
// CHECK-LABEL: sizes = [2]
// CHECK-NEXT: [0,  {{-?[1-9][0-9]*}}]
func.func @tf32() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %tiny = arith.constant 0.000244140625 : f32
  %a = memref.alloc(%c16, %c8) : memref<?x?xf32>
  %b = memref.alloc(%c8, %c8) : memref<?x?xf32>
  %c = memref.alloc(%c16, %c8) : memref<?x?xf32>
  %d = memref.alloc(%c16, %c8) : memref<?x?xf32>
  call @fill(%a, %tiny) : (memref<?x?xf32>, f32) -> ()
  call @fill(%b, %tiny) : (memref<?x?xf32>, f32) -> ()
  call @fill(%c, %zero) : (memref<?x?xf32>, f32) -> ()
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c32, %dy = %c1, %dz = %c1) {
    %g = arith.divui %tx, %c4 : index
    %t = arith.remui %tx, %c4 : index
    %g8 = arith.addi %g, %c8 : index
    %t4 = arith.addi %t, %c4 : index
    %a0 = memref.load %a[%g, %t] : memref<?x?xf32>
    %a1 = memref.load %a[%g8, %t] : memref<?x?xf32>
    %a2 = memref.load %a[%g, %t4] : memref<?x?xf32>
    %a3 = memref.load %a[%g8, %t4] : memref<?x?xf32>
    %fa = vector.from_elements %a0, %a1, %a2, %a3 : vector<4x1xf32>
    %b0 = memref.load %b[%t, %g] : memref<?x?xf32>
    %b1 = memref.load %b[%t4, %g] : memref<?x?xf32>
    %fb = vector.from_elements %b0, %b1 : vector<2x1xf32>
    %c2 = arith.constant 2 : index
    %col0 = arith.muli %t, %c2 : index
    %col1 = arith.addi %col0, %c1 : index
    %c00 = memref.load %c[%g, %col0] : memref<?x?xf32>
    %c01 = memref.load %c[%g, %col1] : memref<?x?xf32>
    %c10 = memref.load %c[%g8, %col0] : memref<?x?xf32>
    %c11 = memref.load %c[%g8, %col1] : memref<?x?xf32>
    %fc = vector.from_elements %c00, %c01, %c10, %c11 : vector<2x2xf32>
    %fd = nvgpu.mma.sync (%fa, %fb, %fc) {mmaShape = [16, 8, 8], tf32Enabled}
        : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
    %d00 = vector.extract %fd[0, 0] : f32 from vector<2x2xf32>
    %d01 = vector.extract %fd[0, 1] : f32 from vector<2x2xf32>
    %d10 = vector.extract %fd[1, 0] : f32 from vector<2x2xf32>
    %d11 = vector.extract %fd[1, 1] : f32 from vector<2x2xf32>
    memref.store %d00, %d[%g, %col0] : memref<?x?xf32>
    memref.store %d01, %d[%g, %col1] : memref<?x?xf32>
    memref.store %d10, %d[%g8, %col0] : memref<?x?xf32>
    memref.store %d11, %d[%g8, %col1] : memref<?x?xf32>
    gpu.terminator
  }
  %true = arith.constant true
  call @report(%a, %b, %c, %d, %true) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, i1) -> ()
  return
}

// A deliberately wrong fragment layout: f16 m16n8k16 with A's registers 1
// and 2 swapped (rows g + 8 taken for columns 2 t + 8): the product is
// wrong, and the error is not 0.
// CHECK-LABEL: sizes = [2]
// CHECK-NEXT: [{{[1-9][0-9]*}},
func.func @wrong_layout() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c9 = arith.constant 9 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc(%c16, %c16) : memref<?x?xf32>
  %b = memref.alloc(%c16, %c8) : memref<?x?xf32>
  %c = memref.alloc(%c16, %c8) : memref<?x?xf32>
  %d = memref.alloc(%c16, %c8) : memref<?x?xf32>
  call @fill(%a, %zero) : (memref<?x?xf32>, f32) -> ()
  call @fill(%b, %zero) : (memref<?x?xf32>, f32) -> ()
  call @fill(%c, %zero) : (memref<?x?xf32>, f32) -> ()
  gpu.launch blocks(%bx, %by, %bz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             threads(%tx, %ty, %tz) in (%dx = %c32, %dy = %c1, %dz = %c1) {
    %g = arith.divui %tx, %c4 : index
    %t = arith.remui %tx, %c4 : index
    %g8 = arith.addi %g, %c8 : index
    %k0 = arith.muli %t, %c2 : index
    %k1 = arith.addi %k0, %c1 : index
    %k8 = arith.addi %k0, %c8 : index
    %k9 = arith.addi %k0, %c9 : index
    %a00 = memref.load %a[%g, %k0] : memref<?x?xf32>
    %a01 = memref.load %a[%g, %k1] : memref<?x?xf32>
    %a10 = memref.load %a[%g8, %k0] : memref<?x?xf32>
    %a11 = memref.load %a[%g8, %k1] : memref<?x?xf32>
    %a20 = memref.load %a[%g, %k8] : memref<?x?xf32>
    %a21 = memref.load %a[%g, %k9] : memref<?x?xf32>
    %a30 = memref.load %a[%g8, %k8] : memref<?x?xf32>
    %a31 = memref.load %a[%g8, %k9] : memref<?x?xf32>
    // Registers 1 and 2 swapped: the mistake.
    %fa32 = vector.from_elements %a00, %a01, %a20, %a21, %a10, %a11, %a30, %a31 : vector<4x2xf32>
    %fa = arith.truncf %fa32 : vector<4x2xf32> to vector<4x2xf16>
    %b00 = memref.load %b[%k0, %g] : memref<?x?xf32>
    %b01 = memref.load %b[%k1, %g] : memref<?x?xf32>
    %b10 = memref.load %b[%k8, %g] : memref<?x?xf32>
    %b11 = memref.load %b[%k9, %g] : memref<?x?xf32>
    %fb32 = vector.from_elements %b00, %b01, %b10, %b11 : vector<2x2xf32>
    %fb = arith.truncf %fb32 : vector<2x2xf32> to vector<2x2xf16>
    %c00 = memref.load %c[%g, %k0] : memref<?x?xf32>
    %c01 = memref.load %c[%g, %k1] : memref<?x?xf32>
    %c10 = memref.load %c[%g8, %k0] : memref<?x?xf32>
    %c11 = memref.load %c[%g8, %k1] : memref<?x?xf32>
    %fc = vector.from_elements %c00, %c01, %c10, %c11 : vector<2x2xf32>
    %fd = nvgpu.mma.sync (%fa, %fb, %fc) {mmaShape = [16, 8, 16]}
        : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
    %d00 = vector.extract %fd[0, 0] : f32 from vector<2x2xf32>
    %d01 = vector.extract %fd[0, 1] : f32 from vector<2x2xf32>
    %d10 = vector.extract %fd[1, 0] : f32 from vector<2x2xf32>
    %d11 = vector.extract %fd[1, 1] : f32 from vector<2x2xf32>
    memref.store %d00, %d[%g, %k0] : memref<?x?xf32>
    memref.store %d01, %d[%g, %k1] : memref<?x?xf32>
    memref.store %d10, %d[%g8, %k0] : memref<?x?xf32>
    memref.store %d11, %d[%g8, %k1] : memref<?x?xf32>
    gpu.terminator
  }
  %false = arith.constant false
  call @report(%a, %b, %c, %d, %false) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, i1) -> ()
  return
}

func.func @main() {
  call @ldmatrix_f16() : () -> ()
  call @tf32() : () -> ()
  call @wrong_layout() : () -> ()
  return
}
