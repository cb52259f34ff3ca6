/* Prints the manifest of the model linked into this program as the runtime
 * loaded it, and fails unless it is the text of the seqc_manifest symbol. */
#include "seqc_runtime.h"

#include <stdio.h>
#include <string.h>

int main(void) {
  seqc_model *model = NULL;
  seqc_status *status = seqc_model_load(&model);
  if (status) {
    fprintf(stderr, "load: %s\n", seqc_status_message(status));
    seqc_status_free(status);
    return 1;
  }
  const char *manifest = seqc_model_manifest(model);
  int same = strcmp(manifest, seqc_manifest) == 0;
  printf("%s\n", manifest);
  seqc_model_free(model);
  if (!same)
    fprintf(stderr, "the runtime's manifest is not seqc_manifest\n");
  return same ? 0 : 1;
}
