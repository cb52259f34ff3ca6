//===- Model.cpp - Manifest, binding and argument marshalling -------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Implements the model half of the C API: parsing the manifest, binding
// weights and inputs (with symbolic dimension checking), and calling
// seqc_invoke with MLIR memref descriptors as docs/abi.md specifies.
//
//===----------------------------------------------------------------------===//

#include "Json.h"
#include "Random.h"
#include "Safetensors.h"
#include "Support.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#ifdef SEQC_HAVE_OPENMP
#include <omp.h>
#endif

// The runtime references the model's symbols weakly so that programs without
// a linked-in model (tests, hosts using seqc_model_load_from) still link;
// seqc_model_load then reports that no model is present.
extern "C" {
__attribute__((weak)) extern const char seqc_manifest[];
__attribute__((weak)) void seqc_invoke(void **args);
}

using namespace seqc;

namespace {

/// One bound of an integer input's "range": a constant or a dimension name.
struct RangeBound {
  int64_t value = 0;
  std::string symbol; ///< Non-empty when the bound names a dimension.
};

/// A manifest entry.
struct ValueSpec {
  std::string name;
  seqc_dtype dtype = SEQC_DTYPE_F32;
  int rank = 0;
  int64_t shape[SEQC_MAX_RANK] = {};   ///< -1 for symbolic dimensions.
  std::string dimNames[SEQC_MAX_RANK]; ///< Symbol names, else empty.
  bool hasRange = false;
  RangeBound range[2];

  /// "[b, n, 256]".
  std::string shapeText() const {
    std::string text = "[";
    for (int i = 0; i < rank; ++i) {
      if (i)
        text += ", ";
      text += shape[i] < 0 ? dimNames[i] : std::to_string(shape[i]);
    }
    return text + "]";
  }
};

/// A value bound to an input or parameter.
struct BoundValue {
  bool bound = false;
  int64_t shape[SEQC_MAX_RANK] = {};
  Buffer buffer;
};

/// An output of the last run, in contiguous storage.
struct OutputValue {
  int64_t shape[SEQC_MAX_RANK] = {};
  Buffer buffer;
};

/// MLIR's memref.get_global lowering stores this marker as the `allocated`
/// pointer of a descriptor for a constant global; it was never malloc'ed.
const uintptr_t kMlirGlobalMarker = 0xdeadbeef;

const char *kindNoun(seqc_value_kind kind) {
  switch (kind) {
  case SEQC_VALUE_INPUT:
    return "input";
  case SEQC_VALUE_OUTPUT:
    return "output";
  case SEQC_VALUE_PARAM:
    return "parameter";
  default:
    return "value";
  }
}

bool isValidKind(seqc_value_kind kind) {
  return kind == SEQC_VALUE_INPUT || kind == SEQC_VALUE_OUTPUT ||
         kind == SEQC_VALUE_PARAM;
}

} // namespace

struct seqc_model {
  std::string manifest;
  std::string name;
  seqc_invoke_fn invoke = nullptr;
  std::vector<ValueSpec> specs[3]; ///< Indexed by seqc_value_kind.
  std::unordered_map<std::string, size_t> indices[3];
  /// Symbolic dimensions of the inputs (and ranges), in first-use order.
  std::vector<std::string> symbols;

  /// Sizes fixed with seqc_model_set_dim.
  std::unordered_map<std::string, int64_t> explicitDims;
  std::vector<BoundValue> inputs;
  std::vector<BoundValue> params;
  std::vector<OutputValue> outputs;
  bool haveOutputs = false;

  const ValueSpec *find(seqc_value_kind kind, const char *valueName,
                        size_t *index) const {
    auto it = indices[kind].find(valueName);
    if (it == indices[kind].end())
      return nullptr;
    *index = it->second;
    return &specs[kind][it->second];
  }

  /// NOT_FOUND naming the known values, for typos on the command line.
  seqc_status *notFound(seqc_value_kind kind, const char *valueName) const {
    std::string known;
    for (const ValueSpec &spec : specs[kind]) {
      if (known.size() > 200) {
        known += ", ...";
        break;
      }
      known += known.empty() ? "" : ", ";
      known += spec.name;
    }
    return makeStatus(SEQC_STATUS_NOT_FOUND,
                      "the model has no %s '%s' (%ss: %s)", kindNoun(kind),
                      valueName, kindNoun(kind),
                      known.empty() ? "none" : known.c_str());
  }

  bool isSymbol(const std::string &symbol) const {
    for (const std::string &s : symbols)
      if (s == symbol)
        return true;
    return false;
  }

  /// Looks up the size of `symbol` from set_dim or a bound input other than
  /// `excludeInput`; `source` describes where it came from.
  bool lookupDim(const std::string &symbol, size_t excludeInput, int64_t *size,
                 std::string *source) const {
    auto it = explicitDims.find(symbol);
    if (it != explicitDims.end()) {
      *size = it->second;
      *source = "(from --dim / seqc_model_set_dim)";
      return true;
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (i == excludeInput || !inputs[i].bound)
        continue;
      const ValueSpec &spec = specs[SEQC_VALUE_INPUT][i];
      for (int d = 0; d < spec.rank; ++d) {
        if (spec.dimNames[d] == symbol) {
          *size = inputs[i].shape[d];
          *source = "(from input '" + spec.name + "')";
          return true;
        }
      }
    }
    return false;
  }
};

//===----------------------------------------------------------------------===//
// Manifest parsing
//===----------------------------------------------------------------------===//

namespace {

/// "invalid manifest: <where> <problem>".
seqc_status *manifestError(const std::string &where,
                           const std::string &problem) {
  return makeStatus(SEQC_STATUS_INVALID_MANIFEST, "invalid manifest: %s %s",
                    where.c_str(), problem.c_str());
}

seqc_status *parseValueSpec(const JsonValue &entry, seqc_value_kind kind,
                            const std::string &where, ValueSpec *out) {
  if (!entry.isObject())
    return manifestError(where, "is not an object");
  const JsonValue *name = entry.find("name");
  if (!name || !name->isString() || name->string.empty())
    return manifestError(where, "needs a non-empty string \"name\"");
  out->name = name->string;
  std::string at = where + " ('" + out->name + "')";

  const JsonValue *dtype = entry.find("dtype");
  if (!dtype || !dtype->isString())
    return manifestError(at, "needs a string \"dtype\"");
  if (!parseManifestDType(dtype->string, &out->dtype))
    return manifestError(at, "has unknown dtype '" + dtype->string + "'");

  const JsonValue *shape = entry.find("shape");
  if (!shape || !shape->isArray())
    return manifestError(at, "needs an array \"shape\"");
  if (shape->items.size() > SEQC_MAX_RANK)
    return manifestError(at, "has rank above the supported maximum of 8");
  out->rank = static_cast<int>(shape->items.size());
  for (int d = 0; d < out->rank; ++d) {
    const JsonValue &dim = shape->items[static_cast<size_t>(d)];
    if (dim.isNumber() && dim.isInteger && dim.integer >= 0) {
      out->shape[d] = dim.integer;
    } else if (dim.isString() && !dim.string.empty() &&
               kind != SEQC_VALUE_PARAM) {
      out->shape[d] = -1;
      out->dimNames[d] = dim.string;
    } else {
      return manifestError(
          at + ":", kind == SEQC_VALUE_PARAM
                        ? "parameter shapes must be non-negative integers"
                        : "shape entries must be non-negative integers or "
                          "dimension names");
    }
  }

  const JsonValue *range = entry.find("range");
  if (range) {
    if (kind != SEQC_VALUE_INPUT || isFloatDType(out->dtype))
      return manifestError(at + ":",
                           "\"range\" is only allowed on integer inputs");
    if (!range->isArray() || range->items.size() != 2)
      return manifestError(at + ":", "\"range\" must be [lo, hi]");
    for (int b = 0; b < 2; ++b) {
      const JsonValue &bound = range->items[static_cast<size_t>(b)];
      if (bound.isNumber() && bound.isInteger)
        out->range[b].value = bound.integer;
      else if (bound.isString() && !bound.string.empty())
        out->range[b].symbol = bound.string;
      else
        return manifestError(at + ":", "\"range\" bounds must be integers or "
                                       "dimension names");
    }
    out->hasRange = true;
  }
  return nullptr;
}

seqc_status *parseManifest(seqc_model *model) {
  JsonValue root;
  if (seqc_status *status =
          parseJson(model->manifest, &root, SEQC_STATUS_INVALID_MANIFEST))
    return annotate(status, "invalid manifest: not valid JSON");
  if (!root.isObject())
    return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                      "invalid manifest: the root is %s, not an object",
                      root.kindName());
  if (const JsonValue *name = root.find("model")) {
    if (!name->isString())
      return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                        "invalid manifest: \"model\" must be a string");
    model->name = name->string;
  }
  static const char *const kSections[3] = {"inputs", "outputs", "params"};
  for (int kind = 0; kind < 3; ++kind) {
    const JsonValue *section = root.find(kSections[kind]);
    if (!section) {
      // A model may have no weights; it cannot lack inputs/outputs keys.
      if (kind == SEQC_VALUE_PARAM)
        continue;
      return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                        "invalid manifest: missing \"%s\"", kSections[kind]);
    }
    if (!section->isArray())
      return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                        "invalid manifest: \"%s\" must be an array",
                        kSections[kind]);
    for (size_t i = 0; i < section->items.size(); ++i) {
      ValueSpec spec;
      std::string where =
          std::string(kSections[kind]) + "[" + std::to_string(i) + "]";
      SEQC_RETURN_IF_ERROR(parseValueSpec(
          section->items[i], static_cast<seqc_value_kind>(kind), where, &spec));
      if (!model->indices[kind].emplace(spec.name, i).second)
        return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                          "invalid manifest: duplicate %s name '%s'",
                          kindNoun(static_cast<seqc_value_kind>(kind)),
                          spec.name.c_str());
      model->specs[kind].push_back(std::move(spec));
    }
  }
  for (const ValueSpec &spec : model->specs[SEQC_VALUE_INPUT])
    for (int d = 0; d < spec.rank; ++d)
      if (spec.shape[d] < 0 && !model->isSymbol(spec.dimNames[d]))
        model->symbols.push_back(spec.dimNames[d]);
  // A range may name a dimension no input shape uses (e.g. a vocabulary
  // size the caller picks with --dim).
  for (const ValueSpec &spec : model->specs[SEQC_VALUE_INPUT])
    for (const RangeBound &bound : spec.range)
      if (spec.hasRange && !bound.symbol.empty() &&
          !model->isSymbol(bound.symbol))
        model->symbols.push_back(bound.symbol);
  model->inputs.resize(model->specs[SEQC_VALUE_INPUT].size());
  model->params.resize(model->specs[SEQC_VALUE_PARAM].size());
  model->outputs.resize(model->specs[SEQC_VALUE_OUTPUT].size());
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Binding helpers
//===----------------------------------------------------------------------===//

/// Checks that a tensor's dtype and rank are valid and its data present.
seqc_status *checkTensor(const seqc_tensor *tensor, const char *what,
                         size_t *bytes) {
  if (!tensor)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT, "%s: tensor is NULL", what);
  if (!isValidDType(tensor->dtype))
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT, "%s: invalid dtype %d",
                      what, static_cast<int>(tensor->dtype));
  if (tensor->rank < 0 || tensor->rank > SEQC_MAX_RANK)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "%s: rank %d is outside [0, %d]", what, tensor->rank,
                      SEQC_MAX_RANK);
  int64_t numel = seqc_tensor_numel(tensor);
  if (numel < 0 || !checkedBytes(numel, seqc_dtype_size(tensor->dtype), bytes))
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "%s: shape %s has a negative size or is too large", what,
                      formatShape(tensor->shape, tensor->rank).c_str());
  if (*bytes && !tensor->data)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT, "%s: data is NULL", what);
  return nullptr;
}

/// Checks that `tensor` may be bound to input `index`: dtype, rank, static
/// sizes, and symbolic sizes against set_dim and the other bound inputs.
seqc_status *checkInputShape(const seqc_model *model, size_t index,
                             const seqc_tensor *tensor) {
  const ValueSpec &spec = model->specs[SEQC_VALUE_INPUT][index];
  const char *name = spec.name.c_str();
  if (tensor->dtype != spec.dtype)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "input '%s': dtype %s does not match the model's %s",
                      name, seqc_dtype_name(tensor->dtype),
                      seqc_dtype_name(spec.dtype));
  if (tensor->rank != spec.rank)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "input '%s': shape %s has rank %d but the model expects "
                      "rank %d %s",
                      name, formatShape(tensor->shape, tensor->rank).c_str(),
                      tensor->rank, spec.rank, spec.shapeText().c_str());
  for (int d = 0; d < spec.rank; ++d) {
    int64_t size = tensor->shape[d];
    if (spec.shape[d] >= 0) {
      if (size != spec.shape[d])
        return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                          "input '%s': dim %d has size %lld but the model "
                          "expects %lld (shape %s)",
                          name, d, static_cast<long long>(size),
                          static_cast<long long>(spec.shape[d]),
                          spec.shapeText().c_str());
      continue;
    }
    const std::string &symbol = spec.dimNames[d];
    int64_t expected;
    std::string source;
    bool known = model->lookupDim(symbol, index, &expected, &source);
    if (!known) {
      // The same symbol earlier in this very shape.
      for (int e = 0; e < d && !known; ++e) {
        if (spec.dimNames[e] == symbol) {
          known = true;
          expected = tensor->shape[e];
          source = "(from dim " + std::to_string(e) + " of the same input)";
        }
      }
    }
    if (known && size != expected)
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "input '%s': dim %d ('%s') has size %lld, but '%s' "
                        "is %lld %s",
                        name, d, symbol.c_str(), static_cast<long long>(size),
                        symbol.c_str(), static_cast<long long>(expected),
                        source.c_str());
  }
  return nullptr;
}

/// Evaluates a range bound of input `spec`.
seqc_status *evalRangeBound(const seqc_model *model, const ValueSpec &spec,
                            const RangeBound &bound, int64_t *out) {
  if (bound.symbol.empty()) {
    *out = bound.value;
    return nullptr;
  }
  std::string source;
  if (!model->lookupDim(bound.symbol, SIZE_MAX, out, &source))
    return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                      "cannot generate input '%s': its range bound '%s' has "
                      "no size (set it with seqc_model_set_dim or --dim "
                      "%s=SIZE)",
                      spec.name.c_str(), bound.symbol.c_str(),
                      bound.symbol.c_str());
  return nullptr;
}

/// Generates the random value of input `index` (all its dims must be known).
seqc_status *generateInput(const seqc_model *model, size_t index, uint64_t seed,
                           BoundValue *out) {
  const ValueSpec &spec = model->specs[SEQC_VALUE_INPUT][index];
  for (int d = 0; d < spec.rank; ++d) {
    if (spec.shape[d] >= 0) {
      out->shape[d] = spec.shape[d];
      continue;
    }
    std::string source;
    if (!model->lookupDim(spec.dimNames[d], SIZE_MAX, &out->shape[d], &source))
      return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                        "cannot generate input '%s': dimension '%s' has no "
                        "size (set it with seqc_model_set_dim or --dim "
                        "%s=SIZE, or bind an input that uses it)",
                        spec.name.c_str(), spec.dimNames[d].c_str(),
                        spec.dimNames[d].c_str());
  }
  int64_t numel;
  size_t bytes;
  if (!checkedNumel(out->shape, spec.rank, &numel) ||
      !checkedBytes(numel, seqc_dtype_size(spec.dtype), &bytes))
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "cannot generate input '%s': shape %s is too large",
                      spec.name.c_str(),
                      formatShape(out->shape, spec.rank).c_str());
  SEQC_RETURN_IF_ERROR(allocateBuffer(bytes, &out->buffer));
  Rng rng(seed, spec.name);
  if (isFloatDType(spec.dtype)) {
    fillNormal(rng, spec.dtype, static_cast<size_t>(numel), out->buffer.data);
  } else {
    int64_t lo = 0, hi = 0;
    if (spec.hasRange) {
      SEQC_RETURN_IF_ERROR(evalRangeBound(model, spec, spec.range[0], &lo));
      SEQC_RETURN_IF_ERROR(evalRangeBound(model, spec, spec.range[1], &hi));
    }
    if (lo > hi)
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "cannot generate input '%s': its range [%lld, %lld] "
                        "is empty",
                        spec.name.c_str(), static_cast<long long>(lo),
                        static_cast<long long>(hi));
    if (spec.dtype == SEQC_DTYPE_I32 &&
        (lo < std::numeric_limits<int32_t>::min() ||
         hi > std::numeric_limits<int32_t>::max()))
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "cannot generate input '%s': its range [%lld, %lld] "
                        "does not fit i32",
                        spec.name.c_str(), static_cast<long long>(lo),
                        static_cast<long long>(hi));
    fillIntRange(rng, spec.dtype, static_cast<size_t>(numel), lo, hi,
                 out->buffer.data);
  }
  out->bound = true;
  return nullptr;
}

/// Copies a strided memref into contiguous row-major storage at `dst`.
void copyStrided(const char *base, int64_t offset, const int64_t *sizes,
                 const int64_t *strides, int rank, size_t elementSize,
                 char *dst) {
  auto element = [&](int64_t linear) {
    return base + linear * static_cast<int64_t>(elementSize);
  };
  if (rank == 0) {
    std::memcpy(dst, element(offset), elementSize);
    return;
  }
  // Fast path: already row-major contiguous.
  bool contiguous = true;
  int64_t expected = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (sizes[d] != 1 && strides[d] != expected)
      contiguous = false;
    expected *= sizes[d];
  }
  if (contiguous) {
    std::memcpy(dst, element(offset),
                static_cast<size_t>(expected) * elementSize);
    return;
  }
  int64_t index[SEQC_MAX_RANK] = {};
  int64_t inner = sizes[rank - 1], innerStride = strides[rank - 1];
  while (true) {
    int64_t linear = offset;
    for (int d = 0; d + 1 < rank; ++d)
      linear += index[d] * strides[d];
    if (innerStride == 1) {
      size_t rowBytes = static_cast<size_t>(inner) * elementSize;
      std::memcpy(dst, element(linear), rowBytes);
      dst += rowBytes;
    } else {
      for (int64_t j = 0; j < inner; ++j, dst += elementSize)
        std::memcpy(dst, element(linear + j * innerStride), elementSize);
    }
    int d = rank - 2;
    for (; d >= 0; --d) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

/// Number of int64 words of a rank-`rank` memref descriptor.
size_t descriptorWords(int rank) { return 3 + 2 * static_cast<size_t>(rank); }

/// Appends a descriptor for contiguous `data` of `sizes` to `storage`.
void appendDescriptor(std::vector<int64_t> &storage, void *data,
                      const int64_t *sizes, int rank) {
  int64_t pointerBits;
  static_assert(sizeof(void *) == sizeof(int64_t), "64-bit targets only");
  std::memcpy(&pointerBits, &data, sizeof(pointerBits));
  storage.push_back(pointerBits); // allocated
  storage.push_back(pointerBits); // aligned
  storage.push_back(0);           // offset
  for (int d = 0; d < rank; ++d)
    storage.push_back(sizes[d]);
  int64_t stride = 1;
  size_t stridesAt = storage.size();
  storage.resize(storage.size() + static_cast<size_t>(rank));
  for (int d = rank - 1; d >= 0; --d) {
    storage[stridesAt + static_cast<size_t>(d)] = stride;
    stride *= sizes[d];
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Creation and introspection
//===----------------------------------------------------------------------===//

extern "C" seqc_status *seqc_model_load_from(const char *manifest,
                                             seqc_invoke_fn invoke,
                                             seqc_model **out_model) {
  if (!manifest || !invoke || !out_model)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_load_from: manifest, invoke and out_model "
                      "must not be NULL");
  std::unique_ptr<seqc_model> model(new seqc_model());
  model->manifest = manifest;
  model->invoke = invoke;
  SEQC_RETURN_IF_ERROR(parseManifest(model.get()));
  *out_model = model.release();
  return nullptr;
}

extern "C" seqc_status *seqc_model_load(seqc_model **out_model) {
  const char *manifest = seqc_manifest;
  seqc_invoke_fn invoke = &seqc_invoke;
  if (!manifest || !invoke)
    return makeStatus(SEQC_STATUS_NOT_FOUND,
                      "no model is linked into this program (seqc_manifest "
                      "and seqc_invoke are undefined)");
  return seqc_model_load_from(manifest, invoke, out_model);
}

extern "C" void seqc_model_free(seqc_model *model) { delete model; }

extern "C" const char *seqc_model_name(const seqc_model *model) {
  return model ? model->name.c_str() : "";
}

extern "C" const char *seqc_model_manifest(const seqc_model *model) {
  return model ? model->manifest.c_str() : "";
}

extern "C" size_t seqc_model_count(const seqc_model *model,
                                   seqc_value_kind kind) {
  if (!model || !isValidKind(kind))
    return 0;
  return model->specs[kind].size();
}

extern "C" seqc_status *seqc_model_info(const seqc_model *model,
                                        seqc_value_kind kind, size_t index,
                                        seqc_value_info *out_info) {
  if (!model || !out_info || !isValidKind(kind))
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_info: invalid model, kind or out_info");
  if (index >= model->specs[kind].size())
    return makeStatus(SEQC_STATUS_NOT_FOUND,
                      "seqc_model_info: %s index %zu out of range (%zu %ss)",
                      kindNoun(kind), index, model->specs[kind].size(),
                      kindNoun(kind));
  const ValueSpec &spec = model->specs[kind][index];
  seqc_value_info info = {};
  info.name = spec.name.c_str();
  info.dtype = spec.dtype;
  info.rank = spec.rank;
  for (int d = 0; d < spec.rank; ++d) {
    info.shape[d] = spec.shape[d];
    info.dim_names[d] = spec.shape[d] < 0 ? spec.dimNames[d].c_str() : nullptr;
  }
  *out_info = info;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Dimensions and inputs
//===----------------------------------------------------------------------===//

extern "C" seqc_status *seqc_model_set_dim(seqc_model *model, const char *name,
                                           int64_t size) {
  if (!model || !name)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_set_dim: model and name must not be NULL");
  if (!model->isSymbol(name)) {
    std::string known;
    for (const std::string &symbol : model->symbols)
      known += (known.empty() ? "" : ", ") + symbol;
    return makeStatus(
        SEQC_STATUS_NOT_FOUND,
        "the model has no symbolic dimension '%s' (%s%s)", name,
        known.empty() ? "it has none" : "dimensions: ", known.c_str());
  }
  if (size < 0)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "dimension '%s': size %lld is negative", name,
                      static_cast<long long>(size));
  for (size_t i = 0; i < model->inputs.size(); ++i) {
    if (!model->inputs[i].bound)
      continue;
    const ValueSpec &spec = model->specs[SEQC_VALUE_INPUT][i];
    for (int d = 0; d < spec.rank; ++d)
      if (spec.dimNames[d] == name && model->inputs[i].shape[d] != size)
        return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                          "dimension '%s' = %lld conflicts with input '%s', "
                          "whose dim %d ('%s') has size %lld",
                          name, static_cast<long long>(size), spec.name.c_str(),
                          d, name,
                          static_cast<long long>(model->inputs[i].shape[d]));
  }
  model->explicitDims[name] = size;
  return nullptr;
}

extern "C" seqc_status *seqc_model_get_dim(const seqc_model *model,
                                           const char *name,
                                           int64_t *out_size) {
  if (!model || !name || !out_size)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_get_dim: arguments must not be NULL");
  if (!model->isSymbol(name))
    return makeStatus(SEQC_STATUS_NOT_FOUND,
                      "the model has no symbolic dimension '%s'", name);
  std::string source;
  if (!model->lookupDim(name, SIZE_MAX, out_size, &source))
    return makeStatus(SEQC_STATUS_NOT_FOUND, "dimension '%s' has no size yet",
                      name);
  return nullptr;
}

extern "C" seqc_status *seqc_model_set_input(seqc_model *model,
                                             const char *name,
                                             const seqc_tensor *tensor) {
  if (!model || !name)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_set_input: model and name must not be "
                      "NULL");
  size_t index;
  if (!model->find(SEQC_VALUE_INPUT, name, &index))
    return model->notFound(SEQC_VALUE_INPUT, name);
  std::string what = std::string("input '") + name + "'";
  size_t bytes;
  SEQC_RETURN_IF_ERROR(checkTensor(tensor, what.c_str(), &bytes));
  SEQC_RETURN_IF_ERROR(checkInputShape(model, index, tensor));
  BoundValue value;
  SEQC_RETURN_IF_ERROR(allocateBuffer(bytes, &value.buffer));
  if (bytes)
    std::memcpy(value.buffer.data, tensor->data, bytes);
  for (int d = 0; d < tensor->rank; ++d)
    value.shape[d] = tensor->shape[d];
  value.bound = true;
  model->inputs[index] = std::move(value);
  return nullptr;
}

extern "C" seqc_status *seqc_model_random_inputs(seqc_model *model,
                                                 uint64_t seed) {
  if (!model)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_random_inputs: model is NULL");
  // Generate everything first so that a failure binds nothing. Generated
  // inputs cannot introduce new dimension sizes (they only use known ones),
  // so generating against the current bindings is exact.
  std::vector<std::pair<size_t, BoundValue>> generated;
  for (size_t i = 0; i < model->inputs.size(); ++i) {
    if (model->inputs[i].bound)
      continue;
    BoundValue value;
    SEQC_RETURN_IF_ERROR(generateInput(model, i, seed, &value));
    generated.emplace_back(i, std::move(value));
  }
  for (auto &entry : generated)
    model->inputs[entry.first] = std::move(entry.second);
  return nullptr;
}

extern "C" void seqc_model_reset_inputs(seqc_model *model) {
  if (!model)
    return;
  for (BoundValue &input : model->inputs)
    input = BoundValue();
  model->explicitDims.clear();
}

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

namespace {

/// Lists up to a few names for "missing N parameters: 'a', 'b', ...".
std::string listSome(const std::vector<std::string> &names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i == 5) {
      text += ", ... (" + std::to_string(names.size() - 5) + " more)";
      break;
    }
    text += (i ? ", '" : "'") + names[i] + "'";
  }
  return text;
}

} // namespace

extern "C" seqc_status *seqc_model_load_weights(seqc_model *model,
                                                const char *path) {
  if (!model || !path)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_load_weights: model and path must not be "
                      "NULL");
  SafetensorsFile file;
  SEQC_RETURN_IF_ERROR(readSafetensors(path, &file));
  const std::vector<ValueSpec> &specs = model->specs[SEQC_VALUE_PARAM];
  std::vector<BoundValue> params(specs.size());
  std::shared_ptr<void> mapping(file.file, file.file.get());
  for (const SafetensorsTensor &tensor : file.tensors) {
    size_t index;
    const ValueSpec *spec =
        model->find(SEQC_VALUE_PARAM, tensor.name.c_str(), &index);
    if (!spec)
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "'%s': tensor '%s' is not a parameter of the model",
                        path, tensor.name.c_str());
    if (tensor.dtype != spec->dtype)
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "'%s': parameter '%s' is %s in the file but the "
                        "model expects %s",
                        path, spec->name.c_str(),
                        safetensorsDTypeName(tensor.dtype),
                        safetensorsDTypeName(spec->dtype));
    int rank = static_cast<int>(tensor.shape.size());
    if (rank != spec->rank ||
        !std::equal(tensor.shape.begin(), tensor.shape.end(), spec->shape))
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "'%s': parameter '%s' has shape %s in the file but "
                        "the model expects %s",
                        path, spec->name.c_str(),
                        formatShape(tensor.shape.data(), rank).c_str(),
                        spec->shapeText().c_str());
    BoundValue &value = params[index];
    size_t bytes = static_cast<size_t>(tensor.end - tensor.begin);
    auto address = reinterpret_cast<uintptr_t>(tensor.data);
    if (bytes && address % seqc_dtype_size(tensor.dtype) == 0) {
      // Zero-copy: the generated code only assumes element alignment.
      value.buffer.data = const_cast<uint8_t *>(tensor.data);
      value.buffer.bytes = bytes;
      value.buffer.owner = mapping;
    } else {
      SEQC_RETURN_IF_ERROR(allocateBuffer(bytes, &value.buffer));
      if (bytes)
        std::memcpy(value.buffer.data, tensor.data, bytes);
    }
    for (int d = 0; d < rank; ++d)
      value.shape[d] = tensor.shape[static_cast<size_t>(d)];
    value.bound = true;
  }
  std::vector<std::string> missing;
  for (size_t i = 0; i < params.size(); ++i)
    if (!params[i].bound)
      missing.push_back(specs[i].name);
  if (!missing.empty())
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "'%s' is missing %zu of the model's %zu parameters: %s",
                      path, missing.size(), specs.size(),
                      listSome(missing).c_str());
  model->params = std::move(params);
  return nullptr;
}

extern "C" seqc_status *seqc_model_random_weights(seqc_model *model,
                                                  uint64_t seed) {
  if (!model)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_random_weights: model is NULL");
  const std::vector<ValueSpec> &specs = model->specs[SEQC_VALUE_PARAM];
  std::vector<BoundValue> params(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    const ValueSpec &spec = specs[i];
    int64_t numel;
    size_t bytes;
    if (!checkedNumel(spec.shape, spec.rank, &numel) ||
        !checkedBytes(numel, seqc_dtype_size(spec.dtype), &bytes))
      return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                        "parameter '%s': shape %s is too large",
                        spec.name.c_str(), spec.shapeText().c_str());
    SEQC_RETURN_IF_ERROR(annotate(allocateBuffer(bytes, &params[i].buffer),
                                  "parameter '%s'", spec.name.c_str()));
    initParam(spec.name, spec.dtype, spec.shape, spec.rank, seed,
              params[i].buffer.data);
    std::copy(spec.shape, spec.shape + spec.rank, params[i].shape);
    params[i].bound = true;
  }
  model->params = std::move(params);
  return nullptr;
}

extern "C" seqc_status *seqc_model_set_param(seqc_model *model,
                                             const char *name,
                                             const seqc_tensor *tensor) {
  if (!model || !name)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_set_param: model and name must not be "
                      "NULL");
  size_t index;
  const ValueSpec *spec = model->find(SEQC_VALUE_PARAM, name, &index);
  if (!spec)
    return model->notFound(SEQC_VALUE_PARAM, name);
  std::string what = std::string("parameter '") + name + "'";
  size_t bytes;
  SEQC_RETURN_IF_ERROR(checkTensor(tensor, what.c_str(), &bytes));
  if (tensor->dtype != spec->dtype || tensor->rank != spec->rank ||
      !std::equal(tensor->shape, tensor->shape + tensor->rank, spec->shape))
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "parameter '%s': %s %s does not match the model's %s %s",
                      name, seqc_dtype_name(tensor->dtype),
                      formatShape(tensor->shape, tensor->rank).c_str(),
                      seqc_dtype_name(spec->dtype), spec->shapeText().c_str());
  BoundValue value;
  SEQC_RETURN_IF_ERROR(allocateBuffer(bytes, &value.buffer));
  if (bytes)
    std::memcpy(value.buffer.data, tensor->data, bytes);
  std::copy(spec->shape, spec->shape + spec->rank, value.shape);
  value.bound = true;
  model->params[index] = std::move(value);
  return nullptr;
}

extern "C" seqc_status *seqc_model_get_param(const seqc_model *model,
                                             const char *name,
                                             seqc_tensor *out_tensor) {
  if (!model || !name || !out_tensor)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_get_param: arguments must not be NULL");
  size_t index;
  const ValueSpec *spec = model->find(SEQC_VALUE_PARAM, name, &index);
  if (!spec)
    return model->notFound(SEQC_VALUE_PARAM, name);
  const BoundValue &value = model->params[index];
  if (!value.bound)
    return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                      "parameter '%s' is not bound", name);
  seqc_tensor tensor = {};
  tensor.dtype = spec->dtype;
  tensor.rank = spec->rank;
  std::copy(value.shape, value.shape + spec->rank, tensor.shape);
  tensor.data = value.buffer.data;
  *out_tensor = tensor;
  return nullptr;
}

extern "C" seqc_status *seqc_model_save_weights(const seqc_model *model,
                                                const char *path) {
  if (!model || !path)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_save_weights: model and path must not be "
                      "NULL");
  const std::vector<ValueSpec> &specs = model->specs[SEQC_VALUE_PARAM];
  std::vector<SafetensorsWriteEntry> entries;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!model->params[i].bound)
      return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                        "cannot save weights: parameter '%s' is not bound",
                        specs[i].name.c_str());
    entries.push_back(
        {specs[i].name, specs[i].dtype,
         std::vector<int64_t>(specs[i].shape, specs[i].shape + specs[i].rank),
         model->params[i].buffer.data});
  }
  // "format": "pt" lets PyTorch tooling (e.g. transformers) load the file.
  return writeSafetensors(path, entries,
                          {{"format", "pt"}, {"producer", "seqc"}});
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

namespace {

/// Reads output `index` from its descriptor, checks it against the manifest
/// and copies it into `out`. `outputDims` binds symbols only outputs use.
seqc_status *collectOutput(const seqc_model *model, size_t index,
                           const int64_t *desc,
                           std::unordered_map<std::string, int64_t> &outputDims,
                           OutputValue *out) {
  const ValueSpec &spec = model->specs[SEQC_VALUE_OUTPUT][index];
  const char *name = spec.name.c_str();
  const char *aligned;
  std::memcpy(&aligned, &desc[1], sizeof(aligned));
  int64_t offset = desc[2];
  const int64_t *sizes = desc + 3;
  const int64_t *strides = desc + 3 + spec.rank;
  for (int d = 0; d < spec.rank; ++d) {
    int64_t size = sizes[d];
    if (size < 0)
      return makeStatus(SEQC_STATUS_MODEL_ERROR,
                        "output '%s': dim %d has negative size %lld", name, d,
                        static_cast<long long>(size));
    if (spec.shape[d] >= 0) {
      if (size != spec.shape[d])
        return makeStatus(SEQC_STATUS_MODEL_ERROR,
                          "output '%s': dim %d has size %lld but the "
                          "manifest's shape %s requires %lld",
                          name, d, static_cast<long long>(size),
                          spec.shapeText().c_str(),
                          static_cast<long long>(spec.shape[d]));
      out->shape[d] = size;
      continue;
    }
    const std::string &symbol = spec.dimNames[d];
    int64_t expected;
    std::string source;
    if (!model->lookupDim(symbol, SIZE_MAX, &expected, &source)) {
      auto inserted = outputDims.emplace(symbol, size);
      expected = inserted.first->second;
      source = "(from an earlier output)";
    }
    if (size != expected)
      return makeStatus(SEQC_STATUS_MODEL_ERROR,
                        "output '%s': dim %d ('%s') has size %lld, but '%s' "
                        "is %lld %s",
                        name, d, symbol.c_str(), static_cast<long long>(size),
                        symbol.c_str(), static_cast<long long>(expected),
                        source.c_str());
    out->shape[d] = size;
  }
  int64_t numel;
  size_t bytes;
  if (!checkedNumel(sizes, spec.rank, &numel) ||
      !checkedBytes(numel, seqc_dtype_size(spec.dtype), &bytes))
    return makeStatus(SEQC_STATUS_MODEL_ERROR, "output '%s': shape too large",
                      name);
  if (numel > 0 && !aligned)
    return makeStatus(SEQC_STATUS_MODEL_ERROR,
                      "output '%s': the model returned a null data pointer",
                      name);
  if (out->buffer.bytes != bytes || !out->buffer.data)
    SEQC_RETURN_IF_ERROR(
        annotate(allocateBuffer(bytes, &out->buffer), "output '%s'", name));
  if (numel > 0)
    copyStrided(aligned, offset, sizes, strides, spec.rank,
                seqc_dtype_size(spec.dtype),
                static_cast<char *>(out->buffer.data));
  return nullptr;
}

} // namespace

extern "C" seqc_status *seqc_model_run(seqc_model *model) {
  if (!model)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_run: model is NULL");
  model->haveOutputs = false;
  const auto &inputSpecs = model->specs[SEQC_VALUE_INPUT];
  const auto &paramSpecs = model->specs[SEQC_VALUE_PARAM];
  const auto &outputSpecs = model->specs[SEQC_VALUE_OUTPUT];
  for (size_t i = 0; i < inputSpecs.size(); ++i)
    if (!model->inputs[i].bound)
      return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                        "input '%s' is not bound", inputSpecs[i].name.c_str());
  for (size_t i = 0; i < paramSpecs.size(); ++i)
    if (!model->params[i].bound)
      return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                        "parameter '%s' is not bound (load or generate "
                        "weights first)",
                        paramSpecs[i].name.c_str());

  // Argument descriptors: inputs, then parameters, packed in one vector
  // whose addresses are taken only once it is complete.
  size_t numArgs = inputSpecs.size() + paramSpecs.size();
  std::vector<int64_t> argStorage;
  std::vector<size_t> argOffsets;
  std::vector<void *> argPointers; // `allocated` of each argument.
  argOffsets.reserve(numArgs);
  argPointers.reserve(numArgs);
  auto addArg = [&](const BoundValue &value, int rank) {
    argOffsets.push_back(argStorage.size());
    argPointers.push_back(value.buffer.data);
    appendDescriptor(argStorage, value.buffer.data, value.shape, rank);
  };
  for (size_t i = 0; i < inputSpecs.size(); ++i)
    addArg(model->inputs[i], inputSpecs[i].rank);
  for (size_t i = 0; i < paramSpecs.size(); ++i)
    addArg(model->params[i], paramSpecs[i].rank);

  // The result area: the output descriptors back to back (all fields are
  // 8 bytes, so there is no padding). Zeroed so that a model that fails to
  // write an output yields null pointers rather than garbage.
  std::vector<size_t> resultOffsets;
  size_t resultWords = 0;
  for (const ValueSpec &spec : outputSpecs) {
    resultOffsets.push_back(resultWords);
    resultWords += descriptorWords(spec.rank);
  }
  std::vector<int64_t> results(resultWords == 0 ? 1 : resultWords, 0);

  std::vector<void *> args(1 + numArgs);
  args[0] = results.data();
  for (size_t i = 0; i < numArgs; ++i)
    args[1 + i] = &argStorage[argOffsets[i]];

  model->invoke(args.data());

  // Check and copy every output, then free what the model allocated, even
  // when a check fails, so that errors do not leak.
  seqc_status *status = nullptr;
  std::unordered_map<std::string, int64_t> outputDims;
  std::vector<void *> toFree;
  for (size_t i = 0; i < outputSpecs.size(); ++i) {
    const int64_t *desc = &results[resultOffsets[i]];
    if (!status)
      status = collectOutput(model, i, desc, outputDims, &model->outputs[i]);
    void *allocated;
    std::memcpy(&allocated, &desc[0], sizeof(allocated));
    if (!allocated ||
        reinterpret_cast<uintptr_t>(allocated) == kMlirGlobalMarker)
      continue;
    // Never free an output that aliases an argument (the model returned an
    // input or weight, or a view of one), nor one buffer twice (two outputs
    // viewing one allocation).
    bool skip = false;
    for (void *arg : argPointers)
      skip |= arg == allocated;
    for (void *freed : toFree)
      skip |= freed == allocated;
    if (!skip)
      toFree.push_back(allocated);
  }
  for (void *allocated : toFree)
    std::free(allocated);
  if (status)
    return status;
  model->haveOutputs = true;
  return nullptr;
}

extern "C" seqc_status *seqc_model_get_output(const seqc_model *model,
                                              const char *name,
                                              seqc_tensor *out_tensor) {
  if (!model || !name || !out_tensor)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_get_output: arguments must not be NULL");
  size_t index;
  const ValueSpec *spec = model->find(SEQC_VALUE_OUTPUT, name, &index);
  if (!spec)
    return model->notFound(SEQC_VALUE_OUTPUT, name);
  if (!model->haveOutputs)
    return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                      "output '%s' is not available: the model has not run "
                      "successfully",
                      name);
  const OutputValue &value = model->outputs[index];
  seqc_tensor tensor = {};
  tensor.dtype = spec->dtype;
  tensor.rank = spec->rank;
  std::copy(value.shape, value.shape + spec->rank, tensor.shape);
  tensor.data = value.buffer.data;
  *out_tensor = tensor;
  return nullptr;
}

extern "C" seqc_status *seqc_set_num_threads(int32_t num_threads) {
  if (num_threads < 1)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "thread count must be at least 1, got %d", num_threads);
#ifdef SEQC_HAVE_OPENMP
  omp_set_num_threads(num_threads);
  return nullptr;
#else
  return makeStatus(SEQC_STATUS_UNAVAILABLE,
                    "this runtime was built without OpenMP; the thread count "
                    "cannot be set");
#endif
}
