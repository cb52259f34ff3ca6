//===- AsyncLaunches.cpp - a host function's launches on one stream -------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// seq-nvptx-async-launches: every gpu.launch_func of a host function becomes
// asynchronous, depending on the token of the stream it queues on; the host
// waits for the stream only before an op that may touch memory and before
// the function returns.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/Support/Debug.h"
#include "lowering/NVPTX/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define DEBUG_TYPE "seq-nvptx-async-launches"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQNVPTXASYNCLAUNCHES
#include "lowering/NVPTX/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

/// Whether `launch` waits for its kernel (what this pass queues).
static bool isSynchronous(gpu::LaunchFuncOp launch) {
  return !launch.getAsyncToken() && !launch.getAsyncObject();
}

/// Whether `op` or an op nested in it launches a kernel synchronously.
static bool holdsLaunch(Operation *op) {
  return op
      ->walk([](gpu::LaunchFuncOp launch) {
        return isSynchronous(launch) ? WalkResult::interrupt()
                                     : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether `op` may read or write memory when it runs on the host, other
/// than by launching kernels: what a queued kernel writes or reads.
/// Allocating does not count, and neither does `cf.assert` (the shape checks
/// between kernels: it reads a value, and a failing one ends the process).
/// Freeing counts, since the runtime's cache may give the block at once to
/// another thread, whose host code would not wait for this stream. An op of
/// unknown effects counts, and so does a launch that is asynchronous
/// already, on a stream of its own.
static bool touchesMemory(Operation *op) {
  if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op))
    return !isSynchronous(launch);
  if (isa<cf::AssertOp>(op))
    return false;
  bool recursive = op->hasTrait<OpTrait::HasRecursiveMemoryEffects>();
  if (auto iface = dyn_cast<MemoryEffectOpInterface>(op)) {
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    if (llvm::any_of(effects, [](const MemoryEffects::EffectInstance &e) {
          return !isa<MemoryEffects::Allocate>(e.getEffect());
        }))
      return true;
  } else if (!recursive) {
    return true;
  }
  if (!recursive)
    return false;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Operation &nested : block)
        if (touchesMemory(&nested))
          return true;
  return false;
}

namespace {
/// Queues the launches of a host function's blocks on streams. A stream is
/// the token of the `gpu.wait async` that creates it (null: none is open,
/// the next launch opens one); `gpu.wait` on it waits for its work and
/// releases it.
class LaunchQueue {
public:
  explicit LaunchQueue(MLIRContext *context)
      : rewriter(context), tokenType(gpu::AsyncTokenType::get(context)) {}

  /// Queues the launches of each block of each region of `op` on a stream of
  /// its own, waited for before the block's terminator.
  void queueRegions(Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region) {
        Value stream;
        for (Operation &nested :
             llvm::make_early_inc_range(block.without_terminator()))
          stream = queueOp(&nested, stream);
        if (stream)
          wait(block.getTerminator(), stream);
      }
  }

  /// What was done, for the debug output.
  int64_t launches = 0, streams = 0, waits = 0;

private:
  /// Queues `op` on `stream` and returns the stream open after it.
  Value queueOp(Operation *op, Value stream) {
    bool launchesInside = holdsLaunch(op);
    bool touches = touchesMemory(op);
    if (stream && touches) {
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] waits before " << op->getName() << " at "
                 << op->getLoc() << "\n");
      wait(op, stream);
      stream = Value();
    }
    if (!launchesInside)
      return stream;
    if (touches) {
      // Host code between its launches: each region queues on its own.
      queueRegions(op);
      return stream;
    }
    // Launches only (one, or conditional ones, or a host loop of them): all
    // on this stream, whichever run.
    if (!stream) {
      rewriter.setInsertionPoint(op);
      stream =
          gpu::WaitOp::create(rewriter, op->getLoc(), tokenType, ValueRange{})
              .getAsyncToken();
      ++streams;
    }
    SmallVector<gpu::LaunchFuncOp> launchOps;
    op->walk([&](gpu::LaunchFuncOp launch) {
      if (isSynchronous(launch))
        launchOps.push_back(launch);
    });
    for (gpu::LaunchFuncOp launch : launchOps)
      queueLaunch(launch, stream);
    return stream;
  }

  void queueLaunch(gpu::LaunchFuncOp launch, Value stream) {
    rewriter.setInsertionPoint(launch);
    std::optional<gpu::KernelDim3> cluster;
    if (launch.hasClusterSize())
      cluster = launch.getClusterSizeOperandValues();
    gpu::LaunchFuncOp::create(
        rewriter, launch.getLoc(), launch.getKernel(),
        launch.getGridSizeOperandValues(), launch.getBlockSizeOperandValues(),
        launch.getDynamicSharedMemorySize(), launch.getKernelOperands(),
        tokenType, ValueRange{stream}, cluster);
    rewriter.eraseOp(launch);
    ++launches;
  }

  void wait(Operation *before, Value stream) {
    rewriter.setInsertionPoint(before);
    gpu::WaitOp::create(rewriter, before->getLoc(), Type(), ValueRange{stream});
    ++waits;
  }

  IRRewriter rewriter;
  Type tokenType;
};

struct SeqNVPTXAsyncLaunchesPass
    : public mlir::seq::impl::SeqNVPTXAsyncLaunchesBase<
          SeqNVPTXAsyncLaunchesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !holdsLaunch(func))
      return;
    LaunchQueue queue(&getContext());
    queue.queueRegions(func);
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] @" << func.getSymName() << ": "
               << queue.launches << " launches on " << queue.streams
               << " streams, " << queue.waits << " waits\n");
  }
};
} // namespace
