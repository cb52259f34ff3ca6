// RUN: seq-opt %s --seq-nvptx-tile-contractions=tensor-cores=true --seq-nvptx-launch-to-loops | %host_to_llvm | %run_main | FileCheck %s
// RUN: seq-opt %s --seq-nvptx-tile-contractions=tensor-cores=true --seq-nvptx-launch-to-loops=reverse-threads=true | %host_to_llvm | %run_main | FileCheck %s
// RUN: seq-opt %s --seq-nvptx-tile-contractions=tensor-cores=true | FileCheck %s --check-prefix=KERNEL
// The copies' wait too lax: the products read tiles still being copied.
// RUN: seq-opt %s --seq-nvptx-tile-contractions=tensor-cores=true | sed 's/numGroups = 1 : i32/numGroups = 2 : i32/' | seq-opt --seq-nvptx-launch-to-loops | %host_to_llvm | not %run_main 2>&1 | FileCheck %s --check-prefix=LAX

// The tensor-core form of bf16 and f16 contractions accumulated in f32
// (seq-nvptx-tile-contractions with tensor-cores), run by the GPU
// interpreter with its warp matrix products, fragment loads, asynchronous
// copies, barriers and race checks: each case prints [sum of |out - host
// reference|, sum of out]. The inputs are small integers, whose products and
// sums f32 holds exactly, so any fragment, staging or edge mistake gives a
// non-zero error. The sizes cross the 64 x 64 block tiles and the 32-element
// reduction steps; those whose rows are multiples of 8 elements take the
// cp.async path (double buffered), the others the element copies. The
// operands' tiles are stored with the operand's innermost dimension as
// columns: A as [m][k] (x @ W) or [k][m] (x^T @ W, read by ldmatrix
// transposed), B as [k][n] (transposed) or [n][k] (a linear layer).

// The buffers of each tile: two where cp.async may run (dynamic strides).
// KERNEL-COUNT-3: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c128{{.*}} workgroup({{.*}}memref<2x{{64x40|32x72}}x{{bf16|f16}}, #gpu.address_space<workgroup>>, {{.*}}memref<2x{{32x72|64x40}}x{{bf16|f16}}, #gpu.address_space<workgroup>>)
// KERNEL-NOT: linalg.
// LAX: GPU interpreter: a thread reads workgroup memory that a cp.async (nvgpu.device_async_copy) is still writing

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

/// Prints [e, s].
func.func @print2(%e: f32, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %out = memref.alloc() : memref<2xf32>
  memref.store %e, %out[%c0] : memref<2xf32>
  memref.store %s, %out[%c1] : memref<2xf32>
  %u = memref.cast %out : memref<2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

/// ((3 i + 5 j + 11 b + salt) % 7) - 2.
func.func @value(%b: index, %i: index, %j: index, %salt: index) -> f32 {
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c11 = arith.constant 11 : index
  %two = arith.constant 2.0 : f32
  %x = arith.muli %i, %c3 : index
  %y = arith.muli %j, %c5 : index
  %z = arith.muli %b, %c11 : index
  %s0 = arith.addi %x, %y : index
  %s1 = arith.addi %s0, %z : index
  %s = arith.addi %s1, %salt : index
  %r = arith.remui %s, %c7 : index
  %ri = arith.index_cast %r : index to i32
  %f = arith.sitofp %ri : i32 to f32
  %v = arith.subf %f, %two : f32
  return %v : f32
}

func.func @fill_bf16(%m: memref<?x?xbf16>, %salt: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %m, %c0 : memref<?x?xbf16>
  %cols = memref.dim %m, %c1 : memref<?x?xbf16>
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %cols step %c1 {
      %v = func.call @value(%c0, %i, %j, %salt) : (index, index, index, index) -> f32
      %h = arith.truncf %v : f32 to bf16
      memref.store %h, %m[%i, %j] : memref<?x?xbf16>
    }
  }
  return
}

/// C = A B + C0 for bf16 A [m, k] and B [k, n] (linalg.matmul), C0 from
/// @value.
func.func @matmul_bf16(%m: index, %n: index, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc(%m, %k) : memref<?x?xbf16>
  %b = memref.alloc(%k, %n) : memref<?x?xbf16>
  %c = memref.alloc(%m, %n) : memref<?x?xf32>
  call @fill_bf16(%a, %c0) : (memref<?x?xbf16>, index) -> ()
  call @fill_bf16(%b, %c1) : (memref<?x?xbf16>, index) -> ()
  scf.for %i = %c0 to %m step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      %v = func.call @value(%c0, %i, %j, %c2) : (index, index, index, index) -> f32
      memref.store %v, %c[%i, %j] : memref<?x?xf32>
    }
  }
  linalg.matmul ins(%a, %b : memref<?x?xbf16>, memref<?x?xbf16>)
                outs(%c : memref<?x?xf32>)
  %r:2 = scf.for %i = %c0 to %m step %c1 iter_args(%e = %zero, %t = %zero) -> (f32, f32) {
    %r2:2 = scf.for %j = %c0 to %n step %c1 iter_args(%e1 = %e, %t1 = %t) -> (f32, f32) {
      %c_ij = func.call @value(%c0, %i, %j, %c2) : (index, index, index, index) -> f32
      %ref = scf.for %l = %c0 to %k step %c1 iter_args(%s = %c_ij) -> f32 {
        %p = memref.load %a[%i, %l] : memref<?x?xbf16>
        %q = memref.load %b[%l, %j] : memref<?x?xbf16>
        %pf = arith.extf %p : bf16 to f32
        %qf = arith.extf %q : bf16 to f32
        %pq = arith.mulf %pf, %qf : f32
        %s2 = arith.addf %s, %pq : f32
        scf.yield %s2 : f32
      }
      %g = memref.load %c[%i, %j] : memref<?x?xf32>
      %diff = arith.subf %g, %ref : f32
      %ad = math.absf %diff : f32
      %e2 = arith.addf %e1, %ad : f32
      %t2 = arith.addf %t1, %g : f32
      scf.yield %e2, %t2 : f32, f32
    }
    scf.yield %r2#0, %r2#1 : f32, f32
  }
  call @print2(%r#0, %r#1) : (f32, f32) -> ()
  return
}

#x = affine_map<(b, i, j, l) -> (b, i, l)>
#w = affine_map<(b, i, j, l) -> (j, l)>
#y = affine_map<(b, i, j, l) -> (b, i, j)>

/// Y = X W^T for f16 X [batch, m, k] and W [n, k] (a linear layer: the
/// second operand's innermost dimension is the reduction), Y zero first.
func.func @linear_f16(%batch: index, %m: index, %n: index, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %x = memref.alloc(%batch, %m, %k) : memref<?x?x?xf16>
  %w = memref.alloc(%n, %k) : memref<?x?xf16>
  %y = memref.alloc(%batch, %m, %n) : memref<?x?x?xf32>
  scf.for %bi = %c0 to %batch step %c1 {
    scf.for %i = %c0 to %m step %c1 {
      scf.for %l = %c0 to %k step %c1 {
        %v = func.call @value(%bi, %i, %l, %c0) : (index, index, index, index) -> f32
        %h = arith.truncf %v : f32 to f16
        memref.store %h, %x[%bi, %i, %l] : memref<?x?x?xf16>
      }
      scf.for %j = %c0 to %n step %c1 {
        memref.store %zero, %y[%bi, %i, %j] : memref<?x?x?xf32>
      }
    }
  }
  scf.for %j = %c0 to %n step %c1 {
    scf.for %l = %c0 to %k step %c1 {
      %v = func.call @value(%c0, %j, %l, %c1) : (index, index, index, index) -> f32
      %h = arith.truncf %v : f32 to f16
      memref.store %h, %w[%j, %l] : memref<?x?xf16>
    }
  }
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x?xf16>, memref<?x?xf16>)
      outs(%y : memref<?x?x?xf32>) {
  ^bb0(%p: f16, %q: f16, %acc: f32):
    %pf = arith.extf %p : f16 to f32
    %qf = arith.extf %q : f16 to f32
    %pq = arith.mulf %qf, %pf : f32
    %s = arith.addf %acc, %pq : f32
    linalg.yield %s : f32
  }
  %r:2 = scf.for %bi = %c0 to %batch step %c1 iter_args(%e0 = %zero, %t0 = %zero) -> (f32, f32) {
    %r1:2 = scf.for %i = %c0 to %m step %c1 iter_args(%e = %e0, %t = %t0) -> (f32, f32) {
      %r2:2 = scf.for %j = %c0 to %n step %c1 iter_args(%e1 = %e, %t1 = %t) -> (f32, f32) {
        %ref = scf.for %l = %c0 to %k step %c1 iter_args(%s = %zero) -> f32 {
          %p = memref.load %x[%bi, %i, %l] : memref<?x?x?xf16>
          %q = memref.load %w[%j, %l] : memref<?x?xf16>
          %pf = arith.extf %p : f16 to f32
          %qf = arith.extf %q : f16 to f32
          %pq = arith.mulf %pf, %qf : f32
          %s2 = arith.addf %s, %pq : f32
          scf.yield %s2 : f32
        }
        %g = memref.load %y[%bi, %i, %j] : memref<?x?x?xf32>
        %diff = arith.subf %g, %ref : f32
        %ad = math.absf %diff : f32
        %e2 = arith.addf %e1, %ad : f32
        %t2 = arith.addf %t1, %g : f32
        scf.yield %e2, %t2 : f32, f32
      }
      scf.yield %r2#0, %r2#1 : f32, f32
    }
    scf.yield %r1#0, %r1#1 : f32, f32
  }
  call @print2(%r#0, %r#1) : (f32, f32) -> ()
  return
}

#at = affine_map<(i, j, l) -> (l, i)>
#bt = affine_map<(i, j, l) -> (l, j)>
#ct = affine_map<(i, j, l) -> (i, j)>

/// C = A^T B for bf16 A [k, m] and B [k, n] (both operands' innermost
/// dimension a parallel one), C zero first.
func.func @matmul_at_bf16(%m: index, %n: index, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc(%k, %m) : memref<?x?xbf16>
  %b = memref.alloc(%k, %n) : memref<?x?xbf16>
  %c = memref.alloc(%m, %n) : memref<?x?xf32>
  call @fill_bf16(%a, %c3) : (memref<?x?xbf16>, index) -> ()
  call @fill_bf16(%b, %c1) : (memref<?x?xbf16>, index) -> ()
  scf.for %i = %c0 to %m step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      memref.store %zero, %c[%i, %j] : memref<?x?xf32>
    }
  }
  linalg.generic {indexing_maps = [#at, #bt, #ct],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x?xbf16>, memref<?x?xbf16>)
      outs(%c : memref<?x?xf32>) {
  ^bb0(%p: bf16, %q: bf16, %acc: f32):
    %pf = arith.extf %p : bf16 to f32
    %qf = arith.extf %q : bf16 to f32
    %pq = arith.mulf %pf, %qf : f32
    %s = arith.addf %acc, %pq : f32
    linalg.yield %s : f32
  }
  %r:2 = scf.for %i = %c0 to %m step %c1 iter_args(%e = %zero, %t = %zero) -> (f32, f32) {
    %r2:2 = scf.for %j = %c0 to %n step %c1 iter_args(%e1 = %e, %t1 = %t) -> (f32, f32) {
      %ref = scf.for %l = %c0 to %k step %c1 iter_args(%s = %zero) -> f32 {
        %p = memref.load %a[%l, %i] : memref<?x?xbf16>
        %q = memref.load %b[%l, %j] : memref<?x?xbf16>
        %pf = arith.extf %p : bf16 to f32
        %qf = arith.extf %q : bf16 to f32
        %pq = arith.mulf %pf, %qf : f32
        %s2 = arith.addf %s, %pq : f32
        scf.yield %s2 : f32
      }
      %g = memref.load %c[%i, %j] : memref<?x?xf32>
      %diff = arith.subf %g, %ref : f32
      %ad = math.absf %diff : f32
      %e2 = arith.addf %e1, %ad : f32
      %t2 = arith.addf %t1, %g : f32
      scf.yield %e2, %t2 : f32, f32
    }
    scf.yield %r2#0, %r2#1 : f32, f32
  }
  call @print2(%r#0, %r#1) : (f32, f32) -> ()
  return
}

#xb = affine_map<(b, i, j, l) -> (i, l, b)>
#wb = affine_map<(b, i, j, l) -> (l, j)>
#yb = affine_map<(b, i, j, l) -> (b, i, j)>

/// Y[b] = X[:, :, b] W for bf16 X [m, k, batch] (the batch innermost, so its
/// tile is copied element by element) and W [k, n], Y zero first.
func.func @batch_innermost_bf16(%batch: index, %m: index, %n: index, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %x = memref.alloc(%m, %k, %batch) : memref<?x?x?xbf16>
  %w = memref.alloc(%k, %n) : memref<?x?xbf16>
  %y = memref.alloc(%batch, %m, %n) : memref<?x?x?xf32>
  scf.for %bi = %c0 to %batch step %c1 {
    scf.for %i = %c0 to %m step %c1 {
      scf.for %l = %c0 to %k step %c1 {
        %v = func.call @value(%bi, %i, %l, %c0) : (index, index, index, index) -> f32
        %h = arith.truncf %v : f32 to bf16
        memref.store %h, %x[%i, %l, %bi] : memref<?x?x?xbf16>
      }
      scf.for %j = %c0 to %n step %c1 {
        memref.store %zero, %y[%bi, %i, %j] : memref<?x?x?xf32>
      }
    }
  }
  call @fill_bf16(%w, %c1) : (memref<?x?xbf16>, index) -> ()
  linalg.generic {indexing_maps = [#xb, #wb, #yb],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x?xbf16>, memref<?x?xbf16>)
      outs(%y : memref<?x?x?xf32>) {
  ^bb0(%p: bf16, %q: bf16, %acc: f32):
    %pf = arith.extf %p : bf16 to f32
    %qf = arith.extf %q : bf16 to f32
    %pq = arith.mulf %pf, %qf : f32
    %s = arith.addf %acc, %pq : f32
    linalg.yield %s : f32
  }
  %r:2 = scf.for %bi = %c0 to %batch step %c1 iter_args(%e0 = %zero, %t0 = %zero) -> (f32, f32) {
    %r1:2 = scf.for %i = %c0 to %m step %c1 iter_args(%e = %e0, %t = %t0) -> (f32, f32) {
      %r2:2 = scf.for %j = %c0 to %n step %c1 iter_args(%e1 = %e, %t1 = %t) -> (f32, f32) {
        %ref = scf.for %l = %c0 to %k step %c1 iter_args(%s = %zero) -> f32 {
          %p = memref.load %x[%i, %l, %bi] : memref<?x?x?xbf16>
          %q = memref.load %w[%l, %j] : memref<?x?xbf16>
          %pf = arith.extf %p : bf16 to f32
          %qf = arith.extf %q : bf16 to f32
          %pq = arith.mulf %pf, %qf : f32
          %s2 = arith.addf %s, %pq : f32
          scf.yield %s2 : f32
        }
        %g = memref.load %y[%bi, %i, %j] : memref<?x?x?xf32>
        %diff = arith.subf %g, %ref : f32
        %ad = math.absf %diff : f32
        %e2 = arith.addf %e1, %ad : f32
        %t2 = arith.addf %t1, %g : f32
        scf.yield %e2, %t2 : f32, f32
      }
      scf.yield %r2#0, %r2#1 : f32, f32
    }
    scf.yield %r1#0, %r1#1 : f32, f32
  }
  call @print2(%r#0, %r#1) : (f32, f32) -> ()
  return
}

// CHECK-COUNT-10: {{^}}[0,  {{-?[1-9][0-9.e+]*}}]
func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c16 = arith.constant 16 : index
  %c33 = arith.constant 33 : index
  %c45 = arith.constant 45 : index
  %c64 = arith.constant 64 : index
  %c67 = arith.constant 67 : index
  %c70 = arith.constant 70 : index
  %c130 = arith.constant 130 : index
  %c72 = arith.constant 72 : index
  %c80 = arith.constant 80 : index
  %c96 = arith.constant 96 : index
  %c136 = arith.constant 136 : index
  // Two block rows and columns, the last partial; two reduction steps, the
  // last partial; element copies (rows of 45 and 67 elements).
  call @matmul_bf16(%c70, %c67, %c45) : (index, index, index) -> ()
  // cp.async: one row, exact tiles; then partial tiles over three steps.
  call @matmul_bf16(%c1, %c64, %c64) : (index, index, index) -> ()
  call @matmul_bf16(%c70, %c72, %c96) : (index, index, index) -> ()
  // Batched, with the reduction innermost in both operands: element
  // copies, then cp.async, whose copies end within a row (k = 80 is two
  // and a half steps) and past the last row (n = 5).
  call @linear_f16(%c2, %c33, %c130, %c70) : (index, index, index, index) -> ()
  call @linear_f16(%c1, %c7, %c5, %c16) : (index, index, index, index) -> ()
  call @linear_f16(%c2, %c33, %c136, %c80) : (index, index, index, index) -> ()
  // The first operand transposed: element copies, cp.async, and element
  // copies again (rows of 7 elements).
  call @matmul_at_bf16(%c70, %c67, %c45) : (index, index, index) -> ()
  call @matmul_at_bf16(%c72, %c136, %c96) : (index, index, index) -> ()
  call @matmul_at_bf16(%c7, %c16, %c80) : (index, index, index) -> ()
  // The batch innermost in the first operand (rows of 8 elements, which
  // would pass the stride test): element copies.
  %c8 = arith.constant 8 : index
  call @batch_innermost_bf16(%c8, %c70, %c72, %c96) : (index, index, index, index) -> ()
  return
}
