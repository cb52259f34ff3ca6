//===- Pipelines.cpp - seq compilation pipelines --------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "lowering/Pipelines.h"
#include "lowering/Passes.h"
#include "passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

/// seq -> primitive seq -> linalg on tensors.
static void buildSeqToLinalgPipeline(OpPassManager &pm) {
  pm.addPass(seq::createSeqDecompose());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(seq::createConvertSeqToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::seq::registerLoweringPipelines() {
  PassPipelineRegistration<>(
      "seq-lower-to-linalg",
      "Decompose seq ops and lower them to linalg on tensors",
      buildSeqToLinalgPipeline);
}
