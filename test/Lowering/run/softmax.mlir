// RUN: seq-opt %s --seq-lower-to-llvm="opt-level=0 openmp=false emit-entry=false" \
// RUN:   | %run_main | FileCheck %s
// RUN: seq-opt %s --seq-lower-to-llvm="opt-level=2 openmp=false emit-entry=false" \
// RUN:   | %run_main | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32>)

// Rows that break a naive exp(x) / sum(exp(x)): huge logits (exp overflows
// to inf without the max subtraction), -inf entries (masked), a row of only
// -inf (a fully masked attention row: zeros, not NaN), logits 2000 apart
// (exact 0 and 1), and equal logits at the f32 exp overflow threshold.
// Reference: torch.softmax, with NaN rows replaced by 0.
func.func @main() {
  %x = arith.constant dense<[[1000.0, 1001.0, 1002.0],
                             [0xFF800000, 0.0, 0xFF800000],
                             [0xFF800000, 0xFF800000, 0xFF800000],
                             [-1000.0, 0.0, 1000.0],
                             [88.7, 88.7, 88.7]]> : tensor<5x3xf32>
  %d = tensor.cast %x : tensor<5x3xf32> to tensor<?x?xf32>
  %p = seq.softmax %d axis -1 : tensor<?x?xf32>
  %u = tensor.cast %p : tensor<?x?xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
// CHECK-LABEL: sizes = [5, 3]
//  CHECK-NEXT: [0.09003{{[0-9]*}}, 0.2447{{[0-9]*}}, 0.6652{{[0-9]*}}]
//  CHECK-NEXT: [0, 1, 0]
//  CHECK-NEXT: [0, 0, 0]
//  CHECK-NEXT: [0, 0, 1]
//  CHECK-NEXT: [0.3333{{[0-9]*}}, 0.3333{{[0-9]*}}, 0.3333{{[0-9]*}}]
//   CHECK-NOT: nan
