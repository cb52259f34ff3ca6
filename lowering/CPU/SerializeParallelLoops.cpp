//===- SerializeParallelLoops.cpp - keep large outer loops parallel -------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Decides which scf.parallel loops become OpenMP regions on the CPU: the
// outermost ones with enough work. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/Passes.h"

#include "dialect/Seq/Support/Debug.h"

#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "seq-cpu-serialize-parallel-loops"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQCPUSERIALIZEPARALLELLOOPS
#include "lowering/CPU/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

/// Work estimates saturate here: "unknown or huge", always parallel.
static constexpr int64_t kUnboundedWork = std::numeric_limits<int64_t>::max();

static int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t result;
  if (llvm::MulOverflow(a, b, result))
    return kUnboundedWork;
  return result;
}

static int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t result;
  if (llvm::AddOverflow(a, b, result))
    return kUnboundedWork;
  return result;
}

/// Returns the number of iterations of `loop` (the product over its induction
/// variables), or kUnboundedWork when a bound or step is not a constant.
static int64_t getStaticIterationCount(LoopLikeOpInterface loop) {
  std::optional<SmallVector<OpFoldResult>> lbs = loop.getLoopLowerBounds();
  std::optional<SmallVector<OpFoldResult>> ubs = loop.getLoopUpperBounds();
  std::optional<SmallVector<OpFoldResult>> steps = loop.getLoopSteps();
  if (!lbs || !ubs || !steps)
    return kUnboundedWork;
  int64_t count = 1;
  for (auto [lb, ub, step] : llvm::zip_equal(*lbs, *ubs, *steps)) {
    std::optional<int64_t> lbInt = getConstantIntValue(lb);
    std::optional<int64_t> ubInt = getConstantIntValue(ub);
    std::optional<int64_t> stepInt = getConstantIntValue(step);
    if (!lbInt || !ubInt || !stepInt || *stepInt <= 0)
      return kUnboundedWork;
    int64_t trips = *ubInt <= *lbInt
                        ? 0
                        : llvm::divideCeil(static_cast<uint64_t>(*ubInt) -
                                               static_cast<uint64_t>(*lbInt),
                                           static_cast<uint64_t>(*stepInt));
    count = saturatingMul(count, trips);
  }
  return count;
}

/// Estimates the scalar iterations one execution of `region` performs: every
/// op counts one, a loop counts its trip count times the work of its body.
/// Ops with several regions (scf.if) count the most expensive one.
static int64_t estimateWork(Region &region);

static int64_t estimateWork(Operation &op) {
  int64_t bodyWork = 0;
  for (Region &region : op.getRegions())
    bodyWork = std::max(bodyWork, estimateWork(region));
  if (auto loop = dyn_cast<LoopLikeOpInterface>(op))
    return saturatingMul(getStaticIterationCount(loop),
                         std::max<int64_t>(bodyWork, 1));
  return saturatingAdd(1, bodyWork);
}

static int64_t estimateWork(Region &region) {
  int64_t work = 0;
  for (Block &block : region)
    for (Operation &op : block)
      work = saturatingAdd(work, estimateWork(op));
  return work;
}

namespace {
struct SeqCPUSerializeParallelLoopsPass
    : public mlir::seq::impl::SeqCPUSerializeParallelLoopsBase<
          SeqCPUSerializeParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    // Decide on the original nest first (pre-order: outer loops before the
    // loops they contain), then rewrite inner loops before outer ones so that
    // no rewrite invalidates a loop still to be visited.
    SmallVector<scf::ParallelOp> toSerialize;
    getOperation()->walk<WalkOrder::PreOrder>([&](scf::ParallelOp loop) {
      // OpenMP lowers reductions; serializing them would need them rewritten
      // into iter_args, which parallelForToNestedFors does not do.
      if (loop.getNumReductions() != 0) {
        LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] parallel (reductions): "
                                << loop.getLoc() << "\n");
        return;
      }
      bool nested = loop->getParentOfType<scf::ParallelOp>() != nullptr;
      // A parallel loop inside a sequential one (a step of a recurrence)
      // would fork and join the team once per step.
      bool inSequence = loop->getParentOfType<scf::ForOp>() != nullptr ||
                        loop->getParentOfType<scf::WhileOp>() != nullptr;
      if (nested || inSequence) {
        LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] serialized ("
                                << (nested ? "nested in a parallel loop"
                                           : "inside a sequential loop")
                                << "): " << loop.getLoc() << "\n");
        toSerialize.push_back(loop);
        return;
      }
      int64_t work = estimateWork(*loop.getOperation());
      LLVM_DEBUG({
        llvm::dbgs() << "[" DEBUG_TYPE "] "
                     << (work < minWork ? "serialized" : "parallel")
                     << " (work ";
        if (work == kUnboundedWork)
          llvm::dbgs() << "unbounded";
        else
          llvm::dbgs() << work;
        llvm::dbgs() << ", min-work " << static_cast<int64_t>(minWork)
                     << "): " << loop.getLoc() << "\n";
      });
      if (work < minWork)
        toSerialize.push_back(loop);
    });

    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : llvm::reverse(toSerialize)) {
      rewriter.setInsertionPoint(loop);
      if (failed(scf::parallelForToNestedFors(rewriter, loop))) {
        loop.emitError("could not rewrite this parallel loop into a nest of "
                       "scf.for loops");
        return signalPassFailure();
      }
    }
  }
};
} // namespace
