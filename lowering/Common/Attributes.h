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

/// Unit attribute of the f32 `math.exp` ops whose results may flush below
/// 2^-126 to 0: seq-cpu-approximate-math expands them into a shorter form
/// than MLIR's generic polynomial (attention's exp per score, the selective
/// scan's gates); other targets ignore it.
constexpr llvm::StringLiteral kFastExpAttrName = "seq.fast_exp";

} // namespace mlir::seq

#endif // SEQC_LOWERING_COMMON_ATTRIBUTES_H
