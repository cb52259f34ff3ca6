//===- Decompose.cpp - decompose composite seq ops ------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/Support/Debug.h"
#include "passes/Passes.h"
#include "passes/Transforms.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "seq-decompose"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQDECOMPOSE
#include "passes/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;
using namespace mlir::seq;

/// `[..., n, f]` with the last dimension replaced by `features`.
static RankedTensorType withLastDim(RankedTensorType type, int64_t features) {
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = features;
  return RankedTensorType::get(shape, type.getElementType());
}

/// `[b, n, heads * d]` -> `[b, heads, n, d]`.
static RankedTensorType splitHeadsType(RankedTensorType type, int64_t heads) {
  int64_t features = type.getShape().back();
  int64_t headDim =
      ShapedType::isDynamic(features) ? ShapedType::kDynamic : features / heads;
  return RankedTensorType::get(
      {type.getDimSize(0), heads, type.getDimSize(1), headDim},
      type.getElementType());
}

FailureOr<Value>
mlir::seq::decomposeMultiHeadAttention(RewriterBase &rewriter,
                                       MultiHeadAttentionOp op) {
  Location loc = op.getLoc();
  auto inputType = cast<RankedTensorType>(op.getInput().getType());
  if (inputType.getRank() != 3) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] not decomposed at "
                            << op.getLoc() << ": input of rank "
                            << inputType.getRank() << ", expected 3\n");
    return rewriter.notifyMatchFailure(op, "expected a rank-3 input");
  }
  Value kvSource = op.getKv() ? op.getKv() : op.getInput();
  auto kvType = cast<RankedTensorType>(kvSource.getType());
  int64_t heads = op.getHeads();
  int64_t kvHeads = op.getKvHeads();
  ValueRange biases = op.getBiases();
  auto bias = [&](unsigned i) -> Value {
    return biases.empty() ? Value() : biases[i];
  };
  LLVM_DEBUG({
    llvm::dbgs() << "[" DEBUG_TYPE "] decomposing at " << op.getLoc() << ": "
                 << heads << " heads, " << kvHeads << " key/value heads, "
                 << (op.getKv() ? "cross" : "self") << "-attention"
                 << (biases.empty() ? "" : ", biases")
                 << (op.getRopeThetaAttr() ? ", rope" : "")
                 << (op.getAlibi() ? ", alibi" : "");
    if (MaskAttr mask = op.getMaskAttr())
      llvm::dbgs() << ", mask " << mask;
    llvm::dbgs() << "\n";
  });
  auto outFeatures = [](Value weight) {
    return cast<RankedTensorType>(weight.getType()).getDimSize(0);
  };

  auto project = [&](Value x, RankedTensorType xType, Value w, Value b,
                     int64_t numHeads) -> Value {
    auto projType = withLastDim(xType, outFeatures(w));
    Value proj = LinearOp::create(rewriter, loc, projType, x, w, b);
    return SplitHeadsOp::create(rewriter, loc,
                                splitHeadsType(projType, numHeads), proj,
                                rewriter.getI64IntegerAttr(numHeads));
  };
  Value q = project(op.getInput(), inputType, op.getWq(), bias(0), heads);
  Value k = project(kvSource, kvType, op.getWk(), bias(1), kvHeads);
  Value v = project(kvSource, kvType, op.getWv(), bias(2), kvHeads);

  if (FloatAttr thetaAttr = op.getRopeThetaAttr()) {
    q = RopeOp::create(rewriter, loc, q.getType(), q, /*offsets=*/Value(),
                       thetaAttr,
                       /*rotary_dims=*/IntegerAttr());
    k = RopeOp::create(rewriter, loc, k.getType(), k, /*offsets=*/Value(),
                       thetaAttr,
                       /*rotary_dims=*/IntegerAttr());
  }
  Value slopes;
  if (op.getAlibi())
    slopes = AlibiOp::create(
        rewriter, loc,
        RankedTensorType::get({heads}, inputType.getElementType()));

  auto qType = cast<RankedTensorType>(q.getType());
  auto vType = cast<RankedTensorType>(v.getType());
  // The verifier of seq.attention wants the most static result type: a batch
  // size static on the key/value side (cross-attention) fixes the batch.
  int64_t batch = qType.getDimSize(0);
  if (ShapedType::isDynamic(batch))
    batch = vType.getDimSize(0);
  auto attnType = RankedTensorType::get(
      {batch, heads, qType.getDimSize(2), vType.getDimSize(3)},
      qType.getElementType());
  Value attn = AttentionOp::create(rewriter, loc, attnType, q, k, v,
                                   op.getLengths(), /*bias=*/Value(), slopes,
                                   /*query_offsets=*/Value(),
                                   /*scale=*/FloatAttr(), op.getMaskAttr());

  int64_t merged = ShapedType::isDynamic(attnType.getDimSize(3))
                       ? ShapedType::kDynamic
                       : heads * attnType.getDimSize(3);
  auto mergedType = RankedTensorType::get(
      {attnType.getDimSize(0), attnType.getDimSize(2), merged},
      attnType.getElementType());
  Value mergedValue = MergeHeadsOp::create(rewriter, loc, mergedType, attn);
  return LinearOp::create(rewriter, loc, op.getType(), mergedValue, op.getWo(),
                          bias(3))
      .getResult();
}

namespace {
struct DecomposeMultiHeadAttention
    : public OpRewritePattern<MultiHeadAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MultiHeadAttentionOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<Value> result = decomposeMultiHeadAttention(rewriter, op);
    if (failed(result))
      return failure();
    rewriter.replaceOp(op, *result);
    return success();
  }
};

struct SeqDecomposePass
    : public mlir::seq::impl::SeqDecomposeBase<SeqDecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateSeqDecompositionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace

void mlir::seq::populateSeqDecompositionPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeMultiHeadAttention>(patterns.getContext());
}
