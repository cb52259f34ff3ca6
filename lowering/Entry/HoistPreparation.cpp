//===- HoistPreparation.cpp - computations on parameters, once per load ---===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Moves the tensor computations of the model function that depend on
// parameters and constants alone (packed weight layouts, S4's
// discretization, tables of position encodings at static lengths) into a
// preparation function that the runtime calls once after binding the
// weights (docs/abi.md). Their results become arguments of the model
// function, after its parameters. Values computed alike from parameters of
// their own (a weight packed alike in every layer) share one preparation
// function, which seqc_prepare calls once for each from a table of their
// parameters (seq-emit-invoke), so that the preparation's code does not
// grow with the number of layers.
//
// The values moved are those a run consumes that are produced by an op that
// computes data (a linalg op other than a fill, a pad, a concatenation...):
// metadata ops (reshapes, slices, casts), fills, constants and index
// arithmetic stay in the model function, where they cost nothing or less
// than a buffer would. Values that flow into the model's results (through
// metadata ops or not) stay too: an output must be fresh memory the caller
// owns, never a prepared buffer.
//
//===----------------------------------------------------------------------===//

#include "lowering/Entry/Entry.h"

#include "dialect/Seq/Support/Debug.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/xxhash.h"

#define DEBUG_TYPE "seq-hoist-preparation"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQHOISTPREPARATION
#include "lowering/Entry/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;
using namespace mlir::seq;

namespace {

/// The operands of `op` and the values its regions use from above.
SetVector<Value> usedValues(Operation *op) {
  SetVector<Value> values(op->operand_begin(), op->operand_end());
  for (Region &region : op->getRegions())
    getUsedValuesDefinedAbove(region, values);
  return values;
}

/// Types a prepared value, or a value computed on the way to one, may have:
/// static tensors and scalars.
bool isStaticType(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.hasStaticShape();
  return type.isIntOrIndexOrFloat();
}

/// Ops that compute data: worth a buffer computed once.
bool computesData(Operation *op) {
  if (isa<linalg::FillOp>(op))
    return false;
  if (isa<linalg::LinalgOp, tensor::PadOp, tensor::ConcatOp,
          tensor::InsertSliceOp, tensor::GenerateOp>(op))
    return llvm::any_of(op->getResultTypes(),
                        [](Type t) { return isa<RankedTensorType>(t); });
  return false;
}

/// Ops that every preparation function using them may clone: scalar and
/// splat constants and static empty tensors, which compute nothing.
bool isFreeToClone(Operation *op) {
  if (isa<tensor::EmptyOp>(op))
    return op->getNumOperands() == 0;
  Attribute value;
  if (!matchPattern(op, m_Constant(&value)))
    return false;
  auto elements = dyn_cast<ElementsAttr>(value);
  return !elements || elements.isSplat();
}

struct SeqHoistPreparationPass
    : public mlir::seq::impl::SeqHoistPreparationBase<SeqHoistPreparationPass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

void SeqHoistPreparationPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto entry = module->getAttrOfType<FlatSymbolRefAttr>(kEntryAttrName);
  std::optional<std::pair<unsigned, unsigned>> params =
      getParamArgumentRange(module);
  if (!entry || !params) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] no '" << kEntryAttrName
                            << "' or parameter range: nothing to prepare\n");
    return; // not a model with its entry points: nothing to prepare
  }
  auto model = module.lookupSymbol<func::FuncOp>(entry.getValue());
  if (!model || model.isExternal() || !model.getBody().hasOneBlock()) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << entry
                            << " is not a defined function of one block: "
                               "nothing to prepare\n");
    return;
  }
  if (module.lookupSymbol(kPrepareFunctionName)) {
    module.emitError() << "the symbol '" << kPrepareFunctionName
                       << "' is reserved for the preparation function";
    return signalPassFailure();
  }
  Block &body = model.getBody().front();

  // Ops computable from parameters and constants alone, in program order.
  DenseSet<Operation *> isStatic;
  auto staticValue = [&](Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner() == &body && arg.getArgNumber() >= params->first &&
             arg.getArgNumber() < params->second;
    return isStatic.contains(v.getDefiningOp());
  };
  for (Operation &op : body.without_terminator()) {
    StringRef dynamic;
    if (!isMemoryEffectFree(&op))
      dynamic = "it has memory effects";
    else if (!llvm::all_of(op.getResultTypes(), isStaticType))
      dynamic = "a result is not a static tensor or a scalar";
    else if (!llvm::all_of(usedValues(&op), staticValue))
      dynamic = "it uses a value not computed from parameters and constants";
    if (!dynamic.empty()) {
      LLVM_DEBUG(if (computesData(&op)) llvm::dbgs()
                 << "[" DEBUG_TYPE "] not prepared: " << op.getName() << " at "
                 << op.getLoc() << ": " << dynamic << "\n");
      continue;
    }
    isStatic.insert(&op);
  }
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] @" << model.getName() << ": "
                          << isStatic.size()
                          << " ops computable from parameters (arguments ["
                          << params->first << ", " << params->second
                          << ")) and constants\n");

  // The values to prepare: static values that compute data and that a
  // non-static op uses, directly or through static metadata ops. `kept`
  // collects the static ops on the way to the results, which stay.
  SetVector<Value> prepared;
  DenseSet<Operation *> needed, kept;
  std::function<void(Value)> need = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || !isStatic.contains(def))
      return;
    if (computesData(def)) {
      prepared.insert(v);
      return;
    }
    if (needed.insert(def).second)
      for (Value used : usedValues(def))
        need(used);
  };
  std::function<void(Value)> keep = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || !isStatic.contains(def) || !kept.insert(def).second)
      return;
    for (Value used : usedValues(def))
      computesData(def) ? need(used) : keep(used);
  };
  for (Operation &op : body) {
    if (isStatic.contains(&op))
      continue;
    for (Value used : usedValues(&op))
      op.hasTrait<OpTrait::IsTerminator>() ? keep(used) : need(used);
  }
  LLVM_DEBUG({
    for (Operation &op : body)
      if (kept.contains(&op) && computesData(&op))
        llvm::dbgs() << "[" DEBUG_TYPE "] not prepared: " << op.getName()
                     << " at " << op.getLoc()
                     << ": it flows into a result, which must be fresh "
                        "memory\n";
  });
  if (prepared.empty()) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] no value to prepare\n");
    return;
  }

  // Each prepared value's backward slice, and the components of the values
  // whose slices share an op that computes something (scalar constants and
  // empty tensors do not count: every function may clone them).
  DenseMap<Operation *, unsigned> position;
  for (auto [index, op] : llvm::enumerate(body))
    position[&op] = index;
  SmallVector<DenseSet<Operation *>> slices(prepared.size());
  SmallVector<unsigned> parent =
      llvm::to_vector(llvm::seq<unsigned>(0, prepared.size()));
  auto leader = [&](unsigned index) {
    while (parent[index] != index)
      index = parent[index] = parent[parent[index]];
    return index;
  };
  DenseMap<Operation *, unsigned> owner;
  for (auto [index, v] : llvm::enumerate(prepared)) {
    DenseSet<Operation *> &slice = slices[index];
    std::function<void(Value)> collect = [&](Value used) {
      Operation *def = used.getDefiningOp();
      if (def && slice.insert(def).second)
        for (Value operand : usedValues(def))
          collect(operand);
    };
    collect(v);
    for (Operation *op : slice) {
      if (isFreeToClone(op))
        continue;
      auto [it, inserted] = owner.try_emplace(op, index);
      if (!inserted)
        parent[leader(index)] = leader(it->second);
    }
  }
  llvm::MapVector<unsigned, SmallVector<unsigned>> components;
  for (unsigned index = 0, e = prepared.size(); index < e; ++index)
    components[leader(index)].push_back(index);

  // A component that reads parameters is a function of them alone:
  // components for which that function is the same (a weight packed alike
  // in every layer) share one preparation function, which seqc_prepare
  // calls for each of them from a table of their parameters
  // (seq-emit-invoke), so that its code does not grow with the number of
  // layers. Functions that print alike compute alike: classes of
  // components in order of their first values.
  OpBuilder detached(&getContext());
  llvm::StringMap<unsigned> classOf;
  SmallVector<SmallVector<unsigned>> classes;
  SmallVector<func::FuncOp> candidates(components.size());
  SmallVector<int64_t> keys(prepared.size(), 0);
  SmallVector<SmallVector<int64_t>> candidateParams(components.size());
  for (auto [number, component] : llvm::enumerate(components)) {
    ArrayRef<unsigned> members = component.second;
    SetVector<Operation *> unionSlice;
    for (unsigned member : members)
      unionSlice.insert(slices[member].begin(), slices[member].end());
    SmallVector<Operation *> ops = unionSlice.takeVector();
    llvm::sort(ops, [&](Operation *a, Operation *b) {
      return position[a] < position[b];
    });
    SetVector<Value> reads;
    for (Operation *op : ops)
      for (Value used : usedValues(op))
        if (isa<BlockArgument>(used))
          reads.insert(used);
    SmallVector<Type> types, resultTypes;
    for (Value read : reads) {
      types.push_back(read.getType());
      candidateParams[number].push_back(
          cast<BlockArgument>(read).getArgNumber() - params->first);
    }
    for (unsigned member : members)
      resultTypes.push_back(prepared[member].getType());
    Location loc = prepared[members.front()].getLoc();
    auto function =
        func::FuncOp::create(detached, loc, kPrepareFunctionName,
                             detached.getFunctionType(types, resultTypes));
    Block *entryBlock = function.addEntryBlock();
    IRMapping mapping;
    for (auto [read, arg] : llvm::zip_equal(reads, entryBlock->getArguments()))
      mapping.map(read, arg);
    OpBuilder::InsertionGuard guard(detached);
    detached.setInsertionPointToStart(entryBlock);
    for (Operation *op : ops)
      detached.clone(*op, mapping);
    SmallVector<Value> results;
    for (unsigned member : members)
      results.push_back(mapping.lookup(prepared[member]));
    func::ReturnOp::create(detached, loc, results);
    std::string text;
    llvm::raw_string_ostream os(text);
    function->print(os, OpPrintingFlags().printGenericOpForm());
    // Each member's key: what computes it (the function's text, which
    // holds every type), from which parameters, as which result. Another
    // entry of the model that prepares the same value computes the same
    // function (docs/abi.md, "Sharing prepared values").
    for (auto [result, member] : llvm::enumerate(members)) {
      std::string keyText = text;
      llvm::raw_string_ostream keyOs(keyText);
      keyOs << "\nparams";
      for (int64_t param : candidateParams[number])
        keyOs << " " << param;
      keyOs << "\nresult " << result;
      uint64_t key = llvm::xxh3_64bits(keyText);
      keys[member] = static_cast<int64_t>(key ? key : 1);
    }
    if (reads.empty()) {
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] prepared value "
                              << members.front()
                              << " reads no parameter: computed by @"
                              << kPrepareFunctionName << "\n");
      function->destroy();
      continue;
    }
    auto [it, inserted] = classOf.try_emplace(text, classes.size());
    if (inserted)
      classes.emplace_back();
    classes[it->second].push_back(number);
    candidates[number] = function;
  }

  // The classes of two components or more get their function; every other
  // value is computed by @__seqc_prepare, which takes the parameters they
  // read.
  SmallVector<bool> grouped(prepared.size(), false);
  SmallVector<Attribute> groups;
  OpBuilder builder(model);
  for (ArrayRef<unsigned> members : classes) {
    if (members.size() < 2) {
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] prepared value "
                 << components.begin()[members.front()].second.front()
                 << " is computed like no other: computed by @"
                 << kPrepareFunctionName << "\n");
      continue;
    }
    std::string name =
        (kPrepareFunctionName + "_" + Twine(groups.size())).str();
    if (module.lookupSymbol(name)) {
      module.emitError() << "the symbol '" << name
                         << "' is reserved for a preparation function";
      return signalPassFailure();
    }
    func::FuncOp function = candidates[members.front()];
    candidates[members.front()] = nullptr;
    function.setSymName(name);
    function->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                      builder.getUnitAttr());
    builder.insert(function);
    SmallVector<int64_t> groupParams, groupValues;
    for (unsigned member : members) {
      llvm::append_range(groupParams, candidateParams[member]);
      for (unsigned value : components.begin()[member].second) {
        grouped[value] = true;
        groupValues.push_back(value);
      }
    }
    LLVM_DEBUG({
      llvm::dbgs() << "[" DEBUG_TYPE "] @" << name << " computes "
                   << function.getNumResults() << " prepared value(s) from "
                   << function.getNumArguments() << " parameter(s), "
                   << members.size() << " times: prepared values";
      for (int64_t value : groupValues)
        llvm::dbgs() << " " << value;
      llvm::dbgs() << "\n";
    });
    groups.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("function",
                              FlatSymbolRefAttr::get(function.getSymNameAttr())),
         builder.getNamedAttr("params",
                              builder.getDenseI64ArrayAttr(groupParams)),
         builder.getNamedAttr("values",
                              builder.getDenseI64ArrayAttr(groupValues))}));
  }
  for (func::FuncOp candidate : candidates)
    if (candidate)
      candidate->destroy();

  // @__seqc_prepare(parameters it reads) -> (the other prepared values):
  // their backward slices, cloned in program order.
  SmallVector<int64_t> restValues;
  DenseSet<Operation *> slice;
  for (auto [index, valueSlice] : llvm::enumerate(slices)) {
    if (grouped[index])
      continue;
    restValues.push_back(index);
    slice.insert(valueSlice.begin(), valueSlice.end());
  }
  SmallVector<int64_t> restParams;
  if (!restValues.empty()) {
    SetVector<unsigned> reads;
    for (Operation *op : slice)
      for (Value used : usedValues(op))
        if (auto arg = dyn_cast<BlockArgument>(used))
          reads.insert(arg.getArgNumber());
    SmallVector<Type> paramTypes, preparedTypes;
    for (unsigned i = params->first; i < params->second; ++i) {
      if (!reads.contains(i))
        continue;
      restParams.push_back(i - params->first);
      paramTypes.push_back(body.getArgument(i).getType());
    }
    for (int64_t index : restValues)
      preparedTypes.push_back(prepared[index].getType());
    auto prepare = func::FuncOp::create(
        builder, model.getLoc(), kPrepareFunctionName,
        builder.getFunctionType(paramTypes, preparedTypes));
    prepare->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                     builder.getUnitAttr());
    Block *prepareBody = prepare.addEntryBlock();
    IRMapping mapping;
    for (auto [param, arg] :
         llvm::zip_equal(restParams, prepareBody->getArguments()))
      mapping.map(body.getArgument(params->first + param), arg);
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(prepareBody);
    for (Operation &op : body)
      if (slice.contains(&op))
        builder.clone(op, mapping);
    SmallVector<Value> results;
    for (int64_t index : restValues)
      results.push_back(mapping.lookup(prepared[index]));
    func::ReturnOp::create(builder, model.getLoc(), results);
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] @" << kPrepareFunctionName
                            << " takes " << paramTypes.size()
                            << " parameters and computes " << results.size()
                            << " values with " << slice.size() << " ops\n");
  }
  module->setAttr(kPrepareParamsAttr, builder.getDenseI64ArrayAttr(restParams));
  module->setAttr(kPrepareValuesAttr, builder.getDenseI64ArrayAttr(restValues));
  module->setAttr(kPrepareGroupsAttr, builder.getArrayAttr(groups));

  // The model function takes them after its parameters; the ops on the way
  // to its results keep computing from the originals.
  SmallVector<int64_t> ranks;
  for (Value v : prepared) {
    unsigned index = model.getNumArguments();
    if (failed(model.insertArgument(index, v.getType(), {}, v.getLoc())))
      return signalPassFailure();
    Value arg = model.getArgument(index);
    v.replaceUsesWithIf(arg, [&](OpOperand &use) {
      return !kept.contains(use.getOwner()) &&
             !use.getOwner()->hasTrait<OpTrait::IsTerminator>();
    });
    ranks.push_back(cast<RankedTensorType>(v.getType()).getRank());
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] prepared value "
                            << ranks.size() - 1 << ": " << v.getType()
                            << ", computed by " << v.getDefiningOp()->getName()
                            << " at " << v.getLoc() << ", becomes argument "
                            << index << " of @" << model.getName() << "\n");
    if (remarks)
      v.getDefiningOp()->emitRemark()
          << "computed once, when the weights are bound: prepared value "
          << ranks.size() - 1 << " of type " << v.getType();
  }
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body))) {
    if (isStatic.contains(&op) && op.use_empty()) {
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] erased from @" << model.getName() << ": "
                 << op.getName() << " at " << op.getLoc() << "\n");
      op.erase();
    }
  }
  module->setAttr(kPreparedRanksAttr, builder.getDenseI64ArrayAttr(ranks));
  module->setAttr(kPreparedKeysAttr, builder.getDenseI64ArrayAttr(keys));

  // The parameters the model function no longer uses: only the
  // preparation reads them (the passes after this one remove uses, never
  // add them), so the runtime need not keep their bytes resident once it
  // holds the prepared block (docs/abi.md, "prepared_only").
  SmallVector<int64_t> preparedOnly;
  for (unsigned i = params->first; i < params->second; ++i)
    if (body.getArgument(i).use_empty())
      preparedOnly.push_back(i - params->first);
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] @" << model.getName()
                          << " reads " << (params->second - params->first -
                                           preparedOnly.size())
                          << " parameters itself; " << preparedOnly.size()
                          << " are read by the preparation only\n");
  module->setAttr(kPreparedOnlyParamsAttr,
                  builder.getDenseI64ArrayAttr(preparedOnly));
}
