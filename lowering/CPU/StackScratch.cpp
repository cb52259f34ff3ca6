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
#include "llvm/ADT/MapVector.h"

#include <deque>

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

/// A loop-local allocation that can move to the stack.
struct Candidate {
  memref::AllocOp alloc;
  SmallVector<memref::DeallocOp> deallocs;
  /// The last of `deallocs` in the allocation's block: the buffer is live
  /// from the allocation to it.
  Operation *end;
  /// The bytes of its slot: the size, or the bound of a dynamic size.
  int64_t bytes;
  /// The bytes of an element.
  int64_t elementBytes;
  /// Whether a sequential loop repeats it (for the remark).
  bool sequential;
  /// Its place in the walk, which breaks ties between equal sizes.
  size_t order;
};

/// Candidates that share one stack slot: no two are live at once.
struct Slot {
  SmallVector<Candidate *> members;
  int64_t bytes = 0;
};

/// Whether `a`'s buffer is live while `b` is allocated: `b`'s allocation is
/// in `a`'s block, or nested in an op of it, between `a`'s allocation and
/// its last deallocation. Both are freed in their own blocks, so buffers
/// allocated in different ops of a block, in different blocks or in
/// different regions of an op are never live at once.
static bool liveAt(const Candidate &a, const Candidate &b) {
  Block *home = a.alloc->getBlock();
  Operation *at = home->findAncestorOpInBlock(*b.alloc);
  return at && a.alloc->isBeforeInBlock(at) && at->isBeforeInBlock(a.end);
}

static bool interfere(const Candidate &a, const Candidate &b) {
  if (a.alloc->getBlock() == b.alloc->getBlock())
    return a.alloc->isBeforeInBlock(b.alloc) ? liveAt(a, b) : liveAt(b, a);
  return liveAt(a, b) || liveAt(b, a);
}

struct SeqCPUStackScratchPass
    : public seq::impl::SeqCPUStackScratchBase<SeqCPUStackScratchPass> {
  using Base::Base;

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

  /// The bytes of `alloc`'s slot (and of an element in `elementBytes`), or
  /// why it cannot have one.
  FailureOr<int64_t> slotBytes(memref::AllocOp alloc, int64_t &elementBytes,
                               std::string &why) {
    MemRefType type = alloc.getType();
    if (!type.getLayout().isIdentity())
      return why = "its layout is not the identity", failure();
    if (!type.getElementType().isIntOrIndexOrFloat())
      return why = "its element type has no fixed size", failure();
    unsigned elementBits = type.getElementType().isIndex()
                               ? 64
                               : type.getElementType().getIntOrFloatBitWidth();
    if (elementBits % 8)
      return why = "its elements are not whole bytes", failure();
    elementBytes = elementBits / 8;
    // The largest size of each dimension.
    int64_t elements = 1;
    auto dynamicSizes = alloc.getDynamicSizes().begin();
    for (int64_t dim : type.getShape()) {
      int64_t size = dim;
      if (ShapedType::isDynamic(dim)) {
        std::optional<int64_t> bound = getConstantUpperBound(*dynamicSizes++);
        if (!bound)
          return why = "a dynamic size has no constant upper bound", failure();
        size = std::max<int64_t>(*bound, 0);
      }
      if (llvm::MulOverflow(elements, size, elements))
        return why = "it is too large", failure();
    }
    int64_t bytes = elements * elementBytes;
    if (bytes > maxBytes)
      return why = "its " + std::to_string(bytes) + " bytes exceed " +
                   std::to_string(maxBytes.getValue()),
             failure();
    return bytes;
  }

  /// Gives the candidates of one region (a function body or an
  /// omp.parallel region) slots at its entry, largest first: a candidate
  /// shares the first slot none of whose buffers is live with it, else
  /// takes a new one while the region's slots stay within
  /// `max-region-bytes`. Returns the candidates left on the heap.
  SmallVector<Candidate *> assignSlots(MutableArrayRef<Candidate *> candidates,
                                       SmallVectorImpl<Slot> &slots) {
    llvm::sort(candidates, [](Candidate *a, Candidate *b) {
      return std::make_pair(-a->bytes, a->order) <
             std::make_pair(-b->bytes, b->order);
    });
    SmallVector<Candidate *> left;
    int64_t used = 0;
    for (Candidate *c : candidates) {
      Slot *slot = llvm::find_if(slots, [&](const Slot &s) {
        return llvm::none_of(s.members,
                             [&](Candidate *m) { return interfere(*m, *c); });
      });
      if (slot == slots.end()) {
        if (used + c->bytes > maxRegionBytes) {
          left.push_back(c);
          continue;
        }
        used += c->bytes;
        slot = &slots.emplace_back();
        slot->bytes = c->bytes;
      }
      // Largest first: a slot is as large as its first buffer.
      slot->members.push_back(c);
    }
    return left;
  }

  /// Makes `slot` at the entry of `scope` and moves its buffers there.
  void materialize(const Slot &slot, OpBuilder &entry) {
    Candidate &first = *slot.members.front();
    Location loc = first.alloc.getLoc();
    MemRefType firstType = first.alloc.getType();
    // A buffer of static size alone in its slot keeps its type; others
    // view a slot of bytes with their sizes.
    Value typed;
    Value bytesSlot;
    if (slot.members.size() == 1 && firstType.hasStaticShape()) {
      typed = memref::AllocaOp::create(entry, loc, firstType,
                                       first.alloc.getAlignmentAttr());
    } else {
      // The largest alignment asked for, at least each element's size.
      int64_t alignment = 1;
      for (Candidate *c : slot.members) {
        IntegerAttr asked = c->alloc.getAlignmentAttr();
        alignment =
            std::max({alignment, c->elementBytes, asked ? asked.getInt() : 1});
      }
      auto slotType = MemRefType::get({slot.bytes}, entry.getI8Type());
      bytesSlot = memref::AllocaOp::create(entry, loc, slotType,
                                           entry.getI64IntegerAttr(alignment));
    }
    for (Candidate *c : slot.members) {
      Value replacement = typed;
      if (!replacement) {
        OpBuilder builder(c->alloc);
        Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
        replacement = memref::ViewOp::create(builder, c->alloc.getLoc(),
                                             c->alloc.getType(), bytesSlot,
                                             zero, c->alloc.getDynamicSizes());
      }
      for (memref::DeallocOp dealloc : c->deallocs)
        dealloc->erase();
      c->alloc.getResult().replaceAllUsesWith(replacement);
      c->alloc->erase();
    }
  }

  void remark(Candidate &c, StringRef why) {
    if (remarks && c.sequential)
      emitRemark(c.alloc.getLoc())
          << "a buffer allocated and freed in each iteration of a loop stays "
             "on the heap: "
          << why;
  }

  void runOnOperation() override {
    // The candidates of each region, in the order the regions are met.
    std::deque<Candidate> candidates;
    llvm::MapVector<Region *, SmallVector<Candidate *>> byScope;
    getOperation()->walk([&](memref::AllocOp alloc) {
      // Per-iteration allocations only: one nested in a loop.
      Operation *parent = alloc->getParentOp();
      for (; parent && !isa<FunctionOpInterface, omp::ParallelOp>(parent);
           parent = parent->getParentOp())
        if (isa<LoopLikeOpInterface, omp::LoopNestOp, scf::ParallelOp>(parent))
          break;
      if (!parent || isa<FunctionOpInterface, omp::ParallelOp>(parent))
        return;
      Operation *scope = alloc->getParentOp();
      while (!isa<FunctionOpInterface, omp::ParallelOp>(scope))
        scope = scope->getParentOp();
      // A sequential loop around it repeats it as often as its trip count;
      // a worksharing loop's body alone runs about once per thread's block.
      Candidate c{alloc, {}, nullptr, 0, 0, false, candidates.size()};
      for (Operation *op = alloc->getParentOp(); op != scope;
           op = op->getParentOp())
        c.sequential |= isa<scf::ForOp, scf::WhileOp>(op);
      std::string why;
      FailureOr<int64_t> bytes = slotBytes(alloc, c.elementBytes, why);
      if (succeeded(bytes)) {
        c.bytes = *bytes;
        why = checkUses(alloc, c.deallocs);
      }
      if (!why.empty())
        return remark(c, why);
      c.end = c.deallocs.front();
      for (memref::DeallocOp dealloc : c.deallocs)
        if (c.end->isBeforeInBlock(dealloc))
          c.end = dealloc;
      candidates.push_back(std::move(c));
      byScope[&scope->getRegion(0)].push_back(&candidates.back());
    });
    for (auto &[scope, inScope] : byScope) {
      SmallVector<Slot> slots;
      for (Candidate *c : assignSlots(inScope, slots))
        remark(*c, "the region's stack slots would exceed " +
                       std::to_string(maxRegionBytes.getValue()) + " bytes");
      auto entry = OpBuilder::atBlockBegin(&scope->front());
      for (const Slot &slot : slots)
        materialize(slot, entry);
    }
  }
};

} // namespace
