//===- Json.h - A small strict JSON parser ----------------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Parses the model manifest and safetensors headers. Safetensors headers come
// from untrusted files, so the parser is written for hostile input: it reads
// exactly the given bytes (no NUL terminator assumed), runs in time linear in
// the input (duplicate keys are found by sorting, not by pairwise search),
// caps nesting depth so recursion is bounded, and reports the byte offset of
// the first error.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_RUNTIME_JSON_H
#define SEQC_RUNTIME_JSON_H

#include "Support.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace seqc {

/// A parsed JSON value. Objects keep their members in document order.
class JsonValue {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind = Kind::Null;
  bool boolean = false;
  /// For numbers: the value as a double, and whether the literal was an
  /// integer (no fraction or exponent) that fits int64, then in `integer`.
  double number = 0;
  bool isInteger = false;
  int64_t integer = 0;
  /// For strings: the decoded UTF-8 text.
  std::string string;
  /// For arrays: the elements. For objects: the values, with `keys`.
  std::vector<JsonValue> items;
  std::vector<std::string> keys;

  bool isNull() const { return kind == Kind::Null; }
  bool isBool() const { return kind == Kind::Bool; }
  bool isNumber() const { return kind == Kind::Number; }
  bool isString() const { return kind == Kind::String; }
  bool isArray() const { return kind == Kind::Array; }
  bool isObject() const { return kind == Kind::Object; }

  /// Returns the member `key` of an object, or NULL (linear: for the small
  /// objects of a manifest entry).
  const JsonValue *find(std::string_view key) const;

  /// Returns a short name of the kind ("an object", "a string", ...).
  const char *kindName() const;
};

/// Limits that bound the parser's stack and memory on hostile input.
struct JsonLimits {
  /// Manifests and safetensors headers nest at most four levels deep.
  unsigned maxDepth = 64;
  /// Each value costs ~100 bytes in memory, so a 16 MiB header of "0,0,..."
  /// would otherwise expand to ~1 GB. A million values is ~100k tensors.
  size_t maxValues = size_t(1) << 20;
};

/// Parses `text` as one JSON document. On error returns a status with code
/// `errorCode` and a message "at byte N: <reason>".
seqc_status *parseJson(std::string_view text, JsonValue *out,
                       seqc_status_code errorCode = SEQC_STATUS_INVALID_FILE,
                       JsonLimits limits = JsonLimits());

/// Appends `text` as a JSON string literal (quoted and escaped) to `out`.
void appendJsonString(std::string &out, std::string_view text);

} // namespace seqc

#endif // SEQC_RUNTIME_JSON_H
