//===- Json.cpp - A small strict JSON parser ------------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// A recursive-descent parser for RFC 8259 JSON. Recursion depth is bounded by
// the nesting cap, so hostile input cannot overflow the stack; every loop
// consumes input, so it cannot hang.
//
//===----------------------------------------------------------------------===//

#include "Json.h"
#include "Support.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace seqc {

const JsonValue *JsonValue::find(std::string_view key) const {
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key)
      return &items[i];
  return nullptr;
}

const char *JsonValue::kindName() const {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "a boolean";
  case Kind::Number:
    return "a number";
  case Kind::String:
    return "a string";
  case Kind::Array:
    return "an array";
  case Kind::Object:
    return "an object";
  }
  return "a value";
}

namespace {

class Parser {
public:
  Parser(std::string_view text, JsonLimits limits)
      : begin(text.data()), cur(text.data()), end(text.data() + text.size()),
        limits(limits) {}

  /// Parses the whole input; on failure `error`/`errorOffset` describe why.
  bool parseDocument(JsonValue &out) {
    skipWhitespace();
    if (!parseValue(out, 0))
      return false;
    skipWhitespace();
    if (cur != end)
      return fail("unexpected trailing characters after the JSON value");
    return true;
  }

  std::string error;
  size_t errorOffset = 0;

private:
  const char *begin;
  const char *cur;
  const char *end;
  JsonLimits limits;
  size_t numValues = 0;

  bool fail(const char *message) { return failAt(cur, message); }
  bool failAt(const char *where, const char *message) {
    error = message;
    errorOffset = static_cast<size_t>(where - begin);
    return false;
  }

  void skipWhitespace() {
    while (cur != end &&
           (*cur == ' ' || *cur == '\t' || *cur == '\n' || *cur == '\r'))
      ++cur;
  }

  bool consumeLiteral(std::string_view literal) {
    if (static_cast<size_t>(end - cur) < literal.size() ||
        std::string_view(cur, literal.size()) != literal)
      return fail("invalid literal");
    cur += literal.size();
    return true;
  }

  bool parseValue(JsonValue &out, unsigned depth) {
    if (cur == end)
      return fail("unexpected end of input");
    if (++numValues > limits.maxValues)
      return fail("too many values");
    switch (*cur) {
    case '{':
      return parseObject(out, depth + 1);
    case '[':
      return parseArray(out, depth + 1);
    case '"':
      out.kind = JsonValue::Kind::String;
      return parseString(out.string);
    case 't':
      out.kind = JsonValue::Kind::Bool;
      out.boolean = true;
      return consumeLiteral("true");
    case 'f':
      out.kind = JsonValue::Kind::Bool;
      out.boolean = false;
      return consumeLiteral("false");
    case 'n':
      out.kind = JsonValue::Kind::Null;
      return consumeLiteral("null");
    default:
      if (*cur == '-' || (*cur >= '0' && *cur <= '9'))
        return parseNumber(out);
      return fail("unexpected character");
    }
  }

  bool parseArray(JsonValue &out, unsigned depth) {
    if (depth > limits.maxDepth)
      return fail("nesting too deep");
    out.kind = JsonValue::Kind::Array;
    ++cur; // '['
    skipWhitespace();
    if (cur != end && *cur == ']') {
      ++cur;
      return true;
    }
    while (true) {
      out.items.emplace_back();
      skipWhitespace();
      if (!parseValue(out.items.back(), depth))
        return false;
      skipWhitespace();
      if (cur == end)
        return fail("unterminated array");
      if (*cur == ']') {
        ++cur;
        return true;
      }
      if (*cur != ',')
        return fail("expected ',' or ']' in array");
      ++cur;
    }
  }

  bool parseObject(JsonValue &out, unsigned depth) {
    if (depth > limits.maxDepth)
      return fail("nesting too deep");
    const char *objectStart = cur;
    out.kind = JsonValue::Kind::Object;
    ++cur; // '{'
    skipWhitespace();
    if (cur != end && *cur == '}') {
      ++cur;
      return true;
    }
    while (true) {
      skipWhitespace();
      if (cur == end)
        return fail("unterminated object");
      if (*cur != '"')
        return fail("expected a string key in object");
      out.keys.emplace_back();
      if (!parseString(out.keys.back()))
        return false;
      skipWhitespace();
      if (cur == end || *cur != ':')
        return fail("expected ':' after object key");
      ++cur;
      skipWhitespace();
      out.items.emplace_back();
      if (!parseValue(out.items.back(), depth))
        return false;
      skipWhitespace();
      if (cur == end)
        return fail("unterminated object");
      if (*cur == '}') {
        ++cur;
        break;
      }
      if (*cur != ',')
        return fail("expected ',' or '}' in object");
      ++cur;
    }
    return checkDuplicateKeys(out, objectStart);
  }

  /// Rejects an object with a repeated key: for safetensors it would mean
  /// two tensors of one name, and which one wins is ambiguous.
  bool checkDuplicateKeys(const JsonValue &object, const char *objectStart) {
    if (object.keys.size() < 2)
      return true;
    std::vector<std::string_view> sorted(object.keys.begin(),
                                         object.keys.end());
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 1; i < sorted.size(); ++i) {
      if (sorted[i] == sorted[i - 1]) {
        duplicateMessage = "duplicate key '";
        // Keys may be long or binary (DEL and other bytes JSON strings may
        // hold raw); quote a bounded, printable prefix.
        duplicateMessage.append(printableText(sorted[i], 64));
        duplicateMessage += "' in object";
        return failAt(objectStart, duplicateMessage.c_str());
      }
    }
    return true;
  }
  std::string duplicateMessage;

  static int hexValue(char c) {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  }

  bool parseHex4(uint32_t &out) {
    if (end - cur < 4)
      return fail("truncated \\u escape");
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      int digit = hexValue(cur[i]);
      if (digit < 0)
        return fail("invalid hex digit in \\u escape");
      value = value * 16 + static_cast<uint32_t>(digit);
    }
    cur += 4;
    out = value;
    return true;
  }

  static void appendUtf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  /// Consumes one UTF-8 encoded code point starting at `cur`, rejecting
  /// overlong forms, surrogates and values past U+10FFFF, so that names
  /// taken from files are valid text when printed.
  bool copyUtf8Sequence(std::string &out) {
    auto lead = static_cast<unsigned char>(*cur);
    int length;
    uint32_t cp;
    if (lead >= 0xc2 && lead <= 0xdf) {
      length = 2;
      cp = lead & 0x1f;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      length = 3;
      cp = lead & 0x0f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      length = 4;
      cp = lead & 0x07;
    } else {
      return fail("invalid UTF-8 in string");
    }
    if (end - cur < length)
      return fail("invalid UTF-8 in string");
    for (int i = 1; i < length; ++i) {
      auto c = static_cast<unsigned char>(cur[i]);
      if ((c & 0xc0) != 0x80)
        return fail("invalid UTF-8 in string");
      cp = (cp << 6) | (c & 0x3f);
    }
    if ((length == 3 && cp < 0x800) || (length == 4 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
      return fail("invalid UTF-8 in string");
    out.append(cur, static_cast<size_t>(length));
    cur += length;
    return true;
  }

  bool parseString(std::string &out) {
    ++cur; // '"'
    while (true) {
      if (cur == end)
        return fail("unterminated string");
      char c = *cur;
      if (c == '"') {
        ++cur;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in string");
      if (static_cast<unsigned char>(c) >= 0x80) {
        if (!copyUtf8Sequence(out))
          return false;
        continue;
      }
      if (c != '\\') {
        out += c;
        ++cur;
        continue;
      }
      ++cur;
      if (cur == end)
        return fail("unterminated string");
      char escape = *cur++;
      switch (escape) {
      case '"':
      case '\\':
      case '/':
        out += escape;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t cp;
        if (!parseHex4(cp))
          return false;
        if (cp >= 0xdc00 && cp <= 0xdfff)
          return fail("unpaired low surrogate in \\u escape");
        if (cp >= 0xd800 && cp <= 0xdbff) {
          if (end - cur < 2 || cur[0] != '\\' || cur[1] != 'u')
            return fail("unpaired high surrogate in \\u escape");
          cur += 2;
          uint32_t low;
          if (!parseHex4(low))
            return false;
          if (low < 0xdc00 || low > 0xdfff)
            return fail("unpaired high surrogate in \\u escape");
          cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        --cur;
        return fail("invalid escape in string");
      }
    }
  }

  static bool isDigit(char c) { return c >= '0' && c <= '9'; }

  bool parseNumber(JsonValue &out) {
    const char *start = cur;
    if (*cur == '-')
      ++cur;
    if (cur == end || !isDigit(*cur))
      return fail("invalid number");
    if (*cur == '0') {
      ++cur;
      if (cur != end && isDigit(*cur))
        return fail("leading zero in number");
    } else {
      while (cur != end && isDigit(*cur))
        ++cur;
    }
    bool integral = true;
    if (cur != end && *cur == '.') {
      integral = false;
      ++cur;
      if (cur == end || !isDigit(*cur))
        return fail("expected digits after '.' in number");
      while (cur != end && isDigit(*cur))
        ++cur;
    }
    if (cur != end && (*cur == 'e' || *cur == 'E')) {
      integral = false;
      ++cur;
      if (cur != end && (*cur == '+' || *cur == '-'))
        ++cur;
      if (cur == end || !isDigit(*cur))
        return fail("expected digits in number exponent");
      while (cur != end && isDigit(*cur))
        ++cur;
    }
    out.kind = JsonValue::Kind::Number;
    // The grammar is already checked, so from_chars (locale-independent,
    // unlike strtod) parses exactly [start, cur).
    if (integral) {
      int64_t value = 0;
      auto result = std::from_chars(start, cur, value);
      if (result.ec == std::errc() && result.ptr == cur) {
        out.isInteger = true;
        out.integer = value;
        out.number = static_cast<double>(value);
        return true;
      }
      // Too large for int64: fall through and keep it as a double.
    }
    double value = 0;
    auto result = std::from_chars(start, cur, value);
    if (result.ec != std::errc() || result.ptr != cur)
      return failAt(start, "number out of range");
    out.number = value;
    return true;
  }
};

} // namespace

seqc_status *parseJson(std::string_view text, JsonValue *out,
                       seqc_status_code errorCode, JsonLimits limits) {
  Parser parser(text, limits);
  JsonValue value;
  if (!parser.parseDocument(value))
    return makeStatus(errorCode, "at byte %zu: %s", parser.errorOffset,
                      parser.error.c_str());
  *out = std::move(value);
  return nullptr;
}

void appendJsonString(std::string &out, std::string_view text) {
  out += '"';
  for (char c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x",
                      static_cast<unsigned>(static_cast<unsigned char>(c)));
        out += buf;
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

} // namespace seqc
