//===- Sampler.h - Choosing the next token from logits ----------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The token sampler of seqc_generate: greedy decoding, or sampling after a
// repetition penalty, a temperature, top-k and top-p, in the order of
// Hugging Face's logits processors and warpers. Each batch row has its own
// sampler and its own random stream (Random.h's xoshiro256**, seeded from
// the user seed and the row index), so a seeded run reproduces exactly and
// a row's draws do not depend on the other rows.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_RUNTIME_SAMPLER_H
#define SEQC_RUNTIME_SAMPLER_H

#include "Random.h"
#include "Support.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace seqc {

/// What a sampler does with a row's logits.
struct SamplerConfig {
  /// 0 is greedy decoding (the argmax; ties go to the lowest id), > 0 samples
  /// from softmax(logits / temperature).
  double temperature = 0;
  /// When sampling: only the top_k most likely tokens (ties at the boundary
  /// go to the lowest ids); 0 keeps every token.
  int64_t topK = 0;
  /// When sampling: only the smallest set of most likely tokens whose
  /// probability (after the temperature and top-k) reaches top_p; 1 keeps
  /// every token.
  double topP = 1;
  /// Hugging Face's repetition penalty, greedy or not: a token already in
  /// the row (prompt included) has its logit divided by the penalty when
  /// positive and multiplied by it otherwise; 1 changes nothing.
  double repetitionPenalty = 1;
};

/// INVALID_ARGUMENT naming the first parameter out of range: temperature
/// < 0 or not a number, top_k < 0, top_p outside (0, 1], a penalty <= 0
/// or not a number.
seqc_status *checkSamplerConfig(const SamplerConfig &config);

/// Chooses one batch row's tokens, one call per step.
class Sampler {
public:
  /// `config` must have passed checkSamplerConfig. The random stream is
  /// that of `seed` and `row`.
  Sampler(const SamplerConfig &config, uint64_t seed, int64_t row);

  /// Sets *out_token to the next token from the `vocab` logits of the row,
  /// whose tokens so far (prompt, then generated) are history[0..length).
  /// `logits` is scratch: the penalty is applied in place. A NaN or +inf
  /// logit, or logits that are all -inf, are MODEL_ERROR: there is no
  /// distribution to choose from.
  seqc_status *next(float *logits, int64_t vocab, const int32_t *history,
                    size_t length, int32_t *out_token);

  /// Uniform in [0, 1) with 53 random bits: k * 2^-53.
  double uniform53();

private:
  SamplerConfig config;
  Rng rng;
  /// Per-token marks of the penalty: stamp[t] == epoch when token t was
  /// seen in this call.
  std::vector<uint32_t> stamp;
  uint32_t epoch = 0;
  /// The candidates of a draw: (logit, id).
  std::vector<std::pair<float, int32_t>> candidates;
  std::vector<double> weights;

  void applyPenalty(float *logits, int64_t vocab, const int32_t *history,
                    size_t length);
};

} // namespace seqc

#endif // SEQC_RUNTIME_SAMPLER_H
