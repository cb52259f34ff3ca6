//===- Passes.h - seq to linalg conversion pass -----------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_SEQTOLINALG_PASSES_H
#define SEQC_LOWERING_SEQTOLINALG_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace seq {

#define GEN_PASS_DECL
#include "lowering/SeqToLinalg/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lowering/SeqToLinalg/Passes.h.inc"

} // namespace seq
} // namespace mlir

#endif // SEQC_LOWERING_SEQTOLINALG_PASSES_H
