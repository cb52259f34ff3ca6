//===- ModelSignature.h - IR conventions of a compiled model ----*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// MLIRGen records what the model manifest (docs/abi.md) needs as attributes
// on the module and on `func.func @forward` (docs/language.md, "IR
// conventions"). This header names those attributes and reads them back, for
// the driver (`--list-params`, `--emit=manifest`) and any later stage that
// writes the manifest.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_FRONTEND_MODELSIGNATURE_H
#define SEQC_FRONTEND_MODELSIGNATURE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace mlir::seq {

/// Module attribute: the model's name (StringAttr).
constexpr llvm::StringLiteral kModelNameAttr = "seq.model";
/// Module attribute: hyperparameter values (DictionaryAttr of i64, f64, bool
/// and string attributes).
constexpr llvm::StringLiteral kHyperAttr = "seq.hyper";
/// The model's entry function.
constexpr llvm::StringLiteral kEntryFunctionName = "forward";
/// Argument attribute of an input: its name (StringAttr).
constexpr llvm::StringLiteral kInputAttr = "seq.input";
/// Argument attribute of a parameter: its safetensors key (StringAttr).
constexpr llvm::StringLiteral kParamAttr = "seq.param";
/// Result attribute of an output: its name (StringAttr).
constexpr llvm::StringLiteral kOutputAttr = "seq.output";
/// Argument and result attribute of inputs and outputs: the declared shape,
/// an ArrayAttr of i64 (static) and string (symbolic) entries.
constexpr llvm::StringLiteral kDimsAttr = "seq.dims";
/// Argument attribute of an integer input: the inclusive value range
/// [lo, hi], each an i64 or the name of a symbolic dimension.
constexpr llvm::StringLiteral kRangeAttr = "seq.range";

/// A static size or the name of a symbolic dimension.
using DimSpec = std::variant<int64_t, std::string>;

/// One input, output or parameter of a model.
struct TensorSpec {
  std::string name;
  /// `f32`, `i32`, ... as in docs/abi.md.
  std::string dtype;
  std::vector<DimSpec> shape;
  /// Inputs only: the inclusive range of integer values.
  std::optional<std::pair<DimSpec, DimSpec>> range;
};

/// Everything the manifest describes.
struct ModelSignature {
  std::string model;
  std::vector<TensorSpec> inputs, outputs, params;
  /// Hyperparameters by name (sorted), as JSON values.
  std::vector<std::pair<std::string, llvm::json::Value>> hyper;
};

/// Reads the signature of the model in `module`; reports an error at the
/// offending op and fails when the conventions are not followed.
FailureOr<ModelSignature> readModelSignature(ModuleOp module);

/// The manifest of docs/abi.md.
llvm::json::Value toManifestJSON(const ModelSignature &signature);
/// The JSON array of {name, shape, dtype} that `seqc --list-params --json`
/// prints.
llvm::json::Value toParamsJSON(const ModelSignature &signature);

} // namespace mlir::seq

#endif // SEQC_FRONTEND_MODELSIGNATURE_H
