//===- Buffers.h - the buffers compiled models allocate --------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Models compiled by seqc allocate their intermediates and outputs through
// `_mlir_memref_to_llvm_alloc`, `_mlir_memref_to_llvm_aligned_alloc` and
// `_mlir_memref_to_llvm_free` (MLIR's generic allocation functions), and
// their arena through `seqc_alloc_arena`, which the runtime defines here.
// Large buffers are kept after they are freed and handed out again to the
// next request of the same size class, so that a model run again does not
// pay the first touch of fresh pages (about 3 us per 4 KiB page on these
// machines: ~100 ms for attention's 128 MB of scores at N = 2048) and
// glibc's mmap/munmap of every large block.
//
// Every allocation is checked. The bytes the allocator holds (live blocks
// and cached ones) count against the memory limit (seqc_set_memory_limit,
// $SEQC_MAX_MEMORY). A request the limit or the system refuses inside a
// ModelCall unwinds the model's code back to the runtime, which frees what
// the call allocated and reports SEQC_STATUS_OUT_OF_MEMORY.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_RUNTIME_BUFFERS_H
#define SEQC_RUNTIME_BUFFERS_H

#include "Support.h"
#include "seqc_runtime.h"

#include <csetjmp>
#include <cstddef>
#include <cstdint>

namespace seqc {

/// Releases a buffer a model returned (an output): back to the cache if it
/// is one of the cached class, else std::free (what models compiled without
/// the runtime's allocator, and fake models in tests, use).
void releaseModelBuffer(void *buffer);

/// The same, but a block of the cached classes goes back to the system at
/// once (a prepared value that another entry's identical value replaced:
/// its memory is not expected back).
void releaseModelBufferToSystem(void *buffer);

/// Frees every cached buffer; returns the number of bytes released.
size_t trimBufferCache();

/// Whether `buffer` is a live block of the managed cache (a GPU model's
/// allocation or a managed block of allocateManagedBlock).
bool isManagedBuffer(const void *buffer);

/// A block of managed memory of at least `bytes` from the managed cache,
/// released with releaseModelBuffer; a host block if the driver fails (the
/// error is recorded, see Gpu.h). NULL when neither can be allocated. For
/// the inputs and weights of GPU models.
void *allocateManagedBlock(size_t bytes);

//===----------------------------------------------------------------------===//
// The memory limit
//===----------------------------------------------------------------------===//

/// Reads $SEQC_MAX_MEMORY once (unless seqc_set_memory_limit came first);
/// INVALID_ARGUMENT if it is set but not a size. seqc_model_load* call it
/// so that a mistyped limit fails before anything runs.
seqc_status *checkMemoryLimitEnvironment();

/// Allocates an owned buffer of `bytes` that counts against the memory limit
/// while it lives, as a model's own allocations do (the state of a model
/// instance); an out-of-memory status naming `what` when the limit (after
/// the cache of free blocks is emptied) or the system refuses it.
seqc_status *allocateLimitedBuffer(size_t bytes, const char *what,
                                   Buffer *out);

/// The bytes the allocator holds for models: live blocks and cached ones.
size_t modelMemoryInUse();

/// For tests: while set, every system allocation of at least `bytes` made
/// for a model's request fails as if the system had no memory left (an
/// address-space limit without its effect on the rest of the process). 0
/// turns it off.
void failSystemAllocationsForTesting(size_t bytes);

//===----------------------------------------------------------------------===//
// Calling into a model
//===----------------------------------------------------------------------===//

/// What a model allocation is for, as an out-of-memory message names it.
enum class AllocationPurpose {
  /// A buffer of the model's code: an output, an intermediate outside the
  /// arena, per-block scratch, a prepared value.
  Buffer,
  /// The arena of the memory plan (seqc_alloc_arena).
  Arena,
  /// The memory set aside before a run for the requests of the model's
  /// parallel regions that are refused (Buffers.cpp).
  Reserve,
};

/// One call into a model's code (its seqc_prepare or seqc_invoke) under
/// the allocator's failure handling. When an allocation of the model is
/// refused (by the memory limit or by the system) on the thread that made
/// the call, outside any OpenMP parallel region the model opened, the
/// allocator records what was asked for and longjmps back into run(),
/// which then returns false. Between the two there are only frames of
/// generated code: they hold no resources but the allocations this call
/// made, which the allocator tags with the call so that freeAllocations()
/// can release them. A refusal inside a parallel region cannot unwind (the
/// stack of an OpenMP worker, or of a fork the runtime did not make): the
/// request is served from memory set aside before the call (16 MiB, for
/// the small per-block scratch of parallel loops) or, when only the limit
/// refused it, from the system, and the call fails once the model returns
/// (failure()); when neither can serve it the process ends with a message.
class ModelCall {
public:
  enum class Phase { Prepare, Run };

  /// `modelName` must outlive the call.
  ModelCall(const char *modelName, Phase phase);
  ModelCall(const ModelCall &) = delete;
  ModelCall &operator=(const ModelCall &) = delete;

  /// Calls `entry(argument)` once. Returns false if an allocation failed and
  /// unwound the model's code.
  bool run(void (*entry)(void *), void *argument);

  /// After run(): the out-of-memory status of a refused allocation, or of
  /// one over the limit inside a parallel region; NULL if there was none.
  seqc_status *failure() const;

  /// Frees every block this call allocated that is still live: after an
  /// unwound run(), what the model held when it was stopped.
  void freeAllocations();

  /// The refusal the allocator records before it unwinds the call.
  struct Refusal {
    bool happened = false;
    size_t bytes = 0;
    AllocationPurpose purpose = AllocationPurpose::Buffer;
    /// Refused by the memory limit (else by the system); the limit and the
    /// bytes held then.
    bool overLimit = false;
    size_t limit = 0, inUse = 0;
  };

private:
  friend struct ModelCallAccess;
  std::jmp_buf unwindTarget;
  const char *modelName;
  Phase phase;
  /// Tags the blocks this call allocates.
  uint64_t id;
  /// omp_get_level() of the calling thread at run(): an allocation at this
  /// level is outside the model's parallel regions.
  int ompLevel = 0;
  /// The count of over-limit allocations in parallel regions at run().
  uint64_t deferredAtStart = 0;
  /// The call this one is nested in on this thread, if any.
  ModelCall *outer = nullptr;
  Refusal refusal;
  Refusal deferred;
};

} // namespace seqc

#endif // SEQC_RUNTIME_BUFFERS_H
