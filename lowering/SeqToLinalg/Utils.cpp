//===- Utils.cpp - helpers shared by the seq to linalg patterns -----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "lowering/SeqToLinalg/Utils.h"
#include "dialect/Seq/Support/Debug.h"
#include "lowering/Common/Attributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#define DEBUG_TYPE "convert-seq-to-linalg"

using namespace mlir;
using namespace mlir::seq;

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

Type mlir::seq::getComputeType(Type elementType) {
  auto floatType = dyn_cast<FloatType>(elementType);
  if (floatType && floatType.getWidth() < 32)
    return Float32Type::get(elementType.getContext());
  return elementType;
}

Value mlir::seq::convertScalar(OpBuilder &b, Location loc, Value value,
                               Type toType) {
  Type fromType = value.getType();
  if (fromType == toType)
    return value;
  auto fromFloat = dyn_cast<FloatType>(fromType);
  auto toFloat = dyn_cast<FloatType>(toType);
  if (fromFloat && toFloat) {
    if (fromFloat.getWidth() < toFloat.getWidth())
      return arith::ExtFOp::create(b, loc, toType, value);
    return arith::TruncFOp::create(b, loc, toType, value);
  }
  if (fromType.isIndex() || toType.isIndex()) {
    if (toFloat) {
      Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), value);
      return arith::SIToFPOp::create(b, loc, toType, asInt);
    }
    return arith::IndexCastOp::create(b, loc, toType, value);
  }
  if (fromType.isSignlessInteger() && toFloat)
    return arith::SIToFPOp::create(b, loc, toType, value);
  if (fromFloat && toType.isSignlessInteger())
    return arith::FPToSIOp::create(b, loc, toType, value);
  unsigned fromWidth = fromType.getIntOrFloatBitWidth();
  unsigned toWidth = toType.getIntOrFloatBitWidth();
  if (fromWidth < toWidth)
    return arith::ExtSIOp::create(b, loc, toType, value);
  return arith::TruncIOp::create(b, loc, toType, value);
}

Value mlir::seq::createFloatConstant(OpBuilder &b, Location loc, Type type,
                                     double value) {
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(
        b, loc, type,
        DenseElementsAttr::get(
            vector, b.getFloatAttr(vector.getElementType(), value)));
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
}

Value mlir::seq::createIndexConstant(OpBuilder &b, Location loc,
                                     int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value mlir::seq::createInfinity(OpBuilder &b, Location loc, Type type,
                                bool negative) {
  const llvm::fltSemantics &semantics =
      cast<FloatType>(type).getFloatSemantics();
  return arith::ConstantOp::create(
      b, loc, type, b.getFloatAttr(type, APFloat::getInf(semantics, negative)));
}

Value mlir::seq::indexToFloat(OpBuilder &b, Location loc, Value index,
                              Type type) {
  // Static sizes (feature counts, ...) become float constants right away.
  if (std::optional<int64_t> cst = getConstantIntValue(index))
    return createFloatConstant(b, loc, type, static_cast<double>(*cst));
  return convertScalar(b, loc, index, type);
}

//===----------------------------------------------------------------------===//
// Tensors and sizes
//===----------------------------------------------------------------------===//

Value mlir::seq::getValueOrCreateIndex(OpBuilder &b, Location loc,
                                       OpFoldResult ofr) {
  if (auto value = dyn_cast<Value>(ofr))
    return value;
  return createIndexConstant(b, loc, *getConstantIntValue(ofr));
}

SmallVector<int64_t> mlir::seq::getStaticShape(ArrayRef<OpFoldResult> sizes) {
  return llvm::map_to_vector(sizes, [](OpFoldResult size) {
    if (auto attr = dyn_cast<Attribute>(size))
      return cast<IntegerAttr>(attr).getInt();
    return ShapedType::kDynamic;
  });
}

Value mlir::seq::createEmptyTensor(OpBuilder &b, Location loc,
                                   ArrayRef<OpFoldResult> sizes,
                                   Type elementType) {
  return tensor::EmptyOp::create(b, loc, sizes, elementType);
}

Value mlir::seq::createFilledTensor(OpBuilder &b, Location loc,
                                    ArrayRef<OpFoldResult> sizes,
                                    Type elementType, Value fillValue) {
  Value empty = createEmptyTensor(b, loc, sizes, elementType);
  return linalg::FillOp::create(b, loc, ValueRange{fillValue},
                                ValueRange{empty})
      .getResult(0);
}

Value mlir::seq::castToType(OpBuilder &b, Location loc, Value value,
                            Type type) {
  if (value.getType() == type)
    return value;
  return tensor::CastOp::create(b, loc, type, value);
}

Value mlir::seq::convertElementType(OpBuilder &b, Location loc, Value tensor,
                                    Type elementType) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (type.getElementType() == elementType)
    return tensor;
  int64_t rank = type.getRank();
  Value init = createEmptyTensor(b, loc, tensor::getMixedSizes(b, loc, tensor),
                                 elementType);
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  return linalg::GenericOp::create(
             b, loc, init.getType(), tensor, init,
             ArrayRef<AffineMap>{identity, identity}, getIteratorTypes(rank),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nloc, convertScalar(nb, nloc, args[0], elementType));
             })
      .getResult(0);
}

Value mlir::seq::collapseLeadingDims(OpBuilder &b, Location loc, Value value,
                                     int64_t keep) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  assert(rank >= keep && "cannot keep more dimensions than there are");
  if (rank == keep + 1)
    return value;
  SmallVector<ReassociationIndices> reassociation;
  if (rank == keep) {
    // Add a leading unit dimension: expand the first dimension to [1, d0]
    // (or a rank-0 tensor to [1]).
    SmallVector<int64_t> shape{1};
    llvm::append_range(shape, type.getShape());
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(1)};
    llvm::append_range(sizes, tensor::getMixedSizes(b, loc, value));
    if (rank > 0) {
      reassociation.push_back({0, 1});
      for (int64_t i = 1; i < rank; ++i)
        reassociation.push_back({i + 1});
    }
    return tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), value,
        reassociation, sizes);
  }
  ReassociationIndices leading;
  for (int64_t i = 0; i < rank - keep; ++i)
    leading.push_back(i);
  reassociation.push_back(leading);
  for (int64_t i = rank - keep; i < rank; ++i)
    reassociation.push_back({i});
  return tensor::CollapseShapeOp::create(b, loc, value, reassociation);
}

Value mlir::seq::expandLeadingDim(OpBuilder &b, Location loc, Value value,
                                  ArrayRef<OpFoldResult> leadingSizes) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  if (leadingSizes.size() == 1)
    return value;
  SmallVector<OpFoldResult> sizes(leadingSizes);
  SmallVector<OpFoldResult> trailing = tensor::getMixedSizes(b, loc, value);
  sizes.append(trailing.begin() + 1, trailing.end());
  auto resultType =
      RankedTensorType::get(getStaticShape(sizes), type.getElementType());
  int64_t numLeading = leadingSizes.size();
  SmallVector<ReassociationIndices> reassociation;
  if (numLeading == 0) {
    // Drop the leading unit dimension.
    if (rank > 1) {
      reassociation.push_back({0, 1});
      for (int64_t i = 2; i < rank; ++i)
        reassociation.push_back({i});
    }
    return tensor::CollapseShapeOp::create(b, loc, resultType, value,
                                           reassociation);
  }
  ReassociationIndices leading;
  for (int64_t i = 0; i < numLeading; ++i)
    leading.push_back(i);
  reassociation.push_back(leading);
  for (int64_t i = 1; i < rank; ++i)
    reassociation.push_back({numLeading + i - 1});
  return tensor::ExpandShapeOp::create(b, loc, resultType, value, reassociation,
                                       sizes);
}

//===----------------------------------------------------------------------===//
// Indexing maps and iterators
//===----------------------------------------------------------------------===//

SmallVector<utils::IteratorType>
mlir::seq::getIteratorTypes(int64_t rank, ArrayRef<int64_t> reductionDims) {
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  for (int64_t dim : reductionDims)
    iterators[dim] = utils::IteratorType::reduction;
  return iterators;
}

AffineMap mlir::seq::getProjectionMap(MLIRContext *ctx, int64_t rank,
                                      ArrayRef<int64_t> dropped) {
  SmallVector<AffineExpr> results;
  for (int64_t i = 0; i < rank; ++i)
    if (!llvm::is_contained(dropped, i))
      results.push_back(getAffineDimExpr(i, ctx));
  return AffineMap::get(rank, 0, results, ctx);
}

//===----------------------------------------------------------------------===//
// Run-time checks
//===----------------------------------------------------------------------===//

void mlir::seq::createRuntimeAssert(OpBuilder &b, Location loc, Value cond,
                                    StringRef message) {
  cf::AssertOp::create(b, loc, cond, b.getStringAttr(message));
}

LogicalResult mlir::seq::assertEqualSizes(OpBuilder &b, Location loc,
                                          OpFoldResult lhs, OpFoldResult rhs,
                                          StringRef message) {
  std::optional<int64_t> lhsCst = getConstantIntValue(lhs);
  std::optional<int64_t> rhsCst = getConstantIntValue(rhs);
  if (lhsCst && rhsCst)
    return success(*lhsCst == *rhsCst);
  if (!lhsCst && !rhsCst && cast<Value>(lhs) == cast<Value>(rhs))
    return success();
  Value eq = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                   getValueOrCreateIndex(b, loc, lhs),
                                   getValueOrCreateIndex(b, loc, rhs));
  createRuntimeAssert(b, loc, eq, message);
  return success();
}

//===----------------------------------------------------------------------===//
// Broadcasting elementwise ops
//===----------------------------------------------------------------------===//

/// True when operand dimension `size` broadcasts against result dimension
/// `resultSize` under the static rule.
static bool isBroadcastDim(int64_t size, int64_t resultSize) {
  return size == 1 && resultSize != 1;
}

AffineMap mlir::seq::getBroadcastMap(MLIRContext *ctx,
                                     ArrayRef<int64_t> operandShape,
                                     ArrayRef<int64_t> resultShape) {
  int64_t offset = resultShape.size() - operandShape.size();
  SmallVector<AffineExpr> results;
  for (auto [k, size] : llvm::enumerate(operandShape)) {
    int64_t j = offset + k;
    results.push_back(isBroadcastDim(size, resultShape[j])
                          ? getAffineConstantExpr(0, ctx)
                          : getAffineDimExpr(j, ctx));
  }
  return AffineMap::get(resultShape.size(), 0, results, ctx);
}

std::pair<Value, AffineMap>
mlir::seq::readBroadcastOperand(OpBuilder &b, Location loc, Value operand,
                                RankedTensorType resultType) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(operand.getType());
  int64_t rank = type.getRank(), offset = resultType.getRank() - rank;
  SmallVector<ReassociationIndices> groups;
  SmallVector<AffineExpr> exprs;
  ReassociationIndices pending;
  for (int64_t i = 0; i < rank; ++i) {
    pending.push_back(i);
    if (type.getDimSize(i) == 1)
      continue;
    groups.push_back(pending);
    pending.clear();
    exprs.push_back(getAffineDimExpr(offset + i, ctx));
  }
  if (groups.empty() || static_cast<int64_t>(groups.size()) == rank)
    return {operand,
            getBroadcastMap(ctx, type.getShape(), resultType.getShape())};
  // Trailing unit dimensions join the last kept one.
  llvm::append_range(groups.back(), pending);
  Value collapsed = tensor::CollapseShapeOp::create(b, loc, operand, groups);
  return {collapsed, AffineMap::get(resultType.getRank(), 0, exprs, ctx)};
}

FailureOr<SmallVector<OpFoldResult>>
mlir::seq::computeBroadcastSizes(OpBuilder &b, Operation *op,
                                 ValueRange operands,
                                 RankedTensorType resultType) {
  // Reject rank mismatches before creating the tensor.dim ops below.
  for (Value operand : operands) {
    int64_t rank = cast<RankedTensorType>(operand.getType()).getRank();
    if (rank > resultType.getRank())
      return op->emitOpError("cannot broadcast an operand of rank ")
             << rank << " to a result of rank " << resultType.getRank();
  }
  // tensor.dim ops of unused dimensions fold away.
  SmallVector<SmallVector<OpFoldResult>> operandSizes;
  for (Value operand : operands)
    operandSizes.push_back(tensor::getMixedSizes(b, op->getLoc(), operand));
  return computeBroadcastSizes(b, op, operandSizes, resultType.getShape());
}

FailureOr<SmallVector<OpFoldResult>> mlir::seq::computeBroadcastSizes(
    OpBuilder &b, Operation *op,
    ArrayRef<SmallVector<OpFoldResult>> operandSizes,
    ArrayRef<int64_t> resultShape) {
  Location loc = op->getLoc();
  int64_t rank = resultShape.size();

  // Check everything statically before creating any IR, so that a failure
  // leaves the function untouched.
  for (ArrayRef<OpFoldResult> sizes : operandSizes) {
    SmallVector<int64_t> shape = getStaticShape(sizes);
    if (static_cast<int64_t>(shape.size()) > rank)
      return op->emitOpError("cannot broadcast an operand of rank ")
             << shape.size() << " to a result of rank " << rank;
    int64_t offset = rank - shape.size();
    for (auto [k, size] : llvm::enumerate(shape)) {
      int64_t resultSize = resultShape[offset + k];
      if (ShapedType::isStatic(size) && ShapedType::isStatic(resultSize) &&
          size != resultSize && !isBroadcastDim(size, resultSize))
        return op->emitOpError("cannot broadcast dimension of size ")
               << size << " to size " << resultSize;
    }
  }

  // Pick, for each dynamic result dimension, the first operand dimension
  // that does not broadcast; without one the dimension is 1.
  SmallVector<OpFoldResult> sizes;
  for (int64_t j = 0; j < rank; ++j) {
    if (ShapedType::isStatic(resultShape[j])) {
      sizes.push_back(b.getIndexAttr(resultShape[j]));
      continue;
    }
    OpFoldResult size = b.getIndexAttr(1);
    for (ArrayRef<OpFoldResult> operand : operandSizes) {
      int64_t k = j - (rank - operand.size());
      if (k < 0 ||
          isBroadcastDim(getStaticShape(operand[k])[0], resultShape[j]))
        continue;
      size = operand[k];
      break;
    }
    sizes.push_back(size);
  }

  // Dynamic operand dimensions never broadcast: check that they agree.
  for (ArrayRef<OpFoldResult> operand : operandSizes) {
    int64_t offset = rank - operand.size();
    for (auto [k, size] : llvm::enumerate(operand)) {
      int64_t j = offset + k;
      int64_t staticSize = getStaticShape(size)[0];
      if (isBroadcastDim(staticSize, resultShape[j]))
        continue;
      if (ShapedType::isStatic(staticSize) &&
          ShapedType::isStatic(resultShape[j]))
        continue;
      (void)assertEqualSizes(b, loc, size, sizes[j],
                             "dynamic dimension does not broadcast: sizes "
                             "must agree at run time");
    }
  }
  return sizes;
}

FailureOr<Value> mlir::seq::buildElementwise(OpBuilder &b, Operation *op,
                                             RankedTensorType resultType,
                                             ValueRange inputs,
                                             ScalarBuilderFn body) {
  Location loc = op->getLoc();
  FailureOr<SmallVector<OpFoldResult>> sizes =
      computeBroadcastSizes(b, op, inputs, resultType);
  if (failed(sizes))
    return failure();
  SmallVector<Value> reads;
  SmallVector<AffineMap> maps;
  for (Value input : inputs) {
    auto [read, map] = readBroadcastOperand(b, loc, input, resultType);
    reads.push_back(read);
    maps.push_back(map);
  }
  maps.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  Value init = createEmptyTensor(b, loc, *sizes, resultType.getElementType());
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), reads, init, maps,
      getIteratorTypes(resultType.getRank()),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value result = body(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, result);
      });
  return castToType(b, loc, generic.getResult(0), resultType);
}

//===----------------------------------------------------------------------===//
// Shared numerics
//===----------------------------------------------------------------------===//

Value mlir::seq::createFastExp(OpBuilder &b, Location loc, Value x) {
  auto exp = math::ExpOp::create(b, loc, x);
  exp->setAttr(kFastExpAttrName, b.getUnitAttr());
  return exp;
}

Value mlir::seq::createShiftMax(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MaximumFOp::create(
      b, loc, x, y, arith::FastMathFlags::nnan | arith::FastMathFlags::nsz);
}

Value mlir::seq::createSafeMax(OpBuilder &b, Location loc, Value max) {
  Value zero = createFloatConstant(b, loc, max.getType(), 0.0);
  Value ninf = createInfinity(b, loc, max.getType(), /*negative=*/true);
  Value isNegInf =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, max, ninf);
  return arith::SelectOp::create(b, loc, isNegInf, zero, max);
}

Value mlir::seq::buildSafeSoftmax(OpBuilder &b, Location loc, Value input,
                                  int64_t axis) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(input.getType());
  Type elementType = type.getElementType();
  Type computeType = getComputeType(elementType);
  int64_t rank = type.getRank();

  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, input);
  SmallVector<OpFoldResult> rowSizes(sizes);
  rowSizes.erase(rowSizes.begin() + axis);
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap rowMap = getProjectionMap(ctx, rank, {axis});

  Value rowMax = buildShiftMax(b, loc, input, axis);

  // s = sum_axis exp(x - m), with createSafeMax's m for rows of only -inf.
  Value zero = createFloatConstant(b, loc, computeType, 0.0);
  Value sumInit = createFilledTensor(b, loc, rowSizes, computeType, zero);
  Value rowSum = linalg::GenericOp::create(
                     b, loc, sumInit.getType(), ValueRange{input, rowMax},
                     sumInit, ArrayRef<AffineMap>{identity, rowMap, rowMap},
                     getIteratorTypes(rank, {axis}),
                     [&](OpBuilder &nb, Location nloc, ValueRange args) {
                       Value x = convertScalar(nb, nloc, args[0], computeType);
                       Value shifted = arith::SubFOp::create(
                           nb, nloc, x, createSafeMax(nb, nloc, args[1]));
                       Value e = createFastExp(nb, nloc, shifted);
                       Value sum = arith::AddFOp::create(nb, nloc, e, args[2]);
                       linalg::YieldOp::create(nb, nloc, sum);
                     })
                     .getResult(0);

  // out = s > 0 ? exp(x - m) / s : 0.
  Value outInit = createEmptyTensor(b, loc, sizes, elementType);
  return linalg::GenericOp::create(
             b, loc, outInit.getType(), ValueRange{input, rowMax, rowSum},
             outInit, ArrayRef<AffineMap>{identity, rowMap, rowMap, identity},
             getIteratorTypes(rank),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value x = convertScalar(nb, nloc, args[0], computeType);
               Value shifted = arith::SubFOp::create(
                   nb, nloc, x, createSafeMax(nb, nloc, args[1]));
               Value e = createFastExp(nb, nloc, shifted);
               Value p = arith::DivFOp::create(nb, nloc, e, args[2]);
               Value zero = createFloatConstant(nb, nloc, computeType, 0.0);
               Value positive = arith::CmpFOp::create(
                   nb, nloc, arith::CmpFPredicate::OGT, args[2], zero);
               Value result =
                   arith::SelectOp::create(nb, nloc, positive, p, zero);
               linalg::YieldOp::create(
                   nb, nloc, convertScalar(nb, nloc, result, elementType));
             })
      .getResult(0);
}

Value mlir::seq::buildShiftMax(OpBuilder &b, Location loc, Value input,
                               int64_t axis) {
  auto type = cast<RankedTensorType>(input.getType());
  Type computeType = getComputeType(type.getElementType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> rowSizes = tensor::getMixedSizes(b, loc, input);
  rowSizes.erase(rowSizes.begin() + axis);
  Value negInf = createInfinity(b, loc, computeType, /*negative=*/true);
  Value init = createFilledTensor(b, loc, rowSizes, computeType, negInf);
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap rowMap = getProjectionMap(b.getContext(), rank, {axis});
  return linalg::GenericOp::create(
             b, loc, init.getType(), input, init,
             ArrayRef<AffineMap>{identity, rowMap},
             getIteratorTypes(rank, {axis}),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value x = convertScalar(nb, nloc, args[0], computeType);
               linalg::YieldOp::create(nb, nloc,
                                       createShiftMax(nb, nloc, x, args[1]));
             })
      .getResult(0);
}

Value mlir::seq::buildRowScale(OpBuilder &b, Location loc, Value x,
                               Value rowSum, Value init, int64_t axis) {
  auto rowType = cast<RankedTensorType>(rowSum.getType());
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  AffineMap rows = b.getMultiDimIdentityMap(rowType.getRank());
  Value inverse = buildGeneric(
      b, loc, rowSum,
      createEmptyTensor(b, loc, tensor::getMixedSizes(b, loc, rowSum),
                        rowType.getElementType()),
      {rows, rows}, getIteratorTypes(rowType.getRank()),
      [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value one = createFloatConstant(nb, nloc, args[0].getType(), 1.0);
        return arith::DivFOp::create(nb, nloc, one, args[0]);
      });
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap rowMap = getProjectionMap(b.getContext(), rank, {axis});
  // In place when `init` is `x`: `x` is then read as the output.
  SmallVector<Value> inputs = {rowSum, inverse};
  SmallVector<AffineMap> maps = {rowMap, rowMap, identity};
  if (x != init) {
    inputs.push_back(x);
    maps.push_back(identity);
  }
  return buildGeneric(
      b, loc, inputs, init, maps, getIteratorTypes(rank),
      [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value zero = createFloatConstant(nb, nloc, args[0].getType(), 0.0);
        Value positive = arith::CmpFOp::create(
            nb, nloc, arith::CmpFPredicate::OGT, args[0], zero);
        Value scaled = arith::MulFOp::create(nb, nloc, args[2], args[1]);
        return arith::SelectOp::create(nb, nloc, positive, scaled, zero);
      });
}

std::pair<Value, Value> mlir::seq::buildExpsAndSums(OpBuilder &b, Location loc,
                                                    Value input, Value rowMax,
                                                    Value expsInit,
                                                    int64_t axis) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  Type t = type.getElementType();
  auto rowType = cast<RankedTensorType>(rowMax.getType());
  SmallVector<OpFoldResult> rowSizes = tensor::getMixedSizes(b, loc, rowMax);
  Value sumInit = createFilledTensor(b, loc, rowSizes, t,
                                     createFloatConstant(b, loc, t, 0.0));
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap rowMap = getProjectionMap(b.getContext(), rank, {axis});
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{expsInit.getType(), rowType}, ValueRange{input, rowMax},
      ValueRange{expsInit, sumInit},
      ArrayRef<AffineMap>{identity, rowMap, identity, rowMap},
      getIteratorTypes(rank, {axis}),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value shifted = arith::SubFOp::create(nb, nloc, args[0],
                                              createSafeMax(nb, nloc, args[1]));
        Value e = createFastExp(nb, nloc, shifted);
        Value sum = arith::AddFOp::create(nb, nloc, e, args[3]);
        linalg::YieldOp::create(nb, nloc, ValueRange{e, sum});
      });
  return {generic.getResult(0), generic.getResult(1)};
}

Value mlir::seq::buildMaskPredicate(OpBuilder &b, Location loc, MaskAttr mask,
                                    Value i, Value j, Value length) {
  Value allowed;
  auto conjoin = [&](Value cond) {
    allowed = allowed ? arith::AndIOp::create(b, loc, allowed, cond).getResult()
                      : cond;
  };
  // Signed: with query offsets, a query may sit at a negative position.
  if (mask && mask.getCausal())
    conjoin(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, j, i));
  if (mask && mask.getWindow() > 0) {
    // |i - j| < window as the larger minus the smaller (positions are far
    // from the index type's limits).
    Value hi = arith::MaxSIOp::create(b, loc, i, j);
    Value lo = arith::MinSIOp::create(b, loc, i, j);
    Value distance = arith::SubIOp::create(b, loc, hi, lo);
    Value window = createIndexConstant(b, loc, mask.getWindow());
    Value inWindow = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           distance, window);
    if (int64_t global = mask.getGlobalTokens()) {
      Value numGlobal = createIndexConstant(b, loc, global);
      // Unsigned: the global positions are 0 .. global - 1, never a
      // negative one.
      Value queryGlobal = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ult, i, numGlobal);
      Value keyGlobal = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              j, numGlobal);
      inWindow = arith::OrIOp::create(b, loc, inWindow, queryGlobal);
      inWindow = arith::OrIOp::create(b, loc, inWindow, keyGlobal);
    }
    conjoin(inWindow);
  }
  if (length) {
    // Lengths are signed integers: a negative length hides every key.
    conjoin(
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, j, length));
  }
  return allowed;
}

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

LogicalResult mlir::seq::emitLoweringError(PatternRewriter &rewriter,
                                           Operation *op,
                                           const Twine &message) {
  op->emitOpError("cannot be lowered to linalg: ") << message;
  return rewriter.notifyMatchFailure(op, message);
}

LogicalResult mlir::seq::declineFastForm(Operation *op, bool remarks,
                                         const Twine &fallback,
                                         const Twine &why) {
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << op->getName() << " at "
                          << op->getLoc() << ": " << fallback << ": " << why
                          << "\n");
  if (remarks)
    op->emitRemark() << fallback << ": " << why;
  return failure();
}

//===----------------------------------------------------------------------===//
// Structured ops and slices
//===----------------------------------------------------------------------===//

AffineMap mlir::seq::getDimsMap(MLIRContext *ctx, unsigned numDims,
                                ArrayRef<int64_t> targets) {
  SmallVector<AffineExpr> results;
  for (int64_t target : targets)
    results.push_back(target == kUnitDim ? getAffineConstantExpr(0, ctx)
                                         : getAffineDimExpr(target, ctx));
  return AffineMap::get(numDims, 0, results, ctx);
}

Value mlir::seq::buildGeneric(OpBuilder &b, Location loc, ValueRange inputs,
                              Value init, ArrayRef<AffineMap> maps,
                              ArrayRef<utils::IteratorType> iterators,
                              GenericBodyFn body) {
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
             iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(nb, nloc, body(nb, nloc, args));
             })
      .getResult(0);
}

/// Offsets, sizes and strides of the slice [offset, offset + length) along
/// `dim` of a tensor of `sizes`.
static void getSliceAt(OpBuilder &b, ArrayRef<OpFoldResult> sizes, int64_t dim,
                       OpFoldResult offset, OpFoldResult length,
                       SmallVectorImpl<OpFoldResult> &offsets,
                       SmallVectorImpl<OpFoldResult> &sliceSizes,
                       SmallVectorImpl<OpFoldResult> &strides) {
  offsets.assign(sizes.size(), b.getIndexAttr(0));
  sliceSizes.assign(sizes.begin(), sizes.end());
  strides.assign(sizes.size(), b.getIndexAttr(1));
  offsets[dim] = offset;
  sliceSizes[dim] = length;
}

Value mlir::seq::extractSliceAt(OpBuilder &b, Location loc, Value source,
                                ArrayRef<OpFoldResult> sizes, int64_t dim,
                                Value index) {
  return extractSliceRange(b, loc, source, sizes, dim, index,
                           b.getIndexAttr(1));
}

Value mlir::seq::insertSliceAt(OpBuilder &b, Location loc, Value slice,
                               Value dest, ArrayRef<OpFoldResult> sizes,
                               int64_t dim, Value index) {
  return insertSliceRange(b, loc, slice, dest, sizes, dim, index,
                          b.getIndexAttr(1));
}

Value mlir::seq::extractSliceRange(OpBuilder &b, Location loc, Value source,
                                   ArrayRef<OpFoldResult> sizes, int64_t dim,
                                   OpFoldResult offset, OpFoldResult length) {
  SmallVector<OpFoldResult> offsets, sliceSizes, strides;
  getSliceAt(b, sizes, dim, offset, length, offsets, sliceSizes, strides);
  return tensor::ExtractSliceOp::create(b, loc, source, offsets, sliceSizes,
                                        strides);
}

Value mlir::seq::insertSliceRange(OpBuilder &b, Location loc, Value slice,
                                  Value dest, ArrayRef<OpFoldResult> sizes,
                                  int64_t dim, OpFoldResult offset,
                                  OpFoldResult length) {
  SmallVector<OpFoldResult> offsets, sliceSizes, strides;
  getSliceAt(b, sizes, dim, offset, length, offsets, sliceSizes, strides);
  return tensor::InsertSliceOp::create(b, loc, slice, dest, offsets, sliceSizes,
                                       strides);
}
