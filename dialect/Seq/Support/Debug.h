//===- Debug.h - LLVM_DEBUG and -debug-only for seqc's passes ---*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// seqc's passes trace their decisions as LLVM's do: a file defines
// DEBUG_TYPE (its pass's argument name, "seq-plan-memory") and wraps its
// trace in LLVM_DEBUG(...), which runs when the tool is given `-debug`, or
// `-debug-only=` with a comma-separated list that names the DEBUG_TYPE:
//
//   seq-opt --seq-plan-memory -debug-only=seq-plan-memory model.mlir
//   seqc model.seq -debug-only=seq-cpu-vectorize-contractions,seq-tile-attention
//
// LLVM defines those options and LLVM_DEBUG only in builds with assertions;
// in a release build (Debian's packages) LLVM_DEBUG expands to nothing and
// the options do not exist. So the passes include this header instead of
// llvm/Support/Debug.h: against an LLVM with assertions it is LLVM's own
// mechanism, unchanged; against a release LLVM, seqc defines `-debug` and
// `-debug-only` itself (Debug.cpp) and LLVM_DEBUG tests them, at the cost of
// one load of a flag per trace point when tracing is off.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_DIALECT_SEQ_SUPPORT_DEBUG_H
#define SEQC_DIALECT_SEQ_SUPPORT_DEBUG_H

#include "llvm/Support/Debug.h"

#if !SEQC_LLVM_HAS_DEBUG_OPTIONS

namespace mlir {
namespace seq {

/// True when `-debug` or `-debug-only` was given.
extern bool debugFlag;

/// True when `-debug` was given, or `-debug-only` names `type`.
bool isDebugTypeEnabled(const char *type);

} // namespace seq
} // namespace mlir

#undef LLVM_DEBUG
#define LLVM_DEBUG(X)                                                          \
  do {                                                                         \
    if (::mlir::seq::debugFlag &&                                              \
        ::mlir::seq::isDebugTypeEnabled(DEBUG_TYPE)) {                         \
      X;                                                                       \
    }                                                                          \
  } while (false)

#endif // !SEQC_LLVM_HAS_DEBUG_OPTIONS

#endif // SEQC_DIALECT_SEQ_SUPPORT_DEBUG_H
