//===- LexerTest.cpp - unit tests of the .seq lexer -----------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "frontend/Lexer.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace mlir::seq::frontend;

namespace {

/// Lexes a whole buffer, recording tokens and errors.
class LexerTest : public ::testing::Test {
protected:
  /// Lexes `source` to the end of the file (the eof token included).
  void lex(llvm::StringRef source) {
    tokens.clear();
    errors.clear();
    sourceMgr = std::make_unique<llvm::SourceMgr>();
    unsigned id = sourceMgr->AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(source, "test.seq"),
        llvm::SMLoc());
    start = sourceMgr->getMemoryBuffer(id)->getBufferStart();
    Lexer lexer(*sourceMgr, id,
                [&](llvm::SMLoc loc, const llvm::Twine &message) {
                  errors.push_back({loc.getPointer() - start, message.str()});
                });
    // Bounded, so that a lexer that never reaches eof fails instead of
    // hanging the test.
    for (int i = 0; i < 1000; ++i) {
      tokens.push_back(lexer.lexToken());
      if (tokens.back().is(Token::eof))
        return;
    }
    FAIL() << "no eof after 1000 tokens";
  }

  /// The kinds of the tokens, eof excluded.
  std::vector<Token::Kind> kinds() const {
    std::vector<Token::Kind> result;
    for (const Token &token : tokens)
      if (token.isNot(Token::eof))
        result.push_back(token.getKind());
    return result;
  }

  /// The spellings of the tokens, eof excluded.
  std::vector<std::string> spellings() const {
    std::vector<std::string> result;
    for (const Token &token : tokens)
      if (token.isNot(Token::eof))
        result.push_back(token.getSpelling().str());
    return result;
  }

  /// The offset of a token in the buffer.
  long offset(const Token &token) const {
    return token.getLoc().getPointer() - start;
  }

  struct Error {
    long offset;
    std::string message;
  };

  std::unique_ptr<llvm::SourceMgr> sourceMgr;
  const char *start = nullptr;
  std::vector<Token> tokens;
  std::vector<Error> errors;
};

using K = Token::Kind;

TEST_F(LexerTest, EmptyBufferIsEof) {
  lex("");
  ASSERT_EQ(tokens.size(), 1u);
  EXPECT_TRUE(tokens[0].is(K::eof));
  EXPECT_TRUE(errors.empty());
}

TEST_F(LexerTest, KeywordsAndIdentifiers) {
  lex("model module def for in return True False None int float bool "
      "f16 bf16 f32 f64 i32 i64 forward _x x1 Model f8 True_");
  std::vector<K> expected = {
      K::kw_model,   K::kw_module,  K::kw_def,     K::kw_for,     K::kw_in,
      K::kw_return,  K::kw_True,    K::kw_False,   K::kw_None,    K::kw_int,
      K::kw_float,   K::kw_bool,    K::kw_f16,     K::kw_bf16,    K::kw_f32,
      K::kw_f64,     K::kw_i32,     K::kw_i64,     K::identifier, K::identifier,
      K::identifier, K::identifier, K::identifier, K::identifier};
  EXPECT_EQ(kinds(), expected);
  EXPECT_TRUE(tokens[0].isKeyword());
  EXPECT_TRUE(tokens[14].isElementType());
  EXPECT_FALSE(tokens[9].isElementType());
  EXPECT_FALSE(tokens[18].isKeyword());
  EXPECT_TRUE(errors.empty());
}

TEST_F(LexerTest, Punctuation) {
  lex("( ) [ ] { } , : ; . ... = -> + - * ** / @ ^");
  std::vector<K> expected = {K::l_paren,   K::r_paren, K::l_square, K::r_square,
                             K::l_brace,   K::r_brace, K::comma,    K::colon,
                             K::semicolon, K::period,  K::ellipsis, K::equal,
                             K::arrow,     K::plus,    K::minus,    K::star,
                             K::star_star, K::slash,   K::at,       K::caret};
  EXPECT_EQ(kinds(), expected);
  EXPECT_TRUE(errors.empty());
}

TEST_F(LexerTest, Comparisons) {
  lex("a==b!=c<d<=e>f>=g = h");
  std::vector<K> expected = {
      K::identifier, K::equal_equal,   K::identifier, K::not_equal,
      K::identifier, K::less,          K::identifier, K::less_equal,
      K::identifier, K::greater,       K::identifier, K::greater_equal,
      K::identifier, K::equal,         K::identifier};
  EXPECT_EQ(kinds(), expected);
  EXPECT_TRUE(errors.empty());
}

TEST_F(LexerTest, QuotedNames) {
  // The spelling is the name between the backquotes, keywords included.
  lex("`model` . `x-y` `0`");
  std::vector<K> expected = {K::identifier, K::period, K::identifier,
                             K::identifier};
  EXPECT_EQ(kinds(), expected);
  std::vector<std::string> names = {"model", ".", "x-y", "0"};
  EXPECT_EQ(spellings(), names);
  EXPECT_EQ(offset(tokens[0]), 1);
  EXPECT_TRUE(errors.empty());
}

TEST_F(LexerTest, BadQuotedNames) {
  // Each error is reported once, and lexing resumes after the name.
  lex("`a.b` x `` `a b` `open\ny");
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_EQ(errors[0].message, "a quoted name cannot contain '.': it is one "
                               "segment of a parameter's name");
  EXPECT_EQ(errors[0].offset, 2);
  EXPECT_EQ(errors[1].message, "empty quoted name");
  EXPECT_EQ(errors[2].message, "a quoted name holds printable ASCII "
                               "characters other than spaces");
  EXPECT_EQ(errors[2].offset, 13);
  EXPECT_EQ(errors[3].message, "unterminated quoted name (a name in "
                               "backquotes ends on the same line)");
  std::vector<K> expected = {K::error, K::identifier, K::error, K::error,
                             K::error, K::newline,    K::identifier};
  EXPECT_EQ(kinds(), expected);
}

TEST_F(LexerTest, OperatorsWithoutSpaces) {
  lex("a**-b->c...d^T");
  std::vector<std::string> expected = {"a", "**",  "-", "b", "->",
                                       "c", "...", "d", "^", "T"};
  EXPECT_EQ(spellings(), expected);
}

TEST_F(LexerTest, IntegerLiterals) {
  lex("0 42 9223372036854775807 9223372036854775808");
  ASSERT_EQ(kinds(), std::vector<K>(4, K::integer));
  EXPECT_EQ(tokens[0].getIntegerValue(), 0);
  EXPECT_EQ(tokens[1].getIntegerValue(), 42);
  EXPECT_EQ(tokens[2].getIntegerValue(), INT64_MAX);
  // Too large for int64: the parser reports it.
  EXPECT_EQ(tokens[3].getIntegerValue(), std::nullopt);
}

TEST_F(LexerTest, FloatLiterals) {
  lex("1.5 1e-5 2E+3 3.0e2 0.25 1e400 1e-400");
  ASSERT_EQ(kinds(), std::vector<K>(7, K::floating));
  EXPECT_DOUBLE_EQ(*tokens[0].getFloatValue(), 1.5);
  EXPECT_DOUBLE_EQ(*tokens[1].getFloatValue(), 1e-5);
  EXPECT_DOUBLE_EQ(*tokens[2].getFloatValue(), 2000.0);
  EXPECT_DOUBLE_EQ(*tokens[3].getFloatValue(), 300.0);
  EXPECT_DOUBLE_EQ(*tokens[4].getFloatValue(), 0.25);
  // Overflow is an error; underflow rounds to zero.
  EXPECT_EQ(tokens[5].getFloatValue(), std::nullopt);
  EXPECT_EQ(tokens[6].getFloatValue(), 0.0);
}

TEST_F(LexerTest, PeriodAfterIntegerIsMemberAccess) {
  // `1.` and `layers.0` are not floats: a period needs a digit after it.
  lex("1. layers.0 x.weight");
  std::vector<K> expected = {K::integer, K::period,    K::identifier,
                             K::period,  K::integer,   K::identifier,
                             K::period,  K::identifier};
  EXPECT_EQ(kinds(), expected);
}

TEST_F(LexerTest, MalformedNumbers) {
  lex("2x 1e 3.5abc 7");
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].message, "invalid number '2x'");
  EXPECT_EQ(errors[0].offset, 0);
  EXPECT_EQ(errors[1].message, "invalid number '1e'");
  EXPECT_EQ(errors[2].message, "invalid number '3.5abc'");
  // Each becomes one error token, and lexing goes on.
  std::vector<K> expected = {K::error, K::error, K::error, K::integer};
  EXPECT_EQ(kinds(), expected);
}

TEST_F(LexerTest, Strings) {
  lex("\"tanh\" \"\" \"a b # not a comment\"");
  ASSERT_EQ(kinds(), std::vector<K>(3, K::string));
  EXPECT_EQ(tokens[0].getStringValue(), "tanh");
  EXPECT_EQ(tokens[1].getStringValue(), "");
  EXPECT_EQ(tokens[2].getStringValue(), "a b # not a comment");
  EXPECT_TRUE(errors.empty());
}

TEST_F(LexerTest, UnterminatedStrings) {
  lex("\"open\nx \"eof");
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].message, "unterminated string");
  EXPECT_EQ(errors[0].offset, 0);
  EXPECT_EQ(errors[1].message, "unterminated string");
  EXPECT_EQ(errors[1].offset, 8);
  std::vector<K> expected = {K::error, K::newline, K::identifier, K::error};
  EXPECT_EQ(kinds(), expected);
}

TEST_F(LexerTest, CommentsAndLineBreaks) {
  // Line breaks, blank lines and comment lines fold into one newline token;
  // a lone '/' is division.
  lex("a # comment\n\n  // another\n\t\r\nb / c // end");
  std::vector<K> expected = {K::identifier, K::newline, K::identifier, K::slash,
                             K::identifier};
  EXPECT_EQ(kinds(), expected);
  EXPECT_EQ(offset(tokens[1]), 11);
  EXPECT_TRUE(errors.empty());
}

TEST_F(LexerTest, LeadingAndTrailingLineBreaks) {
  lex("\n\nx\n");
  std::vector<K> expected = {K::newline, K::identifier, K::newline};
  EXPECT_EQ(kinds(), expected);
}

TEST_F(LexerTest, NonAsciiOutsideComments) {
  lex("# 注释 is fine\nx = \"维度\"\ny = 维度 z");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "unexpected non-ASCII character; only "
                               "comments and strings may contain them");
  // One error for the whole run of non-ASCII bytes.
  std::vector<K> expected = {K::newline, K::identifier, K::equal,
                             K::string,  K::newline,    K::identifier,
                             K::equal,   K::error,      K::identifier};
  EXPECT_EQ(kinds(), expected);
}

TEST_F(LexerTest, UnexpectedCharacters) {
  lex("a $ b ! \x01 c");
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].message, "unexpected character '$'");
  EXPECT_EQ(errors[0].offset, 2);
  EXPECT_EQ(errors[1].message, "unexpected character '!'");
  EXPECT_EQ(errors[2].message, "unexpected byte 0x01");
  EXPECT_EQ(spellings().back(), "c");
}

TEST_F(LexerTest, EmbeddedNulIsAnError) {
  lex(llvm::StringRef("a\0b", 3));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "unexpected byte 0x00");
  std::vector<K> expected = {K::identifier, K::error, K::identifier};
  EXPECT_EQ(kinds(), expected);
}

TEST_F(LexerTest, EofRepeats) {
  auto sourceMgr = std::make_unique<llvm::SourceMgr>();
  unsigned id = sourceMgr->AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy("x", "test.seq"), llvm::SMLoc());
  Lexer lexer(*sourceMgr, id, [](llvm::SMLoc, const llvm::Twine &) {});
  EXPECT_TRUE(lexer.lexToken().is(K::identifier));
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(lexer.lexToken().is(K::eof));
}

TEST_F(LexerTest, TokenLocations) {
  lex("model m(\n  d: int)");
  ASSERT_GE(tokens.size(), 8u);
  EXPECT_EQ(offset(tokens[0]), 0);  // model
  EXPECT_EQ(offset(tokens[1]), 6);  // m
  EXPECT_EQ(offset(tokens[2]), 7);  // (
  EXPECT_EQ(offset(tokens[4]), 11); // d
  EXPECT_EQ(tokens[4].getEndLoc().getPointer() - start, 12);
}

TEST(TokenTest, Describe) {
  EXPECT_EQ(Token::describe(Token::l_paren), "'('");
  EXPECT_EQ(Token::describe(Token::ellipsis), "'...'");
  EXPECT_EQ(Token::describe(Token::kw_model), "'model'");
  EXPECT_EQ(Token::describe(Token::identifier), "identifier");
  EXPECT_EQ(Token::describe(Token::newline), "end of line");
  EXPECT_EQ(Token::describe(Token::eof), "end of file");
}

} // namespace
