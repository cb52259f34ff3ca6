//===- RuntimeGgufFuzzer.cpp - libFuzzer over GGUF weight files -----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Loads arbitrary bytes as the GGUF weights of a small model (RuntimeFuzz.h):
// the header, every metadata value type with nested arrays, the tensor
// infos, the alignment and the data section, the name mapping, the RoPE row
// order, the dequantization of Q8_0, Q4_0 and Q4_1 and the checks against
// the manifest. Tensors that are not parameters are skipped, so that more
// inputs get as far as binding. Any crash or sanitizer report is a bug, and
// so is a file that loads but whose parameters do not survive a save (as
// safetensors) and a reload unchanged, or an error without a message.
// Rejecting the input is not.
//
//===----------------------------------------------------------------------===//

#include "RuntimeFuzz.h"

#include <vector>

using namespace seqc::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static ScratchFile input(".gguf"), saved(".safetensors");
  seqc_model *model = nullptr;
  mustSucceed(seqc_model_load_from(kGgufManifest, noopInvoke, &model),
              "load_from");
  seqc_weights_options options = {};
  options.skip_unused = 1;
  seqc_status *status =
      seqc_model_load_weights_with(model, input.write(data, size), &options);
  if (status) {
    checkStatus(status);
    seqc_model_free(model);
    return 0;
  }
  std::vector<std::vector<uint8_t>> params = readParams(model);
  mustSucceed(seqc_model_save_weights(model, saved.name()), "save_weights");
  seqc_model *reloaded = nullptr;
  mustSucceed(seqc_model_load_from(kGgufManifest, noopInvoke, &reloaded),
              "load_from");
  mustSucceed(seqc_model_load_weights(reloaded, saved.name()),
              "reloading saved weights");
  if (readParams(reloaded) != params) {
    std::fprintf(stderr, "saved weights reload differently\n");
    std::abort();
  }
  seqc_model_free(reloaded);
  seqc_model_free(model);
  return 0;
}
