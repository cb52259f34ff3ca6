//===- FrontendFuzzer.cpp - libFuzzer target over the .seq frontend -------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes through everything `seqc --emit=seq` does before
// lowering: lexing, parsing, MLIRGen, the seq verifiers, printing of
// diagnostics (with source lines and carets) and of the module, and reading
// the manifest back from the IR. Any crash, sanitizer report, leak, timeout
// or out-of-memory is a bug, and so is IR that the frontend built without an
// error but the verifier rejects; errors in the input are not.
//
// The frontend is compiled into this target with sanitizer and coverage
// instrumentation (test/Fuzz/CMakeLists.txt); MLIR and the seq dialect are
// the uninstrumented libraries the driver uses.
//
//===----------------------------------------------------------------------===//

#include "frontend/ImportDSL.h"

#include "dialect/Seq/IR/ModelSignature.h"
#include "dialect/Seq/IR/SeqDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A fresh context per input, so that no input depends on another's state;
  // without threads, so that each one is cheap.
  DialectRegistry registry;
  registry.insert<seq::SeqDialect, arith::ArithDialect, func::FuncDialect,
                  tensor::TensorDialect>();
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.seq"),
      llvm::SMLoc());
  // Diagnostics are rendered (line, caret, call stack) and discarded.
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, llvm::nulls());

  // Smaller budgets than the driver's keep each input fast; the limits
  // themselves are what is under test.
  seq::FrontendOptions options;
  options.maxOps = 20000;
  options.maxSteps = 200000;
  options.maxParams = 2000;
  // The frontend checks every op's shape rules before building it, so the
  // verifier must accept whatever it builds: a module it rejects is a
  // frontend bug (a missed check, or a result type that disagrees).
  options.verify = false;
  OwningOpRef<ModuleOp> module =
      seq::importSeqSource(sourceMgr, context, options);
  if (!module)
    return 0;
  if (failed(verify(*module))) {
    llvm::errs() << "the verifier rejected IR that the frontend built\n";
    __builtin_trap();
  }

  module->print(llvm::nulls());
  FailureOr<seq::ModelSignature> signature = seq::readModelSignature(*module);
  if (failed(signature)) {
    // MLIRGen always follows the conventions it documents.
    llvm::errs() << "readModelSignature failed on a module the frontend "
                    "built\n";
    __builtin_trap();
  }
  llvm::nulls() << seq::toManifestJSON(*signature)
                << seq::toParamsJSON(*signature);
  return 0;
}
