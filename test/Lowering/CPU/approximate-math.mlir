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

// An exp marked seq.fast_exp takes the short form: the argument clamped to
// [-127 ln 2, 128 ln 2], k = round(x log2 e) in the low bits of a sum with
// 1.5 * 2^23 + 127, r = x - k ln 2 in two FMAs, a degree-5 polynomial whose
// constant term is 1 (exp(0) = 1 exactly) in five FMAs, times 2^k from the
// sum's bits shifted into the exponent.
func.func @fast_exp(%v: vector<16xf32>) -> vector<16xf32> {
  %e = math.exp %v {seq.fast_exp} : vector<16xf32>
  return %e : vector<16xf32>
}
// CHECK-LABEL: func.func @fast_exp
//  CHECK-SAME:   %[[V:.*]]: vector<16xf32>
//   CHECK-DAG:   %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<16xf32>
//   CHECK-DAG:   %[[C5:.*]] = arith.constant dense<0.00829031504> : vector<16xf32>
//       CHECK:   %[[LO:.*]] = arith.cmpf olt, %[[V]]
//       CHECK:   %[[X0:.*]] = arith.select %[[LO]]
//       CHECK:   %[[HI:.*]] = arith.cmpf ogt, %[[X0]]
//       CHECK:   %[[X:.*]] = arith.select %[[HI]]
//       CHECK:   %[[SUM:.*]] = math.fma %[[X]], %{{.*}}, %[[MAGIC:.*]] : vector<16xf32>
//       CHECK:   %[[K:.*]] = arith.subf %[[SUM]], %[[MAGIC]]
//       CHECK:   %[[R0:.*]] = math.fma %[[K]], %{{.*}}, %[[X]]
//       CHECK:   %[[R:.*]] = math.fma %[[K]], %{{.*}}, %[[R0]]
//       CHECK:   %[[P4:.*]] = math.fma %[[C5]], %[[R]], %{{.*}}
//       CHECK:   %[[P3:.*]] = math.fma %[[P4]], %[[R]], %{{.*}}
//       CHECK:   %[[P2:.*]] = math.fma %[[P3]], %[[R]], %{{.*}}
//       CHECK:   %[[P1:.*]] = math.fma %[[P2]], %[[R]], %{{.*}}
//       CHECK:   %[[P0:.*]] = math.fma %[[P1]], %[[R]], %[[ONE]] :
//   CHECK-NOT:   math.fma
//       CHECK:   %[[BITS:.*]] = arith.bitcast %[[SUM]] : vector<16xf32> to vector<16xi32>
//       CHECK:   %[[SHIFTED:.*]] = arith.shli %[[BITS]], %{{.*}} : vector<16xi32>
//       CHECK:   %[[SCALE:.*]] = arith.bitcast %[[SHIFTED]] : vector<16xi32> to vector<16xf32>
//       CHECK:   %[[E:.*]] = arith.mulf %[[P0]], %[[SCALE]]
//       CHECK:   return %[[E]]
