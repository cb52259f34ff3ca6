// RUN: seq-opt %s --seq-cpu-pack-weights="vector-bits=512 vector-registers=32 remarks" -split-input-file -verify-diagnostics | FileCheck %s
// RUN: seq-opt %s --seq-cpu-pack-weights="vector-bits=256 vector-registers=16" -split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: seq-opt %s --seq-cpu-pack-weights="vector-bits=512 vector-registers=32 remarks" -split-input-file -verify-diagnostics \
// RUN:   -debug-only=seq-cpu-pack-weights -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEBUG

// x @ W^T with a parameter W [n, k]: W is read from column panels of one
// broadcast tile (4 x 16 lanes on AVX-512, 2 x 8 on AVX2), the last one
// zero-padded (70 columns: 2 panels of 64, or 5 of 16).

// CHECK-DAG:   #[[PANEL:.*]] = affine_map<(d0, d1, d2) -> (d1 floordiv 64, d2, d1 mod 64)>
// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[X:.*]]: tensor<?x32xf32>, %[[W:.*]]: tensor<70x32xf32>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x32x64xf32>
// CHECK:         %[[P:.*]] = linalg.generic
// CHECK-SAME:      outs(%[[E]] : tensor<2x32x64xf32>)
// CHECK:           linalg.index 0
// CHECK:           arith.cmpi ult
// CHECK:           tensor.extract %[[W]]
// CHECK:           arith.select
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[PANEL]], #{{.*}}]
// CHECK-SAME:      ins(%[[X]], %[[P]] : tensor<?x32xf32>, tensor<2x32x64xf32>)
// AVX2:          tensor.empty() : tensor<5x32x16xf32>
// AVX2:          (d1 floordiv 16, d2, d1 mod 16)
// DEBUG:      [seq-cpu-pack-weights] weight (argument 1, tensor<70x32xf32>, [n, k]) read from tensor<2x32x64xf32>: linalg.generic at
#a = affine_map<(m, n, k) -> (m, k)>
#wt = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
module attributes {seqc.entry = @forward, seqc.num_inputs = 1 : i64,
                   seqc.num_params = 1 : i64} {
  func.func @forward(%x: tensor<?x32xf32>, %w: tensor<70x32xf32>)
      -> tensor<?x70xf32> {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %m = tensor.dim %x, %c0 : tensor<?x32xf32>
    %empty = tensor.empty(%m) : tensor<?x70xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x70xf32>)
        -> tensor<?x70xf32>
    // expected-remark @+1 {{right operand (a parameter) packed into 'tensor<2x32x64xf32>' panels of 64 columns for the broadcast kernel}}
    %y = linalg.generic {indexing_maps = [#a, #wt, #c],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : tensor<?x32xf32>, tensor<70x32xf32>)
        outs(%init : tensor<?x70xf32>) {
    ^bb0(%in: f32, %in_w: f32, %out: f32):
      %0 = arith.mulf %in, %in_w : f32
      %1 = arith.addf %out, %0 : f32
      linalg.yield %1 : f32
    } -> tensor<?x70xf32>
    return %y : tensor<?x70xf32>
  }
}

// -----

// x @ W with W [k, n]; two contractions with the same weight share one pack.

// CHECK-LABEL: func.func @forward(
// CHECK:         tensor.empty() : tensor<1x8x64xf32>
// CHECK-NOT:     tensor.empty() : tensor<1x8x64xf32>
// CHECK:         linalg.matmul
// DEBUG-NEXT: [seq-cpu-pack-weights] weight (argument 2, tensor<8x64xf32>, [k, n]) read from tensor<1x8x64xf32>: linalg.matmul at
// DEBUG-NEXT: [seq-cpu-pack-weights] weight (argument 2, tensor<8x64xf32>, [k, n]) read from tensor<1x8x64xf32>: linalg.matmul at
// CHECK-COUNT-2: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]}
module attributes {seqc.entry = @forward, seqc.num_inputs = 2 : i64,
                   seqc.num_params = 1 : i64} {
  func.func @forward(%x: tensor<5x8xf32>, %y: tensor<8x8xf32>, %w: tensor<8x64xf32>)
      -> (tensor<5x64xf32>, tensor<5x64xf32>, tensor<5x8xf32>) {
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<5x64xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<5x64xf32>)
        -> tensor<5x64xf32>
    %e8 = tensor.empty() : tensor<5x8xf32>
    %i8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<5x8xf32>)
        -> tensor<5x8xf32>
    // A contraction of two inputs is not packed.
    %xy = linalg.matmul ins(%x, %y : tensor<5x8xf32>, tensor<8x8xf32>)
                        outs(%i8 : tensor<5x8xf32>) -> tensor<5x8xf32>
    // expected-remark @+1 {{packed into 'tensor<1x8x64xf32>'}}
    %a = linalg.matmul ins(%x, %w : tensor<5x8xf32>, tensor<8x64xf32>)
                       outs(%init : tensor<5x64xf32>) -> tensor<5x64xf32>
    // expected-remark @+1 {{packed into 'tensor<1x8x64xf32>'}}
    %b = linalg.matmul ins(%xy, %w : tensor<5x8xf32>, tensor<8x64xf32>)
                       outs(%init : tensor<5x64xf32>) -> tensor<5x64xf32>
    return %a, %b, %xy : tensor<5x64xf32>, tensor<5x64xf32>, tensor<5x8xf32>
  }
}

// -----

// A weight narrower than one panel is read as it is.

// CHECK-LABEL: func.func @forward(
// CHECK-NOT:     floordiv
// CHECK:         linalg.matmul
// DEBUG-NEXT: [seq-cpu-pack-weights] not packed: the weight is narrower than one panel: linalg.matmul at
module attributes {seqc.entry = @forward, seqc.num_inputs = 1 : i64,
                   seqc.num_params = 1 : i64} {
  func.func @forward(%x: tensor<5x8xf32>, %w: tensor<8x40xf32>)
      -> tensor<5x40xf32> {
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<5x40xf32>
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<5x40xf32>)
        -> tensor<5x40xf32>
    %a = linalg.matmul ins(%x, %w : tensor<5x8xf32>, tensor<8x40xf32>)
                       outs(%init : tensor<5x40xf32>) -> tensor<5x40xf32>
    return %a : tensor<5x40xf32>
  }
}
