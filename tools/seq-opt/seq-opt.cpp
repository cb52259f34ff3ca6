//===- seq-opt.cpp - seq dialect optimizer driver -------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The `mlir-opt` of seqc: every upstream dialect and pass, plus the `seq`
// dialect, seqc's passes and its lowering pipelines. Compiler engineers use it
// with lit and FileCheck to write and test passes on the dialect.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/IR/SeqDialect.h"
#include "lowering/SeqToLinalg/Passes.h"
#include "lowering/Pipelines.h"
#include "passes/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::seq::registerSeqPasses();
  mlir::seq::registerSeqToLinalgPasses();
  mlir::seq::registerLoweringPipelines();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary (the NVPTX pipeline) translates kernels to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<mlir::seq::SeqDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "seq optimizer driver\n", registry));
}
