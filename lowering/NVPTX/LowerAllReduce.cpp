//===- LowerAllReduce.cpp - block-wide reductions in GPU kernels ----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// gpu.all_reduce in the outlined kernels becomes warp shuffles and a
// workgroup buffer of one value per warp (MLIR's all-reduce rewrite); see
// the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "lowering/NVPTX/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQNVPTXLOWERALLREDUCE
#include "lowering/NVPTX/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

namespace {
struct SeqNVPTXLowerAllReducePass
    : public mlir::seq::impl::SeqNVPTXLowerAllReduceBase<
          SeqNVPTXLowerAllReducePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateGpuAllReducePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    WalkResult left = getOperation().walk([](gpu::AllReduceOp reduce) {
      reduce.emitError() << "this block-wide reduction could not be lowered "
                            "for the GPU";
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
