// RUN: seq-opt %s --split-input-file --verify-diagnostics \
// RUN:   --seq-cpu-vectorize-contractions="vector-bits=256 vector-registers=16 remarks=true" --canonicalize --cse \
// RUN:   | FileCheck %s
// RUN: seq-opt %s --split-input-file \
// RUN:   --seq-cpu-vectorize-contractions="vector-bits=256 vector-registers=16 f16c=false remarks=true" \
// RUN:   -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOF16C

// bf16 and f16 operands (widened by arith.extf in the body) with an f32
// accumulator: the kernels load vectors of the stored type and widen them in
// registers; nothing is copied or converted outside the loop nest.

// x @ W^T with W in bf16 panels, 4 rows per tile: the broadcast kernel
// reads the two vectors of each step as one vector<16xbf16> of 32-bit words,
// whose low halves shifted up are the even columns and whose words with the
// low half cleared are the odd ones; the accumulators start de-interleaved
// from C and are interleaved back before the store. A is read four elements
// at a time, widened once, and its lanes selected for each of the four
// steps. The masked column edge widens vector<8xbf16>.
#pa = affine_map<(m, n, k) -> (m, k)>
#pb = affine_map<(m, n, k) -> (n floordiv 16, k, n mod 16)>
#pc = affine_map<(m, n, k) -> (m, n)>
func.func @panels_bf16(%a: memref<?x32xbf16>, %b: memref<2x32x16xbf16>,
                       %c: memref<?x20xf32>) {
  // expected-remark @below {{contraction vectorized: broadcast kernel, 4 rows x 2 vectors of 8 lanes, bf16 operands widened to f32 in registers (16-bit shifts), f32 accumulators, blocks of 48 x 16, right operand in packed panels of 16 columns}}
  // expected-remark @below {{contraction with few rows: the last 1 to 3 rows of a block in one tile of their count}}
  linalg.generic {indexing_maps = [#pa, #pb, #pc],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x32xbf16>, memref<2x32x16xbf16>) outs(%c : memref<?x20xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
// CHECK-LABEL: func.func @panels_bf16(
//   CHECK-NOT:   memref.alloc
//       CHECK:   scf.parallel
//       CHECK:     scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c4 {
//       CHECK:       %[[C0:.*]] = vector.load %{{.*}} : memref<?x20xf32>, vector<8xf32>
//       CHECK:       %[[C1:.*]] = vector.load %{{.*}} : memref<?x20xf32>, vector<8xf32>
//       CHECK:       vector.shuffle %[[C0]], %[[C1]] [0, 2, 4, 6, 8, 10, 12, 14]
//       CHECK:       vector.shuffle %[[C0]], %[[C1]] [1, 3, 5, 7, 9, 11, 13, 15]
//       CHECK:       %[[ACC:.*]]:8 = scf.for %{{.*}} = %c0 to %c32 step %c4 iter_args(
//       CHECK:         %[[ROW:.*]] = vector.load %{{.*}} : memref<2x32x16xbf16>, vector<16xbf16>
//       CHECK:         %[[WORDS:.*]] = vector.bitcast %[[ROW]] : vector<16xbf16> to vector<8xi32>
//       CHECK:         arith.shli %[[WORDS]], %{{.*}} : vector<8xi32>
//       CHECK:         arith.andi %[[WORDS]], %{{.*}} : vector<8xi32>
//       CHECK:         %[[QUAD:.*]] = vector.load %{{.*}} : memref<?x32xbf16>, vector<4xbf16>
//       CHECK:         %[[REP:.*]] = vector.shuffle %[[QUAD]], %[[QUAD]] [0, 1, 2, 3, 0, 1, 2, 3]
//       CHECK:         %[[WIDE:.*]] = arith.extf %[[REP]] : vector<8xbf16> to vector<8xf32>
//       CHECK:         vector.shuffle %[[WIDE]], %[[WIDE]] [0, 0, 0, 0, 4, 4, 4, 4]
//       CHECK:         vector.fma
//       CHECK:         vector.shuffle %[[WIDE]], %[[WIDE]] [3, 3, 3, 3, 7, 7, 7, 7]
//       CHECK:       vector.shuffle %[[ACC]]#0, %[[ACC]]#1 [0, 8, 1, 9, 2, 10, 3, 11]
//       CHECK:       vector.shuffle %[[ACC]]#0, %[[ACC]]#1 [4, 12, 5, 13, 6, 14, 7, 15]
//       CHECK:       vector.store
// The column edge in masked vectors, bf16 too.
//       CHECK:   vector.maskedload %{{.*}} : memref<2x32x16xbf16>, vector<8xi1>, vector<8xbf16> into vector<8xbf16>
//       CHECK:   arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
// The rows after the last full tile: one tile of 1 to 3 rows, which widens
// each panel row of bf16 once for all of them.
//       CHECK:   scf.index_switch
//       CHECK:   case 3 {
//       CHECK:     scf.for %{{.*}} = %c0 to %c32 step %c4 iter_args(
//       CHECK:       %[[ROW3:.*]] = vector.load %{{.*}} : memref<2x32x16xbf16>, vector<16xbf16>
//       CHECK:       vector.bitcast %[[ROW3]] : vector<16xbf16> to vector<8xi32>
//   CHECK-NOT:       vector.load %{{.*}} : memref<2x32x16xbf16>, vector<16xbf16>
//       CHECK:       vector.load %{{.*}} : memref<?x32xbf16>, vector<4xbf16>
//       CHECK:       vector.load %{{.*}} : memref<?x32xbf16>, vector<4xbf16>
//       CHECK:       vector.load %{{.*}} : memref<?x32xbf16>, vector<4xbf16>
//   CHECK-NOT:   memref.alloc

// -----

// The same product in f16: A is read four elements at a time, converted once
// and its lanes selected for each of the four steps (4 rows per tile, so
// that the rows' converted quads stay in registers); the reduction's last
// 67 mod 4 = 3 steps read one element.
#pa = affine_map<(m, n, k) -> (m, k)>
#pb = affine_map<(m, n, k) -> (n floordiv 16, k, n mod 16)>
#pc = affine_map<(m, n, k) -> (m, n)>
func.func @panels_f16(%a: memref<?x67xf16>, %b: memref<1x67x16xf16>,
                      %c: memref<?x16xf32>) {
  // expected-remark @below {{contraction vectorized: broadcast kernel, 4 rows x 2 vectors of 8 lanes, f16 operands widened to f32 in registers (F16C conversions), f32 accumulators}}
  // expected-remark @below {{contraction with few rows: the last 1 to 3 rows of a block in one tile of their count}}
  linalg.generic {indexing_maps = [#pa, #pb, #pc],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x67xf16>, memref<1x67x16xf16>) outs(%c : memref<?x16xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xf = arith.extf %x : f16 to f32
    %yf = arith.extf %y : f16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
// CHECK-LABEL: func.func @panels_f16(
//   CHECK-NOT:   memref.alloc
//       CHECK:   scf.for %{{.*}} = %c0 to %c64 step %c4 iter_args(
//       CHECK:     vector.load %{{.*}} : memref<?x67xf16>, vector<4xf16>
//       CHECK:     vector.shuffle %{{.*}} [0, 1, 2, 3, 0, 1, 2, 3]
//       CHECK:     arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
//       CHECK:     vector.shuffle %{{.*}} [0, 0, 0, 0, 4, 4, 4, 4]
//       CHECK:     vector.fma
//       CHECK:     vector.shuffle %{{.*}} [3, 3, 3, 3, 7, 7, 7, 7]
//       CHECK:   scf.for %{{.*}} = %c64 to %c67 step %c1 iter_args(
//       CHECK:     memref.load %{{.*}} : memref<?x67xf16>
// NOF16C: remark: contraction vectorized: broadcast kernel, 4 rows x 2 vectors of 8 lanes, f16 operands widened to f32 in registers (a conversion call per element, the target has no F16C)

// -----

// Over three blocks of 16 columns (40 > 2 x 16), each element of A would be
// widened once per block: A is widened once instead, into an f32 copy of
// its shape (a row per parallel iteration: whole vectors, then a masked one
// for 67 mod 8 = 3 elements), and the kernel reads the copy with 6 rows per
// tile, its B still f16 and widened in registers. The copy is freed after
// the kernel.
#pa = affine_map<(m, n, k) -> (m, k)>
#pb = affine_map<(m, n, k) -> (n floordiv 16, k, n mod 16)>
#pc = affine_map<(m, n, k) -> (m, n)>
func.func @widened_f16(%a: memref<?x67xf16>, %b: memref<3x67x16xf16>,
                       %c: memref<?x40xf32>) {
  // expected-remark @below {{contraction vectorized: broadcast kernel, 6 rows x 2 vectors of 8 lanes, the left operand (f16) widened to f32 once, into a copy, the right operand (f16) widened to f32 in registers (F16C conversions), f32 accumulators}}
  // expected-remark @below {{contraction with few rows: the last 1 to 5 rows of a block in one tile of their count}}
  linalg.generic {indexing_maps = [#pa, #pb, #pc],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x67xf16>, memref<3x67x16xf16>) outs(%c : memref<?x40xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xf = arith.extf %x : f16 to f32
    %yf = arith.extf %y : f16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
// CHECK-LABEL: func.func @widened_f16(
//       CHECK:   %[[ROWS:.*]] = memref.dim %{{.*}}, %c0 : memref<?x67xf16>
//       CHECK:   %[[WIDE:.*]] = memref.alloc(%[[ROWS]]) : memref<?x67xf32>
//       CHECK:   linalg.generic {{.*}} ins(%{{.*}} : memref<?x67xf16>) outs(%[[WIDE]] : memref<?x67xf32>)
//       CHECK:     arith.extf %{{.*}} : f16 to f32
//   CHECK-NOT:   vector<4xf16>
//       CHECK:   scf.parallel
//       CHECK:     memref.load %[[WIDE]]
//       CHECK:     vector.load %{{.*}} : memref<3x67x16xf16>, vector<8xf16>
//       CHECK:     arith.extf %{{.*}} : vector<8xf16> to vector<8xf32>
//       CHECK:     vector.fma
//       CHECK:   memref.dealloc %[[WIDE]] : memref<?x67xf32>

// -----

// Q K^T in bf16 (the dot kernel): both operands' vectors widened, a masked
// step for the reduction's remainder; an f32 left operand stays as it is.
#q = affine_map<(b, m, n, k) -> (b, m, k)>
#k = affine_map<(b, m, n, k) -> (b, n, k)>
#s = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @scores_mixed(%q: memref<2x?x300xf32>, %k: memref<2x?x300xbf16>,
                        %s: memref<2x?x?xf32>) {
  // expected-remark @below {{contraction vectorized: dot kernel, 3 x 3 tiles of 8-lane accumulators, the right operand (bf16) widened to f32 in registers (16-bit shifts), f32 accumulators}}
  // expected-remark @below {{contraction with few rows: the last 1 to 2 rows of a block in one tile of their count}}
  linalg.generic {indexing_maps = [#q, #k, #s],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<2x?x300xf32>, memref<2x?x300xbf16>) outs(%s : memref<2x?x?xf32>) {
  ^bb0(%x: f32, %y: bf16, %acc: f32):
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %x, %yf : f32
    %t = arith.addf %acc, %p : f32
    linalg.yield %t : f32
  }
  return
}
// CHECK-LABEL: func.func @scores_mixed(
//   CHECK-NOT:   memref.alloc
//       CHECK:   scf.for %{{.*}} = %c0 to %c296 step %c8 iter_args(
//       CHECK:     vector.load %{{.*}} : memref<2x?x300xf32>, vector<8xf32>
//       CHECK:     vector.load %{{.*}} : memref<2x?x300xbf16>, vector<8xbf16>
//       CHECK:     arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
//       CHECK:   vector.maskedload %{{.*}} : memref<2x?x300xbf16>, vector<8xi1>, vector<8xbf16> into vector<8xbf16>
