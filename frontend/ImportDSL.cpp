//===- ImportDSL.cpp - .seq source to the seq dialect ---------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "frontend/ImportDSL.h"

#include "frontend/MLIRGen.h"
#include "frontend/Parser.h"

#include "llvm/Support/SourceMgr.h"

using namespace mlir;

OwningOpRef<ModuleOp>
mlir::seq::importSeqSource(llvm::SourceMgr &sourceMgr, MLIRContext &context,
                           const FrontendOptions &options) {
  frontend::ParserLimits limits;
  limits.maxNesting = options.maxNesting;
  limits.maxErrors = options.maxErrors;
  frontend::Parser parser(sourceMgr, sourceMgr.getMainFileID(), &context,
                          limits);
  std::unique_ptr<frontend::ast::SourceFile> file = parser.parseFile();
  if (!file)
    return nullptr;
  return frontend::mlirGen(*file, sourceMgr, context, options);
}
