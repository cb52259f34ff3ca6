//===- MergeKernelModules.cpp - one gpu.module for all kernels ------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/Support/Debug.h"
#include "lowering/NVPTX/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#define DEBUG_TYPE "seq-nvptx-merge-kernel-modules"

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

  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] merging " << kernelModules.size()
                          << " kernel modules into @" << kKernelModuleName
                          << "\n");
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
      if (mergedSymbols.lookup(symbol.getName())) {
        LLVM_DEBUG(llvm::dbgs()
                   << "[" DEBUG_TYPE "] @" << symbol.getName() << " of module @"
                   << kernelModule.getName()
                   << " is already in the merged module: one copy kept\n");
        continue;
      }
      op.moveBefore(merged.getBody(), merged.getBody()->end());
      mergedSymbols.insert(&op);
    }
    kernelModule.erase();
  }

  // Identical kernels (the same op of every layer) are compiled once: each
  // kernel is keyed by its generic form under a common name, and launches
  // of a later copy launch the first.
  llvm::StringMap<gpu::GPUFuncOp> byForm;
  llvm::DenseMap<SymbolRefAttr, SymbolRefAttr> canonical;
  for (auto kernel :
       llvm::make_early_inc_range(merged.getOps<gpu::GPUFuncOp>())) {
    if (!kernel.isKernel())
      continue;
    std::string name = kernel.getName().str();
    std::string form;
    llvm::raw_string_ostream os(form);
    kernel.setName("kernel");
    kernel->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
    kernel.setName(name);
    auto [it, inserted] = byForm.try_emplace(form, kernel);
    if (inserted)
      continue;
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] kernel @" << name << " is identical to @"
               << it->second.getName() << ": its launches launch @"
               << it->second.getName() << "\n");
    canonical[SymbolRefAttr::get(merged.getNameAttr(),
                                 {FlatSymbolRefAttr::get(kernel.getNameAttr())})] =
        SymbolRefAttr::get(
            merged.getNameAttr(),
            {FlatSymbolRefAttr::get(it->second.getNameAttr())});
    kernel.erase();
  }
  for (auto &[from, to] : renamed)
    if (auto it = canonical.find(to); it != canonical.end())
      to = it->second;
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << renamed.size()
                          << " kernels, " << byForm.size()
                          << " of them distinct\n");

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
