//===- ParallelTest.cpp - Tensor parallelism in the runtime ---------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// A model compiled with --tensor-parallel=N (manifest "tensor_parallel" and
// parameters' "shard"): the manifest's checks, joining the MPI job, and the
// slice of each sharded parameter a rank binds, from a checkpoint (in
// place, strided, converted, quantized, GGUF's RoPE order) and from
// seqc_model_random_weights. A model compiled with --data-parallel
// (manifest "data_parallel"): the key, joining a job of any size, whole
// weights on every rank. No MPI here: the tests replace the MPI
// library's functions (Parallel.h) by a process that is rank r of n.
//
//===----------------------------------------------------------------------===//

#include "Gguf.h"
#include "Model.h"
#include "Parallel.h"
#include "Quantize.h"
#include "Safetensors.h"
#include "TestUtil.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace seqc;
using namespace seqc::test;

namespace {

void noopInvoke(void **) {}

struct ModelDeleter {
  void operator()(seqc_model *model) const { seqc_model_free(model); }
};
using ModelPtr = std::unique_ptr<seqc_model, ModelDeleter>;

/// The rank and size the fake MPI library reports.
int fakeRank = 0, fakeSize = 1, fakeInitError = 0;

int fakeInit(int *rank, int *size) {
  *rank = fakeRank;
  *size = fakeSize;
  return fakeInitError;
}

/// Replaces the MPI library's functions for a test, and restores them.
class Parallel : public ::testing::Test {
protected:
  void SetUp() override {
    saved = parallel::functions();
    parallel::functions().init = fakeInit;
    fakeInitError = 0;
    asRank(0, 2);
  }
  void TearDown() override { parallel::functions() = saved; }

  static void asRank(int rank, int size) {
    fakeRank = rank;
    fakeSize = size;
  }

  /// Loads `manifest` as this rank; fails the test on an error.
  static ModelPtr load(const std::string &manifest) {
    seqc_model *model = nullptr;
    EXPECT_TRUE(isOk(seqc_model_load_from(manifest.c_str(), noopInvoke,
                                          &model)));
    return ModelPtr(model);
  }

  static seqc_status *tryLoad(const std::string &manifest) {
    seqc_model *model = nullptr;
    seqc_status *status =
        seqc_model_load_from(manifest.c_str(), noopInvoke, &model);
    seqc_model_free(model);
    return status;
  }

  /// The bytes of a bound parameter.
  static std::vector<uint8_t> paramBytes(const seqc_model *model,
                                         const char *name) {
    seqc_tensor tensor;
    EXPECT_TRUE(isOk(seqc_model_get_param(model, name, &tensor)));
    int64_t numel = 1, blockElements = 1;
    size_t blockBytes = 0;
    for (int d = 0; d < tensor.rank; ++d)
      numel *= tensor.shape[d];
    seqc_dtype_block(tensor.dtype, &blockElements, &blockBytes);
    size_t bytes = static_cast<size_t>(numel / blockElements) * blockBytes;
    const auto *data = static_cast<const uint8_t *>(tensor.data);
    return std::vector<uint8_t>(data, data + bytes);
  }

  parallel::Functions saved;
};

/// A manifest with the given parameters (JSON objects) and top-level keys.
std::string manifestWith(const std::string &params,
                         const std::string &top = "\"tensor_parallel\": 2, ") {
  return "{\"model\": \"tp\", " + top +
         "\"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": "
         "[4]}], \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", "
         "\"shape\": [4]}], \"params\": [" +
         params + "]}";
}

std::string param(const char *name, const char *dtype, const char *shape,
                  int axis = -1) {
  std::string text = std::string("{\"name\": \"") + name +
                     "\", \"dtype\": \"" + dtype + "\", \"shape\": " + shape;
  if (axis >= 0)
    text += ", \"shard\": {\"axis\": " + std::to_string(axis) + "}";
  return text + "}";
}

/// 0, 1, 2, ... as floats.
std::vector<float> iota(size_t count, float scale = 1) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i)
    values[i] = static_cast<float>(i) * scale;
  return values;
}

/// Rows [begin, begin + count) of every outer index of a row-major tensor
/// split along `axis`: the reference slice.
template <typename T>
std::vector<T> sliceOf(const std::vector<T> &whole,
                       const std::vector<int64_t> &shape, int axis,
                       int64_t begin, int64_t count) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  std::vector<T> out;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = begin * inner; i < (begin + count) * inner; ++i)
      out.push_back(whole[static_cast<size_t>(o * shape[axis] * inner + i)]);
  return out;
}

std::vector<float> asFloats(const std::vector<uint8_t> &bytes) {
  std::vector<float> values(bytes.size() / 4);
  std::memcpy(values.data(), bytes.data(), values.size() * 4);
  return values;
}

//===----------------------------------------------------------------------===//
// The manifest
//===----------------------------------------------------------------------===//

TEST_F(Parallel, ParsesTensorParallelAndShards) {
  ModelPtr model = load(manifestWith(param("w", "f32", "[2, 4]", 0) + ", " +
                                     param("b", "f32", "[4]")));
  ASSERT_TRUE(model);
  EXPECT_EQ(model->manifest.tensorParallel, 2);
  EXPECT_EQ(model->manifest.values[SEQC_VALUE_PARAM][0].shardAxis, 0);
  EXPECT_EQ(model->manifest.values[SEQC_VALUE_PARAM][1].shardAxis, -1);
  // A model for one process has neither.
  asRank(0, 1);
  ModelPtr plain = load(manifestWith(param("w", "f32", "[2, 4]"), ""));
  EXPECT_EQ(plain->manifest.tensorParallel, 1);
  EXPECT_EQ(seqc_model_rank(plain.get()), 0);
  EXPECT_EQ(seqc_model_num_ranks(plain.get()), 1);
}

TEST_F(Parallel, RejectsBadManifests) {
  EXPECT_TRUE(failsWith(tryLoad(manifestWith(param("w", "f32", "[2, 4]", 0),
                                             "")),
                        SEQC_STATUS_INVALID_MANIFEST,
                        {"params[0] ('w')", "\"shard\" needs the model's "
                                            "\"tensor_parallel\""}));
  EXPECT_TRUE(failsWith(tryLoad(manifestWith(param("w", "f32", "[2, 4]", 2))),
                        SEQC_STATUS_INVALID_MANIFEST,
                        {"params[0] ('w')", "axis 2", "[2, 4]", "rank 2"}));
  EXPECT_TRUE(failsWith(
      tryLoad(manifestWith("{\"name\": \"w\", \"dtype\": \"f32\", \"shape\": "
                           "[2], \"shard\": {\"axis\": -1}}")),
      SEQC_STATUS_INVALID_MANIFEST, {"axis -1 is not a dimension"}));
  EXPECT_TRUE(failsWith(
      tryLoad(manifestWith("{\"name\": \"w\", \"dtype\": \"f32\", \"shape\": "
                           "[2], \"shard\": 0}")),
      SEQC_STATUS_INVALID_MANIFEST, {"\"shard\" must be {\"axis\": A}"}));
  std::string shardedInput =
      "{\"model\": \"tp\", \"tensor_parallel\": 2, \"inputs\": [{\"name\": "
      "\"x\", \"dtype\": \"f32\", \"shape\": [4], \"shard\": {\"axis\": 0}}], "
      "\"outputs\": []}";
  EXPECT_TRUE(failsWith(tryLoad(shardedInput), SEQC_STATUS_INVALID_MANIFEST,
                        {"inputs[0] ('x')", "on a parameter"}));
  for (const char *bad : {"1", "0", "\"2\"", "2.5", "100000"})
    EXPECT_TRUE(failsWith(
        tryLoad(manifestWith(param("w", "f32", "[2]"),
                             std::string("\"tensor_parallel\": ") + bad +
                                 ", ")),
        SEQC_STATUS_INVALID_MANIFEST,
        {"\"tensor_parallel\" must be a rank count"}))
        << bad;
}

//===----------------------------------------------------------------------===//
// Joining the job
//===----------------------------------------------------------------------===//

TEST_F(Parallel, TakesTheRankFromMPI) {
  asRank(1, 2);
  ModelPtr model = load(manifestWith(param("w", "f32", "[2]", 0)));
  EXPECT_EQ(seqc_model_rank(model.get()), 1);
  EXPECT_EQ(seqc_model_num_ranks(model.get()), 2);
  seqc_model *clone = nullptr;
  ASSERT_TRUE(isOk(seqc_model_clone(model.get(), &clone)));
  EXPECT_EQ(seqc_model_rank(clone), 1);
  EXPECT_EQ(seqc_model_num_ranks(clone), 2);
  seqc_model_free(clone);
}

TEST_F(Parallel, NeedsTheJobSizeItWasCompiledFor) {
  asRank(0, 3);
  EXPECT_TRUE(failsWith(tryLoad(manifestWith(param("w", "f32", "[2]", 0))),
                        SEQC_STATUS_FAILED_PRECONDITION,
                        {"model 'tp' was compiled for 2 ranks "
                         "(--tensor-parallel=2) but runs on 3 processes",
                         "mpirun -np 2"}));
  asRank(0, 1);
  EXPECT_TRUE(failsWith(tryLoad(manifestWith(param("w", "f32", "[2]", 0))),
                        SEQC_STATUS_FAILED_PRECONDITION,
                        {"runs on 1 process;"}));
  asRank(0, 2);
  fakeInitError = 17;
  EXPECT_TRUE(failsWith(tryLoad(manifestWith(param("w", "f32", "[2]", 0))),
                        SEQC_STATUS_UNAVAILABLE,
                        {"MPI initialization failed with error 17"}));
}

TEST_F(Parallel, NeedsTheMPIRuntime) {
  parallel::functions().init = nullptr;
  EXPECT_TRUE(failsWith(tryLoad(manifestWith(param("w", "f32", "[2]", 0))),
                        SEQC_STATUS_UNAVAILABLE,
                        {"--tensor-parallel=2", "needs the seqc MPI runtime",
                         "libseqc_runtime_mpi.a"}));
  // A model for one process never asks for it.
  EXPECT_TRUE(isOk(tryLoad(manifestWith(param("w", "f32", "[2]"), ""))));
}

//===----------------------------------------------------------------------===//
// Data parallelism
//===----------------------------------------------------------------------===//

/// A data-parallel model (seqc --data-parallel): the same model on any
/// number of ranks, each holding every parameter whole.
std::string dataParallelManifest(const char *value = "true") {
  return manifestWith(param("w", "f32", "[2, 4]"),
                      std::string("\"data_parallel\": ") + value + ", ");
}

TEST_F(Parallel, ParsesDataParallelAndJoinsAJobOfAnySize) {
  for (int size : {1, 2, 5}) {
    asRank(size - 1, size);
    ModelPtr model = load(dataParallelManifest());
    ASSERT_TRUE(model) << size;
    EXPECT_TRUE(model->manifest.dataParallel);
    EXPECT_EQ(model->manifest.tensorParallel, 1);
    EXPECT_EQ(seqc_model_data_parallel(model.get()), 1);
    EXPECT_EQ(seqc_model_rank(model.get()), size - 1);
    EXPECT_EQ(seqc_model_num_ranks(model.get()), size);
  }
  // false, or no key: a model for one process, which joins no job.
  asRank(1, 2);
  for (const std::string &manifest :
       {dataParallelManifest("false"),
        manifestWith(param("w", "f32", "[2, 4]"), "")}) {
    ModelPtr plain = load(manifest);
    ASSERT_TRUE(plain);
    EXPECT_FALSE(plain->manifest.dataParallel);
    EXPECT_EQ(seqc_model_data_parallel(plain.get()), 0);
    EXPECT_EQ(seqc_model_rank(plain.get()), 0);
    EXPECT_EQ(seqc_model_num_ranks(plain.get()), 1);
  }
  EXPECT_EQ(seqc_model_data_parallel(nullptr), 0);
}

TEST_F(Parallel, RejectsBadDataParallelManifests) {
  for (const char *bad : {"1", "\"true\"", "null", "{}"})
    EXPECT_TRUE(failsWith(tryLoad(dataParallelManifest(bad)),
                          SEQC_STATUS_INVALID_MANIFEST,
                          {"\"data_parallel\" must be true or false"}))
        << bad;
  EXPECT_TRUE(failsWith(
      tryLoad(manifestWith(param("w", "f32", "[2, 4]", 0),
                           "\"tensor_parallel\": 2, \"data_parallel\": "
                           "true, ")),
      SEQC_STATUS_INVALID_MANIFEST,
      {"\"data_parallel\" and \"tensor_parallel\" cannot be combined"}));
}

TEST_F(Parallel, DataParallelNeedsTheMPIRuntime) {
  parallel::functions().init = nullptr;
  EXPECT_TRUE(
      failsWith(tryLoad(dataParallelManifest()), SEQC_STATUS_UNAVAILABLE,
                {"compiled with --data-parallel", "needs the seqc MPI runtime",
                 "libseqc_runtime_mpi.a"}));
  parallel::functions().init = fakeInit;
  fakeInitError = 5;
  EXPECT_TRUE(failsWith(
      tryLoad(dataParallelManifest()), SEQC_STATUS_UNAVAILABLE,
      {"(--data-parallel)", "MPI initialization failed with error 5"}));
}

TEST_F(Parallel, DataParallelRanksHoldTheWholeRandomWeights) {
  asRank(0, 1);
  ModelPtr plain = load(manifestWith(param("w", "f32", "[2, 4]"), ""));
  ASSERT_TRUE(isOk(seqc_model_random_weights(plain.get(), 7)));
  asRank(1, 3);
  ModelPtr rank1 = load(dataParallelManifest());
  ASSERT_TRUE(isOk(seqc_model_random_weights(rank1.get(), 7)));
  std::vector<uint8_t> whole = paramBytes(plain.get(), "w");
  EXPECT_EQ(whole.size(), 8 * sizeof(float));
  EXPECT_EQ(paramBytes(rank1.get(), "w"), whole);
}

//===----------------------------------------------------------------------===//
// Weights from a checkpoint
//===----------------------------------------------------------------------===//

/// A model of rank `rank` of 2 that loads `path`.
class ParallelWeights : public Parallel {
protected:
  std::string write(const std::vector<SafetensorsWriteEntry> &entries) {
    std::string path = dir.file("w" + std::to_string(files++) +
                                ".safetensors");
    EXPECT_TRUE(isOk(writeSafetensors(path.c_str(), entries, {})));
    return path;
  }
  TempDir dir;
  int files = 0;
};

TEST_F(ParallelWeights, BindsItsSliceAlongAxis0InPlace) {
  std::vector<float> whole = iota(4 * 3);
  std::string path = write({{"w", SEQC_DTYPE_F32, {4, 3}, whole.data()}});
  for (int rank = 0; rank < 2; ++rank) {
    asRank(rank, 2);
    ModelPtr model = load(manifestWith(param("w", "f32", "[2, 3]", 0)));
    ASSERT_TRUE(isOk(seqc_model_load_weights(model.get(), path.c_str())));
    EXPECT_EQ(asFloats(paramBytes(model.get(), "w")),
              sliceOf(whole, {4, 3}, 0, 2 * rank, 2));
    // A run of the file's bytes: used where it is mapped, so that a rank
    // keeps 1/N of the tensor resident.
    EXPECT_TRUE(model->params[0].inFileMapping);
    EXPECT_FALSE(model->params[0].recomputable);
  }
}

TEST_F(ParallelWeights, GathersItsSliceAlongAxis1) {
  // Large enough that the slice's copy spans whole pages to give back.
  std::vector<float> whole = iota(3 * 8192, 0.5f);
  std::string path = write({{"w", SEQC_DTYPE_F32, {3, 8192}, whole.data()}});
  asRank(1, 2);
  ModelPtr model = load(manifestWith(param("w", "f32", "[3, 4096]", 1)));
  ASSERT_TRUE(isOk(seqc_model_load_weights(model.get(), path.c_str())));
  std::vector<float> expected = sliceOf(whole, {3, 8192}, 1, 4096, 4096);
  // A copy on the heap that the runtime computes again, the slice alone,
  // once its pages were given back: overwritten, dropped, recomputed.
  BoundValue &value = model->params[0];
  EXPECT_FALSE(value.inFileMapping);
  ASSERT_TRUE(value.recomputable);
  ASSERT_EQ(value.buffer.bytes, expected.size() * 4);
  std::memset(value.buffer.data, 0xff, value.buffer.bytes);
  value.recomputable->acquire();
  value.recomputable->release(/*drop=*/true);
  EXPECT_TRUE(value.recomputable->isDropped());
  value.recomputable->acquire();
  std::vector<float> now(expected.size());
  std::memcpy(now.data(), value.buffer.data, value.buffer.bytes);
  value.recomputable->release(/*drop=*/false);
  EXPECT_EQ(now, expected);
  EXPECT_EQ(asFloats(paramBytes(model.get(), "w")), expected);
}

TEST_F(ParallelWeights, ConvertsTheSliceOfABF16Tensor) {
  std::vector<float> values = iota(2 * 3 * 4, 0.25f);
  std::vector<uint16_t> whole(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    whole[i] = floatToBFloat16(values[i]);
  std::string path = write({{"w", SEQC_DTYPE_BF16, {2, 3, 4}, whole.data()},
                            {"v", SEQC_DTYPE_BF16, {6}, whole.data()}});
  asRank(1, 2);
  ModelPtr model = load(manifestWith(param("w", "f32", "[2, 3, 2]", 2) +
                                     ", " + param("v", "f32", "[3]", 0)));
  ASSERT_TRUE(isOk(seqc_model_load_weights(model.get(), path.c_str())));
  EXPECT_EQ(asFloats(paramBytes(model.get(), "w")),
            sliceOf(values, {2, 3, 4}, 2, 2, 2));
  EXPECT_EQ(asFloats(paramBytes(model.get(), "v")),
            sliceOf(std::vector<float>(values.begin(), values.begin() + 6),
                    {6}, 0, 3, 3));
}

TEST_F(ParallelWeights, QuantizesTheSliceIntoBlocks) {
  // q8_0 along axis 0 (rows) and along the last axis (whole blocks): the
  // same blocks the whole tensor quantized would have.
  std::vector<float> whole = iota(4 * 64, 0.01f);
  std::string path = write({{"a", SEQC_DTYPE_F32, {4, 64}, whole.data()},
                            {"b", SEQC_DTYPE_F32, {4, 64}, whole.data()}});
  std::vector<uint8_t> blocks(4 * 2 * 34);
  quantizeRows(SEQC_DTYPE_Q8_0, whole.data(), blocks.data(), whole.size(), 64);
  asRank(1, 2);
  ModelPtr model = load(manifestWith(param("a", "q8_0", "[2, 64]", 0) + ", " +
                                     param("b", "q8_0", "[4, 32]", 1)));
  ASSERT_TRUE(isOk(seqc_model_load_weights(model.get(), path.c_str())));
  EXPECT_EQ(paramBytes(model.get(), "a"),
            std::vector<uint8_t>(blocks.begin() + 2 * 68, blocks.end()));
  std::vector<uint8_t> secondBlocks;
  for (int row = 0; row < 4; ++row)
    secondBlocks.insert(secondBlocks.end(), blocks.begin() + row * 68 + 34,
                        blocks.begin() + row * 68 + 68);
  EXPECT_EQ(paramBytes(model.get(), "b"), secondBlocks);
}

TEST_F(ParallelWeights, NamesTheWholeShapeItExpects) {
  std::vector<float> whole = iota(2 * 3);
  std::string path = write({{"w", SEQC_DTYPE_F32, {2, 3}, whole.data()}});
  ModelPtr model = load(manifestWith(param("w", "f32", "[2, 3]", 0)));
  EXPECT_TRUE(failsWith(
      seqc_model_load_weights(model.get(), path.c_str()),
      SEQC_STATUS_INVALID_FILE,
      {path.c_str(), "'w'", "has shape [2, 3]", "split over 2 ranks "
                                                "(--tensor-parallel=2)",
       "whole tensor [4, 3]", "slice [2, 3] of it along axis 0"}));
}

TEST_F(ParallelWeights, RefusesToSaveSlices) {
  ModelPtr model = load(manifestWith(param("w", "f32", "[2, 3]", 0)));
  ASSERT_TRUE(isOk(seqc_model_random_weights(model.get(), 1)));
  std::string out = dir.file("out.safetensors");
  EXPECT_TRUE(failsWith(seqc_model_save_weights(model.get(), out.c_str()),
                        SEQC_STATUS_FAILED_PRECONDITION,
                        {"--tensor-parallel=2", "its slice"}));
}

TEST_F(ParallelWeights, SetAndGetActOnTheSlice) {
  asRank(1, 2);
  ModelPtr model = load(manifestWith(param("w", "f32", "[2, 3]", 0)));
  std::vector<float> values = iota(6);
  seqc_tensor tensor = makeTensor(SEQC_DTYPE_F32, {2, 3}, values.data());
  ASSERT_TRUE(isOk(seqc_model_set_param(model.get(), "w", &tensor)));
  EXPECT_EQ(asFloats(paramBytes(model.get(), "w")), values);
  std::vector<float> whole = iota(12);
  seqc_tensor wholeTensor = makeTensor(SEQC_DTYPE_F32, {4, 3}, whole.data());
  EXPECT_TRUE(failsWith(seqc_model_set_param(model.get(), "w", &wholeTensor),
                        SEQC_STATUS_INVALID_ARGUMENT, {"[2, 3]"}));
}

//===----------------------------------------------------------------------===//
// GGUF: the slice of rows in RoPE order
//===----------------------------------------------------------------------===//

TEST_F(ParallelWeights, UndoesGGUFsRoPEOrderOverTheWholeTensor) {
  // 2 heads of 4 rows: a rank of 2 holds one head, a rank of 4 half of
  // one, whose rows come from both halves of the head in the file.
  const char *name = "model.layers.0.self_attn.q_proj.weight";
  std::vector<float> file = iota(8 * 2);
  std::string path = dir.file("q.gguf");
  std::vector<GgufWriteValue> metadata(2);
  metadata[0].key = "general.architecture";
  metadata[0].str = "llama";
  metadata[1].key = "llama.attention.head_count";
  metadata[1].type = GgufValueType::U32;
  metadata[1].u32 = 2;
  GgufWriteTensor tensor;
  tensor.name = "blk.0.attn_q.weight";
  tensor.shape = {8, 2};
  tensor.data = file.data();
  tensor.bytes = file.size() * 4;
  ASSERT_TRUE(isOk(writeGguf(path.c_str(), metadata, {tensor})));

  asRank(0, 1);
  ModelPtr single = load(manifestWith(param(name, "f32", "[8, 2]"), ""));
  ASSERT_TRUE(isOk(seqc_model_load_weights(single.get(), path.c_str())));
  std::vector<float> whole = asFloats(paramBytes(single.get(), name));
  ASSERT_NE(whole, file); // The rows were reordered.
  for (int ranks : {2, 4}) {
    for (int rank = 0; rank < ranks; ++rank) {
      asRank(rank, ranks);
      int64_t rows = 8 / ranks;
      std::string shape = "[" + std::to_string(rows) + ", 2]";
      ModelPtr model = load(manifestWith(
          param(name, "f32", shape.c_str(), 0),
          "\"tensor_parallel\": " + std::to_string(ranks) + ", "));
      ASSERT_TRUE(isOk(seqc_model_load_weights(model.get(), path.c_str())));
      EXPECT_EQ(asFloats(paramBytes(model.get(), name)),
                sliceOf(whole, {8, 2}, 0, rank * rows, rows))
          << "rank " << rank << " of " << ranks;
    }
  }
}

TEST_F(ParallelWeights, SlicesGGUFBlocksOnlyWhole) {
  std::vector<float> values = iota(2 * 64, 0.01f);
  std::vector<uint8_t> blocks(2 * 2 * 34);
  quantizeRows(SEQC_DTYPE_Q8_0, values.data(), blocks.data(), values.size(),
               64);
  std::string path = dir.file("b.gguf");
  GgufWriteTensor tensor;
  tensor.name = "w";
  tensor.type = kGgmlQ8_0;
  tensor.shape = {2, 64};
  tensor.data = blocks.data();
  tensor.bytes = blocks.size();
  ASSERT_TRUE(isOk(writeGguf(path.c_str(), {}, {tensor})));
  asRank(1, 2);
  // Whole blocks: rank 1 binds each row's second block as it is.
  ModelPtr model = load(manifestWith(param("w", "q8_0", "[2, 32]", 1)));
  ASSERT_TRUE(isOk(seqc_model_load_weights(model.get(), path.c_str())));
  std::vector<uint8_t> expected(blocks.begin() + 34, blocks.begin() + 68);
  expected.insert(expected.end(), blocks.begin() + 102, blocks.end());
  EXPECT_EQ(paramBytes(model.get(), "w"), expected);
  // Dequantized into f32 slices of 16: half a block each.
  asRank(0, 4);
  ModelPtr split = load(manifestWith(param("w", "f32", "[2, 16]", 1),
                                     "\"tensor_parallel\": 4, "));
  EXPECT_TRUE(failsWith(seqc_model_load_weights(split.get(), path.c_str()),
                        SEQC_STATUS_INVALID_FILE,
                        {"Q8_0", "blocks of 32", "parameter 'w'",
                         "over 4 ranks into slices of 16"}));
}

//===----------------------------------------------------------------------===//
// Random weights
//===----------------------------------------------------------------------===//

TEST_F(Parallel, RandomWeightsAreTheSlicesOfOneProcesssWeights) {
  struct Case {
    const char *dtype;
    const char *wholeShape, *sliceShape;
    std::vector<int64_t> shape;
    int axis;
    int64_t rowBytes; // Of one index of the axis, in the stored dtype.
  };
  // "w.weight" is drawn uniformly; q8_0 blocks of 34 bytes per 32 values.
  for (const Case &c : std::vector<Case>{
           {"f32", "[4, 6]", "[2, 6]", {4, 6}, 0, 24},
           {"f32", "[4, 6]", "[4, 3]", {4, 6}, 1, 4},
           {"bf16", "[2, 4, 6]", "[2, 2, 6]", {2, 4, 6}, 1, 12},
           {"q8_0", "[4, 64]", "[2, 64]", {4, 64}, 0, 68},
           {"q8_0", "[4, 64]", "[4, 32]", {4, 64}, 1, 34}}) {
    SCOPED_TRACE(std::string(c.dtype) + " " + c.sliceShape);
    asRank(0, 1);
    ModelPtr single =
        load(manifestWith(param("w.weight", c.dtype, c.wholeShape), ""));
    ASSERT_TRUE(isOk(seqc_model_random_weights(single.get(), 42)));
    std::vector<uint8_t> whole = paramBytes(single.get(), "w.weight");
    // Per axis index of the unit of the stored bytes (a block is 32).
    std::vector<int64_t> units = c.shape;
    bool blocks = std::string(c.dtype) == "q8_0";
    if (blocks && c.axis == 1)
      units[1] /= 32;
    for (size_t d = c.axis + 1; d < units.size(); ++d)
      units[d] = 1;
    std::vector<int64_t> byteShape(units.begin(), units.begin() + c.axis + 1);
    byteShape.push_back(c.rowBytes);
    for (int rank = 0; rank < 2; ++rank) {
      asRank(rank, 2);
      ModelPtr model = load(
          manifestWith(param("w.weight", c.dtype, c.sliceShape, c.axis)));
      ASSERT_TRUE(isOk(seqc_model_random_weights(model.get(), 42)));
      int64_t count = byteShape[c.axis] / 2;
      std::vector<int64_t> asBytes = byteShape;
      EXPECT_EQ(paramBytes(model.get(), "w.weight"),
                sliceOf(whole, asBytes, c.axis, rank * count, count))
          << "rank " << rank;
    }
  }
}

} // namespace
