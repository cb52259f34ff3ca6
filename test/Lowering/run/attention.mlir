// RUN: seq-opt %s --seq-lower-to-llvm="opt-level=0 openmp=false emit-entry=false" \
// RUN:   | %run_main | FileCheck %s
// RUN: seq-opt %s --seq-lower-to-llvm="opt-level=2 openmp=false emit-entry=false" \
// RUN:   | %run_main | FileCheck %s

// Numbers from PyTorch (see each case), printed to six digits; the checks keep
// four so that libm differences in the last digit do not matter.

func.func private @printMemrefF32(tensor<*xf32>)

// The textbook example: rows cat = [1, 0], sat = [0, 1], mat = [1, 1] with
// Wq = Wk = Wv = I and one head, so q = k = v = x and the scale is 1/sqrt(2).
// The attention matrix softmax(x x^T / sqrt(2)) is computed with the
// primitive ops (matmul, mul, softmax), the output with seq.attention.
func.func @textbook() {
  %x = arith.constant dense<[[[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]]]> : tensor<1x1x3x2xf32>
  %s = seq.matmul %x, %x transpose_rhs : tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32> -> tensor<1x1x3x3xf32>
  %c = arith.constant dense<0.707106781> : tensor<f32>
  %ss = seq.mul %s, %c : tensor<1x1x3x3xf32>, tensor<f32> -> tensor<1x1x3x3xf32>
  %p = seq.softmax %ss axis -1 : tensor<1x1x3x3xf32>
  %o = seq.attention %x, %x, %x : tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32> -> tensor<1x1x3x2xf32>
  %pu = tensor.cast %p : tensor<1x1x3x3xf32> to tensor<*xf32>
  call @printMemrefF32(%pu) : (tensor<*xf32>) -> ()
  %ou = tensor.cast %o : tensor<1x1x3x2xf32> to tensor<*xf32>
  call @printMemrefF32(%ou) : (tensor<*xf32>) -> ()
  return
}
// CHECK-LABEL: sizes = [1, 1, 3, 3]
//  CHECK-NEXT: [0.4011{{[0-9]*}}, 0.1977{{[0-9]*}}, 0.4011{{[0-9]*}}]
//  CHECK-NEXT: [0.1977{{[0-9]*}}, 0.4011{{[0-9]*}}, 0.4011{{[0-9]*}}]
//  CHECK-NEXT: [0.2482{{[0-9]*}}, 0.2482{{[0-9]*}}, 0.5034{{[0-9]*}}]
// CHECK-LABEL: sizes = [1, 1, 3, 2]
//  CHECK-NEXT: [0.8022{{[0-9]*}}, 0.5988{{[0-9]*}}]
//  CHECK-NEXT: [0.5988{{[0-9]*}}, 0.8022{{[0-9]*}}]
//  CHECK-NEXT: [0.7517{{[0-9]*}}, 0.7517{{[0-9]*}}]

// Causal attention with key lengths [2, 0] and two query heads sharing one kv
// head (the second head's queries are doubled). In batch 0, query 0 sees only
// key 0, query 1 keys 0 and 1, query 2 is cut to keys 0 and 1 by the length.
// Batch 1 has no key at all: every row is fully masked and gives zeros, not
// NaN. Reference: softmax(q k^T / sqrt(2) masked with -inf) v in PyTorch,
// NaN rows replaced by 0.
func.func @causal_lengths() {
  %q = arith.constant dense<[[[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [[2.0, 0.0], [0.0, 2.0], [2.0, 2.0]]],
                             [[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [[2.0, 0.0], [0.0, 2.0], [2.0, 2.0]]]]> : tensor<2x2x3x2xf32>
  %k = arith.constant dense<[[[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]], [[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]]]> : tensor<2x1x3x2xf32>
  %v = arith.constant dense<[[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]], [[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]]> : tensor<2x1x3x2xf32>
  %len = arith.constant dense<[2, 0]> : tensor<2xi32>
  %o = seq.attention %q, %k, %v lengths(%len : tensor<2xi32>) {mask = #seq.mask<causal = true>}
      : tensor<2x2x3x2xf32>, tensor<2x1x3x2xf32>, tensor<2x1x3x2xf32> -> tensor<2x2x3x2xf32>
  %ou = tensor.cast %o : tensor<2x2x3x2xf32> to tensor<*xf32>
  call @printMemrefF32(%ou) : (tensor<*xf32>) -> ()
  return
}
// CHECK-LABEL: sizes = [2, 2, 3, 2]
//  CHECK-NEXT: [1, 2]
//  CHECK-NEXT: [2.339{{[0-9]*}}, 3.339{{[0-9]*}}]
//  CHECK-NEXT: [2, 3]
//       CHECK: [1, 2]
//  CHECK-NEXT: [2.608{{[0-9]*}}, 3.608{{[0-9]*}}]
//  CHECK-NEXT: [2, 3]
//       CHECK: [0, 0]
//  CHECK-NEXT: [0, 0]
//  CHECK-NEXT: [0, 0]
//       CHECK: [0, 0]
//  CHECK-NEXT: [0, 0]
//  CHECK-NEXT: [0, 0]
//   CHECK-NOT: nan

func.func @main() {
  call @textbook() : () -> ()
  call @causal_lengths() : () -> ()
  return
}
