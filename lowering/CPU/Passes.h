//===- Passes.h - CPU-specific lowering passes ------------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Passes of the CPU target (CPUTargetInfo.cpp): which parallel loops become
// OpenMP regions, copies that must not call MLIR's runner utilities, and the
// final legality check before translation to LLVM IR.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_CPU_PASSES_H
#define SEQC_LOWERING_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace seq {

#define GEN_PASS_DECL
#include "lowering/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lowering/CPU/Passes.h.inc"

} // namespace seq
} // namespace mlir

#endif // SEQC_LOWERING_CPU_PASSES_H
