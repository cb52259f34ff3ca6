//===- Inputs.cpp - Symbolic dimensions and input binding ----------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// seqc_model_set_dim/get_dim, seqc_model_set_input, seqc_model_random_inputs
// and seqc_model_reset_inputs: binding inputs with their symbolic dimensions
// checked against set_dim and each other.
//
//===----------------------------------------------------------------------===//

#include "Model.h"
#include "Random.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using namespace seqc;

namespace {

/// Checks that `tensor` may be bound to input `index`: dtype, rank, static
/// sizes, and symbolic sizes against set_dim and the other bound inputs.
seqc_status *checkInputShape(const seqc_model *model, size_t index,
                             const seqc_tensor *tensor) {
  const ValueSpec &spec = model->manifest.values[SEQC_VALUE_INPUT][index];
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

//===----------------------------------------------------------------------===//
// Value ranges
//===----------------------------------------------------------------------===//

/// The evaluated range of an input: each bound's value when known.
struct EvaluatedRange {
  bool known[2] = {false, false};
  int64_t value[2] = {0, 0};
  /// "n = 5 from input 'tokens'" for each symbolic bound that is known,
  /// "n has no size yet" for one that is not; empty for constant ranges.
  std::string symbols;

  bool complete() const { return known[0] && known[1]; }
};

/// Evaluates the range of input `index`. A symbolic bound takes its size from
/// seqc_model_set_dim, from a bound input other than `index`, or from
/// `ownShape` (the shape being bound to `index`; NULL when it is bound).
EvaluatedRange evaluateRange(const seqc_model *model, size_t index,
                             const int64_t *ownShape) {
  const ValueSpec &spec = model->manifest.values[SEQC_VALUE_INPUT][index];
  EvaluatedRange range;
  for (int b = 0; b < 2; ++b) {
    const RangeBound &bound = spec.range[b];
    if (bound.symbol.empty()) {
      range.known[b] = true;
      range.value[b] = bound.value;
      continue;
    }
    if (b == 1 && bound.symbol == spec.range[0].symbol) {
      range.known[1] = range.known[0];
      range.value[1] = range.value[0];
      continue; // [n, n]: described once.
    }
    std::string source;
    range.known[b] = model->lookupDim(bound.symbol, ownShape ? index : SIZE_MAX,
                                      &range.value[b], &source);
    for (int d = 0; d < spec.rank && !range.known[b] && ownShape; ++d) {
      if (spec.dimNames[d] == bound.symbol) {
        range.known[b] = true;
        range.value[b] = ownShape[d];
        source = "(from dim " + std::to_string(d) + " of the same input)";
      }
    }
    if (!range.symbols.empty())
      range.symbols += ", ";
    if (range.known[b])
      // lookupDim's source reads "(from ...)": drop the parentheses.
      range.symbols += bound.symbol + " = " + std::to_string(range.value[b]) +
                       " " + source.substr(1, source.size() - 2);
    else
      range.symbols += bound.symbol + " has no size yet";
  }
  return range;
}

/// Formats element `linear` of a row-major tensor of `shape` as "[0, 2]".
std::string formatIndex(int64_t linear, const int64_t *shape, int rank) {
  int64_t index[SEQC_MAX_RANK] = {};
  for (int d = rank - 1; d >= 0; --d) {
    if (shape[d] > 0) {
      index[d] = linear % shape[d];
      linear /= shape[d];
    }
  }
  return formatShape(index, rank);
}

/// Checks the values of integer input `index` (`shape`, `data`) against the
/// known bounds of `range`; an unknown bound does not limit.
seqc_status *checkValues(const seqc_model *model, size_t index,
                         const EvaluatedRange &range, const int64_t *shape,
                         const void *data) {
  const ValueSpec &spec = model->manifest.values[SEQC_VALUE_INPUT][index];
  int64_t numel;
  if (!checkedNumel(shape, spec.rank, &numel))
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "input '%s': shape %s is too large", spec.name.c_str(),
                      formatShape(shape, spec.rank).c_str());
  int64_t lo =
      range.known[0] ? range.value[0] : std::numeric_limits<int64_t>::min();
  int64_t hi =
      range.known[1] ? range.value[1] : std::numeric_limits<int64_t>::max();
  int64_t bad = -1, value = 0;
  if (spec.dtype == SEQC_DTYPE_I32) {
    const int32_t *values = static_cast<const int32_t *>(data);
    for (int64_t i = 0; i < numel && bad < 0; ++i)
      if (values[i] < lo || values[i] > hi)
        bad = i, value = values[i];
  } else if (spec.dtype == SEQC_DTYPE_I64) {
    const int64_t *values = static_cast<const int64_t *>(data);
    for (int64_t i = 0; i < numel && bad < 0; ++i)
      if (values[i] < lo || values[i] > hi)
        bad = i, value = values[i];
  }
  if (bad < 0)
    return nullptr;
  auto boundText = [&](int b) {
    return range.known[b] ? std::to_string(range.value[b])
                          : spec.range[b].symbol;
  };
  std::string evaluated = "[" + boundText(0) + ", " + boundText(1) + "]";
  // Symbolic bounds: say what they evaluated to and where that came from.
  std::string declared;
  if (!range.symbols.empty())
    declared = evaluated == spec.rangeText()
                   ? " (" + range.symbols + ")"
                   : " (the range " + spec.rangeText() + " with " +
                         range.symbols + ")";
  std::string element = spec.rank == 0
                            ? std::string("the value")
                            : "element " + formatIndex(bad, shape, spec.rank);
  return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                    "input '%s': %s is %lld, outside %s%s", spec.name.c_str(),
                    element.c_str(), static_cast<long long>(value),
                    evaluated.c_str(), declared.c_str());
}

/// Generates the random value of input `index` (all its dims must be known).
seqc_status *generateInput(const seqc_model *model, size_t index, uint64_t seed,
                           BoundValue *out) {
  const ValueSpec &spec = model->manifest.values[SEQC_VALUE_INPUT][index];
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
    if (spec.hasRange) {
      out->rangeVerified = true;
      out->verifiedRange[0] = lo;
      out->verifiedRange[1] = hi;
    }
  }
  out->bound = true;
  return nullptr;
}

} // namespace

extern "C" seqc_status *seqc_model_set_dim(seqc_model *model, const char *name,
                                           int64_t size) {
  if (!model || !name)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_set_dim: model and name must not be NULL");
  if (!model->manifest.isSymbol(name)) {
    std::string known;
    for (const std::string &symbol : model->manifest.symbols)
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
    const ValueSpec &spec = model->manifest.values[SEQC_VALUE_INPUT][i];
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
  if (!model->manifest.isSymbol(name))
    return makeStatus(SEQC_STATUS_NOT_FOUND,
                      "the model has no symbolic dimension '%s'", name);
  std::string source;
  if (!model->lookupDim(name, SIZE_MAX, out_size, &source))
    return makeStatus(SEQC_STATUS_NOT_FOUND, "dimension '%s' has no size yet",
                      name);
  return nullptr;
}

namespace {
/// seqc_model_set_input and seqc_model_set_input_view: checks `tensor` and
/// binds it to input `name`, in place when `borrow` and its data is aligned
/// to its element size, else as a copy. Sets *borrowed.
seqc_status *bindInput(seqc_model *model, const char *name,
                       const seqc_tensor *tensor, bool borrow,
                       const char *function, bool *borrowed) {
  *borrowed = false;
  if (!model || !name)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "%s: model and name must not be NULL", function);
  size_t index;
  if (!model->manifest.find(SEQC_VALUE_INPUT, name, &index))
    return model->manifest.notFound(SEQC_VALUE_INPUT, name);
  std::string what = std::string("input '") + name + "'";
  size_t bytes;
  SEQC_RETURN_IF_ERROR(checkTensor(tensor, what.c_str(), &bytes));
  SEQC_RETURN_IF_ERROR(checkInputShape(model, index, tensor));
  BoundValue value;
  const ValueSpec &spec = model->manifest.values[SEQC_VALUE_INPUT][index];
  if (spec.hasRange) {
    // Check against every bound known now; seqc_model_run checks again once
    // all are (docs/runtime.md, "Value ranges").
    EvaluatedRange range = evaluateRange(model, index, tensor->shape);
    SEQC_RETURN_IF_ERROR(
        checkValues(model, index, range, tensor->shape, tensor->data));
    value.rangeVerified = range.complete();
    value.verifiedRange[0] = range.value[0];
    value.verifiedRange[1] = range.value[1];
  }
  // The generated code assumes only the element type's alignment of its
  // arguments (as for weights used in place from a mapped file).
  if (borrow && bytes &&
      reinterpret_cast<uintptr_t>(tensor->data) %
              seqc_dtype_size(tensor->dtype) ==
          0) {
    // Borrowed: the caller keeps the data alive (no owner).
    value.buffer.data = tensor->data;
    value.buffer.bytes = bytes;
    *borrowed = true;
  } else {
    SEQC_RETURN_IF_ERROR(allocateBuffer(bytes, &value.buffer));
    if (bytes)
      std::memcpy(value.buffer.data, tensor->data, bytes);
  }
  for (int d = 0; d < tensor->rank; ++d)
    value.shape[d] = tensor->shape[d];
  value.bound = true;
  model->inputs[index] = std::move(value);
  return nullptr;
}
} // namespace

extern "C" seqc_status *seqc_model_set_input(seqc_model *model,
                                             const char *name,
                                             const seqc_tensor *tensor) {
  bool borrowed;
  return bindInput(model, name, tensor, /*borrow=*/false,
                   "seqc_model_set_input", &borrowed);
}

extern "C" seqc_status *seqc_model_set_input_view(seqc_model *model,
                                                  const char *name,
                                                  const seqc_tensor *tensor,
                                                  int32_t *out_borrowed) {
  bool borrowed;
  seqc_status *status = bindInput(model, name, tensor, /*borrow=*/true,
                                  "seqc_model_set_input_view", &borrowed);
  if (out_borrowed)
    *out_borrowed = borrowed ? 1 : 0;
  return status;
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

seqc_status *seqc::checkInputRanges(seqc_model *model) {
  const std::vector<ValueSpec> &specs =
      model->manifest.values[SEQC_VALUE_INPUT];
  for (size_t i = 0; i < specs.size(); ++i) {
    const ValueSpec &spec = specs[i];
    BoundValue &input = model->inputs[i];
    if (!spec.hasRange || !input.bound)
      continue;
    EvaluatedRange range = evaluateRange(model, i, nullptr);
    for (int b = 0; b < 2; ++b)
      if (!range.known[b])
        return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                          "input '%s': its range %s names dimension '%s', "
                          "which has no size (set it with seqc_model_set_dim "
                          "or --dim %s=SIZE)",
                          spec.name.c_str(), spec.rangeText().c_str(),
                          spec.range[b].symbol.c_str(),
                          spec.range[b].symbol.c_str());
    if (input.rangeVerified && input.verifiedRange[0] == range.value[0] &&
        input.verifiedRange[1] == range.value[1])
      continue;
    SEQC_RETURN_IF_ERROR(
        checkValues(model, i, range, input.shape, input.buffer.data));
    input.rangeVerified = true;
    input.verifiedRange[0] = range.value[0];
    input.verifiedRange[1] = range.value[1];
  }
  return nullptr;
}
