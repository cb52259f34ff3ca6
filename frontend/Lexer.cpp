//===- Lexer.cpp - .seq lexer ---------------------------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "frontend/Lexer.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir::seq::frontend;
using llvm::SMLoc;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Token
//===----------------------------------------------------------------------===//

SMLoc Token::getLoc() const { return SMLoc::getFromPointer(spelling.data()); }

SMLoc Token::getEndLoc() const {
  return SMLoc::getFromPointer(spelling.data() + spelling.size());
}

bool Token::isKeyword() const {
  switch (kind) {
#define TOK_KEYWORD(SPELLING) case kw_##SPELLING:
#include "frontend/TokenKinds.def"
    return true;
  default:
    return false;
  }
}

bool Token::isElementType() const {
  return isAny(kw_f16, kw_bf16, kw_f32, kw_f64, kw_i32, kw_i64);
}

std::optional<int64_t> Token::getIntegerValue() const {
  uint64_t value;
  if (spelling.getAsInteger(10, value) ||
      value > static_cast<uint64_t>(INT64_MAX))
    return std::nullopt;
  return static_cast<int64_t>(value);
}

std::optional<double> Token::getFloatValue() const {
  llvm::APFloat value(llvm::APFloat::IEEEdouble());
  auto status =
      value.convertFromString(spelling, llvm::APFloat::rmNearestTiesToEven);
  if (!status) {
    llvm::consumeError(status.takeError());
    return std::nullopt;
  }
  // The lexer only forms well-formed literals, so the one failure left is a
  // magnitude beyond the range of a double.
  if ((*status & llvm::APFloat::opOverflow) || value.isInfinity())
    return std::nullopt;
  return value.convertToDouble();
}

StringRef Token::getStringValue() const {
  return spelling.drop_front().drop_back();
}

std::string Token::describe(Kind kind) {
  switch (kind) {
  case eof:
    return "end of file";
  case error:
    return "invalid token";
  case newline:
    return "end of line";
  case identifier:
    return "identifier";
  case integer:
    return "integer";
  case floating:
    return "float";
  case string:
    return "string";
#define TOK_PUNCTUATION(NAME, SPELLING)                                        \
  case NAME:                                                                   \
    return "'" SPELLING "'";
#define TOK_KEYWORD(SPELLING)                                                  \
  case kw_##SPELLING:                                                          \
    return "'" #SPELLING "'";
#include "frontend/TokenKinds.def"
  case NumKinds:
    break;
  }
  return "token";
}

//===----------------------------------------------------------------------===//
// Lexer
//===----------------------------------------------------------------------===//

Lexer::Lexer(const llvm::SourceMgr &sourceMgr, unsigned bufferID,
             ErrorHandler onError)
    : buffer(sourceMgr.getMemoryBuffer(bufferID)->getBuffer()),
      curPtr(buffer.begin()), onError(std::move(onError)) {}

Token Lexer::emitError(const char *loc, const llvm::Twine &message) {
  if (!quiet)
    onError(SMLoc::getFromPointer(loc), message);
  return formToken(Token::error, loc);
}

Token Lexer::peekToken() {
  const char *saved = curPtr;
  quiet = true;
  Token token = lexToken();
  quiet = false;
  curPtr = saved;
  return token;
}

static bool isIdentifierStart(char c) { return llvm::isAlpha(c) || c == '_'; }
static bool isIdentifierChar(char c) { return llvm::isAlnum(c) || c == '_'; }

void Lexer::skipComment() {
  while (curPtr != buffer.end() && *curPtr != '\n')
    ++curPtr;
}

Token Lexer::lexToken() {
  // Whether a line break was seen since the last token: blank lines and
  // comment lines fold into one newline token.
  const char *newlineStart = nullptr;
  while (true) {
    const char *tokStart = curPtr;
    if (curPtr == buffer.end()) {
      if (newlineStart)
        return Token(Token::newline, StringRef(newlineStart, 1));
      return Token(Token::eof, StringRef(curPtr, 0));
    }
    char c = *curPtr++;
    switch (c) {
    case ' ':
    case '\t':
    case '\r':
    case '\f':
    case '\v':
      continue;
    case '\n':
      if (!newlineStart)
        newlineStart = tokStart;
      continue;
    case '#':
      skipComment();
      continue;
    case '/':
      if (*curPtr == '/') {
        skipComment();
        continue;
      }
      break;
    default:
      break;
    }

    // A real token follows a line break: report the break first and lex the
    // token on the next call.
    if (newlineStart) {
      curPtr = tokStart;
      return Token(Token::newline, StringRef(newlineStart, 1));
    }

    switch (c) {
    case '(':
      return formToken(Token::l_paren, tokStart);
    case ')':
      return formToken(Token::r_paren, tokStart);
    case '[':
      return formToken(Token::l_square, tokStart);
    case ']':
      return formToken(Token::r_square, tokStart);
    case '{':
      return formToken(Token::l_brace, tokStart);
    case '}':
      return formToken(Token::r_brace, tokStart);
    case ',':
      return formToken(Token::comma, tokStart);
    case ':':
      return formToken(Token::colon, tokStart);
    case ';':
      return formToken(Token::semicolon, tokStart);
    case '=':
      if (*curPtr == '=') {
        ++curPtr;
        return formToken(Token::equal_equal, tokStart);
      }
      return formToken(Token::equal, tokStart);
    case '<':
      if (*curPtr == '=') {
        ++curPtr;
        return formToken(Token::less_equal, tokStart);
      }
      return formToken(Token::less, tokStart);
    case '>':
      if (*curPtr == '=') {
        ++curPtr;
        return formToken(Token::greater_equal, tokStart);
      }
      return formToken(Token::greater, tokStart);
    case '!':
      if (*curPtr == '=') {
        ++curPtr;
        return formToken(Token::not_equal, tokStart);
      }
      break;
    case '`':
      return lexQuotedName(tokStart);
    case '+':
      return formToken(Token::plus, tokStart);
    case '/':
      return formToken(Token::slash, tokStart);
    case '@':
      return formToken(Token::at, tokStart);
    case '^':
      return formToken(Token::caret, tokStart);
    case '-':
      if (*curPtr == '>') {
        ++curPtr;
        return formToken(Token::arrow, tokStart);
      }
      return formToken(Token::minus, tokStart);
    case '*':
      if (*curPtr == '*') {
        ++curPtr;
        return formToken(Token::star_star, tokStart);
      }
      return formToken(Token::star, tokStart);
    case '.':
      if (curPtr[0] == '.' && curPtr[1] == '.') {
        curPtr += 2;
        return formToken(Token::ellipsis, tokStart);
      }
      return formToken(Token::period, tokStart);
    case '"':
      return lexString(tokStart);
    default:
      break;
    }

    if (llvm::isDigit(c))
      return lexNumber(tokStart);
    if (isIdentifierStart(c))
      return lexIdentifierOrKeyword(tokStart);

    if (static_cast<unsigned char>(c) >= 0x80) {
      // Report a run of non-ASCII bytes (one UTF-8 character or several) once.
      while (curPtr != buffer.end() &&
             static_cast<unsigned char>(*curPtr) >= 0x80)
        ++curPtr;
      return emitError(tokStart, "unexpected non-ASCII character; only "
                                 "comments and strings may contain them");
    }
    if (llvm::isPrint(c))
      return emitError(tokStart,
                       "unexpected character '" + StringRef(&c, 1) + "'");
    return emitError(tokStart,
                     "unexpected byte 0x" +
                         llvm::utohexstr(static_cast<unsigned char>(c),
                                         /*LowerCase=*/false,
                                         /*Width=*/2));
  }
}

Token Lexer::lexIdentifierOrKeyword(const char *start) {
  while (curPtr != buffer.end() && isIdentifierChar(*curPtr))
    ++curPtr;
  StringRef spelling(start, curPtr - start);
  Token::Kind kind = llvm::StringSwitch<Token::Kind>(spelling)
#define TOK_KEYWORD(SPELLING) .Case(#SPELLING, Token::kw_##SPELLING)
#include "frontend/TokenKinds.def"
                         .Default(Token::identifier);
  return Token(kind, spelling);
}

/// number ::= digit+ ('.' digit+)? ([eE] [+-]? digit+)?
Token Lexer::lexNumber(const char *start) {
  auto isDigitAt = [&](const char *p) {
    return p != buffer.end() && llvm::isDigit(*p);
  };
  while (isDigitAt(curPtr))
    ++curPtr;
  bool isFloat = false;
  // A period not followed by a digit is member access or an error, not part
  // of the number.
  if (curPtr != buffer.end() && *curPtr == '.' && isDigitAt(curPtr + 1)) {
    isFloat = true;
    ++curPtr;
    while (isDigitAt(curPtr))
      ++curPtr;
  }
  if (curPtr != buffer.end() && (*curPtr == 'e' || *curPtr == 'E')) {
    const char *exponent = curPtr + 1;
    if (exponent != buffer.end() && (*exponent == '+' || *exponent == '-'))
      ++exponent;
    if (isDigitAt(exponent)) {
      isFloat = true;
      curPtr = exponent;
      while (isDigitAt(curPtr))
        ++curPtr;
    }
  }
  // `2x` or `1e` is a typo, not a number followed by a name.
  if (curPtr != buffer.end() && isIdentifierChar(*curPtr)) {
    while (curPtr != buffer.end() && isIdentifierChar(*curPtr))
      ++curPtr;
    return emitError(start, "invalid number '" +
                                StringRef(start, curPtr - start) + "'");
  }
  return formToken(isFloat ? Token::floating : Token::integer, start);
}

/// quoted-name ::= '`' [^`.\s]+ '`' (printable ASCII)
Token Lexer::lexQuotedName(const char *start) {
  // The whole name is consumed first, so that an error in it is reported
  // once and lexing resumes after it.
  while (curPtr != buffer.end() && *curPtr != '`' && *curPtr != '\n')
    ++curPtr;
  if (curPtr == buffer.end() || *curPtr != '`')
    return emitError(start, "unterminated quoted name (a name in backquotes "
                            "ends on the same line)");
  StringRef name(start + 1, curPtr - start - 1);
  ++curPtr;
  if (name.empty())
    return emitError(start, "empty quoted name");
  for (const char &c : name) {
    if (c == '.')
      return emitError(&c, "a quoted name cannot contain '.': it is one "
                           "segment of a parameter's name");
    if (!llvm::isPrint(c) || c == ' ')
      return emitError(&c, "a quoted name holds printable ASCII characters "
                           "other than spaces");
  }
  return Token(Token::identifier, name);
}

/// string ::= '"' [^"\n]* '"'
Token Lexer::lexString(const char *start) {
  while (true) {
    if (curPtr == buffer.end() || *curPtr == '\n')
      return emitError(start, "unterminated string");
    if (*curPtr++ == '"')
      return formToken(Token::string, start);
  }
}
