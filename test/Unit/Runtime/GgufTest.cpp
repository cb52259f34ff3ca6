//===- GgufTest.cpp - GGUF reader and binding -----------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The block formats' dequantization on hand-made blocks, the RoPE row order
// undone on a small projection, dequantization into f16 and bf16
// parameters, the metadata the reader keeps, and the C API's errors for a
// bad name table. test/Runtime/gguf-llama.test covers whole models and the
// malformed files.
//
//===----------------------------------------------------------------------===//

#include "Gguf.h"
#include "TestUtil.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace seqc;
using namespace seqc::test;

namespace {

struct ModelDeleter {
  void operator()(seqc_model *model) const { seqc_model_free(model); }
};
using ModelPtr = std::unique_ptr<seqc_model, ModelDeleter>;

void noop(void **) {}

template <typename T> void put(std::string &out, T value) {
  out.append(reinterpret_cast<const char *>(&value), sizeof(value));
}
void putString(std::string &out, const std::string &text) {
  put<uint64_t>(out, text.size());
  out += text;
}

struct TensorSpec {
  std::string name;
  std::vector<uint64_t> ne;
  uint32_t type;
  std::string data;
};

/// A GGUF v3 file: metadata given as raw key/value bytes, tensors packed
/// at 32-byte offsets.
std::string ggufFile(const std::vector<std::string> &kvs,
                     const std::vector<TensorSpec> &tensors) {
  std::string out = "GGUF";
  put<uint32_t>(out, 3);
  put<uint64_t>(out, tensors.size());
  put<uint64_t>(out, kvs.size());
  for (const std::string &kv : kvs)
    out += kv;
  std::string data;
  for (const TensorSpec &t : tensors) {
    putString(out, t.name);
    put<uint32_t>(out, static_cast<uint32_t>(t.ne.size()));
    for (uint64_t n : t.ne)
      put<uint64_t>(out, n);
    put<uint32_t>(out, t.type);
    put<uint64_t>(out, data.size());
    data += t.data;
    data.resize((data.size() + 31) / 32 * 32, '\0');
  }
  out.resize((out.size() + 31) / 32 * 32, '\0');
  return out + data;
}

std::string stringKv(const std::string &key, const std::string &value) {
  std::string out;
  putString(out, key);
  put<uint32_t>(out, 8);
  putString(out, value);
  return out;
}
std::string u32Kv(const std::string &key, uint32_t value) {
  std::string out;
  putString(out, key);
  put<uint32_t>(out, 4);
  put<uint32_t>(out, value);
  return out;
}

std::string floats(const std::vector<float> &values) { return rawBytes(values); }

TEST(Gguf, DequantizesTheBlockFormats) {
  // Q8_0: d = 0.5, qs[j] = j - 16.
  std::string q8;
  put<uint16_t>(q8, floatToHalf(0.5f));
  for (int j = 0; j < 32; ++j)
    put<int8_t>(q8, static_cast<int8_t>(j - 16));
  // Q4_0: d = 2, qs[j] = j | (15 - j) << 4.
  std::string q40;
  put<uint16_t>(q40, floatToHalf(2.0f));
  for (int j = 0; j < 16; ++j)
    put<uint8_t>(q40, static_cast<uint8_t>(j | (15 - j) << 4));
  // Q4_1: d = 0.25, m = -1, the same nibbles.
  std::string q41;
  put<uint16_t>(q41, floatToHalf(0.25f));
  put<uint16_t>(q41, floatToHalf(-1.0f));
  for (int j = 0; j < 16; ++j)
    put<uint8_t>(q41, static_cast<uint8_t>(j | (15 - j) << 4));
  float y[32];
  dequantizeGgmlRow(kGgmlQ8_0, reinterpret_cast<const uint8_t *>(q8.data()),
                    y, 32);
  for (int j = 0; j < 32; ++j)
    EXPECT_EQ(y[j], 0.5f * (j - 16)) << j;
  dequantizeGgmlRow(kGgmlQ4_0, reinterpret_cast<const uint8_t *>(q40.data()),
                    y, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 2.0f * (j - 8)) << j;
    EXPECT_EQ(y[j + 16], 2.0f * (15 - j - 8)) << j;
  }
  dequantizeGgmlRow(kGgmlQ4_1, reinterpret_cast<const uint8_t *>(q41.data()),
                    y, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 0.25f * j - 1) << j;
    EXPECT_EQ(y[j + 16], 0.25f * (15 - j) - 1) << j;
  }
}

TEST(Gguf, KeepsMetadataAndSkipsLongArrays) {
  TempDir dir;
  std::string tokens;
  putString(tokens, "tokenizer.ggml.tokens");
  put<uint32_t>(tokens, 9);
  put<uint32_t>(tokens, 8);
  put<uint64_t>(tokens, 1000);
  for (int i = 0; i < 1000; ++i)
    putString(tokens, "t" + std::to_string(i));
  std::string path = dir.file("m.gguf");
  writeFile(path, ggufFile({stringKv("general.architecture", "llama"),
                            u32Kv("llama.block_count", 2), tokens},
                           {{"x", {3}, 0, floats({1, 2, 3})}}));
  GgufFile file;
  ASSERT_TRUE(isOk(readGguf(path.c_str(), &file)));
  EXPECT_EQ(file.version, 3u);
  EXPECT_EQ(file.alignment, 32u);
  ASSERT_NE(file.find("general.architecture"), nullptr);
  EXPECT_EQ(file.find("general.architecture")->str, "llama");
  uint64_t blocks = 0;
  ASSERT_TRUE(file.find("llama.block_count")->asUInt64(&blocks));
  EXPECT_EQ(blocks, 2u);
  const GgufValue *array = file.find("tokenizer.ggml.tokens");
  ASSERT_NE(array, nullptr);
  EXPECT_EQ(array->arrayCount, 1000u);
  ASSERT_EQ(file.tensors.size(), 1u);
  EXPECT_EQ(file.tensors[0].rowMajorShape(), std::vector<int64_t>{3});
  EXPECT_EQ(file.dataStart % 32, 0u);
}

TEST(Gguf, UndoesTheRopeRowOrderAndDequantizesIntoHalfParameters) {
  TempDir dir;
  // q_proj [4, 32], one head of 4 rows: llama.cpp interleaves the two
  // halves, so the file's rows [r0, r2, r1, r3] are Hugging Face's
  // [r0, r1, r2, r3].
  std::vector<float> hf(4 * 32);
  for (size_t i = 0; i < hf.size(); ++i)
    hf[i] = static_cast<float>(i % 32) + 100.0f * static_cast<float>(i / 32);
  std::vector<float> file(4 * 32);
  const int order[4] = {0, 2, 1, 3};
  for (int r = 0; r < 4; ++r)
    std::memcpy(&file[r * 32], &hf[order[r] * 32], 32 * sizeof(float));
  // k_proj: Q8_0 [2, 32] (one head of 2 rows, whose order is the same in
  // both layouts) with d = 1 and 2, into an f16 parameter; norm: Q4_1 into
  // bf16 (its values -1 + 0.25 * nibble are exact in bf16).
  std::string q8;
  for (int row = 0; row < 2; ++row) {
    put<uint16_t>(q8, floatToHalf(1.0f + row));
    for (int j = 0; j < 32; ++j)
      put<int8_t>(q8, static_cast<int8_t>(j * 3 - 40));
  }
  std::string q41;
  put<uint16_t>(q41, floatToHalf(0.25f));
  put<uint16_t>(q41, floatToHalf(-1.0f));
  for (int j = 0; j < 16; ++j)
    put<uint8_t>(q41, static_cast<uint8_t>(j | (15 - j) << 4));
  std::string path = dir.file("w.gguf");
  writeFile(path, ggufFile({stringKv("general.architecture", "llama"),
                            u32Kv("llama.attention.head_count", 1),
                            u32Kv("llama.attention.head_count_kv", 1)},
                           {{"blk.0.attn_q.weight", {32, 4}, 0, floats(file)},
                            {"blk.0.attn_q.bias", {4}, 0,
                             floats({10, 12, 11, 13})},
                            {"blk.0.attn_k.weight", {32, 2}, 8, q8},
                            {"output_norm.weight", {32}, 3, q41}}));
  const char *manifest =
      R"({"model": "m", "inputs": [], "outputs": [], "params": [)"
      R"({"name": "model.layers.0.self_attn.q_proj.weight", "dtype": "f32",)"
      R"( "shape": [4, 32]}, {"name": "model.layers.0.self_attn.q_proj.bias",)"
      R"( "dtype": "f32", "shape": [4]},)"
      R"( {"name": "model.layers.0.self_attn.k_proj.)"
      R"(weight", "dtype": "f16", "shape": [2, 32]}, {"name":)"
      R"( "model.norm.weight", "dtype": "bf16", "shape": [32]}]})";
  seqc_model *raw = nullptr;
  ASSERT_TRUE(isOk(seqc_model_load_from(manifest, noop, &raw)));
  ModelPtr model(raw);
  std::vector<std::string> reported;
  seqc_weights_options options = {};
  options.user_data = &reported;
  options.on_dequantized = [](void *user, const char *tensor, const char *,
                              const char *type, seqc_dtype dtype) {
    static_cast<std::vector<std::string> *>(user)->push_back(
        std::string(tensor) + " " + type + " " + seqc_dtype_name(dtype));
  };
  ASSERT_TRUE(isOk(seqc_model_load_weights_with(model.get(), path.c_str(),
                                                &options)));
  EXPECT_EQ(reported, (std::vector<std::string>{
                          "blk.0.attn_k.weight Q8_0 f16",
                          "output_norm.weight Q4_1 bf16"}));
  seqc_tensor q, k, norm;
  ASSERT_TRUE(isOk(seqc_model_get_param(
      model.get(), "model.layers.0.self_attn.q_proj.weight", &q)));
  EXPECT_EQ(std::memcmp(q.data, hf.data(), hf.size() * sizeof(float)), 0);
  seqc_tensor bias;
  ASSERT_TRUE(isOk(seqc_model_get_param(
      model.get(), "model.layers.0.self_attn.q_proj.bias", &bias)));
  const float *b = static_cast<const float *>(bias.data);
  EXPECT_EQ(std::vector<float>(b, b + 4),
            (std::vector<float>{10, 11, 12, 13}));
  ASSERT_TRUE(isOk(seqc_model_get_param(
      model.get(), "model.layers.0.self_attn.k_proj.weight", &k)));
  for (int j = 0; j < 64; ++j)
    EXPECT_EQ(halfToFloat(static_cast<const uint16_t *>(k.data)[j]),
              static_cast<float>((j % 32) * 3 - 40) * (1 + j / 32));
  ASSERT_TRUE(isOk(seqc_model_get_param(model.get(), "model.norm.weight",
                                        &norm)));
  for (int j = 0; j < 16; ++j)
    EXPECT_EQ(bfloat16ToFloat(static_cast<const uint16_t *>(norm.data)[j]),
              0.25f * j - 1);
}

TEST(Gguf, NameTableErrorsAreInvalidArguments) {
  TempDir dir;
  std::string path = dir.file("w.gguf");
  writeFile(path, ggufFile({}, {{"a", {2}, 0, floats({1, 2})}}));
  const char *manifest =
      R"({"model": "m", "inputs": [], "outputs": [], "params": [)"
      R"({"name": "layer.w", "dtype": "f32", "shape": [2]}]})";
  seqc_model *raw = nullptr;
  ASSERT_TRUE(isOk(seqc_model_load_from(manifest, noop, &raw)));
  ModelPtr model(raw);
  seqc_weights_options options = {};
  options.name_table = "# comment\n\na = \n";
  EXPECT_TRUE(failsWith(
      seqc_model_load_weights_with(model.get(), path.c_str(), &options),
      SEQC_STATUS_INVALID_ARGUMENT, {"GGUF name table, line 3"}));
  options.name_table = "blk.{i}.{i} = x.{i}.{i}";
  EXPECT_TRUE(failsWith(
      seqc_model_load_weights_with(model.get(), path.c_str(), &options),
      SEQC_STATUS_INVALID_ARGUMENT, {"'{i}' must appear once"}));
  // Without a rule the name is its own; with one it maps.
  EXPECT_TRUE(failsWith(seqc_model_load_weights(model.get(), path.c_str()),
                        SEQC_STATUS_INVALID_FILE,
                        {"tensor 'a' is not a parameter"}));
  options.name_table = "a = layer.w  # the only tensor\n";
  EXPECT_TRUE(isOk(
      seqc_model_load_weights_with(model.get(), path.c_str(), &options)));
}

} // namespace
