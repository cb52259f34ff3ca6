//===- StateSpace.cpp - lower the state-space family to linalg ------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Lowers `seq.hippo`, `seq.ssm` and `seq.selective_scan` to linalg, tensor,
// arith, math and scf on tensors (`seq.conv1d` is in Conv1d.cpp).
//
// - `seq.hippo` (when not folded) becomes two dense constants.
// - `seq.ssm` is lowered in two stages. Discretization (Discretization.cpp)
//   turns the continuous `(A, B)` into `(Ab, Bb)` once per call, in f64.
//   The scan then runs `x_t = Ab x_{t-1} + Bb u_t`, `y_t = C x_t` as an
//   `scf.for` over L that carries the state `[batch, H, N]` (`Ab x` is one
//   `linalg.matmul` per step over all batch rows and channels), and a final
//   parallel op adds `D u`. With vector lanes, FusedScan.cpp's fused form
//   (one pass over time per block of channels) is preferred.
// - `seq.selective_scan` computes `dt` for the whole sequence in parallel,
//   then scans over L carrying the state `[batch, D, N]` (every step is one
//   elementwise update and one reduction over N, parallel over batch and
//   channels), then applies `D u` and the `silu(z)` gate in parallel.
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

#include "lowering/SeqToLinalg/StateSpace.h"
#include "dialect/Seq/IR/SeqOps.h"
#include "dialect/Seq/Support/Debug.h"
#include "lowering/SeqToLinalg/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#define DEBUG_TYPE "convert-seq-to-linalg"

using namespace mlir;
using namespace mlir::seq;
using namespace mlir::seq::statespace;

using utils::IteratorType;

//===----------------------------------------------------------------------===//
// Shared builders (StateSpace.h)
//===----------------------------------------------------------------------===//

/// An elementwise `linalg.generic` over tensors of the same shape, writing
/// into `init` (which the body sees as its last argument).
Value statespace::buildMap(OpBuilder &b, Location loc, ValueRange inputs,
                           Value init, GenericBodyFn body) {
  int64_t rank = cast<RankedTensorType>(init.getType()).getRank();
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              b.getMultiDimIdentityMap(rank));
  return buildGeneric(b, loc, inputs, init, maps, getIteratorTypes(rank), body);
}

/// `linalg.fill` of `init` with the float `value`.
Value statespace::fillWith(OpBuilder &b, Location loc, Value init,
                           double value) {
  Type elementType = cast<RankedTensorType>(init.getType()).getElementType();
  Value scalar = createFloatConstant(b, loc, elementType, value);
  return linalg::FillOp::create(b, loc, ValueRange{scalar}, ValueRange{init})
      .getResult(0);
}

/// `acc + lhs * rhs` for square matrices, as `linalg.matmul`.
Value statespace::matmulAcc(OpBuilder &b, Location loc, Value lhs, Value rhs,
                            Value acc) {
  return linalg::MatmulOp::create(b, loc, TypeRange{acc.getType()},
                                  ValueRange{lhs, rhs}, ValueRange{acc})
      .getResult(0);
}

/// `linalg.copy` of `source` into `dest`.
Value statespace::copyInto(OpBuilder &b, Location loc, Value source,
                           Value dest) {
  return linalg::CopyOp::create(b, loc, TypeRange{dest.getType()},
                                ValueRange{source}, ValueRange{dest})
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// Local builders
//===----------------------------------------------------------------------===//

/// `x * sigmoid(x)`, as `torch.nn.functional.silu` computes it.
Value mlir::seq::statespace::buildSilu(OpBuilder &b, Location loc, Value x,
                                       bool fastExp) {
  Value one = createFloatConstant(b, loc, x.getType(), 1.0);
  Value negX = arith::NegFOp::create(b, loc, x);
  Value exp = fastExp ? createFastExp(b, loc, negX)
                      : Value(math::ExpOp::create(b, loc, negX));
  Value denominator = arith::AddFOp::create(b, loc, one, exp);
  return arith::DivFOp::create(b, loc, x, denominator);
}

/// `log(1 + exp(x))`, or `x` above the threshold 20, as
/// `torch.nn.functional.softplus` with its defaults (beyond 20 the log term
/// is below f32 rounding, and exp would eventually overflow).
Value mlir::seq::statespace::buildSoftplus(OpBuilder &b, Location loc,
                                           Value x) {
  Value threshold = createFloatConstant(b, loc, x.getType(), 20.0);
  Value large =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, threshold);
  Value smooth = math::Log1pOp::create(b, loc, math::ExpOp::create(b, loc, x));
  return arith::SelectOp::create(b, loc, large, x, smooth);
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
  Value a = convertElementType(b, loc, op.getA(), discretizationType);
  Value bMat = convertElementType(b, loc, op.getB(), discretizationType);
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
  Value bb = convertElementType(b, loc, system.bb, computeType);
  Value c = convertElementType(b, loc, op.getC(), computeType);
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
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] seq.ssm at " << loc
               << ": the step-by-step matmul form, "
               << stringifyDiscretization(op.getDiscretization())
               << " discretization, scan in " << computeType << "\n");

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

/// Runs the selective recurrence over the sequence from the initial state
/// (zeros without one) and returns `y[b, t, d] = C[b, t, :] . x_t[b, d, :]`
/// (without `D u`) and the final state, both in the compute type: for every
/// step t, in parallel over batch, channels and state,
/// `x[b, d, n] = exp(dt[b, t, d] A[d, n]) x[b, d, n] + dt[b, t, d] B[b, t, n]
/// u[b, t, d]`, then a reduction over n.
static std::pair<Value, Value> buildSelectiveScan(OpBuilder &b, Location loc,
                                                  SelectiveScanOp op, Value dt,
                                                  Type computeType) {
  MLIRContext *ctx = b.getContext();
  Value u = op.getInput(), a = op.getA(), bIn = op.getB(), cIn = op.getC();
  SmallVector<OpFoldResult> uSizes = tensor::getMixedSizes(b, loc, u);
  SmallVector<OpFoldResult> bSizes = tensor::getMixedSizes(b, loc, bIn);
  OpFoldResult batch = uSizes[0], length = uSizes[1], channels = uSizes[2];
  OpFoldResult n = tensor::getMixedSize(b, loc, a, 1);

  Value state =
      op.getInitialState()
          ? convertElementType(b, loc, op.getInitialState(), computeType)
          : fillWith(b, loc,
                     createEmptyTensor(b, loc, {batch, channels, n},
                                       computeType),
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
  return {loop.getResult(1), loop.getResult(0)};
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
    Type elementType = op.getResult().getType().getElementType();
    Type computeType = getComputeType(elementType);
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] seq.selective_scan at " << loc
                            << ": the step-by-step reference form, in "
                            << computeType << "\n");

    Value dt = buildTimeSteps(rewriter, loc, op, computeType);
    auto [y, finalState] = buildSelectiveScan(rewriter, loc, op, dt,
                                              computeType);

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
    SmallVector<Value> results{
        castToType(rewriter, loc, result, op.getResult().getType())};
    if (Value wanted = op.getFinalState()) {
      auto type = cast<RankedTensorType>(wanted.getType());
      results.push_back(castToType(
          rewriter, loc,
          convertElementType(rewriter, loc, finalState, type.getElementType()),
          type));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};
} // namespace

/// seq.state_store: `value` copied into the buffer of the state argument,
/// a memref.copy between the two buffers. Not
/// bufferization.materialize_in_destination: empty-tensor elimination would
/// make the producer of `value` write the destination, created before the
/// state's last read, which the analysis then resolves by copying the
/// argument and storing into the copy.
struct StateStoreLowering : public OpRewritePattern<StateStoreOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(StateStoreOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getState().getType());
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] seq.state_store at " << loc
                            << ": copied into the state argument's buffer\n");
    Value source = bufferization::ToBufferOp::create(
        rewriter, loc, bufferization::getMemRefTypeWithFullyDynamicLayout(type),
        op.getValue(), /*read_only=*/true);
    Value buffer = bufferization::ToBufferOp::create(
        rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()),
        op.getState());
    memref::CopyOp::create(rewriter, loc, source, buffer);
    rewriter.eraseOp(op);
    return success();
  }
};

void mlir::seq::populateStateSpaceToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<HippoOpLowering, SSMOpLowering, SelectiveScanOpLowering,
               StateStoreLowering>(patterns.getContext());
}
