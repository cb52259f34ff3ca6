//===- FusedAttention.cpp - seq.attention as tiled online softmax ---------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The fused lowering of `seq.attention` (convert-seq-to-linalg's
// `attention-block`), FlashAttention's algorithm on tensors. The reference
// lowering (Attention.cpp) materializes the [b, h, n_q, n_k] scores; this one
// never holds more than a block of them:
//
//   scf.forall (b, h, block of `B` queries):
//     m = -inf, l = 0, O = 0                       (per query of the block)
//     for each block of `B` keys the mask can let through:
//       S = (Q * scale) K^T                   (the scale folded into Q once)
//       S = S - slope[h] |i - j|              (ALiBi, when the op has slopes)
//       S = -inf where the mask hides a key   (only on blocks it cuts)
//       m' = max(m, rowmax(S)); P = exp(S - m')
//       l = l exp(m - m') + rowsum(P); O = O exp(m - m') + P V
//       m = m'
//     out = O / l                              (0 where no key was visible)
//
// Key blocks a causal or sliding-window mask empties entirely are not
// visited: the key loop runs over [lo, hi) computed from the query block,
// so causal attention does about half the work of full attention and a
// window of w about 2 w / n of it. Only blocks the mask cuts (the diagonal,
// the window's edges, the end of a padded sequence) pay for the predicate.
//
// The products are linalg contractions and the softmax steps linalg
// generics on small tensors, which the target's kernels then vectorize (on
// the CPU: seq-cpu-vectorize-contractions and seq-cpu-vectorize-rows).
//
// ALiBi's bias is computed in the tile from the head's slope and the query
// and key positions, read as floats from one table of positions 0, 1, ...
// made once per call (the block's rows and columns are slices of it): the
// bias generic's body is then f32 arithmetic only, which the row kernels
// vectorize along the keys, and it reproduces the reference's
// `slope * float(|i - j|)` exactly (positions below 2^24 are exact). On
// blocks the mask cuts, the same generic also applies the mask.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/IR/SeqOps.h"
#include "lowering/SeqToLinalg/Patterns.h"
#include "lowering/SeqToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

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
                ArrayRef<utils::IteratorType> iterators,
                function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
    return linalg::GenericOp::create(
               b, loc, init.getType(), inputs, init, maps, iterators,
               [&](OpBuilder &nb, Location nloc, ValueRange args) {
                 linalg::YieldOp::create(nb, nloc, body(nb, nloc, args));
               })
        .getResult(0);
  }

  /// acc[i, j] += sum_r lhs[i, r] rhs[r, j], or with `transposedRhs` rhs
  /// read as [j, r] (`lhs @ rhs^T` without a copy of rhs: the CPU's
  /// contraction kernels read it in place, or pack it).
  Value matmulAcc(Value lhs, Value rhs, Value acc, bool transposedRhs = false) {
    auto par = utils::IteratorType::parallel;
    auto red = utils::IteratorType::reduction;
    AffineMap rhsMap = transposedRhs ? map(3, {dim(1), dim(2)})
                                     : map(3, {dim(2), dim(1)});
    return generic(ValueRange{lhs, rhs}, acc,
                   {map(3, {dim(0), dim(2)}), rhsMap, map(3, {dim(0), dim(1)})},
                   {par, par, red},
                   [](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                     Value p = arith::MulFOp::create(nb, nloc, a[0], a[1]);
                     return arith::AddFOp::create(nb, nloc, a[2], p);
                   });
  }

  /// Reduces the rows of `x` [rows, cols] with `combine` from `init`.
  Value rowReduce(Value x, Value rows, double init, bool max) {
    auto par = utils::IteratorType::parallel;
    auto red = utils::IteratorType::reduction;
    return generic(ValueRange{x}, filled({rows}, init),
                   {map(2, {dim(0), dim(1)}), map(2, {dim(0)})}, {par, red},
                   [max](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                     if (max)
                       return arith::MaximumFOp::create(nb, nloc, a[0], a[1]);
                     return arith::AddFOp::create(nb, nloc, a[0], a[1]);
                   });
  }

  OpBuilder &b;
  Location loc;
};

struct FusedAttentionLowering : public OpRewritePattern<AttentionOp> {
  FusedAttentionLowering(MLIRContext *context, int64_t block, bool remarks)
      : OpRewritePattern(context, /*benefit=*/2), block(block),
        remarks(remarks) {}

  /// Declines `op` for the reference lowering, saying why when asked.
  LogicalResult decline(AttentionOp op, const Twine &why) const {
    if (remarks)
      op.emitRemark("attention takes the reference lowering, which "
                    "materializes the scores: ")
          << why;
    return failure();
  }

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    auto qType = op.getQuery().getType();
    auto kType = op.getKey().getType();
    auto vType = op.getValue().getType();
    Type f32 = rewriter.getF32Type();
    MaskAttr mask = op.getMaskAttr();
    // f32, static head counts and head sizes, masks stated by position: the
    // rest (a score bias tensor) takes the reference lowering.
    if (qType.getElementType() != f32 || kType.getElementType() != f32 ||
        vType.getElementType() != f32 || op.getType().getElementType() != f32)
      return decline(op, "it is not f32");
    if (qType.isDynamicDim(1) || kType.isDynamicDim(1) ||
        qType.isDynamicDim(3) || vType.isDynamicDim(3))
      return decline(op, "its head counts or head sizes are not static");
    if (op.getBias())
      return decline(op, "it has a score bias");
    const int64_t heads = qType.getDimSize(1);
    const int64_t kvHeads = kType.getDimSize(1);
    const int64_t group = heads / kvHeads;
    const int64_t d = qType.getDimSize(3);
    const int64_t dv = vType.getDimSize(3);
    const bool causal = mask && mask.getCausal();
    const int64_t window = mask ? mask.getWindow() : 0;
    const int64_t globalTokens = mask ? mask.getGlobalTokens() : 0;
    const double scale = op.getEffectiveScale();

    Location loc = op.getLoc();
    BlockBuilder bb(rewriter, loc);
    Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
    Value lengths = op.getLengths();
    Value alibi = op.getAlibi();
    Value batch = tensor::DimOp::create(rewriter, loc, q, 0);
    if (alibi &&
        failed(assertEqualSizes(
            rewriter, loc, tensor::getMixedSize(rewriter, loc, alibi, 0),
            rewriter.getIndexAttr(heads),
            "seq.attention: alibi size differs from the heads")))
      return rewriter.notifyMatchFailure(op, "alibi size differs from heads");
    Value nq = tensor::DimOp::create(rewriter, loc, q, 2);
    Value nk = tensor::DimOp::create(rewriter, loc, k, 2);
    Value init = tensor::EmptyOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{batch, rewriter.getIndexAttr(heads), nq,
                               rewriter.getIndexAttr(dv)},
        f32);
    Value blockSize = bb.idx(block);
    Value qBlocks = arith::CeilDivUIOp::create(rewriter, loc, nq, blockSize);

    // ALiBi: positions 0, 1, ..., max(n_q, n_k) - 1 as f32, once per call.
    Value positions;
    if (alibi) {
      Value n = arith::MaxUIOp::create(rewriter, loc, nq, nk);
      AffineMap id1 = bb.map(1, {bb.dim(0)});
      positions = bb.generic(
          ValueRange{}, bb.empty({n}), {id1}, {utils::IteratorType::parallel},
          [](OpBuilder &gb, Location gl, ValueRange) -> Value {
            return indexToFloat(gb, gl, linalg::IndexOp::create(gb, gl, 0),
                                gb.getF32Type());
          });
    }

    auto par = utils::IteratorType::parallel;
    auto forall = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{batch, rewriter.getIndexAttr(heads), qBlocks},
        ValueRange{init}, std::nullopt,
        [&](OpBuilder &b, Location, ValueRange args) {
          BlockBuilder bb(b, loc);
          Value bIdx = args[0], h = args[1], shared = args[3];
          Value q0 = arith::MulIOp::create(b, loc, args[2], blockSize);
          Value rows = arith::MinUIOp::create(
              b, loc, blockSize, arith::SubIOp::create(b, loc, nq, q0));
          Value kvh = group == 1 ? h
                                 : arith::DivUIOp::create(b, loc, h,
                                                          bb.idx(group))
                                       .getResult();
          Value length =
              lengths ? convertScalar(b, loc,
                                      tensor::ExtractOp::create(
                                          b, loc, lengths, ValueRange{bIdx}),
                                      b.getIndexType())
                      : Value();

          auto slice2d = [&](Value source, Value head, Value start, Value n,
                             int64_t width) {
            auto type = RankedTensorType::get({ShapedType::kDynamic, width},
                                              b.getF32Type());
            return tensor::ExtractSliceOp::create(
                b, loc, type, source,
                ArrayRef<OpFoldResult>{bIdx, head, start, b.getIndexAttr(0)},
                ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1), n,
                                       b.getIndexAttr(width)},
                SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
          };
          // The scale folded into the block of queries, once, instead of
          // into every block of scores. A linalg.map, not a generic, so that
          // elementwise fusion does not merge it into the Q K^T product,
          // whose body must stay a multiply-add for the contraction kernels.
          Value qBlock =
              linalg::MapOp::create(
                  b, loc, ValueRange{slice2d(q, h, q0, rows, d)},
                  bb.empty({rows, b.getIndexAttr(d)}),
                  [&](OpBuilder &gb, Location gl, ValueRange a) {
                    linalg::YieldOp::create(
                        gb, gl,
                        ValueRange{arith::MulFOp::create(
                            gb, gl, a[0],
                            createFloatConstant(gb, gl, gb.getF32Type(),
                                                scale))});
                  })
                  .getResult()[0];
          auto slice1d = [&](Value source, Value start, Value n) {
            return tensor::ExtractSliceOp::create(
                b, loc,
                RankedTensorType::get({ShapedType::kDynamic}, b.getF32Type()),
                source, ArrayRef<OpFoldResult>{start}, ArrayRef<OpFoldResult>{n},
                ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
          };
          // ALiBi: the head's slope and the block's query positions.
          Value slope, qPos;
          if (alibi) {
            slope = convertScalar(
                b, loc, tensor::ExtractOp::create(b, loc, alibi, ValueRange{h}),
                b.getF32Type());
            qPos = slice1d(positions, q0, rows);
          }

          // The keys the mask lets this block of queries see: [lo, hi).
          Value lo = bb.idx(0), hi = nk;
          Value qLast = arith::AddIOp::create(
              b, loc, q0, arith::SubIOp::create(b, loc, rows, bb.idx(1)));
          if (causal)
            hi = arith::MinUIOp::create(
                b, loc, hi, arith::AddIOp::create(b, loc, qLast, bb.idx(1)));
          if (window > 0) {
            Value reach = bb.idx(window - 1);
            Value start = arith::SubIOp::create(
                b, loc, arith::MaxUIOp::create(b, loc, q0, reach), reach);
            lo = start;
            hi = arith::MinUIOp::create(
                b, loc, hi,
                arith::AddIOp::create(b, loc, qLast, bb.idx(window)));
          }
          // Global tokens: a block with a global query sees every key the
          // causal mask leaves (the predicate then sorts its rows out); the
          // others also see the global keys [0, g) before the window, in a
          // first loop over [0, min(g, lo)).
          Value globalEnd = bb.idx(0);
          if (globalTokens > 0) {
            Value g = bb.idx(globalTokens);
            Value globalRows = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::ult, q0, g);
            Value allHi = causal ? arith::MinUIOp::create(
                                       b, loc, nk,
                                       arith::AddIOp::create(b, loc, qLast,
                                                             bb.idx(1)))
                                       .getResult()
                                 : nk;
            globalEnd = arith::SelectOp::create(
                b, loc, globalRows, bb.idx(0),
                arith::MinUIOp::create(b, loc, g, lo));
            lo = arith::SelectOp::create(b, loc, globalRows, bb.idx(0), lo);
            hi = arith::SelectOp::create(b, loc, globalRows, allHi, hi);
          }
          if (length) {
            // A negative length hides every key.
            Value clamped = arith::MaxSIOp::create(b, loc, length, bb.idx(0));
            hi = arith::MinUIOp::create(b, loc, hi, clamped);
            globalEnd = arith::MinUIOp::create(b, loc, globalEnd, clamped);
          }
          hi = arith::MaxUIOp::create(b, loc, hi, lo);

          Value m0 = bb.filled({rows}, -std::numeric_limits<double>::infinity());
          Value l0 = bb.filled({rows}, 0.0);
          Value o0 = bb.filled({rows, b.getIndexAttr(dv)}, 0.0);
          // The online softmax over the key blocks of [from, to), from the
          // state `init`.
          auto keyLoop = [&](Value from, Value to, ValueRange init) {
           return scf::ForOp::create(
              b, loc, from, to, blockSize, init,
              [&](OpBuilder &nb, Location, Value k0, ValueRange carried) {
                BlockBuilder kb(nb, loc);
                Value cols = arith::MinUIOp::create(
                    nb, loc, blockSize, arith::SubIOp::create(nb, loc, to, k0));
                Value kBlock = slice2d(k, kvh, k0, cols, d);
                Value vBlock = slice2d(v, kvh, k0, cols, dv);
                // Q K^T with K read in place along the head dimension.
                Value s = kb.matmulAcc(qBlock, kBlock,
                                       kb.filled({rows, cols}, 0.0),
                                       /*transposedRhs=*/true);

                // ALiBi's bias, and the mask where it cuts this block.
                AffineMap id2 = kb.map(2, {kb.dim(0), kb.dim(1)});
                AffineMap rowMap = kb.map(2, {kb.dim(0)});
                AffineMap colMap = kb.map(2, {kb.dim(1)});
                SmallVector<Value> biasInputs;
                SmallVector<AffineMap> biasMaps;
                if (alibi) {
                  biasInputs = {qPos, slice1d(positions, k0, cols)};
                  biasMaps = {rowMap, colMap};
                }
                biasMaps.push_back(id2);
                // s - slope * |i - j| on f32 positions; `a` holds the query
                // and key positions, then the score.
                auto addBias = [&](OpBuilder &gb, Location gl,
                                   ValueRange a) -> Value {
                  if (!alibi)
                    return a[0];
                  Value distance = math::AbsFOp::create(
                      gb, gl, arith::SubFOp::create(gb, gl, a[0], a[1]));
                  return arith::SubFOp::create(
                      gb, gl, a[2],
                      arith::MulFOp::create(gb, gl, slope, distance));
                };
                Value cut = needsMask(nb, q0, qLast, k0, cols, length, causal,
                                      window);
                Value scores = s;
                if (alibi && !cut)
                  scores = kb.generic(biasInputs, s, biasMaps, {par, par},
                                      addBias);
                if (cut) {
                  auto ifOp = scf::IfOp::create(
                      nb, loc, TypeRange{s.getType()}, cut, /*withElse=*/true);
                  {
                    OpBuilder::InsertionGuard guard(nb);
                    nb.setInsertionPointToStart(ifOp.thenBlock());
                    BlockBuilder mb(nb, loc);
                    Value masked = mb.generic(
                        biasInputs, s, biasMaps, {par, par},
                        [&](OpBuilder &gb, Location gl, ValueRange a) -> Value {
                          Value i = arith::AddIOp::create(
                              gb, gl, q0, linalg::IndexOp::create(gb, gl, 0));
                          Value j = arith::AddIOp::create(
                              gb, gl, k0, linalg::IndexOp::create(gb, gl, 1));
                          Value x = addBias(gb, gl, a);
                          Value allowed =
                              buildMaskPredicate(gb, gl, mask, i, j, length);
                          return arith::SelectOp::create(
                              gb, gl, allowed, x,
                              createInfinity(gb, gl, gb.getF32Type(),
                                             /*negative=*/true));
                        });
                    scf::YieldOp::create(nb, loc, masked);
                    nb.setInsertionPointToStart(ifOp.elseBlock());
                    BlockBuilder ub(nb, loc);
                    scf::YieldOp::create(
                        nb, loc,
                        alibi ? ub.generic(biasInputs, s, biasMaps, {par, par},
                                           addBias)
                              : s);
                  }
                  scores = ifOp.getResult(0);
                }

                // Online softmax.
                AffineMap row = kb.map(2, {kb.dim(0)});
                AffineMap id1 = kb.map(1, {kb.dim(0)});
                Value blockMax = kb.rowReduce(
                    scores, rows, -std::numeric_limits<double>::infinity(),
                    /*max=*/true);
                auto newMax = [](OpBuilder &gb, Location gl, Value m,
                                 Value bm) {
                  // Rows that have seen no key yet keep exp(-inf) = 0.
                  return createSafeMax(gb, gl,
                                 arith::MaximumFOp::create(gb, gl, m, bm));
                };
                // alpha = exp(m - m'), the rescaling of what came before;
                // 0 while no key was seen (m = -inf: l and O are 0), which
                // also keeps exp away from -inf - m' when m' is huge.
                Value alpha = kb.generic(
                    ValueRange{carried[0], blockMax}, kb.empty({rows}),
                    {id1, id1, id1}, {par},
                    [&](OpBuilder &gb, Location gl, ValueRange a) -> Value {
                      Value negInf = createInfinity(gb, gl, gb.getF32Type(),
                                                    /*negative=*/true);
                      Value unseen = arith::CmpFOp::create(
                          gb, gl, arith::CmpFPredicate::OEQ, a[0], negInf);
                      Value rescale = math::ExpOp::create(
                          gb, gl,
                          arith::SubFOp::create(
                              gb, gl, a[0],
                              arith::MaximumFOp::create(gb, gl, a[0], a[1])));
                      return arith::SelectOp::create(
                          gb, gl, unseen,
                          createFloatConstant(gb, gl, gb.getF32Type(), 0.0),
                          rescale);
                    });
                // P = exp(S - m'), in place of the scores.
                Value p = kb.generic(
                    ValueRange{carried[0], blockMax}, scores, {row, row, id2},
                    {par, par},
                    [&](OpBuilder &gb, Location gl, ValueRange a) -> Value {
                      return math::ExpOp::create(
                          gb, gl,
                          arith::SubFOp::create(gb, gl, a[2],
                                                newMax(gb, gl, a[0], a[1])));
                    });
                Value blockSum = kb.rowReduce(p, rows, 0.0, /*max=*/false);
                // The state is updated in place, so that the loop carries
                // the same buffers from block to block.
                Value mNew = kb.generic(
                    ValueRange{blockMax}, carried[0], {id1, id1}, {par},
                    [](OpBuilder &gb, Location gl, ValueRange a) -> Value {
                      return arith::MaximumFOp::create(gb, gl, a[1], a[0]);
                    });
                Value lNew = kb.generic(
                    ValueRange{alpha, blockSum}, carried[1], {id1, id1, id1},
                    {par},
                    [](OpBuilder &gb, Location gl, ValueRange a) -> Value {
                      return arith::AddFOp::create(
                          gb, gl, arith::MulFOp::create(gb, gl, a[2], a[0]),
                          a[1]);
                    });
                Value oScaled = kb.generic(
                    ValueRange{alpha}, carried[2], {row, id2}, {par, par},
                    [](OpBuilder &gb, Location gl, ValueRange a) -> Value {
                      return arith::MulFOp::create(gb, gl, a[1], a[0]);
                    });
                Value oNew = kb.matmulAcc(p, vBlock, oScaled);
                scf::YieldOp::create(nb, loc, ValueRange{mNew, lNew, oNew});
              });
          };
          SmallVector<Value> state{m0, l0, o0};
          if (globalTokens > 0) {
            scf::ForOp globalKeys = keyLoop(bb.idx(0), globalEnd, state);
            state = SmallVector<Value>(globalKeys.getResults());
          }
          scf::ForOp keys = keyLoop(lo, hi, state);

          // out = O / l; rows that saw no key give 0.
          AffineMap row = bb.map(2, {bb.dim(0)});
          AffineMap id2 = bb.map(2, {bb.dim(0), bb.dim(1)});
          Value out = bb.generic(
              ValueRange{keys.getResult(1)}, keys.getResult(2), {row, id2},
              {par, par}, [](OpBuilder &gb, Location gl, ValueRange a) -> Value {
                Value zero = createFloatConstant(gb, gl, gb.getF32Type(), 0.0);
                Value positive = arith::CmpFOp::create(
                    gb, gl, arith::CmpFPredicate::OGT, a[0], zero);
                return arith::SelectOp::create(
                    gb, gl, positive, arith::DivFOp::create(gb, gl, a[1], a[0]),
                    zero);
              });
          auto inParallel = scf::InParallelOp::create(b, loc);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(inParallel.getBody());
          tensor::ParallelInsertSliceOp::create(
              b, loc, out, shared,
              ArrayRef<OpFoldResult>{bIdx, h, q0, b.getIndexAttr(0)},
              ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1), rows,
                                     b.getIndexAttr(dv)},
              SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
        });
    Value result = forall.getResult(0);
    if (result.getType() != op.getType())
      result = tensor::CastOp::create(rewriter, loc, op.getType(), result);
    rewriter.replaceOp(op, result);
    return success();
  }

  /// Whether the mask hides any key of the block [k0, k0 + cols) from any
  /// query of [q0, qLast]; null when no mask applies at all.
  static Value needsMask(OpBuilder &b, Value q0, Value qLast, Value k0,
                         Value cols, Value length, bool causal,
                         int64_t window) {
    Location loc = q0.getLoc();
    Value kLast = arith::SubIOp::create(
        b, loc, arith::AddIOp::create(b, loc, k0, cols),
        arith::ConstantIndexOp::create(b, loc, 1));
    Value cut;
    auto either = [&](Value c) {
      cut = cut ? arith::OrIOp::create(b, loc, cut, c).getResult() : c;
    };
    // Some key after the first query.
    if (causal)
      either(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, kLast,
                                   q0));
    if (window > 0) {
      Value w = arith::ConstantIndexOp::create(b, loc, window);
      // The farthest pairs: the last query and the first key, the first
      // query and the last key.
      Value far1 = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::uge,
          arith::SubIOp::create(b, loc, qLast, arith::MinUIOp::create(
                                                   b, loc, qLast, k0)),
          w);
      Value far2 = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::uge,
          arith::SubIOp::create(b, loc, kLast,
                                arith::MinUIOp::create(b, loc, kLast, q0)),
          w);
      either(far1);
      either(far2);
    }
    // The key range already stops at the length; only a negative one (no
    // key at all) needs the predicate, and then the loop does not run.
    (void)length;
    return cut;
  }

  int64_t block;
  bool remarks;
};

} // namespace

void mlir::seq::populateFusedAttentionToLinalgPatterns(
    RewritePatternSet &patterns, int64_t block, bool remarks) {
  if (block > 0)
    patterns.add<FusedAttentionLowering>(patterns.getContext(), block,
                                         remarks);
}
