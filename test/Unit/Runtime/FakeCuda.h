/*===- FakeCuda.h - What the fake CUDA driver saw -----------------*- C -*-===*\
|*                                                                            *|
|* Part of the seqc project.                                                  *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* The fake libcuda.so.1 (FakeCuda.c) exports fake_cuda_get_stats(), which    *|
|* tests look up with dlsym in the copy the runtime loaded.                   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef SEQC_TEST_UNIT_RUNTIME_FAKECUDA_H
#define SEQC_TEST_UNIT_RUNTIME_FAKECUDA_H

#ifdef __cplusplus
extern "C" {
#endif

struct fake_cuda_stats {
  /// Every driver call, cuInit included.
  int calls;
  int init_calls;
  int device;
  int modules_loaded, modules_unloaded;
  int launches, cluster_launches;
  char last_kernel[128];
  unsigned last_grid[3], last_block[3], last_smem;
  int synchronizations;
  int live_streams;
  int managed_allocations, live_managed_blocks;
  int prefetches;
  unsigned long long prefetched_bytes;
};

const struct fake_cuda_stats *fake_cuda_get_stats(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif // SEQC_TEST_UNIT_RUNTIME_FAKECUDA_H
