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
//===----------------------------------------------------------------------===//

#include "lowering/Entry/Entry.h"
#include "lowering/Common/Attributes.h"

#include "dialect/Seq/IR/ModelSignature.h"

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

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQPLANMEMORY
#include "lowering/Entry/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;
using namespace mlir::seq;

namespace {

/// One buffer of the plan.
struct PlannedBuffer {
  memref::AllocOp alloc;
  /// Every value that views the buffer (the alloc's result included).
  llvm::SetVector<Value> aliases;
  /// First and last top-level op touching its data.
  unsigned start = 0, end = 0;
  /// Bytes, rounded up to the alignment, when static.
  std::optional<int64_t> staticBytes;
  /// Placement: a static offset, or the buffers below it (their indices in
  /// the plan) whose ends bound it.
  std::optional<int64_t> staticOffset;
  SmallVector<unsigned> below;

  bool interferes(const PlannedBuffer &other) const {
    return start <= other.end && other.start <= end;
  }
};

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

namespace {

struct SeqPlanMemoryPass
    : public mlir::seq::impl::SeqPlanMemoryBase<SeqPlanMemoryPass> {
  using Base::Base;
  void runOnOperation() override;

  /// Collects the views of `alloc` into `buffer` and its live interval;
  /// fails when the buffer escapes (is returned, yielded, passed to a call
  /// or to an op that makes a non-view memref of it).
  LogicalResult analyze(PlannedBuffer &buffer, Block &body,
                        DenseMap<Operation *, unsigned> &order);
};

/// Ops whose memref results view their memref operand.
static bool isViewOf(Operation *op) {
  return isa<ViewLikeOpInterface, memref::CastOp, memref::ReinterpretCastOp,
             memref::ExpandShapeOp, memref::CollapseShapeOp, memref::SubViewOp,
             memref::ViewOp, memref::TransposeOp,
             memref::ExtractStridedMetadataOp>(op);
}

/// Whether `op` calls a function marked `seqc.kernel`, which uses its
/// memref arguments only during the call.
static bool isKernelCall(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (!call)
    return false;
  auto callee =
      SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(op, call.getCalleeAttr());
  return callee && callee->hasAttr(kKernelAttrName);
}

/// Ops that read only the metadata of a memref, not its data.
static bool isMetadataOnly(Operation *op) {
  return isa<memref::DimOp, memref::ExtractStridedMetadataOp>(op) ||
         isViewOf(op);
}

} // namespace

LogicalResult
SeqPlanMemoryPass::analyze(PlannedBuffer &buffer, Block &body,
                           DenseMap<Operation *, unsigned> &order) {
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
      // does taking its address as an integer. Calls of outlined kernels
      // (seq-cpu-outline-kernels) use their buffers only while they run.
      if (user->hasTrait<OpTrait::IsTerminator>() ||
          (isa<CallOpInterface>(user) && !isKernelCall(user)) ||
          isa<memref::ExtractAlignedPointerAsIndexOp>(user))
        return failure();
      bool makesMemref = llvm::any_of(user->getResultTypes(), [](Type t) {
        return isa<BaseMemRefType>(t);
      });
      if (makesMemref) {
        if (!isViewOf(user))
          return failure();
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()))
            buffer.aliases.insert(result);
      }
      if (isMetadataOnly(user))
        continue;
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top)
        return failure();
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

void SeqPlanMemoryPass::runOnOperation() {
  ModuleOp module = getOperation();
  llvm::StringMap<int64_t> dimValues;
  for (StringRef binding : dims) {
    auto [name, text] = binding.split('=');
    int64_t value;
    if (text.getAsInteger(10, value)) {
      module.emitError() << "expected a symbolic size as name=value in the "
                            "memory plan's dims, got '"
                         << binding << "'";
      return signalPassFailure();
    }
    dimValues[name] = value;
  }
  auto entry = module->getAttrOfType<FlatSymbolRefAttr>(kEntryAttrName);
  if (!entry)
    return;
  auto function = module.lookupSymbol<func::FuncOp>(entry.getValue());
  if (!function || function.isExternal() ||
      !llvm::hasSingleElement(function.getBody()))
    return;
  if (module.lookupSymbol(kArenaBytesFunctionName)) {
    module.emitError() << "the symbol '" << kArenaBytesFunctionName
                       << "' is reserved for the memory plan";
    return signalPassFailure();
  }
  Block &body = function.getBody().front();
  DenseMap<Operation *, unsigned> order;
  for (Operation &op : body)
    order[&op] = order.size();

  // The candidates: top-level allocations of identity-layout memrefs of
  // scalars, whose alignment the arena's satisfies and whose sizes can be
  // computed at the entry.
  EntryMaterializer materializer(function);
  SmallVector<PlannedBuffer> buffers;
  unsigned skipped = 0;
  for (auto alloc : body.getOps<memref::AllocOp>()) {
    MemRefType type = alloc.getType();
    Type element = type.getElementType();
    bool plannable = type.getLayout().isIdentity() && !type.getMemorySpace() &&
                     alloc.getSymbolOperands().empty() &&
                     element.isIntOrFloat() &&
                     element.getIntOrFloatBitWidth() % 8 == 0 &&
                     (!alloc.getAlignment() ||
                      int64_t(*alloc.getAlignment()) <= alignment) &&
                     llvm::all_of(alloc.getDynamicSizes(), [&](Value size) {
                       return materializer.canMaterialize(size);
                     });
    PlannedBuffer buffer;
    buffer.alloc = alloc;
    if (!plannable || failed(analyze(buffer, body, order))) {
      ++skipped;
      continue;
    }
    if (type.hasStaticShape())
      buffer.staticBytes = llvm::alignTo(
          type.getNumElements() * (element.getIntOrFloatBitWidth() / 8),
          alignment);
    buffers.push_back(std::move(buffer));
  }
  if (buffers.empty())
    return;

  // Placement order: buffers of dynamic size first (in program order: they
  // usually scale together, and the stack-like layout reuses the space of
  // the dead), then static ones from the largest. Each goes as low as the
  // buffers placed before that it interferes with allow: into the lowest
  // gap when all of those are static, above their highest end otherwise.
  SmallVector<unsigned> placement(buffers.size());
  for (unsigned i = 0; i < buffers.size(); ++i)
    placement[i] = i;
  llvm::sort(placement, [&](unsigned a, unsigned b) {
    const PlannedBuffer &x = buffers[a], &y = buffers[b];
    if (x.staticBytes.has_value() != y.staticBytes.has_value())
      return !x.staticBytes.has_value();
    if (!x.staticBytes)
      return std::make_pair(x.start, a) < std::make_pair(y.start, b);
    return std::make_pair(-*x.staticBytes, a) <
           std::make_pair(-*y.staticBytes, b);
  });
  SmallVector<unsigned> placed;
  for (unsigned i : placement) {
    PlannedBuffer &buffer = buffers[i];
    SmallVector<unsigned> conflicts;
    for (unsigned j : placed)
      if (buffers[j].interferes(buffer))
        conflicts.push_back(j);
    placed.push_back(i);
    bool allStatic =
        buffer.staticBytes && llvm::all_of(conflicts, [&](unsigned j) {
          return buffers[j].staticBytes && buffers[j].staticOffset;
        });
    if (!allStatic) {
      buffer.below = conflicts;
      if (conflicts.empty())
        buffer.staticOffset = 0;
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
  }

  // Builds the sizes, offsets and the total of the plan with `builder`,
  // the model function's arguments mapped through `mapping`.
  // `rawSizes` gets the dynamic sizes before rounding (for the report).
  auto buildPlan = [&](OpBuilder &builder, IRMapping &mapping,
                       SmallVectorImpl<Value> &sizes,
                       SmallVectorImpl<Value> &offsets,
                       SmallVectorImpl<Value> &rawSizes) -> Value {
    Location loc = function.getLoc();
    auto constant = [&](int64_t c) -> Value {
      return arith::ConstantIndexOp::create(builder, loc, c);
    };
    for (PlannedBuffer &buffer : buffers) {
      if (buffer.staticBytes) {
        sizes.push_back(constant(*buffer.staticBytes));
        rawSizes.push_back(sizes.back());
        continue;
      }
      MemRefType type = buffer.alloc.getType();
      int64_t staticPart = type.getElementTypeBitWidth() / 8;
      for (int64_t d : type.getShape())
        if (!ShapedType::isDynamic(d))
          staticPart *= d;
      Value bytes = constant(staticPart);
      for (Value size : buffer.alloc.getDynamicSizes())
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
    for (unsigned i : placement) {
      PlannedBuffer &buffer = buffers[i];
      if (buffer.staticOffset) {
        offsets[i] = constant(*buffer.staticOffset);
        continue;
      }
      Value offset;
      for (unsigned j : buffer.below) {
        Value end =
            builder.createOrFold<arith::AddIOp>(loc, offsets[j], sizes[j]);
        offset = offset ? builder.createOrFold<arith::MaxUIOp>(loc, offset, end)
                        : end;
      }
      offsets[i] = offset;
    }
    Value total;
    for (unsigned i = 0; i < buffers.size(); ++i) {
      Value end =
          builder.createOrFold<arith::AddIOp>(loc, offsets[i], sizes[i]);
      total =
          total ? builder.createOrFold<arith::MaxUIOp>(loc, total, end) : end;
    }
    return total;
  };

  // The arena: the model function's last argument.
  MLIRContext *context = &getContext();
  auto arenaType =
      MemRefType::get({ShapedType::kDynamic}, IntegerType::get(context, 8));
  unsigned arenaIndex = function.getNumArguments();
  if (failed(function.insertArgument(arenaIndex, arenaType, {},
                                     function.getLoc())))
    return signalPassFailure();
  Value arena = function.getArgument(arenaIndex);

  // @__seqc_arena_bytes(the model's arguments but the arena) -> index.
  OpBuilder moduleBuilder(function);
  SmallVector<Type> argTypes(function.getArgumentTypes().drop_back());
  auto bytesFunction = func::FuncOp::create(
      moduleBuilder, function.getLoc(), kArenaBytesFunctionName,
      FunctionType::get(context, argTypes, {IndexType::get(context)}));
  bytesFunction->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                         UnitAttr::get(context));
  {
    Block *bytesBody = bytesFunction.addEntryBlock();
    OpBuilder builder = OpBuilder::atBlockEnd(bytesBody);
    IRMapping mapping;
    for (unsigned k = 0; k < argTypes.size(); ++k)
      mapping.map(function.getArgument(k), bytesBody->getArgument(k));
    SmallVector<Value> sizes, offsets, rawSizes;
    Value total = buildPlan(builder, mapping, sizes, offsets, rawSizes);
    func::ReturnOp::create(builder, function.getLoc(), total);
  }

  // In the model function: the same plan at the entry, and a view of the
  // arena for each buffer.
  OpBuilder builder = OpBuilder::atBlockBegin(&body);
  IRMapping mapping;
  for (BlockArgument arg : function.getArguments())
    mapping.map(arg, arg);
  SmallVector<Value> sizes, offsets, rawSizes;
  buildPlan(builder, mapping, sizes, offsets, rawSizes);

  SmallVector<SmallVector<std::string>> dimNames = inputDimNames(module);
  DenseMap<Value, int64_t> known;
  std::optional<int64_t> evaluatedPeak = 0, evaluatedSum = 0;
  int64_t staticPeak = 0, staticSum = 0;
  bool allStatic = true;
  std::string report;
  llvm::raw_string_ostream os(report);
  os << "memory plan of @" << function.getName() << ": " << buffers.size()
     << " buffers in one arena, " << skipped << " allocations not planned\n";
  for (auto [i, buffer] : llvm::enumerate(buffers)) {
    std::optional<int64_t> offset = getConstantIntValue(offsets[i]);
    if (buffer.staticBytes && offset) {
      staticPeak = std::max(staticPeak, *offset + *buffer.staticBytes);
      staticSum += *buffer.staticBytes;
    } else {
      allStatic = false;
    }
    os << "  buffer " << i << ": " << buffer.alloc.getType() << " at "
       << buffer.alloc.getLoc() << ", bytes "
       << (buffer.staticBytes ? std::to_string(*buffer.staticBytes)
                              : describeSize(rawSizes[i], function, dimNames))
       << ", offset ";
    if (offset)
      os << *offset;
    else {
      os << "above buffers";
      for (unsigned j : buffers[i].below)
        os << " " << j;
    }
    os << ", live [" << buffer.start << ", " << buffer.end << "]";
    std::optional<int64_t> bytes =
        evaluateSize(sizes[i], dimValues, dimNames, known);
    std::optional<int64_t> at =
        evaluateSize(offsets[i], dimValues, dimNames, known);
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
  if (allStatic)
    os << "  peak " << staticPeak << " bytes (" << staticSum
       << " without reuse)\n";
  else if (evaluatedPeak && !dims.empty())
    os << "  peak at " << llvm::join(dims, ", ") << ": " << *evaluatedPeak
       << " bytes (" << *evaluatedSum << " without reuse)\n";
  else
    os << "  peak: dynamic (a function of the input sizes; give them to "
          "evaluate it)\n";
  module->setAttr(kMemoryPlanAttr, StringAttr::get(context, report));
  module->setAttr(kArenaAttr,
                  IntegerAttr::get(IntegerType::get(context, 64), alignment));
  if (remarks) {
    InFlightDiagnostic remark = function.emitRemark()
                                << "memory plan: " << buffers.size()
                                << " buffers in one arena";
    if (allStatic)
      remark << " of " << staticPeak << " bytes (" << staticSum
             << " without reuse)";
    else if (evaluatedPeak && !dims.empty())
      remark << " of " << *evaluatedPeak << " bytes at "
             << llvm::join(dims, ", ") << " (" << *evaluatedSum
             << " without reuse)";
    else
      remark << " of a size computed from the input sizes at each call";
    if (skipped)
      remark << "; " << skipped << " allocations stay on the heap";
  }

  for (auto [i, buffer] : llvm::enumerate(buffers)) {
    memref::AllocOp alloc = buffer.alloc;
    builder.setInsertionPoint(alloc);
    Value view =
        memref::ViewOp::create(builder, alloc.getLoc(), alloc.getType(), arena,
                               offsets[i], alloc.getDynamicSizes());
    for (Value alias : buffer.aliases)
      for (Operation *user : llvm::make_early_inc_range(alias.getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
    alloc.replaceAllUsesWith(view);
    alloc.erase();
  }
}
