//===- Buffers.cpp - a size-class cache for model buffers -----------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Requests below kMinCachedBytes go to malloc/aligned_alloc unchanged. Larger
// ones are rounded up to a multiple of kClassBytes and served from a list of
// freed blocks of exactly that class, or from aligned_alloc(4096, class): page
// alignment satisfies every alignment a memref.alloc asks for. The set of
// live cached blocks tells a cached block from a malloc'ed one when it is
// freed. At most SEQC_BUFFER_CACHE_MB (default 2048) MiB stay cached; a block
// freed past that is returned to the system.
//
// The allocations of a GPU model (inside a gpu::ManagedAllocationScope) are
// managed memory, which its kernels and its host code both access: they come
// from a second cache of the same design whose blocks come from
// cuMemAllocManaged. It caches every size (a managed allocation is a driver
// call and at least a page), small ones in power-of-two classes. A process
// that never runs a GPU model never creates it, and frees look it up only
// once it exists.
//
//===----------------------------------------------------------------------===//

#include "Buffers.h"
#include "Gpu.h"
#include "seqc_runtime.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace {

constexpr size_t kMinCachedBytes = size_t(256) << 10;
constexpr size_t kClassBytes = size_t(64) << 10;
constexpr size_t kPageBytes = 4096;

/// Where a cache's blocks come from.
struct BlockSource {
  void *(*allocate)(size_t bytes);
  void (*free)(void *block);
  /// The class (block size) a request of `bytes` is served from; 0 on
  /// overflow.
  size_t (*classOf)(size_t bytes);
};

size_t hostClassOf(size_t size) {
  size_t cls = (size + kClassBytes - 1) / kClassBytes * kClassBytes;
  return cls < size ? 0 : cls;
}

const BlockSource kHostBlocks = {
    [](size_t bytes) { return std::aligned_alloc(kPageBytes, bytes); },
    [](void *block) { std::free(block); }, hostClassOf};

/// Managed blocks are aligned to at least this (the driver's allocation
/// granularity is a page or more; allocateManaged checks it).
constexpr size_t kManagedAlignment = kPageBytes;
constexpr size_t kMinManagedClass = 256;

const BlockSource kManagedBlocks = {[](size_t bytes) {
                                      return seqc::gpu::allocateManaged(
                                          bytes, kManagedAlignment);
                                    },
                                    seqc::gpu::freeManaged,
                                    [](size_t size) -> size_t {
                                      if (size >= kMinCachedBytes)
                                        return hostClassOf(size);
                                      size_t cls = kMinManagedClass;
                                      while (cls < size)
                                        cls <<= 1;
                                      return cls;
                                    }};

struct BufferCache {
  const BlockSource &source;
  std::mutex mutex;
  /// Live cached blocks and their class.
  std::unordered_map<void *, size_t> live;
  /// Free blocks per class.
  std::unordered_map<size_t, std::vector<void *>> free;
  size_t cachedBytes = 0;
  size_t limitBytes = 0;

  explicit BufferCache(const BlockSource &source) : source(source) {
    size_t mb = 2048;
    if (const char *env = std::getenv("SEQC_BUFFER_CACHE_MB")) {
      char *end = nullptr;
      unsigned long long v = std::strtoull(env, &end, 10);
      if (end != env && *end == '\0')
        mb = static_cast<size_t>(v);
    }
    limitBytes = mb << 20;
  }

  void *allocate(size_t size) {
    size_t cls = source.classOf(size);
    if (cls == 0)
      return nullptr; // overflow
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = free.find(cls);
      if (it != free.end() && !it->second.empty()) {
        void *block = it->second.back();
        it->second.pop_back();
        cachedBytes -= cls;
        live.emplace(block, cls);
        return block;
      }
    }
    void *block = source.allocate(cls);
    if (!block)
      return nullptr;
    std::lock_guard<std::mutex> lock(mutex);
    live.emplace(block, cls);
    return block;
  }

  /// Returns false if `block` is not a live cached block.
  bool release(void *block) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = live.find(block);
    if (it == live.end())
      return false;
    size_t cls = it->second;
    live.erase(it);
    if (cachedBytes + cls > limitBytes) {
      source.free(block);
      return true;
    }
    free[cls].push_back(block);
    cachedBytes += cls;
    return true;
  }

  size_t trim() {
    std::lock_guard<std::mutex> lock(mutex);
    size_t released = cachedBytes;
    for (auto &[cls, blocks] : free)
      for (void *block : blocks)
        source.free(block);
    free.clear();
    cachedBytes = 0;
    return released;
  }
};

BufferCache &cache() {
  // Never destroyed: models may free buffers from static destructors.
  static BufferCache *instance = new BufferCache(kHostBlocks);
  return *instance;
}

/// Set once the managed cache exists.
std::atomic<bool> managedCacheCreated{false};

BufferCache &managedCache() {
  static BufferCache *instance = [] {
    auto *created = new BufferCache(kManagedBlocks);
    managedCacheCreated.store(true, std::memory_order_release);
    return created;
  }();
  return *instance;
}

/// A model allocation inside a ManagedAllocationScope.
void *allocateManagedBuffer(size_t alignment, size_t size) {
  if (alignment <= kManagedAlignment)
    if (void *block = managedCache().allocate(size))
      return block;
  // The error is recorded (seqc_model_run fails, and no later kernel runs):
  // host memory keeps the host code from dereferencing NULL meanwhile.
  if (alignment > kManagedAlignment)
    seqc::gpu::recordError("a GPU model allocation asks for " +
                           std::to_string(alignment) +
                           "-byte alignment; managed memory provides " +
                           std::to_string(kManagedAlignment));
  if (alignment < sizeof(void *))
    alignment = sizeof(void *);
  size_t rounded = (size + alignment - 1) / alignment * alignment;
  return std::aligned_alloc(alignment, rounded ? rounded : alignment);
}

} // namespace

void seqc::releaseModelBuffer(void *buffer) {
  if (!buffer)
    return;
  if (managedCacheCreated.load(std::memory_order_acquire) &&
      managedCache().release(buffer))
    return;
  if (!cache().release(buffer))
    std::free(buffer);
}

size_t seqc::trimBufferCache() {
  size_t released = cache().trim();
  if (managedCacheCreated.load(std::memory_order_acquire))
    released += managedCache().trim();
  return released;
}

bool seqc::isManagedBuffer(const void *buffer) {
  if (!buffer || !managedCacheCreated.load(std::memory_order_acquire))
    return false;
  BufferCache &managed = managedCache();
  std::lock_guard<std::mutex> lock(managed.mutex);
  return managed.live.count(const_cast<void *>(buffer)) != 0;
}

void *seqc::allocateManagedBlock(size_t bytes) {
  return allocateManagedBuffer(kManagedAlignment, bytes);
}

extern "C" void *_mlir_memref_to_llvm_alloc(size_t size) {
  if (seqc::gpu::managedAllocationActive())
    return allocateManagedBuffer(16, size);
  if (size < kMinCachedBytes)
    return std::malloc(size);
  return cache().allocate(size);
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t size) {
  if (seqc::gpu::managedAllocationActive())
    return allocateManagedBuffer(alignment, size);
  if (size >= kMinCachedBytes && alignment <= kPageBytes)
    return cache().allocate(size);
  if (alignment < sizeof(void *))
    alignment = sizeof(void *);
  // aligned_alloc wants a multiple of the alignment.
  size_t rounded = (size + alignment - 1) / alignment * alignment;
  return std::aligned_alloc(alignment, rounded ? rounded : alignment);
}

extern "C" void _mlir_memref_to_llvm_free(void *ptr) {
  seqc::releaseModelBuffer(ptr);
}

extern "C" size_t seqc_trim_buffer_cache(void) {
  return seqc::trimBufferCache();
}
