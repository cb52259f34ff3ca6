//===- Gpu.h - The CUDA driver behind models compiled for GPUs --*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Models compiled with `seqc --target=nvptx` call the `mgpu*` functions of
// MLIR's gpu-to-llvm lowering (module loading, kernel launches, streams);
// Gpu.cpp defines them over the CUDA driver API, which it loads with dlopen
// when the first GPU model is loaded, so that the runtime builds and links
// without CUDA and a process that never loads a GPU model never touches the
// driver. This header is the rest of the runtime's view of it: driver
// initialization, managed memory for the buffers GPU models use, and the
// first CUDA error a run recorded.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_RUNTIME_GPU_H
#define SEQC_RUNTIME_GPU_H

#include "seqc_runtime.h"

#include <cstddef>
#include <string>

namespace seqc::gpu {

/// Loads the CUDA driver (libcuda.so.1, or $SEQC_CUDA_DRIVER), initializes
/// it and retains the primary context of device 0 (or $SEQC_CUDA_DEVICE).
/// Idempotent: the first call's outcome is kept. Fails with
/// SEQC_STATUS_UNAVAILABLE and one sentence saying what failed.
seqc_status *initDriver();

/// Whether initDriver has succeeded.
bool driverReady();

/// Allocates `bytes` of managed memory (accessible from the host and the
/// device), aligned to at least `alignment`; NULL on failure, with the error
/// recorded. Needs driverReady().
void *allocateManaged(size_t bytes, size_t alignment);
/// Frees a block of allocateManaged.
void freeManaged(void *block);
/// Starts migrating `bytes` at `data` (managed) to the device, where the
/// device supports it; a hint, so failures are ignored.
void prefetchToDevice(const void *data, size_t bytes);

/// While one is alive, the model allocations of this thread
/// (_mlir_memref_to_llvm_*) are managed memory: seqc_model_run holds one
/// around a GPU model's prepare and invoke.
class ManagedAllocationScope {
public:
  ManagedAllocationScope();
  ~ManagedAllocationScope();
  ManagedAllocationScope(const ManagedAllocationScope &) = delete;
  ManagedAllocationScope &operator=(const ManagedAllocationScope &) = delete;
};
/// Whether this thread is inside a ManagedAllocationScope.
bool managedAllocationActive();

/// Records `message` as the error of the current run unless one is
/// recorded already (the first error is the one that explains the rest).
void recordError(std::string message);
/// Returns and clears the recorded error ("" if none).
std::string takeError();

/// Unloads every loaded module and forgets the driver (dlclose), so that a
/// test can initialize again with another $SEQC_CUDA_DRIVER; frees the
/// cached buffers (trimBufferCache) while it still can. Not thread-safe;
/// only for tests, with no GPU model loaded.
void resetForTesting();

} // namespace seqc::gpu

#endif // SEQC_RUNTIME_GPU_H
