/* A C host of a model compiled into a shared library: the generated header
 * names the values, the runtime API (which the library contains) runs it. */
#include "tiny.h"

#include <stdio.h>

static int check(seqc_status *status, const char *what) {
  if (!status)
    return 0;
  fprintf(stderr, "%s: %s\n", what, seqc_status_message(status));
  seqc_status_free(status);
  return 1;
}

int main(void) {
  seqc_model *model = NULL;
  if (check(seqc_model_load(&model), "load"))
    return 1;
  printf("model %s: %d input(s), %d output(s), %d param(s)\n",
         seqc_model_name(model), TINY_NUM_INPUTS, TINY_NUM_OUTPUTS,
         TINY_NUM_PARAMS);
  seqc_tensor y;
  int failed = check(seqc_model_random_weights(model, 1), "weights") ||
               check(seqc_model_set_dim(model, "n", 5), "dim") ||
               check(seqc_model_random_inputs(model, 2), "inputs") ||
               check(seqc_model_run(model), "run") ||
               check(seqc_model_get_output(model, TINY_OUTPUT_Y, &y), "output");
  if (!failed)
    printf("%s: [%lld, %lld]\n", TINY_OUTPUT_Y, (long long)y.shape[0],
           (long long)y.shape[1]);
  seqc_model_free(model);
  return failed;
}
