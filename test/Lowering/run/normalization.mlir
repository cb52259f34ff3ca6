// RUN: seq-opt %s --seq-lower-to-llvm="opt-level=0 openmp=false emit-entry=false" \
// RUN:   | %run_main | FileCheck %s
// RUN: seq-opt %s --seq-lower-to-llvm="opt-level=2 openmp=false emit-entry=false" \
// RUN:   | %run_main | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32>)

// Layer norm (biased variance, eps = 1e-5) with gamma = [1, 2, 0.5, -1] and
// beta = [0, 1, 0, -2], then without the affine part; RMS norm with the same
// gamma. Row 2 is row 1 shifted by 10^4: the two-pass statistics are exact
// there, so both rows normalize to the same values (PyTorch's single-pass
// moments give 0.1056 for the second entry instead of 0.1055). Row 3 is
// constant: zero variance gives beta, not NaN. Reference: F.layer_norm and
// x * rsqrt(mean(x^2) + eps) * gamma in PyTorch.
func.func @main() {
  %x = arith.constant dense<[[1.0, 2.0, 3.0, 4.0],
                             [10001.0, 10002.0, 10003.0, 10004.0],
                             [5.0, 5.0, 5.0, 5.0]]> : tensor<3x4xf32>
  %g = arith.constant dense<[1.0, 2.0, 0.5, -1.0]> : tensor<4xf32>
  %b = arith.constant dense<[0.0, 1.0, 0.0, -2.0]> : tensor<4xf32>
  %d = tensor.cast %x : tensor<3x4xf32> to tensor<?x4xf32>
  %y = seq.layer_norm %d, %g, %b {eps = 1.0e-05 : f64} : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %yu = tensor.cast %y : tensor<?x4xf32> to tensor<*xf32>
  call @printMemrefF32(%yu) : (tensor<*xf32>) -> ()
  %z = seq.layer_norm %d {eps = 1.0e-05 : f64} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %zu = tensor.cast %z : tensor<?x4xf32> to tensor<*xf32>
  call @printMemrefF32(%zu) : (tensor<*xf32>) -> ()
  %r = seq.rms_norm %d, %g {eps = 1.0e-06 : f64} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %ru = tensor.cast %r : tensor<?x4xf32> to tensor<*xf32>
  call @printMemrefF32(%ru) : (tensor<*xf32>) -> ()
  return
}
// CHECK-LABEL: sizes = [3, 4]
//  CHECK-NEXT: [-1.341{{[0-9]*}}, 0.1055{{[0-9]*}}, 0.2236{{[0-9]*}}, -3.341{{[0-9]*}}]
//  CHECK-NEXT: [-1.341{{[0-9]*}}, 0.1055{{[0-9]*}}, 0.2236{{[0-9]*}}, -3.341{{[0-9]*}}]
//  CHECK-NEXT: [0, 1, 0, -2]
// CHECK-LABEL: sizes = [3, 4]
//  CHECK-NEXT: [-1.341{{[0-9]*}}, -0.4472{{[0-9]*}}, 0.4472{{[0-9]*}}, 1.341{{[0-9]*}}]
//  CHECK-NEXT: [-1.341{{[0-9]*}}, -0.4472{{[0-9]*}}, 0.4472{{[0-9]*}}, 1.341{{[0-9]*}}]
//  CHECK-NEXT: [0, 0, 0, 0]
// CHECK-LABEL: sizes = [3, 4]
//  CHECK-NEXT: [0.3651{{[0-9]*}}, 1.460{{[0-9]*}}, 0.5477{{[0-9]*}}, -1.460{{[0-9]*}}]
//  CHECK-NEXT: [0.9998{{[0-9]*}}, 1.999{{[0-9]*}}, 0.5000{{[0-9]*}}, -1.000{{[0-9]*}}]
