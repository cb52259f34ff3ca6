//===- Shape.cpp - lower seq shape manipulation to linalg/tensor ----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Layout changes become the tensor ops that bufferize to views where they can
// (`tensor.expand_shape`/`collapse_shape`, `extract_slice`, `insert_slice`)
// and `linalg.transpose` where data moves. Sizes the types leave dynamic are
// checked at run time with `cf.assert`, as the op descriptions promise.
//
//===----------------------------------------------------------------------===//

#include "lowering/SeqToLinalg/Patterns.h"
#include "lowering/SeqToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::seq;

/// The product of `sizes` as an `index` value (folded when static).
static OpFoldResult buildProduct(OpBuilder &b, Location loc,
                                 ArrayRef<OpFoldResult> sizes) {
  int64_t staticProduct = 1;
  Value dynamicProduct;
  for (OpFoldResult size : sizes) {
    if (std::optional<int64_t> cst = getConstantIntValue(size)) {
      staticProduct *= *cst;
      continue;
    }
    Value value = cast<Value>(size);
    dynamicProduct = dynamicProduct
                         ? arith::MulIOp::create(b, loc, dynamicProduct, value)
                         : value;
  }
  if (!dynamicProduct)
    return b.getIndexAttr(staticProduct);
  if (staticProduct != 1)
    dynamicProduct = arith::MulIOp::create(
        b, loc, dynamicProduct, createIndexConstant(b, loc, staticProduct));
  return dynamicProduct;
}

namespace {

//===----------------------------------------------------------------------===//
// transpose
//===----------------------------------------------------------------------===//

struct TransposeLowering : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<OpFoldResult> inputSizes =
        tensor::getMixedSizes(rewriter, loc, op.getInput());
    SmallVector<OpFoldResult> sizes;
    for (int64_t dim : op.getPermutation())
      sizes.push_back(inputSizes[dim]);
    Value init =
        createEmptyTensor(rewriter, loc, sizes, op.getType().getElementType());
    auto transpose = linalg::TransposeOp::create(rewriter, loc, op.getInput(),
                                                 init, op.getPermutation());
    rewriter.replaceOp(
        op, castToType(rewriter, loc, transpose->getResult(0), op.getType()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// reshape
//===----------------------------------------------------------------------===//

/// Row-major reshape. Three forms, from the most to the least structured:
///
/// - a pure collapse or expansion (`tensor.collapse_shape`/`expand_shape`)
///   when the dimensions group contiguously and at most one group involves
///   dynamic sizes: then the element-count check pins down every group;
/// - otherwise a collapse to 1-D followed by an expansion, which is correct
///   for any pair of shapes (and still a view after bufferization);
/// - `tensor.reshape` with a shape tensor for rank-0 operands or results,
///   which the reassociation ops cannot express with dynamic sizes.
///
/// When the shapes are not both static, the element counts are compared at
/// run time.
struct ReshapeLowering : public OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    auto srcType = cast<RankedTensorType>(input.getType());
    RankedTensorType dstType = op.getType();

    SmallVector<OpFoldResult> srcSizes =
        tensor::getMixedSizes(rewriter, loc, input);
    SmallVector<OpFoldResult> dstSizes;
    auto dynamicSizes = op.getDynamicSizes().begin();
    for (int64_t size : dstType.getShape())
      dstSizes.push_back(ShapedType::isDynamic(size)
                             ? OpFoldResult(*dynamicSizes++)
                             : rewriter.getIndexAttr(size));

    if (!srcType.hasStaticShape() || !dstType.hasStaticShape()) {
      OpFoldResult srcCount = buildProduct(rewriter, loc, srcSizes);
      OpFoldResult dstCount = buildProduct(rewriter, loc, dstSizes);
      if (failed(assertEqualSizes(
              rewriter, loc, srcCount, dstCount,
              "seq.reshape: element counts of input and result differ")))
        return emitLoweringError(rewriter, op,
                                 "element counts of input and result differ");
    }

    rewriter.replaceOp(
        op, buildReshape(rewriter, loc, input, srcSizes, dstType, dstSizes));
    return success();
  }

private:
  /// Whether `reassociation` maps `collapsed` onto groups of `expanded` with
  /// equal static products and at most one group involving dynamic sizes.
  static bool isExactGrouping(ArrayRef<int64_t> expanded,
                              ArrayRef<int64_t> collapsed,
                              ArrayRef<ReassociationIndices> reassociation) {
    int64_t dynamicGroups = 0;
    for (auto [collapsedSize, group] :
         llvm::zip_equal(collapsed, reassociation)) {
      bool dynamic = ShapedType::isDynamic(collapsedSize);
      int64_t product = 1;
      for (int64_t dim : group) {
        if (ShapedType::isDynamic(expanded[dim]))
          dynamic = true;
        else
          product *= expanded[dim];
      }
      if (dynamic)
        ++dynamicGroups;
      else if (product != collapsedSize)
        return false;
    }
    return dynamicGroups <= 1;
  }

  static Value buildReshape(OpBuilder &b, Location loc, Value input,
                            ArrayRef<OpFoldResult> srcSizes,
                            RankedTensorType dstType,
                            ArrayRef<OpFoldResult> dstSizes) {
    auto srcType = cast<RankedTensorType>(input.getType());
    int64_t srcRank = srcType.getRank();
    int64_t dstRank = dstType.getRank();

    if (srcRank == 0 || dstRank == 0) {
      SmallVector<Value> shape =
          llvm::map_to_vector(dstSizes, [&](OpFoldResult size) -> Value {
            return getValueOrCreateIndex(b, loc, size);
          });
      Value shapeTensor;
      if (shape.empty())
        shapeTensor = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{0},
                                              b.getIndexType());
      else
        shapeTensor = tensor::FromElementsOp::create(b, loc, shape);
      return tensor::ReshapeOp::create(b, loc, dstType, input, shapeTensor);
    }

    if (srcRank == dstRank && srcType.getShape() == dstType.getShape() &&
        srcType.hasStaticShape())
      return input;

    if (srcRank > dstRank) {
      std::optional<SmallVector<ReassociationIndices>> reassociation =
          getReassociationIndicesForCollapse(srcType.getShape(),
                                             dstType.getShape());
      if (reassociation && isExactGrouping(srcType.getShape(),
                                           dstType.getShape(), *reassociation))
        return castToType(
            b, loc,
            tensor::CollapseShapeOp::create(b, loc, input, *reassociation),
            dstType);
    } else if (srcRank < dstRank) {
      std::optional<SmallVector<ReassociationIndices>> reassociation =
          getReassociationIndicesForCollapse(dstType.getShape(),
                                             srcType.getShape());
      if (reassociation && isExactGrouping(dstType.getShape(),
                                           srcType.getShape(), *reassociation))
        return expand(b, loc, input, dstType, dstSizes, *reassociation);
    }

    // General case: through 1-D.
    Value flat = input;
    if (srcRank > 1) {
      ReassociationIndices all;
      for (int64_t i = 0; i < srcRank; ++i)
        all.push_back(i);
      flat = tensor::CollapseShapeOp::create(
          b, loc, input, ArrayRef<ReassociationIndices>{all});
    }
    if (dstRank == 1)
      return castToType(b, loc, flat, dstType);
    ReassociationIndices all;
    for (int64_t i = 0; i < dstRank; ++i)
      all.push_back(i);
    return expand(b, loc, flat, dstType, dstSizes, {all});
  }

  /// `tensor.expand_shape` of `input` to `dstType`. A source dimension whose
  /// group is fully static is first cast to its static size, which the
  /// expand_shape verifier requires (the element-count check has run).
  static Value expand(OpBuilder &b, Location loc, Value input,
                      RankedTensorType dstType, ArrayRef<OpFoldResult> dstSizes,
                      ArrayRef<ReassociationIndices> reassociation) {
    auto srcType = cast<RankedTensorType>(input.getType());
    SmallVector<int64_t> refined(srcType.getShape());
    for (auto [i, group] : llvm::enumerate(reassociation)) {
      int64_t product = 1;
      for (int64_t dim : group) {
        if (ShapedType::isDynamic(dstType.getDimSize(dim))) {
          product = ShapedType::kDynamic;
          break;
        }
        product *= dstType.getDimSize(dim);
      }
      if (ShapedType::isStatic(product))
        refined[i] = product;
    }
    Value source =
        castToType(b, loc, input,
                   RankedTensorType::get(refined, srcType.getElementType()));
    return tensor::ExpandShapeOp::create(b, loc, dstType, source, reassociation,
                                         dstSizes);
  }
};

//===----------------------------------------------------------------------===//
// split_heads / merge_heads
//===----------------------------------------------------------------------===//

/// [b, n, h*d] -> expand -> [b, n, h, d] -> transpose -> [b, h, n, d].
struct SplitHeadsLowering : public OpRewritePattern<SplitHeadsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SplitHeadsOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t heads = op.getHeads();
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, input);

    OpFoldResult headDim;
    int64_t features = inputType.getDimSize(2);
    if (ShapedType::isStatic(features)) {
      headDim = rewriter.getIndexAttr(features / heads);
    } else {
      Value featureSize = cast<Value>(sizes[2]);
      Value numHeads = createIndexConstant(rewriter, loc, heads);
      Value rem = arith::RemUIOp::create(rewriter, loc, featureSize, numHeads);
      Value divisible =
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, rem,
                                createIndexConstant(rewriter, loc, 0));
      createRuntimeAssert(rewriter, loc, divisible,
                          "seq.split_heads: features not divisible by heads");
      headDim = arith::DivUIOp::create(rewriter, loc, featureSize, numHeads)
                    .getResult();
    }

    SmallVector<OpFoldResult> expandedSizes = {
        sizes[0], sizes[1], rewriter.getIndexAttr(heads), headDim};
    auto expandedType = RankedTensorType::get(getStaticShape(expandedSizes),
                                              inputType.getElementType());
    Value expanded = tensor::ExpandShapeOp::create(
        rewriter, loc, expandedType, input,
        ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}}, expandedSizes);

    SmallVector<OpFoldResult> resultSizes = {
        sizes[0], rewriter.getIndexAttr(heads), sizes[1], headDim};
    Value init = createEmptyTensor(rewriter, loc, resultSizes,
                                   inputType.getElementType());
    auto transpose = linalg::TransposeOp::create(rewriter, loc, expanded, init,
                                                 ArrayRef<int64_t>{0, 2, 1, 3});
    rewriter.replaceOp(
        op, castToType(rewriter, loc, transpose->getResult(0), op.getType()));
    return success();
  }
};

/// [b, h, n, d] -> transpose -> [b, n, h, d] -> collapse -> [b, n, h*d].
struct MergeHeadsLowering : public OpRewritePattern<MergeHeadsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MergeHeadsOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, input);
    SmallVector<OpFoldResult> transposedSizes = {sizes[0], sizes[2], sizes[1],
                                                 sizes[3]};
    Value init = createEmptyTensor(rewriter, loc, transposedSizes,
                                   op.getType().getElementType());
    auto transpose = linalg::TransposeOp::create(rewriter, loc, input, init,
                                                 ArrayRef<int64_t>{0, 2, 1, 3});
    Value collapsed = tensor::CollapseShapeOp::create(
        rewriter, loc, transpose->getResult(0),
        ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
    rewriter.replaceOp(op, castToType(rewriter, loc, collapsed, op.getType()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// slice / concat
//===----------------------------------------------------------------------===//

/// `tensor.extract_slice` after checking `0 <= start <= end <= size` (and,
/// when the result type fixes the slice length, `end - start` against it).
struct SliceLowering : public OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = op.getInput();
    int64_t axis = op.getAxis();
    int64_t rank = op.getType().getRank();
    Value start = op.getStart();
    Value end = op.getEnd();

    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, input);
    Value axisSize = getValueOrCreateIndex(rewriter, loc, sizes[axis]);
    Value zero = createIndexConstant(rewriter, loc, 0);
    auto cmp = [&](arith::CmpIPredicate pred, Value lhs, Value rhs) {
      return arith::CmpIOp::create(rewriter, loc, pred, lhs, rhs).getResult();
    };
    Value inBounds = arith::AndIOp::create(
        rewriter, loc, cmp(arith::CmpIPredicate::sle, zero, start),
        arith::AndIOp::create(rewriter, loc,
                              cmp(arith::CmpIPredicate::sle, start, end),
                              cmp(arith::CmpIPredicate::sle, end, axisSize)));
    createRuntimeAssert(rewriter, loc, inBounds,
                        "seq.slice: expected 0 <= start <= end <= size");

    Value length = arith::SubIOp::create(rewriter, loc, end, start);
    int64_t staticLength = op.getType().getDimSize(axis);
    if (ShapedType::isStatic(staticLength)) {
      (void)assertEqualSizes(rewriter, loc, length,
                             rewriter.getIndexAttr(staticLength),
                             "seq.slice: end - start differs from the size "
                             "of the result type");
      sizes[axis] = rewriter.getIndexAttr(staticLength);
    } else {
      sizes[axis] = length;
    }

    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    offsets[axis] = start;
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    Value slice = tensor::ExtractSliceOp::create(rewriter, loc, input, offsets,
                                                 sizes, strides);
    rewriter.replaceOp(op, castToType(rewriter, loc, slice, op.getType()));
    return success();
  }
};

/// `tensor.empty` of the concatenated shape, then one `tensor.insert_slice`
/// per input at its running offset (what upstream's decomposition of
/// `tensor.concat` produces, without relying on it).
struct ConcatLowering : public OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    int64_t axis = op.getAxis();
    int64_t rank = resultType.getRank();
    ValueRange inputs = op.getInputs();

    SmallVector<SmallVector<OpFoldResult>> inputSizes;
    for (Value input : inputs)
      inputSizes.push_back(tensor::getMixedSizes(rewriter, loc, input));

    // Dimensions other than `axis` must agree; the verifier checked the
    // static ones.
    SmallVector<OpFoldResult> sizes;
    for (int64_t dim = 0; dim < rank; ++dim) {
      if (dim == axis) {
        SmallVector<OpFoldResult> parts;
        for (auto &inputSize : inputSizes)
          parts.push_back(inputSize[dim]);
        OpFoldResult total = rewriter.getIndexAttr(0);
        for (OpFoldResult part : parts) {
          std::optional<int64_t> a = getConstantIntValue(total);
          std::optional<int64_t> b = getConstantIntValue(part);
          if (a && b)
            total = rewriter.getIndexAttr(*a + *b);
          else
            total =
                arith::AddIOp::create(
                    rewriter, loc, getValueOrCreateIndex(rewriter, loc, total),
                    getValueOrCreateIndex(rewriter, loc, part))
                    .getResult();
        }
        sizes.push_back(total);
        continue;
      }
      OpFoldResult size =
          ShapedType::isStatic(resultType.getDimSize(dim))
              ? rewriter.getIndexAttr(resultType.getDimSize(dim))
              : inputSizes.front()[dim];
      for (auto &inputSize : inputSizes)
        (void)assertEqualSizes(rewriter, loc, inputSize[dim], size,
                               "seq.concat: inputs differ in a dimension "
                               "other than the axis");
      sizes.push_back(size);
    }

    Value result =
        createEmptyTensor(rewriter, loc, sizes, resultType.getElementType());
    OpFoldResult offset = rewriter.getIndexAttr(0);
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    for (auto [input, inputSize] : llvm::zip_equal(inputs, inputSizes)) {
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      offsets[axis] = offset;
      // The input's own sizes, so that the slice type is the input type
      // (the other dimensions were checked equal to the result's above).
      result = tensor::InsertSliceOp::create(rewriter, loc, input, result,
                                             offsets, inputSize, strides);
      std::optional<int64_t> a = getConstantIntValue(offset);
      std::optional<int64_t> b = getConstantIntValue(inputSize[axis]);
      if (a && b)
        offset = rewriter.getIndexAttr(*a + *b);
      else
        offset =
            arith::AddIOp::create(
                rewriter, loc, getValueOrCreateIndex(rewriter, loc, offset),
                getValueOrCreateIndex(rewriter, loc, inputSize[axis]))
                .getResult();
    }
    rewriter.replaceOp(op, castToType(rewriter, loc, result, resultType));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// reduce / arange
//===----------------------------------------------------------------------===//

/// One reduction `linalg.generic` accumulating in f32 (for narrower floats),
/// from the combiner's identity (0, -inf, +inf); `mean` divides by the
/// number of reduced elements afterwards, and `keepdim` re-inserts the unit
/// dimensions with `tensor.expand_shape`.
struct ReduceLowering : public OpRewritePattern<ReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value input = op.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    Type elementType = inputType.getElementType();
    Type computeType = getComputeType(elementType);
    int64_t rank = inputType.getRank();
    ArrayRef<int64_t> axes = op.getAxes();
    ReduceKind kind = op.getKind();

    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, input);
    SmallVector<OpFoldResult> keptSizes, reducedSizes;
    for (int64_t dim = 0; dim < rank; ++dim)
      (llvm::is_contained(axes, dim) ? reducedSizes : keptSizes)
          .push_back(sizes[dim]);

    Value identity;
    switch (kind) {
    case ReduceKind::sum:
    case ReduceKind::mean:
      identity = createFloatConstant(rewriter, loc, computeType, 0.0);
      break;
    case ReduceKind::max:
      identity = createInfinity(rewriter, loc, computeType, /*negative=*/true);
      break;
    case ReduceKind::min:
      identity = createInfinity(rewriter, loc, computeType, /*negative=*/false);
      break;
    }
    Value init =
        createFilledTensor(rewriter, loc, keptSizes, computeType, identity);
    AffineMap outMap = getProjectionMap(ctx, rank, axes);
    Value reduced =
        linalg::GenericOp::create(
            rewriter, loc, init.getType(), input, init,
            ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank), outMap},
            getIteratorTypes(rank, axes),
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              Value x = convertScalar(b, nloc, args[0], computeType);
              Value acc;
              switch (kind) {
              case ReduceKind::sum:
              case ReduceKind::mean:
                acc = arith::AddFOp::create(b, nloc, x, args[1]);
                break;
              case ReduceKind::max:
                acc = arith::MaximumFOp::create(b, nloc, x, args[1]);
                break;
              case ReduceKind::min:
                acc = arith::MinimumFOp::create(b, nloc, x, args[1]);
                break;
              }
              linalg::YieldOp::create(b, nloc, acc);
            })
            .getResult(0);

    // Divide (mean) and round to the element type in one elementwise pass.
    if (kind == ReduceKind::mean || computeType != elementType) {
      Value count;
      if (kind == ReduceKind::mean)
        count = indexToFloat(
            rewriter, loc,
            getValueOrCreateIndex(rewriter, loc,
                                  buildProduct(rewriter, loc, reducedSizes)),
            computeType);
      int64_t keptRank = keptSizes.size();
      Value outInit = createEmptyTensor(rewriter, loc, keptSizes, elementType);
      AffineMap identityMap = rewriter.getMultiDimIdentityMap(keptRank);
      reduced = linalg::GenericOp::create(
                    rewriter, loc, outInit.getType(), reduced, outInit,
                    ArrayRef<AffineMap>{identityMap, identityMap},
                    getIteratorTypes(keptRank),
                    [&](OpBuilder &b, Location nloc, ValueRange args) {
                      Value value = args[0];
                      if (count)
                        value = arith::DivFOp::create(b, nloc, value, count);
                      linalg::YieldOp::create(
                          b, nloc, convertScalar(b, nloc, value, elementType));
                    })
                    .getResult(0);
    }

    if (op.getKeepdim())
      reduced = insertUnitDims(rewriter, loc, reduced, sizes, axes);
    rewriter.replaceOp(op, castToType(rewriter, loc, reduced, op.getType()));
    return success();
  }

private:
  /// Expands `reduced` (the kept dimensions) to the input's rank with size-1
  /// dimensions at `axes`.
  static Value insertUnitDims(OpBuilder &b, Location loc, Value reduced,
                              ArrayRef<OpFoldResult> inputSizes,
                              ArrayRef<int64_t> axes) {
    auto reducedType = cast<RankedTensorType>(reduced.getType());
    int64_t rank = inputSizes.size();
    SmallVector<OpFoldResult> sizes;
    for (int64_t dim = 0; dim < rank; ++dim)
      sizes.push_back(llvm::is_contained(axes, dim) ? b.getIndexAttr(1)
                                                    : inputSizes[dim]);
    // Each kept dimension groups with the unit dimensions before it; unit
    // dimensions after the last kept one join its group.
    SmallVector<ReassociationIndices> reassociation;
    ReassociationIndices pending;
    for (int64_t dim = 0; dim < rank; ++dim) {
      pending.push_back(dim);
      if (!llvm::is_contained(axes, dim)) {
        reassociation.push_back(pending);
        pending.clear();
      }
    }
    if (!reassociation.empty())
      reassociation.back().append(pending.begin(), pending.end());
    auto type = RankedTensorType::get(getStaticShape(sizes),
                                      reducedType.getElementType());
    return tensor::ExpandShapeOp::create(b, loc, type, reduced, reassociation,
                                         sizes);
  }
};

/// A `linalg.generic` without inputs writing its own index.
struct ArangeLowering : public OpRewritePattern<ArangeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ArangeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    Type elementType = type.getElementType();
    OpFoldResult size = op.getLength();
    if (ShapedType::isStatic(type.getDimSize(0))) {
      (void)assertEqualSizes(rewriter, loc, op.getLength(),
                             rewriter.getIndexAttr(type.getDimSize(0)),
                             "seq.arange: length differs from the result type");
      size = rewriter.getIndexAttr(type.getDimSize(0));
    }
    Value init = createEmptyTensor(rewriter, loc, size, elementType);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, init.getType(), ValueRange{}, init,
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(1)},
        getIteratorTypes(1), [&](OpBuilder &b, Location nloc, ValueRange) {
          Value index = linalg::IndexOp::create(b, nloc, 0);
          linalg::YieldOp::create(b, nloc,
                                  convertScalar(b, nloc, index, elementType));
        });
    rewriter.replaceOp(
        op, castToType(rewriter, loc, generic.getResult(0), op.getType()));
    return success();
  }
};

} // namespace

void mlir::seq::populateShapeToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<TransposeLowering, ReshapeLowering, SplitHeadsLowering,
               MergeHeadsLowering, SliceLowering, ConcatLowering,
               ReduceLowering, ArangeLowering>(patterns.getContext());
}
