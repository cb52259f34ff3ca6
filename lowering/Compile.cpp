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
#include "llvm/Support/WithColor.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

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

LogicalResult mlir::seq::lowerModule(ModuleOp module, EmitKind emit,
                                     const CompileOptions &options) {
  if (emit == EmitKind::Seq || emit == EmitKind::Header ||
      (emit == EmitKind::Manifest && options.pipeline.optLevel < 2))
    return success();
  MLIRContext &context = *module.getContext();
  prepareContext(context);

  PassManager pm(&context, ModuleOp::getOperationName());
  // The IR must verify after every pass: Debian's MLIR is built without
  // assertions, so a broken invariant would otherwise surface as a crash in
  // a later pass.
  pm.enableVerifier(true);
  if (options.configurePassManager && failed(options.configurePassManager(pm)))
    return failure();
  if (emit == EmitKind::Manifest)
    buildSeqManifestPipeline(pm, options.pipeline);
  else if (emit == EmitKind::Linalg) {
    buildSeqPartitionPipeline(pm, options.pipeline);
    buildSeqToTensorPipeline(pm, options.pipeline);
  }
  else
    buildSeqToLLVMPipeline(pm, options.pipeline);
  return pm.run(module);
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

FailureOr<std::unique_ptr<llvm::Module>>
mlir::seq::translateForMachine(ModuleOp module, llvm::LLVMContext &llvmContext,
                               llvm::TargetMachine &machine) {
  prepareContext(*module.getContext());
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
static llvm::Error linkModelFor(llvm::StringRef objectPath,
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
  if (sharedLibrary)
    args.append({"-shared", "-o", outputPath.str(), objectPath.str(),
                 "-Wl,--whole-archive", runtime, "-Wl,--no-whole-archive"});
  else
    args.append(
        {"-o", outputPath.str(), objectPath.str(), runtimeMain, runtime});
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
  return linkModelFor(objectPath, outputPath, sharedLibrary, options,
                      Parallelism());
}

//===----------------------------------------------------------------------===//
// The whole back end
//===----------------------------------------------------------------------===//

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
    options.bf16Dot = avx512 && info->checkFeatures("+avx512bf16");
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

/// Links the entries' LLVM modules into the first: entry i > 0's public
/// functions get the suffix `_<name>`, its other definitions become
/// internal, the first module's manifest becomes `manifest`, and
/// `seqc_entries` lists every entry's name and functions.
static LogicalResult linkEntries(
    MutableArrayRef<std::unique_ptr<llvm::Module>> llvmModules,
    ArrayRef<std::string> names, llvm::StringRef manifest,
    const CompileOptions &options) {
  llvm::Module &linked = *llvmModules.front();
  llvm::LLVMContext &llvmContext = linked.getContext();
  // Each entry's description of its prepared block (seq-emit-invoke):
  // entries whose descriptions are equal, every value with a key, prepare
  // the same values at the same places, so the table gives them the first
  // one's seqc_prepare and seqc_release, and the runtime, seeing one
  // function, prepares the block once for them all (docs/abi.md, "Sharing
  // prepared values"). Constants are unique in a context: equal tables are
  // one pointer.
  std::vector<llvm::Constant *> tables(llvmModules.size(), nullptr);
  for (size_t i = 0; i < llvmModules.size(); ++i) {
    llvm::GlobalVariable *table = llvmModules[i]->getGlobalVariable(
        kPreparedTableSymbol, /*AllowInternal=*/true);
    auto *values = table && table->hasInitializer()
                       ? llvm::dyn_cast<llvm::ConstantDataArray>(
                             table->getInitializer())
                       : nullptr;
    if (!values || values->getNumElements() == 0)
      continue;
    uint64_t count = values->getElementAsInteger(0);
    bool keyed = values->getNumElements() == 1 + 3 * count;
    for (uint64_t k = 1 + 2 * count; keyed && k < 1 + 3 * count; ++k)
      keyed = values->getElementAsInteger(k) != 0;
    if (keyed)
      tables[i] = values;
  }
  for (size_t i = 1; i < llvmModules.size(); ++i) {
    llvm::Module &entry = *llvmModules[i];
    if (llvm::GlobalVariable *other = entry.getGlobalVariable(kManifestSymbol))
      other->eraseFromParent();
    for (llvm::GlobalValue &value : entry.global_values()) {
      if (value.isDeclaration() || value.hasLocalLinkage())
        continue;
      std::string name = value.getName().str();
      if (name == kInvokeSymbol || name == kPrepareSymbol ||
          name == kReleaseSymbol)
        value.setName(name + "_" + names[i]);
      else
        value.setLinkage(llvm::GlobalValue::InternalLinkage);
    }
    if (llvm::Linker::linkModules(linked, std::move(llvmModules[i])))
      return reportError(options, "cannot link the code of entry '" +
                                      names[i] + "' into the model");
  }
  // The manifest of every entry, where the first one's was.
  llvm::GlobalVariable *old = linked.getGlobalVariable(kManifestSymbol);
  if (!old)
    return reportError(options, "the model defines no manifest");
  llvm::Constant *text =
      llvm::ConstantDataArray::getString(llvmContext, manifest);
  auto *global = new llvm::GlobalVariable(
      linked, text->getType(), /*isConstant=*/true,
      llvm::GlobalValue::ExternalLinkage, text, "", old);
  global->setAlignment(old->getAlign());
  global->takeName(old);
  old->eraseFromParent();

  // seqc_entries: {name, invoke, prepare, release} per entry, then nulls.
  auto *pointer = llvm::PointerType::getUnqual(llvmContext);
  auto *rowType = llvm::StructType::get(llvmContext,
                                        {pointer, pointer, pointer, pointer});
  std::vector<llvm::Constant *> rows;
  for (auto [i, name] : llvm::enumerate(names)) {
    std::string suffix = i == 0 ? "" : "_" + name;
    size_t same = i;
    for (size_t j = 0; j < i && same == i; ++j)
      if (tables[i] && tables[j] == tables[i])
        same = j;
    std::string prepareSuffix =
        same == 0 ? "" : "_" + names[same];
    std::vector<llvm::Constant *> fields;
    llvm::Constant *nameText =
        llvm::ConstantDataArray::getString(llvmContext, name);
    fields.push_back(new llvm::GlobalVariable(
        linked, nameText->getType(), /*isConstant=*/true,
        llvm::GlobalValue::PrivateLinkage, nameText, "seqc_entry_name"));
    for (llvm::StringRef symbol :
         {kInvokeSymbol, kPrepareSymbol, kReleaseSymbol}) {
      std::string functionName =
          symbol.str() + (symbol == kInvokeSymbol ? suffix : prepareSuffix);
      llvm::Function *function = linked.getFunction(functionName);
      if (!function)
        return reportError(options, "entry '" + name + "' defines no " +
                                        functionName);
      fields.push_back(function);
    }
    rows.push_back(llvm::ConstantStruct::get(rowType, fields));
  }
  rows.push_back(llvm::Constant::getNullValue(rowType));
  auto *tableType = llvm::ArrayType::get(rowType, rows.size());
  new llvm::GlobalVariable(linked, tableType, /*isConstant=*/true,
                           llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantArray::get(tableType, rows),
                           kEntriesSymbol);
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
      pm.enableVerifier(true);
      buildSeqPartitionPipeline(pm, options.pipeline);
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
    for (ModuleOp module : modules)
      if (failed(lowerModule(module, emit, analysis)))
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
  for (auto [i, module] : llvm::enumerate(modules)) {
    // Each entry is compiled for its own shapes: its remarks follow its
    // name.
    if (several && options.pipeline.remarks)
      emitRemark(ModuleOp(module).getLoc())
          << "entry '" << names[i] << "': the remarks up to the next entry "
          << "are this entry's";
    if (failed(lowerModule(module, emit, lowering)))
      return failure();
  }
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

  llvm::LLVMContext llvmContext;
  std::vector<std::unique_ptr<llvm::Module>> llvmModules;
  for (ModuleOp module : modules) {
    FailureOr<std::unique_ptr<llvm::Module>> translated =
        translateForMachine(module, llvmContext, *machine);
    if (failed(translated))
      return failure();
    llvmModules.push_back(std::move(*translated));
  }
  if (several) {
    // Each entry's manifest marks the parameters its own function leaves to
    // the preparation (seq-emit-invoke); the model's, those of every entry.
    manifest = markPreparedOnlyParams(manifest, preparedOnlyParams(modules));
    if (manifest.empty())
      return reportError(options, "cannot mark the parameters only the "
                                  "preparation reads in the manifest");
    if (failed(linkEntries(llvmModules, names, manifest, options)))
      return failure();
  }
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

  // Executables and shared libraries: an object in a temporary file, linked
  // into the output, then removed whatever happens.
  llvm::SmallString<128> objectPath;
  int fd;
  if (std::error_code error =
          llvm::sys::fs::createTemporaryFile("seqc-model", "o", fd, objectPath))
    return reportError(options, "cannot create a temporary object file: " +
                                    error.message());
  llvm::FileRemover removeObject(objectPath);
  {
    llvm::raw_fd_ostream objectStream(fd, /*shouldClose=*/true);
    if (llvm::Error error = emitMachineCode(*llvmModule, *machine,
                                            /*assembly=*/false, objectStream))
      return reportError(options, std::move(error));
    objectStream.close();
    if (objectStream.has_error())
      return reportError(options, "cannot write '" + objectPath +
                                      "': " + objectStream.error().message());
  }
  Parallelism parallelism;
  parallelism.tensorParallel = options.pipeline.tensorParallel;
  parallelism.dataParallel = options.dataParallel;
  if (llvm::Error error = linkModelFor(objectPath, options.outputPath,
                                       emit == EmitKind::SharedLibrary,
                                       options.link, parallelism))
    return reportError(options, std::move(error));
  return success();
}
