//===- Buffers.h - the buffers compiled models allocate --------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Models compiled by seqc allocate their intermediates and outputs through
// `_mlir_memref_to_llvm_alloc`, `_mlir_memref_to_llvm_aligned_alloc` and
// `_mlir_memref_to_llvm_free` (MLIR's generic allocation functions), which
// the runtime defines here. Large buffers are kept after they are freed and
// handed out again to the next request of the same size class, so that a
// model run again does not pay the first touch of fresh pages (about 3 us
// per 4 KiB page on these machines: ~100 ms for attention's 128 MB of scores
// at N = 2048) and glibc's mmap/munmap of every large block.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_RUNTIME_BUFFERS_H
#define SEQC_RUNTIME_BUFFERS_H

#include <cstddef>

namespace seqc {

/// Releases a buffer a model returned (an output): back to the cache if it
/// is one of the cached class, else std::free (what models compiled without
/// the runtime's allocator, and fake models in tests, use).
void releaseModelBuffer(void *buffer);

/// Frees every cached buffer; returns the number of bytes released.
size_t trimBufferCache();

/// Whether `buffer` is a live block of the managed cache (a GPU model's
/// allocation or a managed block of allocateManagedBlock).
bool isManagedBuffer(const void *buffer);

/// A block of managed memory of at least `bytes` from the managed cache,
/// released with releaseModelBuffer; a host block if the driver fails (the
/// error is recorded, see Gpu.h). For the inputs and weights of GPU models.
void *allocateManagedBlock(size_t bytes);

} // namespace seqc

#endif // SEQC_RUNTIME_BUFFERS_H
