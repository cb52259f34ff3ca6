//===- Quantize.cpp - GGUF block formats of weights -----------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "Quantize.h"
#include "Support.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

namespace seqc {
namespace {

constexpr size_t kBlock = 32;

/// Writes the f16 of `value` at `out` (little-endian).
void storeHalf(uint8_t *out, float value) {
  uint16_t bits = floatToHalf(value);
  out[0] = static_cast<uint8_t>(bits & 0xff);
  out[1] = static_cast<uint8_t>(bits >> 8);
}

float loadHalf(const uint8_t *in) {
  return halfToFloat(static_cast<uint16_t>(in[0] | (in[1] << 8)));
}

/// quantize_row_q8_0_ref: d = max|x| / 127, q = round(x / d).
void quantizeQ8_0(const float *x, uint8_t *block) {
  float amax = 0.0f;
  for (size_t j = 0; j < kBlock; ++j)
    amax = std::max(amax, std::fabs(x[j]));
  float d = amax / 127;
  float id = d ? 1.0f / d : 0.0f;
  storeHalf(block, d);
  for (size_t j = 0; j < kBlock; ++j)
    block[2 + j] =
        static_cast<uint8_t>(static_cast<int8_t>(std::roundf(x[j] * id)));
}

/// quantize_row_q4_0_ref: d = -m / 8 with m the value of largest magnitude,
/// q = min(15, trunc(x / d + 8.5)).
void quantizeQ4_0(const float *x, uint8_t *block) {
  float amax = 0.0f, max = 0.0f;
  for (size_t j = 0; j < kBlock; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  float d = max / -8;
  float id = d ? 1.0f / d : 0.0f;
  storeHalf(block, d);
  for (size_t j = 0; j < kBlock / 2; ++j) {
    // Rounded products, then the offset (separate statements: no FMA).
    float x0 = x[j] * id;
    float x1 = x[j + kBlock / 2] * id;
    uint8_t low = std::min<int>(15, static_cast<int8_t>(x0 + 8.5f));
    uint8_t high = std::min<int>(15, static_cast<int8_t>(x1 + 8.5f));
    block[2 + j] = static_cast<uint8_t>(low | (high << 4));
  }
}

/// quantize_row_q4_1_ref: d = (max - min) / 15, m = min,
/// q = min(15, trunc((x - min) / d + 0.5)).
void quantizeQ4_1(const float *x, uint8_t *block) {
  float min = FLT_MAX, max = -FLT_MAX;
  for (size_t j = 0; j < kBlock; ++j) {
    if (x[j] < min)
      min = x[j];
    if (x[j] > max)
      max = x[j];
  }
  float d = (max - min) / 15;
  float id = d ? 1.0f / d : 0.0f;
  storeHalf(block, d);
  storeHalf(block + 2, min);
  for (size_t j = 0; j < kBlock / 2; ++j) {
    float x0 = (x[j] - min) * id;
    float x1 = (x[j + kBlock / 2] - min) * id;
    uint8_t low = std::min<int>(15, static_cast<int8_t>(x0 + 0.5f));
    uint8_t high = std::min<int>(15, static_cast<int8_t>(x1 + 0.5f));
    block[4 + j] = static_cast<uint8_t>(low | (high << 4));
  }
}

/// Per-output-channel int8: d = max|x| / 127, q = rint(x / d) (round half
/// to even) clamped to [-127, 127]; d = 0 and q = 0 for a row of zeros.
void quantizeInt8Row(const float *x, uint8_t *block, size_t count) {
  float amax = 0.0f;
  for (size_t j = 0; j < count; ++j)
    amax = std::max(amax, std::fabs(x[j]));
  float d = amax / 127;
  std::memcpy(block, &d, sizeof d);
  for (size_t j = 0; j < count; ++j) {
    float q = d ? std::nearbyint(x[j] / d) : 0.0f;
    if (std::isnan(q)) // A NaN or infinite row: keep the cast defined.
      q = 0.0f;
    block[4 + j] = static_cast<uint8_t>(
        static_cast<int8_t>(std::clamp(q, -127.0f, 127.0f)));
  }
}

} // namespace

bool isBlockDType(seqc_dtype dtype) {
  return dtype == SEQC_DTYPE_Q8_0 || dtype == SEQC_DTYPE_Q4_0 ||
         dtype == SEQC_DTYPE_Q4_1 || dtype == SEQC_DTYPE_I8_ROWSCALE;
}

bool checkedTensorBytes(seqc_dtype dtype, const int64_t *shape, int rank,
                        size_t *out) {
  int64_t elements;
  size_t blockBytes;
  int64_t numel;
  if (!seqc_dtype_block(dtype, &elements, &blockBytes) ||
      !checkedNumel(shape, rank, &numel))
    return false;
  if (dtype == SEQC_DTYPE_I8_ROWSCALE) {
    // One block per row: rows * (last + 4) bytes.
    if (rank == 0)
      return false;
    int64_t rows = shape[rank - 1] ? numel / shape[rank - 1] : 0;
    if (shape[rank - 1] == 0 && !checkedNumel(shape, rank - 1, &rows))
      return false;
    size_t values;
    return checkedBytes(rows, 4, out) && checkedBytes(numel, 1, &values) &&
           !__builtin_add_overflow(*out, values, out);
  }
  if (elements > 1 && (rank == 0 || shape[rank - 1] % elements != 0))
    return false;
  return checkedBytes(numel / elements, blockBytes, out);
}

void quantizeRows(seqc_dtype dtype, const float *source, void *blocks,
                  size_t count, size_t row) {
  auto *out = static_cast<uint8_t *>(blocks);
  if (dtype == SEQC_DTYPE_I8_ROWSCALE) {
    for (size_t r = 0; row && r < count / row; ++r)
      quantizeInt8Row(source + r * row, out + r * (row + 4), row);
    return;
  }
  int64_t elements;
  size_t bytes;
  seqc_dtype_block(dtype, &elements, &bytes);
  for (size_t i = 0; i < count / kBlock; ++i) {
    const float *x = source + i * kBlock;
    uint8_t *block = out + i * bytes;
    if (dtype == SEQC_DTYPE_Q8_0)
      quantizeQ8_0(x, block);
    else if (dtype == SEQC_DTYPE_Q4_0)
      quantizeQ4_0(x, block);
    else
      quantizeQ4_1(x, block);
  }
}

void dequantizeRows(seqc_dtype dtype, const void *blocks, float *dest,
                    size_t count, size_t row) {
  const auto *in = static_cast<const uint8_t *>(blocks);
  if (dtype == SEQC_DTYPE_I8_ROWSCALE) {
    for (size_t r = 0; row && r < count / row; ++r) {
      const uint8_t *block = in + r * (row + 4);
      float d;
      std::memcpy(&d, block, sizeof d);
      for (size_t j = 0; j < row; ++j)
        dest[r * row + j] = static_cast<int8_t>(block[4 + j]) * d;
    }
    return;
  }
  int64_t elements;
  size_t bytes;
  seqc_dtype_block(dtype, &elements, &bytes);
  for (size_t i = 0; i < count / kBlock; ++i) {
    const uint8_t *block = in + i * bytes;
    float *y = dest + i * kBlock;
    float d = loadHalf(block);
    if (dtype == SEQC_DTYPE_Q8_0) {
      for (size_t j = 0; j < kBlock; ++j)
        y[j] = static_cast<int8_t>(block[2 + j]) * d;
      continue;
    }
    bool hasMin = dtype == SEQC_DTYPE_Q4_1;
    float m = hasMin ? loadHalf(block + 2) : 0.0f;
    const uint8_t *qs = block + (hasMin ? 4 : 2);
    for (size_t j = 0; j < kBlock / 2; ++j) {
      int low = qs[j] & 0x0f, high = qs[j] >> 4;
      if (hasMin) {
        // Rounded after the product, then after the sum, as ggml's
        // reference (separate statements keep them from being fused).
        float lowScaled = low * d, highScaled = high * d;
        y[j] = lowScaled + m;
        y[j + kBlock / 2] = highScaled + m;
      } else {
        y[j] = (low - 8) * d;
        y[j + kBlock / 2] = (high - 8) * d;
      }
    }
  }
}

} // namespace seqc
