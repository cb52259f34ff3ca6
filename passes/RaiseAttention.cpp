//===- RaiseAttention.cpp - plain-math attention to seq.attention ---------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Recognizes scaled dot-product attention written as matrix products,
//
//   seq.matmul(seq.softmax(seq.apply_mask?(seq.div|mul?(seq.matmul(q, k
//              transpose_rhs), c)), axis -1), v)
//
// (the scale and the mask in either order, each optional), and rewrites it
// into the one `seq.attention` op the fusion passes and the fused lowering
// work on, with the scale and `#seq.mask` it implies. Rank-3 operands
// ([b, n, d], one head) are viewed as [b, 1, n, d]. The rewrite keeps the
// semantics exactly: `seq.softmax` of a fully masked row gives zeros, as
// `seq.attention` does.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/Support/Debug.h"
#include "passes/Passes.h"
#include "passes/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Format.h"

#define DEBUG_TYPE "seq-raise-attention"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQRAISEATTENTION
#include "passes/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;
using namespace mlir::seq;

namespace {

/// The scalar of a splat constant, or nullopt.
std::optional<double> splatValue(Value value) {
  DenseFPElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) || !attr.isSplat())
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToDouble();
}

/// [b, n, d] as [b, 1, n, d].
Value withOneHead(PatternRewriter &rewriter, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape{type.getDimSize(0), 1, type.getDimSize(1),
                             type.getDimSize(2)};
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, value);
  sizes.insert(sizes.begin() + 1, rewriter.getIndexAttr(1));
  return tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
      value, ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}}, sizes);
}

/// Leaves `pv` as it is: a match failure saying why, traced under
/// -debug-only=seq-raise-attention.
LogicalResult reject(PatternRewriter &rewriter, MatmulOp pv, StringRef why) {
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] not raised at " << pv.getLoc()
                          << ": " << why << "\n");
  return rewriter.notifyMatchFailure(pv, why);
}

struct RaiseAttention : public OpRewritePattern<MatmulOp> {
  RaiseAttention(MLIRContext *context, bool remarks)
      : OpRewritePattern(context), remarks(remarks) {}

  LogicalResult matchAndRewrite(MatmulOp pv,
                                PatternRewriter &rewriter) const override {
    if (pv.getTransposeRhs())
      return failure();
    auto softmax = pv.getLhs().getDefiningOp<SoftmaxOp>();
    if (!softmax || !softmax->hasOneUse())
      return reject(rewriter, pv, "not softmax(...) @ v");
    auto scoresType = cast<RankedTensorType>(softmax.getType());
    int64_t rank = scoresType.getRank();
    int64_t axis = static_cast<int64_t>(softmax.getAxis());
    if (axis != -1 && axis != rank - 1)
      return reject(rewriter, pv, "softmax not over the keys");

    // Peel the mask and the scale, each at most once, in either order.
    Value scores = softmax.getInput();
    ApplyMaskOp applyMask;
    std::optional<double> scale;
    for (int step = 0; step < 2; ++step) {
      Operation *def = scores.getDefiningOp();
      if (!def || !def->hasOneUse())
        break;
      if (auto mask = dyn_cast<ApplyMaskOp>(def); mask && !applyMask) {
        applyMask = mask;
        scores = mask.getScores();
        continue;
      }
      if (scale || !isa<DivOp, MulOp>(def))
        break;
      Value lhs = def->getOperand(0), rhs = def->getOperand(1);
      std::optional<double> c = splatValue(rhs);
      if (!c && isa<MulOp>(def)) {
        std::swap(lhs, rhs);
        c = splatValue(rhs);
      }
      if (!c || *c <= 0.0 || cast<ShapedType>(rhs.getType()).getRank() != 0)
        break;
      scale = isa<DivOp>(def) ? 1.0 / *c : *c;
      scores = lhs;
    }
    auto qk = scores.getDefiningOp<MatmulOp>();
    if (!qk || !qk.getTransposeRhs() || !qk->hasOneUse())
      return reject(rewriter, pv, "the scores are not q @ k^T");

    Value q = qk.getLhs(), k = qk.getRhs(), v = pv.getRhs();
    auto qType = cast<RankedTensorType>(q.getType());
    auto kType = cast<RankedTensorType>(k.getType());
    auto vType = cast<RankedTensorType>(v.getType());
    if (rank != 3 && rank != 4)
      return reject(rewriter, pv, "not [b, n, d] or [b, h, n, d]");
    if (kType.getRank() != rank || vType.getRank() != rank ||
        qType.getRank() != rank || qType.getElementType() !=
                                       kType.getElementType() ||
        kType.getElementType() != vType.getElementType())
      return reject(rewriter, pv, "operands of mixed ranks or types");
    // The batch dimension is shared (no broadcast); with heads, k and v
    // have the query's heads or one head shared by all (multi-query).
    if (qType.getDimSize(0) != kType.getDimSize(0) ||
        kType.getDimSize(0) != vType.getDimSize(0))
      return reject(rewriter, pv, "batch sizes may differ");
    if (rank == 4) {
      int64_t heads = qType.getDimSize(1), kvHeads = kType.getDimSize(1);
      if (ShapedType::isDynamic(heads) || ShapedType::isDynamic(kvHeads) ||
          vType.getDimSize(1) != kvHeads ||
          (kvHeads != heads && kvHeads != 1))
        return reject(rewriter, pv, "heads not static or shared");
    }

    Location loc = pv.getLoc();
    if (rank == 3) {
      q = withOneHead(rewriter, loc, q);
      k = withOneHead(rewriter, loc, k);
      v = withOneHead(rewriter, loc, v);
    }
    auto qType4 = cast<RankedTensorType>(q.getType());
    auto vType4 = cast<RankedTensorType>(v.getType());
    auto resultType = RankedTensorType::get(
        {qType4.getDimSize(0), qType4.getDimSize(1), qType4.getDimSize(2),
         vType4.getDimSize(3)},
        qType4.getElementType());
    Value lengths = applyMask ? applyMask.getLengths() : Value();
    auto attention = AttentionOp::create(
        rewriter, loc, resultType, q, k, v, lengths, /*bias=*/Value(),
        /*alibi=*/Value(), /*query_offsets=*/Value(),
        rewriter.getF64FloatAttr(scale.value_or(1.0)),
        applyMask ? applyMask.getMaskAttr() : MaskAttr());
    Value result = attention.getResult();
    if (rank == 3)
      result = tensor::CollapseShapeOp::create(
          rewriter, loc, pv.getType(), result,
          ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
    if (remarks) {
      InFlightDiagnostic remark = pv.emitRemark()
                                  << "softmax(q @ k^T";
      if (scale)
        remark << " * " << *scale;
      if (applyMask)
        remark << ", masked " << applyMask.getMaskAttr();
      remark << ") @ v raised to seq.attention";
    }
    LLVM_DEBUG({
      llvm::dbgs() << "[" DEBUG_TYPE "] raised at " << pv.getLoc() << ": rank "
                   << rank << ", heads " << qType4.getDimSize(1) << " (k/v "
                   << cast<RankedTensorType>(k.getType()).getDimSize(1)
                   << "), scale " << llvm::format("%g", scale.value_or(1.0))
                   << (scale ? "" : " (none)") << ", mask ";
      if (applyMask)
        llvm::dbgs() << applyMask.getMaskAttr();
      else
        llvm::dbgs() << "none";
      llvm::dbgs() << (lengths ? ", key lengths" : "") << "\n";
    });
    rewriter.replaceOp(pv, result);
    return success();
  }

  bool remarks;
};

struct SeqRaiseAttentionPass
    : public mlir::seq::impl::SeqRaiseAttentionBase<SeqRaiseAttentionPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateSeqRaiseAttentionPatterns(patterns, remarks);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void mlir::seq::populateSeqRaiseAttentionPatterns(RewritePatternSet &patterns,
                                                  bool remarks) {
  patterns.add<RaiseAttention>(patterns.getContext(), remarks);
}
