// RUN: seq-opt %s --split-input-file --convert-seq-to-linalg="scan-vector-lanes=16 scan-scalef=true" \
// RUN:   --canonicalize | FileCheck %s --check-prefixes=CHECK,SCALEF
// RUN: seq-opt %s --split-input-file --convert-seq-to-linalg="scan-vector-lanes=16" \
// RUN:   --canonicalize | FileCheck %s --check-prefixes=CHECK,BITS
// RUN: seq-opt %s --split-input-file --convert-seq-to-linalg | FileCheck %s --check-prefix=REF

// seq.selective_scan with every option, 32 channels (two blocks of 16) and a
// state of 4: one scf.forall over (batch, channel block), a loop over the
// sequence carrying 4 state vectors, the output block and the next step's
// dt, dt u, u and gate (computed one step ahead, the first before the loop;
// softplus and silu by the exp marked for the CPU's short form and a log1p
// polynomial, no math.log1p), the decay as a 2^y polynomial scaled by
// vscalefps (SCALEF) or exponent bits (BITS), the state update and the output
// as vector FMAs, one vector written per step.
func.func @scan(%u: tensor<?x?x32xf32>, %dt: tensor<?x?x32xf32>, %a: tensor<32x4xf32>,
                %b: tensor<?x?x4xf32>, %c: tensor<?x?x4xf32>, %d: tensor<32xf32>,
                %z: tensor<?x?x32xf32>, %bias: tensor<32xf32>) -> tensor<?x?x32xf32> {
  %y = seq.selective_scan %u, %dt, %a, %b, %c D(%d : tensor<32xf32>) z(%z : tensor<?x?x32xf32>)
       delta_bias(%bias : tensor<32xf32>) {delta_softplus}
       : tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<32x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32> -> tensor<?x?x32xf32>
  return %y : tensor<?x?x32xf32>
}
// CHECK-LABEL: func.func @scan
//       CHECK:   scf.forall (%[[B:.*]], %[[CB:.*]]) in (%{{.*}}, 2) shared_outs(%[[O:.*]] = %{{.*}})
//       CHECK:     vector.from_elements {{.*}} : vector<16xf32>
//       CHECK:     %[[BLOCK:.*]] = tensor.extract_slice %[[O]][%[[B]], 0, %{{.*}}] [1, %{{.*}}, 16] [1, 1, 1]
//       CHECK:     %[[FIRST:.*]]:4 = scf.if
//       CHECK:       vector.transfer_read %{{.*}}[%[[B]], %c0, %{{.*}}]
//  CHECK-COUNT-2:    math.exp {{.*}} {seq.fast_exp}
//       CHECK:       arith.divf
//       CHECK:     scf.for %[[T:.*]] = %c0 to %{{.*}} step %c1 iter_args({{.*}}, %{{.*}} = %[[FIRST]]#0, %{{.*}} = %[[FIRST]]#1, %{{.*}} = %[[FIRST]]#2, %{{.*}} = %[[FIRST]]#3) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, tensor<1x?x16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
//       CHECK:       %[[NEXT:.*]] = arith.addi %[[T]], %c1
//       CHECK:       %[[AHEAD:.*]] = arith.minsi %[[NEXT]]
//       CHECK:       vector.transfer_read %{{.*}}[%[[B]], %[[AHEAD]], %{{.*}}]
//  CHECK-COUNT-2:    math.exp {{.*}} {seq.fast_exp}
//       CHECK:       arith.divf
//   CHECK-NOT:       math.exp
//   CHECK-NOT:       math.log1p
//  SCALEF-NOT:       arith.shli
//  SCALEF-COUNT-4:   x86vector.avx512.mask.scalef
//   BITS-NOT:        x86vector
//   BITS-COUNT-4:    arith.shli
//       CHECK:       vector.fma
//       CHECK:       vector.transfer_write %{{.*}}, %{{.*}}[%c0, %[[T]], %c0] {in_bounds = [true]} : vector<16xf32>, tensor<1x?x16xf32>
//       CHECK:     scf.forall.in_parallel
//       CHECK:       tensor.parallel_insert_slice
// Without lanes, the reference lowering: a loop over the sequence of
// linalg ops on the whole state.
// REF-LABEL: func.func @scan
//   REF-NOT:   scf.forall
//       REF:   scf.for
//       REF:     linalg.generic

// -----

// Channels that do not fill whole vectors, a dynamic state size, or f64 keep
// the reference lowering.
func.func @not_fused(%u: tensor<?x?x24xf32>, %a: tensor<24x4xf32>, %b: tensor<?x?x4xf32>,
                     %u2: tensor<?x?x32xf32>, %a2: tensor<32x?xf32>, %b2: tensor<?x?x?xf32>,
                     %u3: tensor<?x?x32xf64>, %a3: tensor<32x4xf64>, %b3: tensor<?x?x4xf64>)
    -> (tensor<?x?x24xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf64>) {
  %y = seq.selective_scan %u, %u, %a, %b, %b
       : tensor<?x?x24xf32>, tensor<?x?x24xf32>, tensor<24x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32> -> tensor<?x?x24xf32>
  %y2 = seq.selective_scan %u2, %u2, %a2, %b2, %b2
       : tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<32x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x32xf32>
  %y3 = seq.selective_scan %u3, %u3, %a3, %b3, %b3
       : tensor<?x?x32xf64>, tensor<?x?x32xf64>, tensor<32x4xf64>, tensor<?x?x4xf64>, tensor<?x?x4xf64> -> tensor<?x?x32xf64>
  return %y, %y2, %y3 : tensor<?x?x24xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf64>
}
// CHECK-LABEL: func.func @not_fused
//   CHECK-NOT:   scf.forall
//   CHECK-NOT:   vector.

// -----

// seq.ssm (S4) with 20 channels (a whole block of 16 and a masked partial
// block of 4) and a state of 3: discretization, then one scf.forall over
// (batch, channel block) whose loop over the sequence carries the 3 state
// vectors and the output block; each step is 3 x 3 FMAs with broadcast
// entries of Ab, 3 for y and the D skip, one masked vector written.
func.func @ssm(%u: tensor<?x?x20xf32>, %a: tensor<3x3xf32>, %b: tensor<20x3xf32>,
               %c: tensor<20x3xf32>, %d: tensor<20xf32>) -> tensor<?x?x20xf32> {
  %y = seq.ssm %u, %a, %b, %c, %d discretization zoh {step = 1.0e-2 : f64}
       : (tensor<?x?x20xf32>, tensor<3x3xf32>, tensor<20x3xf32>, tensor<20x3xf32>, tensor<20xf32>) -> tensor<?x?x20xf32>
  return %y : tensor<?x?x20xf32>
}
// CHECK-LABEL: func.func @ssm
//       CHECK:   math.exp
//       CHECK:   scf.forall (%[[B:.*]], %[[CB:.*]]) in (%{{.*}}, 2) shared_outs(%[[O:.*]] = %{{.*}})
//       CHECK:     %[[W:.*]] = arith.minsi
//       CHECK:     %[[BLOCK:.*]] = tensor.extract_slice %[[O]][%[[B]], 0, %{{.*}}] [1, %{{.*}}, %[[W]]] [1, 1, 1]
//       CHECK:     scf.for %[[T:.*]] = %c0 to %{{.*}} step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, tensor<1x?x?xf32>)
//       CHECK:       vector.transfer_read %{{.*}}[%[[B]], %[[T]], %{{.*}}], %{{.*}} : tensor<?x?x20xf32>, vector<16xf32>
//   CHECK-COUNT-3:   vector.transfer_read %{{.*}} {in_bounds = [true]} : tensor<3x3xf32>, vector<3xf32>
//   CHECK-COUNT-9:   vector.fma
//   CHECK-COUNT-3:   vector.fma
//       CHECK:       vector.transfer_write %{{.*}}, %{{.*}}[%c0, %[[T]], %c0] : vector<16xf32>, tensor<1x?x?xf32>
//       CHECK:     scf.forall.in_parallel
//       CHECK:       tensor.parallel_insert_slice
// REF-LABEL: func.func @ssm
//   REF-NOT:   scf.forall
//       REF:   scf.for
//       REF:     linalg.matmul

// -----

// With an initial state and the final state: the state vectors start from
// the block's [16, 4] slice of the initial state (gathered across channels)
// and the final ones go back to a second shared output. The reference
// lowering starts its loop from the initial state and returns the loop's
// state.
func.func @scan_state(%u: tensor<?x?x32xf32>, %a: tensor<32x4xf32>, %b: tensor<?x?x4xf32>,
                      %h0: tensor<?x32x4xf32>) -> (tensor<?x?x32xf32>, tensor<?x32x4xf32>) {
  %y, %h = seq.selective_scan %u, %u, %a, %b, %b initial_state(%h0 : tensor<?x32x4xf32>)
       : tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<32x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32> -> tensor<?x?x32xf32>, tensor<?x32x4xf32>
  return %y, %h : tensor<?x?x32xf32>, tensor<?x32x4xf32>
}
// CHECK-LABEL: func.func @scan_state
//  CHECK-SAME: %[[H0:[a-z0-9]+]]: tensor<?x32x4xf32>
//       CHECK:   %[[SE:.*]] = tensor.empty(%{{.*}}) : tensor<?x32x4xf32>
//       CHECK:   %[[R:.*]]:2 = scf.forall (%[[B:.*]], %{{.*}}) in (%{{.*}}, 2) shared_outs(%{{.*}} = %{{.*}}, %[[S:.*]] = %[[SE]])
//       CHECK:     tensor.extract %[[H0]][%[[B]], %{{.*}}, %c3]
//       CHECK:     %[[H0V:.*]] = vector.from_elements {{.*}} : vector<16xf32>
//       CHECK:     %[[LOOP:.*]]:{{[0-9]+}} = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %[[H0V]],
//       CHECK:     vector.extract %[[LOOP]]#3[15]
//       CHECK:     %[[FINAL:.*]] = tensor.from_elements {{.*}} : tensor<1x16x4xf32>
//       CHECK:     scf.forall.in_parallel
//       CHECK:       tensor.parallel_insert_slice
//       CHECK:       tensor.parallel_insert_slice %[[FINAL]] into %[[S]][%[[B]], %{{.*}}, 0] [1, 16, 4] [1, 1, 1]
//       CHECK:   return %[[R]]#0, %[[R]]#1
// REF-LABEL: func.func @scan_state
//  REF-SAME: %[[H0:[a-z0-9]+]]: tensor<?x32x4xf32>
//       REF:   %[[L:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[H0]], %{{.*}} = %{{.*}})
//       REF:   return %{{.*}}, %[[L]]#0
