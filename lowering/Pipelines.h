//===- Pipelines.h - seq compilation pipelines ------------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The pass pipelines that take a module of `seq` ops to linalg and on to the
// LLVM dialect. They are plain functions over an options struct, as circt's
// firtool pipelines are, so that the `seqc` driver, `seq-opt` and tests build
// exactly the same pass lists. docs/pipeline.md describes every stage.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_PIPELINES_H
#define SEQC_LOWERING_PIPELINES_H

#include "lowering/TargetInfo.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/Support/Error.h"

namespace mlir {
namespace seq {

/// The options both textual pipelines take. Every default is that of a
/// default-constructed SeqPipelineOptions, the one place defaults are
/// written.
template <typename Derived>
struct SeqCommonPipelineOptions : public PassPipelineOptions<Derived> {
  detail::PassOptions::Option<unsigned> optLevel{
      *this, "opt-level", llvm::cl::desc("Optimization level, 0 to 3"),
      llvm::cl::init(SeqPipelineOptions().optLevel)};
  detail::PassOptions::Option<SeqTarget> target{
      *this, "target", llvm::cl::desc("Device to generate code for"),
      llvm::cl::init(SeqPipelineOptions().target),
      llvm::cl::values(clEnumValN(SeqTarget::CPU, "cpu", "the host CPU"),
                       clEnumValN(SeqTarget::NVPTX, "nvptx",
                                  "NVIDIA GPUs (PTX kernels)"))};
  detail::PassOptions::Option<int64_t> tensorParallel{
      *this, "tensor-parallel",
      llvm::cl::desc("Split the model over this many processes (MPI)"),
      llvm::cl::init(SeqPipelineOptions().tensorParallel)};

  /// The options as the pipeline builders take them.
  SeqPipelineOptions toOptions() const {
    SeqPipelineOptions options;
    options.optLevel = optLevel;
    options.target = target;
    options.tensorParallel = tensorParallel;
    return options;
  }
};

/// Textual form of the SeqPipelineOptions that the seq-to-linalg stages read,
/// for `seq-opt --seq-lower-to-linalg=...`.
struct SeqLowerToLinalgPipelineOptions
    : public SeqCommonPipelineOptions<SeqLowerToLinalgPipelineOptions> {};

/// Textual form of SeqPipelineOptions, for `seq-opt --seq-lower-to-llvm=...`.
struct SeqLowerToLLVMPipelineOptions
    : public SeqCommonPipelineOptions<SeqLowerToLLVMPipelineOptions> {
  Option<bool> enableOpenMP{
      *this, "openmp",
      llvm::cl::desc("Run parallel loops on all cores with OpenMP (-O1+)"),
      llvm::cl::init(SeqPipelineOptions().enableOpenMP)};
  Option<int64_t> minParallelWork{
      *this, "min-parallel-work",
      llvm::cl::desc("Keep parallel loops with fewer estimated scalar "
                     "iterations sequential"),
      llvm::cl::init(SeqPipelineOptions().minParallelWork)};
  Option<bool> threadTeam{
      *this, "thread-team",
      llvm::cl::desc("Run the parallel loops of a function in one OpenMP "
                     "thread team (-O2+)"),
      llvm::cl::init(SeqPipelineOptions().threadTeam)};
  Option<int64_t> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("Width of the target's vector registers in bits"),
      llvm::cl::init(SeqPipelineOptions().vectorBits)};
  Option<int64_t> vectorRegisters{
      *this, "vector-registers",
      llvm::cl::desc("Number of vector registers of the target"),
      llvm::cl::init(SeqPipelineOptions().vectorRegisters)};
  Option<bool> f16c{
      *this, "f16c",
      llvm::cl::desc("The target converts f16 to f32 in vector registers "
                     "(x86 F16C)"),
      llvm::cl::init(SeqPipelineOptions().f16c)};
  Option<bool> bf16Dot{
      *this, "bf16-dot",
      llvm::cl::desc("The target multiplies bf16 pairs into f32 "
                     "(AVX512_BF16's vdpbf16ps)"),
      llvm::cl::init(SeqPipelineOptions().bf16Dot)};
  Option<int64_t> streamingStoreBytes{
      *this, "streaming-store-bytes",
      llvm::cl::desc("Write contraction outputs of at least this many bytes "
                     "with non-temporal stores where the kernel can (-O2+; "
                     "0: never)"),
      llvm::cl::init(SeqPipelineOptions().streamingStoreBytes)};
  Option<int64_t> vnniBits{
      *this, "vnni-bits",
      llvm::cl::desc("The widest vectors of the target's VNNI vpdpbusd: 512 "
                     "(AVX512_VNNI), 256 (AVX-VNNI, or AVX512_VNNI with "
                     "AVX512VL), 0 (none)"),
      llvm::cl::init(SeqPipelineOptions().vnniBits)};
  Option<bool> int8Activations{
      *this, "int8-activations",
      llvm::cl::desc(
          "With VNNI: quantize the activations of q8_0, q4_0, q4_1 "
          "and int8 contractions to int8 per block and multiply with "
          "vpdpbusd (-O1+; the default)"),
      llvm::cl::init(SeqPipelineOptions().int8Activations)};
  Option<bool> outlineKernels{
      *this, "outline-kernels",
      llvm::cl::desc("Share the loop nests that occur several times as one "
                     "function each (-O1+)"),
      llvm::cl::init(SeqPipelineOptions().outlineKernels)};
  Option<bool> foldLayers{
      *this, "fold-layers",
      llvm::cl::desc("Compile the repeated layers of the model once, as a "
                     "function called for each layer"),
      llvm::cl::init(SeqPipelineOptions().foldLayers)};
  Option<bool> remarks{
      *this, "remarks",
      llvm::cl::desc("Remark on every op that falls back to a slower form"),
      llvm::cl::init(SeqPipelineOptions().remarks)};
  Option<bool> runtimeAllocator{
      *this, "runtime-allocator",
      llvm::cl::desc("Allocate buffers through the seqc runtime's "
                     "_mlir_memref_to_llvm_alloc/free, which reuses them"),
      llvm::cl::init(SeqPipelineOptions().runtimeAllocator)};
  Option<std::string> gpuArch{
      *this, "gpu-arch",
      llvm::cl::desc("NVPTX: GPU architecture of the kernels (sm_80, sm_90)"),
      llvm::cl::init(SeqPipelineOptions().gpuArch)};
  Option<std::string> gpuBinary{
      *this, "gpu-binary",
      llvm::cl::desc("NVPTX: embed kernels as fatbin, cubin or ptx"),
      llvm::cl::init(SeqPipelineOptions().gpuBinary)};
  Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("NVPTX: the CUDA toolkit (default $CUDA_HOME, else "
                     "/usr/local/cuda)"),
      llvm::cl::init(SeqPipelineOptions().cudaPath)};
  Option<bool> gpuInterpret{
      *this, "gpu-interpret",
      llvm::cl::desc("NVPTX: run the kernels on the host (launches become "
                     "loops), to check the GPU mapping without a GPU"),
      llvm::cl::init(SeqPipelineOptions().gpuInterpret)};
  Option<bool> gpuInterpretReverse{
      *this, "gpu-interpret-reverse",
      llvm::cl::desc("NVPTX with gpu-interpret: run each phase's threads "
                     "from the last to the first"),
      llvm::cl::init(SeqPipelineOptions().gpuInterpretReverse)};
  Option<bool> gpuTF32{
      *this, "gpu-tf32",
      llvm::cl::desc("NVPTX: f32 contractions on tensor cores as tf32 "
                     "products"),
      llvm::cl::init(SeqPipelineOptions().gpuTF32)};
  Option<int64_t> gpuBlockSize{
      *this, "gpu-block-size",
      llvm::cl::desc("NVPTX: threads per block of mapped parallel loops"),
      llvm::cl::init(SeqPipelineOptions().gpuBlockSize)};
  Option<bool> emitEntry{
      *this, "emit-entry",
      llvm::cl::desc("Emit seqc_manifest and seqc_invoke for the model "
                     "function (docs/abi.md)"),
      llvm::cl::init(SeqPipelineOptions().emitEntry)};

  /// The options as the pipeline builders take them.
  SeqPipelineOptions toOptions() const;
};

/// Checks what the pipeline builders require of `options`: an optimization
/// level from 0 to kMaxOptLevel and, for NVPTX, a GPU architecture sm_NN
/// (NN >= 50) and a kernel format the target knows; a tensor-parallel rank
/// count of at least 1, on the CPU. The error names the
/// option as seqc's flag (`--gpu-arch`), which seq-opt's pipeline options
/// spell alike. seq-opt's pipelines and seq::verifyCompileOptions call it;
/// the builders below assume it passed.
llvm::Error verifyPipelineOptions(const SeqPipelineOptions &options);

/// Stage 0 of buildSeqToLLVMPipeline, of buildSeqManifestPipeline and of
/// `seqc --emit=linalg`: with `tensorParallel` above 1, seq-decompose then
/// seq-tensor-parallel (the rank's program, before anything records the
/// parameters' types); nothing otherwise.
void buildSeqPartitionPipeline(OpPassManager &pm,
                               const SeqPipelineOptions &options);

/// Stage 2 and the conversion of stage 3 of buildSeqToLLVMPipeline: the
/// seq-level stage (composite ops into primitive seq ops; at -O1 and above,
/// CSE and the target's seq transforms, TargetInfoBase::addSeqTransforms),
/// then the conversion to linalg, tensor, arith, math and scf on tensors.
void buildSeqToLinalgPipeline(OpPassManager &pm,
                              const SeqPipelineOptions &options);

/// At -O2 and above, the target's parameter layouts and
/// seq-hoist-preparation (a step of buildSeqToTensorPipeline, after
/// buildSeqToLinalgPipeline): what the model prepares once per set of
/// weights. Nothing below -O2.
void buildSeqPreparationPipeline(OpPassManager &pm,
                                 const SeqPipelineOptions &options);

/// What `seqc --emit=manifest` runs at -O2 and above to learn which
/// parameters only the preparation reads (the manifest's
/// "prepared_only"): seq-build-manifest, buildSeqToLinalgPipeline and
/// buildSeqPreparationPipeline, the first steps of buildSeqToLLVMPipeline.
void buildSeqManifestPipeline(OpPassManager &pm,
                              const SeqPipelineOptions &options);

/// Stages 2 to 4 of buildSeqToLLVMPipeline: seq to linalg on tensors, fused
/// at -O1 and above, then the target's tensor transforms. This is what
/// `seqc --emit=linalg` prints and what every target shares.
void buildSeqToTensorPipeline(OpPassManager &pm,
                              const SeqPipelineOptions &options);

/// The whole lowering of a module of `seq` ops to the LLVM dialect; `pm` must
/// be anchored on builtin.module. Stages, in order:
///   0. (tensorParallel > 1) buildSeqPartitionPipeline;
///   1. (emitEntry) record the model's manifest, mark its C interface;
///   2. the seq-level stage: seq-decompose; (-O1+) CSE and the target's
///      seq-to-seq transforms, while `seq` ops and `#seq.mask` still exist;
///   3. convert-seq-to-linalg, canonicalize, CSE; (-O1+) elementwise fusion,
///      canonicalize, CSE;
///   4. target tensor transforms;
///   5. one-shot bufferization across function boundaries (identity layouts
///      at the boundaries), ownership-based buffer deallocation;
///   6. target buffer lowering (CPU: loops, OpenMP at -O1+);
///   7. target conversion to the LLVM dialect;
///   8. (emitEntry) the packed `seqc_invoke` wrapper.
void buildSeqToLLVMPipeline(OpPassManager &pm,
                            const SeqPipelineOptions &options);

/// The target-independent bufferization stage of buildSeqToLLVMPipeline
/// (stage 5), exposed so that target pipelines and tests can reuse it.
void buildSeqBufferizationPipeline(OpPassManager &pm,
                                   const SeqPipelineOptions &options);

/// Registers `seq-lower-to-linalg` and `seq-lower-to-llvm` with the global
/// pass registry, together with the passes they use that are defined in this
/// library (so that `--mlir-print-ir-after-all` and textual pipelines can
/// name them).
void registerLoweringPipelines();

} // namespace seq
} // namespace mlir

#endif // SEQC_LOWERING_PIPELINES_H
