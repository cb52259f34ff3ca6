//===- JsonTest.cpp - Tests of the runtime's JSON parser ------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "Json.h"

#include "TestUtil.h"

#include <cstring>
#include <string>

using namespace seqc;
using namespace seqc::test;

namespace {

JsonValue parseOk(const std::string &text) {
  JsonValue value;
  EXPECT_TRUE(isOk(parseJson(text, &value))) << text;
  return value;
}

::testing::AssertionResult rejects(const std::string &text, const char *reason,
                                   JsonLimits limits = JsonLimits()) {
  JsonValue value;
  return failsWith(parseJson(text, &value, SEQC_STATUS_INVALID_FILE, limits),
                   SEQC_STATUS_INVALID_FILE, {reason});
}

TEST(Json, ParsesEveryKind) {
  JsonValue v = parseOk(
      R"( {"a": [1, -2, 3.5, 1e3, true, false, null], "b": {"c": "d"}} )");
  ASSERT_TRUE(v.isObject());
  ASSERT_EQ(v.keys.size(), 2u);
  const JsonValue *a = v.find("a");
  ASSERT_TRUE(a && a->isArray());
  ASSERT_EQ(a->items.size(), 7u);
  EXPECT_TRUE(a->items[0].isInteger);
  EXPECT_EQ(a->items[0].integer, 1);
  EXPECT_EQ(a->items[1].integer, -2);
  EXPECT_FALSE(a->items[2].isInteger);
  EXPECT_DOUBLE_EQ(a->items[2].number, 3.5);
  EXPECT_FALSE(a->items[3].isInteger); // An exponent makes it a double.
  EXPECT_DOUBLE_EQ(a->items[3].number, 1000);
  EXPECT_TRUE(a->items[4].isBool() && a->items[4].boolean);
  EXPECT_TRUE(a->items[5].isBool() && !a->items[5].boolean);
  EXPECT_TRUE(a->items[6].isNull());
  EXPECT_EQ(v.find("b")->find("c")->string, "d");
  EXPECT_EQ(v.find("missing"), nullptr);
}

TEST(Json, IntegersBeyondInt64BecomeDoubles) {
  JsonValue v = parseOk("[9223372036854775807, 9223372036854775808, "
                        "-9223372036854775808]");
  EXPECT_TRUE(v.items[0].isInteger);
  EXPECT_EQ(v.items[0].integer, INT64_MAX);
  EXPECT_FALSE(v.items[1].isInteger);
  EXPECT_TRUE(v.items[2].isInteger);
  EXPECT_EQ(v.items[2].integer, INT64_MIN);
}

TEST(Json, DecodesEscapesAndUtf8) {
  JsonValue v = parseOk(R"(["a\"b\\c\/d\b\f\n\r\t", "\u00e9\u20ac",
                             "\ud83d\ude00", "caf\u00e9 h\u00e9"])");
  EXPECT_EQ(v.items[0].string, "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(v.items[1].string, "\xc3\xa9\xe2\x82\xac");
  EXPECT_EQ(v.items[2].string, "\xf0\x9f\x98\x80");
  // Raw UTF-8 passes through.
  EXPECT_EQ(parseOk("\"\xc3\xa9\"").string, "\xc3\xa9");
}

TEST(Json, RejectsMalformedDocuments) {
  EXPECT_TRUE(rejects("", "unexpected end of input"));
  EXPECT_TRUE(rejects("   ", "unexpected end of input"));
  EXPECT_TRUE(rejects("{", "unterminated object"));
  EXPECT_TRUE(rejects("[1, 2", "unterminated array"));
  EXPECT_TRUE(rejects("[1 2]", "expected ',' or ']'"));
  EXPECT_TRUE(rejects("{\"a\" 1}", "expected ':'"));
  EXPECT_TRUE(rejects("{\"a\": 1,}", "expected a string key"));
  EXPECT_TRUE(rejects("{a: 1}", "expected a string key"));
  EXPECT_TRUE(rejects("[1,]", "unexpected character"));
  EXPECT_TRUE(rejects("{} {}", "trailing characters"));
  EXPECT_TRUE(rejects("tru", "invalid literal"));
  EXPECT_TRUE(rejects("nul", "invalid literal"));
  EXPECT_TRUE(rejects("'a'", "unexpected character"));
}

TEST(Json, RejectsMalformedNumbers) {
  EXPECT_TRUE(rejects("01", "leading zero"));
  EXPECT_TRUE(rejects("-", "invalid number"));
  EXPECT_TRUE(rejects("1.", "expected digits after '.'"));
  EXPECT_TRUE(rejects("1e", "expected digits in number exponent"));
  EXPECT_TRUE(rejects("1e+", "expected digits in number exponent"));
  EXPECT_TRUE(rejects("+1", "unexpected character"));
  EXPECT_TRUE(rejects(".5", "unexpected character"));
  EXPECT_TRUE(rejects("1e999", "number out of range"));
  EXPECT_TRUE(rejects("NaN", "unexpected character"));
}

TEST(Json, RejectsMalformedStrings) {
  EXPECT_TRUE(rejects("\"abc", "unterminated string"));
  EXPECT_TRUE(rejects("\"abc\\", "unterminated string"));
  EXPECT_TRUE(rejects("\"a\nb\"", "control character"));
  EXPECT_TRUE(rejects("\"\\x\"", "invalid escape"));
  EXPECT_TRUE(rejects("\"\\u12zz\"", "invalid hex digit"));
  EXPECT_TRUE(rejects("\"\\u12", "truncated \\u escape"));
  EXPECT_TRUE(rejects("\"\\ud800\"", "unpaired high surrogate"));
  EXPECT_TRUE(rejects("\"\\ud800\\u0041\"", "unpaired high surrogate"));
  EXPECT_TRUE(rejects("\"\\udc00\"", "unpaired low surrogate"));
  EXPECT_TRUE(rejects("\"\xff\"", "invalid UTF-8"));
  EXPECT_TRUE(rejects("\"\xc0\xaf\"", "invalid UTF-8"));     // Overlong.
  EXPECT_TRUE(rejects("\"\xed\xa0\x80\"", "invalid UTF-8")); // Surrogate.
  EXPECT_TRUE(rejects("\"\xe2\x82\"", "invalid UTF-8"));     // Truncated.
}

TEST(Json, RejectsEmbeddedNulBytes) {
  // The parser takes a length, so a NUL is just an invalid character.
  EXPECT_TRUE(rejects(std::string("{}\0", 3), "trailing characters"));
  EXPECT_TRUE(rejects(std::string("\"a\0b\"", 5), "control character"));
}

TEST(Json, RejectsDuplicateKeys) {
  EXPECT_TRUE(rejects(R"({"a": 1, "b": 2, "a": 3})", "duplicate key 'a'"));
  // A key with a raw DEL byte (JSON allows it unescaped) is quoted
  // printably: found by the manifest fuzzer.
  EXPECT_TRUE(rejects("{\"g\x7f\": 1, \"g\x7f\": 2}", "duplicate key 'g?'"));
  // The same key in different objects is fine.
  JsonValue value;
  EXPECT_TRUE(isOk(parseJson(R"([{"a": 1}, {"a": 2}])", &value)));
}

TEST(Json, CapsNestingDepth) {
  std::string deep(100000, '[');
  EXPECT_TRUE(rejects(deep, "nesting too deep"));
  std::string deepObjects;
  for (int i = 0; i < 100000; ++i)
    deepObjects += "{\"a\":";
  EXPECT_TRUE(rejects(deepObjects, "nesting too deep"));
  // Exactly at the limit is fine.
  JsonLimits limits;
  limits.maxDepth = 3;
  JsonValue value;
  EXPECT_TRUE(
      isOk(parseJson("[[[1]]]", &value, SEQC_STATUS_INVALID_FILE, limits)));
  EXPECT_TRUE(rejects("[[[[1]]]]", "nesting too deep", limits));
}

TEST(Json, CapsValueCount) {
  JsonLimits limits;
  limits.maxValues = 10;
  EXPECT_TRUE(rejects("[0,0,0,0,0,0,0,0,0,0]", "too many values", limits));
  JsonValue value;
  EXPECT_TRUE(isOk(parseJson("[0,0,0,0,0,0,0,0,0]", &value,
                             SEQC_STATUS_INVALID_FILE, limits)));
}

TEST(Json, ReportsTheErrorOffset) {
  EXPECT_TRUE(rejects("[1, 2, x]", "at byte 7"));
}

TEST(Json, UsesTheRequestedErrorCode) {
  JsonValue value;
  EXPECT_TRUE(failsWith(parseJson("{", &value, SEQC_STATUS_INVALID_MANIFEST),
                        SEQC_STATUS_INVALID_MANIFEST, {"unterminated"}));
}

TEST(Json, SurvivesRandomMutations) {
  // A cheap fuzzer: flip, drop and insert bytes of a realistic header. Any
  // outcome is fine except a crash, a hang or a sanitizer report.
  const std::string seedText =
      R"({"__metadata__": {"format": "pt"}, "w": {"dtype": "F32", )"
      R"("shape": [2, 3], "data_offsets": [0, 24]}, "b\u00e9": )"
      R"({"dtype": "I64", "shape": [], "data_offsets": [24, 32]}})";
  uint64_t state = 12345;
  auto next = [&state]() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  const char alphabet[] = "{}[]\",:\\u0123456789eE+-.tfn \x80\xc3\xff";
  int parsed = 0;
  for (int iteration = 0; iteration < 20000; ++iteration) {
    std::string text = seedText;
    int edits = 1 + static_cast<int>(next() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      size_t pos = next() % text.size();
      char c = alphabet[next() % (sizeof(alphabet) - 1)];
      switch (next() % 3) {
      case 0:
        text[pos] = c;
        break;
      case 1:
        text.erase(pos, 1);
        break;
      default:
        text.insert(pos, 1, c);
      }
    }
    JsonValue value;
    seqc_status *status = parseJson(text, &value);
    parsed += status == nullptr;
    seqc_status_free(status);
  }
  // Some mutations (e.g. inside a string) keep the document valid.
  EXPECT_GT(parsed, 0);
}

TEST(Json, AppendJsonStringRoundTrips) {
  std::string raw = std::string("q\"b\\n\n\t\x01\0 ", 10) + "\xc3\xa9";
  std::string quoted;
  appendJsonString(quoted, raw);
  EXPECT_EQ(parseOk(quoted).string, raw);
}

} // namespace
