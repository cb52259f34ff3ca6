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
#include "lowering/Common/Attributes.h"

#include "dialect/Seq/Support/Debug.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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
/// `math.exp` marked `seq.fast_exp` on f32 (scalars or vectors): attention's
/// exp(s - max) per score (lowering/SeqToLinalg/FusedAttention.cpp) and the
/// selective scan's gates (FusedScan.cpp). Attention's, whose
/// MLIR polynomial form (about 22 instructions a vector, with two clamps of
/// its argument and two of its exponent) took a fifth of full attention's
/// time on Zen 5. Here, 13: x clamped to [-127 ln 2, 128 ln 2]; k =
/// round(x log2(e)) by adding 1.5 * 2^23 + 127, which leaves k + 127 in the
/// low bits of the sum; r = x - k ln 2 in two FMAs (Cody and Waite's split
/// of ln 2, exact for |k| <= 128); e^r on [-ln(2)/2, ln(2)/2] by a
/// polynomial of degree 5, 1 + c1 r + ... + c5 r^5, fitted to minimize the
/// largest relative error with the constant term held at 1 (so that
/// exp(0) is exactly 1: 9.2e-8 in exact arithmetic; with f32's roundings,
/// at most 1.63e-7 or 2 ulp over [-87, 88], 0.66 ulp on average, where
/// the degree-6 Taylor polynomial it replaces, one FMA longer, reached
/// 2.3e-7 or 2.7 ulp); times 2^k, the sum's low bits shifted into an f32's
/// exponent. exp(-inf) and everything below -127 ln 2 give exactly 0 (k =
/// -127 makes the scale's bits 0), which attention needs for the masked
/// scores of rows that have seen no key; results below 2^-126 (the
/// subnormals) flush to 0, above 128 ln 2 give +inf; NaN propagates (the
/// clamps are selects on ordered compares).
struct FastExp : public OpRewritePattern<math::ExpOp> {
  FastExp(MLIRContext *context)
      : OpRewritePattern(context, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(math::ExpOp op,
                                PatternRewriter &rewriter) const override {
    if (!op->hasAttr(seq::kFastExpAttrName) ||
        !getElementTypeOrSelf(op.getType()).isF32())
      return failure();
    Location loc = op.getLoc();
    Type type = op.getType();
    auto shaped = dyn_cast<VectorType>(type);
    auto constant = [&](double v) -> Value {
      if (shaped)
        return arith::ConstantOp::create(
            rewriter, loc, type,
            DenseElementsAttr::get(shaped, static_cast<float>(v)));
      return arith::ConstantOp::create(rewriter, loc, type,
                                       rewriter.getF32FloatAttr(v));
    };
    auto clamp = [&](Value x, arith::CmpFPredicate outside, double bound) {
      Value c = constant(bound);
      Value beyond = arith::CmpFOp::create(rewriter, loc, outside, x, c);
      return arith::SelectOp::create(rewriter, loc, beyond, c, x).getResult();
    };
    const double ln2 = 0.69314718055994531;
    Value x = clamp(op.getOperand(), arith::CmpFPredicate::OLT, -127.0 * ln2);
    x = clamp(x, arith::CmpFPredicate::OGT, 128.0 * ln2);
    Value magic = constant(12582912.0 + 127.0);
    Value sum = math::FmaOp::create(rewriter, loc, x,
                                    constant(1.4426950408889634), magic);
    Value k = arith::SubFOp::create(rewriter, loc, sum, magic);
    // ln 2 = 0.693359375 - 2.12194440e-4 (the first with 11 significant
    // bits, so that k times it is exact).
    Value r = math::FmaOp::create(rewriter, loc, k, constant(-0.693359375), x);
    r = math::FmaOp::create(rewriter, loc, k, constant(2.12194440e-4), r);
    const double coefficients[] = {1.0,
                                   9.999997020e-01,
                                   4.999915063e-01,
                                   1.666763574e-01,
                                   4.189793020e-02,
                                   8.290315047e-03};
    Value p = constant(coefficients[5]);
    for (int i = 4; i >= 0; --i)
      p = math::FmaOp::create(rewriter, loc, p, r, constant(coefficients[i]));
    Type i32 = rewriter.getI32Type();
    Type intType = shaped ? Type(VectorType::get(shaped.getShape(), i32)) : i32;
    Value shift =
        shaped ? arith::ConstantOp::create(
                     rewriter, loc, intType,
                     DenseElementsAttr::get(cast<VectorType>(intType),
                                            rewriter.getI32IntegerAttr(23)))
                     .getResult()
               : arith::ConstantOp::create(rewriter, loc, intType,
                                           rewriter.getI32IntegerAttr(23))
                     .getResult();
    Value bits = arith::ShLIOp::create(
        rewriter, loc, arith::BitcastOp::create(rewriter, loc, intType, sum),
        shift);
    rewriter.replaceOpWithNewOp<arith::MulFOp>(
        op, p, arith::BitcastOp::create(rewriter, loc, type, bits));
    return success();
  }
};

struct SeqCPUApproximateMathPass
    : public mlir::seq::impl::SeqCPUApproximateMathBase<
          SeqCPUApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FastExp>(&getContext());
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
