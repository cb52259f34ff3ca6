//===- StateSpace.cpp - lower the state-space family to linalg ------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Lowers `seq.hippo`, `seq.ssm`, `seq.selective_scan` and `seq.conv1d` to
// linalg, tensor, arith, math and scf on tensors.
//
// - `seq.hippo` (when not folded) becomes two dense constants.
// - `seq.ssm` is lowered in two stages. Discretization turns the continuous
//   `(A, B)` into `(Ab, Bb)` once per call, in f64 (it is O(N^3) work, cheap
//   next to the O(L H N^2) scan, and f64 keeps the f32 result exact to the
//   last bit in practice):
//     zoh:      exp(step [[A, I], [0, 0]]) = [[Ab, M], [0, I]], Bb_h = M B_h,
//               by scaling and squaring a degree-14 Taylor series, so a
//               singular A is fine (no A^-1);
//     bilinear: (I - step/2 A) [Ab | Bb^T] = [I + step/2 A | step B^T], solved
//               by Gaussian elimination with partial pivoting.
//   The scan then runs `x_t = Ab x_{t-1} + Bb u_t`, `y_t = C x_t` as an
//   `scf.for` over L that carries the state `[batch, H, N]` (`Ab x` is one
//   `linalg.matmul` per step over all batch rows and channels), and a final
//   parallel op adds `D u`.
// - `seq.selective_scan` computes `dt` for the whole sequence in parallel,
//   then scans over L carrying the state `[batch, D, N]` (every step is one
//   elementwise update and one reduction over N, parallel over batch and
//   channels), then applies `D u` and the `silu(z)` gate in parallel.
// - `seq.conv1d` pads the sequence on the left by K-1 and runs
//   `linalg.depthwise_conv_1d_nwc_wc`.
//
// Loop-carried tensors are only ever updated in place: every per-step op
// writes into an iteration argument (or a slice of one) and is either a named
// op (fill, copy, matmul) or a generic that reads its destination, and every
// `scf.yield` operand is the update of the matching iteration argument. This
// survives linalg's elementwise fusion patterns (which replace an unread
// destination by a `tensor.empty`) and lets one-shot bufferization allocate
// the state once instead of once per step. At most one iteration argument
// per loop is written before it is read (a scratch matrix or state).
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/IR/SeqOps.h"
#include "lowering/SeqToLinalg/Patterns.h"
#include "lowering/SeqToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::seq;

using utils::IteratorType;

//===----------------------------------------------------------------------===//
// Local builders
//===----------------------------------------------------------------------===//

/// An elementwise `linalg.generic` over tensors of the same shape, writing
/// into `init` (which the body sees as its last argument).
static Value buildMap(OpBuilder &b, Location loc, ValueRange inputs, Value init,
                      GenericBodyFn body) {
  int64_t rank = cast<RankedTensorType>(init.getType()).getRank();
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              b.getMultiDimIdentityMap(rank));
  return buildGeneric(b, loc, inputs, init, maps, getIteratorTypes(rank), body);
}

/// `value` with every element converted to `elementType` (no op when it
/// already has it).
static Value convertElements(OpBuilder &b, Location loc, Value value,
                             Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == elementType)
    return value;
  Value init = createEmptyTensor(b, loc, tensor::getMixedSizes(b, loc, value),
                                 elementType);
  return buildMap(b, loc, value, init,
                  [&](OpBuilder &nb, Location nloc, ValueRange args) {
                    return convertScalar(nb, nloc, args[0], elementType);
                  });
}

/// `linalg.fill` of `init` with the float `value`.
static Value fillWith(OpBuilder &b, Location loc, Value init, double value) {
  Type elementType = cast<RankedTensorType>(init.getType()).getElementType();
  Value scalar = createFloatConstant(b, loc, elementType, value);
  return linalg::FillOp::create(b, loc, ValueRange{scalar}, ValueRange{init})
      .getResult(0);
}

/// `acc + lhs * rhs` for square matrices, as `linalg.matmul`.
static Value matmulAcc(OpBuilder &b, Location loc, Value lhs, Value rhs,
                       Value acc) {
  return linalg::MatmulOp::create(b, loc, TypeRange{acc.getType()},
                                  ValueRange{lhs, rhs}, ValueRange{acc})
      .getResult(0);
}

/// `linalg.copy` of `source` into `dest`.
static Value copyInto(OpBuilder &b, Location loc, Value source, Value dest) {
  return linalg::CopyOp::create(b, loc, TypeRange{dest.getType()},
                                ValueRange{source}, ValueRange{dest})
      .getResult(0);
}

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

/// `x * sigmoid(x)`, as `torch.nn.functional.silu` computes it.
static Value buildSilu(OpBuilder &b, Location loc, Value x) {
  Value one = createFloatConstant(b, loc, x.getType(), 1.0);
  Value negX = arith::NegFOp::create(b, loc, x);
  Value denominator =
      arith::AddFOp::create(b, loc, one, math::ExpOp::create(b, loc, negX));
  return arith::DivFOp::create(b, loc, x, denominator);
}

/// `log(1 + exp(x))`, or `x` above the threshold 20, as
/// `torch.nn.functional.softplus` with its defaults (beyond 20 the log term
/// is below f32 rounding, and exp would eventually overflow).
static Value buildSoftplus(OpBuilder &b, Location loc, Value x) {
  Value threshold = createFloatConstant(b, loc, x.getType(), 20.0);
  Value large =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, threshold);
  Value smooth = math::Log1pOp::create(b, loc, math::ExpOp::create(b, loc, x));
  return arith::SelectOp::create(b, loc, large, x, smooth);
}

/// The element type discretization is carried out in: f64, or the element
/// type itself when it is wider.
static Type getDiscretizationType(Type elementType) {
  if (elementType.getIntOrFloatBitWidth() > 64)
    return elementType;
  return Float64Type::get(elementType.getContext());
}

//===----------------------------------------------------------------------===//
// seq.hippo
//===----------------------------------------------------------------------===//

namespace {
/// Materializes the HiPPO-LegS matrices as constants, for the rare case where
/// the folder did not run (e.g. `--convert-seq-to-linalg` alone).
struct HippoOpLowering : public OpRewritePattern<HippoOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(HippoOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType aType = op.getA().getType();
    RankedTensorType bType = op.getB().getType();
    if (!aType.hasStaticShape() || !bType.hasStaticShape() ||
        aType.getRank() != 2 || bType.getNumElements() != aType.getDimSize(0))
      return emitLoweringError(rewriter, op,
                               "expected static shapes [N, N] and [N]");
    int64_t n = aType.getDimSize(0);
    const llvm::fltSemantics &semantics =
        cast<FloatType>(aType.getElementType()).getFloatSemantics();
    auto toFloat = [&](double value) {
      APFloat result(value);
      bool losesInfo;
      result.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
      return result;
    };
    SmallVector<APFloat> a(n * n, toFloat(0.0)), b;
    for (int64_t row = 0; row < n; ++row) {
      double rowScale = std::sqrt(2.0 * row + 1.0);
      b.push_back(toFloat(rowScale));
      for (int64_t col = 0; col < row; ++col)
        a[row * n + col] = toFloat(-rowScale * std::sqrt(2.0 * col + 1.0));
      a[row * n + row] = toFloat(-(row + 1.0));
    }
    Location loc = op.getLoc();
    Value aConst = arith::ConstantOp::create(rewriter, loc, aType,
                                             DenseElementsAttr::get(aType, a));
    Value bConst = arith::ConstantOp::create(rewriter, loc, bType,
                                             DenseElementsAttr::get(bType, b));
    rewriter.replaceOp(op, {aConst, bConst});
    return success();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// seq.ssm: discretization
//===----------------------------------------------------------------------===//

namespace {
/// The discrete-time system: `Ab: [N, N]`, `Bb: [H, N]`.
struct DiscreteSystem {
  Value ab;
  Value bb;
};
} // namespace

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
static DiscreteSystem discretizeZoh(OpBuilder &b, Location loc, Value a,
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
static DiscreteSystem discretizeBilinear(OpBuilder &b, Location loc, Value a,
                                         Value bMat, double step) {
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

//===----------------------------------------------------------------------===//
// seq.ssm: the scan
//===----------------------------------------------------------------------===//

/// The grouping of `[batch, H, N]` states into `[batch * H, N]`.
static SmallVector<ReassociationIndices> getStateReassociation() {
  return {{0, 1}, {2}};
}

/// `[batch, H, N]` states as `[batch * H, N]`.
static Value collapseStates(OpBuilder &b, Location loc, Value states) {
  return tensor::CollapseShapeOp::create(b, loc, states,
                                         getStateReassociation());
}

/// Runs `x_t = Ab x_{t-1} + Bb u_t` from `x_{-1} = 0` over the sequence and
/// returns `C x_t` as `[batch, L, H]` in the element type of `abT` (the
/// compute type). `u: [batch, L, H]`, `abT = Ab^T: [N, N]`, `bb, c: [H, N]`.
static Value buildLtiScan(OpBuilder &b, Location loc, Value u, Value abT,
                          Value bb, Value c) {
  MLIRContext *ctx = b.getContext();
  Type t = cast<RankedTensorType>(abT.getType()).getElementType();
  SmallVector<OpFoldResult> uSizes = tensor::getMixedSizes(b, loc, u);
  OpFoldResult batch = uSizes[0], length = uSizes[1], channels = uSizes[2];
  OpFoldResult n = tensor::getMixedSize(b, loc, abT, 0);
  SmallVector<OpFoldResult> stateSizes{batch, channels, n};
  auto stateType = RankedTensorType::get(
      {cast<RankedTensorType>(u.getType()).getDimSize(0),
       cast<RankedTensorType>(u.getType()).getDimSize(2),
       cast<RankedTensorType>(abT.getType()).getDimSize(0)},
      t);

  Value state = fillWith(b, loc, createEmptyTensor(b, loc, stateSizes, t), 0.0);
  Value scratch = createEmptyTensor(b, loc, stateSizes, t);
  Value y = fillWith(b, loc, createEmptyTensor(b, loc, uSizes, t), 0.0);

  Value zero = createIndexConstant(b, loc, 0);
  Value one = createIndexConstant(b, loc, 1);
  Value end = getValueOrCreateIndex(b, loc, length);
  auto loop = scf::ForOp::create(
      b, loc, zero, end, one, ValueRange{state, scratch, y},
      [&](OpBuilder &nb, Location nloc, Value step, ValueRange iterArgs) {
        Value x = iterArgs[0];
        Value uStep = extractSliceAt(nb, nloc, u, uSizes, 1, step);
        // next[b, h, :] = Ab x[b, h, :] + Bb[h, :] u[b, h], in the scratch
        // state. The product is one named matmul [batch * H, N] x [N, N] on
        // the collapsed states (which the CPU pipeline's matmul strategy can
        // target), then the input term.
        Value product = matmulAcc(
            nb, nloc, collapseStates(nb, nloc, x), abT,
            fillWith(nb, nloc, collapseStates(nb, nloc, iterArgs[1]), 0.0));
        Value next = tensor::ExpandShapeOp::create(
            nb, nloc, stateType, product, getStateReassociation(), stateSizes);
        next = buildGeneric(
            nb, nloc, ValueRange{bb, uStep}, next,
            {getDimsMap(ctx, 3, {1, 2}), getDimsMap(ctx, 3, {0, kUnitDim, 1}),
             getDimsMap(ctx, 3, {0, 1, 2})},
            getIteratorTypes(3),
            [&](OpBuilder &bb2, Location bl, ValueRange args) -> Value {
              Value uValue = convertScalar(bb2, bl, args[1], t);
              Value input = arith::MulFOp::create(bb2, bl, args[0], uValue);
              return arith::AddFOp::create(bb2, bl, args[2], input);
            });
        // The product cannot overwrite its operand: it went to the scratch
        // state, copied back here.
        Value newState = copyInto(nb, nloc, next, x);
        // y[b, t, h] = sum_i C[h, i] x[b, h, i].
        Value yStep = extractSliceAt(nb, nloc, iterArgs[2], uSizes, 1, step);
        yStep = buildGeneric(
            nb, nloc, ValueRange{c, newState}, yStep,
            {getDimsMap(ctx, 3, {1, 2}), getDimsMap(ctx, 3, {0, 1, 2}),
             getDimsMap(ctx, 3, {0, kUnitDim, 1})},
            getIteratorTypes(3, {2}),
            [](OpBuilder &bb2, Location bl, ValueRange args) -> Value {
              Value product = arith::MulFOp::create(bb2, bl, args[0], args[1]);
              return arith::AddFOp::create(bb2, bl, args[2], product);
            });
        Value newY =
            insertSliceAt(nb, nloc, yStep, iterArgs[2], uSizes, 1, step);
        scf::YieldOp::create(nb, nloc, ValueRange{newState, next, newY});
      });
  return loop.getResult(2);
}

/// Discretizes `op` (in f64) and runs the recurrence; returns `C x_t` as
/// `[batch, L, H]` in `computeType`.
static Value buildDiscreteScan(OpBuilder &b, Location loc, SSMOp op,
                               Type computeType) {
  Type discretizationType =
      getDiscretizationType(op.getType().getElementType());
  double step = op.getStep().convertToDouble();
  Value a = convertElements(b, loc, op.getA(), discretizationType);
  Value bMat = convertElements(b, loc, op.getB(), discretizationType);
  DiscreteSystem system = op.getDiscretization() == Discretization::zoh
                              ? discretizeZoh(b, loc, a, bMat, step)
                              : discretizeBilinear(b, loc, a, bMat, step);
  // Ab^T (the right operand of the per-step matmul) and Bb, rounded to the
  // compute type.
  MLIRContext *ctx = b.getContext();
  Value abT = buildGeneric(
      b, loc, system.ab,
      createEmptyTensor(b, loc, tensor::getMixedSizes(b, loc, system.ab),
                        computeType),
      {getDimsMap(ctx, 2, {1, 0}), getDimsMap(ctx, 2, {0, 1})},
      getIteratorTypes(2), [&](OpBuilder &nb, Location nloc, ValueRange args) {
        return convertScalar(nb, nloc, args[0], computeType);
      });
  Value bb = convertElements(b, loc, system.bb, computeType);
  Value c = convertElements(b, loc, op.getC(), computeType);
  return buildLtiScan(b, loc, op.getInput(), abT, bb, c);
}

namespace {
/// `seq.ssm`: discretize (zoh or bilinear, in f64), then scan.
struct SSMOpLowering : public OpRewritePattern<SSMOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SSMOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getInput().getType().getRank() != 3 ||
        op.getA().getType().getRank() != 2 ||
        op.getB().getType().getRank() != 2 ||
        op.getC().getType().getRank() != 2 ||
        op.getD().getType().getRank() != 1)
      return emitLoweringError(rewriter, op, "expected ranks 3, 2, 2, 2, 1");
    Location loc = op.getLoc();
    Type elementType = op.getType().getElementType();
    Type computeType = getComputeType(elementType);
    Value u = op.getInput();

    // Stages 1 and 2: discretization and the recurrence. A system without
    // state (or without channels) only has the feedthrough; static empty
    // sizes would also give out-of-bounds static slices below.
    Value y;
    if (op.getA().getType().getDimSize(0) == 0 ||
        op.getB().getType().getDimSize(0) == 0) {
      y = fillWith(rewriter, loc,
                   createEmptyTensor(rewriter, loc,
                                     tensor::getMixedSizes(rewriter, loc, u),
                                     computeType),
                   0.0);
    } else {
      y = buildDiscreteScan(rewriter, loc, op, computeType);
    }

    // Stage 3: feedthrough, y + D u, in parallel.
    Value init = createEmptyTensor(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, u), elementType);
    MLIRContext *ctx = rewriter.getContext();
    Value result = buildGeneric(
        rewriter, loc, ValueRange{y, u, op.getD()}, init,
        {getDimsMap(ctx, 3, {0, 1, 2}), getDimsMap(ctx, 3, {0, 1, 2}),
         getDimsMap(ctx, 3, {2}), getDimsMap(ctx, 3, {0, 1, 2})},
        getIteratorTypes(3),
        [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          Value uValue = convertScalar(nb, nloc, args[1], computeType);
          Value dValue = convertScalar(nb, nloc, args[2], computeType);
          Value feedthrough = arith::MulFOp::create(nb, nloc, dValue, uValue);
          Value sum = arith::AddFOp::create(nb, nloc, args[0], feedthrough);
          return convertScalar(nb, nloc, sum, elementType);
        });
    rewriter.replaceOp(op, castToType(rewriter, loc, result, op.getType()));
    return success();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// seq.selective_scan
//===----------------------------------------------------------------------===//

/// `dt = delta + delta_bias` (when given), then softplus (when asked), for
/// the whole sequence, in the compute type.
static Value buildTimeSteps(OpBuilder &b, Location loc, SelectiveScanOp op,
                            Type computeType) {
  MLIRContext *ctx = b.getContext();
  Value delta = op.getDelta();
  Value bias = op.getDeltaBias();
  bool softplus = op.getDeltaSoftplus();
  SmallVector<Value> inputs{delta};
  SmallVector<AffineMap> maps{getDimsMap(ctx, 3, {0, 1, 2})};
  if (bias) {
    inputs.push_back(bias);
    maps.push_back(getDimsMap(ctx, 3, {2}));
  }
  maps.push_back(getDimsMap(ctx, 3, {0, 1, 2}));
  Value init = createEmptyTensor(b, loc, tensor::getMixedSizes(b, loc, delta),
                                 computeType);
  return buildGeneric(
      b, loc, inputs, init, maps, getIteratorTypes(3),
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value dt = convertScalar(nb, nloc, args[0], computeType);
        if (bias)
          dt = arith::AddFOp::create(
              nb, nloc, dt, convertScalar(nb, nloc, args[1], computeType));
        return softplus ? buildSoftplus(nb, nloc, dt) : dt;
      });
}

/// Runs the selective recurrence over the sequence and returns
/// `y[b, t, d] = C[b, t, :] . x_t[b, d, :]` (without `D u`) in the compute
/// type: for every step t, in parallel over batch, channels and state,
/// `x[b, d, n] = exp(dt[b, t, d] A[d, n]) x[b, d, n] + dt[b, t, d] B[b, t, n]
/// u[b, t, d]`, then a reduction over n.
static Value buildSelectiveScan(OpBuilder &b, Location loc, SelectiveScanOp op,
                                Value dt, Type computeType) {
  MLIRContext *ctx = b.getContext();
  Value u = op.getInput(), a = op.getA(), bIn = op.getB(), cIn = op.getC();
  SmallVector<OpFoldResult> uSizes = tensor::getMixedSizes(b, loc, u);
  SmallVector<OpFoldResult> bSizes = tensor::getMixedSizes(b, loc, bIn);
  OpFoldResult batch = uSizes[0], length = uSizes[1], channels = uSizes[2];
  OpFoldResult n = tensor::getMixedSize(b, loc, a, 1);

  Value state = fillWith(
      b, loc, createEmptyTensor(b, loc, {batch, channels, n}, computeType),
      0.0);
  Value y =
      fillWith(b, loc, createEmptyTensor(b, loc, uSizes, computeType), 0.0);

  Value zero = createIndexConstant(b, loc, 0);
  Value one = createIndexConstant(b, loc, 1);
  Value end = getValueOrCreateIndex(b, loc, length);
  auto loop = scf::ForOp::create(
      b, loc, zero, end, one, ValueRange{state, y},
      [&](OpBuilder &nb, Location nloc, Value step, ValueRange iterArgs) {
        Value dtStep = extractSliceAt(nb, nloc, dt, uSizes, 1, step);
        Value uStep = extractSliceAt(nb, nloc, u, uSizes, 1, step);
        Value bStep = extractSliceAt(nb, nloc, bIn, bSizes, 1, step);
        Value cStep = extractSliceAt(nb, nloc, cIn, bSizes, 1, step);
        // Elementwise over (b, d, n), in place on the state.
        Value newState = buildGeneric(
            nb, nloc, ValueRange{dtStep, a, bStep, uStep}, iterArgs[0],
            {getDimsMap(ctx, 3, {0, kUnitDim, 1}), getDimsMap(ctx, 3, {1, 2}),
             getDimsMap(ctx, 3, {0, kUnitDim, 2}),
             getDimsMap(ctx, 3, {0, kUnitDim, 1}),
             getDimsMap(ctx, 3, {0, 1, 2})},
            getIteratorTypes(3),
            [&](OpBuilder &bb, Location bl, ValueRange args) -> Value {
              Value dtValue = args[0];
              Value aValue = convertScalar(bb, bl, args[1], computeType);
              Value bValue = convertScalar(bb, bl, args[2], computeType);
              Value uValue = convertScalar(bb, bl, args[3], computeType);
              Value decay = math::ExpOp::create(
                  bb, bl, arith::MulFOp::create(bb, bl, dtValue, aValue));
              Value kept = arith::MulFOp::create(bb, bl, decay, args[4]);
              Value input = arith::MulFOp::create(
                  bb, bl, arith::MulFOp::create(bb, bl, dtValue, bValue),
                  uValue);
              return arith::AddFOp::create(bb, bl, kept, input);
            });
        // y[b, t, d] = sum_n C[b, t, n] x[b, d, n].
        Value yStep = extractSliceAt(nb, nloc, iterArgs[1], uSizes, 1, step);
        yStep = buildGeneric(
            nb, nloc, ValueRange{cStep, newState}, yStep,
            {getDimsMap(ctx, 3, {0, kUnitDim, 2}),
             getDimsMap(ctx, 3, {0, 1, 2}),
             getDimsMap(ctx, 3, {0, kUnitDim, 1})},
            getIteratorTypes(3, {2}),
            [&](OpBuilder &bb, Location bl, ValueRange args) -> Value {
              Value cValue = convertScalar(bb, bl, args[0], computeType);
              Value product = arith::MulFOp::create(bb, bl, cValue, args[1]);
              return arith::AddFOp::create(bb, bl, args[2], product);
            });
        Value newY =
            insertSliceAt(nb, nloc, yStep, iterArgs[1], uSizes, 1, step);
        scf::YieldOp::create(nb, nloc, ValueRange{newState, newY});
      });
  return loop.getResult(1);
}

namespace {
/// `seq.selective_scan`: time steps in parallel, the scan over L, then the
/// `D u` skip and the `silu(z)` gate in parallel.
struct SelectiveScanOpLowering : public OpRewritePattern<SelectiveScanOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SelectiveScanOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getInput().getType().getRank() != 3 ||
        op.getA().getType().getRank() != 2 ||
        op.getB().getType().getRank() != 3 ||
        op.getC().getType().getRank() != 3)
      return emitLoweringError(
          rewriter, op, "expected u, delta, B, C of rank 3, A of rank 2");
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Type elementType = op.getType().getElementType();
    Type computeType = getComputeType(elementType);

    Value dt = buildTimeSteps(rewriter, loc, op, computeType);
    Value y = buildSelectiveScan(rewriter, loc, op, dt, computeType);

    // out = (y + D u) * silu(z), the optional parts left out.
    Value u = op.getInput(), d = op.getD(), z = op.getZ();
    SmallVector<Value> inputs{y, u};
    SmallVector<AffineMap> maps(2, getDimsMap(ctx, 3, {0, 1, 2}));
    if (d) {
      inputs.push_back(d);
      maps.push_back(getDimsMap(ctx, 3, {2}));
    }
    if (z) {
      inputs.push_back(z);
      maps.push_back(getDimsMap(ctx, 3, {0, 1, 2}));
    }
    maps.push_back(getDimsMap(ctx, 3, {0, 1, 2}));
    Value init = createEmptyTensor(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, u), elementType);
    Value result = buildGeneric(
        rewriter, loc, inputs, init, maps, getIteratorTypes(3),
        [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          Value out = args[0];
          unsigned next = 2;
          if (d) {
            Value uValue = convertScalar(nb, nloc, args[1], computeType);
            Value dValue = convertScalar(nb, nloc, args[next++], computeType);
            out = arith::AddFOp::create(
                nb, nloc, out, arith::MulFOp::create(nb, nloc, dValue, uValue));
          }
          if (z) {
            Value zValue = convertScalar(nb, nloc, args[next++], computeType);
            out = arith::MulFOp::create(nb, nloc, out,
                                        buildSilu(nb, nloc, zValue));
          }
          return convertScalar(nb, nloc, out, elementType);
        });
    rewriter.replaceOp(op, castToType(rewriter, loc, result, op.getType()));
    return success();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// seq.conv1d
//===----------------------------------------------------------------------===//

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

void mlir::seq::populateStateSpaceToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<HippoOpLowering, SSMOpLowering, SelectiveScanOpLowering,
               Conv1dOpLowering>(patterns.getContext());
}
