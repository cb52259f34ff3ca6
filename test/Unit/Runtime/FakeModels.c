/*===- FakeModels.c - Hand-written models for the runtime tests ---*- C -*-===*\
|*                                                                            *|
|* Part of the seqc project.                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "FakeModels.h"

#include <stdlib.h>
#include <string.h>

/* MLIR memref descriptors of the ranks used here (docs/abi.md). */
typedef struct {
  void *allocated;
  void *aligned;
  int64_t offset;
} MemRef0;
typedef struct {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
} MemRef1;
typedef struct {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
} MemRef2;

static float loadF32(const MemRef2 *m, int64_t i, int64_t j) {
  return ((const float *)
              m->aligned)[m->offset + i * m->strides[0] + j * m->strides[1]];
}

/* The result area of the add model: five descriptors back to back. */
typedef struct {
  MemRef2 sum;
  MemRef2 sum_t;
  MemRef2 x_alias;
  MemRef1 scale_alias;
  MemRef0 rows;
} AddResults;

void fake_add_invoke(void **args) {
  AddResults *results = (AddResults *)args[0];
  const MemRef2 *x = (const MemRef2 *)args[1];
  const MemRef2 *y = (const MemRef2 *)args[2];
  const MemRef1 *scale = (const MemRef1 *)args[3];
  int64_t n = x->sizes[0];
  const float *s = (const float *)scale->aligned + scale->offset;

  float *sum = (float *)malloc(sizeof(float) * (size_t)(n * 4 + 1));
  /* One spare leading element so that sum_t needs a non-zero offset. */
  float *block = (float *)malloc(sizeof(float) * (size_t)(n * 4 + 1));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      float v =
          (loadF32(x, i, j) + loadF32(y, i, j)) * s[j * scale->strides[0]];
      sum[i * 4 + j] = v;
      block[1 + i * 4 + j] = v;
    }
  }
  block[0] = -1.0f;

  results->sum = (MemRef2){sum, sum, 0, {n, 4}, {4, 1}};
  results->sum_t = (MemRef2){block, block, 1, {4, n}, {1, 4}};
  results->x_alias = *x;
  results->scale_alias = *scale;
  int64_t *rows = (int64_t *)malloc(sizeof(int64_t));
  *rows = n;
  results->rows = (MemRef0){rows, rows, 0};
}

int fake_probe_mode = FAKE_PROBE_OK;
int64_t fake_probe_ids_sizes[2], fake_probe_ids_strides[2];
int64_t fake_probe_mask_sizes[1];
int fake_probe_calls = 0;

typedef struct {
  MemRef2 a;
  MemRef1 b;
} ProbeResults;

/* A "constant global"; descriptors hold non-const pointers. */
static float constantB[3] = {7.0f, 8.0f, 9.0f};

void fake_probe_invoke(void **args) {
  ProbeResults *results = (ProbeResults *)args[0];
  const MemRef2 *ids = (const MemRef2 *)args[1];
  const MemRef1 *mask = (const MemRef1 *)args[2];
  ++fake_probe_calls;
  memcpy(fake_probe_ids_sizes, ids->sizes, sizeof(ids->sizes));
  memcpy(fake_probe_ids_strides, ids->strides, sizeof(ids->strides));
  memcpy(fake_probe_mask_sizes, mask->sizes, sizeof(mask->sizes));

  int64_t n = mask->sizes[0];
  int64_t rows = fake_probe_mode == FAKE_PROBE_WRONG_N ? n + 1 : n;
  /* a[i][j] = i * 10 + j; b = {100, 101} follows a in the same block. */
  float *block = (float *)malloc(sizeof(float) * (size_t)(rows * 2 + 3));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < 2; ++j)
      block[i * 2 + j] = (float)(i * 10 + j);
  block[rows * 2] = 100.0f;
  block[rows * 2 + 1] = 101.0f;
  block[rows * 2 + 2] = 102.0f;
  results->a = (MemRef2){block, block, 0, {rows, 2}, {2, 1}};
  if (fake_probe_mode == FAKE_PROBE_PADDED) {
    /* Rows of 3 with a padding element: a[i][j] lives at i * 3 + j. */
    float *padded = (float *)malloc(sizeof(float) * (size_t)(rows * 3));
    for (int64_t i = 0; i < rows; ++i) {
      padded[i * 3] = block[i * 2];
      padded[i * 3 + 1] = block[i * 2 + 1];
      padded[i * 3 + 2] = -1.0f;
    }
    free(block);
    results->a = (MemRef2){padded, padded, 0, {rows, 2}, {3, 1}};
  }
  if (fake_probe_mode == FAKE_PROBE_NULL_DATA) {
    free(block);
    results->a.allocated = results->a.aligned = NULL;
  }
  if (fake_probe_mode == FAKE_PROBE_NEGATIVE)
    results->a.sizes[0] = -1;

  int64_t m = fake_probe_mode == FAKE_PROBE_WRONG_M ? 3 : 2;
  if (fake_probe_mode == FAKE_PROBE_SHARED) {
    results->b = (MemRef1){block, block, rows * 2, {m}, {1}};
  } else if (fake_probe_mode == FAKE_PROBE_GLOBAL) {
    /* What MLIR's memref.get_global lowering produces. */
    results->b =
        (MemRef1){(void *)(uintptr_t)0xdeadbeef, constantB, 0, {m}, {1}};
  } else {
    float *b = (float *)malloc(sizeof(float) * (size_t)m);
    for (int64_t j = 0; j < m; ++j)
      b[j] = (float)(100 + j);
    results->b = (MemRef1){b, b, 0, {m}, {1}};
  }
}

typedef struct {
  MemRef1 half;
  MemRef0 count;
  MemRef1 ratio;
} MiscResults;

void fake_misc_invoke(void **args) {
  MiscResults *results = (MiscResults *)args[0];
  const MemRef1 *v = (const MemRef1 *)args[1];
  int64_t n = v->sizes[0];
  const float *data = (const float *)v->aligned + v->offset;
  int64_t halfSize = n > 0 && data[0] < -100.0f ? n + 1 : n;
  uint16_t *half =
      (uint16_t *)malloc(sizeof(uint16_t) * (size_t)(halfSize + 1));
  float *ratio = (float *)malloc(sizeof(float) * (size_t)(n + 1));
  for (int64_t i = 0; i < halfSize; ++i) {
    float x = i < n ? data[i * v->strides[0]] : 0.0f;
    uint32_t bits;
    memcpy(&bits, &x, sizeof(bits));
    half[i] = (uint16_t)(bits >> 16); /* Truncation is fine for a test. */
  }
  volatile float zero = 0.0f;
  for (int64_t i = 0; i < n; ++i)
    ratio[i] = data[i * v->strides[0]] / zero;
  int32_t *count = (int32_t *)malloc(sizeof(int32_t));
  *count = (int32_t)n;
  results->half = (MemRef1){half, half, 0, {halfSize}, {1}};
  results->count = (MemRef0){count, count, 0};
  results->ratio = (MemRef1){ratio, ratio, 0, {n}, {1}};
}
