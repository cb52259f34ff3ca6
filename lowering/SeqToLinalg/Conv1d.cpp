//===- Conv1d.cpp - lower seq.conv1d to linalg ----------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// `seq.conv1d` pads the sequence on the left by K-1 and runs
// `linalg.depthwise_conv_1d_nwc_wc` (the reference). With the target's
// vector forms, a static kernel of at most kMaxTaps becomes the tap form
// instead: elementwise generics over [batch, rows, C] whose bodies sum the
// taps unrolled,
//
//   y[b, t, c] = bias[c] + sum_k w[k, c] * x[b, t - K + 1 + k, c]
//
// with one input per tap (x shifted by k rows, a row of the transposed
// filter), so that the innermost loop runs along the channels, contiguous in
// every operand. Rows t >= K-1 read x in place; only the first K-1 rows read
// a zero-padded copy of x's first rows, in a second generic. A `seq.silu` of
// the convolution (Mamba's) is applied in the same bodies.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/IR/SeqOps.h"
#include "dialect/Seq/Support/Debug.h"
#include "lowering/SeqToLinalg/Patterns.h"
#include "lowering/SeqToLinalg/StateSpace.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#define DEBUG_TYPE "convert-seq-to-linalg"

using namespace mlir;
using namespace mlir::seq;
using namespace mlir::seq::statespace;

/// `x: [batch, L, C]` with `padding` zero rows before the sequence.
static Value padRows(OpBuilder &b, Location loc, Value x,
                     OpFoldResult padding) {
  auto xType = cast<RankedTensorType>(x.getType());
  Type elementType = xType.getElementType();
  SmallVector<int64_t> paddedShape(xType.getShape());
  std::optional<int64_t> staticPadding = getConstantIntValue(padding);
  if (ShapedType::isStatic(paddedShape[1]) && staticPadding)
    paddedShape[1] += *staticPadding;
  else
    paddedShape[1] = ShapedType::kDynamic;
  OpFoldResult zero = b.getIndexAttr(0);
  return tensor::PadOp::create(
      b, loc, RankedTensorType::get(paddedShape, elementType), x,
      {zero, padding, zero}, {zero, zero, zero},
      createFloatConstant(b, loc, elementType, 0.0));
}

/// The filter `[C, K]` transposed to `[K, C]`.
static Value transposeFilter(OpBuilder &b, Location loc, Value weight,
                             OpFoldResult channels, OpFoldResult kernel) {
  Type elementType = cast<RankedTensorType>(weight.getType()).getElementType();
  return linalg::TransposeOp::create(
             b, loc, weight,
             createEmptyTensor(b, loc, {kernel, channels}, elementType),
             ArrayRef<int64_t>{1, 0})
      .getResult()[0];
}

static bool hasConvRanks(Conv1dOp op) {
  return op.getInput().getType().getRank() == 3 &&
         op.getWeight().getType().getRank() == 2;
}

/// Taps unrolled into the tap form's body at most: Mamba's kernels have 4.
static constexpr int64_t kMaxTaps = 16;

/// Why the tap form does not apply to `op` (of the expected ranks), or an
/// empty string.
static std::string getTapFormMismatch(Conv1dOp op) {
  int64_t taps = op.getWeight().getType().getDimSize(1);
  if (ShapedType::isDynamic(taps))
    return "the kernel size is not static";
  if (taps < 1 || taps > kMaxTaps)
    return ("the kernel size " + Twine(taps) + " is not between 1 and " +
            Twine(kMaxTaps))
        .str();
  return "";
}

/// The tap form of `op` (see the file comment), followed by SiLU when `silu`.
static Value buildTapForm(PatternRewriter &rewriter, Conv1dOp op, bool silu) {
  Location loc = op.getLoc();
  Value x = op.getInput(), weight = op.getWeight(), bias = op.getBias();
  Type elementType = op.getType().getElementType();
  Type computeType = getComputeType(elementType);
  MLIRContext *ctx = rewriter.getContext();
  const int64_t taps = op.getWeight().getType().getDimSize(1);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, x);
  OpFoldResult channels = tensor::getMixedSize(rewriter, loc, weight, 0);
  Value filter = transposeFilter(rewriter, loc, weight, channels,
                                 rewriter.getIndexAttr(taps));
  OpFoldResult zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  SmallVector<OpFoldResult> unitStrides(3, one);

  // Row k of the filter, as [C].
  SmallVector<Value> rows;
  auto rowType = RankedTensorType::get(
      {op.getWeight().getType().getDimSize(0)},
      op.getWeight().getType().getElementType());
  for (int64_t k = 0; k < taps; ++k)
    rows.push_back(tensor::ExtractSliceOp::create(
        rewriter, loc, rowType, filter, {rewriter.getIndexAttr(k), zero},
        {one, channels}, {one, one}));

  // Rows [0, head) read the padded copy, rows [head, L) x in place.
  Value length = getValueOrCreateIndex(rewriter, loc, sizes[1]);
  Value kernelMinusOne = createIndexConstant(rewriter, loc, taps - 1);
  Value headValue =
      rewriter.createOrFold<arith::MinUIOp>(loc, length, kernelMinusOne);
  OpFoldResult head = getAsOpFoldResult(headValue);
  OpFoldResult rest = getAsOpFoldResult(
      rewriter.createOrFold<arith::SubIOp>(loc, length, headValue));

  // `count` rows of the output whose tap k reads `source` from row
  // `offsets[k]` on.
  auto convolve = [&](Value source, OpFoldResult count,
                      ArrayRef<OpFoldResult> offsets) {
    SmallVector<OpFoldResult> blockSizes{sizes[0], count, sizes[2]};
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (int64_t k = 0; k < taps; ++k) {
      inputs.push_back(tensor::ExtractSliceOp::create(
          rewriter, loc, source, {zero, offsets[k], zero}, blockSizes,
          unitStrides));
      maps.push_back(rewriter.getMultiDimIdentityMap(3));
    }
    AffineMap channelMap = getDimsMap(ctx, 3, {2});
    for (Value row : rows) {
      inputs.push_back(row);
      maps.push_back(channelMap);
    }
    if (bias) {
      inputs.push_back(bias);
      maps.push_back(channelMap);
    }
    maps.push_back(rewriter.getMultiDimIdentityMap(3));
    Value init = createEmptyTensor(rewriter, loc, blockSizes, elementType);
    return buildGeneric(
        rewriter, loc, inputs, init, maps, getIteratorTypes(3),
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          // The reference's order: the bias, then the taps in turn.
          Value acc = bias ? convertScalar(b, nloc, args[2 * taps], computeType)
                           : createFloatConstant(b, nloc, computeType, 0.0);
          for (int64_t k = 0; k < taps; ++k) {
            Value product = arith::MulFOp::create(
                b, nloc, convertScalar(b, nloc, args[k], computeType),
                convertScalar(b, nloc, args[taps + k], computeType));
            acc = arith::AddFOp::create(b, nloc, acc, product);
          }
          if (silu)
            acc = buildSilu(b, nloc, acc);
          return convertScalar(b, nloc, acc, elementType);
        });
  };

  // Row t >= K-1 reads x from row t - K + 1 + k, so the block from row `head`
  // on reads it from row k (and reads nothing when L < K-1: the offsets are
  // clamped to stay within x).
  SmallVector<OpFoldResult> restOffsets, headOffsets;
  for (int64_t k = 0; k < taps; ++k) {
    restOffsets.push_back(getAsOpFoldResult(rewriter.createOrFold<arith::MinUIOp>(
        loc, createIndexConstant(rewriter, loc, k), headValue)));
    headOffsets.push_back(rewriter.getIndexAttr(k));
  }

  auto insert = [&](Value block, Value dest, OpFoldResult row) {
    return tensor::InsertSliceOp::create(
               rewriter, loc, block, dest, {zero, row, zero},
               tensor::getMixedSizes(rewriter, loc, block), unitStrides)
        .getResult();
  };
  // Blocks statically empty are left out: slices of them do not verify.
  Value result = createEmptyTensor(rewriter, loc, sizes, elementType);
  if (!isConstantIntValue(rest, 0))
    result = insert(convolve(x, rest, restOffsets), result, head);
  if (!isConstantIntValue(head, 0)) {
    Value firstRows = tensor::ExtractSliceOp::create(
        rewriter, loc, x, {zero, zero, zero}, {sizes[0], head, sizes[2]},
        unitStrides);
    Value padded =
        padRows(rewriter, loc, firstRows, rewriter.getIndexAttr(taps - 1));
    result = insert(convolve(padded, head, headOffsets), result, zero);
  }
  return castToType(rewriter, loc, result, op.getType());
}

namespace {
/// `seq.conv1d`: left-pad the sequence with K-1 zeros and run
/// `linalg.depthwise_conv_1d_nwc_wc` (`[batch, L, C]` is its NWC layout), on
/// the filter transposed to `[K, C]`, accumulating onto the broadcast bias.
struct Conv1dOpLowering : public OpRewritePattern<Conv1dOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(Conv1dOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasConvRanks(op))
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
    Value padded = padRows(rewriter, loc, x, padding);
    Value filter = transposeFilter(rewriter, loc, weight, channels, kernel);

    Value init = createEmptyTensor(rewriter, loc, xSizes, computeType);
    if (bias) {
      Value wideBias = convertElementType(rewriter, loc, bias, computeType);
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
    Value result = convertElementType(rewriter, loc, conv, elementType);
    rewriter.replaceOp(op, castToType(rewriter, loc, result, op.getType()));
    return success();
  }
};

/// The tap form; preferred over the reference where it applies.
struct Conv1dTapsLowering : public OpRewritePattern<Conv1dOp> {
  Conv1dTapsLowering(MLIRContext *context, bool remarks)
      : OpRewritePattern(context, /*benefit=*/2), remarks(remarks) {}

  LogicalResult matchAndRewrite(Conv1dOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasConvRanks(op))
      return failure(); // the reference lowering reports it
    std::string mismatch = getTapFormMismatch(op);
    if (!mismatch.empty())
      return declineFastForm(op, remarks, "conv1d takes the reference lowering",
                             mismatch);
    // A seq.silu that is the only use is applied in the same bodies.
    auto silu = op->hasOneUse() ? dyn_cast<SiluOp>(*op->user_begin())
                                : SiluOp();
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] seq.conv1d at " << op.getLoc()
               << ": the tap form, " << op.getWeight().getType().getDimSize(1)
               << " taps unrolled"
               << (silu && silu.getType() == op.getType()
                       ? ", its seq.silu applied in the bodies"
                       : "")
               << "\n");
    if (silu && silu.getType() == op.getType()) {
      rewriter.replaceOp(silu, buildTapForm(rewriter, op, /*silu=*/true));
      rewriter.eraseOp(op);
      return success();
    }
    rewriter.replaceOp(op, buildTapForm(rewriter, op, /*silu=*/false));
    return success();
  }

  bool remarks;
};

} // namespace

void mlir::seq::populateConv1dToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<Conv1dOpLowering>(patterns.getContext());
}

void mlir::seq::populateConv1dTapsToLinalgPatterns(RewritePatternSet &patterns,
                                                   bool remarks) {
  patterns.add<Conv1dTapsLowering>(patterns.getContext(), remarks);
}
