/*===- c_api_example.c - Embedding a seqc model through the C API -*- C -*-===*\
|*                                                                            *|
|* Part of the seqc project.                                                  *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* A C program that embeds a model: bind weights and inputs, run, read the    *|
|* outputs, save and reload the weights, handle errors, and generate tokens   *|
|* with a second (language) model. Run as a test with a scratch directory     *|
|* as its argument; exits 0 when every check holds.                           *|
|*                                                                            *|
|* In a real program seqc_manifest and seqc_invoke come from the object file  *|
|* seqc compiles (link: model.o libseqc_runtime.a -lomp -lstdc++ -lm). Here   *|
|* they are written by hand: y = x * w + b over rows, x: f32 [n, 3].          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "seqc_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char seqc_manifest[] =
    "{\"model\": \"affine\","
    " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"n\", "
    "3]}],"
    " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"n\", "
    "3]}],"
    " \"params\": [{\"name\": \"w\", \"dtype\": \"f32\", \"shape\": [3]},"
    "              {\"name\": \"b\", \"dtype\": \"f32\", \"shape\": [3]}]}";

/* MLIR memref descriptors (docs/abi.md). */
typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} MemRef1;
typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} MemRef2;

void seqc_invoke(void **args) {
  MemRef2 *y = (MemRef2 *)args[0];
  const MemRef2 *x = (const MemRef2 *)args[1];
  const MemRef1 *w = (const MemRef1 *)args[2];
  const MemRef1 *b = (const MemRef1 *)args[3];
  int64_t n = x->sizes[0];
  float *out = (float *)malloc(sizeof(float) * (size_t)(n * 3 + 1));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < 3; ++j)
      out[i * 3 + j] =
          x->aligned[x->offset + i * x->strides[0] + j * x->strides[1]] *
              w->aligned[w->offset + j * w->strides[0]] +
          b->aligned[b->offset + j * b->strides[0]];
  y->allocated = y->aligned = out;
  y->offset = 0;
  y->sizes[0] = n;
  y->sizes[1] = 3;
  y->strides[0] = 3;
  y->strides[1] = 1;
}

/* A second model, loaded with seqc_model_load_from: a bigram language model
   whose logits at each position are the row of `table` of its token,
   tokens: i32 [b, n] in [0, 7] -> logits: f32 [b, n, 8]. seqc_generate
   works with any model of that form (a compiled examples/gpt.seq). */
static const char kBigramManifest[] =
    "{\"model\": \"bigram\","
    " \"inputs\": [{\"name\": \"tokens\", \"dtype\": \"i32\", \"shape\": "
    "[\"b\", \"n\"], \"range\": [0, 7]}],"
    " \"outputs\": [{\"name\": \"logits\", \"dtype\": \"f32\", \"shape\": "
    "[\"b\", \"n\", 8]}],"
    " \"params\": [{\"name\": \"table\", \"dtype\": \"f32\", \"shape\": "
    "[8, 8]}]}";

typedef struct {
  int32_t *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} MemRef2I;
typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[3], strides[3];
} MemRef3;

static void bigramInvoke(void **args) {
  MemRef3 *logits = (MemRef3 *)args[0];
  const MemRef2I *tokens = (const MemRef2I *)args[1];
  const MemRef2 *table = (const MemRef2 *)args[2];
  int64_t b = tokens->sizes[0], n = tokens->sizes[1];
  float *out = (float *)malloc(sizeof(float) * (size_t)(b * n * 8 + 1));
  for (int64_t r = 0; r < b; ++r)
    for (int64_t i = 0; i < n; ++i) {
      int32_t token = tokens->aligned[tokens->offset + r * tokens->strides[0] +
                                      i * tokens->strides[1]];
      for (int64_t v = 0; v < 8; ++v)
        out[(r * n + i) * 8 + v] =
            table->aligned[table->offset + token * table->strides[0] +
                           v * table->strides[1]];
    }
  logits->allocated = logits->aligned = out;
  logits->offset = 0;
  logits->sizes[0] = b;
  logits->sizes[1] = n;
  logits->sizes[2] = 8;
  logits->strides[0] = n * 8;
  logits->strides[1] = 8;
  logits->strides[2] = 1;
}

/* Streams generated tokens: "row 0: 4", ... */
static int printToken(int64_t row, int32_t token, void *count) {
  printf("  row %lld: %d\n", (long long)row, (int)token);
  ++*(int *)count;
  return 0;
}

/* Reports a failed call with its message and bails out. */
#define CHECK(call)                                                            \
  do {                                                                         \
    seqc_status *status_ = (call);                                             \
    if (status_) {                                                             \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,     \
              seqc_status_message(status_));                                   \
      seqc_status_free(status_);                                               \
      goto fail;                                                               \
    }                                                                          \
  } while (0)

#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      goto fail;                                                               \
    }                                                                          \
  } while (0)

static void printInfo(const seqc_model *model, seqc_value_kind kind,
                      const char *title) {
  size_t count = seqc_model_count(model, kind);
  printf("%s:\n", title);
  for (size_t i = 0; i < count; ++i) {
    seqc_value_info info;
    seqc_status *status = seqc_model_info(model, kind, i, &info);
    if (status) {
      seqc_status_free(status);
      continue;
    }
    printf("  %s %s [", info.name, seqc_dtype_name(info.dtype));
    for (int d = 0; d < info.rank; ++d)
      if (info.shape[d] < 0)
        printf("%s%s", d ? ", " : "", info.dim_names[d]);
      else
        printf("%s%lld", d ? ", " : "", (long long)info.shape[d]);
    printf("]\n");
  }
}

static int checkY(const seqc_model *model, const float *expected) {
  seqc_tensor y;
  seqc_status *status = seqc_model_get_output(model, "y", &y);
  if (status) {
    fprintf(stderr, "get_output: %s\n", seqc_status_message(status));
    seqc_status_free(status);
    return 0;
  }
  if (y.dtype != SEQC_DTYPE_F32 || y.rank != 2 || y.shape[0] != 2 ||
      y.shape[1] != 3)
    return 0;
  return memcmp(y.data, expected, sizeof(float) * 6) == 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  char weightsPath[4096], npyPath[4096];
  snprintf(weightsPath, sizeof(weightsPath), "%s/c_api_example.safetensors",
           argv[1]);
  snprintf(npyPath, sizeof(npyPath), "%s/c_api_example_y.npy", argv[1]);

  seqc_model *model = NULL, *lm = NULL;
  seqc_tensor read = {0};
  CHECK(seqc_model_load(&model));
  printf("model '%s'\n", seqc_model_name(model));
  printInfo(model, SEQC_VALUE_INPUT, "inputs");
  printInfo(model, SEQC_VALUE_OUTPUT, "outputs");
  printInfo(model, SEQC_VALUE_PARAM, "parameters");

  /* Threads are optional: a runtime without OpenMP says so. */
  seqc_status *threads = seqc_set_num_threads(1);
  EXPECT(!threads || seqc_status_get_code(threads) == SEQC_STATUS_UNAVAILABLE);
  seqc_status_free(threads);

  /* Weights from memory (they could come from seqc_model_load_weights). */
  float w[3] = {1.0f, 2.0f, 3.0f}, b[3] = {0.5f, 0.5f, 0.5f};
  seqc_tensor tw = {SEQC_DTYPE_F32, 1, {3}, w};
  seqc_tensor tb = {SEQC_DTYPE_F32, 1, {3}, b};
  CHECK(seqc_model_set_param(model, "w", &tw));
  CHECK(seqc_model_set_param(model, "b", &tb));

  /* Inputs are copied: the caller's buffer can be reused right away. */
  float x[6] = {1, 2, 3, 4, 5, 6};
  seqc_tensor tx = {SEQC_DTYPE_F32, 2, {2, 3}, x};
  CHECK(seqc_model_set_input(model, "x", &tx));
  CHECK(seqc_model_run(model));
  const float expected[6] = {1.5f, 4.5f, 9.5f, 4.5f, 10.5f, 18.5f};
  EXPECT(checkY(model, expected));

  /* Save the weights, scramble them, load them back: same result. */
  CHECK(seqc_model_save_weights(model, weightsPath));
  CHECK(seqc_model_random_weights(model, 7));
  CHECK(seqc_model_run(model));
  EXPECT(!checkY(model, expected));
  CHECK(seqc_model_load_weights(model, weightsPath));
  CHECK(seqc_model_run(model));
  EXPECT(checkY(model, expected));

  /* Outputs to .npy and back. */
  seqc_tensor y;
  CHECK(seqc_model_get_output(model, "y", &y));
  CHECK(seqc_npy_write(npyPath, &y));
  CHECK(seqc_npy_read(npyPath, &read));
  EXPECT(read.rank == 2 && read.shape[0] == 2 && read.shape[1] == 3);
  EXPECT(memcmp(read.data, expected, sizeof(expected)) == 0);
  free(read.data);
  read.data = NULL;

  /* Errors are values: a wrong shape is reported, and nothing changes. */
  seqc_tensor bad = {SEQC_DTYPE_F32, 2, {3, 2}, x};
  seqc_status *status = seqc_model_set_input(model, "x", &bad);
  EXPECT(seqc_status_get_code(status) == SEQC_STATUS_INVALID_ARGUMENT);
  printf("expected error: %s\n", seqc_status_message(status));
  seqc_status_free(status);
  CHECK(seqc_model_run(model));
  EXPECT(checkY(model, expected));

  /* Generation: each token's most likely successor is the next id, mod 8. */
  CHECK(seqc_model_load_from(kBigramManifest, bigramInvoke, &lm));
  float table[64];
  for (int i = 0; i < 64; ++i)
    table[i] = (i % 8 == (i / 8 + 1) % 8) ? 2.0f : 0.0f;
  seqc_tensor tt = {SEQC_DTYPE_F32, 2, {8, 8}, table};
  CHECK(seqc_model_set_param(lm, "table", &tt));
  seqc_generate_options options;
  seqc_generate_options_init(&options); /* greedy */
  options.max_new_tokens = 6;
  int32_t stop = 0, streamed = 0;
  options.stop_ids = &stop;
  options.num_stop_ids = 1;
  options.callback = printToken;
  options.user_data = &streamed;
  const int32_t first[] = {1, 5}, second[] = {2};
  const int32_t *prompts[] = {first, second};
  const int64_t lengths[] = {2, 1};
  int32_t generated[2 * 6];
  int64_t counts[2];
  printf("generate:\n");
  CHECK(seqc_generate(lm, 2, prompts, lengths, &options, generated, counts,
                      NULL));
  /* Row 0 continues 5 with 6, 7 and stops at 0; row 1 runs to 6 tokens. */
  const int32_t row0[] = {6, 7, 0}, row1[] = {3, 4, 5, 6, 7, 0};
  EXPECT(counts[0] == 3 && memcmp(generated, row0, sizeof(row0)) == 0);
  EXPECT(counts[1] == 6 && memcmp(generated + 6, row1, sizeof(row1)) == 0);
  EXPECT(streamed == 9);
  /* Out-of-range options are errors too, and the model stays usable. */
  options.top_p = 0;
  status =
      seqc_generate(lm, 2, prompts, lengths, &options, generated, counts, NULL);
  EXPECT(seqc_status_get_code(status) == SEQC_STATUS_INVALID_ARGUMENT);
  printf("expected error: %s\n", seqc_status_message(status));
  seqc_status_free(status);

  seqc_model_free(lm);
  seqc_model_free(model);
  printf("ok\n");
  return 0;

fail:
  free(read.data);
  seqc_model_free(lm);
  seqc_model_free(model);
  return 1;
}
