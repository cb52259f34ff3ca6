//===- RuntimeFuzz.h - Shared pieces of the runtime fuzzers ------*- C++
//-*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The runtime reads weights and arrays from files (it maps safetensors files
// and reads .npy files with pread), so the fuzzers write each input to one
// scratch file and hand its path to the public C API, exercising exactly the
// code a user's file reaches.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_TEST_FUZZ_RUNTIMEFUZZ_H
#define SEQC_TEST_FUZZ_RUNTIMEFUZZ_H

#include "seqc_runtime.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace seqc::fuzz {

/// The model whose weights the safetensors fuzzer loads: every dtype, a
/// scalar, an empty tensor and a rank-3 one.
constexpr const char *kWeightsManifest =
    R"({"model": "fuzz", "inputs": [], "outputs": [], "params": [)"
    R"({"name": "fc.weight", "dtype": "f32", "shape": [2, 3]},)"
    R"({"name": "fc.bias", "dtype": "f32", "shape": [3]},)"
    R"({"name": "ln.weight", "dtype": "bf16", "shape": [3]},)"
    R"({"name": "half", "dtype": "f16", "shape": [2, 1, 2]},)"
    R"({"name": "wide", "dtype": "f64", "shape": [1]},)"
    R"({"name": "ids", "dtype": "i32", "shape": [2]},)"
    R"({"name": "steps", "dtype": "i64", "shape": []},)"
    R"({"name": "none", "dtype": "f32", "shape": [0, 4]}]})";

/// The model whose weights the GGUF fuzzer loads: parameters with
/// llama.cpp's Llama names (through the built-in table), of every float
/// dtype, fed by Q8_0, Q4_0, Q4_1, F16, BF16, F32 and I32 tensors in the
/// seeds, the Q and K projections with their RoPE rows permuted.
constexpr const char *kGgufManifest =
    R"({"model": "fuzz", "inputs": [], "outputs": [], "params": [)"
    R"({"name": "model.embed_tokens.weight", "dtype": "f32", "shape": [2, 32]},)"
    R"({"name": "model.layers.0.self_attn.q_proj.weight", "dtype": "f32",)"
    R"( "shape": [4, 32]},)"
    R"({"name": "model.layers.0.self_attn.k_proj.weight", "dtype": "bf16",)"
    R"( "shape": [2, 32]},)"
    R"({"name": "model.norm.weight", "dtype": "f16", "shape": [3]},)"
    R"({"name": "model.layers.0.input_layernorm.weight", "dtype": "f32",)"
    R"( "shape": [3]},)"
    R"({"name": "lm_head.weight", "dtype": "f64", "shape": [1, 2]},)"
    R"({"name": "ids", "dtype": "i64", "shape": [2]}]})";

/// An entry point that runs nothing: the result area stays zeroed.
inline void noopInvoke(void **) {}

/// A scratch file, in memory (/dev/shm) where available, removed at exit.
class ScratchFile {
public:
  explicit ScratchFile(const char *suffix) {
    const char *dirs[] = {"/dev/shm", std::getenv("TMPDIR"), "/tmp"};
    for (const char *dir : dirs) {
      if (!dir || access(dir, W_OK) != 0)
        continue;
      std::string pattern = std::string(dir) + "/seqc-fuzz-XXXXXX" + suffix;
      fd = mkstemps(&pattern[0], static_cast<int>(std::string(suffix).size()));
      if (fd >= 0) {
        path = pattern;
        return;
      }
    }
    std::perror("seqc fuzzer: cannot create a scratch file");
    std::abort();
  }
  ~ScratchFile() {
    close(fd);
    unlink(path.c_str());
  }

  /// Replaces the file's contents with `data`.
  const char *write(const uint8_t *data, size_t size) {
    if (ftruncate(fd, 0) != 0 ||
        (size && pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))) {
      std::perror("seqc fuzzer: cannot write the scratch file");
      std::abort();
    }
    return path.c_str();
  }

  const char *name() const { return path.c_str(); }

private:
  int fd = -1;
  std::string path;
};

/// Aborts (a finding) when `status` is not NULL; for calls that must succeed.
inline void mustSucceed(seqc_status *status, const char *what) {
  if (status) {
    std::fprintf(stderr, "seqc fuzzer: %s failed: %s\n", what,
                 seqc_status_message(status));
    std::abort();
  }
}

/// True if `text` is valid UTF-8 without control characters: an error
/// message quoting a file must be safe to print on a terminal.
inline bool isPrintableUtf8(const char *text) {
  const auto *p = reinterpret_cast<const unsigned char *>(text);
  while (*p) {
    unsigned char c = *p;
    if (c < 0x20 || c == 0x7f)
      return false;
    int extra = c < 0x80             ? 0
                : (c & 0xe0) == 0xc0 ? 1
                : (c & 0xf0) == 0xe0 ? 2
                : (c & 0xf8) == 0xf0 ? 3
                                     : -1;
    if (extra < 0 || (extra == 1 && c < 0xc2))
      return false;
    ++p;
    for (int i = 0; i < extra; ++i, ++p)
      if ((*p & 0xc0) != 0x80)
        return false;
  }
  return true;
}

/// Every status must carry a code and a printable, non-empty message; frees
/// it.
inline void checkStatus(seqc_status *status) {
  if (!status)
    return;
  const char *message = seqc_status_message(status);
  if (seqc_status_get_code(status) == SEQC_STATUS_OK || !message || !*message) {
    std::fprintf(stderr, "seqc fuzzer: an error without code or message\n");
    std::abort();
  }
  if (!isPrintableUtf8(message)) {
    std::fprintf(stderr, "seqc fuzzer: an error message with control "
                         "characters or invalid UTF-8:\n");
    for (const char *c = message; *c; ++c)
      std::fprintf(stderr, "\\x%02x", static_cast<unsigned char>(*c));
    std::fprintf(stderr, "\n");
    std::abort();
  }
  seqc_status_free(status);
}

/// The bytes of every parameter of `model`, in manifest order; aborts when
/// a bound parameter differs from the manifest.
inline std::vector<std::vector<uint8_t>> readParams(const seqc_model *model) {
  std::vector<std::vector<uint8_t>> params;
  for (size_t i = 0; i < seqc_model_count(model, SEQC_VALUE_PARAM); ++i) {
    seqc_value_info info;
    mustSucceed(seqc_model_info(model, SEQC_VALUE_PARAM, i, &info), "info");
    seqc_tensor tensor;
    mustSucceed(seqc_model_get_param(model, info.name, &tensor), "get_param");
    if (tensor.dtype != info.dtype || tensor.rank != info.rank ||
        std::memcmp(tensor.shape, info.shape,
                    sizeof(int64_t) * static_cast<size_t>(info.rank)) != 0) {
      std::fprintf(stderr, "parameter '%s' differs from the manifest\n",
                   info.name);
      std::abort();
    }
    size_t bytes = static_cast<size_t>(seqc_tensor_numel(&tensor)) *
                   seqc_dtype_size(tensor.dtype);
    const uint8_t *data = static_cast<const uint8_t *>(tensor.data);
    // Reading every byte proves the view lies inside the mapping.
    params.emplace_back(data, data + bytes);
  }
  return params;
}

/// Saves the parameters of `model` (a model of `manifest`) to `saved`, whose
/// name's suffix picks the format, loads them into a fresh model of the same
/// manifest and aborts unless they come back byte for byte: anything the
/// loader accepted, the writer must write and the loader read back.
inline void checkSaveAndReload(const seqc_model *model, const char *manifest,
                               const ScratchFile &saved) {
  std::vector<std::vector<uint8_t>> params = readParams(model);
  mustSucceed(seqc_model_save_weights(model, saved.name()), "save_weights");
  seqc_model *reloaded = nullptr;
  mustSucceed(seqc_model_load_from(manifest, noopInvoke, &reloaded),
              "load_from");
  mustSucceed(seqc_model_load_weights(reloaded, saved.name()),
              "reloading saved weights");
  if (readParams(reloaded) != params) {
    std::fprintf(stderr, "weights saved as '%s' reload differently\n",
                 saved.name());
    std::abort();
  }
  seqc_model_free(reloaded);
}

} // namespace seqc::fuzz

#endif // SEQC_TEST_FUZZ_RUNTIMEFUZZ_H
