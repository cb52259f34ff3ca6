// RUN: seq-opt %s --seq-cpu-approximate-math | FileCheck %s

// exp, tanh and erf on f32 become arithmetic (no math op is left to become a
// libm call); f64 keeps the math ops (MLIR approximates f32 only).
func.func @approximate(%x: f32, %v: vector<16xf32>, %d: f64) -> (f32, vector<16xf32>, f32, f64) {
  %e = math.exp %x : f32
  %t = math.tanh %v : vector<16xf32>
  %r = math.erf %x : f32
  %ed = math.exp %d : f64
  return %e, %t, %r, %ed : f32, vector<16xf32>, f32, f64
}
// CHECK-LABEL: func.func @approximate
//   CHECK-NOT:   math.exp {{.*}} : f32
//   CHECK-NOT:   math.tanh
//   CHECK-NOT:   math.erf
//       CHECK:   math.exp %{{.*}} : f64
//   CHECK-NOT:   math.exp {{.*}} : f32
//       CHECK:   return
