//===- LoopLayers.cpp - one loop over the calls of a folded layer ---------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// seq-fold-layers leaves the model function calling the shared layer
// function once per layer, in straight-line code: each call passes its
// layer's weights, prepared weights, arena views and sizes, so the code
// around the calls (and the C interface's unpacking of one descriptor per
// argument) still grows with the depth. This pass turns each run of such
// calls into one scf.for over the layers. See the pass description in
// Passes.td.
//
// Design. The calls of a run differ only in their operands. For each
// operand position the L values (one per call) are matched top-down into a
// template, memoized on the tuple of values:
//   - the same value at every call: used as it is (it dominates the run);
//   - results of ops of the same shape, pure and without regions: the
//     first call's op, cloned into the loop body on the templates of its
//     operands (the arena's views, reshapes, the plan's offsets and sizes);
//   - integer constants: a column of a constant table (one row per layer);
//   - arguments of the function: a column of the table holding their
//     indices; the loop reads the descriptor at that index of the array of
//     argument descriptors, which the function then takes in place of its
//     memref arguments (seq-emit-invoke fills it with a table walk);
//   - other integer values computed before the run: a column of a table on
//     the stack, stored before the run.
// Anything else (allocations, floats, values computed inside the run's
// thread team) keeps the run unrolled, with a remark. The body computes,
// for each layer, the values the call it replaces received, by the same
// ops on the same inputs, so the outputs are unchanged bit for bit.
//
// The pass runs after the thread teams (the runs of a team are calls of
// the team form inside an omp.parallel: every thread of the team runs the
// loop, as it ran the calls), on memrefs, so that the views of the arena
// stay memref ops the conversion lowers. The descriptors it reads are
// LLVM structs cast to memrefs; the conversion's casts fold them away.
//
//===----------------------------------------------------------------------===//

#include "lowering/Entry/Entry.h"
#include "lowering/Common/OpShape.h"

#include "dialect/Seq/Support/Debug.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Iterators.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"

#include <map>
#include <vector>

#define DEBUG_TYPE "seq-loop-layers"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQLOOPLAYERS
#include "lowering/Entry/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;
using mlir::seq::haveSameShape;


/// The LLVM struct of a memref descriptor of `rank`, as the conversion to
/// the LLVM dialect lays it out: {allocated, aligned, offset, sizes,
/// strides}.
static Type getDescriptorType(MLIRContext *context, int64_t rank) {
  auto ptrType = LLVM::LLVMPointerType::get(context);
  auto i64Type = IntegerType::get(context, 64);
  SmallVector<Type> fields{ptrType, ptrType, i64Type};
  if (rank > 0) {
    auto array = LLVM::LLVMArrayType::get(i64Type, rank);
    fields.append({array, array});
  }
  return LLVM::LLVMStructType::getLiteral(context, fields);
}

/// The memref whose descriptor `descs[index]` points to (`index` an i64).
static Value fetchArgument(OpBuilder &builder, Location loc, Value descs,
                           Value index, MemRefType type) {
  MLIRContext *context = builder.getContext();
  auto ptrType = LLVM::LLVMPointerType::get(context);
  Value slot =
      LLVM::GEPOp::create(builder, loc, ptrType, ptrType, descs,
                          ValueRange{index}, LLVM::GEPNoWrapFlags::inbounds);
  Value descriptor = LLVM::LoadOp::create(builder, loc, ptrType, slot);
  Value fields = LLVM::LoadOp::create(
      builder, loc, getDescriptorType(context, type.getRank()), descriptor);
  return UnrealizedConversionCastOp::create(builder, loc, type, fields)
      .getResult(0);
}

/// Appends the argument that points to the array of the descriptors of
/// `function`'s arguments, and returns it.
static Value addDescriptorArray(func::FuncOp function) {
  unsigned numArgs = function.getNumArguments();
  (void)function.insertArgument(
      numArgs, LLVM::LLVMPointerType::get(function.getContext()), {},
      function.getLoc());
  return function.getArgument(numArgs);
}

/// Makes the array of descriptors (the last argument) the only argument of
/// `function`: the other arguments still used are read from it at the
/// entry.
static void readArgumentsFromArray(func::FuncOp function) {
  unsigned numArgs = function.getNumArguments() - 1;
  Value descs = function.getArgument(numArgs);
  OpBuilder builder = OpBuilder::atBlockBegin(&function.getBody().front());
  Location loc = function.getLoc();
  for (unsigned k = 0; k < numArgs; ++k) {
    BlockArgument arg = function.getArgument(k);
    if (arg.use_empty())
      continue;
    Value index =
        arith::ConstantOp::create(builder, loc, builder.getI64IntegerAttr(k));
    arg.replaceAllUsesWith(fetchArgument(builder, loc, descs, index,
                                         cast<MemRefType>(arg.getType())));
  }
  llvm::BitVector erase(numArgs + 1, true);
  erase.reset(numArgs);
  (void)function.eraseArguments(erase);
}

namespace {

/// How the loop body computes the values of one operand (or of an operand
/// of a template op) across the layers.
struct Node {
  enum class Kind { Shared, Op, Constant, Argument, Stored };
  Kind kind;
  /// Shared: the value; Op: the first layer's op and the result.
  Value value;
  /// The type of the values.
  Type type;
  /// Op: the templates of the op's operands.
  SmallVector<unsigned> operands;
  /// Constant, Argument: the column of the constant table; Stored: of the
  /// stack table.
  unsigned column = 0;
};

/// A run of calls of one layer function and how to loop over it.
struct Run {
  SmallVector<func::CallOp> calls;
  /// Where the stack table's values are stored: the run's ancestor in the
  /// function body.
  Operation *storePoint = nullptr;
  SmallVector<Node> nodes;
  /// The node of each operand of the call.
  SmallVector<unsigned> operands;
  /// Per column, the value at each layer: constants' values or argument
  /// indices, and the values stored on the stack.
  SmallVector<SmallVector<int64_t>> constants;
  SmallVector<SmallVector<Value>> stored;
  std::string rejected;
};

/// Matches the operands of a run's calls into templates (see the file
/// comment).
class RunMatcher {
public:
  RunMatcher(Run &run, func::FuncOp function, DominanceInfo &dominance)
      : run(run), function(function), dominance(dominance) {}

  bool match() {
    unsigned numOperands = run.calls.front()->getNumOperands();
    for (unsigned i = 0; i < numOperands; ++i) {
      // The reason of the first failure below, if the operand fails.
      run.rejected.clear();
      SmallVector<Value> values;
      for (func::CallOp call : run.calls)
        values.push_back(call->getOperand(i));
      std::optional<unsigned> node = matchValues(values);
      if (!node) {
        if (run.rejected.empty())
          run.rejected =
              "operand " + std::to_string(i) + " differs between the layers";
        return false;
      }
      run.operands.push_back(*node);
    }
    run.rejected.clear();
    return true;
  }

private:
  std::optional<unsigned> matchValues(ArrayRef<Value> values) {
    std::vector<const void *> key;
    for (Value value : values)
      key.push_back(value.getAsOpaquePointer());
    auto [it, inserted] = memo.try_emplace(key, std::nullopt);
    if (!inserted)
      return it->second;
    std::optional<unsigned> node = matchNew(values);
    memo[key] = node;
    return node;
  }

  unsigned addNode(Node node) {
    run.nodes.push_back(std::move(node));
    return run.nodes.size() - 1;
  }

  std::optional<unsigned> matchNew(ArrayRef<Value> values) {
    Value first = values.front();
    if (llvm::all_equal(values))
      return addNode({Node::Kind::Shared, first, first.getType(), {}, 0});
    if (llvm::any_of(values,
                     [&](Value v) { return v.getType() != first.getType(); }))
      return reject("values of different types");
    if (std::optional<unsigned> node = matchOps(values))
      return node;
    Type type = first.getType();
    bool isInteger = type.isIndex() || (type.isSignlessInteger() &&
                                        type.getIntOrFloatBitWidth() <= 64);
    // Integer constants: a column of the constant table.
    if (isInteger) {
      SmallVector<int64_t> column;
      for (Value value : values) {
        APInt constant;
        if (!matchPattern(value, m_ConstantInt(&constant)))
          break;
        column.push_back(constant.getSExtValue());
      }
      if (column.size() == values.size())
        return addColumn(Node::Kind::Constant, type, std::move(column));
    }
    // Arguments of the function: their indices.
    if (isa<MemRefType>(type)) {
      SmallVector<int64_t> column;
      for (Value value : values) {
        auto arg = dyn_cast<BlockArgument>(value);
        if (!arg || arg.getOwner() != &function.getBody().front())
          break;
        column.push_back(arg.getArgNumber());
      }
      if (column.size() == values.size())
        return addColumn(Node::Kind::Argument, type, std::move(column));
      return reject("a memref that is neither an argument of the function "
                    "nor a view made alike in every layer");
    }
    if (!isInteger)
      return reject("values of type " + describe(type));
    // Integers computed before the run: a column of the stack table.
    if (!llvm::all_of(values, [&](Value value) {
          return dominance.properlyDominates(value, run.storePoint);
        }))
      return reject("integers computed inside the thread team of the calls");
    unsigned column = run.stored.size();
    run.stored.push_back(llvm::to_vector(values));
    return addNode({Node::Kind::Stored, Value(), type, {}, column});
  }

  /// The results of ops of the same shape, pure and without regions: the
  /// first layer's op on the templates of the operands.
  std::optional<unsigned> matchOps(ArrayRef<Value> values) {
    auto firstResult = dyn_cast<OpResult>(values.front());
    if (!firstResult)
      return std::nullopt;
    Operation *pattern = firstResult.getOwner();
    if (pattern->getNumRegions() != 0 || !isMemoryEffectFree(pattern))
      return std::nullopt;
    SmallVector<Operation *> ops;
    for (Value value : values) {
      auto result = dyn_cast<OpResult>(value);
      if (!result ||
          result.getResultNumber() != firstResult.getResultNumber() ||
          !haveSameShape(result.getOwner(), pattern))
        return std::nullopt;
      ops.push_back(result.getOwner());
    }
    Node node{Node::Kind::Op, firstResult, firstResult.getType(), {}, 0};
    for (unsigned i = 0; i < pattern->getNumOperands(); ++i) {
      SmallVector<Value> operands;
      for (Operation *op : ops)
        operands.push_back(op->getOperand(i));
      std::optional<unsigned> operand = matchValues(operands);
      if (!operand)
        return std::nullopt;
      node.operands.push_back(*operand);
    }
    return addNode(std::move(node));
  }

  unsigned addColumn(Node::Kind kind, Type type, SmallVector<int64_t> column) {
    unsigned index = run.constants.size();
    run.constants.push_back(std::move(column));
    return addNode({kind, Value(), type, {}, index});
  }

  std::optional<unsigned> reject(const std::string &why) {
    if (run.rejected.empty())
      run.rejected = "its operands differ between the layers as " + why +
                     ", which the loop cannot index";
    return std::nullopt;
  }

  static std::string describe(Type type) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << type;
    return text;
  }

  Run &run;
  func::FuncOp function;
  DominanceInfo &dominance;
  std::map<std::vector<const void *>, std::optional<unsigned>> memo;
};

struct SeqLoopLayersPass
    : public seq::impl::SeqLoopLayersBase<SeqLoopLayersPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// Replaces the calls of `run` by one loop; `descs` is the array of the
  /// function's argument descriptors, `index` numbers the loops.
  void emitLoop(Run &run, Value descs, unsigned index);

  SymbolTable *symbols = nullptr;
};

} // namespace

/// The runs of two or more consecutive calls, without results, of one
/// function of seq-fold-layers in the blocks of `function`.
static std::vector<Run> findRuns(func::FuncOp function) {
  std::vector<Run> runs;
  function.walk([&](Block *block) {
    Run current;
    auto flush = [&]() {
      if (current.calls.size() >= 2)
        runs.push_back(std::move(current));
      current = Run();
    };
    for (Operation &op : *block) {
      auto call = dyn_cast<func::CallOp>(op);
      if (!call || !call.getCallee().starts_with(seq::kLayerFunctionPrefix)) {
        flush();
        continue;
      }
      if (!current.calls.empty() &&
          current.calls.front().getCallee() != call.getCallee())
        flush();
      current.calls.push_back(call);
    }
    flush();
  });
  return runs;
}

void SeqLoopLayersPass::emitLoop(Run &run, Value descs, unsigned index) {
  func::CallOp first = run.calls.front();
  Location loc = first.getLoc();
  MLIRContext *context = &getContext();
  int64_t numLayers = run.calls.size();
  auto i64Type = IntegerType::get(context, 64);
  auto indexType = IndexType::get(context);
  OpBuilder builder(first);

  // The constant table: a row per layer, a column per constant or argument.
  Value constants;
  if (!run.constants.empty()) {
    int64_t numColumns = run.constants.size();
    SmallVector<int64_t> values;
    for (int64_t layer = 0; layer < numLayers; ++layer)
      for (const SmallVector<int64_t> &column : run.constants)
        values.push_back(column[layer]);
    auto type = MemRefType::get({numLayers, numColumns}, i64Type);
    auto tensorType = RankedTensorType::get({numLayers, numColumns}, i64Type);
    OpBuilder moduleBuilder = OpBuilder::atBlockEnd(getOperation().getBody());
    auto global = memref::GlobalOp::create(
        moduleBuilder, loc,
        (seq::kLayerFunctionPrefix + "table_" + Twine(index)).str(),
        moduleBuilder.getStringAttr("private"), type,
        DenseIntElementsAttr::get(tensorType, values), /*constant=*/true,
        /*alignment=*/IntegerAttr());
    symbols->insert(global);
    constants =
        memref::GetGlobalOp::create(builder, loc, type, global.getSymName());
  }
  // The stack table: the values stored before the run, as index.
  Value stored;
  if (!run.stored.empty()) {
    int64_t numColumns = run.stored.size();
    auto function = first->getParentOfType<func::FuncOp>();
    OpBuilder entryBuilder =
        OpBuilder::atBlockBegin(&function.getBody().front());
    stored = memref::AllocaOp::create(
        entryBuilder, loc, MemRefType::get({numLayers, numColumns}, indexType));
    OpBuilder storeBuilder(run.storePoint);
    for (int64_t layer = 0; layer < numLayers; ++layer) {
      Value row = arith::ConstantIndexOp::create(storeBuilder, loc, layer);
      for (auto [column, values] : llvm::enumerate(run.stored)) {
        Value value = values[layer];
        if (!value.getType().isIndex())
          value =
              arith::IndexCastOp::create(storeBuilder, loc, indexType, value);
        memref::StoreOp::create(
            storeBuilder, loc, value, stored,
            ValueRange{row, arith::ConstantIndexOp::create(storeBuilder, loc,
                                                           column)});
      }
    }
  }

  Value lower = arith::ConstantIndexOp::create(builder, loc, 0);
  Value upper = arith::ConstantIndexOp::create(builder, loc, numLayers);
  Value step = arith::ConstantIndexOp::create(builder, loc, 1);
  auto loop = scf::ForOp::create(builder, loc, lower, upper, step);
  builder.setInsertionPoint(loop.getBody()->getTerminator());
  Value layer = loop.getInductionVar();

  // The nodes in the order they were made: operands before their users.
  SmallVector<Value> emitted(run.nodes.size());
  llvm::BitVector used(run.nodes.size());
  for (unsigned operand : run.operands)
    used.set(operand);
  for (int node = run.nodes.size() - 1; node >= 0; --node)
    if (used.test(node))
      for (unsigned operand : run.nodes[node].operands)
        used.set(operand);
  for (unsigned id : used.set_bits()) {
    const Node &node = run.nodes[id];
    switch (node.kind) {
    case Node::Kind::Shared:
      emitted[id] = node.value;
      break;
    case Node::Kind::Op: {
      auto result = cast<OpResult>(node.value);
      Operation *clone = builder.clone(*result.getOwner());
      for (auto [i, operand] : llvm::enumerate(node.operands))
        clone->setOperand(i, emitted[operand]);
      emitted[id] = clone->getResult(result.getResultNumber());
      break;
    }
    case Node::Kind::Constant:
    case Node::Kind::Argument: {
      Value column = arith::ConstantIndexOp::create(builder, loc, node.column);
      Value value = memref::LoadOp::create(builder, loc, constants,
                                           ValueRange{layer, column});
      if (auto memref = dyn_cast<MemRefType>(node.type))
        value = fetchArgument(builder, loc, descs, value, memref);
      else if (node.type.isIndex())
        value = arith::IndexCastOp::create(builder, loc, node.type, value);
      else if (node.type != i64Type)
        value = arith::TruncIOp::create(builder, loc, node.type, value);
      emitted[id] = value;
      break;
    }
    case Node::Kind::Stored: {
      Value column = arith::ConstantIndexOp::create(builder, loc, node.column);
      Value value = memref::LoadOp::create(builder, loc, stored,
                                           ValueRange{layer, column});
      if (!node.type.isIndex())
        value = arith::IndexCastOp::create(builder, loc, node.type, value);
      emitted[id] = value;
      break;
    }
    }
  }
  SmallVector<Value> operands;
  for (unsigned operand : run.operands)
    operands.push_back(emitted[operand]);
  func::CallOp::create(builder, loc, first.getCallee(), TypeRange(), operands);
  for (func::CallOp call : run.calls)
    call.erase();
}

/// Erases the ops of `function` without memory effects, regions or uses:
/// the per-layer views and offsets the loops now compute. Users come after
/// the values they use, so one walk backwards finds every chain.
static void eraseDeadPureOps(func::FuncOp function) {
  function.walk<WalkOrder::PostOrder, ReverseIterator>([](Operation *op) {
    if (op->use_empty() && op->getNumRegions() == 0 &&
        !op->hasTrait<OpTrait::IsTerminator>() && isMemoryEffectFree(op))
      op->erase();
  });
}

void SeqLoopLayersPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto entry = module->getAttrOfType<FlatSymbolRefAttr>(seq::kEntryAttrName);
  auto function =
      entry ? module.lookupSymbol<func::FuncOp>(entry.getValue()) : nullptr;
  if (!function || function.isExternal())
    return;
  // The arguments become one array of descriptors: all must be memrefs.
  if (!llvm::all_of(function.getArgumentTypes(), llvm::IsaPred<MemRefType>)) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] @" << function.getSymName()
                            << " takes arguments other than memrefs\n");
    return;
  }
  auto arenaBytes =
      module.lookupSymbol<func::FuncOp>(seq::kArenaBytesFunctionName);

  std::vector<Run> runs = findRuns(function);
  if (runs.empty())
    return;
  DominanceInfo dominance(function);
  SmallVector<Run *> loops;
  for (Run &run : runs) {
    Operation *first = run.calls.front();
    run.storePoint = function.getBody().front().findAncestorOpInBlock(*first);
    if (first->getNumResults() != 0)
      run.rejected = "the layer function returns values";
    else if (RunMatcher(run, function, dominance).match())
      loops.push_back(&run);
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] " << run.calls.size() << " calls of @"
               << run.calls.front().getCallee() << ": "
               << (run.rejected.empty()
                       ? "a loop of " + std::to_string(run.nodes.size()) +
                             " templates, " +
                             std::to_string(run.constants.size()) +
                             " table columns, " +
                             std::to_string(run.stored.size()) +
                             " stored on the stack"
                       : run.rejected)
               << "\n");
    if (remarks && !run.rejected.empty())
      mlir::emitRemark(first->getLoc())
          << run.calls.size() << " calls of @" << run.calls.front().getCallee()
          << " stay unrolled: " << run.rejected;
  }
  if (loops.empty())
    return;

  SymbolTable table(module);
  symbols = &table;
  // The loops read the arguments' descriptors from the array the function
  // takes; the other uses of the arguments read them at the entry.
  unsigned numArgs = function.getNumArguments();
  Value descs = addDescriptorArray(function);
  for (auto [index, run] : llvm::enumerate(loops)) {
    if (remarks)
      mlir::emitRemark(run->calls.front().getLoc())
          << run->calls.size() << " calls of @"
          << run->calls.front().getCallee()
          << " run as one loop over a table of the layers' values";
    emitLoop(*run, descs, index);
  }
  eraseDeadPureOps(function);
  readArgumentsFromArray(function);
  if (arenaBytes && !arenaBytes.isExternal()) {
    addDescriptorArray(arenaBytes);
    readArgumentsFromArray(arenaBytes);
  }
  module->setAttr(
      seq::kPackedArgumentsAttr,
      IntegerAttr::get(IntegerType::get(&getContext(), 64), numArgs));
}
