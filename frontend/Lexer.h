//===- Lexer.h - .seq lexer -------------------------------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Splits a .seq buffer into tokens. The lexer depends only on LLVM Support so
// that it can be unit-tested and fuzzed alone; it reports malformed input
// through a callback and returns an `error` token, after which lexing resumes
// at the next character.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_FRONTEND_LEXER_H
#define SEQC_FRONTEND_LEXER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir::seq::frontend {

/// A token: its kind and the source text it spans.
class Token {
public:
  enum Kind {
#define TOK_MARKER(NAME) NAME,
#define TOK_IDENTIFIER(NAME) NAME,
#define TOK_LITERAL(NAME) NAME,
#define TOK_PUNCTUATION(NAME, SPELLING) NAME,
#define TOK_KEYWORD(SPELLING) kw_##SPELLING,
#include "frontend/TokenKinds.def"
    NumKinds
  };

  Token() = default;
  Token(Kind kind, llvm::StringRef spelling) : kind(kind), spelling(spelling) {}

  Kind getKind() const { return kind; }
  bool is(Kind k) const { return kind == k; }
  bool isNot(Kind k) const { return kind != k; }
  template <typename... Kinds> bool isAny(Kind k, Kinds... others) const {
    return is(k) || (is(others) || ...);
  }
  bool isKeyword() const;
  /// Whether this is one of the tensor element types (`f32`, `i32`, ...).
  bool isElementType() const;

  /// The source text of the token (for a string, including the quotes).
  llvm::StringRef getSpelling() const { return spelling; }
  llvm::SMLoc getLoc() const;
  /// The location just past the token.
  llvm::SMLoc getEndLoc() const;

  /// The value of an integer literal; nullopt when it does not fit int64_t.
  std::optional<int64_t> getIntegerValue() const;
  /// The value of a float literal; nullopt when it overflows to infinity.
  std::optional<double> getFloatValue() const;
  /// The contents of a string literal, without the quotes.
  llvm::StringRef getStringValue() const;

  /// How a token of kind `kind` reads in diagnostics: the spelling of
  /// punctuation and keywords ("'('"), a description otherwise ("identifier").
  static std::string describe(Kind kind);

private:
  Kind kind = eof;
  llvm::StringRef spelling;
};

/// The lexer of one buffer of a SourceMgr.
class Lexer {
public:
  /// Receives each lexical error: where, and what.
  using ErrorHandler = std::function<void(llvm::SMLoc, const llvm::Twine &)>;

  Lexer(const llvm::SourceMgr &sourceMgr, unsigned bufferID,
        ErrorHandler onError);

  /// Returns the next token. After the end of the buffer it keeps returning
  /// `eof`. Consecutive line breaks, and line breaks separated only by
  /// whitespace and comments, come back as one `newline` token.
  Token lexToken();

  /// Returns the token after the current position without consuming it or
  /// reporting its errors.
  Token peekToken();

private:
  Token formToken(Token::Kind kind, const char *start) {
    return Token(kind, llvm::StringRef(start, curPtr - start));
  }
  Token emitError(const char *loc, const llvm::Twine &message);

  Token lexIdentifierOrKeyword(const char *start);
  Token lexNumber(const char *start);
  Token lexString(const char *start);
  /// `name`: a quoted name, an identifier whatever its spelling.
  Token lexQuotedName(const char *start);
  /// Skips a comment up to (not including) the end of its line.
  void skipComment();

  llvm::StringRef buffer;
  const char *curPtr;
  ErrorHandler onError;
  /// Set while peeking: errors are not reported.
  bool quiet = false;
};

} // namespace mlir::seq::frontend

#endif // SEQC_FRONTEND_LEXER_H
