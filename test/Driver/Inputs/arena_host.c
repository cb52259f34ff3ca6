/* A host of a compiled model that checks its arena (docs/abi.md, "The
 * arena"): one instance run at growing and shrinking sizes (the arena grows,
 * then is reused) gives, bit for bit, what a fresh instance gives at each
 * size, and instances on two threads at once agree with them too. */
#include "seqc_runtime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check(seqc_status *status, const char *what) {
  if (!status)
    return 0;
  fprintf(stderr, "%s: %s\n", what, seqc_status_message(status));
  seqc_status_free(status);
  return 1;
}

/* Runs `model` at b = 1, n = `n` on inputs of seed `n`; copies output y. */
static float *run(seqc_model *model, int64_t n, size_t *count) {
  seqc_tensor y;
  seqc_model_reset_inputs(model);
  if (check(seqc_model_set_dim(model, "b", 1), "dim b") ||
      check(seqc_model_set_dim(model, "n", n), "dim n") ||
      check(seqc_model_random_inputs(model, (uint64_t)n), "inputs") ||
      check(seqc_model_run(model), "run") ||
      check(seqc_model_get_output(model, "y", &y), "output"))
    return NULL;
  *count = (size_t)seqc_tensor_numel(&y);
  float *copy = malloc(*count * sizeof(float));
  memcpy(copy, y.data, *count * sizeof(float));
  return copy;
}

static seqc_model *fresh(void) {
  seqc_model *model = NULL;
  if (check(seqc_model_load(&model), "load") ||
      check(seqc_model_random_weights(model, 1), "weights"))
    return NULL;
  return model;
}

static const int64_t sizes[] = {3, 17, 64, 5, 17};
enum { kSizes = sizeof(sizes) / sizeof(sizes[0]) };
static float *expected[kSizes];
static size_t expectedCount[kSizes];

/* Runs every size on one instance; returns the number of mismatches. */
static void *sweep(void *arg) {
  (void)arg;
  long mismatches = 0;
  seqc_model *model = fresh();
  for (int round = 0; round < 3 && model; ++round)
    for (int i = 0; i < kSizes; ++i) {
      size_t count = 0;
      float *y = run(model, sizes[i], &count);
      if (!y || count != expectedCount[i] ||
          memcmp(y, expected[i], count * sizeof(float)) != 0)
        ++mismatches;
      free(y);
    }
  if (!model)
    mismatches = -1;
  seqc_model_free(model);
  return (void *)mismatches;
}

int main(void) {
  for (int i = 0; i < kSizes; ++i) {
    seqc_model *model = fresh();
    expected[i] = model ? run(model, sizes[i], &expectedCount[i]) : NULL;
    seqc_model_free(model);
    if (!expected[i])
      return 1;
  }
  long alone = (long)sweep(NULL);
  printf("one instance, sizes 3 17 64 5 17 three times: %ld mismatches\n",
         alone);
  pthread_t threads[2];
  for (int t = 0; t < 2; ++t)
    pthread_create(&threads[t], NULL, sweep, NULL);
  long together = 0;
  for (int t = 0; t < 2; ++t) {
    void *result;
    pthread_join(threads[t], &result);
    together += (long)result;
  }
  printf("two instances on two threads: %ld mismatches\n", together);
  for (int i = 0; i < kSizes; ++i)
    free(expected[i]);
  return alone != 0 || together != 0;
}
