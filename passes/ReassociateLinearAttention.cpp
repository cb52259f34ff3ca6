//===- ReassociateLinearAttention.cpp - (A B^T) V as A (B^T V) ------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Linear attention written as `(phi(Q) phi(K)^T) V` with its normalizer
// `sum((phi(Q) phi(K)^T), keys)` costs O(n m (d + e)); associated the other
// way, `phi(Q) (phi(K)^T V)` and `phi(Q) sum(phi(K), keys)^T`, it costs
// O((n + m) d e). The pass rewrites every `S = A @ B^T` ([..., n, d] x
// [..., m, d]) whose uses are all products `S @ V` and row sums of S into the
// cheaper association by a cost model over n, m, d and e: statically when
// the sizes are known, or behind a run-time test on them when n or m is
// symbolic (both forms are emitted, in the two branches of an scf.if).
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/Support/Debug.h"
#include "passes/Passes.h"
#include "passes/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/raw_ostream.h"

#define DEBUG_TYPE "seq-reassociate-linear-attention"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQREASSOCIATELINEARATTENTION
#include "passes/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;
using namespace mlir::seq;

namespace {

/// A use of the scores S: `S @ V`, or a row sum of S (keepdim).
struct ScoreUse {
  Operation *op;
  Value value; // V of a product; null for a row sum
};

RankedTensorType withShape(RankedTensorType like, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, like.getElementType());
}

/// Leaves the product `qk` as it is: a match failure saying why, traced
/// under -debug-only=seq-reassociate-linear-attention.
LogicalResult reject(RewriterBase &rewriter, MatmulOp qk, const Twine &why) {
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] kept at " << qk.getLoc() << ": "
                          << why << "\n");
  return rewriter.notifyMatchFailure(qk, why);
}

} // namespace

LogicalResult mlir::seq::reassociateLinearAttention(RewriterBase &rewriter,
                                                    MatmulOp qk, bool remarks) {
  {
    if (!qk.getTransposeRhs() || qk->use_empty())
      return failure();
    Value a = qk.getLhs(), b = qk.getRhs();
    auto aType = cast<RankedTensorType>(a.getType());
    auto bType = cast<RankedTensorType>(b.getType());
    int64_t rank = aType.getRank();
    if (rank < 3 || bType.getRank() != rank ||
        aType.getShape().drop_back(2) != bType.getShape().drop_back(2))
      return reject(rewriter, qk, "not a batched A @ B^T");
    int64_t d = aType.getShape().back();
    if (ShapedType::isDynamic(d))
      return reject(rewriter, qk, "feature size not static");

    // Every use: S @ V with V [..., m, e] (static e), or sum(S, -1, keepdim).
    SmallVector<ScoreUse> uses;
    Operation *first = nullptr;
    int64_t products = 0, sums = 0, eTotal = 0;
    for (Operation *user : qk->getUsers()) {
      if (user->getBlock() != qk->getBlock()) {
        LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] kept at " << qk.getLoc()
                                << ": a use in another block\n");
        return failure();
      }
      if (!first || user->isBeforeInBlock(first))
        first = user;
      if (auto pv = dyn_cast<MatmulOp>(user)) {
        auto vType = cast<RankedTensorType>(pv.getRhs().getType());
        if (pv.getTransposeRhs() || pv.getLhs() != qk.getResult() ||
            vType.getRank() != rank ||
            vType.getShape().drop_back(2) != aType.getShape().drop_back(2) ||
            ShapedType::isDynamic(vType.getShape().back()))
          return reject(rewriter, qk, "a product not S @ V");
        uses.push_back({user, pv.getRhs()});
        ++products;
        eTotal += vType.getShape().back();
        continue;
      }
      auto sum = dyn_cast<ReduceOp>(user);
      if (!sum || sum.getKind() != ReduceKind::sum || !sum.getKeepdim() ||
          sum.getAxes().size() != 1 ||
          (sum.getAxes()[0] != rank - 1 && sum.getAxes()[0] != -1))
        return reject(rewriter, qk,
                      "a use other than S @ V or "
                      "a row sum of S");
      uses.push_back({user, Value()});
      ++sums;
    }
    if (products == 0)
      return reject(rewriter, qk, "no S @ V");
    // The values must be defined before the first use, where the new ops go.
    for (const ScoreUse &use : uses)
      if (use.value)
        if (Operation *def = use.value.getDefiningOp();
            def && def->getBlock() == first->getBlock() &&
            !def->isBeforeInBlock(first))
          return reject(rewriter, qk, "V defined after a use");

    // Costs in multiply-adds: the quadratic form computes S (n m d), each
    // S @ V (n m e) and each row sum (n m); the reassociated one B^T V
    // (m d e) and A (B^T V) (n d e) per product, sum(B) (m d) and A z (n d)
    // per row sum.
    auto quadratic = [&](double n, double m) {
      return n * m * (d + eTotal + sums);
    };
    auto reassociated = [&](double n, double m) {
      return (m + n) * d * eTotal + sums * (m + n) * d;
    };
    int64_t nStatic = aType.getShape().end()[-2];
    int64_t mStatic = bType.getShape().end()[-2];
    LLVM_DEBUG({
      auto size = [](int64_t s) {
        return ShapedType::isDynamic(s) ? std::string("?") : std::to_string(s);
      };
      llvm::dbgs() << "[" DEBUG_TYPE "] candidate at " << qk.getLoc()
                   << ": n = " << size(nStatic) << ", m = " << size(mStatic)
                   << ", d = " << d << ", " << products
                   << " product(s) S @ V with e = " << eTotal << " in all, "
                   << sums << " row sum(s)\n";
    });
    Location loc = qk.getLoc();
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(first);

    // The reassociated form, built at the current insertion point.
    auto buildReassociated = [&](OpBuilder &builder) {
      SmallVector<Value> results;
      SmallVector<int64_t> permutation;
      for (int64_t i = 0; i < rank - 2; ++i)
        permutation.push_back(i);
      permutation.append({rank - 1, rank - 2});
      SmallVector<int64_t> btShape(bType.getShape());
      std::swap(btShape[rank - 1], btShape[rank - 2]);
      Value bt;
      for (const ScoreUse &use : uses) {
        if (use.value) {
          if (!bt)
            bt = TransposeOp::create(builder, loc, withShape(bType, btShape),
                                     b,
                                     builder.getDenseI64ArrayAttr(permutation));
          auto vType = cast<RankedTensorType>(use.value.getType());
          SmallVector<int64_t> kvShape(aType.getShape().drop_back(2));
          kvShape.append({d, vType.getShape().back()});
          Value kv = MatmulOp::create(builder, loc, withShape(aType, kvShape),
                                      bt, use.value, /*transpose_rhs=*/false);
          results.push_back(MatmulOp::create(builder, loc,
                                             use.op->getResult(0).getType(), a,
                                             kv, /*transpose_rhs=*/false));
          continue;
        }
        SmallVector<int64_t> zShape(bType.getShape());
        zShape[rank - 2] = 1;
        Value z = ReduceOp::create(builder, loc, withShape(bType, zShape), b,
                                   ReduceKind::sum,
                                   ArrayRef<int64_t>{rank - 2},
                                   /*keepdim=*/true);
        results.push_back(MatmulOp::create(builder, loc,
                                           use.op->getResult(0).getType(), a,
                                           z, /*transpose_rhs=*/true));
      }
      return results;
    };

    SmallVector<Value> replacements;
    std::string message;
    llvm::raw_string_ostream remark(message);
    if (!ShapedType::isDynamic(nStatic) && !ShapedType::isDynamic(mStatic)) {
      double quad = quadratic(nStatic, mStatic),
             reassoc = reassociated(nStatic, mStatic);
      remark << "linear attention: "
             << (reassoc < quad ? "reassociated" : "quadratic")
             << " form chosen (" << static_cast<int64_t>(reassoc)
             << " multiply-adds reassociated, " << static_cast<int64_t>(quad)
             << " quadratic, per batch element)";
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] static sizes: " << message << "\n");
      if (remarks)
        qk.emitRemark() << message;
      if (reassoc >= quad)
        return reject(rewriter, qk, "the quadratic form is cheaper");
      replacements = buildReassociated(rewriter);
    } else {
      // Both forms, behind the cost test at run time.
      auto dimOf = [&](Value v) -> Value {
        return tensor::DimOp::create(rewriter, loc, v, rank - 2);
      };
      Value n = dimOf(a), m = dimOf(b);
      auto idx = [&](int64_t v) {
        return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
      };
      auto mul = [&](Value x, Value y) {
        return arith::MulIOp::create(rewriter, loc, x, y).getResult();
      };
      Value quad = mul(mul(n, m), idx(d + eTotal + sums));
      Value reassoc =
          mul(arith::AddIOp::create(rewriter, loc, m, n),
              idx(d * eTotal + sums * d));
      Value cheaper = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ult, reassoc, quad);
      SmallVector<Type> types;
      for (const ScoreUse &use : uses)
        types.push_back(use.op->getResult(0).getType());
      auto branch = scf::IfOp::create(rewriter, loc, types, cheaper,
                                      /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPointToStart(branch.thenBlock());
        scf::YieldOp::create(rewriter, loc, buildReassociated(rewriter));
        rewriter.setInsertionPointToStart(branch.elseBlock());
        IRMapping mapping;
        Operation *scores = rewriter.clone(*qk, mapping);
        SmallVector<Value> kept;
        for (const ScoreUse &use : uses)
          kept.push_back(rewriter.clone(*use.op, mapping)->getResult(0));
        (void)scores;
        scf::YieldOp::create(rewriter, loc, kept);
      }
      replacements = branch.getResults();
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] symbolic sizes: both forms behind scf.if "
                 << d * eTotal + sums * d << " (n + m) < " << d + eTotal + sums
                 << " n m at run time\n");
      if (remarks)
        qk.emitRemark() << "linear attention: reassociated form when "
                        << d * eTotal + sums * d << " (n + m) < "
                        << d + eTotal + sums
                        << " n m multiply-adds at run time (n, m symbolic), "
                           "else the quadratic form";
    }
    for (auto [use, value] : llvm::zip(uses, replacements))
      rewriter.replaceOp(use.op, value);
    rewriter.eraseOp(qk);
    return success();
  }
}

namespace {
struct SeqReassociateLinearAttentionPass
    : public mlir::seq::impl::SeqReassociateLinearAttentionBase<
          SeqReassociateLinearAttentionPass> {
  using Base::Base;
  void runOnOperation() override {
    // Each product once: the quadratic branch of a run-time choice keeps a
    // copy of it, which must not be rewritten again.
    // Only the `A @ B^T` products: a rewrite erases the products of S (never
    // transposed ones, which it declines), so the list holds no erased op.
    SmallVector<MatmulOp> products;
    getOperation()->walk([&](MatmulOp op) {
      if (op.getTransposeRhs())
        products.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (MatmulOp op : products)
      (void)reassociateLinearAttention(rewriter, op, remarks);
  }
};
} // namespace
