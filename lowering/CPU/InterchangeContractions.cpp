//===- InterchangeContractions.cpp - reductions out of the inner loop -----===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Puts the output's contiguous dimension innermost in contractions, so that
// the inner loop of a matmul is independent work LLVM can vectorize rather
// than a chain of dependent adds. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/Passes.h"

#include "dialect/Seq/Support/Debug.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "seq-cpu-interchange-contractions"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQCPUINTERCHANGECONTRACTIONS
#include "lowering/CPU/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

/// Returns the loop order (old loop indices, outermost first) that moves the
/// loop indexing the output's last dimension innermost, or std::nullopt when
/// `op` is not a contraction in the pass's sense, would not profit, or is
/// already in that order.
static std::optional<SmallVector<unsigned>>
getContractionLoopOrder(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() < 2 || op.getNumReductionLoops() == 0) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] not a contraction on "
                               "tensors: "
                            << op->getName() << " at " << op.getLoc() << "\n");
    return std::nullopt;
  }
  AffineMap outputMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (outputMap.getNumResults() == 0 || !outputMap.isProjectedPermutation()) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] kept: the output is not "
                               "indexed by loops: "
                            << op.getLoc() << "\n");
    return std::nullopt;
  }
  unsigned inner =
      cast<AffineDimExpr>(outputMap.getResults().back()).getPosition();
  unsigned numLoops = op.getNumLoops();
  if (inner == numLoops - 1) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] already innermost: "
                            << op.getLoc() << "\n");
    return std::nullopt;
  }

  // An input that does not move with the inner loop is what makes the
  // permuted inner loop cheap: it is loaded once per inner loop. The inputs
  // that do move with it must be contiguous along it, or the inner loop
  // would gather one element per cache line: x @ W^T (W[j, k]) keeps its
  // order. (Transposing W on every call costs more than it saves when the
  // batch is small; packing weights belongs to load time.)
  bool hasInvariantInput = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isFunctionOfDim(inner)) {
      hasInvariantInput = true;
      continue;
    }
    if (map.getNumResults() == 0 ||
        map.getResults().back() != getAffineDimExpr(inner, op.getContext())) {
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] kept: input " << input->getOperandNumber()
                 << " is not contiguous along the output's last "
                    "dimension: "
                 << op.getLoc() << "\n");
      return std::nullopt;
    }
  }
  if (!hasInvariantInput) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] kept: every input moves "
                               "with the output's last dimension: "
                            << op.getLoc() << "\n");
    return std::nullopt;
  }
  SmallVector<unsigned> order;
  for (unsigned loop = 0; loop < numLoops; ++loop)
    if (loop != inner)
      order.push_back(loop);
  order.push_back(inner);
  return order;
}

namespace {
struct SeqCPUInterchangeContractionsPass
    : public mlir::seq::impl::SeqCPUInterchangeContractionsBase<
          SeqCPUInterchangeContractionsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, SmallVector<unsigned>>>
        contractions;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (std::optional<SmallVector<unsigned>> order =
              getContractionLoopOrder(op)) {
        LLVM_DEBUG({
          llvm::dbgs() << "[" DEBUG_TYPE "] loop order (";
          llvm::interleaveComma(*order, llvm::dbgs());
          llvm::dbgs() << ") for " << op->getName() << " at " << op.getLoc()
                       << "\n";
        });
        contractions.emplace_back(op, std::move(*order));
      }
    });

    IRRewriter rewriter(&getContext());
    for (auto &[op, order] : contractions) {
      rewriter.setInsertionPoint(op);
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> generalized =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(generalized)) {
          op.emitError("cannot generalize this contraction to reorder its "
                       "loops");
          return signalPassFailure();
        }
        generic = *generalized;
      }
      if (failed(linalg::interchangeGenericOp(rewriter, generic, order))) {
        generic.emitError("cannot reorder the loops of this contraction");
        return signalPassFailure();
      }
    }
  }
};
} // namespace
