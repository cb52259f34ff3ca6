//===- Npy.cpp - .npy reader and writer -----------------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The .npy format (numpy/lib/format.py): the magic "\x93NUMPY", a version
// byte pair, a little-endian header length (2 bytes in 1.0, 4 in 2.0), a
// Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)}
// padded with spaces and a newline, then the raw data. The dict is parsed by
// a dedicated scanner accepting only that grammar: no Python evaluation, no
// recursion, bounded by the header length.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

using namespace seqc;

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
/// numpy itself never writes headers over 64 KiB for the ranks we support;
/// a larger claim is corruption, and we read the header into memory.
constexpr uint32_t kMaxHeaderLength = 1u << 20;

struct DescrName {
  seqc_dtype dtype;
  const char *descr;
};
constexpr DescrName kDescrs[] = {
    {SEQC_DTYPE_F32, "<f4"}, {SEQC_DTYPE_F64, "<f8"}, {SEQC_DTYPE_F16, "<f2"},
    {SEQC_DTYPE_I32, "<i4"}, {SEQC_DTYPE_I64, "<i8"},
};

/// The parsed header dict.
struct NpyHeader {
  seqc_dtype dtype = SEQC_DTYPE_F32;
  int rank = 0;
  int64_t shape[SEQC_MAX_RANK] = {};
};

/// Scans the header dict; on error sets `error` and returns false.
class HeaderScanner {
public:
  explicit HeaderScanner(std::string_view text) : cur(text), all(text) {}

  bool parse(NpyHeader &out) {
    bool haveDescr = false, haveOrder = false, haveShape = false;
    skipSpace();
    if (!consume('{'))
      return fail("header is not a dict");
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (!parseQuoted(key))
        return fail("expected a quoted key in the header dict");
      skipSpace();
      if (!consume(':'))
        return fail("expected ':' after a key in the header dict");
      skipSpace();
      if (key == "descr") {
        if (haveDescr)
          return fail("duplicate key 'descr'");
        haveDescr = true;
        if (!parseDescr(out))
          return false;
      } else if (key == "fortran_order") {
        if (haveOrder)
          return fail("duplicate key 'fortran_order'");
        haveOrder = true;
        if (consumeWord("True"))
          return fail("fortran_order is True: only C-order arrays are "
                      "supported (use np.ascontiguousarray)");
        if (!consumeWord("False"))
          return fail("fortran_order must be True or False");
      } else if (key == "shape") {
        if (haveShape)
          return fail("duplicate key 'shape'");
        haveShape = true;
        if (!parseShape(out))
          return false;
      } else {
        error = "unexpected key '" + printableText(key, 64) + "' in the header";
        return false;
      }
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume('}'))
        break;
      return fail("expected ',' or '}' in the header dict");
    }
    skipSpace();
    if (!cur.empty())
      return fail("unexpected characters after the header dict");
    if (!haveDescr || !haveOrder || !haveShape)
      return fail(!haveDescr   ? "header has no 'descr'"
                  : !haveOrder ? "header has no 'fortran_order'"
                               : "header has no 'shape'");
    return true;
  }

  std::string error;

private:
  std::string_view cur;
  std::string_view all;

  bool fail(const char *message) {
    error = message;
    return false;
  }
  void skipSpace() {
    while (!cur.empty() && (cur.front() == ' ' || cur.front() == '\t' ||
                            cur.front() == '\n' || cur.front() == '\r'))
      cur.remove_prefix(1);
  }
  bool consume(char c) {
    if (cur.empty() || cur.front() != c)
      return false;
    cur.remove_prefix(1);
    return true;
  }
  bool consumeWord(std::string_view word) {
    if (cur.substr(0, word.size()) != word)
      return false;
    cur.remove_prefix(word.size());
    return true;
  }
  /// A Python string literal in single or double quotes, without escapes
  /// (numpy's keys and descrs never need them).
  bool parseQuoted(std::string &out) {
    if (cur.empty() || (cur.front() != '\'' && cur.front() != '"'))
      return false;
    char quote = cur.front();
    cur.remove_prefix(1);
    size_t close = cur.find(quote);
    if (close == std::string_view::npos)
      return false;
    std::string_view body = cur.substr(0, close);
    if (body.find('\\') != std::string_view::npos)
      return false;
    out.assign(body.data(), body.size());
    cur.remove_prefix(close + 1);
    return true;
  }
  bool parseDescr(NpyHeader &out) {
    std::string descr;
    if (!parseQuoted(descr))
      return fail("descr must be a quoted string (structured dtypes are not "
                  "supported)");
    for (const DescrName &entry : kDescrs) {
      if (descr == entry.descr) {
        out.dtype = entry.dtype;
        return true;
      }
    }
    descr = printableText(descr, 32);
    if (!descr.empty() && descr[0] == '>')
      error = "big-endian data (descr '" + descr +
              "') is not supported: convert with arr.astype(arr.dtype."
              "newbyteorder('<'))";
    else
      error = "unsupported dtype descr '" + descr +
              "' (supported: <f4, <f8, <f2, <i4, <i8)";
    return false;
  }
  bool parseShape(NpyHeader &out) {
    if (!consume('('))
      return fail("shape must be a tuple");
    out.rank = 0;
    while (true) {
      skipSpace();
      if (consume(')'))
        return true;
      if (cur.empty() || cur.front() < '0' || cur.front() > '9')
        return fail("shape must be a tuple of non-negative integers");
      int64_t value = 0;
      while (!cur.empty() && cur.front() >= '0' && cur.front() <= '9') {
        if (__builtin_mul_overflow(value, 10, &value) ||
            __builtin_add_overflow(value, cur.front() - '0', &value))
          return fail("shape entry overflows int64");
        cur.remove_prefix(1);
      }
      if (out.rank == SEQC_MAX_RANK)
        return fail("shape has more dimensions than the supported maximum "
                    "of 8");
      out.shape[out.rank++] = value;
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume(')'))
        return true;
      return fail("expected ',' or ')' in shape");
    }
  }
};

uint32_t readLE(const uint8_t *bytes, int n) {
  uint32_t value = 0;
  for (int i = n - 1; i >= 0; --i)
    value = (value << 8) | bytes[i];
  return value;
}

/// Reads exactly `size` bytes at `offset`; false on error or short read.
bool readAt(int fd, void *buffer, size_t size, off_t offset) {
  char *p = static_cast<char *>(buffer);
  while (size > 0) {
    ssize_t n = ::pread(fd, p, size, offset);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    size -= static_cast<size_t>(n);
    offset += n;
  }
  return true;
}

seqc_status *invalid(const char *path, const std::string &message) {
  return makeStatus(SEQC_STATUS_INVALID_FILE, "'%s': %s", path,
                    message.c_str());
}

/// Reads an open .npy file; `size` is the file size.
seqc_status *readNpyFd(const char *path, int fd, size_t size,
                       seqc_tensor *out) {
  uint8_t prefix[12];
  if (size < 10)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "'%s': file too short to be .npy (%zu bytes)", path,
                      size);
  if (!readAt(fd, prefix, size < 12 ? 10 : 12, 0))
    return makeStatus(SEQC_STATUS_IO_ERROR, "cannot read '%s': %s", path,
                      std::strerror(errno ? errno : EIO));
  if (std::memcmp(prefix, kMagic, kMagicSize) != 0)
    return invalid(path, "bad magic: not a .npy file");
  int major = prefix[6], minor = prefix[7];
  size_t headerStart;
  uint32_t headerLength;
  if (major == 1 && minor == 0) {
    headerStart = 10;
    headerLength = readLE(prefix + 8, 2);
  } else if (major == 2 && minor == 0) {
    if (size < 12)
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "'%s': file too short to be .npy (%zu bytes)", path,
                        size);
    headerStart = 12;
    headerLength = readLE(prefix + 8, 4);
  } else {
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "'%s': unsupported .npy format version %d.%d "
                      "(supported: 1.0, 2.0)",
                      path, major, minor);
  }
  if (headerLength > kMaxHeaderLength)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "'%s': header length %u is absurd", path, headerLength);
  if (headerLength > size - headerStart)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "'%s': header length %u runs past the end of the file "
                      "(%zu bytes)",
                      path, headerLength, size);
  std::string headerText(headerLength, '\0');
  if (headerLength && !readAt(fd, &headerText[0], headerLength,
                              static_cast<off_t>(headerStart)))
    return makeStatus(SEQC_STATUS_IO_ERROR, "cannot read '%s': %s", path,
                      std::strerror(errno ? errno : EIO));
  NpyHeader header;
  HeaderScanner scanner(headerText);
  if (!scanner.parse(header))
    return invalid(path, scanner.error);

  int64_t numel;
  size_t bytes;
  std::string shapeText = formatShape(header.shape, header.rank);
  if (!checkedNumel(header.shape, header.rank, &numel) ||
      !checkedBytes(numel, seqc_dtype_size(header.dtype), &bytes))
    return invalid(path, "shape " + shapeText + " is too large");
  size_t dataStart = headerStart + headerLength;
  size_t available = size - dataStart;
  if (available < bytes)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "'%s': truncated: shape %s of %s needs %zu data bytes "
                      "but the file has %zu",
                      path, shapeText.c_str(), seqc_dtype_name(header.dtype),
                      bytes, available);
  if (available > bytes)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "'%s': %zu unexpected bytes after the data of shape %s "
                      "of %s",
                      path, available - bytes, shapeText.c_str(),
                      seqc_dtype_name(header.dtype));

  void *data = alignedAlloc(bytes);
  if (!data)
    return makeStatus(SEQC_STATUS_OUT_OF_MEMORY,
                      "'%s': cannot allocate %zu bytes", path, bytes);
  if (bytes && !readAt(fd, data, bytes, static_cast<off_t>(dataStart))) {
    int err = errno ? errno : EIO;
    std::free(data);
    return makeStatus(SEQC_STATUS_IO_ERROR, "cannot read '%s': %s", path,
                      std::strerror(err));
  }
  out->dtype = header.dtype;
  out->rank = header.rank;
  for (int i = 0; i < SEQC_MAX_RANK; ++i)
    out->shape[i] = i < header.rank ? header.shape[i] : 0;
  out->data = data;
  return nullptr;
}

} // namespace

extern "C" seqc_status *seqc_npy_read(const char *path,
                                      seqc_tensor *out_tensor) {
  if (!path || !out_tensor)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_npy_read: path and out_tensor must not be NULL");
  // O_NONBLOCK so that a FIFO is rejected below instead of blocking.
  int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return makeStatus(SEQC_STATUS_IO_ERROR, "cannot open '%s': %s", path,
                      std::strerror(errno));
  struct stat st;
  seqc_status *status = nullptr;
  if (::fstat(fd, &st) != 0)
    status = makeStatus(SEQC_STATUS_IO_ERROR, "cannot stat '%s': %s", path,
                        std::strerror(errno));
  else if (!S_ISREG(st.st_mode))
    status =
        makeStatus(SEQC_STATUS_IO_ERROR, "'%s' is not a regular file", path);
  else
    status = readNpyFd(path, fd, static_cast<size_t>(st.st_size), out_tensor);
  ::close(fd);
  return status;
}

extern "C" seqc_status *seqc_npy_write(const char *path,
                                       const seqc_tensor *tensor) {
  if (!path || !tensor)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_npy_write: path and tensor must not be NULL");
  const char *descr = nullptr;
  for (const DescrName &entry : kDescrs)
    if (entry.dtype == tensor->dtype)
      descr = entry.descr;
  if (!descr)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "cannot write '%s': dtype %s has no .npy equivalent",
                      path, seqc_dtype_name(tensor->dtype));
  int64_t numel = seqc_tensor_numel(tensor);
  size_t bytes;
  if (numel < 0 || !checkedBytes(numel, seqc_dtype_size(tensor->dtype), &bytes))
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "cannot write '%s': invalid rank or shape", path);
  if (bytes && !tensor->data)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "cannot write '%s': tensor data is NULL", path);

  std::string header = "{'descr': '";
  header += descr;
  header += "', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < tensor->rank; ++i) {
    header += std::to_string(tensor->shape[i]);
    header += tensor->rank == 1 ? "," : i + 1 < tensor->rank ? ", " : "";
  }
  header += "), }";
  // numpy pads so that the data starts on a 64-byte boundary and ends the
  // header with a newline.
  while ((10 + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  uint8_t prefix[10];
  std::memcpy(prefix, kMagic, kMagicSize);
  prefix[6] = 1;
  prefix[7] = 0;
  prefix[8] = static_cast<uint8_t>(header.size() & 0xff);
  prefix[9] = static_cast<uint8_t>(header.size() >> 8);
  const void *chunks[] = {prefix, header.data(), tensor->data};
  size_t sizes[] = {sizeof(prefix), header.size(), bytes};
  return writeOutputFile(path, chunks, sizes, bytes ? 3 : 2);
}
