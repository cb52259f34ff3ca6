//===- GpuTest.cpp - GPU models up to the CUDA driver boundary ------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Runs the fake GPU model (FakeGpuModel.c) through the runtime with the fake
// driver (FakeCuda.c, a libcuda.so.1 chosen with SEQC_CUDA_DRIVER): driver
// initialization and its errors, lazy module loading, managed memory for
// arguments and allocations, launches and the errors they record. The
// model's global constructors have recorded its modules by the time a test
// runs, so the first test also checks that they made no driver call.
//
//===----------------------------------------------------------------------===//

#include "Gpu.h"
#include "Buffers.h"
#include "FakeCuda.h"
#include "FakeModels.h"
#include "Manifest.h"
#include "TestUtil.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <vector>

extern "C" void *_mlir_memref_to_llvm_alloc(size_t size);
extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t size);
extern "C" void _mlir_memref_to_llvm_free(void *ptr);

using namespace seqc;
using namespace seqc::test;

namespace {

const char *const kSentenceStart =
    "this model was compiled for NVIDIA GPUs (--target=nvptx), but ";
const char *const kAdvice = "; run it on a machine with an NVIDIA GPU and "
                            "driver, or compile it with --target=cpu";

/// Whether the fake driver is loaded in this process.
bool fakeDriverLoaded() {
  void *handle = dlopen(SEQC_FAKE_CUDA, RTLD_NOW | RTLD_NOLOAD);
  if (handle)
    dlclose(handle);
  return handle != nullptr;
}

/// What the fake driver the runtime loaded has seen (NULL if not loaded).
const fake_cuda_stats *stats() {
  void *handle = dlopen(SEQC_FAKE_CUDA, RTLD_NOW | RTLD_NOLOAD);
  if (!handle)
    return nullptr;
  auto get = reinterpret_cast<const fake_cuda_stats *(*)()>(
      dlsym(handle, "fake_cuda_get_stats"));
  const fake_cuda_stats *result = get ? get() : nullptr;
  dlclose(handle); // The runtime's handle keeps it loaded.
  return result;
}

class Gpu : public ::testing::Test {
protected:
  void SetUp() override {
    gpu::resetForTesting();
    setenv("SEQC_CUDA_DRIVER", SEQC_FAKE_CUDA, 1);
    fake_gpu_kernel = "fake_scale_by";
    fake_gpu_bad_module = 0;
  }
  void TearDown() override {
    if (model)
      seqc_model_free(model);
    model = nullptr;
    for (const char *name : {"SEQC_CUDA_DRIVER", "SEQC_CUDA_DEVICE",
                             "FAKE_CUDA_FAIL", "FAKE_CUDA_DEVICES"})
      unsetenv(name);
    gpu::resetForTesting();
  }

  /// Loads the GPU model with w = `factor`.
  ::testing::AssertionResult load(float factor = 2.5f) {
    seqc_status *status =
        seqc_model_load_from(FAKE_GPU_MANIFEST, fake_gpu_invoke, &model);
    if (status)
      return isOk(status);
    weight = factor;
    seqc_tensor w = makeTensor(SEQC_DTYPE_F32, {1}, &weight);
    return isOk(seqc_model_set_param(model, "w", &w));
  }

  /// Binds x = 0, 1, ..., n - 1 and runs.
  seqc_status *run(int64_t n) {
    x.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      x[static_cast<size_t>(i)] = static_cast<float>(i);
    seqc_tensor t = makeTensor(SEQC_DTYPE_F32, {n}, x.data());
    if (seqc_status *status = seqc_model_set_input(model, "x", &t))
      return status;
    return seqc_model_run(model);
  }

  /// Checks y = x * weight.
  void expectScaled() {
    seqc_tensor y;
    ASSERT_TRUE(isOk(seqc_model_get_output(model, "y", &y)));
    ASSERT_EQ(y.shape[0], static_cast<int64_t>(x.size()));
    const float *data = static_cast<const float *>(y.data);
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(data[i], x[i] * weight) << "at " << i;
  }

  seqc_model *model = nullptr;
  float weight = 0;
  std::vector<float> x;
};

TEST(GpuManifest, ParsesTheTarget) {
  auto withTarget = [](const std::string &target) {
    return "{\"model\": \"m\"" + target + ", \"inputs\": [], \"outputs\": []}";
  };
  Manifest manifest;
  ASSERT_TRUE(isOk(parseManifest(withTarget(""), &manifest)));
  EXPECT_EQ(manifest.target, Target::CPU);
  Manifest nvptx;
  ASSERT_TRUE(
      isOk(parseManifest(withTarget(", \"target\": \"nvptx\""), &nvptx)));
  EXPECT_EQ(nvptx.target, Target::NVPTX);
  Manifest cpu;
  ASSERT_TRUE(isOk(parseManifest(withTarget(", \"target\": \"cpu\""), &cpu)));
  EXPECT_EQ(cpu.target, Target::CPU);
  Manifest bad;
  EXPECT_TRUE(failsWith(
      parseManifest(withTarget(", \"target\": \"rocm\""), &bad),
      SEQC_STATUS_INVALID_MANIFEST,
      {"invalid manifest: unknown target 'rocm'", "\"cpu\" or \"nvptx\""}));
  EXPECT_TRUE(failsWith(parseManifest(withTarget(", \"target\": 1"), &bad),
                        SEQC_STATUS_INVALID_MANIFEST,
                        {"\"target\" must be a string"}));
}

TEST_F(Gpu, TheDriverIsLoadedOnlyWhenAGpuModelIs) {
  // The model's constructors recorded its modules: no driver yet.
  EXPECT_FALSE(fakeDriverLoaded());
  seqc_model *cpuModel = nullptr;
  ASSERT_TRUE(isOk(
      seqc_model_load_from(FAKE_ADD_MANIFEST, fake_add_invoke, &cpuModel)));
  EXPECT_FALSE(fakeDriverLoaded());
  seqc_model_free(cpuModel);

  ASSERT_TRUE(load());
  ASSERT_TRUE(fakeDriverLoaded());
  const fake_cuda_stats *s = stats();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->init_calls, 1);
  EXPECT_EQ(s->device, 0);
  // Modules load at their first use.
  EXPECT_EQ(s->modules_loaded, 0);
  ASSERT_TRUE(isOk(run(300)));
  expectScaled();
  EXPECT_EQ(s->modules_loaded, 1);
  EXPECT_EQ(s->init_calls, 1);
}

TEST_F(Gpu, LaunchesThroughTheDriver) {
  ASSERT_TRUE(load(2.5f));
  ASSERT_TRUE(isOk(run(300)));
  expectScaled();
  const fake_cuda_stats *s = stats();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->launches, 1);
  EXPECT_STREQ(s->last_kernel, "fake_scale_by");
  EXPECT_EQ(s->last_grid[0], 3u);
  EXPECT_EQ(s->last_grid[1], 1u);
  EXPECT_EQ(s->last_block[0], 128u);
  EXPECT_EQ(s->last_smem, 0u);
  EXPECT_EQ(s->synchronizations, 1);
  // The launch's stream, idle after it, is kept for the next launch.
  EXPECT_LE(s->live_streams, 1);
  const int streams = s->live_streams;
  // The weights were uploaded to managed memory and prefetched, once.
  EXPECT_EQ(s->prefetches, 1);
  EXPECT_EQ(s->prefetched_bytes, sizeof(float));

  ASSERT_TRUE(isOk(run(1000)));
  expectScaled();
  EXPECT_EQ(s->launches, 2);
  EXPECT_EQ(s->live_streams, streams);
  EXPECT_EQ(s->last_grid[0], 8u);
  EXPECT_EQ(s->prefetches, 1);
  EXPECT_EQ(s->modules_loaded, 1);

  // New weights are uploaded again.
  weight = -1.0f;
  seqc_tensor w = makeTensor(SEQC_DTYPE_F32, {1}, &weight);
  ASSERT_TRUE(isOk(seqc_model_set_param(model, "w", &w)));
  ASSERT_TRUE(isOk(run(5)));
  expectScaled();
  EXPECT_EQ(s->prefetches, 2);
}

TEST_F(Gpu, HostMemoryWouldFault) {
  // The fake kernel rejects pointers outside managed memory: calling the
  // model with host buffers, as a CPU model is called, fails.
  ASSERT_TRUE(load());
  std::vector<float> hostX(4, 1.0f);
  float hostW = 1.0f;
  int64_t xDesc[5], wDesc[5];
  auto describe = [](int64_t *desc, float *data, int64_t n) {
    std::memcpy(&desc[0], &data, sizeof(data));
    std::memcpy(&desc[1], &data, sizeof(data));
    desc[2] = 0;
    desc[3] = n;
    desc[4] = 1;
  };
  describe(xDesc, hostX.data(), 4);
  describe(wDesc, &hostW, 1);
  int64_t result[5] = {};
  void *args[4] = {result, xDesc, wDesc, nullptr};
  {
    gpu::ManagedAllocationScope managed;
    fake_gpu_invoke(args);
  }
  std::string error = gpu::takeError();
  EXPECT_NE(error.find("cuLaunchKernel of 'fake_scale_by' (grid 1x1x1, "
                       "block 128x1x1, 0 bytes of shared memory) failed: "
                       "CUDA_ERROR_ILLEGAL_ADDRESS"),
            std::string::npos)
      << error;
  void *y;
  std::memcpy(&y, &result[0], sizeof(y));
  EXPECT_TRUE(isManagedBuffer(y));
  releaseModelBuffer(y);
}

TEST_F(Gpu, ManagedAllocationsAreCached) {
  ASSERT_TRUE(load());
  const fake_cuda_stats *s = stats();
  ASSERT_TRUE(s);
  trimBufferCache();
  int before = s->managed_allocations;
  int liveBefore = s->live_managed_blocks;

  void *outside = _mlir_memref_to_llvm_alloc(1 << 20);
  EXPECT_FALSE(isManagedBuffer(outside));
  _mlir_memref_to_llvm_free(outside);
  EXPECT_EQ(s->managed_allocations, before);

  void *big, *small, *aligned;
  {
    gpu::ManagedAllocationScope managed;
    EXPECT_TRUE(gpu::managedAllocationActive());
    big = _mlir_memref_to_llvm_alloc(1 << 20);
    small = _mlir_memref_to_llvm_alloc(100);
    aligned = _mlir_memref_to_llvm_aligned_alloc(64, 3000);
  }
  EXPECT_FALSE(gpu::managedAllocationActive());
  EXPECT_TRUE(isManagedBuffer(big));
  EXPECT_TRUE(isManagedBuffer(small));
  EXPECT_TRUE(isManagedBuffer(aligned));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned) % 64, 0u);
  EXPECT_EQ(s->managed_allocations, before + 3);
  // Freed blocks (even outside the scope) go back to the managed cache and
  // serve the next request of their class without a driver call.
  _mlir_memref_to_llvm_free(big);
  _mlir_memref_to_llvm_free(small);
  _mlir_memref_to_llvm_free(aligned);
  EXPECT_FALSE(isManagedBuffer(big));
  {
    gpu::ManagedAllocationScope managed;
    void *again = _mlir_memref_to_llvm_alloc((1 << 20) - 100);
    void *smallAgain = _mlir_memref_to_llvm_alloc(128);
    EXPECT_EQ(again, big);
    EXPECT_EQ(smallAgain, small);
    _mlir_memref_to_llvm_free(again);
    _mlir_memref_to_llvm_free(smallAgain);
  }
  EXPECT_EQ(s->managed_allocations, before + 3);
  EXPECT_GE(trimBufferCache(), size_t(1) << 20);
  EXPECT_EQ(s->live_managed_blocks, liveBefore);
  EXPECT_EQ(gpu::takeError(), "");

  // Managed memory is page-aligned; a larger alignment is an error (and
  // host memory, so that the host code goes on).
  {
    gpu::ManagedAllocationScope managed;
    void *over = _mlir_memref_to_llvm_aligned_alloc(8192, 100);
    EXPECT_FALSE(isManagedBuffer(over));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(over) % 8192, 0u);
    _mlir_memref_to_llvm_free(over);
  }
  EXPECT_NE(gpu::takeError().find("asks for 8192-byte alignment"),
            std::string::npos);
}

TEST_F(Gpu, NoDriverIsAClearLoadError) {
  setenv("SEQC_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  EXPECT_TRUE(failsWith(
      seqc_model_load_from(FAKE_GPU_MANIFEST, fake_gpu_invoke, &model),
      SEQC_STATUS_UNAVAILABLE,
      {kSentenceStart,
       "the CUDA driver cannot be loaded (/nonexistent/libcuda.so.1: cannot "
       "open shared object file",
       kAdvice}));
  EXPECT_EQ(model, nullptr);
  // The outcome is kept: a second load fails the same way.
  EXPECT_TRUE(failsWith(
      seqc_model_load_from(FAKE_GPU_MANIFEST, fake_gpu_invoke, &model),
      SEQC_STATUS_UNAVAILABLE, {"the CUDA driver cannot be loaded"}));
  // CPU models are unaffected.
  seqc_model *cpuModel = nullptr;
  ASSERT_TRUE(isOk(
      seqc_model_load_from(FAKE_ADD_MANIFEST, fake_add_invoke, &cpuModel)));
  seqc_model_free(cpuModel);
}

TEST_F(Gpu, DriverInitializationErrors) {
  setenv("FAKE_CUDA_FAIL", "cuInit=100", 1);
  EXPECT_TRUE(failsWith(
      seqc_model_load_from(FAKE_GPU_MANIFEST, fake_gpu_invoke, &model),
      SEQC_STATUS_UNAVAILABLE,
      {kSentenceStart,
       "cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is "
       "detected)",
       kAdvice}));
  unsetenv("FAKE_CUDA_FAIL");
  gpu::resetForTesting();

  setenv("SEQC_CUDA_DEVICE", "3", 1);
  EXPECT_TRUE(failsWith(
      seqc_model_load_from(FAKE_GPU_MANIFEST, fake_gpu_invoke, &model),
      SEQC_STATUS_UNAVAILABLE,
      {"cuDeviceGet(3) failed: CUDA_ERROR_INVALID_DEVICE"}));
  gpu::resetForTesting();

  setenv("SEQC_CUDA_DEVICE", "first", 1);
  EXPECT_TRUE(failsWith(
      seqc_model_load_from(FAKE_GPU_MANIFEST, fake_gpu_invoke, &model),
      SEQC_STATUS_UNAVAILABLE,
      {"SEQC_CUDA_DEVICE='first' is not a device ordinal"}));
  gpu::resetForTesting();

  setenv("SEQC_CUDA_DEVICE", "1", 1);
  setenv("FAKE_CUDA_DEVICES", "2", 1);
  ASSERT_TRUE(load());
  ASSERT_TRUE(stats());
  EXPECT_EQ(stats()->device, 1);
  ASSERT_TRUE(isOk(run(10)));
  expectScaled();
}

TEST_F(Gpu, ALaunchErrorFailsTheRun) {
  ASSERT_TRUE(load());
  setenv("FAKE_CUDA_FAIL", "cuLaunchKernel=719", 1);
  EXPECT_TRUE(failsWith(
      run(300), SEQC_STATUS_MODEL_ERROR,
      {"model 'gpu_scale' failed on the GPU: cuLaunchKernel of "
       "'fake_scale_by' (grid 3x1x1, block 128x1x1, 0 bytes of shared "
       "memory) failed: CUDA_ERROR_LAUNCH_FAILED (unspecified launch "
       "failure)"}));
  seqc_tensor y;
  EXPECT_TRUE(failsWith(seqc_model_get_output(model, "y", &y),
                        SEQC_STATUS_FAILED_PRECONDITION,
                        {"has not run successfully"}));
  // The error was the run's: the next one succeeds.
  unsetenv("FAKE_CUDA_FAIL");
  ASSERT_TRUE(isOk(run(300)));
  expectScaled();
}

TEST_F(Gpu, AFaultNamesTheKernel) {
  ASSERT_TRUE(load());
  fake_gpu_kernel = "fake_fault";
  EXPECT_TRUE(failsWith(run(4), SEQC_STATUS_MODEL_ERROR,
                        {"cuStreamSynchronize after kernel 'fake_fault' "
                         "(the last one queued; CUDA_LAUNCH_BLOCKING=1 names "
                         "the one that failed) failed: "
                         "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory "
                         "access was encountered)"}));
}

TEST_F(Gpu, ModuleErrors) {
  ASSERT_TRUE(load());
  fake_gpu_kernel = "missing_kernel";
  EXPECT_TRUE(failsWith(run(4), SEQC_STATUS_MODEL_ERROR,
                        {"cuModuleGetFunction of 'missing_kernel' failed: "
                         "CUDA_ERROR_NOT_FOUND"}));
  // The launch after the first error was skipped.
  ASSERT_TRUE(stats());
  EXPECT_EQ(stats()->launches, 0);

  fake_gpu_kernel = "fake_scale_by";
  fake_gpu_bad_module = 1;
  EXPECT_TRUE(failsWith(
      run(4), SEQC_STATUS_MODEL_ERROR,
      {"cuModuleLoadDataEx of the model's PTX (JIT compilation by the "
       "driver) failed: CUDA_ERROR_INVALID_IMAGE",
       ": ptxas fatal: fake syntax error"}));
  EXPECT_EQ(stats()->launches, 0);
}

TEST_F(Gpu, GpuCodeWithoutADriverIsAnError) {
  // A GPU model's code called without seqc_model_load (no driver).
  std::vector<float> hostX(4, 1.0f);
  float hostW = 1.0f;
  int64_t xDesc[5] = {0, 0, 0, 4, 1}, wDesc[5] = {0, 0, 0, 1, 1};
  float *xp = hostX.data(), *wp = &hostW;
  std::memcpy(&xDesc[1], &xp, sizeof(xp));
  std::memcpy(&wDesc[1], &wp, sizeof(wp));
  int64_t result[5] = {};
  void *args[4] = {result, xDesc, wDesc, nullptr};
  fake_gpu_invoke(args);
  EXPECT_NE(gpu::takeError().find("mgpuModuleGetFunction: the CUDA driver is "
                                  "not initialized"),
            std::string::npos);
  EXPECT_FALSE(fakeDriverLoaded());
  void *y;
  std::memcpy(&y, &result[0], sizeof(y));
  _mlir_memref_to_llvm_free(y);
}

} // namespace
