//===- RuntimeFuzzSeeds.cpp - Valid files seeding the runtime fuzzers -----===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Writes valid inputs for the runtime fuzzers with the runtime's own writers,
// so that the seeds follow the formats as the runtime implements them:
//   <dir>/safetensors/  weights of the fuzz model (RuntimeFuzz.h)
//   <dir>/npy/          one array per dtype, format 1.0 and 2.0
//   <dir>/manifest/     manifests like the ones seqc emits
//   <dir>/gguf/         GGUF v3 files for the GGUF fuzz model, written here
//                       (the runtime reads GGUF but does not write it)
// Run at build time (test/Fuzz/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "RuntimeFuzz.h"

#include <cerrno>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace seqc::fuzz;

namespace {

const char *const kManifests[] = {
    kWeightsManifest,
    // As seqc emits for examples/gpt.seq (shortened).
    R"({"model": "gpt", "inputs": [{"name": "tokens", "dtype": "i32",)"
    R"( "shape": ["b", "n"], "range": [0, 255]}], "outputs": [{"name":)"
    R"( "logits", "dtype": "f32", "shape": ["b", "n", 256]}], "params":)"
    R"( [{"name": "tok_emb", "dtype": "f32", "shape": [256, 8]}],)"
    R"( "hyper": {"dim": 8, "eps": 1e-5, "causal": true, "act": "gelu"}})",
    // examples/longformer.seq: a range bound naming a dimension.
    R"({"model": "longformer", "inputs": [{"name": "tokens", "dtype": "i32",)"
    R"( "shape": ["b", "n"], "range": [0, 255]}, {"name": "lengths",)"
    R"( "dtype": "i32", "shape": ["b"], "range": [1, "n"]}], "outputs":)"
    R"( [{"name": "logits", "dtype": "f32", "shape": ["b", "n", 4]}]})",
    // Float and i64 inputs, outputs with a dimension only outputs use, and
    // a range naming a dimension no shape uses.
    R"({"model": "misc", "inputs": [{"name": "x", "dtype": "f16", "shape":)"
    R"( ["n", 4]}, {"name": "pos", "dtype": "i64", "shape": ["n"], "range":)"
    R"( [-9223372036854775808, "vocab"]}], "outputs": [{"name": "y", "dtype":)"
    R"( "bf16", "shape": ["n", "m"]}, {"name": "s", "dtype": "f64", "shape":)"
    R"( []}], "params": [{"name": "w", "dtype": "f64", "shape": [4, 1]}]})",
    // A decoder with a KV cache (docs/abi.md): pos and state, which
    // seqc_generate reads.
    R"({"model": "gpt", "inputs": [{"name": "tokens", "dtype": "i32",)"
    R"( "shape": ["b", "n"], "range": [0, 15]}, {"name": "pos", "dtype":)"
    R"( "i32", "shape": ["b"], "range": [0, 31]}], "outputs": [{"name":)"
    R"( "logits", "dtype": "f32", "shape": ["b", "n", 16]}], "params": [],)"
    R"( "state": [{"name": "layers.0.attn.k_cache", "dtype": "f32",)"
    R"( "shape": ["b", 2, 32, 4]}, {"name": "layers.0.attn.v_cache",)"
    R"( "dtype": "f32", "shape": ["b", 2, 32, 4]}]})",
};

void makeDir(const std::string &path) {
  if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    std::perror(path.c_str());
    std::exit(1);
  }
}

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeAll(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "cannot write '%s'\n", path.c_str());
    std::exit(1);
  }
}

/// Rewrites a format 1.0 .npy file as format 2.0 (a 4-byte header length).
std::string npyVersion2(const std::string &v1) {
  std::string v2 = v1.substr(0, 6) + '\x02' + '\x00';
  size_t length = static_cast<unsigned char>(v1[8]) |
                  static_cast<size_t>(static_cast<unsigned char>(v1[9])) << 8;
  for (int i = 0; i < 4; ++i)
    v2 += static_cast<char>((length >> (8 * i)) & 0xff);
  return v2 + v1.substr(10);
}

/// Appends the little-endian bytes of `value`.
template <typename T> void put(std::string &out, T value) {
  out.append(reinterpret_cast<const char *>(&value), sizeof(value));
}

void putString(std::string &out, const std::string &text) {
  put<uint64_t>(out, text.size());
  out += text;
}

/// A GGUF v3 file for kGgufManifest: metadata of every value type (arrays
/// of strings and of arrays included), the Llama names, and each tensor in
/// `types` order: Q8_0, Q4_0, Q4_1 (or the F32, F16, BF16 given instead)
/// and the small ones in F16, BF16, F32 and I32, plus a tensor the model
/// does not declare.
std::string ggufSeed(uint32_t embedType, uint32_t qType, uint32_t kType,
                     uint32_t alignment) {
  enum : uint32_t { U8, I8, U16, I16, U32, I32, F32, Bool, Str, Arr, U64,
                    I64, F64 };
  std::string kv;
  uint64_t numKv = 0;
  auto key = [&](const char *name, uint32_t type) {
    putString(kv, name);
    put<uint32_t>(kv, type);
    ++numKv;
  };
  key("general.architecture", Str);
  putString(kv, "llama");
  if (alignment != 32) {
    key("general.alignment", U32);
    put<uint32_t>(kv, alignment);
  }
  key("llama.attention.head_count", U32);
  put<uint32_t>(kv, 2);
  key("llama.attention.head_count_kv", U32);
  put<uint32_t>(kv, 1);
  key("seqc.u8", U8);
  put<uint8_t>(kv, 7);
  key("seqc.i8", I8);
  put<int8_t>(kv, -7);
  key("seqc.u16", U16);
  put<uint16_t>(kv, 700);
  key("seqc.i16", I16);
  put<int16_t>(kv, -700);
  key("seqc.i32", I32);
  put<int32_t>(kv, -70000);
  key("seqc.f32", F32);
  put<float>(kv, 0.5f);
  key("seqc.bool", Bool);
  put<uint8_t>(kv, 1);
  key("seqc.u64", U64);
  put<uint64_t>(kv, 1ull << 40);
  key("seqc.i64", I64);
  put<int64_t>(kv, -(1ll << 40));
  key("seqc.f64", F64);
  put<double>(kv, 0.25);
  key("tokenizer.ggml.tokens", Arr);
  put<uint32_t>(kv, Str);
  put<uint64_t>(kv, 3);
  for (const char *token : {"<s>", "</s>", "a"})
    putString(kv, token);
  key("tokenizer.ggml.scores", Arr);
  put<uint32_t>(kv, F32);
  put<uint64_t>(kv, 3);
  for (float score : {0.f, -1.f, -2.f})
    put<float>(kv, score);
  key("seqc.nested", Arr);
  put<uint32_t>(kv, Arr);
  put<uint64_t>(kv, 2);
  put<uint32_t>(kv, Bool);
  put<uint64_t>(kv, 2);
  put<uint8_t>(kv, 0);
  put<uint8_t>(kv, 1);
  put<uint32_t>(kv, I16);
  put<uint64_t>(kv, 1);
  put<int16_t>(kv, 3);

  struct Tensor {
    const char *name;
    std::vector<uint64_t> ne;
    uint32_t type;
  };
  auto bytesOf = [](const Tensor &t) -> uint64_t {
    uint64_t numel = 1;
    for (uint64_t n : t.ne)
      numel *= n;
    switch (t.type) {
    case 8:
      return numel / 32 * 34;
    case 2:
      return numel / 32 * 18;
    case 3:
      return numel / 32 * 20;
    case 0:
    case 26:
      return numel * 4;
    default:
      return numel * 2;
    }
  };
  const Tensor tensors[] = {
      {"token_embd.weight", {32, 2}, embedType},
      {"blk.0.attn_q.weight", {32, 4}, qType},
      {"blk.0.attn_k.weight", {32, 2}, kType},
      {"output_norm.weight", {3}, 1},
      {"blk.0.attn_norm.weight", {3}, 30},
      {"output.weight", {2, 1}, 0},
      {"ids", {2}, 26},
      {"rope_freqs.weight", {4}, 0},
  };
  std::string out = "GGUF";
  put<uint32_t>(out, 3);
  put<uint64_t>(out, std::size(tensors));
  put<uint64_t>(out, numKv);
  out += kv;
  std::string data;
  for (const Tensor &t : tensors) {
    putString(out, t.name);
    put<uint32_t>(out, static_cast<uint32_t>(t.ne.size()));
    for (uint64_t n : t.ne)
      put<uint64_t>(out, n);
    put<uint32_t>(out, t.type);
    put<uint64_t>(out, data.size());
    uint64_t bytes = bytesOf(t);
    for (uint64_t i = 0; i < bytes; ++i)
      // Small values everywhere: f16 and bf16 scales near 1, nibbles mixed.
      data += static_cast<char>(i % 2 ? 0x3c : (i * 37 + 11) & 0xff);
    while (data.size() % alignment)
      data += '\0';
  }
  while (out.size() % alignment)
    out += '\0';
  return out + data;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <seed directory>\n", argv[0]);
    return 1;
  }
  std::string dir = argv[1];
  for (const char *sub : {"", "/safetensors", "/npy", "/manifest", "/gguf"})
    makeDir(dir + sub);

  for (uint64_t seed : {1, 2}) {
    seqc_model *model = nullptr;
    mustSucceed(seqc_model_load_from(kWeightsManifest, noopInvoke, &model),
                "load_from");
    mustSucceed(seqc_model_random_weights(model, seed), "random_weights");
    std::string path =
        dir + "/safetensors/seed" + std::to_string(seed) + ".safetensors";
    mustSucceed(seqc_model_save_weights(model, path.c_str()), "save_weights");
    seqc_model_free(model);
  }

  struct Array {
    const char *name;
    seqc_dtype dtype;
    std::vector<int64_t> shape;
  };
  const Array arrays[] = {
      {"f32", SEQC_DTYPE_F32, {2, 3}}, {"f64", SEQC_DTYPE_F64, {}},
      {"f16", SEQC_DTYPE_F16, {4}},    {"i32", SEQC_DTYPE_I32, {1, 2, 1}},
      {"i64", SEQC_DTYPE_I64, {3}},    {"empty", SEQC_DTYPE_F32, {0, 5}},
  };
  for (const Array &array : arrays) {
    seqc_tensor tensor = {};
    tensor.dtype = array.dtype;
    tensor.rank = static_cast<int32_t>(array.shape.size());
    for (size_t i = 0; i < array.shape.size(); ++i)
      tensor.shape[i] = array.shape[i];
    std::vector<uint8_t> bytes(64);
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = static_cast<uint8_t>(i * 37 + 1);
    tensor.data = bytes.data();
    std::string path = dir + "/npy/" + array.name + ".npy";
    mustSucceed(seqc_npy_write(path.c_str(), &tensor), "npy_write");
    writeAll(dir + "/npy/" + array.name + "-v2.npy",
             npyVersion2(readAll(path)));
  }

  // The block formats, the same tensors in float types, and another
  // alignment.
  writeAll(dir + "/gguf/quantized.gguf", ggufSeed(8, 2, 3, 32));
  writeAll(dir + "/gguf/float.gguf", ggufSeed(0, 1, 30, 32));
  writeAll(dir + "/gguf/aligned64.gguf", ggufSeed(8, 3, 2, 64));

  for (size_t i = 0; i < std::size(kManifests); ++i)
    writeAll(dir + "/manifest/" + std::to_string(i) + ".json", kManifests[i]);
  return 0;
}
