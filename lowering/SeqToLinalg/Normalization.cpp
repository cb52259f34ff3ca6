//===- Normalization.cpp - lower layer/RMS norm and softmax to linalg -----===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Normalizations over the last dimension, each a short chain of linalg
// generics on the full-rank input (rows are the leading dimensions, the
// last dimension is reduced), computed in f32 for narrower floats:
//
//   layer_norm: mean = sum(x) / d; var = sum((x - mean)^2) / d (two passes,
//               biased, as torch); y = (x - mean) * rsqrt(var + eps) * g + b
//   rms_norm:   ms = sum(x^2) / d; y = x * rsqrt(ms + eps) * g
//   softmax:    the safe softmax of Utils.h along the op's axis
//
// The two-pass variance avoids the cancellation of E[x^2] - E[x]^2 on rows
// with a large mean.
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

/// The row structure of a normalization over the last dimension of `input`:
/// sizes, maps and the reduction helper shared by layer and RMS norm.
struct RowNormalization {
  RowNormalization(OpBuilder &b, Location loc, Value input)
      : b(b), loc(loc), input(input) {
    auto type = cast<RankedTensorType>(input.getType());
    rank = type.getRank();
    elementType = type.getElementType();
    computeType = getComputeType(elementType);
    sizes = tensor::getMixedSizes(b, loc, input);
    rowSizes.assign(sizes.begin(), sizes.end() - 1);
    identity = b.getMultiDimIdentityMap(rank);
    rowMap = getProjectionMap(b.getContext(), rank, {rank - 1});
    featureMap = AffineMap::get(rank, 0, b.getAffineDimExpr(rank - 1));
    Value width = getValueOrCreateIndex(b, loc, sizes.back());
    featureCount = indexToFloat(b, loc, width, computeType);
  }

  /// sum over the last dimension of `term(x, rowValues...)`, divided by the
  /// number of features: a mean per row, in the compute type. `rowInputs`
  /// are per-row tensors passed to `term` after `x`.
  Value rowMean(ValueRange rowInputs,
                function_ref<Value(OpBuilder &, Location, ValueRange)> term) {
    Value zero = createFloatConstant(b, loc, computeType, 0.0);
    Value init = createFilledTensor(b, loc, rowSizes, computeType, zero);
    SmallVector<Value> inputs = {input};
    llvm::append_range(inputs, rowInputs);
    SmallVector<AffineMap> maps = {identity};
    maps.append(rowInputs.size(), rowMap);
    maps.push_back(rowMap);
    Value sum =
        linalg::GenericOp::create(
            b, loc, init.getType(), inputs, init, maps,
            getIteratorTypes(rank, {rank - 1}),
            [&](OpBuilder &nb, Location nloc, ValueRange args) {
              SmallVector<Value> operands = {
                  convertScalar(nb, nloc, args[0], computeType)};
              llvm::append_range(operands, args.drop_front().drop_back());
              Value t = term(nb, nloc, operands);
              Value acc = arith::AddFOp::create(nb, nloc, t, args.back());
              linalg::YieldOp::create(nb, nloc, acc);
            })
            .getResult(0);
    // Divide once per row.
    int64_t rowRank = rank - 1;
    AffineMap rowIdentity = b.getMultiDimIdentityMap(rowRank);
    Value meanInit = createEmptyTensor(b, loc, rowSizes, computeType);
    Value count = featureCount;
    return linalg::GenericOp::create(
               b, loc, meanInit.getType(), sum, meanInit,
               ArrayRef<AffineMap>{rowIdentity, rowIdentity},
               getIteratorTypes(rowRank),
               [&](OpBuilder &nb, Location nloc, ValueRange args) {
                 Value mean = arith::DivFOp::create(nb, nloc, args[0], count);
                 linalg::YieldOp::create(nb, nloc, mean);
               })
        .getResult(0);
  }

  /// The final elementwise pass over `input` with per-row tensors
  /// `rowInputs` and per-feature tensors `featureInputs` (the affine
  /// parameters, in the element type); `body` receives x (compute type),
  /// the row values, then the feature values (compute type).
  Value normalize(ValueRange rowInputs, ValueRange featureInputs,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
    Value init = createEmptyTensor(b, loc, sizes, elementType);
    SmallVector<Value> inputs = {input};
    llvm::append_range(inputs, rowInputs);
    llvm::append_range(inputs, featureInputs);
    SmallVector<AffineMap> maps = {identity};
    maps.append(rowInputs.size(), rowMap);
    maps.append(featureInputs.size(), featureMap);
    maps.push_back(identity);
    return linalg::GenericOp::create(
               b, loc, init.getType(), inputs, init, maps,
               getIteratorTypes(rank),
               [&](OpBuilder &nb, Location nloc, ValueRange args) {
                 SmallVector<Value> operands;
                 for (Value arg : args.drop_back())
                   operands.push_back(
                       convertScalar(nb, nloc, arg, computeType));
                 Value y = body(nb, nloc, operands);
                 linalg::YieldOp::create(
                     nb, nloc, convertScalar(nb, nloc, y, elementType));
               })
        .getResult(0);
  }

  OpBuilder &b;
  Location loc;
  Value input;
  int64_t rank;
  Type elementType, computeType;
  SmallVector<OpFoldResult> sizes, rowSizes;
  AffineMap identity, rowMap, featureMap;
  Value featureCount;
};

/// Checks at run time that the affine parameters match the feature size
/// (the verifier checked static sizes).
static void assertFeatureSize(OpBuilder &b, Location loc, Value param,
                              OpFoldResult features, StringRef message) {
  if (!param)
    return;
  (void)assertEqualSizes(b, loc, tensor::getMixedSize(b, loc, param, 0),
                         features, message);
}

struct LayerNormLowering : public OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RowNormalization norm(rewriter, loc, op.getInput());
    Value gamma = op.getGamma();
    Value beta = op.getBeta();
    assertFeatureSize(rewriter, loc, gamma, norm.sizes.back(),
                      "seq.layer_norm: gamma size differs from the features");
    assertFeatureSize(rewriter, loc, beta, norm.sizes.back(),
                      "seq.layer_norm: beta size differs from the features");

    Value mean = norm.rowMean(
        {}, [](OpBuilder &, Location, ValueRange args) { return args[0]; });
    Value variance =
        norm.rowMean(mean, [](OpBuilder &b, Location loc, ValueRange args) {
          Value centered = arith::SubFOp::create(b, loc, args[0], args[1]);
          return arith::MulFOp::create(b, loc, centered, centered).getResult();
        });

    Type computeType = norm.computeType;
    double eps = op.getEps().convertToDouble();
    SmallVector<Value> params;
    if (gamma)
      params.push_back(gamma);
    if (beta)
      params.push_back(beta);
    Value result = norm.normalize(
        {mean, variance}, params,
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value epsValue = createFloatConstant(b, nloc, computeType, eps);
          Value centered = arith::SubFOp::create(b, nloc, args[0], args[1]);
          Value rstd = math::RsqrtOp::create(
              b, nloc, arith::AddFOp::create(b, nloc, args[2], epsValue));
          Value y = arith::MulFOp::create(b, nloc, centered, rstd);
          if (gamma)
            y = arith::MulFOp::create(b, nloc, y, args[3]);
          if (beta)
            y = arith::AddFOp::create(b, nloc, y, args[4]);
          return y;
        });
    rewriter.replaceOp(op, castToType(rewriter, loc, result, op.getType()));
    return success();
  }
};

struct RMSNormLowering : public OpRewritePattern<RMSNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RMSNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RowNormalization norm(rewriter, loc, op.getInput());
    Value gamma = op.getGamma();
    assertFeatureSize(rewriter, loc, gamma, norm.sizes.back(),
                      "seq.rms_norm: gamma size differs from the features");

    Value meanSquare =
        norm.rowMean({}, [](OpBuilder &b, Location loc, ValueRange args) {
          return arith::MulFOp::create(b, loc, args[0], args[0]).getResult();
        });
    Type computeType = norm.computeType;
    double eps = op.getEps().convertToDouble();
    SmallVector<Value> params;
    if (gamma)
      params.push_back(gamma);
    Value result = norm.normalize(
        meanSquare, params, [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value epsValue = createFloatConstant(b, nloc, computeType, eps);
          Value rms = math::RsqrtOp::create(
              b, nloc, arith::AddFOp::create(b, nloc, args[1], epsValue));
          Value y = arith::MulFOp::create(b, nloc, args[0], rms);
          if (gamma)
            y = arith::MulFOp::create(b, nloc, y, args[2]);
          return y;
        });
    rewriter.replaceOp(op, castToType(rewriter, loc, result, op.getType()));
    return success();
  }
};

struct SoftmaxLowering : public OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    int64_t rank = op.getType().getRank();
    int64_t axis = op.getAxis();
    if (axis < 0)
      axis += rank;
    if (rank == 0)
      return emitLoweringError(rewriter, op, "expected a ranked input");
    Value result = buildSafeSoftmax(rewriter, op.getLoc(), op.getInput(), axis);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::seq::populateNormalizationToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LayerNormLowering, RMSNormLowering, SoftmaxLowering>(
      patterns.getContext());
}
