//===- TestUtil.h - Helpers for the runtime unit tests ----------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_TEST_UNIT_RUNTIME_TESTUTIL_H
#define SEQC_TEST_UNIT_RUNTIME_TESTUTIL_H

#include "Support.h"
#include "seqc_runtime.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <ftw.h>
#include <sstream>
#include <string>
#include <vector>

namespace seqc::test {

/// A fresh directory under $TMPDIR, removed with its files at scope exit.
class TempDir {
public:
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") +
                          "/seqc-runtime-test-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()))
      dir = buffer.data();
  }
  ~TempDir() {
    if (!dir.empty())
      nftw(dir.c_str(), removeEntry, 16, FTW_DEPTH | FTW_PHYS);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return dir; }
  std::string file(const std::string &name) const { return dir + "/" + name; }

private:
  static int removeEntry(const char *path, const struct stat *, int,
                         struct FTW *) {
    return ::remove(path);
  }
  std::string dir;
};

inline void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The raw bytes of a safetensors file with the given header and data;
/// the 8-byte length prefix says `headerLength` (default: the real one).
inline std::string safetensorsBytes(const std::string &header,
                                    const std::string &data,
                                    uint64_t headerLength = UINT64_MAX) {
  if (headerLength == UINT64_MAX)
    headerLength = header.size();
  std::string bytes;
  for (int i = 0; i < 8; ++i)
    bytes += static_cast<char>((headerLength >> (8 * i)) & 0xff);
  return bytes + header + data;
}

/// Bytes of `values` as a little-endian array (the test hosts are LE).
template <typename T> std::string rawBytes(const std::vector<T> &values) {
  return std::string(reinterpret_cast<const char *>(values.data()),
                     values.size() * sizeof(T));
}

/// Succeeds if `status` is NULL; otherwise prints its message. Frees it.
inline ::testing::AssertionResult isOk(seqc_status *status) {
  StatusPtr owned(status);
  if (!status)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "unexpected error: " << seqc_status_message(status);
}

/// Succeeds if `status` has `code` and its message contains each of
/// `parts`. Frees it.
inline ::testing::AssertionResult
failsWith(seqc_status *status, seqc_status_code code,
          std::initializer_list<const char *> parts) {
  StatusPtr owned(status);
  if (!status)
    return ::testing::AssertionFailure() << "expected an error, got OK";
  std::string message = seqc_status_message(status);
  if (seqc_status_get_code(status) != code)
    return ::testing::AssertionFailure()
           << "expected code " << code << ", got "
           << seqc_status_get_code(status) << ": " << message;
  for (const char *part : parts)
    if (message.find(part) == std::string::npos)
      return ::testing::AssertionFailure()
             << "message lacks '" << part << "': " << message;
  return ::testing::AssertionSuccess() << message;
}

/// A tensor over caller-owned data.
inline seqc_tensor makeTensor(seqc_dtype dtype, std::vector<int64_t> shape,
                              void *data) {
  seqc_tensor tensor = {};
  tensor.dtype = dtype;
  tensor.rank = static_cast<int32_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    tensor.shape[i] = shape[i];
  tensor.data = data;
  return tensor;
}

} // namespace seqc::test

#endif // SEQC_TEST_UNIT_RUNTIME_TESTUTIL_H
