//===- FusedAttention.cpp - the tiles of an online softmax to linalg -----===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The lowering of the tile-level attention ops that seq-tile-attention
// (passes/TileAttention.cpp) makes of `seq.attention`: FlashAttention's
// per-tile step and its epilogue on small tensors.
//
//   seq.online_attention (one key tile of a query tile):
//     S = Q K^T                               (Q already scaled; K in place)
//     S = S + bias                            (a score bias's tile)
//     S = S - slope |pq - pk|                 (ALiBi, when the op has it)
//     S = -inf where the mask hides a key     (only on partial tiles)
//     m' = max(m, rowmax(S)); P = exp(S - m')
//     l' = l exp(m - m') + rowsum(P); O' = O exp(m - m') + P V
//
//   seq.attention_finalize:
//     out = O / l                             (0 where no key was visible)
//     with partial states [p, ...] (flash-decoding) merged first:
//     M = max_k m_k, w_k = exp(m_k - M), out = sum w_k O_k / sum w_k l_k
//
// The products are linalg contractions and the softmax steps linalg
// generics on small tensors, which the target's kernels then vectorize (on
// the CPU: seq-cpu-vectorize-contractions and seq-cpu-vectorize-rows).
//
// ALiBi's bias is computed in the tile from the head's slope and the query
// and key positions, read as floats (slices of one table the tiling made):
// the bias generic's body is then f32 arithmetic only, which the row kernels
// vectorize along the keys, and it reproduces the reference's
// `slope * float(|i - j|)` exactly (positions below 2^24 are exact). On
// partial tiles, the same generic also applies the mask.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/IR/SeqOps.h"
#include "dialect/Seq/Support/Debug.h"
#include "lowering/SeqToLinalg/Patterns.h"
#include "lowering/SeqToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#define DEBUG_TYPE "convert-seq-to-linalg"

using namespace mlir;
using namespace mlir::seq;

namespace {
/// Builders for the block-level ops, all on 1-D and 2-D f32 tensors with
/// dynamic sizes.
class BlockBuilder {
public:
  BlockBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Type f32() { return b.getF32Type(); }
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value cst(double v) { return createFloatConstant(b, loc, f32(), v); }
  AffineExpr dim(unsigned i) { return getAffineDimExpr(i, b.getContext()); }
  AffineMap map(unsigned n, ArrayRef<AffineExpr> exprs) {
    return AffineMap::get(n, 0, exprs, b.getContext());
  }

  Value empty(ArrayRef<OpFoldResult> sizes) {
    return tensor::EmptyOp::create(b, loc, sizes, f32());
  }
  Value filled(ArrayRef<OpFoldResult> sizes, double v) {
    return linalg::FillOp::create(b, loc, ValueRange{cst(v)},
                                  ValueRange{empty(sizes)})
        .getResult(0);
  }

  /// `init` updated by `body(args)` elementwise (2-D or 1-D per `maps`).
  Value generic(ValueRange inputs, Value init, ArrayRef<AffineMap> maps,
                ArrayRef<utils::IteratorType> iterators, GenericBodyFn body) {
    return buildGeneric(b, loc, inputs, init, maps, iterators, body);
  }

  /// acc[i, j] += sum_r lhs[i, r] rhs[r, j], or with `transposedRhs` rhs
  /// read as [j, r] (`lhs @ rhs^T` without a copy of rhs: the CPU's
  /// contraction kernels read it in place, or pack it). A bf16 operand is
  /// widened in the body (arith.extf), which the kernels read as bf16.
  Value matmulAcc(Value lhs, Value rhs, Value acc, bool transposedRhs = false) {
    auto par = utils::IteratorType::parallel;
    auto red = utils::IteratorType::reduction;
    AffineMap rhsMap = transposedRhs ? map(3, {dim(1), dim(2)})
                                     : map(3, {dim(2), dim(1)});
    return generic(ValueRange{lhs, rhs}, acc,
                   {map(3, {dim(0), dim(2)}), rhsMap, map(3, {dim(0), dim(1)})},
                   {par, par, red},
                   [](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                     Type f32 = nb.getF32Type();
                     Value p = arith::MulFOp::create(
                         nb, nloc, convertScalar(nb, nloc, a[0], f32),
                         convertScalar(nb, nloc, a[1], f32));
                     return arith::AddFOp::create(nb, nloc, a[2], p);
                   });
  }

  /// Reduces the rows of `x` [rows, cols] to their sums or (`max`) their
  /// maxima (createShiftMax) from `init`.
  Value rowReduce(Value x, Value rows, double init, bool max) {
    auto par = utils::IteratorType::parallel;
    auto red = utils::IteratorType::reduction;
    return generic(ValueRange{x}, filled({rows}, init),
                   {map(2, {dim(0), dim(1)}), map(2, {dim(0)})}, {par, red},
                   [max](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                     if (max)
                       return createShiftMax(nb, nloc, a[0], a[1]);
                     return arith::AddFOp::create(nb, nloc, a[0], a[1]);
                   });
  }

  OpBuilder &b;
  Location loc;
};

struct OnlineAttentionLowering : public OpRewritePattern<OnlineAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(OnlineAttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    BlockBuilder kb(rewriter, loc);
    auto par = utils::IteratorType::parallel;
    Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
    Value rows = tensor::DimOp::create(rewriter, loc, q, 0);
    const bool keyTransposed = op.getKeyTransposed();
    Value cols = tensor::DimOp::create(rewriter, loc, k, keyTransposed ? 1 : 0);
    MaskAttr mask = op.getMaskAttr();
    Value slope = op.getSlope();
    LLVM_DEBUG({
      llvm::dbgs() << "[" DEBUG_TYPE "] seq.online_attention at " << loc;
      if (mask)
        llvm::dbgs() << ": a partial tile, masked by " << mask;
      else
        llvm::dbgs() << ": a full tile, no mask arithmetic";
      llvm::dbgs() << (op.getBias() ? ", the score bias" : "")
                   << (slope ? ", ALiBi in the tile" : "") << "\n";
    });
    // Q K^T with K read in place along the head dimension (bf16 Q and K
    // as they are: the kernels pair or widen them); a key tile packed as
    // [d, c] by the tiling is a plain right operand, which the broadcast
    // kernel reads in rows of c columns without a copy.
    Value s = kb.matmulAcc(q, k, kb.filled({rows, cols}, 0.0),
                           /*transposedRhs=*/!keyTransposed);
    // The scale of a query that was not scaled beforehand, on the f32
    // scores (in the bias or mask generic when there is one).
    std::optional<double> scale;
    if (FloatAttr attr = op.getScaleAttr())
      scale = attr.getValueAsDouble();
    auto scaled = [&](OpBuilder &gb, Location gl, Value x) -> Value {
      if (!scale)
        return x;
      return arith::MulFOp::create(
          gb, gl, x, createFloatConstant(gb, gl, gb.getF32Type(), *scale));
    };

    // The score bias, ALiBi's bias, and the mask on a partial tile.
    AffineMap id2 = kb.map(2, {kb.dim(0), kb.dim(1)});
    AffineMap rowMap = kb.map(2, {kb.dim(0)});
    AffineMap colMap = kb.map(2, {kb.dim(1)});
    Value bias = op.getBias();
    SmallVector<Value> biasInputs;
    SmallVector<AffineMap> biasMaps;
    if (bias) {
      // [c] (the same for every row: a key-padding bias) or [r, c].
      biasInputs.push_back(bias);
      biasMaps.push_back(
          cast<RankedTensorType>(bias.getType()).getRank() == 1 ? colMap : id2);
    }
    if (slope) {
      biasInputs.append({op.getQueryPositions(), op.getKeyPositions()});
      biasMaps.append({rowMap, colMap});
    }
    biasMaps.push_back(id2);
    // s + bias - slope * |i - j| on f32 positions; `a` holds the bias, the
    // query and key positions, then the score.
    auto addBias = [&](OpBuilder &gb, Location gl, ValueRange a) -> Value {
      Value x = scaled(gb, gl, a.back());
      if (bias) {
        x = arith::AddFOp::create(
            gb, gl, x, convertScalar(gb, gl, a.front(), gb.getF32Type()));
        a = a.drop_front();
      }
      if (!slope)
        return x;
      Value distance = math::AbsFOp::create(
          gb, gl, arith::SubFOp::create(gb, gl, a[0], a[1]));
      return arith::SubFOp::create(
          gb, gl, x, arith::MulFOp::create(gb, gl, slope, distance));
    };
    Value scores = s;
    if (mask) {
      Value q0 = op.getOffsets()[0], k0 = op.getOffsets()[1];
      scores = kb.generic(
          biasInputs, s, biasMaps, {par, par},
          [&](OpBuilder &gb, Location gl, ValueRange a) -> Value {
            Value i = arith::AddIOp::create(
                gb, gl, q0, linalg::IndexOp::create(gb, gl, 0));
            Value j = arith::AddIOp::create(
                gb, gl, k0, linalg::IndexOp::create(gb, gl, 1));
            Value x = addBias(gb, gl, a);
            Value allowed = buildMaskPredicate(gb, gl, mask, i, j, Value());
            return arith::SelectOp::create(
                gb, gl, allowed, x,
                createInfinity(gb, gl, gb.getF32Type(), /*negative=*/true));
          });
    } else if (bias || slope || scale) {
      scores = kb.generic(biasInputs, s, biasMaps, {par, par}, addBias);
    }

    // Online softmax.
    AffineMap id1 = kb.map(1, {kb.dim(0)});
    Value blockMax =
        kb.rowReduce(scores, rows, -std::numeric_limits<double>::infinity(),
                     /*max=*/true);
    auto newMax = [](OpBuilder &gb, Location gl, Value m, Value bm) {
      // Rows that have seen no key yet keep exp(-inf) = 0.
      return createSafeMax(gb, gl, createShiftMax(gb, gl, m, bm));
    };
    // alpha = exp(m - m'), the rescaling of what came before; 0 while no
    // key was seen (m = -inf: l and O are 0), which also keeps exp away
    // from -inf - m' when m' is huge.
    Value alpha = kb.generic(
        ValueRange{op.getMax(), blockMax}, kb.empty({rows}), {id1, id1, id1},
        {par}, [&](OpBuilder &gb, Location gl, ValueRange a) -> Value {
          Value negInf =
              createInfinity(gb, gl, gb.getF32Type(), /*negative=*/true);
          Value unseen = arith::CmpFOp::create(
              gb, gl, arith::CmpFPredicate::OEQ, a[0], negInf);
          Value rescale = math::ExpOp::create(
              gb, gl,
              arith::SubFOp::create(gb, gl, a[0],
                                    createShiftMax(gb, gl, a[0], a[1])));
          return arith::SelectOp::create(
              gb, gl, unseen,
              createFloatConstant(gb, gl, gb.getF32Type(), 0.0), rescale);
        });
    // P = exp(S - m'), in place of the scores. `seq.fast_exp`: the
    // CPU takes a shorter polynomial for this exp, the one per score
    // (lowering/CPU/ApproximateMath.cpp: at most 2 ulp on the arguments
    // attention gives it, s - m' <= 0, and exp(-inf) = 0); other targets
    // ignore the attribute.
    Value p = kb.generic(
        ValueRange{op.getMax(), blockMax}, scores, {rowMap, rowMap, id2},
        {par, par}, [&](OpBuilder &gb, Location gl, ValueRange a) -> Value {
          return createFastExp(
              gb, gl,
              arith::SubFOp::create(gb, gl, a[2], newMax(gb, gl, a[0], a[1])));
        });
    Value blockSum = kb.rowReduce(p, rows, 0.0, /*max=*/false);
    // The state is updated in place, so that the loop carries the same
    // buffers from tile to tile.
    Value mNew =
        kb.generic(ValueRange{blockMax}, op.getMax(), {id1, id1}, {par},
                   [](OpBuilder &gb, Location gl, ValueRange a) -> Value {
                     return createShiftMax(gb, gl, a[1], a[0]);
                   });
    Value lNew = kb.generic(
        ValueRange{alpha, blockSum}, op.getSum(), {id1, id1, id1}, {par},
        [](OpBuilder &gb, Location gl, ValueRange a) -> Value {
          return arith::AddFOp::create(
              gb, gl, arith::MulFOp::create(gb, gl, a[2], a[0]), a[1]);
        });
    Value oScaled = kb.generic(
        ValueRange{alpha}, op.getAcc(), {rowMap, id2}, {par, par},
        [](OpBuilder &gb, Location gl, ValueRange a) -> Value {
          return arith::MulFOp::create(gb, gl, a[1], a[0]);
        });
    Value oNew = kb.matmulAcc(p, v, oScaled);
    rewriter.replaceOp(
        op, {castToType(rewriter, loc, oNew, op.getAcc().getType()),
             castToType(rewriter, loc, mNew, op.getMax().getType()),
             castToType(rewriter, loc, lNew, op.getSum().getType())});
    return success();
  }
};

struct AttentionFinalizeLowering
    : public OpRewritePattern<AttentionFinalizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionFinalizeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    BlockBuilder bb(rewriter, loc);
    auto par = utils::IteratorType::parallel;
    auto red = utils::IteratorType::reduction;
    Value acc = op.getAcc(), m = op.getMax(), l = op.getSum();
    const bool merge = op.getAcc().getType().getRank() == 3;
    const int64_t rowDim = merge ? 1 : 0;
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] seq.attention_finalize at " << loc << ": "
               << (merge ? "the partial states of the key chunks "
                           "merged, then O / l"
                         : "O / l")
               << "\n");
    Value rows = tensor::DimOp::create(rewriter, loc, acc, rowDim);
    Value dv = tensor::DimOp::create(rewriter, loc, acc, rowDim + 1);
    if (merge) {
      // Partial states over disjoint key ranges: iterate (row, part) and
      // (row, column, part), the parts reduced.
      AffineMap partRow = bb.map(2, {bb.dim(1), bb.dim(0)});
      AffineMap row2 = bb.map(2, {bb.dim(0)});
      Value top = bb.generic(
          ValueRange{m}, bb.filled({rows}, -std::numeric_limits<double>::infinity()),
          {partRow, row2}, {par, red},
          [](OpBuilder &gb, Location gl, ValueRange a) -> Value {
            return arith::MaximumFOp::create(gb, gl, a[0], a[1]);
          });
      // w = exp(m_k - M), 0 for parts that saw no key (m_k = -inf).
      auto weight = [](OpBuilder &gb, Location gl, Value mk, Value mTop) {
        Value negInf =
            createInfinity(gb, gl, gb.getF32Type(), /*negative=*/true);
        Value unseen = arith::CmpFOp::create(gb, gl, arith::CmpFPredicate::OEQ,
                                             mk, negInf);
        Value w = math::ExpOp::create(
            gb, gl, arith::SubFOp::create(gb, gl, mk, mTop));
        return arith::SelectOp::create(
                   gb, gl, unseen,
                   createFloatConstant(gb, gl, gb.getF32Type(), 0.0), w)
            .getResult();
      };
      Value sum = bb.generic(
          ValueRange{m, top, l}, bb.filled({rows}, 0.0),
          {partRow, row2, partRow, row2}, {par, red},
          [&](OpBuilder &gb, Location gl, ValueRange a) -> Value {
            Value w = weight(gb, gl, a[0], a[1]);
            return arith::AddFOp::create(
                gb, gl, a[3], arith::MulFOp::create(gb, gl, w, a[2]));
          });
      AffineMap partRow3 = bb.map(3, {bb.dim(2), bb.dim(0)});
      AffineMap row3 = bb.map(3, {bb.dim(0)});
      AffineMap acc3 = bb.map(3, {bb.dim(2), bb.dim(0), bb.dim(1)});
      AffineMap out3 = bb.map(3, {bb.dim(0), bb.dim(1)});
      Value merged = bb.generic(
          ValueRange{m, top, acc}, bb.filled({rows, dv}, 0.0),
          {partRow3, row3, acc3, out3}, {par, par, red},
          [&](OpBuilder &gb, Location gl, ValueRange a) -> Value {
            Value w = weight(gb, gl, a[0], a[1]);
            return arith::AddFOp::create(
                gb, gl, a[3], arith::MulFOp::create(gb, gl, w, a[2]));
          });
      acc = merged;
      l = sum;
    }
    // out = O / l; rows that saw no key give 0.
    AffineMap row = bb.map(2, {bb.dim(0)});
    AffineMap id2 = bb.map(2, {bb.dim(0), bb.dim(1)});
    Value out = bb.generic(
        ValueRange{l}, acc, {row, id2}, {par, par},
        [](OpBuilder &gb, Location gl, ValueRange a) -> Value {
          Value zero = createFloatConstant(gb, gl, gb.getF32Type(), 0.0);
          Value positive = arith::CmpFOp::create(
              gb, gl, arith::CmpFPredicate::OGT, a[0], zero);
          return arith::SelectOp::create(
              gb, gl, positive, arith::DivFOp::create(gb, gl, a[1], a[0]),
              zero);
        });
    if (out.getType() != op.getType())
      out = tensor::CastOp::create(rewriter, loc, op.getType(), out);
    rewriter.replaceOp(op, out);
    return success();
  }
};

} // namespace

void mlir::seq::populateTiledAttentionToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<OnlineAttentionLowering, AttentionFinalizeLowering>(
      patterns.getContext());
}
