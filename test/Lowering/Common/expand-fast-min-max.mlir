// RUN: seq-opt %s --seq-expand-fast-min-max | FileCheck %s
// RUN: seq-opt %s --seq-expand-fast-min-max --arith-expand \
// RUN:   | FileCheck %s --check-prefix=EXPAND

// What x86 selects for the row maximum: one vmaxps (AVX-512 and AVX2)
// where arith-expand alone gives compares for NaN, blends and a vmaxps-free
// sequence.
// RUN: seq-opt %s --seq-expand-fast-min-max --arith-expand --convert-arith-to-llvm \
// RUN:   --convert-func-to-llvm --reconcile-unrealized-casts -o - \
// RUN:   | mlir-translate --mlir-to-llvmir \
// RUN:   | llc -O2 -mtriple=x86_64-unknown-linux-gnu -mattr=+avx512f \
// RUN:   | FileCheck %s --check-prefix=AVX512

// The row maximum of attention's scores: nnan nsz, a compare and a select
// that keep the flags.

// CHECK-LABEL: func.func @row_max(
// CHECK-SAME:    %[[A:.*]]: vector<16xf32>, %[[B:.*]]: vector<16xf32>)
// CHECK:         %[[C:.*]] = arith.cmpf ogt, %[[A]], %[[B]] fastmath<nnan,nsz> : vector<16xf32>
// CHECK:         %[[S:.*]] = arith.select %[[C]], %[[A]], %[[B]] : vector<16xi1>, vector<16xf32>
// CHECK:         return %[[S]]
// EXPAND-LABEL: func.func @row_max(
// EXPAND-NOT:     arith.cmpf uno
// AVX512-LABEL: row_max:
// AVX512:         vmaxps %zmm
// AVX512-NOT:     vcmpunordps
// AVX512:         retq
func.func @row_max(%a: vector<16xf32>, %b: vector<16xf32>) -> vector<16xf32> {
  %m = arith.maximumf %a, %b fastmath<nnan,nsz> : vector<16xf32>
  return %m : vector<16xf32>
}

// minimumf with both flags, on scalars.

// CHECK-LABEL: func.func @scalar_min(
// CHECK-SAME:    %[[A:.*]]: f32, %[[B:.*]]: f32)
// CHECK:         %[[C:.*]] = arith.cmpf olt, %[[A]], %[[B]] fastmath<nnan,nsz> : f32
// CHECK:         arith.select %[[C]], %[[A]], %[[B]] : f32
// AVX512-LABEL: scalar_min:
// AVX512:         vminss
// AVX512-NOT:     vcmpunordss
// AVX512:         retq
func.func @scalar_min(%a: f32, %b: f32) -> f32 {
  %m = arith.minimumf %a, %b fastmath<nnan,nsz> : f32
  return %m : f32
}

// maxnumf and minnumf may return either zero: nnan alone is enough.

// CHECK-LABEL: func.func @num(
// CHECK:         arith.cmpf ogt, %{{.*}}, %{{.*}} fastmath<nnan> : vector<8xf32>
// CHECK:         arith.cmpf olt, %{{.*}}, %{{.*}} fastmath<nnan> : vector<8xf32>
// CHECK-NOT:     arith.maxnumf
// CHECK-NOT:     arith.minnumf
func.func @num(%a: vector<8xf32>, %b: vector<8xf32>) -> (vector<8xf32>, vector<8xf32>) {
  %x = arith.maxnumf %a, %b fastmath<nnan> : vector<8xf32>
  %y = arith.minnumf %a, %b fastmath<nnan> : vector<8xf32>
  return %x, %y : vector<8xf32>, vector<8xf32>
}

// Without the flags the NaN and zero semantics hold: the ops are left to
// arith-expand, which compares for NaN.

// CHECK-LABEL: func.func @kept(
// CHECK:         arith.maximumf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK:         arith.maximumf %{{.*}}, %{{.*}} fastmath<nnan> : vector<16xf32>
// CHECK:         arith.minimumf %{{.*}}, %{{.*}} fastmath<nsz> : vector<16xf32>
// CHECK:         arith.maxnumf %{{.*}}, %{{.*}} fastmath<nsz> : vector<16xf32>
// CHECK-NOT:     arith.cmpf
// EXPAND-LABEL: func.func @kept(
// EXPAND-COUNT-4: arith.cmpf uno
// AVX512-LABEL: kept:
// AVX512:         vcmpunordps
func.func @kept(%a: vector<16xf32>, %b: vector<16xf32>)
    -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
  %x = arith.maximumf %a, %b : vector<16xf32>
  %y = arith.maximumf %a, %b fastmath<nnan> : vector<16xf32>
  %z = arith.minimumf %a, %b fastmath<nsz> : vector<16xf32>
  %w = arith.maxnumf %a, %b fastmath<nsz> : vector<16xf32>
  return %x, %y, %z, %w : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
}
