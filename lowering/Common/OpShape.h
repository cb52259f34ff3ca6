//===- OpShape.h - comparing ops without their operands ---------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// What the passes that find repeated code (seq-cpu-outline-kernels, which
// shares one function between identical loop nests, and seq-fold-layers,
// which shares one between identical layers) compare op by op: an op's
// "shape" is its name, attributes, properties, operand and region counts and
// result types, without its operands or regions, which each pass matches by
// its own rules.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_COMMON_OPSHAPE_H
#define SEQC_LOWERING_COMMON_OPSHAPE_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/Hashing.h"

namespace mlir {
namespace seq {

/// A constant cloned into a shared function rather than passed to it: one
/// operation without operands or regions that yields one value.
inline bool isClonableConstant(Operation *op) {
  return op && op->hasTrait<OpTrait::ConstantLike>() &&
         op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         op->getNumResults() == 1;
}

/// Hash of the op's shape (not of its operands or regions).
inline llvm::hash_code hashOpShape(Operation *op) {
  llvm::hash_code hash = llvm::hash_combine(
      op->getName().getAsOpaquePointer(),
      op->getRawDictionaryAttrs().getAsOpaquePointer(), op->hashProperties(),
      op->getNumOperands(), op->getNumResults(), op->getNumRegions());
  for (Type type : op->getResultTypes())
    hash = llvm::hash_combine(hash, type.getAsOpaquePointer());
  return hash;
}

/// Whether two ops agree in name, attributes, properties, operand and
/// region counts and result types (not in operands or regions).
inline bool haveSameShape(Operation *a, Operation *b) {
  return a->getName() == b->getName() &&
         a->getRawDictionaryAttrs() == b->getRawDictionaryAttrs() &&
         a->getName().compareOpProperties(a->getPropertiesStorage(),
                                          b->getPropertiesStorage()) &&
         a->getNumOperands() == b->getNumOperands() &&
         a->getNumRegions() == b->getNumRegions() &&
         a->getResultTypes() == b->getResultTypes();
}

} // namespace seq
} // namespace mlir

#endif // SEQC_LOWERING_COMMON_OPSHAPE_H
