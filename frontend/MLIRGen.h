//===- MLIRGen.h - .seq AST to seq IR ---------------------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_FRONTEND_MLIRGEN_H
#define SEQC_FRONTEND_MLIRGEN_H

#include "frontend/AST.h"
#include "frontend/ImportDSL.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir::seq::frontend {

/// Builds the seq IR of the model in `file`, parsed from `sourceMgr`.
/// Reports errors through the context's diagnostic handler and returns null
/// after any.
OwningOpRef<ModuleOp> mlirGen(const ast::SourceFile &file,
                              const llvm::SourceMgr &sourceMgr,
                              MLIRContext &context,
                              const FrontendOptions &options);

} // namespace mlir::seq::frontend

#endif // SEQC_FRONTEND_MLIRGEN_H
