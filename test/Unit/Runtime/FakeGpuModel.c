/*===- FakeGpuModel.c - A GPU model as gpu-to-llvm lowers one -----*- C -*-===*\
|*                                                                            *|
|* Part of the seqc project.                                                  *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* The host side of a model compiled with --target=nvptx, written by hand:    *|
|* global constructors record the kernel images with mgpuModuleLoadJIT        *|
|* before main, and each call allocates its output through the runtime's      *|
|* allocator, launches a kernel on a fresh stream, synchronizes and destroys  *|
|* the stream, as MLIR's gpu-to-llvm lowering does. The kernels run in the    *|
|* fake driver (FakeCuda.c).                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "FakeModels.h"

#include <stddef.h>
#include <stdint.h>

void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void *mgpuStreamCreate(void);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamDestroy(void *stream);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *_mlir_memref_to_llvm_alloc(size_t size);

static char kernels[] = "//\n// fake PTX\n//\n.version 8.0\n.target sm_90\n"
                        ".visible .entry fake_scale_by(\n.param .u64 a\n)\n"
                        "{\nret;\n}\n.visible .entry fake_fault(\n)\n"
                        "{\nret;\n}\n";
static char badKernels[] = "//\n.version 8.0\nfake-jit-error\n";

static void *module, *badModule;

__attribute__((constructor(123))) static void loadModules(void) {
  module = mgpuModuleLoadJIT(kernels, 2);
  badModule = mgpuModuleLoadJIT(badKernels, 2);
}

__attribute__((destructor(123))) static void unloadModules(void) {
  mgpuModuleUnload(module);
  mgpuModuleUnload(badModule);
}

const char *fake_gpu_kernel = "fake_scale_by";
int fake_gpu_bad_module = 0;

typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} MemRef1;

void fake_gpu_invoke(void **args) {
  MemRef1 *result = (MemRef1 *)args[0];
  const MemRef1 *x = (const MemRef1 *)args[1];
  const MemRef1 *w = (const MemRef1 *)args[2];
  int64_t n = x->sizes[0];
  float *y = (float *)_mlir_memref_to_llvm_alloc(sizeof(float) * (size_t)n);
  float *src = x->aligned + x->offset;
  float *factor = w->aligned + w->offset;

  void *function = mgpuModuleGetFunction(
      fake_gpu_bad_module ? badModule : module, fake_gpu_kernel);
  void *stream = mgpuStreamCreate();
  void *params[4] = {&y, &src, &n, &factor};
  int64_t blocks = n > 0 ? (n + 127) / 128 : 1;
  mgpuLaunchKernel(function, blocks, 1, 1, 128, 1, 1, 0, stream, params, NULL,
                   4);
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);

  *result = (MemRef1){y, y, 0, {n}, {1}};
}
