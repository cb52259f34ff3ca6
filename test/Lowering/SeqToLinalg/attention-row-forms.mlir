// RUN: seq-opt %s --convert-seq-to-linalg="row-forms=1" --canonicalize --cse -split-input-file | FileCheck %s
// RUN: seq-opt %s --convert-seq-to-linalg --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=REF

// Attention with a score bias, which seq-tile-attention tiles unless the
// bias is the same for every key (this file's inputs are the conversion's
// alone), with row-forms: the scores' row maximum (nnan nsz), the exps and
// their row sums as one reduction with two outputs (no probabilities that
// elementwise fusion would recompute in the P V contraction for each of the
// d_v columns), exps @ v, then each output row times the reciprocal of its
// sum (0 where the sum is not positive).
// CHECK-LABEL: func.func @bias
//       CHECK:   %[[MAX:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
//       CHECK:     arith.maximumf %{{.+}}, %{{.+}} fastmath<nnan,nsz>
//       CHECK:   %[[ES:.+]]:2 = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.+}}, %[[MAX]] : tensor<2x4x?x?xf32>, tensor<2x4x?xf32>) outs(%{{.+}}, %{{.+}} : tensor<2x4x?x?xf32>, tensor<2x4x?xf32>)
//       CHECK:     %[[E:.+]] = math.exp %{{.+}} {seq.fast_exp}
//       CHECK:     %[[S:.+]] = arith.addf %[[E]], %{{.+}}
//       CHECK:     linalg.yield %[[E]], %[[S]]
//       CHECK:   %[[PV:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[ES]]#0, %{{.+}} : tensor<2x4x?x?xf32>, tensor<2x4x?x32xf32>)
//   CHECK-NOT:     math.exp
//   CHECK-NOT:     arith.divf
//       CHECK:     linalg.yield
//       CHECK:   %[[INV:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[ES]]#1 : tensor<2x4x?xf32>)
//       CHECK:     arith.divf
//       CHECK:   %[[O:.+]] = linalg.generic {{.+}} ins(%[[ES]]#1, %[[INV]], %[[PV]] : tensor<2x4x?xf32>, tensor<2x4x?xf32>, tensor<2x4x?x32xf32>)
//       CHECK:     %[[POS:.+]] = arith.cmpf ogt
//       CHECK:     %[[R:.+]] = arith.mulf
//       CHECK:     arith.select %[[POS]], %[[R]]
//       CHECK:   return %[[O]]
// The reference form: the probabilities, exps divided by the sums, then P V.
// REF-LABEL: func.func @bias
//       REF:   %[[P:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%{{.+}}, %{{.+}}, %{{.+}} :
//       REF:     math.exp
//       REF:     arith.divf
//       REF:   linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[P]], %{{.+}} : tensor<2x4x?x?xf32>, tensor<2x4x?x32xf32>)
func.func @bias(%q: tensor<2x4x?x32xf32>, %k: tensor<2x4x?x32xf32>, %v: tensor<2x4x?x32xf32>,
                %bias: tensor<2x1x1x?xf32>) -> tensor<2x4x?x32xf32> {
  %o = seq.attention %q, %k, %v bias(%bias : tensor<2x1x1x?xf32>)
      : tensor<2x4x?x32xf32>, tensor<2x4x?x32xf32>, tensor<2x4x?x32xf32> -> tensor<2x4x?x32xf32>
  return %o : tensor<2x4x?x32xf32>
}

// -----

// bf16 keeps the probabilities form under row-forms too.
// CHECK-LABEL: func.func @bf16
//       CHECK:     arith.divf
//   CHECK-NOT:   linalg.generic {{.+}} outs(%{{.+}}, %{{.+}} :
//       CHECK:   return
func.func @bf16(%q: tensor<1x2x8x16xbf16>, %bias: tensor<1x1x8x8xbf16>) -> tensor<1x2x8x16xbf16> {
  %o = seq.attention %q, %q, %q bias(%bias : tensor<1x1x8x8xbf16>)
      : tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  return %o : tensor<1x2x8x16xbf16>
}
