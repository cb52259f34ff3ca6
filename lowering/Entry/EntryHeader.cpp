//===- EntryHeader.cpp - the C header of a compiled model -----------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// `seqc --emit=header` writes what a C or C++ program needs to use a model
// compiled into a shared library: the runtime's API (included), and the
// model's own contract (value names, dtypes, shapes, hyperparameters) as
// comments and preprocessor constants. The constants let a host refer to
// inputs and outputs by macro instead of by string literal, so that a renamed
// input breaks the host's build rather than its run.
//
//===----------------------------------------------------------------------===//

#include "lowering/Entry/Entry.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace mlir::seq;

/// Returns `name` as an uppercase C identifier fragment: every character
/// outside [A-Za-z0-9] becomes '_' ("layers.0.wq" -> "LAYERS_0_WQ").
static std::string toMacroFragment(llvm::StringRef name) {
  std::string result;
  for (char c : name)
    result.push_back(llvm::isAlnum(c) ? llvm::toUpper(c) : '_');
  if (result.empty() || llvm::isDigit(result.front()))
    result.insert(result.begin(), '_');
  return result;
}

/// Writes `text` as the body of a C string literal.
static void writeCString(llvm::raw_ostream &os, llvm::StringRef text) {
  os << '"';
  os.write_escaped(text, /*UseHexEscapes=*/true);
  os << '"';
}

/// Returns `text` with every "*/" broken up, so that it can sit inside a C
/// comment without ending it.
static std::string commentSafe(llvm::StringRef text) {
  std::string result = text.str();
  for (size_t pos; (pos = result.find("*/")) != std::string::npos;)
    result.replace(pos, 2, "* /");
  return result;
}

/// Writes `value` as a C floating-point literal: always with a '.' or an
/// exponent, so that 1.0 does not become the integer 1.
static void writeCDouble(llvm::raw_ostream &os, double value) {
  if (!std::isfinite(value)) {
    os << (std::isnan(value) ? "(0.0 / 0.0)"
                             : (value > 0 ? "(1.0 / 0.0)" : "(-1.0 / 0.0)"));
    return;
  }
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.17g", value);
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  os << text;
}

static void writeDim(llvm::raw_ostream &os, const DimSpec &dim) {
  if (const auto *size = std::get_if<int64_t>(&dim))
    os << *size;
  else
    os << std::get<std::string>(dim);
}

/// "f32[b, n, 256]"
static std::string formatType(const TensorSpec &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << value.dtype << '[';
  llvm::interleaveComma(value.shape, os,
                        [&](const DimSpec &dim) { writeDim(os, dim); });
  os << ']';
  return text;
}

/// Writes one " *   name  type  [extra]" comment line per value, the columns
/// aligned.
static void writeValueTable(llvm::raw_ostream &os,
                            ArrayRef<TensorSpec> values) {
  size_t nameWidth = 0, typeWidth = 0;
  for (const TensorSpec &value : values) {
    nameWidth = std::max(nameWidth, value.name.size());
    typeWidth = std::max(typeWidth, formatType(value).size());
  }
  for (const TensorSpec &value : values) {
    os << " *   " << llvm::left_justify(commentSafe(value.name), nameWidth)
       << "  ";
    if (!value.range) {
      os << formatType(value) << '\n';
      continue;
    }
    os << llvm::left_justify(formatType(value), typeWidth) << "  values in [";
    writeDim(os, value.range->first);
    os << ", ";
    writeDim(os, value.range->second);
    os << "]\n";
  }
}

/// Number of elements of a static shape (parameters are static).
static int64_t getNumElements(const TensorSpec &value) {
  int64_t count = 1;
  for (const DimSpec &dim : value.shape)
    if (const auto *size = std::get_if<int64_t>(&dim))
      count *= *size;
  return count;
}

void mlir::seq::writeModelHeader(const ModelSignature &signature,
                                 llvm::StringRef sourceName,
                                 llvm::raw_ostream &os) {
  std::string prefix = toMacroFragment(signature.model);
  // Header-guard and macro names must not collide when two value names only
  // differ in punctuation ("a.b" and "a_b"): later ones get an index suffix.
  llvm::StringSet<> macros;
  auto uniqueMacro = [&](std::string name) {
    std::string candidate = name;
    for (unsigned i = 2; !macros.insert(candidate).second; ++i)
      candidate = name + "_" + std::to_string(i);
    return candidate;
  };

  os << "/* " << commentSafe(signature.model) << ": a model compiled by seqc";
  if (!sourceName.empty())
    os << " from " << commentSafe(sourceName);
  os << ".\n"
     << " * Generated file; do not edit.\n"
     << " *\n"
     << " * The shared library built with `seqc ... -o lib<name>.so` contains "
        "the model\n"
     << " * and the seqc runtime: seqc_model_load() creates a handle for it. "
        "Tensors\n"
     << " * are dense and row-major; see seqc_runtime.h and docs/abi.md.\n"
     << " *\n";

  os << " * Inputs (seqc_model_set_input), in order:\n";
  writeValueTable(os, signature.inputs);
  os << " * Outputs (seqc_model_get_output):\n";
  writeValueTable(os, signature.outputs);

  int64_t totalParams = 0;
  for (const TensorSpec &param : signature.params)
    totalParams += getNumElements(param);
  os << " * Parameters (safetensors keys for seqc_model_load_weights): "
     << signature.params.size()
     << (signature.params.size() == 1 ? " tensor, " : " tensors, ")
     << totalParams << (totalParams == 1 ? " value\n" : " values\n");
  writeValueTable(os, signature.params);
  if (!signature.state.empty()) {
    os << " * State (KV caches the instance keeps across runs; "
          "seqc_model_reset_state):\n";
    writeValueTable(os, signature.state);
  }

  // The symbolic dimensions are what seqc_model_set_dim accepts.
  llvm::SetVector<llvm::StringRef> symbols;
  for (const TensorSpec &input : signature.inputs)
    for (const DimSpec &dim : input.shape)
      if (const auto *name = std::get_if<std::string>(&dim))
        symbols.insert(*name);
  if (!symbols.empty()) {
    os << " * Symbolic dimensions (seqc_model_set_dim): ";
    llvm::interleaveComma(
        symbols, os, [&](llvm::StringRef name) { os << commentSafe(name); });
    os << '\n';
  }
  os << " */\n\n";

  std::string guard = uniqueMacro("SEQC_MODEL_" + prefix + "_H");
  os << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include \"seqc_runtime.h\"\n\n";

  os << "#define " << uniqueMacro(prefix + "_MODEL_NAME") << ' ';
  writeCString(os, signature.model);
  os << "\n#define " << uniqueMacro(prefix + "_NUM_INPUTS") << ' '
     << signature.inputs.size() << "\n#define "
     << uniqueMacro(prefix + "_NUM_OUTPUTS") << ' ' << signature.outputs.size()
     << "\n#define " << uniqueMacro(prefix + "_NUM_PARAMS") << ' '
     << signature.params.size() << "\n\n";

  auto writeNames = [&](llvm::StringRef kind, ArrayRef<TensorSpec> values) {
    if (values.empty())
      return;
    os << "/* " << kind << " names and ranks. */\n";
    for (const TensorSpec &value : values) {
      std::string macro = uniqueMacro(prefix + "_" + kind.upper() + "_" +
                                      toMacroFragment(value.name));
      os << "#define " << macro << ' ';
      writeCString(os, value.name);
      os << "\n#define " << uniqueMacro(macro + "_RANK") << ' '
         << value.shape.size() << '\n';
    }
    os << '\n';
  };
  writeNames("Input", signature.inputs);
  writeNames("Output", signature.outputs);

  if (!signature.hyper.empty()) {
    os << "/* Hyperparameters the model was compiled with. */\n";
    for (const auto &[name, value] : signature.hyper) {
      os << "#define "
         << uniqueMacro(prefix + "_HYPER_" + toMacroFragment(name)) << ' ';
      if (auto boolean = dyn_cast<BoolAttr>(value))
        os << (boolean.getValue() ? 1 : 0);
      else if (auto integer = dyn_cast<IntegerAttr>(value))
        os << integer.getInt();
      else if (auto real = dyn_cast<FloatAttr>(value))
        writeCDouble(os, real.getValueAsDouble());
      else
        writeCString(os, cast<StringAttr>(value).getValue());
      os << '\n';
    }
    os << '\n';
  }

  os << "#endif /* " << guard << " */\n";
}
