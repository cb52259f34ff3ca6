// RUN: seq-opt %s --split-input-file --verify-diagnostics \
// RUN:   --seq-cpu-prefetch-strided-reads="remarks=true" | FileCheck %s

// The fused scan's loop over time: rows of [b, t, 1536] f32 are 6 KiB apart.
// The software-pipelined read of step t + 1 (clamped to the last step) gets
// a prefetch of step t + 1 + 8, clamped to the last row; the read of the
// state's [16] vector does not move with t.
func.func @scan_rows(%u: memref<?x?x1536xf32>, %h: memref<16xf32>,
                     %b: index, %c: index, %len: index) -> vector<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<16xf32>
  %last = arith.subi %len, %c1 : index
  %r = scf.for %t = %c0 to %len step %c1 iter_args(%acc = %zero) -> vector<16xf32> {
    %next = arith.addi %t, %c1 : index
    %at = arith.minsi %next, %last : index
    // expected-remark @below {{strided read prefetched: 8 iterations ahead, into L2 (a stride of 6144 bytes per iteration, which the hardware prefetchers do not follow)}}
    %v = vector.transfer_read %u[%b, %at, %c], %pad {in_bounds = [true]} : memref<?x?x1536xf32>, vector<16xf32>
    %s = vector.load %h[%c0] : memref<16xf32>, vector<16xf32>
    %sum = arith.addf %v, %s : vector<16xf32>
    %a = arith.addf %acc, %sum : vector<16xf32>
    scf.yield %a : vector<16xf32>
  }
  return %r : vector<16xf32>
}
// CHECK-LABEL: func.func @scan_rows(
//  CHECK-SAME:   %[[U:[^:]*]]: memref<?x?x1536xf32>
//       CHECK:   scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
//       CHECK:     %[[AHEAD:.*]] = arith.addi %[[T]], %c9 : index
//       CHECK:     %[[SIZE:.*]] = memref.dim %[[U]], %c1{{.*}} : memref<?x?x1536xf32>
//       CHECK:     %[[END:.*]] = arith.subi %[[SIZE]], %c1{{.*}} : index
//       CHECK:     %[[AT:.*]] = arith.minsi %[[AHEAD]], %[[END]] : index
//       CHECK:     memref.prefetch %[[U]][%{{.*}}, %[[AT]], %{{.*}}], read, locality<2>, data : memref<?x?x1536xf32>
//       CHECK:     vector.transfer_read %[[U]]
//   CHECK-NOT:     memref.prefetch
//       CHECK:     vector.load
//       CHECK:     scf.yield

// -----

// A loop of step 2 over rows 256 bytes apart (512 per iteration: the
// hardware follows it), and rows 4 KiB apart read in a loop nested in the
// one that steps over them (the inner loop's index decides): no prefetch.
func.func @short_or_nested(%a: memref<64x64xf32>, %w: memref<?x1024xf32>,
                           %n: index) -> vector<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<16xf32>
  %r = scf.for %i = %c0 to %c64 step %c2 iter_args(%acc = %zero) -> vector<16xf32> {
    %v = vector.load %a[%i, %c0] : memref<64x64xf32>, vector<16xf32>
    %s = arith.addf %acc, %v : vector<16xf32>
    scf.yield %s : vector<16xf32>
  }
  %q = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %r) -> vector<16xf32> {
    %in = scf.for %j = %c0 to %c64 step %c1 iter_args(%x = %acc) -> vector<16xf32> {
      %v = vector.load %w[%i, %c0] : memref<?x1024xf32>, vector<16xf32>
      %s = arith.addf %x, %v : vector<16xf32>
      scf.yield %s : vector<16xf32>
    }
    scf.yield %in : vector<16xf32>
  }
  return %q : vector<16xf32>
}
// CHECK-LABEL: func.func @short_or_nested(
//   CHECK-NOT:   memref.prefetch
//       CHECK:   return
