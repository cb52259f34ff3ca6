//===- InlineLayers.cpp - put layers outlined for bufferization back ------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// seq-fold-layers with `on-tensors` outlines each group of twin layers into
// one function, so that One-Shot bufferization analyzes the group once.
// This pass copies each such function's body back in place of its calls
// once it is on buffers. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "lowering/Entry/Entry.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQINLINELAYERS
#include "lowering/Entry/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

namespace {

struct SeqInlineLayersPass
    : public seq::impl::SeqInlineLayersBase<SeqInlineLayersPass> {
  void runOnOperation() override;
};

} // namespace

/// Replaces `call` by a copy of the body of `callee`, a function of one
/// block, in which the callee's instance (its location, the first twin's)
/// becomes the call's, and so do the names of the instances nested in it
/// ("layers.0.mlp" becomes "layers.1.mlp").
static void inlineCall(func::CallOp call, func::FuncOp callee) {
  Block &body = callee.getBody().front();
  IRMapping mapping;
  mapping.map(body.getArguments(), call.getOperands());
  AttrTypeReplacer relocate;
  Location from = callee.getLoc();
  Location to = call.getLoc();
  auto fromName = dyn_cast<NameLoc>(from);
  auto toName = dyn_cast<NameLoc>(to);
  relocate.addReplacement([&](LocationAttr loc) -> std::optional<Attribute> {
    if (loc == from)
      return to;
    auto nested = dyn_cast<NameLoc>(loc);
    if (!nested || !fromName || !toName)
      return std::nullopt;
    StringRef name = nested.getName().getValue();
    if (!name.consume_front(fromName.getName().getValue()) ||
        !name.starts_with("."))
      return std::nullopt;
    // Its child, which names `from` further up, is relocated after.
    return NameLoc::get(
        StringAttr::get(loc.getContext(), toName.getName().getValue() + name),
        nested.getChildLoc());
  });
  OpBuilder builder(call);
  for (Operation &op : body.without_terminator()) {
    Operation *clone = builder.clone(op, mapping);
    clone->walk([&](Operation *nested) {
      nested->setLoc(cast<LocationAttr>(relocate.replace(nested->getLoc())));
    });
  }
  for (auto [result, returned] : llvm::zip_equal(
           call.getResults(), body.getTerminator()->getOperands()))
    result.replaceAllUsesWith(mapping.lookupOrDefault(returned));
  call.erase();
}

void SeqInlineLayersPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<func::FuncOp> callees;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr(seq::kInlineAfterBufferizationAttr))
      callees.push_back(func);
  if (callees.empty())
    return;
  for (func::FuncOp callee : callees) {
    if (!llvm::hasSingleElement(callee.getBody())) {
      callee.emitOpError("outlined for bufferization but not of one block");
      return signalPassFailure();
    }
  }
  SymbolTable symbols(module);
  SmallVector<func::CallOp> calls;
  module.walk([&](func::CallOp call) {
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    if (callee && callee->hasAttr(seq::kInlineAfterBufferizationAttr))
      calls.push_back(call);
  });
  for (func::CallOp call : calls)
    inlineCall(call, symbols.lookup<func::FuncOp>(call.getCallee()));
  for (func::FuncOp callee : callees)
    symbols.erase(callee);
}
