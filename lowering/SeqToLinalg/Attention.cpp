//===- Attention.cpp - lower apply_mask and attention to linalg -----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The reference lowering of attention: simple, materializing the
// `n_q x n_k` scores, and obviously right. With a target strategy that asks
// for it (the CPU at -O2), FusedAttention.cpp lowers the ops it handles as a
// tiled online softmax instead; it is checked against this one
// (test/Integration/CPU/fused-attention-run.test). This one remains the
// form of score-bias, global-token and non-f32 attention.
//
//   1. scores[b, h, i, j] = sum_d q[b, h, i, d] k[b, h / g, j, d]
//   2. scores = scores * scale + bias - slope[h] |i - j|, then -inf where
//      the mask (causal, window, global tokens, key lengths) hides key j;
//      with query offsets, query i of batch row b is at position
//      i + query_offsets[b] there (negative for the pads of a left-padded
//      row: the positions compare as signed integers, and a causal query
//      before position 0 sees no key)
//   3. p = safe softmax over j (fully masked rows give zeros)
//   4. out[b, h, i, e] = sum_j p[b, h, i, j] v[b, h / g, j, e]
//
// Grouped-query attention (g = heads / kv_heads > 1) expands the query head
// dimension into [kv_heads, g] (`h = kh * g + r`, so `h / g = kh`), which
// keeps every indexing map a projected permutation, as tiling and
// vectorization require, instead of a `floordiv` map.
//
// Everything after the products is computed in f32 for narrower floats.
//
// `seq.multi_head_attention` is decomposed into primitive seq ops, which the
// conversion lowers in turn. `seq.cache_write` becomes a loop over the batch
// rows inserting each row's new keys or values into the cache at its
// position, which bufferizes into the cache's own buffer; the rows at
// negative positions (left padding) are not written.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/Support/Debug.h"
#include "lowering/SeqToLinalg/Patterns.h"
#include "lowering/SeqToLinalg/Utils.h"
#include "passes/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#define DEBUG_TYPE "convert-seq-to-linalg"

using namespace mlir;
using namespace mlir::seq;

namespace {

//===----------------------------------------------------------------------===//
// apply_mask
//===----------------------------------------------------------------------===//

/// One elementwise generic replacing hidden scores by -inf; query and key
/// positions are the last two loop indices, the batch row the first.
struct ApplyMaskLowering : public OpRewritePattern<ApplyMaskOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ApplyMaskOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value scores = op.getScores();
    Value lengths = op.getLengths();
    MaskAttr mask = op.getMask();
    auto type = cast<RankedTensorType>(scores.getType());
    int64_t rank = type.getRank();

    if (!lengths && mask.isFull()) {
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] seq.apply_mask at " << loc
                              << ": hides nothing, folded away\n");
      rewriter.replaceOp(op, scores);
      return success();
    }

    SmallVector<Value> inputs = {scores};
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank)};
    if (lengths) {
      (void)assertEqualSizes(
          rewriter, loc, tensor::getMixedSize(rewriter, loc, lengths, 0),
          tensor::getMixedSize(rewriter, loc, scores, 0),
          "seq.apply_mask: lengths size differs from the batch");
      inputs.push_back(lengths);
      maps.push_back(AffineMap::get(rank, 0, getAffineDimExpr(0, ctx)));
    }
    maps.push_back(rewriter.getMultiDimIdentityMap(rank));
    Value init = createEmptyTensor(rewriter, loc,
                                   tensor::getMixedSizes(rewriter, loc, scores),
                                   type.getElementType());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, init.getType(), inputs, init, maps,
        getIteratorTypes(rank),
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value i = linalg::IndexOp::create(b, nloc, rank - 2);
          Value j = linalg::IndexOp::create(b, nloc, rank - 1);
          Value length = lengths
                             ? convertScalar(b, nloc, args[1], b.getIndexType())
                             : Value();
          Value allowed = buildMaskPredicate(b, nloc, mask, i, j, length);
          Value negInf =
              createInfinity(b, nloc, type.getElementType(), /*negative=*/true);
          Value result =
              arith::SelectOp::create(b, nloc, allowed, args[0], negInf);
          linalg::YieldOp::create(b, nloc, result);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

struct AttentionLowering : public OpRewritePattern<AttentionOp> {
  /// With `rowForms` (the CPU at -O2), f32 attention normalizes its output
  /// instead of its probabilities: see matchAndRewrite.
  AttentionLowering(MLIRContext *context, bool rowForms = false)
      : OpRewritePattern(context, /*benefit=*/rowForms ? 2 : 1),
        rowForms(rowForms) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value query = op.getQuery();
    Value key = op.getKey();
    Value value = op.getValue();
    auto queryType = cast<RankedTensorType>(query.getType());
    auto keyType = cast<RankedTensorType>(key.getType());
    RankedTensorType resultType = op.getType();
    Type elementType = resultType.getElementType();
    Type computeType = getComputeType(elementType);

    // The group size must be static to shape the loops. Dynamic head counts
    // are accepted only without grouping, checked at run time.
    int64_t heads = queryType.getDimSize(1);
    int64_t kvHeads = keyType.getDimSize(1);
    int64_t group = 1;
    if (ShapedType::isStatic(heads) && ShapedType::isStatic(kvHeads))
      group = heads / kvHeads;
    LLVM_DEBUG({
      llvm::dbgs() << "[" DEBUG_TYPE "] seq.attention at " << loc
                   << ": the reference form, the scores materialized, in "
                   << computeType << ", " << group
                   << " query head(s) per key/value head";
      if (MaskAttr mask = op.getMaskAttr())
        llvm::dbgs() << ", mask " << mask;
      llvm::dbgs() << (op.getLengths() ? ", key lengths" : "")
                   << (op.getBias() ? ", score bias" : "")
                   << (op.getAlibi() ? ", ALiBi" : "")
                   << (op.getQueryOffsets() ? ", query offsets" : "") << "\n";
    });

    SmallVector<OpFoldResult> qSizes =
        tensor::getMixedSizes(rewriter, loc, query);
    SmallVector<OpFoldResult> kSizes =
        tensor::getMixedSizes(rewriter, loc, key);
    SmallVector<OpFoldResult> vSizes =
        tensor::getMixedSizes(rewriter, loc, value);
    checkShapes(rewriter, loc, op, qSizes, kSizes, vSizes, group);

    // [b, h, n_q, d] -> [b, kv_heads, g, n_q, d] for grouped-query attention.
    SmallVector<OpFoldResult> headSizes = {kSizes[1]};
    if (group > 1) {
      headSizes.push_back(rewriter.getIndexAttr(group));
      query = expandHeads(rewriter, loc, query, kSizes[1], group);
    }
    int64_t numHeadDims = headSizes.size();

    // 1. Raw scores, [b, (heads...), n_q, n_k].
    SmallVector<OpFoldResult> scoreSizes = {qSizes[0]};
    scoreSizes.append(headSizes);
    scoreSizes.append({qSizes[2], kSizes[2]});
    Value scores = buildContraction(rewriter, loc, query, key, scoreSizes,
                                    numHeadDims, computeType,
                                    /*transposeRhs=*/true);
    if (group > 1)
      scores = collapseHeads(rewriter, loc, scores);

    // 2. Scale, bias, ALiBi and mask.
    FailureOr<Value> biased = buildScoreUpdate(rewriter, op, scores);
    if (failed(biased))
      return failure();

    // 3. Safe softmax over the keys: the probabilities, or with `rowForms`
    // the exps and their row sums (one reduction with two outputs), the
    // division left to the output's d_v columns. A probabilities generic
    // would be fused into the contraction below as its operand and
    // recomputed, exp and division, for each of the d_v columns.
    bool normalizeOutput = rowForms && elementType.isF32();
    Value probs, rowSum;
    if (normalizeOutput) {
      Value rowMax = buildShiftMax(rewriter, loc, *biased, /*axis=*/3);
      Value expsInit = createEmptyTensor(
          rewriter, loc, tensor::getMixedSizes(rewriter, loc, *biased),
          computeType);
      std::tie(probs, rowSum) = buildExpsAndSums(rewriter, loc, *biased, rowMax,
                                                 expsInit, /*axis=*/3);
    } else {
      probs = buildSafeSoftmax(rewriter, loc, *biased, /*axis=*/3);
    }

    // 4. probs @ v, [b, (heads...), n_q, d_v].
    if (group > 1)
      probs = expandHeads(rewriter, loc, probs, kSizes[1], group);
    SmallVector<OpFoldResult> outSizes = {qSizes[0]};
    outSizes.append(headSizes);
    outSizes.append({qSizes[2], vSizes[3]});
    Value out = buildContraction(rewriter, loc, probs, value, outSizes,
                                 numHeadDims, computeType,
                                 /*transposeRhs=*/false);
    if (group > 1)
      out = collapseHeads(rewriter, loc, out);
    if (normalizeOutput)
      out = buildRowScale(
          rewriter, loc, out, rowSum,
          createEmptyTensor(rewriter, loc,
                            tensor::getMixedSizes(rewriter, loc, out),
                            rewriter.getF32Type()),
          /*axis=*/3);
    out = convertElementType(rewriter, loc, out, elementType);
    rewriter.replaceOp(op, castToType(rewriter, loc, out, resultType));
    return success();
  }

private:
  /// Run-time checks of the sizes the verifier could not see.
  static void checkShapes(OpBuilder &b, Location loc, AttentionOp op,
                          ArrayRef<OpFoldResult> q, ArrayRef<OpFoldResult> k,
                          ArrayRef<OpFoldResult> v, int64_t group) {
    auto check = [&](OpFoldResult lhs, OpFoldResult rhs, StringRef message) {
      (void)assertEqualSizes(b, loc, lhs, rhs, message);
    };
    check(q[0], k[0], "seq.attention: query and key batch differ");
    check(q[0], v[0], "seq.attention: query and value batch differ");
    check(k[1], v[1], "seq.attention: key and value heads differ");
    check(q[3], k[3], "seq.attention: query and key head dims differ");
    check(k[2], v[2], "seq.attention: key and value lengths differ");
    if (group == 1)
      check(q[1], k[1],
            "seq.attention: head counts differ (grouped-query attention "
            "needs static head counts)");
    if (Value lengths = op.getLengths())
      check(tensor::getMixedSize(b, loc, lengths, 0), q[0],
            "seq.attention: lengths size differs from the batch");
    if (Value alibi = op.getAlibi())
      check(tensor::getMixedSize(b, loc, alibi, 0), q[1],
            "seq.attention: alibi size differs from the heads");
    if (Value offsets = op.getQueryOffsets())
      check(tensor::getMixedSize(b, loc, offsets, 0), q[0],
            "seq.attention: query_offsets size differs from the batch");
  }

  /// [b, kv_heads * g, n, x] -> [b, kv_heads, g, n, x].
  static Value expandHeads(OpBuilder &b, Location loc, Value tensor,
                           OpFoldResult kvHeads, int64_t group) {
    auto type = cast<RankedTensorType>(tensor.getType());
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, tensor);
    SmallVector<OpFoldResult> expanded = {
        sizes[0], kvHeads, b.getIndexAttr(group), sizes[2], sizes[3]};
    return tensor::ExpandShapeOp::create(
        b, loc,
        RankedTensorType::get(getStaticShape(expanded), type.getElementType()),
        tensor, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}},
        expanded);
  }

  /// [b, kv_heads, g, n, x] -> [b, kv_heads * g, n, x].
  static Value collapseHeads(OpBuilder &b, Location loc, Value tensor) {
    return tensor::CollapseShapeOp::create(
        b, loc, tensor, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
  }

  /// The batched product over the last dimension of `lhs` and the
  /// (transposed) last two of `rhs`, with loops
  /// (b, heads..., m, n, reduction). `lhs` has all head dimensions, `rhs`
  /// only the first (the kv head), which is how one kv head serves its
  /// group. Accumulates in `accType` from zero.
  static Value buildContraction(OpBuilder &b, Location loc, Value lhs,
                                Value rhs, ArrayRef<OpFoldResult> outSizes,
                                int64_t numHeadDims, Type accType,
                                bool transposeRhs) {
    MLIRContext *ctx = b.getContext();
    int64_t m = 1 + numHeadDims;
    int64_t n = m + 1;
    int64_t r = n + 1;
    int64_t numLoops = r + 1;
    auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };

    // lhs [b, heads..., m, r], rhs [b, kv_head, n, r] or [b, kv_head, r, n],
    // out [b, heads..., m, n].
    SmallVector<AffineExpr> lhsExprs, outExprs;
    for (int64_t i = 0; i < m; ++i) {
      lhsExprs.push_back(dim(i));
      outExprs.push_back(dim(i));
    }
    lhsExprs.append({dim(m), dim(r)});
    outExprs.append({dim(m), dim(n)});
    SmallVector<AffineExpr> rhsExprs = {dim(0), dim(1)};
    if (transposeRhs)
      rhsExprs.append({dim(n), dim(r)});
    else
      rhsExprs.append({dim(r), dim(n)});

    Value zero = createFloatConstant(b, loc, accType, 0.0);
    Value acc = createFilledTensor(b, loc, outSizes, accType, zero);
    SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, lhsExprs, ctx),
                                   AffineMap::get(numLoops, 0, rhsExprs, ctx),
                                   AffineMap::get(numLoops, 0, outExprs, ctx)};
    return linalg::GenericOp::create(
               b, loc, acc.getType(), ValueRange{lhs, rhs}, acc, maps,
               getIteratorTypes(numLoops, {r}),
               [&](OpBuilder &nb, Location nloc, ValueRange args) {
                 Value x = convertScalar(nb, nloc, args[0], accType);
                 Value y = convertScalar(nb, nloc, args[1], accType);
                 Value prod = arith::MulFOp::create(nb, nloc, x, y);
                 Value sum = arith::AddFOp::create(nb, nloc, args[2], prod);
                 linalg::YieldOp::create(nb, nloc, sum);
               })
        .getResult(0);
  }

  /// scores * scale + bias - slope[h] * |i - j|, then -inf where the mask
  /// hides the key: one elementwise generic over [b, h, n_q, n_k].
  static FailureOr<Value> buildScoreUpdate(PatternRewriter &b, AttentionOp op,
                                           Value scores) {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    auto scoresType = cast<RankedTensorType>(scores.getType());
    Type computeType = scoresType.getElementType();
    Value bias = op.getBias();
    Value alibi = op.getAlibi();
    Value lengths = op.getLengths();
    Value offsets = op.getQueryOffsets();
    MaskAttr mask = op.getMaskAttr();
    double scale = op.getEffectiveScale();

    SmallVector<Value> inputs = {scores};
    AffineMap identity = b.getMultiDimIdentityMap(4);
    SmallVector<AffineMap> maps = {identity};
    int64_t biasIndex = -1, alibiIndex = -1, lengthsIndex = -1,
            offsetsIndex = -1;
    if (bias) {
      // Only for the checks of the dynamic bias dimensions.
      if (failed(computeBroadcastSizes(b, op, ValueRange{scores, bias},
                                       scoresType)))
        return failure();
      biasIndex = inputs.size();
      // A key-padding bias [b, 1, 1, n_k] read as [b, n_k] through
      // (d0, d3).
      auto [read, map] = readBroadcastOperand(b, op.getLoc(), bias, scoresType);
      inputs.push_back(read);
      maps.push_back(map);
    }
    if (alibi) {
      alibiIndex = inputs.size();
      inputs.push_back(alibi);
      maps.push_back(AffineMap::get(4, 0, getAffineDimExpr(1, ctx)));
    }
    if (lengths) {
      lengthsIndex = inputs.size();
      inputs.push_back(lengths);
      maps.push_back(AffineMap::get(4, 0, getAffineDimExpr(0, ctx)));
    }
    if (offsets) {
      offsetsIndex = inputs.size();
      inputs.push_back(offsets);
      maps.push_back(AffineMap::get(4, 0, getAffineDimExpr(0, ctx)));
    }
    maps.push_back(identity);

    Value init = createEmptyTensor(
        b, loc, tensor::getMixedSizes(b, loc, scores), computeType);
    return linalg::GenericOp::create(
               b, loc, init.getType(), inputs, init, maps, getIteratorTypes(4),
               [&](OpBuilder &nb, Location nloc, ValueRange args) {
                 Value scaleValue =
                     createFloatConstant(nb, nloc, computeType, scale);
                 Value s = arith::MulFOp::create(nb, nloc, args[0], scaleValue);
                 if (bias)
                   s = arith::AddFOp::create(
                       nb, nloc, s,
                       convertScalar(nb, nloc, args[biasIndex], computeType));
                 Value i = linalg::IndexOp::create(nb, nloc, 2);
                 Value j = linalg::IndexOp::create(nb, nloc, 3);
                 if (offsets)
                   i = arith::AddIOp::create(
                       nb, nloc, i,
                       convertScalar(nb, nloc, args[offsetsIndex],
                                     nb.getIndexType()));
                 if (alibi) {
                   // |i - j| as the larger minus the smaller index
                   // (signed: a query offset may be negative).
                   Value distance = arith::SubIOp::create(
                       nb, nloc, arith::MaxSIOp::create(nb, nloc, i, j),
                       arith::MinSIOp::create(nb, nloc, i, j));
                   Value slope =
                       convertScalar(nb, nloc, args[alibiIndex], computeType);
                   Value penalty = arith::MulFOp::create(
                       nb, nloc, slope,
                       indexToFloat(nb, nloc, distance, computeType));
                   s = arith::SubFOp::create(nb, nloc, s, penalty);
                 }
                 Value length =
                     lengths ? convertScalar(nb, nloc, args[lengthsIndex],
                                             nb.getIndexType())
                             : Value();
                 if (Value allowed =
                         buildMaskPredicate(nb, nloc, mask, i, j, length)) {
                   Value negInf = createInfinity(nb, nloc, computeType,
                                                 /*negative=*/true);
                   s = arith::SelectOp::create(nb, nloc, allowed, s, negInf);
                 }
                 linalg::YieldOp::create(nb, nloc, s);
               })
        .getResult(0);
  }

  bool rowForms;
};

//===----------------------------------------------------------------------===//
// cache_write
//===----------------------------------------------------------------------===//

/// scf.for over the batch rows r: check positions[r] + n <= max_len, then
/// insert values[r] into the cache at [r, 0, positions[r], 0]. Rows of a
/// negative position (the pads of a left-padded row, placed at -pad) are
/// skipped: row r writes its new rows s .. n - 1 with
/// s = clamp(-positions[r], 0, n) at positions[r] + s, which is n rows at
/// positions[r] when the position is not negative. The cache is the loop's
/// iteration argument, so that one-shot bufferization writes the rows into
/// its buffer in place (a state argument of the model: no copy).
struct CacheWriteLowering : public OpRewritePattern<CacheWriteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CacheWriteOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value cache = op.getCache();
    Value values = op.getValues();
    Value positions = op.getPositions();
    auto cacheType = cast<RankedTensorType>(cache.getType());
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] seq.cache_write at " << loc
                            << ": the rows inserted in place, one batch row "
                               "at a time, those at negative positions "
                               "skipped\n");
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, values);
    SmallVector<OpFoldResult> cacheSizes =
        tensor::getMixedSizes(rewriter, loc, cache);
    (void)assertEqualSizes(rewriter, loc,
                           tensor::getMixedSize(rewriter, loc, positions, 0),
                           sizes[0],
                           "seq.cache_write: positions size differs from the "
                           "batch");
    Value batch = getValueOrCreateIndex(rewriter, loc, sizes[0]);
    Value n = getValueOrCreateIndex(rewriter, loc, sizes[2]);
    Value maxLen = getValueOrCreateIndex(rewriter, loc, cacheSizes[2]);
    Value zero = createIndexConstant(rewriter, loc, 0);
    Value one = createIndexConstant(rewriter, loc, 1);
    OpFoldResult unit = rewriter.getIndexAttr(1);
    OpFoldResult origin = rewriter.getIndexAttr(0);
    auto loop = scf::ForOp::create(
        rewriter, loc, zero, batch, one, ValueRange{cache},
        [&](OpBuilder &b, Location nloc, Value r, ValueRange carried) {
          Value p = convertScalar(
              b, nloc, tensor::ExtractOp::create(b, nloc, positions, r),
              b.getIndexType());
          // Signed: a negative position is left padding, whose rows are
          // not stored; the end must still fit the cache.
          Value end = arith::AddIOp::create(b, nloc, p, n);
          Value fits = arith::CmpIOp::create(b, nloc, arith::CmpIPredicate::sle,
                                             end, maxLen);
          createRuntimeAssert(b, nloc, fits,
                              "seq.cache_write: position + new rows exceeds "
                              "the cache length");
          // The first row stored: s = clamp(-p, 0, n).
          Value skip = arith::MinSIOp::create(
              b, nloc,
              arith::MaxSIOp::create(
                  b, nloc, arith::SubIOp::create(b, nloc, zero, p), zero),
              n);
          Value count = arith::SubIOp::create(b, nloc, n, skip);
          Value at = arith::AddIOp::create(b, nloc, p, skip);
          SmallVector<OpFoldResult> rowSizes = {unit, sizes[1], count,
                                                sizes[3]};
          SmallVector<OpFoldResult> strides(4, unit);
          Value row = tensor::ExtractSliceOp::create(
              b, nloc, values,
              SmallVector<OpFoldResult>{r, origin, skip, origin}, rowSizes,
              strides);
          Value updated = tensor::InsertSliceOp::create(
              b, nloc, row, carried[0],
              SmallVector<OpFoldResult>{r, origin, at, origin}, rowSizes,
              strides);
          scf::YieldOp::create(b, nloc, updated);
        });
    rewriter.replaceOp(
        op, castToType(rewriter, loc, loop.getResult(0), cacheType));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// multi_head_attention
//===----------------------------------------------------------------------===//

/// Decomposes into primitive seq ops (what `seq-decompose` does), which the
/// conversion then lowers in turn, so that convert-seq-to-linalg also works
/// on modules that skipped the decomposition pass.
struct MultiHeadAttentionLowering
    : public OpRewritePattern<MultiHeadAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MultiHeadAttentionOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<Value> result = decomposeMultiHeadAttention(rewriter, op);
    if (failed(result))
      return emitLoweringError(rewriter, op, "cannot be decomposed");
    rewriter.replaceOp(op, *result);
    return success();
  }
};

} // namespace

void mlir::seq::populateAttentionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns
      .add<ApplyMaskLowering, AttentionLowering, CacheWriteLowering,
           MultiHeadAttentionLowering>(patterns.getContext());
}

void mlir::seq::populateRowFormAttentionToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<AttentionLowering>(patterns.getContext(), /*rowForms=*/true);
}
