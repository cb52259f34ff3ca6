/*===- FakeAllocModel.c - A model that allocates as seqc's code does -*- C
-*-===*\
|*                                                                            *|
|* Part of the seqc project.                                                  *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* The alloc model (FakeModels.h) allocates everything a model compiled by    *|
|* seqc allocates, through the runtime, in the same order: its state and a    *|
|* prepared value in seqc_prepare, then per call the arena (freed and         *|
|* replaced as seq-emit-invoke does), the output, a top-level intermediate,   *|
|* and per-block scratch inside an OpenMP parallel loop. The tests make any   *|
|* of them fail.                                                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "FakeModels.h"

#include <stdlib.h>
#include <string.h>

void *_mlir_memref_to_llvm_alloc(size_t size);
void _mlir_memref_to_llvm_free(void *ptr);
void *seqc_alloc_arena(size_t alignment, size_t size);

int64_t fake_alloc_prepared_bytes = 64;
int64_t fake_alloc_intermediate_factor = 1;
int64_t fake_alloc_scratch_bytes = 256;

typedef struct {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
} MemRef1;

/* What seqc_prepare returns: the prepared value (w[0] + ... + w[3], then
   padding up to fake_alloc_prepared_bytes) and the arena. */
typedef struct {
  float *prepared;
  char *arena;
  int64_t capacity;
} AllocState;

/* The knobs, also from the environment (for the model executable). */
static void readKnobs(void) {
  const char *text;
  if ((text = getenv("FAKE_ALLOC_PREPARED_BYTES")))
    fake_alloc_prepared_bytes = atoll(text);
  if ((text = getenv("FAKE_ALLOC_INTERMEDIATE_FACTOR")))
    fake_alloc_intermediate_factor = atoll(text);
  if ((text = getenv("FAKE_ALLOC_SCRATCH_BYTES")))
    fake_alloc_scratch_bytes = atoll(text);
}

void *fake_alloc_prepare(void **params) {
  const MemRef1 *w = (const MemRef1 *)params[0];
  AllocState *state = (AllocState *)_mlir_memref_to_llvm_alloc(sizeof(*state));
  state->arena = NULL;
  state->capacity = 0;
  state->prepared =
      (float *)_mlir_memref_to_llvm_alloc((size_t)fake_alloc_prepared_bytes);
  float sum = 0;
  for (int64_t i = 0; i < 4; ++i)
    sum += ((const float *)w->aligned)[w->offset + i * w->strides[0]];
  state->prepared[0] = sum;
  return state;
}

void fake_alloc_release(void *opaque) {
  AllocState *state = (AllocState *)opaque;
  if (!state)
    return;
  _mlir_memref_to_llvm_free(state->prepared);
  _mlir_memref_to_llvm_free(state->arena);
  _mlir_memref_to_llvm_free(state);
}

void fake_alloc_invoke(void **args) {
  readKnobs();
  MemRef1 *y = (MemRef1 *)args[0];
  const MemRef1 *x = (const MemRef1 *)args[1];
  AllocState *state = (AllocState *)args[3];
  int temporary = state == NULL;
  if (temporary)
    state = (AllocState *)fake_alloc_prepare(&args[2]);
  int64_t n = x->sizes[0];
  const float *in = (const float *)x->aligned + x->offset;

  /* The arena: two rows of n floats. */
  int64_t bytes = (2 * n * 4 + 63) / 64 * 64;
  if (bytes > state->capacity) {
    char *old = state->arena;
    state->arena = NULL;
    state->capacity = 0;
    _mlir_memref_to_llvm_free(old);
    state->arena = (char *)seqc_alloc_arena(64, (size_t)bytes);
    state->capacity = bytes;
  }
  float *doubled = (float *)state->arena;

  float *out = (float *)_mlir_memref_to_llvm_alloc((size_t)(n * 4));
  float *intermediate = (float *)_mlir_memref_to_llvm_alloc(
      (size_t)(n * 4 * fake_alloc_intermediate_factor));
  for (int64_t i = 0; i < n; ++i) {
    intermediate[i] = in[i * x->strides[0]];
    doubled[i] = intermediate[i] * state->prepared[0];
  }
  _mlir_memref_to_llvm_free(intermediate);

  /* Blocks of 64 rows, each through its own scratch. */
  int64_t blocks = (n + 63) / 64;
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < blocks; ++b) {
    float *scratch =
        (float *)_mlir_memref_to_llvm_alloc((size_t)fake_alloc_scratch_bytes);
    int64_t end = b * 64 + 64 < n ? b * 64 + 64 : n;
    for (int64_t i = b * 64; i < end; ++i) {
      scratch[0] = doubled[i];
      out[i] = scratch[0];
    }
    _mlir_memref_to_llvm_free(scratch);
  }

  y->allocated = y->aligned = out;
  y->offset = 0;
  y->sizes[0] = n;
  y->strides[0] = 1;
  if (temporary)
    fake_alloc_release(state);
}
