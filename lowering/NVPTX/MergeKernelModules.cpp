//===- MergeKernelModules.cpp - one gpu.module for all kernels ------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "lowering/NVPTX/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQNVPTXMERGEKERNELMODULES
#include "lowering/NVPTX/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

/// The name of the merged module.
static constexpr llvm::StringLiteral kKernelModuleName = "seqc_kernels";

namespace {
struct SeqNVPTXMergeKernelModulesPass
    : public mlir::seq::impl::SeqNVPTXMergeKernelModulesBase<
          SeqNVPTXMergeKernelModulesPass> {
  void runOnOperation() override;
};
} // namespace

void SeqNVPTXMergeKernelModulesPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<gpu::GPUModuleOp> kernelModules(
      module.getOps<gpu::GPUModuleOp>());
  if (kernelModules.empty())
    return;
  if (module.lookupSymbol(kKernelModuleName)) {
    module.emitError() << "the symbol '" << kKernelModuleName
                       << "' is reserved for the model's GPU kernels";
    return signalPassFailure();
  }

  OpBuilder builder(kernelModules.front());
  auto merged = gpu::GPUModuleOp::create(builder, module.getLoc(),
                                         kKernelModuleName);
  SymbolTable mergedSymbols(merged);
  // (module, kernel) -> the kernel's new reference.
  llvm::DenseMap<SymbolRefAttr, SymbolRefAttr> renamed;
  for (gpu::GPUModuleOp kernelModule : kernelModules) {
    for (Operation &op :
         llvm::make_early_inc_range(kernelModule.getBody()->getOperations())) {
      auto symbol = dyn_cast<SymbolOpInterface>(&op);
      if (!symbol)
        continue;
      if (auto kernel = dyn_cast<gpu::GPUFuncOp>(&op);
          kernel && kernel.isKernel()) {
        SymbolRefAttr from = SymbolRefAttr::get(
            kernelModule.getNameAttr(),
            {FlatSymbolRefAttr::get(kernel.getNameAttr())});
        kernel.setName(kernelModule.getName());
        renamed[from] = SymbolRefAttr::get(
            merged.getNameAttr(),
            {FlatSymbolRefAttr::get(kernel.getNameAttr())});
        op.moveBefore(merged.getBody(), merged.getBody()->end());
        mergedSymbols.insert(&op);
        continue;
      }
      // Globals (and functions) the kernels share are cloned into each
      // module by the outlining under their original names: keep one.
      if (mergedSymbols.lookup(symbol.getName()))
        continue;
      op.moveBefore(merged.getBody(), merged.getBody()->end());
      mergedSymbols.insert(&op);
    }
    kernelModule.erase();
  }

  WalkResult result = module.walk([&](gpu::LaunchFuncOp launch) {
    auto it = renamed.find(launch.getKernel());
    if (it == renamed.end()) {
      launch.emitError() << "launches " << launch.getKernel()
                         << ", which is not an outlined kernel";
      return WalkResult::interrupt();
    }
    launch.setKernelAttr(it->second);
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    signalPassFailure();
}
