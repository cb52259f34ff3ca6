/*===- FakeCuda.c - A CUDA driver for the runtime's tests ---------*- C -*-===*\
|*                                                                            *|
|* Part of the seqc project.                                                  *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* Built as libcuda.so.1 and loaded by the runtime through SEQC_CUDA_DRIVER,  *|
|* it implements the driver entry points runtime/lib/Gpu.cpp uses, with host  *|
|* memory, and checks how they are used: cuInit first, a current context for  *|
|* the calls that need one, frees of known blocks only. It records what it    *|
|* sees (fake_cuda_get_stats) and runs two kernels on the host:               *|
|*   fake_scale_by(float *dst, float *src, int64_t n, float *factor):         *|
|*       dst = src * *factor, CUDA_ERROR_ILLEGAL_ADDRESS unless the three     *|
|*       pointers lie in managed blocks;                                      *|
|*   fake_fault(): fails as an illegal address at the next synchronization.   *|
|* Any other kernel a module names is launched as a no-op. For a PTX image,   *|
|* every 64-bit parameter whose value looks like an address must lie in a     *|
|* managed block (CUDA_ERROR_ILLEGAL_ADDRESS otherwise, with a stderr line).  *|
|*                                                                            *|
|* Environment:                                                               *|
|*   FAKE_CUDA_FAIL=name=code[,name=code]  entry point `name` returns `code`  *|
|*   FAKE_CUDA_DEVICES=n                   the device count (default 1)       *|
|*   FAKE_CUDA_TRACE=1                     one stderr line per launch, and a  *|
|*                                         summary at exit                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "FakeCuda.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_FAILED = 719,
};

#define EXPORT __attribute__((visibility("default")))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_cuda_stats stats;
static int initialized;
static __thread int contextDepth;
/* The context handle: any distinct address. */
static char primaryContext;

struct block {
  void *data;
  size_t bytes;
  int managed;
};
static struct block *blocks;
static size_t numBlocks, blockCapacity;

enum { kMaxParams = 256 };

struct function {
  char name[128];
  /* From the PTX's .entry: whether each parameter is a 64-bit integer (a
     pointer, or a memref's offset, size or stride); numParams is -1 when
     the image is not PTX. */
  int numParams;
  unsigned char isU64[kMaxParams];
};

struct module {
  char *text; /* a copy of a PTX image, or NULL for a binary one */
  /* The functions cuModuleGetFunction returned, freed with the module. */
  struct function **functions;
  size_t numFunctions;
};

/* A fault of fake_fault, reported by the next synchronization. */
static int pendingFault;

/* Returns the code FAKE_CUDA_FAIL gives `name`, or 0. */
static CUresult injected(const char *name) {
  const char *spec = getenv("FAKE_CUDA_FAIL");
  size_t length = strlen(name);
  while (spec && *spec) {
    if (strncmp(spec, name, length) == 0 && spec[length] == '=')
      return atoi(spec + length + 1);
    spec = strchr(spec, ',');
    if (spec)
      ++spec;
  }
  return 0;
}

#define ENTER(name, needsContext)                                              \
  do {                                                                         \
    pthread_mutex_lock(&lock);                                                 \
    ++stats.calls;                                                             \
    pthread_mutex_unlock(&lock);                                               \
    CUresult injected_ = injected(name);                                       \
    if (injected_)                                                             \
      return injected_;                                                        \
    if (!initialized)                                                          \
      return CUDA_ERROR_NOT_INITIALIZED;                                       \
    if ((needsContext) && contextDepth == 0)                                   \
      return CUDA_ERROR_INVALID_CONTEXT;                                       \
  } while (0)

static int deviceCount(void) {
  const char *env = getenv("FAKE_CUDA_DEVICES");
  return env ? atoi(env) : 1;
}

/* Whether [p, p + bytes) lies in a managed block. */
static int isManaged(const void *p, size_t bytes) {
  int found = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < numBlocks && !found; ++i) {
    const char *start = (const char *)blocks[i].data;
    found = blocks[i].managed && (const char *)p >= start &&
            (const char *)p + bytes <= start + blocks[i].bytes;
  }
  pthread_mutex_unlock(&lock);
  return found;
}

/* Reads the parameter list of `.entry name(` in `text` into `function`. */
static void parseParams(const char *text, struct function *function) {
  char entry[160];
  snprintf(entry, sizeof(entry), ".entry %s(", function->name);
  const char *p = strstr(text, entry) + strlen(entry);
  const char *end = strchr(p, ')');
  function->numParams = 0;
  while (end && function->numParams < kMaxParams) {
    const char *param = strstr(p, ".param ");
    if (!param || param > end)
      break;
    const char *type = param + strlen(".param ");
    function->isU64[function->numParams++] = strncmp(type, ".u64", 4) == 0 ||
                                             strncmp(type, ".b64", 4) == 0 ||
                                             strncmp(type, ".s64", 4) == 0;
    p = type;
  }
}

/* The first 64-bit parameter of a launch whose value looks like a user-space
   address (2^32 <= value < 2^47) outside every managed block: memory the
   device could not read. Returns its index, or -1. */
static int unmanagedPointer(const struct function *function, void **params,
                            unsigned long long *value) {
  for (int i = 0; i < function->numParams; ++i) {
    if (!function->isU64[i])
      continue;
    uint64_t v;
    memcpy(&v, params[i], sizeof(v));
    if (v < (1ull << 32) || v >= (1ull << 47))
      continue;
    /* A view may end at its block's end: check the byte before too. */
    if (!isManaged((const void *)(uintptr_t)v, 1) &&
        !isManaged((const void *)(uintptr_t)(v - 1), 1)) {
      *value = v;
      return i;
    }
  }
  return -1;
}

static CUresult allocate(CUdeviceptr *out, size_t bytes, int managed) {
  if (!out || bytes == 0)
    return CUDA_ERROR_INVALID_VALUE;
  size_t rounded = (bytes + 4095) / 4096 * 4096;
  void *data = aligned_alloc(4096, rounded);
  if (!data)
    return CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&lock);
  if (numBlocks == blockCapacity) {
    blockCapacity = blockCapacity ? 2 * blockCapacity : 64;
    blocks = realloc(blocks, blockCapacity * sizeof(*blocks));
  }
  blocks[numBlocks].data = data;
  blocks[numBlocks].bytes = bytes;
  blocks[numBlocks].managed = managed;
  ++numBlocks;
  if (managed) {
    ++stats.managed_allocations;
    ++stats.live_managed_blocks;
  }
  pthread_mutex_unlock(&lock);
  *out = (CUdeviceptr)(uintptr_t)data;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuInit(unsigned flags) {
  pthread_mutex_lock(&lock);
  ++stats.calls;
  ++stats.init_calls;
  pthread_mutex_unlock(&lock);
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult fail = injected("cuInit");
  if (fail)
    return fail;
  if (deviceCount() == 0)
    return CUDA_ERROR_NO_DEVICE;
  initialized = 1;
  return CUDA_SUCCESS;
}

static const char *errorName(CUresult code) {
  switch (code) {
  case CUDA_SUCCESS:
    return "CUDA_SUCCESS";
  case CUDA_ERROR_INVALID_VALUE:
    return "CUDA_ERROR_INVALID_VALUE";
  case CUDA_ERROR_OUT_OF_MEMORY:
    return "CUDA_ERROR_OUT_OF_MEMORY";
  case CUDA_ERROR_NOT_INITIALIZED:
    return "CUDA_ERROR_NOT_INITIALIZED";
  case CUDA_ERROR_NO_DEVICE:
    return "CUDA_ERROR_NO_DEVICE";
  case CUDA_ERROR_INVALID_DEVICE:
    return "CUDA_ERROR_INVALID_DEVICE";
  case CUDA_ERROR_INVALID_IMAGE:
    return "CUDA_ERROR_INVALID_IMAGE";
  case CUDA_ERROR_INVALID_CONTEXT:
    return "CUDA_ERROR_INVALID_CONTEXT";
  case CUDA_ERROR_INVALID_HANDLE:
    return "CUDA_ERROR_INVALID_HANDLE";
  case CUDA_ERROR_NOT_FOUND:
    return "CUDA_ERROR_NOT_FOUND";
  case CUDA_ERROR_ILLEGAL_ADDRESS:
    return "CUDA_ERROR_ILLEGAL_ADDRESS";
  case CUDA_ERROR_LAUNCH_FAILED:
    return "CUDA_ERROR_LAUNCH_FAILED";
  default:
    return NULL;
  }
}

EXPORT CUresult cuGetErrorName(CUresult code, const char **out) {
  *out = errorName(code);
  return *out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorString(CUresult code, const char **out) {
  switch (code) {
  case CUDA_ERROR_NO_DEVICE:
    *out = "no CUDA-capable device is detected";
    return CUDA_SUCCESS;
  case CUDA_ERROR_ILLEGAL_ADDRESS:
    *out = "an illegal memory access was encountered";
    return CUDA_SUCCESS;
  case CUDA_ERROR_LAUNCH_FAILED:
    *out = "unspecified launch failure";
    return CUDA_SUCCESS;
  default:
    *out = errorName(code) ? "fake CUDA error" : NULL;
    return *out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  }
}

EXPORT CUresult cuDeviceGet(int *device, int ordinal) {
  ENTER("cuDeviceGet", 0);
  if (ordinal < 0 || ordinal >= deviceCount())
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  stats.device = ordinal;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  ENTER("cuDeviceGetAttribute", 0);
  (void)device;
  /* Managed memory (83) and concurrent managed access (89) are supported;
     other attributes read as 0. */
  *value = attribute == 83 || attribute == 89;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(void **context, int device) {
  ENTER("cuDevicePrimaryCtxRetain", 0);
  (void)device;
  *context = &primaryContext;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPushCurrent_v2(void *context) {
  ENTER("cuCtxPushCurrent", 0);
  if (context != &primaryContext)
    return CUDA_ERROR_INVALID_CONTEXT;
  ++contextDepth;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPopCurrent_v2(void **previous) {
  ENTER("cuCtxPopCurrent", 1);
  --contextDepth;
  if (previous)
    *previous = &primaryContext;
  return CUDA_SUCCESS;
}

static CUresult loadModule(void **out, const void *image) {
  if (!out || !image)
    return CUDA_ERROR_INVALID_VALUE;
  struct module *module = calloc(1, sizeof(*module));
  const char *text = (const char *)image;
  /* PTX is text starting with a comment or a directive. */
  if (text[0] == '/' || text[0] == '.')
    module->text = strdup(text);
  pthread_mutex_lock(&lock);
  ++stats.modules_loaded;
  pthread_mutex_unlock(&lock);
  *out = module;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleLoadData(void **module, const void *image) {
  ENTER("cuModuleLoadData", 1);
  return loadModule(module, image);
}

EXPORT CUresult cuModuleLoadDataEx(void **module, const void *image,
                                   unsigned numOptions, int *options,
                                   void **values) {
  ENTER("cuModuleLoadDataEx", 1);
  /* An image whose text holds "fake-jit-error" fails to compile, with a
     log, as the driver's JIT does. */
  if (strstr((const char *)image, "fake-jit-error")) {
    for (unsigned i = 0; i < numOptions; ++i)
      if (options[i] == 5 /* CU_JIT_ERROR_LOG_BUFFER */)
        strcpy((char *)values[i], "ptxas fatal: fake syntax error");
    return CUDA_ERROR_INVALID_IMAGE;
  }
  return loadModule(module, image);
}

EXPORT CUresult cuModuleUnload(void *handle) {
  ENTER("cuModuleUnload", 0);
  struct module *module = handle;
  if (!module)
    return CUDA_ERROR_INVALID_HANDLE;
  for (size_t i = 0; i < module->numFunctions; ++i)
    free(module->functions[i]);
  free(module->functions);
  free(module->text);
  free(module);
  pthread_mutex_lock(&lock);
  ++stats.modules_unloaded;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleGetFunction(void **out, void *handle,
                                    const char *name) {
  ENTER("cuModuleGetFunction", 1);
  struct module *module = handle;
  if (!module || !name || strlen(name) >= sizeof(((struct function *)0)->name))
    return CUDA_ERROR_INVALID_VALUE;
  if (module->text) {
    char entry[160];
    snprintf(entry, sizeof(entry), ".entry %s(", name);
    if (!strstr(module->text, entry))
      return CUDA_ERROR_NOT_FOUND;
  }
  struct function *function = calloc(1, sizeof(*function));
  strcpy(function->name, name);
  function->numParams = -1;
  if (module->text)
    parseParams(module->text, function);
  module->functions =
      realloc(module->functions,
              (module->numFunctions + 1) * sizeof(*module->functions));
  module->functions[module->numFunctions++] = function;
  *out = function;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuFuncSetAttribute(void *function, int attribute, int value) {
  ENTER("cuFuncSetAttribute", 0);
  (void)attribute;
  (void)value;
  return function ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuLaunchKernel(void *handle, unsigned gx, unsigned gy,
                               unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned smem, void *stream,
                               void **params, void **extra) {
  ENTER("cuLaunchKernel", 1);
  (void)stream;
  (void)extra;
  struct function *function = handle;
  if (!function)
    return CUDA_ERROR_INVALID_HANDLE;
  if (bx * by * bz > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  ++stats.launches;
  snprintf(stats.last_kernel, sizeof(stats.last_kernel), "%s", function->name);
  stats.last_grid[0] = gx;
  stats.last_grid[1] = gy;
  stats.last_grid[2] = gz;
  stats.last_block[0] = bx;
  stats.last_block[1] = by;
  stats.last_block[2] = bz;
  stats.last_smem = smem;
  pthread_mutex_unlock(&lock);
  if (getenv("FAKE_CUDA_TRACE"))
    fprintf(stderr,
            "fake-cuda: launch %s grid %ux%ux%u block %ux%ux%u smem %u\n",
            function->name, gx, gy, gz, bx, by, bz, smem);
  unsigned long long address;
  int unmanaged = unmanagedPointer(function, params, &address);
  if (unmanaged >= 0) {
    fprintf(stderr,
            "fake-cuda: %s: parameter %d is 0x%llx, outside managed memory\n",
            function->name, unmanaged, address);
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  }
  if (strcmp(function->name, "fake_scale_by") == 0) {
    float *dst = *(float **)params[0];
    const float *src = *(float **)params[1];
    int64_t n = *(int64_t *)params[2];
    const float *factor = *(float **)params[3];
    size_t bytes = (size_t)n * sizeof(float);
    if (!isManaged(dst, bytes) || !isManaged(src, bytes) ||
        !isManaged(factor, sizeof(float)))
      return CUDA_ERROR_ILLEGAL_ADDRESS;
    for (int64_t i = 0; i < n; ++i)
      dst[i] = src[i] * *factor;
  } else if (strcmp(function->name, "fake_fault") == 0) {
    pendingFault = 1;
  }
  return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernelEx(const void *config, void *function,
                                 void **params, void **extra) {
  ENTER("cuLaunchKernelEx", 1);
  /* The leading fields of CUlaunchConfig. */
  const unsigned *dims = (const unsigned *)config;
  void *const *stream = (void *const *)((const char *)config + 32);
  pthread_mutex_lock(&lock);
  ++stats.cluster_launches;
  pthread_mutex_unlock(&lock);
  return cuLaunchKernel(function, dims[0], dims[1], dims[2], dims[3], dims[4],
                        dims[5], dims[6], *stream, params, extra);
}

EXPORT CUresult cuStreamCreate(void **stream, unsigned flags) {
  ENTER("cuStreamCreate", 1);
  (void)flags;
  *stream = malloc(1);
  pthread_mutex_lock(&lock);
  ++stats.live_streams;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamDestroy_v2(void *stream) {
  ENTER("cuStreamDestroy", 0);
  if (!stream)
    return CUDA_ERROR_INVALID_HANDLE;
  free(stream);
  pthread_mutex_lock(&lock);
  --stats.live_streams;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamSynchronize(void *stream) {
  ENTER("cuStreamSynchronize", 0);
  (void)stream;
  pthread_mutex_lock(&lock);
  ++stats.synchronizations;
  pthread_mutex_unlock(&lock);
  if (pendingFault) {
    pendingFault = 0;
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  }
  return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamWaitEvent(void *stream, void *event, unsigned flags) {
  ENTER("cuStreamWaitEvent", 0);
  return stream && event && flags == 0 ? CUDA_SUCCESS
                                       : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuEventCreate(void **event, unsigned flags) {
  ENTER("cuEventCreate", 1);
  (void)flags;
  *event = malloc(1);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuEventDestroy_v2(void *event) {
  ENTER("cuEventDestroy", 0);
  free(event);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuEventSynchronize(void *event) {
  ENTER("cuEventSynchronize", 0);
  return event ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuEventRecord(void *event, void *stream) {
  ENTER("cuEventRecord", 0);
  (void)stream;
  return event ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *out, size_t bytes) {
  ENTER("cuMemAlloc", 1);
  return allocate(out, bytes, 0);
}

EXPORT CUresult cuMemAllocManaged(CUdeviceptr *out, size_t bytes,
                                  unsigned flags) {
  ENTER("cuMemAllocManaged", 1);
  if (flags != 1 /* CU_MEM_ATTACH_GLOBAL */)
    return CUDA_ERROR_INVALID_VALUE;
  return allocate(out, bytes, 1);
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr pointer) {
  ENTER("cuMemFree", 0);
  void *data = (void *)(uintptr_t)pointer;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < numBlocks; ++i) {
    if (blocks[i].data == data) {
      if (blocks[i].managed)
        --stats.live_managed_blocks;
      blocks[i] = blocks[--numBlocks];
      pthread_mutex_unlock(&lock);
      free(data);
      return CUDA_SUCCESS;
    }
  }
  pthread_mutex_unlock(&lock);
  return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                              void *stream) {
  ENTER("cuMemcpyAsync", 1);
  (void)stream;
  memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t count,
                                 void *stream) {
  ENTER("cuMemsetD32Async", 1);
  (void)stream;
  uint32_t *p = (uint32_t *)(uintptr_t)dst;
  for (size_t i = 0; i < count; ++i)
    p[i] = value;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value,
                                 size_t count, void *stream) {
  ENTER("cuMemsetD16Async", 1);
  (void)stream;
  uint16_t *p = (uint16_t *)(uintptr_t)dst;
  for (size_t i = 0; i < count; ++i)
    p[i] = value;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned flags) {
  ENTER("cuMemHostRegister", 1);
  (void)flags;
  return p && bytes ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuMemHostUnregister(void *p) {
  ENTER("cuMemHostUnregister", 1);
  return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

struct location {
  int type, id;
};

EXPORT CUresult cuMemPrefetchAsync_v2(CUdeviceptr pointer, size_t bytes,
                                      struct location location, unsigned flags,
                                      void *stream) {
  ENTER("cuMemPrefetchAsync", 1);
  (void)flags;
  (void)stream;
  if (location.type != 1 || !isManaged((void *)(uintptr_t)pointer, bytes))
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  ++stats.prefetches;
  stats.prefetched_bytes += bytes;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

EXPORT const struct fake_cuda_stats *fake_cuda_get_stats(void) {
  return &stats;
}

/* At exit or dlclose: the summary, and the blocks still allocated are
   freed (what a process leaves to the real driver at exit). */
__attribute__((destructor)) static void finish(void) {
  for (size_t i = 0; i < numBlocks; ++i)
    free(blocks[i].data);
  free(blocks);
  blocks = NULL;
  numBlocks = blockCapacity = 0;
  if (getenv("FAKE_CUDA_TRACE"))
    fprintf(stderr,
            "fake-cuda: %d cuInit, %d modules loaded, %d unloaded, %d "
            "launches, %d managed allocations, %d stream synchronizations\n",
            stats.init_calls, stats.modules_loaded, stats.modules_unloaded,
            stats.launches, stats.managed_allocations, stats.synchronizations);
}
