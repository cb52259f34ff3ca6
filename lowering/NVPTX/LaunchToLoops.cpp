//===- LaunchToLoops.cpp - GPU launches as host loops ---------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The NVPTX target's interpreter: see the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/Support/Debug.h"
#include "lowering/NVPTX/Passes.h"

#include "mlir/IR/IRMapping.h"

#define DEBUG_TYPE "seq-nvptx-launch-to-loops"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQNVPTXLAUNCHTOLOOPS
#include "lowering/NVPTX/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

/// Returns the first op of `launch` through which its threads could
/// communicate, or nullptr.
static Operation *findCommunication(gpu::LaunchOp launch) {
  if (!launch.getWorkgroupAttributions().empty())
    return launch;
  Operation *found = nullptr;
  launch.getBody().walk([&](Operation *op) {
    if (isa<gpu::BarrierOp, gpu::ShuffleOp, gpu::SubgroupReduceOp,
            gpu::AllReduceOp>(op)) {
      found = op;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

static LogicalResult lowerLaunch(gpu::LaunchOp launch) {
  if (Operation *op = findCommunication(launch))
    return op->emitError()
           << "the GPU interpreter runs one thread after the other, so its "
              "threads cannot communicate through '"
           << op->getName() << "'";
  if (!launch.getBody().hasOneBlock())
    return launch.emitError() << "the GPU interpreter needs a launch body of "
                                 "one block (structured control flow)";
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  IRMapping mapping;
  gpu::KernelDim3 gridSize = launch.getGridSizeOperandValues();
  gpu::KernelDim3 blockSize = launch.getBlockSizeOperandValues();
  gpu::KernelDim3 gridArgs = launch.getGridSize();
  gpu::KernelDim3 blockArgs = launch.getBlockSize();
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  gpu::KernelDim3 threadIds = launch.getThreadIds();
  for (auto [arg, value] :
       llvm::zip_equal(SmallVector<Value>{gridArgs.x, gridArgs.y, gridArgs.z,
                                          blockArgs.x, blockArgs.y,
                                          blockArgs.z},
                       SmallVector<Value>{gridSize.x, gridSize.y, gridSize.z,
                                          blockSize.x, blockSize.y,
                                          blockSize.z}))
    mapping.map(arg, value);
  // Blocks z, y, x, then threads z, y, x: the innermost loop runs the
  // threads of a warp in order.
  SmallVector<std::pair<Value, Value>> loops = {
      {blockIds.z, gridSize.z},    {blockIds.y, gridSize.y},
      {blockIds.x, gridSize.x},    {threadIds.z, blockSize.z},
      {threadIds.y, blockSize.y},  {threadIds.x, blockSize.x}};
  // The private buffers of the threads (static shapes, no operands): one
  // of each, allocated before the loops, serves every thread in turn.
  SmallVector<memref::AllocaOp> privates;
  launch.getBody().walk([&](memref::AllocaOp alloca) {
    if (alloca->getNumOperands() == 0)
      privates.push_back(alloca);
  });
  for (memref::AllocaOp alloca : privates)
    alloca->moveBefore(launch);
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] the launch at " << loc
                          << " becomes loops over its blocks and threads; "
                          << "private buffers allocated once for all threads: "
                          << privates.size() << "\n");
  for (auto [id, count] : loops) {
    auto loop = scf::ForOp::create(b, loc, zero, count, one);
    mapping.map(id, loop.getInductionVar());
    b.setInsertionPointToStart(loop.getBody());
  }
  for (Operation &op : launch.getBody().front().without_terminator())
    b.clone(op, mapping);
  launch.erase();
  return success();
}

namespace {
struct SeqNVPTXLaunchToLoopsPass
    : public mlir::seq::impl::SeqNVPTXLaunchToLoopsBase<
          SeqNVPTXLaunchToLoopsPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation()->walk([&](gpu::LaunchOp launch) {
      launches.push_back(launch);
    });
    for (gpu::LaunchOp launch : launches)
      if (failed(lowerLaunch(launch)))
        return signalPassFailure();
  }
};
} // namespace
