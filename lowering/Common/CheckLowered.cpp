//===- CheckLowered.cpp - nothing but LLVM-translatable ops survive -------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/Support/Debug.h"
#include "lowering/Common/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"

#define DEBUG_TYPE "seq-check-lowered"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQCHECKLOWERED
#include "lowering/Common/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

/// Whether the translation to LLVM IR accepts `op` as it is.
static bool isTranslatable(Operation *op) {
  if (isa_and_nonnull<LLVM::LLVMDialect, omp::OpenMPDialect>(
          op->getDialect()) ||
      isa<ModuleOp, gpu::BinaryOp>(op))
    return true;
  return isa<gpu::LaunchFuncOp>(op) &&
         llvm::all_of(op->getOperandTypes(), LLVM::isCompatibleType);
}

namespace {
struct SeqCheckLoweredPass
    : public mlir::seq::impl::SeqCheckLoweredBase<SeqCheckLoweredPass> {
  void runOnOperation() override {
    WalkResult result = getOperation()->walk([&](Operation *op) {
      if (isTranslatable(op))
        return WalkResult::advance();
      LLVM_DEBUG({
        llvm::dbgs() << "[" DEBUG_TYPE "] survivor: " << *op << "\n";
        if (isa<gpu::LaunchFuncOp>(op))
          for (Type type : op->getOperandTypes())
            if (!LLVM::isCompatibleType(type))
              llvm::dbgs() << "[" DEBUG_TYPE "] operand type " << type
                           << " is not an LLVM type\n";
      });
      op->emitError() << "'" << op->getName()
                      << "' survived the lowering to the LLVM dialect";
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
