//===- Pipelines.cpp - seq compilation pipelines --------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The stage order is documented on buildSeqToLLVMPipeline (Pipelines.h) and
// in docs/pipeline.md. The target-independent stages live here; the
// target-specific ones are TargetInfoBase hooks (lowering/CPU/,
// lowering/NVPTX/), which share steps of lowering/Common/.
//
//===----------------------------------------------------------------------===//

#include "lowering/Pipelines.h"
#include "lowering/CPU/CPUTargetInfo.h"
#include "lowering/CPU/Passes.h"
#include "lowering/Common/Passes.h"
#include "lowering/Entry/Entry.h"
#include "lowering/NVPTX/NVPTXTargetInfo.h"
#include "lowering/NVPTX/Passes.h"
#include "lowering/SeqToLinalg/Passes.h"
#include "passes/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::seq;

//===----------------------------------------------------------------------===//
// Targets
//===----------------------------------------------------------------------===//

const TargetInfoBase &mlir::seq::getTargetInfo(SeqTarget target) {
  switch (target) {
  case SeqTarget::CPU: {
    static const CPUTargetInfo cpu;
    return cpu;
  }
  case SeqTarget::NVPTX: {
    static const NVPTXTargetInfo nvptx;
    return nvptx;
  }
  }
  llvm_unreachable("unknown SeqTarget");
}

std::string mlir::seq::getManifestTarget(const SeqPipelineOptions &options) {
  return getTargetInfo(options.target).getManifestTarget(options);
}

std::optional<SeqTarget> mlir::seq::parseSeqTarget(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<SeqTarget>>(name)
      .Case("cpu", SeqTarget::CPU)
      .Case("nvptx", SeqTarget::NVPTX)
      .Default(std::nullopt);
}

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

SeqPipelineOptions SeqLowerToLLVMPipelineOptions::toOptions() const {
  SeqPipelineOptions options = SeqCommonPipelineOptions::toOptions();
  options.enableOpenMP = enableOpenMP;
  options.minParallelWork = minParallelWork;
  options.threadTeam = threadTeam;
  options.emitEntry = emitEntry;
  options.vectorBits = vectorBits;
  options.vectorRegisters = vectorRegisters;
  options.f16c = f16c;
  options.bf16Dot = bf16Dot;
  options.streamingStoreBytes = streamingStoreBytes;
  options.vnniBits = vnniBits;
  options.int8Activations = int8Activations;
  options.runtimeAllocator = runtimeAllocator;
  options.remarks = remarks;
  options.outlineKernels = outlineKernels;
  options.foldLayers = foldLayers;
  options.gpuArch = gpuArch;
  options.gpuBinary = gpuBinary;
  options.cudaPath = cudaPath;
  options.gpuBlockSize = gpuBlockSize;
  options.gpuInterpret = gpuInterpret;
  options.gpuInterpretReverse = gpuInterpretReverse;
  options.gpuTF32 = gpuTF32;
  return options;
}

llvm::Error mlir::seq::verifyPipelineOptions(const SeqPipelineOptions &options) {
  if (options.optLevel > kMaxOptLevel)
    return llvm::createStringError(
        "optimization level " + llvm::Twine(options.optLevel) +
        " is out of range (0 to " + llvm::Twine(kMaxOptLevel) + ")");
  if (options.tensorParallel < 1)
    return llvm::createStringError(
        "--tensor-parallel=" + llvm::Twine(options.tensorParallel) +
        " is not a process count (expected 1 or more)");
  if (options.target != SeqTarget::NVPTX)
    return llvm::Error::success();
  if (options.tensorParallel > 1)
    return llvm::createStringError(
        "--tensor-parallel is not supported on the NVPTX target yet (its "
        "collectives would go through NCCL: docs/distributed.md)");
  llvm::StringRef arch = options.gpuArch;
  unsigned version = 0;
  if (!arch.consume_front("sm_") || arch.getAsInteger(10, version) ||
      version < 50)
    return llvm::createStringError(
        "'" + options.gpuArch +
        "' is not a GPU architecture for --gpu-arch (expected sm_NN, e.g. "
        "sm_80 or sm_90)");
  if (options.gpuBinary != "fatbin" && options.gpuBinary != "cubin" &&
      options.gpuBinary != "ptx")
    return llvm::createStringError("'" + options.gpuBinary +
                                   "' is not a kernel format for --gpu-binary "
                                   "(fatbin, cubin or ptx)");
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Pipelines
//===----------------------------------------------------------------------===//

/// Whether the layers are folded before bufferization (seq-fold-layers on
/// tensors, then on buffers before the deallocation passes): from -O1, on
/// the targets that fold layers.
static bool foldsLayersOnTensors(const SeqPipelineOptions &options) {
  return options.emitEntry && options.foldLayers && options.optLevel >= 1 &&
         options.target != SeqTarget::NVPTX;
}

/// seqc's check at the end of `stage` (SeqPipelineOptions::verifyStages).
static void addStageVerifier(OpPassManager &pm,
                             const SeqPipelineOptions &options,
                             llvm::StringRef stage) {
  if (options.verifyStages)
    pm.addPass(seq::createSeqVerify({stage.str()}));
}

void mlir::seq::buildSeqPartitionPipeline(OpPassManager &pm,
                                          const SeqPipelineOptions &options) {
  if (options.tensorParallel <= 1)
    return;
  // The partitioning matches the primitive ops (projections, split_heads,
  // attention), whatever composite op wrote them.
  pm.addPass(seq::createSeqDecompose());
  SeqTensorParallelOptions partition;
  partition.ranks = options.tensorParallel;
  partition.remarks = options.remarks;
  pm.addPass(seq::createSeqTensorParallel(partition));
  addStageVerifier(pm, options, "tensor-parallel partitioning");
}

/// Adds a seq-fold-layers on tensors: each group of twin layers becomes one
/// function, which the passes up to the matching seq-inline-layers see
/// once.
static void addLayerOutlining(OpPassManager &pm) {
  SeqFoldLayersOptions outline;
  outline.onTensors = true;
  pm.addPass(createSeqFoldLayers(outline));
}

/// The seq-level stage and the conversion to linalg; with `outlineLayers`,
/// the conversion and the canonicalization and CSE after it see each group
/// of twin layers once (docs/pipeline.md, stage 4b).
static void buildSeqToLinalgStage(OpPassManager &pm,
                                  const SeqPipelineOptions &options,
                                  bool outlineLayers) {
  // The seq-level stage. Composite ops become primitive seq ops at every
  // level: the conversion only knows those.
  // No canonicalization between the decomposition and the conversion's (nor
  // after the elementwise fusion, expand-realloc or the conversion of the
  // clones): they changed nothing and each walked the whole model
  // (docs/pipeline.md, stage 3c).
  pm.addPass(seq::createSeqDecompose());
  if (options.optLevel >= 1) {
    // Models repeat subexpressions (linear attention's feature map applied
    // twice to the same queries); merged while they are still seq ops, they
    // are converted once and the target's transforms see each one once.
    pm.addPass(createCSEPass());
    getTargetInfo(options.target).addSeqTransforms(pm, options);
  }

  if (outlineLayers)
    addLayerOutlining(pm);
  ConvertSeqToLinalgOptions conversion =
      getTargetInfo(options.target).getConversionStrategy(options);
  conversion.remarks = options.remarks;
  pm.addPass(seq::createConvertSeqToLinalg(conversion));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  addStageVerifier(pm, options, "seq-to-linalg");
  // Back in place for the preparation, which hoists what the layers compute
  // from parameters alone out of the model function; CSE merges again what
  // the layers compute alike (a table of the weights they share), which the
  // preparation would otherwise compute once per layer.
  if (outlineLayers) {
    pm.addPass(createSeqInlineLayers());
    pm.addPass(createCSEPass());
  }
}

void mlir::seq::buildSeqToLinalgPipeline(OpPassManager &pm,
                                         const SeqPipelineOptions &options) {
  buildSeqToLinalgStage(pm, options, /*outlineLayers=*/false);
}

void mlir::seq::buildSeqBufferizationPipeline(
    OpPassManager &pm, const SeqPipelineOptions &options) {
  // One tensor.empty per layer: CSE merged the equal ones of every layer,
  // and the analyses below grow with the square of their uses.
  pm.addPass(seq::createSeqSplitEmptyTensors());
  bool foldLayers = foldsLayersOnTensors(options);
  // Rewrites `tensor.empty` destinations into the tensors they end up being
  // inserted into, so that more ops write their results in place.
  if (options.optLevel >= 1)
    pm.addPass(bufferization::createEmptyTensorEliminationPass());

  // Function boundaries are bufferized too: the model function then takes
  // and returns memrefs with identity layouts, which is what the C interface
  // and docs/abi.md describe (a descriptor per tensor, row-major strides for
  // arguments). Results are fresh allocations (memref.alloc, lowered to
  // malloc), or arguments when a result is an input or a weight.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  if (foldLayers)
    pm.addPass(createSeqInlineLayers());
  pm.addPass(createCanonicalizerPass());
  if (foldLayers) {
    // As soon as the model is on buffers, unless a layer's function would
    // return a buffer (then the run changes nothing): the deallocation
    // passes below see each layer once (at GPT-2 width and depth 96 they
    // took 1 s per entry on the unrolled layers). Their functions free what
    // they allocate for themselves, the model function what the layers
    // share at its end, where the memory plan (stage 6b) overlaps them by
    // their uses. -O0, which keeps one allocation per buffer, and the layers
    // left here fold at stage 5b, after the deallocation passes
    // (docs/pipeline.md).
    SeqFoldLayersOptions fold;
    fold.remarks = options.remarks;
    fold.beforeDeallocation = true;
    pm.addPass(createSeqFoldLayers(fold));
  }

  // Ownership-based deallocation frees every buffer that does not escape.
  // The model function is public, so it must hand ownership of its results
  // to the caller: a result whose ownership is not statically known (it may
  // alias an argument) is cloned, and returned buffers are never freed.
  // Upstream's buffer-deallocation-pipeline with seq-split-deallocs before
  // the simplification (which compares every pair of the memrefs of a
  // dealloc: all the buffers of the model function, in one).
  pm.addNestedPass<func::FuncOp>(
      memref::createExpandReallocPass({/*emitDeallocs=*/false}));
  pm.addNestedPass<func::FuncOp>(
      bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(seq::createSeqSplitDeallocs());
  pm.addNestedPass<func::FuncOp>(
      bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addNestedPass<func::FuncOp>(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  // bufferization.clone -> memref.alloc + memref.copy, dealloc -> memref.
  pm.addPass(createConvertBufferizationToMemRefPass());
  addStageVerifier(pm, options, "bufferization");
}

void mlir::seq::buildSeqPreparationPipeline(OpPassManager &pm,
                                            const SeqPipelineOptions &options) {
  if (options.optLevel >= 2) {
    // Computations on parameters alone (the target's packed layouts among
    // them) move into the preparation function, before fusion can merge
    // them into per-call loops. Without the entry points (seq-opt's
    // emit-entry=false) both steps do nothing.
    getTargetInfo(options.target).addParameterLayouts(pm, options);
    SeqHoistPreparationOptions hoist;
    hoist.remarks = options.remarks;
    pm.addPass(createSeqHoistPreparation(hoist));
    pm.addPass(createCanonicalizerPass());
  }
}

void mlir::seq::buildSeqManifestPipeline(OpPassManager &pm,
                                         const SeqPipelineOptions &options) {
  buildSeqPartitionPipeline(pm, options);
  pm.addPass(createSeqBuildManifest({/*target=*/getManifestTarget(options)}));
  buildSeqToLinalgPipeline(pm, options);
  buildSeqPreparationPipeline(pm, options);
}

/// The tensor stage; with `outlineLayers`, the repeated layers are outlined
/// once their preparation is hoisted, for seq-inline-layers to inline back
/// after bufferization.
static void buildTensorStage(OpPassManager &pm,
                             const SeqPipelineOptions &options,
                             bool outlineLayers) {
  buildSeqToLinalgStage(pm, options, outlineLayers);
  buildSeqPreparationPipeline(pm, options);
  // From here to bufferization (the elementwise fusion, the target's tensor
  // transforms, the elimination of empty tensors and One-Shot
  // bufferization, whose analyses cost the most per layer) each group of
  // twin layers is seen once, as a function bufferized across its boundary,
  // whose body seq-inline-layers puts back in each caller's place right
  // after (docs/pipeline.md, stage 4b).
  if (outlineLayers)
    addLayerOutlining(pm);
  if (options.optLevel >= 1) {
    // Producer-consumer fusion of elementwise linalg.generic ops: chains of
    // activations, residual adds and scalings become one loop nest each.
    pm.addPass(createLinalgElementwiseOpFusionPass());
    pm.addPass(createCSEPass());
  }
  getTargetInfo(options.target).addTensorTransforms(pm, options);
  addStageVerifier(pm, options, "tensor");
}

void mlir::seq::buildSeqToTensorPipeline(OpPassManager &pm,
                                         const SeqPipelineOptions &options) {
  buildTensorStage(pm, options, /*outlineLayers=*/false);
}

void mlir::seq::buildSeqToLLVMPipeline(OpPassManager &pm,
                                       const SeqPipelineOptions &options) {
  const TargetInfoBase &target = getTargetInfo(options.target);

  buildSeqPartitionPipeline(pm, options);
  // First, while the function type still has tensors with their element
  // types and dynamic dimensions.
  if (options.emitEntry)
    pm.addPass(createSeqBuildManifest({/*target=*/getManifestTarget(options)}));

  buildTensorStage(pm, options, foldsLayersOnTensors(options));
  buildSeqBufferizationPipeline(pm, options);
  if (options.emitEntry && options.foldLayers) {
    // On buffers, before the target's kernels: the kernels, the memory
    // plan and everything after them see each repeated layer once.
    SeqFoldLayersOptions fold;
    // -O0, the reference, asks for no optimized form and hears nothing.
    fold.remarks = options.remarks && options.optLevel >= 1;
    if (options.target == SeqTarget::NVPTX)
      fold.unsupported = "the NVPTX target";
    pm.addPass(createSeqFoldLayers(fold));
  }
  target.addBufferLowering(pm, options);
  if (options.emitEntry && options.optLevel >= 1) {
    // The intermediates of the model function share one arena planned from
    // their lifetimes, allocated once per loaded model (docs/abi.md); each
    // folded layer's own intermediates a slice of it per call. -O0, the
    // reference, keeps one allocation per buffer.
    SeqPlanMemoryOptions plan;
    plan.remarks = options.remarks;
    plan.dims.assign(options.memoryPlanDims.begin(),
                     options.memoryPlanDims.end());
    pm.addPass(createSeqPlanMemory(plan));
    // The plan's size arithmetic is built from the function's arguments once
    // per folded layer's call and again for @__seqc_arena_bytes: the same
    // expressions, 50K ops in the model function and 25K in the bytes
    // function of a 96-layer GPT, merged here instead of in every pass up
    // to the LLVM dialect's CSE (docs/pipeline.md, stage 6b).
    pm.addPass(createCSEPass());
  }
  addStageVerifier(pm, options, "buffer");
  target.addLLVMConversion(pm, options);

  if (options.emitEntry)
    pm.addPass(createSeqEmitInvoke());
  addStageVerifier(pm, options, "LLVM dialect conversion");
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

/// Registers a pipeline whose textual `Options` are checked with
/// verifyPipelineOptions before `build` runs, as seqc's flags are.
template <typename Options>
static void registerSeqPipeline(
    llvm::StringRef argument, llvm::StringRef description,
    void (*build)(OpPassManager &, const SeqPipelineOptions &)) {
  registerPassPipeline(
      argument, description,
      [build](OpPassManager &pm, llvm::StringRef text,
              llvm::function_ref<LogicalResult(const llvm::Twine &)>
                  errorHandler) -> LogicalResult {
        Options textual;
        if (failed(textual.parseFromString(text)))
          return failure();
        SeqPipelineOptions options = textual.toOptions();
        if (llvm::Error error = verifyPipelineOptions(options))
          return errorHandler(llvm::toString(std::move(error)));
        build(pm, options);
        return success();
      },
      [](llvm::function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(Options());
      });
}

void mlir::seq::registerLoweringPipelines() {
  registerSeqLoweringCommonPasses();
  registerSeqCPUPasses();
  registerSeqNVPTXPasses();
  registerSeqEntryPasses();

  registerSeqPipeline<SeqLowerToLinalgPipelineOptions>(
      "seq-lower-to-linalg",
      "Decompose seq ops, run the seq-level transforms of the opt-level and "
      "target, and lower them to linalg on tensors",
      buildSeqToLinalgPipeline);
  registerSeqPipeline<SeqLowerToLLVMPipelineOptions>(
      "seq-lower-to-llvm",
      "Lower a module of seq ops to the LLVM dialect: linalg, bufferization, "
      "loops (OpenMP at opt-level>=1), LLVM conversions and the model entry "
      "points",
      buildSeqToLLVMPipeline);
}
