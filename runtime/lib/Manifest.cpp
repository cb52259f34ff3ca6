//===- Manifest.cpp - Parsing and validating the model manifest -----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"
#include "Quantize.h"

#include "Json.h"

#include <algorithm>
#include <utility>

namespace seqc {

std::string ValueSpec::shapeText() const {
  std::string text = "[";
  for (int i = 0; i < rank; ++i) {
    if (i)
      text += ", ";
    text += shape[i] < 0 ? dimNames[i] : std::to_string(shape[i]);
  }
  return text + "]";
}

std::string ValueSpec::rangeText() const {
  auto bound = [](const RangeBound &b) {
    return b.symbol.empty() ? std::to_string(b.value) : b.symbol;
  };
  return "[" + bound(range[0]) + ", " + bound(range[1]) + "]";
}

const char *kindNoun(seqc_value_kind kind) {
  switch (kind) {
  case SEQC_VALUE_INPUT:
    return "input";
  case SEQC_VALUE_OUTPUT:
    return "output";
  case SEQC_VALUE_PARAM:
    return "parameter";
  case SEQC_VALUE_STATE:
    return "state";
  default:
    return "value";
  }
}

bool isValidKind(seqc_value_kind kind) {
  return kind == SEQC_VALUE_INPUT || kind == SEQC_VALUE_OUTPUT ||
         kind == SEQC_VALUE_PARAM || kind == SEQC_VALUE_STATE;
}

const ValueSpec *Manifest::find(seqc_value_kind kind, const char *valueName,
                                size_t *index) const {
  return find(kind, std::string(valueName), index);
}

const ValueSpec *Manifest::find(seqc_value_kind kind,
                                const std::string &valueName,
                                size_t *index) const {
  auto it = indices[kind].find(valueName);
  if (it == indices[kind].end())
    return nullptr;
  *index = it->second;
  return &values[kind][it->second];
}

seqc_status *Manifest::notFound(seqc_value_kind kind,
                                const char *valueName) const {
  std::string known;
  for (const ValueSpec &spec : values[kind]) {
    if (known.size() > 200) {
      known += ", ...";
      break;
    }
    known += known.empty() ? "" : ", ";
    known += spec.name;
  }
  return makeStatus(SEQC_STATUS_NOT_FOUND, "the model has no %s '%s' (%ss: %s)",
                    kindNoun(kind), valueName, kindNoun(kind),
                    known.empty() ? "none" : known.c_str());
}

bool Manifest::isSymbol(const std::string &symbol) const {
  for (const std::string &s : symbols)
    if (s == symbol)
      return true;
  return false;
}

namespace {

/// The most ranks "tensor_parallel" may name: far above any machine's, and
/// small enough that a slice's size times it cannot overflow once the
/// slice's own size is checked.
constexpr int kMaxTensorParallel = 1 << 16;

bool hasControlCharacter(const std::string &text) {
  for (char c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return true;
  return false;
}

/// "invalid manifest: <where> <problem>".
seqc_status *manifestError(const std::string &where,
                           const std::string &problem) {
  return makeStatus(SEQC_STATUS_INVALID_MANIFEST, "invalid manifest: %s %s",
                    where.c_str(), problem.c_str());
}

seqc_status *parseValueSpec(const JsonValue &entry, seqc_value_kind kind,
                            const std::string &where, int tensorParallel,
                            ValueSpec *out) {
  if (!entry.isObject())
    return manifestError(where, "is not an object");
  const JsonValue *name = entry.find("name");
  if (!name || !name->isString() || name->string.empty())
    return manifestError(where, "needs a non-empty string \"name\"");
  out->name = name->string;
  std::string at = where + " ('" + printableText(out->name) + "')";
  // Values are looked up by NUL-terminated name, and names go into messages.
  if (hasControlCharacter(out->name))
    return manifestError(at, "has a NUL or control character in its name");

  const JsonValue *dtype = entry.find("dtype");
  if (!dtype || !dtype->isString())
    return manifestError(at, "needs a string \"dtype\"");
  if (!parseManifestDType(dtype->string, &out->dtype))
    return manifestError(at, "has unknown dtype '" +
                                 printableText(dtype->string) + "'");

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
    } else if (dim.isString() && hasControlCharacter(dim.string)) {
      return manifestError(at + ":", "dimension names must not contain NUL "
                                     "or control characters");
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

  if (isBlockDType(out->dtype) && (kind != SEQC_VALUE_PARAM || out->rank == 0 ||
                                   (out->dtype != SEQC_DTYPE_I8_ROWSCALE &&
                                    out->shape[out->rank - 1] % 32 != 0)))
    return manifestError(at + ":", "a block format (q8_0, q4_0, q4_1) is "
                                   "only allowed on parameters whose last "
                                   "dimension is a multiple of 32, int8 on "
                                   "parameters of rank 1 or more");

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
      else if (bound.isString() && hasControlCharacter(bound.string))
        return manifestError(at + ":", "dimension names must not contain NUL "
                                       "or control characters");
      else if (bound.isString() && !bound.string.empty())
        out->range[b].symbol = bound.string;
      else
        return manifestError(at + ":", "\"range\" bounds must be integers or "
                                       "dimension names");
    }
    out->hasRange = true;
  }

  // A parameter only seqc_prepare reads (docs/abi.md): the runtime may
  // drop its pages once it holds the prepared block.
  const JsonValue *preparedOnly = entry.find("prepared_only");
  if (preparedOnly) {
    if (kind != SEQC_VALUE_PARAM || !preparedOnly->isBool())
      return manifestError(at + ":", "\"prepared_only\" must be true or "
                                     "false, on a parameter");
    out->preparedOnly = preparedOnly->boolean;
  }

  // A parameter of a tensor-parallel model that each rank holds a slice of
  // (docs/abi.md): its shape is the slice's, so the axis must be one of
  // its dimensions, and only the model's rank count says how the file's
  // whole tensor divides.
  const JsonValue *shard = entry.find("shard");
  if (shard) {
    const JsonValue *axis = shard->isObject() ? shard->find("axis") : nullptr;
    if (kind != SEQC_VALUE_PARAM || !axis || !axis->isNumber() ||
        !axis->isInteger)
      return manifestError(at + ":", "\"shard\" must be {\"axis\": A}, on a "
                                     "parameter");
    if (axis->integer < 0 || axis->integer >= out->rank)
      return manifestError(at + ":", "\"shard\" axis " +
                                         std::to_string(axis->integer) +
                                         " is not a dimension of its shape " +
                                         out->shapeText() + " (rank " +
                                         std::to_string(out->rank) + ")");
    if (tensorParallel < 2)
      return manifestError(at + ":", "\"shard\" needs the model's "
                                     "\"tensor_parallel\" (the rank count "
                                     "that divides the parameter), which is "
                                     "absent");
    out->shardAxis = static_cast<int>(axis->integer);
  }

  const JsonValue *write = entry.find("write");
  if (write) {
    const JsonValue *input = write->isObject() ? write->find("input") : nullptr;
    const JsonValue *count = write->isObject() ? write->find("count") : nullptr;
    const JsonValue *axis = write->isObject() ? write->find("axis") : nullptr;
    if (kind != SEQC_VALUE_STATE || !input || !input->isString() ||
        hasControlCharacter(input->string) || !count || !axis ||
        !axis->isNumber() || !axis->isInteger || axis->integer < 0 ||
        axis->integer >= out->rank)
      return manifestError(at + ":", "\"write\" must be {input, count, "
                                     "axis} on a state buffer");
    if (count->isNumber() && count->isInteger && count->integer >= 0)
      out->writeCount.value = count->integer;
    else if (count->isString() && !count->string.empty() &&
             !hasControlCharacter(count->string))
      out->writeCount.symbol = count->string;
    else
      return manifestError(at + ":", "\"write\" count must be an integer "
                                     "or a dimension name");
    out->writeInput = input->string;
    out->writeAxis = static_cast<int>(axis->integer);
  }
  return nullptr;
}

/// Parses the array `key` of `object` (absent: empty for parameters and
/// state, an error for inputs and outputs) into out->values[kind].
seqc_status *parseSection(const JsonValue &object, seqc_value_kind kind,
                          const char *key, const std::string &prefix,
                          Manifest *out) {
  const JsonValue *section = object.find(key);
  if (!section) {
    // A model may have no weights and no state; it cannot lack
    // inputs/outputs keys.
    if (kind == SEQC_VALUE_PARAM || kind == SEQC_VALUE_STATE)
      return nullptr;
    return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                      "invalid manifest: missing \"%s%s\"", prefix.c_str(),
                      key);
  }
  if (!section->isArray())
    return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                      "invalid manifest: \"%s%s\" must be an array",
                      prefix.c_str(), key);
  for (size_t i = 0; i < section->items.size(); ++i) {
    ValueSpec spec;
    std::string where = prefix + key + "[" + std::to_string(i) + "]";
    SEQC_RETURN_IF_ERROR(parseValueSpec(section->items[i], kind, where,
                                        out->tensorParallel, &spec));
    if (!out->indices[kind].emplace(spec.name, i).second)
      return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                        "invalid manifest: duplicate %s name '%s'",
                        kindNoun(kind), printableText(spec.name).c_str());
    out->values[kind].push_back(std::move(spec));
  }
  return nullptr;
}

/// Sets out->symbols from the inputs' shapes and ranges.
void collectSymbols(Manifest *out) {
  for (const ValueSpec &spec : out->values[SEQC_VALUE_INPUT])
    for (int d = 0; d < spec.rank; ++d)
      if (spec.shape[d] < 0 && !out->isSymbol(spec.dimNames[d]))
        out->symbols.push_back(spec.dimNames[d]);
  // A range may name a dimension no input shape uses (e.g. a vocabulary
  // size the caller picks with --dim).
  for (const ValueSpec &spec : out->values[SEQC_VALUE_INPUT])
    for (const RangeBound &bound : spec.range)
      if (spec.hasRange && !bound.symbol.empty() &&
          !out->isSymbol(bound.symbol))
        out->symbols.push_back(bound.symbol);
}

} // namespace

seqc_status *parseManifest(std::string_view text, Manifest *out) {
  JsonValue root;
  if (seqc_status *status =
          parseJson(text, &root, SEQC_STATUS_INVALID_MANIFEST))
    return annotate(status, "invalid manifest: not valid JSON");
  if (!root.isObject())
    return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                      "invalid manifest: the root is %s, not an object",
                      root.kindName());
  if (const JsonValue *name = root.find("model")) {
    if (!name->isString())
      return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                        "invalid manifest: \"model\" must be a string");
    out->name = name->string;
  }
  if (const JsonValue *target = root.find("target")) {
    if (!target->isString())
      return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                        "invalid manifest: \"target\" must be a string");
    if (target->string == "cpu")
      out->target = Target::CPU;
    else if (target->string == "nvptx")
      out->target = Target::NVPTX;
    else
      return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                        "invalid manifest: unknown target '%s' (this runtime "
                        "runs models compiled for \"cpu\" or \"nvptx\")",
                        printableText(target->string).c_str());
  }
  if (const JsonValue *abi = root.find("abi")) {
    if (!abi->isNumber() || !abi->isInteger ||
        (abi->integer != 1 && abi->integer != 2))
      return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                        "invalid manifest: \"abi\" must be 1 or 2, the "
                        "versions of the model ABI this runtime runs "
                        "(docs/abi.md); recompile the model with this "
                        "release's seqc");
    out->abi = static_cast<int>(abi->integer);
  }
  // Read before the sections: a parameter's "shard" needs it.
  if (const JsonValue *ranks = root.find("tensor_parallel")) {
    // Present only for `seqc --tensor-parallel=N`, N >= 2: a model for one
    // process has no key.
    if (!ranks->isNumber() || !ranks->isInteger || ranks->integer < 2 ||
        ranks->integer > kMaxTensorParallel)
      return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                        "invalid manifest: \"tensor_parallel\" must be a "
                        "rank count, an integer from 2 to %d",
                        kMaxTensorParallel);
    out->tensorParallel = static_cast<int>(ranks->integer);
  }
  if (const JsonValue *data = root.find("data_parallel")) {
    // Present only for `seqc --data-parallel`, which no tensor-parallel
    // model is compiled with.
    if (!data->isBool())
      return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                        "invalid manifest: \"data_parallel\" must be true "
                        "or false");
    if (data->boolean && out->tensorParallel > 1)
      return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                        "invalid manifest: \"data_parallel\" and "
                        "\"tensor_parallel\" cannot be combined");
    out->dataParallel = data->boolean;
  }
  static const char *const kSections[4] = {"inputs", "outputs", "params",
                                           "state"};
  for (int kind = 0; kind < 4; ++kind)
    SEQC_RETURN_IF_ERROR(parseSection(root, static_cast<seqc_value_kind>(kind),
                                      kSections[kind], "", out));
  collectSymbols(out);
  for (size_t i = 0; i < out->values[SEQC_VALUE_STATE].size(); ++i) {
    out->stateArgs.push_back(i);
    out->stateArgSpecs.push_back(out->values[SEQC_VALUE_STATE][i]);
  }

  const JsonValue *entries = root.find("entries");
  if (!entries)
    return nullptr;
  if (!entries->isArray() || entries->items.empty())
    return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                      "invalid manifest: \"entries\" must be a non-empty "
                      "array");
  for (size_t e = 0; e < entries->items.size(); ++e) {
    const JsonValue &item = entries->items[e];
    std::string at = "entries[" + std::to_string(e) + "]";
    const JsonValue *name = item.isObject() ? item.find("name") : nullptr;
    if (!name || !name->isString() || name->string.empty() ||
        hasControlCharacter(name->string))
      return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                        "invalid manifest: %s needs a string \"name\"",
                        at.c_str());
    for (const auto &[other, unused] : out->entries)
      if (other == name->string)
        return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                          "invalid manifest: duplicate entry name '%s'",
                          printableText(name->string).c_str());
    Manifest entry;
    entry.name = out->name;
    entry.target = out->target;
    entry.abi = out->abi;
    entry.tensorParallel = out->tensorParallel;
    entry.dataParallel = out->dataParallel;
    for (int kind : {SEQC_VALUE_PARAM, SEQC_VALUE_STATE}) {
      entry.values[kind] = out->values[kind];
      entry.indices[kind] = out->indices[kind];
    }
    for (int kind : {SEQC_VALUE_INPUT, SEQC_VALUE_OUTPUT})
      SEQC_RETURN_IF_ERROR(parseSection(item,
                                        static_cast<seqc_value_kind>(kind),
                                        kSections[kind], at + ".", &entry));
    collectSymbols(&entry);
    // The entry's state: a part of the model's, in the entry's order.
    Manifest own;
    SEQC_RETURN_IF_ERROR(
        parseSection(item, SEQC_VALUE_STATE, "state", at + ".", &own));
    for (ValueSpec &spec : own.values[SEQC_VALUE_STATE]) {
      size_t index = 0;
      const ValueSpec *shared =
          out->find(SEQC_VALUE_STATE, spec.name, &index);
      if (!shared || shared->dtype != spec.dtype ||
          shared->rank != spec.rank ||
          !std::equal(spec.shape, spec.shape + spec.rank, shared->shape))
        return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                          "invalid manifest: %s.state '%s' is not a state "
                          "of the model of the same dtype and shape",
                          at.c_str(), printableText(spec.name).c_str());
      entry.stateArgs.push_back(index);
      entry.stateArgSpecs.push_back(std::move(spec));
    }
    out->entries.emplace_back(name->string, std::move(entry));
  }
  // The top level describes the default entry; its state arguments are the
  // default entry's.
  out->stateArgs = out->entries.front().second.stateArgs;
  out->stateArgSpecs = out->entries.front().second.stateArgSpecs;
  return nullptr;
}

} // namespace seqc
