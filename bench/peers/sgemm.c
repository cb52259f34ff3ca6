/* SGEMM through the CBLAS interface, for OpenBLAS and BLIS side by side with
 * seqc (bench/compare compiles this once against each library).
 *
 *   sgemm G M N K MIN_TIME
 *
 * computes G independent C[M, N] = A[M, K] B[N, K]^T (the layout of
 * torch.nn.functional.linear and of seqc's `x @ w^T`) and prints
 * {"min_ms", "median_ms", "runs", "version", "note"} as JSON. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef SEQC_OPENBLAS
char *openblas_get_corename(void);
char *openblas_get_config(void);
#else
int bli_arch_query_id(void);
const char *bli_arch_string(int id);
const char *bli_info_get_version_str(void);
#endif

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: sgemm G M N K MIN_TIME\n");
    return 2;
  }
  long g = atol(argv[1]), m = atol(argv[2]), n = atol(argv[3]), k = atol(argv[4]);
  double minTime = atof(argv[5]);
  if (g < 1 || m < 1 || n < 1 || k < 1) {
    fprintf(stderr, "sgemm: sizes must be positive\n");
    return 2;
  }
  float *a = malloc(sizeof(float) * g * m * k);
  float *b = malloc(sizeof(float) * g * n * k);
  float *c = malloc(sizeof(float) * g * m * n);
  if (!a || !b || !c) {
    fprintf(stderr, "sgemm: out of memory\n");
    return 1;
  }
  for (long i = 0; i < g * m * k; ++i)
    a[i] = (float)((i * 7 + 3) % 17) / 17.0f - 0.5f;
  for (long i = 0; i < g * n * k; ++i)
    b[i] = (float)((i * 5 + 1) % 13) / 13.0f - 0.5f;
  memset(c, 0, sizeof(float) * g * m * n);

  enum { kMaxRuns = 1000 };
  static double times[kMaxRuns];
  int runs = 0;
  double start = 0;
  for (int r = -2; r < kMaxRuns; ++r) {
    if (r == 0)
      start = now();
    double t0 = now();
    for (long i = 0; i < g; ++i)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n,
                  (int)k, 1.0f, a + i * m * k, (int)k, b + i * n * k, (int)k,
                  0.0f, c + i * m * n, (int)n);
    double t = now() - t0;
    if (r >= 0) {
      times[runs++] = t;
      if (runs >= 3 && now() - start > minTime)
        break;
    }
  }
  /* One entry checked against a plain dot product: a wrong kernel (as
   * older OpenBLAS builds have on some processors) must not be timed. */
  double ref = 0;
  for (long p = 0; p < k; ++p)
    ref += (double)a[(m - 1) * k + p] * b[(n - 1) * k + p];
  double got = c[(m - 1) * n + (n - 1)];
  if ((got - ref) * (got - ref) > 1e-6 * (1 + ref * ref)) {
    printf("{\"error\": \"wrong result: %g instead of %g\"}\n", got, ref);
    return 3;
  }
  qsort(times, runs, sizeof(double), cmp);
  const char *version = "BLIS";
  char note[256] = "";
#ifdef SEQC_OPENBLAS
  version = "OpenBLAS";
  snprintf(note, sizeof note, "%s kernel (%s)", openblas_get_corename(),
           openblas_get_config());
#else
  snprintf(note, sizeof note, "BLIS %s, %s kernels",
           bli_info_get_version_str(), bli_arch_string(bli_arch_query_id()));
#endif
  printf("{\"min_ms\": %.6f, \"median_ms\": %.6f, \"runs\": %d, "
         "\"version\": \"%s\", \"note\": \"%s\"}\n",
         times[0] * 1e3, times[runs / 2] * 1e3, runs, version, note);
  free(a);
  free(b);
  free(c);
  return 0;
}
