//===- EntryInvoke.cpp - the seqc_invoke packed entry point ---------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// seqc_invoke(void **args) forwards args[k] to the k-th parameter of the
// model's C interface. The runtime then needs no knowledge of the model's
// arity: it fills an array of descriptor pointers and calls one symbol.
//
//===----------------------------------------------------------------------===//

#include "lowering/Entry/Entry.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQEMITINVOKE
#include "lowering/Entry/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;
using namespace mlir::seq;

namespace {
struct SeqEmitInvokePass
    : public mlir::seq::impl::SeqEmitInvokeBase<SeqEmitInvokePass> {
  void runOnOperation() override;
};
} // namespace

void SeqEmitInvokePass::runOnOperation() {
  ModuleOp module = getOperation();
  auto entry = module->getAttrOfType<FlatSymbolRefAttr>(kEntryAttrName);
  if (!entry) {
    module.emitError() << "expected the module attribute '" << kEntryAttrName
                       << "' naming the model function (set by "
                          "seq-build-manifest)";
    return signalPassFailure();
  }

  // func-to-llvm names the C interface of @f `_mlir_ciface_f`.
  std::string cifaceName = ("_mlir_ciface_" + entry.getValue()).str();
  auto ciface = module.lookupSymbol<LLVM::LLVMFuncOp>(cifaceName);
  if (!ciface || ciface.isExternal()) {
    module.emitError() << "expected the C interface '" << cifaceName
                       << "' of the model function in the LLVM dialect; run "
                          "seq-emit-invoke after convert-func-to-llvm";
    return signalPassFailure();
  }
  if (Operation *existing = module.lookupSymbol(kInvokeSymbol)) {
    existing->emitError() << "the symbol '" << kInvokeSymbol
                          << "' is reserved for the model entry point";
    return signalPassFailure();
  }

  // Every parameter of a C interface is a pointer: the result area first
  // (when there are results), then one descriptor per memref argument.
  // Scalars would be passed by value and break the void** convention, so
  // they are rejected rather than reinterpreted.
  LLVM::LLVMFunctionType cifaceType = ciface.getFunctionType();
  auto ptrType = LLVM::LLVMPointerType::get(&getContext());
  for (auto [index, type] : llvm::enumerate(cifaceType.getParams())) {
    if (type != ptrType) {
      ciface.emitError() << "parameter " << index << " of the C interface has "
                         << "type " << type
                         << "; seqc_invoke passes only memref descriptors";
      return signalPassFailure();
    }
  }
  if (!isa<LLVM::LLVMVoidType>(cifaceType.getReturnType())) {
    ciface.emitError() << "expected the C interface to return its results "
                          "through its first parameter";
    return signalPassFailure();
  }

  Location loc = ciface.getLoc();
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto voidType = LLVM::LLVMVoidType::get(&getContext());
  auto invoke = LLVM::LLVMFuncOp::create(
      builder, loc, kInvokeSymbol,
      LLVM::LLVMFunctionType::get(voidType, {ptrType}));
  Block *body = invoke.addEntryBlock(builder);
  builder.setInsertionPointToStart(body);

  Value args = body->getArgument(0);
  SmallVector<Value> operands;
  for (unsigned k = 0, e = cifaceType.getNumParams(); k < e; ++k) {
    Value slot = LLVM::GEPOp::create(builder, loc, ptrType, ptrType, args,
                                     ArrayRef<LLVM::GEPArg>{int32_t(k)},
                                     LLVM::GEPNoWrapFlags::inbounds);
    operands.push_back(LLVM::LoadOp::create(builder, loc, ptrType, slot));
  }
  LLVM::CallOp::create(builder, loc, ciface, operands);
  LLVM::ReturnOp::create(builder, loc, ValueRange());

  // docs/abi.md: the object defines seqc_manifest and seqc_invoke. Every
  // other definition (the model function, its C interface, helpers) becomes
  // internal, so that a model linked into a host or a shared library exports
  // no generic name such as `forward`, and two models can share a process.
  for (auto function : module.getOps<LLVM::LLVMFuncOp>())
    if (function != invoke && !function.isExternal())
      function.setLinkage(LLVM::Linkage::Internal);
}
