//===- OutOfMemoryTest.cpp - Allocation failures during a run -------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The alloc model (FakeAllocModel.c) allocates what a compiled model does,
// through the runtime. Each test makes one of its allocations fail, by the
// memory limit or by a simulated refusal of the system
// (failSystemAllocationsForTesting: the sanitizers' allocators cannot be
// driven out of memory without ending the process), and checks the status,
// that nothing the run allocated is still held, and that the same instance
// then runs a smaller call.
//
//===----------------------------------------------------------------------===//

#include "Buffers.h"
#include "FakeModels.h"
#include "TestUtil.h"

#include <vector>

using namespace seqc;
using namespace seqc::test;

namespace {

class OutOfMemory : public ::testing::Test {
protected:
  seqc_model *model = nullptr;

  void SetUp() override {
    seqc_trim_buffer_cache();
    baseline = modelMemoryInUse();
    ASSERT_TRUE(isOk(seqc_model_load_prepared(
        FAKE_ALLOC_MANIFEST, fake_alloc_invoke, fake_alloc_prepare,
        fake_alloc_release, &model)));
    setWeights({1, 2, 3, 4}); // y = 10 x
  }

  void TearDown() override {
    seqc_model_free(model);
    seqc_set_memory_limit(0);
    failSystemAllocationsForTesting(0);
    fake_alloc_prepared_bytes = 64;
    fake_alloc_intermediate_factor = 1;
    fake_alloc_scratch_bytes = 256;
    seqc_trim_buffer_cache();
    // Everything a run allocated is released with the model.
    EXPECT_EQ(modelMemoryInUse(), baseline);
  }

  void setWeights(std::vector<float> w) {
    seqc_tensor t = makeTensor(SEQC_DTYPE_F32, {4}, w.data());
    ASSERT_TRUE(isOk(seqc_model_set_param(model, "w", &t)));
  }

  void setInput(int64_t n) {
    input.assign(static_cast<size_t>(n), 0.0f);
    for (int64_t i = 0; i < n; ++i)
      input[static_cast<size_t>(i)] = static_cast<float>(i % 7);
    seqc_tensor t = makeTensor(SEQC_DTYPE_F32, {n}, input.data());
    ASSERT_TRUE(isOk(seqc_model_set_input(model, "x", &t)));
  }

  /// Runs, and checks y = 10 x.
  ::testing::AssertionResult runsCorrectly() {
    if (seqc_status *status = seqc_model_run(model)) {
      StatusPtr owned(status);
      return ::testing::AssertionFailure()
             << "run failed: " << seqc_status_message(status);
    }
    seqc_tensor y;
    if (seqc_status *status = seqc_model_get_output(model, "y", &y)) {
      StatusPtr owned(status);
      return ::testing::AssertionFailure() << seqc_status_message(status);
    }
    for (size_t i = 0; i < input.size(); ++i)
      if (static_cast<float *>(y.data)[i] != 10 * input[i])
        return ::testing::AssertionFailure() << "y[" << i << "] is wrong";
    return ::testing::AssertionSuccess();
  }

  /// After a failed run: the model holds nothing more than before it was
  /// loaded (its prepared state was released, the cache trimmed).
  void expectNothingHeld() { EXPECT_EQ(modelMemoryInUse(), baseline); }

  std::vector<float> input;
  size_t baseline = 0;
};

TEST_F(OutOfMemory, TheArenaOverTheLimitFailsBeforeTheModelRuns) {
  setInput(1 << 20); // An arena of 8 MiB.
  seqc_set_memory_limit(uint64_t(1) << 20);
  EXPECT_TRUE(failsWith(
      seqc_model_run(model), SEQC_STATUS_OUT_OF_MEMORY,
      {"model 'alloc' ran out of memory: cannot allocate 8.00 MiB (8388608 "
       "bytes) for its arena (the intermediates its memory plan places): it "
       "would exceed the memory limit of 1.00 MiB (1048576 bytes)",
       "of which"}));
  expectNothingHeld();
  seqc_tensor y;
  EXPECT_TRUE(failsWith(seqc_model_get_output(model, "y", &y),
                        SEQC_STATUS_FAILED_PRECONDITION, {"has not run"}));
  // A smaller call on the same instance.
  setInput(1000);
  EXPECT_TRUE(runsCorrectly());
  // And the large one, once the limit allows it.
  seqc_set_memory_limit(uint64_t(64) << 20);
  setInput(1 << 20);
  EXPECT_TRUE(runsCorrectly());
}

TEST_F(OutOfMemory, ABufferAfterOthersFreesTheOthers) {
  // The arena (8 KiB) and y (4 KiB) fit; the intermediate (4 MiB) does not.
  setInput(1024);
  fake_alloc_intermediate_factor = 1024;
  seqc_set_memory_limit(uint64_t(1) << 20);
  EXPECT_TRUE(failsWith(seqc_model_run(model), SEQC_STATUS_OUT_OF_MEMORY,
                        {"cannot allocate 4.00 MiB (4194304 bytes) for one "
                         "of its buffers (an output or an intermediate)"}));
  expectNothingHeld();
  fake_alloc_intermediate_factor = 1;
  EXPECT_TRUE(runsCorrectly());
  // Again after a successful run: the arena of that run is released too.
  fake_alloc_intermediate_factor = 1024;
  EXPECT_TRUE(failsWith(seqc_model_run(model), SEQC_STATUS_OUT_OF_MEMORY,
                        {"for one of its buffers"}));
  expectNothingHeld();
  fake_alloc_intermediate_factor = 1;
  EXPECT_TRUE(runsCorrectly());
}

TEST_F(OutOfMemory, TheSystemRefusingIsReportedAlike) {
  setInput(1 << 20);
  failSystemAllocationsForTesting(size_t(1) << 20);
  EXPECT_TRUE(failsWith(seqc_model_run(model), SEQC_STATUS_OUT_OF_MEMORY,
                        {"cannot allocate 8.00 MiB (8388608 bytes) for its "
                         "arena",
                         "the system has no memory left for it"}));
  expectNothingHeld();
  setInput(1000);
  EXPECT_TRUE(runsCorrectly());
}

TEST_F(OutOfMemory, APreparedValueFailsThePreparation) {
  setInput(100);
  fake_alloc_prepared_bytes = 4 << 20;
  seqc_set_memory_limit(uint64_t(1) << 20);
  EXPECT_TRUE(failsWith(seqc_model_run(model), SEQC_STATUS_OUT_OF_MEMORY,
                        {"cannot allocate 4.00 MiB (4194304 bytes) for a "
                         "value it prepares from its weights"}));
  expectNothingHeld();
  fake_alloc_prepared_bytes = 64;
  EXPECT_TRUE(runsCorrectly());
}

TEST_F(OutOfMemory, AModelThatPreparesForEachCallFreesItsState) {
  // Loaded without its preparation entry points: seqc_invoke prepares and
  // releases a state of its own at each call, which the failure must free.
  seqc_model *each = nullptr;
  ASSERT_TRUE(isOk(
      seqc_model_load_from(FAKE_ALLOC_MANIFEST, fake_alloc_invoke, &each)));
  std::vector<float> w = {1, 1, 1, 1};
  seqc_tensor wt = makeTensor(SEQC_DTYPE_F32, {4}, w.data());
  ASSERT_TRUE(isOk(seqc_model_set_param(each, "w", &wt)));
  std::vector<float> x(1 << 20, 1.0f);
  seqc_tensor xt = makeTensor(SEQC_DTYPE_F32, {1 << 20}, x.data());
  ASSERT_TRUE(isOk(seqc_model_set_input(each, "x", &xt)));
  seqc_set_memory_limit(uint64_t(1) << 20);
  EXPECT_TRUE(failsWith(seqc_model_run(each), SEQC_STATUS_OUT_OF_MEMORY,
                        {"for its arena"}));
  expectNothingHeld();
  xt.shape[0] = 100;
  ASSERT_TRUE(isOk(seqc_model_set_input(each, "x", &xt)));
  EXPECT_TRUE(isOk(seqc_model_run(each)));
  seqc_model_free(each);
}

TEST_F(OutOfMemory, ScratchInAParallelLoopFailsTheRunWhenTheLoopEnds) {
  // Scratch of 2 MiB per block of 64 rows, over a limit of 1 MiB: the
  // parallel loop cannot be unwound, so it finishes on the reserve and the
  // run fails afterwards, with one thread (a serialized region) and more.
  setInput(256);
  std::vector<int32_t> threads = {1};
  if (seqc_max_threads() >= 2)
    threads.push_back(2);
  for (int32_t count : threads) {
    SCOPED_TRACE("threads " + std::to_string(count));
    ASSERT_TRUE(isOk(seqc_set_num_threads(count)));
    fake_alloc_scratch_bytes = 2 << 20;
    seqc_set_memory_limit(uint64_t(1) << 20);
    EXPECT_TRUE(failsWith(
        seqc_model_run(model), SEQC_STATUS_OUT_OF_MEMORY,
        {"model 'alloc' ran out of memory inside a parallel loop: a request "
         "of 2.00 MiB (2097152 bytes) for per-block scratch inside a "
         "parallel loop was refused (it would exceed the memory limit of "
         "1.00 MiB",
         "the run's results are discarded"}));
    expectNothingHeld();
    // Refused by the system instead of the limit.
    seqc_set_memory_limit(0);
    failSystemAllocationsForTesting(size_t(1) << 20);
    EXPECT_TRUE(failsWith(
        seqc_model_run(model), SEQC_STATUS_OUT_OF_MEMORY,
        {"inside a parallel loop", "(the system has no memory left for it)"}));
    expectNothingHeld();
    failSystemAllocationsForTesting(0);
    fake_alloc_scratch_bytes = 256;
    EXPECT_TRUE(runsCorrectly());
  }
  ASSERT_TRUE(isOk(seqc_set_num_threads(1)));
}

TEST_F(OutOfMemory, TheLimitCountsCachedBuffersButReleasesThem) {
  // A run leaves its intermediate cached (1 MiB), and y (1 MiB) and the
  // arena (2 MiB) held. The next run, at sizes of other classes, fits under
  // 5.5 MiB only once the cached block is released.
  setInput(1 << 18);
  EXPECT_TRUE(runsCorrectly());
  EXPECT_GE(modelMemoryInUse(), baseline + (size_t(4) << 20));
  seqc_set_memory_limit(uint64_t(11) << 19);
  EXPECT_EQ(seqc_memory_limit(), uint64_t(11) << 19);
  setInput((1 << 18) + (1 << 14));
  EXPECT_TRUE(runsCorrectly());
}

TEST(Threads, CountsAboveTheMachineAreRejected) {
  int32_t max = seqc_max_threads();
  EXPECT_GE(max, 1);
#ifdef SEQC_TEST_HAVE_OPENMP
  EXPECT_TRUE(failsWith(seqc_set_num_threads(max + 1),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"is more than the", "seqc_max_threads"}));
  EXPECT_TRUE(isOk(seqc_set_num_threads(max)));
  EXPECT_TRUE(isOk(seqc_set_num_threads(1)));
#endif
}

TEST(ByteSizes, ParseAndFormat) {
  uint64_t bytes = 0;
  EXPECT_TRUE(parseByteSize("512", &bytes));
  EXPECT_EQ(bytes, 512u);
  EXPECT_TRUE(parseByteSize("4G", &bytes));
  EXPECT_EQ(bytes, uint64_t(4) << 30);
  EXPECT_TRUE(parseByteSize("3MiB", &bytes));
  EXPECT_EQ(bytes, uint64_t(3) << 20);
  EXPECT_TRUE(parseByteSize("2kb", &bytes));
  EXPECT_EQ(bytes, uint64_t(2) << 10);
  EXPECT_TRUE(parseByteSize("100B", &bytes));
  EXPECT_EQ(bytes, 100u);
  for (const char *bad : {"", "G", "-1", "1.5G", "4X", "4GG", "1 G",
                          "99999999999999999999", "20000000T"})
    EXPECT_FALSE(parseByteSize(bad, &bytes)) << bad;
  EXPECT_EQ(formatBytes(100), "100 bytes");
  EXPECT_EQ(formatBytes(1536), "1.50 KiB (1536 bytes)");
  EXPECT_EQ(formatBytes(uint64_t(8) << 30), "8.00 GiB (8589934592 bytes)");
}

} // namespace
