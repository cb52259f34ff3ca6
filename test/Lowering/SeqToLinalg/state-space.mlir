// RUN: seq-opt %s --convert-seq-to-linalg -split-input-file | FileCheck %s

// HiPPO-LegS for N = 3: A[n, k] = -sqrt(2n+1) sqrt(2k+1) below the diagonal,
// -(n+1) on it; B[n] = sqrt(2n+1).

// CHECK-LABEL: func.func @hippo
// CHECK-DAG:     %[[A:.+]] = arith.constant dense<{{\[}}[-1.000000e+00, 0.000000e+00, 0.000000e+00], [-1.73205078, -2.000000e+00, 0.000000e+00], [-2.23606801, -3.87298346, -3.000000e+00]]> : tensor<3x3xf32>
// CHECK-DAG:     %[[B:.+]] = arith.constant dense<[1.000000e+00, 1.73205078, 2.23606801]> : tensor<3xf32>
// CHECK:         return %[[A]], %[[B]]
func.func @hippo() -> (tensor<3x3xf32>, tensor<3xf32>) {
  %a, %b = seq.hippo : tensor<3x3xf32>, tensor<3xf32>
  return %a, %b : tensor<3x3xf32>, tensor<3xf32>
}

// -----

// Zero-order hold: the augmented exponential in f64 (norm -> number of
// squarings, Taylor loop, squaring loop), Bb = B M^T, truncation to f32, then
// the scan over L and the D u feedthrough.

// The per-step slices keep their unit dimension, read at index 0.
// CHECK-DAG:   #[[$MAP_BB:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG:   #[[$MAP_U:.+]] = affine_map<(d0, d1, d2) -> (d0, 0, d1)>
// CHECK-DAG:   #[[$MAP_T:.+]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @ssm_zoh
// CHECK-SAME:    %[[U:[a-zA-Z0-9]+]]: tensor<?x?x4xf32>, %[[A:[a-zA-Z0-9]+]]: tensor<8x8xf32>, %[[B:[a-zA-Z0-9]+]]: tensor<4x8xf32>, %[[C:[a-zA-Z0-9]+]]: tensor<4x8xf32>, %[[D:[a-zA-Z0-9]+]]: tensor<4xf32>
// CHECK:         %[[A64:.+]] = linalg.generic {{.*}} ins(%[[A]] : tensor<8x8xf32>) outs(%{{.+}} : tensor<8x8xf64>)
// CHECK:           arith.extf
// CHECK:         %[[B64:.+]] = linalg.generic {{.*}} ins(%[[B]] : tensor<4x8xf32>) outs(%{{.+}} : tensor<4x8xf64>)
// The 1-norm: column sums of |A|, then their maximum.
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[A64]]
// CHECK:           math.absf
// CHECK:         %[[NORM:.+]] = linalg.generic {{.*}} iterator_types = ["reduction"]}
// CHECK:           arith.maxnumf
// CHECK:         %[[NORMA:.+]] = tensor.extract %[[NORM]][]
// CHECK:         %[[NORME:.+]] = arith.maxnumf %[[NORMA]], %{{.+}} : f64
// CHECK:         %[[RATIO:.+]] = arith.mulf %[[NORME]]
// CHECK:         %[[LOG:.+]] = math.log2 %[[RATIO]] : f64
// CHECK:         %[[CEIL:.+]] = math.ceil %[[LOG]] : f64
// CHECK:         %[[LOW:.+]] = arith.maxnumf %[[CEIL]]
// CHECK:         %[[S:.+]] = arith.minnumf %[[LOW]]
// CHECK:         %[[SI:.+]] = arith.fptosi %[[S]] : f64 to i64
// CHECK:         %[[COUNT:.+]] = arith.index_cast %[[SI]] : i64 to index
// CHECK:         %[[NEGS:.+]] = arith.negf %[[S]]
// CHECK:         %[[SCALE:.+]] = math.exp2 %[[NEGS]] : f64
// CHECK:         %[[TAU:.+]] = arith.mulf %[[SCALE]]
// CHECK:         %[[X:.+]] = linalg.generic {{.*}} ins(%[[A64]] : tensor<8x8xf64>)
// CHECK:           arith.mulf %{{.+}}, %[[TAU]]
// The degree-14 Taylor polynomial, k = 1..14, carrying X^(k-1) and 1/(k-1)!.
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C15:.+]] = arith.constant 15 : index
// CHECK:         %[[TAYLOR:.+]]:5 = scf.for %[[K:.+]] = %[[C1]] to %[[C15]] step %[[C1]] iter_args(%[[POW:.+]] = %{{.+}}, %[[FACT:.+]] = %{{.+}}, %[[P:.+]] = %{{.+}}, %[[Q:.+]] = %{{.+}}, %[[SCR:.+]] = %{{.+}}) -> (tensor<8x8xf64>, f64, tensor<8x8xf64>, tensor<8x8xf64>, tensor<8x8xf64>)
// CHECK:           %[[KF:.+]] = arith.sitofp
// CHECK:           %[[INVF:.+]] = arith.divf %[[FACT]], %[[KF]] : f64
// CHECK:           %[[QCOEF:.+]] = arith.mulf %[[TAU]], %[[INVF]] : f64
// CHECK:           %[[Q2:.+]] = linalg.generic {{.*}} ins(%[[POW]] : tensor<8x8xf64>) outs(%[[Q]] : tensor<8x8xf64>)
// CHECK:             arith.mulf %[[QCOEF]]
// CHECK:           %[[ZERO:.+]] = linalg.fill ins(%{{.+}} : f64) outs(%[[SCR]] : tensor<8x8xf64>)
// CHECK:           %[[PROD:.+]] = linalg.matmul ins(%[[POW]], %[[X]] : tensor<8x8xf64>, tensor<8x8xf64>) outs(%[[ZERO]] : tensor<8x8xf64>)
// CHECK:           %[[POW2:.+]] = linalg.copy ins(%[[PROD]] : tensor<8x8xf64>) outs(%[[POW]] : tensor<8x8xf64>)
// CHECK:           %[[P2:.+]] = linalg.generic {{.*}} ins(%[[POW2]] : tensor<8x8xf64>) outs(%[[P]] : tensor<8x8xf64>)
// CHECK:             arith.mulf %[[INVF]]
// CHECK:           scf.yield %[[POW2]], %[[INVF]], %[[P2]], %[[Q2]], %[[PROD]]
// Squaring: Q <- P Q + Q, P <- P P, s times, through one scratch matrix.
// CHECK:         %[[SQ:.+]]:3 = scf.for %{{.+}} = %{{.+}} to %[[COUNT]] step %[[C1]] iter_args(%[[SP:.+]] = %[[TAYLOR]]#2, %[[SQQ:.+]] = %[[TAYLOR]]#3, %[[SS:.+]] = %{{.+}})
// CHECK:           %[[QCOPY:.+]] = linalg.copy ins(%[[SQQ]] : tensor<8x8xf64>) outs(%[[SS]] : tensor<8x8xf64>)
// CHECK:           %[[NEWQ:.+]] = linalg.matmul ins(%[[SP]], %[[SQQ]] : tensor<8x8xf64>, tensor<8x8xf64>) outs(%[[QCOPY]] : tensor<8x8xf64>)
// CHECK:           %[[Z:.+]] = linalg.fill ins(%{{.+}} : f64) outs(%[[SQQ]] : tensor<8x8xf64>)
// CHECK:           %[[SQUARE:.+]] = linalg.matmul ins(%[[SP]], %[[SP]] : tensor<8x8xf64>, tensor<8x8xf64>) outs(%[[Z]] : tensor<8x8xf64>)
// CHECK:           %[[NEWP:.+]] = linalg.copy ins(%[[SQUARE]] : tensor<8x8xf64>) outs(%[[SP]] : tensor<8x8xf64>)
// CHECK:           %[[NEWQ2:.+]] = linalg.copy ins(%[[NEWQ]] : tensor<8x8xf64>) outs(%[[SQUARE]] : tensor<8x8xf64>)
// CHECK:           scf.yield %[[NEWP]], %[[NEWQ2]], %[[NEWQ]]
// Bb[h, i] = sum_k B[h, k] M[i, k].
// CHECK:         %[[BB64:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[B64]], %[[SQ]]#1 : tensor<4x8xf64>, tensor<8x8xf64>)
// Ab^T, rounded to f32: the right operand of the per-step matmul.
// CHECK:         %[[ABT:.+]] = linalg.generic {indexing_maps = [#[[$MAP_T]], #{{.+}}], {{.*}} ins(%[[SQ]]#0 : tensor<8x8xf64>) outs(%{{.+}} : tensor<8x8xf32>)
// CHECK:           arith.truncf
// CHECK:         %[[BB:.+]] = linalg.generic {{.*}} ins(%[[BB64]] : tensor<4x8xf64>) outs(%{{.+}} : tensor<4x8xf32>)
// The scan, carrying the state [batch, H, N], a scratch state and y; Ab x is
// one matmul on the states collapsed to [batch * H, N].
// CHECK:         %[[L:.+]] = tensor.dim %[[U]], %c1{{(_[0-9]+)?}} : tensor<?x?x4xf32>
// CHECK:         %[[SCAN:.+]]:3 = scf.for %[[STEP:.+]] = %{{.+}} to %[[L]] step %{{.+}} iter_args(%[[STATE:.+]] = %{{.+}}, %[[SCRATCH:.+]] = %{{.+}}, %[[Y:.+]] = %{{.+}}) -> (tensor<?x4x8xf32>, tensor<?x4x8xf32>, tensor<?x?x4xf32>)
// CHECK:           %[[UT:.+]] = tensor.extract_slice %[[U]][0, %[[STEP]], 0] [%{{.+}}, 1, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x1x4xf32>
// CHECK:           %[[XF:.+]] = tensor.collapse_shape %[[STATE]] {{\[}}[0, 1], [2]] : tensor<?x4x8xf32> into tensor<?x8xf32>
// CHECK:           %[[SF:.+]] = tensor.collapse_shape %[[SCRATCH]] {{\[}}[0, 1], [2]] : tensor<?x4x8xf32> into tensor<?x8xf32>
// CHECK:           %[[ZS:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[SF]] : tensor<?x8xf32>)
// CHECK:           %[[AXF:.+]] = linalg.matmul ins(%[[XF]], %[[ABT]] : tensor<?x8xf32>, tensor<8x8xf32>) outs(%[[ZS]] : tensor<?x8xf32>)
// CHECK:           %[[AX:.+]] = tensor.expand_shape %[[AXF]] {{\[}}[0, 1], [2]] output_shape [%{{.+}}, 4, 8] : tensor<?x8xf32> into tensor<?x4x8xf32>
// CHECK:           %[[NEXT:.+]] = linalg.generic {indexing_maps = [#[[$MAP_BB]], #[[$MAP_U]], #{{.+}}], {{.*}} ins(%[[BB]], %[[UT]] : tensor<4x8xf32>, tensor<?x1x4xf32>) outs(%[[AX]] : tensor<?x4x8xf32>)
// CHECK:           %[[NEW:.+]] = linalg.copy ins(%[[NEXT]] : tensor<?x4x8xf32>) outs(%[[STATE]] : tensor<?x4x8xf32>)
// CHECK:           %[[YT:.+]] = tensor.extract_slice %[[Y]][0, %[[STEP]], 0]
// CHECK:           %[[YT2:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[C]], %[[NEW]] : tensor<4x8xf32>, tensor<?x4x8xf32>) outs(%[[YT]] : tensor<?x1x4xf32>)
// CHECK:           %[[YNEW:.+]] = tensor.insert_slice %[[YT2]] into %[[Y]][0, %[[STEP]], 0]
// CHECK:           scf.yield %[[NEW]], %[[NEXT]], %[[YNEW]]
// CHECK:         %[[OUT:.+]] = linalg.generic {{.*}} ins(%[[SCAN]]#2, %[[U]], %[[D]] : tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<4xf32>)
// CHECK:         return %[[OUT]]
func.func @ssm_zoh(%u: tensor<?x?x4xf32>, %a: tensor<8x8xf32>, %b: tensor<4x8xf32>,
                   %c: tensor<4x8xf32>, %d: tensor<4xf32>) -> tensor<?x?x4xf32> {
  %y = seq.ssm %u, %a, %b, %c, %d discretization zoh {step = 1.0e-2 : f64}
      : (tensor<?x?x4xf32>, tensor<8x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x?x4xf32>
  return %y : tensor<?x?x4xf32>
}

// -----

// Bilinear: [I - step/2 A | I + step/2 A | step B^T] reduced by Gaussian
// elimination with partial pivoting, then back substitution.

// CHECK-LABEL: func.func @ssm_bilinear
// CHECK-SAME:    %[[U:[a-zA-Z0-9]+]]: tensor<2x?x4xf32>
// CHECK:         %[[MHALF:.+]] = arith.constant -5.000000e-02 : f64
// CHECK:         %[[LHS:.+]] = linalg.generic
// CHECK:           arith.mulf %[[MHALF]]
// CHECK:         %[[HALF:.+]] = arith.constant 5.000000e-02 : f64
// CHECK:         %[[RHS:.+]] = linalg.generic
// CHECK:           arith.mulf %[[HALF]]
// CHECK:         %[[STEP:.+]] = arith.constant 1.000000e-01 : f64
// CHECK:         %[[BT:.+]] = linalg.generic
// CHECK:           arith.mulf %[[STEP]]
// CHECK:         %[[AUG0:.+]] = tensor.insert_slice %[[LHS]] into %{{.+}}[0, 0] [8, 8] [1, 1] : tensor<8x8xf64> into tensor<8x20xf64>
// CHECK:         %[[AUG1:.+]] = tensor.insert_slice %[[RHS]] into %[[AUG0]][0, 8] [8, 8] [1, 1]
// CHECK:         %[[AUG:.+]] = tensor.insert_slice %[[BT]] into %[[AUG1]][0, 16] [8, 4] [1, 1] : tensor<8x4xf64> into tensor<8x20xf64>
// Forward elimination: pivot search, row swap, elimination below the pivot.
// CHECK:         %[[FWD:.+]] = scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[M:.+]] = %[[AUG]]) -> (tensor<8x20xf64>)
// CHECK:           %[[PIV:.+]]:2 = scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %[[K]], %{{.+}} = %{{.+}}) -> (index, f64)
// CHECK:             tensor.extract %[[M]][%[[I]], %[[K]]]
// CHECK:             math.absf
// CHECK:             arith.cmpf ogt
// CHECK:           %[[ROWK:.+]] = tensor.extract_slice %[[M]][%[[K]], 0] [1, 20] [1, 1] : tensor<8x20xf64> to tensor<1x20xf64>
// CHECK:           %[[ROWP:.+]] = tensor.extract_slice %[[M]][%[[PIV]]#0, 0] [1, 20] [1, 1]
// CHECK:           %[[SW0:.+]] = tensor.insert_slice %[[ROWP]] into %[[M]][%[[K]], 0] [1, 20] [1, 1]
// CHECK:           %[[SW:.+]] = tensor.insert_slice %[[ROWK]] into %[[SW0]][%[[PIV]]#0, 0] [1, 20] [1, 1]
// CHECK:           %[[PIVOT:.+]] = tensor.extract %[[SW]][%[[K]], %[[K]]]
// CHECK:           %[[ROW:.+]] = tensor.extract_slice %[[SW]][%[[K]], 0] [1, 20] [1, 1]
// CHECK:           %[[COL:.+]] = tensor.extract_slice %[[SW]][0, %[[K]]] [8, 1] [1, 1] : tensor<8x20xf64> to tensor<8x1xf64>
// CHECK:           %[[ELIM:.+]] = linalg.generic {{.*}} ins(%[[COL]], %[[ROW]] : tensor<8x1xf64>, tensor<1x20xf64>) outs(%[[SW]] : tensor<8x20xf64>)
// CHECK:             arith.divf %{{.+}}, %[[PIVOT]]
// CHECK:             arith.cmpi ugt, %{{.+}}, %[[K]] : index
// CHECK:           scf.yield %[[ELIM]]
// Back substitution: normalize the pivot row, eliminate above it.
// CHECK:         %[[BWD:.+]] = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %[[FWD]]) -> (tensor<8x20xf64>)
// CHECK:           linalg.generic
// CHECK:             arith.cmpi ult
// CHECK:             arith.cmpi eq
// CHECK:         %[[ABX:.+]] = tensor.extract_slice %[[BWD]][0, 8] [8, 8] [1, 1] : tensor<8x20xf64> to tensor<8x8xf64>
// CHECK:         %[[BBT:.+]] = tensor.extract_slice %[[BWD]][0, 16] [8, 4] [1, 1] : tensor<8x20xf64> to tensor<8x4xf64>
// CHECK:         linalg.transpose ins(%[[BBT]] : tensor<8x4xf64>) outs(%{{.+}} : tensor<4x8xf64>) permutation = [1, 0]
// CHECK:         scf.for
// CHECK:         linalg.generic
// CHECK:         return
func.func @ssm_bilinear(%u: tensor<2x?x4xf32>, %a: tensor<8x8xf32>, %b: tensor<4x8xf32>,
                        %c: tensor<4x8xf32>, %d: tensor<4xf32>) -> tensor<2x?x4xf32> {
  %y = seq.ssm %u, %a, %b, %c, %d discretization bilinear {step = 1.0e-1 : f64}
      : (tensor<2x?x4xf32>, tensor<8x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<2x?x4xf32>
  return %y : tensor<2x?x4xf32>
}

// -----

// f16 operands: discretization in f64, the scan and its sums in f32, the
// result rounded to f16 at the end.

// CHECK-LABEL: func.func @ssm_f16
// CHECK:         arith.extf %{{.+}} : f16 to f64
// CHECK:         arith.truncf %{{.+}} : f64 to f32
// CHECK:         scf.for {{.*}} -> (tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x?x2xf32>)
// CHECK:           arith.extf %{{.+}} : f16 to f32
// CHECK:         linalg.generic
// CHECK:           arith.truncf %{{.+}} : f32 to f16
// CHECK:         return %{{.+}} : tensor<1x?x2xf16>
func.func @ssm_f16(%u: tensor<1x?x2xf16>, %a: tensor<4x4xf16>, %b: tensor<2x4xf16>,
                   %c: tensor<2x4xf16>, %d: tensor<2xf16>) -> tensor<1x?x2xf16> {
  %y = seq.ssm %u, %a, %b, %c, %d discretization zoh {step = 1.0e-1 : f64}
      : (tensor<1x?x2xf16>, tensor<4x4xf16>, tensor<2x4xf16>, tensor<2x4xf16>, tensor<2xf16>) -> tensor<1x?x2xf16>
  return %y : tensor<1x?x2xf16>
}

// -----

// Mamba: dt = softplus(delta + bias) in parallel, then the scan over L with
// the state [batch, D, N], then (y + D u) * silu(z) in parallel.

// CHECK-LABEL: func.func @selective_scan
// CHECK-SAME:    %[[U:[a-zA-Z0-9]+]]: tensor<?x?x64xf32>, %[[DELTA:[a-zA-Z0-9]+]]: tensor<?x?x64xf32>, %[[A:[a-zA-Z0-9]+]]: tensor<64x16xf32>, %[[B:[a-zA-Z0-9]+]]: tensor<?x?x16xf32>, %[[C:[a-zA-Z0-9]+]]: tensor<?x?x16xf32>, %[[D:[a-zA-Z0-9]+]]: tensor<64xf32>, %[[Z:[a-zA-Z0-9]+]]: tensor<?x?x64xf32>, %[[BIAS:[a-zA-Z0-9]+]]: tensor<64xf32>
// CHECK:         %[[DT:.+]] = linalg.generic {{.*}} ins(%[[DELTA]], %[[BIAS]] : tensor<?x?x64xf32>, tensor<64xf32>)
// CHECK:           %[[SUM:.+]] = arith.addf
// CHECK:           %[[BIG:.+]] = arith.cmpf ogt, %[[SUM]], %{{.+}} : f32
// CHECK:           %[[EXP:.+]] = math.exp %[[SUM]] : f32
// CHECK:           %[[SOFT:.+]] = math.log1p %[[EXP]] : f32
// CHECK:           arith.select %[[BIG]], %[[SUM]], %[[SOFT]] : f32
// CHECK:         %[[SCAN:.+]]:2 = scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[X:.+]] = %{{.+}}, %[[Y:.+]] = %{{.+}}) -> (tensor<?x64x16xf32>, tensor<?x?x64xf32>)
// CHECK-DAG:       %[[DTT:.+]] = tensor.extract_slice %[[DT]][0, %[[T]], 0]
// CHECK-DAG:       %[[UT:.+]] = tensor.extract_slice %[[U]][0, %[[T]], 0]
// CHECK-DAG:       %[[BT:.+]] = tensor.extract_slice %[[B]][0, %[[T]], 0] {{.*}} to tensor<?x1x16xf32>
// CHECK-DAG:       %[[CT:.+]] = tensor.extract_slice %[[C]][0, %[[T]], 0] {{.*}} to tensor<?x1x16xf32>
// CHECK:           %[[XN:.+]] = linalg.generic {{.*}} ins(%[[DTT]], %[[A]], %[[BT]], %[[UT]] : {{.*}}) outs(%[[X]] : tensor<?x64x16xf32>)
// CHECK:           ^bb0(%[[DTV:.+]]: f32, %[[AV:.+]]: f32, %[[BV:.+]]: f32, %[[UV:.+]]: f32, %[[XV:.+]]: f32):
// CHECK:             %[[DA:.+]] = arith.mulf %[[DTV]], %[[AV]]
// CHECK:             %[[DECAY:.+]] = math.exp %[[DA]]
// CHECK:             %[[KEPT:.+]] = arith.mulf %[[DECAY]], %[[XV]]
// CHECK:             %[[DB:.+]] = arith.mulf %[[DTV]], %[[BV]]
// CHECK:             %[[DBU:.+]] = arith.mulf %[[DB]], %[[UV]]
// CHECK:             arith.addf %[[KEPT]], %[[DBU]]
// CHECK:           %[[YT:.+]] = tensor.extract_slice %[[Y]][0, %[[T]], 0]
// CHECK:           %[[YT2:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[CT]], %[[XN]] : tensor<?x1x16xf32>, tensor<?x64x16xf32>) outs(%[[YT]] : tensor<?x1x64xf32>)
// CHECK:           %[[YN:.+]] = tensor.insert_slice %[[YT2]] into %[[Y]][0, %[[T]], 0]
// CHECK:           scf.yield %[[XN]], %[[YN]]
// CHECK:         %[[OUT:.+]] = linalg.generic {{.*}} ins(%[[SCAN]]#1, %[[U]], %[[D]], %[[Z]] : {{.*}})
// CHECK:           ^bb0(%[[YV:.+]]: f32, %[[UV2:.+]]: f32, %[[DV:.+]]: f32, %[[ZV:.+]]: f32, %{{.+}}: f32):
// CHECK:             %[[DU:.+]] = arith.mulf %[[DV]], %[[UV2]]
// CHECK:             %[[SKIP:.+]] = arith.addf %[[YV]], %[[DU]]
// CHECK:             %[[NZ:.+]] = arith.negf %[[ZV]]
// CHECK:             %[[EZ:.+]] = math.exp %[[NZ]]
// CHECK:             %[[DEN:.+]] = arith.addf %{{.+}}, %[[EZ]]
// CHECK:             %[[SILU:.+]] = arith.divf %[[ZV]], %[[DEN]]
// CHECK:             arith.mulf %[[SKIP]], %[[SILU]]
// CHECK:         return %[[OUT]]
func.func @selective_scan(%u: tensor<?x?x64xf32>, %delta: tensor<?x?x64xf32>,
                          %A: tensor<64x16xf32>, %B: tensor<?x?x16xf32>,
                          %C: tensor<?x?x16xf32>, %D: tensor<64xf32>,
                          %z: tensor<?x?x64xf32>, %bias: tensor<64xf32>) -> tensor<?x?x64xf32> {
  %y = seq.selective_scan %u, %delta, %A, %B, %C D(%D : tensor<64xf32>) z(%z : tensor<?x?x64xf32>)
        delta_bias(%bias : tensor<64xf32>) {delta_softplus}
        : tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<64x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32> -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Without the optional parts: dt is delta itself, no skip, no gate.

// CHECK-LABEL: func.func @selective_scan_plain
// CHECK:         linalg.generic
// CHECK-NOT:       math.log1p
// CHECK:         scf.for
// CHECK:           math.exp
// CHECK:         %[[OUT:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<2x10x8xf32>, tensor<2x10x8xf32>)
// CHECK-NEXT:    ^bb0(%[[Y:.+]]: f32, %{{.+}}: f32, %{{.+}}: f32):
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
// CHECK:         return %[[OUT]]
func.func @selective_scan_plain(%u: tensor<2x10x8xf32>, %delta: tensor<2x10x8xf32>,
                                %A: tensor<8x4xf32>, %B: tensor<2x10x4xf32>,
                                %C: tensor<2x10x4xf32>) -> tensor<2x10x8xf32> {
  %y = seq.selective_scan %u, %delta, %A, %B, %C
        : tensor<2x10x8xf32>, tensor<2x10x8xf32>, tensor<8x4xf32>, tensor<2x10x4xf32>, tensor<2x10x4xf32> -> tensor<2x10x8xf32>
  return %y : tensor<2x10x8xf32>
}

// -----

// Causal depthwise conv: left padding of K - 1 = 3, the filter transposed to
// [K, C], accumulated onto the broadcast bias.

// CHECK-LABEL: func.func @conv1d
// CHECK-SAME:    %[[X:[a-zA-Z0-9]+]]: tensor<?x?x64xf32>, %[[W:[a-zA-Z0-9]+]]: tensor<64x4xf32>, %[[B:[a-zA-Z0-9]+]]: tensor<64xf32>
// CHECK:         %[[PAD:.+]] = tensor.pad %[[X]] low[0, 3, 0] high[0, 0, 0]
// CHECK:           tensor.yield %{{.+}} : f32
// CHECK:         } : tensor<?x?x64xf32> to tensor<?x?x64xf32>
// CHECK:         %[[FILTER:.+]] = linalg.transpose ins(%[[W]] : tensor<64x4xf32>) outs(%{{.+}} : tensor<4x64xf32>) permutation = [1, 0]
// CHECK:         %[[INIT:.+]] = linalg.broadcast ins(%[[B]] : tensor<64xf32>) outs(%{{.+}} : tensor<?x?x64xf32>) dimensions = [0, 1]
// CHECK:         %[[CONV:.+]] = linalg.depthwise_conv_1d_nwc_wc ins(%[[PAD]], %[[FILTER]] : tensor<?x?x64xf32>, tensor<4x64xf32>) outs(%[[INIT]] : tensor<?x?x64xf32>)
// CHECK:         return %[[CONV]]
func.func @conv1d(%x: tensor<?x?x64xf32>, %w: tensor<64x4xf32>, %b: tensor<64xf32>) -> tensor<?x?x64xf32> {
  %y = seq.conv1d %x, %w, %b : tensor<?x?x64xf32>, tensor<64x4xf32>, tensor<64xf32> -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// No bias, f16: accumulate in f32 from zero, round at the end.

// CHECK-LABEL: func.func @conv1d_f16
// CHECK:         %[[PAD:.+]] = tensor.pad %{{.+}} low[0, 2, 0] high[0, 0, 0]
// CHECK:         } : tensor<2x8x16xf16> to tensor<2x10x16xf16>
// CHECK:         %[[FILTER:.+]] = linalg.transpose
// CHECK:         %[[ZERO:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<2x8x16xf32>)
// CHECK:         %[[CONV:.+]] = linalg.depthwise_conv_1d_nwc_wc ins(%[[PAD]], %[[FILTER]] : tensor<2x10x16xf16>, tensor<3x16xf16>) outs(%[[ZERO]] : tensor<2x8x16xf32>)
// CHECK:         %[[OUT:.+]] = linalg.generic {{.*}} ins(%[[CONV]] : tensor<2x8x16xf32>) outs(%{{.+}} : tensor<2x8x16xf16>)
// CHECK:           arith.truncf %{{.+}} : f32 to f16
// CHECK:         return %[[OUT]]
func.func @conv1d_f16(%x: tensor<2x8x16xf16>, %w: tensor<16x3xf16>) -> tensor<2x8x16xf16> {
  %y = seq.conv1d %x, %w : tensor<2x8x16xf16>, tensor<16x3xf16> -> tensor<2x8x16xf16>
  return %y : tensor<2x8x16xf16>
}
