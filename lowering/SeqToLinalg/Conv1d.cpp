//===- Conv1d.cpp - lower seq.conv1d to linalg ----------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// `seq.conv1d` pads the sequence on the left by K-1 and runs
// `linalg.depthwise_conv_1d_nwc_wc`.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/IR/SeqOps.h"
#include "lowering/SeqToLinalg/Patterns.h"
#include "lowering/SeqToLinalg/StateSpace.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::seq;
using namespace mlir::seq::statespace;

namespace {
/// `seq.conv1d`: left-pad the sequence with K-1 zeros and run
/// `linalg.depthwise_conv_1d_nwc_wc` (`[batch, L, C]` is its NWC layout), on
/// the filter transposed to `[K, C]`, accumulating onto the broadcast bias.
struct Conv1dOpLowering : public OpRewritePattern<Conv1dOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(Conv1dOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getInput().getType().getRank() != 3 ||
        op.getWeight().getType().getRank() != 2)
      return emitLoweringError(rewriter, op,
                               "expected an input of rank 3 and a weight of "
                               "rank 2");
    Location loc = op.getLoc();
    Value x = op.getInput(), weight = op.getWeight(), bias = op.getBias();
    auto xType = cast<RankedTensorType>(x.getType());
    Type elementType = xType.getElementType();
    Type computeType = getComputeType(elementType);
    SmallVector<OpFoldResult> xSizes = tensor::getMixedSizes(rewriter, loc, x);
    OpFoldResult channels = tensor::getMixedSize(rewriter, loc, weight, 0);
    OpFoldResult kernel = tensor::getMixedSize(rewriter, loc, weight, 1);

    // Left padding of K - 1 along the sequence (none for an empty kernel,
    // whose result is the bias alone).
    OpFoldResult padding;
    int64_t kernelSize = op.getWeight().getType().getDimSize(1);
    if (ShapedType::isStatic(kernelSize)) {
      padding = rewriter.getIndexAttr(std::max<int64_t>(kernelSize - 1, 0));
    } else {
      Value kernelMinusOne = arith::SubIOp::create(
          rewriter, loc, getValueOrCreateIndex(rewriter, loc, kernel),
          createIndexConstant(rewriter, loc, 1));
      padding = arith::MaxSIOp::create(rewriter, loc, kernelMinusOne,
                                       createIndexConstant(rewriter, loc, 0))
                    .getResult();
    }
    SmallVector<int64_t> paddedShape(xType.getShape());
    std::optional<int64_t> staticPadding = getConstantIntValue(padding);
    if (ShapedType::isStatic(paddedShape[1]) && staticPadding)
      paddedShape[1] += *staticPadding;
    else
      paddedShape[1] = ShapedType::kDynamic;
    OpFoldResult zeroIndex = rewriter.getIndexAttr(0);
    Value padValue = createFloatConstant(rewriter, loc, elementType, 0.0);
    Value padded = tensor::PadOp::create(
        rewriter, loc, RankedTensorType::get(paddedShape, elementType), x,
        {zeroIndex, padding, zeroIndex}, {zeroIndex, zeroIndex, zeroIndex},
        padValue);

    Value filter =
        linalg::TransposeOp::create(
            rewriter, loc, weight,
            createEmptyTensor(rewriter, loc, {kernel, channels}, elementType),
            ArrayRef<int64_t>{1, 0})
            .getResult()[0];

    Value init = createEmptyTensor(rewriter, loc, xSizes, computeType);
    if (bias) {
      Value wideBias = convertElements(rewriter, loc, bias, computeType);
      init = linalg::BroadcastOp::create(rewriter, loc, wideBias, init,
                                         ArrayRef<int64_t>{0, 1})
                 .getResult()[0];
    } else {
      init = fillWith(rewriter, loc, init, 0.0);
    }
    Value conv = linalg::DepthwiseConv1DNwcWcOp::create(
                     rewriter, loc, TypeRange{init.getType()},
                     ValueRange{padded, filter}, ValueRange{init})
                     .getResult(0);
    Value result = convertElements(rewriter, loc, conv, elementType);
    rewriter.replaceOp(op, castToType(rewriter, loc, result, op.getType()));
    return success();
  }
};
} // namespace

void mlir::seq::populateConv1dToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<Conv1dOpLowering>(patterns.getContext());
}
