//===- Linear.cpp - lower matmul, linear and embedding to linalg ----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Products become named contractions wherever the shapes allow, because the
// CPU and GPU tiling strategies match `linalg.matmul` and
// `linalg.batch_matmul`:
//
// - `seq.linear` collapses the leading dimensions of its input into rows and
//   is one `linalg.matmul` with transposed-B indexing maps (`x W^T`), whose
//   accumulator starts from the broadcast bias;
// - `seq.matmul` with a shared rank-2 `rhs` is a `linalg.matmul` on the
//   collapsed rows; with equal batch dimensions a `linalg.batch_matmul` on
//   the collapsed batch; only true batch broadcasting falls back to a
//   `linalg.generic` contraction.
//
// Floats narrower than f32 accumulate in f32 (the named ops extend their
// inputs to the accumulator type) and are rounded once at the end.
//
//===----------------------------------------------------------------------===//

#include "lowering/SeqToLinalg/Patterns.h"
#include "lowering/SeqToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::seq;

/// Whether a batch dimension pair broadcasts under the static rule (one side
/// statically 1, the other not).
static bool isBroadcastPair(int64_t a, int64_t b) {
  return (a == 1) != (b == 1);
}

namespace {

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

struct MatmulLowering : public OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = op.getLhs();
    Value rhs = op.getRhs();
    auto lhsType = cast<RankedTensorType>(lhs.getType());
    auto rhsType = cast<RankedTensorType>(rhs.getType());
    RankedTensorType resultType = op.getType();
    Type elementType = resultType.getElementType();
    Type accType = getComputeType(elementType);
    bool transposeRhs = op.getTransposeRhs();
    int64_t lhsBatchRank = lhsType.getRank() - 2;
    int64_t rhsBatchRank = rhsType.getRank() - 2;

    SmallVector<OpFoldResult> lhsSizes =
        tensor::getMixedSizes(rewriter, loc, lhs);
    SmallVector<OpFoldResult> rhsSizes =
        tensor::getMixedSizes(rewriter, loc, rhs);
    OpFoldResult m = lhsSizes[lhsBatchRank];
    OpFoldResult k = lhsSizes[lhsBatchRank + 1];
    OpFoldResult n = rhsSizes[rhsBatchRank + (transposeRhs ? 0 : 1)];
    OpFoldResult rhsK = rhsSizes[rhsBatchRank + (transposeRhs ? 1 : 0)];

    ArrayRef<int64_t> batchShape = resultType.getShape().drop_back(2);
    SmallVector<OpFoldResult> lhsBatch(lhsSizes.begin(), lhsSizes.end() - 2);
    SmallVector<OpFoldResult> rhsBatch(rhsSizes.begin(), rhsSizes.end() - 2);
    FailureOr<SmallVector<OpFoldResult>> batchSizes = computeBroadcastSizes(
        rewriter, op, ArrayRef<SmallVector<OpFoldResult>>{lhsBatch, rhsBatch},
        batchShape);
    if (failed(batchSizes))
      return rewriter.notifyMatchFailure(op, "batch dims do not broadcast");
    (void)assertEqualSizes(rewriter, loc, k, rhsK,
                           "seq.matmul: contraction sizes differ");

    Value result;
    if (rhsBatchRank == 0) {
      // Every row of lhs, whatever its batch, meets the same rhs.
      Value lhs2d = collapseLeadingDims(rewriter, loc, lhs, 1);
      OpFoldResult rows =
          cast<RankedTensorType>(lhs2d.getType()).isDynamicDim(0)
              ? OpFoldResult(
                    tensor::DimOp::create(rewriter, loc, lhs2d, 0).getResult())
              : rewriter.getIndexAttr(
                    cast<RankedTensorType>(lhs2d.getType()).getDimSize(0));
      Value acc = createZeroAccumulator(rewriter, loc, {rows, n}, accType);
      Value product = buildMatmul(rewriter, loc, lhs2d, rhs, acc, transposeRhs);
      SmallVector<OpFoldResult> leading(lhsBatch);
      leading.push_back(m);
      result = expandLeadingDim(
          rewriter, loc,
          convertElementType(rewriter, loc, product, elementType), leading);
    } else if (lhsBatchRank == rhsBatchRank &&
               llvm::none_of(llvm::seq<int64_t>(0, lhsBatchRank),
                             [&](int64_t i) {
                               return isBroadcastPair(lhsType.getDimSize(i),
                                                      rhsType.getDimSize(i));
                             })) {
      // Same batch on both sides: one batch dimension.
      Value lhs3d = collapseLeadingDims(rewriter, loc, lhs, 2);
      Value rhs3d = collapseLeadingDims(rewriter, loc, rhs, 2);
      OpFoldResult batch =
          tensor::getMixedSize(rewriter, loc, lhs3d, /*dim=*/0);
      Value acc = createZeroAccumulator(rewriter, loc, {batch, m, n}, accType);
      Value product = transposeRhs
                          ? linalg::BatchMatmulTransposeBOp::create(
                                rewriter, loc, TypeRange{acc.getType()},
                                ValueRange{lhs3d, rhs3d}, ValueRange{acc})
                                ->getResult(0)
                          : linalg::BatchMatmulOp::create(
                                rewriter, loc, TypeRange{acc.getType()},
                                ValueRange{lhs3d, rhs3d}, ValueRange{acc})
                                ->getResult(0);
      result = expandLeadingDim(
          rewriter, loc,
          convertElementType(rewriter, loc, product, elementType), *batchSizes);
    } else {
      result = buildBroadcastingContraction(rewriter, loc, op, *batchSizes, m,
                                            n, accType);
      result = convertElementType(rewriter, loc, result, elementType);
    }
    rewriter.replaceOp(op, castToType(rewriter, loc, result, resultType));
    return success();
  }

private:
  static Value createZeroAccumulator(OpBuilder &b, Location loc,
                                     ArrayRef<OpFoldResult> sizes,
                                     Type accType) {
    Value zero = createFloatConstant(b, loc, accType, 0.0);
    return createFilledTensor(b, loc, sizes, accType, zero);
  }

  static Value buildMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                           Value acc, bool transposeRhs) {
    if (transposeRhs)
      return linalg::MatmulTransposeBOp::create(
                 b, loc, TypeRange{acc.getType()}, ValueRange{lhs, rhs},
                 ValueRange{acc})
          ->getResult(0);
    return linalg::MatmulOp::create(b, loc, TypeRange{acc.getType()},
                                    ValueRange{lhs, rhs}, ValueRange{acc})
        ->getResult(0);
  }

  /// The general case: loops (batch..., m, n, k) with the batch dimensions
  /// of each operand read through broadcasting map results.
  static Value buildBroadcastingContraction(OpBuilder &b, Location loc,
                                            MatmulOp op,
                                            ArrayRef<OpFoldResult> batchSizes,
                                            OpFoldResult m, OpFoldResult n,
                                            Type accType) {
    MLIRContext *ctx = b.getContext();
    auto lhsType = cast<RankedTensorType>(op.getLhs().getType());
    auto rhsType = cast<RankedTensorType>(op.getRhs().getType());
    ArrayRef<int64_t> batchShape = op.getType().getShape().drop_back(2);
    int64_t batchRank = batchShape.size();
    int64_t numLoops = batchRank + 3;
    AffineExpr dm = getAffineDimExpr(batchRank, ctx);
    AffineExpr dn = getAffineDimExpr(batchRank + 1, ctx);
    AffineExpr dk = getAffineDimExpr(batchRank + 2, ctx);

    auto batchExprs = [&](RankedTensorType type) {
      AffineMap map =
          getBroadcastMap(ctx, type.getShape().drop_back(2), batchShape);
      return SmallVector<AffineExpr>(map.getResults());
    };
    SmallVector<AffineExpr> lhsExprs = batchExprs(lhsType);
    lhsExprs.append({dm, dk});
    SmallVector<AffineExpr> rhsExprs = batchExprs(rhsType);
    if (op.getTransposeRhs())
      rhsExprs.append({dn, dk});
    else
      rhsExprs.append({dk, dn});
    SmallVector<AffineExpr> outExprs;
    for (int64_t i = 0; i < batchRank; ++i)
      outExprs.push_back(getAffineDimExpr(i, ctx));
    outExprs.append({dm, dn});

    SmallVector<OpFoldResult> sizes(batchSizes);
    sizes.append({m, n});
    Value acc = createZeroAccumulator(b, loc, sizes, accType);
    SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, lhsExprs, ctx),
                                   AffineMap::get(numLoops, 0, rhsExprs, ctx),
                                   AffineMap::get(numLoops, 0, outExprs, ctx)};
    return linalg::GenericOp::create(
               b, loc, acc.getType(), ValueRange{op.getLhs(), op.getRhs()}, acc,
               maps, getIteratorTypes(numLoops, {numLoops - 1}),
               [&](OpBuilder &nb, Location nloc, ValueRange args) {
                 Value x = convertScalar(nb, nloc, args[0], accType);
                 Value y = convertScalar(nb, nloc, args[1], accType);
                 Value prod = arith::MulFOp::create(nb, nloc, x, y);
                 Value sum = arith::AddFOp::create(nb, nloc, args[2], prod);
                 linalg::YieldOp::create(nb, nloc, sum);
               })
        .getResult(0);
  }
};

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

/// y = x W^T + b as `linalg.matmul` with transposed-B maps on
/// `[rows, in] x [out, in]`, accumulating onto the bias broadcast to
/// `[rows, out]` (or zeros).
struct LinearLowering : public OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value input = op.getInput();
    Value weight = op.getWeight();
    Value bias = op.getBias();
    RankedTensorType resultType = op.getType();
    Type elementType = resultType.getElementType();
    Type accType = getComputeType(elementType);

    SmallVector<OpFoldResult> inputSizes =
        tensor::getMixedSizes(rewriter, loc, input);
    SmallVector<OpFoldResult> weightSizes =
        tensor::getMixedSizes(rewriter, loc, weight);
    OpFoldResult outFeatures = weightSizes[0];
    (void)assertEqualSizes(rewriter, loc, inputSizes.back(), weightSizes[1],
                           "seq.linear: input features differ from the "
                           "weight's");
    if (bias)
      (void)assertEqualSizes(rewriter, loc,
                             tensor::getMixedSize(rewriter, loc, bias, 0),
                             outFeatures,
                             "seq.linear: bias size differs from the "
                             "weight's output features");

    Value rows2d = collapseLeadingDims(rewriter, loc, input, 1);
    OpFoldResult rows = tensor::getMixedSize(rewriter, loc, rows2d, 0);
    SmallVector<OpFoldResult> accSizes = {rows, outFeatures};
    Value acc;
    if (bias) {
      Value init = createEmptyTensor(rewriter, loc, accSizes, accType);
      AffineMap biasMap = AffineMap::get(2, 0, getAffineDimExpr(1, ctx));
      acc =
          linalg::GenericOp::create(
              rewriter, loc, init.getType(), bias, init,
              ArrayRef<AffineMap>{biasMap, rewriter.getMultiDimIdentityMap(2)},
              getIteratorTypes(2),
              [&](OpBuilder &b, Location nloc, ValueRange args) {
                linalg::YieldOp::create(
                    b, nloc, convertScalar(b, nloc, args[0], accType));
              })
              .getResult(0);
    } else {
      Value zero = createFloatConstant(rewriter, loc, accType, 0.0);
      acc = createFilledTensor(rewriter, loc, accSizes, accType, zero);
    }
    Value product;
    if (auto blocks = weight.getDefiningOp<DequantizeOp>())
      // A weight in a block format is read in its blocks (Quantized.cpp).
      product = buildQuantizedLinear(rewriter, loc, rows2d, blocks.getBlocks(),
                                     blocks.getFormat(), acc);
    else
      product = linalg::MatmulTransposeBOp::create(
                    rewriter, loc, TypeRange{acc.getType()},
                    ValueRange{rows2d, weight}, ValueRange{acc})
                    ->getResult(0);
    Value rounded = convertElementType(rewriter, loc, product, elementType);
    SmallVector<OpFoldResult> leading(inputSizes.begin(), inputSizes.end() - 1);
    Value result = expandLeadingDim(rewriter, loc, rounded, leading);
    rewriter.replaceOp(op, castToType(rewriter, loc, result, resultType));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// embedding
//===----------------------------------------------------------------------===//

/// A gather: one `linalg.generic` over `indices.shape + [dim]` whose body
/// clamps the index to `[0, vocab)` (so that a bad id reads a valid row
/// instead of arbitrary memory) and `tensor.extract`s the table element (or,
/// for a table in a block format, the element's bytes, dequantized).
struct EmbeddingLowering : public OpRewritePattern<EmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(EmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value table = op.getTable();
    Value indices = op.getIndices();
    RankedTensorType resultType = op.getType();
    int64_t rank = resultType.getRank();

    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, indices);
    SmallVector<OpFoldResult> tableSizes =
        tensor::getMixedSizes(rewriter, loc, table);
    sizes.push_back(tableSizes[1]);
    Value lastRow = arith::SubIOp::create(
        rewriter, loc, getValueOrCreateIndex(rewriter, loc, tableSizes[0]),
        createIndexConstant(rewriter, loc, 1));

    Value init =
        createEmptyTensor(rewriter, loc, sizes, resultType.getElementType());
    // A table in a block format: only the elements read are dequantized,
    // where they are stored.
    auto blocks = table.getDefiningOp<DequantizeOp>();
    SmallVector<AffineMap> maps = {getProjectionMap(ctx, rank, {rank - 1}),
                                   rewriter.getMultiDimIdentityMap(rank)};
    auto generic = linalg::GenericOp::create(
        rewriter, loc, init.getType(), indices, init, maps,
        getIteratorTypes(rank),
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value row = convertScalar(b, nloc, args[0], b.getIndexType());
          Value zero = createIndexConstant(b, nloc, 0);
          row = arith::MaxSIOp::create(b, nloc, row, zero);
          row = arith::MinSIOp::create(b, nloc, row, lastRow);
          Value column = linalg::IndexOp::create(b, nloc, rank - 1);
          Value element =
              blocks ? extractQuantizedElement(b, nloc, blocks.getBlocks(),
                                               blocks.getFormat(), row, column)
                     : tensor::ExtractOp::create(b, nloc, table,
                                                 ValueRange{row, column});
          linalg::YieldOp::create(b, nloc, element);
        });
    rewriter.replaceOp(
        op, castToType(rewriter, loc, generic.getResult(0), resultType));
    return success();
  }
};

} // namespace

void mlir::seq::populateLinearToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<MatmulLowering, LinearLowering, EmbeddingLowering>(
      patterns.getContext());
}
