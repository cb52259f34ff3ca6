//===- RuntimeNpyFuzzer.cpp - libFuzzer over .npy files -------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Reads arbitrary bytes as a .npy file: the magic, version, header length,
// the header dict scanner and the data size checks. Any crash or sanitizer
// report is a bug, and so is an array that reads but does not survive a
// write and a reread unchanged, or an error without a message.
//
//===----------------------------------------------------------------------===//

#include "RuntimeFuzz.h"

#include <cstring>

using namespace seqc::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static ScratchFile input(".npy"), written(".npy");
  seqc_tensor tensor;
  seqc_status *status = seqc_npy_read(input.write(data, size), &tensor);
  if (status) {
    checkStatus(status);
    return 0;
  }
  int64_t numel = seqc_tensor_numel(&tensor);
  if (numel < 0) {
    std::fprintf(stderr, "seqc_npy_read returned an invalid shape\n");
    std::abort();
  }
  size_t bytes = static_cast<size_t>(numel) * seqc_dtype_size(tensor.dtype);
  mustSucceed(seqc_npy_write(written.name(), &tensor), "npy_write");
  seqc_tensor again;
  mustSucceed(seqc_npy_read(written.name(), &again), "rereading");
  if (again.dtype != tensor.dtype || again.rank != tensor.rank ||
      std::memcmp(again.shape, tensor.shape, sizeof(tensor.shape)) != 0 ||
      (bytes && std::memcmp(again.data, tensor.data, bytes) != 0)) {
    std::fprintf(stderr, "a written .npy file rereads differently\n");
    std::abort();
  }
  std::free(again.data);
  std::free(tensor.data);
  return 0;
}
