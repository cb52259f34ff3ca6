//===- RuntimeSafetensorsFuzzer.cpp - libFuzzer over weight files ---------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Loads arbitrary bytes as the safetensors weights of a small model
// (RuntimeFuzz.h): the header length, the header JSON, its entries, dtypes,
// shapes and data offsets, and the checks against the manifest. Any crash or
// sanitizer report is a bug, and so is a file that loads but whose
// parameters do not survive a save and a reload unchanged, or an error
// without a message. Rejecting the input is not.
//
//===----------------------------------------------------------------------===//

#include "RuntimeFuzz.h"

using namespace seqc::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static ScratchFile input(".safetensors"), saved(".safetensors");
  // A fresh model per input: a loaded model maps the scratch file, which the
  // next input truncates.
  seqc_model *model = nullptr;
  mustSucceed(seqc_model_load_from(kWeightsManifest, noopInvoke, &model),
              "load_from");
  seqc_status *status = seqc_model_load_weights(model, input.write(data, size));
  if (status) {
    checkStatus(status);
    seqc_model_free(model);
    return 0;
  }
  checkSaveAndReload(model, kWeightsManifest, saved);
  seqc_model_free(model);
  return 0;
}
