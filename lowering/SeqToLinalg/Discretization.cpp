//===- Discretization.cpp - discretize seq.ssm in linalg ------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The first stage of `seq.ssm`: the continuous `(A, B)` become `(Ab, Bb)`
// once per call, in f64 (it is O(N^3) work, cheap next to the O(L H N^2)
// scan, and f64 keeps the f32 result exact to the last bit in practice):
//   zoh:      exp(step [[A, I], [0, 0]]) = [[Ab, M], [0, I]], Bb_h = M B_h,
//             by scaling and squaring a degree-14 Taylor series, so a
//             singular A is fine (no A^-1);
//   bilinear: (I - step/2 A) [Ab | Bb^T] = [I + step/2 A | step B^T], solved
//             by Gaussian elimination with partial pivoting.
// The loops follow the in-place rules of StateSpace.cpp.
//
//===----------------------------------------------------------------------===//

#include "lowering/SeqToLinalg/StateSpace.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::seq;
using namespace mlir::seq::statespace;

using utils::IteratorType;

//===----------------------------------------------------------------------===//
// Builders
//===----------------------------------------------------------------------===//

/// `lhs + rhs`, folded when both are constants.
static OpFoldResult addSizes(OpBuilder &b, Location loc, OpFoldResult lhs,
                             OpFoldResult rhs) {
  std::optional<int64_t> lhsConst = getConstantIntValue(lhs);
  std::optional<int64_t> rhsConst = getConstantIntValue(rhs);
  if (lhsConst && rhsConst)
    return b.getIndexAttr(*lhsConst + *rhsConst);
  return arith::AddIOp::create(b, loc, getValueOrCreateIndex(b, loc, lhs),
                               getValueOrCreateIndex(b, loc, rhs))
      .getResult();
}

/// The `n x n` identity matrix.
static Value buildIdentity(OpBuilder &b, Location loc, OpFoldResult n,
                           Type elementType) {
  Value one = createFloatConstant(b, loc, elementType, 1.0);
  Value zero = createFloatConstant(b, loc, elementType, 0.0);
  Value init = createEmptyTensor(b, loc, {n, n}, elementType);
  return buildMap(
      b, loc, {}, init, [&](OpBuilder &nb, Location nloc, ValueRange) -> Value {
        Value i = linalg::IndexOp::create(nb, nloc, 0);
        Value j = linalg::IndexOp::create(nb, nloc, 1);
        Value diagonal =
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq, i, j);
        return arith::SelectOp::create(nb, nloc, diagonal, one, zero);
      });
}

/// The element type discretization is carried out in: f64, or the element
/// type itself when it is wider.
Type statespace::getDiscretizationType(Type elementType) {
  if (elementType.getIntOrFloatBitWidth() > 64)
    return elementType;
  return Float64Type::get(elementType.getContext());
}

//===----------------------------------------------------------------------===//
// Zero-order hold
//===----------------------------------------------------------------------===//

/// Degree of the Taylor polynomial of the scaled augmented matrix, and the
/// bound on its 1-norm that the scaling guarantees. With theta = 1/2,
/// theta^14 / 15! < 2^-53: the truncation (a relative backward error of the
/// scaled exponential, which squaring preserves) is below f64 rounding.
static constexpr int64_t kTaylorDegree = 14;
static constexpr double kScaledNormBound = 0.5;

/// The number of squarings `s` (an `index`) that brings
/// `||step E||_1 / 2^s` below `kScaledNormBound`, and the scaled step
/// `tau = step / 2^s`, for `E = [[A, I], [0, 0]]`. The 1-norm of E is
/// `max(||A||_1, 1)` (the identity block has unit columns).
static std::pair<Value, Value> computeScaling(OpBuilder &b, Location loc,
                                              Value a, double step) {
  MLIRContext *ctx = b.getContext();
  Type t = cast<RankedTensorType>(a.getType()).getElementType();
  OpFoldResult n = tensor::getMixedSize(b, loc, a, 0);

  // ||A||_1 = max_j sum_i |A[i, j]|.
  Value columnSums = buildGeneric(
      b, loc, a, fillWith(b, loc, createEmptyTensor(b, loc, {n}, t), 0.0),
      {getDimsMap(ctx, 2, {0, 1}), getDimsMap(ctx, 2, {1})},
      {IteratorType::reduction, IteratorType::parallel},
      [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value magnitude = math::AbsFOp::create(nb, nloc, args[0]);
        return arith::AddFOp::create(nb, nloc, args[1], magnitude);
      });
  Value maxSum = buildGeneric(
      b, loc, columnSums,
      fillWith(b, loc, createEmptyTensor(b, loc, {}, t), 0.0),
      {getDimsMap(ctx, 1, {0}), AffineMap::get(1, 0, {}, ctx)},
      {IteratorType::reduction},
      [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return arith::MaxNumFOp::create(nb, nloc, args[0], args[1]);
      });
  Value normA = tensor::ExtractOp::create(b, loc, maxSum, ValueRange{});

  // s = clamp(ceil(log2(step ||E||_1 / theta)), 0, 1100). maxnumf maps a NaN
  // norm to 0 squarings; 1100 covers every finite f64 norm.
  Value normE = arith::MaxNumFOp::create(b, loc, normA,
                                         createFloatConstant(b, loc, t, 1.0));
  Value ratio = arith::MulFOp::create(
      b, loc, normE, createFloatConstant(b, loc, t, step / kScaledNormBound));
  Value squarings =
      math::CeilOp::create(b, loc, math::Log2Op::create(b, loc, ratio));
  squarings = arith::MaxNumFOp::create(b, loc, squarings,
                                       createFloatConstant(b, loc, t, 0.0));
  squarings = arith::MinNumFOp::create(b, loc, squarings,
                                       createFloatConstant(b, loc, t, 1100.0));
  Value count =
      convertScalar(b, loc, convertScalar(b, loc, squarings, b.getI64Type()),
                    b.getIndexType());

  // tau = step * 2^-s.
  Value scale =
      math::Exp2Op::create(b, loc, arith::NegFOp::create(b, loc, squarings));
  Value tau = arith::MulFOp::create(b, loc, scale,
                                    createFloatConstant(b, loc, t, step));
  return {count, tau};
}

/// Zero-order hold: `[[Ab, M], [0, I]] = exp(step [[A, I], [0, 0]])` and
/// `Bb_h = M B_h`, i.e. `M = int_0^step exp(s A) ds`, without inverting A.
///
/// Every power and product of block matrices `[[P, Q], [0, I]]` keeps that
/// form, so the 2N x 2N exponential is carried as its two top blocks:
/// - Taylor, with `X = tau A`:
///   `P = sum_{k<=m} X^k / k!`, `Q = tau sum_{1<=k<=m} X^{k-1} / k!`;
/// - squaring: `[[P, Q], [0, I]]^2 = [[P P, P Q + Q], [0, I]]`, s times.
DiscreteSystem statespace::discretizeZoh(OpBuilder &b, Location loc, Value a,
                                         Value bMat, double step) {
  MLIRContext *ctx = b.getContext();
  Type t = cast<RankedTensorType>(a.getType()).getElementType();
  OpFoldResult n = tensor::getMixedSize(b, loc, a, 0);
  Value squarings, tau;
  std::tie(squarings, tau) = computeScaling(b, loc, a, step);

  Value x = buildMap(
      b, loc, a, createEmptyTensor(b, loc, {n, n}, t),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        return arith::MulFOp::create(nb, nloc, args[0], tau).getResult();
      });
  Value identity = buildIdentity(b, loc, n, t);
  Value zeros = fillWith(b, loc, createEmptyTensor(b, loc, {n, n}, t), 0.0);
  Value scratch = createEmptyTensor(b, loc, {n, n}, t);

  // Taylor terms k = 1..m, carrying (X^{k-1}, 1/(k-1)!, P, Q, scratch).
  // The powers are carried without the factorial (||X|| <= 1/2 keeps them
  // bounded) so that every update below either is a named op or reads its
  // destination; see the file comment.
  Value one = createIndexConstant(b, loc, 1);
  Value taylorEnd = createIndexConstant(b, loc, kTaylorDegree + 1);
  auto taylor = scf::ForOp::create(
      b, loc, one, taylorEnd, one,
      ValueRange{identity, createFloatConstant(b, loc, t, 1.0), identity, zeros,
                 scratch},
      [&](OpBuilder &nb, Location nloc, Value k, ValueRange iterArgs) {
        Value power = iterArgs[0], p = iterArgs[2], q = iterArgs[3];
        // 1/k! = 1/(k-1)! / k.
        Value inverseFactorial = arith::DivFOp::create(
            nb, nloc, iterArgs[1], convertScalar(nb, nloc, k, t));
        // Q += tau X^{k-1} / k!.
        Value qCoefficient =
            arith::MulFOp::create(nb, nloc, tau, inverseFactorial);
        q = buildMap(
            nb, nloc, power, q,
            [&](OpBuilder &bb, Location bl, ValueRange args) {
              Value scaled =
                  arith::MulFOp::create(bb, bl, qCoefficient, args[0]);
              return arith::AddFOp::create(bb, bl, args[1], scaled).getResult();
            });
        // X^k = X^{k-1} X, through the scratch matrix (a product cannot be
        // written over its operand).
        Value product =
            matmulAcc(nb, nloc, power, x, fillWith(nb, nloc, iterArgs[4], 0.0));
        power = copyInto(nb, nloc, product, power);
        // P += X^k / k!.
        p = buildMap(
            nb, nloc, power, p,
            [&](OpBuilder &bb, Location bl, ValueRange args) {
              Value scaled =
                  arith::MulFOp::create(bb, bl, inverseFactorial, args[0]);
              return arith::AddFOp::create(bb, bl, args[1], scaled).getResult();
            });
        scf::YieldOp::create(
            nb, nloc, ValueRange{power, inverseFactorial, p, q, product});
      });

  // s squarings, carrying (P, Q, scratch). Only one matrix is carried
  // without being read (the scratch): one-shot bufferization may give the
  // same buffer to several such iteration arguments when their initial
  // values are the same (CSE'd) `tensor.empty`.
  Value zero = createIndexConstant(b, loc, 0);
  auto squaring = scf::ForOp::create(
      b, loc, zero, squarings, one,
      ValueRange{taylor.getResult(2), taylor.getResult(3), scratch},
      [&](OpBuilder &nb, Location nloc, Value, ValueRange iterArgs) {
        Value p = iterArgs[0], q = iterArgs[1];
        // scratch = P Q + Q; then Q = P P, so that neither product
        // overwrites one of its operands; then the two move into place.
        Value newQ =
            matmulAcc(nb, nloc, p, q, copyInto(nb, nloc, q, iterArgs[2]));
        Value square = matmulAcc(nb, nloc, p, p, fillWith(nb, nloc, q, 0.0));
        Value newP = copyInto(nb, nloc, square, p);
        scf::YieldOp::create(
            nb, nloc, ValueRange{newP, copyInto(nb, nloc, newQ, square), newQ});
      });
  Value ab = squaring.getResult(0);
  Value m = squaring.getResult(1);

  // Bb[h, i] = sum_k B[h, k] M[i, k].
  OpFoldResult h = tensor::getMixedSize(b, loc, bMat, 0);
  Value bb =
      buildGeneric(b, loc, ValueRange{bMat, m},
                   fillWith(b, loc, createEmptyTensor(b, loc, {h, n}, t), 0.0),
                   {getDimsMap(ctx, 3, {0, 2}), getDimsMap(ctx, 3, {1, 2}),
                    getDimsMap(ctx, 3, {0, 1})},
                   getIteratorTypes(3, {2}),
                   [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                     Value product =
                         arith::MulFOp::create(nb, nloc, args[0], args[1]);
                     return arith::AddFOp::create(nb, nloc, args[2], product);
                   });
  return {ab, bb};
}

//===----------------------------------------------------------------------===//
// Bilinear
//===----------------------------------------------------------------------===//

/// Row `p` of the rows `[k, n)` of `matrix` whose entry in column `k` has the
/// largest magnitude (the first one on ties), by a scalar scan.
static Value findPivotRow(OpBuilder &b, Location loc, Value matrix, Value k,
                          Value n) {
  Value one = createIndexConstant(b, loc, 1);
  Value kMagnitude = math::AbsFOp::create(
      b, loc, tensor::ExtractOp::create(b, loc, matrix, ValueRange{k, k}));
  auto scan = scf::ForOp::create(
      b, loc, arith::AddIOp::create(b, loc, k, one), n, one,
      ValueRange{k, kMagnitude},
      [&](OpBuilder &nb, Location nloc, Value i, ValueRange iterArgs) {
        Value magnitude = math::AbsFOp::create(
            nb, nloc,
            tensor::ExtractOp::create(nb, nloc, matrix, ValueRange{i, k}));
        Value better = arith::CmpFOp::create(
            nb, nloc, arith::CmpFPredicate::OGT, magnitude, iterArgs[1]);
        scf::YieldOp::create(
            nb, nloc,
            ValueRange{
                arith::SelectOp::create(nb, nloc, better, i, iterArgs[0]),
                arith::SelectOp::create(nb, nloc, better, magnitude,
                                        iterArgs[1])});
      });
  return scan.getResult(0);
}

/// One elimination step on the `[n, w]` matrix `matrix` with pivot row `k`:
/// every row `i` selected by `predicate(i, k)` becomes
/// `row_i - matrix[i, k] / matrix[k, k] * row_k`; with `normalize`, row `k`
/// itself becomes `row_k / matrix[k, k]` (the step of back substitution).
static Value eliminate(OpBuilder &b, Location loc, Value matrix, Value k,
                       ArrayRef<OpFoldResult> sizes,
                       arith::CmpIPredicate predicate, bool normalize) {
  MLIRContext *ctx = b.getContext();
  Value pivot = tensor::ExtractOp::create(b, loc, matrix, ValueRange{k, k});
  Value pivotRow = extractSliceAt(b, loc, matrix, sizes, 0, k);
  Value pivotColumn = extractSliceAt(b, loc, matrix, sizes, 1, k);
  return buildGeneric(
      b, loc, ValueRange{pivotColumn, pivotRow}, matrix,
      {getDimsMap(ctx, 2, {0, kUnitDim}), getDimsMap(ctx, 2, {kUnitDim, 1}),
       getDimsMap(ctx, 2, {0, 1})},
      getIteratorTypes(2),
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value column = args[0], row = args[1], current = args[2];
        Value i = linalg::IndexOp::create(nb, nloc, 0);
        Value factor = arith::DivFOp::create(nb, nloc, column, pivot);
        Value eliminated = arith::SubFOp::create(
            nb, nloc, current, arith::MulFOp::create(nb, nloc, factor, row));
        Value selected = arith::CmpIOp::create(nb, nloc, predicate, i, k);
        Value result =
            arith::SelectOp::create(nb, nloc, selected, eliminated, current);
        if (!normalize)
          return result;
        Value isPivotRow =
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq, i, k);
        Value normalized = arith::DivFOp::create(nb, nloc, row, pivot);
        return arith::SelectOp::create(nb, nloc, isPivotRow, normalized,
                                       result);
      });
}

/// Swaps rows `k` and `p` of `matrix`.
static Value swapRows(OpBuilder &b, Location loc, Value matrix,
                      ArrayRef<OpFoldResult> sizes, Value k, Value p) {
  Value rowK = extractSliceAt(b, loc, matrix, sizes, 0, k);
  Value rowP = extractSliceAt(b, loc, matrix, sizes, 0, p);
  matrix = insertSliceAt(b, loc, rowP, matrix, sizes, 0, k);
  return insertSliceAt(b, loc, rowK, matrix, sizes, 0, p);
}

/// Solves `L X = R` in place on the augmented matrix `[L | R]` of `[n, w]`,
/// `L` being its first n columns: Gaussian elimination with partial pivoting
/// (rows swapped so that the pivot has the largest magnitude in its column),
/// then back substitution. The last `w - n` columns then hold X. A singular L
/// gives infinities, as a division by a zero pivot does.
static Value solveInPlace(OpBuilder &b, Location loc, Value augmented) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, augmented);
  Value n = getValueOrCreateIndex(b, loc, sizes[0]);
  Value zero = createIndexConstant(b, loc, 0);
  Value one = createIndexConstant(b, loc, 1);

  // Forward elimination: zero the column below each pivot.
  auto forward = scf::ForOp::create(
      b, loc, zero, n, one, ValueRange{augmented},
      [&](OpBuilder &nb, Location nloc, Value k, ValueRange iterArgs) {
        Value p = findPivotRow(nb, nloc, iterArgs[0], k, n);
        Value swapped = swapRows(nb, nloc, iterArgs[0], sizes, k, p);
        Value reduced =
            eliminate(nb, nloc, swapped, k, sizes, arith::CmpIPredicate::ugt,
                      /*normalize=*/false);
        scf::YieldOp::create(nb, nloc, reduced);
      });

  // Back substitution, pivots from the last: normalize row k, then zero the
  // column above it.
  auto backward = scf::ForOp::create(
      b, loc, zero, n, one, ValueRange{forward.getResult(0)},
      [&](OpBuilder &nb, Location nloc, Value iv, ValueRange iterArgs) {
        Value last = arith::SubIOp::create(nb, nloc, n, one);
        Value k = arith::SubIOp::create(nb, nloc, last, iv);
        Value reduced = eliminate(nb, nloc, iterArgs[0], k, sizes,
                                  arith::CmpIPredicate::ult,
                                  /*normalize=*/true);
        scf::YieldOp::create(nb, nloc, reduced);
      });
  return backward.getResult(0);
}

/// Bilinear (Tustin): `Ab = (I - step/2 A)^-1 (I + step/2 A)` and
/// `Bb = (I - step/2 A)^-1 step B`, from one solve of
/// `(I - step/2 A) [Ab | Bb^T] = [I + step/2 A | step B^T]`.
DiscreteSystem statespace::discretizeBilinear(OpBuilder &b, Location loc,
                                              Value a, Value bMat,
                                              double step) {
  MLIRContext *ctx = b.getContext();
  Type t = cast<RankedTensorType>(a.getType()).getElementType();
  OpFoldResult n = tensor::getMixedSize(b, loc, a, 0);
  OpFoldResult h = tensor::getMixedSize(b, loc, bMat, 0);

  Value one = createFloatConstant(b, loc, t, 1.0);
  Value zero = createFloatConstant(b, loc, t, 0.0);
  auto identityPlus = [&](double factor) {
    Value scale = createFloatConstant(b, loc, t, factor);
    return buildMap(
        b, loc, a, createEmptyTensor(b, loc, {n, n}, t),
        [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          Value i = linalg::IndexOp::create(nb, nloc, 0);
          Value j = linalg::IndexOp::create(nb, nloc, 1);
          Value diagonal =
              arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq, i, j);
          Value delta = arith::SelectOp::create(nb, nloc, diagonal, one, zero);
          Value scaled = arith::MulFOp::create(nb, nloc, scale, args[0]);
          return arith::AddFOp::create(nb, nloc, delta, scaled);
        });
  };
  Value lhs = identityPlus(-step / 2);
  Value rhs = identityPlus(step / 2);
  Value stepValue = createFloatConstant(b, loc, t, step);
  Value scaledBT =
      buildGeneric(b, loc, bMat, createEmptyTensor(b, loc, {n, h}, t),
                   {getDimsMap(ctx, 2, {1, 0}), getDimsMap(ctx, 2, {0, 1})},
                   getIteratorTypes(2),
                   [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
                     return arith::MulFOp::create(nb, nloc, stepValue, args[0]);
                   });

  // [lhs | rhs | step B^T], of width 2N + H (static when N and H are).
  OpFoldResult twoN = addSizes(b, loc, n, n);
  OpFoldResult width = addSizes(b, loc, twoN, h);
  Value augmented = createEmptyTensor(b, loc, {n, width}, t);
  OpFoldResult zeroIndex = b.getIndexAttr(0);
  OpFoldResult unit = b.getIndexAttr(1);
  auto place = [&](Value block, OpFoldResult column, OpFoldResult columns) {
    augmented = tensor::InsertSliceOp::create(b, loc, block, augmented,
                                              {zeroIndex, column}, {n, columns},
                                              {unit, unit});
  };
  place(lhs, zeroIndex, n);
  place(rhs, n, n);
  place(scaledBT, twoN, h);

  Value solution = solveInPlace(b, loc, augmented);
  Value ab = tensor::ExtractSliceOp::create(b, loc, solution, {zeroIndex, n},
                                            {n, n}, {unit, unit});
  Value bbT = tensor::ExtractSliceOp::create(
      b, loc, solution, {zeroIndex, twoN}, {n, h}, {unit, unit});
  Value bb = linalg::TransposeOp::create(b, loc, bbT,
                                         createEmptyTensor(b, loc, {h, n}, t),
                                         ArrayRef<int64_t>{1, 0})
                 .getResult()[0];
  return {ab, bb};
}
