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
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/CSE.h"
#include "llvm/ADT/TypeSwitch.h"

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

bool mlir::seq::isGlobalView(Value value) {
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

//===----------------------------------------------------------------------===//
// Rows per block
//===----------------------------------------------------------------------===//

namespace {
/// A loop that reduces a row into one element of memory:
///   scf.for %k = ... {
///     ... (pure ops and loads: the element %e)
///     %a = memref.load %acc[I]
///     %s = combine %a, %e      (or %e, %a)
///     memref.store %s, %acc[I]
///   }
/// with I defined outside the loop, %acc read nowhere else in it, and
/// combine an f32 add, mul, min or max.
struct RowReduction {
  memref::LoadOp load;
  memref::StoreOp store;
  Operation *combine;
  gpu::AllReduceOperation kind;
};
} // namespace

static std::optional<gpu::AllReduceOperation> getReductionKind(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<gpu::AllReduceOperation>>(
             op)
      .Case([](arith::AddFOp) { return gpu::AllReduceOperation::ADD; })
      .Case([](arith::MulFOp) { return gpu::AllReduceOperation::MUL; })
      .Case([](arith::MaxNumFOp) { return gpu::AllReduceOperation::MAXNUMF; })
      .Case([](arith::MaximumFOp) { return gpu::AllReduceOperation::MAXIMUMF; })
      .Case([](arith::MinNumFOp) { return gpu::AllReduceOperation::MINNUMF; })
      .Case([](arith::MinimumFOp) { return gpu::AllReduceOperation::MINIMUMF; })
      .Default([](Operation *) { return std::nullopt; });
}

/// Whether `op` only computes or reads: every thread of a row's block may run
/// it.
static bool onlyReads(Operation &op) {
  return op.getNumRegions() == 0 &&
         (isMemoryEffectFree(&op) || isa<memref::LoadOp>(op));
}

/// Whether `value` is computed from `iv` (within `scope`).
static bool dependsOn(Value value, Value iv, Operation *scope) {
  SmallVector<Value> worklist = {value};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (v == iv)
      return true;
    if (!seen.insert(v).second)
      continue;
    if (Operation *def = v.getDefiningOp(); def && scope->isAncestor(def))
      llvm::append_range(worklist, def->getOperands());
  }
  return false;
}

static std::optional<RowReduction> matchRowReduction(scf::ParallelOp rows,
                                                     scf::ForOp loop) {
  if (loop.getNumResults() != 0)
    return std::nullopt;
  memref::StoreOp store;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto candidate = dyn_cast<memref::StoreOp>(op)) {
      if (store)
        return std::nullopt;
      store = candidate;
    } else if (!onlyReads(op)) {
      return std::nullopt;
    }
  }
  if (!store)
    return std::nullopt;
  for (Value index : store.getIndices())
    if (loop.getRegion().isAncestor(index.getParentRegion()))
      return std::nullopt;
  Operation *combine = store.getValueToStore().getDefiningOp();
  if (!combine || combine->getParentOp() != loop || !combine->hasOneUse() ||
      !combine->getResult(0).getType().isF32())
    return std::nullopt;
  std::optional<gpu::AllReduceOperation> kind = getReductionKind(combine);
  if (!kind)
    return std::nullopt;
  memref::LoadOp load;
  for (Value operand : combine->getOperands())
    if (auto candidate = operand.getDefiningOp<memref::LoadOp>();
        candidate && candidate.getMemRef() == store.getMemRef() &&
        candidate.getIndices() == store.getIndices() && candidate->hasOneUse())
      load = candidate;
  if (!load || combine->getOperand(0) == combine->getOperand(1))
    return std::nullopt;
  // No other read of the accumulator's buffer; every other read is of the
  // row: its indices use every induction variable of the loop over rows. (A
  // contraction's reads each lack one, and want a thread per output.)
  for (Operation &op : loop.getBody()->without_terminator()) {
    auto other = dyn_cast<memref::LoadOp>(op);
    if (!other || other == load)
      continue;
    if (mayAlias(other.getMemRef(), store.getMemRef()))
      return std::nullopt;
    for (Value iv : rows.getInductionVars())
      if (llvm::none_of(other.getIndices(), [&](Value index) {
            return dependsOn(index, iv, rows);
          }))
        return std::nullopt;
  }
  return RowReduction{load, store, combine, *kind};
}

/// The row reductions of `loop`'s body, if the body can run as a block per
/// iteration (see mapRowsToBlocks), else an empty map.
static DenseMap<Operation *, RowReduction>
getRowReductions(scf::ParallelOp loop) {
  DenseMap<Operation *, RowReduction> reductions;
  bool allocates = false;
  loop.getBody()->walk([&](Operation *op) {
    if (isa<memref::AllocOp, memref::AllocaOp, scf::ParallelOp>(op))
      allocates = true;
  });
  if (allocates)
    return reductions;
  // Rows all shorter than a warp keep a thread each.
  bool longRow = false;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto forOp = dyn_cast<scf::ForOp>(op))
      if (std::optional<RowReduction> reduction =
              matchRowReduction(loop, forOp)) {
        reductions[forOp] = *reduction;
        std::optional<APInt> trips = forOp.getStaticTripCount();
        longRow |= !trips || trips->uge(32);
        continue;
      }
    // The other ops run in thread 0: nothing may use their results.
    if (!onlyReads(op) && !op.use_empty())
      return DenseMap<Operation *, RowReduction>();
  }
  if (!longRow)
    reductions.clear();
  return reductions;
}

/// The identity of `kind` for f32.
static Value getIdentity(OpBuilder &b, Location loc,
                         gpu::AllReduceOperation kind) {
  float value = 0.0f;
  switch (kind) {
  case gpu::AllReduceOperation::MUL:
    value = 1.0f;
    break;
  case gpu::AllReduceOperation::MAXNUMF:
  case gpu::AllReduceOperation::MAXIMUMF:
    value = -std::numeric_limits<float>::infinity();
    break;
  case gpu::AllReduceOperation::MINNUMF:
  case gpu::AllReduceOperation::MINIMUMF:
    value = std::numeric_limits<float>::infinity();
    break;
  default:
    break;
  }
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
}

/// Emits the body of `loop` for the threads of a block that runs one of its
/// iterations (the ivs are in `mapping`): each row reduction strided over
/// the threads, combined with gpu.all_reduce and added into its element by
/// thread 0; ops that only compute or read run in every thread; the others
/// in thread 0, between barriers.
static void emitRowBody(OpBuilder &b, scf::ParallelOp loop,
                        const DenseMap<Operation *, RowReduction> &reductions,
                        Value thread, Value threads, IRMapping &mapping) {
  Location loc = loop.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread, zero);
  auto inFirstThread = [&](function_ref<void()> body) {
    gpu::BarrierOp::create(b, loc);
    auto branch = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    body();
  };
  Block *body = loop.getBody();
  for (auto it = body->begin(); it != std::prev(body->end());) {
    Operation &op = *it;
    auto reduction = reductions.find(&op);
    if (reduction != reductions.end()) {
      auto forOp = cast<scf::ForOp>(op);
      RowReduction r = reduction->second;
      Location at = forOp.getLoc();
      // This thread's share: k = lb + thread * step, ..., by threads * step.
      Value step = mapping.lookupOrDefault(forOp.getStep());
      Value lower = arith::AddIOp::create(
          b, at, mapping.lookupOrDefault(forOp.getLowerBound()),
          arith::MulIOp::create(b, at, thread, step));
      Value stride = arith::MulIOp::create(b, at, threads, step);
      Value identity = getIdentity(b, at, r.kind);
      auto strided = scf::ForOp::create(
          b, at, lower, mapping.lookupOrDefault(forOp.getUpperBound()), stride,
          ValueRange{identity},
          [&](OpBuilder &lb, Location, Value k, ValueRange partial) {
            mapping.map(forOp.getInductionVar(), k);
            mapping.map(r.load.getResult(), partial[0]);
            for (Operation &inner : forOp.getBody()->without_terminator())
              if (&inner != r.load && &inner != r.store)
                lb.clone(inner, mapping);
            scf::YieldOp::create(lb, at,
                                 mapping.lookup(r.combine->getResult(0)));
          });
      Value total = gpu::AllReduceOp::create(
          b, at, strided.getResult(0).getType(), strided.getResult(0),
          gpu::AllReduceOperationAttr::get(b.getContext(), r.kind),
          b.getUnitAttr());
      inFirstThread([&] {
        Value element = memref::LoadOp::create(
            b, at, mapping.lookupOrDefault(r.store.getMemRef()),
            llvm::map_to_vector(r.store.getIndices(), [&](Value index) {
              return mapping.lookupOrDefault(index);
            }));
        mapping.map(r.load.getResult(), element);
        mapping.map(r.combine->getOperand(
                        r.combine->getOperand(0) == r.load.getResult() ? 1 : 0),
                    total);
        b.clone(*r.combine, mapping);
        b.clone(*r.store, mapping);
      });
      gpu::BarrierOp::create(b, at);
      ++it;
      continue;
    }
    if (onlyReads(op)) {
      b.clone(op, mapping);
      ++it;
      continue;
    }
    // Consecutive ops with side effects: thread 0, once every thread has
    // read what they may overwrite, and before any reads what they write.
    auto end = it;
    while (end != std::prev(body->end()) && !reductions.count(&*end) &&
           !onlyReads(*end))
      ++end;
    inFirstThread([&] {
      for (Operation &effect : llvm::make_range(it, end))
        b.clone(effect, mapping);
    });
    gpu::BarrierOp::create(b, loc);
    it = end;
  }
}

/// Replaces `loop` by a launch of ceil(iterations / blockSize) blocks of
/// `blockSize` threads, each running one iteration, or with `reductions`,
/// of one block of `blockSize` threads per iteration (emitRowBody).
static gpu::LaunchOp
buildLaunch(RewriterBase &b, scf::ParallelOp loop, int64_t blockSize,
            const DenseMap<Operation *, RowReduction> &reductions =
                DenseMap<Operation *, RowReduction>()) {
  b.setInsertionPoint(loop);
  Location loc = loop.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  bool rowsPerBlock = !reductions.empty();

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
  Value blocks = rowsPerBlock
                     ? total
                     : b.createOrFold<arith::CeilDivSIOp>(loc, total, threads);

  // A grid of zero blocks is an error for the driver: skip empty loops.
  Value nonEmpty =
      b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, total,
                                    zero);
  LLVM_DEBUG({
    llvm::dbgs() << "[" DEBUG_TYPE "] kernel for the " << counts.size()
                 << "-D loop at " << loc << ": grid (";
    if (std::optional<int64_t> count = getConstantIntValue(blocks))
      llvm::dbgs() << *count;
    else if (rowsPerBlock)
      llvm::dbgs() << "iterations";
    else
      llvm::dbgs() << "ceil(iterations / " << blockSize << ")";
    llvm::dbgs() << ", 1, 1) blocks of (" << blockSize
                 << ", 1, 1) threads, iterations ";
    if (std::optional<int64_t> count = getConstantIntValue(total))
      llvm::dbgs() << *count;
    else
      llvm::dbgs() << "known at run time";
    if (rowsPerBlock)
      llvm::dbgs() << ", a block per iteration, " << reductions.size()
                   << " reductions over its threads";
    llvm::dbgs() << "\n";
  });
  auto ifOp = scf::IfOp::create(b, loc, nonEmpty, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  auto launch = gpu::LaunchOp::create(b, loc, blocks, one, one, threads, one,
                                      one);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value linear = launch.getBlockIds().x;
  if (!rowsPerBlock) {
    linear = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, threads),
        launch.getThreadIds().x);
    Value inRange =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, linear, total);
    auto guard = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
    gpu::TerminatorOp::create(b, loc);
    b.setInsertionPointToStart(guard.thenBlock());
  } else {
    gpu::TerminatorOp::create(b, loc);
    b.setInsertionPointToStart(&launch.getBody().front());
  }

  // The innermost dimension varies fastest across threads (or blocks).
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
  if (rowsPerBlock)
    emitRowBody(b, loop, reductions, launch.getThreadIds().x, threads, mapping);
  else
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

FailureOr<gpu::LaunchOp> mlir::seq::mapRowsToBlocks(RewriterBase &rewriter,
                                                    scf::ParallelOp loop,
                                                    int64_t blockSize) {
  if (blockSize < 1 || blockSize > 1024)
    return rewriter.notifyMatchFailure(loop, "block size out of range");
  if (failed(mapParallelLoopToLaunchPrecondition(loop)))
    return rewriter.notifyMatchFailure(loop, "cannot run as a GPU kernel");
  DenseMap<Operation *, RowReduction> reductions = getRowReductions(loop);
  if (reductions.empty())
    return rewriter.notifyMatchFailure(loop, "no row reduction, or ops "
                                             "whose results thread 0 alone "
                                             "would have");
  OpBuilder::InsertionGuard guard(rewriter);
  return buildLaunch(rewriter, loop, blockSize, reductions);
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
    if (rowReductions && succeeded(mapRowsToBlocks(rewriter, loop, blockSize)))
      continue;
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
