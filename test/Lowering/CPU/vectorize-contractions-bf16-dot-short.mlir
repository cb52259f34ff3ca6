// RUN: seq-opt %s --seq-cpu-vectorize-contractions="vector-bits=512 vector-registers=32 bf16-dot remarks" \
// RUN:   --canonicalize --cse 2>&1 | FileCheck %s
// RUN: seq-opt %s --seq-cpu-vectorize-contractions="vector-bits=512 vector-registers=32 remarks" \
// RUN:   --canonicalize --cse 2>&1 | FileCheck %s --check-prefix=NODOT

// q @ k^T on bf16 with a short reduction (bf16 attention's Q K^T read in
// place; an odd head size, 33): with vdpbf16ps, k is copied per call into
// k-pair panels [8, ceil(n / 64), 17, 64, 2] (the 34th step of each column
// a zero) and the broadcast kernel multiplies them in pairs; with few rows
// (the test of the row count), the dot kernel pairs q and k as they are.
// Without vdpbf16ps the copy is in plain panels and both operands are
// widened.
func.func @short_pairs(%q: memref<8x?x33xbf16>, %k: memref<8x?x33xbf16>, %s: memref<8x?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(g, m, n, c) -> (g, m, c)>,
                                   affine_map<(g, m, n, c) -> (g, n, c)>,
                                   affine_map<(g, m, n, c) -> (g, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<8x?x33xbf16>, memref<8x?x33xbf16>) outs(%s : memref<8x?x?xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %a32 = arith.extf %a : bf16 to f32
    %b32 = arith.extf %b : bf16 to f32
    %p = arith.mulf %a32, %b32 : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
// CHECK: remark: contraction vectorized: broadcast kernel, 6 rows x 4 vectors of 16 lanes, bf16 operands multiplied in pairs by vdpbf16ps (AVX512_BF16), f32 accumulators, blocks of 48 x 64, right operand in packed panels of 64 columns in k pairs
// CHECK: remark: contraction vectorized: dot kernel, 4 x 4 tiles of 16-lane accumulators, bf16 operands multiplied in pairs by vdpbf16ps (AVX512_BF16)
// CHECK-LABEL: func.func @short_pairs
//       CHECK:   %[[KT:.*]] = memref.alloc(%{{.*}}) : memref<8x?x17x64x2xbf16>
//       CHECK:   scf.if
//       CHECK:     scf.parallel
// The pair past the reduction's end is zero.
//       CHECK:       arith.cmpi ult, %{{.*}}, %c33
//       CHECK:       memref.store %{{.*}}, %[[KT]]
//       CHECK:     x86vector.avx512.dot
//       CHECK:   } else {
//       CHECK:     x86vector.avx512.dot
//       CHECK:   memref.dealloc %[[KT]]

// NODOT: remark: contraction vectorized: broadcast kernel, 4 rows x 4 vectors of 16 lanes, bf16 operands widened to f32 in registers (16-bit shifts), f32 accumulators, blocks of 48 x 64, right operand in packed panels of 64 columns
// NODOT-LABEL: func.func @short_pairs
//       NODOT:   memref.alloc(%{{.*}}) : memref<8x?x33x64xbf16>
//   NODOT-NOT:   x86vector.avx512.dot
