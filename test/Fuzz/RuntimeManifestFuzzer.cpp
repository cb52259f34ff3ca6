//===- RuntimeManifestFuzzer.cpp - libFuzzer over model manifests ---------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Loads arbitrary bytes as a model manifest (the JSON parser, then the
// manifest's structure), then uses the model the way the CLI does:
// introspection, every symbolic dimension set to 2, random weights and
// inputs when they are small, a run of an entry point that computes
// nothing, and seqc_generate over it. Any crash or sanitizer report is a
// bug, and so are an error without a message, a failure to generate
// weights for a manifest the runtime accepted, and random inputs that the
// range checks then reject (they are drawn from those ranges).
//
//===----------------------------------------------------------------------===//

#include "RuntimeFuzz.h"

#include <string>

using namespace seqc::fuzz;

namespace {

/// Bytes of a value of `info` with every symbolic dimension of size 2; false
/// when over `limit`.
bool smallEnough(const seqc_value_info &info, size_t limit) {
  // Per element, rounded up for block formats (parameters of q8_0, ...).
  int64_t blockElements = 1;
  size_t blockBytes = 0;
  seqc_dtype_block(info.dtype, &blockElements, &blockBytes);
  auto sizeOf = [&](int d) {
    return info.shape[d] < 0 ? 2 : static_cast<size_t>(info.shape[d]);
  };
  if (blockElements == 0) {
    // One block per row (int8): rows times the last dimension plus 4.
    if (info.rank == 0)
      return false;
    size_t bytes = sizeOf(info.rank - 1) + blockBytes;
    for (int d = 0; d + 1 < info.rank; ++d)
      if (__builtin_mul_overflow(bytes, sizeOf(d), &bytes) || bytes > limit)
        return false;
    return bytes <= limit;
  }
  size_t bytes = (blockBytes + static_cast<size_t>(blockElements) - 1) /
                 static_cast<size_t>(blockElements);
  for (int d = 0; d < info.rank; ++d) {
    if (__builtin_mul_overflow(bytes, sizeOf(d), &bytes) || bytes > limit)
      return false;
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The manifest is a NUL-terminated string: an embedded NUL ends it.
  std::string text(reinterpret_cast<const char *>(data), size);
  seqc_model *model = nullptr;
  seqc_status *status = seqc_model_load_from(text.c_str(), noopInvoke, &model);
  if (status) {
    checkStatus(status);
    return 0;
  }
  (void)seqc_model_name(model);
  // Only models whose every value (inputs, outputs, parameters and the
  // state the instance allocates) is small are run.
  bool small = true;
  for (int kind = SEQC_VALUE_INPUT; kind <= SEQC_VALUE_STATE; ++kind) {
    auto valueKind = static_cast<seqc_value_kind>(kind);
    for (size_t i = 0; i < seqc_model_count(model, valueKind); ++i) {
      seqc_value_info info;
      mustSucceed(seqc_model_info(model, valueKind, i, &info), "info");
      small &= smallEnough(info, 1 << 16);
      if (valueKind != SEQC_VALUE_INPUT)
        continue;
      for (int d = 0; d < info.rank; ++d)
        if (info.dim_names[d])
          mustSucceed(seqc_model_set_dim(model, info.dim_names[d], 2),
                      "set_dim of an input's dimension");
    }
  }
  checkStatus(seqc_model_info(model, SEQC_VALUE_PARAM, 1u << 30, nullptr));
  if (small) {
    mustSucceed(seqc_model_random_weights(model, 1), "random_weights");
    status = seqc_model_random_inputs(model, 2);
    if (!status) {
      status = seqc_model_run(model);
      if (seqc_status_get_code(status) == SEQC_STATUS_INVALID_ARGUMENT) {
        std::fprintf(stderr, "random inputs were rejected: %s\n",
                     seqc_status_message(status));
        std::abort();
      }
    }
    checkStatus(status);
    // Generation reads the manifest again (tokens, pos, logits, state):
    // it may refuse the model, with a message, but must not crash.
    const int32_t first[] = {0, 1}, second[] = {1};
    const int32_t *prompts[] = {first, second};
    const int64_t lengths[] = {2, 1};
    seqc_generate_options options;
    seqc_generate_options_init(&options);
    options.max_new_tokens = 2;
    int32_t tokens[4];
    int64_t counts[2];
    checkStatus(seqc_generate(model, 2, prompts, lengths, &options, tokens,
                              counts, nullptr));
  }
  seqc_model_free(model);
  return 0;
}
