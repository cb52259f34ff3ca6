// RUN: seq-opt %s --seq-nvptx-tile-contractions="tile-m=2 tile-n=2 remarks=true" --canonicalize --cse -split-input-file -verify-diagnostics | FileCheck %s
// RUN: not seq-opt %s --seq-nvptx-tile-contractions="tile-m=16 tile-n=8" -split-input-file 2>&1 | FileCheck %s --check-prefix=SIZE
// SIZE: error: seq-nvptx-tile-contractions: tiles of 16 x 8 need between 1 and 64 accumulators

// A 2 x 2 register tile per iteration: the outputs are loaded once, carried
// through the reduction loop and stored where they exist; the edges read
// clamped rows and columns.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: memref<?x?xf32>, %[[B:.*]]: memref<?x?xf32>, %[[C:.*]]: memref<?x?xf32>)
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[M:.*]] = memref.dim %[[A]], %c0
// CHECK-DAG: %[[K:.*]] = memref.dim %[[A]], %c1
// CHECK-DAG: %[[N:.*]] = memref.dim %[[B]], %c1
// CHECK-DAG: %[[TM:.*]] = arith.ceildivsi %[[M]], %[[C2]]
// CHECK-DAG: %[[TN:.*]] = arith.ceildivsi %[[N]], %[[C2]]
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%c0, %c0) to (%[[TM]], %[[TN]])
// CHECK: %[[I0:.*]] = arith.muli %[[I]], %[[C2]]
// CHECK: %[[R0:.*]] = arith.minsi %[[I0]],
// CHECK: %[[C00:.*]] = memref.load %[[C]][%[[R0]], %[[COL0:.*]]]
// CHECK-COUNT-3: memref.load %[[C]]
// CHECK: %[[ACC:.*]]:4 = scf.for %[[KK:.*]] = %c0 to %[[K]] step %c1 iter_args(%{{.*}} = %[[C00]], {{.*}}) -> (f32, f32, f32, f32)
// CHECK-COUNT-2: memref.load %[[A]]
// CHECK-COUNT-2: memref.load %[[B]]
// CHECK-COUNT-4: arith.addf
// CHECK: scf.yield
// CHECK: scf.if
// CHECK-NEXT: memref.store %[[ACC]]#0, %[[C]][%[[R0]], %[[COL0]]]
// CHECK-COUNT-3: memref.store
func.func @matmul(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  return
}

// -----

// x @ W^T on bf16, accumulated in f32 (the body is cloned per output); the
// column tiles are the innermost parallel dimension.
#x = affine_map<(b, m, n, k) -> (b, m, k)>
#w = affine_map<(b, m, n, k) -> (n, k)>
#y = affine_map<(b, m, n, k) -> (b, m, n)>
// CHECK-LABEL: func.func @linear_bf16
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = (%c0, %c0, %c0) to (%c3, %c3, %c4)
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.addf
// CHECK: scf.yield {{.*}} : f32, f32, f32, f32
func.func @linear_bf16(%x: memref<3x5x7xbf16>, %w: memref<8x7xbf16>, %y: memref<3x5x8xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<3x5x7xbf16>, memref<8x7xbf16>) outs(%y : memref<3x5x8xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %ae = arith.extf %a : bf16 to f32
    %be = arith.extf %b : bf16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Matrix-vector products keep one thread per output; contractions inside a
// parallel loop (a fused kernel's tiles) are left to their thread.
// CHECK-LABEL: func.func @untouched
// CHECK: linalg.matvec
// CHECK: scf.parallel
// CHECK: linalg.matmul
func.func @untouched(%a: memref<?x?xf32>, %v: memref<?xf32>, %o: memref<?xf32>,
                     %t: memref<4x8x8xf32>) {
  // expected-remark @below {{contraction not register-tiled for the GPU (one thread per output element): it does not have one reduction dimension and rows and columns to tile (a matrix-vector product, or several reductions)}}
  linalg.matvec ins(%a, %v : memref<?x?xf32>, memref<?xf32>) outs(%o : memref<?xf32>)
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %s = memref.subview %t[%i, 0, 0] [1, 8, 8] [1, 1, 1] : memref<4x8x8xf32> to memref<8x8xf32, strided<[8, 1], offset: ?>>
    linalg.matmul ins(%s, %s : memref<8x8xf32, strided<[8, 1], offset: ?>>, memref<8x8xf32, strided<[8, 1], offset: ?>>) outs(%s : memref<8x8xf32, strided<[8, 1], offset: ?>>)
  }
  return
}
