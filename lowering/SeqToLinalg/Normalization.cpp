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
// With `row-forms` (the CPU at -O2), f32 ops over their last dimension take
// row-blocked forms instead, preferred where they apply: the input collapsed
// to [rows, d], an `scf.forall` over blocks of a few rows (16 KiB of input,
// 1 to 16 rows), each block running the same chain on its slices, so that
// the block is read from memory once and its later passes hit L1. Softmax then
// writes exp(x - max) into the output block and scales it there by the
// reciprocal of the row sum (the reference recomputes the exp and divides).
// The intermediates are per-row vectors of the block's size.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/Support/Debug.h"
#include "lowering/SeqToLinalg/Patterns.h"
#include "lowering/SeqToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#define DEBUG_TYPE "convert-seq-to-linalg"

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
  /// The result is written into `init` when given (a slice of the output in
  /// the row-blocked forms), a new tensor otherwise.
  Value normalize(ValueRange rowInputs, ValueRange featureInputs,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body,
                  Value init = {}) {
    if (!init)
      init = createEmptyTensor(b, loc, sizes, elementType);
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

/// Layer norm of `input` over its last dimension (the op's input, or a block
/// of its rows), into `init` when given.
static Value buildLayerNorm(OpBuilder &b, Location loc, LayerNormOp op,
                            Value input, Value init = {}) {
  RowNormalization norm(b, loc, input);
  Value gamma = op.getGamma();
  Value beta = op.getBeta();
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
  return norm.normalize(
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
      },
      init);
}

/// RMS norm of `input` over its last dimension, into `init` when given.
static Value buildRMSNorm(OpBuilder &b, Location loc, RMSNormOp op,
                          Value input, Value init = {}) {
  RowNormalization norm(b, loc, input);
  Value gamma = op.getGamma();
  Value meanSquare =
      norm.rowMean({}, [](OpBuilder &b, Location loc, ValueRange args) {
        return arith::MulFOp::create(b, loc, args[0], args[0]).getResult();
      });
  Type computeType = norm.computeType;
  double eps = op.getEps().convertToDouble();
  SmallVector<Value> params;
  if (gamma)
    params.push_back(gamma);
  return norm.normalize(
      meanSquare, params,
      [&](OpBuilder &b, Location nloc, ValueRange args) {
        Value epsValue = createFloatConstant(b, nloc, computeType, eps);
        Value rms = math::RsqrtOp::create(
            b, nloc, arith::AddFOp::create(b, nloc, args[1], epsValue));
        Value y = arith::MulFOp::create(b, nloc, args[0], rms);
        if (gamma)
          y = arith::MulFOp::create(b, nloc, y, args[2]);
        return y;
      },
      init);
}

struct LayerNormLowering : public OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpFoldResult features = tensor::getMixedSizes(rewriter, loc,
                                                  op.getInput()).back();
    assertFeatureSize(rewriter, loc, op.getGamma(), features,
                      "seq.layer_norm: gamma size differs from the features");
    assertFeatureSize(rewriter, loc, op.getBeta(), features,
                      "seq.layer_norm: beta size differs from the features");
    Value result = buildLayerNorm(rewriter, loc, op, op.getInput());
    rewriter.replaceOp(op, castToType(rewriter, loc, result, op.getType()));
    return success();
  }
};

struct RMSNormLowering : public OpRewritePattern<RMSNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RMSNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpFoldResult features = tensor::getMixedSizes(rewriter, loc,
                                                  op.getInput()).back();
    assertFeatureSize(rewriter, loc, op.getGamma(), features,
                      "seq.rms_norm: gamma size differs from the features");
    Value result = buildRMSNorm(rewriter, loc, op, op.getInput());
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

//===----------------------------------------------------------------------===//
// Row-blocked forms (row-forms)
//===----------------------------------------------------------------------===//

/// f32 input bytes per block of rows, and the most rows in a block: 16 KiB
/// of a block's input and as much of its output fit the 32 KiB L1 data
/// cache of the Zen cores (48 KiB on Intel's), so that the passes after the
/// first (layer norm's variance and normalization, softmax's exps and
/// scaling) read the block from L1, not L2; at most 16 rows keep blocks
/// numerous enough to share among the cores. Against 64 KiB blocks on a Zen
/// 4 (2 threads, 4096 rows of 1024): layer norm 1.41x and RMS norm 1.26x
/// faster, softmax over 2048 features unchanged (its first pass streams
/// from memory either way).
constexpr int64_t kRowBlockBytes = 16 * 1024;
constexpr int64_t kMaxRowsPerBlock = 16;

/// Why the row-blocked form does not apply to an op normalizing `input`
/// along `axis` (the last dimension for the norms); empty when it does.
static std::string getRowBlockMismatch(Value input, int64_t axis) {
  auto type = cast<RankedTensorType>(input.getType());
  std::string why;
  llvm::raw_string_ostream os(why);
  if (!type.getElementType().isF32())
    os << "the element type is " << type.getElementType()
       << ", not f32 (the row kernels are f32)";
  else if (axis != type.getRank() - 1)
    os << "the axis " << axis << " is not the last of rank "
       << type.getRank() << " (its rows are not contiguous)";
  return why;
}

/// `input` collapsed to [rows, d] and cut into blocks of rows by an
/// `scf.forall`; `blockBody(b, loc, xBlock, outBlock)` computes a block's
/// [n, d] result into `outBlock`, its slice of the output. Returns the
/// result in the shape of `input`.
static Value buildRowBlocks(
    OpBuilder &b, Location loc, Value input,
    function_ref<Value(OpBuilder &, Location, Value, Value)> blockBody) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, input);
  SmallVector<OpFoldResult> leading(sizes.begin(), sizes.end() - 1);
  Value rows2d = collapseLeadingDims(b, loc, input, 1);
  SmallVector<OpFoldResult> sizes2d = tensor::getMixedSizes(b, loc, rows2d);
  Value rows = getValueOrCreateIndex(b, loc, sizes2d[0]);
  OpFoldResult features = sizes2d[1];

  // Rows per block: kRowBlockBytes of input, 1 to kMaxRowsPerBlock rows.
  int64_t elementsPerBlock = kRowBlockBytes / 4;
  Value blockRows;
  if (std::optional<int64_t> d = getConstantIntValue(features)) {
    int64_t n = std::clamp<int64_t>(elementsPerBlock / std::max<int64_t>(*d, 1),
                                    1, kMaxRowsPerBlock);
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "]   blocks of " << n
                            << " rows of " << *d << " features\n");
    blockRows = createIndexConstant(b, loc, n);
  } else {
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "]   rows per block at run "
               << "time: " << elementsPerBlock << " / features, 1 to "
               << kMaxRowsPerBlock << "\n");
    Value width = arith::MaxUIOp::create(b, loc,
                                     getValueOrCreateIndex(b, loc, features),
                                     createIndexConstant(b, loc, 1));
    Value n = arith::DivUIOp::create(
        b, loc, createIndexConstant(b, loc, elementsPerBlock), width);
    n = arith::MinUIOp::create(b, loc, n,
                               createIndexConstant(b, loc, kMaxRowsPerBlock));
    blockRows =
        arith::MaxUIOp::create(b, loc, n, createIndexConstant(b, loc, 1));
  }
  Value blocks = arith::CeilDivUIOp::create(b, loc, rows, blockRows);

  Value init = createEmptyTensor(b, loc, sizes2d, type.getElementType());
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{blocks}, ValueRange{init}, std::nullopt,
      [&](OpBuilder &fb, Location floc, ValueRange args) {
        Value r0 = arith::MulIOp::create(fb, floc, args[0], blockRows);
        Value n = arith::MinUIOp::create(
            fb, floc, blockRows, arith::SubIOp::create(fb, floc, rows, r0));
        SmallVector<OpFoldResult> offsets = {r0, fb.getIndexAttr(0)};
        SmallVector<OpFoldResult> blockSizes = {n, features};
        SmallVector<OpFoldResult> strides(2, fb.getIndexAttr(1));
        Value xBlock = tensor::ExtractSliceOp::create(
            fb, floc, rows2d, offsets, blockSizes, strides);
        Value outBlock = tensor::ExtractSliceOp::create(
            fb, floc, args[1], offsets, blockSizes, strides);
        Value y = blockBody(fb, floc, xBlock, outBlock);
        auto inParallel = scf::InParallelOp::create(fb, floc);
        OpBuilder::InsertionGuard guard(fb);
        fb.setInsertionPointToStart(inParallel.getBody());
        tensor::ParallelInsertSliceOp::create(fb, floc, y, args[1], offsets,
                                              blockSizes, strides);
      });
  return expandLeadingDim(b, loc, forall.getResult(0), leading);
}

/// The safe softmax of a block [n, d] of f32 rows along d, into `outBlock`:
/// m = max x; out = exp(x - m) (m = 0 on rows of only -inf, whose exps are
/// then 0); s = sum out; out = s > 0 ? out * (1 / s) : 0.
static Value buildSoftmaxBlock(OpBuilder &b, Location loc, Value xBlock,
                               Value outBlock) {
  // The exps and their row sums in one pass over the row, the exps into the
  // output block.
  Value rowMax = buildShiftMax(b, loc, xBlock, /*axis=*/1);
  auto [exps, rowSum] = buildExpsAndSums(b, loc, xBlock, rowMax, outBlock,
                                         /*axis=*/1);
  // One division per row; zeros where the sum is not positive (rows of
  // only -inf, NaN rows), as the reference's.
  return buildRowScale(b, loc, exps, rowSum, exps, /*axis=*/1);
}

/// The row-blocked forms, preferred over the reference lowerings where they
/// apply. With `remarks`, an op they do not apply to says why.
template <typename OpTy>
struct RowBlockLowering : public OpRewritePattern<OpTy> {
  RowBlockLowering(MLIRContext *context, bool remarks)
      : OpRewritePattern<OpTy>(context, /*benefit=*/2), remarks(remarks) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    if (type.getRank() == 0)
      return failure(); // the reference lowering reports it
    int64_t axis = type.getRank() - 1;
    if constexpr (std::is_same_v<OpTy, SoftmaxOp>) {
      axis = op.getAxis();
      if (axis < 0)
        axis += type.getRank();
    }
    std::string mismatch = getRowBlockMismatch(input, axis);
    if (!mismatch.empty())
      return declineFastForm(op, remarks,
                             op->getName().stripDialect() +
                                 " takes the reference lowering",
                             mismatch);

    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] " << op->getName() << " at " << loc
               << ": the row-block form over axis " << axis << "\n");
    OpFoldResult features = tensor::getMixedSizes(rewriter, loc, input).back();
    Value result;
    if constexpr (std::is_same_v<OpTy, SoftmaxOp>) {
      result = buildRowBlocks(rewriter, loc, input, buildSoftmaxBlock);
    } else if constexpr (std::is_same_v<OpTy, LayerNormOp>) {
      assertFeatureSize(rewriter, loc, op.getGamma(), features,
                        "seq.layer_norm: gamma size differs from the features");
      assertFeatureSize(rewriter, loc, op.getBeta(), features,
                        "seq.layer_norm: beta size differs from the features");
      result = buildRowBlocks(
          rewriter, loc, input,
          [&](OpBuilder &b, Location bloc, Value x, Value out) {
            return buildLayerNorm(b, bloc, op, x, out);
          });
    } else {
      assertFeatureSize(rewriter, loc, op.getGamma(), features,
                        "seq.rms_norm: gamma size differs from the features");
      result = buildRowBlocks(
          rewriter, loc, input,
          [&](OpBuilder &b, Location bloc, Value x, Value out) {
            return buildRMSNorm(b, bloc, op, x, out);
          });
    }
    rewriter.replaceOp(op, castToType(rewriter, loc, result, op.getType()));
    return success();
  }

  bool remarks;
};

} // namespace

void mlir::seq::populateNormalizationToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LayerNormLowering, RMSNormLowering, SoftmaxLowering>(
      patterns.getContext());
}

void mlir::seq::populateRowBlockNormalizationToLinalgPatterns(
    RewritePatternSet &patterns, bool remarks) {
  patterns.add<RowBlockLowering<LayerNormOp>, RowBlockLowering<RMSNormOp>,
               RowBlockLowering<SoftmaxOp>>(patterns.getContext(), remarks);
}
