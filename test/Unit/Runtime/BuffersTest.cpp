//===- BuffersTest.cpp - the runtime's allocator for model buffers --------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "Buffers.h"
#include "seqc_runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

extern "C" void *_mlir_memref_to_llvm_alloc(size_t size);
extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t size);
extern "C" void _mlir_memref_to_llvm_free(void *ptr);

namespace {

TEST(Buffers, LargeBuffersAreReusedForTheSameSizeClass) {
  seqc_trim_buffer_cache();
  const size_t size = size_t(3) << 20;
  void *first = _mlir_memref_to_llvm_alloc(size);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 4096, 0u);
  std::memset(first, 1, size);
  _mlir_memref_to_llvm_free(first);
  // The next run asks for the same size (or one in the same 64 KiB class).
  void *second = _mlir_memref_to_llvm_alloc(size - 100);
  EXPECT_EQ(second, first);
  // A live block is not handed out twice.
  void *third = _mlir_memref_to_llvm_alloc(size);
  EXPECT_NE(third, second);
  _mlir_memref_to_llvm_free(second);
  _mlir_memref_to_llvm_free(third);
  EXPECT_EQ(seqc_trim_buffer_cache(), 2 * size);
  EXPECT_EQ(seqc_trim_buffer_cache(), 0u);
}

TEST(Buffers, AlignedRequestsHonourTheAlignment) {
  for (size_t alignment : {8, 64, 128, 4096}) {
    for (size_t size : {size_t(24), size_t(1000), size_t(1) << 20}) {
      void *p = _mlir_memref_to_llvm_aligned_alloc(alignment, size);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u)
          << "alignment " << alignment << ", size " << size;
      std::memset(p, 0, size);
      _mlir_memref_to_llvm_free(p);
    }
  }
  seqc_trim_buffer_cache();
}

TEST(Buffers, SmallAndForeignBuffersGoToFree) {
  // Small requests are plain malloc blocks; a buffer the runtime did not
  // allocate (a model compiled without its allocator, a fake model) is
  // released with free. Under ASan a mismatch here would be reported.
  void *small = _mlir_memref_to_llvm_alloc(100);
  ASSERT_NE(small, nullptr);
  _mlir_memref_to_llvm_free(small);
  void *foreign = std::malloc(size_t(1) << 20);
  ASSERT_NE(foreign, nullptr);
  seqc::releaseModelBuffer(foreign);
  _mlir_memref_to_llvm_free(nullptr);
  EXPECT_EQ(seqc_trim_buffer_cache(), 0u);
}

} // namespace
