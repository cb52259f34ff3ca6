//===- PipelineOptions.h - options of the seq pipelines ---------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// What one compilation asks of the seq pipelines. The pipeline builders
// (Pipelines.h) and the target hooks (TargetInfo.h) read these; the targets'
// libraries include this header without depending on the pipelines'.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_PIPELINEOPTIONS_H
#define SEQC_LOWERING_PIPELINEOPTIONS_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace seq {

/// The devices seqc generates code for. The enumerators double as the values
/// of the `target=` pipeline option (parseSeqTarget).
enum class SeqTarget {
  /// The host CPU: scalar loops, OpenMP across cores, LLVM's vectorizers.
  CPU,
  /// NVIDIA GPUs: kernels in PTX (lowering/NVPTX/), embedded in the host
  /// object and launched through the runtime's CUDA driver layer.
  NVPTX,
};

/// The highest optimization level; levels are 0 to kMaxOptLevel.
constexpr unsigned kMaxOptLevel = 3;

/// What a compilation asks of the seq-to-LLVM pipeline. The defaults below
/// are the only ones: seqc's flags and seq-opt's textual pipeline options
/// (Pipelines.h) take theirs from a default-constructed SeqPipelineOptions.
/// verifyPipelineOptions (Pipelines.h) checks the values.
struct SeqPipelineOptions {
  /// 0: the reference lowering (sequential loops, no fusion, no cleanup beyond
  /// what correctness needs); every other level is checked against it.
  /// 1 and above: CSE and the target's transforms on seq ops, elementwise
  /// fusion, CSE, parallel loops and OpenMP.
  /// Levels 2 and 3 currently differ only in the LLVM optimization they ask
  /// the code generator for.
  unsigned optLevel = 2;

  /// The device the tensor program runs on.
  SeqTarget target = SeqTarget::CPU;

  /// The number of processes a tensor-parallel model is split over
  /// (seq-tensor-parallel: attention by heads, MLPs column-then-row, an
  /// MPI all-reduce after each row-parallel projection); 1 compiles the
  /// model for one process.
  int64_t tensorParallel = 1;

  /// At -O1 and above, run the outermost parallel loop of each op on all
  /// cores with OpenMP. Without it, parallel loops run sequentially.
  bool enableOpenMP = true;

  /// Parallel loops whose estimated number of scalar loop iterations is below
  /// this stay sequential: a fork/join of the OpenMP team costs a few
  /// microseconds, more than a small op takes on one core. Loops with a
  /// dynamic trip count are always parallelized.
  int64_t minParallelWork = 4096;

  /// At -O2 and above with OpenMP, run the parallel loops of a function in
  /// one thread team (seq-cpu-thread-team) instead of forking and joining
  /// the team once per loop.
  bool threadTeam = true;

  /// The target's vector registers, for the register tiles of generated
  /// kernels: width in bits and count. seqc derives them from the target
  /// machine (AVX-512: 512 and 32, AVX2: 256 and 16).
  int64_t vectorBits = 256;
  int64_t vectorRegisters = 16;

  /// The target converts f16 to f32 in vector registers (x86's F16C, which
  /// every AVX2 CPU has; AArch64). seqc derives it from the target machine;
  /// the CPU's contraction kernels say in their remarks how they widen f16.
  bool f16c = true;

  /// The target multiplies pairs of bf16 into f32 accumulators in one
  /// instruction (AVX512_BF16's vdpbf16ps, on 512-bit vectors). seqc derives
  /// it from the target machine; contractions whose operands are both bf16
  /// then read the weight in k-pair panels and use it.
  bool bf16Dot = false;

  /// seqc --bf16-dot: whether bf16Dot is used where the target has
  /// AVX512_BF16. Unset, the CPU decides: not on the CPUs whose vdpbf16ps is
  /// slower than the FMAs of the widening kernels (setVectorRegisters).
  std::optional<bool> bf16DotRequest;

  /// At -O2 and above, contraction outputs of at least this many bytes are
  /// written around the caches (non-temporal stores, where the kernel
  /// writes each output vector once and the output is aligned); 0: never.
  /// seqc sets it on x86 (setVectorRegisters) unless
  /// streamingStoreBytesRequest (seqc --streaming-store-bytes) says.
  int64_t streamingStoreBytes = 0;
  std::optional<int64_t> streamingStoreBytesRequest;

  /// The widest vectors of VNNI's u8 x s8 dot product `vpdpbusd` on the
  /// target: 512 (AVX512_VNNI and AVX512BW, with 512-bit vectors), 256
  /// (AVX-VNNI, or AVX512_VNNI with AVX512VL), 0 (none). seqc derives it from
  /// the target machine.
  int64_t vnniBits = 0;

  /// On VNNI targets, at -O1 and above: the activations of q8_0, q4_0, q4_1
  /// and int8 (rows of whole blocks of 32) contractions are quantized per block
  /// of 32 to int8 with an f16 scale, once per row (llama.cpp's q8_0
  /// activations, its numerics), and the blocks multiplied with `vpdpbusd`
  /// instead of the weights dequantized to f32 (docs/pipeline.md, stage 6). The
  /// default, as in llama.cpp: decode's matrix-vector products are 1.3-2.4x
  /// faster (docs/performance.md), and the results differ from the f32
  /// reference by the activations' quantization, not only by rounding. Off
  /// (`--int8-activations=false`) keeps f32 activations; without VNNI they stay
  /// too.
  bool int8Activations = true;

  /// At -O1 and above, outline the loop nests that occur several times (the
  /// kernels of repeated layers) into one function each, called where they
  /// were (seq-cpu-outline-kernels): less code for LLVM to optimize and
  /// generate, the same ops at run time.
  bool outlineKernels = true;

  /// Compile the repeated layers of the model once, as a function called
  /// for each layer with its weights (seq-fold-layers): the code of the
  /// model function no longer grows with the depth. The CPU target folds at
  /// every level; NVPTX keeps its layers unrolled.
  bool foldLayers = true;

  /// NVPTX: the GPU architecture the kernels are compiled for ("sm_80").
  std::string gpuArch = "sm_80";

  /// NVPTX: how the kernels are embedded. "fatbin": assembled by ptxas for
  /// gpuArch, with their PTX for later GPUs (needs the CUDA toolkit at
  /// compile time); "ptx": PTX text, compiled by the driver when the model
  /// loads; "cubin": assembled for gpuArch alone.
  std::string gpuBinary = "fatbin";

  /// NVPTX: the CUDA toolkit (libdevice, ptxas, fatbinary); empty for
  /// $CUDA_HOME, else /usr/local/cuda.
  std::string cudaPath;

  /// NVPTX: run the kernels on the host instead, each launch a loop over
  /// its blocks and threads (seq-nvptx-launch-to-loops), linked like a CPU
  /// model: the GPU target's strategy and mapping, checked numerically on
  /// machines without a GPU (as Triton's interpreter mode does).
  bool gpuInterpret = false;

  /// NVPTX with gpuInterpret: run the threads of each phase of a kernel
  /// from the last to the first (`reverse-threads` of
  /// seq-nvptx-launch-to-loops), which exposes a missing barrier.
  bool gpuInterpretReverse = false;

  /// NVPTX at -O2: f32 contractions on tensor cores as tf32 products (the
  /// inputs' mantissas cut to 10 bits, as PyTorch's allow_tf32), not only
  /// bf16 and f16 ones.
  bool gpuTF32 = false;

  /// NVPTX: threads per block of the kernels mapped from parallel loops.
  int64_t gpuBlockSize = 256;

  /// Emit a remark at every op that does not get the fused or vectorized
  /// form of its level (a fallback to a slower path), saying why.
  bool remarks = false;

  /// Allocate buffers through the runtime (`_mlir_memref_to_llvm_alloc`,
  /// `_mlir_memref_to_llvm_free`, defined by runtime/lib/Buffers.cpp), which
  /// reuses large buffers across runs, instead of malloc/free. seqc sets it:
  /// its models always link the runtime. Off for modules run without it
  /// (mlir-runner in the lit tests).
  bool runtimeAllocator = false;

  /// Symbolic input sizes ("n=512") at which seq-plan-memory evaluates the
  /// report of a plan of dynamic sizes (`seqc --emit=memory-plan`).
  std::vector<std::string> memoryPlanDims;

  /// Build the ABI entry points of docs/abi.md (`seqc_manifest`,
  /// `seqc_invoke`) for the model function the frontend marked. Off for
  /// modules that are libraries of plain functions (most lit tests).
  bool emitEntry = true;

  /// Verify the IR at the end of each stage of the pipeline (seq-verify).
  /// seqc sets it unless `--verify-each` has its pass manager verify after
  /// every pass instead (runLoweringPipelines); seq-opt verifies after every
  /// pass already.
  bool verifyStages = false;
};

} // namespace seq
} // namespace mlir

#endif // SEQC_LOWERING_PIPELINEOPTIONS_H
