//===- NpyTest.cpp - Tests of .npy reading and writing --------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cstring>
#include <sys/stat.h>

using namespace seqc;
using namespace seqc::test;

namespace {

/// A .npy file with header dict `dict` (padded like numpy does) and `data`.
std::string npyBytes(const std::string &dict, const std::string &data,
                     int major = 1) {
  size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((prefix + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += static_cast<char>(major);
  bytes += '\0';
  for (size_t i = 0; i < prefix - 8; ++i)
    bytes += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return bytes + header + data;
}

class NpyTest : public ::testing::Test {
protected:
  TempDir dir;

  ::testing::AssertionResult
  rejects(const std::string &bytes, std::initializer_list<const char *> parts) {
    std::string path = dir.file("t.npy");
    writeFile(path, bytes);
    seqc_tensor tensor = {};
    return failsWith(seqc_npy_read(path.c_str(), &tensor),
                     SEQC_STATUS_INVALID_FILE, parts);
  }

  /// Writes and reads back a tensor, checking every field.
  void roundTrip(seqc_dtype dtype, std::vector<int64_t> shape,
                 const std::string &data) {
    std::string path = dir.file("rt.npy");
    std::string copy = data;
    seqc_tensor in =
        makeTensor(dtype, shape, copy.empty() ? nullptr : &copy[0]);
    ASSERT_TRUE(isOk(seqc_npy_write(path.c_str(), &in)));
    std::string file = readFile(path);
    ASSERT_GE(file.size(), 10u);
    uint16_t headerLength = static_cast<uint16_t>(
        static_cast<uint8_t>(file[8]) | static_cast<uint8_t>(file[9]) << 8);
    EXPECT_EQ((10 + headerLength) % 64, 0) << "numpy aligns the data to 64";
    EXPECT_EQ(file[10 + headerLength - 1], '\n');
    seqc_tensor out = {};
    ASSERT_TRUE(isOk(seqc_npy_read(path.c_str(), &out)));
    EXPECT_EQ(out.dtype, dtype);
    ASSERT_EQ(out.rank, static_cast<int32_t>(shape.size()));
    for (size_t i = 0; i < shape.size(); ++i)
      EXPECT_EQ(out.shape[i], shape[i]);
    EXPECT_EQ(std::string(static_cast<char *>(out.data), data.size()), data);
    std::free(out.data);
  }
};

TEST_F(NpyTest, RoundTripsEveryDtypeAndRank) {
  roundTrip(SEQC_DTYPE_F32, {2, 3}, rawBytes<float>({1, 2, 3, 4, 5, -6.5f}));
  roundTrip(SEQC_DTYPE_F64, {1}, rawBytes<double>({0.1}));
  roundTrip(SEQC_DTYPE_F16, {3}, rawBytes<uint16_t>({0x3c00, 1, 0xfc00}));
  roundTrip(SEQC_DTYPE_I32, {}, rawBytes<int32_t>({-7}));
  roundTrip(SEQC_DTYPE_I64, {2, 1, 1, 1, 1, 1, 1, 1},
            rawBytes<int64_t>({INT64_MIN, INT64_MAX}));
  roundTrip(SEQC_DTYPE_F32, {0, 4}, "");
}

TEST_F(NpyTest, WritesNumpysHeader) {
  std::string path = dir.file("h.npy");
  float data[3] = {1, 2, 3};
  seqc_tensor t = makeTensor(SEQC_DTYPE_F32, {3}, data);
  ASSERT_TRUE(isOk(seqc_npy_write(path.c_str(), &t)));
  std::string file = readFile(path);
  EXPECT_EQ(file.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  EXPECT_EQ(file.compare(10, dict.size(), dict), 0) << file.substr(10, 64);
  t = makeTensor(SEQC_DTYPE_F32, {3, 1}, data);
  ASSERT_TRUE(isOk(seqc_npy_write(path.c_str(), &t)));
  EXPECT_NE(readFile(path).find("'shape': (3, 1), }"), std::string::npos);
}

TEST_F(NpyTest, ReadsNumpyVariants) {
  std::string path = dir.file("v.npy");
  std::string data = rawBytes<int32_t>({1, 2, 3, 4, 5, 6});
  const char *dicts[] = {
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }",
      "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2,3)}",
      "{ 'shape' : ( 2 , 3 , ) , 'fortran_order':False,'descr':'<i4' }",
  };
  for (const char *dict : dicts) {
    for (int major : {1, 2}) {
      writeFile(path, npyBytes(dict, data, major));
      seqc_tensor t = {};
      ASSERT_TRUE(isOk(seqc_npy_read(path.c_str(), &t))) << dict;
      EXPECT_EQ(t.dtype, SEQC_DTYPE_I32);
      EXPECT_EQ(t.rank, 2);
      EXPECT_EQ(t.shape[1], 3);
      EXPECT_EQ(static_cast<int32_t *>(t.data)[5], 6);
      std::free(t.data);
    }
  }
}

TEST_F(NpyTest, RejectsUnreadableFiles) {
  seqc_tensor t = {};
  std::string missing = dir.file("missing.npy");
  EXPECT_TRUE(failsWith(seqc_npy_read(missing.c_str(), &t),
                        SEQC_STATUS_IO_ERROR, {"cannot open", "missing.npy"}));
  EXPECT_TRUE(failsWith(seqc_npy_read(dir.path().c_str(), &t),
                        SEQC_STATUS_IO_ERROR, {"not a regular file"}));
  // A FIFO must be rejected, not block waiting for a writer.
  std::string fifo = dir.file("fifo.npy");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_TRUE(failsWith(seqc_npy_read(fifo.c_str(), &t), SEQC_STATUS_IO_ERROR,
                        {"not a regular file"}));
  EXPECT_TRUE(failsWith(seqc_npy_read(nullptr, &t),
                        SEQC_STATUS_INVALID_ARGUMENT, {"must not be NULL"}));
}

TEST_F(NpyTest, RejectsBadPreambles) {
  EXPECT_TRUE(rejects("", {"file too short to be .npy (0 bytes)"}));
  EXPECT_TRUE(rejects("\x93NUMP", {"file too short"}));
  EXPECT_TRUE(rejects("PK\x03\x04 not npy at all", {"bad magic"}));
  std::string v3 = npyBytes("{}", "");
  v3[6] = 3;
  EXPECT_TRUE(rejects(v3, {"unsupported .npy format version 3.0"}));
  std::string v11 = npyBytes("{}", "");
  v11[7] = 1;
  EXPECT_TRUE(rejects(v11, {"version 1.1"}));
  std::string past = npyBytes("{}", "");
  past[9] = 0x10; // Header length 4096 + ...
  EXPECT_TRUE(rejects(past, {"runs past the end of the file"}));
  std::string absurd = npyBytes("{}", "", 2);
  absurd[11] = 0x7f;
  EXPECT_TRUE(rejects(absurd, {"is absurd"}));
  EXPECT_TRUE(rejects(std::string("\x93NUMPY\x02\x00\x01\x00", 10),
                      {"file too short"}));
}

TEST_F(NpyTest, RejectsBadHeaders) {
  std::string f4 = rawBytes<float>({1, 2});
  auto dict = [](const std::string &descr, const std::string &order,
                 const std::string &shape) {
    return "{'descr': " + descr + ", 'fortran_order': " + order +
           ", 'shape': " + shape + ", }";
  };
  EXPECT_TRUE(rejects(npyBytes(dict("'<f4'", "True", "(2,)"), f4),
                      {"fortran_order is True"}));
  EXPECT_TRUE(rejects(npyBytes(dict("'<f4'", "1", "(2,)"), f4),
                      {"fortran_order must be True or False"}));
  EXPECT_TRUE(rejects(npyBytes(dict("'>f4'", "False", "(2,)"), f4),
                      {"big-endian data (descr '>f4') is not supported"}));
  EXPECT_TRUE(rejects(npyBytes(dict("'|u1'", "False", "(8,)"), f4),
                      {"unsupported dtype descr '|u1'"}));
  EXPECT_TRUE(rejects(npyBytes(dict("'<c8'", "False", "(1,)"), f4),
                      {"unsupported dtype descr '<c8'"}));
  EXPECT_TRUE(rejects(npyBytes(dict("[('a', '<f4')]", "False", "(2,)"), f4),
                      {"structured dtypes are not supported"}));
  EXPECT_TRUE(rejects(npyBytes(dict("'<f4'", "False", "[2]"), f4),
                      {"shape must be a tuple"}));
  EXPECT_TRUE(rejects(npyBytes(dict("'<f4'", "False", "(-2,)"), f4),
                      {"non-negative integers"}));
  EXPECT_TRUE(rejects(npyBytes(dict("'<f4'", "False", "(2 2)"), f4),
                      {"expected ',' or ')' in shape"}));
  EXPECT_TRUE(
      rejects(npyBytes(dict("'<f4'", "False", "(99999999999999999999,)"), f4),
              {"shape entry overflows int64"}));
  EXPECT_TRUE(
      rejects(npyBytes(dict("'<f4'", "False", "(1,1,1,1,1,1,1,1,2)"), f4),
              {"more dimensions than the supported maximum of 8"}));
  EXPECT_TRUE(
      rejects(npyBytes(dict("'<f4'", "False", "(4294967296, 4294967296)"), f4),
              {"shape [4294967296, 4294967296] is too large"}));
  EXPECT_TRUE(rejects(npyBytes("{'descr': '<f4', 'shape': (2,), }", f4),
                      {"header has no 'fortran_order'"}));
  EXPECT_TRUE(rejects(npyBytes("{'fortran_order': False, 'shape': (2,)}", f4),
                      {"header has no 'descr'"}));
  EXPECT_TRUE(rejects(npyBytes("{'descr': '<f4', 'fortran_order': False}", f4),
                      {"header has no 'shape'"}));
  EXPECT_TRUE(
      rejects(npyBytes(dict("'<f4'", "False", "(2,)") + "{'descr': '<f4'}", f4),
              {"unexpected characters after the header dict"}));
  EXPECT_TRUE(rejects(npyBytes("{'descr': '<f4', 'descr': '<f4', "
                               "'fortran_order': False, 'shape': (2,)}",
                               f4),
                      {"duplicate key 'descr'"}));
  EXPECT_TRUE(rejects(npyBytes("{'descr': '<f4', 'fortran_order': False, "
                               "'shape': (2,), 'extra': 1}",
                               f4),
                      {"unexpected key 'extra'"}));
  EXPECT_TRUE(rejects(npyBytes("[1, 2]", f4), {"header is not a dict"}));
  EXPECT_TRUE(rejects(npyBytes("{'descr' '<f4'}", f4), {"expected ':'"}));
  EXPECT_TRUE(rejects(npyBytes("{'descr': '<f4'", f4),
                      {"expected ',' or '}' in the header dict"}));
  EXPECT_TRUE(rejects(npyBytes("{'descr': '<f4', 3: 1}", f4),
                      {"expected a quoted key"}));
  EXPECT_TRUE(rejects(npyBytes("{'descr': 'a\\'b'}", f4),
                      {"descr must be a quoted string"}));
}

TEST_F(NpyTest, RejectsWrongDataSizes) {
  std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  EXPECT_TRUE(rejects(npyBytes(dict, rawBytes<float>({1, 2})),
                      {"truncated: shape [3] of f32 needs 12 data bytes but "
                       "the file has 8"}));
  EXPECT_TRUE(rejects(npyBytes(dict, rawBytes<float>({1, 2, 3, 4})),
                      {"4 unexpected bytes after the data of shape [3]"}));
}

TEST_F(NpyTest, WriterRejectsBadTensors) {
  std::string path = dir.file("w.npy");
  uint16_t bf16[1] = {0};
  seqc_tensor t = makeTensor(SEQC_DTYPE_BF16, {1}, bf16);
  EXPECT_TRUE(failsWith(seqc_npy_write(path.c_str(), &t),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"dtype bf16 has no .npy equivalent"}));
  t = makeTensor(SEQC_DTYPE_F32, {2}, nullptr);
  EXPECT_TRUE(failsWith(seqc_npy_write(path.c_str(), &t),
                        SEQC_STATUS_INVALID_ARGUMENT, {"data is NULL"}));
  t.rank = 9;
  EXPECT_TRUE(failsWith(seqc_npy_write(path.c_str(), &t),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"invalid rank or shape"}));
  t = makeTensor(SEQC_DTYPE_F32, {-1}, bf16);
  EXPECT_TRUE(failsWith(seqc_npy_write(path.c_str(), &t),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"invalid rank or shape"}));
  t = makeTensor(SEQC_DTYPE_F32, {0}, nullptr);
  EXPECT_TRUE(failsWith(seqc_npy_write("/nonexistent-dir/a.npy", &t),
                        SEQC_STATUS_IO_ERROR, {"cannot create"}));
}

TEST_F(NpyTest, SurvivesRandomMutations) {
  std::string valid =
      npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
               rawBytes<float>({1, 2, 3, 4}));
  std::string path = dir.file("fuzz.npy");
  uint64_t state = 99;
  auto next = [&state]() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  for (int iteration = 0; iteration < 2000; ++iteration) {
    std::string bytes = valid;
    for (int e = 0; e < 3; ++e) {
      size_t pos = next() % bytes.size();
      if (next() % 2)
        bytes[pos] = static_cast<char>(next());
      else
        bytes.erase(pos, 1);
    }
    writeFile(path, bytes);
    seqc_tensor t = {};
    seqc_status *status = seqc_npy_read(path.c_str(), &t);
    if (!status)
      std::free(t.data);
    seqc_status_free(status);
  }
}

} // namespace
