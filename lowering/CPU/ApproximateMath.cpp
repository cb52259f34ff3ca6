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

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQCPUAPPROXIMATEMATH
#include "lowering/CPU/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

namespace {
struct SeqCPUApproximateMathPass
    : public mlir::seq::impl::SeqCPUApproximateMathBase<
          SeqCPUApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
