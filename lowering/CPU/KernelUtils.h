//===- KernelUtils.h - shared by the CPU's vector kernel passes -*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// What seq-cpu-vectorize-contractions and seq-cpu-vectorize-rows both ask of
// the linalg ops they rewrite on buffers.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_CPU_KERNELUTILS_H
#define SEQC_LOWERING_CPU_KERNELUTILS_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::seq::cpu {

/// Whether `value` is a memref whose innermost dimension has stride 1.
inline bool hasUnitInnerStride(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || type.getRank() == 0)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// The indices of an operand indexed by the projected permutation `map`,
/// given the value of every loop.
inline SmallVector<Value> operandIndices(AffineMap map, ArrayRef<Value> loops) {
  SmallVector<Value> result;
  for (AffineExpr e : map.getResults())
    result.push_back(loops[cast<AffineDimExpr>(e).getPosition()]);
  return result;
}

} // namespace mlir::seq::cpu

#endif // SEQC_LOWERING_CPU_KERNELUTILS_H
