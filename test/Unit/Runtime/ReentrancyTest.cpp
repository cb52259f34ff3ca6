//===- ReentrancyTest.cpp - one call at a time per model instance ---------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// A compiled model's prepared state owns the arena its intermediates live
// in (docs/abi.md), so an instance runs one call at a time: a second thread
// running the same instance gets an error, separate instances run
// concurrently. The model here does what the arena implies: it writes its
// intermediate into the state and reads it back. A gate (an input whose
// first element is negative blocks the call until the test opens it) makes
// the overlap of two calls deterministic.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <atomic>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

using namespace seqc::test;

namespace {

struct ModelDeleter {
  void operator()(seqc_model *model) const { seqc_model_free(model); }
};
using ModelPtr = std::unique_ptr<seqc_model, ModelDeleter>;

constexpr const char *kManifest =
    "{\"model\": \"gate\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", "
    "\"shape\": [4]}], \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", "
    "\"shape\": [4]}], \"params\": []}";

struct Descriptor1 {
  float *allocated, *aligned;
  int64_t offset, size, stride;
};

/// The state: the model's scratch arena.
struct Arena {
  float scratch[4];
};

std::atomic<int> entered{0};
std::atomic<bool> gateOpen{false};

void *gatePrepare(void **) { return new Arena(); }
void gateRelease(void *state) { delete static_cast<Arena *>(state); }

/// y = 2 * x through the arena; blocks while x[0] < 0 and the gate is shut.
void gateInvoke(void **args) {
  auto *result = static_cast<Descriptor1 *>(args[0]);
  auto *x = static_cast<const Descriptor1 *>(args[1]);
  auto *arena = static_cast<Arena *>(args[2]);
  const float *in = x->aligned + x->offset;
  for (int i = 0; i < 4; ++i)
    arena->scratch[i] = 2 * in[i * x->stride];
  if (in[0] < 0) {
    ++entered;
    while (!gateOpen.load())
      std::this_thread::yield();
  }
  std::this_thread::yield();
  float *y = static_cast<float *>(std::malloc(4 * sizeof(float)));
  for (int i = 0; i < 4; ++i)
    y[i] = arena->scratch[i];
  *result = {y, y, 0, 4, 1};
}

ModelPtr loadGate() {
  seqc_model *model = nullptr;
  EXPECT_TRUE(isOk(seqc_model_load_prepared(kManifest, gateInvoke, gatePrepare,
                                            gateRelease, &model)));
  return ModelPtr(model);
}

::testing::AssertionResult runOn(seqc_model *model, float first) {
  float x[4] = {first, 1, 2, 3};
  seqc_tensor t = {SEQC_DTYPE_F32, 1, {4}, x};
  if (!isOk(seqc_model_set_input(model, "x", &t)))
    return ::testing::AssertionFailure() << "set_input failed";
  return ::testing::AssertionSuccess();
}

std::vector<float> output(const seqc_model *model) {
  seqc_tensor t = {};
  EXPECT_TRUE(isOk(seqc_model_get_output(model, "y", &t)));
  const float *data = static_cast<const float *>(t.data);
  return std::vector<float>(data, data + seqc_tensor_numel(&t));
}

TEST(Reentrancy, ASecondThreadOnOneInstanceGetsAnError) {
  entered = 0;
  gateOpen = false;
  ModelPtr model = loadGate();
  ASSERT_TRUE(runOn(model.get(), -1));
  seqc_status *first = nullptr;
  std::thread blocked([&] { first = seqc_model_run(model.get()); });
  while (entered.load() == 0)
    std::this_thread::yield();
  // The first call is inside the model: a second one on the instance fails
  // without touching it.
  EXPECT_TRUE(failsWith(seqc_model_run(model.get()),
                        SEQC_STATUS_FAILED_PRECONDITION,
                        {"model instance 'gate' is already running on another "
                         "thread",
                         "load one instance per thread"}));
  gateOpen = true;
  blocked.join();
  EXPECT_TRUE(isOk(first));
  EXPECT_EQ(output(model.get()), (std::vector<float>{-2, 2, 4, 6}));
  // Once the call is over the instance runs again.
  ASSERT_TRUE(runOn(model.get(), 5));
  EXPECT_TRUE(isOk(seqc_model_run(model.get())));
  EXPECT_EQ(output(model.get()), (std::vector<float>{10, 2, 4, 6}));
}

TEST(Reentrancy, SeparateInstancesRunConcurrently) {
  entered = 0;
  gateOpen = false;
  ModelPtr blockedModel = loadGate(), other = loadGate();
  ASSERT_TRUE(runOn(blockedModel.get(), -1));
  seqc_status *first = nullptr;
  std::thread blocked([&] { first = seqc_model_run(blockedModel.get()); });
  while (entered.load() == 0)
    std::this_thread::yield();
  // Another instance runs to completion while the first is inside its call.
  ASSERT_TRUE(runOn(other.get(), 7));
  EXPECT_TRUE(isOk(seqc_model_run(other.get())));
  EXPECT_EQ(output(other.get()), (std::vector<float>{14, 2, 4, 6}));
  gateOpen = true;
  blocked.join();
  EXPECT_TRUE(isOk(first));
  EXPECT_EQ(output(blockedModel.get()), (std::vector<float>{-2, 2, 4, 6}));

  // Two threads, one instance each, many calls: each sees its own arena.
  auto hammer = [](seqc_model *model, float base, bool *ok) {
    *ok = true;
    for (int call = 0; call < 500 && *ok; ++call) {
      float value = base + call;
      *ok = runOn(model, value) && isOk(seqc_model_run(model)) &&
            output(model) == std::vector<float>{2 * value, 2, 4, 6};
    }
  };
  bool ok1 = false, ok2 = false;
  std::thread t1(hammer, blockedModel.get(), 1000.0f, &ok1);
  std::thread t2(hammer, other.get(), 5000.0f, &ok2);
  t1.join();
  t2.join();
  EXPECT_TRUE(ok1);
  EXPECT_TRUE(ok2);
}

} // namespace
