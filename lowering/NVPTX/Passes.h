//===- Passes.h - passes of the NVPTX target --------------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Passes of the NVPTX target (NVPTXTargetInfo.cpp): the mapping of parallel
// loops to GPU kernels, the register tiles of contractions, the merged
// kernel module and the interpreter.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_NVPTX_PASSES_H
#define SEQC_LOWERING_NVPTX_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace seq {

#define GEN_PASS_DECL
#include "lowering/NVPTX/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lowering/NVPTX/Passes.h.inc"

} // namespace seq
} // namespace mlir

#endif // SEQC_LOWERING_NVPTX_PASSES_H
