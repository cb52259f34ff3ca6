//===- Gguf.cpp - GGUF reader ---------------------------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "Gguf.h"
#include "Quantize.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <unordered_set>

namespace seqc {

namespace {

struct GgmlTypeEntry {
  uint32_t type;
  const char *name;
  uint64_t blockSize, typeSize;
};

/// ggml's types (ggml.h and ggml.c's type traits); the numbers ggml has
/// retired (4, 5: Q4_2, Q4_3; 31-33, 36-38: repacked layouts) are absent.
const GgmlTypeEntry kGgmlTypes[] = {
    {0, "F32", 1, 4},         {1, "F16", 1, 2},       {2, "Q4_0", 32, 18},
    {3, "Q4_1", 32, 20},      {6, "Q5_0", 32, 22},    {7, "Q5_1", 32, 24},
    {8, "Q8_0", 32, 34},      {9, "Q8_1", 32, 36},    {10, "Q2_K", 256, 84},
    {11, "Q3_K", 256, 110},   {12, "Q4_K", 256, 144}, {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210},   {15, "Q8_K", 256, 292}, {16, "IQ2_XXS", 256, 66},
    {17, "IQ2_XS", 256, 74},  {18, "IQ3_XXS", 256, 98},
    {19, "IQ1_S", 256, 50},   {20, "IQ4_NL", 32, 18}, {21, "IQ3_S", 256, 110},
    {22, "IQ2_S", 256, 82},   {23, "IQ4_XS", 256, 136},
    {24, "I8", 1, 1},         {25, "I16", 1, 2},      {26, "I32", 1, 4},
    {27, "I64", 1, 8},        {28, "F64", 1, 8},      {29, "IQ1_M", 256, 56},
    {30, "BF16", 1, 2},       {34, "TQ1_0", 256, 54}, {35, "TQ2_0", 256, 66},
    {39, "MXFP4", 32, 17},
};

/// A bounds-checked cursor over the header.
class Reader {
public:
  Reader(const uint8_t *data, size_t size) : data(data), size(size) {}

  size_t position() const { return at; }
  uint64_t remaining() const { return size - at; }

  bool read(void *out, size_t bytes) {
    if (bytes > size - at)
      return false;
    std::memcpy(out, data + at, bytes);
    at += bytes;
    return true;
  }
  bool skip(uint64_t bytes) {
    if (bytes > size - at)
      return false;
    at += static_cast<size_t>(bytes);
    return true;
  }
  template <typename T> bool scalar(T *out) { return read(out, sizeof(T)); }
  /// A u64 length and that many bytes.
  bool string(std::string *out) {
    uint64_t length;
    if (!scalar(&length) || length > size - at)
      return false;
    out->assign(reinterpret_cast<const char *>(data + at),
                static_cast<size_t>(length));
    at += static_cast<size_t>(length);
    return true;
  }

private:
  const uint8_t *data;
  size_t size;
  size_t at = 0;
};

std::string quote(const std::string &text) { return printableText(text); }

/// The size of a fixed-size value type, 0 for strings and arrays, SIZE_MAX
/// for an unknown type.
size_t valueSize(uint32_t type) {
  switch (static_cast<GgufValueType>(type)) {
  case GgufValueType::U8:
  case GgufValueType::I8:
  case GgufValueType::Bool:
    return 1;
  case GgufValueType::U16:
  case GgufValueType::I16:
    return 2;
  case GgufValueType::U32:
  case GgufValueType::I32:
  case GgufValueType::F32:
    return 4;
  case GgufValueType::U64:
  case GgufValueType::I64:
  case GgufValueType::F64:
    return 8;
  case GgufValueType::String:
  case GgufValueType::Array:
    return 0;
  }
  return SIZE_MAX;
}

/// Reads one number of type T into `value`: `u` for unsigned integers, `i`
/// for every integer an int64 holds, `f` for every number.
template <typename T>
bool readNumber(Reader &reader, GgufValue *value) {
  T v;
  if (!reader.scalar(&v))
    return false;
  if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>)
    value->u = v;
  if constexpr (std::is_integral_v<T> &&
                (std::is_signed_v<T> || sizeof(T) < sizeof(int64_t)))
    value->i = static_cast<int64_t>(v);
  value->f = static_cast<double>(v);
  return true;
}

/// Reads a fixed-size scalar of `type` into `value`.
bool readScalar(Reader &reader, GgufValueType type, GgufValue *value) {
  switch (type) {
  case GgufValueType::Bool: {
    uint8_t v;
    if (!reader.scalar(&v))
      return false;
    value->u = v;
    return true;
  }
  case GgufValueType::U8:
    return readNumber<uint8_t>(reader, value);
  case GgufValueType::I8:
    return readNumber<int8_t>(reader, value);
  case GgufValueType::U16:
    return readNumber<uint16_t>(reader, value);
  case GgufValueType::I16:
    return readNumber<int16_t>(reader, value);
  case GgufValueType::U32:
    return readNumber<uint32_t>(reader, value);
  case GgufValueType::I32:
    return readNumber<int32_t>(reader, value);
  case GgufValueType::U64:
    return readNumber<uint64_t>(reader, value);
  case GgufValueType::I64:
    return readNumber<int64_t>(reader, value);
  case GgufValueType::F32:
    return readNumber<float>(reader, value);
  case GgufValueType::F64:
    return readNumber<double>(reader, value);
  case GgufValueType::String:
  case GgufValueType::Array:
    break;
  }
  return false;
}

seqc_status *truncated(const char *what, const std::string &key) {
  return makeStatus(SEQC_STATUS_INVALID_FILE,
                    "metadata '%s': the %s runs past the end of the file",
                    quote(key).c_str(), what);
}

/// Reads a value of `type` (the type already read) at `depth` of array
/// nesting.
seqc_status *readValue(Reader &reader, uint32_t type, const std::string &key,
                       int depth, GgufValue *value) {
  size_t fixed = valueSize(type);
  if (fixed == SIZE_MAX)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "metadata '%s': unknown value type %u", quote(key).c_str(),
                      type);
  value->type = static_cast<GgufValueType>(type);
  if (fixed) {
    if (!readScalar(reader, value->type, value))
      return truncated("value", key);
    if (value->type == GgufValueType::Bool && value->u > 1)
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "metadata '%s': bool value %llu is neither 0 nor 1",
                        quote(key).c_str(),
                        static_cast<unsigned long long>(value->u));
    return nullptr;
  }
  if (value->type == GgufValueType::String)
    return reader.string(&value->str) ? nullptr : truncated("string", key);

  // An array: element type, count, elements.
  if (depth >= kGgufMaxArrayDepth)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "metadata '%s': arrays nested deeper than %d",
                      quote(key).c_str(), kGgufMaxArrayDepth);
  uint32_t elementType;
  uint64_t count;
  if (!reader.scalar(&elementType) || !reader.scalar(&count))
    return truncated("array header", key);
  size_t elementSize = valueSize(elementType);
  if (elementSize == SIZE_MAX)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "metadata '%s': unknown array element type %u",
                      quote(key).c_str(), elementType);
  value->arrayType = static_cast<GgufValueType>(elementType);
  value->arrayCount = count;
  if (elementSize) {
    // Skipped in one step, after a check that cannot overflow.
    if (count > reader.remaining() / elementSize)
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "metadata '%s': an array of %llu %s values runs past "
                        "the end of the file",
                        quote(key).c_str(),
                        static_cast<unsigned long long>(count),
                        ggufValueTypeName(elementType));
    if (value->arrayType == GgufValueType::Bool) {
      for (uint64_t n = 0; n < count; ++n) {
        GgufValue element;
        readScalar(reader, value->arrayType, &element);
        if (element.u > 1)
          return makeStatus(SEQC_STATUS_INVALID_FILE,
                            "metadata '%s': bool element %llu is %llu, "
                            "neither 0 nor 1",
                            quote(key).c_str(),
                            static_cast<unsigned long long>(n),
                            static_cast<unsigned long long>(element.u));
      }
      return nullptr;
    }
    if (count > kGgufKeptArray) {
      reader.skip(count * elementSize);
      return nullptr;
    }
    for (uint64_t n = 0; n < count; ++n) {
      GgufValue element;
      readScalar(reader, value->arrayType, &element);
      value->numbers.push_back(element.f);
    }
    return nullptr;
  }
  // Strings and arrays: each element at least 8 (a length) or 12 bytes, so
  // a count beyond what is left is rejected before the loop.
  uint64_t minimum = value->arrayType == GgufValueType::String ? 8 : 12;
  if (count > reader.remaining() / minimum)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "metadata '%s': an array of %llu %ss runs past the end "
                      "of the file",
                      quote(key).c_str(), static_cast<unsigned long long>(count),
                      ggufValueTypeName(elementType));
  for (uint64_t n = 0; n < count; ++n) {
    if (value->arrayType == GgufValueType::String) {
      uint64_t length;
      if (!reader.scalar(&length) || !reader.skip(length))
        return truncated("array's strings", key);
      continue;
    }
    GgufValue element;
    SEQC_RETURN_IF_ERROR(
        readValue(reader, elementType, key, depth + 1, &element));
  }
  return nullptr;
}

seqc_status *checkOverlaps(const std::vector<GgufTensor> &tensors) {
  std::vector<const GgufTensor *> sorted;
  for (const GgufTensor &t : tensors)
    if (t.bytes)
      sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(),
            [](const GgufTensor *a, const GgufTensor *b) {
              return a->offset != b->offset ? a->offset < b->offset
                                            : a->bytes < b->bytes;
            });
  const GgufTensor *furthest = nullptr;
  for (const GgufTensor *t : sorted) {
    if (furthest && t->offset < furthest->offset + furthest->bytes)
      return makeStatus(
          SEQC_STATUS_INVALID_FILE,
          "tensors '%s' [%llu, %llu) and '%s' [%llu, %llu) overlap",
          quote(furthest->name).c_str(),
          static_cast<unsigned long long>(furthest->offset),
          static_cast<unsigned long long>(furthest->offset + furthest->bytes),
          quote(t->name).c_str(), static_cast<unsigned long long>(t->offset),
          static_cast<unsigned long long>(t->offset + t->bytes));
    if (!furthest ||
        t->offset + t->bytes > furthest->offset + furthest->bytes)
      furthest = t;
  }
  return nullptr;
}

/// Reads one tensor info and checks it on its own (the data section's size
/// is checked once it is known).
seqc_status *readTensorInfo(Reader &reader, size_t index, GgufTensor *out) {
  if (!reader.string(&out->name))
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "tensor info %zu: its name runs past the end of the "
                      "file",
                      index);
  std::string name = quote(out->name);
  uint32_t dims;
  if (!reader.scalar(&dims))
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "tensor '%s': its info runs past the end of the file",
                      name.c_str());
  if (dims > kGgufMaxDims)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "tensor '%s': %u dimensions, more than GGUF's %u",
                      name.c_str(), dims, kGgufMaxDims);
  out->ne.resize(dims);
  for (uint32_t d = 0; d < dims; ++d)
    if (!reader.scalar(&out->ne[d]))
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "tensor '%s': its info runs past the end of the file",
                        name.c_str());
  if (!reader.scalar(&out->type) || !reader.scalar(&out->offset))
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "tensor '%s': its info runs past the end of the file",
                      name.c_str());
  uint64_t blockSize, typeSize;
  if (!ggmlTypeInfo(out->type, &out->typeName, &blockSize, &typeSize))
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "tensor '%s': unknown ggml type %u", name.c_str(),
                      out->type);
  std::string neText = "[";
  for (uint32_t d = 0; d < dims; ++d)
    neText += (d ? ", " : "") + std::to_string(out->ne[d]);
  neText += "]";
  // numel must fit int64, and so must the bytes.
  uint64_t numel = 1;
  for (uint64_t size : out->ne) {
    if (size > static_cast<uint64_t>(INT64_MAX) ||
        (size && numel > static_cast<uint64_t>(INT64_MAX) / size))
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "tensor '%s': dimensions (ne) %s are too large",
                        name.c_str(), neText.c_str());
    numel *= size;
  }
  if (dims && out->ne[0] % blockSize != 0)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "tensor '%s': its innermost dimension ne[0] = %llu is "
                      "not a multiple of %s's block of %llu",
                      name.c_str(),
                      static_cast<unsigned long long>(out->ne[0]),
                      out->typeName, static_cast<unsigned long long>(blockSize));
  if (!dims && blockSize != 1)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "tensor '%s': a scalar cannot be %s", name.c_str(),
                      out->typeName);
  uint64_t blocks = numel / blockSize;
  if (blocks > static_cast<uint64_t>(INT64_MAX) / typeSize)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "tensor '%s': dimensions (ne) %s are too large",
                      name.c_str(), neText.c_str());
  out->bytes = blocks * typeSize;
  return nullptr;
}

seqc_status *parseGguf(const std::shared_ptr<MappedFile> &file, GgufFile *out) {
  Reader reader(file->data(), file->size());
  uint8_t magic[4];
  if (!reader.read(magic, 4) || !hasGgufMagic(magic, 4))
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "not a GGUF file (it does not start with \"GGUF\")");
  uint32_t version;
  if (!reader.scalar(&version))
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "file too short: it ends inside the GGUF header");
  if (version != kGgufVersion) {
    // A big-endian file (GGUF v3 allows them) reads as a huge version.
    if (version >= 0x01000000u)
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "GGUF version field 0x%08x: the file is big-endian "
                        "(or corrupt); seqc reads little-endian GGUF files "
                        "only",
                        version);
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "GGUF version %u is not supported: seqc reads version "
                      "%u (llama.cpp's format since 2023; convert %s with a "
                      "current llama.cpp)",
                      version, kGgufVersion,
                      version < kGgufVersion ? "older files" : "the file");
  }
  out->version = version;
  uint64_t tensorCount, kvCount;
  if (!reader.scalar(&tensorCount) || !reader.scalar(&kvCount))
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "file too short: it ends inside the GGUF header");
  // Each entry takes at least 12 (metadata: key length, type) or 24 bytes
  // (tensor info: name length, n_dims, type, offset): counts beyond that are
  // rejected before anything is reserved.
  if (kvCount > reader.remaining() / 12)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "metadata count %llu is more than the file (%zu bytes) "
                      "can hold",
                      static_cast<unsigned long long>(kvCount), file->size());
  if (tensorCount > reader.remaining() / 24)
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "tensor count %llu is more than the file (%zu bytes) "
                      "can hold",
                      static_cast<unsigned long long>(tensorCount),
                      file->size());

  std::unordered_set<std::string> keys;
  out->metadata.clear();
  // Reserved up to a bound: the counts are only known to fit the file.
  out->metadata.reserve(static_cast<size_t>(std::min<uint64_t>(kvCount, 1024)));
  for (uint64_t n = 0; n < kvCount; ++n) {
    std::string key;
    if (!reader.string(&key))
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "metadata entry %llu: its key runs past the end of "
                        "the file",
                        static_cast<unsigned long long>(n));
    if (!keys.insert(key).second)
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "metadata key '%s' appears twice", quote(key).c_str());
    uint32_t type;
    if (!reader.scalar(&type))
      return truncated("value type", key);
    GgufValue value;
    SEQC_RETURN_IF_ERROR(readValue(reader, type, key, 0, &value));
    out->metadata.emplace_back(std::move(key), std::move(value));
  }

  out->alignment = kGgufDefaultAlignment;
  if (const GgufValue *alignment = out->find("general.alignment")) {
    if (alignment->type != GgufValueType::U32)
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "metadata 'general.alignment' is %s, not u32",
                        ggufValueTypeName(static_cast<uint32_t>(alignment->type)));
    if (alignment->u == 0 || (alignment->u & (alignment->u - 1)) != 0)
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "metadata 'general.alignment' is %llu, not a power of "
                        "two",
                        static_cast<unsigned long long>(alignment->u));
    out->alignment = alignment->u;
  }

  std::unordered_set<std::string> names;
  out->tensors.clear();
  out->tensors.reserve(
      static_cast<size_t>(std::min<uint64_t>(tensorCount, 1024)));
  for (uint64_t n = 0; n < tensorCount; ++n) {
    GgufTensor tensor;
    SEQC_RETURN_IF_ERROR(
        readTensorInfo(reader, static_cast<size_t>(n), &tensor));
    if (!names.insert(tensor.name).second)
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "tensor '%s' appears twice", quote(tensor.name).c_str());
    if (tensor.offset % out->alignment != 0)
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "tensor '%s': offset %llu is not a multiple of the "
                        "alignment %llu",
                        quote(tensor.name).c_str(),
                        static_cast<unsigned long long>(tensor.offset),
                        static_cast<unsigned long long>(out->alignment));
    out->tensors.push_back(std::move(tensor));
  }

  // The data section starts at the aligned end of the header; a file
  // without tensor data may end before it.
  uint64_t headerEnd = reader.position();
  uint64_t size = file->size();
  uint64_t padding = (out->alignment - headerEnd % out->alignment) %
                     out->alignment;
  out->dataStart = std::min(headerEnd + padding, size);
  uint64_t dataSize = size - out->dataStart;
  for (GgufTensor &tensor : out->tensors) {
    if (tensor.offset > dataSize || tensor.bytes > dataSize - tensor.offset)
      return makeStatus(
          SEQC_STATUS_INVALID_FILE,
          "tensor '%s': %llu bytes of %s at offset %llu run past the end of "
          "the data section (%llu bytes)",
          quote(tensor.name).c_str(),
          static_cast<unsigned long long>(tensor.bytes), tensor.typeName,
          static_cast<unsigned long long>(tensor.offset),
          static_cast<unsigned long long>(dataSize));
    tensor.data = file->data() + out->dataStart + tensor.offset;
  }
  SEQC_RETURN_IF_ERROR(checkOverlaps(out->tensors));
  out->file = file;
  return nullptr;
}

} // namespace

const char *ggufValueTypeName(uint32_t type) {
  static const char *const kNames[] = {"u8",  "i8",   "u16",    "i16", "u32",
                                       "i32", "f32",  "bool",   "string",
                                       "array", "u64", "i64",   "f64"};
  return type < sizeof(kNames) / sizeof(kNames[0]) ? kNames[type] : "?";
}

bool ggmlTypeInfo(uint32_t type, const char **name, uint64_t *blockSize,
                  uint64_t *typeSize) {
  for (const GgmlTypeEntry &entry : kGgmlTypes) {
    if (entry.type != type)
      continue;
    *name = entry.name;
    *blockSize = entry.blockSize;
    *typeSize = entry.typeSize;
    return true;
  }
  return false;
}

bool GgufValue::asUInt64(uint64_t *out) const {
  switch (type) {
  case GgufValueType::U8:
  case GgufValueType::U16:
  case GgufValueType::U32:
  case GgufValueType::U64:
    *out = u;
    return true;
  case GgufValueType::I8:
  case GgufValueType::I16:
  case GgufValueType::I32:
  case GgufValueType::I64:
    if (i < 0)
      return false;
    *out = static_cast<uint64_t>(i);
    return true;
  default:
    return false;
  }
}

std::vector<int64_t> GgufTensor::rowMajorShape() const {
  return std::vector<int64_t>(ne.rbegin(), ne.rend());
}

const GgufValue *GgufFile::find(const std::string &key) const {
  for (const auto &entry : metadata)
    if (entry.first == key)
      return &entry.second;
  return nullptr;
}

bool hasGgufMagic(const uint8_t *data, size_t size) {
  return size >= 4 && std::memcmp(data, "GGUF", 4) == 0;
}

seqc_status *readGguf(const char *path, GgufFile *out) {
  std::shared_ptr<MappedFile> file;
  SEQC_RETURN_IF_ERROR(MappedFile::open(path, &file));
  return annotate(parseGguf(file, out), "'%s'", path);
}

seqc_dtype dtypeOfGgmlBlocks(uint32_t type) {
  return type == kGgmlQ8_0   ? SEQC_DTYPE_Q8_0
         : type == kGgmlQ4_0 ? SEQC_DTYPE_Q4_0
                             : SEQC_DTYPE_Q4_1;
}

uint32_t ggmlTypeOfDType(seqc_dtype dtype) {
  switch (dtype) {
  case SEQC_DTYPE_F32:
    return kGgmlF32;
  case SEQC_DTYPE_F16:
    return kGgmlF16;
  case SEQC_DTYPE_BF16:
    return kGgmlBF16;
  case SEQC_DTYPE_F64:
    return 28; // GGML_TYPE_F64
  case SEQC_DTYPE_I32:
    return 26; // GGML_TYPE_I32
  case SEQC_DTYPE_I64:
    return 27; // GGML_TYPE_I64
  case SEQC_DTYPE_Q8_0:
    return kGgmlQ8_0;
  case SEQC_DTYPE_Q4_0:
    return kGgmlQ4_0;
  case SEQC_DTYPE_Q4_1:
    return kGgmlQ4_1;
  default:
    return UINT32_MAX;
  }
}

namespace {
/// Appends little-endian scalars and GGUF strings to a byte buffer.
struct GgufBuffer {
  std::string bytes;

  template <typename T> void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    char raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));
    bytes.append(raw, sizeof(T));
  }
  void putString(const std::string &text) {
    put<uint64_t>(text.size());
    bytes += text;
  }
};
} // namespace

seqc_status *writeGguf(const char *path,
                       const std::vector<GgufWriteValue> &metadata,
                       const std::vector<GgufWriteTensor> &tensors) {
  GgufBuffer head;
  head.bytes = "GGUF";
  head.put<uint32_t>(kGgufVersion);
  head.put<uint64_t>(tensors.size());
  head.put<uint64_t>(metadata.size());
  for (const GgufWriteValue &value : metadata) {
    head.putString(value.key);
    head.put<uint32_t>(static_cast<uint32_t>(value.type));
    switch (value.type) {
    case GgufValueType::String:
      head.putString(value.str);
      break;
    case GgufValueType::U32:
      head.put<uint32_t>(value.u32);
      break;
    case GgufValueType::F32:
      head.put<float>(value.f32);
      break;
    default:
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "cannot write '%s': metadata '%s' has a type the "
                        "writer does not support",
                        path, value.key.c_str());
    }
  }
  std::unordered_set<std::string> names;
  uint64_t offset = 0;
  std::vector<uint64_t> padding;
  for (const GgufWriteTensor &tensor : tensors) {
    if (tensor.shape.size() > kGgufMaxDims)
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "cannot write '%s': tensor '%s' has %zu dimensions, "
                        "more than GGUF's %u",
                        path, tensor.name.c_str(), tensor.shape.size(),
                        kGgufMaxDims);
    const char *typeName = "?";
    uint64_t blockSize = 0, typeSize = 0;
    int64_t numel = 1;
    bool valid = ggmlTypeInfo(tensor.type, &typeName, &blockSize, &typeSize);
    for (int64_t d : tensor.shape)
      valid = valid && d >= 0 && (d == 0 || numel <= INT64_MAX / d) &&
              ((numel *= d), true);
    int64_t last = tensor.shape.empty() ? 1 : tensor.shape.back();
    valid = valid && last % static_cast<int64_t>(blockSize) == 0 &&
            static_cast<uint64_t>(numel) / blockSize * typeSize == tensor.bytes;
    if (!valid)
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "cannot write '%s': tensor '%s' has a shape that does "
                        "not fit its %zu bytes of ggml type %s",
                        path, tensor.name.c_str(), tensor.bytes, typeName);
    if (tensor.name.empty() || !names.insert(tensor.name).second)
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "cannot write '%s': empty or duplicate tensor name "
                        "'%s'",
                        path, tensor.name.c_str());
    head.putString(tensor.name);
    head.put<uint32_t>(static_cast<uint32_t>(tensor.shape.size()));
    for (size_t d = tensor.shape.size(); d-- > 0;)
      head.put<uint64_t>(static_cast<uint64_t>(tensor.shape[d]));
    head.put<uint32_t>(tensor.type);
    head.put<uint64_t>(offset);
    offset += tensor.bytes;
    padding.push_back((kGgufDefaultAlignment - offset % kGgufDefaultAlignment) %
                      kGgufDefaultAlignment);
    offset += padding.back();
  }
  head.bytes.append((kGgufDefaultAlignment -
                     head.bytes.size() % kGgufDefaultAlignment) %
                        kGgufDefaultAlignment,
                    '\0');
  static const char zeros[kGgufDefaultAlignment] = {};
  std::vector<const void *> chunks = {head.bytes.data()};
  std::vector<size_t> sizes = {head.bytes.size()};
  for (size_t i = 0; i < tensors.size(); ++i) {
    chunks.push_back(tensors[i].data);
    sizes.push_back(tensors[i].bytes);
    chunks.push_back(zeros);
    sizes.push_back(padding[i]);
  }
  return writeOutputFile(path, chunks.data(), sizes.data(), chunks.size());
}

void dequantizeGgmlRow(uint32_t type, const uint8_t *source, float *dest,
                       uint64_t count) {
  dequantizeRows(dtypeOfGgmlBlocks(type), source, dest,
                 static_cast<size_t>(count), static_cast<size_t>(count));
}

} // namespace seqc
