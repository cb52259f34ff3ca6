//===- Pipelines.cpp - the seq-level transforms of -O2 --------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::seq;

void mlir::seq::addAttentionTransforms(OpPassManager &pm,
                                       const SeqTileAttentionOptions &tile) {
  // Attention written as matrix products becomes seq.attention, which is
  // then tiled into an online softmax instead of materializing the scores,
  // and linear attention takes its cheaper association (decided at run
  // time when the lengths are symbolic).
  SeqRaiseAttentionOptions raise;
  raise.remarks = tile.remarks;
  pm.addPass(createSeqRaiseAttention(raise));
  pm.addPass(createSeqTileAttention(tile));
  SeqReassociateLinearAttentionOptions reassociate;
  reassociate.remarks = tile.remarks;
  pm.addPass(createSeqReassociateLinearAttention(reassociate));
}
