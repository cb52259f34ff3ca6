//===- Support.h - Status, dtypes and buffers for the runtime ---*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Small helpers shared by the runtime's translation units. The runtime is
// built with -fno-exceptions, so every fallible helper returns a
// `seqc_status *` (NULL on success) instead of throwing.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_RUNTIME_SUPPORT_H
#define SEQC_RUNTIME_SUPPORT_H

#include "seqc_runtime.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#if defined(__GNUC__)
#define SEQC_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define SEQC_PRINTF(fmt, args)
#endif

/// Returns early from the enclosing function with the status of `expr` when
/// it is an error.
#define SEQC_RETURN_IF_ERROR(expr)                                             \
  do {                                                                         \
    if (seqc_status *seqcStatus_ = (expr))                                     \
      return seqcStatus_;                                                      \
  } while (false)

namespace seqc {

/// Creates a status with a printf-style message. Never returns NULL: when the
/// message cannot be allocated it returns a static out-of-memory status.
seqc_status *makeStatus(seqc_status_code code, const char *fmt, ...)
    SEQC_PRINTF(2, 3);

/// Returns `status` with "<prefix>: " prepended to its message; consumes
/// `status`. NULL stays NULL.
seqc_status *annotate(seqc_status *status, const char *fmt, ...)
    SEQC_PRINTF(2, 3);

/// Returns text taken from a file (a tensor name, a key, a dtype) in a form
/// safe to put in a message: control characters and bytes that are not
/// valid UTF-8 become '?', and text longer than `maxBytes` is cut at a
/// character boundary and ends in "...".
std::string printableText(std::string_view text, size_t maxBytes = 200);

/// Owns a status; frees it on destruction. Used by the CLI and tests.
struct StatusDeleter {
  void operator()(seqc_status *status) const { seqc_status_free(status); }
};
using StatusPtr = std::unique_ptr<seqc_status, StatusDeleter>;

//===----------------------------------------------------------------------===//
// Dtypes
//===----------------------------------------------------------------------===//

/// Returns true if `dtype` is one of the enumerators.
bool isValidDType(seqc_dtype dtype);
bool isFloatDType(seqc_dtype dtype);

/// Parses a manifest spelling ("f32"); false if unknown.
bool parseManifestDType(std::string_view name, seqc_dtype *out);
/// Parses a safetensors spelling ("F32"); false if unknown.
bool parseSafetensorsDType(std::string_view name, seqc_dtype *out);
/// Returns the safetensors spelling of a valid dtype.
const char *safetensorsDTypeName(seqc_dtype dtype);

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

/// Multiplies sizes[0..rank) into *out; false if a size is negative or the
/// product overflows int64.
bool checkedNumel(const int64_t *sizes, int rank, int64_t *out);

/// Computes numel * elementSize into *out; false on overflow of size_t or
/// int64.
bool checkedBytes(int64_t numel, size_t elementSize, size_t *out);

/// Formats sizes as "[2, 3]".
std::string formatShape(const int64_t *sizes, int rank);

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// The alignment of every buffer the runtime allocates: a cache line, which
/// also satisfies any vector load the generated code may emit.
constexpr size_t kBufferAlignment = 64;

/// Allocates `bytes` (rounded up, at least one alignment unit so that empty
/// tensors still get a distinct non-null pointer) aligned to
/// kBufferAlignment. Release with std::free. Returns NULL on failure.
void *alignedAlloc(size_t bytes);

/// A byte range the runtime binds to a model argument. `owner` keeps the
/// storage alive (a heap block or a memory-mapped file shared by several
/// parameters).
struct Buffer {
  void *data = nullptr;
  size_t bytes = 0;
  std::shared_ptr<void> owner;
};

/// Allocates an owned buffer of `bytes`; out-of-memory status on failure.
seqc_status *allocateBuffer(size_t bytes, Buffer *out);

//===----------------------------------------------------------------------===//
// Half-precision conversions (round to nearest even, NaN preserved).
//===----------------------------------------------------------------------===//

uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);
uint16_t floatToBFloat16(float value);
float bfloat16ToFloat(uint16_t bits);

/// Reads element `index` of a `dtype` array as a double (for summaries).
double loadAsDouble(const void *data, seqc_dtype dtype, size_t index);

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

/// Writes the chunks, in order, to the file `path` names, as
/// docs/runtime.md ("Output files") states: "-" is standard output (after
/// what stdio holds for it); a symbolic link is followed to its target; a
/// target that is absent or a regular file is written to a new file next
/// to it, which is renamed over it (so that a memory-mapped `path` stays
/// intact; an existing file's mode and owner are kept); a FIFO or a
/// character device is written in place. Every failed or short write,
/// fsync and close is an IO_ERROR naming the path and the reason.
seqc_status *writeOutputFile(const char *path, const void *const *chunks,
                             const size_t *chunkSizes, size_t numChunks);

//===----------------------------------------------------------------------===//
// Byte sizes
//===----------------------------------------------------------------------===//

/// Parses a byte count: digits with an optional suffix K, M, G or T (powers
/// of 1024; "KiB", "KB" and lowercase also accepted). False if it is not
/// one or overflows.
bool parseByteSize(const char *text, uint64_t *out);

/// Formats a byte count for messages: "1.50 GiB (1610612736 bytes)", or
/// "100 bytes" below 1 KiB.
std::string formatBytes(uint64_t bytes);

} // namespace seqc

#endif // SEQC_RUNTIME_SUPPORT_H
