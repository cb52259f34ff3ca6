//===- seqc.cpp - the seqc compiler driver --------------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Compiles a .seq model. The driver is a straight line of stages; `--emit`
// says after which one to stop and what to print:
//
//   read input -> frontend (parse, MLIRGen, verify) -> [--emit=seq]
//                                                   -> [--emit=manifest]
//
// Later stages (lowering to linalg, LLVM, object code) slot in as further
// `Emit` values and cases of `compile`, each consuming the module the
// previous stage left.
//
//===----------------------------------------------------------------------===//

#include "frontend/ImportDSL.h"
#include "frontend/ModelSignature.h"

#include "dialect/Seq/IR/SeqDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
/// What to produce: the stage after which compilation stops.
enum class Emit {
  /// The seq dialect, verified, as the frontend builds it.
  Seq,
  /// The model manifest (docs/abi.md) as JSON.
  Manifest,
};
} // namespace

static cl::OptionCategory seqcCategory("seqc options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<model.seq>"),
                                          cl::init("-"),
                                          cl::cat(seqcCategory));

static cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                           cl::value_desc("file"),
                                           cl::init("-"),
                                           cl::cat(seqcCategory));

static cl::opt<Emit> emit(
    "emit", cl::desc("What to produce"), cl::init(Emit::Seq),
    cl::values(clEnumValN(Emit::Seq, "seq", "seq dialect IR (verified)"),
               clEnumValN(Emit::Manifest, "manifest",
                          "the model manifest (JSON, docs/abi.md)")),
    cl::cat(seqcCategory));

static cl::list<std::string>
    defines("D", cl::desc("Override a hyperparameter of the model"),
            cl::value_desc("name=value"), cl::Prefix, cl::ZeroOrMore,
            cl::cat(seqcCategory));

static cl::opt<bool> listParams(
    "list-params",
    cl::desc("Print the model's parameters (name, shape, dtype) and stop"),
    cl::cat(seqcCategory));

static cl::opt<bool>
    listJSON("json", cl::desc("With --list-params: print a JSON array of "
                              "{name, shape, dtype}"),
             cl::cat(seqcCategory));

static cl::opt<bool> verifyDiagnostics(
    "verify-diagnostics",
    cl::desc("Check that the diagnostics match the expected-error comments "
             "of the input"),
    cl::cat(seqcCategory));

static cl::opt<bool> splitInputFile(
    "split-input-file",
    cl::desc("Compile each '// -----'-separated chunk of the input alone"),
    cl::cat(seqcCategory));

/// `--list-params`: one line per parameter, or a JSON array.
static LogicalResult printParams(const seq::ModelSignature &signature,
                                 raw_ostream &os) {
  if (listJSON) {
    os << llvm::formatv("{0:2}", seq::toParamsJSON(signature)) << "\n";
    return success();
  }
  size_t width = 0;
  for (const seq::TensorSpec &param : signature.params)
    width = std::max(width, param.name.size());
  for (const seq::TensorSpec &param : signature.params) {
    std::string shape = "[";
    for (auto [i, dim] : llvm::enumerate(param.shape))
      shape += (i ? ", " : "") + std::to_string(std::get<int64_t>(dim));
    shape += "]";
    os << llvm::left_justify(param.name, width) << "  "
       << llvm::left_justify(shape, 16) << "  " << param.dtype << "\n";
  }
  return success();
}

/// Runs the stages up to the one `--emit` asks for, printing its result.
static LogicalResult compile(llvm::SourceMgr &sourceMgr, MLIRContext &context,
                             const seq::FrontendOptions &options,
                             raw_ostream &os) {
  OwningOpRef<ModuleOp> module =
      seq::importSeqSource(sourceMgr, context, options);
  if (!module)
    return failure();

  if (listParams || emit == Emit::Manifest) {
    FailureOr<seq::ModelSignature> signature =
        seq::readModelSignature(*module);
    if (failed(signature))
      return failure();
    if (listParams)
      return printParams(*signature, os);
    os << llvm::formatv("{0:2}", seq::toManifestJSON(*signature)) << "\n";
    return success();
  }

  switch (emit) {
  case Emit::Seq:
    module->print(os);
    os << "\n";
    return success();
  case Emit::Manifest:
    break;
  }
  llvm_unreachable("handled above");
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  cl::HideUnrelatedOptions(seqcCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "seqc: compiles sequence models written in .seq\n\n"
      "  seqc model.seq --emit=seq -o model.mlir\n"
      "  seqc model.seq -D dim=256 -D depth=12\n"
      "  seqc model.seq --list-params [--json]\n");

  seq::FrontendOptions options;
  for (StringRef define : defines) {
    auto [name, value] = define.split('=');
    if (name.empty() || !define.contains('=')) {
      llvm::errs() << "seqc: error: -D expects name=value, got '" << define
                   << "'\n";
      return 1;
    }
    options.hyperOverrides.emplace_back(name.trim().str(), value.str());
  }

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << "seqc: error: " << errorMessage << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << "seqc: error: " << errorMessage << "\n";
    return 1;
  }

  DialectRegistry registry;
  registry.insert<seq::SeqDialect, arith::ArithDialect, func::FuncDialect,
                  tensor::TensorDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  auto processBuffer = [&](std::unique_ptr<llvm::MemoryBuffer> buffer,
                           raw_ostream &os) -> LogicalResult {
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
    if (verifyDiagnostics) {
      SourceMgrDiagnosticVerifierHandler handler(sourceMgr, &context);
      (void)compile(sourceMgr, context, options, os);
      return handler.verify();
    }
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    return compile(sourceMgr, context, options, os);
  };

  LogicalResult result =
      splitInputFile
          ? splitAndProcessBuffer(std::move(input), processBuffer,
                                  output->os(), kDefaultSplitMarker,
                                  kDefaultSplitMarker)
          : processBuffer(std::move(input), output->os());
  if (failed(result))
    return 1;
  output->keep();
  return 0;
}
