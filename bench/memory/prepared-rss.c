/*===- prepared-rss.c - Resident memory of instances and of generation ---===*\
|*                                                                            *|
|* Part of the seqc project.                                                  *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* Linked with a model object (seqc MODEL.seq -c -o model.o) and the runtime  *|
|* (bench/memory/prepared-rss.sh builds and runs it): prints the resident set *|
|* (VmRSS) and its peak (VmHWM) of                                            *|
|*   clones N [n]: one instance with random weights and N-1 clones of it,    *|
|*                 each running its default entry once on n tokens (128);   *|
|*   generate P T: one instance generating T tokens greedily after a prompt  *|
|*                 of P tokens (prefill, then decode), with the resident set *|
|*                 after the prefill and after the last token;              *|
|*   save FILE:    writes the random weights to FILE (safetensors).         *|
|* With --weights FILE first, the weights are FILE's, memory-mapped, rather  *|
|* than random ones on the heap. With --keep-params first, the model is     *|
|* loaded with a copy of its manifest whose "prepared_only" marks are       *|
|* false, so that the runtime keeps every parameter (the behaviour before   *|
|* the marks, for comparison). Each line splits the resident set into       *|
|* anonymous memory and mapped file pages (RssAnon, RssFile).               *|
\*===----------------------------------------------------------------------===*/

#include "seqc_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Defined by a model with several entries (docs/abi.md, "Entries"). */
extern const seqc_entry_symbols seqc_entries[] __attribute__((weak));

/* A field of /proc/self/status ("VmRSS:"), in MiB. */
static double statusMiB(const char *field) {
  FILE *file = fopen("/proc/self/status", "r");
  char line[256];
  double kib = -1;
  size_t length = strlen(field);
  while (file && fgets(line, sizeof(line), file))
    if (strncmp(line, field, length) == 0)
      kib = atof(line + length);
  if (file)
    fclose(file);
  return kib / 1024.0;
}

static void check(seqc_status *status, const char *what) {
  if (!status)
    return;
  fprintf(stderr, "%s: %s\n", what, seqc_status_message(status));
  exit(1);
}

static void report(const char *when) {
  printf("%-34s rss %7.1f MiB  peak %7.1f MiB  (anon %7.1f, file %7.1f)\n",
         when, statusMiB("VmRSS:"), statusMiB("VmHWM:"),
         statusMiB("RssAnon:"), statusMiB("RssFile:"));
  fflush(stdout);
}

static int afterFirst(int64_t row, int32_t token, void *data) {
  (void)row;
  (void)token;
  int *count = (int *)data;
  if ((*count)++ == 0)
    report("after the prefill (1st token)");
  return 0;
}

int main(int argc, char **argv) {
  const char *weights = NULL;
  int keep = 0;
  for (;;) {
    if (argc > 2 && strcmp(argv[1], "--weights") == 0) {
      weights = argv[2];
      argv += 2;
      argc -= 2;
    } else if (argc > 1 && strcmp(argv[1], "--keep-params") == 0) {
      keep = 1;
      argv += 1;
      argc -= 1;
    } else {
      break;
    }
  }
  if (argc < 3) {
    fprintf(stderr,
            "usage: %s [--weights FILE] clones N [n] | generate P T | save "
            "FILE\n",
            argv[0]);
    return 2;
  }
  seqc_model *model;
  if (keep) {
    /* Every "prepared_only": true becomes false. */
    const char *mark = "\"prepared_only\": true";
    size_t length = strlen(seqc_manifest), count = 0;
    for (const char *at = strstr(seqc_manifest, mark); at;
         at = strstr(at + 1, mark))
      ++count;
    char *manifest = malloc(length + count + 1), *out = manifest;
    const char *from = seqc_manifest;
    for (const char *at = strstr(from, mark); at; at = strstr(from, mark)) {
      size_t head = (size_t)(at - from) + strlen(mark) - 4;
      memcpy(out, from, head);
      memcpy(out + head, "false", 5);
      out += head + 5;
      from = at + strlen(mark);
    }
    strcpy(out, from);
    printf("(the manifest's %zu \"prepared_only\" marks set to false)\n",
           count);
    check(seqc_entries
              ? seqc_model_load_entries(manifest, seqc_entries, &model)
              : seqc_model_load_prepared(manifest, seqc_invoke, seqc_prepare,
                                         seqc_release, &model),
          "load");
    free(manifest);
  } else {
    check(seqc_model_load(&model), "load");
  }
  if (weights)
    check(seqc_model_load_weights(model, weights), "weights");
  else
    check(seqc_model_random_weights(model, 1), "random weights");
  if (strcmp(argv[1], "save") == 0) {
    check(seqc_model_save_weights(model, argv[2]), "save");
    seqc_model_free(model);
    return 0;
  }
  report("weights bound");
  if (strcmp(argv[1], "clones") == 0) {
    int n = atoi(argv[2]);
    int64_t tokens = argc > 3 ? atoll(argv[3]) : 128;
    seqc_model **instances = calloc((size_t)n, sizeof(*instances));
    instances[0] = model;
    for (int i = 1; i < n; ++i)
      check(seqc_model_clone(model, &instances[i]), "clone");
    for (int i = 0; i < n; ++i) {
      check(seqc_model_set_dim(instances[i], "b", 1), "b");
      check(seqc_model_set_dim(instances[i], "n", tokens), "n");
      check(seqc_model_random_inputs(instances[i], (uint64_t)i), "inputs");
      check(seqc_model_run(instances[i]), "run");
      char when[64];
      snprintf(when, sizeof(when), "after instance %d ran", i + 1);
      report(when);
    }
    for (int i = n - 1; i >= 0; --i)
      seqc_model_free(instances[i]);
    free(instances);
    return 0;
  }
  int64_t length = atoll(argv[2]);
  int64_t count = atoll(argv[3]);
  int32_t *prompt = malloc((size_t)length * sizeof(int32_t));
  for (int64_t i = 0; i < length; ++i)
    prompt[i] = (int32_t)((i * 7919 + 13) % 1000);
  const int32_t *prompts[1] = {prompt};
  int64_t lengths[1] = {length};
  seqc_generate_options options;
  seqc_generate_options_init(&options);
  options.max_new_tokens = count;
  int seen = 0;
  options.callback = afterFirst;
  options.user_data = &seen;
  int32_t *out = malloc((size_t)count * sizeof(int32_t));
  int64_t outLength;
  seqc_generate_stats stats;
  check(seqc_generate(model, 1, prompts, lengths, &options, out, &outLength,
                      &stats),
        "generate");
  char when[64];
  snprintf(when, sizeof(when), "after %lld tokens", (long long)outLength);
  report(when);
  printf("prefill %.1f tokens/s, decode %.2f tokens/s\n",
         stats.prefill_tokens / stats.prefill_seconds,
         stats.decode_tokens / stats.decode_seconds);
  seqc_model_free(model);
  free(out);
  free(prompt);
  return 0;
}
