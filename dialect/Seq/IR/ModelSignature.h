//===- ModelSignature.h - IR conventions of a compiled model ----*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// A seqc model is a module of `seq` IR whose `func.func @forward` takes the
// model's inputs, then its parameters, and returns its outputs. Attributes on
// the module and on @forward name them and record what the function type
// cannot say: symbolic dimensions, value ranges, hyperparameters
// (docs/language.md, "IR conventions"). This header is the one owner of those
// conventions: the frontend writes the attributes under these names, and
// everything that reads them (the manifest and header of lowering/Entry/,
// `seqc --emit=manifest` and `--list-params`) reads them through
// readModelSignature and writes the manifest of docs/abi.md through
// toManifestJSON, so that the manifest a binary embeds and the one
// `--emit=manifest` prints are the same text.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_DIALECT_SEQ_IR_MODELSIGNATURE_H
#define SEQC_DIALECT_SEQ_IR_MODELSIGNATURE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace mlir::seq {

/// Module attribute: the model's name (StringAttr).
constexpr llvm::StringLiteral kModelNameAttr = "seq.model";
/// Module attribute: hyperparameter values (DictionaryAttr of integer, float,
/// bool and string attributes).
constexpr llvm::StringLiteral kHyperAttr = "seq.hyper";
/// The model function.
constexpr llvm::StringLiteral kModelFunctionName = "forward";
/// The version of the model ABI (docs/abi.md) the code seqc generates
/// follows, which every manifest states as "abi": 2 (a manifest without it
/// is version 1: the prepared state holds the arena).
constexpr int64_t kModelAbiVersion = 2;
/// Argument attribute of an input: its name (StringAttr). Every argument has
/// exactly one of `seq.input` and `seq.param`, and inputs come first.
constexpr llvm::StringLiteral kInputAttr = "seq.input";
/// Argument attribute of a parameter: its safetensors key (StringAttr).
constexpr llvm::StringLiteral kParamAttr = "seq.param";
/// Argument attribute of a state buffer: its name (StringAttr). State
/// arguments follow the parameters; the model updates them in place and the
/// runtime keeps them across calls (docs/abi.md).
constexpr llvm::StringLiteral kStateAttr = "seq.state";
/// Argument attribute of a state buffer written at positions given by an
/// input: a DictionaryAttr {input: StringAttr, count: IntegerAttr or the
/// StringAttr name of a symbolic dimension, axis: IntegerAttr}: each call
/// writes positions `input[r] .. input[r] + count - 1` of `axis` of batch
/// row r, which the runtime checks against the axis' size before the run.
constexpr llvm::StringLiteral kStateWriteAttr = "seq.state_write";
/// Argument attribute of a recurrent state buffer (a conv window, an SSM
/// state, linear attention's sums): a DictionaryAttr {input: StringAttr,
/// lengths: optional StringAttr}: batch row r starts from the zero state
/// when `input[r]` is 0 and continues the stored one otherwise, and the
/// state after the call is the one after the row's token `lengths[r] - 1`
/// (after its last token without `lengths`). Such a state cannot be
/// right-padded: a row's padding would enter its state unless `lengths`
/// says where the row ends.
constexpr llvm::StringLiteral kStateCarryAttr = "seq.state_carry";
/// Result attribute of an output: its name (StringAttr).
constexpr llvm::StringLiteral kOutputAttr = "seq.output";
/// Argument and result attribute: the declared shape, one entry per
/// dimension, an IntegerAttr for a static size or a StringAttr naming a
/// symbolic one. Required where the tensor type has dynamic sizes.
constexpr llvm::StringLiteral kDimsAttr = "seq.dims";
/// Argument attribute of an integer input: the inclusive value range
/// [lo, hi], each an IntegerAttr or the name of a symbolic dimension.
constexpr llvm::StringLiteral kRangeAttr = "seq.range";

/// Module attribute of a model partitioned for tensor parallelism
/// (seq-tensor-parallel): the number of ranks (IntegerAttr, at least 2).
/// The manifest records it as "tensor_parallel".
constexpr llvm::StringLiteral kTensorParallelAttr = "seq.tensor_parallel";
/// Module attribute of a model compiled for data parallelism (`seqc
/// --data-parallel`; UnitAttr): the model itself is unchanged, each MPI rank
/// runs it on a block of the batch. The manifest records it as
/// "data_parallel": true.
constexpr llvm::StringLiteral kDataParallelAttr = "seq.data_parallel";
/// Argument attribute of a parameter split across the ranks of a
/// tensor-parallel model: the axis (IntegerAttr) along which each rank holds
/// one contiguous slice; the argument's type is the slice's. The manifest
/// records it as "shard": {"axis": A} (docs/abi.md).
constexpr llvm::StringLiteral kShardAxisAttr = "seq.shard_axis";

/// Module attribute naming the model function, set by seq-build-manifest and
/// read by the passes after it (seq-emit-invoke, seq-hoist-preparation).
constexpr llvm::StringLiteral kEntryAttrName = "seqc.entry";
/// Module attributes set by seq-build-manifest when it moves the argument
/// attributes into the manifest: how many of the model function's arguments
/// are inputs and how many parameters (they follow the inputs). Arguments
/// after both are prepared values (seq-hoist-preparation, docs/abi.md).
constexpr llvm::StringLiteral kNumInputsAttr = "seqc.num_inputs";
constexpr llvm::StringLiteral kNumParamsAttr = "seqc.num_params";
/// Module attribute set by seq-build-manifest on a model with state: how
/// many state arguments follow the parameters (absent when none).
constexpr llvm::StringLiteral kNumStateAttr = "seqc.num_state";

/// The [begin, end) argument positions of the parameters of the model
/// function, from the attributes above; nullopt before seq-build-manifest.
inline std::optional<std::pair<unsigned, unsigned>>
getParamArgumentRange(Operation *module) {
  auto inputs = module->getAttrOfType<IntegerAttr>(kNumInputsAttr);
  auto params = module->getAttrOfType<IntegerAttr>(kNumParamsAttr);
  if (!inputs || !params)
    return std::nullopt;
  unsigned begin = inputs.getInt();
  return std::make_pair(begin, begin + unsigned(params.getInt()));
}

/// A static size or the name of a symbolic dimension.
using DimSpec = std::variant<int64_t, std::string>;

/// One input, output or parameter of a model.
struct TensorSpec {
  std::string name;
  /// Manifest spelling: f32, f64, f16, bf16, i32 or i64.
  std::string dtype;
  SmallVector<DimSpec> shape;
  /// Inputs only: the inclusive range of integer values.
  std::optional<std::pair<DimSpec, DimSpec>> range;
  /// Parameters of a tensor-parallel model only: the axis each rank holds a
  /// slice of (kShardAxisAttr); `shape` is then the slice's.
  std::optional<int64_t> shardAxis;
};

/// What a call writes into a state buffer (kStateWriteAttr): the input
/// giving each batch row's first written position, how many positions a
/// call writes, along which axis.
struct StateWrite {
  std::string input;
  DimSpec count;
  int64_t axis = 0;
};

/// How a call continues a recurrent state (kStateCarryAttr): the input of
/// positions whose zeros restart it, and the input of valid counts per row
/// (empty without one).
struct StateCarry {
  std::string input;
  std::string lengths;
};

/// Everything the manifest of docs/abi.md describes, in argument order.
struct ModelSignature {
  std::string model;
  SmallVector<TensorSpec> inputs;
  SmallVector<TensorSpec> outputs;
  /// Parameters have static shapes.
  SmallVector<TensorSpec> params;
  /// State buffers (kStateAttr), after the parameters, and what each call
  /// writes into each (parallel to `state`).
  SmallVector<TensorSpec> state;
  std::vector<std::optional<StateWrite>> stateWrites;
  std::vector<std::optional<StateCarry>> stateCarries;
  /// Hyperparameters by name (sorted); values are integer, float, bool or
  /// string attributes.
  SmallVector<std::pair<std::string, Attribute>> hyper;
  /// The number of ranks of a tensor-parallel model (kTensorParallelAttr);
  /// 1 otherwise.
  int64_t tensorParallel = 1;
  /// Whether the model runs data-parallel (kDataParallelAttr).
  bool dataParallel = false;
};

/// Returns the model function of `module`: `@forward` in a module carrying
/// `seq.model`. Emits an error on `module` when either is missing.
FailureOr<func::FuncOp> findModelFunction(ModuleOp module);

/// Reads the signature of `model` (a function found by findModelFunction)
/// from its type and attributes. Emits an error at the offending function,
/// argument or attribute when the attributes are missing or malformed,
/// disagree with the function type (an argument's rank or static sizes), use
/// an element type the runtime does not support, put an input after a
/// parameter, give a parameter a symbolic dimension or reuse a name.
FailureOr<ModelSignature> readModelSignature(func::FuncOp model);

/// findModelFunction, then readModelSignature of the function.
FailureOr<ModelSignature> readModelSignature(ModuleOp module);

/// The manifest of docs/abi.md as JSON text: keys sorted, indented by two
/// spaces, no trailing newline. `seqc_manifest` holds exactly this text.
/// A `target` other than "cpu" (the default, which has no key) is recorded
/// as the manifest's "target".
std::string toManifestJSON(const ModelSignature &signature,
                           llvm::StringRef target = "cpu");

/// The manifest of a model with several entries (`names[i]` compiled to
/// `signatures[i]`, the default entry first): the default entry's manifest,
/// whose "state" is the union of the entries' state in order of first use,
/// plus "entries": one {name, inputs, outputs, state} per entry, its state
/// in the order its function takes it. One entry gives toManifestJSON's
/// text of its signature.
std::string toManifestJSON(ArrayRef<std::string> names,
                           ArrayRef<const ModelSignature *> signatures,
                           llvm::StringRef target = "cpu");

/// `manifest` (toManifestJSON's text) with `"prepared_only": true` on the
/// parameters of `indices` (manifest order): the model's functions read
/// them only while preparing (seqc_prepare), never in seqc_invoke given a
/// prepared block (docs/abi.md). Returns `manifest` unchanged when
/// `indices` is empty, and an empty string when it is not a manifest or an
/// index is out of range. The optimizer decides which parameters these
/// are (seq-hoist-preparation), so the embedded manifest and `seqc
/// --emit=manifest` apply it alike, after the same passes.
std::string markPreparedOnlyParams(llvm::StringRef manifest,
                                   ArrayRef<int64_t> indices);

/// The JSON array of {name, shape, dtype} that `seqc --list-params --json`
/// prints.
llvm::json::Value toParamsJSON(const ModelSignature &signature);

} // namespace mlir::seq

#endif // SEQC_DIALECT_SEQ_IR_MODELSIGNATURE_H
