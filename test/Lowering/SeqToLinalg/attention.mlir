// RUN: seq-opt %s --convert-seq-to-linalg -split-input-file | FileCheck %s

// The mask is a predicate of the loop indices: causal (j <= i), a window
// (|i - j| < w) widened by the global tokens, and the key length of the batch
// row; hidden scores become -inf.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[BATCH:.+]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @apply_mask
//  CHECK-SAME:   %[[S:.+]]: tensor<?x?x?xf32>, %[[LEN:.+]]: tensor<?xi32>
//       CHECK:   cf.assert %{{.+}}, "seq.apply_mask: lengths size differs from the batch"
//       CHECK:   linalg.generic {indexing_maps = [#[[ID]], #[[BATCH]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
//  CHECK-SAME:     ins(%[[S]], %[[LEN]] : tensor<?x?x?xf32>, tensor<?xi32>)
//       CHECK:   ^bb0(%[[SV:.+]]: f32, %[[LV:.+]]: i32, %{{.+}}: f32):
//       CHECK:     %[[I:.+]] = linalg.index 1 : index
//       CHECK:     %[[J:.+]] = linalg.index 2 : index
//       CHECK:     %[[L:.+]] = arith.index_cast %[[LV]] : i32 to index
//       CHECK:     %[[CAUSAL:.+]] = arith.cmpi sle, %[[J]], %[[I]] : index
//       CHECK:     %[[HI:.+]] = arith.maxsi %[[I]], %[[J]] : index
//       CHECK:     %[[LO:.+]] = arith.minsi %[[I]], %[[J]] : index
//       CHECK:     %[[DIST:.+]] = arith.subi %[[HI]], %[[LO]] : index
//       CHECK:     %[[W:.+]] = arith.constant 4 : index
//       CHECK:     %[[NEAR:.+]] = arith.cmpi ult, %[[DIST]], %[[W]] : index
//       CHECK:     %[[G:.+]] = arith.constant 1 : index
//       CHECK:     %[[QG:.+]] = arith.cmpi ult, %[[I]], %[[G]] : index
//       CHECK:     %[[KG:.+]] = arith.cmpi ult, %[[J]], %[[G]] : index
//       CHECK:     %[[OR1:.+]] = arith.ori %[[NEAR]], %[[QG]] : i1
//       CHECK:     %[[WIN:.+]] = arith.ori %[[OR1]], %[[KG]] : i1
//       CHECK:     %[[A1:.+]] = arith.andi %[[CAUSAL]], %[[WIN]] : i1
//       CHECK:     %[[INLEN:.+]] = arith.cmpi slt, %[[J]], %[[L]] : index
//       CHECK:     %[[OK:.+]] = arith.andi %[[A1]], %[[INLEN]] : i1
//       CHECK:     %[[NINF:.+]] = arith.constant 0xFF800000 : f32
//       CHECK:     %[[R:.+]] = arith.select %[[OK]], %[[SV]], %[[NINF]] : f32
//       CHECK:     linalg.yield %[[R]] : f32
func.func @apply_mask(%s: tensor<?x?x?xf32>, %len: tensor<?xi32>) -> tensor<?x?x?xf32> {
  %0 = seq.apply_mask %s lengths(%len : tensor<?xi32>) {mask = #seq.mask<causal = true, window = 4, global_tokens = 1>} : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

// -----

// CHECK-LABEL: func.func @apply_mask_full
//  CHECK-SAME:   %[[S:.+]]: tensor<2x4x4xf32>
//   CHECK-NOT:   linalg.generic
//       CHECK:   return %[[S]]
func.func @apply_mask_full(%s: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %0 = seq.apply_mask %s {mask = #seq.mask<>} : tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

// Plain attention: q k^T (loops b, h, i, j, d), scale 1/sqrt(32), the safe
// softmax over j, then p v (loops b, h, i, e, j), all accumulated in f32
// for f16 operands and rounded at the end.
// CHECK-DAG: #[[QMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[KMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG: #[[SMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[VMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-DAG: #[[ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[ROW4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @attention_f16
//  CHECK-SAME:   %[[Q:.+]]: tensor<2x4x16x32xf16>, %[[K:.+]]: tensor<2x4x16x32xf16>, %[[V:.+]]: tensor<2x4x16x32xf16>
//       CHECK:   %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
//       CHECK:   %[[SACC:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<2x4x16x16xf32>)
//       CHECK:   %[[QK:.+]] = linalg.generic {indexing_maps = [#[[QMAP]], #[[KMAP]], #[[SMAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
//  CHECK-SAME:     ins(%[[Q]], %[[K]] : tensor<2x4x16x32xf16>, tensor<2x4x16x32xf16>) outs(%[[SACC]] : tensor<2x4x16x16xf32>)
//       CHECK:     arith.extf
//       CHECK:     arith.extf
//       CHECK:     arith.mulf
//       CHECK:     arith.addf
//       CHECK:   %[[SCORES:.+]] = linalg.generic {indexing_maps = [#[[ID4]], #[[ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
//  CHECK-SAME:     ins(%[[QK]] : tensor<2x4x16x16xf32>)
//       CHECK:     %[[SCALE:.+]] = arith.constant 0.176776692 : f32
//       CHECK:     arith.mulf %{{.+}}, %[[SCALE]] : f32
//   CHECK-NOT:     arith.select
//       CHECK:   %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[ID4]], #[[ROW4]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
//  CHECK-SAME:     ins(%[[SCORES]] : tensor<2x4x16x16xf32>)
//       CHECK:     arith.maximumf
//       CHECK:   %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[SCORES]], %[[MAX]] :
//       CHECK:     math.exp
//       CHECK:   %[[P:.+]] = linalg.generic {{.+}} ins(%[[SCORES]], %[[MAX]], %[[SUM]] :
//       CHECK:     arith.divf
//       CHECK:     arith.select
//       CHECK:   %[[PV:.+]] = linalg.generic {indexing_maps = [#[[QMAP]], #[[VMAP]], #[[SMAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
//  CHECK-SAME:     ins(%[[P]], %[[V]] : tensor<2x4x16x16xf32>, tensor<2x4x16x32xf16>) outs(%{{.+}} : tensor<2x4x16x32xf32>)
//       CHECK:   %[[OUT:.+]] = linalg.generic {{.+}} ins(%[[PV]] : tensor<2x4x16x32xf32>) outs(%{{.+}} : tensor<2x4x16x32xf16>)
//       CHECK:     arith.truncf
//       CHECK:   return %[[OUT]]
func.func @attention_f16(%q: tensor<2x4x16x32xf16>, %k: tensor<2x4x16x32xf16>, %v: tensor<2x4x16x32xf16>) -> tensor<2x4x16x32xf16> {
  %o = seq.attention %q, %k, %v : tensor<2x4x16x32xf16>, tensor<2x4x16x32xf16>, tensor<2x4x16x32xf16> -> tensor<2x4x16x32xf16>
  return %o : tensor<2x4x16x32xf16>
}

// -----

// Grouped-query attention (8 query heads, 2 kv heads): the query head dim is
// expanded to [kv_heads, group] so that the kv head is a plain loop index;
// scores and outputs collapse back to 8 heads. The score update adds the
// broadcast bias, subtracts slope[h] |i - j| and applies the causal mask and
// key lengths.
// CHECK-DAG: #[[QG:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>
// CHECK-DAG: #[[KG:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>
// CHECK-DAG: #[[SG:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[VG:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5, d4)>
// CHECK-DAG: #[[ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[BIAS:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[HEAD:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-DAG: #[[BATCH:.+]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-LABEL: func.func @attention_gqa
//  CHECK-SAME:   %[[Q:.+]]: tensor<?x8x?x64xf32>, %[[K:.+]]: tensor<?x2x?x64xf32>, %[[V:.+]]: tensor<?x2x?x64xf32>,
//  CHECK-SAME:   %[[LEN:.+]]: tensor<?xi64>, %[[BIASV:.+]]: tensor<1x1x?x?xf32>, %[[SLOPES:.+]]: tensor<8xf32>
//       CHECK:   cf.assert %{{.+}}, "seq.attention: query and key batch differ"
//       CHECK:   cf.assert %{{.+}}, "seq.attention: lengths size differs from the batch"
//       CHECK:   %[[QE:.+]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1, 2], [3], [4]] output_shape [%{{.+}}, 2, 4, %{{.+}}, 64] : tensor<?x8x?x64xf32> into tensor<?x2x4x?x64xf32>
//       CHECK:   %[[QK:.+]] = linalg.generic {indexing_maps = [#[[QG]], #[[KG]], #[[SG]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
//  CHECK-SAME:     ins(%[[QE]], %[[K]] : tensor<?x2x4x?x64xf32>, tensor<?x2x?x64xf32>) outs(%{{.+}} : tensor<?x2x4x?x?xf32>)
//       CHECK:   %[[S4:.+]] = tensor.collapse_shape %[[QK]] {{\[}}[0], [1, 2], [3], [4]] : tensor<?x2x4x?x?xf32> into tensor<?x8x?x?xf32>
//       CHECK:   cf.assert %{{.+}}, "dynamic dimension does not broadcast
// The bias's unit dimensions are collapsed away, so that it is read through
// a projected permutation.
//       CHECK:   %[[B2:.+]] = tensor.collapse_shape %[[BIASV]] {{\[}}[0, 1, 2], [3]] : tensor<1x1x?x?xf32> into tensor<?x?xf32>
//       CHECK:   %[[SCORES:.+]] = linalg.generic {indexing_maps = [#[[ID4]], #[[BIAS]], #[[HEAD]], #[[BATCH]], #[[ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
//  CHECK-SAME:     ins(%[[S4]], %[[B2]], %[[SLOPES]], %[[LEN]] : tensor<?x8x?x?xf32>, tensor<?x?xf32>, tensor<8xf32>, tensor<?xi64>)
//       CHECK:   ^bb0(%[[SV:.+]]: f32, %[[BV:.+]]: f32, %[[SL:.+]]: f32, %[[LV:.+]]: i64, %{{.+}}: f32):
//       CHECK:     %[[SCALE:.+]] = arith.constant 1.250000e-01 : f32
//       CHECK:     %[[SS:.+]] = arith.mulf %[[SV]], %[[SCALE]] : f32
//       CHECK:     %[[SB:.+]] = arith.addf %[[SS]], %[[BV]] : f32
//       CHECK:     %[[I:.+]] = linalg.index 2 : index
//       CHECK:     %[[J:.+]] = linalg.index 3 : index
//       CHECK:     %[[HI:.+]] = arith.maxsi %[[I]], %[[J]] : index
//       CHECK:     %[[LO:.+]] = arith.minsi %[[I]], %[[J]] : index
//       CHECK:     %[[D:.+]] = arith.subi %[[HI]], %[[LO]] : index
//       CHECK:     %[[D64:.+]] = arith.index_cast %[[D]] : index to i64
//       CHECK:     %[[DF:.+]] = arith.sitofp %[[D64]] : i64 to f32
//       CHECK:     %[[PEN:.+]] = arith.mulf %[[SL]], %[[DF]] : f32
//       CHECK:     %[[SA:.+]] = arith.subf %[[SB]], %[[PEN]] : f32
//       CHECK:     %[[L:.+]] = arith.index_cast %[[LV]] : i64 to index
//       CHECK:     %[[CAUSAL:.+]] = arith.cmpi sle, %[[J]], %[[I]] : index
//       CHECK:     %[[INLEN:.+]] = arith.cmpi slt, %[[J]], %[[L]] : index
//       CHECK:     %[[OK:.+]] = arith.andi %[[CAUSAL]], %[[INLEN]] : i1
//       CHECK:     %[[R:.+]] = arith.select %[[OK]], %[[SA]], %{{.+}} : f32
//       CHECK:     linalg.yield %[[R]] : f32
//       CHECK:   %[[P:.+]] = linalg.generic {{.+}} ins(%[[SCORES]], %{{.+}}, %{{.+}} : tensor<?x8x?x?xf32>, tensor<?x8x?xf32>, tensor<?x8x?xf32>)
//       CHECK:   %[[PE:.+]] = tensor.expand_shape %[[P]] {{\[}}[0], [1, 2], [3], [4]] output_shape [%{{.+}}, 2, 4, %{{.+}}, %{{.+}}] : tensor<?x8x?x?xf32> into tensor<?x2x4x?x?xf32>
//       CHECK:   %[[PV:.+]] = linalg.generic {indexing_maps = [#[[QG]], #[[VG]], #[[SG]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
//  CHECK-SAME:     ins(%[[PE]], %[[V]] : tensor<?x2x4x?x?xf32>, tensor<?x2x?x64xf32>) outs(%{{.+}} : tensor<?x2x4x?x64xf32>)
//       CHECK:   %[[O:.+]] = tensor.collapse_shape %[[PV]] {{\[}}[0], [1, 2], [3], [4]] : tensor<?x2x4x?x64xf32> into tensor<?x8x?x64xf32>
//       CHECK:   return %[[O]]
func.func @attention_gqa(%q: tensor<?x8x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>,
                         %len: tensor<?xi64>, %bias: tensor<1x1x?x?xf32>, %slopes: tensor<8xf32>) -> tensor<?x8x?x64xf32> {
  %o = seq.attention %q, %k, %v lengths(%len : tensor<?xi64>) bias(%bias : tensor<1x1x?x?xf32>) alibi(%slopes : tensor<8xf32>) {mask = #seq.mask<causal = true>}
      : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32> -> tensor<?x8x?x64xf32>
  return %o : tensor<?x8x?x64xf32>
}

// -----

// Dynamic head counts cannot be grouped statically: they must be equal, which
// is checked at run time.
// CHECK-LABEL: func.func @attention_dynamic_heads
//       CHECK:   cf.assert %{{.+}}, "seq.attention: head counts differ (grouped-query attention needs static head counts)"
//   CHECK-NOT:   tensor.expand_shape
//       CHECK:   linalg.generic
func.func @attention_dynamic_heads(%q: tensor<1x?x4x8xf32>, %k: tensor<1x?x4x8xf32>, %v: tensor<1x?x4x8xf32>) -> tensor<1x?x4x8xf32> {
  %o = seq.attention %q, %k, %v : tensor<1x?x4x8xf32>, tensor<1x?x4x8xf32>, tensor<1x?x4x8xf32> -> tensor<1x?x4x8xf32>
  return %o : tensor<1x?x4x8xf32>
}

// -----

// multi_head_attention is decomposed and its parts lowered in the same
// conversion: no seq op survives.
// CHECK-LABEL: func.func @multi_head_attention
//   CHECK-NOT:   = seq.
//       CHECK:   linalg.matmul
//       CHECK:   linalg.transpose
//       CHECK:   tensor.extract %{{.+}} : tensor<?x4x?x8xf32>
//       CHECK:   arith.constant dense<[2.500000e-01, 6.250000e-02, 1.562500e-02, 3.906250e-03]> : tensor<4xf32>
//   CHECK-NOT:   = seq.
//       CHECK:   return
func.func @multi_head_attention(%x: tensor<?x?x32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<16x32xf32>, %wv: tensor<16x32xf32>, %wo: tensor<32x32xf32>) -> tensor<?x?x32xf32> {
  %y = seq.multi_head_attention %x weights(%wq, %wk, %wv, %wo : tensor<32x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>, tensor<32x32xf32>)
      {heads = 4 : i64, kv_heads = 2 : i64, mask = #seq.mask<causal = true>, rope_theta = 1.0e4 : f64, alibi}
      : tensor<?x?x32xf32> -> tensor<?x?x32xf32>
  return %y : tensor<?x?x32xf32>
}
