//===- MapToGPU.cpp - outermost parallel loops to GPU kernels -------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// One kernel per outermost scf.parallel, one thread per iteration of its
// linearized iteration space; see the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/Support/Debug.h"
#include "lowering/NVPTX/Passes.h"
#include "lowering/NVPTX/Transforms.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/CSE.h"

#define DEBUG_TYPE "seq-nvptx-map-to-gpu"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQNVPTXMAPTOGPU
#include "lowering/NVPTX/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;
using namespace mlir::seq;

//===----------------------------------------------------------------------===//
// Copies
//===----------------------------------------------------------------------===//

FailureOr<Operation *>
mlir::seq::lowerCopyToParallelLoop(RewriterBase &rewriter,
                                   memref::CopyOp copy) {
  auto type = dyn_cast<MemRefType>(copy.getSource().getType());
  if (!type || !isa<MemRefType>(copy.getTarget().getType()))
    return rewriter.notifyMatchFailure(copy, "unranked operands");
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(copy);
  Location loc = copy.getLoc();
  if (type.getRank() == 0) {
    Value value = memref::LoadOp::create(rewriter, loc, copy.getSource());
    Operation *store =
        memref::StoreOp::create(rewriter, loc, value, copy.getTarget());
    rewriter.eraseOp(copy);
    return store;
  }
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  SmallVector<Value> lbs(type.getRank(), zero), steps(type.getRank(), one);
  SmallVector<Value> ubs;
  for (int64_t i = 0; i < type.getRank(); ++i)
    ubs.push_back(
        rewriter.createOrFold<memref::DimOp>(loc, copy.getSource(), i));
  auto loop = scf::ParallelOp::create(
      rewriter, loc, lbs, ubs, steps,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange ivs) {
        Value value =
            memref::LoadOp::create(nested, nestedLoc, copy.getSource(), ivs);
        memref::StoreOp::create(nested, nestedLoc, value, copy.getTarget(),
                                ivs);
      });
  rewriter.eraseOp(copy);
  return loop.getOperation();
}

//===----------------------------------------------------------------------===//
// Fusion of adjacent loops
//===----------------------------------------------------------------------===//

/// The buffer `value` is a view of: its allocation, or a function argument.
static Value getBaseBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

/// Whether two buffers may overlap: a fresh allocation overlaps nothing
/// but its own views; two other buffers (arguments) may.
static bool mayAlias(Value a, Value b) {
  Value baseA = getBaseBuffer(a), baseB = getBaseBuffer(b);
  if (baseA == baseB)
    return true;
  return !baseA.getDefiningOp<memref::AllocOp>() &&
         !baseB.getDefiningOp<memref::AllocOp>();
}

void mlir::seq::hoistAllocations(RewriterBase &rewriter, Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block)) {
    auto alloc = dyn_cast<memref::AllocOp>(op);
    if (!alloc)
      continue;
    Operation *after = nullptr;
    for (Value operand : alloc->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && def->getBlock() == &block &&
          (!after || after->isBeforeInBlock(def)))
        after = def;
    if (after)
      rewriter.moveOpAfter(alloc, after);
    else
      rewriter.moveOpBefore(alloc, &block, block.begin());
  }
}

LogicalResult mlir::seq::fuseAdjacentParallelLoopsPrecondition(Region &region) {
  return failure(
      llvm::any_of(region.getOps<scf::ParallelOp>(), [](scf::ParallelOp loop) {
        return loop.getNumResults() != 0;
      }));
}

FailureOr<unsigned> mlir::seq::fuseAdjacentParallelLoops(Region &region) {
  if (failed(fuseAdjacentParallelLoopsPrecondition(region)))
    return failure();
  auto countLoops = [&] {
    return static_cast<unsigned>(
        llvm::range_size(region.getOps<scf::ParallelOp>()));
  };
  unsigned before = countLoops();
  scf::naivelyFuseParallelOps(region, mayAlias);
  return before - countLoops();
}

/// Prints `region` as a place in the IR, for the debug output.
[[maybe_unused]] static void printRegion(llvm::raw_ostream &os,
                                         Region &region) {
  Operation *parent = region.getParentOp();
  os << "region " << region.getRegionNumber() << " of '" << parent->getName()
     << "'";
  if (auto symbol =
          parent->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
    os << " @" << symbol.getValue();
  os << " at " << parent->getLoc();
}

unsigned mlir::seq::fuseAdjacentParallelLoopsIn(RewriterBase &rewriter,
                                                Operation *root) {
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<scf::ParallelOp, gpu::LaunchOp>(op))
      return WalkResult::skip();
    for (Region &region : op->getRegions())
      for (Block &block : region)
        hoistAllocations(rewriter, block);
    return WalkResult::advance();
  });
  DominanceInfo dominance(root);
  eliminateCommonSubExpressions(rewriter, dominance, root);

  SmallVector<Region *> regions;
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<scf::ParallelOp, gpu::LaunchOp>(op))
      return WalkResult::skip();
    for (Region &region : op->getRegions())
      regions.push_back(&region);
    return WalkResult::advance();
  });
  unsigned fused = 0;
  for (Region *region : regions) {
    FailureOr<unsigned> count = fuseAdjacentParallelLoops(*region);
    if (failed(count)) {
      LLVM_DEBUG({
        llvm::dbgs() << "[" DEBUG_TYPE "] not fusing the loops of ";
        printRegion(llvm::dbgs(), *region);
        llvm::dbgs() << ": it holds a parallel reduction\n";
      });
      continue;
    }
    LLVM_DEBUG(if (*count) {
      llvm::dbgs() << "[" DEBUG_TYPE "] parallel loops fused into the loop "
                      "before them in ";
      printRegion(llvm::dbgs(), *region);
      llvm::dbgs() << ": " << *count << "\n";
    });
    fused += *count;
  }
  return fused;
}

//===----------------------------------------------------------------------===//
// What a kernel may hold
//===----------------------------------------------------------------------===//

/// The most bytes of private memory one buffer of a thread may take.
static constexpr int64_t kMaxPrivateBytes = 64 * 1024;

/// A constant upper bound of the index `value` (tile sizes clipped at the
/// edge: `minui(n - i, 64)`), or std::nullopt.
static std::optional<int64_t> getUpperBound(Value value) {
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return *constant;
  Operation *def = value.getDefiningOp();
  if (isa_and_nonnull<arith::MinUIOp, arith::MinSIOp>(def)) {
    // The smaller of two values is at most either bound (for minsi, when
    // the bound is non-negative, as sizes are).
    std::optional<int64_t> bound;
    for (Value operand : def->getOperands())
      if (std::optional<int64_t> b = getUpperBound(operand);
          b && *b >= 0 && (!bound || *b < *bound))
        bound = b;
    return bound;
  }
  FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
      presburger::BoundType::UB, {value, std::nullopt},
      /*stopCondition=*/nullptr, /*closedUB=*/true);
  if (failed(bound))
    return std::nullopt;
  return *bound;
}

/// The static shape that holds every shape of `alloc`, or failure when a
/// dynamic size has no constant bound or the buffer is too large for a
/// thread's private memory.
static FailureOr<SmallVector<int64_t>> getBoundedShape(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  if (!type.getLayout().isIdentity() || !type.getElementType().isIntOrFloat())
    return failure();
  SmallVector<int64_t> shape;
  auto dynamicSizes = alloc.getDynamicSizes();
  int64_t next = 0;
  int64_t bytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  for (int64_t size : type.getShape()) {
    if (ShapedType::isDynamic(size)) {
      std::optional<int64_t> bound = getUpperBound(dynamicSizes[next++]);
      if (!bound || *bound < 0)
        return failure();
      size = *bound;
    }
    shape.push_back(size);
    bytes *= size;
    if (bytes > kMaxPrivateBytes)
      return failure();
  }
  return shape;
}

/// Returns why the body of `loop` cannot run as a GPU kernel, or an empty
/// string when it can.
static std::string whyNotAKernel(scf::ParallelOp loop) {
  if (loop.getNumResults() != 0)
    return "it is a parallel reduction";
  std::string reason;
  loop.getBody()->walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (auto alloca = operand.getDefiningOp<memref::AllocaOp>();
          alloca && !loop->isAncestor(alloca)) {
        reason = "its body reads a buffer on the host's stack";
        return WalkResult::interrupt();
      }
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      if (failed(getBoundedShape(alloc))) {
        reason = "its body allocates a buffer whose size has no constant "
                 "bound within " +
                 std::to_string(kMaxPrivateBytes / 1024) +
                 " KiB of private memory";
        return WalkResult::interrupt();
      }
    } else if (isa<func::CallOp, memref::AllocaScopeOp>(op)) {
      reason = "its body holds '" + op->getName().getStringRef().str() + "'";
      return WalkResult::interrupt();
    } else if (auto nested = dyn_cast<scf::ParallelOp>(op)) {
      if (nested.getNumResults() != 0) {
        reason = "its body holds a parallel reduction";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return reason;
}

LogicalResult
mlir::seq::mapParallelLoopToLaunchPrecondition(scf::ParallelOp loop,
                                               std::string *reason) {
  std::string why = whyNotAKernel(loop);
  if (why.empty())
    return success();
  if (reason)
    *reason = std::move(why);
  return failure();
}

//===----------------------------------------------------------------------===//
// Private buffers
//===----------------------------------------------------------------------===//

LogicalResult
mlir::seq::privatizeAllocationsPrecondition(scf::ParallelOp loop) {
  WalkResult result = loop.getBody()->walk([](memref::AllocOp alloc) {
    return failed(getBoundedShape(alloc)) ? WalkResult::interrupt()
                                          : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

FailureOr<unsigned> mlir::seq::privatizeAllocations(RewriterBase &rewriter,
                                                    scf::ParallelOp loop) {
  if (failed(privatizeAllocationsPrecondition(loop)))
    return failure();
  SmallVector<memref::AllocOp> allocs;
  loop.getBody()->walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
  OpBuilder::InsertionGuard guard(rewriter);
  for (memref::AllocOp alloc : allocs) {
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        rewriter.eraseOp(user);
    rewriter.setInsertionPoint(alloc);
    Location loc = alloc.getLoc();
    MemRefType type = alloc.getType();
    Value replacement;
    if (type.hasStaticShape()) {
      replacement = memref::AllocaOp::create(rewriter, loc, type, ValueRange(),
                                             alloc.getSymbolOperands(),
                                             alloc.getAlignmentAttr());
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] privatized " << type
                              << " at " << loc << "\n");
    } else {
      SmallVector<int64_t> shape = *getBoundedShape(alloc);
      int64_t bytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
      for (int64_t size : shape)
        bytes *= size;
      auto storage = memref::AllocaOp::create(
          rewriter, loc, MemRefType::get({bytes}, rewriter.getI8Type()),
          alloc.getAlignmentAttr());
      replacement = memref::ViewOp::create(
          rewriter, loc, type, storage,
          arith::ConstantIndexOp::create(rewriter, loc, 0),
          alloc.getDynamicSizes());
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] privatized " << type
                              << " at " << loc << " as a view of " << bytes
                              << " private bytes (its largest size)\n");
    }
    rewriter.replaceAllUsesWith(alloc, replacement);
    rewriter.eraseOp(alloc);
  }
  return static_cast<unsigned>(allocs.size());
}

//===----------------------------------------------------------------------===//
// The launch
//===----------------------------------------------------------------------===//

/// Whether `value` is a constant global or a view of one: the host's address
/// of such a buffer is not the device's, so the kernel must rebuild it from
/// the GPU module's copy of the global.
static bool isGlobalView(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return false;
  if (isa<memref::GetGlobalOp>(def))
    return true;
  if (auto view = dyn_cast<ViewLikeOpInterface>(def))
    return isGlobalView(view.getViewSource());
  return false;
}

/// Clones the defining ops of `value` (a global view, see above) at `b`.
static Value cloneGlobalView(OpBuilder &b, Value value, IRMapping &mapping) {
  if (Value mapped = mapping.lookupOrNull(value))
    return mapped;
  Operation *def = value.getDefiningOp();
  for (Value operand : def->getOperands())
    if (isGlobalView(operand))
      cloneGlobalView(b, operand, mapping);
  Operation *clone = b.clone(*def, mapping);
  return clone->getResult(cast<OpResult>(value).getResultNumber());
}

/// Replaces `loop` by a launch of ceil(iterations / blockSize) blocks of
/// `blockSize` threads, each running one iteration.
static gpu::LaunchOp buildLaunch(RewriterBase &b, scf::ParallelOp loop,
                                 int64_t blockSize) {
  b.setInsertionPoint(loop);
  Location loc = loop.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);

  // Iterations per dimension, and in all.
  SmallVector<Value> counts;
  Value total = one;
  for (auto [lb, ub, step] : llvm::zip_equal(
           loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    Value extent = b.createOrFold<arith::SubIOp>(loc, ub, lb);
    Value count = b.createOrFold<arith::CeilDivSIOp>(loc, extent, step);
    count = b.createOrFold<arith::MaxSIOp>(loc, count, zero);
    counts.push_back(count);
    total = b.createOrFold<arith::MulIOp>(loc, total, count);
  }
  Value threads = arith::ConstantIndexOp::create(b, loc, blockSize);
  Value blocks = b.createOrFold<arith::CeilDivSIOp>(loc, total, threads);

  // A grid of zero blocks is an error for the driver: skip empty loops.
  Value nonEmpty =
      b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, total,
                                    zero);
  LLVM_DEBUG({
    llvm::dbgs() << "[" DEBUG_TYPE "] kernel for the " << counts.size()
                 << "-D loop at " << loc << ": grid (";
    if (std::optional<int64_t> count = getConstantIntValue(blocks))
      llvm::dbgs() << *count;
    else
      llvm::dbgs() << "ceil(iterations / " << blockSize << ")";
    llvm::dbgs() << ", 1, 1) blocks of (" << blockSize
                 << ", 1, 1) threads, iterations ";
    if (std::optional<int64_t> count = getConstantIntValue(total))
      llvm::dbgs() << *count << "\n";
    else
      llvm::dbgs() << "known at run time\n";
  });
  auto ifOp = scf::IfOp::create(b, loc, nonEmpty, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  auto launch = gpu::LaunchOp::create(b, loc, blocks, one, one, threads, one,
                                      one);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value linear = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, launch.getBlockIds().x, threads),
      launch.getThreadIds().x);
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                        linear, total);
  auto guard = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  gpu::TerminatorOp::create(b, loc);

  // The innermost dimension varies fastest across threads.
  b.setInsertionPointToStart(guard.thenBlock());
  IRMapping mapping;
  Value rest = linear;
  int64_t rank = counts.size();
  for (int64_t i = rank - 1; i >= 0; --i) {
    Value index = rest;
    if (i > 0) {
      index = arith::RemUIOp::create(b, loc, rest, counts[i]);
      rest = arith::DivUIOp::create(b, loc, rest, counts[i]);
    }
    Value iv = arith::AddIOp::create(
        b, loc, loop.getLowerBound()[i],
        arith::MulIOp::create(b, loc, index, loop.getStep()[i]));
    mapping.map(loop.getInductionVars()[i], iv);
  }
  // Constant globals come from the GPU module's copy.
  loop.getBody()->walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && !loop->isAncestor(def) && isGlobalView(operand)) {
        LLVM_DEBUG(if (!mapping.contains(operand)) llvm::dbgs()
                   << "[" DEBUG_TYPE "] the kernel reads its own copy of "
                   << operand << "\n");
        cloneGlobalView(b, operand, mapping);
      }
  });
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, mapping);
  b.eraseOp(loop);
  return launch;
}

FailureOr<gpu::LaunchOp>
mlir::seq::mapParallelLoopToLaunch(RewriterBase &rewriter, scf::ParallelOp loop,
                                   int64_t blockSize) {
  if (blockSize < 1 || blockSize > 1024)
    return rewriter.notifyMatchFailure(loop, "block size out of range");
  if (failed(mapParallelLoopToLaunchPrecondition(loop)))
    return rewriter.notifyMatchFailure(loop, "cannot run as a GPU kernel");
  OpBuilder::InsertionGuard guard(rewriter);
  // Nested parallel loops run in the thread, innermost rewritten first. The
  // precondition excludes those with results, the only ones
  // parallelForToNestedFors rejects.
  SmallVector<scf::ParallelOp> nested;
  loop.getBody()->walk<WalkOrder::PostOrder>(
      [&](scf::ParallelOp inner) { nested.push_back(inner); });
  for (scf::ParallelOp inner : nested) {
    rewriter.setInsertionPoint(inner);
    if (failed(scf::parallelForToNestedFors(rewriter, inner)))
      return inner.emitError("could not rewrite this parallel loop into a "
                             "nest of scf.for loops");
  }
  LLVM_DEBUG(if (!nested.empty()) llvm::dbgs()
             << "[" DEBUG_TYPE "] nested parallel loops of the loop at "
             << loop.getLoc() << " that run sequentially in its thread: "
             << nested.size() << "\n");
  if (failed(privatizeAllocations(rewriter, loop)))
    return loop.emitError("could not make the buffers this loop allocates "
                          "private to its threads");
  return buildLaunch(rewriter, loop, blockSize);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct SeqNVPTXMapToGPUPass
    : public mlir::seq::impl::SeqNVPTXMapToGPUBase<SeqNVPTXMapToGPUPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

void SeqNVPTXMapToGPUPass::runOnOperation() {
  Operation *root = getOperation();
  if (blockSize < 1 || blockSize > 1024) {
    root->emitError() << "seq-nvptx-map-to-gpu: block-size "
                      << static_cast<int64_t>(blockSize)
                      << " is not between 1 and 1024 threads";
    return signalPassFailure();
  }
  IRRewriter rewriter(&getContext());
  SmallVector<memref::CopyOp> copies;
  root->walk([&](memref::CopyOp copy) {
    if (!copy->getParentOfType<gpu::LaunchOp>())
      copies.push_back(copy);
  });
  for (memref::CopyOp copy : copies)
    if (failed(lowerCopyToParallelLoop(rewriter, copy)))
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] the copy at " << copy.getLoc()
                 << " stays on the host: its operands are unranked\n");
  fuseAdjacentParallelLoopsIn(rewriter, root);

  // Outermost parallel loops, outside existing launches.
  SmallVector<scf::ParallelOp> outermost;
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<gpu::LaunchOp>(op))
      return WalkResult::skip();
    if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      outermost.push_back(loop);
      return WalkResult::skip();
    }
    return WalkResult::advance();
  });

  for (scf::ParallelOp loop : outermost) {
    std::string reason;
    if (failed(mapParallelLoopToLaunchPrecondition(loop, &reason))) {
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] the loop at " << loop.getLoc()
                 << " stays on the host: " << reason << "\n");
      if (remarks)
        loop.emitRemark() << "runs on the host, not on the GPU: " << reason;
      continue;
    }
    if (failed(mapParallelLoopToLaunch(rewriter, loop, blockSize)))
      return signalPassFailure();
  }

  // Loop nests without a parallel loop run on the host.
  bool explain = remarks;
  LLVM_DEBUG(explain = true);
  if (!explain)
    return;
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<gpu::LaunchOp, scf::ParallelOp>(op))
      return WalkResult::skip();
    if (auto forOp = dyn_cast<scf::ForOp>(op)) {
      bool hasLaunch = false;
      forOp->walk([&](gpu::LaunchOp) { hasLaunch = true; });
      if (!hasLaunch) {
        LLVM_DEBUG(llvm::dbgs()
                   << "[" DEBUG_TYPE "] the loop nest at " << forOp.getLoc()
                   << " stays on the host: it has no parallel iterations\n");
        if (remarks)
          forOp.emitRemark()
              << "runs on the host, not on the GPU: a loop nest without "
                 "parallel iterations";
        return WalkResult::skip();
      }
    }
    return WalkResult::advance();
  });
}
