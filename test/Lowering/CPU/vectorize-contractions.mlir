// RUN: seq-opt %s --split-input-file --verify-diagnostics \
// RUN:   --seq-cpu-vectorize-contractions="vector-bits=512 vector-registers=32 remarks=true" --canonicalize --cse \
// RUN:   | FileCheck %s
// RUN: seq-opt %s --split-input-file --verify-diagnostics \
// RUN:   --seq-cpu-vectorize-contractions="vector-bits=256 vector-registers=16 remarks=true" --canonicalize --cse \
// RUN:   | FileCheck %s --check-prefix=AVX2
// RUN: seq-opt %s --split-input-file --verify-diagnostics \
// RUN:   --seq-cpu-vectorize-contractions="vector-bits=512 vector-registers=32 remarks=true" \
// RUN:   -debug-only=seq-cpu-vectorize-contractions -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEBUG
// RUN: seq-opt %s --split-input-file \
// RUN:   --seq-cpu-vectorize-contractions="vector-bits=256 vector-registers=16 remarks=true" \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=AVX2-ROWS

// The few-rows remarks whose text depends on the tile (the expected-remark
// lines below hold what both targets share; the DEBUG lines give AVX-512's
// in full): AVX2's 3 x 3 dot tiles and 6 x 2 broadcast tiles of 8 lanes.
// AVX2-ROWS: vectorize-contractions.mlir:[[# @LINE + 20]]:3: remark: contraction with few rows: the last 1 to 2 rows of a block in one tile of their count{{$}}
// AVX2-ROWS: remark: contraction with few rows: the last 1 to 5 rows of a block in one tile of their count{{$}}
// AVX2-ROWS: remark: contraction with few rows: the last 1 to 5 rows of a block in one tile of their count{{$}}
// AVX2-ROWS: remark: contraction with few rows: the last 1 to 2 rows of a block in one tile of their count{{$}}
// AVX2-ROWS: remark: contraction with few rows: the last 2 rows of a block in one tile of their count{{$}}
// AVX2-ROWS: remark: contraction with few rows: the last 1 to 2 rows of a block in one tile of their count; with at most 3 rows, the columns in about 16 parallel blocks of a multiple of 3{{$}}
// AVX2-ROWS: remark: contraction with few rows: the last 1 to 5 rows of a block in one tile of their count{{$}}
// AVX2-ROWS-NOT: remark: contraction with few rows

// x @ W^T: both inputs contiguous along the reduction, the dot kernel. The
// blocks of the output are the parallel loop; 4 x 4 tiles of 16-lane
// accumulators, a masked step for the reduction's remainder, one reduction
// per output element. (A reduction of 256 or less is packed instead: below.)

#x = affine_map<(b, m, n, k) -> (b, m, k)>
#w = affine_map<(b, m, n, k) -> (n, k)>
#y = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @linear(%x: memref<?x?x300xf32>, %w: memref<45x300xf32>, %y: memref<?x?x45xf32>) {
  // expected-remark @below {{contraction vectorized}}
  // expected-remark @below {{contraction with few rows: the last 1 to}}
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x300xf32>, memref<45x300xf32>) outs(%y : memref<?x?x45xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
// CHECK-LABEL: func.func @linear
// C is the function's argument: its caller may read it (a folded layer's
// output is), so no epilogue may leave it unwritten.
// DEBUG:      [seq-cpu-vectorize-contractions] matched linalg.generic at
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] no epilogue: the op after it does not read C (a later one or the function's caller does)
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] dot kernel, 4 x 4 tiles of 16 lanes, blocks of 64 x 64; the last 1 to 3 rows of a block in one tile of their count: linalg.generic at
//   CHECK-NOT:   linalg.generic
//       CHECK:   scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%{{.*}}, %{{.*}}) step (%c1, %c64)
//       CHECK:     scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c4 {
//       CHECK:       scf.for %{{.*}} = %c0 to %c44 step %c4 {
//       CHECK:         scf.for %{{.*}} = %c0 to %c288 step %c16 iter_args(
//  CHECK-COUNT-8:        vector.load {{.*}} : memref<{{.*}}>, vector<16xf32>
// CHECK-COUNT-16:        vector.fma {{.*}} : vector<16xf32>
//       CHECK:         vector.constant_mask [12] : vector<16xi1>
//       CHECK:         vector.maskedload
//       CHECK:         vector.reduction <add>, %{{.*}} : vector<16xf32> into f32
//       CHECK:         memref.store
// The AVX2 tile: 3 x 3 accumulators of 8 lanes.
// AVX2-LABEL: func.func @linear
//       AVX2:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c3 {
//       AVX2:     scf.for %{{.*}} = %c0 to %c45 step %c3 {
//       AVX2:       scf.for %{{.*}} = %c0 to %c296 step %c8 iter_args(
// AVX2-COUNT-9:       vector.fma {{.*}} : vector<8xf32>

// -----

// P @ V (batched, the right operand contiguous along the output's columns):
// the broadcast kernel, 6 rows x 4 vectors of 16, then a masked vector at
// the column edge (the block of columns 64 to 69: blocks are one tile wide,
// so the mask's count is the block's). The named op is handled like its
// generic form.
func.func @pv(%p: memref<8x?x?xf32>, %v: memref<8x?x70xf32>, %o: memref<8x?x70xf32>) {
  // expected-remark @below {{contraction vectorized}}
  // expected-remark @below {{contraction with few rows: the last 1 to 5 rows of a block in one tile of their count}}
  linalg.batch_matmul ins(%p, %v : memref<8x?x?xf32>, memref<8x?x70xf32>)
                      outs(%o : memref<8x?x70xf32>)
  return
}
// CHECK-LABEL: func.func @pv
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] matched linalg.batch_matmul at
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] no epilogue: the op after it does not read C (a later one or the function's caller does)
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] broadcast kernel, 6 x 4 tiles of 16 lanes, blocks of 48 x 64; the last 1 to 5 rows of a block in one tile of their count: linalg.batch_matmul at
//       CHECK:   scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = (%c0, %c0, %c0) to (%c8, %c70, %{{.*}}) step (%c1, %c64, %c48)
//       CHECK:     scf.for %{{.*}} step %c6 {
//       CHECK:       scf.for {{.*}} iter_args(
//       CHECK:         vector.load
//       CHECK:         memref.load
//       CHECK:         vector.broadcast %{{.*}} : f32 to vector<16xf32>
//       CHECK:         vector.fma
//       CHECK:       vector.store
//       CHECK:       vector.create_mask %{{.*}} : vector<16xi1>
//       CHECK:       vector.maskedload
//       CHECK:       scf.for {{.*}} iter_args(
//       CHECK:         vector.maskedload
//       CHECK:       vector.maskedstore

// -----

// q @ k^T with head size 64: a short reduction. k is copied transposed once
// (into column panels of one broadcast tile, in a fresh buffer freed after
// the kernel) and the broadcast kernel runs on the copy, which sums nothing
// across lanes. The buffer is allocated before the test of the row count
// and freed after it, so that no allocation sits in its branch (the memory
// plan places it; a thread team is not cut by the test).
func.func @short_reduction(%q: memref<8x?x64xf32>, %k: memref<8x?x64xf32>, %s: memref<8x?x?xf32>) {
  // expected-remark @below {{contraction vectorized}}
  // expected-remark @below {{contraction with few rows: the last 1 to 5 rows of a block in one tile of their count}}
  // expected-remark @below {{contraction with few rows: the last 1 to}}
  linalg.generic {indexing_maps = [affine_map<(g, m, n, c) -> (g, m, c)>,
                                   affine_map<(g, m, n, c) -> (g, n, c)>,
                                   affine_map<(g, m, n, c) -> (g, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<8x?x64xf32>, memref<8x?x64xf32>) outs(%s : memref<8x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
// The copy pays with enough rows: with a dynamic row count, a test at run
// time picks it (8 rows or more) or the dot kernel.
// CHECK-LABEL: func.func @short_reduction
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] matched linalg.generic at
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] no epilogue: the op after it does not read C (a later one or the function's caller does)
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] short reduction: packed if the rows are many
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] right operand packed into memref<8x?x64x64xf32>, reduction of 64, for the broadcast kernel
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] broadcast kernel, 6 x 4 tiles of 16 lanes, blocks of 48 x 64, panels of 64; the last 1 to 5 rows of a block in one tile of their count: linalg.generic at
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] dot kernel, 4 x 4 tiles of 16 lanes, blocks of 64 x 64; the last 1 to 3 rows of a block in one tile of their count: linalg.generic at
//       CHECK:   %[[ROWS:.*]] = memref.dim %{{.*}}, %c1 : memref<8x?x?xf32>
//       CHECK:   %[[KT:.*]] = memref.alloc(%{{.*}}) : memref<8x?x64x64xf32>
//       CHECK:   %[[MANY:.*]] = arith.cmpi uge, %[[ROWS]], %c8
//       CHECK:   scf.if %[[MANY]] {
//   CHECK-NOT:     memref.alloc
//       CHECK:     scf.parallel
// Whole panels are a plain transpose, the last one is padded with zeros.
//       CHECK:       scf.if
//       CHECK:         memref.load %{{.*}} : memref<8x?x64xf32>
//       CHECK:         memref.store %{{.*}}, %[[KT]]
//       CHECK:       } else {
//       CHECK:         arith.select
//       CHECK:     scf.parallel
//       CHECK:       vector.load %[[KT]]
//       CHECK:       vector.broadcast
//       CHECK:       vector.fma
//   CHECK-NOT:       vector.reduction
//   CHECK-NOT:     memref.dealloc
//       CHECK:   } else {
//       CHECK:     scf.parallel
//       CHECK:       vector.reduction
//       CHECK:   memref.dealloc %[[KT]]
// The AVX2 panels: 2 vectors of 8 lanes.
// AVX2-LABEL: func.func @short_reduction
//       AVX2:   memref.alloc(%{{.*}}) : memref<8x?x64x16xf32>


// -----

// A^T @ B with A [k, m]: the broadcast kernel loads A one scalar at a time,
// so the left operand's layout does not matter.
#at = affine_map<(m, n, k) -> (k, m)>
#bt = affine_map<(m, n, k) -> (k, n)>
#ct = affine_map<(m, n, k) -> (m, n)>
func.func @transposed_lhs(%a: memref<33x20xf32>, %b: memref<33x40xf32>, %c: memref<20x40xf32>) {
  // expected-remark @below {{contraction vectorized}}
  // expected-remark @below {{contraction with few rows: the last 2 rows of a block in one tile of their count}}
  linalg.generic {indexing_maps = [#at, #bt, #ct],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<33x20xf32>, memref<33x40xf32>) outs(%c : memref<20x40xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %y, %x : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}
// CHECK-LABEL: func.func @transposed_lhs
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] matched linalg.generic at
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] no epilogue: the op after it does not read C (a later one or the function's caller does)
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] broadcast kernel, 6 x 4 tiles of 16 lanes, blocks of 48 x 64; the last 2 rows of a block in one tile of their count: linalg.generic at
//   CHECK-NOT:   linalg.generic
//       CHECK:   vector.broadcast

// -----

// x @ W^T (a reduction too long to pack) followed by a residual add from
// another buffer and a ReLU: the dot kernel applies the epilogue to each
// finished element and stores it into the epilogue's output; C is not
// written.
#xd = affine_map<(m, n, k) -> (m, k)>
#wd = affine_map<(m, n, k) -> (n, k)>
#yd = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @dot_epilogue(%x: memref<?x300xf32>, %w: memref<45x300xf32>, %c: memref<?x45xf32>,
                        %r: memref<?x45xf32>, %out: memref<?x45xf32>) {
  // expected-remark @below {{-lane accumulators, blocks of 64 x 64, epilogue fused into the output tile: addf maximumf}}
  // expected-remark @below {{contraction with few rows: the last 1 to}}
  linalg.generic {indexing_maps = [#xd, #wd, #yd],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x300xf32>, memref<45x300xf32>) outs(%c : memref<?x45xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %r : memref<?x45xf32>, memref<?x45xf32>) outs(%out : memref<?x45xf32>) {
  ^bb0(%v: f32, %res: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %sum = arith.addf %v, %res : f32
    %relu = arith.maximumf %sum, %zero : f32
    linalg.yield %relu : f32
  }
  memref.dealloc %c : memref<?x45xf32>
  return
}
// CHECK-LABEL: func.func @dot_epilogue
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] matched linalg.generic at
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] not a binary contraction on buffers with one reduction: linalg.generic at
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] epilogue fused: linalg.generic at {{.*}} with 2 inputs
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] dot kernel, 4 x 4 tiles of 16 lanes, blocks of 64 x 64, with its epilogue; the last 1 to 3 rows of a block in one tile of their count; with at most 4 rows, the columns in about 16 parallel blocks of a multiple of 4: linalg.generic at
// With at most one tile of rows (4), the 45 columns split into blocks of 4
// (about 16 blocks, a multiple of the tile's 4 columns) instead of 64.
//   CHECK-NOT:   linalg.generic
//       CHECK:   %[[FEW:.*]] = arith.cmpi ule, %{{.*}}, %c4 : index
//       CHECK:   %[[STEP:.*]] = arith.select %[[FEW]], %c4, %c64 : index
//       CHECK:   scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%{{.*}}, %c45) step (%c64, %[[STEP]])
//       CHECK:   vector.reduction <add>
//       CHECK:   %[[SUM:.*]] = arith.addf
//       CHECK:   %[[RES:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x45xf32>
//       CHECK:   %[[ADD:.*]] = arith.addf %[[SUM]], %[[RES]] : f32
//       CHECK:   %[[RELU:.*]] = arith.maximumf %[[ADD]], %{{.*}} : f32
//       CHECK:   memref.store %[[RELU]], %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x45xf32>
// The last 1 to 3 rows of a block: one tile of their count, with the
// epilogue too.
//       CHECK:   scf.index_switch
//  CHECK-NEXT:   case 1 {
//       CHECK:   case 2 {
//       CHECK:   case 3 {
//       CHECK:     arith.maximumf
//       CHECK:   default {
//   CHECK-NOT:   linalg.generic

// -----

// The op after the product reads C but reduces its rows (a softmax's
// maximum): not an epilogue, and the remark says why.
#xs = affine_map<(m, n, k) -> (m, k)>
#ws = affine_map<(m, n, k) -> (k, n)>
#ys = affine_map<(m, n, k) -> (m, n)>
#rows = affine_map<(m, n) -> (m, n)>
#row = affine_map<(m, n) -> (m)>
func.func @reduction_consumer(%x: memref<?x32xf32>, %w: memref<32x40xf32>, %c: memref<?x40xf32>,
                              %max: memref<?xf32>) {
  // expected-remark @below {{; its consumer not fused: the op after it (linalg.generic, a reduction) is not elementwise}}
  // expected-remark @below {{contraction with few rows: the last 1 to 5 rows of a block in one tile of their count}}
  linalg.generic {indexing_maps = [#xs, #ws, #ys],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x32xf32>, memref<32x40xf32>) outs(%c : memref<?x40xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#rows, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%c : memref<?x40xf32>) outs(%max : memref<?xf32>) {
  ^bb0(%v: f32, %m: f32):
    %n = arith.maximumf %v, %m : f32
    linalg.yield %n : f32
  }
  return
}
// CHECK-LABEL: func.func @reduction_consumer
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] matched linalg.generic at
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] not a binary contraction on buffers with one reduction: linalg.generic at
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] no epilogue: the next op is not an elementwise generic
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] broadcast kernel, 6 x 4 tiles of 16 lanes, blocks of 48 x 64; the last 1 to 5 rows of a block in one tile of their count: linalg.generic at
//       CHECK:   vector.fma
//       CHECK:   linalg.generic

// -----

// The right operand is contiguous neither along the reduction nor along the
// output's columns: the scalar loops stay, with a remark.
#a2 = affine_map<(m, n, k) -> (m, k)>
#b2 = affine_map<(m, n, k) -> (n, k)>
#c2 = affine_map<(m, n, k) -> (m, n)>
func.func @strided(%a: memref<16x32xf32>, %b: memref<64x32xf32, strided<[1, 64]>>, %c: memref<16x64xf32>) {
  // expected-remark @below {{contraction left to the scalar loops: no input layout the vector kernels handle}}
  linalg.generic {indexing_maps = [#a2, #b2, #c2],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<16x32xf32>, memref<64x32xf32, strided<[1, 64]>>) outs(%c : memref<16x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
// CHECK-LABEL: func.func @strided
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] left to the scalar loops: no input layout the vector kernels handle
//       CHECK:   linalg.generic

// -----

// Not contractions in the pass's sense: a max-plus product, f64, and a
// contraction on tensors (the pass runs after bufferization).
#a3 = affine_map<(m, n, k) -> (m, k)>
#b3 = affine_map<(m, n, k) -> (k, n)>
#c3 = affine_map<(m, n, k) -> (m, n)>
func.func @others(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>,
                  %d: memref<4x8xf64>, %e: memref<8x4xf64>, %f: memref<4x4xf64>,
                  %ta: tensor<4x8xf32>, %tb: tensor<8x4xf32>, %tc: tensor<4x4xf32>) -> tensor<4x4xf32> {
  linalg.generic {indexing_maps = [#a3, #b3, #c3],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x8xf32>, memref<8x4xf32>) outs(%c : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.addf %x, %y : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.matmul ins(%d, %e : memref<4x8xf64>, memref<8x4xf64>) outs(%f : memref<4x4xf64>)
  %r = linalg.matmul ins(%ta, %tb : tensor<4x8xf32>, tensor<8x4xf32>) outs(%tc : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
// CHECK-LABEL: func.func @others
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] body is not an f32 multiply-add: linalg.generic at
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] body is not an f32 multiply-add: linalg.matmul at
// DEBUG-NEXT: [seq-cpu-vectorize-contractions] not a binary contraction on buffers with one reduction: linalg.matmul at
//       CHECK:   linalg.generic
//       CHECK:   linalg.matmul ins({{.*}}f64
//       CHECK:   linalg.matmul ins({{.*}}tensor
//   CHECK-NOT:   vector.
