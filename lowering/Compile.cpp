//===- Compile.cpp - from seq IR to objects and binaries ------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "lowering/Compile.h"
#include "lowering/Entry/Entry.h"
#include "lowering/NVPTX/NVPTXTargetInfo.h"

#include "dialect/Seq/IR/SeqDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Linker/Linker.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/thread.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

#include <atomic>

using namespace mlir;
using namespace mlir::seq;

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// Prints "<tool>: error: <message>" on stderr and returns failure.
static LogicalResult reportError(const CompileOptions &options,
                                 const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), options.toolName) << message << '\n';
  return failure();
}

static LogicalResult reportError(const CompileOptions &options,
                                 llvm::Error error) {
  return reportError(options, llvm::toString(std::move(error)));
}

//===----------------------------------------------------------------------===//
// Lowering
//===----------------------------------------------------------------------===//

/// Makes every dialect, interface implementation and LLVM IR translation the
/// pipelines use available in `context`. Passes load their dependent
/// dialects, but the external models (bufferization of arith/linalg/tensor/
/// scf, allocation interfaces of memref, ...) must be registered before the
/// pipeline runs, and the translation to LLVM IR needs its dialect
/// interfaces.
static void prepareContext(MLIRContext &context) {
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<SeqDialect>();
  // LLVM, OpenMP, and for the NVPTX target the GPU and NVVM dialects
  // (gpu-module-to-binary translates kernels to LLVM IR, the host's
  // gpu.binary ops embed them).
  registerAllToLLVMIRTranslations(registry);
  context.appendDialectRegistry(registry);
}

/// The pipeline options of `options` with its verification set up on `pm`:
/// after every pass with `verifyEachPass`, else at the end of each stage.
/// The IR must verify: Debian's MLIR is built without assertions, so a
/// broken invariant would otherwise surface as a crash in a later stage.
/// After every pass, the verifier would walk the whole unrolled model once
/// per pass before layer folding: 39% of the MLIR stages of a 96-layer
/// model (docs/performance.md).
static SeqPipelineOptions setUpVerification(PassManager &pm,
                                            const CompileOptions &options) {
  pm.enableVerifier(options.verifyEachPass);
  SeqPipelineOptions pipeline = options.pipeline;
  pipeline.verifyStages = !options.verifyEachPass;
  return pipeline;
}

/// Runs the pipelines lowerModule names on `module`, whose context is
/// prepared.
static LogicalResult runLoweringPipelines(ModuleOp module, EmitKind emit,
                                          const CompileOptions &options) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  SeqPipelineOptions pipeline = setUpVerification(pm, options);
  if (options.configurePassManager && failed(options.configurePassManager(pm)))
    return failure();
  if (emit == EmitKind::Manifest)
    buildSeqManifestPipeline(pm, pipeline);
  else if (emit == EmitKind::Linalg) {
    buildSeqPartitionPipeline(pm, pipeline);
    buildSeqToTensorPipeline(pm, pipeline);
  }
  else
    buildSeqToLLVMPipeline(pm, pipeline);
  return pm.run(module);
}

/// Whether lowerModule has anything to do for `emit`.
static bool lowers(EmitKind emit, const CompileOptions &options) {
  return !(emit == EmitKind::Seq || emit == EmitKind::Header ||
           (emit == EmitKind::Manifest && options.pipeline.optLevel < 2));
}

LogicalResult mlir::seq::lowerModule(ModuleOp module, EmitKind emit,
                                     const CompileOptions &options) {
  if (!lowers(emit, options))
    return success();
  prepareContext(*module.getContext());
  return runLoweringPipelines(module, emit, options);
}

namespace {
/// The index of the entry lowerEntries is lowering on this thread, -1 on
/// threads that lower none.
thread_local int loweringEntry = -1;
} // namespace

/// lowerModule on every module, up to `options.jobs` of them at a time (0:
/// as many as the host has cores), each followed by `then` (its index) on
/// the same thread when given. With `announce`, each entry's
/// diagnostics follow a remark naming it. The entries share the context
/// but nothing else, so each is lowered exactly as it would be alone; the
/// diagnostics of the entries lowered together are held back and given to
/// the context's handlers afterwards, entry by entry in order, up to the
/// first entry that failed: what the user reads (and seqc's
/// --verify-diagnostics checks) is what lowering them one after the other
/// reports.
static LogicalResult
lowerEntries(ArrayRef<ModuleOp> modules, ArrayRef<std::string> names,
             EmitKind emit, const CompileOptions &options, bool announce,
             llvm::function_ref<LogicalResult(size_t)> then = nullptr) {
  auto announceEntry = [&](size_t i) {
    if (announce)
      emitRemark(ModuleOp(modules[i]).getLoc())
          << "entry '" << names[i] << "': the remarks up to the next entry "
          << "are this entry's";
  };
  MLIRContext &context = *ModuleOp(modules.front()).getContext();
  unsigned jobs = options.jobs
                      ? options.jobs
                      : llvm::hardware_concurrency().compute_thread_count();
  jobs = std::min<size_t>(jobs, modules.size());
  // Without the context's locks (--mlir-disable-threading), one at a time.
  if (jobs <= 1 || !lowers(emit, options) ||
      !context.isMultithreadingEnabled()) {
    for (size_t i = 0; i < modules.size(); ++i) {
      announceEntry(i);
      if (failed(lowerModule(modules[i], emit, options)) ||
          (then && failed(then(i))))
        return failure();
    }
    return success();
  }

  // Every dialect loaded before the threads start: a pass manager loads
  // the dialects its passes depend on, and loading one is not thread-safe.
  prepareContext(context);
  context.loadAllAvailableDialects();
  std::vector<std::vector<Diagnostic>> held(modules.size());
  std::vector<char> lowered(modules.size(), 0);
  DiagnosticEngine &engine = context.getDiagEngine();
  // Registered last, so consulted first (the engine calls one handler at a
  // time). Pass managers order the diagnostics of their own worker threads
  // and re-emit them on the thread that runs the pipeline.
  DiagnosticEngine::HandlerID holder =
      engine.registerHandler([&](Diagnostic &diag) -> LogicalResult {
        if (loweringEntry < 0)
          return failure();
        held[loweringEntry].push_back(std::move(diag));
        return success();
      });
  std::atomic<size_t> next{0};
  auto lowerSome = [&] {
    for (size_t i = next++; i < modules.size(); i = next++) {
      loweringEntry = static_cast<int>(i);
      lowered[i] = succeeded(runLoweringPipelines(modules[i], emit, options)) &&
                   (!then || succeeded(then(i)));
      loweringEntry = -1;
    }
  };
  std::vector<llvm::thread> threads;
  for (unsigned t = 1; t < jobs; ++t)
    threads.emplace_back(lowerSome);
  lowerSome();
  for (llvm::thread &thread : threads)
    thread.join();
  engine.eraseHandler(holder);

  for (size_t i = 0; i < modules.size(); ++i) {
    announceEntry(i);
    for (Diagnostic &diag : held[i])
      engine.emit(std::move(diag));
    if (!lowered[i])
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// LLVM code generation
//===----------------------------------------------------------------------===//

/// Initializes every backend LLVM was built with (once): `--march` may name
/// any of them for `--emit=asm` or `-c`.
static void initializeLLVMTargets() {
  static bool initialized = [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
    return true;
  }();
  (void)initialized;
}

static llvm::CodeGenOptLevel getCodeGenOptLevel(unsigned optLevel) {
  switch (optLevel) {
  case 0:
    return llvm::CodeGenOptLevel::None;
  case 1:
    return llvm::CodeGenOptLevel::Less;
  case 2:
    return llvm::CodeGenOptLevel::Default;
  default:
    return llvm::CodeGenOptLevel::Aggressive;
  }
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
mlir::seq::createTargetMachine(const CodegenOptions &options,
                               unsigned optLevel) {
  initializeLLVMTargets();
  llvm::Triple hostTriple(llvm::sys::getProcessTriple());
  llvm::Triple triple = hostTriple;
  if (!options.arch.empty()) {
    llvm::Triple::ArchType arch =
        llvm::Triple::getArchTypeForLLVMName(options.arch);
    if (arch == llvm::Triple::UnknownArch)
      return llvm::createStringError(
          "unknown architecture '" + options.arch +
          "' for --march (expected an LLVM architecture name such as x86-64 "
          "or aarch64)");
    triple.setArch(arch);
  }

  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError("no code generator for '" + triple.str() +
                                   "': " + error);

  // The host CPU is detected (with its features) only when compiling for the
  // host architecture: a model built with defaults runs best where it was
  // built, as with -march=native.
  bool sameArch = triple.getArch() == hostTriple.getArch();
  std::string cpu = options.cpu;
  llvm::SubtargetFeatures features;
  if (cpu.empty() || cpu == "native") {
    if (sameArch) {
      cpu = llvm::sys::getHostCPUName().str();
      for (const auto &feature : llvm::sys::getHostCPUFeatures())
        features.AddFeature(feature.first(), feature.second);
    } else {
      cpu = "generic";
    }
  }
  if (!options.features.empty())
    for (llvm::StringRef feature : llvm::split(options.features, ','))
      if (!feature.empty())
        features.AddFeature(feature);

  std::unique_ptr<const llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(triple, cpu, ""));
  if (!subtarget || !subtarget->isCPUStringValid(cpu))
    return llvm::createStringError("unknown CPU '" + cpu + "' for " +
                                   triple.getArchName() +
                                   " (--mcpu; try --mcpu=help with llc)");

  llvm::TargetOptions targetOptions;
  // Global constructors (a GPU model's module loads, priority 123) go in
  // .init_array, which the dynamic loader runs; LLVM's default, .ctors, is
  // not run by today's crtbegin.
  targetOptions.UseInitArray = true;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, features.getString(), targetOptions, llvm::Reloc::PIC_,
      std::nullopt, getCodeGenOptLevel(optLevel)));
  if (!machine)
    return llvm::createStringError("cannot create a target machine for '" +
                                   triple.str() + "'");
  return machine;
}

FailureOr<std::unique_ptr<llvm::Module>>
mlir::seq::translateAndOptimize(ModuleOp module, llvm::LLVMContext &llvmContext,
                                llvm::TargetMachine &machine,
                                unsigned optLevel) {
  FailureOr<std::unique_ptr<llvm::Module>> llvmModule =
      translateForMachine(module, llvmContext, machine);
  if (failed(llvmModule) ||
      failed(optimizeModule(**llvmModule, machine, optLevel, module.getLoc())))
    return failure();
  return llvmModule;
}

/// translateForMachine in a prepared context (which entries lowered on
/// several threads share).
static FailureOr<std::unique_ptr<llvm::Module>>
translatePrepared(ModuleOp module, llvm::LLVMContext &llvmContext,
                  llvm::TargetMachine &machine);

FailureOr<std::unique_ptr<llvm::Module>>
mlir::seq::translateForMachine(ModuleOp module, llvm::LLVMContext &llvmContext,
                               llvm::TargetMachine &machine) {
  prepareContext(*module.getContext());
  return translatePrepared(module, llvmContext, machine);
}

static FailureOr<std::unique_ptr<llvm::Module>>
translatePrepared(ModuleOp module, llvm::LLVMContext &llvmContext,
                  llvm::TargetMachine &machine) {
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "seqc_model");
  if (!llvmModule)
    return module.emitError("failed to translate the LLVM dialect to LLVM IR");
  llvmModule->setTargetTriple(machine.getTargetTriple());
  llvmModule->setDataLayout(machine.createDataLayout());

  // Functions from MLIR carry no target attributes; give them the machine's
  // CPU and features so that the middle end's cost models (vectorization
  // width, unrolling) see the same subtarget as the code generator.
  std::string cpu = machine.getTargetCPU().str();
  std::string features = machine.getTargetFeatureString().str();
  for (llvm::Function &function : *llvmModule) {
    if (function.isDeclaration())
      continue;
    if (!function.hasFnAttribute("target-cpu"))
      function.addFnAttr("target-cpu", cpu);
    if (!features.empty() && !function.hasFnAttribute("target-features"))
      function.addFnAttr("target-features", features);
  }
  return llvmModule;
}

LogicalResult mlir::seq::optimizeModule(llvm::Module &module,
                                        llvm::TargetMachine &machine,
                                        unsigned optLevel, Location loc) {
  llvm::Module *llvmModule = &module;
  llvm::LoopAnalysisManager loopAM;
  llvm::FunctionAnalysisManager functionAM;
  llvm::CGSCCAnalysisManager cgsccAM;
  llvm::ModuleAnalysisManager moduleAM;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = optLevel >= 2;
  tuning.SLPVectorization = optLevel >= 2;
  tuning.LoopUnrolling = optLevel >= 2;
  // CalledValuePropagation only annotates indirect calls with their
  // possible callees, but its solver revisits a call whenever one of its
  // arguments changes, walking all of them: quadratic in the arguments of
  // a call. The model function takes a descriptor per parameter (thousands
  // of arguments at depth 48), which made the pass most of LLVM's time and
  // grow with the square of the depth. Without an indirect call it has
  // nothing to annotate, so it is skipped and the output is the same.
  llvm::PassInstrumentationCallbacks instrumentation;
  bool hasIndirectCall = llvm::any_of(*llvmModule, [](llvm::Function &f) {
    return llvm::any_of(llvm::instructions(f), [](llvm::Instruction &inst) {
      auto *call = llvm::dyn_cast<llvm::CallBase>(&inst);
      return call && call->isIndirectCall();
    });
  });
  if (!hasIndirectCall)
    instrumentation.registerShouldRunOptionalPassCallback(
        [](llvm::StringRef pass, llvm::Any) {
          return pass != "CalledValuePropagationPass";
        });
  llvm::PassBuilder builder(&machine, tuning, std::nullopt, &instrumentation);
  builder.registerModuleAnalyses(moduleAM);
  builder.registerCGSCCAnalyses(cgsccAM);
  builder.registerFunctionAnalyses(functionAM);
  builder.registerLoopAnalyses(loopAM);
  builder.crossRegisterProxies(loopAM, functionAM, cgsccAM, moduleAM);

  llvm::OptimizationLevel level = llvm::OptimizationLevel::O0;
  switch (optLevel) {
  case 0:
    break;
  case 1:
    level = llvm::OptimizationLevel::O1;
    break;
  case 2:
    level = llvm::OptimizationLevel::O2;
    break;
  default:
    level = llvm::OptimizationLevel::O3;
    break;
  }
  llvm::ModulePassManager passes =
      optLevel == 0 ? builder.buildO0DefaultPipeline(level)
                    : builder.buildPerModuleDefaultPipeline(level);
  passes.run(*llvmModule, moduleAM);

  std::string verifierMessage;
  llvm::raw_string_ostream verifierStream(verifierMessage);
  if (llvm::verifyModule(*llvmModule, &verifierStream))
    return emitError(loc, "LLVM IR is invalid after optimization: ")
           << verifierMessage;
  return success();
}

llvm::Error mlir::seq::emitMachineCode(llvm::Module &module,
                                       llvm::TargetMachine &machine,
                                       bool assembly,
                                       llvm::raw_pwrite_stream &os) {
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, os, nullptr,
                                  assembly ? llvm::CodeGenFileType::AssemblyFile
                                           : llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError(
        "the code generator for '" + machine.getTargetTriple().str() +
        "' cannot emit " + (assembly ? "assembly" : "objects"));
  codegen.run(module);
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Linking
//===----------------------------------------------------------------------===//

std::string mlir::seq::getDefaultRuntimeDir(const char *argv0, void *mainAddr) {
  std::string executable = llvm::sys::fs::getMainExecutable(argv0, mainAddr);
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(executable));
  llvm::sys::path::append(dir, "..", "lib");
  llvm::sys::path::remove_dots(dir, /*remove_dot_dot=*/true);
  return std::string(dir);
}

std::string mlir::seq::selectRuntimeDir(llvm::StringRef flag,
                                        llvm::StringRef fallback) {
  if (!flag.empty())
    return flag.str();
  if (std::optional<std::string> env =
          llvm::sys::Process::GetEnv("SEQC_RUNTIME_DIR");
      env && !env->empty())
    return *env;
  return fallback.str();
}

/// Finds the C++ compiler driver used as the linker front end.
static llvm::Expected<std::string> findLinkerDriver() {
  if (std::optional<std::string> env = llvm::sys::Process::GetEnv("SEQC_CXX");
      env && !env->empty()) {
    // findProgramByName returns names with a slash unchecked.
    llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(*env);
    if (path && llvm::sys::fs::can_execute(*path))
      return *path;
    return llvm::createStringError("SEQC_CXX names '" + *env +
                                   "', which is not an executable program");
  }
#ifdef SEQC_LLVM_TOOLS_DIR
  if (llvm::ErrorOr<std::string> path =
          llvm::sys::findProgramByName("clang++", {SEQC_LLVM_TOOLS_DIR}))
    return *path;
#endif
  for (llvm::StringRef name : {"clang++-22", "clang++"})
    if (llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(name))
      return *path;
  return llvm::createStringError(
      "cannot find clang++ to link with (install clang-22 and lld-22, or set "
      "SEQC_CXX)");
}

/// How a model runs on MPI ranks (what its manifest says as
/// "tensor_parallel" and "data_parallel").
struct Parallelism {
  /// "tensor_parallel": the ranks a model compiled with --tensor-parallel=N
  /// runs on; 1 when absent.
  int64_t tensorParallel = 1;
  /// "data_parallel": true (--data-parallel).
  bool dataParallel = false;
  /// Whether the model links MPI.
  bool usesMPI() const { return tensorParallel > 1 || dataParallel; }
  /// The flag that asked for MPI, for messages.
  std::string flag() const {
    return dataParallel ? std::string("--data-parallel")
                        : "--tensor-parallel=" + std::to_string(tensorParallel);
  }
};

/// The MPI C libraries a tensor-parallel model links, as CMake found them
/// when seqc was built (runtime/CMakeLists.txt; "|"-separated), so that
/// linking needs no mpicc. Empty when MPI was not found.
#ifndef SEQC_MPI_LIBRARIES
#define SEQC_MPI_LIBRARIES ""
#endif

/// linkModel, for a model that runs on MPI ranks as `parallelism` says:
/// tensor-parallel (on more than one rank) or data-parallel, it also links
/// libseqc_runtime_mpi.a (which the runtime references weakly: -u pulls it
/// out of the archive) and the MPI C library, which it and the model's own
/// collectives call.
static llvm::Error linkModelFor(ArrayRef<std::string> objectPaths,
                                llvm::StringRef outputPath, bool sharedLibrary,
                                const LinkOptions &options,
                                const Parallelism &parallelism) {
  bool mpi = parallelism.usesMPI();
  // Check the libraries first: a missing runtime is the common mistake, and
  // the linker's own message would not say where seqc looked or why.
  auto library = [&](llvm::StringRef name) {
    llvm::SmallString<256> path(options.runtimeDir);
    llvm::sys::path::append(path, name);
    return std::string(path);
  };
  std::string runtime = library("libseqc_runtime.a");
  std::string runtimeMain = library("libseqc_runtime_main.a");
  std::string runtimeMPI = library("libseqc_runtime_mpi.a");
  SmallVector<llvm::StringRef> mpiLibraries;
  if (mpi) {
    llvm::StringRef(SEQC_MPI_LIBRARIES)
        .split(mpiLibraries, '|', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
    if (mpiLibraries.empty())
      return llvm::createStringError(
          "the model was compiled with " + parallelism.flag() +
          ", which links MPI, but this seqc was built without it: install "
          "Open MPI (Debian's libopenmpi-dev and openmpi-bin) and build seqc "
          "again");
  }
  std::vector<std::string> required =
      sharedLibrary ? std::vector<std::string>{runtime}
                    : std::vector<std::string>{runtimeMain, runtime};
  if (mpi)
    required.push_back(runtimeMPI);
  for (const std::string &path : required) {
    if (!llvm::sys::fs::exists(path))
      return llvm::createStringError(
          "cannot find the seqc runtime library '" + path +
          "' (the runtime directory is --runtime-dir, else $SEQC_RUNTIME_DIR, "
          "else <seqc's directory>/../lib)");
  }

  llvm::Expected<std::string> driver = findLinkerDriver();
  if (!driver)
    return driver.takeError();

  // Executables: the runtime's main, then the runtime, which it calls.
  // Shared libraries: the whole runtime, since the host calls it through
  // seqc_runtime.h and nothing in the model object references most of it.
  // -fopenmp links libomp, which the model's parallel regions call
  // (__kmpc_fork_call) and the runtime uses for its thread count.
  // --rtlib=compiler-rt links compiler-rt's builtins, which define the
  // conversions LLVM calls where the target has no instruction for them
  // (__truncsfbf2: f32 to bf16 without AVX512_BF16); libgcc before GCC 13
  // has none of them.
  SmallVector<std::string> args = {*driver, "-fuse-ld=lld"};
  if (sharedLibrary) {
    args.append({"-shared", "-o", outputPath.str()});
    args.append(objectPaths.begin(), objectPaths.end());
    args.append({"-Wl,--whole-archive", runtime, "-Wl,--no-whole-archive"});
  } else {
    args.append({"-o", outputPath.str()});
    args.append(objectPaths.begin(), objectPaths.end());
    args.append({runtimeMain, runtime});
  }
  if (mpi) {
    // The runtime references libseqc_runtime_mpi.a's functions weakly,
    // which extracts nothing from an archive: -u does. Then MPI itself,
    // found again at run time where it was found at build time.
    args.append({"-Wl,-u,seqc_parallel_init", runtimeMPI});
    for (llvm::StringRef mpi : mpiLibraries) {
      args.push_back(mpi.str());
      llvm::StringRef dir = llvm::sys::path::parent_path(mpi);
      if (!dir.empty())
        args.push_back("-Wl,-rpath," + dir.str());
    }
  }
  args.append({"-fopenmp=libomp", "-lm", "--rtlib=compiler-rt"});

  SmallVector<llvm::StringRef> argRefs(args.begin(), args.end());
  if (options.verbose) {
    llvm::interleave(argRefs, llvm::errs(), " ");
    llvm::errs() << '\n';
  }
  std::string errorMessage;
  bool executionFailed = false;
  int status = llvm::sys::ExecuteAndWait(
      argRefs.front(), argRefs, /*Env=*/std::nullopt, /*Redirects=*/{},
      /*SecondsToWait=*/0, /*MemoryLimit=*/0, &errorMessage, &executionFailed);
  if (executionFailed)
    return llvm::createStringError("cannot run '" + *driver +
                                   "': " + errorMessage);
  if (status != 0) {
    std::string command;
    llvm::raw_string_ostream os(command);
    llvm::interleave(argRefs, os, " ");
    return llvm::createStringError(
        "linking failed (exit status " + std::to_string(status) +
        (errorMessage.empty() ? "" : ", " + errorMessage) + "): " + command);
  }
  return llvm::Error::success();
}

llvm::Error mlir::seq::linkModel(llvm::StringRef objectPath,
                                 llvm::StringRef outputPath, bool sharedLibrary,
                                 const LinkOptions &options) {
  return linkModelFor({objectPath.str()}, outputPath, sharedLibrary, options,
                      Parallelism());
}

//===----------------------------------------------------------------------===//
// The whole back end
//===----------------------------------------------------------------------===//

/// Whether `cpu`'s vdpbf16ps on 512-bit vectors multiplies bf16 at least as
/// fast as the FMAs of the widening kernels. Intel's server cores from
/// Sapphire Rapids on issue it every other cycle (LLVM's scheduling model:
/// reciprocal throughput 2; measured 0.45 a cycle on an Emerald Rapids,
/// docs/performance.md, "bf16 on Intel's server cores") against two FMAs a
/// cycle: 32 bf16 products per 2 cycles, half of the FMAs' 64 f32 ones, so
/// bf16 is widened to f32 in registers there (their AMX tiles are the fast
/// path). AMD's Zen 4 and Zen 5 issue one a cycle.
static bool hasFastBf16Dot(llvm::StringRef cpu) {
  return !llvm::is_contained({"sapphirerapids", "emeraldrapids",
                              "graniterapids", "graniterapids-d",
                              "diamondrapids"},
                             cpu);
}

/// The output size from which x86 contractions store around the caches:
/// beyond the 32-48 MiB last-level caches of the hosts measured, shared by
/// all their cores (and a VM's neighbours), an output does not stay cached
/// until the op that reads it, and the ordinary stores' read of each line
/// before writing it doubles its traffic. On an Ice Lake server core (2
/// threads, 25 GB/s triad) the 32 MiB product of bench/kernels/bmm.seq (n =
/// 1024) went from 5.3 to 4.0 ms with non-temporal stores, while its 2 and
/// 8 MiB forms (n = 256, 512) ran no faster or slower: 16 MiB is between
/// (docs/performance.md, "Streaming stores").
static constexpr int64_t kStreamingStoreBytes = 16 << 20;

void mlir::seq::setVectorRegisters(const llvm::TargetMachine &machine,
                                   SeqPipelineOptions &options) {
  const llvm::MCSubtargetInfo *info = machine.getMCSubtargetInfo();
  llvm::Triple::ArchType arch = machine.getTargetTriple().getArch();
  if (arch == llvm::Triple::x86_64 || arch == llvm::Triple::x86) {
    bool avx512 = info->checkFeatures("+avx512f");
    bool avx = info->checkFeatures("+avx");
    options.vectorBits = avx512 ? 512 : avx ? 256 : 128;
    options.vectorRegisters = avx512 ? 32 : 16;
    options.f16c = info->checkFeatures("+f16c");
    options.bf16Dot =
        avx512 && info->checkFeatures("+avx512bf16") &&
        options.bf16DotRequest.value_or(hasFastBf16Dot(info->getCPU()));
    options.streamingStoreBytes =
        options.streamingStoreBytesRequest.value_or(kStreamingStoreBytes);
    options.vnniBits =
        avx512 && info->checkFeatures("+avx512vnni,+avx512bw") ? 512
        : info->checkFeatures("+avxvnni") ||
                info->checkFeatures("+avx512vnni,+avx512vl")
            ? 256
            : 0;
  } else if (arch == llvm::Triple::aarch64) {
    options.vectorBits = 128; // NEON
    options.vectorRegisters = 32;
    options.f16c = true; // fcvtl
  }
}

/// Checks what the NVPTX target needs of the CUDA toolkit for `emit`:
/// libdevice, and ptxas and fatbinary when the kernels are assembled here.
/// The stages before the LLVM dialect, and the interpreter, need none.
static LogicalResult checkCUDAToolkit(const CompileOptions &options) {
  const SeqPipelineOptions &pipeline = options.pipeline;
  EmitKind emit = options.emit;
  if (emit == EmitKind::Seq || emit == EmitKind::Manifest ||
      emit == EmitKind::Linalg || emit == EmitKind::Header ||
      pipeline.gpuInterpret)
    return success();
  std::string toolkit = getCUDAToolkitPath(pipeline);
  SmallVector<std::string> needed = {"nvvm/libdevice/libdevice.10.bc"};
  if (emit != EmitKind::PTX && pipeline.gpuBinary != "ptx")
    needed.push_back("bin/ptxas");
  if (emit != EmitKind::PTX && pipeline.gpuBinary == "fatbin")
    needed.push_back("bin/fatbinary");
  for (const std::string &file : needed) {
    llvm::SmallString<256> path(toolkit);
    llvm::sys::path::append(path, file);
    if (!llvm::sys::fs::exists(path))
      return reportError(options,
                         "the CUDA toolkit has no '" + path +
                             "', which --target=nvptx needs (the toolkit is "
                             "--cuda-path, else $CUDA_HOME, else "
                             "/usr/local/cuda)");
  }
  return success();
}

LogicalResult mlir::seq::verifyCompileOptions(const CompileOptions &options) {
  if (llvm::Error error = verifyPipelineOptions(options.pipeline))
    return reportError(options, std::move(error));
  EmitKind emit = options.emit;
  if ((emit == EmitKind::Executable || emit == EmitKind::SharedLibrary) &&
      (options.outputPath.empty() || options.outputPath == "-"))
    return reportError(options, llvm::Twine("cannot write ") +
                                    (emit == EmitKind::Executable
                                         ? "an executable"
                                         : "a shared library") +
                                    " to stdout; name it with -o");
  bool nvptx = options.pipeline.target == SeqTarget::NVPTX;
  if (emit == EmitKind::PTX && !nvptx)
    return reportError(options, "--emit=ptx needs --target=nvptx");
  if (emit == EmitKind::PTX && options.pipeline.gpuInterpret)
    return reportError(options, "--emit=ptx and --gpu-interpret exclude each "
                                "other: the interpreter runs the kernels on "
                                "the host, without PTX");
  if (options.dataParallel && options.pipeline.tensorParallel > 1)
    return reportError(options,
                       "--data-parallel and --tensor-parallel=" +
                           llvm::Twine(options.pipeline.tensorParallel) +
                           " cannot be combined yet: a model is either split "
                           "by its batch (--data-parallel) or by its weights "
                           "(--tensor-parallel)");
  if (options.dataParallel && nvptx)
    return reportError(options, "--data-parallel is not supported on the "
                                "NVPTX target yet (it needs --target=cpu)");
  if (nvptx)
    return checkCUDAToolkit(options);
  return success();
}

/// `--emit=ptx`: the PTX of the kernel module, which the pipeline embedded
/// as text (gpu-binary=ptx).
static void printPTX(ModuleOp module, llvm::raw_ostream &os) {
  bool found = false;
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute attr : binary.getObjects()) {
      os << cast<gpu::ObjectAttr>(attr).getObject().getValue();
      found = true;
    }
  });
  if (!found)
    os << "// no GPU kernels: the model runs no parallel loop\n";
}

LogicalResult mlir::seq::compileModule(ModuleOp module,
                                       const CompileOptions &options,
                                       llvm::raw_ostream &os) {
  return compileEntries({module}, {std::string()}, options, os);
}

/// The manifest of every entry of a model (toManifestJSON), after checking
/// that the entries take the same parameters.
static FailureOr<std::string> buildEntriesManifest(ArrayRef<ModuleOp> modules,
                                                   ArrayRef<std::string> names,
                                                   llvm::StringRef target) {
  std::vector<ModelSignature> signatures;
  for (ModuleOp module : modules) {
    FailureOr<ModelSignature> signature = readModelSignature(module);
    if (failed(signature))
      return failure();
    signatures.push_back(std::move(*signature));
  }
  std::vector<const ModelSignature *> pointers;
  for (auto [i, signature] : llvm::enumerate(signatures)) {
    pointers.push_back(&signature);
    const ModelSignature &first = signatures.front();
    bool same = signature.params.size() == first.params.size() &&
                llvm::all_of(llvm::zip(signature.params, first.params),
                             [](const auto &pair) {
                               const auto &[a, b] = pair;
                               return a.name == b.name && a.dtype == b.dtype &&
                                      a.shape == b.shape &&
                                      a.shardAxis == b.shardAxis;
                             });
    if (!same)
      return emitError(ModuleOp(modules[i]).getLoc())
             << "entry '" << names[i] << "' takes other parameters than entry '"
             << names.front() << "'; the entries of a model share its members";
  }
  return toManifestJSON(names, pointers, target);
}

/// The parameters (manifest indices) that no entry's model function reads
/// once lowered past seq-hoist-preparation: those every module lists in
/// kPreparedOnlyParamsAttr. None when a module prepares nothing.
static SmallVector<int64_t> preparedOnlyParams(ArrayRef<ModuleOp> modules) {
  SmallVector<int64_t> common;
  for (auto [i, module] : llvm::enumerate(modules)) {
    auto attr = ModuleOp(module)->getAttrOfType<DenseI64ArrayAttr>(
        kPreparedOnlyParamsAttr);
    if (!attr)
      return {};
    if (i == 0) {
      common = llvm::to_vector(attr.asArrayRef());
      continue;
    }
    llvm::erase_if(common, [&](int64_t index) {
      return !llvm::is_contained(attr.asArrayRef(), index);
    });
  }
  return common;
}

/// What an entry's LLVM module brings to the model's table of entries
/// (addEntriesTable).
struct EntryLinkInfo {
  /// Its description of its prepared block (seq-emit-invoke) when every
  /// value in it has a key, else empty.
  std::vector<uint64_t> preparedTable;
  /// The alignment of its manifest.
  llvm::MaybeAlign manifestAlign;
};

/// Readies entry `index` of a model with several for linking with the
/// others: entry i > 0's public functions get the suffix `_<name>` and its
/// other definitions become internal; every entry's manifest is removed
/// (addEntriesTable adds the model's). Checks that the entry defines its
/// three functions.
static FailureOr<EntryLinkInfo>
prepareEntryForLink(llvm::Module &entry, size_t index, llvm::StringRef name,
                    const CompileOptions &options) {
  EntryLinkInfo info;
  llvm::GlobalVariable *table =
      entry.getGlobalVariable(kPreparedTableSymbol, /*AllowInternal=*/true);
  auto *values = table && table->hasInitializer()
                     ? llvm::dyn_cast<llvm::ConstantDataArray>(
                           table->getInitializer())
                     : nullptr;
  if (values && values->getNumElements() > 0) {
    uint64_t count = values->getElementAsInteger(0);
    bool keyed = values->getNumElements() == 1 + 3 * count;
    for (uint64_t k = 1 + 2 * count; keyed && k < 1 + 3 * count; ++k)
      keyed = values->getElementAsInteger(k) != 0;
    for (uint64_t k = 0; keyed && k < values->getNumElements(); ++k)
      info.preparedTable.push_back(values->getElementAsInteger(k));
  }
  llvm::GlobalVariable *manifest = entry.getGlobalVariable(kManifestSymbol);
  if (!manifest || !manifest->use_empty())
    return reportError(options, "entry '" + name +
                                    "' defines no manifest the model's can "
                                    "replace");
  info.manifestAlign = manifest->getAlign();
  manifest->eraseFromParent();
  if (index > 0) {
    for (llvm::GlobalValue &value : entry.global_values()) {
      if (value.isDeclaration() || value.hasLocalLinkage())
        continue;
      std::string symbol = value.getName().str();
      if (symbol == kInvokeSymbol || symbol == kPrepareSymbol ||
          symbol == kReleaseSymbol)
        value.setName(symbol + "_" + name.str());
      else
        value.setLinkage(llvm::GlobalValue::InternalLinkage);
    }
  }
  std::string suffix = index == 0 ? "" : "_" + name.str();
  for (llvm::StringRef symbol :
       {kInvokeSymbol, kPrepareSymbol, kReleaseSymbol})
    if (!entry.getFunction((symbol + suffix).str()))
      return reportError(options, "entry '" + name + "' defines no " +
                                      symbol + suffix);
  return info;
}

/// Adds the model's manifest and `seqc_entries` to `module` (the linked
/// entries, or a module of its own): {name, invoke, prepare, release} per
/// entry, then nulls. Entries whose descriptions of their prepared blocks
/// are equal (every value with a key) prepare the same values at the same
/// places, so the table gives them the first one's seqc_prepare and
/// seqc_release, and the runtime, seeing one function, prepares the block
/// once for them all (docs/abi.md, "Sharing prepared values").
static void addEntriesTable(llvm::Module &module, ArrayRef<std::string> names,
                            ArrayRef<EntryLinkInfo> infos,
                            llvm::StringRef manifest) {
  llvm::LLVMContext &llvmContext = module.getContext();
  llvm::Constant *text =
      llvm::ConstantDataArray::getString(llvmContext, manifest);
  auto *global = new llvm::GlobalVariable(
      module, text->getType(), /*isConstant=*/true,
      llvm::GlobalValue::ExternalLinkage, text, kManifestSymbol);
  global->setAlignment(infos.front().manifestAlign);

  auto *pointer = llvm::PointerType::getUnqual(llvmContext);
  auto *rowType = llvm::StructType::get(llvmContext,
                                        {pointer, pointer, pointer, pointer});
  auto *functionType =
      llvm::FunctionType::get(llvm::Type::getVoidTy(llvmContext), false);
  std::vector<llvm::Constant *> rows;
  for (auto [i, name] : llvm::enumerate(names)) {
    std::string suffix = i == 0 ? "" : "_" + name;
    size_t same = i;
    for (size_t j = 0; j < i && same == i; ++j)
      if (!infos[i].preparedTable.empty() &&
          infos[j].preparedTable == infos[i].preparedTable)
        same = j;
    std::string prepareSuffix = same == 0 ? "" : "_" + names[same];
    std::vector<llvm::Constant *> fields;
    llvm::Constant *nameText =
        llvm::ConstantDataArray::getString(llvmContext, name);
    fields.push_back(new llvm::GlobalVariable(
        module, nameText->getType(), /*isConstant=*/true,
        llvm::GlobalValue::PrivateLinkage, nameText, "seqc_entry_name"));
    // The entries' functions, or declarations of them when they are
    // compiled to objects of their own.
    for (llvm::StringRef symbol :
         {kInvokeSymbol, kPrepareSymbol, kReleaseSymbol}) {
      std::string function =
          symbol.str() + (symbol == kInvokeSymbol ? suffix : prepareSuffix);
      fields.push_back(llvm::cast<llvm::Constant>(
          module.getOrInsertFunction(function, functionType).getCallee()));
    }
    rows.push_back(llvm::ConstantStruct::get(rowType, fields));
  }
  rows.push_back(llvm::Constant::getNullValue(rowType));
  auto *tableType = llvm::ArrayType::get(rowType, rows.size());
  new llvm::GlobalVariable(module, tableType, /*isConstant=*/true,
                           llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantArray::get(tableType, rows),
                           kEntriesSymbol);
}

/// Links the entries' LLVM modules into the first (prepareEntryForLink on
/// each), with the model's manifest and table of entries.
static LogicalResult linkEntries(
    MutableArrayRef<std::unique_ptr<llvm::Module>> llvmModules,
    ArrayRef<std::string> names, llvm::StringRef manifest,
    const CompileOptions &options) {
  llvm::Module &linked = *llvmModules.front();
  std::vector<EntryLinkInfo> infos;
  for (size_t i = 0; i < llvmModules.size(); ++i) {
    FailureOr<EntryLinkInfo> info =
        prepareEntryForLink(*llvmModules[i], i, names[i], options);
    if (failed(info))
      return failure();
    infos.push_back(std::move(*info));
    if (i > 0 && llvm::Linker::linkModules(linked, std::move(llvmModules[i])))
      return reportError(options, "cannot link the code of entry '" +
                                      names[i] + "' into the model");
  }
  addEntriesTable(linked, names, infos, manifest);
  return success();
}

/// Writes `objects` to temporary files, links them into the executable or
/// shared library options.outputPath (linkModelFor), then removes them
/// whatever happens.
static LogicalResult linkObjects(ArrayRef<ArrayRef<char>> objects,
                                 bool sharedLibrary,
                                 const CompileOptions &options,
                                 const Parallelism &parallelism) {
  std::vector<std::string> paths;
  std::vector<std::unique_ptr<llvm::FileRemover>> removers;
  for (ArrayRef<char> object : objects) {
    llvm::SmallString<128> path;
    int fd;
    if (std::error_code error =
            llvm::sys::fs::createTemporaryFile("seqc-model", "o", fd, path))
      return reportError(options, "cannot create a temporary object file: " +
                                      error.message());
    removers.push_back(std::make_unique<llvm::FileRemover>(path));
    paths.push_back(std::string(path));
    llvm::raw_fd_ostream stream(fd, /*shouldClose=*/true);
    stream.write(object.data(), object.size());
    stream.close();
    if (stream.has_error())
      return reportError(options, "cannot write '" + path +
                                      "': " + stream.error().message());
  }
  if (llvm::Error error = linkModelFor(paths, options.outputPath,
                                       sharedLibrary, options.link,
                                       parallelism))
    return reportError(options, std::move(error));
  return success();
}

LogicalResult mlir::seq::compileEntries(ArrayRef<ModuleOp> modules,
                                        ArrayRef<std::string> names,
                                        const CompileOptions &options,
                                        llvm::raw_ostream &os) {
  assert(!modules.empty() && modules.size() == names.size() &&
         "one name per entry");
  if (failed(verifyCompileOptions(options)))
    return failure();
  // A tensor-parallel model's entries are partitioned first: every kind
  // from the seq IR on (and the manifest built from the entries' types)
  // is the rank's program. The lowering pipelines then find them
  // partitioned and leave them so.
  if (options.pipeline.tensorParallel > 1) {
    for (ModuleOp module : modules) {
      MLIRContext &context = *module.getContext();
      prepareContext(context);
      PassManager pm(&context, ModuleOp::getOperationName());
      buildSeqPartitionPipeline(pm, setUpVerification(pm, options));
      if (failed(pm.run(module)))
        return failure();
    }
  }
  // A data-parallel model is the model itself, each rank running it on a
  // block of the batch: the mark alone reaches the manifest (and so the
  // link, which adds MPI).
  if (options.dataParallel)
    for (ModuleOp module : modules)
      module->setAttr(kDataParallelAttr, UnitAttr::get(module.getContext()));
  bool several = modules.size() > 1;
  auto printEntryLine = [&](size_t i, llvm::StringRef comment) {
    if (several)
      os << comment << " entry '" << names[i] << "'\n";
  };

  // The kinds the frontend's modules alone determine.
  EmitKind emit = options.emit;
  if (emit == EmitKind::Seq) {
    for (auto [i, module] : llvm::enumerate(modules)) {
      printEntryLine(i, "//");
      ModuleOp(module).print(os);
      os << "\n";
    }
    return success();
  }
  if (emit == EmitKind::Header) {
    FailureOr<ModelSignature> signature = readModelSignature(modules.front());
    if (failed(signature))
      return failure();
    if (failed(buildEntriesManifest(modules, names,
                                    getManifestTarget(options.pipeline))))
      return failure();
    writeModelHeader(*signature, options.sourceName, os);
    return success();
  }

  // One target machine, created before lowering: it sizes the register tiles
  // of the generated kernels (setVectorRegisters), and the kinds from LLVM IR
  // on are generated with it, so that a bad --march or --mcpu is reported
  // before any work is done. The kinds before LLVM IR need only its vector
  // registers; without a machine, they keep the pipeline's default registers.
  bool needsMachine = emit != EmitKind::Linalg && emit != EmitKind::LLVMMLIR &&
                      emit != EmitKind::PTX && emit != EmitKind::MemoryPlan &&
                      emit != EmitKind::Manifest;
  bool linking =
      emit == EmitKind::Executable || emit == EmitKind::SharedLibrary;
  CompileOptions lowering = options;
  if (emit == EmitKind::PTX)
    lowering.pipeline.gpuBinary = "ptx";
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> created =
      createTargetMachine(options.codegen, options.pipeline.optLevel);
  std::unique_ptr<llvm::TargetMachine> machine;
  if (created) {
    machine = std::move(*created);
    setVectorRegisters(*machine, lowering.pipeline);
  } else if (needsMachine) {
    return reportError(options, created.takeError());
  } else {
    llvm::consumeError(created.takeError());
  }
  if (linking && machine->getTargetTriple().getArch() !=
                     llvm::Triple(llvm::sys::getProcessTriple()).getArch())
    return reportError(options, "cannot link code for " +
                                    machine->getTargetTriple().getArchName() +
                                    " with the host's runtime; use -c or "
                                    "--emit=asm to cross-compile");

  if (emit == EmitKind::Manifest) {
    // The signature's manifest, then, at -O2 and above, the parameters
    // only the preparation reads, found by the passes that compute it
    // (with the machine's vector registers, which choose the packed
    // layouts), so that the text is the one the object embeds.
    FailureOr<std::string> manifest = buildEntriesManifest(
        modules, names, getManifestTarget(options.pipeline));
    if (failed(manifest))
      return failure();
    CompileOptions analysis = lowering;
    analysis.pipeline.remarks = false;
    if (failed(lowerEntries(modules, names, emit, analysis,
                            /*announce=*/false)))
      return failure();
    std::string marked =
        markPreparedOnlyParams(*manifest, preparedOnlyParams(modules));
    if (marked.empty())
      return reportError(options, "cannot mark the parameters only the "
                                  "preparation reads in the manifest");
    os << marked << "\n";
    return success();
  }

  // The manifest of all the entries, read before lowering consumes the
  // frontend's attributes.
  std::string manifest;
  if (several) {
    FailureOr<std::string> built = buildEntriesManifest(
        modules, names, getManifestTarget(options.pipeline));
    if (failed(built))
      return failure();
    manifest = std::move(*built);
  }
  // A model with several entries linked into a binary: each entry becomes
  // an object of its own on the thread that lowered it (translation, LLVM's
  // optimization and code generation in an LLVM context and with a target
  // machine of its own), and one more object holds the model's manifest
  // and table of entries. The objects do not depend on the number of
  // threads.
  bool entryObjects = several && linking;
  std::vector<SmallVector<char, 0>> objects(modules.size());
  std::vector<EntryLinkInfo> infos(modules.size());
  auto compileEntryObject = [&](size_t i) -> LogicalResult {
    ModuleOp module = modules[i];
    llvm::Expected<std::unique_ptr<llvm::TargetMachine>> entryMachine =
        createTargetMachine(options.codegen, options.pipeline.optLevel);
    if (!entryMachine)
      return reportError(options, entryMachine.takeError());
    llvm::LLVMContext entryContext;
    FailureOr<std::unique_ptr<llvm::Module>> translated =
        translatePrepared(module, entryContext, **entryMachine);
    if (failed(translated))
      return failure();
    FailureOr<EntryLinkInfo> info =
        prepareEntryForLink(**translated, i, names[i], options);
    if (failed(info) ||
        failed(optimizeModule(**translated, **entryMachine,
                              options.pipeline.optLevel, module.getLoc())))
      return failure();
    infos[i] = std::move(*info);
    llvm::raw_svector_ostream stream(objects[i]);
    if (llvm::Error error = emitMachineCode(**translated, **entryMachine,
                                            /*assembly=*/false, stream))
      return reportError(options, std::move(error));
    return success();
  };

  // Each entry is compiled for its own shapes: its remarks follow its
  // name.
  if (failed(lowerEntries(
          modules, names, emit, lowering,
          /*announce=*/several && options.pipeline.remarks,
          entryObjects ? llvm::function_ref<LogicalResult(size_t)>(
                             compileEntryObject)
                       : nullptr)))
    return failure();
  if (emit == EmitKind::MemoryPlan) {
    for (auto [i, module] : llvm::enumerate(modules)) {
      printEntryLine(i, "#");
      if (auto plan = module->getAttrOfType<StringAttr>(kMemoryPlanAttr))
        os << plan.getValue();
      else
        os << "no memory plan: "
           << (lowering.pipeline.optLevel == 0
                   ? "-O0 keeps one allocation per buffer"
                   : "the model function allocates no intermediate buffer "
                     "that can be planned")
           << "\n";
    }
    return success();
  }
  if (emit == EmitKind::PTX) {
    for (auto [i, module] : llvm::enumerate(modules)) {
      printEntryLine(i, "//");
      printPTX(module, os);
    }
    return success();
  }
  if (!needsMachine) {
    for (auto [i, module] : llvm::enumerate(modules)) {
      printEntryLine(i, "//");
      ModuleOp(module).print(os);
    }
    return success();
  }

  if (several) {
    // Each entry's manifest marks the parameters its own function leaves to
    // the preparation (seq-emit-invoke); the model's, those of every entry.
    manifest = markPreparedOnlyParams(manifest, preparedOnlyParams(modules));
    if (manifest.empty())
      return reportError(options, "cannot mark the parameters only the "
                                  "preparation reads in the manifest");
  }
  Parallelism parallelism;
  parallelism.tensorParallel = options.pipeline.tensorParallel;
  parallelism.dataParallel = options.dataParallel;
  if (entryObjects) {
    llvm::LLVMContext tableContext;
    llvm::Module table("seqc_entries", tableContext);
    table.setTargetTriple(machine->getTargetTriple());
    table.setDataLayout(machine->createDataLayout());
    addEntriesTable(table, names, infos, manifest);
    objects.emplace_back();
    llvm::raw_svector_ostream stream(objects.back());
    if (llvm::Error error =
            emitMachineCode(table, *machine, /*assembly=*/false, stream))
      return reportError(options, std::move(error));
    SmallVector<ArrayRef<char>> contents(objects.begin(), objects.end());
    return linkObjects(contents, emit == EmitKind::SharedLibrary, options,
                       parallelism);
  }

  llvm::LLVMContext llvmContext;
  std::vector<std::unique_ptr<llvm::Module>> llvmModules;
  for (ModuleOp module : modules) {
    FailureOr<std::unique_ptr<llvm::Module>> translated =
        translateForMachine(module, llvmContext, *machine);
    if (failed(translated))
      return failure();
    llvmModules.push_back(std::move(*translated));
  }
  if (several && failed(linkEntries(llvmModules, names, manifest, options)))
    return failure();
  std::unique_ptr<llvm::Module> llvmModule = std::move(llvmModules.front());
  if (failed(optimizeModule(*llvmModule, *machine, options.pipeline.optLevel,
                            ModuleOp(modules.front()).getLoc())))
    return failure();
  if (emit == EmitKind::LLVMIR) {
    llvmModule->print(os, nullptr);
    return success();
  }

  if (emit == EmitKind::Assembly || emit == EmitKind::Object) {
    // The object writer seeks back to patch headers, which neither a pipe
    // nor an arbitrary raw_ostream can: emit into memory, then copy.
    llvm::SmallVector<char, 0> buffer;
    llvm::raw_svector_ostream bufferStream(buffer);
    if (llvm::Error error = emitMachineCode(
            *llvmModule, *machine, emit == EmitKind::Assembly, bufferStream))
      return reportError(options, std::move(error));
    os.write(buffer.data(), buffer.size());
    return success();
  }

  // Executables and shared libraries: one object.
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream stream(object);
  if (llvm::Error error =
          emitMachineCode(*llvmModule, *machine, /*assembly=*/false, stream))
    return reportError(options, std::move(error));
  return linkObjects({ArrayRef<char>(object)},
                     emit == EmitKind::SharedLibrary, options, parallelism);
}
