//===- Passes.td - seq dialect transformation passes -------*- tablegen -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_PASSES_PASSES_TD
#define SEQC_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def SeqDecompose : Pass<"seq-decompose"> {
  let summary = "Decomposes composite seq ops into primitive seq ops";
  let description = [{
    Rewrites `seq.multi_head_attention` into the projections, head splitting,
    rotary embedding, ALiBi slopes, `seq.attention`, head merging and output
    projection it stands for. Later stages (the target's seq-level
    transforms, convert-seq-to-linalg) work on the primitive ops only.
  }];
  let dependentDialects = ["::mlir::seq::SeqDialect"];
}

#endif // SEQC_PASSES_PASSES_TD
