//===- CPUTargetInfo.h - CPU hooks of the seq lowering ----------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_CPU_CPUTARGETINFO_H
#define SEQC_LOWERING_CPU_CPUTARGETINFO_H

#include "lowering/TargetInfo.h"

namespace mlir {
namespace seq {

/// The host CPU. Buffers become scalar loops that LLVM vectorizes; at -O1
/// and above the outermost parallel loop of each op is shared among the
/// cores with OpenMP (the runtime links libomp).
class CPUTargetInfo final : public TargetInfoBase {
public:
  llvm::StringRef getName() const override { return "cpu"; }
  void addSeqTransforms(OpPassManager &pm,
                        const SeqPipelineOptions &options) const override;
  ConversionStrategy
  getConversionStrategy(const SeqPipelineOptions &options) const override;
  void addParameterLayouts(OpPassManager &pm,
                           const SeqPipelineOptions &options) const override;
  void addTensorTransforms(OpPassManager &pm,
                           const SeqPipelineOptions &options) const override;
  void addBufferLowering(OpPassManager &pm,
                         const SeqPipelineOptions &options) const override;
  void addLLVMConversion(OpPassManager &pm,
                         const SeqPipelineOptions &options) const override;
};

} // namespace seq
} // namespace mlir

#endif // SEQC_LOWERING_CPU_CPUTARGETINFO_H
