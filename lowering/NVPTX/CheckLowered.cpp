//===- CheckLowered.cpp - nothing but LLVM ops and GPU binaries -----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "lowering/NVPTX/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQNVPTXCHECKLOWERED
#include "lowering/NVPTX/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

namespace {
struct SeqNVPTXCheckLoweredPass
    : public mlir::seq::impl::SeqNVPTXCheckLoweredBase<
          SeqNVPTXCheckLoweredPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult result = module->walk([&](Operation *op) {
      if (op == module.getOperation() || isa<gpu::BinaryOp>(op) ||
          isa_and_nonnull<LLVM::LLVMDialect>(op->getDialect()))
        return WalkResult::advance();
      // Launches on LLVM values: the translation to LLVM IR turns them into
      // calls of the runtime's mgpu* functions.
      if (isa<gpu::LaunchFuncOp>(op) &&
          llvm::all_of(op->getOperandTypes(), LLVM::isCompatibleType))
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
