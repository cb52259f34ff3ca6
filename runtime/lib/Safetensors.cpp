//===- Safetensors.cpp - safetensors reader and writer --------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "Safetensors.h"

#include "Json.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace seqc {

//===----------------------------------------------------------------------===//
// MappedFile
//===----------------------------------------------------------------------===//

seqc_status *MappedFile::open(const char *path,
                              std::shared_ptr<MappedFile> *out) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the S_ISREG
  // check below then rejects it. It has no effect on regular files.
  int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return makeStatus(SEQC_STATUS_IO_ERROR, "cannot open '%s': %s", path,
                      std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return makeStatus(SEQC_STATUS_IO_ERROR, "cannot stat '%s': %s", path,
                      std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return makeStatus(SEQC_STATUS_IO_ERROR, "'%s' is not a regular file", path);
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->length = static_cast<size_t>(st.st_size);
  if (file->length > 0) {
    // Private and writable: the generated code must not write its arguments,
    // but if it does, the pages are copied instead of faulting or changing
    // the file.
    void *map = ::mmap(nullptr, file->length, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return makeStatus(SEQC_STATUS_IO_ERROR, "cannot map '%s': %s", path,
                        std::strerror(err));
    }
    file->bytes = static_cast<uint8_t *>(map);
  }
  ::close(fd);
  *out = std::move(file);
  return nullptr;
}

MappedFile::~MappedFile() {
  if (bytes)
    ::munmap(bytes, length);
}

namespace {

/// /proc/self/pagemap's bits (Documentation/admin-guide/mm/pagemap.rst).
constexpr uint64_t kPagePresent = uint64_t(1) << 63;
constexpr uint64_t kPageSwapped = uint64_t(1) << 62;
constexpr uint64_t kPageFileOrShared = uint64_t(1) << 61;

/// Calls `visit(first page, entries, count)` for the pagemap entries of
/// the pages [begin, end) (page-aligned addresses), in chunks; false when
/// pagemap cannot be read.
template <typename Visit>
bool walkPagemap(uintptr_t begin, uintptr_t end, size_t page, Visit visit) {
  int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  constexpr size_t kChunk = 4096;
  uint64_t entries[kChunk];
  bool ok = true;
  for (uintptr_t at = begin; at < end && ok;) {
    size_t count = std::min<size_t>(kChunk, (end - at) / page);
    off_t offset = static_cast<off_t>(at / page * sizeof(uint64_t));
    ssize_t got = ::pread(fd, entries, count * sizeof(uint64_t), offset);
    if (got != static_cast<ssize_t>(count * sizeof(uint64_t))) {
      ok = false;
      break;
    }
    visit(at, entries, count);
    at += count * page;
  }
  ::close(fd);
  return ok;
}

} // namespace

size_t dropMappedPages(const void *data, size_t bytes) {
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  uintptr_t first = reinterpret_cast<uintptr_t>(data);
  uintptr_t begin = (first + page - 1) / page * page;
  uintptr_t end = (first + bytes) / page * page;
  if (!data || begin >= end)
    return 0;
  // Runs of pages that hold the file's bytes: present file pages, and
  // absent ones (nothing to drop, but they join runs). A present page that
  // is not a file page, or a swapped one, is a private copy: kept.
  size_t dropped = 0;
  uintptr_t runBegin = 0;
  size_t runPresent = 0;
  auto flush = [&](uintptr_t runEnd) {
    if (runBegin && runPresent &&
        ::madvise(reinterpret_cast<void *>(runBegin), runEnd - runBegin,
                  MADV_DONTNEED) == 0)
      dropped += runPresent * page;
    runBegin = 0;
    runPresent = 0;
  };
  bool read = walkPagemap(
      begin, end, page,
      [&](uintptr_t at, const uint64_t *entries, size_t count) {
        for (size_t i = 0; i < count; ++i, at += page) {
          uint64_t entry = entries[i];
          bool present = entry & kPagePresent;
          bool copy = (entry & kPageSwapped) ||
                      (present && !(entry & kPageFileOrShared));
          if (copy) {
            flush(at);
            continue;
          }
          if (!runBegin)
            runBegin = at;
          runPresent += present;
        }
      });
  if (read)
    flush(end);
  return dropped;
}

size_t presentBytes(const void *data, size_t bytes) {
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  uintptr_t first = reinterpret_cast<uintptr_t>(data);
  uintptr_t begin = first / page * page;
  uintptr_t end = (first + bytes + page - 1) / page * page;
  if (!data || begin >= end)
    return 0;
  size_t present = 0;
  bool read = walkPagemap(
      begin, end, page,
      [&](uintptr_t, const uint64_t *entries, size_t count) {
        for (size_t i = 0; i < count; ++i)
          present += (entries[i] & kPagePresent) ? page : 0;
      });
  return read ? present : SIZE_MAX;
}

//===----------------------------------------------------------------------===//
// Reader
//===----------------------------------------------------------------------===//

namespace {

/// The dtypes of the format that seqc does not compute with and their
/// element sizes in bytes; 0 for the sub-byte ones, whose files are
/// rejected (their packing is not checked here).
size_t unsupportedDTypeSize(std::string_view name) {
  static const struct {
    const char *name;
    size_t size;
  } kDTypes[] = {{"BOOL", 1},    {"U8", 1},      {"I8", 1},      {"I16", 2},
                 {"U16", 2},     {"U32", 4},     {"U64", 8},     {"F8_E5M2", 1},
                 {"F8_E4M3", 1}, {"F8_E8M0", 1}, {"F6_E2M3", 0}, {"F6_E3M2", 0},
                 {"F4", 0},      {"C64", 8}};
  for (const auto &known : kDTypes)
    if (name == known.name)
      return known.size;
  return SIZE_MAX;
}

/// Returns a printable, bounded form of a name from an untrusted file.
std::string quoteName(const std::string &name) { return printableText(name); }

/// Reads a JSON value that must be a non-negative integer.
bool asNonNegativeInteger(const JsonValue &value, uint64_t *out) {
  if (!value.isNumber() || !value.isInteger || value.integer < 0)
    return false;
  *out = static_cast<uint64_t>(value.integer);
  return true;
}

seqc_status *parseTensorEntry(const std::string &name, const JsonValue &entry,
                              uint64_t dataSize, SafetensorsTensor *out) {
  std::string printable = quoteName(name);
  const char *tname = printable.c_str();
  if (!entry.isObject())
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "tensor '%s': entry is %s, not an object", tname,
                      entry.kindName());
  const JsonValue *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
  for (size_t i = 0; i < entry.keys.size(); ++i) {
    const std::string &key = entry.keys[i];
    if (key == "dtype")
      dtype = &entry.items[i];
    else if (key == "shape")
      shape = &entry.items[i];
    else if (key == "data_offsets")
      offsets = &entry.items[i];
    else
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "tensor '%s': unexpected key '%s'", tname,
                        quoteName(key).c_str());
  }
  if (!dtype || !shape || !offsets)
    return makeStatus(SEQC_STATUS_INVALID_FILE, "tensor '%s': missing '%s'",
                      tname,
                      !dtype   ? "dtype"
                      : !shape ? "shape"
                               : "data_offsets");

  if (!dtype->isString())
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "tensor '%s': dtype is %s, not a string", tname,
                      dtype->kindName());
  size_t elementSize;
  out->supported = parseSafetensorsDType(dtype->string, &out->dtype);
  if (out->supported) {
    elementSize = seqc_dtype_size(out->dtype);
  } else {
    // A dtype seqc does not compute with is read, so that a loader can skip
    // the tensor (a BOOL mask buffer, say); a sub-byte one is rejected.
    elementSize = unsupportedDTypeSize(dtype->string);
    if (elementSize == 0)
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "tensor '%s': dtype %s is not supported (seqc "
                        "supports F32, F64, F16, BF16, I32, I64)",
                        tname, dtype->string.c_str());
    if (elementSize == SIZE_MAX)
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "tensor '%s': unknown dtype '%s'", tname,
                        quoteName(dtype->string).c_str());
  }
  out->dtypeName = dtype->string;

  if (!shape->isArray())
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "tensor '%s': shape is %s, not an array", tname,
                      shape->kindName());
  if (shape->items.size() > SEQC_MAX_RANK)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "tensor '%s': rank %zu exceeds the maximum %d", tname,
                      shape->items.size(), SEQC_MAX_RANK);
  out->shape.clear();
  for (const JsonValue &dim : shape->items) {
    uint64_t size;
    if (!asNonNegativeInteger(dim, &size))
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "tensor '%s': shape must be an array of non-negative "
                        "integers",
                        tname);
    out->shape.push_back(static_cast<int64_t>(size));
  }
  std::string shapeText =
      formatShape(out->shape.data(), static_cast<int>(out->shape.size()));

  uint64_t begin, end;
  if (!offsets->isArray() || offsets->items.size() != 2 ||
      !asNonNegativeInteger(offsets->items[0], &begin) ||
      !asNonNegativeInteger(offsets->items[1], &end))
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "tensor '%s': data_offsets must be [begin, end] with "
                      "non-negative integers",
                      tname);
  if (begin > end)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "tensor '%s': data_offsets [%llu, %llu] have begin > "
                      "end",
                      tname, static_cast<unsigned long long>(begin),
                      static_cast<unsigned long long>(end));
  if (end > dataSize)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "tensor '%s': data_offsets [%llu, %llu] are out of "
                      "bounds: the data section has %llu bytes",
                      tname, static_cast<unsigned long long>(begin),
                      static_cast<unsigned long long>(end),
                      static_cast<unsigned long long>(dataSize));
  int64_t numel;
  size_t bytes;
  if (!checkedNumel(out->shape.data(), static_cast<int>(out->shape.size()),
                    &numel) ||
      !checkedBytes(numel, elementSize, &bytes))
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "tensor '%s': shape %s is too large", tname,
                      shapeText.c_str());
  if (end - begin != bytes)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "tensor '%s': data_offsets [%llu, %llu] span %llu "
                      "bytes but %s %s needs %zu",
                      tname, static_cast<unsigned long long>(begin),
                      static_cast<unsigned long long>(end),
                      static_cast<unsigned long long>(end - begin),
                      out->dtypeName.c_str(), shapeText.c_str(), bytes);
  out->name = name;
  out->begin = begin;
  out->end = end;
  return nullptr;
}

seqc_status *parseMetadata(const JsonValue &value, SafetensorsFile *out) {
  if (!value.isObject())
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "__metadata__ is %s, not an object", value.kindName());
  for (size_t i = 0; i < value.keys.size(); ++i) {
    if (!value.items[i].isString())
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "__metadata__ entry '%s' is %s, not a string",
                        quoteName(value.keys[i]).c_str(),
                        value.items[i].kindName());
    out->metadata.emplace_back(value.keys[i], value.items[i].string);
  }
  return nullptr;
}

/// Rejects tensors whose byte ranges intersect (a corrupt or malicious file
/// could alias one parameter into another). Empty ranges never overlap.
seqc_status *checkOverlaps(const std::vector<SafetensorsTensor> &tensors) {
  std::vector<const SafetensorsTensor *> sorted;
  sorted.reserve(tensors.size());
  for (const SafetensorsTensor &t : tensors)
    if (t.end > t.begin)
      sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(),
            [](const SafetensorsTensor *a, const SafetensorsTensor *b) {
              return a->begin != b->begin ? a->begin < b->begin
                                          : a->end < b->end;
            });
  // Compare against the range reaching furthest so far, which also catches
  // a range nested inside an earlier, longer one.
  const SafetensorsTensor *furthest = nullptr;
  for (const SafetensorsTensor *t : sorted) {
    if (furthest && t->begin < furthest->end)
      return makeStatus(
          SEQC_STATUS_INVALID_FILE,
          "tensors '%s' [%llu, %llu) and '%s' [%llu, %llu) overlap",
          quoteName(furthest->name).c_str(),
          static_cast<unsigned long long>(furthest->begin),
          static_cast<unsigned long long>(furthest->end),
          quoteName(t->name).c_str(), static_cast<unsigned long long>(t->begin),
          static_cast<unsigned long long>(t->end));
    if (!furthest || t->end > furthest->end)
      furthest = t;
  }
  return nullptr;
}

seqc_status *parseSafetensors(const std::shared_ptr<MappedFile> &file,
                              SafetensorsFile *out) {
  size_t size = file->size();
  if (size < 8)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "file too short: %zu bytes, but the header length "
                      "alone takes 8",
                      size);
  const uint8_t *bytes = file->data();
  uint64_t headerLength = 0;
  for (int i = 7; i >= 0; --i)
    headerLength = (headerLength << 8) | bytes[i];
  if (headerLength > kMaxSafetensorsHeader)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "header length %llu is absurd (limit %llu bytes); the "
                      "file is corrupt or not safetensors",
                      static_cast<unsigned long long>(headerLength),
                      static_cast<unsigned long long>(kMaxSafetensorsHeader));
  if (headerLength > size - 8)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "header length %llu runs past the end of the file "
                      "(%zu bytes)",
                      static_cast<unsigned long long>(headerLength), size);

  JsonValue header;
  std::string_view headerText(reinterpret_cast<const char *>(bytes + 8),
                              static_cast<size_t>(headerLength));
  if (seqc_status *status =
          parseJson(headerText, &header, SEQC_STATUS_INVALID_FILE))
    return annotate(status, "header is not valid JSON");
  if (!header.isObject())
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "header is %s, not a JSON object", header.kindName());

  uint64_t dataStart = 8 + headerLength;
  uint64_t dataSize = size - dataStart;
  out->tensors.clear();
  out->metadata.clear();
  out->tensors.reserve(header.keys.size());
  for (size_t i = 0; i < header.keys.size(); ++i) {
    if (header.keys[i] == "__metadata__") {
      SEQC_RETURN_IF_ERROR(parseMetadata(header.items[i], out));
      continue;
    }
    SafetensorsTensor tensor;
    SEQC_RETURN_IF_ERROR(
        parseTensorEntry(header.keys[i], header.items[i], dataSize, &tensor));
    tensor.data = bytes + dataStart + tensor.begin;
    out->tensors.push_back(std::move(tensor));
  }
  SEQC_RETURN_IF_ERROR(checkOverlaps(out->tensors));
  out->file = file;
  return nullptr;
}

} // namespace

seqc_status *readSafetensors(const char *path, SafetensorsFile *out) {
  std::shared_ptr<MappedFile> file;
  SEQC_RETURN_IF_ERROR(MappedFile::open(path, &file));
  return annotate(parseSafetensors(file, out), "'%s'", path);
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

seqc_status *writeSafetensors(
    const char *path, const std::vector<SafetensorsWriteEntry> &tensors,
    const std::vector<std::pair<std::string, std::string>> &metadata) {
  // Lay the data out widest dtype first (otherwise in the given order): sizes
  // are multiples of the element size, so each tensor starts aligned to its own
  // element size without padding holes.
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  // (std::sort with an index tie-break rather than std::stable_sort, whose
  // libstdc++ 12 implementation trips deprecation warnings under clang.)
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    size_t sizeA = seqc_dtype_size(tensors[a].dtype);
    size_t sizeB = seqc_dtype_size(tensors[b].dtype);
    return sizeA != sizeB ? sizeA > sizeB : a < b;
  });

  std::vector<size_t> sizes(tensors.size());
  std::vector<uint64_t> begins(tensors.size());
  uint64_t offset = 0;
  for (size_t i : order) {
    const SafetensorsWriteEntry &t = tensors[i];
    int64_t numel;
    if (!isValidDType(t.dtype) || t.shape.size() > SEQC_MAX_RANK ||
        !checkedNumel(t.shape.data(), static_cast<int>(t.shape.size()),
                      &numel) ||
        !checkedBytes(numel, seqc_dtype_size(t.dtype), &sizes[i]))
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "cannot write '%s': tensor '%s' has an invalid dtype "
                        "or shape",
                        path, t.name.c_str());
    if (t.name == "__metadata__" || t.name.empty())
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "cannot write '%s': invalid tensor name '%s'", path,
                        t.name.c_str());
    begins[i] = offset;
    offset += sizes[i];
  }
  // Duplicate names would produce a header every reader rejects.
  std::vector<std::string_view> names;
  for (const SafetensorsWriteEntry &t : tensors)
    names.push_back(t.name);
  std::sort(names.begin(), names.end());
  for (size_t i = 1; i < names.size(); ++i)
    if (names[i] == names[i - 1])
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "cannot write '%s': duplicate tensor name '%s'", path,
                        std::string(names[i]).c_str());

  std::string header = "{";
  bool first = true;
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    for (size_t i = 0; i < metadata.size(); ++i) {
      if (i)
        header += ',';
      appendJsonString(header, metadata[i].first);
      header += ':';
      appendJsonString(header, metadata[i].second);
    }
    header += '}';
    first = false;
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const SafetensorsWriteEntry &t = tensors[i];
    if (!first)
      header += ',';
    first = false;
    appendJsonString(header, t.name);
    header += ":{\"dtype\":\"";
    header += safetensorsDTypeName(t.dtype);
    header += "\",\"shape\":[";
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (d)
        header += ',';
      header += std::to_string(t.shape[d]);
    }
    header += "],\"data_offsets\":[";
    header += std::to_string(begins[i]);
    header += ',';
    header += std::to_string(begins[i] + sizes[i]);
    header += "]}";
  }
  header += '}';
  // Pad with spaces (allowed trailing JSON whitespace) so the data section
  // starts on a 64-byte boundary of the file, hence of the mapping.
  while ((8 + header.size()) % kBufferAlignment != 0)
    header += ' ';

  uint8_t lengthBytes[8];
  uint64_t headerLength = header.size();
  for (int i = 0; i < 8; ++i)
    lengthBytes[i] = static_cast<uint8_t>(headerLength >> (8 * i));

  std::vector<const void *> chunks = {lengthBytes, header.data()};
  std::vector<size_t> chunkSizes = {8, header.size()};
  for (size_t i : order) {
    if (sizes[i] == 0)
      continue;
    chunks.push_back(tensors[i].data);
    chunkSizes.push_back(sizes[i]);
  }
  return writeOutputFile(path, chunks.data(), chunkSizes.data(), chunks.size());
}

} // namespace seqc
