//===- Transforms.h - transformations of the NVPTX target -------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Library entry points of seq-nvptx-map-to-gpu, usable without the pass:
// copies to parallel loops, the fusion of adjacent parallel loops, the
// private buffers of a kernel's threads and the mapping of one parallel loop
// to a GPU launch. Each rewrite has a precondition and fails, changing
// nothing, where it does not hold.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_NVPTX_TRANSFORMS_H
#define SEQC_LOWERING_NVPTX_TRANSFORMS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir {
namespace seq {

/// Rewrites `copy` into an scf.parallel over its shape of element loads and
/// stores (one load and one store for rank 0), which mapParallelLoopToLaunch
/// turns into a kernel, or which runs in the enclosing thread. Returns the op
/// that replaced the copy; fails, changing nothing, on unranked operands.
FailureOr<Operation *> lowerCopyToParallelLoop(RewriterBase &rewriter,
                                               memref::CopyOp copy);

/// Moves each memref.alloc of `block` up to just after the definitions of its
/// sizes, so that the loops between which bufferization placed it become
/// adjacent. A buffer's life in the memory plan starts at its first use, not
/// at its allocation, so this costs no memory.
void hoistAllocations(RewriterBase &rewriter, Block &block);

/// Whether fuseAdjacentParallelLoops applies to `region`: none of its
/// scf.parallel ops has results. A parallel reduction stays on the host, and
/// a kernel fused with it would too.
LogicalResult fuseAdjacentParallelLoopsPrecondition(Region &region);

/// Fuses the adjacent scf.parallel ops of `region` that have the same
/// iteration space and where the second reads what the first wrote only at
/// the same iteration (scf's naive fusion, with a fresh allocation aliasing
/// nothing but its views): one kernel instead of two, such as a copy of an
/// initialized buffer and the reduction into it. Returns how many loops were
/// fused into the loop before them; fails, changing nothing, where the
/// precondition does not hold.
FailureOr<unsigned> fuseAdjacentParallelLoops(Region &region);

/// Fuses adjacent parallel loops everywhere under `root` outside scf.parallel
/// and gpu.launch ops: allocations move out from between the loops
/// (hoistAllocations), equal bounds become the same values (CSE of `root`),
/// then each region meeting the precondition is fused. Returns how many loops
/// were fused away.
unsigned fuseAdjacentParallelLoopsIn(RewriterBase &rewriter, Operation *root);

/// Whether privatizeAllocations applies to `loop`: every memref.alloc in its
/// body has an identity layout, integer or float elements, and a static
/// shape, or dynamic sizes with constant upper bounds (a tile clipped at an
/// edge, `minui(n - i, 64)`), of at most 64 KiB.
LogicalResult privatizeAllocationsPrecondition(scf::ParallelOp loop);

/// Turns the allocations of `loop`'s body into private buffers
/// (memref.alloca) of the thread running an iteration; their deallocations
/// go away with them. A buffer of dynamic shape is a memref.view of a private
/// byte buffer of its largest size. Returns how many buffers became private;
/// fails, changing nothing, where the precondition does not hold.
FailureOr<unsigned> privatizeAllocations(RewriterBase &rewriter,
                                         scf::ParallelOp loop);

/// Whether mapParallelLoopToLaunch applies to `loop`: it has no results, and
/// its body holds no parallel reduction, no call, no memref.alloca_scope, no
/// read of a buffer on the host's stack and no allocation that
/// privatizeAllocations cannot make private. On failure, `reason` (when
/// given) says why the loop stays on the host.
LogicalResult
mapParallelLoopToLaunchPrecondition(scf::ParallelOp loop,
                                    std::string *reason = nullptr);

/// Replaces `loop` by a gpu.launch of ceil(iterations / blockSize) blocks of
/// `blockSize` threads, each running one iteration of the linearized
/// iteration space (innermost dimension fastest), guarded against the
/// partial last block, and skipped when there are no iterations. Parallel
/// loops nested in the body become scf.for nests run by the thread, its
/// allocations private buffers (privatizeAllocations), and the constant
/// globals it reads are read from inside the kernel. Returns the launch;
/// fails, changing nothing, where the precondition does not hold or
/// `blockSize` is not between 1 and 1024.
FailureOr<gpu::LaunchOp> mapParallelLoopToLaunch(RewriterBase &rewriter,
                                                 scf::ParallelOp loop,
                                                 int64_t blockSize);

/// Replaces `loop`, whose body reduces rows into memory, by a gpu.launch of
/// one block of `blockSize` threads per iteration (the rows of layer norm,
/// RMSNorm and softmax). Each top-level `scf.for` of the body that
/// accumulates into one element (`acc[I] = acc[I] combine f(k)`, I outside
/// the loop; f32 add, mul, min or max; every other read indexed by every
/// induction variable of `loop`, which a contraction's reads are not; and
/// some such loop of 32 iterations or more, or of unknown count) runs
/// strided over the threads, its
/// partial results combined by `gpu.all_reduce` and added into the element
/// by thread 0; ops that only compute or read run in every thread; the other
/// ops run in thread 0, with a barrier before and after. Fails, changing
/// nothing, where mapParallelLoopToLaunch's precondition does not hold, the
/// body has no such loop, allocates, holds a parallel loop, or uses a
/// result of an op with side effects.
FailureOr<gpu::LaunchOp> mapRowsToBlocks(RewriterBase &rewriter,
                                         scf::ParallelOp loop,
                                         int64_t blockSize);

/// Whether `value` is a constant global or a view of one: the host's address
/// of such a buffer is not the device's, so a kernel must rebuild it from the
/// GPU module's copy of the global (as mapParallelLoopToLaunch does).
bool isGlobalView(Value value);

/// Whether buildTensorCoreContraction applies to `op`, a contraction on
/// buffers with projected-permutation maps: its inputs are both bf16 or both
/// f16 (or, with `tf32`, both f32), its output f32, its body `out + extf(a)
/// * extf(b)` (f32: `out + a * b`), and no operand is a constant global. On
/// failure, `why` says why.
LogicalResult tensorCoreContractionPrecondition(linalg::LinalgOp op, bool tf32,
                                                std::string &why);

/// Replaces `op` (see the precondition) by a kernel of warp-level matrix
/// products, `nvgpu.mma.sync` m16n8k16 with f32 accumulators (f32 inputs:
/// tf32 m16n8k8, which keeps the top 10 bits of their mantissas): one block of
/// 128 threads per 64 x 64 tile of loop dimensions `mDim` x `nDim` and per
/// index of the other parallel dimensions (a linear grid, n tiles fastest).
/// Each step of the reduction `kDim` stages a 64 x 32 tile of the first
/// input and a 32 x 64 tile of the second in workgroup memory, stored along
/// each operand's innermost dimension, zeros past the edges: with cp.async
/// into two buffers, the next step's copies in flight during this step's
/// products, where every input can be copied 16 bytes at a time (known at
/// compile time, or tested on the host before the launch), else element by
/// element into one. Each warp then reads its fragments (`nvgpu.ldmatrix`,
/// or element loads for tf32) and accumulates a 32 x 32 tile, 2 x 4
/// fragments, in registers; barriers separate the copies from the reads.
/// The results are added to the output where it exists. Empty products
/// launch nothing.
gpu::LaunchOp buildTensorCoreContraction(RewriterBase &rewriter,
                                         linalg::LinalgOp op, unsigned mDim,
                                         unsigned nDim, unsigned kDim);

} // namespace seq
} // namespace mlir

#endif // SEQC_LOWERING_NVPTX_TRANSFORMS_H
