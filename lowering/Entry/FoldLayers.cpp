//===- FoldLayers.cpp - compile repeated layers once ----------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Outlines the code of each layer of the model function into a function
// shared by the layers that compile to the same code, called once per
// layer with that layer's values (its weights, prepared weights, arena
// views and sizes) as arguments. See the pass description in Passes.td.
//
// The frontend names the module instance whose forward built an op in the
// op's location (a NameLoc "layers.3" around the call site). The top-level
// ops of the model function are cut into segments at the points where the
// outermost instance changes; segments with the same structure are folded.
// Structure is compared as seq-cpu-outline-kernels compares loop nests:
// op names, attributes, properties and types in pre-order, each operand a
// value defined inside the segment (by its position) or the i-th value
// defined above it, except that a constant defined above is cloned into
// the function only when every folded segment uses the same constant there
// and is passed as an argument otherwise (the arena offsets of layers
// differ). Each call then runs exactly the ops of the segment it replaces
// on the same values: outlining a contiguous range of ops preserves the
// semantics whatever the segments are, the locations only choose the cuts.
//
// Segments that have no twin are cut again at the next instance level
// (a model whose layers differ may still repeat their sub-modules).
//
//===----------------------------------------------------------------------===//

#include "lowering/Entry/Entry.h"
#include "lowering/Common/Instances.h"
#include "lowering/Common/OpShape.h"

#include "dialect/Seq/IR/ModelSignature.h"
#include "dialect/Seq/IR/SeqOps.h"
#include "dialect/Seq/Support/Debug.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/FoldUtils.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"

#include <map>

#define DEBUG_TYPE "seq-fold-layers"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQFOLDLAYERS
#include "lowering/Entry/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;
using mlir::seq::haveSameShape;
using mlir::seq::hashOpShape;
using mlir::seq::isClonableConstant;

namespace {

/// A contiguous range of top-level ops of the model function built by one
/// instance, and what it reads from above.
struct Segment {
  NameLoc instance;
  SmallVector<Operation *> ops;
  /// The operands defined above the segment, constants included, one per
  /// use in pre-order: the same value in two places of one layer may be
  /// two values in another (two offsets in the arena that happen to be
  /// equal), so the group decides which uses share an argument.
  SmallVector<Value> externals;
  /// Results of the top-level ops, in order; `escapes` says which are used
  /// after the segment.
  SmallVector<Value> results;
  llvm::BitVector escapes;
  llvm::hash_code hash;
  int64_t numOps = 0;
  /// Why the segment is not folded whatever its twins; empty if it may be.
  std::string rejected;
};

/// How the uses from above of a group of twins become the arguments of
/// their function.
struct Arguments {
  /// The argument of each use, or -1 for a constant cloned into the
  /// function.
  SmallVector<int> ofUse;
  /// The first use of each argument.
  SmallVector<size_t> firstUse;
};
} // namespace

Operation *mlir::seq::hoistToEntry(Block &body,
                                   const DenseSet<Operation *> &allocations) {
  llvm::SmallPtrSet<Operation *, 32> atEntry;
  Operation *last = nullptr;
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
    bool movable = allocations.contains(&op) ||
                   (op.getNumRegions() == 0 && isMemoryEffectFree(&op));
    if (!movable || llvm::any_of(op.getOperands(), [&](Value operand) {
          Operation *def = operand.getDefiningOp();
          return def && !atEntry.contains(def);
        }))
      continue;
    if (last)
      op.moveAfter(last);
    else
      op.moveBefore(&body.front());
    atEntry.insert(&op);
    last = &op;
  }
  return last;
}

/// Ops whose memref result views their first operand.
static bool isViewOp(Operation *op) {
  return isa<memref::CastOp, memref::ReinterpretCastOp, memref::ExpandShapeOp,
             memref::CollapseShapeOp, memref::SubViewOp, memref::ViewOp,
             memref::TransposeOp>(op);
}

/// The buffer `value` views, through any number of views.
static Value viewRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isViewOp(def))
      break;
    value = def->getOperand(0);
  }
  return value;
}

/// Calls `visit` on each user of `buffer` and of its views (at any depth),
/// its deallocations aside.
static void forEachUse(Value buffer,
                       llvm::function_ref<void(Operation *)> visit) {
  SmallVector<Value> worklist{buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (isa<memref::DeallocOp>(user))
        continue;
      visit(user);
      if (isViewOp(user))
        worklist.push_back(user->getResult(0));
    }
  }
}

/// Whether a user other than a deallocation of `buffer` or of a view of it
/// (at any depth) lies outside the top-level ops `members` of `block`.
static bool usedOutside(Value buffer, Block *block,
                        const DenseSet<Operation *> &members) {
  bool outside = false;
  forEachUse(buffer, [&](Operation *user) {
    outside |= !members.contains(block->findAncestorOpInBlock(*user));
  });
  return outside;
}

/// The size of dimension `index` of `source` read from where its buffer was
/// made: a constant for a static size, an allocation's or an expand_shape's
/// size operand, or the product of the sizes a collapse_shape merges (each
/// resolved the same way, else a `memref.dim` of its source; built at
/// `builder`'s point). Null otherwise: only a `memref.dim` of `source`
/// itself would give it.
static Value resolveSize(OpBuilder &builder, Location loc, Value source,
                         int64_t index) {
  auto type = cast<MemRefType>(source.getType());
  if (!type.isDynamicDim(index))
    return arith::ConstantIndexOp::create(builder, loc, type.getDimSize(index));
  if (auto alloc = source.getDefiningOp<memref::AllocOp>())
    return alloc.getDynamicSizes()[type.getDynamicDimIndex(index)];
  if (auto expand = source.getDefiningOp<memref::ExpandShapeOp>())
    return dyn_cast<Value>(expand.getMixedOutputShape()[index]);
  if (auto collapse = source.getDefiningOp<memref::CollapseShapeOp>()) {
    Value product;
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    for (int64_t merged : groups[index]) {
      Value size = resolveSize(builder, loc, collapse.getSrc(), merged);
      if (!size)
        size = memref::DimOp::create(builder, loc, collapse.getSrc(), merged);
      product =
          product ? arith::MulIOp::create(builder, loc, product, size) : size;
    }
    return product;
  }
  return nullptr;
}

/// Replaces each `memref.dim` of an allocation, an expand_shape or a
/// collapse_shape by the sizes it reads (resolveSize), transitively: a size
/// computed from a layer's own buffers becomes the size at the entry it
/// equals, so that what the layers share can move there.
static void resolveDims(Block &body) {
  body.walk([](memref::DimOp dim) {
    std::optional<int64_t> index = dim.getConstantIndex();
    Value source = dim.getSource();
    auto type = dyn_cast<MemRefType>(source.getType());
    if (!index || !type || *index < 0 || *index >= type.getRank() ||
        !type.isDynamicDim(*index))
      return;
    OpBuilder builder(dim);
    if (Value size = resolveSize(builder, dim.getLoc(), source, *index))
      dim.replaceAllUsesWith(size);
  });
}

/// Folds the top-level pure ops that resolveDims made constant (the
/// broadcast checks' comparisons of a size with itself): the layers would
/// otherwise take their results as arguments, and the layer functions keep
/// checks that cannot fail.
static void foldResolvedSizes(Block &body) {
  OperationFolder folder(body.getParentOp()->getContext());
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
    if (op.getNumRegions() == 0 && isMemoryEffectFree(&op) &&
        !op.hasTrait<OpTrait::ConstantLike>())
      (void)folder.tryToFold(&op);
}

/// Moves each top-level deallocation of a buffer `body` allocates right
/// after the last top-level op that touches the buffer or a view of it
/// (bufferization frees them all at the end): a layer then frees what it
/// allocated for itself, and its function owns those buffers. A buffer
/// whose address is taken or that is passed to a call keeps its place
/// (what uses the address, or the callee, may outlive the last use).
static void freeAfterLastUse(Block &body) {
  // The positions of the top-level ops before any move: a moved
  // deallocation takes the position of the op it now follows. (Asking the
  // block after each move would renumber it each time, quadratic in the
  // number of ops: a fifth of the pass at 96 layers.)
  DenseMap<Operation *, unsigned> position;
  for (Operation &op : body)
    position[&op] = position.size();
  for (auto dealloc :
       llvm::make_early_inc_range(body.getOps<memref::DeallocOp>())) {
    Value root = viewRoot(dealloc.getMemref());
    if (!root.getDefiningOp<memref::AllocOp>())
      continue;
    Operation *last = root.getDefiningOp();
    bool escapes = false;
    forEachUse(root, [&](Operation *user) {
      escapes |= isa<CallOpInterface, memref::ExtractAlignedPointerAsIndexOp,
                     memref::ExtractStridedMetadataOp>(user);
      Operation *top = body.findAncestorOpInBlock(*user);
      if (top && position.lookup(last) < position.lookup(top))
        last = top;
    });
    if (!escapes && position.lookup(last) < position.lookup(dealloc)) {
      dealloc->moveAfter(last);
      position[dealloc] = position.lookup(last);
    }
  }
}

/// Whether `value` is defined inside the top-level ops `members` of `block`.
static bool isDefinedIn(Value value, Block *block,
                        const DenseSet<Operation *> &members) {
  Operation *def = value.getDefiningOp();
  if (!def)
    def = value.getParentBlock()->getParentOp();
  Operation *top = block->findAncestorOpInBlock(*def);
  return top && members.contains(top);
}

/// Makes `segment` take the buffers it reads from above as themselves, not
/// as views: each view from above is rebuilt at its start (a function given
/// a buffer and a view of it as two arguments could not tell that they
/// alias, and the kernels it gets check aliasing by the buffers' roots).
/// Its deallocations of buffers from above move after it: the caller owns
/// those (its memory plan places them).
static void isolateSegment(Segment &segment) {
  Block *block = segment.ops.front()->getBlock();
  DenseSet<Operation *> members(segment.ops.begin(), segment.ops.end());
  SmallVector<Operation *> frees;
  for (Operation *op : segment.ops)
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op);
        dealloc && !isDefinedIn(viewRoot(dealloc.getMemref()), block, members))
      frees.push_back(op);
  for (Operation *op : frees)
    members.erase(op);
  llvm::erase_if(segment.ops,
                 [&](Operation *op) { return !members.contains(op); });
  Operation *after = segment.ops.back();
  for (Operation *op : frees) {
    op->moveAfter(after);
    after = op;
  }

  OpBuilder builder(segment.ops.front());
  DenseMap<Value, Value> rebuilt;
  SmallVector<Operation *> views;
  std::function<Value(Value)> rebuild = [&](Value value) -> Value {
    Operation *def = value.getDefiningOp();
    if (!def || !isViewOp(def))
      return value;
    if (Value done = rebuilt.lookup(value))
      return done;
    IRMapping mapping;
    mapping.map(def->getOperand(0), rebuild(def->getOperand(0)));
    Operation *clone = builder.clone(*def, mapping);
    views.push_back(clone);
    rebuilt[value] = clone->getResult(0);
    return clone->getResult(0);
  };
  for (Operation *top : segment.ops)
    top->walk([&](Operation *op) {
      for (OpOperand &operand : op->getOpOperands())
        if (isa<BaseMemRefType>(operand.get().getType()) &&
            !isDefinedIn(operand.get(), block, members))
          operand.set(rebuild(operand.get()));
    });
  segment.ops.insert(segment.ops.begin(), views.begin(), views.end());
}

/// Calls `fn(alloc, escapes)` for each allocation at the top level of
/// `segments`, `escapes` telling whether an op of `body` outside its segment
/// uses it.
static void forEachAllocation(ArrayRef<std::unique_ptr<Segment>> segments,
                              Block &body,
                              llvm::function_ref<void(Operation *, bool)> fn) {
  for (const std::unique_ptr<Segment> &segment : segments) {
    DenseSet<Operation *> members(segment->ops.begin(), segment->ops.end());
    for (Operation *op : segment->ops)
      if (isa<memref::AllocOp>(op))
        fn(op, usedOutside(op->getResult(0), &body, members));
  }
}

/// Moves to the entry the allocations of `segments` (cut below the
/// outermost instances) that ops outside their segment use, as foldFunction
/// does for the outermost ones: a sub-module's buffer that the next one
/// reads (the residual stream of layers nested in a model) is then an
/// argument of its function, not a result. The ops that move leave their
/// segments, and a segment left empty is dropped.
static void
hoistEscapingAllocations(SmallVectorImpl<std::unique_ptr<Segment>> &segments) {
  if (segments.empty())
    return;
  Block &body = *segments.front()->ops.front()->getBlock();
  DenseSet<Operation *> escaping;
  forEachAllocation(segments, body, [&](Operation *alloc, bool escapes) {
    if (escapes)
      escaping.insert(alloc);
  });
  if (escaping.empty())
    return;
  Operation *last = seq::hoistToEntry(body, escaping);
  if (!last)
    return;
  DenseSet<Operation *> atEntry;
  for (Operation &op :
       llvm::make_range(body.begin(), std::next(last->getIterator())))
    atEntry.insert(&op);
  for (std::unique_ptr<Segment> &segment : segments)
    llvm::erase_if(segment->ops,
                   [&](Operation *op) { return atEntry.contains(op); });
  llvm::erase_if(segments, [](const std::unique_ptr<Segment> &segment) {
    return segment->ops.empty();
  });
}

/// Fills in the externals, results, hash and size of `segment`, or the
/// reason it cannot be outlined: a region of several blocks or an op with
/// successors (values used before the walk reaches them), or a stack
/// allocation at its top level (released when the function returns).
static void analyzeSegment(Segment &segment) {
  DenseSet<Value> local;
  llvm::hash_code hash = llvm::hash_value(segment.ops.size());
  int64_t numOps = 0;
  for (Operation *top : segment.ops) {
    if (isa<memref::AllocaOp>(top)) {
      segment.rejected = "it allocates on the stack at its top level";
      return;
    }
    bool freesExternal = false;
    WalkResult result = top->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op->getNumSuccessors() != 0)
        return WalkResult::interrupt();
      if (auto dealloc = dyn_cast<memref::DeallocOp>(op);
          dealloc && !local.contains(viewRoot(dealloc.getMemref()))) {
        freesExternal = true;
        return WalkResult::interrupt();
      }
      ++numOps;
      hash = llvm::hash_combine(hash, hashOpShape(op));
      for (Value operand : op->getOperands()) {
        if (local.contains(operand))
          continue;
        segment.externals.push_back(operand);
        hash = llvm::hash_combine(hash, operand.getType().getAsOpaquePointer());
      }
      for (Value value : op->getResults())
        local.insert(value);
      for (Region &region : op->getRegions()) {
        hash = llvm::hash_combine(hash, region.empty());
        if (region.empty())
          continue;
        if (!region.hasOneBlock())
          return WalkResult::interrupt();
        for (BlockArgument arg : region.front().getArguments()) {
          local.insert(arg);
          hash = llvm::hash_combine(hash, arg.getType().getAsOpaquePointer());
        }
        hash = llvm::hash_combine(hash, region.front().getOperations().size());
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted()) {
      segment.rejected = freesExternal
                             ? "it frees a buffer allocated before it"
                             : "it has control flow of several blocks";
      return;
    }
  }
  DenseSet<Operation *> members(segment.ops.begin(), segment.ops.end());
  Block *block = segment.ops.front()->getBlock();
  for (Operation *top : segment.ops) {
    for (Value value : top->getResults()) {
      bool escapes = llvm::any_of(value.getUsers(), [&](Operation *user) {
        return !members.contains(block->findAncestorOpInBlock(*user));
      });
      segment.results.push_back(value);
      segment.escapes.push_back(escapes);
    }
  }
  segment.hash = hash;
  segment.numOps = numOps;
}

namespace {

/// Compares two analyzed segments op by op, in the pre-order analyzeSegment
/// hashed them in. Values defined inside correspond by position; values
/// from above need only have the same types (they become arguments, or
/// constants when the group agrees on them).
class SegmentComparator {
public:
  SegmentComparator(const Segment &a, const Segment &b) : a(a), b(b) {}

  bool run() {
    if (a.ops.size() != b.ops.size() || a.numOps != b.numOps ||
        a.externals.size() != b.externals.size()) {
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] '" << a.instance.getName().getValue()
                 << "' and '" << b.instance.getName().getValue()
                 << "' differ in size: " << a.ops.size() << "/"
                 << b.ops.size() << " top-level ops, " << a.numOps << "/"
                 << b.numOps << " ops, " << a.externals.size() << "/"
                 << b.externals.size() << " uses from above\n");
      return false;
    }
    for (auto [x, y] : llvm::zip_equal(a.externals, b.externals))
      if (x.getType() != y.getType())
        return false;
    for (auto [x, y] : llvm::zip_equal(a.ops, b.ops))
      if (!compareOps(x, y))
        return false;
    return true;
  }

private:
  bool compareOperands(Value x, Value y) {
    if (auto it = local.find(x); it != local.end())
      return it->second == y;
    // From above in both: the k-th such use of `a` is the k-th of `b`,
    // whose types run() compared.
    return !localB.contains(y);
  }

  void mapLocal(Value x, Value y) {
    local[x] = y;
    localB.insert(y);
  }

  bool compareOps(Operation *x, Operation *y) {
    if (!haveSameShape(x, y))
      return mismatch(x, y, "op");
    for (auto [u, v] : llvm::zip_equal(x->getOperands(), y->getOperands()))
      if (!compareOperands(u, v))
        return mismatch(x, y, "operand");
    for (auto [u, v] : llvm::zip_equal(x->getResults(), y->getResults()))
      mapLocal(u, v);
    for (auto [rx, ry] : llvm::zip_equal(x->getRegions(), y->getRegions())) {
      if (rx.empty() || ry.empty()) {
        if (rx.empty() != ry.empty())
          return false;
        continue;
      }
      Block &bx = rx.front();
      Block &by = ry.front();
      if (bx.getNumArguments() != by.getNumArguments() ||
          bx.getOperations().size() != by.getOperations().size())
        return false;
      for (auto [u, v] :
           llvm::zip_equal(bx.getArguments(), by.getArguments())) {
        if (u.getType() != v.getType())
          return false;
        mapLocal(u, v);
      }
      for (auto [ox, oy] : llvm::zip_equal(bx, by))
        if (!compareOps(&ox, &oy))
          return false;
    }
    return true;
  }

  bool mismatch(Operation *x, Operation *y, StringRef what) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] '"
                            << a.instance.getName().getValue() << "' and '"
                            << b.instance.getName().getValue() << "' differ ("
                            << what << "): " << x->getName() << " at "
                            << x->getLoc() << " / " << y->getName() << " at "
                            << y->getLoc() << "\n");
    return false;
  }

  const Segment &a;
  const Segment &b;
  /// Values of `a` defined inside its segment -> their counterparts in `b`.
  DenseMap<Value, Value> local;
  DenseSet<Value> localB;
};

struct SeqFoldLayersPass
    : public seq::impl::SeqFoldLayersBase<SeqFoldLayersPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// Cuts `ops` (top-level ops of one function, in order) into segments at
  /// the `level`-th instance of their chains.
  SmallVector<std::unique_ptr<Segment>> cutSegments(ArrayRef<Operation *> ops,
                                                    unsigned level);

  /// Cuts `ops` into segments, folds the groups of twins and recurses into
  /// the segments left.
  void foldRange(ArrayRef<Operation *> ops, unsigned level);

  /// Outlines `group` (twins, the first one the pattern) into a function
  /// taking `args` and replaces each segment by a call to it.
  func::FuncOp fold(ArrayRef<Segment *> group, const Arguments &args);

  DenseMap<Operation *, SmallVector<NameLoc, 4>> chains;
  /// Results of segments replaced by the results of their calls, for the
  /// externals of segments folded later.
  DenseMap<Value, Value> replaced;
  SymbolTable *symbols = nullptr;
  unsigned numFolded = 0;
  /// The functions folded from the function being folded.
  SmallVector<func::FuncOp> created;
  /// Before the deallocation passes: a group was left to the run after
  /// them, so this run changes nothing.
  bool deferred = false;
  /// The remarks of the function being folded, emitted once it is.
  SmallVector<std::pair<Location, std::string>> remarksToEmit;

  void remark(Location loc, const Twine &message) {
    if (remarks && !onTensors)
      remarksToEmit.emplace_back(loc, message.str());
  }

  /// Folds the layers of `function`, a defined function of one block.
  void foldFunction(func::FuncOp function);

  /// On tensors: the pure ops of the function being folded that read only
  /// its arguments, constants and other leaves (sizes of the inputs, empty
  /// tensors of those sizes, reshapes and slices of weights).
  DenseSet<Operation *> leaves;

  /// On tensors: gives each top-level op of `body` but the leaves and
  /// constants its instance chain, moves each leaf right after the last op
  /// it reads, and returns the ops of `body` in their new order.
  SmallVector<Operation *> gatherOnTensors(Block &body);

  /// On tensors: gives `segment` its own copy of each leaf from above that
  /// it reads, right before the first of its ops that does.
  void cloneLeaves(Segment &segment);
};

} // namespace

/// A list of the instances' names: "layers.0, layers.1, layers.2".
static std::string describeInstances(ArrayRef<Segment *> group) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(group, os, [&](Segment *segment) {
    os << "'" << segment->instance.getName().getValue() << "'";
  });
  return text;
}

/// Each use from above is a constant cloned into the function when every
/// twin has the same constant there, else an argument; two uses share an
/// argument when they are the same value in every twin.
static Arguments assignArguments(ArrayRef<Segment *> group) {
  const Segment &pattern = *group.front();
  size_t numUses = pattern.externals.size();
  Arguments args;
  args.ofUse.assign(numUses, -1);
  std::map<std::vector<const void *>, int> argOfValues;
  for (size_t i = 0; i < numUses; ++i) {
    Operation *def = pattern.externals[i].getDefiningOp();
    bool isConstant =
        isClonableConstant(def) && llvm::all_of(group, [&](Segment *segment) {
          Operation *other = segment->externals[i].getDefiningOp();
          return isClonableConstant(other) && haveSameShape(def, other);
        });
    if (isConstant)
      continue;
    std::vector<const void *> key;
    for (Segment *segment : group)
      key.push_back(segment->externals[i].getAsOpaquePointer());
    auto [it, inserted] =
        argOfValues.try_emplace(std::move(key), args.firstUse.size());
    if (inserted)
      args.firstUse.push_back(i);
    args.ofUse[i] = it->second;
  }
  return args;
}

/// The twin of `group` that would pass one buffer as two arguments (two
/// views of it, or it twice where another twin passes two buffers), or
/// null: the function's kernels would not know that the two alias.
static Segment *passesBufferTwice(ArrayRef<Segment *> group,
                                  const Arguments &args) {
  for (Segment *segment : group) {
    DenseSet<Value> roots;
    for (size_t use : args.firstUse) {
      Value value = segment->externals[use];
      if (isa<BaseMemRefType>(value.getType()) &&
          !roots.insert(viewRoot(value)).second)
        return segment;
    }
  }
  return nullptr;
}

/// The results of the segments of `group` that some twin uses after it:
/// those its function returns.
static llvm::BitVector escapingResults(ArrayRef<Segment *> group) {
  llvm::BitVector escapes(group.front()->results.size());
  for (Segment *segment : group)
    escapes |= segment->escapes;
  return escapes;
}

/// Whether the function of `group` would return a buffer.
static bool returnsBuffer(ArrayRef<Segment *> group) {
  return llvm::any_of(escapingResults(group).set_bits(), [&](unsigned i) {
    return isa<BaseMemRefType>(group.front()->results[i].getType());
  });
}

func::FuncOp SeqFoldLayersPass::fold(ArrayRef<Segment *> group,
                                     const Arguments &args) {
  MLIRContext *context = &getContext();
  Segment &pattern = *group.front();
  size_t numUses = pattern.externals.size();
  ArrayRef<int> argOfUse = args.ofUse;
  ArrayRef<size_t> firstUseOfArg = args.firstUse;
  llvm::BitVector escapes = escapingResults(group);

  SmallVector<Type> argTypes, resultTypes;
  for (size_t use : firstUseOfArg)
    argTypes.push_back(pattern.externals[use].getType());
  for (unsigned i : escapes.set_bits())
    resultTypes.push_back(pattern.results[i].getType());

  Location loc = pattern.instance;
  OpBuilder builder(context);
  auto module = getOperation();
  builder.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(
      builder, loc,
      ((onTensors ? seq::kTensorLayerFunctionPrefix
                  : seq::kLayerFunctionPrefix) +
       Twine(numFolded++))
          .str(),
      FunctionType::get(context, argTypes, resultTypes));
  func.setPrivate();
  if (onTensors) {
    // Bufferized once, then inlined back by seq-inline-layers.
    func->setAttr(seq::kInlineAfterBufferizationAttr, builder.getUnitAttr());
  } else {
    // Internal in LLVM IR, and never inlined back into the model function:
    // the point is one copy of the code.
    func->setAttr("llvm.linkage",
                  LLVM::LinkageAttr::get(context, LLVM::Linkage::Internal));
    func->setAttr("passthrough",
                  builder.getArrayAttr({builder.getStringAttr("noinline")}));
  }
  symbols->insert(func);
  created.push_back(func);

  // The clone first reads the values from above, which the walk below
  // replaces use by use, in the pre-order analyzeSegment listed them in.
  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  DenseMap<Operation *, Value> constants;
  for (size_t i = 0; i < numUses; ++i) {
    if (argOfUse[i] >= 0)
      continue;
    Operation *def = pattern.externals[i].getDefiningOp();
    if (!constants.count(def))
      constants[def] = builder.clone(*def)->getResult(0);
  }
  IRMapping mapping;
  SmallVector<Operation *> clones;
  for (Operation *op : pattern.ops)
    clones.push_back(builder.clone(*op, mapping));
  size_t use = 0;
  for (Operation *clone : clones) {
    clone->walk<WalkOrder::PreOrder>([&](Operation *op) {
      for (OpOperand &operand : op->getOpOperands()) {
        Operation *parent = operand.get().getParentRegion()->getParentOp();
        if (func->isAncestor(parent))
          continue;
        Value value = pattern.externals[use];
        operand.set(argOfUse[use] >= 0
                        ? Value(entry->getArgument(argOfUse[use]))
                        : constants.lookup(value.getDefiningOp()));
        ++use;
      }
    });
  }
  assert(use == numUses && "the clone reads what the segment read");
  SmallVector<Value> returned;
  for (unsigned i : escapes.set_bits())
    returned.push_back(mapping.lookup(pattern.results[i]));
  func::ReturnOp::create(builder, loc, returned);

  for (Segment *segment : group) {
    // An argument may be a result of a twin folded just before.
    SmallVector<Value> operands;
    for (size_t use : firstUseOfArg)
      operands.push_back(replaced.lookup_or(segment->externals[use],
                                            segment->externals[use]));
    OpBuilder callBuilder(segment->ops.front());
    auto call = func::CallOp::create(callBuilder, segment->instance, func,
                                     operands);
    for (auto [i, result] : llvm::enumerate(escapes.set_bits())) {
      Value from = segment->results[result];
      Value to = call.getResult(i);
      from.replaceAllUsesWith(to);
      replaced[from] = to;
    }
    for (Operation *op : llvm::reverse(segment->ops)) {
      chains.erase(op);
      leaves.erase(op);
      op->erase();
    }
  }
  return func;
}

SmallVector<std::unique_ptr<Segment>>
SeqFoldLayersPass::cutSegments(ArrayRef<Operation *> ops, unsigned level) {
  auto instanceAt = [&](Operation *op) -> NameLoc {
    auto it = chains.find(op);
    if (it == chains.end())
      return NameLoc();
    return level < it->second.size() ? it->second[level] : NameLoc();
  };

  // Untagged ops between two ops of the same instance belong to it; those
  // between two instances to neither, but for the deallocations right
  // after a segment of the buffers it allocated.
  SmallVector<std::unique_ptr<Segment>> segments;
  SmallVector<Operation *> pending;
  auto claimFrees = [&]() {
    if (segments.empty())
      return;
    Segment &last = *segments.back();
    DenseSet<Operation *> members(last.ops.begin(), last.ops.end());
    Block *block = last.ops.front()->getBlock();
    // Deallocations commute: those of the segment's own buffers move
    // before the others.
    for (Operation *op : pending) {
      auto dealloc = dyn_cast<memref::DeallocOp>(op);
      if (!dealloc)
        break;
      if (!isDefinedIn(viewRoot(dealloc.getMemref()), block, members))
        continue;
      op->moveAfter(last.ops.back());
      last.ops.push_back(op);
    }
  };
  for (Operation *op : ops) {
    NameLoc instance = instanceAt(op);
    if (!instance) {
      if (!segments.empty())
        pending.push_back(op);
      continue;
    }
    if (segments.empty() || segments.back()->instance != instance) {
      claimFrees();
      segments.push_back(std::make_unique<Segment>());
      segments.back()->instance = instance;
    } else {
      llvm::append_range(segments.back()->ops, pending);
    }
    pending.clear();
    segments.back()->ops.push_back(op);
  }
  claimFrees();
  return segments;
}

void SeqFoldLayersPass::foldRange(ArrayRef<Operation *> ops, unsigned level) {
  SmallVector<std::unique_ptr<Segment>> segments = cutSegments(ops, level);
  if (!onTensors && level != 0)
    hoistEscapingAllocations(segments);
  if (segments.empty())
    return;
  for (std::unique_ptr<Segment> &segment : segments) {
    if (onTensors)
      cloneLeaves(*segment);
    isolateSegment(*segment);
  }

  // Groups of twins, in order of first occurrence.
  llvm::MapVector<llvm::hash_code, SmallVector<SmallVector<Segment *>, 1>>
      byHash;
  for (std::unique_ptr<Segment> &segment : segments) {
    analyzeSegment(*segment);
    if (!segment->rejected.empty()) {
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] level " << level << " '"
                              << segment->instance.getName().getValue()
                              << "' not folded: " << segment->rejected
                              << "\n");
      continue;
    }
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] level " << level << " '"
               << segment->instance.getName().getValue() << "': "
               << segment->ops.size() << " top-level ops, " << segment->numOps
               << " ops, " << segment->externals.size()
               << " uses from above, hash "
               << static_cast<size_t>(segment->hash) << "\n");
    auto &groups = byHash[segment->hash];
    auto it = llvm::find_if(groups, [&](const SmallVector<Segment *> &group) {
      return SegmentComparator(*group.front(), *segment).run();
    });
    if (it == groups.end())
      groups.push_back({segment.get()});
    else
      it->push_back(segment.get());
  }

  DenseSet<Segment *> folded;
  for (auto &entry : byHash) {
    for (SmallVector<Segment *> &group : entry.second) {
      if (group.size() < 2)
        continue;
      // The callers of a function that returns a buffer could only free it
      // with run-time alias checks, which keep the buffers they compare out
      // of the memory plan: before the deallocation passes such a group
      // leaves the whole function to the run after them.
      if (beforeDeallocation && returnsBuffer(group)) {
        LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] left to the run after "
                                << "deallocation (returns a buffer): "
                                << describeInstances(group) << "\n");
        deferred = true;
        return;
      }
      if (!unsupported.empty()) {
        LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] not folded ("
                                << unsupported << "): "
                                << describeInstances(group) << "\n");
        remark(group.front()->instance,
               Twine(group.size()) +
                   " layers compile to the same code but are not folded: " +
                   unsupported + " keeps them unrolled (" +
                   describeInstances(group) + ")");
        continue;
      }
      std::string names = describeInstances(group);
      Location loc = group.front()->instance;
      for (Segment *segment : group)
        for (Value &value : segment->externals)
          value = replaced.lookup_or(value, value);
      Arguments args = assignArguments(group);
      if (Segment *twin = passesBufferTwice(group, args)) {
        LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] not folded: '"
                                << twin->instance.getName().getValue()
                                << "' would pass one buffer as two arguments ("
                                << names << ")\n");
        for (Segment *segment : group)
          segment->rejected =
              "'" + twin->instance.getName().getValue().str() +
              "', which compiles to the same code, would pass one buffer as "
              "two arguments";
        continue;
      }
      size_t numOps = group.front()->numOps;
      size_t numUses = group.front()->externals.size();
      func::FuncOp func = fold(group, args);
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] @" << func.getSymName() << " ("
                 << numOps << " ops, " << func.getNumArguments()
                 << " arguments for " << numUses << " uses from above, "
                 << func.getNumResults()
                 << " results) called for " << names << "\n");
      remark(loc, Twine(group.size()) + " layers compiled once as @" +
                      func.getSymName() + " and called for each: " + names);
      for (Segment *segment : group)
        folded.insert(segment);
    }
  }

  // A target that cannot fold was told so about the outermost layers.
  if (!unsupported.empty())
    return;
  for (std::unique_ptr<Segment> &segment : segments) {
    if (folded.contains(segment.get()))
      continue;
    if (level == 0)
      remark(segment->instance,
             "layer '" + segment->instance.getName().getValue() +
                 "' is not folded: " +
                 (segment->rejected.empty()
                      ? std::string("no other layer compiles to the same code")
                      : segment->rejected));
    foldRange(segment->ops, level + 1);
    if (deferred)
      return;
  }
}

void SeqFoldLayersPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<func::FuncOp> functions;
  if (auto entry = module->getAttrOfType<FlatSymbolRefAttr>(
          seq::kEntryAttrName)) {
    if (auto function = module.lookupSymbol<func::FuncOp>(entry.getValue()))
      functions.push_back(function);
  } else {
    for (auto function : module.getOps<func::FuncOp>())
      if (function.isPublic())
        functions.push_back(function);
  }

  SymbolTable table(module);
  symbols = &table;
  // A run after the deallocation passes numbers its functions after those
  // of the run before them.
  StringRef prefix =
      onTensors ? seq::kTensorLayerFunctionPrefix : seq::kLayerFunctionPrefix;
  numFolded = llvm::count_if(module.getOps<func::FuncOp>(), [&](func::FuncOp f) {
    return f.getSymName().starts_with(prefix);
  });
  for (func::FuncOp function : functions) {
    if (function.isExternal() || !llvm::hasSingleElement(function.getBody())) {
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] @" << function.getSymName()
                              << " is not a defined function of one block\n");
      continue;
    }
    // Folded before the deallocation passes: everything this run could
    // fold was.
    bool folded = llvm::any_of(
        function.getBody().front().getOps<func::CallOp>(),
        [&](func::CallOp call) { return call.getCallee().starts_with(prefix); });
    if (folded)
      continue;
    if (!beforeDeallocation && !onTensors) {
      foldFunction(function);
    } else {
      // All or nothing: a group left to the run after the deallocation
      // passes leaves it the function as it was, since what this run
      // changes around the layers it does not fold (their views rebuilt,
      // their buffers' allocations hoisted) would become other code after
      // the deallocation passes, and the twins there would differ. On
      // tensors, a function in which nothing folds keeps its order and its
      // empty tensors (bufferization decides by them).
      unsigned first = numFolded;
      func::FuncOp trial = function.clone();
      symbols->insert(trial, function->getIterator());
      foldFunction(trial);
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] before deallocation: @"
                 << function.getSymName()
                 << (deferred || created.empty() ? " left to the run after it\n"
                                                 : " folded\n"));
      if (deferred || created.empty()) {
        symbols->erase(trial);
        for (func::FuncOp func : created)
          symbols->erase(func);
        numFolded = first;
        remarksToEmit.clear();
      } else {
        StringAttr name = function.getSymNameAttr();
        symbols->erase(function);
        if (failed(symbols->rename(trial, name)))
          return signalPassFailure();
      }
    }
    for (auto &[loc, message] : remarksToEmit)
      mlir::emitRemark(loc) << message;
    remarksToEmit.clear();
    created.clear();
    deferred = false;
    replaced.clear();
  }
}

void SeqFoldLayersPass::foldFunction(func::FuncOp function) {
  Block &body = function.getBody().front();
  if (onTensors) {
    foldRange(gatherOnTensors(body), 0);
    // The leaves every segment now has a copy of are dead (bufferization
    // would allocate and fill them).
    for (Operation *op = body.getTerminator()->getPrevNode(); op;) {
      Operation *prev = op->getPrevNode();
      if (leaves.contains(op) && op->use_empty() && isMemoryEffectFree(op))
        op->erase();
      op = prev;
    }
    chains.clear();
    leaves.clear();
    return;
  }
  freeAfterLastUse(body);
  resolveDims(body);
  foldResolvedSizes(body);
  seq::hoistToEntry(body);
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator()) {
    // Pure ops without regions (sizes, offsets, views) do not cut: the
    // memory plan computes the sizes of every layer's buffers at the
    // entry, and a view may be placed before the op that writes it.
    // Neither do deallocations (-O0), placed after a buffer's last use,
    // which may be in the next layer.
    if (!isa<memref::DeallocOp>(op) &&
        (op.getNumRegions() != 0 || !isMemoryEffectFree(&op)))
      chains[&op] = seq::getInstanceChain(op.getLoc());
    ops.push_back(&op);
  }
  // A buffer a layer allocates and another layer reads (the residual
  // stream) is allocated at the entry instead, where its size is known:
  // the layers then take it as an argument, while what a layer allocates
  // for itself stays in its function (and in its own memory plan).
  // So is one allocated outside the layers (bufferization allocates the
  // layers' outputs early), whose views the layers then share too.
  DenseSet<Operation *> shared;
  for (auto alloc : body.getOps<memref::AllocOp>())
    shared.insert(alloc);
  forEachAllocation(cutSegments(ops, 0), body,
                    [&](Operation *alloc, bool escapes) {
                      if (!escapes)
                        shared.erase(alloc);
                    });
  if (Operation *last = seq::hoistToEntry(body, shared)) {
    ops.clear();
    for (Operation &op : llvm::make_range(std::next(last->getIterator()),
                                          body.without_terminator().end()))
      ops.push_back(&op);
  }
  foldRange(ops, 0);
  chains.clear();
}

SmallVector<Operation *> SeqFoldLayersPass::gatherOnTensors(Block &body) {
  for (Operation &op : body.without_terminator()) {
    if (op.hasTrait<OpTrait::ConstantLike>())
      continue;
    // A fill of an empty tensor is one too (CSE merges the equal fills of
    // every layer, and a layer that read another's would return it), and so
    // is a seq.dequantize of a weight, which the conversion to linalg
    // requires next to the Linear that reads its blocks.
    bool isLeaf =
        ((op.getNumRegions() == 0 &&
          isa<tensor::TensorDialect, arith::ArithDialect>(op.getDialect())) ||
         isa<linalg::FillOp, seq::DequantizeOp>(op)) &&
        op.getNumResults() != 0 && isMemoryEffectFree(&op) &&
        llvm::all_of(op.getOperands(), [&](Value operand) {
          Operation *def = operand.getDefiningOp();
          return !def || def->hasTrait<OpTrait::ConstantLike>() ||
                 leaves.contains(def);
        });
    if (isLeaf)
      leaves.insert(&op);
    else
      chains[&op] = seq::getInstanceChain(op.getLoc());
  }

  // Each leaf goes right after the last op it reads (CSE keeps the first of
  // equal ops, inside the first layer that computes it, and
  // seq-split-empty-tensors puts each layer's empty tensor next to it): no
  // segment then counts a leaf as its own, and each one that reads a leaf
  // gets its copy (cloneLeaves), the first layer as the others.
  SmallVector<Operation *> order;
  DenseMap<Operation *, unsigned> waiting;
  DenseMap<Operation *, SmallVector<Operation *, 1>> waiters;
  std::function<void(Operation *)> place = [&](Operation *op) {
    order.push_back(op);
    for (Operation *leaf : waiters.lookup(op))
      if (--waiting[leaf] == 0)
        place(leaf);
  };
  for (Operation &op : body.without_terminator()) {
    if (!leaves.contains(&op))
      continue;
    DenseSet<Operation *> defs;
    for (Value operand : op.getOperands())
      if (Operation *def = operand.getDefiningOp(); def && defs.insert(def).second)
        waiters[def].push_back(&op);
    waiting[&op] = defs.size();
  }
  for (Operation &op : body.without_terminator())
    if (leaves.contains(&op) && waiting[&op] == 0)
      place(&op);
  for (Operation &op : body.without_terminator())
    if (!leaves.contains(&op))
      place(&op);
  Operation *terminator = body.getTerminator();
  for (Operation *op : order)
    op->moveBefore(terminator);
  return order;
}

void SeqFoldLayersPass::cloneLeaves(Segment &segment) {
  Block *block = segment.ops.front()->getBlock();
  DenseSet<Operation *> members(segment.ops.begin(), segment.ops.end());
  DenseMap<Operation *, Operation *> copies;
  SmallVector<Operation *> ops;
  for (Operation *top : segment.ops) {
    OpBuilder builder(top);
    std::function<Value(Value)> copyOf = [&](Value value) -> Value {
      Operation *def = value.getDefiningOp();
      if (!def || def->getBlock() != block || members.contains(def) ||
          !leaves.contains(def))
        return value;
      Operation *copy = copies.lookup(def);
      if (!copy) {
        IRMapping mapping;
        for (Value operand : def->getOperands())
          mapping.map(operand, copyOf(operand));
        copy = builder.clone(*def, mapping);
        // Where the segment's op is: the copy belongs to its instances
        // (the leaf may name another's, seq-split-empty-tensors' copies
        // name the first layer).
        copy->setLoc(top->getLoc());
        copies[def] = copy;
        leaves.insert(copy);
        ops.push_back(copy);
      }
      return copy->getResult(cast<OpResult>(value).getResultNumber());
    };
    top->walk([&](Operation *op) {
      for (OpOperand &operand : op->getOpOperands())
        operand.set(copyOf(operand.get()));
    });
    ops.push_back(top);
  }
  segment.ops = std::move(ops);
}
