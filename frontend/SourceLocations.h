//===- SourceLocations.h - SMLoc to MLIR locations --------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The parser and MLIRGen both report diagnostics through MLIR, whose
// SourceMgrDiagnosticHandler prints `file:line:col: error: ...` with the
// source line and a caret when a diagnostic's location is a FileLineColLoc
// naming a buffer of the same SourceMgr.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_FRONTEND_SOURCELOCATIONS_H
#define SEQC_FRONTEND_SOURCELOCATIONS_H

#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/SourceMgr.h"

namespace mlir::seq::frontend {

/// Maps positions in a SourceMgr's buffers to FileLineColLocs.
class SourceLocator {
public:
  SourceLocator(const llvm::SourceMgr &sourceMgr, MLIRContext *context)
      : sourceMgr(sourceMgr), context(context) {}

  /// The location of `loc`, which must point into a buffer of the SourceMgr.
  FileLineColLoc get(llvm::SMLoc loc) const {
    unsigned bufferID = sourceMgr.FindBufferContainingLoc(loc);
    if (bufferID == 0)
      return FileLineColLoc::get(context, "<unknown>", 0, 0);
    auto [line, column] = sourceMgr.getLineAndColumn(loc, bufferID);
    StringRef file = sourceMgr.getMemoryBuffer(bufferID)->getBufferIdentifier();
    return FileLineColLoc::get(context, file, line, column);
  }

  MLIRContext *getContext() const { return context; }

private:
  const llvm::SourceMgr &sourceMgr;
  MLIRContext *context;
};

} // namespace mlir::seq::frontend

#endif // SEQC_FRONTEND_SOURCELOCATIONS_H
