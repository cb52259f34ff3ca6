//===- EntriesTest.cpp - Models with several entry functions --------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// seqc_model_select_entry and friends over a fake model with two entries
// sharing a parameter `w` and a state `acc`: `forward` maps x [n] to
// y = x * w and takes no state; `step` maps x [1] to y = acc += x * w,
// updating the state in place. Inputs, outputs and runs follow the selected
// entry; the weights and the state are the instance's.
//
// The same model in ABI version 2 (manifest "abi": 2) prepares, per entry,
// a read-only block: `forward` two values, w (key 7) and 2 w (key 9),
// `step` one, w (key 7). Whichever entry prepares second takes the value of
// key 7 from the first's block instead of keeping its own copy.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace seqc::test;

namespace {

struct ModelDeleter {
  void operator()(seqc_model *model) const { seqc_model_free(model); }
};
using ModelPtr = std::unique_ptr<seqc_model, ModelDeleter>;

const char *const kX =
    R"({"name": "x", "dtype": "f32", "shape": ["n"]})";
const char *const kY =
    R"({"name": "y", "dtype": "f32", "shape": ["n"]})";
const char *const kAcc = R"({"name": "acc", "dtype": "f32", "shape": [1]})";

const std::string kManifest =
    std::string(R"({"model": "multi", "inputs": [)") + kX +
    R"(], "outputs": [)" + kY +
    R"(], "params": [{"name": "w", "dtype": "f32", "shape": [1]}], )"
    R"("state": [)" + kAcc + R"(], "entries": [{"name": "forward", )"
    R"("inputs": [)" + kX + R"(], "outputs": [)" + kY +
    R"(]}, {"name": "step", "inputs": [{"name": "x", "dtype": "f32", )"
    R"("shape": [1]}], "outputs": [{"name": "y", "dtype": "f32", )"
    R"("shape": [1]}], "state": [)" + kAcc + "]}]}";

struct Descriptor1 {
  float *allocated, *aligned;
  int64_t offset, size, stride;
};

float element(const void *descriptor, int64_t i) {
  auto *d = static_cast<const Descriptor1 *>(descriptor);
  return d->aligned[d->offset + i * d->stride];
}

void returnVector(void *result, const float *values, int64_t n) {
  float *y = static_cast<float *>(std::malloc(n * sizeof(float)));
  for (int64_t i = 0; i < n; ++i)
    y[i] = values[i];
  *static_cast<Descriptor1 *>(result) = {y, y, 0, n, 1};
}

/// args: result, x, w, prepared.
void forwardInvoke(void **args) {
  int64_t n = static_cast<const Descriptor1 *>(args[1])->size;
  float w = element(args[2], 0);
  std::vector<float> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    y[static_cast<size_t>(i)] = element(args[1], i) * w;
  returnVector(args[0], y.data(), n);
}

/// args: result, x, w, acc, prepared.
void stepInvoke(void **args) {
  auto *acc = static_cast<Descriptor1 *>(args[3]);
  acc->aligned[acc->offset] += element(args[1], 0) * element(args[2], 0);
  returnVector(args[0], &acc->aligned[acc->offset], 1);
}

const seqc_entry_symbols kSymbols[] = {{"step", stepInvoke, nullptr, nullptr},
                                       {"forward", forwardInvoke, nullptr,
                                        nullptr},
                                       {nullptr, nullptr, nullptr, nullptr}};

ModelPtr loadModel() {
  seqc_model *model = nullptr;
  EXPECT_TRUE(
      isOk(seqc_model_load_entries(kManifest.c_str(), kSymbols, &model)));
  float w = 2;
  seqc_tensor tensor = makeTensor(SEQC_DTYPE_F32, {1}, &w);
  EXPECT_TRUE(isOk(seqc_model_set_param(model, "w", &tensor)));
  return ModelPtr(model);
}

/// Binds x (when given) and runs; returns y.
std::vector<float> run(seqc_model *model, std::vector<float> x) {
  if (!x.empty()) {
    seqc_tensor input = makeTensor(
        SEQC_DTYPE_F32, {static_cast<int64_t>(x.size())}, x.data());
    EXPECT_TRUE(isOk(seqc_model_set_input(model, "x", &input)));
  }
  EXPECT_TRUE(isOk(seqc_model_run(model)));
  seqc_tensor output;
  EXPECT_TRUE(isOk(seqc_model_get_output(model, "y", &output)));
  const float *y = static_cast<const float *>(output.data);
  return std::vector<float>(y, y + output.shape[0]);
}

TEST(Entries, AreListedWithTheDefaultSelected) {
  ModelPtr model = loadModel();
  EXPECT_EQ(seqc_model_num_entries(model.get()), 2);
  EXPECT_STREQ(seqc_model_entry_name(model.get(), 0), "forward");
  EXPECT_STREQ(seqc_model_entry_name(model.get(), 1), "step");
  EXPECT_EQ(seqc_model_entry_name(model.get(), 2), nullptr);
  EXPECT_STREQ(seqc_model_selected_entry(model.get()), "forward");
  EXPECT_EQ(run(model.get(), {1, 2, 3}), (std::vector<float>{2, 4, 6}));
}

TEST(Entries, InputsOutputsAndRunsFollowTheSelection) {
  ModelPtr model = loadModel();
  ASSERT_TRUE(isOk(seqc_model_select_entry(model.get(), "step")));
  seqc_value_info info;
  ASSERT_TRUE(
      isOk(seqc_model_info(model.get(), SEQC_VALUE_INPUT, 0, &info)));
  EXPECT_EQ(info.shape[0], 1);
  EXPECT_EQ(seqc_model_num_state(model.get()), 1);
  EXPECT_EQ(run(model.get(), {1}), std::vector<float>{2});
  EXPECT_EQ(run(model.get(), {1}), std::vector<float>{4});
  // Another entry runs on its own inputs; the state stays, and each entry
  // keeps its bound inputs.
  ASSERT_TRUE(isOk(seqc_model_select_entry(model.get(), "forward")));
  EXPECT_EQ(run(model.get(), {5, 5}), (std::vector<float>{10, 10}));
  ASSERT_TRUE(isOk(seqc_model_select_entry(model.get(), "step")));
  EXPECT_EQ(run(model.get(), {}), std::vector<float>{6});
  ASSERT_TRUE(isOk(seqc_model_select_entry(model.get(), "forward")));
  EXPECT_EQ(run(model.get(), {}), (std::vector<float>{10, 10}));
  // A wrong-sized input of the selected entry is refused.
  float two[2] = {1, 1};
  seqc_tensor bad = makeTensor(SEQC_DTYPE_F32, {2}, two);
  ASSERT_TRUE(isOk(seqc_model_select_entry(model.get(), "step")));
  EXPECT_TRUE(failsWith(seqc_model_set_input(model.get(), "x", &bad),
                        SEQC_STATUS_INVALID_ARGUMENT, {"'x'"}));
  EXPECT_TRUE(isOk(seqc_model_reset_state(model.get())));
  EXPECT_EQ(run(model.get(), {}), std::vector<float>{2});
}

TEST(Entries, UnknownNameLeavesTheInstanceAsItWas) {
  ModelPtr model = loadModel();
  ASSERT_TRUE(isOk(seqc_model_select_entry(model.get(), "step")));
  EXPECT_EQ(run(model.get(), {1}), std::vector<float>{2});
  EXPECT_TRUE(failsWith(seqc_model_select_entry(model.get(), "decode"),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"model 'multi' has no entry 'decode' (its entries: "
                         "forward, step)"}));
  EXPECT_STREQ(seqc_model_selected_entry(model.get()), "step");
  EXPECT_EQ(run(model.get(), {}), std::vector<float>{4});
  EXPECT_TRUE(failsWith(seqc_model_select_entry(model.get(), nullptr),
                        SEQC_STATUS_INVALID_ARGUMENT, {"NULL"}));
}

TEST(Entries, ClonesKeepTheSelectionWithTheirOwnState) {
  ModelPtr model = loadModel();
  ASSERT_TRUE(isOk(seqc_model_select_entry(model.get(), "step")));
  EXPECT_EQ(run(model.get(), {1}), std::vector<float>{2});
  seqc_model *raw = nullptr;
  ASSERT_TRUE(isOk(seqc_model_clone(model.get(), &raw)));
  ModelPtr clone(raw);
  EXPECT_STREQ(seqc_model_selected_entry(clone.get()), "step");
  EXPECT_EQ(run(clone.get(), {1}), std::vector<float>{2});
  EXPECT_EQ(run(model.get(), {}), std::vector<float>{4});
  ASSERT_TRUE(isOk(seqc_model_select_entry(clone.get(), "forward")));
  EXPECT_EQ(run(clone.get(), {3}), std::vector<float>{6});
}

TEST(Entries, WithoutSymbolsAnEntryCannotBeSelected) {
  seqc_model *raw = nullptr;
  ASSERT_TRUE(
      isOk(seqc_model_load_from(kManifest.c_str(), forwardInvoke, &raw)));
  ModelPtr model(raw);
  EXPECT_EQ(seqc_model_num_entries(model.get()), 2);
  EXPECT_TRUE(failsWith(seqc_model_select_entry(model.get(), "step"),
                        SEQC_STATUS_FAILED_PRECONDITION, {"'step'"}));
  EXPECT_STREQ(seqc_model_selected_entry(model.get()), "forward");
}

TEST(Entries, AModelWithOneFunctionHasTheEntryForward) {
  seqc_model *raw = nullptr;
  std::string manifest = std::string(R"({"inputs": [)") + kX +
                         R"(], "outputs": [)" + kY + "]}";
  ASSERT_TRUE(isOk(seqc_model_load_from(manifest.c_str(), forwardInvoke, &raw)));
  ModelPtr model(raw);
  EXPECT_EQ(seqc_model_num_entries(model.get()), 1);
  EXPECT_STREQ(seqc_model_entry_name(model.get(), 0), "forward");
  EXPECT_TRUE(isOk(seqc_model_select_entry(model.get(), "forward")));
  EXPECT_TRUE(failsWith(seqc_model_select_entry(model.get(), "step"),
                        SEQC_STATUS_INVALID_ARGUMENT, {"forward"}));
}

//===----------------------------------------------------------------------===//
// ABI version 2: values prepared alike by several entries are shared
//===----------------------------------------------------------------------===//

const std::string kManifestV2 = "{\"abi\": 2, " + kManifest.substr(1);

/// {count, offsets, ranks, keys} of each entry's prepared block.
const int64_t kForwardTable[] = {2, 8, 48, 1, 1, 7, 9};
const int64_t kStepTable[] = {1, 8, 1, 7};

/// The marker of MLIR's constant globals: the runtime sets a borrowed
/// value's `allocated` to it, so that the entry's release skips it.
const uintptr_t kMarker = 0xdeadbeef;

struct ForwardBlock {
  const int64_t *table;
  Descriptor1 w, twice;
};
struct StepBlock {
  const int64_t *table;
  Descriptor1 w;
};
struct Arena {
  void *base;
  int64_t capacity;
};

std::atomic<int> prepares{0}, releases{0};
/// Where each entry's last run read w's prepared copy.
std::atomic<const float *> forwardW{nullptr}, stepW{nullptr};

Descriptor1 preparedScalar(float value) {
  auto *data = static_cast<float *>(std::malloc(sizeof(float)));
  *data = value;
  return {data, data, 0, 1, 1};
}
void freeUnlessBorrowed(const Descriptor1 &d) {
  if (reinterpret_cast<uintptr_t>(d.allocated) != kMarker)
    std::free(d.allocated);
}

void *forwardPrepare(void **params) {
  ++prepares;
  float w = element(params[0], 0);
  return new ForwardBlock{kForwardTable, preparedScalar(w),
                          preparedScalar(2 * w)};
}
void forwardRelease(void *opaque) {
  ++releases;
  auto *block = static_cast<ForwardBlock *>(opaque);
  freeUnlessBorrowed(block->w);
  freeUnlessBorrowed(block->twice);
  delete block;
}
void *stepPrepare(void **params) {
  ++prepares;
  return new StepBlock{kStepTable, preparedScalar(element(params[0], 0))};
}
void stepRelease(void *opaque) {
  ++releases;
  auto *block = static_cast<StepBlock *>(opaque);
  freeUnlessBorrowed(block->w);
  delete block;
}

/// The arena, grown once; the runtime frees it.
void useArena(void *record) {
  auto *arena = static_cast<Arena *>(record);
  if (!arena->capacity) {
    arena->base = std::malloc(64);
    arena->capacity = 64;
  }
}

/// args: result, x, w, prepared, arena: y = x * w + 0 * (2 w).
void forwardInvokeV2(void **args) {
  const auto *block = static_cast<const ForwardBlock *>(args[3]);
  useArena(args[4]);
  forwardW = block->w.aligned;
  int64_t n = static_cast<const Descriptor1 *>(args[1])->size;
  std::vector<float> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    y[static_cast<size_t>(i)] =
        element(args[1], i) * block->w.aligned[0] + 0 * block->twice.aligned[0];
  returnVector(args[0], y.data(), n);
}

/// args: result, x, w, acc, prepared, arena: y = acc += x * w.
void stepInvokeV2(void **args) {
  const auto *block = static_cast<const StepBlock *>(args[4]);
  useArena(args[5]);
  stepW = block->w.aligned;
  auto *acc = static_cast<Descriptor1 *>(args[3]);
  acc->aligned[acc->offset] += element(args[1], 0) * block->w.aligned[0];
  returnVector(args[0], &acc->aligned[acc->offset], 1);
}

const seqc_entry_symbols kSymbolsV2[] = {
    {"forward", forwardInvokeV2, forwardPrepare, forwardRelease},
    {"step", stepInvokeV2, stepPrepare, stepRelease},
    {nullptr, nullptr, nullptr, nullptr}};

ModelPtr loadModelV2(float w = 2) {
  seqc_model *model = nullptr;
  EXPECT_TRUE(
      isOk(seqc_model_load_entries(kManifestV2.c_str(), kSymbolsV2, &model)));
  seqc_tensor tensor = makeTensor(SEQC_DTYPE_F32, {1}, &w);
  EXPECT_TRUE(isOk(seqc_model_set_param(model, "w", &tensor)));
  return ModelPtr(model);
}

ModelPtr cloneOf(const seqc_model *model) {
  seqc_model *raw = nullptr;
  EXPECT_TRUE(isOk(seqc_model_clone(model, &raw)));
  return ModelPtr(raw);
}

TEST(EntriesV2, ShareTheValuesTheyPrepareAlike) {
  for (bool forwardFirst : {true, false}) {
    prepares = releases = 0;
    {
      ModelPtr model = loadModelV2();
      if (!forwardFirst)
        ASSERT_TRUE(isOk(seqc_model_select_entry(model.get(), "step")));
      EXPECT_EQ(run(model.get(), forwardFirst ? std::vector<float>{1, 2}
                                              : std::vector<float>{1}),
                forwardFirst ? (std::vector<float>{2, 4})
                             : std::vector<float>{2});
      ASSERT_TRUE(isOk(seqc_model_select_entry(
          model.get(), forwardFirst ? "step" : "forward")));
      EXPECT_EQ(run(model.get(), forwardFirst ? std::vector<float>{1}
                                              : std::vector<float>{1, 2}),
                forwardFirst ? std::vector<float>{2}
                             : (std::vector<float>{2, 4}));
      // One copy of w for both entries.
      EXPECT_EQ(forwardW.load(), stepW.load());
      EXPECT_EQ(prepares.load(), 2);
      // A clone shares both blocks, and runs both entries unchanged.
      ModelPtr clone = cloneOf(model.get());
      EXPECT_EQ(run(clone.get(), forwardFirst ? std::vector<float>{3}
                                              : std::vector<float>{3, 3}),
                forwardFirst ? std::vector<float>{6}
                             : (std::vector<float>{6, 6}));
      const float *shared = forwardW.load();
      ASSERT_TRUE(isOk(seqc_model_select_entry(
          clone.get(), forwardFirst ? "forward" : "step")));
      run(clone.get(), {1});
      EXPECT_EQ(forwardW.load(), shared);
      EXPECT_EQ(stepW.load(), shared);
      EXPECT_EQ(prepares.load(), 2);
      // Freed in either order.
      if (forwardFirst)
        model.reset();
      else
        clone.reset();
      EXPECT_EQ(releases.load(), 0);
    }
    EXPECT_EQ(releases.load(), 2);
  }
}

TEST(EntriesV2, RebindingPreparesEveryEntryAgainForThatInstance) {
  prepares = releases = 0;
  {
    ModelPtr model = loadModelV2(2);
    ModelPtr clone = cloneOf(model.get());
    EXPECT_EQ(run(model.get(), {1}), std::vector<float>{2});
    float three = 3;
    seqc_tensor w = makeTensor(SEQC_DTYPE_F32, {1}, &three);
    ASSERT_TRUE(isOk(seqc_model_set_param(clone.get(), "w", &w)));
    EXPECT_EQ(run(clone.get(), {1}), std::vector<float>{3});
    ASSERT_TRUE(isOk(seqc_model_select_entry(clone.get(), "step")));
    EXPECT_EQ(run(clone.get(), {1}), std::vector<float>{3});
    EXPECT_EQ(forwardW.load(), stepW.load());
    ASSERT_TRUE(isOk(seqc_model_select_entry(model.get(), "step")));
    EXPECT_EQ(run(model.get(), {1}), std::vector<float>{2});
    EXPECT_NE(stepW.load(), forwardW.load());
    EXPECT_EQ(prepares.load(), 4);
  }
  EXPECT_EQ(releases.load(), 4);
}

TEST(EntriesV2, ConcurrentFirstRunsOfEveryEntry) {
  prepares = releases = 0;
  {
    ModelPtr model = loadModelV2(2);
    std::vector<ModelPtr> instances;
    for (int t = 0; t < 4; ++t) {
      instances.push_back(cloneOf(model.get()));
      if (t % 2)
        ASSERT_TRUE(isOk(seqc_model_select_entry(instances.back().get(),
                                                 "step")));
    }
    std::atomic<int> mismatches{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        seqc_model *m = instances[static_cast<size_t>(t)].get();
        for (int r = 0; r < 20; ++r) {
          std::vector<float> x = t % 2 ? std::vector<float>{1}
                                       : std::vector<float>{1, 1};
          std::vector<float> want =
              t % 2 ? std::vector<float>{2.0f * (r + 1)}
                    : std::vector<float>{2, 2};
          if (run(m, x) != want)
            ++mismatches;
        }
      });
    for (std::thread &thread : threads)
      thread.join();
    EXPECT_EQ(mismatches.load(), 0);
    EXPECT_EQ(prepares.load(), 2);
    EXPECT_EQ(forwardW.load(), stepW.load());
  }
  EXPECT_EQ(releases.load(), 2);
}

/// seqc gives entries whose preparations are equal one seqc_prepare in
/// their table rows: `step` here takes forward's (its block starts like
/// forward's, with w).
const seqc_entry_symbols kSymbolsOnePrepare[] = {
    {"forward", forwardInvokeV2, forwardPrepare, forwardRelease},
    {"step", stepInvokeV2, forwardPrepare, forwardRelease},
    {nullptr, nullptr, nullptr, nullptr}};

TEST(EntriesV2, EntriesWithOnePrepareFunctionShareTheBlockWhole) {
  prepares = releases = 0;
  {
    seqc_model *raw = nullptr;
    ASSERT_TRUE(isOk(seqc_model_load_entries(kManifestV2.c_str(),
                                             kSymbolsOnePrepare, &raw)));
    ModelPtr model(raw);
    float w = 2;
    seqc_tensor tensor = makeTensor(SEQC_DTYPE_F32, {1}, &w);
    ASSERT_TRUE(isOk(seqc_model_set_param(model.get(), "w", &tensor)));
    ASSERT_TRUE(isOk(seqc_model_select_entry(model.get(), "step")));
    EXPECT_EQ(run(model.get(), {1}), std::vector<float>{2});
    ASSERT_TRUE(isOk(seqc_model_select_entry(model.get(), "forward")));
    EXPECT_EQ(run(model.get(), {1, 2}), (std::vector<float>{2, 4}));
    // Prepared once, nothing computed twice.
    EXPECT_EQ(prepares.load(), 1);
    EXPECT_EQ(forwardW.load(), stepW.load());
    ModelPtr clone = cloneOf(model.get());
    model.reset();
    EXPECT_EQ(run(clone.get(), {3}), std::vector<float>{6});
    EXPECT_EQ(prepares.load(), 1);
    EXPECT_EQ(releases.load(), 0);
  }
  EXPECT_EQ(releases.load(), 1);
}

} // namespace
