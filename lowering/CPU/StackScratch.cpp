//===- StackScratch.cpp - loop-local buffers on the stack -----------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Moves the small buffers a loop body allocates and frees in each iteration
// to one stack slot per thread, made at the entry of the enclosing thread
// team region or function. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"

#define DEBUG_TYPE "seq-cpu-stack-scratch"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQCPUSTACKSCRATCH
#include "lowering/CPU/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

/// A constant upper bound of the index `value`: a constant, the minimum of
/// operands one of which has a bound (`min(64, n - i)`), or the maximum of
/// operands that all have one.
static std::optional<int64_t> getConstantUpperBound(Value value,
                                                    unsigned depth = 0) {
  if (APInt constant; matchPattern(value, m_ConstantInt(&constant)))
    return constant.getSExtValue();
  Operation *def = value.getDefiningOp();
  if (!def || depth > 4)
    return std::nullopt;
  auto minOfOperands = [&](ValueRange operands) -> std::optional<int64_t> {
    std::optional<int64_t> bound;
    for (Value operand : operands)
      if (std::optional<int64_t> b = getConstantUpperBound(operand, depth + 1))
        bound = bound ? std::min(*bound, *b) : *b;
    return bound;
  };
  if (isa<arith::MinUIOp, arith::MinSIOp>(def))
    return minOfOperands(def->getOperands());
  // A maximum is bounded when each operand is (the rows of a block computed
  // at run time, `max(min(4096 / d, 16), 1)`); a negative bound of an
  // unsigned maximum's operand is none.
  if (isa<arith::MaxUIOp, arith::MaxSIOp>(def)) {
    std::optional<int64_t> bound;
    for (Value operand : def->getOperands()) {
      std::optional<int64_t> b = getConstantUpperBound(operand, depth + 1);
      if (!b || (isa<arith::MaxUIOp>(def) && *b < 0))
        return std::nullopt;
      bound = bound ? std::max(*bound, *b) : *b;
    }
    return bound;
  }
  // An unsigned quotient by a positive constant (tiles of a bounded tile).
  if (isa<arith::DivUIOp, arith::CeilDivUIOp>(def)) {
    APInt divisor;
    if (!matchPattern(def->getOperand(1), m_ConstantInt(&divisor)) ||
        !divisor.isStrictlyPositive())
      return std::nullopt;
    std::optional<int64_t> dividend =
        getConstantUpperBound(def->getOperand(0), depth + 1);
    if (!dividend || *dividend < 0)
      return std::nullopt;
    return isa<arith::DivUIOp>(def)
               ? *dividend / divisor.getSExtValue()
               : llvm::divideCeil(*dividend, divisor.getSExtValue());
  }
  if (auto min = dyn_cast<affine::AffineMinOp>(def)) {
    // The smallest constant result of the map bounds the minimum.
    std::optional<int64_t> bound;
    for (AffineExpr expr : min.getAffineMap().getResults())
      if (auto c = dyn_cast<AffineConstantExpr>(expr))
        bound = bound ? std::min(*bound, c.getValue()) : c.getValue();
    return bound;
  }
  return std::nullopt;
}

namespace {

struct SeqCPUStackScratchPass
    : public seq::impl::SeqCPUStackScratchBase<SeqCPUStackScratchPass> {
  using Base::Base;

  /// Bytes of stack slots already given to each region (function body or
  /// omp.parallel region).
  DenseMap<Region *, int64_t> regionBytes;

  /// Why the buffer of `alloc` cannot move to a stack slot, or "" when it
  /// can; collects the deallocations to erase.
  std::string checkUses(memref::AllocOp alloc,
                        SmallVectorImpl<memref::DeallocOp> &deallocs) {
    Block *home = alloc->getBlock();
    SmallVector<Value> worklist{alloc.getResult()};
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      for (OpOperand &use : value.getUses()) {
        Operation *user = use.getOwner();
        if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
          if (dealloc->getBlock() != home)
            return "it is freed in another block than the one allocating it";
          deallocs.push_back(dealloc);
          continue;
        }
        if (user->hasTrait<OpTrait::IsTerminator>())
          return "it leaves the loop body (" +
                 user->getName().getStringRef().str() + ")";
        if (isa<LoopLikeOpInterface, RegionBranchOpInterface>(user))
          return "it is passed into a loop or branch (" +
                 user->getName().getStringRef().str() + ")";
        if (auto call = dyn_cast<CallOpInterface>(user)) {
          auto callee = dyn_cast_if_present<FunctionOpInterface>(
              call.resolveCallable());
          if (!callee || callee.isExternal())
            return "it is passed to a function defined elsewhere";
          continue;
        }
        // Views (subviews, casts, reshapes, the base buffer of metadata)
        // alias it: follow them.
        bool view = isa<ViewLikeOpInterface, memref::ExtractStridedMetadataOp,
                        memref::CastOp>(user);
        for (Value result : user->getResults()) {
          if (!isa<BaseMemRefType>(result.getType()))
            continue;
          if (!view)
            return "it is used by " + user->getName().getStringRef().str() +
                   ", which makes a buffer of it";
          worklist.push_back(result);
        }
      }
    }
    if (deallocs.empty())
      return "it is not freed in its block";
    return "";
  }

  /// Moves `alloc` to a slot of `scope`'s entry, or returns why not.
  std::string moveToStack(memref::AllocOp alloc, Region &scope) {
    MemRefType type = alloc.getType();
    if (!type.getLayout().isIdentity())
      return "its layout is not the identity";
    if (!type.getElementType().isIntOrIndexOrFloat())
      return "its element type has no fixed size";
    unsigned elementBits = type.getElementType().isIndex()
                               ? 64
                               : type.getElementType().getIntOrFloatBitWidth();
    if (elementBits % 8)
      return "its elements are not whole bytes";
    // The largest size of each dimension.
    int64_t elements = 1;
    auto dynamicSizes = alloc.getDynamicSizes().begin();
    for (int64_t dim : type.getShape()) {
      int64_t size = dim;
      if (ShapedType::isDynamic(dim)) {
        std::optional<int64_t> bound = getConstantUpperBound(*dynamicSizes++);
        if (!bound)
          return "a dynamic size has no constant upper bound";
        size = std::max<int64_t>(*bound, 0);
      }
      if (llvm::MulOverflow(elements, size, elements))
        return "it is too large";
    }
    int64_t bytes = elements * (elementBits / 8);
    if (bytes > maxBytes)
      return "its " + std::to_string(bytes) + " bytes exceed " +
             std::to_string(maxBytes.getValue());
    int64_t &used = regionBytes[&scope];
    if (used + bytes > maxRegionBytes)
      return "the region's stack slots would exceed " +
             std::to_string(maxRegionBytes.getValue()) + " bytes";

    SmallVector<memref::DeallocOp> deallocs;
    std::string why = checkUses(alloc, deallocs);
    if (!why.empty())
      return why;

    used += bytes;
    OpBuilder builder = OpBuilder::atBlockBegin(&scope.front());
    Location loc = alloc.getLoc();
    IntegerAttr alignment = alloc.getAlignmentAttr();
    Value replacement;
    if (type.hasStaticShape()) {
      replacement = memref::AllocaOp::create(builder, loc, type, alignment);
    } else {
      // A slot of the bound's bytes, viewed at the allocation with its sizes.
      auto slotType = MemRefType::get({bytes}, builder.getI8Type());
      Value slot = memref::AllocaOp::create(builder, loc, slotType, alignment);
      builder.setInsertionPoint(alloc);
      Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
      replacement = memref::ViewOp::create(builder, loc, type, slot, zero,
                                           alloc.getDynamicSizes());
    }
    for (memref::DeallocOp dealloc : deallocs)
      dealloc->erase();
    alloc.getResult().replaceAllUsesWith(replacement);
    alloc->erase();
    return "";
  }

  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    getOperation()->walk([&](memref::AllocOp alloc) {
      // Per-iteration allocations only: one nested in a loop.
      Operation *parent = alloc->getParentOp();
      for (; parent && !isa<FunctionOpInterface, omp::ParallelOp>(parent);
           parent = parent->getParentOp())
        if (isa<LoopLikeOpInterface, omp::LoopNestOp, scf::ParallelOp>(parent))
          break;
      if (parent && !isa<FunctionOpInterface, omp::ParallelOp>(parent))
        allocs.push_back(alloc);
    });
    for (memref::AllocOp alloc : allocs) {
      Operation *scope = alloc->getParentOp();
      while (!isa<FunctionOpInterface, omp::ParallelOp>(scope))
        scope = scope->getParentOp();
      Location loc = alloc.getLoc();
      // A sequential loop around it repeats it as often as its trip count;
      // a worksharing loop's body alone runs about once per thread's block.
      bool sequential = false;
      for (Operation *op = alloc->getParentOp(); op != scope;
           op = op->getParentOp())
        sequential |= isa<scf::ForOp, scf::WhileOp>(op);
      std::string why = moveToStack(alloc, scope->getRegion(0));
      if (!why.empty() && remarks && sequential)
        emitRemark(loc) << "a buffer allocated and freed in each iteration "
                           "of a loop stays on the heap: "
                        << why;
    }
  }
};

} // namespace
