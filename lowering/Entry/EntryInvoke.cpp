//===- EntryInvoke.cpp - the seqc_invoke packed entry point ---------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// seqc_invoke(void **args) forwards args[k] to the k-th parameter of the
// model's C interface. The runtime then needs no knowledge of the model's
// arity: it fills an array of descriptor pointers and calls one symbol.
// When seq-loop-layers made the model function take one array of its
// arguments' descriptors (`seqc.packed_arguments`), seqc_invoke builds that
// array instead, by a copy of args' slots and a loop over the prepared
// descriptors' offsets, so that its code does not grow with the number of
// parameters either.
//
//===----------------------------------------------------------------------===//

#include "lowering/Entry/Entry.h"

#include "dialect/Seq/Support/Debug.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#define DEBUG_TYPE "seq-emit-invoke"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQEMITINVOKE
#include "lowering/Entry/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;
using namespace mlir::seq;

namespace {
struct SeqEmitInvokePass
    : public mlir::seq::impl::SeqEmitInvokeBase<SeqEmitInvokePass> {
  void runOnOperation() override;
};
} // namespace

void SeqEmitInvokePass::runOnOperation() {
  ModuleOp module = getOperation();
  auto entry = module->getAttrOfType<FlatSymbolRefAttr>(kEntryAttrName);
  if (!entry) {
    module.emitError() << "expected the module attribute '" << kEntryAttrName
                       << "' naming the model function (set by "
                          "seq-build-manifest)";
    return signalPassFailure();
  }

  // The parameters only the preparation reads (seq-hoist-preparation) are
  // marked in the manifest, which seq-build-manifest wrote before the
  // preparation was hoisted (docs/abi.md, "prepared_only").
  if (auto preparedOnly =
          module->getAttrOfType<DenseI64ArrayAttr>(kPreparedOnlyParamsAttr);
      preparedOnly && !preparedOnly.empty()) {
    auto manifest = module.lookupSymbol<LLVM::GlobalOp>(kManifestSymbol);
    auto text = manifest ? dyn_cast_or_null<StringAttr>(manifest.getValueOrNull())
                         : StringAttr();
    if (!text || !text.getValue().ends_with(StringRef("\0", 1))) {
      module.emitError() << "expected the manifest '" << kManifestSymbol
                         << "' as a NUL-terminated string constant (set by "
                            "seq-build-manifest)";
      return signalPassFailure();
    }
    std::string marked = markPreparedOnlyParams(
        text.getValue().drop_back(), preparedOnly.asArrayRef());
    if (marked.empty()) {
      manifest.emitError() << "cannot mark the parameters "
                           << preparedOnly << " in the manifest";
      return signalPassFailure();
    }
    marked.push_back('\0');
    OpBuilder builder(manifest);
    manifest.setGlobalType(
        LLVM::LLVMArrayType::get(builder.getI8Type(), marked.size()));
    manifest.setValueAttr(builder.getStringAttr(marked));
  }

  // func-to-llvm names the C interface of @f `_mlir_ciface_f`.
  std::string cifaceName = ("_mlir_ciface_" + entry.getValue()).str();
  auto ciface = module.lookupSymbol<LLVM::LLVMFuncOp>(cifaceName);
  if (!ciface || ciface.isExternal()) {
    module.emitError() << "expected the C interface '" << cifaceName
                       << "' of the model function in the LLVM dialect; run "
                          "seq-emit-invoke after convert-func-to-llvm";
    return signalPassFailure();
  }
  auto reserved = [](Operation *existing, StringRef symbol) {
    existing->emitError() << "the symbol '" << symbol
                          << "' is reserved for the model entry points";
  };
  if (Operation *existing = module.lookupSymbol(kInvokeSymbol))
    return reserved(existing, kInvokeSymbol), signalPassFailure();

  // Every parameter of a C interface is a pointer: the result area first
  // (when there are results), then one descriptor per memref argument.
  // Scalars would be passed by value and break the void** convention, so
  // they are rejected rather than reinterpreted.
  LLVM::LLVMFunctionType cifaceType = ciface.getFunctionType();
  auto ptrType = LLVM::LLVMPointerType::get(&getContext());
  for (auto [index, type] : llvm::enumerate(cifaceType.getParams())) {
    if (type != ptrType) {
      ciface.emitError() << "parameter " << index << " of the C interface has "
                         << "type " << type
                         << "; seqc_invoke passes only memref descriptors";
      return signalPassFailure();
    }
  }
  if (!isa<LLVM::LLVMVoidType>(cifaceType.getReturnType())) {
    ciface.emitError() << "expected the C interface to return its results "
                          "through its first parameter";
    return signalPassFailure();
  }

  // The prepared values (seq-hoist-preparation) are the C interface's last
  // parameters; the runtime passes them as one prepared block after the
  // parameters, read-only, which every instance made from the same weights
  // may share (docs/abi.md).
  ArrayRef<int64_t> preparedRanks;
  if (auto ranks = module->getAttrOfType<DenseI64ArrayAttr>(kPreparedRanksAttr))
    preparedRanks = ranks.asArrayRef();
  unsigned numPrepared = preparedRanks.size();
  // The arena of the memory plan (seq-plan-memory) is the C interface's
  // very last parameter; the caller owns it, as a record {base, capacity}
  // in the slot after the prepared block's (docs/abi.md, version 2).
  int64_t arenaAlignment = 0;
  if (auto arena = module->getAttrOfType<IntegerAttr>(kArenaAttr))
    arenaAlignment = arena.getInt();
  bool hasArena = arenaAlignment > 0;
  // A model compiled for the seqc runtime allocates its buffers through
  // MLIR's generic allocation functions, which the runtime defines; the
  // state and the arena then come from the runtime too, which checks every
  // allocation and unwinds a run that one fails (docs/runtime.md). Else
  // they come from malloc and aligned_alloc.
  bool runtimeAllocator =
      module.lookupSymbol("_mlir_memref_to_llvm_alloc") ||
      module.lookupSymbol("_mlir_memref_to_llvm_aligned_alloc");
  // A GPU model's kernels read the arena: it then comes from the runtime's
  // allocator, which gives a GPU model managed memory (docs/abi.md).
  bool runtimeArena =
      runtimeAllocator || module->hasAttr("gpu.container_module");
  bool hasPrepared = numPrepared > 0;
  // Each prepared value's key (seq-hoist-preparation), 0 when unknown.
  SmallVector<int64_t> keys(numPrepared, 0);
  if (auto keysAttr = module->getAttrOfType<DenseI64ArrayAttr>(kPreparedKeysAttr))
    if (keysAttr.size() == int64_t(numPrepared))
      keys = llvm::to_vector(keysAttr.asArrayRef());
  // seq-loop-layers: the C interface takes, after the result area, one
  // pointer to the array of the descriptors of the model function's
  // arguments (the parameters', the prepared values', the arena's), which
  // seqc_invoke fills: `numPacked` of them.
  unsigned numPacked = 0;
  if (auto packed = module->getAttrOfType<IntegerAttr>(kPackedArgumentsAttr))
    numPacked = packed.getInt();
  if (numPacked ? cifaceType.getNumParams() > 2 ||
                      numPacked < numPrepared + hasArena + 1
                : cifaceType.getNumParams() < numPrepared + hasArena + 1) {
    ciface.emitError() << "expected the C interface to take the result area, "
                       << numPrepared << " prepared values"
                       << (hasArena ? " and the arena" : "")
                       << (numPacked
                               ? " in an array of " +
                                     std::to_string(numPacked) + " descriptors"
                               : std::string());
    return signalPassFailure();
  }
  // The C interface's parameters before the array (the result area).
  unsigned numResultSlots = numPacked ? cifaceType.getNumParams() - 1 : 0;
  unsigned numSlots = numPacked
                          ? numResultSlots + numPacked - numPrepared - hasArena
                          : cifaceType.getNumParams() - numPrepared - hasArena;

  // Which preparation function computes each prepared value
  // (seq-hoist-preparation): @__seqc_prepare those of `restValues` from the
  // parameters of `restParams`, and each group's function the values of
  // one component per call. Without the attributes, @__seqc_prepare
  // computes all of them from every parameter.
  struct PrepareGroup {
    LLVM::LLVMFuncOp ciface;
    /// Its parameters and values per call, and the number of calls.
    unsigned numArgs, numResults, numCalls;
    ArrayRef<int64_t> params, values;
  };
  SmallVector<PrepareGroup> groups;
  SmallVector<int64_t> restParams, restValues;
  auto numParamsAttr = module->getAttrOfType<IntegerAttr>(kNumParamsAttr);
  unsigned numParams = numParamsAttr ? numParamsAttr.getInt() : 0;
  auto lookupCiface = [&](StringRef function) {
    std::string name = ("_mlir_ciface_" + function).str();
    auto found = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
    return found && !found.isExternal() ? found : LLVM::LLVMFuncOp();
  };
  if (numPrepared) {
    auto params = module->getAttrOfType<DenseI64ArrayAttr>(kPrepareParamsAttr);
    auto values = module->getAttrOfType<DenseI64ArrayAttr>(kPrepareValuesAttr);
    auto groupsAttr = module->getAttrOfType<ArrayAttr>(kPrepareGroupsAttr);
    if (params && values && groupsAttr && numParamsAttr) {
      llvm::append_range(restParams, params.asArrayRef());
      llvm::append_range(restValues, values.asArrayRef());
      for (Attribute attr : groupsAttr) {
        auto dict = dyn_cast<DictionaryAttr>(attr);
        auto function =
            dict ? dict.getAs<FlatSymbolRefAttr>("function") : nullptr;
        auto groupParams =
            dict ? dict.getAs<DenseI64ArrayAttr>("params") : nullptr;
        auto groupValues =
            dict ? dict.getAs<DenseI64ArrayAttr>("values") : nullptr;
        LLVM::LLVMFuncOp groupCiface =
            function ? lookupCiface(function.getValue()) : nullptr;
        unsigned numArgs =
            groupCiface ? groupCiface.getNumArguments() - 1 : 0;
        unsigned numCalls =
            numArgs && groupParams ? groupParams.size() / numArgs : 0;
        if (!numCalls || !groupValues ||
            groupParams.size() != numCalls * numArgs ||
            groupValues.size() % numCalls) {
          module.emitError()
              << "expected each group of '" << kPrepareGroupsAttr
              << "' to name a defined preparation function with a C "
                 "interface and parameters (function), the parameters of "
                 "each call (params) and the values each call computes "
                 "(values)";
          return signalPassFailure();
        }
        groups.push_back({groupCiface, numArgs,
                          unsigned(groupValues.size() / numCalls), numCalls,
                          groupParams.asArrayRef(), groupValues.asArrayRef()});
      }
    } else if (params || values || groupsAttr) {
      module.emitError() << "expected the module attributes '"
                         << kPrepareParamsAttr << "', '" << kPrepareValuesAttr
                         << "', '" << kPrepareGroupsAttr << "' and '"
                         << kNumParamsAttr << "' together";
      return signalPassFailure();
    } else {
      restValues = llvm::to_vector(llvm::seq<int64_t>(0, numPrepared));
    }
  }
  LLVM::LLVMFuncOp prepareCiface;
  if (!restValues.empty()) {
    prepareCiface = lookupCiface(kPrepareFunctionName);
    if (!prepareCiface) {
      module.emitError() << "expected the C interface '_mlir_ciface_"
                         << kPrepareFunctionName
                         << "' of the preparation function for "
                         << restValues.size() << " prepared values";
      return signalPassFailure();
    }
    if (!module->hasAttr(kPrepareParamsAttr)) {
      numParams = prepareCiface.getNumArguments() - 1;
      restParams = llvm::to_vector(llvm::seq<int64_t>(0, numParams));
    }
  }
  // Every prepared value is computed once, and every parameter a
  // preparation function takes is one of the model's.
  {
    SmallVector<unsigned> computed(numPrepared, 0);
    auto validValue = [&](int64_t value) {
      return value >= 0 && value < int64_t(numPrepared) && !computed[value]++;
    };
    auto validParam = [&](int64_t param) {
      return param >= 0 && param < int64_t(numParams);
    };
    bool valid = llvm::all_of(restValues, validValue) &&
                 llvm::all_of(restParams, validParam) &&
                 (!prepareCiface ||
                  prepareCiface.getNumArguments() == restParams.size() + 1);
    for (const PrepareGroup &group : groups) {
      valid = valid && llvm::all_of(group.values, validValue) &&
              llvm::all_of(group.params, validParam);
      for (auto [index, value] : llvm::enumerate(group.values))
        valid = valid && preparedRanks[value] ==
                             preparedRanks[group.values[index %
                                                        group.numResults]];
    }
    if (!valid || llvm::is_contained(computed, 0u)) {
      module.emitError() << "expected the preparation functions to compute "
                            "each of the "
                         << numPrepared
                         << " prepared values once, of the same ranks at every "
                            "call of a function, from parameters among the "
                         << numParams << " of the model";
      return signalPassFailure();
    }
  }
  LLVM::LLVMFuncOp arenaBytesCiface;
  if (hasArena) {
    std::string name = ("_mlir_ciface_" + kArenaBytesFunctionName).str();
    arenaBytesCiface = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
    if (!arenaBytesCiface || arenaBytesCiface.isExternal() ||
        (numPacked ? arenaBytesCiface.getNumArguments() != 1
                   : arenaBytesCiface.getNumArguments() + 2 !=
                         cifaceType.getNumParams())) {
      module.emitError() << "expected the C interface '" << name
                         << "' of the arena's size, taking the model's "
                            "arguments";
      return signalPassFailure();
    }
  }
  if (Operation *existing = module.lookupSymbol(kPrepareSymbol))
    return reserved(existing, kPrepareSymbol), signalPassFailure();
  if (Operation *existing = module.lookupSymbol(kReleaseSymbol))
    return reserved(existing, kReleaseSymbol), signalPassFailure();

  Location loc = ciface.getLoc();
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto voidType = LLVM::LLVMVoidType::get(&getContext());
  auto i64Type = builder.getI64Type();
  auto i8Type = builder.getI8Type();
  auto loadPointer = [&](Value base, int64_t index) -> Value {
    Value slot = LLVM::GEPOp::create(builder, loc, ptrType, ptrType, base,
                                     ArrayRef<LLVM::GEPArg>{int32_t(index)},
                                     LLVM::GEPNoWrapFlags::inbounds);
    return LLVM::LoadOp::create(builder, loc, ptrType, slot);
  };
  // The prepared block: the address of the constant table describing it
  // ({count, offsets, ranks, keys}), then the prepared descriptors, {ptr,
  // ptr, i64, i64[r], i64[r]} each, back to back, first those
  // @__seqc_prepare computes (its result area), then those of each group
  // in turn. The arena is not in it: the caller passes its own.
  auto descriptorBytes = [&](int64_t value) {
    return 8 * (3 + 2 * preparedRanks[value]);
  };
  SmallVector<int64_t> offsets(numPrepared);
  int64_t stateBytes = 8;
  for (int64_t value : restValues) {
    offsets[value] = stateBytes;
    stateBytes += descriptorBytes(value);
  }
  for (const PrepareGroup &group : groups) {
    for (int64_t value : group.values) {
      offsets[value] = stateBytes;
      stateBytes += descriptorBytes(value);
    }
  }
  LLVM_DEBUG({
    llvm::dbgs() << "[" DEBUG_TYPE "] " << cifaceName << ": " << numSlots
                 << " slots of seqc_invoke's args, " << numPrepared
                 << " prepared values";
    if (hasArena)
      llvm::dbgs() << ", the arena (alignment " << arenaAlignment
                   << ", allocated by "
                   << (runtimeArena ? "the runtime: a GPU model"
                                    : "aligned_alloc")
                   << ")";
    llvm::dbgs() << "\n";
    if (hasPrepared) {
      llvm::dbgs() << "[" DEBUG_TYPE "] prepared block of " << stateBytes
                   << " bytes: prepared descriptors at offsets";
      for (int64_t offset : offsets)
        llvm::dbgs() << " " << offset;
      llvm::dbgs() << "\n";
    } else {
      llvm::dbgs() << "[" DEBUG_TYPE "] no state: seqc_prepare returns "
                      "null\n";
    }
  });
  auto atOffset = [&](Value base, int64_t offset) -> Value {
    return LLVM::GEPOp::create(builder, loc, ptrType, i8Type, base,
                               ArrayRef<LLVM::GEPArg>{int32_t(offset)},
                               LLVM::GEPNoWrapFlags::inbounds);
  };
  auto i64Constant = [&](int64_t value) -> Value {
    return LLVM::ConstantOp::create(builder, loc, i64Type,
                                    builder.getI64IntegerAttr(value));
  };
  // A constant internal global array of i64.
  auto createTable = [&](StringRef name, ArrayRef<int64_t> values) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(module.getBody());
    return LLVM::GlobalOp::create(
        builder, loc, LLVM::LLVMArrayType::get(i64Type, values.size()),
        /*isConstant=*/true, LLVM::Linkage::Internal, name,
        DenseIntElementsAttr::get(
            RankedTensorType::get({int64_t(values.size())}, i64Type),
            values));
  };
  auto declare = [&](StringRef name, Type result, ArrayRef<Type> params) {
    if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
      return existing;
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(module.getBody());
    return LLVM::LLVMFuncOp::create(
        builder, loc, name, LLVM::LLVMFunctionType::get(result, params));
  };

  // The call of seqc_prepare after which each parameter only the
  // preparation reads is read no more: @__seqc_prepare's (-1, 0), else the
  // r-th of group g's, (g, r). After it, seqc_prepare tells the runtime
  // (seqc_prepare_done_reading), which gives the parameter's memory back
  // then rather than once the block is complete, so that the parameters
  // and the values prepared from them are not all resident at once
  // (docs/runtime.md, "Memory of the parameters"). Only for the runtime's
  // models (it defines the function).
  DenseMap<int64_t, std::pair<int64_t, int64_t>> lastRead;
  if (runtimeAllocator && hasPrepared) {
    if (auto preparedOnly =
            module->getAttrOfType<DenseI64ArrayAttr>(kPreparedOnlyParamsAttr)) {
      for (int64_t param : preparedOnly.asArrayRef())
        lastRead[param] = {-2, 0};
      auto read = [&](int64_t param, int64_t group, int64_t call) {
        auto it = lastRead.find(param);
        if (it != lastRead.end())
          it->second = std::max(it->second, std::make_pair(group, call));
      };
      if (prepareCiface)
        for (int64_t param : restParams)
          read(param, -1, 0);
      for (auto [g, group] : llvm::enumerate(groups))
        for (auto [index, param] : llvm::enumerate(group.params))
          read(param, g, index / group.numArgs);
    }
  }
  // The parameters whose last read is call `call` of `group`, in the order
  // of the call's operands; -1 for the others.
  auto lastReadBy = [&](ArrayRef<int64_t> params, int64_t group, int64_t call) {
    SmallVector<int64_t> last;
    for (int64_t param : params) {
      auto it = lastRead.find(param);
      last.push_back(it != lastRead.end() &&
                             it->second == std::make_pair(group, call)
                         ? param
                         : -1);
    }
    return last;
  };
  LLVM::LLVMFuncOp doneReading;
  // seqc_prepare_done_reading(table + offset, count), `offset` null for 0.
  auto callDoneReading = [&](LLVM::GlobalOp table, Value offset,
                             int64_t count) {
    if (!doneReading)
      doneReading =
          declare(kPrepareDoneReadingSymbol, voidType, {ptrType, i64Type});
    Value at = LLVM::AddressOfOp::create(builder, loc, table);
    if (offset)
      at = LLVM::GEPOp::create(builder, loc, ptrType, i64Type, at,
                               ValueRange{offset},
                               LLVM::GEPNoWrapFlags::inbounds);
    LLVM::CallOp::create(builder, loc, doneReading,
                         ValueRange{at, i64Constant(count)});
  };
  auto hasParam = [](ArrayRef<int64_t> last) {
    return llvm::any_of(last, [](int64_t param) { return param >= 0; });
  };

  // void *seqc_prepare(void **params): the prepared values in an allocated
  // block, or null when there are none.
  auto prepare = LLVM::LLVMFuncOp::create(
      builder, loc, kPrepareSymbol,
      LLVM::LLVMFunctionType::get(ptrType, {ptrType}));
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(prepare.addEntryBlock(builder));
    if (!hasPrepared) {
      LLVM::ReturnOp::create(builder, loc,
                             LLVM::ZeroOp::create(builder, loc, ptrType));
    } else {
      auto allocState =
          declare(runtimeAllocator ? "_mlir_memref_to_llvm_alloc" : "malloc",
                  ptrType, {i64Type});
      Value state = LLVM::CallOp::create(builder, loc, allocState,
                                         ValueRange{i64Constant(stateBytes)})
                        .getResult();
      // The block starts with the address of its description: the runtime
      // reads each value's offset, rank and key there to share the values
      // that several entries prepare alike (docs/abi.md).
      if (Operation *existing = module.lookupSymbol(kPreparedTableSymbol))
        return reserved(existing, kPreparedTableSymbol), signalPassFailure();
      SmallVector<int64_t> description{int64_t(numPrepared)};
      llvm::append_range(description, offsets);
      llvm::append_range(description, preparedRanks);
      llvm::append_range(description, keys);
      LLVM::GlobalOp described =
          createTable(kPreparedTableSymbol, description);
      LLVM::StoreOp::create(builder, loc,
                            LLVM::AddressOfOp::create(builder, loc, described),
                            state);
      Value params = prepare.getArgument(0);
      if (prepareCiface) {
        // Its result area: the descriptors after the table's address.
        SmallVector<Value> operands{atOffset(state, offsets[restValues.front()])};
        for (int64_t param : restParams)
          operands.push_back(loadPointer(params, param));
        LLVM::CallOp::create(builder, loc, prepareCiface, operands);
        SmallVector<int64_t> last;
        for (int64_t param : lastReadBy(restParams, -1, 0))
          if (param >= 0)
            last.push_back(param);
        if (!last.empty()) {
          std::string name = kPrepareLastReadsSymbol.str();
          if (Operation *existing = module.lookupSymbol(name))
            return reserved(existing, name), signalPassFailure();
          callDoneReading(createTable(name, last), Value(), last.size());
        }
      }
      // Each group's function, called in a loop over a table of its
      // parameters' indices, so that the code does not grow with the
      // number of calls: the r-th call writes its values' descriptors at
      // `base + r * bytes` in the state.
      //   for r < m: f(state + base + r * bytes,
      //                params[table[r*k]], ..., params[table[r*k + k-1]])
      for (auto [index, group] : llvm::enumerate(groups)) {
        std::string name = (kPrepareParamsSymbol + "_" + Twine(index)).str();
        if (Operation *existing = module.lookupSymbol(name))
          return reserved(existing, name), signalPassFailure();
        LLVM::GlobalOp table = createTable(name, group.params);
        // The parameters each call reads for the last time, in the order
        // of its operands (-1 for the others).
        SmallVector<int64_t> last;
        for (int64_t r = 0; r < group.numCalls; ++r)
          llvm::append_range(
              last,
              lastReadBy(group.params.slice(r * group.numArgs, group.numArgs),
                         index, r));
        LLVM::GlobalOp lastTable;
        if (hasParam(last)) {
          std::string lastName =
              (kPrepareLastReadsSymbol + "_" + Twine(index)).str();
          if (Operation *existing = module.lookupSymbol(lastName))
            return reserved(existing, lastName), signalPassFailure();
          lastTable = createTable(lastName, last);
        }
        int64_t base = offsets[group.values.front()];
        int64_t bytes = 0;
        for (int64_t value : group.values.take_front(group.numResults))
          bytes += descriptorBytes(value);
        LLVM_DEBUG(llvm::dbgs()
                   << "[" DEBUG_TYPE "] seqc_prepare calls @"
                   << group.ciface.getName() << " " << group.numCalls
                   << " times, on the parameters of @" << name << " ("
                   << group.numArgs << " per call), into the block at "
                   << base << " + " << bytes << " r\n");
        Block *header = prepare.addBlock(), *call = prepare.addBlock(),
              *after = prepare.addBlock();
        Value r = header->addArgument(i64Type, loc);
        LLVM::BrOp::create(builder, loc, ValueRange{i64Constant(0)}, header);
        builder.setInsertionPointToStart(header);
        LLVM::CondBrOp::create(
            builder, loc,
            LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::ult, r,
                                 i64Constant(group.numCalls)),
            call, after);
        builder.setInsertionPointToStart(call);
        Value offset = LLVM::AddOp::create(
            builder, loc, i64Constant(base),
            LLVM::MulOp::create(builder, loc, r, i64Constant(bytes)));
        SmallVector<Value> operands{LLVM::GEPOp::create(
            builder, loc, ptrType, i8Type, state, ValueRange{offset},
            LLVM::GEPNoWrapFlags::inbounds)};
        Value row = LLVM::MulOp::create(builder, loc, r,
                                        i64Constant(group.numArgs));
        Value tableBase = LLVM::AddressOfOp::create(builder, loc, table);
        for (unsigned k = 0; k < group.numArgs; ++k) {
          Value at = LLVM::AddOp::create(builder, loc, row, i64Constant(k));
          Value slot = LLVM::GEPOp::create(builder, loc, ptrType, i64Type,
                                           tableBase, ValueRange{at},
                                           LLVM::GEPNoWrapFlags::inbounds);
          Value param = LLVM::LoadOp::create(builder, loc, i64Type, slot);
          Value paramSlot = LLVM::GEPOp::create(
              builder, loc, ptrType, ptrType, params, ValueRange{param},
              LLVM::GEPNoWrapFlags::inbounds);
          operands.push_back(
              LLVM::LoadOp::create(builder, loc, ptrType, paramSlot));
        }
        LLVM::CallOp::create(builder, loc, group.ciface, operands);
        if (lastTable)
          callDoneReading(lastTable, row, group.numArgs);
        LLVM::BrOp::create(
            builder, loc,
            ValueRange{LLVM::AddOp::create(builder, loc, r, i64Constant(1))},
            header);
        builder.setInsertionPointToStart(after);
      }
      LLVM::ReturnOp::create(builder, loc, state);
    }
  }

  // void seqc_release(void *state): frees the prepared buffers (with the
  // allocator the model allocates with) and the block.
  auto release = LLVM::LLVMFuncOp::create(
      builder, loc, kReleaseSymbol,
      LLVM::LLVMFunctionType::get(voidType, {ptrType}));
  {
    OpBuilder::InsertionGuard guard(builder);
    Block *entryBlock = release.addEntryBlock(builder);
    builder.setInsertionPointToStart(entryBlock);
    if (!hasPrepared) {
      LLVM::ReturnOp::create(builder, loc, ValueRange());
    } else {
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] seqc_release frees the block and the "
                    "prepared buffers with "
                 << (runtimeAllocator ? "_mlir_memref_to_llvm_free: the "
                                        "model allocates with the runtime"
                                      : "free")
                 << "\n");
      auto free =
          declare(runtimeAllocator ? "_mlir_memref_to_llvm_free" : "free",
                  voidType, {ptrType});
      Value state = release.getArgument(0);
      Block *body = release.addBlock();
      Block *done = release.addBlock();
      Value null = LLVM::ZeroOp::create(builder, loc, ptrType);
      Value isNull = LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::eq,
                                          state, null);
      LLVM::CondBrOp::create(builder, loc, isNull, done, body);
      builder.setInsertionPointToStart(body);
      if (numPrepared) {
        // A loop over the table of the prepared descriptors' offsets, so
        // that the function's size does not grow with their number:
        //   for i: p = state[offsets[i]].allocated
        //     if p is no constant's marker and no earlier p: free(p)
        // Two prepared values may share a buffer (CSE merged their
        // computations), so each buffer is freed at its first occurrence.
        if (Operation *existing = module.lookupSymbol(kPreparedOffsetsSymbol))
          return reserved(existing, kPreparedOffsetsSymbol),
                 signalPassFailure();
        LLVM::GlobalOp table = createTable(kPreparedOffsetsSymbol, offsets);
        // memref.get_global marks constant buffers with this pointer.
        Value marker = i64Constant(0xdeadbeef);
        Value count = i64Constant(numPrepared);
        Value tableBase = LLVM::AddressOfOp::create(builder, loc, table);
        // The allocated pointer of the descriptor at table[index].
        auto allocatedAt = [&](Value index) -> Value {
          Value slot = LLVM::GEPOp::create(builder, loc, ptrType, i64Type,
                                           tableBase, ValueRange{index},
                                           LLVM::GEPNoWrapFlags::inbounds);
          Value offset = LLVM::LoadOp::create(builder, loc, i64Type, slot);
          Value at = LLVM::GEPOp::create(builder, loc, ptrType, i8Type, state,
                                         ValueRange{offset},
                                         LLVM::GEPNoWrapFlags::inbounds);
          return LLVM::LoadOp::create(builder, loc, ptrType, at);
        };
        Block *header = release.addBlock(), *check = release.addBlock(),
              *scan = release.addBlock(), *compare = release.addBlock(),
              *freeIt = release.addBlock(), *next = release.addBlock(),
              *after = release.addBlock();
        Value i = header->addArgument(i64Type, loc);
        Value j = scan->addArgument(i64Type, loc);
        LLVM::BrOp::create(builder, loc, ValueRange{i64Constant(0)}, header);
        builder.setInsertionPointToStart(header);
        LLVM::CondBrOp::create(
            builder, loc,
            LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::ult, i,
                                 count),
            check, after);
        builder.setInsertionPointToStart(check);
        Value allocated = allocatedAt(i);
        Value bits = LLVM::PtrToIntOp::create(builder, loc, i64Type, allocated);
        LLVM::CondBrOp::create(
            builder, loc,
            LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::ne, bits,
                                 marker),
            scan, ValueRange{i64Constant(0)}, next, ValueRange());
        builder.setInsertionPointToStart(scan);
        LLVM::CondBrOp::create(
            builder, loc,
            LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::ult, j, i),
            compare, freeIt);
        builder.setInsertionPointToStart(compare);
        Value earlier =
            LLVM::PtrToIntOp::create(builder, loc, i64Type, allocatedAt(j));
        Value nextJ = LLVM::AddOp::create(builder, loc, j, i64Constant(1));
        LLVM::CondBrOp::create(
            builder, loc,
            LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::eq,
                                 earlier, bits),
            next, ValueRange(), scan, ValueRange{nextJ});
        builder.setInsertionPointToStart(freeIt);
        LLVM::CallOp::create(builder, loc, free, ValueRange{allocated});
        LLVM::BrOp::create(builder, loc, next);
        builder.setInsertionPointToStart(next);
        LLVM::BrOp::create(
            builder, loc,
            ValueRange{LLVM::AddOp::create(builder, loc, i, i64Constant(1))},
            header);
        builder.setInsertionPointToStart(after);
      }
      LLVM::CallOp::create(builder, loc, free, ValueRange{state});
      LLVM::BrOp::create(builder, loc, done);
      builder.setInsertionPointToStart(done);
      LLVM::ReturnOp::create(builder, loc, ValueRange());
      // Keep the blocks in the order they were filled: done last.
      done->moveBefore(&release.getBody(), release.getBody().end());
    }
  }

  // void seqc_invoke(void **args).
  auto invoke = LLVM::LLVMFuncOp::create(
      builder, loc, kInvokeSymbol,
      LLVM::LLVMFunctionType::get(voidType, {ptrType}));
  Block *body = invoke.addEntryBlock(builder);
  builder.setInsertionPointToStart(body);

  Value args = body->getArgument(0);
  // The arena's descriptor, {ptr, ptr, i64 offset, i64 size, i64 stride},
  // in the entry block's frame.
  Value arenaDescriptor;
  if (hasArena)
    arenaDescriptor = LLVM::AllocaOp::create(
        builder, loc, ptrType, LLVM::LLVMArrayType::get(i64Type, 5),
        i64Constant(1), /*alignment=*/8);
  SmallVector<Value> operands;
  // Packed: the array of the model function's descriptors in the entry
  // block's frame, its first slots copied from `args` (the parameters'
  // descriptors are `args`' slots after the result area, in order).
  Value descs;
  if (numPacked) {
    descs = LLVM::AllocaOp::create(builder, loc, ptrType,
                                   LLVM::LLVMArrayType::get(ptrType, numPacked),
                                   i64Constant(1), /*alignment=*/8);
    for (unsigned k = 0; k < numResultSlots; ++k)
      operands.push_back(loadPointer(args, k));
    LLVM::MemcpyOp::create(builder, loc, descs,
                           atOffset(args, 8 * numResultSlots),
                           i64Constant(8 * (numSlots - numResultSlots)),
                           /*isVolatile=*/false);
  } else {
    for (unsigned k = 0; k < numSlots; ++k)
      operands.push_back(loadPointer(args, k));
  }
  // The slot of the array for argument `index` of the model function.
  auto descsSlot = [&](Value index) -> Value {
    return LLVM::GEPOp::create(builder, loc, ptrType, ptrType, descs,
                               ValueRange{index},
                               LLVM::GEPNoWrapFlags::inbounds);
  };
  // The operands of the C interface, once the array is filled.
  auto cifaceOperands = [&]() {
    SmallVector<Value> all(operands);
    if (numPacked) {
      all.resize(numResultSlots);
      all.push_back(descs);
    }
    return all;
  };
  if (!hasPrepared && !hasArena) {
    LLVM::CallOp::create(builder, loc, ciface, cifaceOperands());
    LLVM::ReturnOp::create(builder, loc, ValueRange());
  } else {
    Value null = LLVM::ZeroOp::create(builder, loc, ptrType);
    // The arena's record, args[numSlots + 1]: {ptr base, i64 capacity},
    // the caller's; a null one makes this call use a record of its own in
    // the frame, whose arena it frees before returning.
    Value record, recordIsNull;
    if (hasArena) {
      Value local = LLVM::AllocaOp::create(
          builder, loc, ptrType, LLVM::LLVMArrayType::get(i64Type, 2),
          i64Constant(1), /*alignment=*/8);
      LLVM::StoreOp::create(builder, loc, null, atOffset(local, 0));
      LLVM::StoreOp::create(builder, loc, i64Constant(0), atOffset(local, 8));
      Value given = loadPointer(args, numSlots + 1);
      recordIsNull = LLVM::ICmpOp::create(
          builder, loc, LLVM::ICmpPredicate::eq, given, null);
      record =
          LLVM::SelectOp::create(builder, loc, recordIsNull, local, given);
    }
    auto free = runtimeArena ? declare("_mlir_memref_to_llvm_free", voidType,
                                       {ptrType})
                             : declare("free", voidType, {ptrType});
    // A null prepared block (a host that never called seqc_prepare)
    // prepares for this call alone.
    Value isNull, state;
    Block *run = nullptr;
    if (hasPrepared) {
      // The state buffers' slots follow the parameters'.
      unsigned numStateArgs = 0;
      if (auto numState = module->getAttrOfType<IntegerAttr>(kNumStateAttr))
        numStateArgs = numState.getInt();
      Value given = loadPointer(args, numSlots);
      isNull = LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::eq,
                                    given, null);
      Block *prepareNow = invoke.addBlock();
      run = invoke.addBlock();
      run->addArgument(ptrType, loc);
      LLVM::CondBrOp::create(builder, loc, isNull, prepareNow, ValueRange(),
                             run, ValueRange{given});
      builder.setInsertionPointToStart(prepareNow);
      Value params = LLVM::GEPOp::create(
          builder, loc, ptrType, ptrType, args,
          ArrayRef<LLVM::GEPArg>{int32_t(numSlots - numStateArgs - numParams)},
          LLVM::GEPNoWrapFlags::inbounds);
      Value fresh =
          LLVM::CallOp::create(builder, loc, prepare, ValueRange{params})
              .getResult();
      LLVM::BrOp::create(builder, loc, ValueRange{fresh}, run);
      builder.setInsertionPointToStart(run);
      state = run->getArgument(0);
      if (!numPacked) {
        for (int64_t offset : offsets)
          operands.push_back(atOffset(state, offset));
      } else {
        // A loop over the table of the prepared descriptors' offsets:
        //   for i: descs[first + i] = state + offsets[i]
        auto table =
            module.lookupSymbol<LLVM::GlobalOp>(kPreparedOffsetsSymbol);
        assert(table && "seqc_release made the table of the offsets");
        Value first = i64Constant(numSlots - numResultSlots);
        Block *header = invoke.addBlock(), *store = invoke.addBlock(),
              *after = invoke.addBlock();
        Value i = header->addArgument(i64Type, loc);
        LLVM::BrOp::create(builder, loc, ValueRange{i64Constant(0)}, header);
        builder.setInsertionPointToStart(header);
        LLVM::CondBrOp::create(builder, loc,
                               LLVM::ICmpOp::create(builder, loc,
                                                    LLVM::ICmpPredicate::ult, i,
                                                    i64Constant(numPrepared)),
                               store, after);
        builder.setInsertionPointToStart(store);
        Value tableBase = LLVM::AddressOfOp::create(builder, loc, table);
        Value offset = LLVM::LoadOp::create(
            builder, loc, i64Type,
            LLVM::GEPOp::create(builder, loc, ptrType, i64Type, tableBase,
                                ValueRange{i}, LLVM::GEPNoWrapFlags::inbounds));
        Value descriptor = LLVM::GEPOp::create(builder, loc, ptrType, i8Type,
                                               state, ValueRange{offset},
                                               LLVM::GEPNoWrapFlags::inbounds);
        LLVM::StoreOp::create(
            builder, loc, descriptor,
            descsSlot(LLVM::AddOp::create(builder, loc, first, i)));
        LLVM::BrOp::create(
            builder, loc,
            ValueRange{LLVM::AddOp::create(builder, loc, i, i64Constant(1))},
            header);
        builder.setInsertionPointToStart(after);
      }
    }
    if (hasArena) {
      // The arena grows to what this call's sizes need; it is never shrunk
      // and is freed by the record's owner.
      Value bytes =
          LLVM::CallOp::create(
              builder, loc, arenaBytesCiface,
              numPacked ? ValueRange{descs}
                        : ValueRange(ArrayRef<Value>(operands).drop_front()))
              .getResult();
      Value baseSlot = atOffset(record, 0);
      Value capacitySlot = atOffset(record, 8);
      Value capacity =
          LLVM::LoadOp::create(builder, loc, i64Type, capacitySlot);
      Value grow = LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::ugt,
                                        bytes, capacity);
      Block *growBlock = invoke.addBlock();
      Block *call = invoke.addBlock();
      LLVM::CondBrOp::create(builder, loc, grow, growBlock, call);
      builder.setInsertionPointToStart(growBlock);
      // The runtime's seqc_alloc_arena checks the request (and names the
      // arena when it fails): a failure unwinds this call before any kernel
      // runs.
      auto alignedAlloc =
          runtimeArena
              ? declare("seqc_alloc_arena", ptrType, {i64Type, i64Type})
              : declare("aligned_alloc", ptrType, {i64Type, i64Type});
      // The record is empty while the arena is replaced, so that it never
      // holds a freed arena, even when the allocation does not return.
      Value old = LLVM::LoadOp::create(builder, loc, ptrType, baseSlot);
      LLVM::StoreOp::create(builder, loc, null, baseSlot);
      LLVM::StoreOp::create(builder, loc, i64Constant(0), capacitySlot);
      LLVM::CallOp::create(builder, loc, free, ValueRange{old});
      // aligned_alloc wants a multiple of the alignment.
      Value rounded = LLVM::AndOp::create(
          builder, loc,
          LLVM::AddOp::create(builder, loc, bytes,
                              i64Constant(arenaAlignment - 1)),
          i64Constant(-arenaAlignment));
      Value fresh =
          LLVM::CallOp::create(builder, loc, alignedAlloc,
                               ValueRange{i64Constant(arenaAlignment), rounded})
              .getResult();
      LLVM::StoreOp::create(builder, loc, fresh, baseSlot);
      LLVM::StoreOp::create(builder, loc, rounded, capacitySlot);
      LLVM::BrOp::create(builder, loc, call);
      builder.setInsertionPointToStart(call);
      Value base = LLVM::LoadOp::create(builder, loc, ptrType, baseSlot);
      LLVM::StoreOp::create(builder, loc, base, atOffset(arenaDescriptor, 0));
      LLVM::StoreOp::create(builder, loc, base, atOffset(arenaDescriptor, 8));
      LLVM::StoreOp::create(builder, loc, i64Constant(0),
                            atOffset(arenaDescriptor, 16));
      LLVM::StoreOp::create(builder, loc, bytes, atOffset(arenaDescriptor, 24));
      LLVM::StoreOp::create(builder, loc, i64Constant(1),
                            atOffset(arenaDescriptor, 32));
      if (numPacked)
        LLVM::StoreOp::create(builder, loc, arenaDescriptor,
                              descsSlot(i64Constant(numPacked - 1)));
      else
        operands.push_back(arenaDescriptor);
    }
    LLVM::CallOp::create(builder, loc, ciface, cifaceOperands());
    if (hasArena) {
      // A record of the call's own: its arena goes with the call.
      Block *freeArena = invoke.addBlock();
      Block *next = invoke.addBlock();
      LLVM::CondBrOp::create(builder, loc, recordIsNull, freeArena, next);
      builder.setInsertionPointToStart(freeArena);
      LLVM::CallOp::create(
          builder, loc, free,
          ValueRange{LLVM::LoadOp::create(builder, loc, ptrType,
                                          atOffset(record, 0))});
      LLVM::BrOp::create(builder, loc, next);
      builder.setInsertionPointToStart(next);
    }
    if (hasPrepared) {
      Block *releaseNow = invoke.addBlock();
      Block *done = invoke.addBlock();
      LLVM::CondBrOp::create(builder, loc, isNull, releaseNow, done);
      builder.setInsertionPointToStart(releaseNow);
      LLVM::CallOp::create(builder, loc, release, ValueRange{state});
      LLVM::BrOp::create(builder, loc, done);
      builder.setInsertionPointToStart(done);
    }
    LLVM::ReturnOp::create(builder, loc, ValueRange());
  }

  // docs/abi.md: the object defines seqc_manifest and seqc_invoke. Every
  // other definition (the model function, its C interface, helpers) becomes
  // internal, so that a model linked into a host or a shared library exports
  // no generic name such as `forward`, and two models can share a process.
  for (auto function : module.getOps<LLVM::LLVMFuncOp>())
    if (function != invoke && function != prepare && function != release &&
        !function.isExternal()) {
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] internal linkage: @"
                              << function.getName() << "\n");
      function.setLinkage(LLVM::Linkage::Internal);
    }
}
