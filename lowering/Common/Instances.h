//===- Instances.h - the module instance that built an op -------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The frontend puts a NameLoc naming the module instance ("layers.3") around
// the call site of each instance's forward, so an op's location names the
// chain of instances that built it. Passes that treat the layers of a model
// apart (seq-fold-layers, seq-split-empty-tensors) read it here.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_COMMON_INSTANCES_H
#define SEQC_LOWERING_COMMON_INSTANCES_H

#include "mlir/IR/Location.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir {
namespace seq {

/// The instances (outermost first) whose forwards built an op at `loc`: the
/// NameLocs on its call-site chain. A fused location (ops merged from
/// several places) names none.
inline SmallVector<NameLoc, 4> getInstanceChain(Location loc) {
  SmallVector<NameLoc, 4> names;
  // callsite(callee at caller): the caller is the outer call.
  while (true) {
    if (auto callSite = dyn_cast<CallSiteLoc>(loc)) {
      loc = callSite.getCaller();
      continue;
    }
    if (auto name = dyn_cast<NameLoc>(loc)) {
      names.push_back(name);
      loc = name.getChildLoc();
      continue;
    }
    break;
  }
  std::reverse(names.begin(), names.end());
  return names;
}

} // namespace seq
} // namespace mlir

#endif // SEQC_LOWERING_COMMON_INSTANCES_H
