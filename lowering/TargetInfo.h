//===- TargetInfo.h - target hooks of the seq lowering ----------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The lowering from `seq` to the LLVM dialect is one pipeline with a few
// target-specific steps. The conversion to linalg on tensors, and the
// bufferization that follows, is shared; which seq-level rewrites pay (and
// with which tile sizes), how the tensor program is tiled, how buffers become
// loops (host threads, GPU blocks) and which conversions reach the LLVM
// dialect differ per target. Those steps are the virtual hooks
// of TargetInfoBase, in the spirit of triton's TargetInfoBase: the pipeline
// in Pipelines.cpp calls them in a fixed order and never inspects the target
// itself.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_TARGETINFO_H
#define SEQC_LOWERING_TARGETINFO_H

#include "lowering/PipelineOptions.h"
#include "lowering/SeqToLinalg/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>

namespace mlir {
namespace seq {

/// The target-specific steps of the seq-to-LLVM pipeline. Implementations are
/// stateless; the options of one compilation arrive as arguments.
class TargetInfoBase {
public:
  virtual ~TargetInfoBase() = default;

  /// A short lowercase name ("cpu") used in diagnostics and documentation.
  virtual llvm::StringRef getName() const = 0;

  /// The device the manifest names (docs/abi.md), which tells the runtime
  /// what to set up when the model loads; the target's name by default.
  virtual std::string
  getManifestTarget(const SeqPipelineOptions &options) const {
    return getName().str();
  }

  /// Transformations of `seq` ops into `seq` ops, after seq-decompose and
  /// before convert-seq-to-linalg; only called at -O1 and above. This is
  /// where rewrites that need the ops' structure run: attention fusion, the
  /// classification of `#seq.mask` tiles and the reassociation of linear
  /// attention exist only here, since after the conversion a mask is an arith
  /// predicate inside a linalg.generic. The target chooses the strategy (which
  /// transforms, which tile sizes) and passes it to transforms that apply what
  /// they are given (passes/Transforms.h).
  virtual void addSeqTransforms(OpPassManager &pm,
                                const SeqPipelineOptions &options) const = 0;

  /// The fused forms convert-seq-to-linalg uses, as the pass's options
  /// (lowering/SeqToLinalg/Passes.td; 0 or false: the reference lowering of
  /// that op): the vector lanes of the fused selective scan
  /// (`scan-vector-lanes`) and whether its exp scales with vscalefps
  /// (`scan-scalef`), whether rope, conv1d and the row ops take their row
  /// forms (`row-forms`), and the tokens per chunk of the chunked causal
  /// linear attention (`linear-attention-chunk`). The pipeline sets
  /// `remarks` from `options`.
  using ConversionStrategy = ConvertSeqToLinalgOptions;
  virtual ConversionStrategy
  getConversionStrategy(const SeqPipelineOptions &options) const {
    return {};
  }

  /// Layouts of the parameters the target's kernels read (packed panels),
  /// on linalg on tensors before elementwise fusion; only called at -O2 and
  /// above. seq-hoist-preparation runs next and moves whatever depends on
  /// parameters alone into the preparation function (docs/abi.md), so a
  /// layout built here costs once per set of weights, not per call.
  virtual void addParameterLayouts(OpPassManager &pm,
                                   const SeqPipelineOptions &options) const {}

  /// Transformations on linalg-on-tensors after fusion and before
  /// bufferization: tiling, packing and distribution decisions are made here,
  /// where they can still create new tensors freely.
  virtual void addTensorTransforms(OpPassManager &pm,
                                   const SeqPipelineOptions &options) const = 0;

  /// Lowers the bufferized program (linalg on memrefs, with allocations and
  /// deallocations explicit) to loops and the target's parallel constructs.
  virtual void addBufferLowering(OpPassManager &pm,
                                 const SeqPipelineOptions &options) const = 0;

  /// Converts the loop program to the LLVM dialect. Afterwards only ops that
  /// have an LLVM IR translation may remain, and no unrealized casts.
  virtual void addLLVMConversion(OpPassManager &pm,
                                 const SeqPipelineOptions &options) const = 0;
};

/// Returns the hooks of `target`. The objects are immutable singletons.
const TargetInfoBase &getTargetInfo(SeqTarget target);

/// The device the manifest of a model compiled with `options` names: the
/// target's TargetInfoBase::getManifestTarget. The pipeline's
/// seq-build-manifest and `seqc --emit=manifest` both take it from here.
std::string getManifestTarget(const SeqPipelineOptions &options);

/// Parses a target name ("cpu"); std::nullopt for an unknown name.
std::optional<SeqTarget> parseSeqTarget(llvm::StringRef name);

} // namespace seq
} // namespace mlir

#endif // SEQC_LOWERING_TARGETINFO_H
