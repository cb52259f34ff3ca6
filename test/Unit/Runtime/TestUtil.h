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
#include <fcntl.h>
#include <fstream>
#include <ftw.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h> // environ (_GNU_SOURCE)
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

/// How a process of spawnProcess ended, and what it wrote.
struct ProcessResult {
  bool exited = false;
  int exitCode = -1;
  std::string out, err;
};

/// Starts `argv` (argv[0] the program's path) in this environment, its
/// stdout and stderr going to `outPath` and `errPath`; -1 (and a test
/// failure) if it cannot be spawned.
inline pid_t spawnProcess(std::vector<std::string> argv,
                          const std::string &outPath,
                          const std::string &errPath) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, outPath.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, errPath.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char *> pointers;
  for (std::string &arg : argv)
    pointers.push_back(&arg[0]);
  pointers.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr,
                       pointers.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0) << "cannot spawn " << argv[0];
  return rc == 0 ? pid : -1;
}

/// Waits for `pid` (from spawnProcess; -1 gives a result that did not
/// exit) and reads what it wrote.
inline ProcessResult waitProcess(pid_t pid, const std::string &outPath,
                                 const std::string &errPath) {
  ProcessResult result;
  if (pid < 0)
    return result;
  int status = 0;
  waitpid(pid, &status, 0);
  result.exited = WIFEXITED(status);
  result.exitCode = result.exited ? WEXITSTATUS(status) : -1;
  result.out = readFile(outPath);
  result.err = readFile(errPath);
  return result;
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
