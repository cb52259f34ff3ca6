//===- Attributes.h - marks between lowering libraries ----------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Attributes that one library of the lowering sets and another reads. They
// live here, below both, rather than in the dialect: they describe buffers
// and functions after bufferization, which the seq dialect never sees.
// Header-only, so that a library reads a mark without linking the one that
// sets it.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_COMMON_ATTRIBUTES_H
#define SEQC_LOWERING_COMMON_ATTRIBUTES_H

#include "llvm/ADT/StringRef.h"

namespace mlir::seq {

/// Unit attribute of the functions seq-cpu-outline-kernels makes of repeated
/// loop nests: a kernel reads and writes its memref arguments only while it
/// runs (it returns no memref and keeps none), so seq-plan-memory may place
/// a buffer passed to it in the arena like one used in place.
constexpr llvm::StringLiteral kKernelAttrName = "seqc.kernel";

} // namespace mlir::seq

#endif // SEQC_LOWERING_COMMON_ATTRIBUTES_H
