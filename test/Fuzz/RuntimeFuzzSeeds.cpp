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

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <seed directory>\n", argv[0]);
    return 1;
  }
  std::string dir = argv[1];
  for (const char *sub : {"", "/safetensors", "/npy", "/manifest"})
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

  for (size_t i = 0; i < std::size(kManifests); ++i)
    writeAll(dir + "/manifest/" + std::to_string(i) + ".json", kManifests[i]);
  return 0;
}
