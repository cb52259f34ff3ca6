//===- PlanMemory.cpp - one arena for the model's intermediates -----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The buffers the model function allocates at its top level and frees
// before it returns live in one arena: each gets an offset such that two
// buffers whose lives overlap do not overlap in memory, and buffers whose
// lives are disjoint share bytes. The arena is the model function's last
// argument; seq-emit-invoke keeps it in the prepared state, so that it is
// allocated once per loaded model and reused by every run (docs/abi.md).
//
// Lives are intervals over the top-level ops of the function, from the
// first to the last op that touches the buffer's data through the buffer
// or any view of it (an op nested in a loop counts as the loop). Sizes may
// be dynamic: they are then rebuilt at the function entry from the
// arguments' sizes, and so are the offsets, as the maximum end of the
// buffers placed before that interfere (the order and the interference are
// fixed at compile time). A copy of that arithmetic, the function
// @__seqc_arena_bytes, tells the entry point how large the arena must be
// for a call.
//
// The phases are library functions (MemoryPlan.h); the pass calls them in
// turn.
//
//===----------------------------------------------------------------------===//

#include "lowering/Entry/MemoryPlan.h"

#include "lowering/Entry/Entry.h"
#include "lowering/Common/Attributes.h"

#include "dialect/Seq/IR/ModelSignature.h"
#include "dialect/Seq/Support/Debug.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/JSON.h"

#define DEBUG_TYPE "seq-plan-memory"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQPLANMEMORY
#include "lowering/Entry/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;
using namespace mlir::seq;

//===----------------------------------------------------------------------===//
// Sizes at the function entry
//===----------------------------------------------------------------------===//

namespace {

/// Rebuilds index values of the model function (the dynamic sizes of its
/// allocations) at the entry of a function from its arguments: pure ops on
/// constants, arguments and the sizes of arguments and of their views.
class EntryMaterializer {
public:
  EntryMaterializer(func::FuncOp source) : source(source) {}

  /// Whether `value` can be rebuilt.
  bool canMaterialize(Value value) { return build(value, nullptr, nullptr); }

  /// Rebuilds `value` with `builder`, mapping the source function's
  /// arguments through `mapping` (the ops built are recorded there too).
  Value materialize(Value value, OpBuilder &builder, IRMapping &mapping) {
    if (!build(value, &builder, &mapping))
      return nullptr;
    return mapping.lookup(value);
  }

private:
  /// The size `dim` of `memref` in terms of what precedes it.
  Value dimSource(Value memref, int64_t dim, OpBuilder *builder,
                  IRMapping *mapping, Location loc);
  bool build(Value value, OpBuilder *builder, IRMapping *mapping);

  func::FuncOp source;
};

} // namespace

Value EntryMaterializer::dimSource(Value memref, int64_t dim,
                                   OpBuilder *builder, IRMapping *mapping,
                                   Location loc) {
  // Returns `value` if it can be built (mapped when building).
  auto viaValue = [&](Value value) -> Value {
    if (!build(value, builder, mapping))
      return nullptr;
    return builder ? mapping->lookup(value) : value;
  };
  auto constant = [&](int64_t c) -> Value {
    if (!builder)
      return memref;
    return arith::ConstantIndexOp::create(*builder, loc, c);
  };
  auto type = dyn_cast<MemRefType>(memref.getType());
  if (!type || dim < 0 || dim >= type.getRank())
    return nullptr;
  if (!type.isDynamicDim(dim))
    return constant(type.getDimSize(dim));
  if (auto arg = dyn_cast<BlockArgument>(memref)) {
    if (arg.getOwner() != &source.getBody().front())
      return nullptr;
    if (!builder)
      return memref;
    Value index = arith::ConstantIndexOp::create(*builder, loc, dim);
    return memref::DimOp::create(*builder, loc, mapping->lookup(arg), index);
  }
  Operation *def = memref.getDefiningOp();
  if (!def)
    return nullptr;
  if (auto alloc = dyn_cast<memref::AllocOp>(def))
    return viaValue(alloc.getDynamicSizes()[type.getDynamicDimIndex(dim)]);
  if (auto view = dyn_cast<memref::ViewOp>(def))
    return viaValue(view.getSizes()[type.getDynamicDimIndex(dim)]);
  if (auto cast = dyn_cast<memref::CastOp>(def))
    return dimSource(cast.getSource(), dim, builder, mapping, loc);
  if (auto expand = dyn_cast<memref::ExpandShapeOp>(def)) {
    OpFoldResult size = expand.getMixedOutputShape()[dim];
    if (auto v = dyn_cast<Value>(size))
      return viaValue(v);
    return constant(*getConstantIntValue(size));
  }
  if (auto collapse = dyn_cast<memref::CollapseShapeOp>(def)) {
    Value product;
    // getReassociationIndices() returns a temporary: keep it alive.
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    for (int64_t d : groups[dim]) {
      Value factor = dimSource(collapse.getSrc(), d, builder, mapping, loc);
      if (!factor)
        return nullptr;
      if (!builder)
        continue;
      product = product ? arith::MulIOp::create(*builder, loc, product, factor)
                        : factor;
    }
    return builder ? product : memref;
  }
  if (auto subview = dyn_cast<memref::SubViewOp>(def)) {
    if (subview.getSourceType().getRank() != type.getRank())
      return nullptr;
    OpFoldResult size = subview.getMixedSizes()[dim];
    if (auto v = dyn_cast<Value>(size))
      return viaValue(v);
    return constant(*getConstantIntValue(size));
  }
  return nullptr;
}

bool EntryMaterializer::build(Value value, OpBuilder *builder,
                              IRMapping *mapping) {
  if (mapping && mapping->contains(value))
    return true;
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == &source.getBody().front() &&
           (!mapping || mapping->contains(arg));
  Operation *def = value.getDefiningOp();
  if (auto dim = dyn_cast<memref::DimOp>(def)) {
    std::optional<int64_t> index = dim.getConstantIndex();
    if (!index)
      return false;
    Value built =
        dimSource(dim.getSource(), *index, builder, mapping, dim.getLoc());
    if (!built)
      return false;
    if (mapping)
      mapping->map(value, built);
    return true;
  }
  // Pure scalar arithmetic without regions, at any depth (constants are
  // often hoisted into the function's entry, but need not be).
  if (!isPure(def) || def->getNumRegions() != 0 ||
      !llvm::all_of(def->getResultTypes(),
                    [](Type t) { return t.isIntOrIndexOrFloat(); }))
    return false;
  for (Value operand : def->getOperands())
    if (!build(operand, builder, mapping))
      return false;
  if (builder)
    builder->clone(*def, *mapping);
  return true;
}

//===----------------------------------------------------------------------===//
// The function to plan
//===----------------------------------------------------------------------===//

FailureOr<llvm::StringMap<int64_t>>
mlir::seq::parseSymbolicSizes(ArrayRef<std::string> bindings,
                              Operation *anchor) {
  llvm::StringMap<int64_t> values;
  for (StringRef binding : bindings) {
    auto [name, text] = binding.split('=');
    int64_t value;
    if (text.getAsInteger(10, value)) {
      anchor->emitError() << "expected a symbolic size as name=value in the "
                             "memory plan's dims, got '"
                          << binding << "'";
      return failure();
    }
    values[name] = value;
  }
  return values;
}

func::FuncOp mlir::seq::getMemoryPlanFunction(ModuleOp module) {
  auto entry = module->getAttrOfType<FlatSymbolRefAttr>(kEntryAttrName);
  if (!entry) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] no '" << kEntryAttrName
                            << "': nothing to plan\n");
    return nullptr;
  }
  auto function = module.lookupSymbol<func::FuncOp>(entry.getValue());
  if (!function || function.isExternal() ||
      !llvm::hasSingleElement(function.getBody())) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << entry
                            << " is not a defined function of one block: "
                               "nothing to plan\n");
    return nullptr;
  }
  return function;
}

LogicalResult mlir::seq::planMemoryPrecondition(func::FuncOp function) {
  auto module = function->getParentOfType<ModuleOp>();
  if (module.lookupSymbol(kArenaBytesFunctionName)) {
    module.emitError() << "the symbol '" << kArenaBytesFunctionName
                       << "' is reserved for the memory plan";
    return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Collecting the buffers
//===----------------------------------------------------------------------===//

/// Ops whose memref results view their memref operand.
static bool isViewOf(Operation *op) {
  return isa<ViewLikeOpInterface, memref::CastOp, memref::ReinterpretCastOp,
             memref::ExpandShapeOp, memref::CollapseShapeOp, memref::SubViewOp,
             memref::ViewOp, memref::TransposeOp,
             memref::ExtractStridedMetadataOp>(op);
}

/// Whether `op` calls a function that uses its memref arguments only
/// during the call: an outlined kernel (marked `seqc.kernel`) or a folded
/// layer that returns no memref.
static bool isKernelCall(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (!call)
    return false;
  auto callee =
      SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(op, call.getCalleeAttr());
  if (!callee)
    return false;
  if (callee->hasAttr(kKernelAttrName))
    return true;
  return callee.getSymName().starts_with(kLayerFunctionPrefix) &&
         llvm::none_of(callee.getResultTypes(), llvm::IsaPred<BaseMemRefType>);
}

/// Ops that read only the metadata of a memref, not its data.
static bool isMetadataOnly(Operation *op) {
  return isa<memref::DimOp, memref::ExtractStridedMetadataOp>(op) ||
         isViewOf(op);
}

/// Whether the address `op` takes of a buffer only reaches comparisons
/// (through integer arithmetic, to i1 results), as the CPU contraction
/// kernels' test of their output's alignment for non-temporal stores: the
/// buffer's data is not reached through it, so it does not escape.
static bool isOnlyCompared(memref::ExtractAlignedPointerAsIndexOp op) {
  SmallVector<Value> worklist = {op.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (value.getType().isInteger(1))
      continue;
    for (Operation *user : value.getUsers()) {
      if (!isa<arith::ArithDialect>(user->getDialect()))
        return false;
      llvm::append_range(worklist, user->getResults());
    }
  }
  return true;
}

/// Whether the arena can hold the buffer of `alloc`, its uses aside: an
/// identity-layout memref of byte-sized scalars in the default memory
/// space, with an alignment the arena's satisfies and sizes that
/// `materializer` can rebuild at the function entry.
static LogicalResult
arenaCandidatePrecondition(memref::AllocOp alloc, int64_t alignment,
                           EntryMaterializer &materializer) {
  auto reject = [&](StringRef why) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] not planned: " << alloc << ": "
                            << why << "\n");
    return failure();
  };
  MemRefType type = alloc.getType();
  Type element = type.getElementType();
  if (!type.getLayout().isIdentity())
    return reject("its layout is not the identity");
  if (type.getMemorySpace())
    return reject("it is in a memory space");
  if (!alloc.getSymbolOperands().empty())
    return reject("it has symbol operands");
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return reject("its elements are not scalars of whole bytes");
  if (alloc.getAlignment() && int64_t(*alloc.getAlignment()) > alignment)
    return reject("it asks for a larger alignment than the arena's");
  if (!llvm::all_of(alloc.getDynamicSizes(), [&](Value size) {
        return materializer.canMaterialize(size);
      }))
    return reject("a dynamic size cannot be rebuilt at the function entry");
  return success();
}

/// Collects the views of `buffer.alloc` into `buffer` and its live interval
/// over the top-level ops of `body` (numbered by `order`); fails when the
/// buffer escapes (is returned, yielded, passed to a call or to an op that
/// makes a non-view memref of it).
static LogicalResult analyzeUses(PlannedBuffer &buffer, Block &body,
                                 DenseMap<Operation *, unsigned> &order) {
  auto escape = [&](Operation *user, StringRef how) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] not planned: " << buffer.alloc
                            << ": it escapes " << how << " " << user->getName()
                            << " at " << user->getLoc() << "\n");
    return failure();
  };
  buffer.aliases.insert(buffer.alloc.getResult());
  bool touched = false;
  for (unsigned i = 0; i < buffer.aliases.size(); ++i) {
    Value alias = buffer.aliases[i];
    for (OpOperand &use : alias.getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::DeallocOp>(user))
        continue;
      // Terminators (return, yields), calls and anything else that turns
      // the buffer into a memref we cannot follow make it escape, and so
      // does taking its address as an integer, unless it is only compared
      // (isOnlyCompared). Calls of outlined kernels (seq-cpu-outline-kernels)
      // use their buffers only while they run.
      if (user->hasTrait<OpTrait::IsTerminator>())
        return escape(user, "through the terminator");
      if (isa<CallOpInterface>(user) && !isKernelCall(user))
        return escape(user, "into the call");
      if (auto address =
              dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(user)) {
        if (!isOnlyCompared(address))
          return escape(user, "as a pointer through");
        continue;
      }
      bool makesMemref = llvm::any_of(user->getResultTypes(), [](Type t) {
        return isa<BaseMemRefType>(t);
      });
      if (makesMemref) {
        if (!isViewOf(user))
          return escape(user, "as a memref that is not a view, made by");
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()))
            buffer.aliases.insert(result);
      }
      if (isMetadataOnly(user))
        continue;
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top)
        return escape(user, "out of the function's body into");
      unsigned position = order.lookup(top);
      if (!touched) {
        buffer.start = buffer.end = position;
        touched = true;
      }
      buffer.start = std::min(buffer.start, position);
      buffer.end = std::max(buffer.end, position);
    }
  }
  if (!touched)
    buffer.start = buffer.end = order.lookup(buffer.alloc);
  return success();
}

MemoryPlan mlir::seq::collectArenaBuffers(func::FuncOp function,
                                          int64_t alignment) {
  MemoryPlan plan;
  plan.function = function;
  plan.alignment = alignment;
  Block &body = function.getBody().front();
  DenseMap<Operation *, unsigned> order;
  for (Operation &op : body)
    order[&op] = order.size();
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] planning @" << function.getName()
                          << ", alignment " << alignment << "\n");

  EntryMaterializer materializer(function);
  for (auto alloc : body.getOps<memref::AllocOp>()) {
    PlannedBuffer buffer;
    buffer.alloc = alloc;
    if (failed(arenaCandidatePrecondition(alloc, alignment, materializer)) ||
        failed(analyzeUses(buffer, body, order))) {
      ++plan.numSkipped;
      continue;
    }
    MemRefType type = alloc.getType();
    if (type.hasStaticShape())
      buffer.staticBytes =
          llvm::alignTo(type.getNumElements() *
                            (type.getElementType().getIntOrFloatBitWidth() / 8),
                        alignment);
    LLVM_DEBUG({
      llvm::dbgs() << "[" DEBUG_TYPE "] buffer " << plan.buffers.size() << ": "
                   << alloc << ", live [" << buffer.start << ", " << buffer.end
                   << "], views " << buffer.aliases.size() - 1 << ", ";
      if (buffer.staticBytes)
        llvm::dbgs() << *buffer.staticBytes << " bytes\n";
      else
        llvm::dbgs() << "a dynamic size\n";
    });
    plan.buffers.push_back(std::move(buffer));
  }
  return plan;
}

//===----------------------------------------------------------------------===//
// Placing them
//===----------------------------------------------------------------------===//

/// Places `buffers` in the order `placement`.
static void placeInOrder(SmallVectorImpl<PlannedBuffer> &buffers,
                         ArrayRef<unsigned> placement) {
  LLVM_DEBUG({
    llvm::dbgs() << "[" DEBUG_TYPE "] placement order:";
    for (unsigned i : placement)
      llvm::dbgs() << " " << i;
    llvm::dbgs() << "\n";
  });

  // Each goes as low as the buffers placed before that it interferes with
  // allow: into the lowest gap when all of those are static; otherwise into
  // the slot of a buffer of the same size whose bytes no buffer it
  // interferes with overlaps, or above their highest end.
  SmallVector<unsigned> placed;
  // The buffers each one is placed above, directly or not: a buffer above
  // another one's slot cannot overlap it, whatever the sizes.
  SmallVector<llvm::BitVector> under(buffers.size());
  // Slots of buffers of one size (type and dynamic sizes): the buffers of
  // a slot have the same offset and disjoint lives. Listed by memref type,
  // so that within a list only the dynamic sizes need comparing.
  DenseMap<Type, SmallVector<SmallVector<unsigned>>> slots;
  for (unsigned i : placement) {
    PlannedBuffer &buffer = buffers[i];
    SmallVector<unsigned> conflicts;
    for (unsigned j : placed)
      if (buffers[j].interferes(buffer))
        conflicts.push_back(j);
    placed.push_back(i);
    under[i].resize(buffers.size());
    bool allStatic =
        buffer.staticBytes && llvm::all_of(conflicts, [&](unsigned j) {
          return buffers[j].staticBytes && buffers[j].staticOffset;
        });
    if (!allStatic) {
      // A slot whose buffers are all dead while this one lives, and that
      // every buffer this one interferes with is above or below: this one
      // takes the slot's offset (its `below`), so that buffers of one size
      // that follow each other (the residual stream of each layer) reuse
      // one place instead of stacking up.
      Type type = buffer.alloc.getType();
      auto fits = [&](ArrayRef<unsigned> members) {
        unsigned first = members.front();
        if (!llvm::equal(buffers[first].alloc.getDynamicSizes(),
                         buffer.alloc.getDynamicSizes()) ||
            llvm::any_of(members, [&](unsigned m) {
              return buffers[m].interferes(buffer);
            }))
          return false;
        // Above the slot (above one of its buffers), or below it.
        return llvm::all_of(conflicts, [&](unsigned j) {
          return under[first].test(j) ||
                 llvm::any_of(members,
                              [&](unsigned m) { return under[j].test(m); });
        });
      };
      SmallVector<SmallVector<unsigned>> &sized = slots[type];
      auto *slot = llvm::find_if(sized, fits);
      if (slot != sized.end()) {
        unsigned first = slot->front();
        buffer.below = buffers[first].below;
        buffer.staticOffset = buffers[first].staticOffset;
        under[i] = under[first];
        slot->push_back(i);
        LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] buffer " << i
                                << ": the place of buffer " << first
                                << " (the same size, dead while it lives)\n");
        continue;
      }
      sized.push_back({i});
      for (unsigned j : conflicts) {
        under[i].set(j);
        under[i] |= under[j];
      }
      buffer.below = conflicts;
      if (conflicts.empty())
        buffer.staticOffset = 0;
      LLVM_DEBUG({
        llvm::dbgs() << "[" DEBUG_TYPE "] buffer " << i;
        if (conflicts.empty()) {
          llvm::dbgs() << ": offset 0, no buffer placed before it "
                          "interferes\n";
        } else {
          llvm::dbgs() << ": offset above buffers";
          for (unsigned j : conflicts)
            llvm::dbgs() << " " << j;
          llvm::dbgs() << ", which it interferes with ("
                       << (buffer.staticBytes
                               ? "one of them has a dynamic size or offset"
                               : "its size is dynamic")
                       << ")\n";
        }
      });
      continue;
    }
    llvm::sort(conflicts, [&](unsigned a, unsigned b) {
      return *buffers[a].staticOffset < *buffers[b].staticOffset;
    });
    int64_t offset = 0;
    for (unsigned j : conflicts) {
      if (*buffers[j].staticOffset - offset >= *buffer.staticBytes)
        break;
      offset =
          std::max(offset, *buffers[j].staticOffset + *buffers[j].staticBytes);
    }
    buffer.staticOffset = offset;
    LLVM_DEBUG({
      auto range = [&](unsigned j) {
        llvm::dbgs() << " " << j << " [" << *buffers[j].staticOffset << ", "
                     << *buffers[j].staticOffset + *buffers[j].staticBytes
                     << ")";
      };
      llvm::dbgs() << "[" DEBUG_TYPE "] buffer " << i << ": offset " << offset
                   << ", " << *buffer.staticBytes << " bytes, ";
      if (conflicts.empty())
        llvm::dbgs() << "no buffer placed before it interferes";
      else
        llvm::dbgs() << "the lowest gap below, between or above the "
                        "interfering buffers";
      for (unsigned j : conflicts)
        range(j);
      // The bytes it shares with buffers whose lives are disjoint from its.
      for (unsigned j : placed) {
        const PlannedBuffer &other = buffers[j];
        if (j == i || other.interferes(buffer) || !other.staticBytes ||
            !other.staticOffset ||
            *other.staticOffset >= offset + *buffer.staticBytes ||
            offset >= *other.staticOffset + *other.staticBytes)
          continue;
        llvm::dbgs() << "; reuses bytes of buffer";
        range(j);
        llvm::dbgs() << ", live [" << other.start << ", " << other.end << "]";
      }
      llvm::dbgs() << "\n";
    });
  }
}

/// The arena's bytes under a placement, with each dynamic dimension of a
/// buffer counted as `kProxyDim` elements: what compares two placements
/// whose sizes are only known at run time.
static int64_t proxyPeak(ArrayRef<PlannedBuffer> buffers,
                         ArrayRef<unsigned> placement, int64_t alignment) {
  constexpr int64_t kProxyDim = 128;
  SmallVector<int64_t> size(buffers.size()), offset(buffers.size());
  for (auto [i, buffer] : llvm::enumerate(buffers)) {
    if (buffer.staticBytes) {
      size[i] = *buffer.staticBytes;
      continue;
    }
    memref::AllocOp alloc = buffer.alloc;
    MemRefType type = alloc.getType();
    int64_t bytes = type.getElementTypeBitWidth() / 8;
    for (int64_t d : type.getShape())
      bytes *= ShapedType::isDynamic(d) ? kProxyDim : d;
    size[i] = llvm::alignTo(bytes, alignment);
  }
  int64_t peak = 0;
  for (unsigned i : placement) {
    const PlannedBuffer &buffer = buffers[i];
    if (buffer.staticOffset) {
      offset[i] = *buffer.staticOffset;
    } else {
      offset[i] = 0;
      for (unsigned j : buffer.below)
        offset[i] = std::max(offset[i], offset[j] + size[j]);
    }
    peak = std::max(peak, offset[i] + size[i]);
  }
  return peak;
}

void mlir::seq::placeArenaBuffers(MemoryPlan &plan) {
  // Placement order: buffers of dynamic size first, then static ones from
  // the largest. The dynamic ones (which usually scale together) go either
  // in program order, where the stack-like layout reuses the space of the
  // dead, or from the longest-lived, which puts what lives across layers
  // (the residual stream, split per layer) at the bottom; both are tried
  // and the placement with the smaller arena (sizes evaluated at a proxy
  // dimension) kept, program order on a tie.
  auto orderOf = [&](bool longestFirst) {
    SmallVector<unsigned> placement =
        llvm::to_vector(llvm::seq<unsigned>(0, plan.buffers.size()));
    llvm::sort(placement, [&](unsigned a, unsigned b) {
      const PlannedBuffer &x = plan.buffers[a], &y = plan.buffers[b];
      if (x.staticBytes.has_value() != y.staticBytes.has_value())
        return !x.staticBytes.has_value();
      if (x.staticBytes)
        return std::make_pair(-*x.staticBytes, a) <
               std::make_pair(-*y.staticBytes, b);
      int64_t xLife = longestFirst ? int64_t(x.end) - x.start : 0;
      int64_t yLife = longestFirst ? int64_t(y.end) - y.start : 0;
      return std::make_tuple(-xLife, x.start, a) <
             std::make_tuple(-yLife, y.start, b);
    });
    return placement;
  };
  SmallVector<unsigned> programOrder = orderOf(false);
  SmallVector<unsigned> longestFirst = orderOf(true);
  if (programOrder == longestFirst) {
    placeInOrder(plan.buffers, programOrder);
    plan.placement = std::move(programOrder);
    return;
  }
  SmallVector<PlannedBuffer> inProgramOrder(plan.buffers);
  placeInOrder(inProgramOrder, programOrder);
  placeInOrder(plan.buffers, longestFirst);
  int64_t programPeak =
      proxyPeak(inProgramOrder, programOrder, plan.alignment);
  int64_t longestPeak = proxyPeak(plan.buffers, longestFirst, plan.alignment);
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] proxy arena bytes: program "
                          << "order " << programPeak << ", longest first "
                          << longestPeak << "\n");
  if (programPeak <= longestPeak) {
    plan.buffers = std::move(inProgramOrder);
    plan.placement = std::move(programOrder);
  } else {
    plan.placement = std::move(longestFirst);
  }
}

//===----------------------------------------------------------------------===//
// Materializing the plan
//===----------------------------------------------------------------------===//

/// Builds the sizes, offsets and the total of `plan` with `builder`, the
/// model function's arguments mapped through `mapping`. `rawSizes` gets
/// the sizes before rounding (for the report).
static Value buildPlanArithmetic(const MemoryPlan &plan,
                                 EntryMaterializer &materializer,
                                 OpBuilder &builder, IRMapping &mapping,
                                 SmallVectorImpl<Value> &sizes,
                                 SmallVectorImpl<Value> &offsets,
                                 SmallVectorImpl<Value> &rawSizes) {
  ArrayRef<PlannedBuffer> buffers = plan.buffers;
  int64_t alignment = plan.alignment;
  func::FuncOp function = plan.function;
  Location loc = function.getLoc();
  auto constant = [&](int64_t c) -> Value {
    return arith::ConstantIndexOp::create(builder, loc, c);
  };
  for (const PlannedBuffer &buffer : buffers) {
    if (buffer.staticBytes) {
      sizes.push_back(constant(*buffer.staticBytes));
      rawSizes.push_back(sizes.back());
      continue;
    }
    // Op handles are not const: a copy.
    memref::AllocOp alloc = buffer.alloc;
    MemRefType type = alloc.getType();
    int64_t staticPart = type.getElementTypeBitWidth() / 8;
    for (int64_t d : type.getShape())
      if (!ShapedType::isDynamic(d))
        staticPart *= d;
    Value bytes = constant(staticPart);
    for (Value size : alloc.getDynamicSizes())
      bytes = builder.createOrFold<arith::MulIOp>(
          loc, bytes, materializer.materialize(size, builder, mapping));
    rawSizes.push_back(bytes);
    // Round up to the alignment: (bytes + a - 1) & -a.
    bytes = builder.createOrFold<arith::AndIOp>(
        loc,
        builder.createOrFold<arith::AddIOp>(loc, bytes,
                                            constant(alignment - 1)),
        constant(-alignment));
    sizes.push_back(bytes);
  }
  offsets.assign(buffers.size(), Value());
  for (unsigned i : plan.placement) {
    const PlannedBuffer &buffer = buffers[i];
    if (buffer.staticOffset) {
      offsets[i] = constant(*buffer.staticOffset);
      continue;
    }
    Value offset;
    for (unsigned j : buffer.below) {
      Value end =
          builder.createOrFold<arith::AddIOp>(loc, offsets[j], sizes[j]);
      offset =
          offset ? builder.createOrFold<arith::MaxUIOp>(loc, offset, end) : end;
    }
    offsets[i] = offset;
  }
  Value total;
  for (unsigned i = 0; i < buffers.size(); ++i) {
    Value end = builder.createOrFold<arith::AddIOp>(loc, offsets[i], sizes[i]);
    total = total ? builder.createOrFold<arith::MaxUIOp>(loc, total, end) : end;
  }
  return total;
}

FailureOr<MaterializedMemoryPlan>
mlir::seq::materializeMemoryPlan(MemoryPlan &plan, bool bytesFunction) {
  func::FuncOp function = plan.function;
  MLIRContext *context = function.getContext();
  EntryMaterializer materializer(function);
  MaterializedMemoryPlan materialized;

  // The arena: the model function's last argument.
  auto arenaType =
      MemRefType::get({ShapedType::kDynamic}, IntegerType::get(context, 8));
  unsigned arenaIndex = function.getNumArguments();
  if (failed(function.insertArgument(arenaIndex, arenaType, {},
                                     function.getLoc())))
    return failure();
  materialized.arena = function.getArgument(arenaIndex);

  // @__seqc_arena_bytes(the model's arguments but the arena) -> index.
  if (bytesFunction) {
    OpBuilder moduleBuilder(function);
    SmallVector<Type> argTypes(function.getArgumentTypes().drop_back());
    auto bytesFunction = func::FuncOp::create(
        moduleBuilder, function.getLoc(), kArenaBytesFunctionName,
        FunctionType::get(context, argTypes, {IndexType::get(context)}));
    bytesFunction->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                           UnitAttr::get(context));
    materialized.arenaBytesFunction = bytesFunction;
    {
      Block *bytesBody = bytesFunction.addEntryBlock();
      OpBuilder builder = OpBuilder::atBlockEnd(bytesBody);
      IRMapping mapping;
      for (unsigned k = 0; k < argTypes.size(); ++k)
        mapping.map(function.getArgument(k), bytesBody->getArgument(k));
      SmallVector<Value> sizes, offsets, rawSizes;
      Value total = buildPlanArithmetic(plan, materializer, builder, mapping,
                                        sizes, offsets, rawSizes);
      func::ReturnOp::create(builder, function.getLoc(), total);
      LLVM_DEBUG({
        llvm::dbgs() << "[" DEBUG_TYPE "] the arena is argument " << arenaIndex
                     << " of @" << function.getName() << "; @"
                     << kArenaBytesFunctionName << " returns ";
        if (std::optional<int64_t> bytes = getConstantIntValue(total))
          llvm::dbgs() << *bytes << " bytes\n";
        else
          llvm::dbgs() << "a size computed from the arguments\n";
      });
    }
  }

  // In the model function: the same plan at the entry.
  OpBuilder builder = OpBuilder::atBlockBegin(&function.getBody().front());
  IRMapping mapping;
  for (BlockArgument arg : function.getArguments())
    mapping.map(arg, arg);
  buildPlanArithmetic(plan, materializer, builder, mapping, materialized.sizes,
                      materialized.offsets, materialized.rawSizes);
  return materialized;
}

FailureOr<MaterializedMemoryPlan>
mlir::seq::materializeSlicePlan(MemoryPlan &plan,
                                ArrayRef<func::CallOp> calls) {
  func::FuncOp function = plan.function;
  EntryMaterializer materializer(function);
  auto sliceType = MemRefType::get({ShapedType::kDynamic},
                                   IntegerType::get(function.getContext(), 8));
  for (func::CallOp call : calls) {
    OpBuilder builder(call);
    IRMapping mapping;
    for (auto [arg, operand] :
         llvm::zip_equal(function.getArguments(), call.getOperands()))
      mapping.map(arg, operand);
    SmallVector<Value> sizes, offsets, rawSizes;
    Value bytes = buildPlanArithmetic(plan, materializer, builder, mapping,
                                      sizes, offsets, rawSizes);
    Value slice = memref::AllocOp::create(
        builder, call.getLoc(), sliceType, ValueRange{bytes},
        builder.getI64IntegerAttr(plan.alignment));
    call.getOperandsMutable().append(slice);
    builder.setInsertionPointAfter(call);
    memref::DeallocOp::create(builder, call.getLoc(), slice);
  }
  return materializeMemoryPlan(plan, /*bytesFunction=*/false);
}

//===----------------------------------------------------------------------===//
// Reporting it
//===----------------------------------------------------------------------===//

/// The names of the symbolic sizes of the model's inputs, from the
/// manifest global (seq-build-manifest): names[i][d] for input i, dim d.
static SmallVector<SmallVector<std::string>> inputDimNames(ModuleOp module) {
  SmallVector<SmallVector<std::string>> names;
  auto global = module.lookupSymbol<LLVM::GlobalOp>(kManifestSymbol);
  auto text = global ? dyn_cast_or_null<StringAttr>(global.getValueOrNull())
                     : StringAttr();
  if (!text)
    return names;
  StringRef json = text.getValue();
  json.consume_back(StringRef("\0", 1));
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return names;
  }
  const llvm::json::Object *root = parsed->getAsObject();
  const llvm::json::Array *inputs = root ? root->getArray("inputs") : nullptr;
  if (!inputs)
    return names;
  for (const llvm::json::Value &input : *inputs) {
    names.emplace_back();
    const llvm::json::Object *object = input.getAsObject();
    const llvm::json::Array *shape =
        object ? object->getArray("shape") : nullptr;
    if (!shape)
      continue;
    for (const llvm::json::Value &dim : *shape) {
      std::optional<StringRef> symbol = dim.getAsString();
      names.back().push_back(symbol ? symbol->str() : "");
    }
  }
  return names;
}

/// A readable form of a size built by EntryMaterializer in `function`:
/// products and sums of constants and input sizes.
static std::string describeSize(Value value, func::FuncOp function,
                                ArrayRef<SmallVector<std::string>> dimNames) {
  if (std::optional<int64_t> c = getConstantIntValue(value))
    return std::to_string(*c);
  Operation *def = value.getDefiningOp();
  if (!def)
    return "?";
  if (auto dim = dyn_cast<memref::DimOp>(def)) {
    auto arg = dyn_cast<BlockArgument>(dim.getSource());
    std::optional<int64_t> index = dim.getConstantIndex();
    if (arg && index) {
      unsigned argNumber = arg.getArgNumber();
      if (argNumber < dimNames.size() &&
          *index < int64_t(dimNames[argNumber].size()) &&
          !dimNames[argNumber][*index].empty())
        return dimNames[argNumber][*index];
      return ("dim(%arg" + Twine(argNumber) + ", " + Twine(*index) + ")").str();
    }
  }
  auto binary = [&](StringRef symbol) {
    return "(" + describeSize(def->getOperand(0), function, dimNames) + " " +
           symbol.str() + " " +
           describeSize(def->getOperand(1), function, dimNames) + ")";
  };
  if (isa<arith::MulIOp>(def))
    return binary("*");
  if (isa<arith::AddIOp>(def))
    return binary("+");
  if (isa<arith::SubIOp>(def))
    return binary("-");
  if (isa<arith::DivUIOp, arith::DivSIOp>(def))
    return binary("/");
  std::string text = def->getName().stripDialect().str() + "(";
  for (auto [i, operand] : llvm::enumerate(def->getOperands()))
    text += (i ? ", " : "") + describeSize(operand, function, dimNames);
  return text + ")";
}

/// The value of `value`, an index built by EntryMaterializer, when the
/// inputs' symbolic sizes are `dims`: folds its ops on constants.
static std::optional<int64_t>
evaluateSize(Value value, const llvm::StringMap<int64_t> &dims,
             ArrayRef<SmallVector<std::string>> dimNames,
             DenseMap<Value, int64_t> &known) {
  if (auto it = known.find(value); it != known.end())
    return it->second;
  std::optional<int64_t> result = getConstantIntValue(value);
  Operation *def = value.getDefiningOp();
  if (!result && def) {
    if (auto dim = dyn_cast<memref::DimOp>(def)) {
      auto arg = dyn_cast<BlockArgument>(dim.getSource());
      std::optional<int64_t> index = dim.getConstantIndex();
      if (arg && index && arg.getArgNumber() < dimNames.size() &&
          *index < int64_t(dimNames[arg.getArgNumber()].size())) {
        auto it = dims.find(dimNames[arg.getArgNumber()][*index]);
        if (it != dims.end())
          result = it->second;
      }
    } else {
      SmallVector<Attribute> operands;
      for (Value operand : def->getOperands()) {
        std::optional<int64_t> v = evaluateSize(operand, dims, dimNames, known);
        if (!v)
          return std::nullopt;
        operands.push_back(IntegerAttr::get(operand.getType(), *v));
      }
      SmallVector<OpFoldResult> folded;
      if (def->getNumResults() == 1 && succeeded(def->fold(operands, folded)) &&
          folded.size() == 1) {
        if (auto attr = dyn_cast<Attribute>(folded[0])) {
          if (auto integer = dyn_cast<IntegerAttr>(attr))
            result = integer.getInt();
        } else {
          result = evaluateSize(cast<Value>(folded[0]), dims, dimNames, known);
        }
      }
    }
  }
  if (result)
    known[value] = *result;
  return result;
}

MemoryPlanReport mlir::seq::reportMemoryPlan(
    const MemoryPlan &plan, const MaterializedMemoryPlan &materialized,
    ArrayRef<std::string> dims, const llvm::StringMap<int64_t> &dimValues) {
  func::FuncOp function = plan.function;
  ArrayRef<PlannedBuffer> buffers = plan.buffers;
  // A folded layer's arguments are not the model's inputs.
  SmallVector<SmallVector<std::string>> dimNames;
  if (!function.getSymName().starts_with(kLayerFunctionPrefix))
    dimNames = inputDimNames(function->getParentOfType<ModuleOp>());
  DenseMap<Value, int64_t> known;
  std::optional<int64_t> evaluatedPeak = 0, evaluatedSum = 0;
  int64_t staticPeak = 0, staticSum = 0;
  bool allStatic = true;
  MemoryPlanReport report;
  llvm::raw_string_ostream os(report.text);
  os << "memory plan of @" << function.getName() << ": " << buffers.size()
     << " buffers in one arena, " << plan.numSkipped
     << " allocations not planned\n";
  for (auto [i, buffer] : llvm::enumerate(buffers)) {
    Value size = materialized.sizes[i], offsetValue = materialized.offsets[i];
    std::optional<int64_t> offset = getConstantIntValue(offsetValue);
    if (buffer.staticBytes && offset) {
      staticPeak = std::max(staticPeak, *offset + *buffer.staticBytes);
      staticSum += *buffer.staticBytes;
    } else {
      allStatic = false;
    }
    memref::AllocOp alloc = buffer.alloc;
    os << "  buffer " << i << ": " << alloc.getType() << " at "
       << alloc.getLoc() << ", bytes "
       << (buffer.staticBytes
               ? std::to_string(*buffer.staticBytes)
               : describeSize(materialized.rawSizes[i], function, dimNames))
       << ", offset ";
    if (offset)
      os << *offset;
    else {
      os << "above buffers";
      for (unsigned j : buffer.below)
        os << " " << j;
    }
    os << ", live [" << buffer.start << ", " << buffer.end << "]";
    std::optional<int64_t> bytes =
        evaluateSize(size, dimValues, dimNames, known);
    std::optional<int64_t> at =
        evaluateSize(offsetValue, dimValues, dimNames, known);
    if (!buffer.staticBytes && bytes && at)
      os << " (" << *bytes << " bytes at " << *at << ")";
    if (bytes && at && evaluatedPeak) {
      evaluatedPeak = std::max(*evaluatedPeak, *at + *bytes);
      *evaluatedSum += *bytes;
    } else {
      evaluatedPeak = std::nullopt;
    }
    os << "\n";
  }
  if (allStatic) {
    report.peak = staticPeak;
    report.sum = staticSum;
    os << "  peak " << staticPeak << " bytes (" << staticSum
       << " without reuse)\n";
  } else if (evaluatedPeak && !dims.empty()) {
    report.peak = *evaluatedPeak;
    report.sum = *evaluatedSum;
    report.atDims = true;
    os << "  peak at " << llvm::join(dims, ", ") << ": " << *evaluatedPeak
       << " bytes (" << *evaluatedSum << " without reuse)\n";
  } else {
    os << "  peak: dynamic (a function of the input sizes; give them to "
          "evaluate it)\n";
  }
  return report;
}

//===----------------------------------------------------------------------===//
// Rewriting the allocations
//===----------------------------------------------------------------------===//

void mlir::seq::replaceAllocationsWithArenaViews(
    MemoryPlan &plan, const MaterializedMemoryPlan &materialized) {
  OpBuilder builder(plan.function.getContext());
  for (auto [i, buffer] : llvm::enumerate(plan.buffers)) {
    memref::AllocOp alloc = buffer.alloc;
    LLVM_DEBUG({
      llvm::dbgs() << "[" DEBUG_TYPE "] buffer " << i << ": " << alloc.getType()
                   << " at " << alloc.getLoc()
                   << " becomes a view of the arena at offset ";
      if (std::optional<int64_t> offset =
              getConstantIntValue(materialized.offsets[i]))
        llvm::dbgs() << *offset;
      else
        llvm::dbgs() << materialized.offsets[i];
      llvm::dbgs() << "; its deallocations go\n";
    });
    builder.setInsertionPoint(alloc);
    Value view = memref::ViewOp::create(
        builder, alloc.getLoc(), alloc.getType(), materialized.arena,
        materialized.offsets[i], alloc.getDynamicSizes());
    for (Value alias : buffer.aliases)
      for (Operation *user : llvm::make_early_inc_range(alias.getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
    alloc.replaceAllUsesWith(view);
    alloc.erase();
    buffer.alloc = nullptr;
  }
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct SeqPlanMemoryPass
    : public mlir::seq::impl::SeqPlanMemoryBase<SeqPlanMemoryPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

void SeqPlanMemoryPass::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<llvm::StringMap<int64_t>> dimValues =
      parseSymbolicSizes(dims, module);
  if (failed(dimValues))
    return signalPassFailure();
  func::FuncOp function = getMemoryPlanFunction(module);
  if (!function)
    return;
  if (failed(planMemoryPrecondition(function)))
    return signalPassFailure();

  // First the folded layers (seq-fold-layers), which the model function
  // calls: each plans its own buffers into a slice of its caller's memory
  // per call, which the model function's plan then places with the rest.
  std::string layerReports;
  bool slices = false;
  for (func::FuncOp layer :
       llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
    if (!layer.getSymName().starts_with(kLayerFunctionPrefix) ||
        layer.isExternal() || !llvm::hasSingleElement(layer.getBody()))
      continue;
    SmallVector<func::CallOp> calls;
    bool onlyCalled = true;
    if (std::optional<SymbolTable::UseRange> uses =
            SymbolTable::getSymbolUses(layer, module)) {
      for (const SymbolTable::SymbolUse &use : *uses) {
        auto call = dyn_cast<func::CallOp>(use.getUser());
        if (call && call->getParentOfType<func::FuncOp>() == function)
          calls.push_back(call);
        else
          onlyCalled = false;
      }
    }
    if (!onlyCalled || calls.empty()) {
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] @" << layer.getSymName()
                              << " is not only called by @"
                              << function.getSymName() << ": not planned\n");
      continue;
    }
    MemoryPlan layerPlan = collectArenaBuffers(layer, alignment);
    if (layerPlan.buffers.empty())
      continue;
    placeArenaBuffers(layerPlan);
    FailureOr<MaterializedMemoryPlan> materialized =
        materializeSlicePlan(layerPlan, calls);
    if (failed(materialized))
      return signalPassFailure();
    MemoryPlanReport report =
        reportMemoryPlan(layerPlan, *materialized, {}, {});
    layerReports += report.text;
    if (remarks)
      layer.emitRemark() << "memory plan: " << layerPlan.buffers.size()
                         << " buffers in a slice of the caller's arena per "
                         << "call, of "
                         << (report.peak ? std::to_string(*report.peak) +
                                               " bytes"
                                         : std::string("a size computed "
                                                       "from its arguments"));
    replaceAllocationsWithArenaViews(layerPlan, *materialized);
    slices = true;
  }

  MemoryPlan plan = collectArenaBuffers(function, alignment);
  if (plan.buffers.empty()) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] no buffer to plan\n");
    return;
  }
  placeArenaBuffers(plan);
  FailureOr<MaterializedMemoryPlan> materialized = materializeMemoryPlan(plan);
  if (failed(materialized))
    return signalPassFailure();

  MemoryPlanReport report =
      reportMemoryPlan(plan, *materialized, dims, *dimValues);
  MLIRContext *context = &getContext();
  module->setAttr(kMemoryPlanAttr,
                  StringAttr::get(context, report.text + layerReports));
  module->setAttr(kArenaAttr,
                  IntegerAttr::get(IntegerType::get(context, 64), alignment));
  if (remarks) {
    InFlightDiagnostic remark = function.emitRemark()
                                << "memory plan: " << plan.buffers.size()
                                << " buffers in one arena";
    if (report.peak && !report.atDims)
      remark << " of " << *report.peak << " bytes (" << report.sum
             << " without reuse)";
    else if (report.peak)
      remark << " of " << *report.peak << " bytes at " << llvm::join(dims, ", ")
             << " (" << report.sum << " without reuse)";
    else
      remark << " of a size computed from the input sizes at each call";
    if (plan.numSkipped)
      remark << "; " << plan.numSkipped << " allocations stay on the heap";
  }

  replaceAllocationsWithArenaViews(plan, *materialized);
  // The slices' views and sizes, like the other views of the arena, at the
  // entry: the calls of a layer follow each other (seq-loop-layers).
  if (slices)
    hoistToEntry(function.getBody().front());
}
