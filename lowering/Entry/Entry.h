//===- Entry.h - model manifest and ABI entry points ------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// What a compiled model exports besides its code (docs/abi.md): the JSON
// manifest `seqc_manifest`, the packed entry point `seqc_invoke`, and, for
// shared libraries, a C header documenting both. The manifest is read from
// the attributes the frontend puts on the model function and module
// (docs/language.md, "IR conventions").
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_ENTRY_ENTRY_H
#define SEQC_LOWERING_ENTRY_ENTRY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <variant>

namespace mlir {
namespace seq {

#define GEN_PASS_DECL
#include "lowering/Entry/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lowering/Entry/Passes.h.inc"

/// The symbols of docs/abi.md.
constexpr llvm::StringLiteral kManifestSymbol = "seqc_manifest";
constexpr llvm::StringLiteral kInvokeSymbol = "seqc_invoke";
/// Module attribute naming the model function, set by seq-build-manifest and
/// read by seq-emit-invoke.
constexpr llvm::StringLiteral kEntryAttrName = "seqc.entry";

/// One dimension of a manifest shape: a static size or a symbol name.
using ManifestDim = std::variant<int64_t, std::string>;

/// An input, output or parameter of the model.
struct ManifestValue {
  std::string name;
  /// Manifest spelling: f32, f64, f16, bf16, i32 or i64.
  std::string dtype;
  SmallVector<ManifestDim> shape;
  /// Inclusive value range of an integer input ([lo, hi]), if declared.
  std::optional<std::pair<ManifestDim, ManifestDim>> range;
};

/// Everything docs/abi.md's manifest holds, in manifest order.
struct ModelManifest {
  std::string model;
  SmallVector<ManifestValue> inputs;
  SmallVector<ManifestValue> outputs;
  SmallVector<ManifestValue> params;
  /// Hyperparameters in the order the frontend recorded them; values are
  /// integer, float, bool or string attributes.
  SmallVector<std::pair<std::string, Attribute>> hyper;
};

/// Returns the model function of `module`: `@forward` in a module carrying
/// the frontend's `seq.model` attribute. Emits an error on `module` when
/// either is missing.
FailureOr<func::FuncOp> findModelFunction(ModuleOp module);

/// Reads the manifest of `model` (a function found by findModelFunction)
/// from its signature and attributes. Emits an error at the offending
/// function, argument or attribute when the attributes are missing, malformed
/// or disagree with the function type (an argument's dtype, rank or static
/// sizes).
FailureOr<ModelManifest> readModelManifest(func::FuncOp model);

/// Writes `manifest` as the JSON document of docs/abi.md (keys in the order
/// model, inputs, outputs, params, hyper).
std::string writeManifestJSON(const ModelManifest &manifest);

/// Writes a C header for a shared library built from the model: it includes
/// the runtime API and documents, as comments and constants, the model's
/// inputs, outputs, parameters and hyperparameters. `sourceName` (may be
/// empty) is mentioned in the banner.
void writeModelHeader(const ModelManifest &manifest, llvm::StringRef sourceName,
                      llvm::raw_ostream &os);

} // namespace seq
} // namespace mlir

#endif // SEQC_LOWERING_ENTRY_ENTRY_H
