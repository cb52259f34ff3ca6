//===- NVPTXTargetInfo.h - NVPTX hooks of the seq lowering ------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_NVPTX_NVPTXTARGETINFO_H
#define SEQC_LOWERING_NVPTX_NVPTXTARGETINFO_H

#include "lowering/TargetInfo.h"

#include <string>

namespace mlir {
namespace seq {

/// NVIDIA GPUs. Parallel loops become kernels (seq-nvptx-map-to-gpu), which
/// are outlined into a gpu.module, lowered through NVVM to PTX with
/// libdevice's math, assembled by ptxas and embedded in the host object; the
/// host code launches them through the runtime's CUDA driver layer
/// (runtime/lib/Cuda.cpp) on buffers in managed memory.
class NVPTXTargetInfo final : public TargetInfoBase {
public:
  llvm::StringRef getName() const override { return "nvptx"; }
  /// "cpu" with gpuInterpret: the kernels then run on the host.
  std::string
  getManifestTarget(const SeqPipelineOptions &options) const override;
  void addSeqTransforms(OpPassManager &pm,
                        const SeqPipelineOptions &options) const override;
  ConversionStrategy
  getConversionStrategy(const SeqPipelineOptions &options) const override;
  void addTensorTransforms(OpPassManager &pm,
                           const SeqPipelineOptions &options) const override;
  void addBufferLowering(OpPassManager &pm,
                         const SeqPipelineOptions &options) const override;
  void addLLVMConversion(OpPassManager &pm,
                         const SeqPipelineOptions &options) const override;

private:
  /// The host code's conversion to the LLVM dialect.
  static void addHostConversion(OpPassManager &pm,
                                const SeqPipelineOptions &options);
};

/// The CUDA toolkit the NVPTX target compiles with (libdevice, ptxas,
/// fatbinary): options.cudaPath, else $CUDA_HOME, else /usr/local/cuda.
std::string getCUDAToolkitPath(const SeqPipelineOptions &options);

} // namespace seq
} // namespace mlir

#endif // SEQC_LOWERING_NVPTX_NVPTXTARGETINFO_H
