//===- Random.h - Deterministic random weights and inputs -------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// --random-weights and --random-inputs must produce the same bytes on every
// machine and with every compiler, so that a bug seen on one machine
// reproduces on another. Hence an own PRNG (xoshiro256** seeded by
// splitmix64; <random>'s distributions are implementation-defined) and only
// IEEE-exact arithmetic after it: no libm calls, whose last bit varies.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_RUNTIME_RANDOM_H
#define SEQC_RUNTIME_RANDOM_H

#include "Support.h"

#include <cstdint>
#include <string_view>

namespace seqc {

/// xoshiro256** (Blackman and Vigna). Each stream is seeded from a user seed
/// and a stream name, so a parameter's values do not depend on the order or
/// presence of the others.
class Rng {
public:
  Rng(uint64_t seed, std::string_view stream);

  uint64_t next();
  /// Uniform in [0, 1) with 24 random bits: k * 2^-24.
  double uniform24();
  /// Approximately standard normal: the sum of 12 uniform24() minus 6
  /// (Irwin-Hall; mean 0, variance 1, support [-6, 6)). Every step is exact
  /// in double precision, so the result is bit-reproducible.
  double normal();
  /// Uniform over the inclusive range [lo, hi], lo <= hi, without bias
  /// (Lemire's multiply-and-reject method).
  int64_t uniformInt(int64_t lo, int64_t hi);

private:
  uint64_t state[4];
};

/// How --random-weights initializes a parameter; see seqc_runtime.h.
enum class ParamInit { Ones, Zeros, Uniform };

/// Applies the initialization rule to a parameter's name, rank and dtype.
ParamInit classifyParam(std::string_view name, int rank, seqc_dtype dtype);

/// Fills `data` (the parameter's contiguous storage) per the rule, using the
/// stream `name` of `seed`.
void initParam(std::string_view name, seqc_dtype dtype, const int64_t *shape,
               int rank, uint64_t seed, void *data);

/// Fills `numel` elements of float `dtype` with rng.normal().
void fillNormal(Rng &rng, seqc_dtype dtype, size_t numel, void *data);

/// Fills `numel` elements of integer `dtype` uniformly over [lo, hi]; the
/// caller ensures the range fits `dtype`.
void fillIntRange(Rng &rng, seqc_dtype dtype, size_t numel, int64_t lo,
                  int64_t hi, void *data);

} // namespace seqc

#endif // SEQC_RUNTIME_RANDOM_H
