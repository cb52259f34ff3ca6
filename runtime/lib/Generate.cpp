//===- Generate.cpp - Token generation over a compiled decoder ------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// seqc_generate: continues a batch of prompts with a model that maps
// `tokens: i32[b, n]` to `logits: f[b, n, V]`, through the public binding
// and running calls (so that CPU and GPU models generate alike).
//
// Two ways to step, chosen from the manifest:
//   - cached: the model has an input `pos: i32[b]` and state (a KV cache,
//     docs/abi.md). One prefill call over the prompts, right-padded to the
//     longest with pos = 0, reads row r's next-token logits at its own last
//     prompt position; then each step calls the model with one token per row
//     at pos[r] = the row's length so far. A padded position of a short row
//     is overwritten by its next token before any query attends to it, so
//     the padding never reaches a row's logits.
//   - prefix: every step runs the whole prefix of every unfinished row again
//     (right-padded to the longest), O(n^2) work per sequence.
// Right padding is invisible to a causal model: the logits at a row's last
// real position depend on its real tokens only.
//
// A model with the entries `prefill` and `decode` (docs/language.md,
// "Entries and state") is stepped like a cached one, its prefill call
// through the first and each decode step through the second; the entry
// selected before seqc_generate is selected again after it.
//
// A recurrent state (a state entry with "carry": a conv window, an SSM
// state) is different: it is carried token by token, so a row's padding
// would run into it. Such a model is stepped like a cached one when its
// states name an input of valid counts ("carry": {"lengths": ...}): the
// prefill passes each prompt's length, a decode step 1 (0 for a finished
// row, whose state then stays as it is). Without one, prompts of different
// lengths are refused.
//
//===----------------------------------------------------------------------===//

#include "Json.h"
#include "Model.h"
#include "Parallel.h"
#include "Sampler.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

using namespace seqc;

namespace {

/// What the generation loop binds and reads, found in the manifest.
struct Interface {
  /// The name of the token input: `tokens`, or Hugging Face's `input_ids`.
  std::string tokensName = "tokens";
  /// The index of input `pos`, when the model has one.
  bool hasPos = false;
  /// Cached stepping: `pos` and state.
  bool cached = false;
  /// Cached stepping through the entries `prefill` and `decode`.
  bool entries = false;
  /// A recurrent state ("carry"): the input of valid counts that every one
  /// names, or empty when one names none (`unpaddedState` says which).
  bool recurrent = false;
  std::string lengthsName;
  std::string unpaddedState;
  /// The static batch size of `tokens`, or -1 when `b` is symbolic.
  int64_t staticBatch = -1;
  /// The constant range of `tokens` when it has one.
  bool tokenRange = false;
  int64_t tokenLo = 0, tokenHi = 0;
  /// The most tokens a row may hold (prompt and generated), or -1 for no
  /// limit, and what sets it.
  int64_t context = -1;
  std::string contextSource;
};

/// Reads the manifest's "state" entries (absent or [] for a model without
/// state): whether there are any, and the smallest static length of a KV
/// cache (a rank-4 state named "...k_cache" or "...v_cache", shape
/// [b, kv_heads, max_len, head_dim]).
seqc_status *readState(const seqc_model *model, bool *hasState,
                       Interface *iface) {
  JsonValue root;
  SEQC_RETURN_IF_ERROR(
      parseJson(model->manifestText, &root, SEQC_STATUS_INVALID_MANIFEST));
  *hasState = false;
  const JsonValue *state = root.isObject() ? root.find("state") : nullptr;
  if (!state || !state->isArray())
    return nullptr;
  int64_t cacheLength = -1;
  std::string cacheName;
  for (const JsonValue &entry : state->items) {
    *hasState = true;
    const JsonValue *name = entry.isObject() ? entry.find("name") : nullptr;
    const JsonValue *shape = entry.isObject() ? entry.find("shape") : nullptr;
    const JsonValue *carry = entry.isObject() ? entry.find("carry") : nullptr;
    if (carry && name && name->isString()) {
      const JsonValue *lengths =
          carry->isObject() ? carry->find("lengths") : nullptr;
      std::string lengthsName =
          lengths && lengths->isString() ? lengths->string : std::string();
      if (lengthsName.empty() ||
          (iface->recurrent && lengthsName != iface->lengthsName)) {
        if (iface->unpaddedState.empty())
          iface->unpaddedState = name->string;
      }
      if (!iface->recurrent)
        iface->lengthsName = lengthsName;
      iface->recurrent = true;
      continue;
    }
    if (!name || !name->isString() || !shape || !shape->isArray() ||
        shape->items.size() != 4 || !shape->items[2].isNumber() ||
        !shape->items[2].isInteger)
      continue;
    const std::string &text = name->string;
    auto endsWith = [&](const char *suffix) {
      size_t length = std::strlen(suffix);
      return text.size() >= length &&
             text.compare(text.size() - length, length, suffix) == 0;
    };
    if (!endsWith("k_cache") && !endsWith("v_cache"))
      continue;
    int64_t maxLen = shape->items[2].integer;
    if (cacheLength < 0 || maxLen < cacheLength) {
      cacheLength = maxLen;
      cacheName = text;
    }
  }
  // The cache names the limit when `pos`'s range gives the same.
  if (cacheLength >= 0 &&
      (iface->context < 0 || cacheLength <= iface->context)) {
    iface->context = cacheLength;
    iface->contextSource = "the length of its cache '" + cacheName + "'";
  }
  return nullptr;
}

/// Finds `tokens`, `pos`, `logits` and the state, or says what is missing.
seqc_status *findInterface(const seqc_model *model, Interface *iface) {
  const Manifest &manifest = model->manifest;
  size_t index;
  const ValueSpec *tokens =
      manifest.find(SEQC_VALUE_INPUT, std::string("tokens"), &index);
  if (!tokens) {
    tokens = manifest.find(SEQC_VALUE_INPUT, std::string("input_ids"), &index);
    if (tokens)
      iface->tokensName = "input_ids";
  }
  if (!tokens)
    return annotate(manifest.notFound(SEQC_VALUE_INPUT, "tokens"),
                    "generation needs an input 'tokens' (i32 [b, n])");
  if (tokens->dtype != SEQC_DTYPE_I32 || tokens->rank != 2 ||
      tokens->shape[1] >= 0)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "generation needs an input '%s' of type i32 [b, n] "
                      "(n symbolic); the model's is %s %s",
                      iface->tokensName.c_str(),
                      seqc_dtype_name(tokens->dtype),
                      tokens->shapeText().c_str());
  iface->staticBatch = tokens->shape[0];
  if (tokens->hasRange && tokens->range[0].symbol.empty() &&
      tokens->range[1].symbol.empty()) {
    iface->tokenRange = true;
    iface->tokenLo = tokens->range[0].value;
    iface->tokenHi = tokens->range[1].value;
  }

  const ValueSpec *pos =
      manifest.find(SEQC_VALUE_INPUT, std::string("pos"), &index);
  if (pos) {
    bool sameBatch =
        tokens->shape[0] < 0
            ? pos->shape[0] < 0 && pos->dimNames[0] == tokens->dimNames[0]
            : pos->shape[0] == tokens->shape[0];
    if (pos->dtype != SEQC_DTYPE_I32 || pos->rank != 1 || !sameBatch)
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "generation needs an input 'pos' of type i32 [%s] "
                        "(the batch dimension of '%s'), or none; the "
                        "model's is %s %s",
                        tokens->shape[0] < 0
                            ? tokens->dimNames[0].c_str()
                            : std::to_string(tokens->shape[0]).c_str(),
                        iface->tokensName.c_str(), seqc_dtype_name(pos->dtype),
                        pos->shapeText().c_str());
    iface->hasPos = true;
    if (pos->hasRange && pos->range[1].symbol.empty() &&
        (iface->context < 0 || pos->range[1].value + 1 < iface->context)) {
      iface->context = pos->range[1].value + 1;
      iface->contextSource =
          "the range " + pos->rangeText() + " of input 'pos'";
    }
  }
  bool hasState = false;
  Interface withState = *iface;
  SEQC_RETURN_IF_ERROR(readState(model, &hasState, &withState));
  const std::string &lengthsName = withState.lengthsName;
  if (!lengthsName.empty()) {
    const ValueSpec *lengths =
        manifest.find(SEQC_VALUE_INPUT, lengthsName, &index);
    if (!lengths || lengths->dtype != SEQC_DTYPE_I32 || lengths->rank != 1)
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "generation needs the input '%s' of valid counts "
                        "that the model's recurrent state names to be i32 "
                        "[b]",
                        lengthsName.c_str());
  }
  for (const ValueSpec &spec : manifest.values[SEQC_VALUE_INPUT])
    if (spec.name != iface->tokensName && spec.name != "pos" &&
        spec.name != lengthsName)
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "generation binds only the inputs '%s', 'pos' and "
                        "the valid counts of a recurrent state; the model "
                        "also has input '%s' (%s %s)",
                        iface->tokensName.c_str(), spec.name.c_str(),
                        seqc_dtype_name(spec.dtype), spec.shapeText().c_str());

  const ValueSpec *logits =
      manifest.find(SEQC_VALUE_OUTPUT, std::string("logits"), &index);
  if (!logits)
    return annotate(manifest.notFound(SEQC_VALUE_OUTPUT, "logits"),
                    "generation needs an output 'logits' (f32 [b, n, V])");
  if (!isFloatDType(logits->dtype) || logits->rank != 3)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "generation needs an output 'logits' of type f32 "
                      "[b, n, V]; the model's is %s %s",
                      seqc_dtype_name(logits->dtype),
                      logits->shapeText().c_str());

  if (hasState && !iface->hasPos)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "the model has state but no input 'pos' (i32 [b]): "
                      "generation cannot tell it where each row's tokens go");
  if (hasState) {
    *iface = withState;
    iface->cached = true;
  }
  return nullptr;
}

seqc_status *checkOptions(const seqc_generate_options &options) {
  if (options.max_new_tokens < 0)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "max_new_tokens must be >= 0, got %lld",
                      static_cast<long long>(options.max_new_tokens));
  if (options.num_stop_ids && !options.stop_ids)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "stop_ids is NULL but num_stop_ids is %zu",
                      options.num_stop_ids);
  SamplerConfig config;
  config.temperature = options.temperature;
  config.topK = options.top_k;
  config.topP = options.top_p;
  config.repetitionPenalty = options.repetition_penalty;
  return checkSamplerConfig(config);
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// One batch row during generation.
struct Row {
  std::vector<int32_t> tokens; ///< Prompt, then generated.
  int64_t promptLength = 0;
  int64_t generated = 0;
  bool done = false;
};

/// The generation loop over validated arguments.
class Generator {
public:
  Generator(seqc_model *model, const Interface &iface,
            const seqc_generate_options &options, std::vector<Row> &rows)
      : model(model), iface(iface), options(options), rows(rows) {
    SamplerConfig config;
    config.temperature = options.temperature;
    config.topK = options.top_k;
    config.topP = options.top_p;
    config.repetitionPenalty = options.repetition_penalty;
    for (size_t r = 0; r < rows.size(); ++r)
      samplers.emplace_back(config, options.seed, static_cast<int64_t>(r));
  }

  seqc_status *run(seqc_generate_stats *stats) {
    for (int64_t step = 0; step < options.max_new_tokens; ++step) {
      // The rows this call passes: every row when the batch size must not
      // change (the cache holds a row per batch index, or the model's batch
      // is static), else the unfinished ones.
      std::vector<size_t> batch;
      for (size_t r = 0; r < rows.size(); ++r)
        if (!rows[r].done || iface.cached || iface.staticBatch >= 0)
          batch.push_back(r);
      bool any = false;
      for (size_t r : batch)
        any |= !rows[r].done;
      if (!any)
        break;
      auto start = std::chrono::steady_clock::now();
      bool decode = iface.cached && step > 0;
      SEQC_RETURN_IF_ERROR(annotate(callModel(batch, decode), "step %lld (%s)",
                                    static_cast<long long>(step),
                                    step == 0 ? "prefill" : "decode"));
      int64_t chosen = 0;
      SEQC_RETURN_IF_ERROR(annotate(choose(batch, decode, &chosen), "step %lld",
                                    static_cast<long long>(step)));
      double seconds = secondsSince(start);
      if (step == 0) {
        stats->prefill_seconds = seconds;
      } else {
        stats->decode_seconds += seconds;
        stats->decode_tokens += chosen;
      }
    }
    return nullptr;
  }

private:
  seqc_model *model;
  const Interface &iface;
  const seqc_generate_options &options;
  std::vector<Row> &rows;
  std::vector<Sampler> samplers;
  std::vector<int32_t> tokenData, posData, lengthData;
  std::vector<float> scratch;
  /// The width n of the last call.
  int64_t width = 0;

  /// Binds the batch rows' tokens (all of them, or with `decode` each
  /// row's last) and positions, and runs the model.
  seqc_status *callModel(const std::vector<size_t> &batch, bool decode) {
    int64_t n = 1;
    if (!decode)
      for (size_t r : batch)
        n = std::max(n, static_cast<int64_t>(rows[r].tokens.size()));
    int64_t b = static_cast<int64_t>(batch.size());
    tokenData.assign(static_cast<size_t>(b * n), 0);
    posData.assign(static_cast<size_t>(b), 0);
    lengthData.assign(static_cast<size_t>(b), 0);
    for (int64_t i = 0; i < b; ++i) {
      const std::vector<int32_t> &tokens = rows[batch[i]].tokens;
      int32_t *out = &tokenData[static_cast<size_t>(i * n)];
      // A recurrent state takes in a row's valid tokens only: none for a
      // finished row in a decode step, which keeps its state.
      lengthData[static_cast<size_t>(i)] =
          decode ? (rows[batch[i]].done ? 0 : 1)
                 : static_cast<int32_t>(tokens.size());
      if (decode) {
        // A finished row writes its last token again where it is due:
        // harmless, and within the cache.
        out[0] = tokens.back();
        posData[static_cast<size_t>(i)] =
            static_cast<int32_t>(tokens.size() - 1);
        continue;
      }
      // Right padding with the row's last token: a valid id, never seen by
      // the row's own logits.
      std::copy(tokens.begin(), tokens.end(), out);
      std::fill(out + tokens.size(), out + n, tokens.back());
    }
    if (iface.entries)
      SEQC_RETURN_IF_ERROR(
          seqc_model_select_entry(model, decode ? "decode" : "prefill"));
    seqc_model_reset_inputs(model);
    seqc_tensor tensor = {};
    tensor.dtype = SEQC_DTYPE_I32;
    tensor.rank = 2;
    tensor.shape[0] = b;
    tensor.shape[1] = n;
    tensor.data = tokenData.data();
    SEQC_RETURN_IF_ERROR(seqc_model_set_input(model, iface.tokensName.c_str(), &tensor));
    if (iface.hasPos) {
      tensor.rank = 1;
      tensor.shape[1] = 0;
      tensor.data = posData.data();
      SEQC_RETURN_IF_ERROR(seqc_model_set_input(model, "pos", &tensor));
      if (!iface.lengthsName.empty()) {
        tensor.data = lengthData.data();
        SEQC_RETURN_IF_ERROR(
            seqc_model_set_input(model, iface.lengthsName.c_str(), &tensor));
      }
    }
    width = n;
    return seqc_model_run(model);
  }

  /// Chooses the next token of every unfinished row in `batch` from the
  /// logits of the last call; *chosen counts them.
  seqc_status *choose(const std::vector<size_t> &batch, bool decode,
                      int64_t *chosen) {
    seqc_tensor logits;
    SEQC_RETURN_IF_ERROR(seqc_model_get_output(model, "logits", &logits));
    int64_t b = static_cast<int64_t>(batch.size());
    if (logits.shape[0] != b || logits.shape[1] != width ||
        logits.shape[2] < 1) {
      int64_t expected[3] = {b, width, logits.shape[2]};
      return makeStatus(SEQC_STATUS_MODEL_ERROR,
                        "output 'logits' is %s, expected %s with V >= 1",
                        formatShape(logits.shape, 3).c_str(),
                        formatShape(expected, 3).c_str());
    }
    int64_t vocab = logits.shape[2];
    scratch.resize(static_cast<size_t>(vocab));
    // The chosen token of each row of the batch, then (tensor parallelism)
    // rank 0's, so that every rank continues the same sequences.
    std::vector<int32_t> tokens(static_cast<size_t>(b), 0);
    for (int64_t i = 0; i < b; ++i) {
      size_t r = batch[static_cast<size_t>(i)];
      Row &row = rows[r];
      if (row.done)
        continue;
      int64_t position =
          decode ? 0 : static_cast<int64_t>(row.tokens.size()) - 1;
      size_t first = static_cast<size_t>((i * width + position) * vocab);
      if (logits.dtype == SEQC_DTYPE_F32)
        std::memcpy(scratch.data(),
                    static_cast<const float *>(logits.data) + first,
                    static_cast<size_t>(vocab) * sizeof(float));
      else
        for (int64_t v = 0; v < vocab; ++v)
          scratch[static_cast<size_t>(v)] = static_cast<float>(loadAsDouble(
              logits.data, logits.dtype, first + static_cast<size_t>(v)));
      SEQC_RETURN_IF_ERROR(annotate(
          samplers[r].next(scratch.data(), vocab, row.tokens.data(),
                           row.tokens.size(), &tokens[static_cast<size_t>(i)]),
          "row %zu", r));
    }
    SEQC_RETURN_IF_ERROR(agree(tokens));
    std::vector<int32_t> done(static_cast<size_t>(b), 0);
    for (int64_t i = 0; i < b; ++i) {
      size_t r = batch[static_cast<size_t>(i)];
      Row &row = rows[r];
      done[static_cast<size_t>(i)] = row.done;
      if (row.done)
        continue;
      int32_t token = tokens[static_cast<size_t>(i)];
      row.tokens.push_back(token);
      ++row.generated;
      ++*chosen;
      for (size_t s = 0; s < options.num_stop_ids; ++s)
        row.done |= token == options.stop_ids[s];
      if (options.callback &&
          options.callback(static_cast<int64_t>(r), token, options.user_data))
        row.done = true;
      if (row.generated >= options.max_new_tokens)
        row.done = true;
      done[static_cast<size_t>(i)] = row.done;
    }
    // A callback may end a row on one rank alone (it runs on each).
    SEQC_RETURN_IF_ERROR(agree(done));
    for (int64_t i = 0; i < b; ++i)
      rows[batch[static_cast<size_t>(i)]].done = done[static_cast<size_t>(i)];
    return nullptr;
  }

  /// Under tensor parallelism, replaces `values` by rank 0's. Every rank
  /// gets bitwise the same logits from the all-reduce and samples with the
  /// same seed, so they agree already; the broadcast makes sure of it (a
  /// callback's decision, a rank whose reduction summed in another order)
  /// for a few bytes a step.
  seqc_status *agree(std::vector<int32_t> &values) {
    // A data-parallel model's ranks generate for different prompts.
    if (seqc_model_num_ranks(model) <= 1 || seqc_model_data_parallel(model) ||
        values.empty())
      return nullptr;
    parallel::Functions &mpi = parallel::functions();
    if (!mpi.broadcastI32)
      return makeStatus(SEQC_STATUS_UNAVAILABLE,
                        "the model runs on %d ranks but the seqc MPI runtime "
                        "is not linked in",
                        static_cast<int>(seqc_model_num_ranks(model)));
    if (int error = mpi.broadcastI32(values.data(),
                                     static_cast<int>(values.size())))
      return makeStatus(SEQC_STATUS_UNAVAILABLE,
                        "broadcasting the chosen tokens from rank 0 failed "
                        "with MPI error %d",
                        error);
    return nullptr;
  }
};

/// Whether `model` has an entry named `name`.
bool hasEntry(const seqc_model *model, const char *name) {
  for (int64_t i = 0; i < seqc_model_num_entries(model); ++i)
    if (std::strcmp(seqc_model_entry_name(model, i), name) == 0)
      return true;
  return false;
}

/// Selects the entry that was selected when it was made, when destroyed.
class RestoreEntry {
public:
  explicit RestoreEntry(seqc_model *model)
      : model(model), name(seqc_model_selected_entry(model)) {}
  ~RestoreEntry() { seqc_status_free(seqc_model_select_entry(model, name.c_str())); }
  RestoreEntry(const RestoreEntry &) = delete;
  RestoreEntry &operator=(const RestoreEntry &) = delete;

private:
  seqc_model *model;
  std::string name;
};

} // namespace

extern "C" void seqc_generate_options_init(seqc_generate_options *options) {
  if (!options)
    return;
  *options = seqc_generate_options();
  options->max_new_tokens = 16;
  options->temperature = 0;
  options->top_k = 0;
  options->top_p = 1;
  options->repetition_penalty = 1;
  options->seed = 0;
  options->stop_ids = nullptr;
  options->num_stop_ids = 0;
  options->callback = nullptr;
  options->user_data = nullptr;
}

extern "C" seqc_status *seqc_generate(seqc_model *model, int64_t batch,
                                      const int32_t *const *prompts,
                                      const int64_t *prompt_lengths,
                                      const seqc_generate_options *options,
                                      int32_t *out_tokens, int64_t *out_lengths,
                                      seqc_generate_stats *out_stats) {
  seqc_generate_options defaults;
  seqc_generate_options_init(&defaults);
  const seqc_generate_options &opts = options ? *options : defaults;
  if (!model || !prompts || !prompt_lengths || !out_lengths)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_generate: model, prompts, prompt_lengths and "
                      "out_lengths must not be NULL");
  if (batch < 1)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_generate: the batch must hold at least one "
                      "prompt, got %lld",
                      static_cast<long long>(batch));
  SEQC_RETURN_IF_ERROR(checkOptions(opts));
  size_t outputSize;
  if (!checkedBytes(batch, static_cast<size_t>(opts.max_new_tokens),
                    &outputSize))
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_generate: %lld prompts of %lld new tokens each "
                      "are too many",
                      static_cast<long long>(batch),
                      static_cast<long long>(opts.max_new_tokens));
  if (outputSize && !out_tokens)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_generate: out_tokens must not be NULL");

  // The interface is the prefill entry's when the model steps through
  // `prefill` and `decode`.
  RestoreEntry restore(model);
  bool entries = hasEntry(model, "prefill") && hasEntry(model, "decode");
  if (entries)
    SEQC_RETURN_IF_ERROR(seqc_model_select_entry(model, "prefill"));
  Interface iface;
  seqc_status *found = findInterface(model, &iface);
  if (found && entries)
    found = annotate(found, "entry 'prefill'");
  SEQC_RETURN_IF_ERROR(found);
  if (entries && !iface.cached)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "the model has the entries 'prefill' and 'decode', but "
                      "'prefill' takes no input 'pos' or keeps no state");
  iface.entries = entries;
  if (iface.staticBatch >= 0 && batch != iface.staticBatch)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "the model's input '%s' has a static batch of "
                      "%lld; got %lld prompts",
                      iface.tokensName.c_str(),
                      static_cast<long long>(iface.staticBatch),
                      static_cast<long long>(batch));

  std::vector<Row> rows(static_cast<size_t>(batch));
  for (int64_t r = 0; r < batch; ++r) {
    int64_t length = prompt_lengths[r];
    if (length < 1)
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "prompt %lld is empty: a prompt needs at least one "
                        "token",
                        static_cast<long long>(r));
    if (!prompts[r])
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "seqc_generate: prompt %lld is NULL",
                        static_cast<long long>(r));
    if (length > INT32_MAX)
      return makeStatus(
          SEQC_STATUS_INVALID_ARGUMENT, "prompt %lld has %lld tokens, too many",
          static_cast<long long>(r), static_cast<long long>(length));
    if (iface.context >= 0 && length + opts.max_new_tokens > iface.context)
      return makeStatus(
          SEQC_STATUS_INVALID_ARGUMENT,
          "prompt %lld has %lld tokens; with max_new_tokens %lld that is "
          "%lld, more than the %lld the model holds (%s)",
          static_cast<long long>(r), static_cast<long long>(length),
          static_cast<long long>(opts.max_new_tokens),
          static_cast<long long>(length + opts.max_new_tokens),
          static_cast<long long>(iface.context), iface.contextSource.c_str());
    for (int64_t i = 0; iface.tokenRange && i < length; ++i) {
      int64_t token = prompts[r][i];
      if (token < iface.tokenLo || token > iface.tokenHi)
        return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                          "prompt %lld: token %lld is %lld, outside the "
                          "range [%lld, %lld] of input '%s'",
                          static_cast<long long>(r), static_cast<long long>(i),
                          static_cast<long long>(token),
                          static_cast<long long>(iface.tokenLo),
                          static_cast<long long>(iface.tokenHi),
                          iface.tokensName.c_str());
    }
    Row &row = rows[static_cast<size_t>(r)];
    row.promptLength = length;
    row.tokens.reserve(static_cast<size_t>(length + opts.max_new_tokens));
    row.tokens.assign(prompts[r], prompts[r] + length);
  }

  // A recurrent state without valid counts would take in a short prompt's
  // padding.
  if (iface.recurrent && !iface.unpaddedState.empty())
    for (int64_t r = 1; r < batch; ++r)
      if (prompt_lengths[r] != prompt_lengths[0])
        return makeStatus(
            SEQC_STATUS_INVALID_ARGUMENT,
            "prompts %lld and %lld have %lld and %lld tokens, but the "
            "model's recurrent state '%s' cannot be right-padded: the "
            "padding would enter it, and its call takes no lengths= "
            "(valid tokens per row, docs/language.md); pass prompts of "
            "one length or one prompt at a time",
            0LL, static_cast<long long>(r),
            static_cast<long long>(prompt_lengths[0]),
            static_cast<long long>(prompt_lengths[r]),
            iface.unpaddedState.c_str());

  seqc_generate_stats stats = {};
  stats.cached = iface.cached ? 1 : 0;
  for (const Row &row : rows)
    stats.prefill_tokens += row.promptLength;
  Generator generator(model, iface, opts, rows);
  SEQC_RETURN_IF_ERROR(generator.run(&stats));

  for (int64_t r = 0; r < batch; ++r) {
    const Row &row = rows[static_cast<size_t>(r)];
    out_lengths[r] = row.generated;
    std::copy(row.tokens.begin() + row.promptLength, row.tokens.end(),
              out_tokens + r * opts.max_new_tokens);
  }
  if (out_stats)
    *out_stats = stats;
  return nullptr;
}
