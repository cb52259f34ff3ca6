//===- Passes.h - buffer passes shared by the targets -----------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Passes on buffers that every target's lowering to the LLVM dialect needs:
// workarounds for upstream conversions that the CPU and NVPTX pipelines both
// run, the steps that keep bufferization linear in the model's depth, and
// seqc's verification at the end of each stage (seq-verify).
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_COMMON_PASSES_H
#define SEQC_LOWERING_COMMON_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class OpPassManager;

namespace seq {

#define GEN_PASS_DECL
#include "lowering/Common/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lowering/Common/Passes.h.inc"

/// The start of every conversion to the LLVM dialect (host code and GPU
/// kernels alike): affine and structured control flow to cf, arith's
/// composite ops expanded, then views and reshapes to explicit descriptor
/// arithmetic (seq-lower-dynamic-expand-shape first, expand-strided-metadata,
/// and lower-affine again for the index arithmetic it introduces).
void addControlFlowAndDescriptorLowering(OpPassManager &pm);

/// memref ops to the LLVM dialect; with `runtimeAllocator`, allocations call
/// the runtime's _mlir_memref_to_llvm_alloc/free (docs/abi.md).
void addMemRefToLLVMConversion(OpPassManager &pm, bool runtimeAllocator);

/// math (LLVM intrinsics first, libm calls for the rest), arith, index and
/// cf ops to the LLVM dialect.
void addScalarToLLVMConversion(OpPassManager &pm);

/// The end of every conversion to the LLVM dialect: functions, ub.poison,
/// the cleanups, the unrealized casts, then seq-check-lowered.
void addFinalLLVMConversion(OpPassManager &pm);

} // namespace seq
} // namespace mlir

#endif // SEQC_LOWERING_COMMON_PASSES_H
