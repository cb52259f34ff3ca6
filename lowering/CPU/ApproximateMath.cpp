//===- ApproximateMath.cpp - math functions as vectorizable polynomials ---===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Rewrites the transcendental `math` ops of the loops (exp, log, tanh, erf,
// sin, cos, ...) on f32 into MLIR's polynomial approximations: plain arith
// ops that LLVM's vectorizers turn into SIMD code, where the libm calls they
// replace run one element at a time. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/Passes.h"

#include "dialect/Seq/Support/Debug.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"

#define DEBUG_TYPE "seq-cpu-approximate-math"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQCPUAPPROXIMATEMATH
#include "lowering/CPU/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

/// Prints how many ops of each math function `root` contains.
[[maybe_unused]] static void dumpMathOps(Operation *root, StringRef when) {
  llvm::MapVector<StringRef, int64_t> counts;
  root->walk([&](Operation *op) {
    if (isa_and_nonnull<math::MathDialect>(op->getDialect()))
      ++counts[op->getName().getStringRef()];
  });
  llvm::dbgs() << "[" DEBUG_TYPE "] math ops " << when << ":";
  if (counts.empty())
    llvm::dbgs() << " none";
  for (const auto &entry : counts)
    llvm::dbgs() << " " << entry.first << " x" << entry.second;
  llvm::dbgs() << "\n";
}

namespace {
struct SeqCPUApproximateMathPass
    : public mlir::seq::impl::SeqCPUApproximateMathBase<
          SeqCPUApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    LLVM_DEBUG(dumpMathOps(getOperation(), "before"));
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // The approximations use math.fma; the other ops left have no
    // approximation for their type.
    LLVM_DEBUG(dumpMathOps(getOperation(), "after"));
  }
};
} // namespace
