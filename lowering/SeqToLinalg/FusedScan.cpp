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
//     h[n] = 0 for every state index n       (vector<lanes>, in registers)
//     for t in 0 .. L:
//       dt   = softplus(delta[b, t, c] + delta_bias[c])          (vectors)
//       y    = 0
//       for n in 0 .. N (unrolled):
//         h[n] = exp(dt * A[c, n]) * h[n] + (dt * u[b, t, c]) * B[b, t, n]
//         y   += h[n] * C[b, t, n]
//       out[b, t, c] = (y + D[c] u[b, t, c]) * silu(z[b, t, c])
//
// Every input is read once and the output written once; the state and the
// [b, L, D, N] products never reach memory. Vectors run across channels, so
// loads of u, delta and z and the store of out are contiguous and B[t, n],
// C[t, n] are broadcast scalars. A's columns are gathered once per block.
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
#include "lowering/SeqToLinalg/Patterns.h"
#include "lowering/SeqToLinalg/StateSpace.h"
#include "lowering/SeqToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::seq;

namespace {

struct FusedSelectiveScanLowering
    : public OpRewritePattern<SelectiveScanOp> {
  FusedSelectiveScanLowering(MLIRContext *context, int64_t lanes,
                             bool remarks)
      : OpRewritePattern(context, /*benefit=*/2), lanes(lanes),
        remarks(remarks) {}

  /// Declines `op` for the reference lowering, saying why when asked.
  LogicalResult decline(SelectiveScanOp op, const Twine &why) const {
    if (remarks)
      op.emitRemark("selective scan takes the step-by-step reference "
                    "lowering: ")
          << why;
    return failure();
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
                    op.getC(), op.getD(), op.getZ(), op.getDeltaBias()})
      if (!allF32(v))
        return decline(op, "an operand is not f32");
    if (op.getType().getElementType() != f32)
      return decline(op, "the result is not f32");
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
    bool softplus = op.getDeltaSoftplus();

    VectorType vec = VectorType::get({lanes}, f32);
    auto idx = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value pad = arith::ConstantOp::create(rewriter, loc, f32,
                                          rewriter.getF32FloatAttr(0.0f));
    Value batch = tensor::DimOp::create(rewriter, loc, u, 0);
    Value length = tensor::DimOp::create(rewriter, loc, u, 1);
    Value init = tensor::EmptyOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{batch, length, rewriter.getIndexAttr(channels)},
        f32);

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
        rewriter, loc, upper, ValueRange{init}, std::nullopt,
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
            aCols.push_back(
                vector::FromElementsOp::create(b, loc, vec, column));
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
          SmallVector<Value> iterInit(state, zeros);
          iterInit.push_back(block);
          auto steps = scf::ForOp::create(
              b, loc, idx(b, 0), length, idx(b, 1), iterInit,
              [&](OpBuilder &nb, Location, Value t, ValueRange carried) {
                SmallVector<Value> at{bIdx, t, c0};
                Value uV = readRow(nb, u, at);
                Value dt = readRow(nb, delta, at);
                if (biasV)
                  dt = arith::AddFOp::create(nb, loc, dt, biasV);
                if (softplus)
                  dt = statespace::buildSoftplus(nb, loc, dt);
                Value dtU = arith::MulFOp::create(nb, loc, dt, uV);
                Value y = zeros;
                SmallVector<Value> next;
                for (int64_t n = 0; n < state; ++n) {
                  SmallVector<Value> bcAt{bIdx, t, idx(nb, n)};
                  Value bN = vector::BroadcastOp::create(
                      nb, loc, vec, tensor::ExtractOp::create(nb, loc, bIn, bcAt));
                  Value cN = vector::BroadcastOp::create(
                      nb, loc, vec, tensor::ExtractOp::create(nb, loc, cIn, bcAt));
                  Value decay = math::ExpOp::create(
                      nb, loc, arith::MulFOp::create(nb, loc, dt, aCols[n]));
                  Value h = vector::FMAOp::create(
                      nb, loc, decay, carried[n],
                      arith::MulFOp::create(nb, loc, dtU, bN));
                  y = vector::FMAOp::create(nb, loc, h, cN, y);
                  next.push_back(h);
                }
                if (dV)
                  y = vector::FMAOp::create(nb, loc, dV, uV, y);
                if (z)
                  y = arith::MulFOp::create(
                      nb, loc, y,
                      statespace::buildSilu(nb, loc, readRow(nb, z, at)));
                auto written = vector::TransferWriteOp::create(
                    nb, loc, y, carried[state],
                    ValueRange{idx(nb, 0), t, idx(nb, 0)},
                    AffineMap::get(3, 0, getAffineDimExpr(2, ctx)),
                    /*inBounds=*/ArrayRef<bool>{true});
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
    if (remarks)
      op.emitRemark("S4 scan takes the step-by-step matmul lowering: ") << why;
    return failure();
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
    Value aWide = statespace::convertElements(rewriter, loc, op.getA(), wide);
    Value bWide = statespace::convertElements(rewriter, loc, op.getB(), wide);
    statespace::DiscreteSystem system =
        op.getDiscretization() == Discretization::zoh
            ? statespace::discretizeZoh(rewriter, loc, aWide, bWide, step)
            : statespace::discretizeBilinear(rewriter, loc, aWide, bWide, step);
    Value ab = statespace::convertElements(rewriter, loc, system.ab, f32);
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
    VectorType vec = VectorType::get({lanes}, f32);
    VectorType rowVec = VectorType::get({state}, f32);
    auto idx = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value pad = arith::ConstantOp::create(rewriter, loc, f32,
                                          rewriter.getF32FloatAttr(0.0f));
    Value batch = tensor::DimOp::create(rewriter, loc, u, 0);
    Value length = tensor::DimOp::create(rewriter, loc, u, 1);
    Value init = tensor::EmptyOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{batch, length, rewriter.getIndexAttr(channels)},
        f32);
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
                                                  int64_t lanes, bool remarks) {
  if (lanes > 1)
    patterns.add<FusedSelectiveScanLowering, FusedSSMLowering>(
        patterns.getContext(), lanes, remarks);
}
