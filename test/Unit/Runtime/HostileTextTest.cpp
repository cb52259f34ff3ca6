//===- HostileTextTest.cpp - Names and keys from hostile files ------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Regression tests for what the runtime fuzzers (test/Fuzz) found: text taken
// from a file reaches error messages, and names are compared, as the bytes
// they are. Messages must stay printable (control characters and invalid
// UTF-8 replaced, long text cut at a character boundary) and a name with an
// embedded NUL must not match the name before it.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cstring>
#include <memory>
#include <string>

using namespace seqc;
using namespace seqc::test;

namespace {

struct ModelDeleter {
  void operator()(seqc_model *model) const { seqc_model_free(model); }
};
using ModelPtr = std::unique_ptr<seqc_model, ModelDeleter>;

void noopInvoke(void **) {}

/// The message of `status` (which must be an error with `code`); frees it.
std::string messageOf(seqc_status *status, seqc_status_code code) {
  StatusPtr owned(status);
  EXPECT_NE(status, nullptr);
  EXPECT_EQ(seqc_status_get_code(status), code);
  return status ? seqc_status_message(status) : "";
}

/// True if `text` is valid UTF-8 (lead bytes with their continuations) and
/// has no byte below 0x20, no DEL and no C1 control.
bool printable(const std::string &text) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  for (size_t i = 0; i < text.size();) {
    unsigned char c = byte(i);
    if (c < 0x20 || c == 0x7f)
      return false;
    size_t extra = c < 0x80                 ? 0
                   : c >= 0xc2 && c <= 0xdf ? 1
                   : (c & 0xf0) == 0xe0     ? 2
                   : c >= 0xf0 && c <= 0xf4 ? 3
                                            : std::string::npos;
    if (extra == std::string::npos || i + extra >= text.size())
      return false;
    if (c == 0xc2 && byte(i + 1) < 0xa0)
      return false;
    for (size_t k = 1; k <= extra; ++k)
      if ((byte(i + k) & 0xc0) != 0x80)
        return false;
    i += extra + 1;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// printableText
//===----------------------------------------------------------------------===//

TEST(PrintableText, ReplacesControlsAndInvalidUtf8) {
  EXPECT_EQ(printableText("plain.name"), "plain.name");
  EXPECT_EQ(printableText("caf\xc3\xa9 \xe2\x82\xac"),
            "caf\xc3\xa9 \xe2\x82\xac");
  EXPECT_EQ(printableText("\x1b[31mred"), "?[31mred");
  EXPECT_EQ(printableText(std::string("a\0b", 3)), "a?b");
  EXPECT_EQ(printableText("del\x7f"), "del?");
  EXPECT_EQ(printableText("c1\xc2\x9b"), "c1?");        // U+009B, CSI
  EXPECT_EQ(printableText("<f8\xcd"), "<f8?");          // Truncated sequence.
  EXPECT_EQ(printableText("\xc0\xaf"), "??");           // Overlong '/'.
  EXPECT_EQ(printableText("\xed\xa0\x80"), "???");      // A surrogate.
  EXPECT_EQ(printableText("\xf4\x90\x80\x80"), "????"); // Above U+10FFFF.
}

TEST(PrintableText, CutsLongTextAtACharacterBoundary) {
  EXPECT_EQ(printableText("abcdef", 4), "abcd...");
  std::string accents;
  for (int i = 0; i < 150; ++i)
    accents += "\xc3\xa9"; // 300 bytes.
  std::string cut = printableText(accents);
  EXPECT_EQ(cut.size(), 203u);
  EXPECT_EQ(cut.substr(198), "\xc3\xa9...");
  EXPECT_TRUE(printable(cut));
}

//===----------------------------------------------------------------------===//
// .npy headers
//===----------------------------------------------------------------------===//

/// A format 1.0 .npy file with header dict `dict` and `data`.
std::string npyBytes(const std::string &dict, const std::string &data = "") {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY\x01";
  bytes += '\0';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  return bytes + header + data;
}

std::string npyError(const std::string &bytes) {
  TempDir dir;
  std::string path = dir.file("a.npy");
  writeFile(path, bytes);
  seqc_tensor t;
  return messageOf(seqc_npy_read(path.c_str(), &t), SEQC_STATUS_INVALID_FILE);
}

TEST(HostileNpy, QuotesADescrWithInvalidUtf8Printably) {
  // Found by runtime.fuzz.npy: the descr's bytes went into the message as
  // they were.
  std::string message = npyError(
      npyBytes("{'descr': '<f8\xcd', 'fortran_order': False, 'shape': (), }",
               std::string(8, '\0')));
  EXPECT_NE(message.find("unsupported dtype descr '<f8?'"), std::string::npos)
      << message;
  EXPECT_TRUE(printable(message)) << message;
}

TEST(HostileNpy, QuotesKeysAndDescrsPrintably) {
  std::string message = npyError(npyBytes(
      "{'\x1b]0;title\x07': 1, 'descr': '<f4', 'fortran_order': False, "
      "'shape': (), }"));
  EXPECT_NE(message.find("unexpected key '?]0;title?' in the header"),
            std::string::npos)
      << message;
  // A long multi-byte key is cut between characters.
  std::string key;
  for (int i = 0; i < 40; ++i)
    key += "\xe2\x82\xac"; // 120 bytes.
  message = npyError(npyBytes("{'" + key + "': 1}"));
  EXPECT_TRUE(printable(message)) << message;
  EXPECT_NE(message.find("\xe2\x82\xac...' in the header"), std::string::npos)
      << message;
  message = npyError(npyBytes("{'descr': '>\x9b" + key +
                              "', 'fortran_order': False, 'shape': (), }"));
  EXPECT_TRUE(printable(message)) << message;
  EXPECT_NE(message.find("big-endian data (descr '>?"), std::string::npos)
      << message;
}

//===----------------------------------------------------------------------===//
// Safetensors names
//===----------------------------------------------------------------------===//

constexpr const char *kOneParam =
    R"({"inputs": [], "outputs": [], "params": [)"
    R"({"name": "w", "dtype": "f32", "shape": [1]}]})";

class HostileWeights : public ::testing::Test {
protected:
  TempDir dir;
  ModelPtr model = [] {
    seqc_model *m = nullptr;
    EXPECT_TRUE(isOk(seqc_model_load_from(kOneParam, noopInvoke, &m)));
    return ModelPtr(m);
  }();

  /// Loads a file whose header is `header` and data 4 bytes of 1.0f.
  seqc_status *loadHeader(const std::string &header) {
    std::string path = dir.file("w.safetensors");
    writeFile(path, safetensorsBytes(header, std::string("\0\0\x80\x3f", 4)));
    return seqc_model_load_weights(model.get(), path.c_str());
  }
};

TEST_F(HostileWeights, ANameWithANulIsNotTheNameBeforeIt) {
  // "w\u0000x" used to be looked up as "w" and bound to parameter w.
  std::string message =
      messageOf(loadHeader(R"({"w\u0000x": {"dtype": "F32", "shape": [1],)"
                           R"( "data_offsets": [0, 4]}})"),
                SEQC_STATUS_INVALID_FILE);
  EXPECT_NE(message.find("tensor 'w?x' is not a parameter of the model"),
            std::string::npos)
      << message;
  // Together with the real "w", it must not bind w twice either.
  message = messageOf(
      loadHeader(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets":)"
                 R"( [0, 4]}, "w\u0000": {"dtype": "F32", "shape": [0],)"
                 R"( "data_offsets": [4, 4]}})"),
      SEQC_STATUS_INVALID_FILE);
  EXPECT_NE(message.find("tensor 'w?' is not a parameter"), std::string::npos)
      << message;
  seqc_tensor t;
  EXPECT_TRUE(failsWith(seqc_model_get_param(model.get(), "w", &t),
                        SEQC_STATUS_FAILED_PRECONDITION, {"not bound"}));
}

TEST_F(HostileWeights, QuotesUnknownNamesPrintably) {
  std::string message = messageOf(
      loadHeader(R"({"\u001b[2J\u007f\u0085": {"dtype": "F32", "shape": [1],)"
                 R"( "data_offsets": [0, 4]}})"),
      SEQC_STATUS_INVALID_FILE);
  EXPECT_NE(message.find("tensor '?[2J??' is not a parameter"),
            std::string::npos)
      << message;
  EXPECT_TRUE(printable(message)) << message;
  // A 300-byte name of two-byte characters is cut between characters.
  std::string name;
  for (int i = 0; i < 150; ++i)
    name += "\xc3\xa9";
  message = messageOf(loadHeader("{\"" + name +
                                 "\": {\"dtype\": \"F32\", \"shape\": [1],"
                                 " \"data_offsets\": [0, 4]}}"),
                      SEQC_STATUS_INVALID_FILE);
  EXPECT_TRUE(printable(message)) << message;
  EXPECT_NE(message.find("\xc3\xa9...' is not a parameter"), std::string::npos)
      << message;
}

//===----------------------------------------------------------------------===//
// Manifest names
//===----------------------------------------------------------------------===//

std::string manifestError(const std::string &manifest) {
  seqc_model *m = nullptr;
  std::string message =
      messageOf(seqc_model_load_from(manifest.c_str(), noopInvoke, &m),
                SEQC_STATUS_INVALID_MANIFEST);
  seqc_model_free(m);
  return message;
}

TEST(HostileManifest, RejectsNamesWithControlCharacters) {
  // The C API looks values up by NUL-terminated name: "x\u0000y" could never
  // be bound, and would be found as "x". Names also go into messages.
  EXPECT_NE(manifestError(R"({"inputs": [{"name": "x\u0000y", "dtype":)"
                          R"( "f32", "shape": []}], "outputs": []})")
                .find("invalid manifest: inputs[0] ('x?y') has a NUL or "
                      "control character in its name"),
            std::string::npos);
  EXPECT_NE(manifestError(R"({"inputs": [{"name": "x", "dtype": "f32",)"
                          R"( "shape": ["n\u0000"]}], "outputs": []})")
                .find("invalid manifest: inputs[0] ('x'): dimension names "
                      "must not contain NUL or control characters"),
            std::string::npos);
}

TEST(HostileManifest, QuotesNamesPrintably) {
  std::string message =
      manifestError(R"({"inputs": [{"name": "\u001b[31m", "dtype": "f32",)"
                    R"( "shape": []}], "outputs": []})");
  EXPECT_NE(message.find("inputs[0] ('?[31m') has a NUL or control character "
                         "in its name"),
            std::string::npos)
      << message;
  message = manifestError(R"({"inputs": [{"name": "x", "dtype": "f32\u0007",)"
                          R"( "shape": []}], "outputs": []})");
  EXPECT_NE(message.find("has unknown dtype 'f32?'"), std::string::npos)
      << message;
  EXPECT_NE(manifestError(R"({"inputs": [{"name": "i", "dtype": "i32",)"
                          R"( "shape": [], "range": [0, "\u007f"]}],)"
                          R"( "outputs": []})")
                .find("dimension names must not contain NUL or control "
                      "characters"),
            std::string::npos);
}

} // namespace
