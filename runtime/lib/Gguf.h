//===- Gguf.h - GGUF reader -------------------------------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// GGUF, llama.cpp's weight format, version 3, little-endian (read, and
// written by writeGguf):
//
//   "GGUF" | u32 version | u64 tensor count | u64 metadata count
//   metadata: { string key | u32 value type | value } ...
//   tensor infos: { string name | u32 n_dims | u64 ne[n_dims] | u32 ggml type
//                   | u64 offset } ...
//   padding to general.alignment (default 32)
//   data section: each tensor at its offset, a multiple of the alignment
//
// where a string is a u64 length and that many bytes (no NUL), and ne[0] is
// the innermost (contiguous) dimension: a row-major [rows, cols] matrix has
// ne = [cols, rows]. The reader validates everything that can be checked
// without the model (every count, length, size and offset against the file,
// value and ggml types, duplicate keys and names, alignment, overlaps);
// Weights.cpp maps the names and checks the tensors against the manifest.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_RUNTIME_GGUF_H
#define SEQC_RUNTIME_GGUF_H

#include "Safetensors.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace seqc {

/// The GGUF version the reader accepts.
constexpr uint32_t kGgufVersion = 3;
/// The data alignment when general.alignment is absent.
constexpr uint64_t kGgufDefaultAlignment = 32;
/// The most dimensions a tensor has (ggml's GGML_MAX_DIMS).
constexpr uint32_t kGgufMaxDims = 4;
/// How deeply arrays may nest in metadata.
constexpr int kGgufMaxArrayDepth = 8;

/// GGUF's metadata value types.
enum class GgufValueType : uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};

/// The name of a metadata value type ("u32", "string"), "?" if unknown.
const char *ggufValueTypeName(uint32_t type);

/// The ggml tensor types seqc loads (ggml.h's enum ggml_type values).
enum GgmlType : uint32_t {
  kGgmlF32 = 0,
  kGgmlF16 = 1,
  kGgmlQ4_0 = 2,
  kGgmlQ4_1 = 3,
  kGgmlQ8_0 = 8,
  kGgmlBF16 = 30,
};

/// A ggml type's name ("Q8_0") and storage: `blockSize` elements take
/// `typeSize` bytes. False for a type number ggml does not define.
bool ggmlTypeInfo(uint32_t type, const char **name, uint64_t *blockSize,
                  uint64_t *typeSize);

/// A metadata value. Scalars are kept; an array keeps its element type and
/// count, and its elements only when they are integers or floats and there
/// are at most kGgufKeptArray of them (a tokenizer's vocabulary is skipped).
struct GgufValue {
  GgufValueType type = GgufValueType::U8;
  uint64_t u = 0;  ///< Unsigned integers and bool.
  int64_t i = 0;   ///< Signed integers.
  double f = 0;    ///< Floats.
  std::string str; ///< String.
  GgufValueType arrayType = GgufValueType::U8;
  uint64_t arrayCount = 0;
  std::vector<double> numbers; ///< A short numeric array's elements.

  /// The value as an integer, if it is an integer type that holds it.
  bool asUInt64(uint64_t *out) const;
};

/// Numeric arrays up to this length keep their elements.
constexpr uint64_t kGgufKeptArray = 64;

/// One tensor info; `data` points into the mapping.
struct GgufTensor {
  std::string name;
  std::vector<uint64_t> ne; ///< ne[0] innermost.
  uint32_t type = 0;
  const char *typeName = "";
  uint64_t offset = 0; ///< Into the data section.
  uint64_t bytes = 0;
  const uint8_t *data = nullptr;

  /// The dimensions in row-major order (outermost first): ne reversed.
  std::vector<int64_t> rowMajorShape() const;
};

/// A validated GGUF file.
struct GgufFile {
  std::shared_ptr<MappedFile> file;
  uint32_t version = 0;
  uint64_t alignment = kGgufDefaultAlignment;
  uint64_t dataStart = 0; ///< File offset of the data section.
  std::vector<std::pair<std::string, GgufValue>> metadata; ///< In file order.
  std::vector<GgufTensor> tensors;                         ///< In file order.

  /// The value of `key`, or NULL.
  const GgufValue *find(const std::string &key) const;
};

/// True when `data` (`size` bytes) starts with GGUF's magic.
bool hasGgufMagic(const uint8_t *data, size_t size);

/// Maps and validates `path`. Errors are INVALID_FILE naming the file and
/// the key or tensor.
seqc_status *readGguf(const char *path, GgufFile *out);

/// Dequantizes `count` elements (a multiple of 32) of a Q8_0, Q4_0 or Q4_1
/// row at `source` into `dest`, with ggml's block layouts:
///   Q8_0 {f16 d; int8 qs[32]}          x[j] = d * qs[j]
///   Q4_0 {f16 d; u8 qs[16]}            x[j] = d * ((qs[j] & 15) - 8),
///                                      x[j + 16] = d * ((qs[j] >> 4) - 8)
///   Q4_1 {f16 d; f16 m; u8 qs[16]}     x[j] = d * (qs[j] & 15) + m, ...
/// (products and sums in f32, as ggml's reference dequantizers).
/// (Quantize.h's dequantizeRows for the matching seqc_dtype.)
void dequantizeGgmlRow(uint32_t type, const uint8_t *source, float *dest,
                       uint64_t count);

/// A metadata entry to write: a string, a u32 or an f32 (the types
/// llama.cpp reads its hyperparameters as).
struct GgufWriteValue {
  std::string key;
  GgufValueType type = GgufValueType::String;
  std::string str;
  uint32_t u32 = 0;
  float f32 = 0;
};

/// A tensor to write: `shape` row-major (written as ne, innermost first),
/// `bytes` bytes of ggml type `type` at `data`.
struct GgufWriteTensor {
  std::string name;
  uint32_t type = kGgmlF32;
  std::vector<int64_t> shape;
  const void *data = nullptr;
  size_t bytes = 0;
};

/// Writes a GGUF v3 file (writeOutputFile's rules for `path`) with the
/// metadata in the given order, then the tensors, each at an offset that is
/// a multiple of kGgufDefaultAlignment. Names must be unique and non-empty.
seqc_status *writeGguf(const char *path,
                       const std::vector<GgufWriteValue> &metadata,
                       const std::vector<GgufWriteTensor> &tensors);

/// The ggml type that stores seqc's `dtype` with the same bytes (F32, F16,
/// BF16, F64, I32, I64, Q8_0, Q4_0, Q4_1); UINT32_MAX for other dtypes.
uint32_t ggmlTypeOfDType(seqc_dtype dtype);

} // namespace seqc

#endif // SEQC_RUNTIME_GGUF_H
