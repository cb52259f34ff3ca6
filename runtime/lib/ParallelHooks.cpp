//===- ParallelHooks.cpp - The weak references to the MPI library ---------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The core runtime must link without MPI (Parallel.h): it references the
// functions of libseqc_runtime_mpi.a weakly, NULL when the library is not
// linked in. seqc links that library into tensor-parallel models with
// -Wl,-u,seqc_parallel_init, since a weak reference alone does not pull a
// member out of an archive.
//
//===----------------------------------------------------------------------===//

#include "Parallel.h"

extern "C" {
__attribute__((weak)) int seqc_parallel_init(int *rank, int *size);
__attribute__((weak)) void seqc_parallel_abort(int code);
__attribute__((weak)) int seqc_parallel_broadcast_i32(int32_t *data,
                                                      int count);
__attribute__((weak)) int
seqc_parallel_gather_rows(const void *send, void *recv,
                          const int64_t *rows_per_rank, int64_t row_bytes);
}

seqc::parallel::Functions &seqc::parallel::functions() {
  static Functions current = {&seqc_parallel_init, &seqc_parallel_abort,
                              &seqc_parallel_broadcast_i32,
                              &seqc_parallel_gather_rows};
  return current;
}
