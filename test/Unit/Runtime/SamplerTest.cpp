//===- SamplerTest.cpp - Tests of the token sampler -----------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The sampler of seqc_generate (Sampler.h): greedy is the argmax, top-k and
// top-p never leave their sets, the temperature -> 0 limit is greedy, a
// seed reproduces its draws, the repetition penalty's sign rule, and every
// out-of-range parameter.
//
//===----------------------------------------------------------------------===//

#include "Sampler.h"
#include "Random.h"
#include "Support.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <string>
#include <vector>

using namespace seqc;

namespace {

/// Distinct pseudo-random logits in about [-4, 4).
std::vector<float> randomLogits(int64_t vocab, uint64_t seed) {
  Rng rng(seed, "sampler test");
  std::vector<float> logits(static_cast<size_t>(vocab));
  for (float &logit : logits)
    logit = static_cast<float>(rng.uniform24() * 8 - 4);
  return logits;
}

int32_t draw(const SamplerConfig &config, uint64_t seed, int64_t row,
             std::vector<float> logits, std::vector<int32_t> history = {}) {
  Sampler sampler(config, seed, row);
  int32_t token = -1;
  StatusPtr status(sampler.next(logits.data(),
                                static_cast<int64_t>(logits.size()),
                                history.data(), history.size(), &token));
  EXPECT_EQ(status, nullptr) << seqc_status_message(status.get());
  return token;
}

/// The ids by decreasing logit (ties by id).
std::vector<int32_t> ranking(const std::vector<float> &logits) {
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    float la = logits[static_cast<size_t>(a)],
          lb = logits[static_cast<size_t>(b)];
    return la > lb || (la == lb && a < b);
  });
  return ids;
}

SamplerConfig sampling(double temperature) {
  SamplerConfig config;
  config.temperature = temperature;
  return config;
}

TEST(Sampler, GreedyIsTheArgmax) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    std::vector<float> logits = randomLogits(97, seed);
    int32_t argmax = static_cast<int32_t>(
        std::max_element(logits.begin(), logits.end()) - logits.begin());
    EXPECT_EQ(draw(SamplerConfig(), seed, 0, logits), argmax);
  }
}

TEST(Sampler, GreedyTiesGoToTheLowestId) {
  std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f, 2.0f};
  EXPECT_EQ(draw(SamplerConfig(), 0, 0, logits), 1);
  // -inf is a masked token, not an error, while one token is finite.
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(draw(SamplerConfig(), 0, 0, {-inf, -inf, -3.0f}), 2);
  EXPECT_EQ(draw(sampling(1), 0, 0, {-inf, -inf, -3.0f}), 2);
}

TEST(Sampler, TopKNeverLeavesTheKMostLikely) {
  std::vector<float> logits = randomLogits(200, 7);
  std::vector<int32_t> ranked = ranking(logits);
  for (int64_t k : {1, 5, 20}) {
    SamplerConfig config = sampling(1.5);
    config.topK = k;
    std::set<int32_t> allowed(ranked.begin(), ranked.begin() + k), seen;
    for (uint64_t seed = 0; seed < 2000; ++seed) {
      int32_t token = draw(config, seed, 0, logits);
      EXPECT_TRUE(allowed.count(token)) << "k " << k << " seed " << seed;
      seen.insert(token);
    }
    // It samples: every one of the k tokens comes up.
    EXPECT_EQ(seen.size(), static_cast<size_t>(k)) << "k " << k;
  }
}

TEST(Sampler, TopPNeverLeavesTheNucleus) {
  std::vector<float> logits = randomLogits(100, 11);
  for (double temperature : {0.7, 1.0, 2.0}) {
    for (double p : {0.1, 0.5, 0.9}) {
      // The nucleus, computed independently: the smallest set of most
      // likely tokens whose probability reaches p.
      std::vector<int32_t> ranked = ranking(logits);
      double maxLogit = *std::max_element(logits.begin(), logits.end());
      std::vector<double> probs;
      double total = 0;
      for (int32_t id : ranked) {
        probs.push_back(std::exp((logits[static_cast<size_t>(id)] - maxLogit) /
                                 temperature));
        total += probs.back();
      }
      std::set<int32_t> nucleus, seen;
      double mass = 0;
      for (size_t i = 0; i < ranked.size() && mass < p; ++i) {
        nucleus.insert(ranked[i]);
        mass += probs[i] / total;
      }
      SamplerConfig config = sampling(temperature);
      config.topP = p;
      for (uint64_t seed = 0; seed < 1000; ++seed) {
        int32_t token = draw(config, seed, 3, logits);
        EXPECT_TRUE(nucleus.count(token))
            << "T " << temperature << " p " << p << " seed " << seed;
        seen.insert(token);
      }
      EXPECT_GT(seen.size(), nucleus.size() / 2);
    }
  }
}

TEST(Sampler, TopPAfterTopK) {
  // Top-k keeps {0, 1, 2} (probabilities 0.5, 0.25, 0.25 after it); top-p
  // 0.6 then keeps {0, 1}: renormalized over the k, not the vocabulary.
  std::vector<float> logits = {std::log(4.0f), std::log(2.0f), std::log(2.0f),
                               std::log(1.9f), std::log(1.9f)};
  SamplerConfig config = sampling(1);
  config.topK = 3;
  config.topP = 0.6;
  std::set<int32_t> seen;
  for (uint64_t seed = 0; seed < 500; ++seed)
    seen.insert(draw(config, seed, 0, logits));
  EXPECT_EQ(seen, (std::set<int32_t>{0, 1}));
}

TEST(Sampler, ZeroTemperatureLimitIsGreedy) {
  for (uint64_t seed = 0; seed < 200; ++seed) {
    std::vector<float> logits = randomLogits(64, seed);
    int32_t greedy = draw(SamplerConfig(), 0, 0, logits);
    for (double temperature : {1e-6, 1e-30, 1e-300})
      EXPECT_EQ(draw(sampling(temperature), seed, 0, logits), greedy);
  }
}

TEST(Sampler, SamplingFollowsTheDistribution) {
  // Two tokens with probabilities 0.2 and 0.8 at temperature 1.
  std::vector<float> logits = {std::log(1.0f), std::log(4.0f)};
  int ones = 0;
  const int draws = 20000;
  for (uint64_t seed = 0; seed < draws; ++seed)
    ones += draw(sampling(1), seed, 0, logits);
  EXPECT_NEAR(ones / double(draws), 0.8, 0.015);
}

TEST(Sampler, ASeedReproducesItsDraws) {
  std::vector<float> logits = randomLogits(50, 3);
  SamplerConfig config = sampling(1.3);
  config.topK = 30;
  config.topP = 0.95;
  config.repetitionPenalty = 1.2;
  auto sequence = [&](uint64_t seed, int64_t row) {
    Sampler sampler(config, seed, row);
    std::vector<int32_t> history = {1, 2, 3};
    for (int step = 0; step < 100; ++step) {
      std::vector<float> scratch = logits;
      int32_t token;
      StatusPtr status(sampler.next(scratch.data(), 50, history.data(),
                                    history.size(), &token));
      EXPECT_EQ(status, nullptr);
      history.push_back(token);
    }
    return history;
  };
  EXPECT_EQ(sequence(42, 0), sequence(42, 0));
  EXPECT_NE(sequence(42, 0), sequence(43, 0));
  // Each row has its own stream.
  EXPECT_NE(sequence(42, 0), sequence(42, 1));
  // The stream is the documented one: xoshiro256** of (seed, "generate row
  // r"), 53 bits per draw.
  Sampler sampler(config, 42, 0);
  Rng rng(42, "generate row 0");
  EXPECT_EQ(sampler.uniform53(),
            static_cast<double>(rng.next() >> 11) * 0x1.0p-53);
}

TEST(Sampler, RepetitionPenaltySignRule) {
  // Hugging Face: a seen token's logit is divided by the penalty when
  // positive, multiplied by it otherwise; each id once, however often seen.
  SamplerConfig config;
  config.repetitionPenalty = 2;
  Sampler sampler(config, 0, 0);
  std::vector<float> logits = {3.0f, -1.0f, 2.5f, 0.0f, 1.0f};
  std::vector<int32_t> history = {0, 1, 0, 3, 0, 99, -5};
  int32_t token;
  StatusPtr status(
      sampler.next(logits.data(), 5, history.data(), history.size(), &token));
  ASSERT_EQ(status, nullptr);
  EXPECT_EQ(logits, (std::vector<float>{1.5f, -2.0f, 2.5f, 0.0f, 1.0f}));
  // 3.0 / 2 = 1.5 fell below 2.5: the penalty moved the argmax.
  EXPECT_EQ(token, 2);
  // A penalty below 1 favours the seen tokens.
  config.repetitionPenalty = 0.5;
  EXPECT_EQ(draw(config, 0, 0, {1.0f, 1.5f}, {0}), 0);
  EXPECT_EQ(draw(config, 0, 0, {-1.0f, -0.6f}, {0}), 0);
}

TEST(Sampler, NonFiniteLogitsAreModelErrors) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  float inf = std::numeric_limits<float>::infinity();
  struct Case {
    std::vector<float> logits;
    const char *message;
  } cases[] = {
      {{0.0f, nan}, "the logit of token 1 is nan"},
      {{inf, 0.0f}, "the logit of token 0 is inf"},
      {{-inf, -inf}, "every logit is -inf"},
  };
  for (const Case &c : cases) {
    for (double temperature : {0.0, 1.0}) {
      Sampler sampler(sampling(temperature), 0, 0);
      std::vector<float> logits = c.logits;
      int32_t token = -7;
      StatusPtr status(sampler.next(logits.data(), 2, nullptr, 0, &token));
      ASSERT_NE(status, nullptr);
      EXPECT_EQ(seqc_status_get_code(status.get()), SEQC_STATUS_MODEL_ERROR);
      EXPECT_NE(std::string(seqc_status_message(status.get())).find(c.message),
                std::string::npos)
          << seqc_status_message(status.get());
      EXPECT_EQ(token, -7);
    }
  }
}

TEST(Sampler, BadParameters) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  double inf = std::numeric_limits<double>::infinity();
  struct Case {
    SamplerConfig config;
    const char *message;
  };
  std::vector<Case> cases;
  auto add = [&](auto edit, const char *message) {
    SamplerConfig config;
    edit(config);
    cases.push_back({config, message});
  };
  add([](SamplerConfig &c) { c.temperature = -0.5; },
      "temperature must be a finite number >= 0 (0 is greedy decoding), "
      "got -0.5");
  add([&](SamplerConfig &c) { c.temperature = nan; }, "got nan");
  add([&](SamplerConfig &c) { c.temperature = inf; }, "got inf");
  add([](SamplerConfig &c) { c.topK = -1; },
      "top_k must be >= 0 (0 keeps every token), got -1");
  add([](SamplerConfig &c) { c.topP = 0; },
      "top_p must be in (0, 1] (1 keeps every token), got 0");
  add([](SamplerConfig &c) { c.topP = 1.5; }, "got 1.5");
  add([&](SamplerConfig &c) { c.topP = nan; }, "top_p must be in (0, 1]");
  add([](SamplerConfig &c) { c.topP = -0.1; }, "got -0.1");
  add([](SamplerConfig &c) { c.repetitionPenalty = 0; },
      "repetition_penalty must be a finite number > 0 (1 changes nothing), "
      "got 0");
  add([](SamplerConfig &c) { c.repetitionPenalty = -1; }, "got -1");
  add([&](SamplerConfig &c) { c.repetitionPenalty = nan; }, "got nan");
  for (const Case &c : cases) {
    StatusPtr status(checkSamplerConfig(c.config));
    ASSERT_NE(status, nullptr) << c.message;
    EXPECT_EQ(seqc_status_get_code(status.get()), SEQC_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(seqc_status_message(status.get())).find(c.message),
              std::string::npos)
        << seqc_status_message(status.get());
  }
  SamplerConfig edge;
  edge.topP = 1;
  edge.temperature = 0;
  edge.repetitionPenalty = 1e-3;
  EXPECT_EQ(StatusPtr(checkSamplerConfig(edge)), nullptr);
}

} // namespace
