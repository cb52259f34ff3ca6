//===- Transforms.h - seq dialect transformations ---------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Library entry points of the seq transformations, usable without the pass
// wrappers (the lowering pipelines and tests call them directly).
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_PASSES_TRANSFORMS_H
#define SEQC_PASSES_TRANSFORMS_H

#include "dialect/Seq/IR/SeqOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace seq {

/// Rewrites one `seq.multi_head_attention` into primitive seq ops and
/// returns the value replacing its result.
FailureOr<Value> decomposeMultiHeadAttention(RewriterBase &rewriter,
                                             MultiHeadAttentionOp op);

/// Patterns decomposing composite seq ops (see `seq-decompose`).
void populateSeqDecompositionPatterns(RewritePatternSet &patterns);

/// Rewrites `S = A @ B^T` whose uses are all `S @ V` and row sums of S into
/// `A @ (B^T V)` and `A @ sum(B)^T` when the cost model says so, or behind a
/// run-time test of it when the sizes are symbolic (see
/// `seq-reassociate-linear-attention`). With `remarks`, says which form and
/// why at the product.
LogicalResult reassociateLinearAttention(RewriterBase &rewriter, MatmulOp qk,
                                         bool remarks = false);

/// The pattern raising plain-math attention to `seq.attention` (see
/// `seq-raise-attention`); with `remarks`, each rewrite says so.
void populateSeqRaiseAttentionPatterns(RewritePatternSet &patterns,
                                       bool remarks = false);

/// Tiles one `seq.attention` into loops over query and key tiles of
/// `seq.online_attention` and `seq.attention_finalize` (see
/// `seq-tile-attention`); fails, with a remark under `remarks`, on the ops
/// it does not apply to. With `narrowInPlace`, bf16 or f16 Q, K and V are
/// read in place by the tiles instead of converted to f32 (`bf16Dot`: the target
/// has vdpbf16ps, for the remark). With `packKeys`, f32 keys are packed
/// once per call into [d, key-block] tiles when there are several query
/// tiles (`key_transposed` tiles).
LogicalResult tileAttention(RewriterBase &rewriter, AttentionOp op,
                            int64_t queryBlock, int64_t keyBlock,
                            int64_t splitUnits, int64_t splitMinKeys,
                            bool remarks = false, bool narrowInPlace = false,
                            bool bf16Dot = false, bool packKeys = false);

} // namespace seq
} // namespace mlir

#endif // SEQC_PASSES_TRANSFORMS_H
