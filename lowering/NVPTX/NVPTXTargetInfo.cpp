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
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
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

void NVPTXTargetInfo::addSeqTransforms(
    OpPassManager &pm, const SeqPipelineOptions &options) const {
  if (options.optLevel < 2)
    return;
  SeqRaiseAttentionOptions raise;
  raise.remarks = options.remarks;
  pm.addPass(createSeqRaiseAttention(raise));
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
  pm.addPass(createSeqTileAttention(tile));
  SeqReassociateLinearAttentionOptions reassociate;
  reassociate.remarks = options.remarks;
  pm.addPass(createSeqReassociateLinearAttention(reassociate));
}

TargetInfoBase::ConversionStrategy NVPTXTargetInfo::getConversionStrategy(
    const SeqPipelineOptions &options) const {
  // The reference forms: their parallel dimensions become threads.
  return {};
}

void NVPTXTargetInfo::addTensorTransforms(
    OpPassManager &pm, const SeqPipelineOptions &options) const {}

void NVPTXTargetInfo::addBufferLowering(
    OpPassManager &pm, const SeqPipelineOptions &options) const {
  // Every level maps parallel loops to kernels: -O0 is the reference
  // lowering of each op, still run on the GPU.
  pm.addPass(createForallToParallelLoopPass());
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
  std::string toolkit = getCUDAToolkitPath(options);

  // Kernels move into gpu.modules, which are compiled for the GPU.
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createSeqNVPTXMergeKernelModules());
  GpuNVVMAttachTargetOptions attach;
  attach.chip = options.gpuArch;
  attach.features = "+ptx80";
  attach.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(attach));
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createLowerAffinePass());
  device.addPass(arith::createArithExpandOpsPass());
  device.addPass(createSCFToControlFlowPass());
  device.addPass(createSeqLowerDynamicExpandShape());
  device.addPass(memref::createExpandStridedMetadataPass());
  device.addPass(createLowerAffinePass());
  // Memrefs, arith, cf and the gpu ops to NVVM; math ops to libdevice's
  // __nv_* functions, which gpu-module-to-binary links from the toolkit.
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  device.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = toolkit;
  binary.compilationTarget = options.gpuBinary == "ptx" ? "isa"
                             : options.gpuBinary == "cubin"
                                 ? "bin"
                                 : "fatbin";
  pm.addPass(createGpuModuleToBinaryPass(binary));

  // The host: as on the CPU, without OpenMP and vector intrinsics, and with
  // the launches calling the runtime's mgpu* functions.
  pm.addPass(createLowerAffinePass());
  pm.addPass(arith::createArithExpandOpsPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createSeqLowerDynamicExpandShape());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = options.runtimeAllocator;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createSeqNVPTXCheckLowered());
}
