//===- Pipelines.cpp - pass sequences every target runs -------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "lowering/Common/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::seq::addControlFlowAndDescriptorLowering(OpPassManager &pm) {
  // Structured control flow and index arithmetic first: linalg's loops use
  // affine.apply, and arith-expand rewrites the arith ops (ceildivsi,
  // maximumf on some types...) that have no direct LLVM lowering; the
  // minima and maxima whose flags waive NaNs first become a compare and a
  // select (one vmaxps on x86) rather than arith-expand's four ops.
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSeqExpandFastMinMax());
  pm.addPass(arith::createArithExpandOpsPass());
  pm.addPass(createSCFToControlFlowPass());
  // Subviews, reshapes and casts become explicit descriptor arithmetic,
  // which introduces affine.apply again. The reshapes that 22's
  // expand-strided-metadata crashes on are expanded first.
  pm.addPass(createSeqLowerDynamicExpandShape());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
}

void mlir::seq::addMemRefToLLVMConversion(OpPassManager &pm,
                                          bool runtimeAllocator) {
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = runtimeAllocator;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
}

void mlir::seq::addScalarToLLVMConversion(OpPassManager &pm) {
  // Math ops with an LLVM intrinsic first (LLVM can vectorize those), libm
  // calls for the rest (erf, ...): the executables link libm. log1p goes to
  // libm's log1pf too: MathToLLVM's default, log(1 + x), loses every digit
  // of x below half an ulp of 1 (softplus(-20) was 0, not 2e-9).
  ConvertMathToLLVMPassOptions mathToLLVM;
  mathToLLVM.approximateLog1p = false;
  pm.addPass(createConvertMathToLLVMPass(mathToLLVM));
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
}

void mlir::seq::addFinalLLVMConversion(OpPassManager &pm) {
  pm.addPass(createConvertFuncToLLVMPass());
  // 22's lowerings emit ub.poison for undefined lanes and padding.
  pm.addPass(createUBToLLVMConversionPass());
  // Canonicalize after CSE: CSE exposes self-copies and duplicate
  // descriptor casts that only the canonicalizer removes.
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createSeqCheckLowered());
}
