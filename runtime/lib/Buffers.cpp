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
//===----------------------------------------------------------------------===//

#include "Buffers.h"
#include "seqc_runtime.h"

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace {

constexpr size_t kMinCachedBytes = size_t(256) << 10;
constexpr size_t kClassBytes = size_t(64) << 10;
constexpr size_t kPageBytes = 4096;

struct BufferCache {
  std::mutex mutex;
  /// Live cached blocks and their class.
  std::unordered_map<void *, size_t> live;
  /// Free blocks per class.
  std::unordered_map<size_t, std::vector<void *>> free;
  size_t cachedBytes = 0;
  size_t limitBytes = 0;

  BufferCache() {
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
    size_t cls = (size + kClassBytes - 1) / kClassBytes * kClassBytes;
    if (cls < size)
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
    void *block = std::aligned_alloc(kPageBytes, cls);
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
      std::free(block);
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
        std::free(block);
    free.clear();
    cachedBytes = 0;
    return released;
  }
};

BufferCache &cache() {
  // Never destroyed: models may free buffers from static destructors.
  static BufferCache *instance = new BufferCache();
  return *instance;
}

} // namespace

void seqc::releaseModelBuffer(void *buffer) {
  if (buffer && !cache().release(buffer))
    std::free(buffer);
}

size_t seqc::trimBufferCache() { return cache().trim(); }

extern "C" void *_mlir_memref_to_llvm_alloc(size_t size) {
  if (size < kMinCachedBytes)
    return std::malloc(size);
  return cache().allocate(size);
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t size) {
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
