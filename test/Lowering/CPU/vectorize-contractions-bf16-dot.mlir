// RUN: seq-opt %s --seq-cpu-vectorize-contractions="vector-bits=512 vector-registers=32 bf16-dot remarks" \
// RUN:   --canonicalize --cse 2>&1 | FileCheck %s
// RUN: seq-opt %s --seq-cpu-vectorize-contractions="vector-bits=512 vector-registers=32 bf16-dot" \
// RUN:   --canonicalize --cse --convert-vector-to-llvm="enable-x86vector" 2>&1 | FileCheck %s --check-prefix=LLVM
// RUN: seq-opt %s --seq-cpu-vectorize-contractions="vector-bits=512 vector-registers=32 remarks" \
// RUN:   2>&1 | FileCheck %s --check-prefix=NODOT

// A bf16 x times a bf16 W packed by seq-cpu-pack-weights in k-pair panels,
// read through (n floordiv 64, k floordiv 2, n mod 64, k mod 2): the
// broadcast kernel's reduction runs over pairs of steps, each loading 16
// columns x 2 steps of W as one vector of 32 bf16 (from the panel's rows
// collapsed with their pairs), broadcasting the row's pair of x as one
// 32-bit word, and multiplying pairs into the accumulators with
// x86vector.avx512.dot (vdpbf16ps): 6 rows x 4 vectors of 16 lanes. The odd
// last step (k = 33) pairs x's element with zero.
#pa = affine_map<(m, n, k) -> (m, k)>
#pb = affine_map<(m, n, k) -> (n floordiv 64, k floordiv 2, n mod 64, k mod 2)>
#pc = affine_map<(m, n, k) -> (m, n)>
func.func @pairs(%a: memref<?x33xbf16>, %b: memref<2x17x64x2xbf16>,
                 %c: memref<?x100xf32>) {
  linalg.generic {indexing_maps = [#pa, #pb, #pc],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x33xbf16>, memref<2x17x64x2xbf16>) outs(%c : memref<?x100xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
// CHECK: remark: contraction vectorized: broadcast kernel, 6 rows x 4 vectors of 16 lanes, bf16 operands multiplied in pairs by vdpbf16ps (AVX512_BF16), f32 accumulators, blocks of 48 x 64, right operand in packed panels of 64 columns in k pairs
// CHECK-LABEL: func.func @pairs(
//       CHECK:   %[[B:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : memref<2x17x64x2xbf16> into memref<2x17x128xbf16>
//       CHECK:   scf.parallel
// The whole pairs: k = 0, 2, .. 30.
//       CHECK:       scf.for %[[K:.*]] = %c0 to %c32 step %c2
//       CHECK:         %[[Q:.*]] = arith.divui %[[K]], %c2
//       CHECK:         vector.load %[[B]][%{{.*}}, %[[Q]], %{{.*}}] : memref<2x17x128xbf16>, vector<32xbf16>
//       CHECK:         %[[PAIR:.*]] = vector.load %{{.*}}[%{{.*}}, %[[K]]] : memref<?x33xbf16>, vector<2xbf16>
//       CHECK:         %[[WORD:.*]] = vector.bitcast %[[PAIR]] : vector<2xbf16> to vector<1xi32>
//       CHECK:         vector.broadcast %{{.*}} : i32 to vector<16xi32>
//       CHECK:         vector.bitcast %{{.*}} : vector<16xi32> to vector<32xbf16>
// CHECK-COUNT-4:       x86vector.avx512.dot %{{.*}} : vector<32xbf16> -> vector<16xf32>
// The odd last step (its loop of one trip folded): x's element paired with
// zero.
//   CHECK-NOT:       scf.for
//       CHECK:       memref.load %{{.*}}[%{{.*}}, %c32] : memref<?x33xbf16>
//       CHECK:       vector.from_elements %{{.*}}, %cst{{.*}} : vector<2xbf16>
// CHECK-COUNT-4:     x86vector.avx512.dot
//   CHECK-NOT:   linalg.generic

// LLVM: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"

// Without vdpbf16ps (bf16-dot unset), k-pair panels keep the scalar loops,
// with a remark.
// NODOT: remark: contraction left to the scalar loops: its operand is packed in k pairs for vdpbf16ps, which this target lacks (bf16-dot, 512-bit vectors, bf16 operands)
// NODOT-LABEL: func.func @pairs
//       NODOT:   linalg.generic

// The accumulators hold whole columns: no interleaving of lanes (the
// widening kernel's pairs of bf16 vectors) before the store.
// RUN: seq-opt %s --seq-cpu-vectorize-contractions="vector-bits=512 vector-registers=32 bf16-dot" \
// RUN:   | FileCheck %s --check-prefix=NOSHUFFLE
// NOSHUFFLE-NOT: vector.shuffle
