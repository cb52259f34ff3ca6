//===- Buffers.cpp - a size-class cache for model buffers -----------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Requests below kMinCachedBytes go to malloc/aligned_alloc unchanged. Larger
// ones are rounded up to a multiple of kClassBytes and served from a list of
// freed blocks of exactly that class, or from aligned_alloc(4096, class): page
// alignment satisfies every alignment a memref.alloc asks for. The arena is
// never cached (it only grows, and the block it replaces is not asked for
// again). Every live block is in the cache's map, with its size and the
// ModelCall that allocated it, so that a free finds its kind and an unwound
// call its leftovers. At most SEQC_BUFFER_CACHE_MB (default 2048) MiB stay
// cached; a block freed past that is returned to the system.
//
// The allocations of a GPU model (inside a gpu::ManagedAllocationScope) are
// managed memory, which its kernels and its host code both access: they come
// from a second cache of the same design whose blocks come from
// cuMemAllocManaged. It caches every size (a managed allocation is a driver
// call and at least a page), small ones in power-of-two classes. A process
// that never runs a GPU model never creates it, and frees look it up only
// once it exists.
//
// Failures. Each request is charged against the memory limit before the
// system is asked; a refusal (the limit, or the system) first releases the
// cached blocks and tries again. What follows a second refusal depends on
// where the request comes from (see ModelCall in Buffers.h): the calling
// thread of a ModelCall, at the OpenMP level the call started at, unwinds
// the call with longjmp; inside a parallel region of a running model the
// request is served from a reserve set aside before the run (or, over the
// limit only, from the system) and the call fails when the model returns;
// when no model is running, the allocation functions return NULL, as
// malloc does.
//
//===----------------------------------------------------------------------===//

#include "Buffers.h"
#include "Gpu.h"
#include "Support.h"
#include "seqc_runtime.h"

#include <atomic>
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#ifdef SEQC_HAVE_OPENMP
#include <omp.h>
#endif

using namespace seqc;

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

/// System allocations of at least this many bytes fail (tests only; 0: off).
std::atomic<size_t> failSystemFrom{0};

bool systemRefuses(size_t bytes) {
  size_t from = failSystemFrom.load(std::memory_order_relaxed);
  return from && bytes >= from;
}

const BlockSource kHostBlocks = {[](size_t bytes) -> void * {
                                   if (systemRefuses(bytes))
                                     return nullptr;
                                   return std::aligned_alloc(kPageBytes, bytes);
                                 },
                                 [](void *block) { std::free(block); },
                                 hostClassOf};

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

//===----------------------------------------------------------------------===//
// The memory limit
//===----------------------------------------------------------------------===//

/// Bytes held by both caches: live blocks and cached ones.
std::atomic<size_t> heldBytes{0};
/// The memory limit; 0 for none.
std::atomic<size_t> limitBytes{0};

std::once_flag environmentOnce;
/// Set when $SEQC_MAX_MEMORY is not a size (read once).
const char *badEnvironmentLimit = nullptr;

void readEnvironmentLimit() {
  std::call_once(environmentOnce, [] {
    const char *text = std::getenv("SEQC_MAX_MEMORY");
    if (!text)
      return;
    uint64_t bytes;
    if (!parseByteSize(text, &bytes)) {
      badEnvironmentLimit = text;
      return;
    }
    limitBytes.store(static_cast<size_t>(bytes), std::memory_order_relaxed);
  });
}

/// Why a request was not served.
struct Refused {
  bool overLimit = false;
  size_t limit = 0, inUse = 0;
};

/// Adds `bytes` to the bytes held, unless that exceeds the limit (and
/// `ignoreLimit` is false).
bool charge(size_t bytes, bool ignoreLimit, Refused *why) {
  readEnvironmentLimit();
  size_t limit = limitBytes.load(std::memory_order_relaxed);
  size_t held = heldBytes.load(std::memory_order_relaxed);
  do {
    if (!ignoreLimit && limit && (bytes > limit || held > limit - bytes)) {
      why->overLimit = true;
      why->limit = limit;
      why->inUse = held;
      return false;
    }
  } while (!heldBytes.compare_exchange_weak(held, held + bytes,
                                            std::memory_order_relaxed));
  return true;
}

void uncharge(size_t bytes) {
  heldBytes.fetch_sub(bytes, std::memory_order_relaxed);
}

//===----------------------------------------------------------------------===//
// The caches
//===----------------------------------------------------------------------===//

/// A live block.
struct LiveBlock {
  /// Its size, as charged.
  size_t bytes;
  /// Whether it goes back to the free list of its class (else to the
  /// system) when freed.
  bool cached;
  /// The ModelCall that allocated it (0: none).
  uint64_t owner;
};

/// A request, placed: which bytes to charge and how to get them.
struct Placement {
  size_t bytes = 0; // 0: the size overflows
  bool cached = false;
  size_t alignment = 0;
};

struct BufferCache {
  const BlockSource &source;
  std::mutex mutex;
  std::unordered_map<void *, LiveBlock> live;
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

  /// A block for `placement`, tagged with `owner`; NULL if refused (why
  /// says by what).
  void *allocate(const Placement &placement, uint64_t owner, bool ignoreLimit,
                 Refused *why) {
    if (placement.cached) {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = free.find(placement.bytes);
      if (it != free.end() && !it->second.empty()) {
        // Already charged while cached.
        void *block = it->second.back();
        it->second.pop_back();
        cachedBytes -= placement.bytes;
        live.emplace(block, LiveBlock{placement.bytes, true, owner});
        return block;
      }
    }
    if (!charge(placement.bytes, ignoreLimit, why))
      return nullptr;
    void *block = nullptr;
    if (placement.cached)
      block = source.allocate(placement.bytes);
    else if (!systemRefuses(placement.bytes))
      block = placement.alignment <= alignof(std::max_align_t)
                  ? std::malloc(placement.bytes)
                  : std::aligned_alloc(placement.alignment, placement.bytes);
    if (!block) {
      uncharge(placement.bytes);
      return nullptr;
    }
    std::lock_guard<std::mutex> lock(mutex);
    live.emplace(block, LiveBlock{placement.bytes, placement.cached, owner});
    return block;
  }

  /// Frees or caches a block the lock is held for and the map no longer
  /// lists.
  void releaseLocked(void *block, const LiveBlock &info) {
    if (!info.cached) {
      std::free(block);
      uncharge(info.bytes);
      return;
    }
    if (cachedBytes + info.bytes > limitBytes) {
      source.free(block);
      uncharge(info.bytes);
      return;
    }
    free[info.bytes].push_back(block);
    cachedBytes += info.bytes;
  }

  /// Returns false if `block` is not a live block of this cache. With
  /// `toSystem`, a block of the cached classes goes back to the system
  /// rather than into the cache.
  bool release(void *block, bool toSystem = false) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = live.find(block);
    if (it == live.end())
      return false;
    LiveBlock info = it->second;
    live.erase(it);
    if (toSystem && info.cached) {
      source.free(block);
      uncharge(info.bytes);
      return true;
    }
    releaseLocked(block, info);
    return true;
  }

  void releaseOwnedBy(uint64_t owner) {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = live.begin(); it != live.end();) {
      if (it->second.owner != owner) {
        ++it;
        continue;
      }
      void *block = it->first;
      LiveBlock info = it->second;
      it = live.erase(it);
      releaseLocked(block, info);
    }
  }

  size_t trim() {
    std::lock_guard<std::mutex> lock(mutex);
    size_t released = cachedBytes;
    for (auto &[cls, blocks] : free)
      for (void *block : blocks)
        source.free(block);
    free.clear();
    uncharge(cachedBytes);
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

Placement placeHost(size_t alignment, size_t size, AllocationPurpose purpose) {
  Placement placement;
  if (purpose != AllocationPurpose::Arena && size >= kMinCachedBytes &&
      alignment <= kPageBytes) {
    placement.bytes = hostClassOf(size);
    placement.cached = true;
    placement.alignment = kPageBytes;
    return placement;
  }
  if (alignment < sizeof(void *))
    alignment = sizeof(void *);
  // aligned_alloc wants a multiple of the alignment; malloc(0) may be NULL.
  size_t rounded = (size + alignment - 1) / alignment * alignment;
  placement.bytes = rounded < size ? 0 : rounded ? rounded : alignment;
  placement.alignment = alignment;
  return placement;
}

//===----------------------------------------------------------------------===//
// The reserve for parallel regions
//===----------------------------------------------------------------------===//

/// Bytes set aside before a run for the requests of the model's parallel
/// regions that the system or the limit refuses: these cannot be unwound,
/// and per-block scratch is small (a tile's rows), so a few MiB lets the
/// loop finish and the run fail cleanly. Not charged against the limit: it
/// is address space, touched only in that case.
constexpr size_t kReserveBytes = size_t(16) << 20;
constexpr size_t kReserveAlignment = kPageBytes;

struct Reserve {
  std::mutex mutex;
  char *base = nullptr;
  size_t used = 0;
  /// Blocks handed out and not freed; the space is reused once none is.
  size_t outstanding = 0;

  bool contains(const void *block) {
    auto *p = static_cast<const char *>(block);
    return base && p >= base && p < base + kReserveBytes;
  }
};

Reserve &reserve() {
  static Reserve *instance = new Reserve();
  return *instance;
}

/// Sets the reserve aside if it is not yet; false if the system refuses.
/// (failSystemAllocationsForTesting simulates refusals of the model's
/// requests; this one it leaves alone.)
bool ensureReserve() {
  Reserve &r = reserve();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!r.base)
    r.base = static_cast<char *>(
        std::aligned_alloc(kReserveAlignment, kReserveBytes));
  return r.base != nullptr;
}

void *allocateFromReserve(size_t alignment, size_t size) {
  Reserve &r = reserve();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!r.base || alignment > kReserveAlignment)
    return nullptr;
  if (alignment < alignof(std::max_align_t))
    alignment = alignof(std::max_align_t);
  size_t start = (r.used + alignment - 1) / alignment * alignment;
  if (start > kReserveBytes || size > kReserveBytes - start)
    return nullptr;
  r.used = start + (size ? size : 1);
  ++r.outstanding;
  return r.base + start;
}

bool releaseToReserve(void *block) {
  Reserve &r = reserve();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!r.contains(block))
    return false;
  if (--r.outstanding == 0)
    r.used = 0;
  return true;
}

//===----------------------------------------------------------------------===//
// Model calls
//===----------------------------------------------------------------------===//

thread_local ModelCall *currentCall = nullptr;
/// ModelCalls running in the process, on any thread.
std::atomic<int> activeCalls{0};
std::atomic<uint64_t> nextCallId{1};

/// Refused requests of parallel regions (served anyway): how many, and the
/// last one.
std::atomic<uint64_t> deferredCount{0};
std::mutex deferredMutex;
ModelCall::Refusal lastDeferred;

int currentOmpLevel() {
#ifdef SEQC_HAVE_OPENMP
  return omp_get_level();
#else
  return 0;
#endif
}

const char *purposeText(AllocationPurpose purpose, bool inParallelRegion,
                        ModelCall::Phase phase) {
  if (purpose == AllocationPurpose::Arena)
    return "its arena (the intermediates its memory plan places)";
  if (purpose == AllocationPurpose::Reserve)
    return "the reserve for the scratch of its parallel loops, set aside "
           "before it runs";
  if (inParallelRegion)
    return "per-block scratch inside a parallel loop";
  return phase == ModelCall::Phase::Prepare
             ? "a value it prepares from its weights"
             : "one of its buffers (an output or an intermediate)";
}

} // namespace

namespace seqc {
/// The allocator's view of a ModelCall.
struct ModelCallAccess {
  static std::jmp_buf &unwindTarget(ModelCall *call) {
    return call->unwindTarget;
  }
  static uint64_t id(const ModelCall *call) { return call ? call->id : 0; }
  static int ompLevel(const ModelCall *call) { return call->ompLevel; }
  static void refuse(ModelCall *call, const ModelCall::Refusal &refusal) {
    call->refusal = refusal;
  }
};
} // namespace seqc

namespace {

/// Calls `entry(argument)`; false if an allocation longjmp'ed back here.
/// A function of its own, so that nothing in the frame of setjmp is
/// modified between the two returns.
__attribute__((noinline)) bool
callUnwindable(ModelCall *call, void (*entry)(void *), void *argument) {
  if (setjmp(ModelCallAccess::unwindTarget(call)) != 0)
    return false;
  entry(argument);
  return true;
}

/// A request of a model's code the caches refused twice. Unwinds the
/// current ModelCall when its thread is outside the model's parallel
/// regions; otherwise serves it from the reserve or, over the limit only,
/// from the system, and records the refusal for the running calls; NULL
/// when no model is running.
void *refuse(size_t alignment, size_t size, AllocationPurpose purpose,
             const Placement &placement, BufferCache &source,
             const Refused &why) {
  ModelCall::Refusal refusal;
  refusal.happened = true;
  refusal.bytes = placement.bytes ? placement.bytes : size;
  refusal.purpose = purpose;
  refusal.overLimit = why.overLimit;
  refusal.limit = why.limit;
  refusal.inUse = why.inUse;
  ModelCall *call = currentCall;
  if (call && currentOmpLevel() == ModelCallAccess::ompLevel(call)) {
    ModelCallAccess::refuse(call, refusal);
    std::longjmp(ModelCallAccess::unwindTarget(call), 1);
  }
  if (activeCalls.load(std::memory_order_acquire) == 0)
    return nullptr;
  // Inside a parallel region of a running model: the loop must go on.
  {
    std::lock_guard<std::mutex> lock(deferredMutex);
    lastDeferred = refusal;
  }
  deferredCount.fetch_add(1, std::memory_order_acq_rel);
  if (void *block = allocateFromReserve(alignment, size))
    return block;
  if (why.overLimit && placement.bytes) {
    Refused again;
    if (void *block = source.allocate(placement, ModelCallAccess::id(call),
                                      /*ignoreLimit=*/true, &again))
      return block;
  }
  std::fprintf(stderr,
               "seqc: out of memory inside a parallel loop of a model: cannot "
               "allocate %s for %s, and the reserve for parallel loops is "
               "spent; a parallel loop cannot be stopped, so the process "
               "ends\n",
               formatBytes(refusal.bytes).c_str(),
               purposeText(purpose, true, ModelCall::Phase::Run));
  std::abort();
}

/// The allocation functions of a model's code.
void *allocateForModel(size_t alignment, size_t size,
                       AllocationPurpose purpose) {
  uint64_t owner = ModelCallAccess::id(currentCall);
  bool managed = seqc::gpu::managedAllocationActive();
  if (managed && alignment <= kManagedAlignment) {
    Placement placement;
    placement.bytes = kManagedBlocks.classOf(size);
    placement.cached = true;
    placement.alignment = kManagedAlignment;
    Refused why;
    if (placement.bytes) {
      if (void *block = managedCache().allocate(placement, owner, false, &why))
        return block;
      if (why.overLimit) {
        trimBufferCache();
        why = Refused();
        if (void *block =
                managedCache().allocate(placement, owner, false, &why))
          return block;
      }
      if (why.overLimit)
        return refuse(alignment, size, purpose, placement, managedCache(), why);
    }
    // The driver's error is recorded (seqc_model_run fails, and no later
    // kernel runs): host memory keeps the host code from dereferencing
    // NULL meanwhile.
  } else if (managed) {
    seqc::gpu::recordError("a GPU model allocation asks for " +
                           std::to_string(alignment) +
                           "-byte alignment; managed memory provides " +
                           std::to_string(kManagedAlignment));
  }
  Placement placement = placeHost(alignment, size, purpose);
  Refused why;
  if (placement.bytes) {
    if (void *block = cache().allocate(placement, owner, false, &why))
      return block;
    trimBufferCache();
    why = Refused();
    if (void *block = cache().allocate(placement, owner, false, &why))
      return block;
  }
  return refuse(alignment, size, purpose, placement, cache(), why);
}

} // namespace

//===----------------------------------------------------------------------===//
// The runtime's interface (Buffers.h)
//===----------------------------------------------------------------------===//

void seqc::releaseModelBuffer(void *buffer) {
  if (!buffer)
    return;
  if (managedCacheCreated.load(std::memory_order_acquire) &&
      managedCache().release(buffer))
    return;
  if (cache().release(buffer) || releaseToReserve(buffer))
    return;
  std::free(buffer);
}

void seqc::releaseModelBufferToSystem(void *buffer) {
  if (!buffer)
    return;
  if (managedCacheCreated.load(std::memory_order_acquire) &&
      managedCache().release(buffer, /*toSystem=*/true))
    return;
  if (cache().release(buffer, /*toSystem=*/true) || releaseToReserve(buffer))
    return;
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
  Placement placement;
  placement.bytes = kManagedBlocks.classOf(bytes);
  placement.cached = true;
  placement.alignment = kManagedAlignment;
  Refused why;
  if (placement.bytes) {
    if (void *block = managedCache().allocate(placement, 0, false, &why))
      return block;
    if (why.overLimit) {
      trimBufferCache();
      why = Refused();
      if (void *block = managedCache().allocate(placement, 0, false, &why))
        return block;
      if (why.overLimit)
        return nullptr;
    }
  }
  // The driver's error is recorded; host memory keeps the run going to
  // the point where it reports it.
  placement = placeHost(kManagedAlignment, bytes, AllocationPurpose::Buffer);
  if (!placement.bytes)
    return nullptr;
  return cache().allocate(placement, 0, false, &why);
}

seqc_status *seqc::checkMemoryLimitEnvironment() {
  readEnvironmentLimit();
  if (!badEnvironmentLimit)
    return nullptr;
  return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                    "SEQC_MAX_MEMORY='%s' is not a size (bytes, or a number "
                    "with a suffix K, M, G or T: 512M, 4G)",
                    printableText(badEnvironmentLimit).c_str());
}

seqc_status *seqc::allocateLimitedBuffer(size_t bytes, const char *what,
                                         Buffer *out) {
  Refused why;
  if (!charge(bytes, false, &why)) {
    trimBufferCache();
    why = Refused();
    if (!charge(bytes, false, &why))
      return makeStatus(
          SEQC_STATUS_OUT_OF_MEMORY,
          "cannot allocate %s for %s: it would exceed the memory limit of %s "
          "(SEQC_MAX_MEMORY, --max-memory or seqc_set_memory_limit), of "
          "which %s are in use",
          formatBytes(bytes).c_str(), what, formatBytes(why.limit).c_str(),
          formatBytes(why.inUse).c_str());
  }
  void *data = alignedAlloc(bytes);
  if (!data) {
    uncharge(bytes);
    return makeStatus(SEQC_STATUS_OUT_OF_MEMORY,
                      "cannot allocate %s for %s: the system has no memory "
                      "left for it",
                      formatBytes(bytes).c_str(), what);
  }
  out->data = data;
  out->bytes = bytes;
  out->owner = std::shared_ptr<void>(data, [bytes](void *block) {
    std::free(block);
    uncharge(bytes);
  });
  return nullptr;
}

size_t seqc::modelMemoryInUse() {
  return heldBytes.load(std::memory_order_relaxed);
}

void seqc::failSystemAllocationsForTesting(size_t bytes) {
  failSystemFrom.store(bytes, std::memory_order_relaxed);
}

ModelCall::ModelCall(const char *modelName, Phase phase)
    : modelName(modelName), phase(phase) {}

bool ModelCall::run(void (*entry)(void *), void *argument) {
  id = nextCallId.fetch_add(1, std::memory_order_relaxed);
  refusal = Refusal();
  deferred = Refusal();
  // The reserve for parallel regions is set aside before the model runs;
  // if even that is refused, the call fails before it starts.
  if (!ensureReserve()) {
    refusal.happened = true;
    refusal.bytes = kReserveBytes;
    refusal.purpose = AllocationPurpose::Reserve;
    return false;
  }
  ompLevel = currentOmpLevel();
  deferredAtStart = deferredCount.load(std::memory_order_acquire);
  outer = currentCall;
  currentCall = this;
  activeCalls.fetch_add(1, std::memory_order_acq_rel);
  bool finished = callUnwindable(this, entry, argument);
  activeCalls.fetch_sub(1, std::memory_order_acq_rel);
  currentCall = outer;
  if (deferredCount.load(std::memory_order_acquire) != deferredAtStart) {
    std::lock_guard<std::mutex> lock(deferredMutex);
    deferred = lastDeferred;
  }
  return finished;
}

seqc_status *ModelCall::failure() const {
  if (!refusal.happened && !deferred.happened)
    return nullptr;
  const Refusal &what = refusal.happened ? refusal : deferred;
  std::string reason =
      what.overLimit
          ? "it would exceed the memory limit of " + formatBytes(what.limit) +
                " (SEQC_MAX_MEMORY, --max-memory or seqc_set_memory_limit), "
                "of which " +
                formatBytes(what.inUse) + " are in use"
          : std::string("the system has no memory left for it");
  if (refusal.happened)
    return makeStatus(SEQC_STATUS_OUT_OF_MEMORY,
                      "model '%s' ran out of memory: cannot allocate %s for "
                      "%s: %s",
                      modelName, formatBytes(what.bytes).c_str(),
                      purposeText(what.purpose, false, phase), reason.c_str());
  return makeStatus(SEQC_STATUS_OUT_OF_MEMORY,
                    "model '%s' ran out of memory inside a parallel loop: a "
                    "request of %s for %s was refused (%s); the loop "
                    "finished on memory set aside for it, and the run's "
                    "results are discarded",
                    modelName, formatBytes(what.bytes).c_str(),
                    purposeText(what.purpose, true, phase), reason.c_str());
}

void ModelCall::freeAllocations() {
  cache().releaseOwnedBy(id);
  if (managedCacheCreated.load(std::memory_order_acquire))
    managedCache().releaseOwnedBy(id);
}

//===----------------------------------------------------------------------===//
// The allocation functions of the generated code
//===----------------------------------------------------------------------===//

extern "C" void *_mlir_memref_to_llvm_alloc(size_t size) {
  return allocateForModel(alignof(std::max_align_t), size,
                          AllocationPurpose::Buffer);
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t size) {
  return allocateForModel(alignment, size, AllocationPurpose::Buffer);
}

extern "C" void *seqc_alloc_arena(size_t alignment, size_t size) {
  return allocateForModel(alignment, size, AllocationPurpose::Arena);
}

extern "C" void _mlir_memref_to_llvm_free(void *ptr) {
  seqc::releaseModelBuffer(ptr);
}

extern "C" size_t seqc_trim_buffer_cache(void) {
  return seqc::trimBufferCache();
}

extern "C" void seqc_set_memory_limit(uint64_t bytes) {
  // The environment is read first, so that it cannot override this later.
  readEnvironmentLimit();
  limitBytes.store(static_cast<size_t>(bytes), std::memory_order_relaxed);
}

extern "C" uint64_t seqc_memory_limit(void) {
  readEnvironmentLimit();
  return limitBytes.load(std::memory_order_relaxed);
}
