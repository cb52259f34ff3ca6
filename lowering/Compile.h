//===- Compile.h - from seq IR to objects and binaries ----------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The back half of the seqc driver as a library: lowering a module of seq ops
// to the LLVM dialect, translating it to LLVM IR, optimizing it with LLVM's
// new pass manager, emitting assembly or an object with a TargetMachine in
// process, and linking the object against the seqc runtime with the system
// toolchain. tools/seqc only parses options and the source file.
//
// Errors in the IR are reported through the MLIRContext's diagnostic handler
// at their location; errors outside the IR (a bad CPU name, a missing runtime
// library, a failed link) are printed as "<tool>: error: ..." on stderr.
// Every function returns failure after reporting; none aborts.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_COMPILE_H
#define SEQC_LOWERING_COMPILE_H

#include "lowering/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
class raw_ostream;
class raw_pwrite_stream;
} // namespace llvm

namespace mlir {
namespace seq {

/// What the driver produces, in pipeline order. seqc's `--emit` names the
/// kinds up to Header; Executable and SharedLibrary are what `-o` produces.
enum class EmitKind {
  /// The seq dialect as the frontend built it.
  Seq,
  /// The model manifest (docs/abi.md) as JSON: the text the compiled model
  /// embeds as `seqc_manifest`.
  Manifest,
  /// linalg, tensor, arith, math and scf on tensors, after fusion (-O1+).
  Linalg,
  /// The LLVM dialect, entry points included.
  LLVMMLIR,
  /// The PTX of the model's GPU kernels (--target=nvptx).
  PTX,
  /// The report of seq-plan-memory: where each intermediate lives in the
  /// model's arena, and the planned peak.
  MemoryPlan,
  /// LLVM IR after LLVM's optimization pipeline for the -O level.
  LLVMIR,
  /// Target assembly.
  Assembly,
  /// A relocatable object defining seqc_manifest and seqc_invoke.
  Object,
  /// A C header describing the model (for shared libraries).
  Header,
  /// An executable: the object linked with the runtime and its main.
  Executable,
  /// A shared library: the object and the whole runtime.
  SharedLibrary,
};

/// Options of LLVM code generation.
struct CodegenOptions {
  /// Architecture (`--march`, as llc spells it: x86-64, aarch64, ...);
  /// empty for the host's. Replaces the architecture of the host triple.
  std::string arch;
  /// CPU (`--mcpu`); empty or "native" for the host CPU, whose features are
  /// then detected as well.
  std::string cpu;
  /// Extra target features (`--mattr`, "+avx2,-fma"), applied last.
  std::string features;
};

/// Options of the final link.
struct LinkOptions {
  /// Directory holding libseqc_runtime.a and libseqc_runtime_main.a.
  std::string runtimeDir;
  /// Print the linker command line before running it.
  bool verbose = false;
};

/// Everything one invocation of the driver asks for.
struct CompileOptions {
  EmitKind emit = EmitKind::Executable;
  /// The seq pipelines' options. Its optLevel is also LLVM's: O0-O3 module
  /// pipeline and code generation level.
  SeqPipelineOptions pipeline;
  CodegenOptions codegen;
  LinkOptions link;
  /// `seqc --data-parallel`: the model runs as several MPI processes, each
  /// on a block of the batch (docs/runtime.md, "Data parallelism"). No pass
  /// changes the model: compileEntries marks its modules
  /// (kDataParallelAttr), the manifest records "data_parallel": true, and
  /// the model links MPI as a tensor-parallel one does. Excludes
  /// pipeline.tensorParallel > 1 and the NVPTX target.
  bool dataParallel = false;
  /// How many entries of a model are lowered at once (compileEntries), each
  /// on its own thread; 0: as many as the host has cores. The result does
  /// not depend on it.
  unsigned jobs = 0;
  /// Verify the IR after every pass (`seqc --verify-each`), to find the
  /// pass that breaks it; otherwise at the end of each stage of the
  /// pipeline (SeqPipelineOptions::verifyStages), which costs far less on a
  /// deep model.
  bool verifyEachPass = false;
  /// The executable or shared library to link (EmitKind::Executable and
  /// SharedLibrary); every other kind is written to a stream.
  std::string outputPath;
  /// The source file, mentioned in generated headers.
  std::string sourceName;
  /// Name used as the prefix of error messages.
  std::string toolName = "seqc";
  /// Called on every PassManager before it runs, e.g. to apply
  /// `--mlir-print-ir-after-all` and `--mlir-timing` from the command line.
  std::function<LogicalResult(PassManager &)> configurePassManager;
};

/// Checks `options` before any work is done: the pipeline's options
/// (verifyPipelineOptions), an output file for executables and shared
/// libraries, `--emit=ptx` only for NVPTX and without the interpreter, and
/// the CUDA toolkit's files that the kinds of NVPTX output past the linalg
/// stage need. Reports the first problem as "<tool>: error: ..." on stderr.
/// compileModule calls it first; a driver may call it before reading its
/// input, so that bad flags are reported before any other error.
LogicalResult verifyCompileOptions(const CompileOptions &options);

/// Runs the seq pipelines on `module` in place, as far as `emit` needs: the
/// tensor pipeline for Linalg, the whole lowering to the LLVM dialect for
/// every later kind, nothing for Seq, Manifest and Header.
LogicalResult lowerModule(ModuleOp module, EmitKind emit,
                          const CompileOptions &options);

/// Sets the vector register width and count of `options` from `machine`'s
/// features (AVX-512: 512 bits and 32 registers; AVX/AVX2: 256 and 16),
/// whether it converts f16 in vector registers (F16C), multiplies bf16 pairs
/// with vdpbf16ps (AVX512_BF16, where the CPU issues it as fast as FMAs or
/// `bf16DotRequest` asks for it) and has VNNI.
void setVectorRegisters(const llvm::TargetMachine &machine,
                        SeqPipelineOptions &options);

/// Creates the TargetMachine of `options` for code generation level
/// `optLevel` (0-3), PIC, so that objects go into PIE executables and shared
/// libraries alike.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const CodegenOptions &options, unsigned optLevel);

/// Translates `module` (in the LLVM dialect) to LLVM IR for `machine` and
/// runs LLVM's module pipeline for `optLevel` on it. Translation errors are
/// reported at their location.
FailureOr<std::unique_ptr<llvm::Module>>
translateAndOptimize(ModuleOp module, llvm::LLVMContext &llvmContext,
                     llvm::TargetMachine &machine, unsigned optLevel);

/// The first half of translateAndOptimize: the translation, with the
/// machine's triple, data layout, CPU and features.
FailureOr<std::unique_ptr<llvm::Module>>
translateForMachine(ModuleOp module, llvm::LLVMContext &llvmContext,
                    llvm::TargetMachine &machine);

/// The second half: LLVM's module pipeline for `optLevel`, then the
/// verifier, whose errors are reported at `loc`.
LogicalResult optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                             unsigned optLevel, Location loc);

/// Emits `module` as assembly or as an object.
llvm::Error emitMachineCode(llvm::Module &module, llvm::TargetMachine &machine,
                            bool assembly, llvm::raw_pwrite_stream &os);

/// The runtime directory used when neither `--runtime-dir` nor
/// SEQC_RUNTIME_DIR is given: `<dir of the executable>/../lib`, where the
/// build tree and an installation put the runtime libraries. `argv0` and
/// `mainAddr` locate the running executable.
std::string getDefaultRuntimeDir(const char *argv0, void *mainAddr);

/// Picks the runtime directory: `flag` if non-empty, else the environment
/// variable SEQC_RUNTIME_DIR, else `fallback`.
std::string selectRuntimeDir(llvm::StringRef flag, llvm::StringRef fallback);

/// Links `objectPath` into an executable or shared library at `outputPath`
/// with clang++ and lld: the runtime (and its main for executables), libomp
/// and libm. clang++ is $SEQC_CXX, else the clang++ of the LLVM seqc was
/// built with, else clang++-22 or clang++ on PATH.
llvm::Error linkModel(llvm::StringRef objectPath, llvm::StringRef outputPath,
                      bool sharedLibrary, const LinkOptions &options);

/// The whole back end: checks `options` (verifyCompileOptions), lowers
/// `module` and writes what `options.emit` asks for: text and objects to
/// `os`, executables and shared libraries to `options.outputPath` (`os` is
/// then unused). EmitKind::Seq prints the module unchanged, Manifest its
/// manifest as the pipeline embeds it.
LogicalResult compileModule(ModuleOp module, const CompileOptions &options,
                            llvm::raw_ostream &os);

/// compileModule for a model with several entries (importSeqEntries):
/// `modules[i]` is entry `names[i]`, the default entry first. Each entry is
/// lowered alone; their LLVM modules are linked into one, where entry i > 0
/// defines `seqc_invoke_<name>`, `seqc_prepare_<name>` and
/// `seqc_release_<name>`, the default entry the unsuffixed symbols, and
/// `seqc_entries` lists them all (docs/abi.md, "Entries"). The manifest is
/// toManifestJSON of all the entries. The textual kinds print each entry's
/// module after a `// entry '<name>'` line. One module is compileModule.
LogicalResult compileEntries(ArrayRef<ModuleOp> modules,
                             ArrayRef<std::string> names,
                             const CompileOptions &options,
                             llvm::raw_ostream &os);

} // namespace seq
} // namespace mlir

#endif // SEQC_LOWERING_COMPILE_H
