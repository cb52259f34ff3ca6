/*===- FakeModels.h - Hand-written models for the runtime tests ---*- C -*-===*\
|*                                                                            *|
|* Part of the seqc project.                                                  *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* Models written in C against docs/abi.md, the way seqc-generated code       *|
|* behaves: they read their arguments through memref descriptors (honouring   *|
|* strides) and malloc their outputs. They let the runtime be tested without  *|
|* the compiler.                                                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef SEQC_TEST_UNIT_RUNTIME_FAKEMODELS_H
#define SEQC_TEST_UNIT_RUNTIME_FAKEMODELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// sum = (x + y) * scale, plus outputs that exercise the output rules:
///   sum_t        the transpose of sum, returned as a strided view (offset 1)
///                into a larger malloc'ed block;
///   x_alias      input x itself (must not be freed by the runtime);
///   scale_alias  parameter scale itself (must not be freed either);
///   rows         a rank-0 i64 holding n.
#define FAKE_ADD_MANIFEST                                                      \
  "{\"model\": \"add\", \"inputs\": ["                                         \
  "{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"n\", 4]},"              \
  "{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"n\", 4]}],"             \
  " \"outputs\": ["                                                            \
  "{\"name\": \"sum\", \"dtype\": \"f32\", \"shape\": [\"n\", 4]},"            \
  "{\"name\": \"sum_t\", \"dtype\": \"f32\", \"shape\": [4, \"n\"]},"          \
  "{\"name\": \"x_alias\", \"dtype\": \"f32\", \"shape\": [\"n\", 4]},"        \
  "{\"name\": \"scale_alias\", \"dtype\": \"f32\", \"shape\": [4]},"           \
  "{\"name\": \"rows\", \"dtype\": \"i64\", \"shape\": []}],"                  \
  " \"params\": [{\"name\": \"scale\", \"dtype\": \"f32\", \"shape\": [4]}],"  \
  " \"hyper\": {\"width\": 4}}"

void fake_add_invoke(void **args);

/// A model whose misbehaviour is selected by fake_probe_mode, to test the
/// runtime's checks of returned outputs. ids: i32 [b, n] with range
/// [0, vocab]; mask: i64 [n]; outputs a: f32 [n, m] and b: f32 [m], m = 2.
#define FAKE_PROBE_MANIFEST                                                    \
  "{\"model\": \"probe\", \"inputs\": ["                                       \
  "{\"name\": \"ids\", \"dtype\": \"i32\", \"shape\": [\"b\", \"n\"],"         \
  " \"range\": [0, \"vocab\"]},"                                               \
  "{\"name\": \"mask\", \"dtype\": \"i64\", \"shape\": [\"n\"]}],"             \
  " \"outputs\": ["                                                            \
  "{\"name\": \"a\", \"dtype\": \"f32\", \"shape\": [\"n\", \"m\"]},"          \
  "{\"name\": \"b\", \"dtype\": \"f32\", \"shape\": [\"m\"]}],"                \
  " \"params\": []}"

enum fake_probe_mode {
  FAKE_PROBE_OK = 0,
  FAKE_PROBE_WRONG_N = 1,   /* a has n + 1 rows */
  FAKE_PROBE_WRONG_M = 2,   /* b has m = 3, a has m = 2 */
  FAKE_PROBE_NULL_DATA = 3, /* a has a null data pointer */
  FAKE_PROBE_SHARED = 4,    /* b views a's allocation */
  FAKE_PROBE_GLOBAL = 5,    /* b is a constant global (0xdeadbeef) */
  FAKE_PROBE_NEGATIVE = 6,  /* a has a negative size */
  FAKE_PROBE_PADDED = 7,    /* a has padded rows: strides [3, 1] */
};
extern int fake_probe_mode;
/// What the last probe call saw: the sizes and strides of ids and mask.
extern int64_t fake_probe_ids_sizes[2], fake_probe_ids_strides[2];
extern int64_t fake_probe_mask_sizes[1];
/// How many calls the probe has had.
extern int fake_probe_calls;

void fake_probe_invoke(void **args);

/// A weightless model for the CLI's rarer paths: v: f32 [n] gives
/// half = bf16(v), count = n (i32 scalar) and ratio = v / 0 (non-finite).
/// When v[0] < -100 it returns half with n + 1 elements, a model error.
#define FAKE_MISC_MANIFEST                                                     \
  "{\"model\": \"misc\", \"inputs\": ["                                        \
  "{\"name\": \"v\", \"dtype\": \"f32\", \"shape\": [\"n\"]}],"                \
  " \"outputs\": ["                                                            \
  "{\"name\": \"half\", \"dtype\": \"bf16\", \"shape\": [\"n\"]},"             \
  "{\"name\": \"count\", \"dtype\": \"i32\", \"shape\": []},"                  \
  "{\"name\": \"ratio\", \"dtype\": \"f32\", \"shape\": [\"n\"]}]}"

void fake_misc_invoke(void **args);

/// A GPU model (FakeGpuModel.c, target "nvptx"): y = x * w, computed by
/// the fake driver's kernel fake_scale_by, or by fake_gpu_kernel when a
/// test names another; fake_gpu_bad_module selects a module whose PTX does
/// not compile.
#define FAKE_GPU_MANIFEST                                                      \
  "{\"model\": \"gpu_scale\", \"target\": \"nvptx\", \"inputs\": ["            \
  "{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"n\"]}],"              \
  " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"n\"]}]," \
  " \"params\": [{\"name\": \"w\", \"dtype\": \"f32\", \"shape\": [1]}]}"
extern const char *fake_gpu_kernel;
extern int fake_gpu_bad_module;
void fake_gpu_invoke(void **args);

/// A model that allocates what a model compiled by seqc allocates, through
/// the runtime (FakeAllocModel.c): y = x * (w[0] + w[1] + w[2] + w[3]).
/// seqc_prepare allocates its state and a prepared value of
/// fake_alloc_prepared_bytes; each call grows the arena to 2 * n floats
/// (seqc_alloc_arena), allocates y and an intermediate of
/// n * fake_alloc_intermediate_factor floats, and then, in an OpenMP
/// parallel loop over blocks of 64 rows, fake_alloc_scratch_bytes of
/// scratch per block. The knobs are also read from the environment
/// (FAKE_ALLOC_PREPARED_BYTES, ...) at each call.
#define FAKE_ALLOC_MANIFEST                                                    \
  "{\"model\": \"alloc\", \"inputs\": ["                                       \
  "{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"n\"]}],"                \
  " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"n\"]}]," \
  " \"params\": [{\"name\": \"w\", \"dtype\": \"f32\", \"shape\": [4]}]}"
extern int64_t fake_alloc_prepared_bytes;
extern int64_t fake_alloc_intermediate_factor;
extern int64_t fake_alloc_scratch_bytes;
void fake_alloc_invoke(void **args);
void *fake_alloc_prepare(void **params);
void fake_alloc_release(void *state);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SEQC_TEST_UNIT_RUNTIME_FAKEMODELS_H */
