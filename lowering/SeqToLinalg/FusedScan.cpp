//===- FusedScan.cpp - seq.selective_scan as one fused vector loop --------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The fused lowering of Mamba's selective scan, for targets with vector
// registers (convert-seq-to-linalg's `scan-vector-lanes`). The reference
// lowering (StateSpace.cpp) runs the recurrence step by step over the whole
// [batch, channels, state] tensor and materializes dt for the whole sequence;
// this one swaps the loops:
//
//   scf.forall (b, channel block of `lanes` channels):
//     h[n] = initial_state[b, c, n] or 0     (vector<lanes>, in registers)
//     row = dt, dt u, u, silu(z) of step 0   (if L > 0)
//     for t in 0 .. L:
//       next = dt, dt u, u, silu(z) of step min(t + 1, L - 1), where
//              dt = softplus(delta[b, t, c] + delta_bias[c])
//       for n in 0 .. N (unrolled):
//         h[n] = 2^(dt * A'[c, n]) * h[n] + (dt u) * B[b, t, n]
//         y   += h[n] * C[b, t, n]           (four partial sums)
//       out[b, t, c] = (y + D[c] u) * silu(z)
//       row = next
//     final_state[b, c, n] = h[n]            (when the op returns it)
//
// Every input is read once and the output written once; the state and the
// [b, L, D, N] products never reach memory. Vectors run across channels, so
// loads of u, delta and z and the store of out are contiguous and B[t, n],
// C[t, n] are broadcast scalars. A's columns are gathered once per block and
// scaled by log2(e) (A' above).
//
// What bounds it is the arithmetic per (t, n) step: about 13 vector ops, 9
// of them multiplies or FMAs (the decay's polynomial, dt A', dt u B, the
// update and the output), against two loads per step, so the decay gets a
// dedicated exp (buildExp2). The per-step values that do not depend on the
// state (softplus, silu: long dependency chains) are computed one step
// ahead, so that they overlap the previous step's update instead of delaying
// its own: that halved the time of the scan with softplus and the gate. They
// take the CPU's short exp and a log1p polynomial (about 45 vector ops a
// step for both, where MLIR's generic exp and log1p took 85, whose constants
// pushed the state out of the registers).
//
// The S4 scan (`seq.ssm`) gets the same treatment. Each channel h has its own
// state x[h, :] of size N, and all channels share the dense N x N matrix Ab,
// so a step is the product Ab [N, N] x X [N, channels]. With the channels in
// vectors, the state of a block of `lanes` channels is N vectors X[i]:
//
//   (Ab, Bb) = discretize(A, B, step)   (parameters: prepared once per set
//                                        of weights, or folded)
//   scf.forall (b, channel block):
//     X[i] = 0; Bb[:, i], C[:, i] of the block gathered once (vectors)
//     for t in 0 .. L:
//       for i in 0 .. N (unrolled, in groups of rows):
//         X'[i] = Bb[:, i] * u[b, t, c] + sum_j Ab[i, j] * X[j]
//       out[b, t, c] = sum_i C[:, i] * X'[i] + D[c] * u[b, t, c]
//
// Ab[i, j] are broadcast scalars (an FMA with a broadcast memory operand on
// AVX-512); the state stays in registers and L1, one pass over time, the
// `D u` skip fused. A last partial block of channels is masked.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/IR/SeqOps.h"
#include "dialect/Seq/Support/Debug.h"
#include "lowering/SeqToLinalg/Patterns.h"
#include "lowering/SeqToLinalg/StateSpace.h"
#include "lowering/SeqToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

#define DEBUG_TYPE "convert-seq-to-linalg"

using namespace mlir;
using namespace mlir::seq;

namespace {

constexpr double kLog2E = 1.4426950408889634;

/// Coefficients of 2^f on [-1/2, 1/2], constant term first: the degree-5
/// polynomial of least maximal relative error with the constant term 1 (so
/// that 2^0 is exactly 1), its other coefficients then adjusted in the last
/// bits for FMA evaluation in f32: at most 1.92 ulp on a dense sample of the
/// interval (degree 6 gave 0.94 ulp for one more FMA per state and step, the
/// op the scan is bound by).
constexpr double kExp2Coefficients[] = {
    1.0,             6.931469440e-01, 2.402223647e-01,
    5.550734699e-02, 9.671506472e-03, 1.326472848e-03};

/// 2^y for a vector y (in the scan, y = dt * A log2(e)): k = round(y) and
/// f = y - k in [-1/2, 1/2], 2^f by the polynomial above, scaled by 2^k.
///
/// With `scalef` (16 lanes of AVX-512) the scaling is one vscalefps, exact
/// over the whole range, subnormal results included, and right for any
/// finite y (f is 0 beyond 2^23, where y is an integer). Only an infinite y
/// needs care: f is then NaN, so f is replaced by min(f, 1/2), a single
/// vminps that maps NaN to 1/2 and leaves every finite f as it is; the
/// scaling by k = -inf or +inf then gives 0 or +inf, and a NaN y stays NaN
/// through k. (Zen 4's vscalefps already gives 0 for a NaN scaled by -inf;
/// the vminps makes it so on every host.)
///
/// Otherwise y is clamped to [-127, 128] (NaN kept: the clamps are selects
/// on unordered compares) and rounded by adding 1.5 * 2^23 + 127, which
/// leaves k + 127 in the low bits of the sum; shifted left by 23 they are
/// the bits of 2^k (0 for k = -127, +inf for 128): results below 2^-126.5
/// flush to 0 and those above 2^127.5 become +inf.
///
/// This replaces math.exp, whose generic polynomial form (MLIR's) costs about
/// twice the instructions: it is the one exp per (step, channel, state) that
/// bounds the scan. Its error is that of the polynomial plus the rounding
/// of y itself (|y| 2^-24 absolutely, as in the reference's exp(dt A)).
Value buildExp2(OpBuilder &b, Location loc, Value y, bool scalef) {
  auto vec = cast<VectorType>(y.getType());
  scalef = scalef && vec.getNumElements() == 16;
  auto constant = [&](double v) {
    return createFloatConstant(b, loc, vec, v);
  };
  // x where it compares `inside` to the bound as true, else the bound: one
  // vminps or vmaxps.
  auto clamp = [&](Value x, arith::CmpFPredicate inside, double bound) {
    Value c = constant(bound);
    Value within = arith::CmpFOp::create(b, loc, inside, x, c);
    return arith::SelectOp::create(b, loc, within, x, c).getResult();
  };
  auto polynomial = [&](Value f) {
    const int64_t degree = std::size(kExp2Coefficients) - 1;
    Value p = constant(kExp2Coefficients[degree]);
    for (int64_t i = degree - 1; i >= 0; --i)
      p = vector::FMAOp::create(b, loc, p, f, constant(kExp2Coefficients[i]));
    return p;
  };
  if (scalef) {
    Value k = math::RoundEvenOp::create(b, loc, y);
    Value f = arith::SubFOp::create(b, loc, y, k);
    // f < 1/2 ? f : 1/2, the operand order of vminps: NaN gives 1/2.
    Value p = polynomial(clamp(f, arith::CmpFPredicate::OLT, 0.5));
    // MLIR 22 lowers x86vector.avx512.mask.scalef by passing its operands
    // (src, a, b) in that order to llvm.x86.avx512.mask.scalef.ps.512, whose
    // operands are (a, b, passthru): this computes p * 2^floor(k) in every
    // lane (the mask is all ones, the rounding the current mode).
    // test/Integration/CPU/fused-scan-exp-run.test checks the order of the
    // call.
    Value mask = arith::ConstantOp::create(b, loc, b.getI16Type(),
                                           b.getI16IntegerAttr(-1));
    Value rounding = arith::ConstantOp::create(b, loc, b.getI32Type(),
                                               b.getI32IntegerAttr(4));
    return x86vector::MaskScaleFOp::create(b, loc, vec, p, k, p, mask,
                                           rounding);
  }
  y = clamp(y, arith::CmpFPredicate::UGE, -127.0);
  y = clamp(y, arith::CmpFPredicate::ULE, 128.0);
  Value magic = constant(12582912.0 + 127.0);
  Value sum = arith::AddFOp::create(b, loc, y, magic);
  Value k = arith::SubFOp::create(b, loc, sum, magic);
  Value p = polynomial(arith::SubFOp::create(b, loc, y, k));
  auto i32Vec = VectorType::get(vec.getShape(), b.getI32Type());
  Value shift = arith::ConstantOp::create(
      b, loc, i32Vec, DenseElementsAttr::get(i32Vec, b.getI32IntegerAttr(23)));
  Value bits = arith::ShLIOp::create(
      b, loc, arith::BitcastOp::create(b, loc, i32Vec, sum), shift);
  return arith::MulFOp::create(b, loc, p,
                               arith::BitcastOp::create(b, loc, vec, bits));
}

/// Coefficients of log1p(x) / x on [0, 1], constant term first: the
/// polynomial of degree 9 of least maximal relative error (Lawson's
/// iteration), so that x times it is log1p(x) within 1.53 ulp in f32 on a
/// dense sample of [0, 1] and of its powers of ten down to 1e-30.
constexpr double kLog1pCoefficients[] = {
    1.0,             -4.999990165e-01, 3.332996070e-01, -2.495411485e-01,
    1.967585832e-01, -1.530538797e-01, 1.060333923e-01, -5.695664510e-02,
    1.985001750e-02, -3.243720857e-03};

/// softplus(x) = log(1 + e^x) as max(x, 0) + log1p(e^-|x|): e^-|x| by
/// createFastExp, in (0, 1], and log1p on [0, 1] by the
/// polynomial above;
/// about 25 vector ops where math.exp and math.log1p (MLIR's polynomial
/// forms, with their range reductions) took about 60, once per step and
/// block of channels in the scan. Above 20 the log1p term is below half an
/// ulp of x, so the result is x, as torch's softplus returns there; -inf
/// gives 0, +inf gives +inf and NaN stays NaN; below about -87.3 (where it
/// is subnormal) the result flushes to 0 with the exp.
Value buildFastSoftplus(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  auto constant = [&](double v) {
    return createFloatConstant(b, loc, type, v);
  };
  Value e = createFastExp(
      b, loc, arith::NegFOp::create(b, loc, math::AbsFOp::create(b, loc, x)));
  const int64_t degree = std::size(kLog1pCoefficients) - 1;
  Value q = constant(kLog1pCoefficients[degree]);
  for (int64_t i = degree - 1; i >= 0; --i)
    q = vector::FMAOp::create(b, loc, q, e, constant(kLog1pCoefficients[i]));
  Value zero = constant(0.0);
  Value positive =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
  Value relu = arith::SelectOp::create(b, loc, positive, x, zero);
  return vector::FMAOp::create(b, loc, e, q, relu);
}

struct FusedSelectiveScanLowering
    : public OpRewritePattern<SelectiveScanOp> {
  FusedSelectiveScanLowering(MLIRContext *context, int64_t lanes, bool scalef,
                             bool remarks)
      : OpRewritePattern(context, /*benefit=*/2), lanes(lanes), scalef(scalef),
        remarks(remarks) {}

  /// Declines `op` for the reference lowering, saying why when asked.
  LogicalResult decline(SelectiveScanOp op, const Twine &why) const {
    return declineFastForm(
        op, remarks, "selective scan takes the step-by-step reference lowering",
        why);
  }

  LogicalResult matchAndRewrite(SelectiveScanOp op,
                                PatternRewriter &rewriter) const override {
    auto uType = op.getInput().getType();
    auto aType = op.getA().getType();
    auto f32 = rewriter.getF32Type();
    // f32 only, a static state size and whole blocks of channels; anything
    // else takes the reference lowering.
    auto allF32 = [&](Value v) {
      return !v || cast<ShapedType>(v.getType()).getElementType() == f32;
    };
    if (uType.getRank() != 3 || aType.getRank() != 2 ||
        op.getB().getType().getRank() != 3 ||
        op.getC().getType().getRank() != 3)
      return failure(); // the reference lowering reports it
    for (Value v : {op.getInput(), op.getDelta(), op.getA(), op.getB(),
                    op.getC(), op.getD(), op.getZ(), op.getDeltaBias(),
                    op.getInitialState()})
      if (!allF32(v))
        return decline(op, "an operand is not f32");
    if (!allF32(op.getResult()) || !allF32(op.getFinalState()))
      return decline(op, "a result is not f32");
    if (aType.isDynamicDim(0) || aType.isDynamicDim(1))
      return decline(op, "A's channels or state size are not static");
    if (aType.getDimSize(0) % lanes != 0)
      return decline(op, "the " + Twine(aType.getDimSize(0)) +
                             " channels are not a multiple of the " +
                             Twine(lanes) + " vector lanes");
    if (aType.getDimSize(1) > 64)
      return decline(op, "the state size " + Twine(aType.getDimSize(1)) +
                             " exceeds 64, the state would not stay in "
                             "registers");

    Location loc = op.getLoc();
    const int64_t channels = aType.getDimSize(0);
    const int64_t state = aType.getDimSize(1);
    Value u = op.getInput(), delta = op.getDelta(), a = op.getA();
    Value bIn = op.getB(), cIn = op.getC(), d = op.getD(), z = op.getZ();
    Value bias = op.getDeltaBias();
    Value initialState = op.getInitialState();
    bool softplus = op.getDeltaSoftplus();
    bool wantState = static_cast<bool>(op.getFinalState());
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] seq.selective_scan at " << loc
               << ": fused scan, " << channels / lanes << " block(s) of "
               << lanes << " channels, state size " << state
               << " in registers, exp by "
               << (scalef && lanes == 16 ? "vscalefps" : "exponent bits")
               << (softplus ? ", softplus" : "") << (z ? ", gate z" : "")
               << (d ? ", D skip" : "")
               << (initialState ? ", initial state" : "")
               << (wantState ? ", final state" : "") << "\n");

    VectorType vec = VectorType::get({lanes}, f32);
    auto idx = [&](OpBuilder &b, int64_t v) {
      return createIndexConstant(b, loc, v);
    };
    Value pad = arith::ConstantOp::create(rewriter, loc, f32,
                                          rewriter.getF32FloatAttr(0.0f));
    Value batch = tensor::DimOp::create(rewriter, loc, u, 0);
    Value length = tensor::DimOp::create(rewriter, loc, u, 1);
    Value init = createEmptyTensor(
        rewriter, loc, {batch, length, rewriter.getIndexAttr(channels)}, f32);
    SmallVector<Value> sharedInit{init};
    if (wantState)
      sharedInit.push_back(tensor::EmptyOp::create(
          rewriter, loc,
          ArrayRef<OpFoldResult>{batch, rewriter.getIndexAttr(channels),
                                 rewriter.getIndexAttr(state)},
          f32));
    MLIRContext *ctx = rewriter.getContext();
    // Reads lanes consecutive channels of a [b, t, channel] tensor.
    auto readRow = [&](OpBuilder &b, Value source, ValueRange at) -> Value {
      return vector::TransferReadOp::create(
          b, loc, vec, source, at, pad,
          AffineMap::get(3, 0, getAffineDimExpr(2, ctx)),
          /*inBounds=*/ArrayRef<bool>{true});
    };
    // Reads lanes consecutive entries of a [channel] tensor.
    auto readChannels = [&](OpBuilder &b, Value source, Value c0) -> Value {
      return vector::TransferReadOp::create(
          b, loc, vec, source, ValueRange{c0}, pad,
          AffineMap::getMultiDimIdentityMap(1, ctx),
          /*inBounds=*/ArrayRef<bool>{true});
    };

    SmallVector<OpFoldResult> upper{batch, rewriter.getIndexAttr(channels /
                                                                 lanes)};
    auto forall = scf::ForallOp::create(
        rewriter, loc, upper, sharedInit, std::nullopt,
        [&](OpBuilder &b, Location, ValueRange args) {
          Value bIdx = args[0];
          Value c0 = arith::MulIOp::create(b, loc, args[1], idx(b, lanes));
          Value shared = args[2];
          // A[c0 + l, n] for every n: column n of the block, gathered once.
          SmallVector<Value> aCols;
          for (int64_t n = 0; n < state; ++n) {
            SmallVector<Value> column;
            for (int64_t l = 0; l < lanes; ++l)
              column.push_back(tensor::ExtractOp::create(
                  b, loc, a,
                  ValueRange{arith::AddIOp::create(b, loc, c0, idx(b, l)),
                             idx(b, n)}));
            // exp(dt A) = 2^(dt (A log2(e))): the scaling is hoisted.
            aCols.push_back(arith::MulFOp::create(
                b, loc, vector::FromElementsOp::create(b, loc, vec, column),
                createFloatConstant(b, loc, vec, kLog2E)));
          }
          Value biasV = bias ? readChannels(b, bias, c0) : Value();
          Value dV = d ? readChannels(b, d, c0) : Value();
          Value zeros = arith::ConstantOp::create(
              b, loc, vec, DenseElementsAttr::get(vec, 0.0f));

          // The block of the output this thread writes: [1, L, lanes].
          SmallVector<OpFoldResult> offsets{bIdx, b.getIndexAttr(0), c0};
          SmallVector<OpFoldResult> sizes{b.getIndexAttr(1), length,
                                          b.getIndexAttr(lanes)};
          SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
          Value block = tensor::ExtractSliceOp::create(b, loc, shared, offsets,
                                                       sizes, strides);
          // The values of step t that do not depend on the state: dt,
          // dt * u, u and the gate silu(z). They are computed one step
          // ahead (software pipelining): softplus and silu are long
          // dependency chains, and computed in the step that consumes them
          // they would delay its whole state update.
          auto rowValues = [&](OpBuilder &nb, Value t) {
            SmallVector<Value> at{bIdx, t, c0};
            Value uV = readRow(nb, u, at);
            Value dt = readRow(nb, delta, at);
            if (biasV)
              dt = arith::AddFOp::create(nb, loc, dt, biasV);
            if (softplus)
              dt = buildFastSoftplus(nb, loc, dt);
            SmallVector<Value> row{dt, arith::MulFOp::create(nb, loc, dt, uV),
                                   uV};
            if (z)
              row.push_back(
                  statespace::buildSilu(nb, loc, readRow(nb, z, at),
                                        /*fastExp=*/true));
            return row;
          };
          const int64_t rowCount = z ? 4 : 3;
          Value nonEmpty = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::sgt, length, idx(b, 0));
          auto first = scf::IfOp::create(
              b, loc, nonEmpty,
              [&](OpBuilder &tb, Location) {
                scf::YieldOp::create(tb, loc, rowValues(tb, idx(tb, 0)));
              },
              [&](OpBuilder &eb, Location) {
                scf::YieldOp::create(
                    eb, loc, SmallVector<Value>(rowCount, zeros));
              });
          Value last = arith::SubIOp::create(b, loc, length, idx(b, 1));

          // The state starts from the initial state's [lanes, N] block,
          // gathered into N vectors across the channels, or from zeros.
          SmallVector<Value> iterInit(state, zeros);
          if (initialState) {
            for (int64_t n = 0; n < state; ++n) {
              SmallVector<Value> column;
              for (int64_t l = 0; l < lanes; ++l)
                column.push_back(tensor::ExtractOp::create(
                    b, loc, initialState,
                    ValueRange{bIdx, arith::AddIOp::create(b, loc, c0, idx(b, l)),
                               idx(b, n)}));
              iterInit[n] = vector::FromElementsOp::create(b, loc, vec, column);
            }
          }
          iterInit.push_back(block);
          llvm::append_range(iterInit, first.getResults());
          auto steps = scf::ForOp::create(
              b, loc, idx(b, 0), length, idx(b, 1), iterInit,
              [&](OpBuilder &nb, Location, Value t, ValueRange carried) {
                // Step t + 1's values (t's again in the last step).
                Value ahead = arith::MinSIOp::create(
                    nb, loc, arith::AddIOp::create(nb, loc, t, idx(nb, 1)),
                    last);
                SmallVector<Value> nextRow = rowValues(nb, ahead);
                ValueRange row = carried.drop_front(state + 1);
                Value dt = row[0], dtU = row[1], uV = row[2];
                // Four partial sums of C . h, so that the output is not one
                // chain of N dependent FMAs per step.
                SmallVector<Value> partial;
                SmallVector<Value> next;
                for (int64_t n = 0; n < state; ++n) {
                  SmallVector<Value> bcAt{bIdx, t, idx(nb, n)};
                  Value bN = vector::BroadcastOp::create(
                      nb, loc, vec, tensor::ExtractOp::create(nb, loc, bIn, bcAt));
                  Value cN = vector::BroadcastOp::create(
                      nb, loc, vec, tensor::ExtractOp::create(nb, loc, cIn, bcAt));
                  Value decay = buildExp2(
                      nb, loc, arith::MulFOp::create(nb, loc, dt, aCols[n]),
                      scalef);
                  Value h = vector::FMAOp::create(
                      nb, loc, decay, carried[n],
                      arith::MulFOp::create(nb, loc, dtU, bN));
                  if (n < 4) {
                    partial.push_back(arith::MulFOp::create(nb, loc, h, cN));
                  } else {
                    Value &sum = partial[n % 4];
                    sum = vector::FMAOp::create(nb, loc, h, cN, sum);
                  }
                  next.push_back(h);
                }
                while (partial.size() > 1) {
                  SmallVector<Value> halved;
                  for (size_t i = 0; i + 1 < partial.size(); i += 2)
                    halved.push_back(arith::AddFOp::create(
                        nb, loc, partial[i], partial[i + 1]));
                  if (partial.size() % 2)
                    halved.push_back(partial.back());
                  partial = std::move(halved);
                }
                Value y = partial.empty() ? zeros : partial.front();
                if (dV)
                  y = vector::FMAOp::create(nb, loc, dV, uV, y);
                if (z)
                  y = arith::MulFOp::create(nb, loc, y, row[3]);
                auto written = vector::TransferWriteOp::create(
                    nb, loc, y, carried[state],
                    ValueRange{idx(nb, 0), t, idx(nb, 0)},
                    AffineMap::get(3, 0, getAffineDimExpr(2, ctx)),
                    /*inBounds=*/ArrayRef<bool>{true});
                next.push_back(written.getResult());
                llvm::append_range(next, nextRow);
                scf::YieldOp::create(nb, loc, next);
              });
          Value finalBlock;
          if (wantState) {
            // The final state back as the block's [1, lanes, N] slice.
            SmallVector<Value> elements;
            for (int64_t l = 0; l < lanes; ++l)
              for (int64_t n = 0; n < state; ++n)
                elements.push_back(vector::ExtractOp::create(
                    b, loc, steps.getResult(n), ArrayRef<int64_t>{l}));
            finalBlock = tensor::FromElementsOp::create(
                b, loc, RankedTensorType::get({1, lanes, state}, f32),
                elements);
          }
          auto inParallel = scf::InParallelOp::create(b, loc);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(inParallel.getBody());
          tensor::ParallelInsertSliceOp::create(
              b, loc, steps.getResult(state), shared, offsets, sizes, strides);
          if (wantState)
            tensor::ParallelInsertSliceOp::create(
                b, loc, finalBlock, args[3],
                ArrayRef<OpFoldResult>{bIdx, c0, b.getIndexAttr(0)},
                ArrayRef<OpFoldResult>{b.getIndexAttr(1),
                                       b.getIndexAttr(lanes),
                                       b.getIndexAttr(state)},
                strides);
        });
    SmallVector<Value> results;
    for (auto [value, wanted] : llvm::zip(forall.getResults(), op.getResults()))
      results.push_back(castToType(rewriter, loc, value, wanted.getType()));
    rewriter.replaceOp(op, results);
    return success();
  }

  int64_t lanes;
  bool scalef;
  bool remarks;
};

/// The largest S4 state size the fused scan takes: its step is N^2 unrolled
/// FMAs, with N vectors of state.
constexpr int64_t kMaxFusedSSMState = 64;

/// The rows of `Ab` one group of accumulators covers in the fused S4 step:
/// each X[j] is loaded once per group.
constexpr int64_t kSSMRowGroup = 8;

struct FusedSSMLowering : public OpRewritePattern<SSMOp> {
  FusedSSMLowering(MLIRContext *context, int64_t lanes, bool remarks)
      : OpRewritePattern(context, /*benefit=*/2), lanes(lanes),
        remarks(remarks) {}

  /// Declines `op` for the reference lowering, saying why when asked.
  LogicalResult decline(SSMOp op, const Twine &why) const {
    return declineFastForm(
        op, remarks, "S4 scan takes the step-by-step matmul lowering", why);
  }

  LogicalResult matchAndRewrite(SSMOp op,
                                PatternRewriter &rewriter) const override {
    auto uType = op.getInput().getType();
    auto aType = op.getA().getType();
    auto bType = op.getB().getType();
    Type f32 = rewriter.getF32Type();
    if (uType.getRank() != 3 || aType.getRank() != 2 || bType.getRank() != 2 ||
        op.getC().getType().getRank() != 2 ||
        op.getD().getType().getRank() != 1)
      return failure(); // the reference lowering reports it
    for (Value v : op->getOperands())
      if (cast<ShapedType>(v.getType()).getElementType() != f32)
        return decline(op, "an operand is not f32");
    if (op.getType().getElementType() != f32)
      return decline(op, "the result is not f32");
    if (aType.isDynamicDim(0) || bType.isDynamicDim(0))
      return decline(op, "the state size or the channels are not static");
    const int64_t state = aType.getDimSize(0);
    const int64_t channels = bType.getDimSize(0);
    if (state == 0 || channels == 0)
      return failure(); // only the feedthrough: the reference lowering
    if (state > kMaxFusedSSMState)
      return decline(op, "the state size " + Twine(state) + " exceeds " +
                             Twine(kMaxFusedSSMState) +
                             ", the unrolled step would not fit");

    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    // Discretization in f64, then Ab [N, N] and the transposes Bb^T, C^T
    // [N, H] in f32: columns of the channel blocks are contiguous. All of it
    // depends on parameters only (seq-hoist-preparation moves it out).
    Type wide = statespace::getDiscretizationType(f32);
    double step = op.getStep().convertToDouble();
    Value aWide = convertElementType(rewriter, loc, op.getA(), wide);
    Value bWide = convertElementType(rewriter, loc, op.getB(), wide);
    statespace::DiscreteSystem system =
        op.getDiscretization() == Discretization::zoh
            ? statespace::discretizeZoh(rewriter, loc, aWide, bWide, step)
            : statespace::discretizeBilinear(rewriter, loc, aWide, bWide, step);
    Value ab = convertElementType(rewriter, loc, system.ab, f32);
    auto transposeToF32 = [&](Value m) {
      return buildGeneric(
          rewriter, loc, m,
          createEmptyTensor(
              rewriter, loc,
              {rewriter.getIndexAttr(state), rewriter.getIndexAttr(channels)},
              f32),
          {getDimsMap(ctx, 2, {1, 0}), getDimsMap(ctx, 2, {0, 1})},
          getIteratorTypes(2),
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            return convertScalar(nb, nloc, args[0], f32);
          });
    };
    Value bbT = transposeToF32(system.bb);
    Value cT = transposeToF32(op.getC());
    Value u = op.getInput(), d = op.getD();

    // A partial last block reads and writes through masks.
    const bool whole = channels % lanes == 0;
    const int64_t blocks = llvm::divideCeil(channels, lanes);
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] seq.ssm at " << loc << ": fused S4 scan, "
               << stringifyDiscretization(op.getDiscretization())
               << " discretization, " << blocks << " block(s) of " << lanes
               << " channels" << (whole ? "" : " (the last one masked)")
               << ", state size " << state << ", Ab rows in groups of "
               << kSSMRowGroup << "\n");
    VectorType vec = VectorType::get({lanes}, f32);
    VectorType rowVec = VectorType::get({state}, f32);
    auto idx = [&](OpBuilder &b, int64_t v) {
      return createIndexConstant(b, loc, v);
    };
    Value pad = arith::ConstantOp::create(rewriter, loc, f32,
                                          rewriter.getF32FloatAttr(0.0f));
    Value batch = tensor::DimOp::create(rewriter, loc, u, 0);
    Value length = tensor::DimOp::create(rewriter, loc, u, 1);
    Value init = createEmptyTensor(
        rewriter, loc, {batch, length, rewriter.getIndexAttr(channels)}, f32);
    // Reads `lanes` consecutive channels along the last dimension of
    // `source` at `at`.
    auto readLanes = [&](OpBuilder &b, Value source, ValueRange at) -> Value {
      int64_t rank = at.size();
      return vector::TransferReadOp::create(
          b, loc, vec, source, at, pad,
          AffineMap::get(rank, 0, getAffineDimExpr(rank - 1, ctx)),
          /*inBounds=*/ArrayRef<bool>{whole});
    };

    SmallVector<OpFoldResult> upper{batch, rewriter.getIndexAttr(blocks)};
    auto forall = scf::ForallOp::create(
        rewriter, loc, upper, ValueRange{init}, std::nullopt,
        [&](OpBuilder &b, Location, ValueRange args) {
          Value bIdx = args[0];
          Value c0 = arith::MulIOp::create(b, loc, args[1], idx(b, lanes));
          Value shared = args[2];
          SmallVector<Value> bCols, cCols;
          for (int64_t i = 0; i < state; ++i) {
            bCols.push_back(readLanes(b, bbT, ValueRange{idx(b, i), c0}));
            cCols.push_back(readLanes(b, cT, ValueRange{idx(b, i), c0}));
          }
          Value dV = readLanes(b, d, ValueRange{c0});
          Value zeros = arith::ConstantOp::create(
              b, loc, vec, DenseElementsAttr::get(vec, 0.0f));

          // The block of the output this thread writes: [1, L, width].
          OpFoldResult width = b.getIndexAttr(lanes);
          if (!whole)
            width = arith::MinSIOp::create(
                        b, loc, idx(b, lanes),
                        arith::SubIOp::create(b, loc, idx(b, channels), c0))
                        .getResult();
          SmallVector<OpFoldResult> offsets{bIdx, b.getIndexAttr(0), c0};
          SmallVector<OpFoldResult> sizes{b.getIndexAttr(1), length, width};
          SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
          Value block = tensor::ExtractSliceOp::create(b, loc, shared, offsets,
                                                       sizes, strides);
          SmallVector<Value> iterInit(state, zeros);
          iterInit.push_back(block);
          auto steps = scf::ForOp::create(
              b, loc, idx(b, 0), length, idx(b, 1), iterInit,
              [&](OpBuilder &nb, Location, Value t, ValueRange carried) {
                Value uV = readLanes(nb, u, ValueRange{bIdx, t, c0});
                SmallVector<Value> next(state);
                for (int64_t i0 = 0; i0 < state; i0 += kSSMRowGroup) {
                  int64_t rows = std::min(kSSMRowGroup, state - i0);
                  SmallVector<Value> acc, abRows;
                  for (int64_t r = 0; r < rows; ++r) {
                    acc.push_back(
                        arith::MulFOp::create(nb, loc, bCols[i0 + r], uV));
                    // Row i of Ab as one vector: one read instead of N
                    // scalar extracts (which bufferization would analyze
                    // one by one).
                    abRows.push_back(vector::TransferReadOp::create(
                        nb, loc, rowVec, ab,
                        ValueRange{idx(nb, i0 + r), idx(nb, 0)}, pad,
                        AffineMap::getMinorIdentityMap(2, 1, ctx),
                        /*inBounds=*/ArrayRef<bool>{true}));
                  }
                  for (int64_t j = 0; j < state; ++j)
                    for (int64_t r = 0; r < rows; ++r) {
                      Value abIJ = vector::ExtractOp::create(
                          nb, loc, abRows[r], ArrayRef<int64_t>{j});
                      acc[r] = vector::FMAOp::create(
                          nb, loc,
                          vector::BroadcastOp::create(nb, loc, vec, abIJ),
                          carried[j], acc[r]);
                    }
                  for (int64_t r = 0; r < rows; ++r)
                    next[i0 + r] = acc[r];
                }
                Value y = arith::MulFOp::create(nb, loc, dV, uV);
                for (int64_t i = 0; i < state; ++i)
                  y = vector::FMAOp::create(nb, loc, cCols[i], next[i], y);
                auto written = vector::TransferWriteOp::create(
                    nb, loc, y, carried[state],
                    ValueRange{idx(nb, 0), t, idx(nb, 0)},
                    AffineMap::get(3, 0, getAffineDimExpr(2, ctx)),
                    /*inBounds=*/ArrayRef<bool>{whole});
                next.push_back(written.getResult());
                scf::YieldOp::create(nb, loc, next);
              });
          auto inParallel = scf::InParallelOp::create(b, loc);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(inParallel.getBody());
          tensor::ParallelInsertSliceOp::create(
              b, loc, steps.getResult(state), shared, offsets, sizes, strides);
        });
    Value result = forall.getResult(0);
    if (result.getType() != op.getType())
      result = tensor::CastOp::create(rewriter, loc, op.getType(), result);
    rewriter.replaceOp(op, result);
    return success();
  }

  int64_t lanes;
  bool remarks;
};

} // namespace

void mlir::seq::populateFusedScanToLinalgPatterns(RewritePatternSet &patterns,
                                                  int64_t lanes, bool scalef,
                                                  bool remarks) {
  if (lanes <= 1)
    return;
  patterns.add<FusedSelectiveScanLowering>(patterns.getContext(), lanes,
                                           scalef, remarks);
  patterns.add<FusedSSMLowering>(patterns.getContext(), lanes, remarks);
}
