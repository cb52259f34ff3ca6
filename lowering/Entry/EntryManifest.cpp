//===- EntryManifest.cpp - the seqc_manifest JSON document ----------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Records the model's signature (dialect/Seq/IR/ModelSignature.h, which reads
// and checks the frontend's attributes) as the JSON manifest of docs/abi.md.
//
//===----------------------------------------------------------------------===//

#include "lowering/Entry/Entry.h"

#include "dialect/Seq/Support/Debug.h"

#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "seq-build-manifest"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQBUILDMANIFEST
#include "lowering/Entry/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;
using namespace mlir::seq;

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct SeqBuildManifestPass
    : public mlir::seq::impl::SeqBuildManifestBase<SeqBuildManifestPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

void SeqBuildManifestPass::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<func::FuncOp> model = findModelFunction(module);
  if (failed(model))
    return signalPassFailure();
  FailureOr<ModelSignature> signature = readModelSignature(*model);
  if (failed(signature))
    return signalPassFailure();
  if (model->isPrivate()) {
    model->emitError() << "the model function must be public: its C "
                          "interface is the entry point";
    return signalPassFailure();
  }
  if (Operation *existing = module.lookupSymbol(kManifestSymbol)) {
    existing->emitError() << "the symbol '" << kManifestSymbol
                          << "' is reserved for the model manifest";
    return signalPassFailure();
  }

  // The runtime reads `const char seqc_manifest[]`: a constant, externally
  // visible, NUL-terminated byte array.
  std::string json = toManifestJSON(*signature, target);
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] @" << model->getName() << ": "
                          << signature->inputs.size() << " inputs, "
                          << signature->params.size()
                          << " parameters; a manifest of " << json.size()
                          << " bytes for target '" << target << "'\n");
  json.push_back('\0');
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  auto arrayType = LLVM::LLVMArrayType::get(builder.getI8Type(), json.size());
  LLVM::GlobalOp::create(builder, model->getLoc(), arrayType,
                         /*isConstant=*/true, LLVM::Linkage::External,
                         kManifestSymbol, builder.getStringAttr(json),
                         /*alignment=*/1);

  // The manifest now holds what the frontend's argument and result
  // attributes said. Drop them: they would reach the LLVM dialect's function
  // arguments, where the translation to LLVM IR warns about every one.
  auto dropSeqAttrs = [&](DictionaryAttr attrs) {
    SmallVector<NamedAttribute> kept;
    if (attrs)
      for (NamedAttribute attr : attrs)
        if (!attr.getName().getValue().starts_with("seq."))
          kept.push_back(attr);
    return builder.getDictionaryAttr(kept);
  };
  for (unsigned i = 0, e = model->getNumArguments(); i < e; ++i)
    model->setArgAttrs(i, dropSeqAttrs(model->getArgAttrDict(i)));
  for (unsigned i = 0, e = model->getNumResults(); i < e; ++i)
    model->setResultAttrs(i, dropSeqAttrs(model->getResultAttrDict(i)));

  (*model)->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    builder.getUnitAttr());
  module->setAttr(kEntryAttrName, FlatSymbolRefAttr::get(*model));
  module->setAttr(kNumInputsAttr,
                  builder.getI64IntegerAttr(signature->inputs.size()));
  module->setAttr(kNumParamsAttr,
                  builder.getI64IntegerAttr(signature->params.size()));
  if (!signature->state.empty())
    module->setAttr(kNumStateAttr,
                    builder.getI64IntegerAttr(signature->state.size()));
}
