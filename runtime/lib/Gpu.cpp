//===- Gpu.cpp - mgpu* functions over the CUDA driver API -----------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The host code of a model compiled for NVIDIA GPUs calls the functions
// MLIR's gpu-to-llvm lowering emits (upstream implements them in
// mlir/lib/ExecutionEngine/CudaRuntimeWrappers.cpp, which Debian does not
// ship). This file defines them over the CUDA driver API, resolved with
// dlopen/dlsym so that the runtime needs neither CUDA headers nor libcuda to
// build. The few driver types and constants it uses are declared below,
// with the values of cuda.h.
//
// Differences from upstream's wrappers, all for models run by the runtime:
//  - mgpuModuleLoad/mgpuModuleLoadJIT run in global constructors, before
//    main: they only record the image. It is loaded on the first
//    mgpuModuleGetFunction, after seqc_model_load initialized the driver, so
//    a process that never loads a GPU model makes no driver call.
//  - Errors are not printed: the first one is recorded (which call failed,
//    the kernel, the CUDA error's name and description), later launches are
//    skipped, and seqc_model_run returns it once the model function returns.
//  - The primary context of one device is pushed around each call (as
//    upstream's ScopedContext does); the device is chosen at initialization.
//
//===----------------------------------------------------------------------===//

#include "Gpu.h"
#include "Buffers.h"
#include "Support.h"

#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

using namespace seqc;

//===----------------------------------------------------------------------===//
// The driver API subset (values as in cuda.h)
//===----------------------------------------------------------------------===//

namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_DEINITIALIZED = 4;
constexpr unsigned CU_MEM_ATTACH_GLOBAL = 0x1;
constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 0x2;
constexpr int CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83;
constexpr int CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr int CU_JIT_OPTIMIZATION_LEVEL = 7;
constexpr int CU_MEM_LOCATION_TYPE_DEVICE = 1;
constexpr int CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4;
constexpr int CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 5;
constexpr int CU_CLUSTER_SCHEDULING_POLICY_SPREAD = 1;

struct CUmemLocation {
  int type;
  int id;
};

struct CUlaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    struct {
      unsigned x, y, z;
    } clusterDim;
    int clusterSchedulingPolicyPreference;
  } value;
};
static_assert(sizeof(CUlaunchAttribute) == 72, "layout of cuda.h");

struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned numAttrs;
};

/// The driver entry points, by the names libcuda exports (the _v2 ones
/// are what cuda.h maps the plain names to).
struct DriverApi {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext *);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                                 void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
  CUresult (*cuMemHostRegister)(void *, size_t, unsigned);
  CUresult (*cuMemHostUnregister)(void *);
  // Optional: absent from older drivers.
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **,
                               void **);
  CUresult (*cuMemPrefetchAsyncV2)(CUdeviceptr, size_t, CUmemLocation, unsigned,
                                   CUstream);
  CUresult (*cuMemPrefetchAsyncV1)(CUdeviceptr, size_t, CUdevice, CUstream);
};

struct Symbol {
  const char *name;
  void **slot;
  bool required;
};

std::vector<Symbol> symbolsOf(DriverApi &api) {
  auto slot = [](auto &member) { return reinterpret_cast<void **>(&member); };
  return {
      {"cuInit", slot(api.cuInit), true},
      {"cuGetErrorName", slot(api.cuGetErrorName), true},
      {"cuGetErrorString", slot(api.cuGetErrorString), true},
      {"cuDeviceGet", slot(api.cuDeviceGet), true},
      {"cuDeviceGetAttribute", slot(api.cuDeviceGetAttribute), true},
      {"cuDevicePrimaryCtxRetain", slot(api.cuDevicePrimaryCtxRetain), true},
      {"cuCtxPushCurrent_v2", slot(api.cuCtxPushCurrent), true},
      {"cuCtxPopCurrent_v2", slot(api.cuCtxPopCurrent), true},
      {"cuModuleLoadData", slot(api.cuModuleLoadData), true},
      {"cuModuleLoadDataEx", slot(api.cuModuleLoadDataEx), true},
      {"cuModuleUnload", slot(api.cuModuleUnload), true},
      {"cuModuleGetFunction", slot(api.cuModuleGetFunction), true},
      {"cuFuncSetAttribute", slot(api.cuFuncSetAttribute), true},
      {"cuLaunchKernel", slot(api.cuLaunchKernel), true},
      {"cuStreamCreate", slot(api.cuStreamCreate), true},
      {"cuStreamDestroy_v2", slot(api.cuStreamDestroy), true},
      {"cuStreamSynchronize", slot(api.cuStreamSynchronize), true},
      {"cuStreamWaitEvent", slot(api.cuStreamWaitEvent), true},
      {"cuEventCreate", slot(api.cuEventCreate), true},
      {"cuEventDestroy_v2", slot(api.cuEventDestroy), true},
      {"cuEventSynchronize", slot(api.cuEventSynchronize), true},
      {"cuEventRecord", slot(api.cuEventRecord), true},
      {"cuMemAlloc_v2", slot(api.cuMemAlloc), true},
      {"cuMemAllocManaged", slot(api.cuMemAllocManaged), true},
      {"cuMemFree_v2", slot(api.cuMemFree), true},
      {"cuMemcpyAsync", slot(api.cuMemcpyAsync), true},
      {"cuMemsetD32Async", slot(api.cuMemsetD32Async), true},
      {"cuMemsetD16Async", slot(api.cuMemsetD16Async), true},
      {"cuMemHostRegister_v2", slot(api.cuMemHostRegister), true},
      {"cuMemHostUnregister", slot(api.cuMemHostUnregister), true},
      {"cuLaunchKernelEx", slot(api.cuLaunchKernelEx), false},
      {"cuMemPrefetchAsync_v2", slot(api.cuMemPrefetchAsyncV2), false},
      {"cuMemPrefetchAsync", slot(api.cuMemPrefetchAsyncV1), false},
  };
}

const char *const kLoadPrefix =
    "this model was compiled for NVIDIA GPUs (--target=nvptx), but ";
const char *const kLoadAdvice = "; run it on a machine with an NVIDIA GPU "
                                "and driver, or compile it with --target=cpu";

/// The process's driver state. Never destroyed: modules are unloaded and
/// buffers freed from static destructors.
struct Driver {
  std::mutex mutex;
  /// Set once initialization has been attempted; `failure` then holds its
  /// sentence, empty on success.
  bool attempted = false;
  std::string failure;
  std::atomic<bool> ready{false};
  void *library = nullptr;
  DriverApi api = {};
  /// The ordinal mgpuSetDefaultDevice asked for before initialization.
  int requestedOrdinal = -1;
  int ordinal = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
  bool concurrentManagedAccess = false;

  /// The first error of the current run.
  std::mutex errorMutex;
  std::string error;
  std::atomic<bool> hasError{false};

  /// The names of the functions mgpuModuleGetFunction returned, for
  /// messages.
  std::mutex namesMutex;
  std::unordered_map<CUfunction, std::string> functionNames;
  /// The last function launched, for errors a synchronization reports.
  std::atomic<CUfunction> lastLaunched{nullptr};
};

Driver &driver() {
  static Driver *instance = new Driver();
  return *instance;
}

const DriverApi &api() { return driver().api; }

/// "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)".
std::string describe(CUresult result) {
  const char *name = nullptr, *text = nullptr;
  if (api().cuGetErrorName)
    api().cuGetErrorName(result, &name);
  if (api().cuGetErrorString)
    api().cuGetErrorString(result, &text);
  std::string out =
      name ? std::string(name) : "CUDA error " + std::to_string(result);
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

/// Records "<what> failed: <error>" when `result` is an error; returns
/// whether it succeeded.
bool check(CUresult result, const std::string &what) {
  if (result == CUDA_SUCCESS)
    return true;
  gpu::recordError(what + " failed: " + describe(result));
  return false;
}

/// Records that `call` ran without an initialized driver (a GPU kernel in a
/// model that was not loaded as one); returns whether the driver is ready.
bool requireDriver(const char *call) {
  if (driver().ready.load(std::memory_order_acquire))
    return true;
  gpu::recordError(std::string(call) +
                   ": the CUDA driver is not initialized (GPU code ran in a "
                   "model that was not loaded as a GPU model)");
  return false;
}

/// Makes the device's primary context current for its lifetime.
class ContextScope {
public:
  ContextScope() {
    pushed =
        check(api().cuCtxPushCurrent(driver().context), "cuCtxPushCurrent");
  }
  ~ContextScope() {
    if (pushed) {
      CUcontext previous;
      api().cuCtxPopCurrent(&previous);
    }
  }
  ContextScope(const ContextScope &) = delete;
  ContextScope &operator=(const ContextScope &) = delete;

private:
  bool pushed = false;
};

std::string functionName(CUfunction function) {
  Driver &d = driver();
  std::lock_guard<std::mutex> lock(d.namesMutex);
  auto it = d.functionNames.find(function);
  return it == d.functionNames.end() ? std::string("<unknown kernel>")
                                     : it->second;
}

/// Parses a non-negative int; false for anything else.
bool parseOrdinal(const char *text, int *out) {
  char *end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 0 || value > 1 << 20)
    return false;
  *out = static_cast<int>(value);
  return true;
}

/// Initializes `d` (its mutex held); returns the failure sentence, or "".
std::string initialize(Driver &d) {
  const char *path = std::getenv("SEQC_CUDA_DRIVER");
  if (!path || !*path)
    path = "libcuda.so.1";
  d.library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!d.library) {
    const char *why = dlerror();
    return std::string("the CUDA driver cannot be loaded (") +
           (why ? why : path) + ")";
  }
  for (const Symbol &symbol : symbolsOf(d.api)) {
    *symbol.slot = dlsym(d.library, symbol.name);
    if (!*symbol.slot && symbol.required)
      return std::string("the CUDA driver ") + path + " has no " + symbol.name +
             " (it is too old or not a CUDA driver)";
  }
  if (CUresult result = d.api.cuInit(0))
    return "cuInit failed: " + describe(result);
  d.ordinal = d.requestedOrdinal >= 0 ? d.requestedOrdinal : 0;
  if (const char *env = std::getenv("SEQC_CUDA_DEVICE")) {
    if (!parseOrdinal(env, &d.ordinal))
      return std::string("SEQC_CUDA_DEVICE='") + printableText(env) +
             "' is not a device ordinal";
  }
  if (CUresult result = d.api.cuDeviceGet(&d.device, d.ordinal))
    return "cuDeviceGet(" + std::to_string(d.ordinal) +
           ") failed: " + describe(result);
  int managed = 0, concurrent = 0;
  if (CUresult result = d.api.cuDeviceGetAttribute(
          &managed, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, d.device))
    return "cuDeviceGetAttribute failed: " + describe(result);
  if (!managed)
    return "CUDA device " + std::to_string(d.ordinal) +
           " does not support managed memory, which GPU models keep their "
           "buffers in";
  if (CUresult result = d.api.cuDeviceGetAttribute(
          &concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, d.device))
    return "cuDeviceGetAttribute failed: " + describe(result);
  d.concurrentManagedAccess = concurrent != 0;
  if (CUresult result = d.api.cuDevicePrimaryCtxRetain(&d.context, d.device))
    return "cuDevicePrimaryCtxRetain(device " + std::to_string(d.ordinal) +
           ") failed: " + describe(result);
  return "";
}

/// The thread's ManagedAllocationScope depth (a plain int: no destructor,
/// so it is usable from static destructors).
thread_local int managedScopeDepth = 0;

} // namespace

//===----------------------------------------------------------------------===//
// The runtime's interface (Gpu.h)
//===----------------------------------------------------------------------===//

seqc_status *gpu::initDriver() {
  Driver &d = driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  if (!d.attempted) {
    d.attempted = true;
    d.failure = initialize(d);
    if (d.failure.empty()) {
      d.ready.store(true, std::memory_order_release);
    } else {
      if (d.library)
        dlclose(d.library);
      d.library = nullptr;
      d.api = DriverApi();
    }
  }
  if (d.failure.empty())
    return nullptr;
  return makeStatus(SEQC_STATUS_UNAVAILABLE, "%s%s%s", kLoadPrefix,
                    d.failure.c_str(), kLoadAdvice);
}

bool gpu::driverReady() {
  return driver().ready.load(std::memory_order_acquire);
}

void *gpu::allocateManaged(size_t bytes, size_t alignment) {
  if (!requireDriver("cuMemAllocManaged"))
    return nullptr;
  ContextScope context;
  CUdeviceptr pointer = 0;
  if (!check(api().cuMemAllocManaged(&pointer, bytes ? bytes : 1,
                                     CU_MEM_ATTACH_GLOBAL),
             "cuMemAllocManaged of " + std::to_string(bytes) + " bytes"))
    return nullptr;
  if (alignment > 1 && pointer % alignment != 0) {
    api().cuMemFree(pointer);
    recordError("cuMemAllocManaged returned memory aligned to less than the " +
                std::to_string(alignment) + " bytes the model asks for");
    return nullptr;
  }
  return reinterpret_cast<void *>(static_cast<uintptr_t>(pointer));
}

void gpu::freeManaged(void *block) {
  if (!block || !driverReady())
    return;
  CUresult result = api().cuMemFree(
      static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(block)));
  // At exit the driver may be torn down before the last buffers are freed.
  if (result != CUDA_ERROR_DEINITIALIZED)
    check(result, "cuMemFree");
}

void gpu::prefetchToDevice(const void *data, size_t bytes) {
  Driver &d = driver();
  if (!data || !bytes || !driverReady() || !d.concurrentManagedAccess)
    return;
  auto pointer = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(data));
  ContextScope context;
  if (d.api.cuMemPrefetchAsyncV2) {
    CUmemLocation location = {CU_MEM_LOCATION_TYPE_DEVICE, d.device};
    d.api.cuMemPrefetchAsyncV2(pointer, bytes, location, 0, nullptr);
  } else if (d.api.cuMemPrefetchAsyncV1) {
    d.api.cuMemPrefetchAsyncV1(pointer, bytes, d.device, nullptr);
  }
}

gpu::ManagedAllocationScope::ManagedAllocationScope() { ++managedScopeDepth; }
gpu::ManagedAllocationScope::~ManagedAllocationScope() { --managedScopeDepth; }
bool gpu::managedAllocationActive() { return managedScopeDepth > 0; }

void gpu::recordError(std::string message) {
  Driver &d = driver();
  std::lock_guard<std::mutex> lock(d.errorMutex);
  if (!d.error.empty())
    return;
  d.error = std::move(message);
  d.hasError.store(true, std::memory_order_release);
}

std::string gpu::takeError() {
  Driver &d = driver();
  if (!d.hasError.load(std::memory_order_acquire))
    return "";
  std::lock_guard<std::mutex> lock(d.errorMutex);
  std::string error = std::move(d.error);
  d.error.clear();
  d.hasError.store(false, std::memory_order_release);
  return error;
}

namespace {
/// A module image recorded by mgpuModuleLoad(JIT), loaded on first use.
struct LazyModule {
  const void *image = nullptr;
  size_t size = 0;
  bool jit = false;
  int optLevel = 0;
  std::mutex mutex;
  CUmodule module = nullptr;
  /// Set when loading failed: the error is recorded once.
  bool failed = false;
  std::unordered_map<std::string, CUfunction> functions;
};

/// Every LazyModule alive, so that resetForTesting can forget their
/// driver handles.
std::mutex &modulesMutex() {
  static std::mutex *instance = new std::mutex();
  return *instance;
}
std::vector<LazyModule *> &liveModules() {
  static auto *instance = new std::vector<LazyModule *>();
  return *instance;
}

LazyModule *recordModule(const void *image, size_t size, bool jit,
                         int optLevel) {
  auto *module = new LazyModule();
  module->image = image;
  module->size = size;
  module->jit = jit;
  module->optLevel = optLevel;
  std::lock_guard<std::mutex> lock(modulesMutex());
  liveModules().push_back(module);
  return module;
}

/// Loads `module` (its mutex held) if it is not; false on failure.
bool ensureLoaded(LazyModule &module) {
  if (module.module)
    return true;
  if (module.failed)
    return false;
  ContextScope context;
  CUresult result;
  std::string log;
  if (module.jit) {
    char errorLog[8192] = {};
    int options[] = {CU_JIT_ERROR_LOG_BUFFER,
                     CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                     CU_JIT_OPTIMIZATION_LEVEL};
    void *values[] = {errorLog,
                      reinterpret_cast<void *>(uintptr_t(sizeof(errorLog))),
                      reinterpret_cast<void *>(
                          uintptr_t(static_cast<unsigned>(module.optLevel)))};
    result = api().cuModuleLoadDataEx(&module.module, module.image, 3, options,
                                      values);
    errorLog[sizeof(errorLog) - 1] = '\0';
    log = errorLog;
  } else {
    result = api().cuModuleLoadData(&module.module, module.image);
  }
  if (result == CUDA_SUCCESS)
    return true;
  module.module = nullptr;
  module.failed = true;
  std::string what = module.jit ? "cuModuleLoadDataEx of the model's PTX ("
                                  "JIT compilation by the driver)"
                                : "cuModuleLoadData of the model's GPU binary "
                                  "(" +
                                      std::to_string(module.size) + " bytes)";
  std::string message = what + " failed: " + describe(result);
  if (!log.empty())
    message += ": " + printableText(log, 2000);
  gpu::recordError(message);
  return false;
}
} // namespace

// The host code of a synchronous launch creates a stream, launches,
// synchronizes and destroys the stream, once per kernel. The streams are
// idle when destroyed, so each thread keeps them for its next launches:
// cuStreamCreate and cuStreamDestroy cost microseconds per launch otherwise.
namespace {
struct StreamPool {
  std::vector<CUstream> idle;
  /// Destroys the idle streams (while the driver is loaded).
  void drain() {
    if (gpu::driverReady())
      for (CUstream stream : idle)
        api().cuStreamDestroy(stream);
    idle.clear();
  }
  // At thread exit; at process exit the driver may be gone already, and it
  // releases the streams itself.
  ~StreamPool() { drain(); }
};
thread_local StreamPool streamPool;
constexpr size_t kMaxIdleStreams = 8;
} // namespace

void gpu::resetForTesting() {
  Driver &d = driver();
  // The calling thread's idle streams belong to this driver instance.
  streamPool.drain();
  // Cached managed blocks belong to this driver instance.
  trimBufferCache();
  {
    std::lock_guard<std::mutex> lock(modulesMutex());
    for (LazyModule *module : liveModules()) {
      std::lock_guard<std::mutex> moduleLock(module->mutex);
      if (module->module && driverReady()) {
        ContextScope context;
        api().cuModuleUnload(module->module);
      }
      module->module = nullptr;
      module->failed = false;
      module->functions.clear();
    }
  }
  std::lock_guard<std::mutex> lock(d.mutex);
  if (d.library)
    dlclose(d.library);
  d.library = nullptr;
  d.api = DriverApi();
  d.attempted = false;
  d.failure.clear();
  d.ready.store(false);
  d.requestedOrdinal = -1;
  d.context = nullptr;
  d.concurrentManagedAccess = false;
  d.lastLaunched.store(nullptr);
  {
    std::lock_guard<std::mutex> namesLock(d.namesMutex);
    d.functionNames.clear();
  }
  takeError();
}

//===----------------------------------------------------------------------===//
// The functions gpu-to-llvm emits calls to
//===----------------------------------------------------------------------===//

namespace {

/// Launches `function` with cuLaunchKernel or, with a cluster shape,
/// cuLaunchKernelEx; records failures.
void launch(CUfunction function, const intptr_t *cluster, intptr_t gridX,
            intptr_t gridY, intptr_t gridZ, intptr_t blockX, intptr_t blockY,
            intptr_t blockZ, int32_t smem, CUstream stream, void **params,
            void **extra) {
  Driver &d = driver();
  // After an error, the results of the rest of the run are meaningless:
  // skip the work and report the first error.
  if (d.hasError.load(std::memory_order_acquire))
    return;
  if (!requireDriver("mgpuLaunchKernel"))
    return;
  if (!function) {
    gpu::recordError("mgpuLaunchKernel: no kernel function");
    return;
  }
  // Messages are built only on failure: a launch stays cheap.
  auto shape = [&] {
    return "grid " + std::to_string(gridX) + "x" + std::to_string(gridY) + "x" +
           std::to_string(gridZ) + ", block " + std::to_string(blockX) + "x" +
           std::to_string(blockY) + "x" + std::to_string(blockZ);
  };
  auto kernel = [&] { return "'" + functionName(function) + "'"; };
  intptr_t dims[6] = {gridX, gridY, gridZ, blockX, blockY, blockZ};
  for (intptr_t dim : dims) {
    if (dim < 1 || dim > intptr_t(UINT32_MAX)) {
      gpu::recordError("kernel " + kernel() + " launched with " + shape() +
                       ": every size must be in [1, 2^32)");
      return;
    }
  }
  if (smem < 0) {
    gpu::recordError("kernel " + kernel() + " launched with " +
                     std::to_string(smem) + " bytes of shared memory");
    return;
  }
  ContextScope context;
  // Dynamic shared memory above the default 48 KiB must be opted into.
  if (smem > 0) {
    CUresult result = d.api.cuFuncSetAttribute(
        function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem);
    if (result != CUDA_SUCCESS) {
      gpu::recordError("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES = " +
                       std::to_string(smem) + ") of " + kernel() +
                       " failed: " + describe(result));
      return;
    }
  }
  d.lastLaunched.store(function, std::memory_order_relaxed);
  auto failed = [&](const char *call, CUresult result) {
    gpu::recordError(std::string(call) + " of " + kernel() + " (" + shape() +
                     ", " + std::to_string(smem) +
                     " bytes of shared memory) failed: " + describe(result));
  };
  if (!cluster) {
    if (CUresult result = d.api.cuLaunchKernel(
            function, unsigned(gridX), unsigned(gridY), unsigned(gridZ),
            unsigned(blockX), unsigned(blockY), unsigned(blockZ),
            unsigned(smem), stream, params, extra))
      failed("cuLaunchKernel", result);
    return;
  }
  if (!d.api.cuLaunchKernelEx) {
    gpu::recordError("kernel " + kernel() +
                     " uses thread-block clusters, but this CUDA driver has "
                     "no cuLaunchKernelEx (CUDA 12 or later is needed)");
    return;
  }
  for (int i = 0; i < 3; ++i) {
    if (cluster[i] < 1 || cluster[i] > intptr_t(UINT32_MAX)) {
      gpu::recordError("kernel " + kernel() + " launched with a cluster size " +
                       std::to_string(cluster[i]) + " outside [1, 2^32)");
      return;
    }
  }
  CUlaunchAttribute attributes[2] = {};
  attributes[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attributes[0].value.clusterDim.x = unsigned(cluster[0]);
  attributes[0].value.clusterDim.y = unsigned(cluster[1]);
  attributes[0].value.clusterDim.z = unsigned(cluster[2]);
  attributes[1].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
  attributes[1].value.clusterSchedulingPolicyPreference =
      CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
  CUlaunchConfig config = {};
  config.gridDimX = unsigned(gridX);
  config.gridDimY = unsigned(gridY);
  config.gridDimZ = unsigned(gridZ);
  config.blockDimX = unsigned(blockX);
  config.blockDimY = unsigned(blockY);
  config.blockDimZ = unsigned(blockZ);
  config.sharedMemBytes = unsigned(smem);
  config.hStream = stream;
  config.attrs = attributes;
  config.numAttrs = 2;
  if (CUresult result =
          d.api.cuLaunchKernelEx(&config, function, params, extra))
    failed("cuLaunchKernelEx", result);
}

/// " after kernel 'k' (...)" when a kernel was launched, for errors that a
/// synchronization reports on its behalf. A call's launches are queued on
/// one stream and synchronized once, so the fault may come from any kernel
/// queued since the last synchronization, not only the last one;
/// CUDA_LAUNCH_BLOCKING=1 makes the driver run each launch to its end,
/// which names the one that faulted.
std::string afterLastKernel() {
  CUfunction last = driver().lastLaunched.load(std::memory_order_relaxed);
  return last ? " after kernel '" + functionName(last) +
                    "' (the last one queued; CUDA_LAUNCH_BLOCKING=1 names "
                    "the one that failed)"
              : "";
}

CUdeviceptr devicePointer(const void *pointer) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(pointer));
}

/// The bytes of a dense memref descriptor {allocated, aligned, offset,
/// sizes[rank], strides[rank]} and its first element, or false (recorded)
/// for a strided one.
bool denseMemRef(int64_t rank, const void *descriptor, int64_t elementBytes,
                 char **data, size_t *bytes, const char *call) {
  const char *const *pointers = static_cast<const char *const *>(descriptor);
  const int64_t *words = static_cast<const int64_t *>(descriptor);
  int64_t offset = words[2];
  const int64_t *sizes = words + 3, *strides = words + 3 + rank;
  int64_t expected = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (sizes[d] != 1 && strides[d] != expected) {
      gpu::recordError(std::string(call) +
                       ": only row-major contiguous memrefs can be "
                       "registered");
      return false;
    }
    expected *= sizes[d];
  }
  *data = const_cast<char *>(pointers[1]) + offset * elementBytes;
  *bytes = static_cast<size_t>(expected * elementBytes);
  return true;
}

} // namespace

extern "C" {

/// Records a cubin or fatbin image (format=bin/fatbin); loaded lazily.
void *mgpuModuleLoad(void *data, size_t size) {
  return recordModule(data, size, /*jit=*/false, 0);
}

/// Records PTX text (format=isa) the driver compiles at first use.
void *mgpuModuleLoadJIT(void *data, int optLevel) {
  const char *text = static_cast<const char *>(data);
  return recordModule(data, text ? std::strlen(text) + 1 : 0, /*jit=*/true,
                      optLevel);
}

void mgpuModuleUnload(void *handle) {
  auto *module = static_cast<LazyModule *>(handle);
  if (!module)
    return;
  {
    std::lock_guard<std::mutex> lock(modulesMutex());
    auto &modules = liveModules();
    for (size_t i = 0; i < modules.size(); ++i) {
      if (modules[i] == module) {
        modules[i] = modules.back();
        modules.pop_back();
        break;
      }
    }
  }
  // Runs from a global destructor: the driver may already be torn down.
  if (module->module && gpu::driverReady()) {
    CUresult result = api().cuModuleUnload(module->module);
    if (result != CUDA_ERROR_DEINITIALIZED)
      check(result, "cuModuleUnload");
  }
  delete module;
}

void *mgpuModuleGetFunction(void *handle, const char *name) {
  auto *module = static_cast<LazyModule *>(handle);
  if (!module || !name) {
    gpu::recordError("mgpuModuleGetFunction: no module or name");
    return nullptr;
  }
  if (!requireDriver("mgpuModuleGetFunction"))
    return nullptr;
  std::lock_guard<std::mutex> lock(module->mutex);
  auto it = module->functions.find(name);
  if (it != module->functions.end())
    return it->second;
  if (!ensureLoaded(*module))
    return nullptr;
  CUfunction function = nullptr;
  {
    ContextScope context;
    if (!check(api().cuModuleGetFunction(&function, module->module, name),
               std::string("cuModuleGetFunction of '") + printableText(name) +
                   "'"))
      return nullptr;
  }
  module->functions.emplace(name, function);
  Driver &d = driver();
  std::lock_guard<std::mutex> namesLock(d.namesMutex);
  d.functionNames[function] = name;
  return function;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t /*paramsCount*/) {
  launch(static_cast<CUfunction>(function), nullptr, gridX, gridY, gridZ,
         blockX, blockY, blockZ, smem, static_cast<CUstream>(stream), params,
         extra);
}

void mgpuLaunchClusterKernel(void *function, intptr_t clusterX,
                             intptr_t clusterY, intptr_t clusterZ,
                             intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                             intptr_t blockX, intptr_t blockY, intptr_t blockZ,
                             int32_t smem, void *stream, void **params,
                             void **extra, size_t /*paramsCount*/) {
  intptr_t cluster[3] = {clusterX, clusterY, clusterZ};
  launch(static_cast<CUfunction>(function), cluster, gridX, gridY, gridZ,
         blockX, blockY, blockZ, smem, static_cast<CUstream>(stream), params,
         extra);
}

void *mgpuStreamCreate() {
  if (!requireDriver("mgpuStreamCreate"))
    return nullptr;
  if (!streamPool.idle.empty()) {
    CUstream stream = streamPool.idle.back();
    streamPool.idle.pop_back();
    return stream;
  }
  ContextScope context;
  CUstream stream = nullptr;
  check(api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
        "cuStreamCreate");
  return stream;
}

void mgpuStreamDestroy(void *stream) {
  if (!stream || !gpu::driverReady())
    return;
  if (streamPool.idle.size() < kMaxIdleStreams) {
    streamPool.idle.push_back(static_cast<CUstream>(stream));
    return;
  }
  check(api().cuStreamDestroy(static_cast<CUstream>(stream)),
        "cuStreamDestroy");
}

void mgpuStreamSynchronize(void *stream) {
  if (!stream || !gpu::driverReady())
    return;
  CUresult result = api().cuStreamSynchronize(static_cast<CUstream>(stream));
  if (result != CUDA_SUCCESS)
    gpu::recordError("cuStreamSynchronize" + afterLastKernel() +
                     " failed: " + describe(result));
}

void mgpuStreamWaitEvent(void *stream, void *event) {
  if (stream && event && gpu::driverReady())
    check(api().cuStreamWaitEvent(static_cast<CUstream>(stream),
                                  static_cast<CUevent>(event), 0),
          "cuStreamWaitEvent");
}

void *mgpuEventCreate() {
  if (!requireDriver("mgpuEventCreate"))
    return nullptr;
  ContextScope context;
  CUevent event = nullptr;
  check(api().cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  return event;
}

void mgpuEventDestroy(void *event) {
  if (event && gpu::driverReady())
    check(api().cuEventDestroy(static_cast<CUevent>(event)), "cuEventDestroy");
}

void mgpuEventSynchronize(void *event) {
  if (!event || !gpu::driverReady())
    return;
  CUresult result = api().cuEventSynchronize(static_cast<CUevent>(event));
  if (result != CUDA_SUCCESS)
    gpu::recordError("cuEventSynchronize" + afterLastKernel() +
                     " failed: " + describe(result));
}

void mgpuEventRecord(void *event, void *stream) {
  if (event && gpu::driverReady())
    check(api().cuEventRecord(static_cast<CUevent>(event),
                              static_cast<CUstream>(stream)),
          "cuEventRecord");
}

/// gpu.alloc: managed memory when host_shared, device memory otherwise.
void *mgpuMemAlloc(uint64_t sizeBytes, void * /*stream*/, bool isHostShared) {
  if (!requireDriver("mgpuMemAlloc") || sizeBytes == 0)
    return nullptr;
  ContextScope context;
  CUdeviceptr pointer = 0;
  std::string what =
      std::string(isHostShared ? "cuMemAllocManaged" : "cuMemAlloc") + " of " +
      std::to_string(sizeBytes) + " bytes";
  CUresult result = isHostShared ? api().cuMemAllocManaged(&pointer, sizeBytes,
                                                           CU_MEM_ATTACH_GLOBAL)
                                 : api().cuMemAlloc(&pointer, sizeBytes);
  if (!check(result, what))
    return nullptr;
  return reinterpret_cast<void *>(static_cast<uintptr_t>(pointer));
}

void mgpuMemFree(void *pointer, void * /*stream*/) {
  if (pointer && gpu::driverReady())
    check(api().cuMemFree(devicePointer(pointer)), "cuMemFree");
}

void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream) {
  if (sizeBytes == 0 || !requireDriver("mgpuMemcpy"))
    return;
  ContextScope context;
  check(api().cuMemcpyAsync(devicePointer(dst), devicePointer(src), sizeBytes,
                            static_cast<CUstream>(stream)),
        "cuMemcpyAsync of " + std::to_string(sizeBytes) + " bytes");
}

void mgpuMemset32(void *dst, unsigned value, size_t count, void *stream) {
  if (count == 0 || !requireDriver("mgpuMemset32"))
    return;
  ContextScope context;
  check(api().cuMemsetD32Async(devicePointer(dst), value, count,
                               static_cast<CUstream>(stream)),
        "cuMemsetD32Async");
}

void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream) {
  if (count == 0 || !requireDriver("mgpuMemset16"))
    return;
  ContextScope context;
  check(api().cuMemsetD16Async(devicePointer(dst), value, count,
                               static_cast<CUstream>(stream)),
        "cuMemsetD16Async");
}

void mgpuMemHostRegister(void *pointer, uint64_t sizeBytes) {
  if (!pointer || sizeBytes == 0 || !requireDriver("mgpuMemHostRegister"))
    return;
  ContextScope context;
  check(api().cuMemHostRegister(pointer, sizeBytes, 0), "cuMemHostRegister");
}

void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                               int64_t elementSizeBytes) {
  char *data;
  size_t bytes;
  if (denseMemRef(rank, descriptor, elementSizeBytes, &data, &bytes,
                  "mgpuMemHostRegisterMemRef"))
    mgpuMemHostRegister(data, bytes);
}

void mgpuMemHostUnregister(void *pointer) {
  if (!pointer || !requireDriver("mgpuMemHostUnregister"))
    return;
  ContextScope context;
  check(api().cuMemHostUnregister(pointer), "cuMemHostUnregister");
}

void mgpuMemHostUnregisterMemRef(int64_t /*rank*/, void *descriptor,
                                 int64_t elementSizeBytes) {
  const int64_t *words = static_cast<const int64_t *>(descriptor);
  char *aligned;
  std::memcpy(&aligned, &words[1], sizeof(aligned));
  mgpuMemHostUnregister(aligned + words[2] * elementSizeBytes);
}

/// Chooses the device before the driver is initialized (after, a different
/// device is an error: the model's buffers live in the first one's
/// context).
void mgpuSetDefaultDevice(int32_t device) {
  Driver &d = driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  if (!d.attempted) {
    d.requestedOrdinal = device;
    return;
  }
  if (d.ready.load() && device != d.ordinal)
    gpu::recordError("mgpuSetDefaultDevice(" + std::to_string(device) +
                     "): the runtime already uses CUDA device " +
                     std::to_string(d.ordinal) +
                     " (choose it with SEQC_CUDA_DEVICE)");
}

} // extern "C"
