//===- ImportDSL.h - .seq source to the seq dialect -------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The entry point of the frontend: parses a .seq model and builds its seq IR
// (docs/language.md). Diagnostics go to the MLIRContext's handler; install a
// SourceMgrDiagnosticHandler on the same SourceMgr to print them as
// `file:line:col: error: ...` with the source line and a caret.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_FRONTEND_IMPORTDSL_H
#define SEQC_FRONTEND_IMPORTDSL_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/LogicalResult.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
class MLIRContext;

namespace seq {

/// How to compile a model, and the limits that keep hostile input from
/// exhausting time or memory.
struct FrontendOptions {
  /// Hyperparameter overrides (`-D name=value`) in command-line order; a later
  /// one wins. Values are parsed according to the hyperparameter's type.
  std::vector<std::pair<std::string, std::string>> hyperOverrides;

  /// The entry of the model to compile (`def decode`): empty for the default
  /// entry, `forward` or a model's only function.
  std::string entry;

  /// Run the IR verifier on the result (errors point at the .seq source).
  bool verify = true;

  /// Deepest nesting of expressions and blocks in the source.
  unsigned maxNesting = 256;
  /// Errors reported before giving up (per phase: syntax, then semantics).
  unsigned maxErrors = 20;
  /// Longest list `range(n)` builds, hence the most layers or iterations.
  int64_t maxRepeat = 4096;
  /// Deepest chain of calls and module instantiations.
  unsigned maxCallDepth = 64;
  /// Most operations the model may elaborate to.
  int64_t maxOps = 1000000;
  /// Most statements, loop iterations and list elements elaboration may
  /// execute (compile-time loops build nothing but still take time).
  int64_t maxSteps = 2000000;
  /// Most parameters (weights) a model may declare.
  int64_t maxParams = 100000;
};

/// Parses the main buffer of `sourceMgr` and builds a module holding the
/// model's `func.func @forward` (conventions in docs/language.md, "IR
/// conventions"). Returns null after reporting errors.
OwningOpRef<ModuleOp> importSeqSource(llvm::SourceMgr &sourceMgr,
                                      MLIRContext &context,
                                      const FrontendOptions &options = {});

/// The entries of a model (docs/language.md, "Entries and state"), each
/// compiled alone: one module per entry, the default entry first, the others
/// in source order. A module of a model with several entries carries the
/// entry's name as `seq.entry_name`.
struct SeqEntryModules {
  std::vector<std::string> names;
  std::vector<OwningOpRef<ModuleOp>> modules;
};

/// Parses the main buffer of `sourceMgr` once and builds the module of each
/// entry, or of `options.entry` alone (as the model's one function) when it
/// is set. Returns failure after reporting
/// errors.
FailureOr<SeqEntryModules> importSeqEntries(llvm::SourceMgr &sourceMgr,
                                            MLIRContext &context,
                                            const FrontendOptions &options = {});

/// The attribute naming a module's entry, on models with several.
constexpr const char *kEntryNameAttr = "seq.entry_name";

} // namespace seq
} // namespace mlir

#endif // SEQC_FRONTEND_IMPORTDSL_H
