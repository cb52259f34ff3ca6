//===- ImportDSL.cpp - .seq source to the seq dialect ---------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "frontend/ImportDSL.h"

#include "frontend/MLIRGen.h"
#include "frontend/Parser.h"

#include "dialect/Seq/IR/ModelSignature.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

/// "f32[b, 2, 256, 16]": a state argument's element type and declared dims.
static std::string describeState(BlockArgument arg, ArrayAttr dims) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << cast<ShapedType>(arg.getType()).getElementType() << "[";
  for (auto [i, dim] : llvm::enumerate(dims)) {
    os << (i ? ", " : "");
    if (auto size = dyn_cast<IntegerAttr>(dim))
      os << size.getInt();
    else
      os << cast<StringAttr>(dim).getValue();
  }
  os << "]";
  return text;
}

/// Checks that every state member the entries share has one element type
/// and one shape: they are one buffer of the instance.
static LogicalResult checkSharedState(const seq::SeqEntryModules &entries) {
  struct FirstUse {
    BlockArgument arg;
    ArrayAttr dims;
    std::string entry;
  };
  llvm::StringMap<FirstUse> seen;
  for (auto [name, module] : llvm::zip(entries.names, entries.modules)) {
    auto func = (*module).lookupSymbol<func::FuncOp>(seq::kModelFunctionName);
    if (!func)
      continue;
    for (BlockArgument arg : func.getArguments()) {
      auto state =
          func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), seq::kStateAttr);
      if (!state)
        continue;
      auto dims =
          func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), seq::kDimsAttr);
      auto [it, inserted] =
          seen.try_emplace(state.getValue(), FirstUse{arg, dims, name});
      if (inserted)
        continue;
      const FirstUse &first = it->second;
      if (dims == first.dims &&
          cast<ShapedType>(arg.getType()).getElementType() ==
              cast<ShapedType>(first.arg.getType()).getElementType())
        continue;
      (emitError(arg.getLoc())
       << "state '" << state.getValue() << "' is "
       << describeState(arg, dims) << " in entry '" << name << "' but "
       << describeState(first.arg, first.dims) << " in entry '" << first.entry
       << "': the entries of a model share one buffer per state member")
          .attachNote(first.arg.getLoc())
          << "entry '" << first.entry << "' uses it here";
      // The other members of the same module (a KV cache's values beside
      // its keys) differ alike: one error says it.
      return failure();
    }
  }
  return success();
}

/// Parses the main file of `sourceMgr` within the options' limits; null
/// after a reported error.
static std::unique_ptr<seq::frontend::ast::SourceFile>
parseSource(llvm::SourceMgr &sourceMgr, MLIRContext &context,
            const seq::FrontendOptions &options) {
  seq::frontend::ParserLimits limits;
  limits.maxNesting = options.maxNesting;
  limits.maxErrors = options.maxErrors;
  seq::frontend::Parser parser(sourceMgr, sourceMgr.getMainFileID(), &context,
                          limits);
  return parser.parseFile();
}

FailureOr<seq::SeqEntryModules>
mlir::seq::importSeqEntries(llvm::SourceMgr &sourceMgr, MLIRContext &context,
                            const FrontendOptions &options) {
  std::unique_ptr<frontend::ast::SourceFile> file =
      parseSource(sourceMgr, context, options);
  if (!file)
    return failure();
  const frontend::ast::ModuleDecl *model = nullptr;
  for (const auto &module : file->modules)
    if (module->isModel && !model)
      model = module.get();
  SeqEntryModules entries;
  if (!options.entry.empty()) {
    // One entry, as if the model defined no other (mlirGen reports an
    // unknown name).
    entries.names.push_back(options.entry);
  } else if (model) {
    entries.names.push_back(model->forward->name.str());
    for (const auto &func : model->functions)
      if (func.get() != model->forward)
        entries.names.push_back(func->name.str());
  } else {
    entries.names.push_back("forward"); // mlirGen reports the missing model
  }
  FrontendOptions entryOptions = options;
  for (const std::string &name : entries.names) {
    entryOptions.entry = entries.names.size() > 1 ? name : options.entry;
    OwningOpRef<ModuleOp> module =
        frontend::mlirGen(*file, sourceMgr, context, entryOptions);
    // The members are elaborated for each entry: report their errors once.
    if (!module)
      return failure();
    if (entries.names.size() > 1)
      (*module)->setAttr(kEntryNameAttr, StringAttr::get(&context, name));
    entries.modules.push_back(std::move(module));
  }
  if (failed(checkSharedState(entries)))
    return failure();
  return entries;
}

OwningOpRef<ModuleOp>
mlir::seq::importSeqSource(llvm::SourceMgr &sourceMgr, MLIRContext &context,
                           const FrontendOptions &options) {
  std::unique_ptr<frontend::ast::SourceFile> file =
      parseSource(sourceMgr, context, options);
  if (!file)
    return nullptr;
  return frontend::mlirGen(*file, sourceMgr, context, options);
}
