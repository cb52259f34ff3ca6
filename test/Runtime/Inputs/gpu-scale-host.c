/*===- gpu-scale-host.c - gpu-scale.mlir as a seqc model ----------*- C -*-===*\
|*                                                                            *|
|* Part of the seqc project.                                                  *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* The two symbols of docs/abi.md around gpu-scale.mlir's @scale, as seqc     *|
|* would emit them for a GPU model: y = 2 * x, in a buffer the model          *|
|* allocates through the runtime (managed memory) and fills on the host       *|
|* before the kernel scales it in place. With -DHOST_BUFFER it uses malloc    *|
|* instead, which a GPU cannot read.                                          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *_mlir_memref_to_llvm_alloc(size_t size);
/* @scale after convert-func-to-llvm: the memref's descriptor, expanded. */
void scale(float *allocated, float *aligned, int64_t offset, int64_t size,
           int64_t stride, float factor);

const char seqc_manifest[] =
    "{\"model\": \"gpu_scale_mlir\", \"target\": \"nvptx\", \"inputs\": "
    "[{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"n\"]}], "
    "\"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"n\"]}]}";

typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} MemRef1;

void seqc_invoke(void **args) {
  MemRef1 *result = (MemRef1 *)args[0];
  const MemRef1 *x = (const MemRef1 *)args[1];
  int64_t n = x->sizes[0];
#ifdef HOST_BUFFER
  /* The mistake the fake driver catches: memory the device cannot read. */
  float *y = (float *)malloc(sizeof(float) * (size_t)n);
#else
  float *y = (float *)_mlir_memref_to_llvm_alloc(sizeof(float) * (size_t)n);
#endif
  for (int64_t i = 0; i < n; ++i)
    y[i] = x->aligned[x->offset + i * x->strides[0]];
  scale(y, y, 0, n, 1, 2.0f);
  *result = (MemRef1){y, y, 0, {n}, {1}};
}
