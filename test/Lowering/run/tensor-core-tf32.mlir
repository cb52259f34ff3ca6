// RUN: seq-opt %s --seq-nvptx-tile-contractions="tensor-cores=true tf32=true" --seq-nvptx-launch-to-loops | %host_to_llvm | %run_main | FileCheck %s
// RUN: seq-opt %s --seq-nvptx-tile-contractions="tensor-cores=true tf32=true" --seq-nvptx-launch-to-loops=reverse-threads=true | %host_to_llvm | %run_main | FileCheck %s
// RUN: seq-opt %s --seq-nvptx-tile-contractions="tensor-cores=true tf32=true" | FileCheck %s --check-prefix=KERNEL
// RUN: seq-opt %s --seq-nvptx-tile-contractions="tensor-cores=true" | FileCheck %s --check-prefix=NO-TF32

// f32 contractions on tensor cores as tf32 products (tensor-cores with
// tf32): the same kernel as tensor-core-contractions.mlir with 16-byte
// copies of 4 floats, tf32 m16n8k8 products and fragments read from
// workgroup memory element by element, run by the GPU interpreter. The
// inputs are small integers times 1 + 2^-12, which tf32 (10 mantissa bits) cuts
// back to the integers; the reference rounds them the same way, so the
// error is exactly 0, and a layout mistake is not. Each case prints [sum
// of |out - reference|, sum of out].
// KERNEL-COUNT-3: gpu.launch {{.*}} workgroup({{.*}}memref<2x{{64x36|32x68}}xf32, #gpu.address_space<workgroup>>, {{.*}}memref<2x{{32x68|64x36}}xf32, #gpu.address_space<workgroup>>)
// KERNEL: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
// KERNEL-NOT: linalg.
// Without tf32, f32 contractions get register tiles (one thread per 4 x 4
// outputs of an scf.parallel).
// NO-TF32-NOT: nvgpu.mma.sync
// NO-TF32-COUNT-3: scf.parallel
// NO-TF32-NOT: nvgpu.mma.sync

func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

/// (((3 i + 5 j + salt) % 7) - 2) (1 + 2^-12).
func.func @fill(%m: memref<?x?xf32>, %salt: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %two = arith.constant 2.0 : f32
  %scale = arith.constant 1.000244140625 : f32
  %rows = memref.dim %m, %c0 : memref<?x?xf32>
  %cols = memref.dim %m, %c1 : memref<?x?xf32>
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %cols step %c1 {
      %x = arith.muli %i, %c3 : index
      %y = arith.muli %j, %c5 : index
      %s0 = arith.addi %x, %y : index
      %s = arith.addi %s0, %salt : index
      %r = arith.remui %s, %c7 : index
      %ri = arith.index_cast %r : index to i32
      %f = arith.sitofp %ri : i32 to f32
      %v = arith.subf %f, %two : f32
      %w = arith.mulf %v, %scale : f32
      memref.store %w, %m[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

func.func @zero(%m: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %rows = memref.dim %m, %c0 : memref<?x?xf32>
  %cols = memref.dim %m, %c1 : memref<?x?xf32>
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %cols step %c1 {
      memref.store %zero, %m[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

/// Prints [sum |c[i, j] - sum_l round(a[ai, al]) round(b[bl, bj])|, sum c]
/// where (ai, al) = (i, l), or (l, i) with `at`, and (bl, bj) = (l, j), or
/// (j, l) with `bt`.
func.func @report(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>,
                  %k: index, %at: i1, %bt: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %m = memref.dim %c, %c0 : memref<?x?xf32>
  %n = memref.dim %c, %c1 : memref<?x?xf32>
  %r:2 = scf.for %i = %c0 to %m step %c1 iter_args(%e = %zero, %t = %zero) -> (f32, f32) {
    %r2:2 = scf.for %j = %c0 to %n step %c1 iter_args(%e1 = %e, %t1 = %t) -> (f32, f32) {
      %ref = scf.for %l = %c0 to %k step %c1 iter_args(%s = %zero) -> f32 {
        %ai = arith.select %at, %l, %i : index
        %al = arith.select %at, %i, %l : index
        %bl = arith.select %bt, %j, %l : index
        %bj = arith.select %bt, %l, %j : index
        %p = memref.load %a[%ai, %al] : memref<?x?xf32>
        %q = memref.load %b[%bl, %bj] : memref<?x?xf32>
        %pr = math.roundeven %p : f32
        %qr = math.roundeven %q : f32
        %pq = arith.mulf %pr, %qr : f32
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
  %out = memref.alloc() : memref<2xf32>
  memref.store %r#0, %out[%c0] : memref<2xf32>
  memref.store %r#1, %out[%c1] : memref<2xf32>
  %u = memref.cast %out : memref<2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

#mk = affine_map<(i, j, l) -> (i, l)>
#km = affine_map<(i, j, l) -> (l, i)>
#kn = affine_map<(i, j, l) -> (l, j)>
#nk = affine_map<(i, j, l) -> (j, l)>
#mn = affine_map<(i, j, l) -> (i, j)>

/// x @ w: a [m, k], b [k, n].
func.func @matmul(%m: index, %n: index, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %false = arith.constant false
  %a = memref.alloc(%m, %k) : memref<?x?xf32>
  %b = memref.alloc(%k, %n) : memref<?x?xf32>
  %c = memref.alloc(%m, %n) : memref<?x?xf32>
  call @fill(%a, %c0) : (memref<?x?xf32>, index) -> ()
  call @fill(%b, %c1) : (memref<?x?xf32>, index) -> ()
  call @zero(%c) : (memref<?x?xf32>) -> ()
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %pq = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %pq : f32
    linalg.yield %s : f32
  }
  call @report(%a, %b, %c, %k, %false, %false) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, index, i1, i1) -> ()
  return
}

/// linear(x, w): a [m, k], b [n, k].
func.func @linear(%m: index, %n: index, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %false = arith.constant false
  %true = arith.constant true
  %a = memref.alloc(%m, %k) : memref<?x?xf32>
  %b = memref.alloc(%n, %k) : memref<?x?xf32>
  %c = memref.alloc(%m, %n) : memref<?x?xf32>
  call @fill(%a, %c0) : (memref<?x?xf32>, index) -> ()
  call @fill(%b, %c1) : (memref<?x?xf32>, index) -> ()
  call @zero(%c) : (memref<?x?xf32>) -> ()
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %pq = arith.mulf %q, %p : f32
    %s = arith.addf %pq, %acc : f32
    linalg.yield %s : f32
  }
  call @report(%a, %b, %c, %k, %false, %true) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, index, i1, i1) -> ()
  return
}

/// x^T @ w: a [k, m], b [k, n].
func.func @transposed(%m: index, %n: index, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %false = arith.constant false
  %true = arith.constant true
  %a = memref.alloc(%k, %m) : memref<?x?xf32>
  %b = memref.alloc(%k, %n) : memref<?x?xf32>
  %c = memref.alloc(%m, %n) : memref<?x?xf32>
  call @fill(%a, %c0) : (memref<?x?xf32>, index) -> ()
  call @fill(%b, %c1) : (memref<?x?xf32>, index) -> ()
  call @zero(%c) : (memref<?x?xf32>) -> ()
  linalg.generic {indexing_maps = [#km, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %pq = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %pq : f32
    linalg.yield %s : f32
  }
  call @report(%a, %b, %c, %k, %true, %false) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>, index, i1, i1) -> ()
  return
}

// Each layout with element copies (rows of odd lengths), then with cp.async
// (rows of multiples of 4 floats), across partial block tiles and steps.
// CHECK-COUNT-6: {{^}}[0,  {{-?[1-9][0-9]*}}]
func.func @main() {
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c36 = arith.constant 36 : index
  %c45 = arith.constant 45 : index
  %c67 = arith.constant 67 : index
  %c68 = arith.constant 68 : index
  %c70 = arith.constant 70 : index
  %c76 = arith.constant 76 : index
  %c100 = arith.constant 100 : index
  call @matmul(%c70, %c67, %c45) : (index, index, index) -> ()
  call @matmul(%c70, %c68, %c76) : (index, index, index) -> ()
  call @linear(%c67, %c7, %c45) : (index, index, index) -> ()
  call @linear(%c70, %c100, %c36) : (index, index, index) -> ()
  call @transposed(%c5, %c67, %c45) : (index, index, index) -> ()
  call @transposed(%c68, %c76, %c100) : (index, index, index) -> ()
  return
}
