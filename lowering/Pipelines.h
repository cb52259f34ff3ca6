//===- Pipelines.h - seq compilation pipelines ------------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_PIPELINES_H
#define SEQC_LOWERING_PIPELINES_H

#include "mlir/Pass/PassManager.h"

namespace mlir {
namespace seq {

/// Registers the lowering pipelines with the global pass registry, so that
/// `seq-opt --seq-lower-to-llvm` (and friends) run them.
void registerLoweringPipelines();

} // namespace seq
} // namespace mlir

#endif // SEQC_LOWERING_PIPELINES_H
