// RUN: seq-opt %s --verify-diagnostics --seq-cpu-vectorize-contractions="vector-bits=512 vector-registers=32 remarks=true" \
// RUN:   --canonicalize --cse | FileCheck %s
// RUN: seq-opt %s --seq-cpu-vectorize-contractions="vector-bits=256 vector-registers=16 remarks=true" \
// RUN:   2>&1 | FileCheck %s --check-prefix=AVX2

// A right operand packed in panels by seq-cpu-pack-weights, read through
// (n floordiv w, k, n mod w): the broadcast kernel loads each step's vectors
// from the panel; the fill of C just before it (through a reshape) becomes
// the accumulators' initial value instead of a pass over C. Each parallel
// block is one panel wide, the blocks ordered columns first (a thread runs
// a panel's blocks of rows in turn); the row count is dynamic, and the rows
// after the last full tile run as one tile of their count (1 to 5), each
// reading the panel's vectors once.
#pa = affine_map<(m, n, k) -> (m, k)>
#pb = affine_map<(m, n, k) -> (n floordiv 64, k, n mod 64)>
#pc = affine_map<(m, n, k) -> (m, n)>
func.func @panels(%a: memref<?x32xf32>, %b: memref<2x32x64xf32>,
                  %c: memref<?x100xf32>, %init: f32) {
  %c0 = arith.constant 0 : index
  %flat = memref.collapse_shape %c [[0, 1]] : memref<?x100xf32> into memref<?xf32>
  linalg.fill ins(%init : f32) outs(%c : memref<?x100xf32>)
  %m = memref.dim %a, %c0 : memref<?x32xf32>
  // expected-remark @below {{contraction vectorized: broadcast kernel, 6 rows x 4 vectors of 16 lanes, blocks of 48 x 64, right operand in packed panels of 64 columns, the fill of the output folded into the accumulators}}
  // expected-remark @below {{contraction with few rows: the last 1 to 5 rows of a block in one tile of their count}}
  linalg.generic {indexing_maps = [#pa, #pb, #pc],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x32xf32>, memref<2x32x64xf32>) outs(%c : memref<?x100xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
// CHECK-LABEL: func.func @panels(
//  CHECK-SAME:   %[[A:.*]]: memref<?x32xf32>, %{{.*}}: memref<2x32x64xf32>, %{{.*}}: memref<?x100xf32>, %[[INIT:.*]]: f32)
//   CHECK-NOT:   linalg.fill
//       CHECK:   %[[M:.*]] = memref.dim %[[A]], %c0
// One panel per block, the blocks of a panel's rows in turn (columns first).
//       CHECK:   scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c100, %[[M]]) step (%c64, %c48)
//       CHECK:     scf.for %{{.*}} step %c6 {
//       CHECK:       %[[Z:.*]] = vector.broadcast %[[INIT]] : f32 to vector<16xf32>
// Each step prefetches a line of the next panel (the last panel its own):
// the line of the tile's row (m1 / 6) modulo the panel row's 4 lines.
//       CHECK:       %[[NEXT:.*]] = arith.minsi %{{.*}}, %c1 : index
//       CHECK:       %[[TILE:.*]] = arith.divui %{{.*}}, %c6 : index
//       CHECK:       %[[LINEI:.*]] = arith.remui %[[TILE]], %c4 : index
//       CHECK:       %[[LINE:.*]] = arith.muli %[[LINEI]], %c16 : index
//       CHECK:       scf.for %[[K:.*]] = {{.*}} iter_args(%{{.*}} = %[[Z]],
//       CHECK:         vector.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x32x64xf32>, vector<16xf32>
// CHECK-COUNT-24:      vector.fma
//       CHECK:         memref.prefetch %{{.*}}[%[[NEXT]], %[[K]], %[[LINE]]], read, locality<2>, data : memref<2x32x64xf32>
//  CHECK-NEXT:         scf.yield
// The column edge (the block's columns past its last 64-column tile) in
// masked vectors of the panel.
//       CHECK:     scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %c16
//       CHECK:       %[[P:.*]] = arith.divui %[[N]], %c64
//       CHECK:       %[[J:.*]] = arith.remui %[[N]], %c64
//       CHECK:       vector.maskedload %{{.*}}[%[[P]], %{{.*}}, %[[J]]]
// The rows left after the full tiles: one tile of 1 .. 5 rows.
//       CHECK:     scf.index_switch
//  CHECK-NEXT:     case 1 {
//       CHECK:       vector.store
//       CHECK:     case 2 {
//       CHECK:     case 3 {
//       CHECK:     case 4 {
//       CHECK:     case 5 {
// The five rows' tile: 5 x 4 accumulators, each panel vector loaded once
// for the five rows.
//       CHECK:       scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
//  CHECK-COUNT-4:        vector.load %{{.*}} : memref<2x32x64xf32>, vector<16xf32>
//  CHECK-COUNT-20:       vector.fma
//       CHECK:     default {
//   CHECK-NOT:   linalg.generic

// Panels of another width than the target's tile keep the scalar loops,
// with a remark, and the fill stays.
// AVX2: remark: contraction left to the scalar loops: its operand is packed in panels of 64 columns, and this target's broadcast kernel takes 16
// AVX2-LABEL: func.func @panels
//       AVX2:   linalg.fill
//       AVX2:   linalg.generic

// A strip longer than 256 KiB (2048 x 64 f32) is not prefetched: two of
// them and the rows of A would not stay in L2.
func.func @long_strip(%a: memref<?x2048xf32>, %b: memref<2x2048x64xf32>,
                      %c: memref<?x128xf32>) {
  // expected-remark @below {{contraction vectorized: broadcast kernel, 6 rows x 4 vectors of 16 lanes, blocks of 48 x 64, right operand in packed panels of 64 columns}}
  // expected-remark @below {{contraction with few rows: the last 1 to 5 rows of a block in one tile of their count}}
  linalg.generic {indexing_maps = [#pa, #pb, #pc],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x2048xf32>, memref<2x2048x64xf32>) outs(%c : memref<?x128xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
// CHECK-LABEL: func.func @long_strip(
//   CHECK-NOT:   memref.prefetch
//       CHECK:   vector.fma
//   CHECK-NOT:   memref.prefetch
//       CHECK:   return
