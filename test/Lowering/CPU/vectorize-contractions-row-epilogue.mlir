// RUN: seq-opt %s --split-input-file --verify-diagnostics \
// RUN:   --seq-cpu-vectorize-contractions="vector-bits=512 vector-registers=32 remarks=true" --canonicalize --cse \
// RUN:   | FileCheck %s
// RUN: seq-opt %s --split-input-file \
// RUN:   --seq-cpu-vectorize-contractions="vector-bits=512 vector-registers=32" \
// RUN:   -debug-only=seq-cpu-vectorize-contractions -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEBUG

// An epilogue input constant along each row of C (here a normalizer per
// row, [g, m, 1] read at (g, m, 0), as linear attention's chunks divide by
// it): the broadcast kernel reads it once per row of its tile, broadcasts
// it, and divides the row's vectors by it before they are stored into the
// epilogue's output.
#qn = affine_map<(g, m, n, k) -> (g, m, k)>
#sn = affine_map<(g, m, n, k) -> (g, k, n)>
#cn = affine_map<(g, m, n, k) -> (g, m, n)>
#id = affine_map<(g, m, n) -> (g, m, n)>
#row = affine_map<(g, m, n) -> (g, m, 0)>
func.func @row_normalizer(%q: memref<8x?x64xf32>, %s: memref<8x64x40xf32>, %c: memref<8x?x40xf32>,
                          %den: memref<8x?x1xf32>, %out: memref<8x?x40xf32>) {
  // expected-remark @below {{contraction vectorized: broadcast kernel, 6 rows x 4 vectors of 16 lanes, blocks of 48 x 64, epilogue fused into the output tile: addf divf}}
  // expected-remark @below {{contraction with few rows: the last 1 to 5 rows of a block in one tile of their count}}
  linalg.generic {indexing_maps = [#qn, #sn, #cn],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %s : memref<8x?x64xf32>, memref<8x64x40xf32>) outs(%c : memref<8x?x40xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c, %den : memref<8x?x40xf32>, memref<8x?x1xf32>) outs(%out : memref<8x?x40xf32>) {
  ^bb0(%v: f32, %d: f32, %o: f32):
    %eps = arith.constant 1.0e-6 : f32
    %de = arith.addf %d, %eps : f32
    %y = arith.divf %v, %de : f32
    linalg.yield %y : f32
  }
  memref.dealloc %c : memref<8x?x40xf32>
  return
}
// DEBUG: [seq-cpu-vectorize-contractions] epilogue fused: linalg.generic at {{.*}} with 2 inputs
// CHECK-LABEL: func.func @row_normalizer
// CHECK-SAME:    %[[DEN:[a-zA-Z0-9]+]]: memref<8x?x1xf32>, %[[OUT:[a-zA-Z0-9]+]]: memref<8x?x40xf32>
//   CHECK-NOT:   linalg.generic
//       CHECK:   scf.parallel (%[[G:.+]], %{{.+}}) =
//       CHECK:     scf.for %{{.+}} =
//       CHECK:       %[[ACC:.+]]:6 = scf.for
// Row 0 of the 6-row tile, then row 1 at the next index.
//       CHECK:       %[[D0:.+]] = memref.load %[[DEN]][%[[G]], %[[M:.+]], %c0] : memref<8x?x1xf32>
//       CHECK:       %[[DV:.+]] = vector.broadcast %[[D0]] : f32 to vector<16xf32>
//       CHECK:       %[[DE:.+]] = arith.addf %[[DV]], %{{.+}} : vector<16xf32>
//       CHECK:       %[[Y:.+]] = arith.divf %[[ACC]]#0, %[[DE]] : vector<16xf32>
//       CHECK:       vector.maskedstore %[[OUT]][%[[G]], %[[M]], %{{.+}}], %{{.+}}, %[[Y]]
//       CHECK:       %[[D1:.+]] = memref.load %[[DEN]][%[[G]], %[[M1:.+]], %c0] : memref<8x?x1xf32>
//       CHECK:       arith.divf %[[ACC]]#1
//       CHECK:       vector.maskedstore %[[OUT]][%[[G]], %[[M1]], %{{.+}}]

// -----

// q @ z^T with one static column (the normalizer of linear attention's
// chunks): a short reduction, but panels of one column would fill one lane
// of each vector, so it stays on the dot kernel, which fills them all.
#qd = affine_map<(g, m, n, k) -> (g, m, k)>
#zd = affine_map<(g, m, n, k) -> (g, n, k)>
#dd = affine_map<(g, m, n, k) -> (g, m, n)>
func.func @one_column(%q: memref<8x?x64xf32>, %z: memref<8x1x64xf32>, %den: memref<8x?x1xf32>) {
  // expected-remark @below {{contraction vectorized: dot kernel, 4 x 4 tiles of 16-lane accumulators}}
  // expected-remark @below {{contraction with few rows: the last 1 to 3 rows of a block in one tile of their count}}
  linalg.generic {indexing_maps = [#qd, #zd, #dd],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %z : memref<8x?x64xf32>, memref<8x1x64xf32>) outs(%den : memref<8x?x1xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
// DEBUG:      matched linalg.generic
//  DEBUG-NOT:  short reduction
//      DEBUG:  dot kernel, 4 x 4 tiles of 16 lanes
// CHECK-LABEL: func.func @one_column
//   CHECK-NOT:   memref.alloc
//       CHECK:   vector.reduction <add>
