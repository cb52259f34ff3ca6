//===- CloneTest.cpp - Instances that share one set of weights ------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// seqc_model_clone: a new instance with its own inputs, outputs and state,
// whose parameters are the source's bytes, shared by reference. The fake
// model computes y = x * w + (its arena's scratch), with the arena in its
// prepared state as a compiled model's (docs/abi.md), so that concurrent
// runs of clones that shared one arena would corrupt each other's results.
//
// A second fake model follows ABI version 2 (manifest "abi": 2): its
// prepared block (a copy of w) is read-only and shared by every clone of
// the same weights, and its arena is the instance's record.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace seqc::test;

namespace {

struct ModelDeleter {
  void operator()(seqc_model *model) const { seqc_model_free(model); }
};
using ModelPtr = std::unique_ptr<seqc_model, ModelDeleter>;

constexpr int kSize = 1024;

const std::string kManifest =
    "{\"model\": \"shared\", \"inputs\": [{\"name\": \"x\", \"dtype\": "
    "\"f32\", \"shape\": [" +
    std::to_string(kSize) +
    "]}], \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [" +
    std::to_string(kSize) +
    "]}], \"params\": [{\"name\": \"w\", \"dtype\": \"f32\", \"shape\": [" +
    std::to_string(kSize) + "]}]}";

struct Descriptor1 {
  float *allocated, *aligned;
  int64_t offset, size, stride;
};

/// The prepared state: the weight, copied, and the scratch arena.
struct State {
  float w[kSize];
  float scratch[kSize];
};

std::atomic<int> prepareCalls{0};

void *clonePrepare(void **params) {
  ++prepareCalls;
  auto *w = static_cast<const Descriptor1 *>(params[0]);
  auto *state = new State();
  for (int i = 0; i < kSize; ++i)
    state->w[i] = w->aligned[w->offset + i * w->stride];
  return state;
}
void cloneRelease(void *state) { delete static_cast<State *>(state); }

/// y = x * w, through the arena, yielding between the two halves.
void cloneInvoke(void **args) {
  auto *result = static_cast<Descriptor1 *>(args[0]);
  auto *x = static_cast<const Descriptor1 *>(args[1]);
  auto *state = static_cast<State *>(args[3]);
  for (int i = 0; i < kSize; ++i)
    state->scratch[i] = x->aligned[x->offset + i * x->stride] * state->w[i];
  std::this_thread::yield();
  float *y = static_cast<float *>(std::malloc(kSize * sizeof(float)));
  for (int i = 0; i < kSize; ++i)
    y[i] = state->scratch[i];
  *result = {y, y, 0, kSize, 1};
}

ModelPtr loadModel() {
  seqc_model *model = nullptr;
  EXPECT_TRUE(isOk(seqc_model_load_prepared(
      kManifest.c_str(), cloneInvoke, clonePrepare, cloneRelease, &model)));
  return ModelPtr(model);
}

ModelPtr cloneOf(const seqc_model *src) {
  seqc_model *model = nullptr;
  EXPECT_TRUE(isOk(seqc_model_clone(src, &model)));
  return ModelPtr(model);
}

const void *paramData(const seqc_model *model) {
  seqc_tensor tensor;
  EXPECT_TRUE(isOk(seqc_model_get_param(model, "w", &tensor)));
  return tensor.data;
}

/// Runs `model` on x = value everywhere; returns y.
std::vector<float> runOn(seqc_model *model, float value) {
  std::vector<float> x(kSize, value);
  seqc_tensor input = makeTensor(SEQC_DTYPE_F32, {kSize}, x.data());
  EXPECT_TRUE(isOk(seqc_model_set_input(model, "x", &input)));
  EXPECT_TRUE(isOk(seqc_model_run(model)));
  seqc_tensor output;
  EXPECT_TRUE(isOk(seqc_model_get_output(model, "y", &output)));
  const float *y = static_cast<const float *>(output.data);
  return std::vector<float>(y, y + kSize);
}

std::vector<float> expected(const seqc_model *model, float value) {
  seqc_tensor tensor;
  EXPECT_TRUE(isOk(seqc_model_get_param(model, "w", &tensor)));
  const float *w = static_cast<const float *>(tensor.data);
  std::vector<float> y(kSize);
  for (int i = 0; i < kSize; ++i)
    y[i] = value * w[i];
  return y;
}

TEST(Clone, SharesTheParametersAndGivesTheSameOutputs) {
  ModelPtr model = loadModel();
  ASSERT_TRUE(isOk(seqc_model_random_weights(model.get(), 3)));
  std::vector<ModelPtr> clones;
  for (int i = 0; i < 3; ++i)
    clones.push_back(cloneOf(model.get()));
  for (const ModelPtr &clone : clones) {
    EXPECT_EQ(paramData(clone.get()), paramData(model.get()));
    EXPECT_STREQ(seqc_model_name(clone.get()), "shared");
    EXPECT_STREQ(seqc_model_manifest(clone.get()),
                 seqc_model_manifest(model.get()));
  }
  std::vector<float> y = runOn(model.get(), 1.5f);
  EXPECT_EQ(y, expected(model.get(), 1.5f));
  for (const ModelPtr &clone : clones)
    EXPECT_EQ(runOn(clone.get(), 1.5f), y);
}

TEST(Clone, HasItsOwnInputsAndOutputs) {
  ModelPtr model = loadModel();
  ASSERT_TRUE(isOk(seqc_model_random_weights(model.get(), 3)));
  runOn(model.get(), 1.0f);
  ModelPtr clone = cloneOf(model.get());
  seqc_tensor output;
  // Nothing ran on the clone, and no input is bound there.
  EXPECT_TRUE(failsWith(seqc_model_get_output(clone.get(), "y", &output),
                        SEQC_STATUS_FAILED_PRECONDITION, {"has not run"}));
  EXPECT_TRUE(failsWith(seqc_model_run(clone.get()),
                        SEQC_STATUS_FAILED_PRECONDITION,
                        {"input 'x' is not bound"}));
  EXPECT_TRUE(isOk(seqc_model_get_output(model.get(), "y", &output)));
}

TEST(Clone, OfAModelWithoutWeightsNeedsWeights) {
  ModelPtr model = loadModel();
  ModelPtr clone = cloneOf(model.get());
  std::vector<float> x(kSize, 1.0f);
  seqc_tensor input = makeTensor(SEQC_DTYPE_F32, {kSize}, x.data());
  ASSERT_TRUE(isOk(seqc_model_set_input(clone.get(), "x", &input)));
  EXPECT_TRUE(failsWith(seqc_model_run(clone.get()),
                        SEQC_STATUS_FAILED_PRECONDITION,
                        {"parameter 'w' is not bound"}));
}

TEST(Clone, RejectsNullArguments) {
  ModelPtr model = loadModel();
  seqc_model *out = nullptr;
  EXPECT_TRUE(failsWith(seqc_model_clone(nullptr, &out),
                        SEQC_STATUS_INVALID_ARGUMENT, {"must not be NULL"}));
  EXPECT_TRUE(failsWith(seqc_model_clone(model.get(), nullptr),
                        SEQC_STATUS_INVALID_ARGUMENT, {"must not be NULL"}));
}

TEST(Clone, RebindingOneInstanceLeavesTheOthers) {
  ModelPtr model = loadModel();
  ASSERT_TRUE(isOk(seqc_model_random_weights(model.get(), 3)));
  ModelPtr clone = cloneOf(model.get());
  const void *shared = paramData(model.get());
  std::vector<float> before = runOn(clone.get(), 2.0f);
  std::vector<float> twos(kSize, 2.0f);
  seqc_tensor w = makeTensor(SEQC_DTYPE_F32, {kSize}, twos.data());
  ASSERT_TRUE(isOk(seqc_model_set_param(clone.get(), "w", &w)));
  EXPECT_NE(paramData(clone.get()), shared);
  EXPECT_EQ(paramData(model.get()), shared);
  EXPECT_EQ(runOn(clone.get(), 2.0f), std::vector<float>(kSize, 4.0f));
  EXPECT_EQ(runOn(model.get(), 2.0f), before);
  ASSERT_TRUE(isOk(seqc_model_random_weights(model.get(), 4)));
  EXPECT_EQ(runOn(clone.get(), 2.0f), std::vector<float>(kSize, 4.0f));
}

TEST(Clone, FreedInAnyOrder) {
  for (int order = 0; order < 3; ++order) {
    ModelPtr model = loadModel();
    ASSERT_TRUE(isOk(seqc_model_random_weights(model.get(), 5)));
    std::vector<float> y = runOn(model.get(), 3.0f);
    ModelPtr a = cloneOf(model.get());
    ModelPtr b = cloneOf(a.get()); // a clone of a clone shares them too
    EXPECT_EQ(paramData(b.get()), paramData(model.get()));
    if (order == 0) {
      model.reset();
      EXPECT_EQ(runOn(a.get(), 3.0f), y);
      a.reset();
      EXPECT_EQ(runOn(b.get(), 3.0f), y);
    } else if (order == 1) {
      b.reset();
      a.reset();
      EXPECT_EQ(runOn(model.get(), 3.0f), y);
    } else {
      a.reset();
      EXPECT_EQ(runOn(b.get(), 3.0f), y);
      model.reset();
      EXPECT_EQ(runOn(b.get(), 3.0f), y);
    }
  }
}

TEST(Clone, SharesMappedWeights) {
  TempDir dir;
  ModelPtr model = loadModel();
  ASSERT_TRUE(isOk(seqc_model_random_weights(model.get(), 6)));
  std::string path = dir.file("w.safetensors");
  ASSERT_TRUE(isOk(seqc_model_save_weights(model.get(), path.c_str())));
  ModelPtr loaded = loadModel();
  ASSERT_TRUE(isOk(seqc_model_load_weights(loaded.get(), path.c_str())));
  ModelPtr clone = cloneOf(loaded.get());
  EXPECT_EQ(paramData(clone.get()), paramData(loaded.get()));
  // The mapping outlives the instance that loaded it.
  std::vector<float> y = runOn(loaded.get(), 0.5f);
  loaded.reset();
  EXPECT_EQ(runOn(clone.get(), 0.5f), y);
}

TEST(Clone, ClonesRunConcurrently) {
  ModelPtr model = loadModel();
  ASSERT_TRUE(isOk(seqc_model_random_weights(model.get(), 7)));
  constexpr int kThreads = 4, kRuns = 50;
  std::vector<ModelPtr> instances;
  for (int t = 0; t < kThreads; ++t)
    instances.push_back(cloneOf(model.get()));
  std::vector<std::vector<float>> want;
  for (int t = 0; t < kThreads; ++t)
    want.push_back(expected(model.get(), static_cast<float>(t + 1)));
  prepareCalls = 0;
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r)
        if (runOn(instances[t].get(), static_cast<float>(t + 1)) != want[t])
          ++mismatches;
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(mismatches.load(), 0);
  // Each instance prepared once, for its own arena.
  EXPECT_EQ(prepareCalls.load(), kThreads);
  for (const ModelPtr &instance : instances)
    EXPECT_EQ(paramData(instance.get()), paramData(model.get()));
}

//===----------------------------------------------------------------------===//
// ABI version 2: one prepared block for every clone of the same weights
//===----------------------------------------------------------------------===//

const std::string kManifestV2 = "{\"abi\": 2, " + kManifest.substr(1);

/// The description every prepared block of version 2 starts with the
/// address of: {count, offsets, ranks, keys}.
const int64_t kTableV2[] = {1, 8, 1, 42};

/// The prepared block: the description, then w's copy.
struct BlockV2 {
  const int64_t *table;
  Descriptor1 w;
};

/// The arena's record, the caller's.
struct ArenaV2 {
  float *base;
  int64_t capacity;
};

std::atomic<int> prepareV2Calls{0}, releaseV2Calls{0};
std::mutex seenMutex;
std::set<const void *> seenBlocks;

void *prepareV2(void **params) {
  ++prepareV2Calls;
  auto *w = static_cast<const Descriptor1 *>(params[0]);
  auto *copy = static_cast<float *>(std::malloc(kSize * sizeof(float)));
  for (int i = 0; i < kSize; ++i)
    copy[i] = w->aligned[w->offset + i * w->stride];
  // Long enough for concurrent first runs to meet here.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return new BlockV2{kTableV2, {copy, copy, 0, kSize, 1}};
}
void releaseV2(void *opaque) {
  ++releaseV2Calls;
  auto *block = static_cast<BlockV2 *>(opaque);
  std::free(block->w.allocated);
  delete block;
}

/// y = x * w, through the instance's arena (grown on first use; the
/// runtime frees it), reading the shared block only.
void invokeV2(void **args) {
  auto *result = static_cast<Descriptor1 *>(args[0]);
  auto *x = static_cast<const Descriptor1 *>(args[1]);
  const auto *block = static_cast<const BlockV2 *>(args[3]);
  auto *arena = static_cast<ArenaV2 *>(args[4]);
  {
    std::lock_guard<std::mutex> lock(seenMutex);
    seenBlocks.insert(block);
  }
  if (arena->capacity < kSize) {
    std::free(arena->base);
    arena->base = static_cast<float *>(std::malloc(kSize * sizeof(float)));
    arena->capacity = kSize;
  }
  for (int i = 0; i < kSize; ++i)
    arena->base[i] = x->aligned[x->offset + i * x->stride] * block->w.aligned[i];
  std::this_thread::yield();
  float *y = static_cast<float *>(std::malloc(kSize * sizeof(float)));
  std::memcpy(y, arena->base, kSize * sizeof(float));
  *result = {y, y, 0, kSize, 1};
}

ModelPtr loadModelV2() {
  seqc_model *model = nullptr;
  EXPECT_TRUE(isOk(seqc_model_load_prepared(
      kManifestV2.c_str(), invokeV2, prepareV2, releaseV2, &model)));
  return ModelPtr(model);
}

void resetV2Counts() {
  prepareV2Calls = 0;
  releaseV2Calls = 0;
  std::lock_guard<std::mutex> lock(seenMutex);
  seenBlocks.clear();
}

TEST(CloneV2, ClonesShareOnePreparedBlock) {
  resetV2Counts();
  {
    ModelPtr model = loadModelV2();
    ASSERT_TRUE(isOk(seqc_model_random_weights(model.get(), 3)));
    std::vector<ModelPtr> clones;
    for (int i = 0; i < 3; ++i)
      clones.push_back(cloneOf(model.get()));
    std::vector<float> y = runOn(clones[1].get(), 1.5f);
    EXPECT_EQ(y, expected(model.get(), 1.5f));
    EXPECT_EQ(runOn(model.get(), 1.5f), y);
    for (const ModelPtr &clone : clones)
      EXPECT_EQ(runOn(clone.get(), 1.5f), y);
    // A clone of an instance that prepared already shares its block too.
    ModelPtr late = cloneOf(clones[2].get());
    EXPECT_EQ(runOn(late.get(), 1.5f), y);
    EXPECT_EQ(prepareV2Calls.load(), 1);
    EXPECT_EQ(seenBlocks.size(), 1u);
    EXPECT_EQ(releaseV2Calls.load(), 0);
  }
  EXPECT_EQ(releaseV2Calls.load(), 1);
}

TEST(CloneV2, ConcurrentFirstRunsPrepareOnce) {
  resetV2Counts();
  {
    ModelPtr model = loadModelV2();
    ASSERT_TRUE(isOk(seqc_model_random_weights(model.get(), 7)));
    constexpr int kThreads = 4, kRuns = 50;
    std::vector<ModelPtr> instances;
    for (int t = 0; t < kThreads; ++t)
      instances.push_back(cloneOf(model.get()));
    std::vector<std::vector<float>> want;
    for (int t = 0; t < kThreads; ++t)
      want.push_back(expected(model.get(), static_cast<float>(t + 1)));
    std::atomic<int> mismatches{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int r = 0; r < kRuns; ++r)
          if (runOn(instances[t].get(), static_cast<float>(t + 1)) != want[t])
            ++mismatches;
      });
    for (std::thread &thread : threads)
      thread.join();
    EXPECT_EQ(mismatches.load(), 0);
    // One preparation for the four instances, each with its own arena.
    EXPECT_EQ(prepareV2Calls.load(), 1);
    EXPECT_EQ(seenBlocks.size(), 1u);
  }
  EXPECT_EQ(releaseV2Calls.load(), 1);
}

TEST(CloneV2, RebindingOneInstanceLeavesTheOthers) {
  resetV2Counts();
  {
    ModelPtr model = loadModelV2();
    ASSERT_TRUE(isOk(seqc_model_random_weights(model.get(), 3)));
    ModelPtr clone = cloneOf(model.get());
    ModelPtr other = cloneOf(model.get());
    std::vector<float> before = runOn(clone.get(), 2.0f);
    EXPECT_EQ(runOn(other.get(), 2.0f), before);
    std::vector<float> twos(kSize, 2.0f);
    seqc_tensor w = makeTensor(SEQC_DTYPE_F32, {kSize}, twos.data());
    ASSERT_TRUE(isOk(seqc_model_set_param(clone.get(), "w", &w)));
    EXPECT_EQ(runOn(clone.get(), 2.0f), std::vector<float>(kSize, 4.0f));
    EXPECT_EQ(runOn(model.get(), 2.0f), before);
    EXPECT_EQ(runOn(other.get(), 2.0f), before);
    EXPECT_EQ(prepareV2Calls.load(), 2);
    EXPECT_EQ(seenBlocks.size(), 2u);
    // The old weights' block lives while an instance is bound to them.
    EXPECT_EQ(releaseV2Calls.load(), 0);
    ASSERT_TRUE(isOk(seqc_model_random_weights(model.get(), 4)));
    ASSERT_TRUE(isOk(seqc_model_random_weights(other.get(), 4)));
    EXPECT_EQ(releaseV2Calls.load(), 1);
    EXPECT_EQ(runOn(clone.get(), 2.0f), std::vector<float>(kSize, 4.0f));
    EXPECT_EQ(prepareV2Calls.load(), 2);
  }
  EXPECT_EQ(releaseV2Calls.load(), prepareV2Calls.load());
}

TEST(CloneV2, FreedInAnyOrder) {
  // Every order of freeing the three instances; the block goes with the
  // last.
  std::vector<int> order = {0, 1, 2};
  do {
    resetV2Counts();
    std::vector<ModelPtr> instances;
    instances.push_back(loadModelV2());
    ASSERT_TRUE(isOk(seqc_model_random_weights(instances[0].get(), 5)));
    std::vector<float> y = runOn(instances[0].get(), 3.0f);
    instances.push_back(cloneOf(instances[0].get()));
    instances.push_back(cloneOf(instances[1].get()));
    for (int k = 0; k < 3; ++k) {
      instances[static_cast<size_t>(order[static_cast<size_t>(k)])].reset();
      EXPECT_EQ(releaseV2Calls.load(), k == 2 ? 1 : 0);
      for (const ModelPtr &instance : instances)
        if (instance)
          EXPECT_EQ(runOn(instance.get(), 3.0f), y);
    }
    EXPECT_EQ(prepareV2Calls.load(), 1);
  } while (std::next_permutation(order.begin(), order.end()));
}

} // namespace
