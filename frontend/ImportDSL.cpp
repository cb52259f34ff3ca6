//===- ImportDSL.cpp - .seq source to the seq dialect ---------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "frontend/ImportDSL.h"

#include "frontend/MLIRGen.h"
#include "frontend/Parser.h"

#include "dialect/Seq/IR/SeqDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Tools/mlir-translate/Translation.h"
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

void mlir::seq::registerImportSeqTranslation() {
  static TranslateToMLIRRegistration registration(
      "import-seq", "Translate a .seq model to the seq dialect",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        return importSeqSource(sourceMgr, *context);
      },
      [](DialectRegistry &registry) {
        registry.insert<SeqDialect, arith::ArithDialect, func::FuncDialect,
                        tensor::TensorDialect>();
      });
}
