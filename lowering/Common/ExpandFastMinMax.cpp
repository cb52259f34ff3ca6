//===- ExpandFastMinMax.cpp - min and max without NaN handling ------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Rewrites the floating-point minima and maxima whose fast-math flags waive
// NaNs (and, for maximumf/minimumf, signed zeros) into a compare and a
// select, before arith-expand gives them its NaN-propagating form. See the
// pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "lowering/Common/Passes.h"

#define DEBUG_TYPE "seq-expand-fast-min-max"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQEXPANDFASTMINMAX
#include "lowering/Common/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

namespace {

/// Replaces `op` (lhs, rhs) by `select(cmpf pred (lhs, rhs), lhs, rhs)` when
/// its flags include `required`.
template <typename OpTy>
void expandIfAllowed(OpTy op, arith::CmpFPredicate pred,
                     arith::FastMathFlags required) {
  arith::FastMathFlags flags = op.getFastmath();
  if ((flags & required) != required)
    return;
  OpBuilder builder(op);
  Value cmp = arith::CmpFOp::create(builder, op.getLoc(), pred, op.getLhs(),
                                    op.getRhs(), flags);
  Value select = arith::SelectOp::create(builder, op.getLoc(), cmp, op.getLhs(),
                                         op.getRhs());
  op.replaceAllUsesWith(select);
  op.erase();
}

struct SeqExpandFastMinMaxPass
    : seq::impl::SeqExpandFastMinMaxBase<SeqExpandFastMinMaxPass> {
  void runOnOperation() override {
    using FMF = arith::FastMathFlags;
    using Pred = arith::CmpFPredicate;
    getOperation()->walk([](Operation *op) {
      if (auto max = dyn_cast<arith::MaximumFOp>(op))
        expandIfAllowed(max, Pred::OGT, FMF::nnan | FMF::nsz);
      else if (auto min = dyn_cast<arith::MinimumFOp>(op))
        expandIfAllowed(min, Pred::OLT, FMF::nnan | FMF::nsz);
      else if (auto maxNum = dyn_cast<arith::MaxNumFOp>(op))
        expandIfAllowed(maxNum, Pred::OGT, FMF::nnan);
      else if (auto minNum = dyn_cast<arith::MinNumFOp>(op))
        expandIfAllowed(minNum, Pred::OLT, FMF::nnan);
    });
  }
};

} // namespace
