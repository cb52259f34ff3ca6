//===- LowerDynamicExpandShape.cpp - expand_shape without the 22 crash ----===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Expands memref.expand_shape ops with several dynamic result dimensions in
// one reassociation group into extract_strided_metadata + reinterpret_cast,
// which expand-strided-metadata of MLIR 22 crashes on. See the pass
// description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/Support/Debug.h"
#include "lowering/Common/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "seq-lower-dynamic-expand-shape"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQLOWERDYNAMICEXPANDSHAPE
#include "lowering/Common/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

/// Returns true if some reassociation group of `op` has more than one
/// dynamic result dimension: the case expand-strided-metadata mishandles.
static bool hasGroupWithSeveralDynamicDims(memref::ExpandShapeOp op) {
  MemRefType resultType = op.getResultType();
  for (const ReassociationIndices &group : op.getReassociationIndices())
    if (llvm::count_if(group, [&](int64_t dim) {
          return resultType.isDynamicDim(dim);
        }) > 1)
      return true;
  return false;
}

/// `lhs * rhs` as an attribute when both are constants, as an arith.muli
/// otherwise.
static OpFoldResult multiply(OpBuilder &builder, Location loc, OpFoldResult lhs,
                             OpFoldResult rhs) {
  std::optional<int64_t> lhsInt = getConstantIntValue(lhs);
  std::optional<int64_t> rhsInt = getConstantIntValue(rhs);
  if (lhsInt && rhsInt)
    return builder.getIndexAttr(*lhsInt * *rhsInt);
  if (lhsInt == 1)
    return rhs;
  if (rhsInt == 1)
    return lhs;
  return arith::MulIOp::create(
             builder, loc, getValueOrCreateConstantIndexOp(builder, loc, lhs),
             getValueOrCreateConstantIndexOp(builder, loc, rhs))
      .getResult();
}

namespace {
struct ExpandShapeToReinterpretCast
    : public OpRewritePattern<memref::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::ExpandShapeOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasGroupWithSeveralDynamicDims(op))
      return rewriter.notifyMatchFailure(op, "expand-strided-metadata's case");
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] expanding " << op << "\n");
    Location loc = op.getLoc();
    auto metadata =
        memref::ExtractStridedMetadataOp::create(rewriter, loc, op.getSrc());
    SmallVector<OpFoldResult> sourceStrides =
        metadata.getConstifiedMixedStrides();
    SmallVector<OpFoldResult> sizes = op.getMixedOutputShape();
    SmallVector<OpFoldResult> strides(sizes.size());
    for (auto [sourceDim, group] :
         llvm::enumerate(op.getReassociationIndices())) {
      // Row-major inside the group: the innermost dimension keeps the source
      // stride, each outer one multiplies by the size to its right.
      OpFoldResult stride = sourceStrides[sourceDim];
      for (int64_t dim : llvm::reverse(group)) {
        strides[dim] = stride;
        stride = multiply(rewriter, loc, stride, sizes[dim]);
      }
    }
    rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
        op, op.getResultType(), metadata.getBaseBuffer(),
        metadata.getConstifiedMixedOffset(), sizes, strides);
    return success();
  }
};

struct SeqLowerDynamicExpandShapePass
    : public mlir::seq::impl::SeqLowerDynamicExpandShapeBase<
          SeqLowerDynamicExpandShapePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandShapeToReinterpretCast>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
