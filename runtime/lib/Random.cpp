//===- Random.cpp - Deterministic random weights and inputs ---------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "Random.h"
#include "Quantize.h"

#include <cmath>
#include <vector>

namespace seqc {

namespace {

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t fnv1a(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.substr(text.size() - suffix.size()) == suffix;
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

/// True if the name is `component` or ends in ".component" (so "b" matches
/// "attn.b" but not "emb").
bool endsWithComponent(std::string_view name, std::string_view component) {
  if (name == component)
    return true;
  return name.size() > component.size() && endsWith(name, component) &&
         name[name.size() - component.size() - 1] == '.';
}

void storeFloat(seqc_dtype dtype, void *data, size_t index, double value) {
  switch (dtype) {
  case SEQC_DTYPE_F32:
    static_cast<float *>(data)[index] = static_cast<float>(value);
    break;
  case SEQC_DTYPE_F64:
    static_cast<double *>(data)[index] = value;
    break;
  case SEQC_DTYPE_F16:
    static_cast<uint16_t *>(data)[index] =
        floatToHalf(static_cast<float>(value));
    break;
  case SEQC_DTYPE_BF16:
    static_cast<uint16_t *>(data)[index] =
        floatToBFloat16(static_cast<float>(value));
    break;
  case SEQC_DTYPE_I32:
    static_cast<int32_t *>(data)[index] = static_cast<int32_t>(value);
    break;
  case SEQC_DTYPE_I64:
    static_cast<int64_t *>(data)[index] = static_cast<int64_t>(value);
    break;
  default:
    break;
  }
}

} // namespace

Rng::Rng(uint64_t seed, std::string_view stream) {
  uint64_t sm = seed ^ rotl(fnv1a(stream), 17);
  for (uint64_t &word : state)
    word = splitmix64(sm);
}

uint64_t Rng::next() {
  uint64_t result = rotl(state[1] * 5, 7) * 9;
  uint64_t t = state[1] << 17;
  state[2] ^= state[0];
  state[3] ^= state[1];
  state[1] ^= state[2];
  state[0] ^= state[3];
  state[2] ^= t;
  state[3] = rotl(state[3], 45);
  return result;
}

double Rng::uniform24() {
  return static_cast<double>(next() >> 40) * (1.0 / 16777216.0);
}

double Rng::normal() {
  double sum = 0;
  for (int i = 0; i < 12; ++i)
    sum += uniform24();
  return sum - 6.0;
}

int64_t Rng::uniformInt(int64_t lo, int64_t hi) {
  uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span == UINT64_MAX)
    return static_cast<int64_t>(next());
  uint64_t n = span + 1;
  unsigned __int128 product = static_cast<unsigned __int128>(next()) * n;
  uint64_t low = static_cast<uint64_t>(product);
  if (low < n) {
    uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      product = static_cast<unsigned __int128>(next()) * n;
      low = static_cast<uint64_t>(product);
    }
  }
  return static_cast<int64_t>(static_cast<uint64_t>(lo) +
                              static_cast<uint64_t>(product >> 64));
}

ParamInit classifyParam(std::string_view name, int rank, seqc_dtype dtype) {
  if (!isFloatDType(dtype))
    return ParamInit::Zeros;
  if (rank == 1 && ((endsWith(name, "weight") &&
                     (contains(name, "norm") || contains(name, "ln"))) ||
                    endsWith(name, "gamma") || endsWithComponent(name, "g") ||
                    endsWith(name, "scale")))
    return ParamInit::Ones;
  if (endsWith(name, "bias") || endsWith(name, "beta") ||
      endsWithComponent(name, "b"))
    return ParamInit::Zeros;
  return ParamInit::Uniform;
}

void initParam(std::string_view name, seqc_dtype dtype, const int64_t *shape,
               int rank, uint64_t seed, void *data) {
  int64_t numel = 0;
  if (!checkedNumel(shape, rank, &numel))
    return;
  if (isBlockDType(dtype)) {
    // The f32 values of the same parameter in f32, quantized: a model and
    // its quantized variant get the same weights up to the rounding.
    std::vector<float> values(static_cast<size_t>(numel));
    initParam(name, SEQC_DTYPE_F32, shape, rank, seed, values.data());
    quantizeRows(dtype, values.data(), data, values.size(),
                 rank ? static_cast<size_t>(shape[rank - 1]) : 1);
    return;
  }
  size_t count = static_cast<size_t>(numel);
  switch (classifyParam(name, rank, dtype)) {
  case ParamInit::Ones:
    for (size_t i = 0; i < count; ++i)
      storeFloat(dtype, data, i, 1.0);
    return;
  case ParamInit::Zeros:
    for (size_t i = 0; i < count; ++i)
      storeFloat(dtype, data, i, 0.0);
    return;
  case ParamInit::Uniform:
    break;
  }
  // The PyTorch nn.Linear default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
  // sqrt and division are correctly rounded in IEEE arithmetic, so `bound`
  // is the same everywhere; so is (k * 2^-23 - 1) * bound.
  int64_t fanIn = rank == 0 || shape[rank - 1] == 0 ? 1 : shape[rank - 1];
  double bound = 1.0 / std::sqrt(static_cast<double>(fanIn));
  Rng rng(seed, name);
  for (size_t i = 0; i < count; ++i) {
    double symmetric =
        static_cast<double>(rng.next() >> 40) * (1.0 / 8388608.0) - 1.0;
    storeFloat(dtype, data, i, symmetric * bound);
  }
}

void fillNormal(Rng &rng, seqc_dtype dtype, size_t numel, void *data) {
  for (size_t i = 0; i < numel; ++i)
    storeFloat(dtype, data, i, rng.normal());
}

void fillIntRange(Rng &rng, seqc_dtype dtype, size_t numel, int64_t lo,
                  int64_t hi, void *data) {
  for (size_t i = 0; i < numel; ++i) {
    int64_t value = rng.uniformInt(lo, hi);
    if (dtype == SEQC_DTYPE_I32)
      static_cast<int32_t *>(data)[i] = static_cast<int32_t>(value);
    else
      static_cast<int64_t *>(data)[i] = value;
  }
}

} // namespace seqc
