//===- Safetensors.h - safetensors reader and writer ------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The safetensors format: an 8-byte little-endian header length N, N bytes of
// JSON mapping tensor names to {"dtype", "shape", "data_offsets"} (plus an
// optional "__metadata__" object of strings), then the data section that the
// offsets index. The reader validates everything that can be checked without
// knowing the model; Weights.cpp checks the tensors against the manifest.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_RUNTIME_SAFETENSORS_H
#define SEQC_RUNTIME_SAFETENSORS_H

#include "Support.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace seqc {

/// A read-only view of a whole file, memory-mapped copy-on-write.
class MappedFile {
public:
  /// Maps `path`, which must be a regular file.
  static seqc_status *open(const char *path, std::shared_ptr<MappedFile> *out);
  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  const uint8_t *data() const { return bytes; }
  size_t size() const { return length; }

private:
  MappedFile() = default;
  uint8_t *bytes = nullptr;
  size_t length = 0;
};

/// Drops from this process's resident set the pages of the page-aligned
/// interior of [data, data + bytes), which must lie in a MappedFile, that
/// still hold the file's bytes (madvise(MADV_DONTNEED)): the next read of
/// them maps them again from the page cache or the file, with the same
/// bytes. A page written since the mapping was made (the mapping is
/// private: such a page is the process's own copy) is kept, since dropping
/// it would lose the write; so is every page when /proc/self/pagemap, which
/// tells them apart, cannot be read. Returns the bytes of the pages dropped
/// (those present before).
size_t dropMappedPages(const void *data, size_t bytes);

/// The bytes of the pages overlapping [data, data + bytes) that are present
/// in this process's page tables (/proc/self/pagemap), or SIZE_MAX when
/// that cannot be read. For tests and measurements.
size_t presentBytes(const void *data, size_t bytes);

/// One tensor of a safetensors file; `data` points into the mapping.
/// A tensor of a dtype of the format that seqc does not compute with (BOOL,
/// U8, I8, ...) is read too, with `supported` false and `dtype` meaningless,
/// so that a loader can skip it; `dtypeName` is the file's spelling.
struct SafetensorsTensor {
  std::string name;
  seqc_dtype dtype = SEQC_DTYPE_F32;
  bool supported = true;
  std::string dtypeName;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0; ///< Offsets into the data section.
  const uint8_t *data = nullptr;
};

/// A validated safetensors file.
struct SafetensorsFile {
  std::shared_ptr<MappedFile> file;
  std::vector<SafetensorsTensor> tensors; ///< In header order.
  std::vector<std::pair<std::string, std::string>> metadata;
};

/// Headers larger than this are rejected as corrupt before parsing; the
/// reference implementation uses a 100 MB cap, real headers are < 2 MiB.
constexpr uint64_t kMaxSafetensorsHeader = 16u << 20;

/// Maps and validates `path`: header length, JSON syntax, entry structure,
/// known dtypes (sub-byte ones are rejected), shapes, offsets within bounds
/// and consistent with the shape, no overlapping tensors. Errors name the file
/// and the tensor.
seqc_status *readSafetensors(const char *path, SafetensorsFile *out);

/// A tensor to write.
struct SafetensorsWriteEntry {
  std::string name;
  seqc_dtype dtype;
  std::vector<int64_t> shape;
  const void *data; ///< numel * dtype size bytes.
};

/// Writes `tensors` to `path` (see writeOutputFile). The data
/// section starts at a 64-byte file offset and tensors are packed without
/// holes, wider dtypes first, so every tensor is aligned to its element size
/// and the file is also valid for the reference implementation.
seqc_status *writeSafetensors(
    const char *path, const std::vector<SafetensorsWriteEntry> &tensors,
    const std::vector<std::pair<std::string, std::string>> &metadata);

} // namespace seqc

#endif // SEQC_RUNTIME_SAFETENSORS_H
