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

using namespace mlir;

void mlir::seq::addControlFlowAndDescriptorLowering(OpPassManager &pm) {
  // Structured control flow and index arithmetic first: linalg's loops use
  // affine.apply, and arith-expand rewrites the arith ops (ceildivsi,
  // maximumf on some types...) that have no direct LLVM lowering.
  pm.addPass(createLowerAffinePass());
  pm.addPass(arith::createArithExpandOpsPass());
  pm.addPass(createSCFToControlFlowPass());
  // Subviews, reshapes and casts become explicit descriptor arithmetic,
  // which introduces affine.apply again. The reshapes that 22's
  // expand-strided-metadata crashes on are expanded first.
  pm.addPass(createSeqLowerDynamicExpandShape());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
}
