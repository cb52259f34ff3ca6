//===- LowerStridedCopies.cpp - memref.copy without runner utilities ------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Rewrites memref.copy ops that finalize-memref-to-llvm would lower to a call
// of `memrefCopy` (MLIR's C runner utilities, not linked into seqc programs)
// into linalg.copy, which becomes loops. See the pass description.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/Passes.h"

#include "dialect/Seq/Support/Debug.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "seq-cpu-lower-strided-copies"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQCPULOWERSTRIDEDCOPIES
#include "lowering/CPU/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

/// Mirrors the test in MemRefToLLVM's copy lowering: these copies become a
/// single `llvm.memcpy`.
static bool isContiguous(Type type) {
  auto memrefType = dyn_cast<MemRefType>(type);
  return memrefType && (memrefType.getLayout().isIdentity() ||
                        memref::isStaticShapeAndContiguousRowMajor(memrefType));
}

namespace {
/// memref.copy %src, %dst  ->  linalg.copy ins(%src) outs(%dst)
/// when either side is not contiguous.
struct StridedCopyToLinalg : public OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::CopyOp copy,
                                PatternRewriter &rewriter) const override {
    Type sourceType = copy.getSource().getType();
    Type targetType = copy.getTarget().getType();
    if (isContiguous(sourceType) && isContiguous(targetType))
      return rewriter.notifyMatchFailure(copy, "lowers to llvm.memcpy");
    // linalg.copy needs ranked operands; unranked copies only arise from
    // unranked tensors, which seq programs do not have.
    if (!isa<MemRefType>(sourceType) || !isa<MemRefType>(targetType))
      return rewriter.notifyMatchFailure(copy, "unranked operand");
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] linalg.copy from " << sourceType << " to "
               << targetType << ": " << copy.getLoc() << "\n");
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                copy.getTarget());
    return success();
  }
};

struct SeqCPULowerStridedCopiesPass
    : public mlir::seq::impl::SeqCPULowerStridedCopiesBase<
          SeqCPULowerStridedCopiesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<StridedCopyToLinalg>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();

    // An unranked copy that is not contiguous has no lowering without the
    // runner utilities: report it here rather than as a link error.
    WalkResult result = getOperation()->walk([](memref::CopyOp copy) {
      if (isContiguous(copy.getSource().getType()) &&
          isContiguous(copy.getTarget().getType()))
        return WalkResult::advance();
      copy.emitError("cannot lower a copy between unranked or non-contiguous "
                     "buffers without MLIR's runner utilities");
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
