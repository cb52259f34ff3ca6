//===- Quantization.h - weight storage formats ------------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The block formats a contraction weight can be stored in (a parameter's
// `weight_format=`, docs/language.md). q8_0, q4_0 and q4_1 are GGUF's
// (llama.cpp's ggml-common.h), byte for byte, so that a GGUF file's blocks
// bind as they are. Each of their blocks holds 32 consecutive weights of one
// row of a `[out, in]` weight, along the reduction dimension `in`:
//
//   q8_0  {f16 d; int8 qs[32]}          34 bytes  w[j] = qs[j] * d
//   q4_0  {f16 d; uint8 qs[16]}         18 bytes  w[j] = (nib(j) - 8) * d
//   q4_1  {f16 d; f16 m; uint8 qs[16]}  20 bytes  w[j] = nib(j) * d + m
//
// where nib(j) is the low nibble of qs[j] for j < 16 and the high nibble of
// qs[j - 16] otherwise. int8 is symmetric per-output-channel int8 (PyTorch's
// per-channel weight-only quantization): one block per row, of any length,
//
//   int8  {f32 d; int8 qs[in]}          in + 4 bytes  w[j] = qs[j] * d
//
// with d = max |w| / 127 of the row and qs in [-127, 127].
//
// In the IR a weight of `[out, in]` in a block format is an i8 tensor
// `[out, in / block weights, bytes per block]` (`[out, 1, in + 4]` for int8;
// the parameter, whose argument carries kFormatAttr) read through
// `seq.dequantize`.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_DIALECT_SEQ_IR_QUANTIZATION_H
#define SEQC_DIALECT_SEQ_IR_QUANTIZATION_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace mlir::seq {

/// Argument attribute of a parameter stored in a block format: the format's
/// name (StringAttr); the manifest's dtype of the parameter.
constexpr llvm::StringLiteral kFormatAttr = "seq.format";

enum class WeightFormat { Q8_0, Q4_0, Q4_1, Int8 };

struct WeightFormatInfo {
  WeightFormat format;
  llvm::StringLiteral name;
  /// Weights per block and bytes per block; 0 and the bytes beside the
  /// values for a format of one block per row (int8).
  int64_t blockElements;
  int64_t blockBytes;
  /// Byte offset of the quantized values in a block (after the f16 scale,
  /// the f16 minimum of q4_1, the f32 scale of int8).
  int64_t valuesOffset;
  /// Bits per quantized value.
  int64_t bits;

  /// Whether a block is a whole row (int8).
  constexpr bool isPerRow() const { return blockElements == 0; }
  /// Bytes of each field of the header before the values: the f16 scale
  /// and q4_1's f16 minimum, or int8's f32 scale.
  constexpr int64_t headerFieldBytes() const { return isPerRow() ? 4 : 2; }
  /// The blocks of a row of `in` weights and the bytes of each.
  constexpr int64_t blocksPerRow(int64_t in) const {
    return isPerRow() ? 1 : in / blockElements;
  }
  constexpr int64_t bytesPerBlock(int64_t in) const {
    return isPerRow() ? in + blockBytes : blockBytes;
  }
  /// The weights of a row stored in `blocks` blocks of `bytes` bytes.
  constexpr int64_t rowElements(int64_t blocks, int64_t bytes) const {
    return isPerRow() ? bytes - blockBytes : blocks * blockElements;
  }
};

inline constexpr WeightFormatInfo kWeightFormats[] = {
    {WeightFormat::Q8_0, "q8_0", 32, 34, 2, 8},
    {WeightFormat::Q4_0, "q4_0", 32, 18, 2, 4},
    {WeightFormat::Q4_1, "q4_1", 32, 20, 4, 4},
    {WeightFormat::Int8, "int8", 0, 4, 4, 8},
};

/// The format named `name` ("q8_0", "q4_0", "q4_1", "int8"), if any.
inline std::optional<WeightFormatInfo> getWeightFormat(llvm::StringRef name) {
  for (const WeightFormatInfo &info : kWeightFormats)
    if (info.name == name)
      return info;
  return std::nullopt;
}

/// The names of the formats, for diagnostics.
inline constexpr const char *kWeightFormatNames =
    "\"q8_0\", \"q4_0\", \"q4_1\", \"int8\"";

} // namespace mlir::seq

#endif // SEQC_DIALECT_SEQ_IR_QUANTIZATION_H
