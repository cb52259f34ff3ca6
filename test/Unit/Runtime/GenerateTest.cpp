//===- GenerateTest.cpp - Tests of seqc_generate --------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// seqc_generate over two hand-written language models with the same
// next-token function: a plain one (tokens -> logits, every step runs the
// prefix again) and a cached one (an input `pos` and a "state" entry; it
// keeps each row's tokens in its own cache, as a KV cache keeps keys), so
// that the two stepping paths must give the same tokens.
//
//===----------------------------------------------------------------------===//

#include "Support.h"
#include "seqc_runtime.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace seqc;

namespace {

constexpr int64_t kVocab = 16;
constexpr int64_t kMaxLen = 24;

#define LM_INPUT_TOKENS                                                        \
  "{\"name\": \"tokens\", \"dtype\": \"i32\", \"shape\": [\"b\", \"n\"],"      \
  " \"range\": [0, 15]}"
#define LM_OUTPUT_LOGITS                                                       \
  "\"outputs\": [{\"name\": \"logits\", \"dtype\": \"f32\","                   \
  " \"shape\": [\"b\", \"n\", 16]}]"

const char *const kPlainManifest =
    "{\"model\": \"lm\", \"inputs\": [" LM_INPUT_TOKENS "], " LM_OUTPUT_LOGITS
    ", \"params\": []}";

const char *const kCachedManifest =
    "{\"model\": \"lm_cached\", \"inputs\": [" LM_INPUT_TOKENS
    ", {\"name\": \"pos\", \"dtype\": \"i32\", \"shape\": "
    "[\"b\"]}], " LM_OUTPUT_LOGITS ", \"params\": [], \"state\": [{\"name\": "
    "\"attn.k_cache\", \"dtype\": \"f32\", \"shape\": [\"b\", 1, 24, 1]}]}";

/// The next-token logits after `tokens[0..length)`: a hash of the ordered
/// tokens picks a permutation of distinct values.
void nextLogits(const int32_t *tokens, int64_t length, float *logits) {
  int64_t hash = 0;
  for (int64_t i = 0; i < length; ++i)
    hash = (hash * 131 + tokens[i] + 7) % 1000003;
  for (int64_t v = 0; v < kVocab; ++v)
    logits[v] = static_cast<float>((hash * 31 + v * 17) % 97) / 16.0f - 3.0f;
}

struct MemRef1 {
  void *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
};
struct MemRef2 {
  void *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
};
struct MemRef3 {
  void *allocated, *aligned;
  int64_t offset, sizes[3], strides[3];
};

/// What the models saw: the width n of each call, and whether a cached
/// call wrote past its cache.
std::vector<int64_t> callWidths;
bool cacheOverflow = false;
/// Makes the models return NaN logits.
bool produceNaN = false;
/// The cached model's state: each row's tokens by position.
std::vector<std::vector<int32_t>> cache;

int32_t tokenAt(const MemRef2 &tokens, int64_t row, int64_t i) {
  return static_cast<const int32_t *>(
      tokens.aligned)[tokens.offset + row * tokens.strides[0] +
                      i * tokens.strides[1]];
}

MemRef3 allocateLogits(int64_t b, int64_t n) {
  MemRef3 out = {};
  float *data =
      static_cast<float *>(std::malloc(sizeof(float) * (b * n * kVocab + 1)));
  out.allocated = out.aligned = data;
  out.sizes[0] = b;
  out.sizes[1] = n;
  out.sizes[2] = kVocab;
  out.strides[0] = n * kVocab;
  out.strides[1] = kVocab;
  out.strides[2] = 1;
  return out;
}

void plainInvoke(void **args) {
  const MemRef2 &tokens = *static_cast<const MemRef2 *>(args[1]);
  int64_t b = tokens.sizes[0], n = tokens.sizes[1];
  callWidths.push_back(n);
  MemRef3 out = allocateLogits(b, n);
  float *logits = static_cast<float *>(out.aligned);
  std::vector<int32_t> row(static_cast<size_t>(n));
  for (int64_t r = 0; r < b; ++r) {
    for (int64_t i = 0; i < n; ++i)
      row[static_cast<size_t>(i)] = tokenAt(tokens, r, i);
    for (int64_t i = 0; i < n; ++i)
      nextLogits(row.data(), i + 1, logits + (r * n + i) * kVocab);
  }
  if (produceNaN) // Token 3 at row 0's last position.
    logits[(n - 1) * kVocab + 3] = std::numeric_limits<float>::quiet_NaN();
  *static_cast<MemRef3 *>(args[0]) = out;
}

void cachedInvoke(void **args) {
  const MemRef2 &tokens = *static_cast<const MemRef2 *>(args[1]);
  const MemRef1 &pos = *static_cast<const MemRef1 *>(args[2]);
  int64_t b = tokens.sizes[0], n = tokens.sizes[1];
  callWidths.push_back(n);
  if (static_cast<int64_t>(cache.size()) != b)
    cache.assign(static_cast<size_t>(b), std::vector<int32_t>(kMaxLen, 0));
  MemRef3 out = allocateLogits(b, n);
  float *logits = static_cast<float *>(out.aligned);
  for (int64_t r = 0; r < b; ++r) {
    int64_t p = static_cast<const int32_t *>(
        pos.aligned)[pos.offset + r * pos.strides[0]];
    if (p < 0 || p + n > kMaxLen) {
      cacheOverflow = true;
      continue;
    }
    std::vector<int32_t> &row = cache[static_cast<size_t>(r)];
    for (int64_t i = 0; i < n; ++i)
      row[static_cast<size_t>(p + i)] = tokenAt(tokens, r, i);
    for (int64_t i = 0; i < n; ++i)
      nextLogits(row.data(), p + i + 1, logits + (r * n + i) * kVocab);
  }
  *static_cast<MemRef3 *>(args[0]) = out;
}

struct ModelDeleter {
  void operator()(seqc_model *model) const { seqc_model_free(model); }
};
using ModelPtr = std::unique_ptr<seqc_model, ModelDeleter>;

ModelPtr load(const char *manifest, seqc_invoke_fn invoke) {
  seqc_model *model = nullptr;
  StatusPtr status(seqc_model_load_from(manifest, invoke, &model));
  EXPECT_EQ(status, nullptr) << seqc_status_message(status.get());
  callWidths.clear();
  cache.clear();
  cacheOverflow = false;
  produceNaN = false;
  return ModelPtr(model);
}

using Prompts = std::vector<std::vector<int32_t>>;
using Tokens = std::vector<std::vector<int32_t>>;

/// seqc_generate on `prompts`; the rows' tokens, or the error message.
struct Generated {
  Tokens tokens;
  std::string error;
  seqc_status_code code = SEQC_STATUS_OK;
  seqc_generate_stats stats = {};
};

Generated generate(seqc_model *model, const Prompts &prompts,
                   const seqc_generate_options &options) {
  std::vector<const int32_t *> pointers;
  std::vector<int64_t> lengths;
  for (const auto &prompt : prompts) {
    pointers.push_back(prompt.data());
    lengths.push_back(static_cast<int64_t>(prompt.size()));
  }
  size_t width =
      static_cast<size_t>(std::max<int64_t>(options.max_new_tokens, 0));
  std::vector<int32_t> out(prompts.size() * width + 1, -1);
  std::vector<int64_t> counts(prompts.size() + 1, -1);
  Generated result;
  StatusPtr status(seqc_generate(model, static_cast<int64_t>(prompts.size()),
                                 pointers.data(), lengths.data(), &options,
                                 out.data(), counts.data(), &result.stats));
  if (status) {
    result.code = seqc_status_get_code(status.get());
    result.error = seqc_status_message(status.get());
    // Nothing is written on failure.
    EXPECT_EQ(counts[0], -1);
    EXPECT_EQ(out[0], -1);
    return result;
  }
  for (size_t r = 0; r < prompts.size(); ++r)
    result.tokens.emplace_back(out.begin() + r * width,
                               out.begin() + r * width + counts[r]);
  return result;
}

seqc_generate_options greedy(int64_t maxNew) {
  seqc_generate_options options;
  seqc_generate_options_init(&options);
  options.max_new_tokens = maxNew;
  return options;
}

seqc_generate_options sampled(int64_t maxNew, uint64_t seed) {
  seqc_generate_options options = greedy(maxNew);
  options.temperature = 0.8;
  options.top_k = 10;
  options.top_p = 0.9;
  options.repetition_penalty = 1.3;
  options.seed = seed;
  return options;
}

/// Greedy continuation computed from the model's function directly.
std::vector<int32_t> expectedGreedy(std::vector<int32_t> sequence,
                                    int64_t maxNew) {
  std::vector<int32_t> generated;
  float logits[kVocab];
  for (int64_t step = 0; step < maxNew; ++step) {
    nextLogits(sequence.data(), static_cast<int64_t>(sequence.size()), logits);
    int32_t best = static_cast<int32_t>(
        std::max_element(logits, logits + kVocab) - logits);
    sequence.push_back(best);
    generated.push_back(best);
  }
  return generated;
}

const Prompts kUneven = {
    {3, 1, 4, 1, 5}, {9}, {2, 6, 5}, {3, 5, 8, 9, 7, 9, 3}};

TEST(Generate, OptionDefaults) {
  seqc_generate_options options;
  std::memset(&options, 0xff, sizeof(options));
  seqc_generate_options_init(&options);
  EXPECT_EQ(options.max_new_tokens, 16);
  EXPECT_EQ(options.temperature, 0);
  EXPECT_EQ(options.top_k, 0);
  EXPECT_EQ(options.top_p, 1);
  EXPECT_EQ(options.repetition_penalty, 1);
  EXPECT_EQ(options.seed, 0u);
  EXPECT_EQ(options.stop_ids, nullptr);
  EXPECT_EQ(options.num_stop_ids, 0u);
  EXPECT_EQ(options.callback, nullptr);
  EXPECT_EQ(options.user_data, nullptr);
}

TEST(Generate, GreedyIsTheArgmaxOfTheModel) {
  for (auto [manifest, invoke] : {std::pair{kPlainManifest, &plainInvoke},
                                  std::pair{kCachedManifest, &cachedInvoke}}) {
    ModelPtr model = load(manifest, invoke);
    Generated result = generate(model.get(), kUneven, greedy(10));
    ASSERT_EQ(result.error, "");
    for (size_t r = 0; r < kUneven.size(); ++r)
      EXPECT_EQ(result.tokens[r], expectedGreedy(kUneven[r], 10))
          << manifest << " row " << r;
    // Alone, each prompt gives the same tokens as in the batch.
    for (size_t r = 0; r < kUneven.size(); ++r)
      EXPECT_EQ(generate(model.get(), {kUneven[r]}, greedy(10)).tokens[0],
                result.tokens[r]);
    EXPECT_FALSE(cacheOverflow);
  }
}

TEST(Generate, CachedStepsOneTokenPerCall) {
  ModelPtr model = load(kCachedManifest, cachedInvoke);
  Generated result = generate(model.get(), kUneven, greedy(6));
  ASSERT_EQ(result.error, "");
  // One prefill over the longest prompt, then one token per call.
  EXPECT_EQ(callWidths, (std::vector<int64_t>{7, 1, 1, 1, 1, 1}));
  EXPECT_EQ(result.stats.cached, 1);
  EXPECT_EQ(result.stats.prefill_tokens, 5 + 1 + 3 + 7);
  EXPECT_EQ(result.stats.decode_tokens, 4 * 5);
  EXPECT_GE(result.stats.prefill_seconds, 0);
  EXPECT_GE(result.stats.decode_seconds, 0);

  ModelPtr plain = load(kPlainManifest, plainInvoke);
  result = generate(plain.get(), kUneven, greedy(3));
  ASSERT_EQ(result.error, "");
  // The whole prefix of every row, each step.
  EXPECT_EQ(callWidths, (std::vector<int64_t>{7, 8, 9}));
  EXPECT_EQ(result.stats.cached, 0);
  EXPECT_EQ(result.stats.decode_tokens, 4 * 2);
}

TEST(Generate, CachedAndPlainGiveTheSameTokens) {
  ModelPtr plain = load(kPlainManifest, plainInvoke);
  ModelPtr cached = load(kCachedManifest, cachedInvoke);
  for (uint64_t seed : {0u, 1u, 7u}) {
    seqc_generate_options options = sampled(12, seed);
    int32_t stop = 4;
    options.stop_ids = &stop;
    options.num_stop_ids = 1;
    Generated a = generate(plain.get(), kUneven, options);
    Generated b = generate(cached.get(), kUneven, options);
    ASSERT_EQ(a.error, "");
    ASSERT_EQ(b.error, "");
    EXPECT_EQ(a.tokens, b.tokens) << "seed " << seed;
  }
  EXPECT_FALSE(cacheOverflow);
}

TEST(Generate, ASeedReproducesARun) {
  ModelPtr model = load(kPlainManifest, plainInvoke);
  Generated a = generate(model.get(), kUneven, sampled(12, 5));
  Generated b = generate(model.get(), kUneven, sampled(12, 5));
  Generated c = generate(model.get(), kUneven, sampled(12, 6));
  ASSERT_EQ(a.error, "");
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_NE(a.tokens, c.tokens);
  // Sampling differs from greedy decoding here.
  EXPECT_NE(a.tokens, generate(model.get(), kUneven, greedy(12)).tokens);
  // Row r draws from stream (seed, r), whatever the other rows are.
  Prompts swapped = {kUneven[0], {12, 13}};
  EXPECT_EQ(generate(model.get(), swapped, sampled(12, 5)).tokens[0],
            a.tokens[0]);
}

TEST(Generate, StopIdsAndCallbackStopARow) {
  ModelPtr model = load(kCachedManifest, cachedInvoke);
  std::vector<int32_t> full = expectedGreedy(kUneven[0], 10);
  // Stop at the fourth token's id: the row ends with it.
  seqc_generate_options options = greedy(10);
  int32_t stops[] = {99, full[3]};
  options.stop_ids = stops;
  options.num_stop_ids = 2;
  Generated result = generate(model.get(), {kUneven[0], kUneven[1]}, options);
  ASSERT_EQ(result.error, "");
  size_t firstStop =
      std::find(full.begin(), full.end(), full[3]) - full.begin();
  EXPECT_EQ(result.tokens[0],
            std::vector<int32_t>(full.begin(), full.begin() + firstStop + 1));

  // The callback sees every token in order; nonzero stops that row.
  struct Seen {
    std::vector<std::pair<int64_t, int32_t>> tokens;
  } seen;
  options = greedy(5);
  options.callback = [](int64_t row, int32_t token, void *data) {
    auto *seen = static_cast<Seen *>(data);
    seen->tokens.emplace_back(row, token);
    return row == 1 && seen->tokens.size() >= 4 ? 1 : 0;
  };
  options.user_data = &seen;
  result = generate(model.get(), {kUneven[0], kUneven[1]}, options);
  ASSERT_EQ(result.error, "");
  EXPECT_EQ(result.tokens[0], expectedGreedy(kUneven[0], 5));
  EXPECT_EQ(result.tokens[1], expectedGreedy(kUneven[1], 2));
  std::vector<std::pair<int64_t, int32_t>> expected;
  for (int64_t step = 0; step < 5; ++step)
    for (int64_t row = 0; row < 2; ++row)
      if (step < static_cast<int64_t>(result.tokens[row].size()))
        expected.emplace_back(row, result.tokens[row][step]);
  EXPECT_EQ(seen.tokens, expected);
}

TEST(Generate, NoNewTokens) {
  ModelPtr model = load(kPlainManifest, plainInvoke);
  Generated result = generate(model.get(), kUneven, greedy(0));
  ASSERT_EQ(result.error, "");
  for (const auto &row : result.tokens)
    EXPECT_TRUE(row.empty());
  EXPECT_TRUE(callWidths.empty());
}

/// Expects `result` to fail with `code` and a message containing `message`.
void expectError(const Generated &result, seqc_status_code code,
                 const std::string &message) {
  EXPECT_EQ(result.code, code) << result.error;
  EXPECT_NE(result.error.find(message), std::string::npos)
      << "message: " << result.error << "\nexpected: " << message;
}

TEST(Generate, BadInputsAreClearErrorsAndTheModelStaysUsable) {
  ModelPtr model = load(kCachedManifest, cachedInvoke);
  std::vector<int32_t> reference = expectedGreedy(kUneven[1], 4);
  auto stillWorks = [&] {
    Generated result = generate(model.get(), {kUneven[1]}, greedy(4));
    EXPECT_EQ(result.error, "");
    if (result.error.empty())
      EXPECT_EQ(result.tokens[0], reference);
  };
  auto options = [](auto edit) {
    seqc_generate_options o = greedy(4);
    edit(o);
    return o;
  };
  struct Case {
    Prompts prompts;
    seqc_generate_options options;
    const char *message;
  } cases[] = {
      {{{1, 2}, {}},
       greedy(4),
       "prompt 1 is empty: a prompt needs at least one token"},
      {{{1, 16}},
       greedy(4),
       "prompt 0: token 1 is 16, outside the range [0, 15] of input 'tokens'"},
      {{{-1}}, greedy(4), "token 0 is -1, outside the range [0, 15]"},
      {{std::vector<int32_t>(20, 1)},
       greedy(5),
       "prompt 0 has 20 tokens; with max_new_tokens 5 that is 25, more than "
       "the 24 the model holds (the length of its cache 'attn.k_cache')"},
      {{std::vector<int32_t>(25, 1)}, greedy(0), "more than the 24"},
      {{{1}},
       options([](auto &o) { o.max_new_tokens = -1; }),
       "max_new_tokens must be >= 0, got -1"},
      {{{1}},
       options([](auto &o) { o.temperature = -1; }),
       "temperature must be a finite number >= 0"},
      {{{1}},
       options([](auto &o) { o.temperature = NAN; }),
       "temperature must be a finite number >= 0 (0 is greedy decoding), got "
       "nan"},
      {{{1}}, options([](auto &o) { o.top_k = -3; }), "top_k must be >= 0"},
      {{{1}}, options([](auto &o) { o.top_p = 0; }), "top_p must be in (0, 1]"},
      {{{1}}, options([](auto &o) { o.top_p = 1.01; }), "got 1.01"},
      {{{1}},
       options([](auto &o) { o.repetition_penalty = 0; }),
       "repetition_penalty must be a finite number > 0"},
      {{{1}},
       options([](auto &o) { o.num_stop_ids = 2; }),
       "stop_ids is NULL but num_stop_ids is 2"},
  };
  for (const Case &c : cases) {
    expectError(generate(model.get(), c.prompts, c.options),
                SEQC_STATUS_INVALID_ARGUMENT, c.message);
    stillWorks();
  }
  EXPECT_FALSE(cacheOverflow);

  // NULL arguments and an empty batch.
  seqc_generate_options o = greedy(4);
  int32_t prompt[] = {1};
  const int32_t *prompts[] = {prompt};
  const int32_t *nullPrompt[] = {nullptr};
  int64_t length = 1;
  int32_t out[4];
  int64_t count;
  struct NullCase {
    seqc_status *status;
    const char *message;
  } nulls[] = {
      {seqc_generate(nullptr, 1, prompts, &length, &o, out, &count, nullptr),
       "seqc_generate: model, prompts, prompt_lengths and out_lengths must "
       "not be NULL"},
      {seqc_generate(model.get(), 1, prompts, &length, &o, nullptr, &count,
                     nullptr),
       "out_tokens must not be NULL"},
      {seqc_generate(model.get(), 1, prompts, &length, &o, out, nullptr,
                     nullptr),
       "must not be NULL"},
      {seqc_generate(model.get(), 0, prompts, &length, &o, out, &count,
                     nullptr),
       "the batch must hold at least one prompt, got 0"},
      {seqc_generate(model.get(), 1, nullPrompt, &length, &o, out, &count,
                     nullptr),
       "prompt 0 is NULL"},
  };
  for (const NullCase &c : nulls) {
    StatusPtr status(c.status);
    ASSERT_NE(status, nullptr) << c.message;
    EXPECT_NE(std::string(seqc_status_message(status.get())).find(c.message),
              std::string::npos)
        << seqc_status_message(status.get());
  }
  // A NULL options is the defaults (16 new tokens).
  int32_t many[16];
  StatusPtr status(seqc_generate(model.get(), 1, prompts, &length, nullptr,
                                 many, &count, nullptr));
  EXPECT_EQ(status, nullptr);
  EXPECT_EQ(count, 16);
  stillWorks();
}

TEST(Generate, AModelErrorNamesTheStepAndTheModelStaysUsable) {
  ModelPtr model = load(kPlainManifest, plainInvoke);
  produceNaN = true;
  expectError(generate(model.get(), {{1, 2}}, greedy(3)),
              SEQC_STATUS_MODEL_ERROR,
              "step 0: row 0: the logit of token 3 is nan");
  produceNaN = false;
  EXPECT_EQ(generate(model.get(), {{1, 2}}, greedy(3)).tokens[0],
            expectedGreedy({1, 2}, 3));
}

TEST(Generate, ModelsThatCannotGenerate) {
  struct Case {
    const char *manifest;
    seqc_status_code code;
    const char *message;
  } cases[] = {
      {"{\"inputs\": [{\"name\": \"ids\", \"dtype\": \"i32\", \"shape\": "
       "[\"b\", \"n\"]}], " LM_OUTPUT_LOGITS "}",
       SEQC_STATUS_NOT_FOUND,
       "generation needs an input 'tokens' (i32 [b, n]): the model has no "
       "input 'tokens' (inputs: ids)"},
      {"{\"inputs\": [{\"name\": \"tokens\", \"dtype\": \"i64\", \"shape\": "
       "[\"b\", \"n\"]}], " LM_OUTPUT_LOGITS "}",
       SEQC_STATUS_INVALID_ARGUMENT,
       "generation needs an input 'tokens' of type i32 [b, n] (n symbolic); "
       "the model's is i64 [b, n]"},
      {"{\"inputs\": [{\"name\": \"tokens\", \"dtype\": \"i32\", \"shape\": "
       "[\"b\", 8]}], " LM_OUTPUT_LOGITS "}",
       SEQC_STATUS_INVALID_ARGUMENT, "the model's is i32 [b, 8]"},
      {"{\"inputs\": [" LM_INPUT_TOKENS "], \"outputs\": [{\"name\": \"y\", "
       "\"dtype\": \"f32\", \"shape\": [\"b\", \"n\", 16]}]}",
       SEQC_STATUS_NOT_FOUND,
       "generation needs an output 'logits' (f32 [b, n, V]): the model has "
       "no output 'logits' (outputs: y)"},
      {"{\"inputs\": [" LM_INPUT_TOKENS "], \"outputs\": [{\"name\": "
       "\"logits\", \"dtype\": \"f32\", \"shape\": [\"b\", 16]}]}",
       SEQC_STATUS_INVALID_ARGUMENT,
       "generation needs an output 'logits' of type f32 [b, n, V]; the "
       "model's is f32 [b, 16]"},
      {"{\"inputs\": [" LM_INPUT_TOKENS ", {\"name\": \"mask\", \"dtype\": "
       "\"f32\", \"shape\": [\"n\"]}], " LM_OUTPUT_LOGITS "}",
       SEQC_STATUS_INVALID_ARGUMENT,
       "generation binds only the inputs 'tokens', 'pos' and the valid counts "
       "of a recurrent state; the model also "
       "has input 'mask' (f32 [n])"},
      {"{\"inputs\": [" LM_INPUT_TOKENS ", {\"name\": \"pos\", \"dtype\": "
       "\"i32\", \"shape\": [\"n\"]}], " LM_OUTPUT_LOGITS "}",
       SEQC_STATUS_INVALID_ARGUMENT,
       "generation needs an input 'pos' of type i32 [b] (the batch dimension "
       "of 'tokens'), or none; the model's is i32 [n]"},
      {"{\"inputs\": [" LM_INPUT_TOKENS "], " LM_OUTPUT_LOGITS
       ", \"state\": [{\"name\": \"s\", \"dtype\": \"f32\", \"shape\": "
       "[\"b\", 4]}]}",
       SEQC_STATUS_INVALID_ARGUMENT,
       "the model has state but no input 'pos' (i32 [b]): generation cannot "
       "tell it where each row's tokens go"},
      {"{\"inputs\": [{\"name\": \"tokens\", \"dtype\": \"i32\", \"shape\": "
       "[1, \"n\"]}], \"outputs\": [{\"name\": \"logits\", \"dtype\": "
       "\"f32\", \"shape\": [1, \"n\", 16]}]}",
       SEQC_STATUS_INVALID_ARGUMENT,
       "the model's input 'tokens' has a static batch of 1; got 2 prompts"},
  };
  for (const Case &c : cases) {
    ModelPtr model = load(c.manifest, plainInvoke);
    ASSERT_NE(model, nullptr) << c.manifest;
    expectError(generate(model.get(), {{1}, {2}}, greedy(2)), c.code,
                c.message);
  }
}

TEST(Generate, StaticBatch) {
  // A static batch of 2 keeps finished rows in every call.
  ModelPtr model = load(
      "{\"inputs\": [{\"name\": \"tokens\", \"dtype\": \"i32\", \"shape\": "
      "[2, \"n\"]}], \"outputs\": [{\"name\": \"logits\", \"dtype\": "
      "\"f32\", \"shape\": [2, \"n\", 16]}]}",
      plainInvoke);
  seqc_generate_options options = greedy(4);
  std::vector<int32_t> full = expectedGreedy({5}, 4);
  options.stop_ids = &full[0];
  options.num_stop_ids = 1;
  Generated result = generate(model.get(), {{5}, {3, 3}}, options);
  ASSERT_EQ(result.error, "");
  EXPECT_EQ(result.tokens[0], std::vector<int32_t>{full[0]});
  std::vector<int32_t> second = expectedGreedy({3, 3}, 4);
  second.erase(std::find(second.begin(), second.end(), full[0]) +
                   (std::count(second.begin(), second.end(), full[0]) ? 1 : 0),
               second.end());
  EXPECT_EQ(result.tokens[1], second);
}

} // namespace
