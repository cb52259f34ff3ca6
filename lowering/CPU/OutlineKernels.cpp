//===- OutlineKernels.cpp - share identical loop nests as functions -------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Outlines the outermost loop nests that occur several times in a module
// (the same kernel in every layer of a model) into one private function per
// distinct nest, called from each place it occurred. See the pass
// description in Passes.td.
//
// A nest is identified by its structure relative to the values it captures
// from above: op names, attributes, properties and types in pre-order, each
// operand either a value defined inside the nest (by its position), a
// constant (by its op and value, cloned into the function) or the i-th
// captured value (which becomes the i-th argument). Two nests are shared
// only when this structure is identical, so each call runs exactly the ops
// the nest it replaces ran, on the same values.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/Passes.h"
#include "lowering/Common/Attributes.h"
#include "lowering/Common/OpShape.h"

#include "dialect/Seq/Support/Debug.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"

#define DEBUG_TYPE "seq-cpu-outline-kernels"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQCPUOUTLINEKERNELS
#include "lowering/CPU/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;
using mlir::seq::haveSameShape;
using mlir::seq::hashOpShape;
using mlir::seq::isClonableConstant;

namespace {

/// An outermost loop nest and what it reads from above.
struct Nest {
  Operation *root = nullptr;
  /// Non-constant values defined above the nest, in order of first use:
  /// the arguments of the outlined function.
  SmallVector<Value> captures;
  /// Constant ops defined above the nest that it uses, in order of first
  /// use: cloned into the outlined function.
  SmallVector<Operation *> constants;
  /// Structural hash (equal for nests that isEquivalent accepts).
  llvm::hash_code hash;
  /// Number of ops in the nest, root included.
  int64_t numOps = 0;
};

} // namespace

/// Whether `value` is defined inside `root` (a block argument of one of its
/// regions or the result of an op nested in it).
static bool isDefinedInside(Value value, Operation *root) {
  Operation *parent = value.getParentRegion()->getParentOp();
  return root->isAncestor(parent);
}

/// Fills in the captures, constants, hash and size of `nest`; fails for
/// nests this pass does not outline: regions with several blocks (whose
/// values may be used before the walk reaches their definition) or ops with
/// successors. Every region is then empty or one block.
static LogicalResult analyzeNest(Nest &nest) {
  Operation *root = nest.root;
  DenseMap<Value, unsigned> local;
  DenseMap<Value, unsigned> captured;
  DenseMap<Operation *, unsigned> constants;
  llvm::hash_code hash = llvm::hash_value(0);
  int64_t numOps = 0;

  auto hashOperand = [&](Value value) -> FailureOr<llvm::hash_code> {
    if (auto it = local.find(value); it != local.end())
      return llvm::hash_combine(1, it->second);
    if (isDefinedInside(value, root))
      return failure();
    Operation *def = value.getDefiningOp();
    if (isClonableConstant(def)) {
      auto [it, inserted] = constants.try_emplace(def, nest.constants.size());
      if (inserted)
        nest.constants.push_back(def);
      return llvm::hash_combine(2, hashOpShape(def));
    }
    auto [it, inserted] = captured.try_emplace(value, nest.captures.size());
    if (inserted)
      nest.captures.push_back(value);
    return llvm::hash_combine(3, it->second,
                              value.getType().getAsOpaquePointer());
  };

  WalkResult result = root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op->getNumSuccessors() != 0)
      return WalkResult::interrupt();
    ++numOps;
    hash = llvm::hash_combine(hash, hashOpShape(op));
    for (Value operand : op->getOperands()) {
      FailureOr<llvm::hash_code> operandHash = hashOperand(operand);
      if (failed(operandHash))
        return WalkResult::interrupt();
      hash = llvm::hash_combine(hash, *operandHash);
    }
    for (Value value : op->getResults())
      local.try_emplace(value, local.size());
    for (Region &region : op->getRegions()) {
      // An scf.if without else has an empty region.
      hash = llvm::hash_combine(hash, region.empty());
      if (region.empty())
        continue;
      if (!region.hasOneBlock())
        return WalkResult::interrupt();
      for (BlockArgument arg : region.front().getArguments()) {
        local.try_emplace(arg, local.size());
        hash = llvm::hash_combine(hash, arg.getType().getAsOpaquePointer());
      }
      hash = llvm::hash_combine(hash, region.front().getOperations().size());
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  nest.hash = hash;
  nest.numOps = numOps;
  return success();
}

namespace {

/// Compares two analyzed nests op by op, in the pre-order analyzeNest hashed
/// them in.
class NestComparator {
public:
  NestComparator(const Nest &a, const Nest &b) : a(a), b(b) {
    for (auto [i, value] : llvm::enumerate(a.captures))
      captureA[value] = i;
    for (auto [i, value] : llvm::enumerate(b.captures))
      captureB[value] = i;
  }

  bool run() {
    if (a.captures.size() != b.captures.size())
      return false;
    for (auto [x, y] : llvm::zip_equal(a.captures, b.captures))
      if (x.getType() != y.getType())
        return false;
    return compareOps(a.root, b.root);
  }

private:
  bool compareOperands(Value x, Value y) {
    if (auto it = local.find(x); it != local.end())
      return it->second == y;
    if (local.count(y))
      return false;
    Operation *defX = x.getDefiningOp();
    Operation *defY = y.getDefiningOp();
    if (isClonableConstant(defX) || isClonableConstant(defY))
      return isClonableConstant(defX) && isClonableConstant(defY) &&
             haveSameShape(defX, defY);
    auto itX = captureA.find(x);
    auto itY = captureB.find(y);
    return itX != captureA.end() && itY != captureB.end() &&
           itX->second == itY->second;
  }

  bool compareOps(Operation *x, Operation *y) {
    if (!haveSameShape(x, y))
      return false;
    for (auto [u, v] : llvm::zip_equal(x->getOperands(), y->getOperands()))
      if (!compareOperands(u, v))
        return false;
    for (auto [u, v] : llvm::zip_equal(x->getResults(), y->getResults()))
      local[u] = v;
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
        local[u] = v;
      }
      for (auto [ox, oy] : llvm::zip_equal(bx, by))
        if (!compareOps(&ox, &oy))
          return false;
    }
    return true;
  }

  const Nest &a;
  const Nest &b;
  DenseMap<Value, unsigned> captureA, captureB;
  /// Values of `a` defined inside its nest -> their counterparts in `b`.
  DenseMap<Value, Value> local;
};

struct SeqCPUOutlineKernelsPass
    : public seq::impl::SeqCPUOutlineKernelsBase<SeqCPUOutlineKernelsPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// Creates the function that runs `nest` on its captures as arguments.
  func::FuncOp outline(const Nest &nest, SymbolTable &symbols);

  /// Number of functions outlined so far, for their names.
  unsigned numOutlined = 0;
};

} // namespace

/// Collects the outermost loop nests of `func`: loops and linalg ops (loop
/// nests still to be lowered) not nested in another one, possibly inside an
/// scf.if.
static void collectNests(func::FuncOp func, SmallVectorImpl<Nest> &nests) {
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (!isa<LoopLikeOpInterface, linalg::LinalgOp>(op))
      return WalkResult::advance();
    Nest nest;
    nest.root = op;
    // A returned memref may be a stack allocation of the nest, which an
    // outlined function would release on return.
    bool returnsMemRef = llvm::any_of(op->getResultTypes(), [](Type type) {
      return isa<BaseMemRefType>(type);
    });
    if (!returnsMemRef && succeeded(analyzeNest(nest)))
      nests.push_back(std::move(nest));
    else
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] left in place ("
                 << (returnsMemRef ? "returns a memref"
                                   : "several blocks or successors")
                 << "): " << op->getName() << " at " << op->getLoc() << "\n");
    return WalkResult::skip();
  });
}

func::FuncOp SeqCPUOutlineKernelsPass::outline(const Nest &nest,
                                               SymbolTable &symbols) {
  MLIRContext *context = &getContext();
  ModuleOp module = getOperation();
  Operation *root = nest.root;
  auto type = FunctionType::get(context, ValueRange(nest.captures).getTypes(),
                                root->getResultTypes());
  OpBuilder builder(context);
  builder.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(
      builder, root->getLoc(),
      "__seqc_kernel_" + std::to_string(numOutlined++), type);
  func.setPrivate();
  // Internal in LLVM IR, and never inlined back into its callers: the point
  // is one copy of the code.
  func->setAttr("llvm.linkage",
                LLVM::LinkageAttr::get(context, LLVM::Linkage::Internal));
  func->setAttr("passthrough",
                builder.getArrayAttr({builder.getStringAttr("noinline")}));
  func->setAttr(seq::kKernelAttrName, builder.getUnitAttr());
  symbols.insert(func);

  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  IRMapping mapping;
  for (auto [value, arg] :
       llvm::zip_equal(nest.captures, entry->getArguments()))
    mapping.map(value, arg);
  for (Operation *constant : nest.constants)
    builder.clone(*constant, mapping);
  Operation *clone = builder.clone(*root, mapping);
  func::ReturnOp::create(builder, root->getLoc(), clone->getResults());
  return func;
}

void SeqCPUOutlineKernelsPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<Nest> nests;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      collectNests(func, nests);

  // Groups of equivalent nests, in order of first occurrence.
  llvm::MapVector<llvm::hash_code, SmallVector<SmallVector<Nest *>, 1>>
      byHash;
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << nests.size()
                          << " outermost nests\n");
  for (Nest &nest : nests) {
    if (nest.numOps < minOps) {
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] left in place (" << nest.numOps
                 << " ops): " << nest.root->getName() << " at "
                 << nest.root->getLoc() << "\n");
      continue;
    }
    auto &groups = byHash[nest.hash];
    auto it = llvm::find_if(groups, [&](const SmallVector<Nest *> &group) {
      return NestComparator(*group.front(), nest).run();
    });
    if (it == groups.end())
      groups.push_back({&nest});
    else
      it->push_back(&nest);
  }

  // A nest may capture the results of one outlined before it: those are
  // replaced by the results of its call.
  SymbolTable symbols(module);
  DenseMap<Value, Value> replaced;
  for (auto &entry : byHash) {
    for (SmallVector<Nest *> &group : entry.second) {
      if (static_cast<int64_t>(group.size()) < minUses) {
        LLVM_DEBUG(llvm::dbgs()
                   << "[" DEBUG_TYPE "] left in place (" << group.size()
                   << " uses, " << group.front()->numOps
                   << " ops): " << group.front()->root->getName() << " at "
                   << group.front()->root->getLoc() << "\n");
        continue;
      }
      for (Nest *nest : group)
        for (Value &value : nest->captures)
          value = replaced.lookup_or(value, value);
      func::FuncOp func = outline(*group.front(), symbols);
      LLVM_DEBUG({
        llvm::dbgs() << "[" DEBUG_TYPE "] @" << func.getSymName() << " ("
                     << group.front()->numOps << " ops, "
                     << group.front()->captures.size()
                     << " arguments) shared by " << group.size()
                     << " nests at:";
        for (Nest *nest : group)
          llvm::dbgs() << " " << nest->root->getLoc();
        llvm::dbgs() << "\n";
      });
      if (remarks)
        group.front()->root->emitRemark()
            << "kernel compiled once and shared by " << group.size()
            << " loop nests: @" << func.getSymName();
      for (Nest *nest : group) {
        OpBuilder builder(nest->root);
        auto call = func::CallOp::create(builder, nest->root->getLoc(), func,
                                         nest->captures);
        for (auto [from, to] :
             llvm::zip_equal(nest->root->getResults(), call.getResults()))
          replaced[from] = to;
        nest->root->replaceAllUsesWith(call.getResults());
        nest->root->erase();
      }
    }
  }
}
