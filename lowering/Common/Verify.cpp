//===- Verify.cpp - the IR verified at the end of a pipeline stage --------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "lowering/Common/Passes.h"

#include "mlir/IR/Verifier.h"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQVERIFY
#include "lowering/Common/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

namespace {
struct SeqVerifyPass : public seq::impl::SeqVerifyBase<SeqVerifyPass> {
  using SeqVerifyBase::SeqVerifyBase;

  void runOnOperation() override {
    // Nothing changes: the pass manager need not verify again after it.
    markAllAnalysesPreserved();
    if (succeeded(verify(getOperation())))
      return;
    getOperation()->emitError()
        << "the IR does not verify after the " << stage
        << " stage: this is a bug of seqc (rerun with --verify-each to find "
           "the pass that broke it)";
    signalPassFailure();
  }
};
} // namespace
