//===- AsyncLaunches.cpp - a host function's launches on one stream -------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// seq-nvptx-async-launches: every gpu.launch_func of a host function becomes
// asynchronous, depending on the token of the stream it queues on; the host
// waits for the stream only before host code that may read what a kernel
// writes or write what a kernel uses, and before the function returns.
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

/// The buffer that the memref `value` views: through view-like ops
/// (subviews, casts, reshapes, views of the arena) to a block argument or
/// the op that made it.
static Value rootBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

/// Whether a buffer rooted at `root` is one the analysis can tell apart from
/// others: an allocation, or an argument of the function whose entry block
/// is `entry` (the runtime passes distinct buffers: each input's copy, each
/// weight, each cache, the arena).
static bool isDistinctBuffer(Value root, Block *entry) {
  if (auto arg = dyn_cast<BlockArgument>(root))
    return arg.getOwner() == entry;
  return root.getDefiningOp<memref::AllocOp>() ||
         root.getDefiningOp<memref::AllocaOp>();
}

/// For each argument of `kernel`, whether the kernel may write through it:
/// an op that declares a write or free of a view of it, or an op of unknown
/// effects that takes a view of it. Kernels reach memory only through
/// memrefs at this point of the pipeline; a write to a buffer whose origin
/// is not one of the kernel's arguments, attributions or allocations counts
/// as a write to every argument.
static SmallVector<bool> writtenArguments(gpu::GPUFuncOp kernel) {
  unsigned count = kernel.getNumArguments();
  SmallVector<bool> written(count, false);
  Block *entry = &kernel.getBody().front();
  // Marks the buffer of `value`; false if it may be any argument.
  auto mark = [&](Value value) {
    Value root = rootBuffer(value);
    if (auto arg = dyn_cast<BlockArgument>(root);
        arg && arg.getOwner() == entry) {
      // Workgroup and private attributions follow the arguments.
      if (arg.getArgNumber() < count)
        written[arg.getArgNumber()] = true;
      return true;
    }
    return isDistinctBuffer(root, entry) ||
           root.getDefiningOp<memref::GetGlobalOp>();
  };
  WalkResult result = kernel.walk([&](Operation *op) {
    if (op == kernel.getOperation() ||
        op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    auto iface = dyn_cast<MemoryEffectOpInterface>(op);
    if (!iface) {
      for (Value operand : op->getOperands())
        if (isa<BaseMemRefType>(operand.getType()) && !mark(operand))
          return WalkResult::interrupt();
      return WalkResult::advance();
    }
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    for (const MemoryEffects::EffectInstance &effect : effects) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(effect.getEffect()))
        continue;
      if (!effect.getValue() || !mark(effect.getValue()))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    written.assign(count, true);
  return written;
}

namespace {
/// The buffers of a host function that its kernels use and write.
class KernelBuffers {
public:
  explicit KernelBuffers(func::FuncOp func) : entry(&func.front()) {
    llvm::DenseMap<Operation *, SmallVector<bool>> writtenByKernel;
    func.walk([&](gpu::LaunchFuncOp launch) {
      auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      if (!kernel ||
          kernel.getNumArguments() != launch.getKernelOperands().size()) {
        anyUsed = anyWritten = true;
        return;
      }
      auto found = writtenByKernel.find(kernel);
      if (found == writtenByKernel.end())
        found =
            writtenByKernel.try_emplace(kernel, writtenArguments(kernel)).first;
      for (auto [operand, written] :
           llvm::zip(launch.getKernelOperands(), found->second)) {
        if (!isa<BaseMemRefType>(operand.getType()))
          continue;
        Value root = rootBuffer(operand);
        // A kernel operand of unknown origin may alias any buffer.
        if (!isDistinctBuffer(root, entry)) {
          anyUsed = true;
          anyWritten |= written;
          continue;
        }
        used.insert(root);
        if (written)
          this->written.insert(root);
      }
    });
  }

  /// Whether `op`, run on the host, may read a buffer that a kernel of the
  /// function writes or write (or free) one that a kernel uses. Allocating
  /// does not conflict, and neither does `cf.assert` (the shape checks
  /// between kernels: it reads a value, and a failing one ends the
  /// process). Freeing a buffer a kernel uses does, since the runtime's
  /// cache may give the block at once to another thread, whose host code
  /// would not wait for this stream. An op of unknown effects conflicts,
  /// and so does a launch that is asynchronous already, on a stream of its
  /// own.
  bool conflicts(Operation *op) const {
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op))
      return !isSynchronous(launch);
    if (isa<cf::AssertOp>(op))
      return false;
    bool recursive = op->hasTrait<OpTrait::HasRecursiveMemoryEffects>();
    if (auto iface = dyn_cast<MemoryEffectOpInterface>(op)) {
      SmallVector<MemoryEffects::EffectInstance> effects;
      iface.getEffects(effects);
      for (const MemoryEffects::EffectInstance &effect : effects)
        if (conflicts(effect))
          return true;
    } else if (!recursive) {
      return true;
    }
    if (!recursive)
      return false;
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Operation &nested : block)
          if (conflicts(&nested))
            return true;
    return false;
  }

private:
  bool conflicts(const MemoryEffects::EffectInstance &effect) const {
    if (isa<MemoryEffects::Allocate>(effect.getEffect()))
      return false;
    if (!effect.getValue())
      return true;
    Value root = rootBuffer(effect.getValue());
    if (!isDistinctBuffer(root, entry))
      return true;
    if (isa<MemoryEffects::Read>(effect.getEffect()))
      return anyWritten || written.contains(root);
    return anyUsed || used.contains(root);
  }

  Block *entry;
  /// Whether a kernel may use or write a buffer this analysis cannot tell
  /// apart (a launch whose kernel was not found, an operand of unknown
  /// origin): then every access conflicts, or every write.
  bool anyUsed = false, anyWritten = false;
  llvm::SmallDenseSet<Value> used, written;
};

/// Queues the launches of a host function's blocks on streams. A stream is
/// the token of the `gpu.wait async` that creates it (null: none is open,
/// the next launch opens one); `gpu.wait` on it waits for its work and
/// releases it.
class LaunchQueue {
public:
  explicit LaunchQueue(func::FuncOp func)
      : rewriter(func.getContext()),
        tokenType(gpu::AsyncTokenType::get(func.getContext())), buffers(func) {}

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
    bool conflicting = buffers.conflicts(op);
    if (stream && conflicting) {
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] waits before " << op->getName() << " at "
                 << op->getLoc() << "\n");
      wait(op, stream);
      stream = Value();
    }
    if (!launchesInside)
      return stream;
    if (conflicting) {
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
  KernelBuffers buffers;
};

struct SeqNVPTXAsyncLaunchesPass
    : public mlir::seq::impl::SeqNVPTXAsyncLaunchesBase<
          SeqNVPTXAsyncLaunchesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !holdsLaunch(func))
      return;
    LaunchQueue queue(func);
    queue.queueRegions(func);
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] @" << func.getSymName() << ": "
               << queue.launches << " launches on " << queue.streams
               << " streams, " << queue.waits << " waits\n");
  }
};
} // namespace
