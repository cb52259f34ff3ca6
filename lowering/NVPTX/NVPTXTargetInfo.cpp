//===- NVPTXTargetInfo.cpp - NVPTX hooks of the seq lowering --------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "lowering/NVPTX/NVPTXTargetInfo.h"
#include "lowering/NVPTX/Passes.h"
#include "lowering/Common/Passes.h"
#include "passes/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/Process.h"

using namespace mlir;
using namespace mlir::seq;

std::string mlir::seq::getCUDAToolkitPath(const SeqPipelineOptions &options) {
  if (!options.cudaPath.empty())
    return options.cudaPath;
  if (std::optional<std::string> home = llvm::sys::Process::GetEnv("CUDA_HOME");
      home && !home->empty())
    return *home;
  return "/usr/local/cuda";
}

std::string
NVPTXTargetInfo::getManifestTarget(const SeqPipelineOptions &options) const {
  return options.gpuInterpret ? "cpu" : "nvptx";
}

void NVPTXTargetInfo::addSeqTransforms(
    OpPassManager &pm, const SeqPipelineOptions &options) const {
  if (options.optLevel < 2)
    return;
  // One thread per (batch, head, query): the kernel of a query row runs the
  // online softmax over 64-key tiles whose bounds come from the mask
  // classification, so that causal and windowed attention skip the tiles
  // they mask out entirely, as on the CPU. The threads of a warp read the
  // same key and value rows (broadcast loads), and the scores of a tile
  // stay in the thread's private memory. Decode shapes with fewer units than
  // a GPU has threads split their keys into chunks of 512.
  SeqTileAttentionOptions tile;
  tile.queryBlock = 1;
  tile.keyBlock = 64;
  tile.splitUnits = 4096;
  tile.splitMinKeys = 512;
  tile.remarks = options.remarks;
  addAttentionTransforms(pm, tile);
}

TargetInfoBase::ConversionStrategy NVPTXTargetInfo::getConversionStrategy(
    const SeqPipelineOptions &options) const {
  ConversionStrategy strategy;
  if (options.optLevel < 2)
    return strategy;
  // The fused selective and S4 scans: one thread per pair of channels runs
  // the whole sequence with their states in registers (vector<2xf32>, 64-bit
  // loads of consecutive channels, coalesced across the warp's threads),
  // instead of the reference's host loop over time steps with two kernel
  // launches per step.
  strategy.scanVectorLanes = 2;
  // Causal linear attention in chunks of 64 tokens: a host loop of n / 64
  // steps of contractions (register-tiled kernels) instead of n steps of
  // rank-1 updates, each a handful of launches.
  strategy.linearAttentionChunk = 64;
  return strategy;
}

void NVPTXTargetInfo::addTensorTransforms(
    OpPassManager &pm, const SeqPipelineOptions &options) const {}

void NVPTXTargetInfo::addBufferLowering(
    OpPassManager &pm, const SeqPipelineOptions &options) const {
  // Every level maps parallel loops to kernels: -O0 is the reference
  // lowering of each op, still run on the GPU.
  pm.addPass(createForallToParallelLoopPass());
  if (options.optLevel >= 2) {
    // bf16 and f16 contractions (f32 too as tf32, on request) on tensor
    // cores from sm_80 on (bf16 mma.sync and cp.async): 64 x 64 output tiles
    // per block of four warps, each warp's 32 x 32 in mma.sync fragments.
    // The others: 4 x 4 outputs per thread, 16 accumulators and 8 loads per
    // step of the reduction instead of 2 loads per multiply-add.
    unsigned version = 0;
    StringRef(options.gpuArch).drop_front(3).getAsInteger(10, version);
    SeqNVPTXTileContractionsOptions tile;
    tile.tensorCores = version >= 80;
    tile.tf32 = options.gpuTF32;
    tile.tileM = 4;
    tile.tileN = 4;
    tile.remarks = options.remarks;
    pm.addPass(createSeqNVPTXTileContractions(tile));
  }
  pm.addPass(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createCanonicalizerPass());
  SeqNVPTXMapToGPUOptions map;
  map.blockSize = options.gpuBlockSize;
  map.remarks = options.remarks;
  pm.addPass(createSeqNVPTXMapToGPU(map));
  pm.addPass(createCanonicalizerPass());
}

void NVPTXTargetInfo::addLLVMConversion(
    OpPassManager &pm, const SeqPipelineOptions &options) const {
  if (options.gpuInterpret) {
    // The interpreter: the kernels' loops run on the host.
    SeqNVPTXLaunchToLoopsOptions interpret;
    interpret.reverseThreads = options.gpuInterpretReverse;
    pm.addPass(createSeqNVPTXLaunchToLoops(interpret));
    addHostConversion(pm, options);
    return;
  }

  // Kernels move into gpu.modules, which are compiled for the GPU.
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createSeqNVPTXMergeKernelModules());
  // The launches of a call queue on one stream, and the host waits for them
  // where its code reads what a kernel writes or writes what a kernel uses,
  // and before it returns: not once per launch.
  pm.addNestedPass<func::FuncOp>(createSeqNVPTXAsyncLaunches());
  GpuNVVMAttachTargetOptions attach;
  attach.chip = options.gpuArch;
  attach.features = "+ptx80";
  attach.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(attach));
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createSeqNVPTXLowerAllReduce());
  // Warp matrix products and fragment loads: bf16 products ours, the rest
  // MLIR's.
  device.addPass(createSeqNVPTXLowerMmaBF16());
  device.addPass(createConvertNVGPUToNVVMPass());
  // The fused scans' vector transfers become loads and stores first; their
  // vector<2xf32> arithmetic maps to LLVM vectors (64-bit loads and stores
  // in PTX).
  device.addPass(createConvertVectorToSCFPass());
  device.addPass(createConvertVectorToLLVMPass());
  addControlFlowAndDescriptorLowering(device);
  // Memrefs, arith, cf and the gpu ops to NVVM; math ops to libdevice's
  // __nv_* functions, which gpu-module-to-binary links from the toolkit.
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  device.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = getCUDAToolkitPath(options);
  binary.compilationTarget = options.gpuBinary == "ptx" ? "isa"
                             : options.gpuBinary == "cubin"
                                 ? "bin"
                                 : "fatbin";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  addHostConversion(pm, options);
}

void NVPTXTargetInfo::addHostConversion(OpPassManager &pm,
                                        const SeqPipelineOptions &options) {
  // The host: as on the CPU, without OpenMP and vector intrinsics, and with
  // the launches on LLVM values, which the translation to LLVM IR turns into
  // calls of the runtime's mgpu* functions.
  addControlFlowAndDescriptorLowering(pm);
  addMemRefToLLVMConversion(pm, options.runtimeAllocator);
  addScalarToLLVMConversion(pm);
  pm.addPass(createGpuToLLVMConversionPass());
  addFinalLLVMConversion(pm);
}
