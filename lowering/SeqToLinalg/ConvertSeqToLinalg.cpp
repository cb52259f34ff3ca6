//===- ConvertSeqToLinalg.cpp - the seq-to-linalg conversion pass ---------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/IR/SeqOps.h"
#include "dialect/Seq/Support/Debug.h"
#include "lowering/SeqToLinalg/Passes.h"
#include "lowering/SeqToLinalg/Patterns.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Transforms/DialectConversion.h"

#define DEBUG_TYPE "convert-seq-to-linalg"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_CONVERTSEQTOLINALG
#include "lowering/SeqToLinalg/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;
using namespace mlir::seq;

void mlir::seq::populateSeqToLinalgPatterns(RewritePatternSet &patterns) {
  populateElementwiseToLinalgPatterns(patterns);
  populateShapeToLinalgPatterns(patterns);
  populateLinearToLinalgPatterns(patterns);
  populateNormalizationToLinalgPatterns(patterns);
  populateAttentionToLinalgPatterns(patterns);
  populateTiledAttentionToLinalgPatterns(patterns);
  populatePositionEncodingToLinalgPatterns(patterns);
  populateLossToLinalgPatterns(patterns);
  populateLinearAttentionToLinalgPatterns(patterns);
  populateStateSpaceToLinalgPatterns(patterns);
  populateConv1dToLinalgPatterns(patterns);
}

namespace {
struct ConvertSeqToLinalgPass
    : public mlir::seq::impl::ConvertSeqToLinalgBase<ConvertSeqToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] scan-vector-lanes " << scanVectorLanes
               << (scanScalef ? " (scalef)" : "") << ", linear-attention-chunk "
               << linearAttentionChunk
               << (linearAttentionPerHead ? " per head" : "") << ", row-forms "
               << (rowForms ? "on" : "off") << "\n");
    MLIRContext *context = &getContext();
    ConversionTarget target(*context);
    target.addIllegalDialect<SeqDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    // seq.dequantize only feeds Linear weights, which read its blocks
    // (Quantized.cpp); it is dead after the conversion and erased.
    target.addLegalOp<DequantizeOp>();

    RewritePatternSet patterns(context);
    populateSeqToLinalgPatterns(patterns);
    populateFusedScanToLinalgPatterns(patterns, scanVectorLanes, scanScalef,
                                      remarks);
    populateChunkedLinearAttentionToLinalgPatterns(
        patterns, linearAttentionChunk, linearAttentionPerHead, remarks);
    if (rowForms) {
      populateTabulatedRopeToLinalgPatterns(patterns);
      populateConv1dTapsToLinalgPatterns(patterns, remarks);
      populateRowBlockNormalizationToLinalgPatterns(patterns, remarks);
      populateRowFormAttentionToLinalgPatterns(patterns);
    }
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();
    getOperation()->walk([](DequantizeOp op) {
      if (op->use_empty())
        op->erase();
    });
  }
};
} // namespace
