// RUN: seq-opt %s --split-input-file \
// RUN:   --seq-cpu-vectorize-rows="vector-bits=512" --canonicalize --cse \
// RUN:   | FileCheck %s
// RUN: seq-opt %s --split-input-file --seq-cpu-vectorize-rows="vector-bits=512" \
// RUN:   -debug-only=seq-cpu-vectorize-rows -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEBUG

// softmax's row sum of exp(x - max): the rows are the parallel loop; each row
// is evaluated 16 lanes at a time into a vector of partial sums, the rest of
// the row in one masked step whose dead lanes add 0, then one reduction.

#x = affine_map<(r, c) -> (r, c)>
#row = affine_map<(r, c) -> (r)>
func.func @sum_exp(%x: memref<?x?xf32>, %max: memref<?xf32>, %sum: memref<?xf32>) {
  linalg.generic {indexing_maps = [#x, #row, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %max : memref<?x?xf32>, memref<?xf32>) outs(%sum : memref<?xf32>) {
  ^bb0(%in: f32, %m: f32, %acc: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %e, %acc : f32
    linalg.yield %s : f32
  }
  return
}
// CHECK-LABEL: func.func @sum_exp
// DEBUG:      [seq-cpu-vectorize-rows] reduction along loop 1 with arith.addf:
//   CHECK-DAG:   %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// Four independent chains of partial sums over 64 columns per step, then
// one vector per step, then the masked step.
// The row's max, the same for the whole row, is read once before its loops.
//       CHECK:   scf.parallel (%[[R:.*]]) =
//       CHECK:     %[[M:.*]] = memref.load %{{.*}}[%[[R]]]
//       CHECK:     %[[MV:.*]] = vector.broadcast %[[M]] : f32 to vector<16xf32>
//       CHECK:     %[[ACC:.*]]:4 = scf.for %[[C:.*]] = %c0 to %{{.*}} step %c64 iter_args(%{{.*}} = %[[ZEROS]], %{{.*}} = %[[ZEROS]], %{{.*}} = %[[ZEROS]], %{{.*}} = %[[ZEROS]]) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
//       CHECK:       %[[XV:.*]] = vector.load %{{.*}}[%[[R]], %[[C]]] : memref<?x?xf32>, vector<16xf32>
//   CHECK-NOT:       memref.load
//       CHECK:       arith.subf %[[XV]], %[[MV]] : vector<16xf32>
//       CHECK:       math.exp {{.*}} : vector<16xf32>
//       CHECK:       arith.addf
//       CHECK:     scf.for %{{.*}} step %c16 iter_args(
//       CHECK:       math.exp {{.*}} : vector<16xf32>
//       CHECK:     vector.create_mask
//       CHECK:     vector.maskedload
//       CHECK:     arith.select
//       CHECK:     vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<16xf32> into f32
//       CHECK:     memref.store

// -----

// A row max starts from -inf lanes and masks with -inf.
#x2 = affine_map<(r, c) -> (r, c)>
#row2 = affine_map<(r, c) -> (r)>
func.func @row_max(%x: memref<8x100xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [#x2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x100xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  }
  return
}
// CHECK-LABEL: func.func @row_max
// DEBUG-NEXT: [seq-cpu-vectorize-rows] reduction along loop 1 with arith.maximumf:
//       CHECK:   arith.constant dense<0xFF800000> : vector<16xf32>
//       CHECK:   scf.parallel
// (The one step of four chains over columns 0-63 is unrolled, their max
// with the neutral -inf folded.)
// CHECK-COUNT-3:     arith.maximumf {{.*}} : vector<16xf32>
//       CHECK:     scf.for {{.*}} step %c16 iter_args(
//       CHECK:       arith.maximumf {{.*}} : vector<16xf32>
//       CHECK:     vector.constant_mask [4] : vector<16xi1>
//       CHECK:     vector.reduction <maximumf>

// -----

// softmax's exps and their row sums in one pass: a reduction with a second
// output stored per element. Each vector of exps is stored as it is added
// (the masked step stores its live lanes only), and the sums reduced into
// their output as before. A second output that the body reads, or that does
// not move with the reduction, keeps the scalar loops.
#x3 = affine_map<(r, c) -> (r, c)>
#row3 = affine_map<(r, c) -> (r)>
func.func @exps_and_sums(%x: memref<?x?xf32>, %max: memref<?xf32>, %e: memref<?x?xf32>, %sum: memref<?xf32>) {
  linalg.generic {indexing_maps = [#x3, #row3, #x3, #row3],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %max : memref<?x?xf32>, memref<?xf32>) outs(%e, %sum : memref<?x?xf32>, memref<?xf32>) {
  ^bb0(%in: f32, %m: f32, %eo: f32, %acc: f32):
    %d = arith.subf %in, %m : f32
    %ex = math.exp %d : f32
    %s = arith.addf %ex, %acc : f32
    linalg.yield %ex, %s : f32, f32
  }
  linalg.generic {indexing_maps = [#x3, #row3, #x3, #row3],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %max : memref<?x?xf32>, memref<?xf32>) outs(%e, %sum : memref<?x?xf32>, memref<?xf32>) {
  ^bb0(%in: f32, %m: f32, %eo: f32, %acc: f32):
    %d = arith.subf %in, %eo : f32
    %s = arith.addf %d, %acc : f32
    linalg.yield %d, %s : f32, f32
  }
  linalg.generic {indexing_maps = [#x3, #row3, #row3, #row3],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %max : memref<?x?xf32>, memref<?xf32>) outs(%max, %sum : memref<?xf32>, memref<?xf32>) {
  ^bb0(%in: f32, %m: f32, %mo: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %m, %s : f32, f32
  }
  return
}
// CHECK-LABEL: func.func @exps_and_sums(
//  CHECK-SAME:   %[[X:[^:]*]]: memref<?x?xf32>, %[[MAX:[^:]*]]: memref<?xf32>, %[[E:[^:]*]]: memref<?x?xf32>, %[[SUM:[^:]*]]: memref<?xf32>
//       CHECK:   scf.parallel (%[[R:.*]]) =
//       CHECK:     scf.for %[[C:.*]] = %c0 to %{{.*}} step %c64 iter_args(
//       CHECK:       %[[EXP:.*]] = math.exp %{{.*}} : vector<16xf32>
//       CHECK:       vector.store %[[EXP]], %[[E]][%[[R]], %[[C]]] : memref<?x?xf32>, vector<16xf32>
//       CHECK:       arith.addf %{{.*}}, %[[EXP]] : vector<16xf32>
//       CHECK:     scf.for %{{.*}} step %c16 iter_args(
//       CHECK:       vector.store
//       CHECK:     %[[MASK:.*]] = vector.create_mask
//       CHECK:     %[[TAIL:.*]] = math.exp %{{.*}} : vector<16xf32>
//       CHECK:     vector.maskedstore %[[E]][%[[R]], %{{.*}}], %[[MASK]], %[[TAIL]]
//       CHECK:     arith.select %[[MASK]], %[[TAIL]]
//       CHECK:     vector.reduction <add>
//       CHECK:     memref.store %{{.*}}, %[[SUM]][%[[R]]]
//       CHECK:   linalg.generic
//       CHECK:   linalg.generic
// DEBUG:      [seq-cpu-vectorize-rows] reduction along loop 1 with arith.addf:
// DEBUG-NEXT: [seq-cpu-vectorize-rows] not vectorized: a reduction whose per-element output is not indexed by every loop, contiguous along the reduction and write-only:
// DEBUG-NEXT: [seq-cpu-vectorize-rows] not vectorized: a reduction with two outputs, neither stored per element:

// -----

// softmax's last step, elementwise with the row's sum beside each element:
// the sum is read once per row, before the row's loops, not per vector
// (the body's ops on it alone are then loop-invariant, for LLVM's LICM).
#e = affine_map<(r, c) -> (r, c)>
#erow = affine_map<(r, c) -> (r)>
func.func @scale_rows(%sum: memref<?xf32>, %p: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#erow, #e], iterator_types = ["parallel", "parallel"]}
      ins(%sum : memref<?xf32>) outs(%p : memref<?x?xf32>) {
  ^bb0(%s: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %inv = arith.divf %one, %s : f32
    %y = arith.mulf %out, %inv : f32
    linalg.yield %y : f32
  }
  return
}
// CHECK-LABEL: func.func @scale_rows(
//  CHECK-SAME:   %[[SUM:[^:]*]]: memref<?xf32>, %[[P:[^:]*]]: memref<?x?xf32>
//       CHECK:   scf.parallel (%[[R:.*]]) =
//       CHECK:     %[[S:.*]] = memref.load %[[SUM]][%[[R]]] : memref<?xf32>
//       CHECK:     %[[SV:.*]] = vector.broadcast %[[S]] : f32 to vector<16xf32>
//       CHECK:     scf.for %[[C:.*]] = %c0 to %{{.*}} step %c16 {
//   CHECK-NOT:       memref.load
//       CHECK:       %[[OLD:.*]] = vector.load %[[P]][%[[R]], %[[C]]]
//       CHECK:       %[[INV:.*]] = arith.divf %{{.*}}, %[[SV]] : vector<16xf32>
//       CHECK:       %[[Y:.*]] = arith.mulf %[[OLD]], %[[INV]] : vector<16xf32>
//       CHECK:       vector.store %[[Y]], %[[P]][%[[R]], %[[C]]]
//       CHECK:     vector.maskedload %[[P]]
//       CHECK:     vector.maskedstore %[[P]]
// DEBUG:      [seq-cpu-vectorize-rows] elementwise along loop 1:

// -----

// Left alone: a reduction over a strided dimension (column sums), a product
// reduction, and a row reduction of f64.
#t = affine_map<(c, r) -> (r, c)>
#col = affine_map<(c, r) -> (c)>
func.func @others(%x: memref<8x100xf32>, %cols: memref<100xf32>, %y: memref<8x100xf64>, %rows: memref<8xf64>) {
  linalg.generic {indexing_maps = [#t, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x100xf32>) outs(%cols : memref<100xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#t, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x100xf32>) outs(%cols : memref<100xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.mulf %in, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<8x100xf64>) outs(%rows : memref<8xf64>) {
  ^bb0(%in: f64, %acc: f64):
    %s = arith.addf %in, %acc : f64
    linalg.yield %s : f64
  }
  return
}
// CHECK-LABEL: func.func @others
// DEBUG-NEXT: [seq-cpu-vectorize-rows] not vectorized: a reduction, but the output moves with it or an input is not contiguous along it:
// DEBUG-NEXT: [seq-cpu-vectorize-rows] not vectorized: a reduction, but the output moves with it or an input is not contiguous along it:
// DEBUG-NEXT: [seq-cpu-vectorize-rows] not vectorized: not an f32 body (or one that widens bf16 or f16 inputs):
// CHECK-COUNT-3: linalg.generic
//   CHECK-NOT:   vector.

// -----

// bf16 and f16 inputs that the body only widens: read as narrow vectors,
// widened in registers. The copy of a narrow left operand that
// seq-cpu-vectorize-contractions widens once per call (extf per element),
// and a row sum of an f16 input.
func.func @narrow(%a: memref<?x67xbf16>, %w: memref<?x67xf32>,
                  %h: memref<4x40xf16>, %sums: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<?x67xbf16>) outs(%w : memref<?x67xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %x = arith.extf %in : bf16 to f32
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%h : memref<4x40xf16>) outs(%sums : memref<4xf32>) {
  ^bb0(%in: f16, %acc: f32):
    %x = arith.extf %in : f16 to f32
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}
// CHECK-LABEL: func.func @narrow(
//  CHECK-SAME:   %[[A:[^:]*]]: memref<?x67xbf16>, %[[W:[^:]*]]: memref<?x67xf32>, %[[H:[^:]*]]: memref<4x40xf16>
//       CHECK:   scf.parallel (%[[R:.*]]) =
//       CHECK:     scf.for %[[C:.*]] = %c0 to %c64 step %c16 {
//       CHECK:       %[[V:.*]] = vector.load %[[A]][%[[R]], %[[C]]] : memref<?x67xbf16>, vector<16xbf16>
//       CHECK:       %[[X:.*]] = arith.extf %[[V]] : vector<16xbf16> to vector<16xf32>
//       CHECK:       vector.store %[[X]], %[[W]][%[[R]], %[[C]]] : memref<?x67xf32>, vector<16xf32>
//       CHECK:     %[[T:.*]] = vector.maskedload %[[A]][%[[R]], %c64], %{{.*}}, %{{.*}} : memref<?x67xbf16>, vector<16xi1>, vector<16xbf16> into vector<16xbf16>
//       CHECK:     %[[TX:.*]] = arith.extf %[[T]] : vector<16xbf16> to vector<16xf32>
//       CHECK:     vector.maskedstore %[[W]][%[[R]], %c64], %{{.*}}, %[[TX]]
//       CHECK:   scf.parallel
//       CHECK:     vector.load %[[H]][%{{.*}}, %{{.*}}] : memref<4x40xf16>, vector<16xf16>
//       CHECK:     arith.extf %{{.*}} : vector<16xf16> to vector<16xf32>
//       CHECK:     vector.reduction <add>
// DEBUG:      [seq-cpu-vectorize-rows] elementwise along loop 1:
// DEBUG-NEXT: [seq-cpu-vectorize-rows] reduction along loop 1 with arith.addf:

// -----

// Left alone: a bf16 input used other than by a widening, and a bf16
// output.
func.func @narrow_others(%a: memref<8x40xbf16>, %w: memref<8x40xf32>, %o: memref<8x40xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<8x40xbf16>) outs(%w : memref<8x40xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %n = arith.negf %in : bf16
    %x = arith.extf %n : bf16 to f32
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r, c)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<8x40xf32>) outs(%o : memref<8x40xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %x = arith.truncf %in : f32 to bf16
    linalg.yield %x : bf16
  }
  return
}
// CHECK-LABEL: func.func @narrow_others
// DEBUG:      [seq-cpu-vectorize-rows] not vectorized: not an f32 body (or one that widens bf16 or f16 inputs):
// DEBUG-NEXT: [seq-cpu-vectorize-rows] not vectorized: not an f32 body (or one that widens bf16 or f16 inputs):
// CHECK-COUNT-2: linalg.generic
//   CHECK-NOT:   vector.

// -----

// Copies and transposes that keep the innermost dim in place move whole
// rows: the heads' [b, n, h, d] -> [b, h, n, d] transpose and a copy into a
// strided slice become vector loads and stores along d, the last part of a
// row masked. A transpose that moves the innermost dim, and a copy of rows
// of one element, keep their scalar loops.
func.func @moves(%q: memref<?x?x3x24xf32>, %heads: memref<?x3x?x24xf32>,
                 %x: memref<?x72xf32>, %cat: memref<?x72xf32, strided<[144, 1]>>,
                 %t: memref<72x?xf32>, %col: memref<?x1xf32>,
                 %colOut: memref<?x1xf32, strided<[2, 1]>>) {
  linalg.transpose ins(%q : memref<?x?x3x24xf32>) outs(%heads : memref<?x3x?x24xf32>) permutation = [0, 2, 1, 3]
  linalg.copy ins(%x : memref<?x72xf32>) outs(%cat : memref<?x72xf32, strided<[144, 1]>>)
  linalg.transpose ins(%x : memref<?x72xf32>) outs(%t : memref<72x?xf32>) permutation = [1, 0]
  linalg.copy ins(%col : memref<?x1xf32>) outs(%colOut : memref<?x1xf32, strided<[2, 1]>>)
  return
}
// CHECK-LABEL: func.func @moves(
//  CHECK-SAME:   %[[Q:[^:]*]]: memref<?x?x3x24xf32>, %[[H:[^:]*]]: memref<?x3x?x24xf32>, %[[X:[^:]*]]: memref<?x72xf32>, %[[CAT:[^:]*]]: memref<?x72xf32, strided<[144, 1]>>
//       CHECK:   scf.parallel (%[[B:.*]], %[[HD:.*]], %[[N:.*]]) =
//       CHECK:     %[[V:.*]] = vector.load %[[Q]][%[[B]], %[[N]], %[[HD]], %c0] : memref<?x?x3x24xf32>, vector<16xf32>
//       CHECK:     vector.store %[[V]], %[[H]][%[[B]], %[[HD]], %[[N]], %c0] : memref<?x3x?x24xf32>, vector<16xf32>
//       CHECK:     %[[TAIL:.*]] = vector.maskedload %[[Q]][%[[B]], %[[N]], %[[HD]], %c16]
//       CHECK:     vector.maskedstore %[[H]][%[[B]], %[[HD]], %[[N]], %c16], %{{.*}}, %[[TAIL]]
//       CHECK:   scf.parallel (%[[R:.*]]) =
//       CHECK:     scf.for %[[C:.*]] = %c0 to %c64 step %c16 {
//       CHECK:       %[[W:.*]] = vector.load %[[X]][%[[R]], %[[C]]]
//       CHECK:       vector.store %[[W]], %[[CAT]][%[[R]], %[[C]]]
//       CHECK:     vector.maskedstore %[[CAT]][%[[R]], %c64]
//       CHECK:   linalg.transpose
//       CHECK:   linalg.copy
//   CHECK-NOT:   vector.
