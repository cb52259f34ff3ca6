//===- PositionEncoding.cpp - lower position encodings to linalg ----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Position encodings are functions of loop indices: each is one
// `linalg.generic` whose body reads the position (and feature) from
// `linalg.index`. The formulas follow the PyTorch reference implementations
// operation by operation, in f32, so that the results agree to rounding:
//
//   sinusoidal: div = exp(2i * (-ln(base) / d)); pe = sin/cos(p * div)
//               (the Annotated Transformer's formulation)
//   rope:       inv_freq = 1 / theta^(2i / r); angle = p * inv_freq;
//               y = x cos + rotate_half(x) sin (GPT-NeoX / LLaMA)
//
// With the target's vector forms, rope is tabulated instead (see
// TabulatedRopeLowering): cos and sin once per position and pair, then
// elementwise generics along the features, which vectorize.
//
// ALiBi slopes are constants (the op folds; this handles what survives).
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/Support/Debug.h"
#include "lowering/SeqToLinalg/Patterns.h"
#include "lowering/SeqToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

#define DEBUG_TYPE "convert-seq-to-linalg"

using namespace mlir;
using namespace mlir::seq;

namespace {

/// pe[p, c] = sin(p * div[c / 2]) for even c, cos(...) for odd c, with
/// div[i] = exp(2i * (-ln(base) / d)).
struct SinusoidalPELowering : public OpRewritePattern<SinusoidalPEOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SinusoidalPEOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type elementType = type.getElementType();
    Type computeType = getComputeType(elementType);
    int64_t features = type.getDimSize(1);
    double base = op.getBase().convertToDouble();

    OpFoldResult length = op.getLength();
    if (ShapedType::isStatic(type.getDimSize(0))) {
      (void)assertEqualSizes(
          rewriter, loc, length, rewriter.getIndexAttr(type.getDimSize(0)),
          "seq.sinusoidal_pe: length differs from the result type");
      length = rewriter.getIndexAttr(type.getDimSize(0));
    }
    Value init = createEmptyTensor(
        rewriter, loc, {length, rewriter.getIndexAttr(features)}, elementType);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, ValueRange{}, init,
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(2)},
        getIteratorTypes(2), [&](OpBuilder &b, Location nloc, ValueRange) {
          Value p = linalg::IndexOp::create(b, nloc, 0);
          Value c = linalg::IndexOp::create(b, nloc, 1);
          Value one = createIndexConstant(b, nloc, 1);
          Value parity = arith::AndIOp::create(b, nloc, c, one);
          Value even = arith::SubIOp::create(b, nloc, c, parity); // 2i
          Value logScale = createFloatConstant(
              b, nloc, computeType,
              -std::log(base) / static_cast<double>(features));
          Value div = math::ExpOp::create(
              b, nloc,
              arith::MulFOp::create(
                  b, nloc, indexToFloat(b, nloc, even, computeType), logScale));
          Value angle = arith::MulFOp::create(
              b, nloc, indexToFloat(b, nloc, p, computeType), div);
          Value sin = math::SinOp::create(b, nloc, angle);
          Value cos = math::CosOp::create(b, nloc, angle);
          Value isEven =
              arith::CmpIOp::create(b, nloc, arith::CmpIPredicate::eq, parity,
                                    createIndexConstant(b, nloc, 0));
          Value pe = arith::SelectOp::create(b, nloc, isEven, sin, cos);
          linalg::YieldOp::create(b, nloc,
                                  convertScalar(b, nloc, pe, elementType));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// The rotary dims r of `op` (d when absent), checked at run time where the
/// head dim is dynamic.
static Value getRotaryDims(PatternRewriter &rewriter, RopeOp op,
                           ArrayRef<OpFoldResult> sizes) {
  Location loc = op.getLoc();
  bool dynamicDim = ShapedType::isDynamic(op.getType().getDimSize(3));
  if (std::optional<int64_t> rotaryDims = op.getRotaryDims()) {
    Value rotary = createIndexConstant(rewriter, loc, *rotaryDims);
    if (dynamicDim) {
      Value fits = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ule, rotary,
          getValueOrCreateIndex(rewriter, loc, sizes[3]));
      createRuntimeAssert(rewriter, loc, fits,
                          "seq.rope: rotary_dims exceeds the head dim");
    }
    return rotary;
  }
  Value rotary = getValueOrCreateIndex(rewriter, loc, sizes[3]);
  if (dynamicDim) {
    Value rem = arith::RemUIOp::create(rewriter, loc, rotary,
                                       createIndexConstant(rewriter, loc, 2));
    Value even =
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, rem,
                              createIndexConstant(rewriter, loc, 0));
    createRuntimeAssert(rewriter, loc, even,
                        "seq.rope: the head dim must be even");
  }
  return rotary;
}

/// The angle p / theta^(2i / r) of position `p` and pair `i` (index values),
/// as the reference computes it.
static Value buildRopeAngle(OpBuilder &b, Location loc, Value p, Value pair,
                            Value rotary, double theta, Type computeType) {
  Value twoI = arith::AddIOp::create(b, loc, pair, pair);
  Value exponent =
      arith::DivFOp::create(b, loc, indexToFloat(b, loc, twoI, computeType),
                            indexToFloat(b, loc, rotary, computeType));
  Value invFreq = arith::DivFOp::create(
      b, loc, createFloatConstant(b, loc, computeType, 1.0),
      math::PowFOp::create(b, loc,
                           createFloatConstant(b, loc, computeType, theta),
                           exponent));
  return arith::MulFOp::create(b, loc, indexToFloat(b, loc, p, computeType),
                               invFreq);
}

/// One generic over x: feature c < r/2 becomes x[c] cos - x[c + r/2] sin,
/// feature r/2 <= c < r becomes x[c] cos + x[c - r/2] sin, where the angle
/// of position p and pair i = c mod r/2 is p / theta^(2i / r); features at
/// or above r pass through. The partner element is read with
/// `tensor.extract`.
struct RopeLowering : public OpRewritePattern<RopeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RopeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    RankedTensorType type = op.getType();
    Type elementType = type.getElementType();
    Type computeType = getComputeType(elementType);
    double theta = op.getTheta().convertToDouble();

    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, input);
    Value rotary = getRotaryDims(rewriter, op, sizes);
    Value half = arith::DivUIOp::create(rewriter, loc, rotary,
                                        createIndexConstant(rewriter, loc, 2));

    Value offsets = op.getOffsets();
    if (offsets)
      (void)assertEqualSizes(
          rewriter, loc, tensor::getMixedSize(rewriter, loc, offsets, 0),
          sizes[0], "seq.rope: offsets size differs from the batch");
    Value init = createEmptyTensor(rewriter, loc, sizes, elementType);
    AffineMap identity = rewriter.getMultiDimIdentityMap(4);
    SmallVector<Value> inputs = {input};
    SmallVector<AffineMap> maps = {identity};
    if (offsets) {
      inputs.push_back(offsets);
      maps.push_back(getDimsMap(rewriter.getContext(), 4, {0}));
    }
    maps.push_back(identity);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, init.getType(), inputs, init, maps, getIteratorTypes(4),
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value batch = linalg::IndexOp::create(b, nloc, 0);
          Value head = linalg::IndexOp::create(b, nloc, 1);
          Value p = linalg::IndexOp::create(b, nloc, 2);
          Value c = linalg::IndexOp::create(b, nloc, 3);
          auto cmp = [&](arith::CmpIPredicate pred, Value lhs, Value rhs) {
            return arith::CmpIOp::create(b, nloc, pred, lhs, rhs).getResult();
          };
          Value rotated = cmp(arith::CmpIPredicate::ult, c, rotary);
          Value firstHalf = cmp(arith::CmpIPredicate::ult, c, half);
          // Pair index i and partner feature; features that pass through
          // read themselves, so that every index stays in bounds.
          Value cMinusHalf = arith::SubIOp::create(b, nloc, c, half);
          Value pair =
              arith::SelectOp::create(b, nloc, firstHalf, c, cMinusHalf);
          Value partner = arith::SelectOp::create(
              b, nloc, firstHalf, arith::AddIOp::create(b, nloc, c, half),
              cMinusHalf);
          partner = arith::SelectOp::create(b, nloc, rotated, partner, c);

          // The absolute position of row p.
          Value position =
              offsets ? arith::AddIOp::create(
                            b, nloc, p,
                            convertScalar(b, nloc, args[1], b.getIndexType()))
                            .getResult()
                      : p;
          Value angle = buildRopeAngle(b, nloc, position, pair, rotary, theta,
                                       computeType);
          Value cos = math::CosOp::create(b, nloc, angle);
          Value sin = math::SinOp::create(b, nloc, angle);

          Value x = convertScalar(b, nloc, args[0], computeType);
          Value other = convertScalar(
              b, nloc,
              tensor::ExtractOp::create(b, nloc, input,
                                        ValueRange{batch, head, p, partner}),
              computeType);
          // rotate_half(x) = [-x2, x1].
          Value signedOther = arith::SelectOp::create(
              b, nloc, firstHalf, arith::NegFOp::create(b, nloc, other), other);
          Value y = arith::AddFOp::create(
              b, nloc, arith::MulFOp::create(b, nloc, x, cos),
              arith::MulFOp::create(b, nloc, signedOther, sin));
          y = arith::SelectOp::create(b, nloc, rotated, y, x);
          linalg::YieldOp::create(b, nloc,
                                  convertScalar(b, nloc, y, elementType));
        });
    rewriter.replaceOp(
        op, castToType(rewriter, loc, generic.getResult(0), op.getType()));
    return success();
  }
};

/// The tabulated form: cos and sin of every (position, pair) computed once
/// into [n, r/2] tables, shared by the heads and the batch (with offsets,
/// [b, n, r/2] tables of the absolute positions, shared by the heads), then
/// each half
/// of the rotary features written by its own elementwise generic over
/// [b, h, n, r/2] whose innermost loop runs along the features of x, the
/// tables and y alike:
///
///   y[..., :r/2]  = x1 cos - x2 sin      (x1 = x[..., :r/2])
///   y[..., r/2:r] = x2 cos + x1 sin      (x2 = x[..., r/2:r])
///   y[..., r:]    = x[..., r:]
///
/// The same arithmetic as the reference, one element at a time. Each table
/// has two readers, so elementwise fusion does not fold it back into them.
struct TabulatedRopeLowering : public OpRewritePattern<RopeOp> {
  TabulatedRopeLowering(MLIRContext *context)
      : OpRewritePattern(context, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(RopeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    Type elementType = op.getType().getElementType();
    Type computeType = getComputeType(elementType);
    double theta = op.getTheta().convertToDouble();
    MLIRContext *ctx = rewriter.getContext();
    Value offsets = op.getOffsets();
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] seq.rope at " << loc
                            << ": cos and sin tabulated per "
                            << (offsets ? "(batch row, position, pair)"
                                        : "(position, pair)")
                            << " in " << computeType << "\n");

    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, input);
    Value rotary = getRotaryDims(rewriter, op, sizes);
    OpFoldResult half = getAsOpFoldResult(rewriter.createOrFold<arith::DivUIOp>(
        loc, rotary, createIndexConstant(rewriter, loc, 2)));
    OpFoldResult rotarySize = getAsOpFoldResult(rotary);

    // Positions and inverse frequencies, then the [n, r/2] tables.
    auto index = [&](OpFoldResult size, auto body) {
      Value init = createEmptyTensor(rewriter, loc, size, computeType);
      return buildGeneric(rewriter, loc, {}, init,
                          rewriter.getMultiDimIdentityMap(1),
                          getIteratorTypes(1),
                          [&](OpBuilder &b, Location nloc, ValueRange) {
                            return body(b, nloc,
                                        linalg::IndexOp::create(b, nloc, 0));
                          });
    };
    Value positions;
    if (offsets) {
      // [b, n]: offsets[b] + p.
      (void)assertEqualSizes(
          rewriter, loc, tensor::getMixedSize(rewriter, loc, offsets, 0),
          sizes[0], "seq.rope: offsets size differs from the batch");
      Value init =
          createEmptyTensor(rewriter, loc, {sizes[0], sizes[2]}, computeType);
      positions = buildGeneric(
          rewriter, loc, offsets, init,
          {getDimsMap(ctx, 2, {0}), rewriter.getMultiDimIdentityMap(2)},
          getIteratorTypes(2),
          [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
            Value p = arith::AddIOp::create(
                b, nloc, linalg::IndexOp::create(b, nloc, 1),
                convertScalar(b, nloc, args[0], b.getIndexType()));
            return indexToFloat(b, nloc, p, computeType);
          });
    } else {
      positions = index(sizes[2], [&](OpBuilder &b, Location nloc, Value p) {
        return indexToFloat(b, nloc, p, computeType);
      });
    }
    // buildRopeAngle at p = 1 is the inverse frequency, exactly.
    Value invFreq = index(half, [&](OpBuilder &b, Location nloc, Value i) {
      return buildRopeAngle(b, nloc, createIndexConstant(b, nloc, 1), i,
                            rotary, theta, computeType);
    });
    // Tables [n, r/2], or [b, n, r/2] with offsets.
    int64_t tableRank = offsets ? 3 : 2;
    auto table = [&](bool isCos) {
      SmallVector<OpFoldResult> tableSizes;
      if (offsets)
        tableSizes.push_back(sizes[0]);
      tableSizes.append({sizes[2], half});
      Value init = createEmptyTensor(rewriter, loc, tableSizes, computeType);
      SmallVector<int64_t> positionDims = {tableRank - 2};
      if (offsets)
        positionDims.insert(positionDims.begin(), 0);
      return buildGeneric(
          rewriter, loc, {positions, invFreq}, init,
          {getDimsMap(ctx, tableRank, positionDims),
           getDimsMap(ctx, tableRank, {tableRank - 1}),
           rewriter.getMultiDimIdentityMap(tableRank)},
          getIteratorTypes(tableRank),
          [&](OpBuilder &b, Location nloc, ValueRange args) -> Value {
            Value angle = arith::MulFOp::create(b, nloc, args[0], args[1]);
            if (isCos)
              return math::CosOp::create(b, nloc, angle);
            return math::SinOp::create(b, nloc, angle);
          });
    };
    Value cos = table(/*isCos=*/true);
    Value sin = table(/*isCos=*/false);

    SmallVector<OpFoldResult> halfSizes{sizes[0], sizes[1], sizes[2], half};
    auto slice = [&](Value source, OpFoldResult offset, OpFoldResult size) {
      SmallVector<OpFoldResult> offsets(3, rewriter.getIndexAttr(0));
      offsets.push_back(offset);
      SmallVector<OpFoldResult> sliceSizes(sizes.begin(), sizes.end() - 1);
      sliceSizes.push_back(size);
      return tensor::ExtractSliceOp::create(
          rewriter, loc, source, offsets, sliceSizes,
          SmallVector<OpFoldResult>(4, rewriter.getIndexAttr(1)));
    };
    auto insert = [&](Value source, Value dest, OpFoldResult offset) {
      SmallVector<OpFoldResult> offsets(3, rewriter.getIndexAttr(0));
      offsets.push_back(offset);
      return tensor::InsertSliceOp::create(
                 rewriter, loc, source, dest, offsets,
                 tensor::getMixedSizes(rewriter, loc, source),
                 SmallVector<OpFoldResult>(4, rewriter.getIndexAttr(1)))
          .getResult();
    };
    Value x1 = slice(input, rewriter.getIndexAttr(0), half);
    Value x2 = slice(input, half, half);
    AffineMap identity = rewriter.getMultiDimIdentityMap(4);
    AffineMap tableMap = offsets ? getDimsMap(ctx, 4, {0, 2, 3})
                                 : getDimsMap(ctx, 4, {2, 3});
    // y = a cos + sign * b sin, on one half.
    auto rotate = [&](Value a, Value b, bool subtract) {
      Value init = createEmptyTensor(rewriter, loc, halfSizes, elementType);
      return buildGeneric(
          rewriter, loc, {a, b, cos, sin}, init,
          {identity, identity, tableMap, tableMap, identity},
          getIteratorTypes(4), [&](OpBuilder &nb, Location nloc,
                                   ValueRange args) {
            Value aCos = arith::MulFOp::create(
                nb, nloc, convertScalar(nb, nloc, args[0], computeType),
                args[2]);
            Value bSin = arith::MulFOp::create(
                nb, nloc, convertScalar(nb, nloc, args[1], computeType),
                args[3]);
            Value y = subtract ? arith::SubFOp::create(nb, nloc, aCos, bSin)
                                     .getResult()
                               : arith::AddFOp::create(nb, nloc, aCos, bSin)
                                     .getResult();
            return convertScalar(nb, nloc, y, elementType);
          });
    };

    Value result = createEmptyTensor(rewriter, loc, sizes, elementType);
    std::optional<int64_t> rotaryValue = getConstantIntValue(rotarySize);
    std::optional<int64_t> dimValue = getConstantIntValue(sizes[3]);
    if (!rotaryValue || !dimValue || *rotaryValue != *dimValue) {
      OpFoldResult rest = getAsOpFoldResult(rewriter.createOrFold<arith::SubIOp>(
          loc, getValueOrCreateIndex(rewriter, loc, sizes[3]), rotary));
      result = insert(slice(input, rotarySize, rest), result, rotarySize);
    }
    result = insert(rotate(x1, x2, /*subtract=*/true), result,
                    rewriter.getIndexAttr(0));
    result = insert(rotate(x2, x1, /*subtract=*/false), result, half);
    rewriter.replaceOp(op, castToType(rewriter, loc, result, op.getType()));
    return success();
  }
};

/// The slopes as an `arith.constant`, rounded to the element type.
struct AlibiLowering : public OpRewritePattern<AlibiOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AlibiOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    if (!type.hasStaticShape() || type.getRank() != 1)
      return emitLoweringError(rewriter, op,
                               "expected a static [heads] result type");
    const llvm::fltSemantics &semantics =
        cast<FloatType>(type.getElementType()).getFloatSemantics();
    SmallVector<APFloat> slopes;
    for (double slope : AlibiOp::computeSlopes(type.getDimSize(0))) {
      APFloat value(slope);
      bool losesInfo;
      value.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
      slopes.push_back(value);
    }
    Value constant = arith::ConstantOp::create(
        rewriter, op.getLoc(), type, DenseElementsAttr::get(type, slopes));
    rewriter.replaceOp(op, constant);
    return success();
  }
};

} // namespace

void mlir::seq::populatePositionEncodingToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<SinusoidalPELowering, RopeLowering, AlibiLowering>(
      patterns.getContext());
}

void mlir::seq::populateTabulatedRopeToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<TabulatedRopeLowering>(patterns.getContext());
}
