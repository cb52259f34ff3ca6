//===- seqc.cpp - the seqc compiler driver --------------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Compiles a .seq model. The driver is a straight line of stages; `--emit`
// (a seq::EmitKind) says after which one to stop and what to print:
//
//   read input -> frontend (parse, MLIRGen, verify)
//   -> lowering/Compile.h: [--emit=seq], [--emit=manifest], [--emit=header],
//      linalg on tensors [--emit=linalg]
//   -> LLVM dialect [--emit=llvm-mlir], with its arena plan
//      [--emit=memory-plan] and, for --target=nvptx, the kernels' PTX
//      [--emit=ptx] -> LLVM IR [--emit=llvm-ir]
//   -> [--emit=asm] / object [--emit=obj, -c] -> link with the runtime
//      (the default: an executable, or a shared library for -o lib*.so)
//
// The flags become one seq::CompileOptions, checked once
// (seq::verifyCompileOptions) before the input is read.
//
//===----------------------------------------------------------------------===//

#include "frontend/ImportDSL.h"

#include "dialect/Seq/IR/ModelSignature.h"
#include "dialect/Seq/IR/SeqDialect.h"
#include "lowering/Compile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory seqcCategory("seqc options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<model.seq>"),
                                          cl::init("-"),
                                          cl::cat(seqcCategory));

static cl::opt<std::string> outputFilename(
    "o",
    cl::desc("Output file; without --emit, an executable (a shared library "
             "if the name ends in .so)"),
    cl::value_desc("file"), cl::cat(seqcCategory));

static cl::opt<seq::EmitKind> emit(
    "emit",
    cl::desc("What to produce (default: with -o or -c, a native binary; "
             "otherwise seq IR on stdout)"),
    cl::init(seq::EmitKind::Seq),
    cl::values(
        clEnumValN(seq::EmitKind::Seq, "seq", "seq dialect IR (verified)"),
        clEnumValN(seq::EmitKind::Manifest, "manifest",
                   "the model manifest (JSON, docs/abi.md)"),
        clEnumValN(seq::EmitKind::Linalg, "linalg",
                   "linalg on tensors, after fusion"),
        clEnumValN(seq::EmitKind::LLVMMLIR, "llvm-mlir",
                   "the LLVM dialect, with the ABI entry points"),
        clEnumValN(seq::EmitKind::PTX, "ptx",
                   "the PTX of the GPU kernels (--target=nvptx)"),
        clEnumValN(seq::EmitKind::LLVMIR, "llvm-ir", "optimized LLVM IR"),
        clEnumValN(seq::EmitKind::Assembly, "asm", "target assembly"),
        clEnumValN(seq::EmitKind::Object, "obj", "an object file (as -c)"),
        clEnumValN(seq::EmitKind::Header, "header",
                   "a C header documenting the model, for shared "
                   "libraries"),
        clEnumValN(seq::EmitKind::MemoryPlan, "memory-plan",
                   "where each intermediate buffer lives in the "
                   "model's arena, and the planned peak bytes")),
    cl::cat(seqcCategory));

static cl::opt<bool> compileOnly("c",
                                 cl::desc("Compile to an object file (default "
                                          "<input>.o), do not link"),
                                 cl::cat(seqcCategory));

static cl::opt<unsigned>
    optLevel("O", cl::desc("Optimization level, -O0 to -O3 (default -O2)"),
             cl::Prefix, cl::init(seq::SeqPipelineOptions().optLevel),
             cl::cat(seqcCategory));

static cl::opt<std::string>
    march("march",
          cl::desc("Target architecture, as llc names it (default: host)"),
          cl::value_desc("arch"), cl::cat(seqcCategory));

static cl::opt<std::string>
    mcpu("mcpu", cl::desc("Target CPU (default: the host CPU, 'native')"),
         cl::value_desc("cpu"), cl::cat(seqcCategory));

static cl::opt<std::string>
    mattr("mattr", cl::desc("Extra target features, e.g. +avx2,-fma"),
          cl::value_desc("features"), cl::cat(seqcCategory));

static cl::opt<std::string>
    target("target",
           cl::desc("Device the model's kernels run on: cpu (default) or "
                    "nvptx (NVIDIA GPUs)"),
           cl::value_desc("cpu|nvptx"), cl::init("cpu"),
           cl::cat(seqcCategory));

static cl::opt<std::string> gpuArch(
    "gpu-arch",
    cl::desc("With --target=nvptx: the GPU architecture (default sm_80; the "
             "embedded PTX also runs on later GPUs)"),
    cl::value_desc("sm_NN"), cl::init(seq::SeqPipelineOptions().gpuArch),
    cl::cat(seqcCategory));

static cl::opt<std::string> gpuBinary(
    "gpu-binary",
    cl::desc("With --target=nvptx: embed the kernels as fatbin (default: "
             "machine code for --gpu-arch and PTX), cubin or ptx (compiled by "
             "the driver at load time)"),
    cl::value_desc("fatbin|cubin|ptx"),
    cl::init(seq::SeqPipelineOptions().gpuBinary), cl::cat(seqcCategory));

static cl::opt<std::string> cudaPath(
    "cuda-path",
    cl::desc("With --target=nvptx: the CUDA toolkit (default: $CUDA_HOME, "
             "else /usr/local/cuda)"),
    cl::value_desc("dir"), cl::cat(seqcCategory));

static cl::opt<bool> gpuInterpret(
    "gpu-interpret",
    cl::desc("With --target=nvptx: run the GPU kernels on the host, the "
             "threads of a block together between barriers, to check them "
             "without a GPU"),
    cl::init(seq::SeqPipelineOptions().gpuInterpret), cl::cat(seqcCategory));

static cl::opt<bool> gpuInterpretReverse(
    "gpu-interpret-reverse",
    cl::desc("With --gpu-interpret: run the threads of each phase of a "
             "kernel (between barriers) from the last to the first, which "
             "exposes a missing barrier"),
    cl::init(seq::SeqPipelineOptions().gpuInterpretReverse),
    cl::cat(seqcCategory));

static cl::opt<bool> gpuTF32(
    "gpu-tf32",
    cl::desc("With --target=nvptx: run f32 contractions on tensor cores as "
             "tf32 products (their inputs' mantissas cut to 10 bits, as "
             "PyTorch's allow_tf32); bf16 and f16 ones use them anyway"),
    cl::init(seq::SeqPipelineOptions().gpuTF32), cl::cat(seqcCategory));

static cl::opt<bool> remarks(
    "remarks",
    cl::desc("Report, as remarks at their source locations, the ops that do "
             "not get the fused or vectorized code of their optimization "
             "level and why"),
    cl::init(seq::SeqPipelineOptions().remarks), cl::cat(seqcCategory));

static cl::opt<bool> int8Activations(
    "int8-activations",
    cl::desc("On CPUs with VNNI (vpdpbusd), at -O1 and above: quantize the "
             "activations of q8_0, q4_0, q4_1 and int8 Linears per block of "
             "32 to int8, "
             "as llama.cpp does, and multiply them as integers (faster; "
             "the results differ from f32 activations by that "
             "quantization). Without VNNI the f32 kernels stay, and "
             "--remarks says so. On by default; --int8-activations=false "
             "keeps f32 activations"),
    cl::init(seq::SeqPipelineOptions().int8Activations), cl::cat(seqcCategory));

static cl::opt<int64_t> streamingStoreBytes(
    "streaming-store-bytes",
    cl::desc("At -O2 and above on x86: write the outputs of contractions "
             "holding at least this many bytes with non-temporal stores "
             "(around the caches) where the kernel can; 0 never does. "
             "Default: 16 MiB"),
    cl::init(0), cl::cat(seqcCategory));

static cl::opt<cl::boolOrDefault> bf16Dot(
    "bf16-dot",
    cl::desc("On CPUs with AVX512_BF16: multiply bf16 x bf16 contractions "
             "and attention with vdpbf16ps (true) or widen bf16 to f32 in "
             "registers for FMAs (false). By default the CPU decides: "
             "vdpbf16ps except on Intel's server cores from Sapphire Rapids "
             "on, which issue it at half the FMAs' rate"),
    cl::cat(seqcCategory));

static cl::list<std::string> memoryPlanDims(
    "memory-plan-dims",
    cl::desc("Symbolic input sizes (name=value, comma separated) at which "
             "--emit=memory-plan and --remarks evaluate a plan of dynamic "
             "sizes"),
    cl::value_desc("n=512,..."), cl::CommaSeparated, cl::cat(seqcCategory));

static cl::opt<bool> openmp(
    "openmp",
    cl::desc("Run parallel loops on all cores with OpenMP at -O1 and above "
             "(default true)"),
    cl::init(seq::SeqPipelineOptions().enableOpenMP), cl::cat(seqcCategory));

static cl::opt<bool> threadTeam(
    "thread-team",
    cl::desc("At -O2 and above with --openmp, run the parallel loops of a "
             "model call in one thread team instead of forking and joining "
             "one per loop (default true)"),
    cl::init(seq::SeqPipelineOptions().threadTeam), cl::cat(seqcCategory));

static cl::opt<bool> outlineKernels(
    "outline-kernels",
    cl::desc("At -O1 and above, compile each loop nest that occurs several "
             "times (a kernel of repeated layers) once, as a function called "
             "where it occurred (default true)"),
    cl::init(seq::SeqPipelineOptions().outlineKernels),
    cl::cat(seqcCategory));

static cl::opt<bool> foldLayers(
    "fold-layers",
    cl::desc("Compile the repeated layers of the model (structurally "
             "identical module instances) once, as a function called for "
             "each layer with its weights (default true; the NVPTX target "
             "keeps them unrolled)"),
    cl::init(seq::SeqPipelineOptions().foldLayers), cl::cat(seqcCategory));

static cl::opt<int64_t> tensorParallel(
    "tensor-parallel",
    cl::desc("Split the model over N processes run by mpirun (attention by "
             "heads, MLPs column-then-row, an MPI all-reduce after each "
             "pair; each rank holds 1/N of those weights; "
             "docs/distributed.md). Default 1"),
    cl::value_desc("N"), cl::init(seq::SeqPipelineOptions().tensorParallel),
    cl::cat(seqcCategory));

static cl::opt<bool> dataParallel(
    "data-parallel",
    cl::desc("Run the model as several processes started by mpirun, each on "
             "a contiguous block of the batch (the leading dimension its "
             "inputs share), every rank holding all the weights; the "
             "executable gathers the outputs on rank 0. The model itself is "
             "unchanged (docs/runtime.md, \"Data parallelism\")"),
    cl::init(false), cl::cat(seqcCategory));

static cl::opt<std::string> runtimeDir(
    "runtime-dir",
    cl::desc("Directory of libseqc_runtime.a (default: $SEQC_RUNTIME_DIR, "
             "else <seqc's directory>/../lib)"),
    cl::value_desc("dir"), cl::cat(seqcCategory));

#ifndef SEQC_VERIFY_EACH_DEFAULT
#define SEQC_VERIFY_EACH_DEFAULT false
#endif

static cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Verify the IR after every pass of the pipeline, to find the "
             "pass that breaks it (default: at the end of each stage, which "
             "costs far less on deep models; on in builds configured with "
             "-DSEQC_VERIFY_EACH=ON, as the sanitizer build is)"),
    cl::init(SEQC_VERIFY_EACH_DEFAULT), cl::cat(seqcCategory));

static cl::opt<bool> verbose("v",
                             cl::desc("Print the link command before running"),
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

static cl::opt<std::string> entryName(
    "entry",
    cl::desc("Compile only this entry of a model with several (def decode): "
             "the result has it as its one function"),
    cl::value_desc("name"), cl::cat(seqcCategory));

static cl::opt<bool> splitInputFile(
    "split-input-file",
    cl::desc("Compile each '// -----'-separated chunk of the input alone"),
    cl::cat(seqcCategory));

// Limits of the frontend (see seq::FrontendOptions), hidden: they exist so
// that tests can reach them with small inputs.
static cl::opt<int64_t> maxOps("max-ops",
                               cl::desc("Most operations a model may build"),
                               cl::init(seq::FrontendOptions().maxOps),
                               cl::Hidden, cl::cat(seqcCategory));
static cl::opt<int64_t> maxParams("max-params",
                                  cl::desc("Most parameters a model may "
                                           "declare"),
                                  cl::init(seq::FrontendOptions().maxParams),
                                  cl::Hidden, cl::cat(seqcCategory));

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
static cl::opt<unsigned> jobs(
    "jobs",
    cl::desc("Entries of a model lowered at once, each on its own thread "
             "(default 0: as many as the host has cores; the output does not "
             "depend on it). --mlir-timing and --mlir-print-ir-* lower one "
             "at a time"),
    cl::value_desc("n"), cl::init(0), cl::cat(seqcCategory));

static LogicalResult compile(llvm::SourceMgr &sourceMgr, MLIRContext &context,
                             const seq::FrontendOptions &options,
                             const seq::CompileOptions &compileOptions,
                             raw_ostream &os) {
  FailureOr<seq::SeqEntryModules> entries =
      seq::importSeqEntries(sourceMgr, context, options);
  if (failed(entries))
    return failure();
  ModuleOp module = *entries->modules.front();
  if (listParams) {
    FailureOr<seq::ModelSignature> signature = seq::readModelSignature(module);
    if (failed(signature))
      return failure();
    return printParams(*signature, os);
  }
  SmallVector<ModuleOp> modules;
  for (OwningOpRef<ModuleOp> &entry : entries->modules)
    modules.push_back(*entry);
  return seq::compileEntries(modules, entries->names, compileOptions, os);
}

/// Turns the back-end flags into seq::CompileOptions and checks them
/// (seq::verifyCompileOptions) before the input is read; the output path is
/// resolved here (<input>.o for -c, else stdout).
static FailureOr<seq::CompileOptions> getCompileOptions(const char *argv0) {
  auto error = [](const Twine &message) {
    llvm::errs() << "seqc: error: " << message << "\n";
    return failure();
  };
  seq::CompileOptions options;
  std::string output = outputFilename;
  bool shared = StringRef(output).ends_with(".so");
  // -c means an object; naming an output file without --emit means a native
  // binary. Without either, seqc prints the seq dialect (its debugging view).
  options.emit = emit;
  if (compileOnly) {
    if (emit.getNumOccurrences() != 0 && emit != seq::EmitKind::Object)
      return error("-c cannot be combined with --emit; -c means --emit=obj");
    options.emit = seq::EmitKind::Object;
  } else if (emit.getNumOccurrences() == 0 &&
             outputFilename.getNumOccurrences() != 0) {
    options.emit =
        shared ? seq::EmitKind::SharedLibrary : seq::EmitKind::Executable;
  }
  if (shared && options.emit != seq::EmitKind::SharedLibrary)
    return error("an output ending in .so is a shared library, which "
                 "--emit and -c do not produce");
  if (output.empty()) {
    if (compileOnly && inputFilename != "-")
      output = (llvm::sys::path::stem(inputFilename) + ".o").str();
    else
      output = "-";
  }

  options.outputPath = output;
  options.sourceName =
      inputFilename == "-" ? std::string("<stdin>") : inputFilename.getValue();
  std::optional<seq::SeqTarget> device = seq::parseSeqTarget(target);
  if (!device)
    return error("'" + target + "' is not a target for --target (cpu or "
                 "nvptx)");
  if (*device != seq::SeqTarget::NVPTX &&
      (gpuArch.getNumOccurrences() || gpuBinary.getNumOccurrences() ||
       cudaPath.getNumOccurrences() || gpuInterpret || gpuTF32))
    return error("--gpu-arch, --gpu-binary, --cuda-path, --gpu-interpret and "
                 "--gpu-tf32 need --target=nvptx");
  if (*device != seq::SeqTarget::CPU && int8Activations.getNumOccurrences() &&
      int8Activations)
    return error("--int8-activations needs --target=cpu (it selects the "
                 "CPU's VNNI kernels)");
  if (gpuInterpretReverse && !gpuInterpret)
    return error("--gpu-interpret-reverse needs --gpu-interpret");
  options.pipeline.target = *device;
  options.pipeline.gpuArch = gpuArch;
  options.pipeline.gpuBinary = gpuBinary;
  options.pipeline.cudaPath = cudaPath;
  options.pipeline.gpuInterpret = gpuInterpret;
  options.pipeline.gpuInterpretReverse = gpuInterpretReverse;
  options.pipeline.gpuTF32 = gpuTF32;
  options.pipeline.optLevel = optLevel;
  options.pipeline.enableOpenMP = openmp;
  options.pipeline.threadTeam = threadTeam;
  options.pipeline.remarks = remarks;
  options.pipeline.int8Activations =
      *device == seq::SeqTarget::CPU && int8Activations;
  if (bf16Dot != cl::BOU_UNSET)
    options.pipeline.bf16DotRequest = bf16Dot == cl::BOU_TRUE;
  if (streamingStoreBytes.getNumOccurrences()) {
    if (streamingStoreBytes < 0)
      return error("--streaming-store-bytes expects a size in bytes, 0 or "
                   "more, got " +
                   std::to_string(streamingStoreBytes));
    options.pipeline.streamingStoreBytesRequest = streamingStoreBytes;
  }
  for (const std::string &binding : memoryPlanDims) {
    int64_t value;
    auto [name, text] = StringRef(binding).split('=');
    if (name.empty() || text.getAsInteger(10, value) || value < 0)
      return error("--memory-plan-dims expects name=size pairs (n=512), got '" +
                   binding + "'");
  }
  options.pipeline.memoryPlanDims.assign(memoryPlanDims.begin(),
                                         memoryPlanDims.end());
  options.pipeline.outlineKernels = outlineKernels;
  options.pipeline.foldLayers = foldLayers;
  options.pipeline.tensorParallel = tensorParallel;
  options.dataParallel = dataParallel;
  // seqc's models always link the runtime, whose allocator reuses buffers.
  options.pipeline.runtimeAllocator = true;
  options.codegen.arch = march;
  options.codegen.cpu = mcpu;
  options.codegen.features = mattr;
  options.link.runtimeDir = seq::selectRuntimeDir(
      runtimeDir, seq::getDefaultRuntimeDir(
                      argv0, reinterpret_cast<void *>(&getCompileOptions)));
  options.link.verbose = verbose;
  options.jobs = jobs;
  options.verifyEachPass = verifyEach;
  // The pass managers' reports of several entries would interleave.
  for (StringRef name :
       {"mlir-print-ir-after-all", "mlir-print-ir-before-all",
        "mlir-print-ir-after-failure", "mlir-print-ir-after-change",
        "mlir-print-ir-after", "mlir-print-ir-before", "mlir-timing"})
    if (cl::Option *option = cl::getRegisteredOptions().lookup(name))
      if (option->getNumOccurrences())
        options.jobs = 1;
  options.configurePassManager = [](PassManager &pm) -> LogicalResult {
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    applyDefaultTimingPassManagerCLOptions(pm);
    return success();
  };
  if (failed(seq::verifyCompileOptions(options)))
    return failure();
  return options;
}

namespace {
/// Drops a remark that repeats one reported before for the same entry: the
/// same message at the same source positions (the op's and its calls'),
/// with the same notes. A model's repeated layers compile alike, and each
/// layer would say the same thing at the same line of the source.
/// Registered after the printing handler, so it sees each diagnostic first.
class DuplicateRemarkFilter {
public:
  explicit DuplicateRemarkFilter(MLIRContext &context) : context(context) {
    id = context.getDiagEngine().registerHandler(
        [this](Diagnostic &diag) { return filter(diag); });
  }
  ~DuplicateRemarkFilter() { context.getDiagEngine().eraseHandler(id); }

private:
  /// What the printer shows of a location: its source positions, the op's
  /// and those of the calls it was inlined through (the names of the
  /// module path, which differ between layers, are not printed).
  static void printSourcePositions(Location loc, raw_ostream &os) {
    loc->walk([&](Location inner) {
      if (auto file = dyn_cast<FileLineColLoc>(inner))
        os << file.getFilename() << ':' << file.getLine() << ':'
           << file.getColumn() << '\n';
      return WalkResult::advance();
    });
  }

  /// Success drops the diagnostic; failure passes it on to the printer.
  LogicalResult filter(Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Remark)
      return failure();
    std::string message = diag.str();
    // Each entry is compiled for its own shapes, and its remarks follow the
    // remark naming it (lowering/Compile.cpp).
    if (StringRef(message).starts_with("entry '"))
      seen.clear();
    std::string key;
    llvm::raw_string_ostream os(key);
    printSourcePositions(diag.getLocation(), os);
    os << message;
    for (Diagnostic &note : diag.getNotes()) {
      printSourcePositions(note.getLocation(), os);
      os << note;
    }
    return success(!seen.insert(std::move(key)).second);
  }

  MLIRContext &context;
  DiagnosticEngine::HandlerID id;
  llvm::StringSet<> seen;
};
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  // The pass manager's debugging options are part of seqc's interface.
  for (StringRef name :
       {"mlir-print-ir-after-all", "mlir-print-ir-before-all",
        "mlir-print-ir-after-failure", "mlir-print-ir-after-change",
        "mlir-timing", "mlir-timing-display"})
    if (cl::Option *option = cl::getRegisteredOptions().lookup(name))
      option->addCategory(seqcCategory);
  cl::HideUnrelatedOptions(seqcCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "seqc: compiles sequence models written in .seq\n\n"
      "  seqc model.seq -o model              (native executable)\n"
      "  seqc model.seq -o libmodel.so        (shared library)\n"
      "  seqc model.seq --emit=header -o model.h\n"
      "  seqc model.seq --emit=seq -o model.mlir\n"
      "  seqc model.seq -D dim=256 -D depth=12\n"
      "  seqc model.seq --list-params [--json]\n");

  seq::FrontendOptions options;
  options.maxOps = maxOps;
  options.maxParams = maxParams;
  options.entry = entryName;
  for (StringRef define : defines) {
    auto [name, value] = define.split('=');
    if (name.empty() || !define.contains('=')) {
      llvm::errs() << "seqc: error: -D expects name=value, got '" << define
                   << "'\n";
      return 1;
    }
    options.hyperOverrides.emplace_back(name.trim().str(), value.str());
  }

  FailureOr<seq::CompileOptions> compileOptions = getCompileOptions(argv[0]);
  if (failed(compileOptions))
    return 1;

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << "seqc: error: " << errorMessage << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(compileOptions->outputPath, &errorMessage);
  if (!output) {
    llvm::errs() << "seqc: error: " << errorMessage << "\n";
    return 1;
  }

  DialectRegistry registry;
  registry.insert<seq::SeqDialect, arith::ArithDialect, func::FuncDialect,
                  tensor::TensorDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // A diagnostic names its source location (and the calls it was inlined
  // through); the op it was emitted on, printed in a note, would repeat
  // the compiler's IR at the user, and printing it walks the whole module
  // each time (a remark per contraction of a 30-layer model made the
  // compile 12 times slower).
  context.printOpOnDiagnostic(false);

  auto processBuffer = [&](std::unique_ptr<llvm::MemoryBuffer> buffer,
                           raw_ostream &os) -> LogicalResult {
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
    if (verifyDiagnostics) {
      SourceMgrDiagnosticVerifierHandler handler(sourceMgr, &context);
      (void)compile(sourceMgr, context, options, *compileOptions, os);
      return handler.verify();
    }
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    DuplicateRemarkFilter filter(context);
    return compile(sourceMgr, context, options, *compileOptions, os);
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
