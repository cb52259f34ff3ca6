//===- Sampler.cpp - Choosing the next token from logits ------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "Sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace seqc {

seqc_status *checkSamplerConfig(const SamplerConfig &config) {
  // Written so that NaN fails every check.
  if (!(config.temperature >= 0) || std::isinf(config.temperature))
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "temperature must be a finite number >= 0 (0 is "
                      "greedy decoding), got %g",
                      config.temperature);
  if (config.topK < 0)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "top_k must be >= 0 (0 keeps every token), got %lld",
                      static_cast<long long>(config.topK));
  if (!(config.topP > 0 && config.topP <= 1))
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "top_p must be in (0, 1] (1 keeps every token), got %g",
                      config.topP);
  if (!(config.repetitionPenalty > 0) || std::isinf(config.repetitionPenalty))
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "repetition_penalty must be a finite number > 0 (1 "
                      "changes nothing), got %g",
                      config.repetitionPenalty);
  return nullptr;
}

Sampler::Sampler(const SamplerConfig &config, uint64_t seed, int64_t row)
    : config(config), rng(seed, "generate row " + std::to_string(row)) {}

double Sampler::uniform53() {
  return static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
}

void Sampler::applyPenalty(float *logits, int64_t vocab, const int32_t *history,
                           size_t length) {
  if (stamp.size() != static_cast<size_t>(vocab)) {
    stamp.assign(static_cast<size_t>(vocab), 0);
    epoch = 0;
  }
  if (++epoch == 0) { // Wrapped: start the marks afresh.
    std::fill(stamp.begin(), stamp.end(), 0);
    epoch = 1;
  }
  auto penalty = static_cast<float>(config.repetitionPenalty);
  for (size_t i = 0; i < length; ++i) {
    int32_t token = history[i];
    // A prompt may hold ids the logits do not cover (an embedding wider
    // than the head): they have no logit to penalize.
    if (token < 0 || token >= vocab ||
        stamp[static_cast<size_t>(token)] == epoch)
      continue;
    stamp[static_cast<size_t>(token)] = epoch;
    float &logit = logits[token];
    logit = logit > 0 ? logit / penalty : logit * penalty;
  }
}

seqc_status *Sampler::next(float *logits, int64_t vocab, const int32_t *history,
                           size_t length, int32_t *out_token) {
  if (config.repetitionPenalty != 1)
    applyPenalty(logits, vocab, history, length);

  // The argmax, lowest id first among equals; every logit is checked.
  const float infinity = std::numeric_limits<float>::infinity();
  float best = -infinity;
  int64_t bestId = -1;
  for (int64_t v = 0; v < vocab; ++v) {
    float logit = logits[v];
    if (std::isnan(logit) || logit == infinity)
      return makeStatus(SEQC_STATUS_MODEL_ERROR,
                        "the logit of token %lld is %g",
                        static_cast<long long>(v), static_cast<double>(logit));
    if (logit > best) {
      best = logit;
      bestId = v;
    }
  }
  if (bestId < 0)
    return makeStatus(SEQC_STATUS_MODEL_ERROR,
                      "every logit is -inf (or the vocabulary is empty): no "
                      "token can be chosen");
  if (config.temperature == 0) {
    *out_token = static_cast<int32_t>(bestId);
    return nullptr;
  }

  // More likely first; equal logits by id. Temperature is monotone, so
  // top-k may select on the logits.
  auto moreLikely = [](const std::pair<float, int32_t> &a,
                       const std::pair<float, int32_t> &b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  candidates.clear();
  for (int64_t v = 0; v < vocab; ++v)
    if (logits[v] > -infinity)
      candidates.emplace_back(logits[v], static_cast<int32_t>(v));
  // The draw walks the candidates in this order: by id, or most likely
  // first once top-k or top-p selected some.
  bool truncated =
      config.topK > 0 && static_cast<size_t>(config.topK) < candidates.size();
  if (truncated) {
    std::nth_element(candidates.begin(), candidates.begin() + config.topK,
                     candidates.end(), moreLikely);
    candidates.resize(static_cast<size_t>(config.topK));
  }
  bool nucleus = config.topP < 1;
  if (truncated || nucleus)
    std::sort(candidates.begin(), candidates.end(), moreLikely);

  // Unnormalized probabilities: exp((logit - max) / T) is at most 1 and
  // cannot overflow, even for a temperature near 0.
  weights.resize(candidates.size());
  double total = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    weights[i] = std::exp(
        (static_cast<double>(candidates[i].first) - static_cast<double>(best)) /
        config.temperature);
    total += weights[i];
  }
  if (nucleus) {
    // The smallest prefix (most likely first) whose mass reaches top_p.
    double threshold = config.topP * total, mass = 0;
    size_t keep = 0;
    while (keep < candidates.size() && mass < threshold)
      mass += weights[keep++];
    candidates.resize(keep);
    weights.resize(keep);
    total = mass;
  }

  double target = uniform53() * total, mass = 0;
  size_t chosen = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (weights[i] == 0)
      continue;
    chosen = i;
    mass += weights[i];
    if (target < mass)
      break;
  }
  *out_token = candidates[chosen].second;
  return nullptr;
}

} // namespace seqc
