// RUN: seq-opt %s --seq-cpu-vectorize-contractions="vector-bits=512 vector-registers=32 bf16-dot remarks" \
// RUN:   --canonicalize --cse 2>&1 | FileCheck %s --check-prefix=DOT
// RUN: seq-opt %s --seq-cpu-vectorize-contractions="vector-bits=512 vector-registers=32" \
// RUN:   | FileCheck %s --check-prefix=WIDEN

// The dot kernel (both operands contiguous along the reduction, here
// p @ q^T in bf16): each step loads 32 bf16 of each row, 2 per lane, and
// multiplies them in pairs into the 4 x 4 tile with vdpbf16ps; the
// remainder (70 = 2 x 32 + 6) is one step under a 32-lane mask, whose
// masked-off elements read as zero.
#qa = affine_map<(m, n, k) -> (m, k)>
#qb = affine_map<(m, n, k) -> (n, k)>
#qc = affine_map<(m, n, k) -> (m, n)>
func.func @dot_pairs(%a: memref<?x70xbf16>, %b: memref<?x70xbf16>,
                     %c: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#qa, #qb, #qc],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x70xbf16>, memref<?x70xbf16>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
// DOT: remark: contraction vectorized: dot kernel, 4 x 4 tiles of 16-lane accumulators, bf16 operands multiplied in pairs by vdpbf16ps (AVX512_BF16), f32 accumulators
// DOT-LABEL: func.func @dot_pairs(
//       DOT:   scf.for %{{.*}} = %c0 to %c64 step %c32
//   DOT-COUNT-8:   vector.load %{{.*}} : memref<?x70xbf16>, vector<32xbf16>
//  DOT-COUNT-16:   x86vector.avx512.dot %{{.*}} : vector<32xbf16> -> vector<16xf32>
//       DOT:   %[[MASK:.*]] = vector.constant_mask [6] : vector<32xi1>
//       DOT:   vector.maskedload %{{.*}}, %[[MASK]], %{{.*}} : memref<?x70xbf16>, vector<32xi1>, vector<32xbf16> into vector<32xbf16>
//       DOT:   x86vector.avx512.dot
//       DOT:   vector.reduction <add>
// WIDEN-LABEL: func.func @dot_pairs(
//   WIDEN-NOT:   x86vector
//       WIDEN:   vector.fma
