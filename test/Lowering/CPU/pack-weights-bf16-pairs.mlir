// RUN: seq-opt %s --seq-cpu-pack-weights="vector-bits=512 vector-registers=32 bf16-dot remarks" -split-input-file -verify-diagnostics | FileCheck %s
// RUN: seq-opt %s --seq-cpu-pack-weights="vector-bits=512 vector-registers=32" -split-input-file | FileCheck %s --check-prefix=NODOT
// RUN: seq-opt %s --seq-cpu-pack-weights="vector-bits=256 vector-registers=16 bf16-dot" -split-input-file | FileCheck %s --check-prefix=AVX2

// x @ W^T with x and W [n, k] in bf16 on a target with vdpbf16ps: W is read
// from k-pair panels P[n / 64, k / 2, 64, 2] (each 32-bit word a column's two
// consecutive reduction elements), padded with zeros past n = 70 and past
// the odd k = 33. Without bf16-dot, or on 256-bit vectors, the panels of the
// widening kernel.

// CHECK-DAG:   #[[PAIRS:.*]] = affine_map<(d0, d1, d2) -> (d1 floordiv 64, d2 floordiv 2, d1 mod 64, d2 mod 2)>
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[X:.*]]: tensor<?x33xbf16>, %[[W:.*]]: tensor<70x33xbf16>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x17x64x2xbf16>
// CHECK:         %[[P:.*]] = linalg.generic
// CHECK-SAME:      outs(%[[E]] : tensor<2x17x64x2xbf16>)
// CHECK-DAG:       %[[Q:.*]] = linalg.index 1
// CHECK-DAG:       %[[R:.*]] = linalg.index 3
// CHECK-DAG:       %[[Q2:.*]] = arith.muli %[[Q]], %c2
// CHECK-DAG:       %[[K:.*]] = arith.addi %[[Q2]], %[[R]]
// CHECK-DAG:       arith.cmpi ult, %[[K]], %c33
// CHECK-DAG:       %[[KC:.*]] = arith.minui %[[K]], %c32
// CHECK:           tensor.extract %[[W]][%{{.*}}, %[[KC]]]
// CHECK:           arith.select
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[PAIRS]], #{{.*}}]
// CHECK-SAME:      ins(%[[X]], %[[P]] : tensor<?x33xbf16>, tensor<2x17x64x2xbf16>)
// NODOT:         tensor.empty() : tensor<2x33x64xbf16>
// AVX2:          tensor.empty() : tensor<5x33x16xbf16>
#a = affine_map<(m, n, k) -> (m, k)>
#wt = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
module attributes {seqc.entry = @forward, seqc.num_inputs = 1 : i64,
                   seqc.num_params = 1 : i64} {
  func.func @forward(%x: tensor<?x33xbf16>, %w: tensor<70x33xbf16>)
      -> tensor<?x70xf32> {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %m = tensor.dim %x, %c0 : tensor<?x33xbf16>
    %empty = tensor.empty(%m) : tensor<?x70xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x70xf32>)
        -> tensor<?x70xf32>
    // expected-remark @+1 {{right operand (a parameter) packed into 'tensor<2x17x64x2xbf16>' panels of 64 columns in k pairs for vdpbf16ps}}
    %y = linalg.generic {indexing_maps = [#a, #wt, #c],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : tensor<?x33xbf16>, tensor<70x33xbf16>)
        outs(%init : tensor<?x70xf32>) {
    ^bb0(%in: bf16, %in_w: bf16, %out: f32):
      %0 = arith.extf %in : bf16 to f32
      %1 = arith.extf %in_w : bf16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    } -> tensor<?x70xf32>
    return %y : tensor<?x70xf32>
  }
}

// -----

// x @ W with W [k, n] in bf16 read by an f32 x and by a bf16 x: vdpbf16ps
// would round the f32 operand to bf16, so that contraction keeps the
// widening kernel's panels; the bf16 one gets k pairs. Two packs of W.

// CHECK-LABEL: func.func @forward(
// CHECK-DAG:     tensor.empty() : tensor<1x8x64x2xbf16>
// CHECK-DAG:     tensor.empty() : tensor<1x16x64xbf16>
// NODOT:         tensor.empty() : tensor<1x16x64xbf16>
// NODOT-NOT:     x2xbf16>
module attributes {seqc.entry = @forward, seqc.num_inputs = 2 : i64,
                   seqc.num_params = 1 : i64} {
  func.func @forward(%x: tensor<5x16xf32>, %xb: tensor<5x16xbf16>,
                     %w: tensor<16x64xbf16>)
      -> (tensor<5x64xf32>, tensor<5x64xf32>) {
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<5x64xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<5x64xf32>)
        -> tensor<5x64xf32>
    // expected-remark @+1 {{packed into 'tensor<1x16x64xbf16>' panels of 64 columns for the broadcast kernel}}
    %a = linalg.matmul ins(%x, %w : tensor<5x16xf32>, tensor<16x64xbf16>)
                       outs(%init : tensor<5x64xf32>) -> tensor<5x64xf32>
    // expected-remark @+1 {{packed into 'tensor<1x8x64x2xbf16>' panels of 64 columns in k pairs for vdpbf16ps}}
    %b = linalg.matmul ins(%xb, %w : tensor<5x16xbf16>, tensor<16x64xbf16>)
                       outs(%init : tensor<5x64xf32>) -> tensor<5x64xf32>
    return %a, %b : tensor<5x64xf32>, tensor<5x64xf32>
  }
}
