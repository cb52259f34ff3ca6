//===- Loss.cpp - lower cross-entropy to linalg ---------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Cross-entropy as torch computes it, without materializing log-softmax:
// per position (all leading dimensions) with logits l over C classes,
//
//   m   = max_c l_c                  (0 when -inf, as in the safe softmax)
//   lse = m + log(sum_c exp(l_c - m))
//   nll = lse - l_target                         (= -log_softmax(l)_target)
//   smooth = lse - mean_c l_c                    (= mean_c -log_softmax(l)_c)
//   loss = (1 - eps) nll + eps smooth
//
// and the result is the sum of the losses of the positions whose target is
// not `ignore_index`, divided by their number (0 when there are none; torch
// gives NaN there). The smoothing term is left out entirely when eps = 0, so
// that a -inf logit (masked vocabulary) does not turn 0 * inf into NaN.
//
//===----------------------------------------------------------------------===//

#include "lowering/SeqToLinalg/Patterns.h"
#include "lowering/SeqToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::seq;

namespace {

struct CrossEntropyLowering : public OpRewritePattern<CrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value logits = op.getLogits();
    Value targets = op.getTargets();
    auto logitsType = cast<RankedTensorType>(logits.getType());
    Type elementType = logitsType.getElementType();
    Type computeType = getComputeType(elementType);
    int64_t rank = logitsType.getRank();
    int64_t numPositions = rank - 1;
    double smoothing = op.getLabelSmoothing().convertToDouble();
    int64_t ignoreIndex = op.getIgnoreIndex();

    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, logits);
    SmallVector<OpFoldResult> positionSizes(sizes.begin(), sizes.end() - 1);
    SmallVector<OpFoldResult> targetSizes =
        tensor::getMixedSizes(rewriter, loc, targets);
    for (auto [target, position] : llvm::zip_equal(targetSizes, positionSizes))
      (void)assertEqualSizes(rewriter, loc, target, position,
                             "seq.cross_entropy: targets and logits differ "
                             "in shape");
    Value numClasses = getValueOrCreateIndex(rewriter, loc, sizes.back());
    Value lastClass = arith::SubIOp::create(
        rewriter, loc, numClasses, createIndexConstant(rewriter, loc, 1));

    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap positionMap = getProjectionMap(ctx, rank, {rank - 1});
    SmallVector<utils::IteratorType> classReduction =
        getIteratorTypes(rank, {rank - 1});
    Value negInf =
        createInfinity(rewriter, loc, computeType, /*negative=*/true);
    Value zero = createFloatConstant(rewriter, loc, computeType, 0.0);

    // m = max_c l_c.
    Value maxInit =
        createFilledTensor(rewriter, loc, positionSizes, computeType, negInf);
    Value rowMax =
        linalg::GenericOp::create(
            rewriter, loc, maxInit.getType(), logits, maxInit,
            ArrayRef<AffineMap>{identity, positionMap}, classReduction,
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              Value l = convertScalar(b, nloc, args[0], computeType);
              linalg::YieldOp::create(
                  b, nloc,
                  arith::MaximumFOp::create(b, nloc, l, args[1]).getResult());
            })
            .getResult(0);

    // sum_c exp(l_c - m) and sum_c l_c, in one pass.
    Value sumInit =
        createFilledTensor(rewriter, loc, positionSizes, computeType, zero);
    auto sums = linalg::GenericOp::create(
        rewriter, loc, TypeRange{sumInit.getType(), sumInit.getType()},
        ValueRange{logits, rowMax}, ValueRange{sumInit, sumInit},
        ArrayRef<AffineMap>{identity, positionMap, positionMap, positionMap},
        classReduction, [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value l = convertScalar(b, nloc, args[0], computeType);
          Value shifted =
              arith::SubFOp::create(b, nloc, l, createSafeMax(b, nloc, args[1]));
          Value sumExp = arith::AddFOp::create(
              b, nloc, args[2], math::ExpOp::create(b, nloc, shifted));
          Value sumLogits = arith::AddFOp::create(b, nloc, args[3], l);
          linalg::YieldOp::create(b, nloc, ValueRange{sumExp, sumLogits});
        });
    Value sumExp = sums.getResult(0);
    Value sumLogits = sums.getResult(1);

    // Sum of the losses and number of counted positions, over all positions.
    Type countType = rewriter.getI64Type();
    Value lossInit = createFilledTensor(rewriter, loc, {}, computeType, zero);
    Value countInit = createFilledTensor(
        rewriter, loc, {}, countType,
        arith::ConstantOp::create(rewriter, loc, countType,
                                  rewriter.getI64IntegerAttr(0)));
    AffineMap positions = rewriter.getMultiDimIdentityMap(numPositions);
    AffineMap scalar = AffineMap::get(numPositions, 0, {}, ctx);
    Value numClassesFloat =
        indexToFloat(rewriter, loc, numClasses, computeType);
    auto totals = linalg::GenericOp::create(
        rewriter, loc, TypeRange{lossInit.getType(), countInit.getType()},
        ValueRange{targets, rowMax, sumExp, sumLogits},
        ValueRange{lossInit, countInit},
        ArrayRef<AffineMap>{positions, positions, positions, positions, scalar,
                            scalar},
        getIteratorTypes(numPositions,
                         llvm::to_vector(llvm::seq<int64_t>(0, numPositions))),
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value target = convertScalar(b, nloc, args[0], b.getI64Type());
          Value ignore = arith::ConstantOp::create(
              b, nloc, b.getI64Type(), b.getI64IntegerAttr(ignoreIndex));
          Value counted = arith::CmpIOp::create(
              b, nloc, arith::CmpIPredicate::ne, target, ignore);
          // An out-of-range target reads a valid class instead of arbitrary
          // memory.
          Value cls = convertScalar(b, nloc, target, b.getIndexType());
          cls = arith::MaxSIOp::create(b, nloc, cls,
                                       createIndexConstant(b, nloc, 0));
          cls = arith::MinSIOp::create(b, nloc, cls, lastClass);
          SmallVector<Value> indices;
          for (int64_t i = 0; i < numPositions; ++i)
            indices.push_back(linalg::IndexOp::create(b, nloc, i));
          indices.push_back(cls);
          Value targetLogit = convertScalar(
              b, nloc, tensor::ExtractOp::create(b, nloc, logits, indices),
              computeType);

          Value lse =
              arith::AddFOp::create(b, nloc, createSafeMax(b, nloc, args[1]),
                                    math::LogOp::create(b, nloc, args[2]));
          Value loss = arith::SubFOp::create(b, nloc, lse, targetLogit);
          if (smoothing > 0.0) {
            Value meanLogit =
                arith::DivFOp::create(b, nloc, args[3], numClassesFloat);
            Value smooth = arith::SubFOp::create(b, nloc, lse, meanLogit);
            Value keep =
                createFloatConstant(b, nloc, computeType, 1.0 - smoothing);
            Value eps = createFloatConstant(b, nloc, computeType, smoothing);
            loss = arith::AddFOp::create(
                b, nloc, arith::MulFOp::create(b, nloc, keep, loss),
                arith::MulFOp::create(b, nloc, eps, smooth));
          }
          Value zeroLoss = createFloatConstant(b, nloc, computeType, 0.0);
          Value lossSum = arith::AddFOp::create(
              b, nloc, args[4],
              arith::SelectOp::create(b, nloc, counted, loss, zeroLoss));
          Value one = arith::ExtUIOp::create(b, nloc, b.getI64Type(), counted);
          Value count = arith::AddIOp::create(b, nloc, args[5], one);
          linalg::YieldOp::create(b, nloc, ValueRange{lossSum, count});
        });

    // mean = count > 0 ? sum / count : 0.
    Value lossSum = tensor::ExtractOp::create(
        rewriter, loc, totals.getResult(0), ValueRange{});
    Value count = tensor::ExtractOp::create(rewriter, loc, totals.getResult(1),
                                            ValueRange{});
    Value any = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::sgt, count,
        arith::ConstantOp::create(rewriter, loc, countType,
                                  rewriter.getI64IntegerAttr(0)));
    Value mean =
        arith::DivFOp::create(rewriter, loc, lossSum,
                              convertScalar(rewriter, loc, count, computeType));
    mean = arith::SelectOp::create(rewriter, loc, any, mean, zero);
    Value result = tensor::FromElementsOp::create(
        rewriter, loc, op.getType(),
        convertScalar(rewriter, loc, mean, elementType));
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::seq::populateLossToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<CrossEntropyLowering>(patterns.getContext());
}
