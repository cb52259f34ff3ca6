// RUN: seq-opt %s --split-input-file --verify-diagnostics \
// RUN:   --seq-cpu-vectorize-contractions="vector-bits=512 vector-registers=32 streaming-store-bytes=1024 remarks=true" \
// RUN:   --canonicalize --cse | FileCheck %s
// RUN: seq-opt %s --split-input-file \
// RUN:   --seq-cpu-vectorize-contractions="vector-bits=512 vector-registers=32" \
// RUN:   | FileCheck %s --check-prefix=OFF
// The loops as the pipeline lowers them next (each pass verified): the
// fence's own scope stays, the loop body's goes.
// RUN: seq-opt %s --split-input-file \
// RUN:   --seq-cpu-vectorize-contractions="vector-bits=512 vector-registers=32 streaming-store-bytes=1024" \
// RUN:   --convert-scf-to-openmp --canonicalize --convert-scf-to-cf | FileCheck %s --check-prefix=OMP

// With streaming-store-bytes, a broadcast kernel that writes its output
// once (the fill folded into its accumulators, the reduction in one pass)
// stores its full output vectors with non-temporal stores, aligned to the
// vector, when the output holds at least that many bytes and its base and
// row stride are multiples of 64 bytes (tested once, before the loops), and
// with ordinary stores otherwise. Masked vectors (the last columns) are
// stored as before. Each parallel block ends with a fence under the same
// test, in an alloca scope of its own (so that the scope convert-scf-to-
// openmp puts around the loop body can still be inlined). Without the
// option, no store is non-temporal.
#an = affine_map<(m, n, k) -> (m, k)>
#bn = affine_map<(m, n, k) -> (k, n)>
#cn = affine_map<(m, n, k) -> (m, n)>
func.func @filled(%a: memref<?x64xf32>, %b: memref<64x?xf32>, %c: memref<?x?xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x?xf32>)
  // expected-remark @below {{contraction vectorized: broadcast kernel, 6 rows x 4 vectors of 16 lanes, blocks of 48 x 64, the fill of the output folded into the accumulators}}
  // expected-remark @below {{contraction with few rows}}
  // expected-remark @below {{contraction output streamed: stored around the caches (non-temporal stores) when it holds 1024 bytes or more and its rows are aligned}}
  linalg.generic {indexing_maps = [#an, #bn, #cn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x64xf32>, memref<64x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
// CHECK-LABEL: func.func @filled
//  CHECK-SAME:   %[[C:[a-zA-Z0-9]+]]: memref<?x?xf32>
//   CHECK-DAG:   %[[C4:.+]] = arith.constant 4 : index
//   CHECK-DAG:   %[[C64:.+]] = arith.constant 64 : index
//   CHECK-DAG:   %[[C1024:.+]] = arith.constant 1024 : index
//       CHECK:   %{{.+}}, %{{.+}}, %[[SIZES:.+]]:2, %[[STRIDES:.+]]:2 = memref.extract_strided_metadata %[[C]]
//       CHECK:   %[[B0:.+]] = arith.muli %[[SIZES]]#0, %[[C4]]
//       CHECK:   %[[BYTES:.+]] = arith.muli %[[B0]], %[[SIZES]]#1
//       CHECK:   %[[PTR:.+]] = memref.extract_aligned_pointer_as_index %[[C]]
//       CHECK:   %[[BIG:.+]] = arith.cmpi uge, %[[BYTES]], %[[C1024]]
//       CHECK:   arith.remui %[[PTR]], %[[C64]]
//       CHECK:   %[[ROW:.+]] = arith.muli %[[STRIDES]]#0, %[[C4]]
//       CHECK:   arith.remui %[[ROW]], %[[C64]]
//       CHECK:   %[[STREAM:.+]] = arith.andi
//       CHECK:   scf.parallel
//       CHECK:     %[[ACC:.+]]:24 = scf.for
//       CHECK:     scf.if %[[STREAM]] {
//       CHECK:       vector.store %[[ACC]]#0, %[[C]][{{.+}}] {alignment = 64 : i64, nontemporal = true}
//       CHECK:       vector.store %[[ACC]]#23, %[[C]][{{.+}}] {alignment = 64 : i64, nontemporal = true}
//       CHECK:     } else {
//       CHECK:       vector.store %[[ACC]]#0, %[[C]][{{.+}}] : memref<?x?xf32>, vector<16xf32>
//       CHECK:       vector.store %[[ACC]]#23, %[[C]][{{.+}}] : memref<?x?xf32>, vector<16xf32>
//       CHECK:     }
//       CHECK:     vector.maskedstore %[[C]]
//       CHECK:     scf.index_switch
//       CHECK:       scf.if %[[STREAM]] {
//  CHECK-NEXT:         vector.store {{.+}} {alignment = 64 : i64, nontemporal = true}
//       CHECK:       memref.alloca_scope {
//  CHECK-NEXT:         llvm.fence seq_cst
//  CHECK-NEXT:       }
//  CHECK-NEXT:     }
//  CHECK-NEXT:     scf.reduce
// OMP-LABEL: func.func @filled
//       OMP:   omp.wsloop
//   OMP-NOT:   memref.alloca_scope
//       OMP:   cf.cond_br
//       OMP:   memref.alloca_scope {
//  OMP-NEXT:     llvm.fence seq_cst
// OFF-LABEL: func.func @filled
//   OFF-NOT:   nontemporal
//   OFF-NOT:   llvm.fence

// -----

// Without a fill to fold, the kernel starts from C, which it reads: its
// stores stay ordinary.
#an = affine_map<(m, n, k) -> (m, k)>
#bn = affine_map<(m, n, k) -> (k, n)>
#cn = affine_map<(m, n, k) -> (m, n)>
func.func @accumulating(%a: memref<?x64xf32>, %b: memref<64x?xf32>, %c: memref<?x?xf32>) {
  // expected-remark @below {{contraction vectorized: broadcast kernel, 6 rows x 4 vectors of 16 lanes, blocks of 48 x 64; its consumer not fused}}
  // expected-remark @below {{contraction with few rows}}
  linalg.generic {indexing_maps = [#an, #bn, #cn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x64xf32>, memref<64x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
// CHECK-LABEL: func.func @accumulating
//   CHECK-NOT:   nontemporal
//   CHECK-NOT:   llvm.fence
//       CHECK:   return

// -----

// A reduction long enough to run in steps of kc keeps its partial sums in
// C between them: ordinary stores.
#an = affine_map<(m, n, k) -> (m, k)>
#bn = affine_map<(m, n, k) -> (k, n)>
#cn = affine_map<(m, n, k) -> (m, n)>
func.func @long_reduction(%a: memref<?x8192xf32>, %b: memref<8192x?xf32>, %c: memref<?x?xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x?xf32>)
  // expected-remark @below {{contraction vectorized: broadcast kernel, 6 rows x 4 vectors of 16 lanes, blocks of 96 x 64, the reduction in steps of 1024 (sums kept in the output between them), the fill of the output folded into the accumulators; its consumer not fused}}
  // expected-remark @below {{contraction with few rows}}
  linalg.generic {indexing_maps = [#an, #bn, #cn],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x8192xf32>, memref<8192x?xf32>) outs(%c : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
// CHECK-LABEL: func.func @long_reduction
//   CHECK-NOT:   nontemporal
//   CHECK-NOT:   llvm.fence
//       CHECK:   return
