//===- Support.cpp - Status, dtypes and buffers for the runtime -----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

struct seqc_status {
  seqc_status_code code;
  char *message;
};

namespace {
/// Returned when a status cannot be allocated; never freed.
seqc_status outOfMemoryStatus = {SEQC_STATUS_OUT_OF_MEMORY,
                                 const_cast<char *>("out of memory")};

seqc_status *makeStatusV(seqc_status_code code, const char *prefix,
                         const char *fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  int len = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (len < 0)
    len = 0;
  size_t prefixLen = prefix ? std::strlen(prefix) : 0;
  size_t total = sizeof(seqc_status) + prefixLen + static_cast<size_t>(len) + 1;
  auto *status = static_cast<seqc_status *>(std::malloc(total));
  if (!status)
    return &outOfMemoryStatus;
  status->code = code;
  status->message = reinterpret_cast<char *>(status + 1);
  if (prefixLen)
    std::memcpy(status->message, prefix, prefixLen);
  std::vsnprintf(status->message + prefixLen, static_cast<size_t>(len) + 1, fmt,
                 args);
  status->message[prefixLen + static_cast<size_t>(len)] = '\0';
  return status;
}
} // namespace

extern "C" seqc_status_code seqc_status_get_code(const seqc_status *status) {
  return status ? status->code : SEQC_STATUS_OK;
}

extern "C" const char *seqc_status_message(const seqc_status *status) {
  return status ? status->message : "OK";
}

extern "C" void seqc_status_free(seqc_status *status) {
  if (status && status != &outOfMemoryStatus)
    std::free(status);
}

extern "C" size_t seqc_dtype_size(seqc_dtype dtype) {
  switch (dtype) {
  case SEQC_DTYPE_F32:
  case SEQC_DTYPE_I32:
    return 4;
  case SEQC_DTYPE_F64:
  case SEQC_DTYPE_I64:
    return 8;
  case SEQC_DTYPE_F16:
  case SEQC_DTYPE_BF16:
    return 2;
  default:
    return 0;
  }
}

extern "C" int seqc_dtype_block(seqc_dtype dtype, int64_t *elements,
                                size_t *bytes) {
  int64_t blockElements = 32;
  size_t blockBytes = 0;
  switch (dtype) {
  case SEQC_DTYPE_Q8_0:
    blockBytes = 34;
    break;
  case SEQC_DTYPE_Q4_0:
    blockBytes = 18;
    break;
  case SEQC_DTYPE_Q4_1:
    blockBytes = 20;
    break;
  case SEQC_DTYPE_I8_ROWSCALE:
    blockElements = 0;
    blockBytes = 4;
    break;
  default:
    blockElements = 1;
    blockBytes = seqc_dtype_size(dtype);
    break;
  }
  if (!blockBytes)
    return 0;
  if (elements)
    *elements = blockElements;
  if (bytes)
    *bytes = blockBytes;
  return 1;
}

extern "C" const char *seqc_dtype_name(seqc_dtype dtype) {
  switch (dtype) {
  case SEQC_DTYPE_F32:
    return "f32";
  case SEQC_DTYPE_F64:
    return "f64";
  case SEQC_DTYPE_F16:
    return "f16";
  case SEQC_DTYPE_BF16:
    return "bf16";
  case SEQC_DTYPE_I32:
    return "i32";
  case SEQC_DTYPE_I64:
    return "i64";
  case SEQC_DTYPE_Q8_0:
    return "q8_0";
  case SEQC_DTYPE_Q4_0:
    return "q4_0";
  case SEQC_DTYPE_Q4_1:
    return "q4_1";
  case SEQC_DTYPE_I8_ROWSCALE:
    return "int8";
  default:
    return "invalid";
  }
}

extern "C" int64_t seqc_tensor_numel(const seqc_tensor *tensor) {
  if (!tensor || tensor->rank < 0 || tensor->rank > SEQC_MAX_RANK)
    return -1;
  int64_t numel = 0;
  if (!seqc::checkedNumel(tensor->shape, tensor->rank, &numel))
    return -1;
  return numel;
}

namespace seqc {

seqc_status *makeStatus(seqc_status_code code, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  seqc_status *status = makeStatusV(code, nullptr, fmt, args);
  va_end(args);
  return status;
}

seqc_status *annotate(seqc_status *status, const char *fmt, ...) {
  if (!status || status == &outOfMemoryStatus)
    return status;
  va_list args;
  va_start(args, fmt);
  std::string prefix;
  {
    va_list copy;
    va_copy(copy, args);
    int len = std::vsnprintf(nullptr, 0, fmt, copy);
    va_end(copy);
    if (len > 0) {
      prefix.resize(static_cast<size_t>(len) + 1);
      std::vsnprintf(&prefix[0], prefix.size(), fmt, args);
      prefix.resize(static_cast<size_t>(len));
    }
  }
  va_end(args);
  prefix += ": ";
  seqc_status *result =
      makeStatus(status->code, "%s%s", prefix.c_str(), status->message);
  if (result == &outOfMemoryStatus)
    return status;
  seqc_status_free(status);
  return result;
}

bool isValidDType(seqc_dtype dtype) {
  return seqc_dtype_block(dtype, nullptr, nullptr) != 0;
}

bool isFloatDType(seqc_dtype dtype) {
  return dtype == SEQC_DTYPE_F32 || dtype == SEQC_DTYPE_F64 ||
         dtype == SEQC_DTYPE_F16 || dtype == SEQC_DTYPE_BF16;
}

namespace {
struct DTypeNames {
  seqc_dtype dtype;
  const char *manifest;
  const char *safetensors;
};
constexpr DTypeNames kDTypeNames[] = {
    {SEQC_DTYPE_F32, "f32", "F32"}, {SEQC_DTYPE_F64, "f64", "F64"},
    {SEQC_DTYPE_F16, "f16", "F16"}, {SEQC_DTYPE_BF16, "bf16", "BF16"},
    {SEQC_DTYPE_I32, "i32", "I32"}, {SEQC_DTYPE_I64, "i64", "I64"},
    // Block formats have no safetensors dtype: they load from F32, BF16 or
    // F16 tensors, quantized (Weights.cpp).
    {SEQC_DTYPE_Q8_0, "q8_0", ""},  {SEQC_DTYPE_Q4_0, "q4_0", ""},
    {SEQC_DTYPE_Q4_1, "q4_1", ""},  {SEQC_DTYPE_I8_ROWSCALE, "int8", ""},
};
} // namespace

bool parseManifestDType(std::string_view name, seqc_dtype *out) {
  for (const DTypeNames &entry : kDTypeNames) {
    if (name == entry.manifest) {
      *out = entry.dtype;
      return true;
    }
  }
  return false;
}

bool parseSafetensorsDType(std::string_view name, seqc_dtype *out) {
  for (const DTypeNames &entry : kDTypeNames) {
    if (*entry.safetensors && name == entry.safetensors) {
      *out = entry.dtype;
      return true;
    }
  }
  return false;
}

const char *safetensorsDTypeName(seqc_dtype dtype) {
  for (const DTypeNames &entry : kDTypeNames)
    if (entry.dtype == dtype)
      return entry.safetensors;
  return "INVALID";
}

bool checkedNumel(const int64_t *sizes, int rank, int64_t *out) {
  int64_t numel = 1;
  for (int i = 0; i < rank; ++i) {
    if (sizes[i] < 0)
      return false;
    if (__builtin_mul_overflow(numel, sizes[i], &numel))
      return false;
  }
  *out = numel;
  return true;
}

bool checkedBytes(int64_t numel, size_t elementSize, size_t *out) {
  if (numel < 0)
    return false;
  size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(numel),
                             static_cast<uint64_t>(elementSize), &bytes))
    return false;
  // Keep byte counts representable as int64 too: descriptors and file
  // offsets are signed.
  if (bytes > static_cast<size_t>(std::numeric_limits<int64_t>::max()))
    return false;
  *out = bytes;
  return true;
}

std::string formatShape(const int64_t *sizes, int rank) {
  std::string result = "[";
  for (int i = 0; i < rank; ++i) {
    if (i)
      result += ", ";
    result += std::to_string(sizes[i]);
  }
  result += "]";
  return result;
}

void *alignedAlloc(size_t bytes) {
  if (bytes > std::numeric_limits<size_t>::max() - kBufferAlignment)
    return nullptr;
  size_t rounded =
      (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  if (rounded == 0)
    rounded = kBufferAlignment;
  return std::aligned_alloc(kBufferAlignment, rounded);
}

seqc_status *allocateBuffer(size_t bytes, Buffer *out) {
  void *data = alignedAlloc(bytes);
  if (!data)
    return makeStatus(SEQC_STATUS_OUT_OF_MEMORY, "cannot allocate %zu bytes",
                      bytes);
  out->data = data;
  out->bytes = bytes;
  out->owner = std::shared_ptr<void>(data, std::free);
  return nullptr;
}

uint16_t floatToHalf(float value) {
  uint32_t x;
  std::memcpy(&x, &value, sizeof(x));
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) // Inf or NaN; keep NaNs quiet and NaN.
    return sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u);
  if (x >= 0x477ff000u) // >= 65520 rounds to infinity.
    return sign | 0x7c00u;
  if (x < 0x38800000u) { // Below 2^-14: a half subnormal or zero.
    if (x < 0x33000000u) // Below 2^-25: rounds to zero.
      return sign;
    uint32_t exponent = x >> 23;
    uint32_t mantissa = (x & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exponent;
    uint32_t result = mantissa >> shift;
    uint32_t remainder = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (result & 1)))
      ++result;
    return sign | static_cast<uint16_t>(result);
  }
  // Normal: rebias the exponent (127 -> 15) and round away 13 mantissa bits;
  // a carry out of the mantissa correctly bumps the exponent.
  uint32_t result = (x - 0x38000000u) >> 13;
  uint32_t remainder = x & 0x1fffu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (result & 1)))
    ++result;
  return sign | static_cast<uint16_t>(result);
}

float halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  uint32_t result;
  if (exponent == 0) {
    if (mantissa == 0) {
      result = sign;
    } else { // Subnormal: normalize.
      uint32_t e = 113;
      while (!(mantissa & 0x400u)) {
        mantissa <<= 1;
        --e;
      }
      result = sign | (e << 23) | ((mantissa & 0x3ffu) << 13);
    }
  } else if (exponent == 31) {
    result = sign | 0x7f800000u | (mantissa << 13);
  } else {
    result = sign | ((exponent + 112) << 23) | (mantissa << 13);
  }
  float value;
  std::memcpy(&value, &result, sizeof(value));
  return value;
}

uint16_t floatToBFloat16(float value) {
  uint32_t x;
  std::memcpy(&x, &value, sizeof(x));
  if ((x & 0x7fffffffu) > 0x7f800000u) // NaN: truncation could make it Inf.
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

float bfloat16ToFloat(uint16_t bits) {
  uint32_t x = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &x, sizeof(value));
  return value;
}

double loadAsDouble(const void *data, seqc_dtype dtype, size_t index) {
  switch (dtype) {
  case SEQC_DTYPE_F32:
    return static_cast<const float *>(data)[index];
  case SEQC_DTYPE_F64:
    return static_cast<const double *>(data)[index];
  case SEQC_DTYPE_F16:
    return halfToFloat(static_cast<const uint16_t *>(data)[index]);
  case SEQC_DTYPE_BF16:
    return bfloat16ToFloat(static_cast<const uint16_t *>(data)[index]);
  case SEQC_DTYPE_I32:
    return static_cast<const int32_t *>(data)[index];
  case SEQC_DTYPE_I64:
    return static_cast<double>(static_cast<const int64_t *>(data)[index]);
  default:
    return 0;
  }
}

namespace {

/// Writes the chunks to `fd`; `name` names the file in the message.
seqc_status *writeChunks(int fd, const std::string &name,
                         const void *const *chunks, const size_t *chunkSizes,
                         size_t numChunks) {
  for (size_t c = 0; c < numChunks; ++c) {
    const char *p = static_cast<const char *>(chunks[c]);
    size_t left = chunkSizes[c];
    while (left > 0) {
      ssize_t written = ::write(fd, p, left);
      if (written < 0 && errno == EINTR)
        continue;
      if (written <= 0) // 0: a short write that makes no progress.
        return makeStatus(SEQC_STATUS_IO_ERROR, "cannot write %s: %s",
                          name.c_str(),
                          std::strerror(written < 0 ? errno : EIO));
      p += written;
      left -= static_cast<size_t>(written);
    }
  }
  return nullptr;
}

/// Flushes what was written to `fd` to its device, if it is a regular file
/// (pipes and terminals have nothing to flush).
seqc_status *syncIfRegular(int fd, const std::string &name) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return nullptr;
  if (::fsync(fd) != 0)
    return makeStatus(SEQC_STATUS_IO_ERROR, "cannot write %s: %s", name.c_str(),
                      std::strerror(errno));
  return nullptr;
}

/// The directory part of `path` ("." when it has none) and the rest.
void splitPath(const std::string &path, std::string *dir, std::string *base) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) {
    *dir = ".";
    *base = path;
    return;
  }
  *dir = slash == 0 ? "/" : path.substr(0, slash);
  *base = path.substr(slash + 1);
}

/// Follows `path` through symbolic links to what it finally names (which
/// need not exist).
seqc_status *resolveLinks(const std::string &path, std::string *resolved) {
  std::string current = path;
  for (int hops = 0;; ++hops) {
    struct stat st;
    if (::lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
      *resolved = current;
      return nullptr;
    }
    if (hops == 40)
      return makeStatus(SEQC_STATUS_IO_ERROR, "cannot write '%s': %s",
                        path.c_str(), std::strerror(ELOOP));
    std::vector<char> target(static_cast<size_t>(st.st_size) + 256);
    ssize_t length = ::readlink(current.c_str(), target.data(), target.size());
    if (length < 0 || static_cast<size_t>(length) >= target.size())
      return makeStatus(SEQC_STATUS_IO_ERROR,
                        "cannot write '%s': cannot read the link '%s': %s",
                        path.c_str(), current.c_str(),
                        std::strerror(length < 0 ? errno : ENAMETOOLONG));
    std::string next(target.data(), static_cast<size_t>(length));
    if (next.empty() || next[0] != '/') {
      std::string dir, base;
      splitPath(current, &dir, &base);
      if (current.find('/') != std::string::npos)
        next = dir + "/" + next;
    }
    current = next;
  }
}

/// Writes the chunks to a new file next to `target` and renames it over
/// `target`, which is absent or a regular file (`existing`, whose mode and
/// owner the new file takes).
seqc_status *replaceFile(const std::string &target, const std::string &name,
                         const struct stat *existing, const void *const *chunks,
                         const size_t *chunkSizes, size_t numChunks) {
  static std::atomic<unsigned> counter{0};
  std::string dir, base;
  splitPath(target, &dir, &base);
  std::string tmpPath;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    tmpPath = dir + "/." + base + ".tmp-" +
              std::to_string(static_cast<long>(getpid())) + "-" +
              std::to_string(counter.fetch_add(1));
    // A new file gets the usual mode (0666 less the umask).
    fd = ::open(tmpPath.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                existing ? 0600 : 0666);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0)
    return makeStatus(SEQC_STATUS_IO_ERROR, "cannot create %s: %s",
                      name.c_str(), std::strerror(errno));
  auto fail = [&](seqc_status *status) {
    if (fd >= 0)
      ::close(fd);
    ::unlink(tmpPath.c_str());
    return status;
  };
  if (existing) {
    // The file keeps its permissions, and its owner where allowed.
    if (::fchmod(fd, existing->st_mode & 07777) != 0)
      return fail(makeStatus(SEQC_STATUS_IO_ERROR,
                             "cannot write %s: cannot keep its mode: %s",
                             name.c_str(), std::strerror(errno)));
    if (existing->st_uid != ::geteuid() || existing->st_gid != ::getegid())
      (void)!::fchown(fd, existing->st_uid, existing->st_gid);
  }
  if (seqc_status *status =
          writeChunks(fd, name, chunks, chunkSizes, numChunks))
    return fail(status);
  if (seqc_status *status = syncIfRegular(fd, name))
    return fail(status);
  int closed = ::close(fd);
  fd = -1;
  if (closed != 0)
    return fail(makeStatus(SEQC_STATUS_IO_ERROR, "cannot write %s: %s",
                           name.c_str(), std::strerror(errno)));
  if (::rename(tmpPath.c_str(), target.c_str()) != 0)
    return fail(makeStatus(SEQC_STATUS_IO_ERROR, "cannot write %s: %s",
                           name.c_str(), std::strerror(errno)));
  return nullptr;
}

} // namespace

seqc_status *writeOutputFile(const char *path, const void *const *chunks,
                             const size_t *chunkSizes, size_t numChunks) {
  if (std::strcmp(path, "-") == 0) {
    // After what the program printed, in order.
    std::fflush(stdout);
    const std::string name = "standard output";
    SEQC_RETURN_IF_ERROR(
        writeChunks(STDOUT_FILENO, name, chunks, chunkSizes, numChunks));
    return syncIfRegular(STDOUT_FILENO, name);
  }
  std::string target;
  SEQC_RETURN_IF_ERROR(resolveLinks(path, &target));
  // Messages name the path as given, and what a link led to.
  std::string name = "'" + std::string(path) + "'";
  if (target != path)
    name += " (a link to '" + target + "')";
  struct stat st;
  if (::stat(target.c_str(), &st) != 0) {
    if (errno != ENOENT)
      return makeStatus(SEQC_STATUS_IO_ERROR, "cannot write %s: %s",
                        name.c_str(), std::strerror(errno));
    return replaceFile(target, name, nullptr, chunks, chunkSizes, numChunks);
  }
  if (S_ISREG(st.st_mode))
    return replaceFile(target, name, &st, chunks, chunkSizes, numChunks);
  if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))
    return makeStatus(SEQC_STATUS_IO_ERROR,
                      "cannot write %s: it is %s, not a regular file, a "
                      "FIFO or a character device",
                      name.c_str(),
                      S_ISDIR(st.st_mode)    ? "a directory"
                      : S_ISBLK(st.st_mode)  ? "a block device"
                      : S_ISSOCK(st.st_mode) ? "a socket"
                                             : "another kind of file");
  // A pipe or a device: written in place, in order (opening a FIFO waits
  // for its reader).
  int fd;
  do
    fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return makeStatus(SEQC_STATUS_IO_ERROR, "cannot open %s: %s", name.c_str(),
                      std::strerror(errno));
  seqc_status *status = writeChunks(fd, name, chunks, chunkSizes, numChunks);
  if (::close(fd) != 0 && !status)
    status = makeStatus(SEQC_STATUS_IO_ERROR, "cannot write %s: %s",
                        name.c_str(), std::strerror(errno));
  return status;
}

//===----------------------------------------------------------------------===//
// Byte sizes
//===----------------------------------------------------------------------===//

bool parseByteSize(const char *text, uint64_t *out) {
  const char *p = text;
  uint64_t value = 0;
  if (*p < '0' || *p > '9')
    return false;
  for (; *p >= '0' && *p <= '9'; ++p)
    if (__builtin_mul_overflow(value, 10, &value) ||
        __builtin_add_overflow(value, static_cast<uint64_t>(*p - '0'), &value))
      return false;
  static const char kUnits[] = "KMGT";
  int shift = 0;
  if (*p)
    if (const char *unit = std::strchr(
            kUnits, std::toupper(static_cast<unsigned char>(*p)))) {
      shift = 10 * static_cast<int>(unit - kUnits + 1);
      if (*++p == 'i')
        ++p;
    }
  if (*p == 'B' || *p == 'b')
    ++p;
  if (*p || (shift && value > (UINT64_MAX >> shift)))
    return false;
  *out = value << shift;
  return true;
}

std::string formatBytes(uint64_t bytes) {
  static const char *const kUnits[] = {"KiB", "MiB", "GiB",
                                       "TiB", "PiB", "EiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  char text[64];
  std::snprintf(text, sizeof(text), "%.2f %s (%llu bytes)", value, kUnits[unit],
                static_cast<unsigned long long>(bytes));
  return text;
}

//===----------------------------------------------------------------------===//
// Printable text
//===----------------------------------------------------------------------===//

namespace {

/// The length of the valid UTF-8 sequence at the start of `text` (RFC 3629:
/// no overlong forms, no surrogates, at most U+10FFFF), or 0.
size_t utf8SequenceLength(std::string_view text) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char c = byte(0);
  size_t length = c < 0x80                 ? 1
                  : c >= 0xc2 && c <= 0xdf ? 2
                  : c >= 0xe0 && c <= 0xef ? 3
                  : c >= 0xf0 && c <= 0xf4 ? 4
                                           : 0;
  if (length == 0 || length > text.size())
    return 0;
  for (size_t i = 1; i < length; ++i)
    if ((byte(i) & 0xc0) != 0x80)
      return 0;
  if ((c == 0xe0 && byte(1) < 0xa0) || (c == 0xed && byte(1) > 0x9f) ||
      (c == 0xf0 && byte(1) < 0x90) || (c == 0xf4 && byte(1) > 0x8f))
    return 0;
  return length;
}

} // namespace

std::string printableText(std::string_view text, size_t maxBytes) {
  std::string result;
  while (!text.empty()) {
    size_t length = utf8SequenceLength(text);
    unsigned char c = static_cast<unsigned char>(text[0]);
    // C0 controls, DEL, and C1 controls (U+0080 to U+009F), which some
    // terminals obey even UTF-8 encoded.
    bool replace = length == 0 || c < 0x20 || c == 0x7f ||
                   (c == 0xc2 && static_cast<unsigned char>(text[1]) < 0xa0);
    size_t size = length == 0 ? 1 : length;
    if (result.size() + size > maxBytes) {
      result += "...";
      break;
    }
    if (replace)
      result += '?';
    else
      result.append(text.data(), size);
    text.remove_prefix(size);
  }
  return result;
}

} // namespace seqc
