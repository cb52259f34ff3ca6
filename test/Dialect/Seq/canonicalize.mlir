// RUN: seq-opt %s -split-input-file -canonicalize | FileCheck %s

// Dropout is the identity at inference.
// CHECK-LABEL: func.func @dropout
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<?x64xf32>)
// CHECK-NOT: seq.dropout
// CHECK: return %[[X]]
func.func @dropout(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %0 = seq.dropout %x {rate = 0.1 : f64} : tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// -----

// Stacked dropouts all go.
// CHECK-LABEL: func.func @dropout_chain
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x8xbf16>)
// CHECK-NEXT: return %[[X]]
func.func @dropout_chain(%x: tensor<2x8xbf16>) -> tensor<2x8xbf16> {
  %0 = seq.dropout %x {rate = 0.1 : f64} : tensor<2x8xbf16>
  %1 = seq.dropout %0 {rate = 0.5 : f64} : tensor<2x8xbf16>
  return %1 : tensor<2x8xbf16>
}

// -----

// Power of two heads: slope i (1-based) of 8 is 2^(-8 i / 8) = 2^-i.
// CHECK-LABEL: func.func @alibi_8
// CHECK-NOT: seq.alibi
// CHECK: %[[S:.+]] = arith.constant dense<[5.000000e-01, 2.500000e-01, 1.250000e-01, 6.250000e-02, 3.125000e-02, 1.562500e-02, 7.812500e-03, 3.906250e-03]> : tensor<8xf32>
// CHECK: return %[[S]]
func.func @alibi_8() -> tensor<8xf32> {
  %0 = seq.alibi : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Six heads: the 4 slopes of 4 heads (2^-2, 2^-4, 2^-6, 2^-8), then every
// other slope of 8 heads from the first (2^-1, 2^-3), as in the ALiBi
// paper's get_slopes.
// CHECK-LABEL: func.func @alibi_6
// CHECK: arith.constant dense<[2.500000e-01, 6.250000e-02, 1.562500e-02, 3.906250e-03, 5.000000e-01, 1.250000e-01]> : tensor<6xf32>
func.func @alibi_6() -> tensor<6xf32> {
  %0 = seq.alibi : tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// Twelve heads: the slopes of 8, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5 (every
// other slope of 16 heads), rounded to f32.
// CHECK-LABEL: func.func @alibi_12
// CHECK: arith.constant dense<[5.000000e-01, 2.500000e-01, 1.250000e-01, 6.250000e-02, 3.125000e-02, 1.562500e-02, 7.812500e-03, 3.906250e-03, 0.707106769, 0.353553385, 0.176776692, 0.0883883461]> : tensor<12xf32>
func.func @alibi_12() -> tensor<12xf32> {
  %0 = seq.alibi : tensor<12xf32>
  return %0 : tensor<12xf32>
}

// -----

// One head gets the last slope of the sequence, 2^-8; f16 holds it exactly.
// CHECK-LABEL: func.func @alibi_1_f16
// CHECK: arith.constant dense<3.906250e-03> : tensor<1xf16>
func.func @alibi_1_f16() -> tensor<1xf16> {
  %0 = seq.alibi : tensor<1xf16>
  return %0 : tensor<1xf16>
}

// -----

// The folded slopes feed the attention op in place of seq.alibi.
// CHECK-LABEL: func.func @alibi_use
// CHECK: %[[S:.+]] = arith.constant dense<{{.+}}> : tensor<4xf32>
// CHECK: seq.attention {{.+}} alibi(%[[S]] : tensor<4xf32>)
func.func @alibi_use(%q: tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %s = seq.alibi : tensor<4xf32>
  %0 = seq.attention %q, %q, %q alibi(%s : tensor<4xf32>) {mask = #seq.mask<causal = true>}
      : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  return %0 : tensor<?x4x?x16xf32>
}

// -----

// HiPPO-LegS, N = 4: A[n, k] = -sqrt(2n+1) sqrt(2k+1) below the diagonal,
// -(n+1) on it, 0 above; B[n] = sqrt(2n+1). In f32:
//   sqrt(3) = 1.73205078, sqrt(5) = 2.23606801, sqrt(7) = 2.64575124,
//   sqrt(15) = 3.87298346, sqrt(21) = 4.5825758, sqrt(35) = 5.916080.
// CHECK-LABEL: func.func @hippo_4
// CHECK-NOT: seq.hippo
// CHECK-DAG: %[[A:.+]] = arith.constant dense<{{\[}}[-1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [-1.73205078, -2.000000e+00, 0.000000e+00, 0.000000e+00], [-2.23606801, -3.87298346, -3.000000e+00, 0.000000e+00], [-2.64575124, -4.5825758, -5.916080e+00, -4.000000e+00]]> : tensor<4x4xf32>
// CHECK-DAG: %[[B:.+]] = arith.constant dense<[1.000000e+00, 1.73205078, 2.23606801, 2.64575124]> : tensor<4xf32>
// CHECK: return %[[A]], %[[B]]
func.func @hippo_4() -> (tensor<4x4xf32>, tensor<4xf32>) {
  %a, %b = seq.hippo : tensor<4x4xf32>, tensor<4xf32>
  return %a, %b : tensor<4x4xf32>, tensor<4xf32>
}

// -----

// The same entries in f64, for N = 3.
// CHECK-LABEL: func.func @hippo_3_f64
// CHECK-DAG: arith.constant dense<{{\[}}[-1.000000e+00, 0.000000e+00, 0.000000e+00], [-1.7320508075688772, -2.000000e+00, 0.000000e+00], [-2.2360679774997898, -3.872983346207417, -3.000000e+00]]> : tensor<3x3xf64>
// CHECK-DAG: arith.constant dense<[1.000000e+00, 1.7320508075688772, 2.2360679774997898]> : tensor<3xf64>
func.func @hippo_3_f64() -> (tensor<3x3xf64>, tensor<3xf64>) {
  %a, %b = seq.hippo : tensor<3x3xf64>, tensor<3xf64>
  return %a, %b : tensor<3x3xf64>, tensor<3xf64>
}

// -----

// Only the used result of seq.hippo survives as a constant.
// CHECK-LABEL: func.func @hippo_b_only
// CHECK-NOT: tensor<2x2xf32>
// CHECK: arith.constant dense<[1.000000e+00, 1.73205078]> : tensor<2xf32>
func.func @hippo_b_only() -> tensor<2xf32> {
  %a, %b = seq.hippo : tensor<2x2xf32>, tensor<2xf32>
  return %b : tensor<2xf32>
}
