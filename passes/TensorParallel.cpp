//===- TensorParallel.cpp - Megatron-style partitioning of a model -------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// seq-tensor-parallel: the per-rank program of a model whose attention
// blocks are split by heads and whose MLPs are split column-then-row
// (Shoeybi et al., Megatron-LM). The unit is a *group*: a row-parallel
// projection (a `seq.linear` whose weight is split by columns) and the
// values that feed it split along one axis, back to the column-parallel
// projections that produce them from a replicated input:
//
//   x (replicated) --linear(W1 rows)--> h[.., hidden/N] --gelu--> ...
//                  --linear(W2 cols)--> partial y --all_reduce--> y (+ b2)
//
//   x --linear(Wq rows)--split_heads(H/N)--rope--\
//   x --linear(Wk rows)--split_heads--rope--cache_write(state)--attention
//   x --linear(Wv rows)--split_heads-------cache_write(state)--/   |
//     merge_heads --linear(Wo cols)--> partial y --all_reduce--> y
//
// A group is collected from its root backwards (collect), checked (every
// value and parameter of the group used only inside it, every split size
// divisible), then rewritten in place: the split arguments and the group's
// results take the slice's types, split_heads counts the rank's heads, and
// the root's partial sum is all-reduced. Values are split along static
// dimensions only (heads, widths), so no shape computation changes.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/IR/ModelSignature.h"
#include "dialect/Seq/IR/Quantization.h"
#include "dialect/Seq/IR/SeqOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQTENSORPARALLEL
#include "passes/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;
using namespace mlir::seq;

namespace {

/// The grid every collective of a tensor-parallel model runs on.
constexpr llvm::StringLiteral kGridName = "tensor_parallel";

/// One row-parallel projection and what feeds it split.
struct Group {
  LinearOp root;
  /// The ops whose results are split, in no particular order, and the axis
  /// each result is split along.
  llvm::SetVector<Operation *> ops;
  llvm::MapVector<Value, int64_t> splitValues;
  /// The function arguments (parameters, state) split, and their axes.
  llvm::MapVector<BlockArgument, int64_t> splitArgs;
};

/// Collects a group, or says why its root stays replicated. A hard error
/// (a size the rank count does not divide) is emitted at once and recorded
/// in `failedHard`.
class GroupCollector {
public:
  GroupCollector(func::FuncOp model, int64_t ranks)
      : model(model), ranks(ranks) {}

  /// The group of `root`, or failure with `why` set (and an error emitted
  /// when `failedHard`).
  FailureOr<Group> collect(LinearOp root) {
    Group group;
    group.root = root;
    current = &group;
    auto inputType = cast<RankedTensorType>(root.getInput().getType());
    int64_t last = inputType.getRank() - 1;
    if (failed(collectValue(root.getInput(), last)) ||
        failed(splitWeight(root.getWeight(), /*axis=*/1, root)) ||
        failed(checkUses()))
      return failure();
    return group;
  }

  std::string why;
  bool failedHard = false;

private:
  LogicalResult reject(const Twine &reason) {
    why = reason.str();
    return failure();
  }

  /// A hard error: the structure fits but the rank count does not divide
  /// `what`.
  LogicalResult indivisible(Operation *op, const Twine &what, int64_t size) {
    failedHard = true;
    op->emitError() << "--tensor-parallel=" << ranks << " does not divide "
                    << what << " (" << size << ")";
    return reject("indivisible");
  }

  /// The seq.param argument `value` is, or null.
  BlockArgument paramArgument(Value value) {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner()->getParentOp() != model.getOperation() ||
        !model.getArgAttr(arg.getArgNumber(), kParamAttr))
      return {};
    return arg;
  }

  LogicalResult splitArg(BlockArgument arg, int64_t axis, Operation *user,
                         const Twine &what) {
    auto type = cast<RankedTensorType>(arg.getType());
    if (type.isDynamicDim(axis))
      return reject(what + " has a dynamic size along the split axis");
    if (type.getDimSize(axis) % ranks != 0)
      return indivisible(user, what, type.getDimSize(axis));
    auto [it, inserted] = current->splitArgs.insert({arg, axis});
    if (!inserted && it->second != axis)
      return reject("a parameter is split along two axes");
    return success();
  }

  /// Splits the weight [out, in] of a projection by rows (axis 0) or
  /// columns (axis 1): a parameter, or a seq.dequantize of one in a block
  /// format (split along its blocks for columns).
  LogicalResult splitWeight(Value weight, int64_t axis, LinearOp user) {
    if (BlockArgument arg = paramArgument(weight))
      return splitArg(arg, axis, user,
                      axis == 0 ? "the output features of this projection"
                                : "the input features of this projection");
    auto dequantize = weight.getDefiningOp<DequantizeOp>();
    BlockArgument blocks =
        dequantize ? paramArgument(dequantize.getBlocks()) : BlockArgument();
    if (!blocks)
      return reject("its weight is not a parameter");
    // A split by columns must be one of whole blocks along the input
    // features: not int8's one block per row.
    std::optional<WeightFormatInfo> format =
        getWeightFormat(dequantize.getFormat());
    if (axis == 1 && (!format || format->isPerRow()))
      return reject("its weight's format '" + dequantize.getFormat() +
                    "' is not split along its input features");
    if (failed(splitArg(blocks, axis, user,
                        axis == 0 ? "the output features of this projection"
                                  : "the input blocks of 32 features of "
                                    "this projection")))
      return failure();
    current->ops.insert(dequantize);
    current->splitValues[dequantize.getResult()] = axis;
    return success();
  }

  LogicalResult splitOptional(Value bias, Operation *user) {
    if (!bias)
      return success();
    BlockArgument arg = paramArgument(bias);
    if (!arg)
      return reject("a bias is not a parameter");
    return splitArg(arg, 0, user, "the output features of this projection");
  }

  /// Makes `value` computed split along `axis` on every rank.
  LogicalResult collectValue(Value value, int64_t axis) {
    auto found = current->splitValues.find(value);
    if (found != current->splitValues.end())
      return found->second == axis
                 ? success()
                 : reject("a value is needed split along two axes");
    Operation *op = value.getDefiningOp();
    if (!op)
      return reject("a split value is a function argument");
    auto type = cast<RankedTensorType>(value.getType());
    if (type.isDynamicDim(axis))
      return reject("the split axis of a '" +
                    op->getName().getStringRef() + "' result is dynamic");
    LogicalResult result =
        TypeSwitch<Operation *, LogicalResult>(op)
            .Case([&](LinearOp linear) -> LogicalResult {
              // Column-parallel: the input stays replicated.
              if (axis != type.getRank() - 1)
                return reject("a projection's result is split along a "
                              "batch axis");
              if (failed(splitWeight(linear.getWeight(), 0, linear)))
                return failure();
              return splitOptional(linear.getBias(), linear);
            })
            .Case<GeluOp, SiluOp, ReluOp, SigmoidOp, TanhOp, EluOp, SoftplusOp,
                  NegOp, CastOp, DropoutOp>([&](Operation *unary) {
              return collectValue(unary->getOperand(0), axis);
            })
            .Case<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp>(
                [&](Operation *binary) -> LogicalResult {
                  // Both sides split alike: SwiGLU's product.
                  for (Value operand : binary->getOperands())
                    if (operand.getType() != value.getType())
                      return reject("an elementwise '" +
                                    binary->getName().getStringRef() +
                                    "' broadcasts an operand");
                  for (Value operand : binary->getOperands())
                    if (failed(collectValue(operand, axis)))
                      return failure();
                  return success();
                })
            .Case([&](MergeHeadsOp merge) -> LogicalResult {
              if (axis != type.getRank() - 1)
                return reject("merged heads split along a batch axis");
              return collectValue(merge.getInput(), 1);
            })
            .Case([&](SplitHeadsOp split) -> LogicalResult {
              if (axis != 1)
                return reject("split heads along an axis other than the "
                              "heads");
              if (split.getHeads() % ranks != 0)
                return indivisible(split, "the heads of this projection",
                                   split.getHeads());
              auto inputType = cast<RankedTensorType>(
                  split.getInput().getType());
              return collectValue(split.getInput(), inputType.getRank() - 1);
            })
            .Case([&](RopeOp rope) -> LogicalResult {
              // The rotation depends on positions and features, never on
              // the head.
              if (axis != 1)
                return reject("RoPE split along an axis other than the heads");
              return collectValue(rope.getInput(), 1);
            })
            .Case([&](CacheWriteOp write) -> LogicalResult {
              auto cache = dyn_cast<BlockArgument>(write.getCache());
              if (axis != 1 || !cache ||
                  !model.getArgAttr(cache.getArgNumber(), kStateAttr))
                return reject("a KV cache that is not a state argument");
              if (failed(splitArg(cache, 1, write,
                                  "the key/value heads of this cache")))
                return failure();
              return collectValue(write.getValues(), 1);
            })
            .Case([&](AttentionOp attention) -> LogicalResult {
              if (axis != 1)
                return reject("attention split along an axis other than the "
                              "heads");
              // ALiBi's slopes and a score bias depend on the head index.
              if (attention.getAlibi() || attention.getBias())
                return reject("attention with ALiBi slopes or a score bias "
                              "(per-head terms)");
              auto key = cast<RankedTensorType>(attention.getKey().getType());
              if (key.isDynamicDim(1) || key.getDimSize(1) % ranks != 0)
                return indivisible(attention,
                                   "the key/value heads of this attention",
                                   key.getDimSize(1));
              for (Value operand : {attention.getQuery(), attention.getKey(),
                                    attention.getValue()})
                if (failed(collectValue(operand, 1)))
                  return failure();
              return success();
            })
            .Default([&](Operation *other) {
              return reject("its input reaches '" +
                            other->getName().getStringRef() +
                            "', which does not split");
            });
    if (failed(result))
      return failure();
    if (type.getDimSize(axis) % ranks != 0)
      return indivisible(op, "the split axis of this value",
                         type.getDimSize(axis));
    current->ops.insert(op);
    current->splitValues[value] = axis;
    return success();
  }

  /// Every split value and argument is used inside the group only: a use
  /// outside would need the whole tensor.
  LogicalResult checkUses() {
    auto inside = [&](Operation *user) {
      return user == current->root.getOperation() ||
             current->ops.contains(user);
    };
    for (auto &[value, axis] : current->splitValues)
      if (!llvm::all_of(value.getUsers(), inside))
        return reject("a '" + value.getDefiningOp()->getName().getStringRef() +
                      "' result it needs split is also used elsewhere");
    for (auto &[arg, axis] : current->splitArgs)
      if (!llvm::all_of(arg.getUsers(), inside))
        return reject("a parameter or state it splits is also read "
                      "elsewhere");
    // A column-parallel projection reads its input whole: an input the
    // group computes split would be read as if it were.
    for (Operation *op : current->ops)
      if (auto linear = dyn_cast<LinearOp>(op);
          linear && current->splitValues.contains(linear.getInput()))
        return reject("a projection it splits by rows reads a value it "
                      "splits");
    return success();
  }

  func::FuncOp model;
  int64_t ranks;
  Group *current = nullptr;
};

/// `type` with dimension `axis` divided by `ranks`.
RankedTensorType splitType(Type type, int64_t axis, int64_t ranks) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[axis] /= ranks;
  return tensor.clone(shape);
}

/// The name of the parameter `value` is (directly or through a
/// seq.dequantize), or "".
StringRef paramName(func::FuncOp model, Value value) {
  if (auto dequantize = value.getDefiningOp<DequantizeOp>())
    value = dequantize.getBlocks();
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getOwner()->getParentOp() != model.getOperation())
    return "";
  auto name = model.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kParamAttr);
  return name ? name.getValue() : "";
}

/// Gives argument `arg` of `model` the type of its slice along `axis` and
/// the attribute that tells the manifest (and a state's declared shape).
void splitArgument(func::FuncOp model, BlockArgument arg, int64_t axis,
                   int64_t ranks) {
  MLIRContext *context = model.getContext();
  arg.setType(splitType(arg.getType(), axis, ranks));
  model.setArgAttr(arg.getArgNumber(), kShardAxisAttr,
                   IntegerAttr::get(IntegerType::get(context, 64), axis));
  if (auto dims =
          model.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), kDimsAttr)) {
    SmallVector<Attribute> updated(dims.getValue());
    if (auto size = dyn_cast<IntegerAttr>(updated[axis]))
      updated[axis] = IntegerAttr::get(size.getType(), size.getInt() / ranks);
    model.setArgAttr(arg.getArgNumber(), kDimsAttr,
                     ArrayAttr::get(context, updated));
  }
}

/// Rewrites `group` into the rank's program.
void partition(func::FuncOp model, Group &group, int64_t ranks,
               bool remarks) {
  for (auto &[arg, axis] : group.splitArgs)
    splitArgument(model, arg, axis, ranks);
  for (auto &[value, axis] : group.splitValues)
    value.setType(splitType(value.getType(), axis, ranks));
  for (Operation *op : group.ops)
    if (auto split = dyn_cast<SplitHeadsOp>(op))
      split.setHeads(split.getHeads() / ranks);

  // The root's partial sums, summed over the ranks, then its bias once.
  LinearOp root = group.root;
  OpBuilder builder(root);
  Location loc = root.getLoc();
  auto partial = LinearOp::create(builder, loc, root.getType(),
                                  root.getInput(), root.getWeight(), Value());
  Value sum = shard::AllReduceOp::create(
      builder, loc, root.getType(), kGridName, ArrayRef<int16_t>{0}, partial,
      shard::ReductionKind::Sum);
  if (Value bias = root.getBias())
    sum = AddOp::create(builder, loc, root.getType(), sum, bias);
  root.replaceAllUsesWith(sum);

  if (remarks) {
    StringRef rootWeight = paramName(model, root.getWeight());
    SmallVector<std::string> feeding;
    for (auto &[arg, axis] : group.splitArgs) {
      unsigned index = arg.getArgNumber();
      auto name = model.getArgAttrOfType<StringAttr>(index, kParamAttr);
      if (!name)
        name = model.getArgAttrOfType<StringAttr>(index, kStateAttr);
      if (name.getValue() != rootWeight)
        feeding.push_back("'" + name.getValue().str() + "' (axis " +
                          std::to_string(axis) + ")");
    }
    auto type = cast<RankedTensorType>(root.getType());
    root.emitRemark() << "tensor-parallel over " << ranks
                      << " ranks: row-parallel projection '" << rootWeight
                      << "' after " << llvm::join(feeding, ", ")
                      << "; all-reduce (sum) of " << type << ", "
                      << type.getDimSize(type.getRank() - 1) *
                             (type.getElementTypeBitWidth() / 8)
                      << " bytes per token";
  }
  root.erase();
}

struct SeqTensorParallelPass
    : public seq::impl::SeqTensorParallelBase<SeqTensorParallelPass> {
  using SeqTensorParallelBase::SeqTensorParallelBase;

  /// Splits `linear`, whose result is returned by the model function
  /// alone, by output features when its weight and bias are parameters
  /// read by it alone: each rank computes its slice of the outputs, which
  /// a shard.all_gather along the last axis assembles. Returns the remark,
  /// or failure with `whyNot` set.
  FailureOr<std::string> splitOutput(func::FuncOp model, LinearOp linear) {
    auto fail = [&](const Twine &reason) -> FailureOr<std::string> {
      whyNot = reason.str();
      return failure();
    };
    if (!linear->hasOneUse() ||
        !isa<func::ReturnOp>(*linear->getUsers().begin()))
      return fail("not vocabulary-parallel: its result is not only a model "
                  "output");
    Value weight = linear.getWeight();
    auto dequantize = weight.getDefiningOp<DequantizeOp>();
    Value stored = dequantize ? dequantize.getBlocks() : weight;
    auto weightArg = dyn_cast<BlockArgument>(stored);
    auto biasArg = dyn_cast_if_present<BlockArgument>(linear.getBias());
    if (!weightArg || paramName(model, weight).empty() ||
        (linear.getBias() && !biasArg))
      return fail("not vocabulary-parallel: its weight or bias is not a "
                  "parameter");
    if (!weightArg.hasOneUse() || (dequantize && !dequantize->hasOneUse()) ||
        (biasArg && !biasArg.hasOneUse()))
      return fail("not vocabulary-parallel: its weight is also read "
                  "elsewhere (a tied embedding)");
    auto type = cast<RankedTensorType>(linear.getType());
    int64_t last = type.getRank() - 1;
    if (type.isDynamicDim(last) || type.getDimSize(last) % ranks != 0)
      return fail("not vocabulary-parallel: --tensor-parallel=" +
                  Twine(int64_t(ranks)) + " does not divide its " +
                  Twine(type.getDimSize(last)) + " outputs");

    for (BlockArgument arg : {weightArg, biasArg})
      if (arg)
        splitArgument(model, arg, /*axis=*/0, ranks);
    if (dequantize)
      dequantize.getResult().setType(
          splitType(dequantize.getType(), 0, ranks));
    linear.getResult().setType(splitType(type, last, ranks));
    OpBuilder builder(model.getContext());
    builder.setInsertionPointAfter(linear);
    auto gathered = shard::AllGatherOp::create(
        builder, linear.getLoc(), type, kGridName, ArrayRef<int16_t>{0},
        linear.getResult(), APInt(64, last));
    linear.getResult().replaceAllUsesExcept(gathered, gathered);

    std::string remark;
    llvm::raw_string_ostream os(remark);
    os << "tensor-parallel over " << int64_t(ranks)
       << " ranks: vocabulary-parallel projection '"
       << paramName(model, weight) << "' (axis 0); all-gather of '" << type
       << "', " << type.getDimSize(last) * (type.getElementTypeBitWidth() / 8)
       << " bytes per token";
    return remark;
  }

  std::string whyNot;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Partitioned already (seqc partitions the entries before lowering
    // them with the same pipeline).
    if (auto done = module->getAttrOfType<IntegerAttr>(kTensorParallelAttr)) {
      if (done.getInt() != ranks) {
        module.emitError() << "the module is partitioned for "
                           << done.getInt() << " ranks, not "
                           << int64_t(ranks);
        return signalPassFailure();
      }
      return;
    }
    if (ranks < 2) {
      module.emitError() << "seq-tensor-parallel needs at least 2 ranks, not "
                         << int64_t(ranks);
      return signalPassFailure();
    }
    FailureOr<func::FuncOp> found = findModelFunction(module);
    if (failed(found))
      return signalPassFailure();
    func::FuncOp model = *found;
    MLIRContext *context = &getContext();

    // Roots last to first: a root's column-parallel partners come before
    // it, and must not be taken for roots of their own.
    SmallVector<LinearOp> linears;
    model.walk([&](LinearOp linear) { linears.push_back(linear); });
    llvm::DenseSet<Operation *> grouped;
    GroupCollector collector(model, ranks);
    unsigned groups = 0;
    SmallVector<std::pair<LinearOp, std::string>> replicated;
    for (LinearOp linear : llvm::reverse(linears)) {
      if (grouped.contains(linear))
        continue;
      FailureOr<Group> group = collector.collect(linear);
      if (collector.failedHard)
        return signalPassFailure();
      if (failed(group)) {
        replicated.push_back({linear, "it is not row-parallel: " +
                                          collector.why});
        continue;
      }
      grouped.insert(group->ops.begin(), group->ops.end());
      partition(model, *group, ranks, remarks);
      ++groups;
    }

    // Projections whose result is a model output (the LM head's logits):
    // split by rows (the vocabulary), their slices all-gathered.
    unsigned gathers = 0;
    for (auto &[linear, why] : replicated) {
      FailureOr<std::string> split = splitOutput(model, linear);
      if (failed(split)) {
        if (remarks && !paramName(model, linear.getWeight()).empty())
          linear.emitRemark() << "replicated on every rank: projection '"
                              << paramName(model, linear.getWeight())
                              << "' (" << why << "; " << whyNot << ")";
        continue;
      }
      ++gathers;
      if (remarks)
        linear.emitRemark() << *split;
    }

    model.setType(FunctionType::get(context,
                                    model.getBody().getArgumentTypes(),
                                    model.getFunctionType().getResults()));
    module->setAttr(kTensorParallelAttr,
                    IntegerAttr::get(IntegerType::get(context, 64), ranks));
    OpBuilder builder(module.getBodyRegion());
    builder.setInsertionPointToStart(module.getBody());
    shard::GridOp::create(builder, module.getLoc(), kGridName,
                          ArrayRef<int64_t>{ranks});

    if (remarks) {
      SmallVector<std::string> replicated;
      int64_t splitBytes = 0, replicatedBytes = 0;
      for (unsigned i = 0, e = model.getNumArguments(); i < e; ++i) {
        auto name = model.getArgAttrOfType<StringAttr>(i, kParamAttr);
        if (!name)
          continue;
        auto type = cast<RankedTensorType>(model.getArgument(i).getType());
        int64_t bytes =
            type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
        if (model.getArgAttr(i, kShardAxisAttr)) {
          splitBytes += bytes;
          continue;
        }
        replicatedBytes += bytes;
        replicated.push_back("'" + name.getValue().str() + "'");
      }
      InFlightDiagnostic remark = model.emitRemark();
      remark << "tensor-parallel over " << int64_t(ranks) << " ranks: "
             << groups << " all-reduce" << (groups == 1 ? "" : "s")
             << " and " << gathers << " all-gather"
             << (gathers == 1 ? "" : "s") << " per call; each rank holds " << splitBytes
             << " bytes of split parameters and " << replicatedBytes
             << " bytes replicated";
      if (!replicated.empty())
        remark << " (" << llvm::join(replicated, ", ") << ")";
    }
  }
};

} // namespace
