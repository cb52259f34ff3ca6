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
// safetensors, and as GGUF through seqc's writer) and a reload unchanged, or
// an error without a message.
// Rejecting the input is not.
//
//===----------------------------------------------------------------------===//

#include "RuntimeFuzz.h"

using namespace seqc::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static ScratchFile input(".gguf"), saved(".safetensors"),
      savedGguf(".gguf");
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
  checkSaveAndReload(model, kGgufManifest, saved);
  checkSaveAndReload(model, kGgufManifest, savedGguf);
  seqc_model_free(model);
  return 0;
}
