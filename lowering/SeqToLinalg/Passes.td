//===- Passes.td - seq to linalg conversion pass -----------*- tablegen -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_SEQTOLINALG_PASSES_TD
#define SEQC_LOWERING_SEQTOLINALG_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertSeqToLinalg : Pass<"convert-seq-to-linalg"> {
  let summary = "Lowers seq ops to linalg, tensor, arith, math and scf";
  let description = [{
    Replaces every `seq` op by its meaning on tensors: structured linalg ops
    (generic, matmul, reductions), tensor reshapes and slices, and scf loops
    for the recurrences (state-space scans, causal linear attention). Composite
    ops must have been decomposed first (`seq-decompose`). Fails if any `seq`
    op survives.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::cf::ControlFlowDialect"
  ];
}

#endif // SEQC_LOWERING_SEQTOLINALG_PASSES_TD
