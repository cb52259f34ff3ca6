//===- PreparedOnlyTest.cpp - Parameters only the preparation reads -------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// A parameter the manifest marks "prepared_only" (docs/abi.md) is read by
// seqc_prepare alone. Once a prepared block holds what the model reads of
// it, the runtime drops its pages from the resident set when the bytes are
// the weight file's, used in place from the mapping, or a copy on the heap
// it can compute again (random weights, a conversion of a file's tensor);
// anything that reads it later gets the same bytes again.
//
// The fake model (ABI version 2) has two entries over x [N] and the
// parameters `scale` [1], which the model functions read, and `w` [N],
// 16 pages, which only the preparations read: `forward` prepares a copy of
// w and computes y = x * w * scale, `twice` prepares 2 w and computes
// y = x * (2 w) * scale. The checks of residency read /proc/self/pagemap
// (presentBytes); without it the tests are skipped.
//
//===----------------------------------------------------------------------===//

#include "Model.h"
#include "Safetensors.h"
#include "TestUtil.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

using namespace seqc::test;

namespace {

struct ModelDeleter {
  void operator()(seqc_model *model) const { seqc_model_free(model); }
};
using ModelPtr = std::unique_ptr<seqc_model, ModelDeleter>;

constexpr int64_t kN = 16384; // 64 KiB of f32.

std::string valueJson(const char *name) {
  return std::string(R"({"name": ")") + name +
         R"(", "dtype": "f32", "shape": [)" + std::to_string(kN) + "]}";
}

/// The manifest, with or without the mark on `w`.
std::string manifest(bool marked) {
  std::string io = R"("inputs": [)" + valueJson("x") + R"(], "outputs": [)" +
                   valueJson("y") + "]";
  return R"({"abi": 2, "model": "dropper", )" + io +
         R"(, "params": [{"name": "scale", "dtype": "f32", "shape": [1]}, )"
         R"({"name": "w", "dtype": "f32", "shape": [)" +
         std::to_string(kN) + "]" +
         (marked ? R"(, "prepared_only": true)" : "") +
         R"(}], "entries": [{"name": "forward", )" + io +
         R"(}, {"name": "twice", )" + io + "}]}";
}

struct Descriptor1 {
  float *allocated, *aligned;
  int64_t offset, size, stride;
};

/// {count, offsets, ranks, keys}: one value, of another key per entry.
const int64_t kForwardTable[] = {1, 8, 1, 11};
const int64_t kTwiceTable[] = {1, 8, 1, 13};

struct Block {
  const int64_t *table;
  Descriptor1 w;
};

std::atomic<int> prepares{0};
/// The bytes of w's pages present right after the last preparation told
/// the runtime it reads w no more, as seqc's seqc_prepare does after the
/// last read of a parameter (SIZE_MAX without /proc/self/pagemap).
std::atomic<size_t> presentAfterReading{0};

/// params: scale, w.
void *prepareScaled(void **params, const int64_t *table, float factor) {
  ++prepares;
  auto *w = static_cast<const Descriptor1 *>(params[1]);
  auto *copy = static_cast<float *>(std::malloc(kN * sizeof(float)));
  for (int64_t i = 0; i < kN; ++i)
    copy[i] = factor * w->aligned[w->offset + i * w->stride];
  // Done with w (index 1); -1 is skipped.
  const int64_t lastReads[] = {-1, 1};
  seqc_prepare_done_reading(lastReads, 2);
  presentAfterReading =
      seqc::presentBytes(w->aligned + w->offset, kN * sizeof(float));
  return new Block{table, {copy, copy, 0, kN, 1}};
}
void *forwardPrepare(void **params) {
  return prepareScaled(params, kForwardTable, 1);
}
void *twicePrepare(void **params) {
  return prepareScaled(params, kTwiceTable, 2);
}
void releaseBlock(void *opaque) {
  auto *block = static_cast<Block *>(opaque);
  std::free(block->w.allocated);
  delete block;
}

/// args: result, x, scale, w (never read), prepared, arena.
void invoke(void **args) {
  auto *x = static_cast<const Descriptor1 *>(args[1]);
  auto *scale = static_cast<const Descriptor1 *>(args[2]);
  const auto *block = static_cast<const Block *>(args[4]);
  float s = scale->aligned[scale->offset];
  float *y = static_cast<float *>(std::malloc(kN * sizeof(float)));
  for (int64_t i = 0; i < kN; ++i)
    y[i] = x->aligned[x->offset + i * x->stride] * block->w.aligned[i] * s;
  *static_cast<Descriptor1 *>(args[0]) = {y, y, 0, kN, 1};
}

const seqc_entry_symbols kSymbols[] = {
    {"forward", invoke, forwardPrepare, releaseBlock},
    {"twice", invoke, twicePrepare, releaseBlock},
    {nullptr, nullptr, nullptr, nullptr}};

size_t pageSize() { return static_cast<size_t>(::sysconf(_SC_PAGESIZE)); }

/// A model whose weights (scale 0.5, w random) are bound from a
/// safetensors file in `dir`, used in place.
ModelPtr loadFromFile(const TempDir &dir, bool marked = true) {
  seqc_model *raw = nullptr;
  std::string text = manifest(marked);
  EXPECT_TRUE(isOk(seqc_model_load_entries(text.c_str(), kSymbols, &raw)));
  ModelPtr model(raw);
  std::string path = dir.file("weights.safetensors");
  EXPECT_TRUE(isOk(seqc_model_random_weights(model.get(), 5)));
  float half = 0.5f;
  seqc_tensor scale = makeTensor(SEQC_DTYPE_F32, {1}, &half);
  EXPECT_TRUE(isOk(seqc_model_set_param(model.get(), "scale", &scale)));
  EXPECT_TRUE(isOk(seqc_model_save_weights(model.get(), path.c_str())));
  EXPECT_TRUE(isOk(seqc_model_load_weights(model.get(), path.c_str())));
  return model;
}

seqc_tensor param(const seqc_model *model, const char *name) {
  seqc_tensor tensor = {};
  EXPECT_TRUE(isOk(seqc_model_get_param(model, name, &tensor)));
  return tensor;
}

/// The parameter's values (reading them maps their pages again).
std::vector<float> values(const seqc_model *model, const char *name) {
  seqc_tensor tensor = param(model, name);
  const float *data = static_cast<const float *>(tensor.data);
  return std::vector<float>(data, data + seqc_tensor_numel(&tensor));
}

/// The bytes of w's pages present in the process (without reading them).
size_t wPresent(const seqc_model *model) {
  seqc_tensor tensor = param(model, "w");
  return seqc::presentBytes(tensor.data, kN * sizeof(float));
}

/// Runs the selected entry on x = 1.5 everywhere; returns y.
std::vector<float> run(seqc_model *model) {
  std::vector<float> x(kN, 1.5f);
  seqc_tensor input = makeTensor(SEQC_DTYPE_F32, {kN}, x.data());
  EXPECT_TRUE(isOk(seqc_model_set_input(model, "x", &input)));
  EXPECT_TRUE(isOk(seqc_model_run(model)));
  seqc_tensor output = {};
  EXPECT_TRUE(isOk(seqc_model_get_output(model, "y", &output)));
  const float *y = static_cast<const float *>(output.data);
  return std::vector<float>(y, y + kN);
}

/// y as the model computes it from w and scale.
std::vector<float> expected(const std::vector<float> &w, float scale,
                            float factor = 1) {
  std::vector<float> y(w.size());
  for (size_t i = 0; i < w.size(); ++i)
    y[i] = 1.5f * (factor * w[i]) * scale;
  return y;
}

#define SKIP_WITHOUT_PAGEMAP(model)                                            \
  if (wPresent(model) == SIZE_MAX)                                             \
  GTEST_SKIP() << "/proc/self/pagemap cannot be read"

TEST(PreparedOnly, PagesLeaveAfterPreparingAndComeBackFromTheFile) {
  TempDir dir;
  ModelPtr model = loadFromFile(dir);
  SKIP_WITHOUT_PAGEMAP(model.get());
  std::vector<float> w = values(model.get(), "w");
  // At most the two pages at its ends are shared with other bytes.
  size_t interior = kN * sizeof(float) - 2 * pageSize();
  EXPECT_GE(wPresent(model.get()), interior);
  prepares = 0;
  EXPECT_EQ(run(model.get()), expected(w, 0.5f));
  EXPECT_EQ(prepares.load(), 1);
  EXPECT_LE(wPresent(model.get()), 2 * pageSize());
  // seqc_model_get_param reads the file's bytes again.
  EXPECT_EQ(values(model.get(), "w"), w);
  EXPECT_GE(wPresent(model.get()), interior);
  EXPECT_EQ(values(model.get(), "scale"), std::vector<float>{0.5f});
  // Runs after that prepare nothing and drop nothing.
  EXPECT_EQ(run(model.get()), expected(w, 0.5f));
  EXPECT_EQ(prepares.load(), 1);
  // Saving the weights writes the file's bytes.
  std::string copy = dir.file("copy.safetensors");
  ASSERT_TRUE(isOk(seqc_model_save_weights(model.get(), copy.c_str())));
  EXPECT_EQ(readFile(copy), readFile(dir.file("weights.safetensors")));
}

TEST(PreparedOnly, PagesLeaveAsSoonAsThePreparationHasReadThem) {
  // seqc_prepare_done_reading, within the preparation: w's pages go before
  // the block is complete, not after it.
  TempDir dir;
  ModelPtr model = loadFromFile(dir);
  SKIP_WITHOUT_PAGEMAP(model.get());
  std::vector<float> w = values(model.get(), "w");
  EXPECT_GE(wPresent(model.get()), kN * sizeof(float) - 2 * pageSize());
  EXPECT_EQ(run(model.get()), expected(w, 0.5f));
  EXPECT_LE(presentAfterReading.load(), 2 * pageSize());
  EXPECT_EQ(values(model.get(), "w"), w);

  // Unmarked, w stays resident through the preparation.
  TempDir other;
  ModelPtr unmarked = loadFromFile(other, /*marked=*/false);
  EXPECT_EQ(run(unmarked.get()), expected(w, 0.5f));
  EXPECT_GE(presentAfterReading.load(), kN * sizeof(float) - 2 * pageSize());
}

TEST(PreparedOnly, DoneReadingOutsideARunDropsNothing) {
  // A host calling seqc_prepare itself: the call is a no-op.
  TempDir dir;
  ModelPtr model = loadFromFile(dir);
  SKIP_WITHOUT_PAGEMAP(model.get());
  seqc_tensor w = param(model.get(), "w");
  seqc_tensor scale = param(model.get(), "scale");
  Descriptor1 wDesc = {static_cast<float *>(w.data),
                       static_cast<float *>(w.data), 0, kN, 1};
  Descriptor1 scaleDesc = {static_cast<float *>(scale.data),
                           static_cast<float *>(scale.data), 0, 1, 1};
  void *params[] = {&scaleDesc, &wDesc};
  void *block = forwardPrepare(params);
  EXPECT_GE(presentAfterReading.load(), kN * sizeof(float) - 2 * pageSize());
  releaseBlock(block);
}

TEST(PreparedOnly, AnotherEntryPreparesFromTheFile) {
  TempDir dir;
  ModelPtr model = loadFromFile(dir);
  SKIP_WITHOUT_PAGEMAP(model.get());
  std::vector<float> w = values(model.get(), "w");
  prepares = 0;
  EXPECT_EQ(run(model.get()), expected(w, 0.5f));
  EXPECT_LE(wPresent(model.get()), 2 * pageSize());
  ASSERT_TRUE(isOk(seqc_model_select_entry(model.get(), "twice")));
  EXPECT_EQ(run(model.get()), expected(w, 0.5f, 2));
  EXPECT_EQ(prepares.load(), 2);
  EXPECT_LE(wPresent(model.get()), 2 * pageSize());
  ASSERT_TRUE(isOk(seqc_model_select_entry(model.get(), "forward")));
  EXPECT_EQ(run(model.get()), expected(w, 0.5f));
  EXPECT_EQ(prepares.load(), 2);
}

TEST(PreparedOnly, ClonesAndRebindingReadTheFileAgain) {
  TempDir dir;
  ModelPtr model = loadFromFile(dir);
  SKIP_WITHOUT_PAGEMAP(model.get());
  std::vector<float> w = values(model.get(), "w");
  prepares = 0;
  EXPECT_EQ(run(model.get()), expected(w, 0.5f));
  seqc_model *raw = nullptr;
  ASSERT_TRUE(isOk(seqc_model_clone(model.get(), &raw)));
  ModelPtr clone(raw);
  // The clone shares the bytes and the prepared block.
  EXPECT_EQ(param(clone.get(), "w").data, param(model.get(), "w").data);
  EXPECT_EQ(run(clone.get()), expected(w, 0.5f));
  EXPECT_EQ(prepares.load(), 1);
  EXPECT_LE(wPresent(clone.get()), 2 * pageSize());

  // Rebinding the other parameter of the clone: it prepares again, from
  // w's pages in the file; the source keeps its block.
  float three = 3;
  seqc_tensor scale = makeTensor(SEQC_DTYPE_F32, {1}, &three);
  ASSERT_TRUE(isOk(seqc_model_set_param(clone.get(), "scale", &scale)));
  EXPECT_EQ(run(clone.get()), expected(w, 3));
  EXPECT_EQ(prepares.load(), 2);
  EXPECT_LE(wPresent(clone.get()), 2 * pageSize());
  EXPECT_EQ(run(model.get()), expected(w, 0.5f));
  EXPECT_EQ(prepares.load(), 2);

  // w set through the API is a copy on the heap, which stays.
  std::vector<float> other(kN);
  for (int64_t i = 0; i < kN; ++i)
    other[static_cast<size_t>(i)] = static_cast<float>(i % 7) - 3;
  seqc_tensor tensor = makeTensor(SEQC_DTYPE_F32, {kN}, other.data());
  ASSERT_TRUE(isOk(seqc_model_set_param(model.get(), "w", &tensor)));
  EXPECT_EQ(run(model.get()), expected(other, 0.5f));
  EXPECT_GE(wPresent(model.get()), kN * sizeof(float));
  EXPECT_EQ(values(model.get(), "w"), other);
  // The clone still reads the file's.
  EXPECT_EQ(values(clone.get(), "w"), w);
  EXPECT_EQ(run(clone.get()), expected(w, 3));
}

TEST(PreparedOnly, UnmarkedParametersStay) {
  TempDir dir;
  ModelPtr model = loadFromFile(dir, /*marked=*/false);
  SKIP_WITHOUT_PAGEMAP(model.get());
  std::vector<float> w = values(model.get(), "w");
  EXPECT_EQ(run(model.get()), expected(w, 0.5f));
  EXPECT_GE(wPresent(model.get()), kN * sizeof(float) - 2 * pageSize());
}

TEST(PreparedOnly, AWrittenPageIsKept) {
  // Nothing may write the weights, but a page the process wrote is its own
  // copy (the mapping is private): dropping it would lose the write.
  TempDir dir;
  ModelPtr model = loadFromFile(dir);
  SKIP_WITHOUT_PAGEMAP(model.get());
  std::vector<float> w = values(model.get(), "w");
  auto *data = static_cast<float *>(param(model.get(), "w").data);
  data[kN / 2] = 1234.5f;
  w[kN / 2] = 1234.5f;
  EXPECT_EQ(run(model.get()), expected(w, 0.5f));
  size_t present = wPresent(model.get());
  EXPECT_GE(present, pageSize());
  EXPECT_LE(present, 3 * pageSize());
  EXPECT_EQ(values(model.get(), "w"), w);
}

TEST(PreparedOnly, TheMarkIsABooleanOnAParameter) {
  seqc_model *raw = nullptr;
  std::string text = manifest(true);
  std::string number = text;
  number.replace(number.find("true"), 4, "1");
  EXPECT_TRUE(failsWith(seqc_model_load_entries(number.c_str(), kSymbols, &raw),
                        SEQC_STATUS_INVALID_MANIFEST, {"prepared_only"}));
  std::string onInput = text;
  const std::string inputShape = R"("shape": [16384]})";
  onInput.replace(onInput.find(inputShape), inputShape.size(),
                  R"("shape": [16384], "prepared_only": false})");
  EXPECT_TRUE(failsWith(
      seqc_model_load_entries(onInput.c_str(), kSymbols, &raw),
      SEQC_STATUS_INVALID_MANIFEST, {"prepared_only"}));
  std::string unmarked = text;
  unmarked.replace(unmarked.find("true"), 4, "false");
  ASSERT_TRUE(isOk(seqc_model_load_entries(unmarked.c_str(), kSymbols, &raw)));
  seqc_model_free(raw);
}

//===----------------------------------------------------------------------===//
// Copies on the heap that the runtime computes again
//===----------------------------------------------------------------------===//

/// The runtime's record of the model's bound `w` (tests see the internals).
seqc::RecomputableBytes *recomputableW(const seqc_model *model) {
  return model->params[1].recomputable.get();
}

/// The bytes of `w`'s pages present, read from the runtime's record
/// rather than through seqc_model_get_param (which keeps them).
size_t wPresentInside(const seqc_model *model) {
  return seqc::presentBytes(model->params[1].buffer.data,
                            kN * sizeof(float));
}

/// seqc_model_get_param would keep the bytes from then on: the check
/// reads the runtime's record.
#define SKIP_WITHOUT_PAGEMAP_INSIDE(model)                                     \
  if (wPresentInside(model) == SIZE_MAX)                                       \
  GTEST_SKIP() << "/proc/self/pagemap cannot be read"

ModelPtr loadMarked(bool marked = true) {
  seqc_model *raw = nullptr;
  std::string text = manifest(marked);
  EXPECT_TRUE(isOk(seqc_model_load_entries(text.c_str(), kSymbols, &raw)));
  return ModelPtr(raw);
}

TEST(PreparedOnlyHeap, RandomWeightsAreDrawnAgain) {
  // The values, from an instance that keeps them.
  ModelPtr reference = loadMarked(/*marked=*/false);
  ASSERT_TRUE(isOk(seqc_model_random_weights(reference.get(), 9)));
  std::vector<float> w = values(reference.get(), "w");
  float scale = values(reference.get(), "scale")[0];

  ModelPtr model = loadMarked();
  ASSERT_TRUE(isOk(seqc_model_random_weights(model.get(), 9)));
  SKIP_WITHOUT_PAGEMAP_INSIDE(model.get());
  ASSERT_NE(recomputableW(model.get()), nullptr);
  EXPECT_GE(wPresentInside(model.get()), kN * sizeof(float));
  prepares = 0;
  EXPECT_EQ(run(model.get()), expected(w, scale));
  EXPECT_LE(presentAfterReading.load(), 2 * pageSize());
  EXPECT_TRUE(recomputableW(model.get())->isDropped());
  EXPECT_LE(wPresentInside(model.get()), 2 * pageSize());

  // The other entry prepares from the values drawn again, then drops them.
  ASSERT_TRUE(isOk(seqc_model_select_entry(model.get(), "twice")));
  EXPECT_EQ(run(model.get()), expected(w, scale, 2));
  EXPECT_EQ(prepares.load(), 2);
  EXPECT_TRUE(recomputableW(model.get())->isDropped());
  ASSERT_TRUE(isOk(seqc_model_select_entry(model.get(), "forward")));

  // A clone rebinding the other parameter prepares from them again; the
  // source keeps its block.
  seqc_model *raw = nullptr;
  ASSERT_TRUE(isOk(seqc_model_clone(model.get(), &raw)));
  ModelPtr clone(raw);
  EXPECT_EQ(run(clone.get()), expected(w, scale));
  EXPECT_EQ(prepares.load(), 2);
  float three = 3;
  seqc_tensor tensor = makeTensor(SEQC_DTYPE_F32, {1}, &three);
  ASSERT_TRUE(isOk(seqc_model_set_param(clone.get(), "scale", &tensor)));
  EXPECT_EQ(run(clone.get()), expected(w, 3));
  EXPECT_EQ(prepares.load(), 3);
  EXPECT_TRUE(recomputableW(clone.get())->isDropped());
  EXPECT_EQ(run(model.get()), expected(w, scale));

  // Saving writes the values (drawn again for it).
  TempDir dir;
  std::string path = dir.file("saved.safetensors");
  ASSERT_TRUE(isOk(seqc_model_save_weights(clone.get(), path.c_str())));
  ASSERT_TRUE(isOk(seqc_model_load_weights(reference.get(), path.c_str())));
  EXPECT_EQ(values(reference.get(), "w"), w);

  // A view handed out keeps them from then on.
  EXPECT_EQ(values(model.get(), "w"), w);
  EXPECT_FALSE(recomputableW(model.get())->isDropped());
  ASSERT_TRUE(isOk(seqc_model_set_param(model.get(), "scale", &tensor)));
  EXPECT_EQ(run(model.get()), expected(w, 3));
  EXPECT_FALSE(recomputableW(model.get())->isDropped());
  EXPECT_GE(wPresentInside(model.get()), kN * sizeof(float));
}

TEST(PreparedOnlyHeap, ConvertedWeightsAreConvertedAgain) {
  // A checkpoint of bf16 values, which the f32 model converts on load.
  std::vector<uint16_t> bits(kN);
  std::vector<float> w(kN);
  for (int64_t i = 0; i < kN; ++i) {
    float value = static_cast<float>(i % 251) / 64 - 2;
    uint32_t word;
    std::memcpy(&word, &value, 4);
    bits[static_cast<size_t>(i)] = static_cast<uint16_t>(word >> 16);
    word &= 0xffff0000u;
    std::memcpy(&w[static_cast<size_t>(i)], &word, 4);
  }
  std::string header =
      R"({"scale": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, )"
      R"("w": {"dtype": "BF16", "shape": [)" +
      std::to_string(kN) + R"(], "data_offsets": [4, )" +
      std::to_string(4 + 2 * kN) + "]}}";
  std::vector<float> scale = {0.25f};
  TempDir dir;
  std::string path = dir.file("bf16.safetensors");
  writeFile(path, safetensorsBytes(header, rawBytes(scale) + rawBytes(bits)));

  ModelPtr model = loadMarked();
  ASSERT_TRUE(isOk(seqc_model_load_weights(model.get(), path.c_str())));
  SKIP_WITHOUT_PAGEMAP_INSIDE(model.get());
  ASSERT_NE(recomputableW(model.get()), nullptr);
  EXPECT_EQ(run(model.get()), expected(w, 0.25f));
  EXPECT_TRUE(recomputableW(model.get())->isDropped());
  EXPECT_LE(wPresentInside(model.get()), 2 * pageSize());
  ASSERT_TRUE(isOk(seqc_model_select_entry(model.get(), "twice")));
  EXPECT_EQ(run(model.get()), expected(w, 0.25f, 2));
  EXPECT_TRUE(recomputableW(model.get())->isDropped());
  EXPECT_EQ(values(model.get(), "w"), w);
}

TEST(PreparedOnlyHeap, UnmarkedOrSetParametersStay) {
  ModelPtr model = loadMarked(/*marked=*/false);
  ASSERT_TRUE(isOk(seqc_model_random_weights(model.get(), 9)));
  SKIP_WITHOUT_PAGEMAP_INSIDE(model.get());
  run(model.get());
  EXPECT_FALSE(recomputableW(model.get())->isDropped());
  EXPECT_GE(wPresentInside(model.get()), kN * sizeof(float));
  // Values set through the API cannot be computed again.
  ModelPtr marked = loadMarked();
  ASSERT_TRUE(isOk(seqc_model_random_weights(marked.get(), 9)));
  std::vector<float> w(kN, 0.5f);
  seqc_tensor tensor = makeTensor(SEQC_DTYPE_F32, {kN}, w.data());
  ASSERT_TRUE(isOk(seqc_model_set_param(marked.get(), "w", &tensor)));
  EXPECT_EQ(recomputableW(marked.get()), nullptr);
  run(marked.get());
  EXPECT_GE(wPresentInside(marked.get()), kN * sizeof(float));
}

} // namespace
