//===- CheckLowered.cpp - nothing but LLVM-translatable ops survive -------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQCPUCHECKLOWERED
#include "lowering/CPU/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

namespace {
struct SeqCPUCheckLoweredPass
    : public mlir::seq::impl::SeqCPUCheckLoweredBase<SeqCPUCheckLoweredPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult result = module->walk([&](Operation *op) {
      Dialect *dialect = op->getDialect();
      if (op == module.getOperation() ||
          (dialect && isa<LLVM::LLVMDialect, omp::OpenMPDialect>(dialect)))
        return WalkResult::advance();
      op->emitError() << "'" << op->getName()
                      << "' survived the lowering to the LLVM dialect";
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
