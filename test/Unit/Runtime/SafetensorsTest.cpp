//===- SafetensorsTest.cpp - Tests of safetensors reading and writing -----===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "Safetensors.h"

#include "TestUtil.h"

#include <cstring>
#include <sys/stat.h>

using namespace seqc;
using namespace seqc::test;

namespace {

class SafetensorsTest : public ::testing::Test {
protected:
  TempDir dir;

  /// Writes raw bytes to a file and validates it with readSafetensors.
  ::testing::AssertionResult
  rejects(const std::string &bytes, std::initializer_list<const char *> parts,
          seqc_status_code code = SEQC_STATUS_INVALID_FILE) {
    std::string path = dir.file("t.safetensors");
    writeFile(path, bytes);
    SafetensorsFile file;
    return failsWith(readSafetensors(path.c_str(), &file), code, parts);
  }

  /// A file with one tensor entry `entry` and `dataSize` data bytes.
  static std::string withEntry(const std::string &entry, size_t dataSize = 24) {
    return safetensorsBytes("{\"w\": " + entry + "}",
                            std::string(dataSize, '\0'));
  }
};

TEST_F(SafetensorsTest, RoundTripsEveryDtype) {
  std::vector<float> f32 = {1.5f, -2.0f, 3.25f, 0.0f, 5.0f, 6.0f};
  std::vector<uint16_t> f16 = {0x3c00, 0xc000, 0x7bff}; // Odd byte count.
  std::vector<int64_t> i64 = {INT64_MIN, 42};
  std::vector<double> f64 = {3.141592653589793};
  std::vector<int32_t> i32 = {7};
  std::vector<SafetensorsWriteEntry> entries = {
      {"half", SEQC_DTYPE_F16, {3}, f16.data()},
      {"layers.0.w", SEQC_DTYPE_F32, {2, 3}, f32.data()},
      {"ids", SEQC_DTYPE_I64, {2}, i64.data()},
      {"scalar", SEQC_DTYPE_F64, {}, f64.data()},
      {"empty", SEQC_DTYPE_BF16, {0, 5}, nullptr},
      {"one", SEQC_DTYPE_I32, {1, 1, 1}, i32.data()},
      {"quote\"name", SEQC_DTYPE_F32, {1}, f32.data()},
  };
  std::string path = dir.file("w.safetensors");
  ASSERT_TRUE(isOk(writeSafetensors(path.c_str(), entries,
                                    {{"format", "pt"}, {"note", "a\"b"}})));

  SafetensorsFile file;
  ASSERT_TRUE(isOk(readSafetensors(path.c_str(), &file)));
  ASSERT_EQ(file.tensors.size(), entries.size());
  ASSERT_EQ(file.metadata.size(), 2u);
  EXPECT_EQ(file.metadata[1].second, "a\"b");
  // The data section starts 64-byte aligned in the file.
  uint64_t headerLength;
  std::memcpy(&headerLength, file.file->data(), 8);
  EXPECT_EQ((8 + headerLength) % 64, 0u);
  for (size_t i = 0; i < entries.size(); ++i) {
    const SafetensorsTensor &t = file.tensors[i];
    EXPECT_EQ(t.name, entries[i].name);
    EXPECT_EQ(t.dtype, entries[i].dtype);
    EXPECT_EQ(t.shape, entries[i].shape);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % seqc_dtype_size(t.dtype),
              0u)
        << t.name << " is not aligned to its element size";
    if (t.end > t.begin)
      EXPECT_EQ(std::memcmp(t.data, entries[i].data, t.end - t.begin), 0)
          << t.name;
  }
  // Packed without holes: the data section is exactly the tensors.
  uint64_t total = 0;
  for (const SafetensorsTensor &t : file.tensors)
    total += t.end - t.begin;
  EXPECT_EQ(file.file->size(), 8 + headerLength + total);
}

TEST_F(SafetensorsTest, WriterRejectsBadEntries) {
  float v = 0;
  std::string path = dir.file("bad.safetensors");
  EXPECT_TRUE(failsWith(
      writeSafetensors(
          path.c_str(),
          {{"a", SEQC_DTYPE_F32, {1}, &v}, {"a", SEQC_DTYPE_F32, {1}, &v}}, {}),
      SEQC_STATUS_INVALID_ARGUMENT, {"duplicate tensor name 'a'"}));
  EXPECT_TRUE(failsWith(
      writeSafetensors(path.c_str(),
                       {{"__metadata__", SEQC_DTYPE_F32, {1}, &v}}, {}),
      SEQC_STATUS_INVALID_ARGUMENT, {"invalid tensor name"}));
  EXPECT_TRUE(failsWith(
      writeSafetensors(path.c_str(), {{"a", SEQC_DTYPE_F32, {-1}, &v}}, {}),
      SEQC_STATUS_INVALID_ARGUMENT, {"invalid dtype or shape"}));
  EXPECT_TRUE(failsWith(writeSafetensors("/nonexistent-dir/x.safetensors",
                                         {{"a", SEQC_DTYPE_F32, {1}, &v}}, {}),
                        SEQC_STATUS_IO_ERROR, {"cannot create"}));
}

TEST_F(SafetensorsTest, RejectsUnreadableFiles) {
  SafetensorsFile file;
  std::string missing = dir.file("missing.safetensors");
  EXPECT_TRUE(failsWith(readSafetensors(missing.c_str(), &file),
                        SEQC_STATUS_IO_ERROR,
                        {"cannot open", "missing.safetensors"}));
  EXPECT_TRUE(failsWith(readSafetensors(dir.path().c_str(), &file),
                        SEQC_STATUS_IO_ERROR, {"not a regular file"}));
  std::string fifo = dir.file("fifo.safetensors");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_TRUE(failsWith(readSafetensors(fifo.c_str(), &file),
                        SEQC_STATUS_IO_ERROR, {"not a regular file"}));
}

TEST_F(SafetensorsTest, RejectsTruncatedFiles) {
  EXPECT_TRUE(rejects("", {"file too short: 0 bytes"}));
  EXPECT_TRUE(
      rejects(std::string("\x02\0\0\0\0\0\0", 7), {"file too short: 7 bytes"}));
}

TEST_F(SafetensorsTest, RejectsBadHeaderLengths) {
  EXPECT_TRUE(rejects(safetensorsBytes("{}", "", 1ull << 40),
                      {"header length 1099511627776 is absurd"}));
  EXPECT_TRUE(
      rejects(safetensorsBytes("{}", "", UINT64_MAX - 1), {"is absurd"}));
  EXPECT_TRUE(rejects(safetensorsBytes("{}", "", 100),
                      {"header length 100 runs past the end of the file "
                       "(10 bytes)"}));
  // A length that cuts the JSON short.
  EXPECT_TRUE(rejects(safetensorsBytes("{}", "", 1),
                      {"header is not valid JSON", "unterminated object"}));
  EXPECT_TRUE(rejects(safetensorsBytes("", ""), {"header is not valid JSON"}));
}

TEST_F(SafetensorsTest, RejectsInvalidJson) {
  EXPECT_TRUE(rejects(safetensorsBytes("{\"w\": {", ""),
                      {"header is not valid JSON", "at byte"}));
  EXPECT_TRUE(rejects(safetensorsBytes(std::string("{}\0\0", 4), ""),
                      {"header is not valid JSON", "trailing characters"}));
  EXPECT_TRUE(rejects(safetensorsBytes(std::string(5000, '['), ""),
                      {"nesting too deep"}));
  EXPECT_TRUE(rejects(safetensorsBytes("[]", ""),
                      {"header is an array, not a JSON object"}));
  EXPECT_TRUE(rejects(
      safetensorsBytes(R"({"w": {"dtype": "F32", "shape": [], )"
                       R"("data_offsets": [0, 4]}, "w": {"dtype": "F32", )"
                       R"("shape": [], "data_offsets": [4, 8]}})",
                       std::string(8, '\0')),
      {"duplicate key 'w'"}));
}

TEST_F(SafetensorsTest, AllowsSpacePaddingAndMetadata) {
  std::string path = dir.file("ok.safetensors");
  writeFile(path, safetensorsBytes(R"({"__metadata__": {"format": "pt"}, )"
                                   R"("w": {"dtype": "F32", "shape": [1], )"
                                   R"("data_offsets": [0, 4]}}       )",
                                   std::string(4, '\0')));
  SafetensorsFile file;
  ASSERT_TRUE(isOk(readSafetensors(path.c_str(), &file)));
  EXPECT_EQ(file.tensors.size(), 1u);
  EXPECT_EQ(file.metadata.size(), 1u);
}

TEST_F(SafetensorsTest, RejectsBadMetadata) {
  EXPECT_TRUE(rejects(safetensorsBytes(R"({"__metadata__": [1]})", ""),
                      {"__metadata__ is an array, not an object"}));
  EXPECT_TRUE(rejects(safetensorsBytes(R"({"__metadata__": {"a": 1}})", ""),
                      {"__metadata__ entry 'a' is a number, not a string"}));
}

TEST_F(SafetensorsTest, RejectsMalformedEntries) {
  EXPECT_TRUE(rejects(withEntry("[]"),
                      {"tensor 'w': entry is an array, not an object"}));
  EXPECT_TRUE(rejects(withEntry(R"({"shape": [2], "data_offsets": [0, 8]})"),
                      {"tensor 'w': missing 'dtype'"}));
  EXPECT_TRUE(rejects(withEntry(R"({"dtype": "F32", "data_offsets": [0, 8]})"),
                      {"tensor 'w': missing 'shape'"}));
  EXPECT_TRUE(rejects(withEntry(R"({"dtype": "F32", "shape": [2]})"),
                      {"tensor 'w': missing 'data_offsets'"}));
  EXPECT_TRUE(rejects(withEntry(R"({"dtype": "F32", "shape": [2], )"
                                R"("data_offsets": [0, 8], "extra": 1})"),
                      {"tensor 'w': unexpected key 'extra'"}));
}

TEST_F(SafetensorsTest, RejectsBadDtypes) {
  EXPECT_TRUE(rejects(
      withEntry(R"({"dtype": 3, "shape": [2], "data_offsets": [0, 8]})"),
      {"tensor 'w': dtype is a number, not a string"}));
  EXPECT_TRUE(rejects(
      withEntry(R"({"dtype": "Q8", "shape": [2], "data_offsets": [0, 8]})"),
      {"tensor 'w': unknown dtype 'Q8'"}));
  EXPECT_TRUE(rejects(
      withEntry(R"({"dtype": "f32", "shape": [2], "data_offsets": [0, 8]})"),
      {"unknown dtype 'f32'"}));
  EXPECT_TRUE(rejects(
      withEntry(R"({"dtype": "F4", "shape": [2], "data_offsets": [0, 1]})"),
      {"tensor 'w': dtype F4 is not supported"}));
}

TEST_F(SafetensorsTest, ReadsDtypesItDoesNotComputeWith) {
  // A BOOL or U8 tensor is read, marked unsupported, so that a loader can
  // skip it; its byte span is still checked against its shape.
  std::string path = dir.file("t.safetensors");
  writeFile(path, withEntry(R"({"dtype": "BOOL", "shape": [2, 3], )"
                            R"("data_offsets": [0, 6]})",
                            6));
  SafetensorsFile file;
  ASSERT_TRUE(isOk(readSafetensors(path.c_str(), &file)));
  ASSERT_EQ(file.tensors.size(), 1u);
  EXPECT_FALSE(file.tensors[0].supported);
  EXPECT_EQ(file.tensors[0].dtypeName, "BOOL");
  EXPECT_EQ(file.tensors[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(rejects(
      withEntry(R"({"dtype": "U16", "shape": [3], "data_offsets": [0, 3]})"),
      {"span 3 bytes but U16 [3] needs 6"}));
}

TEST_F(SafetensorsTest, RejectsBadShapes) {
  EXPECT_TRUE(rejects(
      withEntry(R"({"dtype": "F32", "shape": 2, "data_offsets": [0, 8]})"),
      {"tensor 'w': shape is a number, not an array"}));
  EXPECT_TRUE(rejects(
      withEntry(R"({"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]})"),
      {"shape must be an array of non-negative integers"}));
  EXPECT_TRUE(rejects(
      withEntry(R"({"dtype": "F32", "shape": [2.5], "data_offsets": [0, 8]})"),
      {"shape must be an array of non-negative integers"}));
  EXPECT_TRUE(rejects(
      withEntry(R"({"dtype": "F32", "shape": ["2"], "data_offsets": [0, 8]})"),
      {"shape must be an array of non-negative integers"}));
  EXPECT_TRUE(rejects(withEntry(R"({"dtype": "F32", )"
                                R"("shape": [1,1,1,1,1,1,1,1,1], )"
                                R"("data_offsets": [0, 4]})"),
                      {"rank 9 exceeds the maximum 8"}));
  EXPECT_TRUE(rejects(withEntry(R"({"dtype": "F32", )"
                                R"("shape": [4294967296, 4294967296], )"
                                R"("data_offsets": [0, 8]})"),
                      {"shape [4294967296, 4294967296] is too large"}));
}

TEST_F(SafetensorsTest, RejectsBadOffsets) {
  EXPECT_TRUE(rejects(
      withEntry(R"({"dtype": "F32", "shape": [2], "data_offsets": [0]})"),
      {"data_offsets must be [begin, end]"}));
  EXPECT_TRUE(rejects(
      withEntry(R"({"dtype": "F32", "shape": [2], "data_offsets": "0-8"})"),
      {"data_offsets must be [begin, end]"}));
  EXPECT_TRUE(rejects(
      withEntry(R"({"dtype": "F32", "shape": [2], "data_offsets": [-8, 0]})"),
      {"data_offsets must be [begin, end]"}));
  EXPECT_TRUE(rejects(withEntry(R"({"dtype": "F32", "shape": [2], )"
                                R"("data_offsets": [0, 1e3]})"),
                      {"data_offsets must be [begin, end]"}));
  EXPECT_TRUE(rejects(
      withEntry(R"({"dtype": "F32", "shape": [2], "data_offsets": [8, 0]})"),
      {"tensor 'w': data_offsets [8, 0] have begin > end"}));
  EXPECT_TRUE(rejects(withEntry(R"({"dtype": "F32", "shape": [2], )"
                                R"("data_offsets": [20, 28]})"),
                      {"tensor 'w': data_offsets [20, 28] are out of bounds",
                       "the data section has 24 bytes"}));
  EXPECT_TRUE(
      rejects(withEntry(R"({"dtype": "F32", "shape": [2], )"
                        R"("data_offsets": [0, 18446744073709551615]})"),
              {"data_offsets must be [begin, end]"}));
  EXPECT_TRUE(rejects(
      withEntry(R"({"dtype": "F32", "shape": [2], "data_offsets": [0, 12]})"),
      {"tensor 'w': data_offsets [0, 12] span 12 bytes but F32 [2] needs 8"}));
}

TEST_F(SafetensorsTest, RejectsOverlappingTensors) {
  EXPECT_TRUE(rejects(
      safetensorsBytes(R"({"a": {"dtype": "F32", "shape": [4], )"
                       R"("data_offsets": [0, 16]}, "b": {"dtype": "F32", )"
                       R"("shape": [4], "data_offsets": [8, 24]}})",
                       std::string(24, '\0')),
      {"tensors 'a' [0, 16) and 'b' [8, 24) overlap"}));
  // A range nested in an earlier, longer one, after an unrelated one.
  EXPECT_TRUE(rejects(
      safetensorsBytes(R"({"big": {"dtype": "F32", "shape": [8], )"
                       R"("data_offsets": [0, 32]}, "x": {"dtype": "F32", )"
                       R"("shape": [1], "data_offsets": [4, 8]}, )"
                       R"("y": {"dtype": "F32", "shape": [1], )"
                       R"("data_offsets": [24, 28]}})",
                       std::string(32, '\0')),
      {"tensors 'big' [0, 32) and 'x' [4, 8) overlap"}));
  // Identical ranges.
  EXPECT_TRUE(rejects(
      safetensorsBytes(R"({"a": {"dtype": "I32", "shape": [1], )"
                       R"("data_offsets": [0, 4]}, "b": {"dtype": "F32", )"
                       R"("shape": [1], "data_offsets": [0, 4]}})",
                       std::string(4, '\0')),
      {"overlap"}));
}

TEST_F(SafetensorsTest, EmptyTensorsDoNotOverlap) {
  std::string path = dir.file("empty.safetensors");
  writeFile(path,
            safetensorsBytes(R"({"a": {"dtype": "F32", "shape": [0], )"
                             R"("data_offsets": [4, 4]}, "b": {"dtype": )"
                             R"("F32", "shape": [2], "data_offsets": [0, 8]}})",
                             std::string(8, '\0')));
  SafetensorsFile file;
  EXPECT_TRUE(isOk(readSafetensors(path.c_str(), &file)));
}

TEST_F(SafetensorsTest, NamesFromTheFileArePrintable) {
  // Control characters in a hostile name do not reach the terminal.
  EXPECT_TRUE(rejects(safetensorsBytes("{\"a\\u001bb\": []}", ""),
                      {"tensor 'a?b': entry is an array"}));
}

} // namespace
