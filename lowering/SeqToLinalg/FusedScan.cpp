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

} // namespace

void mlir::seq::populateFusedScanToLinalgPatterns(RewritePatternSet &patterns,
                                                  int64_t lanes, bool remarks) {
  if (lanes > 1)
    patterns.add<FusedSelectiveScanLowering>(patterns.getContext(), lanes,
                                             remarks);
}
