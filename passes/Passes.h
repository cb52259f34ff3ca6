//===- Passes.h - seq dialect transformation passes -------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Transformations on the `seq` dialect; so far the decomposition of
// composite ops (seq-decompose). Each pass is a thin driver over the pattern
// sets and functions declared in Transforms.h; the pipelines run them in the
// seq-level stage (lowering/Pipelines.h).
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_PASSES_PASSES_H
#define SEQC_PASSES_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class OpPassManager;

namespace seq {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// The seq-to-seq transforms of -O2, in order: seq-raise-attention,
/// seq-tile-attention with `tile` (the target's tile sizes and split
/// thresholds; its `remarks` applies to all three) and
/// seq-reassociate-linear-attention. Each target adds them from its
/// addSeqTransforms hook (lowering/TargetInfo.h) with its own tiles.
void addAttentionTransforms(OpPassManager &pm,
                            const SeqTileAttentionOptions &tile);

} // namespace seq
} // namespace mlir

#endif // SEQC_PASSES_PASSES_H
