//===- ModelTest.cpp - Tests of manifests, binding and marshalling --------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Drives the C API against the hand-written C models of FakeModels.c. Run
// under AddressSanitizer, these also prove the output ownership rules: an
// output aliasing an argument freed by mistake is a double free, an output
// not freed is a leak.
//
//===----------------------------------------------------------------------===//

#include "FakeModels.h"
#include "TestUtil.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

using namespace seqc;
using namespace seqc::test;

namespace {

struct ModelDeleter {
  void operator()(seqc_model *model) const { seqc_model_free(model); }
};
using ModelPtr = std::unique_ptr<seqc_model, ModelDeleter>;

void noopInvoke(void **) {}

ModelPtr load(const char *manifest, seqc_invoke_fn invoke = noopInvoke) {
  seqc_model *model = nullptr;
  EXPECT_TRUE(isOk(seqc_model_load_from(manifest, invoke, &model)));
  return ModelPtr(model);
}

::testing::AssertionResult manifestRejected(const std::string &manifest,
                                            const char *part) {
  seqc_model *model = nullptr;
  auto result =
      failsWith(seqc_model_load_from(manifest.c_str(), noopInvoke, &model),
                SEQC_STATUS_INVALID_MANIFEST, {part});
  seqc_model_free(model);
  return result;
}

/// Reads a whole output as floats.
std::vector<float> outputFloats(const seqc_model *model, const char *name,
                                std::vector<int64_t> *shape = nullptr) {
  seqc_tensor t = {};
  EXPECT_TRUE(isOk(seqc_model_get_output(model, name, &t)));
  if (shape)
    *shape = std::vector<int64_t>(t.shape, t.shape + t.rank);
  int64_t numel = seqc_tensor_numel(&t);
  const float *data = static_cast<const float *>(t.data);
  return std::vector<float>(data, data + numel);
}

//===----------------------------------------------------------------------===//
// Manifests
//===----------------------------------------------------------------------===//

TEST(Manifest, DescribesTheModel) {
  ModelPtr model = load(FAKE_ADD_MANIFEST, fake_add_invoke);
  seqc_model *m = model.get();
  EXPECT_STREQ(seqc_model_name(m), "add");
  EXPECT_NE(std::strstr(seqc_model_manifest(m), "\"hyper\""), nullptr);
  EXPECT_EQ(seqc_model_count(m, SEQC_VALUE_INPUT), 2u);
  EXPECT_EQ(seqc_model_count(m, SEQC_VALUE_OUTPUT), 5u);
  EXPECT_EQ(seqc_model_count(m, SEQC_VALUE_PARAM), 1u);
  EXPECT_EQ(seqc_model_count(m, static_cast<seqc_value_kind>(7)), 0u);

  seqc_value_info info;
  ASSERT_TRUE(isOk(seqc_model_info(m, SEQC_VALUE_OUTPUT, 1, &info)));
  EXPECT_STREQ(info.name, "sum_t");
  EXPECT_EQ(info.dtype, SEQC_DTYPE_F32);
  EXPECT_EQ(info.rank, 2);
  EXPECT_EQ(info.shape[0], 4);
  EXPECT_EQ(info.dim_names[0], nullptr);
  EXPECT_EQ(info.shape[1], -1);
  EXPECT_STREQ(info.dim_names[1], "n");
  ASSERT_TRUE(isOk(seqc_model_info(m, SEQC_VALUE_OUTPUT, 4, &info)));
  EXPECT_EQ(info.rank, 0);
  EXPECT_EQ(info.dtype, SEQC_DTYPE_I64);
  EXPECT_TRUE(failsWith(seqc_model_info(m, SEQC_VALUE_PARAM, 1, &info),
                        SEQC_STATUS_NOT_FOUND, {"index 1 out of range"}));
  EXPECT_TRUE(failsWith(seqc_model_info(m, SEQC_VALUE_PARAM, 0, nullptr),
                        SEQC_STATUS_INVALID_ARGUMENT, {"seqc_model_info"}));
}

TEST(Manifest, RejectsMalformedManifests) {
  EXPECT_TRUE(manifestRejected("{", "invalid manifest: not valid JSON"));
  EXPECT_TRUE(manifestRejected("[]", "the root is an array"));
  EXPECT_TRUE(manifestRejected(R"({"outputs": []})", "missing \"inputs\""));
  EXPECT_TRUE(manifestRejected(R"({"inputs": []})", "missing \"outputs\""));
  EXPECT_TRUE(manifestRejected(R"({"inputs": {}, "outputs": []})",
                               "\"inputs\" must be an array"));
  EXPECT_TRUE(manifestRejected(R"({"model": 3, "inputs": [], "outputs": []})",
                               "\"model\" must be a string"));
  EXPECT_TRUE(manifestRejected(R"({"inputs": [3], "outputs": []})",
                               "inputs[0] is not an object"));
  EXPECT_TRUE(manifestRejected(
      R"({"inputs": [{"dtype": "f32", "shape": []}], "outputs": []})",
      "inputs[0] needs a non-empty string \"name\""));
  EXPECT_TRUE(manifestRejected(
      R"({"inputs": [{"name": "x", "shape": []}], "outputs": []})",
      "inputs[0] ('x') needs a string \"dtype\""));
  EXPECT_TRUE(manifestRejected(
      R"({"inputs": [{"name": "x", "dtype": "f8", "shape": []}],)"
      R"( "outputs": []})",
      "inputs[0] ('x') has unknown dtype 'f8'"));
  EXPECT_TRUE(manifestRejected(
      R"({"inputs": [{"name": "x", "dtype": "f32"}], "outputs": []})",
      "needs an array \"shape\""));
  EXPECT_TRUE(manifestRejected(
      R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [-1]}],)"
      R"( "outputs": []})",
      "shape entries must be non-negative integers or dimension names"));
  EXPECT_TRUE(
      manifestRejected(R"({"inputs": [{"name": "x", "dtype": "f32",)"
                       R"( "shape": [1,1,1,1,1,1,1,1,1]}], "outputs": []})",
                       "rank above the supported maximum"));
  EXPECT_TRUE(manifestRejected(
      R"({"inputs": [], "outputs": [], "params": [{"name": "w",)"
      R"( "dtype": "f32", "shape": ["n"]}]})",
      "params[0] ('w'): parameter shapes must be non-negative integers"));
  EXPECT_TRUE(manifestRejected(
      R"({"inputs": [{"name": "x", "dtype": "f32", "shape": [],)"
      R"( "range": [0, 1]}], "outputs": []})",
      "\"range\" is only allowed on integer inputs"));
  EXPECT_TRUE(manifestRejected(
      R"({"inputs": [{"name": "x", "dtype": "i32", "shape": [],)"
      R"( "range": [0]}], "outputs": []})",
      "\"range\" must be [lo, hi]"));
  EXPECT_TRUE(manifestRejected(
      R"({"inputs": [{"name": "x", "dtype": "i32", "shape": [],)"
      R"( "range": [0, 1.5]}], "outputs": []})",
      "\"range\" bounds must be integers or dimension names"));
  EXPECT_TRUE(manifestRejected(
      R"({"inputs": [], "outputs": [{"name": "y", "dtype": "f32",)"
      R"( "shape": [], "range": [0, 1]}]})",
      "\"range\" is only allowed on integer inputs"));
  EXPECT_TRUE(manifestRejected(
      R"({"inputs": [{"name": "x", "dtype": "f32", "shape": []},)"
      R"( {"name": "x", "dtype": "f32", "shape": []}], "outputs": []})",
      "duplicate input name 'x'"));
  EXPECT_TRUE(manifestRejected(
      R"({"inputs": [{"name": "x", "dtype": "q8_0", "shape": [32]}],)"
      R"( "outputs": []})",
      "a block format (q8_0, q4_0, q4_1) is only allowed on parameters"));
  EXPECT_TRUE(manifestRejected(
      R"({"inputs": [], "outputs": [], "params": [{"name": "w",)"
      R"( "dtype": "q4_0", "shape": [4, 48]}]})",
      "whose last dimension is a multiple of 32"));
}

TEST(Manifest, RejectsNullArguments) {
  seqc_model *model = nullptr;
  EXPECT_TRUE(failsWith(seqc_model_load_from(nullptr, noopInvoke, &model),
                        SEQC_STATUS_INVALID_ARGUMENT, {"must not be NULL"}));
  EXPECT_TRUE(failsWith(seqc_model_load_from("{}", nullptr, &model),
                        SEQC_STATUS_INVALID_ARGUMENT, {"must not be NULL"}));
  EXPECT_EQ(model, nullptr);
  seqc_model_free(nullptr); // Allowed.
}

TEST(Manifest, ReportsAMissingLinkedModel) {
  // This test binary defines neither seqc_manifest nor seqc_invoke.
  seqc_model *model = nullptr;
  EXPECT_TRUE(failsWith(seqc_model_load(&model), SEQC_STATUS_NOT_FOUND,
                        {"no model is linked"}));
}

//===----------------------------------------------------------------------===//
// Running the add model
//===----------------------------------------------------------------------===//

class AddModel : public ::testing::Test {
protected:
  ModelPtr model = load(FAKE_ADD_MANIFEST, fake_add_invoke);
  seqc_model *m = model.get();
  std::vector<float> scale = {1, 2, 3, 4};

  void SetUp() override {
    seqc_tensor t = makeTensor(SEQC_DTYPE_F32, {4}, scale.data());
    ASSERT_TRUE(isOk(seqc_model_set_param(m, "scale", &t)));
  }

  seqc_status *setInput(const char *name, std::vector<float> &data,
                        std::vector<int64_t> shape) {
    seqc_tensor t = makeTensor(SEQC_DTYPE_F32, shape, data.data());
    return seqc_model_set_input(m, name, &t);
  }
};

TEST_F(AddModel, RunsAndCopiesEveryKindOfOutput) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  std::vector<float> y(12, 0.5f);
  ASSERT_TRUE(isOk(setInput("x", x, {3, 4})));
  ASSERT_TRUE(isOk(setInput("y", y, {3, 4})));
  // The runtime copied the inputs: changing ours must not matter.
  x[0] = 1000;
  ASSERT_TRUE(isOk(seqc_model_run(m)));
  x[0] = 1;

  std::vector<int64_t> shape;
  std::vector<float> sum = outputFloats(m, "sum", &shape);
  EXPECT_EQ(shape, (std::vector<int64_t>{3, 4}));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      EXPECT_FLOAT_EQ(sum[i * 4 + j], (x[i * 4 + j] + 0.5f) * scale[j]);

  // The strided transposed view (offset 1, strides [1, 4]) is compacted.
  std::vector<float> sumT = outputFloats(m, "sum_t", &shape);
  EXPECT_EQ(shape, (std::vector<int64_t>{4, 3}));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      EXPECT_FLOAT_EQ(sumT[j * 3 + i], sum[i * 4 + j]);

  // Outputs aliasing an input or a parameter are copied, not freed.
  EXPECT_EQ(outputFloats(m, "x_alias"), x);
  EXPECT_EQ(outputFloats(m, "scale_alias"), scale);

  seqc_tensor rows = {};
  ASSERT_TRUE(isOk(seqc_model_get_output(m, "rows", &rows)));
  EXPECT_EQ(rows.rank, 0);
  EXPECT_EQ(rows.dtype, SEQC_DTYPE_I64);
  EXPECT_EQ(*static_cast<int64_t *>(rows.data), 3);
}

TEST_F(AddModel, RunsRepeatedlyAndWithNewSizes) {
  std::vector<float> x(8, 1.0f), y(8, 2.0f);
  ASSERT_TRUE(isOk(setInput("x", x, {2, 4})));
  ASSERT_TRUE(isOk(setInput("y", y, {2, 4})));
  for (int run = 0; run < 3; ++run)
    ASSERT_TRUE(isOk(seqc_model_run(m)));
  EXPECT_EQ(outputFloats(m, "sum").size(), 8u);

  // Rebinding x alone to n = 1 conflicts with y (n = 2).
  std::vector<float> x1(4, 1.0f);
  EXPECT_TRUE(failsWith(setInput("x", x1, {1, 4}), SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'x': dim 0 ('n') has size 1, but 'n' is 2 "
                         "(from input 'y')"}));
  seqc_model_reset_inputs(m);
  std::vector<float> y1(4, 3.0f);
  ASSERT_TRUE(isOk(setInput("x", x1, {1, 4})));
  ASSERT_TRUE(isOk(setInput("y", y1, {1, 4})));
  ASSERT_TRUE(isOk(seqc_model_run(m)));
  std::vector<float> sum = outputFloats(m, "sum");
  EXPECT_EQ(sum, (std::vector<float>{4, 8, 12, 16}));
  // An input may be rebound with a new size while nothing else uses it.
  seqc_model_reset_inputs(m);
  ASSERT_TRUE(isOk(setInput("x", x1, {1, 4})));
  ASSERT_TRUE(isOk(setInput("x", x, {2, 4})));
}

TEST_F(AddModel, UsesInputsInPlaceAndRetainsOutputs) {
  std::vector<float> x(8, 1.0f), y(8, 2.0f);
  seqc_tensor tx = makeTensor(SEQC_DTYPE_F32, {2, 4}, x.data());
  int32_t borrowed = -1;
  ASSERT_TRUE(isOk(seqc_model_set_input_view(m, "x", &tx, &borrowed)));
  EXPECT_EQ(borrowed, 1);
  seqc_tensor bound = {};
  ASSERT_TRUE(isOk(seqc_model_get_input(m, "x", &bound)));
  EXPECT_EQ(bound.data, x.data());
  EXPECT_EQ(bound.shape[0], 2);
  // Data off its element alignment is copied.
  std::vector<char> bytes(8 * sizeof(float) + 1);
  std::memcpy(bytes.data() + 1, y.data(), 8 * sizeof(float));
  seqc_tensor ty = makeTensor(SEQC_DTYPE_F32, {2, 4}, bytes.data() + 1);
  ASSERT_TRUE(isOk(seqc_model_set_input_view(m, "y", &ty, &borrowed)));
  EXPECT_EQ(borrowed, 0);
  ASSERT_TRUE(isOk(seqc_model_get_input(m, "y", &bound)));
  EXPECT_NE(bound.data, static_cast<void *>(bytes.data() + 1));
  EXPECT_TRUE(failsWith(seqc_model_get_input(m, "z", &bound),
                        SEQC_STATUS_NOT_FOUND, {"'z'"}));

  // The model reads the borrowed x as it is at the run.
  x[0] = 5.0f;
  ASSERT_TRUE(isOk(seqc_model_run(m)));
  seqc_tensor sum = {};
  seqc_buffer_ref *ref = nullptr;
  ASSERT_TRUE(isOk(seqc_model_retain_output(m, "sum", &sum, &ref)));
  ASSERT_NE(ref, nullptr);
  EXPECT_FLOAT_EQ(static_cast<float *>(sum.data)[0], (5.0f + 2.0f) * scale[0]);
  EXPECT_EQ(x[0], 5.0f);
  // A retained output outlives the next run and the model.
  x[0] = 1.0f;
  ASSERT_TRUE(isOk(seqc_model_run(m)));
  seqc_tensor next = {};
  ASSERT_TRUE(isOk(seqc_model_get_output(m, "sum", &next)));
  EXPECT_NE(next.data, sum.data);
  EXPECT_FLOAT_EQ(static_cast<float *>(next.data)[0], 3.0f * scale[0]);
  model.reset();
  EXPECT_FLOAT_EQ(static_cast<float *>(sum.data)[0], 7.0f * scale[0]);
  seqc_buffer_ref_release(ref);
  seqc_buffer_ref_release(nullptr);
}

TEST(Inputs, UnboundInputHasNoView) {
  ModelPtr model = load(FAKE_ADD_MANIFEST, fake_add_invoke);
  seqc_tensor view = {};
  EXPECT_TRUE(failsWith(seqc_model_get_input(model.get(), "x", &view),
                        SEQC_STATUS_FAILED_PRECONDITION,
                        {"input 'x' is not bound"}));
  seqc_buffer_ref *ref = nullptr;
  EXPECT_TRUE(failsWith(seqc_model_retain_output(model.get(), "sum", &view,
                                                 &ref),
                        SEQC_STATUS_FAILED_PRECONDITION, {"has not run"}));
  EXPECT_EQ(ref, nullptr);
}

TEST_F(AddModel, ZeroRowsIsAValidSize) {
  std::vector<float> none;
  ASSERT_TRUE(isOk(setInput("x", none, {0, 4})));
  ASSERT_TRUE(isOk(setInput("y", none, {0, 4})));
  ASSERT_TRUE(isOk(seqc_model_run(m)));
  std::vector<int64_t> shape;
  EXPECT_TRUE(outputFloats(m, "sum_t", &shape).empty());
  EXPECT_EQ(shape, (std::vector<int64_t>{4, 0}));
}

TEST_F(AddModel, ChecksInputTypes) {
  std::vector<float> x(12, 1.0f);
  EXPECT_TRUE(failsWith(setInput("z", x, {3, 4}), SEQC_STATUS_NOT_FOUND,
                        {"the model has no input 'z' (inputs: x, y)"}));
  EXPECT_TRUE(failsWith(setInput("x", x, {4, 3}), SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'x': dim 1 has size 3 but the model expects "
                         "4 (shape [n, 4])"}));
  EXPECT_TRUE(failsWith(setInput("x", x, {12}), SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'x': shape [12] has rank 1 but the model "
                         "expects rank 2 [n, 4]"}));
  std::vector<int32_t> ints(12);
  seqc_tensor t = makeTensor(SEQC_DTYPE_I32, {3, 4}, ints.data());
  EXPECT_TRUE(failsWith(seqc_model_set_input(m, "x", &t),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'x': dtype i32 does not match the model's "
                         "f32"}));
  t = makeTensor(SEQC_DTYPE_F32, {3, 4}, nullptr);
  EXPECT_TRUE(failsWith(seqc_model_set_input(m, "x", &t),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'x': data is NULL"}));
  t = makeTensor(SEQC_DTYPE_F32, {-3, 4}, x.data());
  EXPECT_TRUE(failsWith(seqc_model_set_input(m, "x", &t),
                        SEQC_STATUS_INVALID_ARGUMENT, {"negative size"}));
  t = makeTensor(static_cast<seqc_dtype>(42), {3, 4}, x.data());
  EXPECT_TRUE(failsWith(seqc_model_set_input(m, "x", &t),
                        SEQC_STATUS_INVALID_ARGUMENT, {"invalid dtype 42"}));
  t.dtype = SEQC_DTYPE_F32;
  t.rank = 9;
  EXPECT_TRUE(failsWith(seqc_model_set_input(m, "x", &t),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"rank 9 is outside [0, 8]"}));
  EXPECT_TRUE(failsWith(seqc_model_set_input(m, "x", nullptr),
                        SEQC_STATUS_INVALID_ARGUMENT, {"tensor is NULL"}));
}

TEST_F(AddModel, BindsSymbolicDimensionsConsistently) {
  std::vector<float> x(12, 1.0f), y(8, 1.0f);
  ASSERT_TRUE(isOk(setInput("x", x, {3, 4})));
  EXPECT_TRUE(failsWith(setInput("y", y, {2, 4}), SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'y': dim 0 ('n') has size 2, but 'n' is 3 "
                         "(from input 'x')"}));
  int64_t n = 0;
  ASSERT_TRUE(isOk(seqc_model_get_dim(m, "n", &n)));
  EXPECT_EQ(n, 3);
  EXPECT_TRUE(failsWith(seqc_model_set_dim(m, "n", 2),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"dimension 'n' = 2 conflicts with input 'x', whose "
                         "dim 0 ('n') has size 3"}));
  ASSERT_TRUE(isOk(seqc_model_set_dim(m, "n", 3)));

  seqc_model_reset_inputs(m);
  EXPECT_TRUE(failsWith(seqc_model_get_dim(m, "n", &n), SEQC_STATUS_NOT_FOUND,
                        {"dimension 'n' has no size yet"}));
  ASSERT_TRUE(isOk(seqc_model_set_dim(m, "n", 2)));
  EXPECT_TRUE(failsWith(setInput("x", x, {3, 4}), SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'x': dim 0 ('n') has size 3, but 'n' is 2 "
                         "(from --dim / seqc_model_set_dim)"}));
  EXPECT_TRUE(isOk(setInput("y", y, {2, 4})));

  EXPECT_TRUE(failsWith(seqc_model_set_dim(m, "q", 2), SEQC_STATUS_NOT_FOUND,
                        {"no symbolic dimension 'q' (dimensions: n)"}));
  EXPECT_TRUE(failsWith(seqc_model_set_dim(m, "n", -1),
                        SEQC_STATUS_INVALID_ARGUMENT, {"size -1 is negative"}));
  EXPECT_TRUE(failsWith(seqc_model_get_dim(m, "q", &n), SEQC_STATUS_NOT_FOUND,
                        {"no symbolic dimension 'q'"}));
}

TEST(Dims, RepeatedSymbolWithinOneInput) {
  ModelPtr model = load(R"({"inputs": [{"name": "sq", "dtype": "f32",)"
                        R"( "shape": ["n", "n"]}], "outputs": []})");
  std::vector<float> data(6);
  seqc_tensor t = makeTensor(SEQC_DTYPE_F32, {2, 3}, data.data());
  EXPECT_TRUE(failsWith(seqc_model_set_input(model.get(), "sq", &t),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'sq': dim 1 ('n') has size 3, but 'n' is 2 "
                         "(from dim 0 of the same input)"}));
  t = makeTensor(SEQC_DTYPE_F32, {2, 2}, data.data());
  EXPECT_TRUE(isOk(seqc_model_set_input(model.get(), "sq", &t)));
  EXPECT_TRUE(failsWith(seqc_model_set_dim(model.get(), "x", 1),
                        SEQC_STATUS_NOT_FOUND,
                        {"no symbolic dimension 'x' (dimensions: n)"}));
  ModelPtr noSymbols = load(R"({"inputs": [], "outputs": []})");
  EXPECT_TRUE(failsWith(seqc_model_set_dim(noSymbols.get(), "n", 1),
                        SEQC_STATUS_NOT_FOUND, {"(it has none)"}));
}

TEST_F(AddModel, RefusesToRunIncomplete) {
  EXPECT_TRUE(failsWith(seqc_model_run(m), SEQC_STATUS_FAILED_PRECONDITION,
                        {"input 'x' is not bound"}));
  seqc_tensor out;
  EXPECT_TRUE(failsWith(seqc_model_get_output(m, "sum", &out),
                        SEQC_STATUS_FAILED_PRECONDITION,
                        {"output 'sum' is not available"}));
  EXPECT_TRUE(failsWith(seqc_model_get_output(m, "nope", &out),
                        SEQC_STATUS_NOT_FOUND,
                        {"no output 'nope' (outputs: sum, sum_t, x_alias, "
                         "scale_alias, rows)"}));
  ModelPtr fresh = load(FAKE_ADD_MANIFEST, fake_add_invoke);
  std::vector<float> x(4);
  seqc_tensor t = makeTensor(SEQC_DTYPE_F32, {1, 4}, x.data());
  ASSERT_TRUE(isOk(seqc_model_set_input(fresh.get(), "x", &t)));
  ASSERT_TRUE(isOk(seqc_model_set_input(fresh.get(), "y", &t)));
  EXPECT_TRUE(failsWith(seqc_model_run(fresh.get()),
                        SEQC_STATUS_FAILED_PRECONDITION,
                        {"parameter 'scale' is not bound"}));
  EXPECT_TRUE(failsWith(seqc_model_get_param(fresh.get(), "scale", &t),
                        SEQC_STATUS_FAILED_PRECONDITION,
                        {"parameter 'scale' is not bound"}));
  EXPECT_TRUE(failsWith(seqc_model_run(nullptr), SEQC_STATUS_INVALID_ARGUMENT,
                        {"model is NULL"}));
}

TEST_F(AddModel, ChecksParameters) {
  std::vector<float> wrong(3);
  seqc_tensor t = makeTensor(SEQC_DTYPE_F32, {3}, wrong.data());
  EXPECT_TRUE(failsWith(seqc_model_set_param(m, "scale", &t),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"parameter 'scale': f32 [3] does not match the "
                         "model's f32 [4]"}));
  EXPECT_TRUE(failsWith(seqc_model_set_param(m, "bias", &t),
                        SEQC_STATUS_NOT_FOUND,
                        {"no parameter 'bias' (parameters: scale)"}));
  seqc_tensor got = {};
  ASSERT_TRUE(isOk(seqc_model_get_param(m, "scale", &got)));
  EXPECT_EQ(std::vector<float>(static_cast<float *>(got.data),
                               static_cast<float *>(got.data) + 4),
            scale);
}

TEST(Threads, SetsTheOpenMPThreadCount) {
  EXPECT_TRUE(failsWith(seqc_set_num_threads(0), SEQC_STATUS_INVALID_ARGUMENT,
                        {"at least 1"}));
#ifdef SEQC_TEST_HAVE_OPENMP
  EXPECT_TRUE(isOk(seqc_set_num_threads(2)));
#else
  EXPECT_TRUE(failsWith(seqc_set_num_threads(2), SEQC_STATUS_UNAVAILABLE,
                        {"without OpenMP"}));
#endif
}

//===----------------------------------------------------------------------===//
// Checking outputs: the probe model
//===----------------------------------------------------------------------===//

class ProbeModel : public ::testing::Test {
protected:
  ModelPtr model = load(FAKE_PROBE_MANIFEST, fake_probe_invoke);
  seqc_model *m = model.get();
  std::vector<int32_t> ids = {1, 2, 3, 4, 5, 6};
  std::vector<int64_t> mask = {1, 1, 0};

  void SetUp() override {
    fake_probe_mode = FAKE_PROBE_OK;
    // ids' range [0, vocab] must be known to run.
    ASSERT_TRUE(isOk(seqc_model_set_dim(m, "vocab", 9)));
    seqc_tensor t = makeTensor(SEQC_DTYPE_I32, {2, 3}, ids.data());
    ASSERT_TRUE(isOk(seqc_model_set_input(m, "ids", &t)));
    t = makeTensor(SEQC_DTYPE_I64, {3}, mask.data());
    ASSERT_TRUE(isOk(seqc_model_set_input(m, "mask", &t)));
  }
  void TearDown() override { fake_probe_mode = FAKE_PROBE_OK; }
};

TEST_F(ProbeModel, PassesRowMajorDescriptors) {
  ASSERT_TRUE(isOk(seqc_model_run(m)));
  EXPECT_EQ(fake_probe_ids_sizes[0], 2);
  EXPECT_EQ(fake_probe_ids_sizes[1], 3);
  EXPECT_EQ(fake_probe_ids_strides[0], 3);
  EXPECT_EQ(fake_probe_ids_strides[1], 1);
  EXPECT_EQ(fake_probe_mask_sizes[0], 3);
  std::vector<int64_t> shape;
  EXPECT_EQ(outputFloats(m, "a", &shape),
            (std::vector<float>{0, 1, 10, 11, 20, 21}));
  EXPECT_EQ(shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(outputFloats(m, "b"), (std::vector<float>{100, 101}));
}

TEST_F(ProbeModel, RejectsAnOutputContradictingAnInputDim) {
  fake_probe_mode = FAKE_PROBE_WRONG_N;
  EXPECT_TRUE(failsWith(seqc_model_run(m), SEQC_STATUS_MODEL_ERROR,
                        {"output 'a': dim 0 ('n') has size 4, but 'n' is 3 "
                         "(from input 'ids')"}));
  seqc_tensor t;
  EXPECT_TRUE(failsWith(seqc_model_get_output(m, "a", &t),
                        SEQC_STATUS_FAILED_PRECONDITION,
                        {"has not run successfully"}));
}

TEST_F(ProbeModel, RejectsInconsistentOutputOnlyDims) {
  fake_probe_mode = FAKE_PROBE_WRONG_M;
  EXPECT_TRUE(failsWith(seqc_model_run(m), SEQC_STATUS_MODEL_ERROR,
                        {"output 'b': dim 0 ('m') has size 3, but 'm' is 2 "
                         "(from an earlier output)"}));
}

TEST_F(ProbeModel, RejectsNullAndNegativeOutputs) {
  fake_probe_mode = FAKE_PROBE_NULL_DATA;
  EXPECT_TRUE(failsWith(seqc_model_run(m), SEQC_STATUS_MODEL_ERROR,
                        {"output 'a': the model returned a null data "
                         "pointer"}));
  fake_probe_mode = FAKE_PROBE_NEGATIVE;
  EXPECT_TRUE(failsWith(seqc_model_run(m), SEQC_STATUS_MODEL_ERROR,
                        {"output 'a': dim 0 has negative size -1"}));
  // A good run afterwards works.
  fake_probe_mode = FAKE_PROBE_OK;
  EXPECT_TRUE(isOk(seqc_model_run(m)));
}

TEST_F(ProbeModel, CompactsPaddedRows) {
  fake_probe_mode = FAKE_PROBE_PADDED;
  ASSERT_TRUE(isOk(seqc_model_run(m)));
  EXPECT_EQ(outputFloats(m, "a"), (std::vector<float>{0, 1, 10, 11, 20, 21}));
}

TEST(Outputs, RejectsAWrongStaticDim) {
  // Returns y with 3 elements where the manifest says 2.
  seqc_invoke_fn wrong = [](void **args) {
    float *data = static_cast<float *>(std::malloc(3 * sizeof(float)));
    int64_t *desc = static_cast<int64_t *>(args[0]);
    std::memcpy(&desc[0], &data, sizeof(data));
    std::memcpy(&desc[1], &data, sizeof(data));
    desc[2] = 0;
    desc[3] = 3;
    desc[4] = 1;
  };
  ModelPtr model = load(R"({"inputs": [], "outputs": [{"name": "y",)"
                        R"( "dtype": "f32", "shape": [2]}]})",
                        wrong);
  EXPECT_TRUE(failsWith(seqc_model_run(model.get()), SEQC_STATUS_MODEL_ERROR,
                        {"output 'y': dim 0 has size 3 but the manifest's "
                         "shape [2] requires 2"}));
}

TEST(Api, RejectsNullArguments) {
  ModelPtr model = load(FAKE_ADD_MANIFEST, fake_add_invoke);
  seqc_model *m = model.get();
  seqc_tensor t = {};
  int64_t size;
  const seqc_status_code invalid = SEQC_STATUS_INVALID_ARGUMENT;
  EXPECT_TRUE(failsWith(seqc_model_set_dim(m, nullptr, 1), invalid, {}));
  EXPECT_TRUE(failsWith(seqc_model_get_dim(m, "n", nullptr), invalid, {}));
  EXPECT_TRUE(failsWith(seqc_model_set_input(nullptr, "x", &t), invalid, {}));
  EXPECT_TRUE(failsWith(seqc_model_random_inputs(nullptr, 0), invalid, {}));
  EXPECT_TRUE(failsWith(seqc_model_load_weights(m, nullptr), invalid, {}));
  EXPECT_TRUE(failsWith(seqc_model_random_weights(nullptr, 0), invalid, {}));
  EXPECT_TRUE(failsWith(seqc_model_set_param(m, nullptr, &t), invalid, {}));
  EXPECT_TRUE(
      failsWith(seqc_model_get_param(m, "scale", nullptr), invalid, {}));
  EXPECT_TRUE(failsWith(seqc_model_get_param(m, "w", &t), SEQC_STATUS_NOT_FOUND,
                        {"no parameter 'w'"}));
  EXPECT_TRUE(failsWith(seqc_model_save_weights(m, nullptr), invalid, {}));
  EXPECT_TRUE(failsWith(seqc_model_get_output(m, nullptr, &t), invalid, {}));
  EXPECT_TRUE(failsWith(seqc_npy_write(nullptr, &t), invalid, {}));
  EXPECT_TRUE(failsWith(seqc_model_get_dim(nullptr, "n", &size), invalid, {}));
  EXPECT_STREQ(seqc_model_name(nullptr), "");
  EXPECT_STREQ(seqc_status_message(nullptr), "OK");
  EXPECT_EQ(seqc_status_get_code(nullptr), SEQC_STATUS_OK);
  EXPECT_EQ(seqc_tensor_numel(nullptr), -1);
  EXPECT_STREQ(seqc_dtype_name(static_cast<seqc_dtype>(99)), "invalid");
  EXPECT_EQ(seqc_dtype_size(static_cast<seqc_dtype>(99)), 0u);
  EXPECT_EQ(seqc_dtype_block(static_cast<seqc_dtype>(99), nullptr, nullptr),
            0);
  seqc_model_reset_inputs(nullptr);
}

// The block formats: GGUF's block sizes, names, and no element size.
TEST(RuntimeApi, BlockDTypes) {
  struct {
    seqc_dtype dtype;
    const char *name;
    size_t bytes;
  } formats[] = {{SEQC_DTYPE_Q8_0, "q8_0", 34},
                 {SEQC_DTYPE_Q4_0, "q4_0", 18},
                 {SEQC_DTYPE_Q4_1, "q4_1", 20}};
  for (const auto &format : formats) {
    int64_t elements = 0;
    size_t bytes = 0;
    EXPECT_EQ(seqc_dtype_block(format.dtype, &elements, &bytes), 1);
    EXPECT_EQ(elements, 32);
    EXPECT_EQ(bytes, format.bytes);
    EXPECT_STREQ(seqc_dtype_name(format.dtype), format.name);
    EXPECT_EQ(seqc_dtype_size(format.dtype), 0u);
  }
  // Per-output-channel int8: a block is a row, its bytes beside the values
  // are the f32 scale.
  int64_t elements = -1;
  size_t bytes = 0;
  EXPECT_EQ(seqc_dtype_block(SEQC_DTYPE_I8_ROWSCALE, &elements, &bytes), 1);
  EXPECT_EQ(elements, 0);
  EXPECT_EQ(bytes, 4u);
  EXPECT_STREQ(seqc_dtype_name(SEQC_DTYPE_I8_ROWSCALE), "int8");
  EXPECT_EQ(seqc_dtype_size(SEQC_DTYPE_I8_ROWSCALE), 0u);
  EXPECT_EQ(seqc_dtype_block(SEQC_DTYPE_BF16, &elements, &bytes), 1);
  EXPECT_EQ(elements, 1);
  EXPECT_EQ(bytes, 2u);
}

TEST_F(ProbeModel, FreesASharedAllocationOnce) {
  fake_probe_mode = FAKE_PROBE_SHARED;
  ASSERT_TRUE(isOk(seqc_model_run(m)));
  EXPECT_EQ(outputFloats(m, "b"), (std::vector<float>{100, 101}));
}

TEST_F(ProbeModel, DoesNotFreeConstantGlobals) {
  fake_probe_mode = FAKE_PROBE_GLOBAL;
  ASSERT_TRUE(isOk(seqc_model_run(m)));
  EXPECT_EQ(outputFloats(m, "b"), (std::vector<float>{7, 8}));
}

//===----------------------------------------------------------------------===//
// Random inputs
//===----------------------------------------------------------------------===//

TEST(RandomInputs, NeedsEveryDimension) {
  ModelPtr model = load(FAKE_PROBE_MANIFEST, fake_probe_invoke);
  seqc_model *m = model.get();
  EXPECT_TRUE(failsWith(seqc_model_random_inputs(m, 1),
                        SEQC_STATUS_FAILED_PRECONDITION,
                        {"cannot generate input 'ids': dimension 'b' has no "
                         "size",
                         "--dim b=SIZE"}));
  ASSERT_TRUE(isOk(seqc_model_set_dim(m, "b", 2)));
  ASSERT_TRUE(isOk(seqc_model_set_dim(m, "n", 5)));
  EXPECT_TRUE(failsWith(seqc_model_random_inputs(m, 1),
                        SEQC_STATUS_FAILED_PRECONDITION,
                        {"range bound 'vocab' has no size"}));
  // A failed call binds nothing.
  EXPECT_TRUE(failsWith(seqc_model_run(m), SEQC_STATUS_FAILED_PRECONDITION,
                        {"input 'ids' is not bound"}));
}

TEST(RandomInputs, DrawsIntegersFromTheInclusiveRange) {
  // Observe the generated ids through a model that returns them.
  const char *manifest =
      R"({"inputs": [{"name": "ids", "dtype": "i32", "shape": ["n"],)"
      R"( "range": [0, "vocab"]}, {"name": "pos", "dtype": "i64",)"
      R"( "shape": ["n"]}, {"name": "h", "dtype": "f32", "shape": ["n"]}],)"
      R"( "outputs": [{"name": "ids", "dtype": "i32", "shape": ["n"]},)"
      R"( {"name": "pos", "dtype": "i64", "shape": ["n"]},)"
      R"( {"name": "h", "dtype": "f32", "shape": ["n"]}]})";
  // The identity model: returns its arguments (aliasing outputs).
  seqc_invoke_fn identity = [](void **args) {
    for (int i = 0; i < 3; ++i)
      std::memcpy(static_cast<char *>(args[0]) + i * 40, args[1 + i], 40);
  };
  auto draw = [&](uint64_t seed, int64_t vocab, std::vector<int32_t> *ids,
                  std::vector<int64_t> *pos, std::vector<float> *h) {
    ModelPtr model = load(manifest, identity);
    seqc_model *m = model.get();
    ASSERT_TRUE(isOk(seqc_model_set_dim(m, "n", 1000)));
    ASSERT_TRUE(isOk(seqc_model_set_dim(m, "vocab", vocab)));
    ASSERT_TRUE(isOk(seqc_model_random_inputs(m, seed)));
    ASSERT_TRUE(isOk(seqc_model_run(m)));
    seqc_tensor t;
    ASSERT_TRUE(isOk(seqc_model_get_output(m, "ids", &t)));
    ids->assign(static_cast<int32_t *>(t.data),
                static_cast<int32_t *>(t.data) + 1000);
    ASSERT_TRUE(isOk(seqc_model_get_output(m, "pos", &t)));
    pos->assign(static_cast<int64_t *>(t.data),
                static_cast<int64_t *>(t.data) + 1000);
    ASSERT_TRUE(isOk(seqc_model_get_output(m, "h", &t)));
    h->assign(static_cast<float *>(t.data),
              static_cast<float *>(t.data) + 1000);
  };
  std::vector<int32_t> ids, ids2, ids3;
  std::vector<int64_t> pos, pos2, pos3;
  std::vector<float> h, h2, h3;
  draw(7, 9, &ids, &pos, &h);
  draw(7, 9, &ids2, &pos2, &h2);
  draw(8, 9, &ids3, &pos3, &h3);
  EXPECT_EQ(ids, ids2); // Deterministic.
  EXPECT_EQ(h, h2);
  EXPECT_NE(ids, ids3); // Seed-dependent.
  EXPECT_NE(h, h3);
  int32_t lo = *std::min_element(ids.begin(), ids.end());
  int32_t hi = *std::max_element(ids.begin(), ids.end());
  EXPECT_EQ(lo, 0); // Both ends of [0, 9] are drawn.
  EXPECT_EQ(hi, 9);
  // No range: [0, 0].
  EXPECT_EQ(pos, std::vector<int64_t>(1000, 0));
  // Floats: roughly standard normal, bounded by the Irwin-Hall support.
  double sum = 0, sumSq = 0;
  for (float v : h) {
    EXPECT_LT(std::fabs(v), 6.0f);
    sum += v;
    sumSq += static_cast<double>(v) * v;
  }
  EXPECT_NEAR(sum / 1000, 0.0, 0.15);
  EXPECT_NEAR(sumSq / 1000, 1.0, 0.2);
}

TEST(RandomInputs, FillsOnlyUnboundInputs) {
  ModelPtr model = load(FAKE_PROBE_MANIFEST, fake_probe_invoke);
  seqc_model *m = model.get();
  std::vector<int32_t> ids(6, 0);
  seqc_tensor t = makeTensor(SEQC_DTYPE_I32, {2, 3}, ids.data());
  ASSERT_TRUE(isOk(seqc_model_set_input(m, "ids", &t)));
  // mask's n comes from ids; ids keeps its values (vocab is not needed to
  // generate mask, only to check ids' range when the model runs).
  ASSERT_TRUE(isOk(seqc_model_random_inputs(m, 3)));
  ASSERT_TRUE(isOk(seqc_model_set_dim(m, "vocab", 0)));
  ASSERT_TRUE(isOk(seqc_model_run(m)));
  EXPECT_EQ(fake_probe_mask_sizes[0], 3);
}

TEST(RandomInputs, ChecksTheRange) {
  ModelPtr empty = load(R"({"inputs": [{"name": "i", "dtype": "i64",)"
                        R"( "shape": [2], "range": [5, 2]}], "outputs": []})");
  EXPECT_TRUE(failsWith(seqc_model_random_inputs(empty.get(), 0),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"cannot generate input 'i': its range [5, 2] is "
                         "empty"}));
  ModelPtr wide = load(R"({"inputs": [{"name": "i", "dtype": "i32",)"
                       R"( "shape": [2], "range": [0, 4294967296]}],)"
                       R"( "outputs": []})");
  EXPECT_TRUE(failsWith(seqc_model_random_inputs(wide.get(), 0),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"range [0, 4294967296] does not fit i32"}));
  ModelPtr full = load(R"({"inputs": [{"name": "i", "dtype": "i64",)"
                       R"( "shape": [2], "range": [-9223372036854775808,)"
                       R"( 9223372036854775807]}], "outputs": []})");
  EXPECT_TRUE(isOk(seqc_model_random_inputs(full.get(), 0)));
}

//===----------------------------------------------------------------------===//
// Weights through the model
//===----------------------------------------------------------------------===//

constexpr const char *kWeightsManifest =
    R"({"model": "mlp", "inputs": [], "outputs": [], "params": [)"
    R"({"name": "fc.weight", "dtype": "f32", "shape": [2, 3]},)"
    R"({"name": "fc.bias", "dtype": "f32", "shape": [3]},)"
    R"({"name": "ln_f.weight", "dtype": "bf16", "shape": [3]},)"
    R"({"name": "steps", "dtype": "i64", "shape": []}]})";

class Weights : public ::testing::Test {
protected:
  TempDir dir;
  ModelPtr model = load(kWeightsManifest);
  seqc_model *m = model.get();

  std::vector<char> paramBytes(const char *name) {
    seqc_tensor t = {};
    EXPECT_TRUE(isOk(seqc_model_get_param(m, name, &t)));
    size_t bytes =
        static_cast<size_t>(seqc_tensor_numel(&t)) * seqc_dtype_size(t.dtype);
    const char *data = static_cast<const char *>(t.data);
    return std::vector<char>(data, data + bytes);
  }

  /// A header entry for `name`.
  static std::string entry(const char *name, const char *dtype,
                           const char *shape, int begin, int end) {
    return std::string("\"") + name + "\": {\"dtype\": \"" + dtype +
           "\", \"shape\": " + shape + ", \"data_offsets\": [" +
           std::to_string(begin) + ", " + std::to_string(end) + "]}";
  }
  /// A header with all four parameters, "fc.weight" given by `weight`.
  static std::string header(const std::string &weight,
                            const std::string &extra = "") {
    return "{" + weight + ", " + entry("fc.bias", "F32", "[3]", 24, 36) + ", " +
           entry("ln_f.weight", "BF16", "[3]", 36, 42) + ", " +
           entry("steps", "I64", "[]", 42, 50) + extra + "}";
  }

  static std::vector<char> bytesOf(const std::string &text) {
    return std::vector<char>(text.begin(), text.end());
  }

  ::testing::AssertionResult loadRejects(const std::string &bytes,
                                         const char *part) {
    std::string path = dir.file("w.safetensors");
    writeFile(path, bytes);
    return failsWith(seqc_model_load_weights(m, path.c_str()),
                     SEQC_STATUS_INVALID_FILE, {part});
  }
};

TEST_F(Weights, RandomInitFollowsTheNamingRule) {
  ASSERT_TRUE(isOk(seqc_model_random_weights(m, 42)));
  seqc_tensor t;
  ASSERT_TRUE(isOk(seqc_model_get_param(m, "fc.weight", &t)));
  const float *w = static_cast<const float *>(t.data);
  float bound = 1.0f / std::sqrt(3.0f);
  for (int i = 0; i < 6; ++i) {
    EXPECT_GE(w[i], -bound);
    EXPECT_LT(w[i], bound);
    EXPECT_NE(w[i], 0.0f);
  }
  ASSERT_TRUE(isOk(seqc_model_get_param(m, "fc.bias", &t)));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(static_cast<const float *>(t.data)[i], 0.0f);
  ASSERT_TRUE(isOk(seqc_model_get_param(m, "ln_f.weight", &t)));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(static_cast<const uint16_t *>(t.data)[i], 0x3f80); // bf16 1.0
  ASSERT_TRUE(isOk(seqc_model_get_param(m, "steps", &t)));
  EXPECT_EQ(*static_cast<const int64_t *>(t.data), 0);

  std::vector<char> first = paramBytes("fc.weight");
  ASSERT_TRUE(isOk(seqc_model_random_weights(m, 42)));
  EXPECT_EQ(paramBytes("fc.weight"), first);
  ASSERT_TRUE(isOk(seqc_model_random_weights(m, 43)));
  EXPECT_NE(paramBytes("fc.weight"), first);
}

TEST_F(Weights, SaveAndLoadRoundTrip) {
  ASSERT_TRUE(isOk(seqc_model_random_weights(m, 5)));
  std::string path = dir.file("saved.safetensors");
  ASSERT_TRUE(isOk(seqc_model_save_weights(m, path.c_str())));
  std::vector<char> weight = paramBytes("fc.weight");

  ModelPtr other = load(kWeightsManifest);
  ASSERT_TRUE(isOk(seqc_model_load_weights(other.get(), path.c_str())));
  seqc_tensor t;
  ASSERT_TRUE(isOk(seqc_model_get_param(other.get(), "fc.weight", &t)));
  EXPECT_EQ(std::memcmp(t.data, weight.data(), weight.size()), 0);

  // Saving over the file the weights are mapped from keeps them valid.
  ASSERT_TRUE(isOk(seqc_model_save_weights(other.get(), path.c_str())));
  ASSERT_TRUE(isOk(seqc_model_get_param(other.get(), "fc.weight", &t)));
  EXPECT_EQ(std::memcmp(t.data, weight.data(), weight.size()), 0);
  ASSERT_TRUE(isOk(seqc_model_load_weights(other.get(), path.c_str())));
  ASSERT_TRUE(isOk(seqc_model_get_param(other.get(), "fc.weight", &t)));
  EXPECT_EQ(std::memcmp(t.data, weight.data(), weight.size()), 0);
}

TEST_F(Weights, CopiesMisalignedTensors) {
  // Pad the header so that the data section starts at an odd file offset,
  // hence at an odd address in the page-aligned mapping.
  std::vector<float> w = {1, 2, 3, 4, 5, 6};
  std::string data = rawBytes(w) + std::string(26, '\0');
  std::string h = header(entry("fc.weight", "F32", "[2, 3]", 0, 24));
  while ((8 + h.size()) % 4 != 1)
    h += ' ';
  std::string path = dir.file("odd.safetensors");
  writeFile(path, safetensorsBytes(h, data));
  ASSERT_TRUE(isOk(seqc_model_load_weights(m, path.c_str())));
  seqc_tensor t;
  ASSERT_TRUE(isOk(seqc_model_get_param(m, "fc.weight", &t)));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % 4, 0u);
  EXPECT_EQ(std::memcmp(t.data, w.data(), 24), 0);
}

TEST_F(Weights, RejectsFilesNotMatchingTheModel) {
  std::string data(50, '\0');
  EXPECT_TRUE(loadRejects(
      safetensorsBytes(header(entry("fc.weight", "F32", "[2, 3]", 0, 24),
                              ", " + entry("extra", "F32", "[0]", 0, 0)),
                       data),
      "tensor 'extra' is not a parameter of the model"));
  EXPECT_TRUE(loadRejects(
      safetensorsBytes(header(entry("fc.weight", "I32", "[2, 3]", 0, 24)),
                       data),
      "parameter 'fc.weight' is I32 in the file but the model expects F32"));
  EXPECT_TRUE(loadRejects(
      safetensorsBytes(header(entry("fc.weight", "F32", "[3, 2]", 0, 24)),
                       data),
      "parameter 'fc.weight' has shape [3, 2] in the file but the model "
      "expects [2, 3]"));
  EXPECT_TRUE(loadRejects(
      safetensorsBytes(header(entry("fc.weight", "F32", "[6]", 0, 24)), data),
      "has shape [6] in the file but the model expects [2, 3]"));
  EXPECT_TRUE(loadRejects(
      safetensorsBytes("{" + entry("fc.bias", "F32", "[3]", 0, 12) + "}",
                       std::string(12, '\0')),
      "is missing 3 of the model's 4 parameters: 'fc.weight', "
      "'ln_f.weight', 'steps'"));
  EXPECT_TRUE(
      loadRejects(safetensorsBytes(
                      header(entry("fc.weight", "F32", "[2, 3]", 0, 28)), data),
                  "span 28 bytes but F32 [2, 3] needs 24"));
}

TEST_F(Weights, ConvertsOnLoadWhereTheValuesStayExact) {
  // fc.weight BF16 and fc.bias F16 into f32 parameters, steps I32 into an
  // i64 one; ln_f.weight stays BF16 and is used in place.
  std::vector<uint16_t> weight = {0x3f80, 0xc000, 0x3f00,
                                  0x0000, 0x4040, 0x7f80}; // 1 -2 .5 0 3 inf
  std::vector<uint16_t> bias = {0x3c00, 0xc000, 0x3800};   // 1 -2 .5
  std::vector<uint16_t> gain = {0x3f80, 0x3f80, 0x4000};   // 1 1 2
  std::vector<int32_t> steps = {-7};
  std::string data =
      rawBytes(weight) + rawBytes(bias) + rawBytes(gain) + rawBytes(steps);
  std::string h = "{" + entry("fc.weight", "BF16", "[2, 3]", 0, 12) + ", " +
                  entry("fc.bias", "F16", "[3]", 12, 18) + ", " +
                  entry("ln_f.weight", "BF16", "[3]", 18, 24) + ", " +
                  entry("steps", "I32", "[]", 24, 28) + "}";
  std::string path = dir.file("half.safetensors");
  writeFile(path, safetensorsBytes(h, data));
  ASSERT_TRUE(isOk(seqc_model_load_weights(m, path.c_str())));
  seqc_tensor t;
  ASSERT_TRUE(isOk(seqc_model_get_param(m, "fc.weight", &t)));
  EXPECT_EQ(t.dtype, SEQC_DTYPE_F32);
  const float *w = static_cast<const float *>(t.data);
  EXPECT_EQ(std::vector<float>(w, w + 6),
            (std::vector<float>{1, -2, 0.5f, 0, 3, INFINITY}));
  ASSERT_TRUE(isOk(seqc_model_get_param(m, "fc.bias", &t)));
  const float *b = static_cast<const float *>(t.data);
  EXPECT_EQ(std::vector<float>(b, b + 3), (std::vector<float>{1, -2, 0.5f}));
  EXPECT_EQ(paramBytes("ln_f.weight"), bytesOf(rawBytes(gain)));
  ASSERT_TRUE(isOk(seqc_model_get_param(m, "steps", &t)));
  EXPECT_EQ(*static_cast<const int64_t *>(t.data), -7);

  // Narrowing never happens: F64 into f32, F32 into bf16, I64 into i32.
  EXPECT_TRUE(loadRejects(
      safetensorsBytes("{" + entry("fc.weight", "F64", "[2, 3]", 0, 48) + "}",
                       std::string(48, '\0')),
      "parameter 'fc.weight' is F64 in the file but the model expects F32, "
      "and seqc converts only where the values stay exact"));
  EXPECT_TRUE(loadRejects(
      safetensorsBytes("{" + entry("fc.weight", "F32", "[2, 3]", 0, 24) + ", " +
                           entry("fc.bias", "F32", "[3]", 24, 36) + ", " +
                           entry("ln_f.weight", "F32", "[3]", 36, 48) + "}",
                       std::string(48, '\0')),
      "parameter 'ln_f.weight' is F32 in the file but the model expects "
      "BF16, and seqc converts only where the values stay exact (BF16 and F16 "
      "to F32 or F64, F32 to F64, I32 to I64): declare the parameter with "
      "dtype=\"f32\" or convert the file"));
  EXPECT_TRUE(loadRejects(
      safetensorsBytes(header(entry("fc.weight", "U32", "[2, 3]", 0, 24)),
                       std::string(50, '\0')),
      "parameter 'fc.weight' is U32 in the file, a dtype seqc does not "
      "compute with"));
}

TEST_F(Weights, SkipsTensorsThatAreNotParametersOnlyOnRequest) {
  std::string data(50 + 16 + 6, '\0');
  std::string bytes = safetensorsBytes(
      header(entry("fc.weight", "F32", "[2, 3]", 0, 24),
             ", " + entry("embeddings.position_ids", "I64", "[1, 2]", 50, 66) +
                 ", " + entry("attn.masked_bias", "BOOL", "[2, 3]", 66, 72)),
      data);
  std::string path = dir.file("extra.safetensors");
  writeFile(path, bytes);
  EXPECT_TRUE(failsWith(
      seqc_model_load_weights(m, path.c_str()), SEQC_STATUS_INVALID_FILE,
      {"tensor 'embeddings.position_ids' is not a parameter of the model (it "
       "is I64 [1, 2]); to skip the tensors the model does not declare, pass "
       "--skip-unused or --skip-weights PATTERN"}));

  struct Skipped {
    std::vector<std::string> lines;
    static void report(void *self, const char *name, const char *dtype,
                       int32_t rank, const int64_t *shape) {
      std::string line =
          std::string(name) + " " + dtype + " " + formatShape(shape, rank);
      static_cast<Skipped *>(self)->lines.push_back(line);
    }
  } skipped;
  seqc_weights_options options = {};
  options.on_skipped = Skipped::report;
  options.user_data = &skipped;
  // A pattern that matches one of the two leaves the other an error, and a
  // failed load reports nothing as skipped.
  const char *positionIds[] = {"embeddings.*_ids"};
  options.skip_patterns = positionIds;
  options.num_skip_patterns = 1;
  EXPECT_TRUE(failsWith(seqc_model_load_weights_with(m, path.c_str(), &options),
                        SEQC_STATUS_INVALID_FILE,
                        {"tensor 'attn.masked_bias' is not a parameter of "
                         "the model (it is BOOL [2, 3])"}));
  EXPECT_TRUE(skipped.lines.empty());
  const char *both[] = {"embeddings.*_ids", "*.masked_bias"};
  options.skip_patterns = both;
  options.num_skip_patterns = 2;
  ASSERT_TRUE(isOk(seqc_model_load_weights_with(m, path.c_str(), &options)));
  EXPECT_EQ(skipped.lines,
            (std::vector<std::string>{"embeddings.position_ids I64 [1, 2]",
                                      "attn.masked_bias BOOL [2, 3]"}));
  skipped.lines.clear();
  options.skip_patterns = nullptr;
  options.num_skip_patterns = 0;
  options.skip_unused = 1;
  ASSERT_TRUE(isOk(seqc_model_load_weights_with(m, path.c_str(), &options)));
  EXPECT_EQ(skipped.lines.size(), 2u);

  // A parameter is loaded even when a pattern matches it, and its dtype is
  // still checked.
  // (The array's second entry is the NULL that the last call reports.)
  const char *everything[] = {"*", nullptr};
  options.skip_unused = 0;
  options.skip_patterns = everything;
  options.num_skip_patterns = 1;
  ASSERT_TRUE(isOk(seqc_model_load_weights_with(m, path.c_str(), &options)));
  options.num_skip_patterns = 2;
  EXPECT_TRUE(failsWith(seqc_model_load_weights_with(m, path.c_str(), &options),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"skip pattern 1 is NULL"}));
}

TEST_F(Weights, LoadsShardedCheckpointsThroughTheirIndex) {
  std::vector<float> w = {1, 2, 3, 4, 5, 6};
  std::string first =
      safetensorsBytes("{" + entry("fc.weight", "F32", "[2, 3]", 0, 24) + ", " +
                           entry("steps", "I64", "[]", 24, 32) + "}",
                       rawBytes(w) + std::string(8, '\0'));
  std::string second =
      safetensorsBytes("{" + entry("fc.bias", "F32", "[3]", 0, 12) + ", " +
                           entry("ln_f.weight", "BF16", "[3]", 12, 18) + "}",
                       std::string(18, '\0'));
  writeFile(dir.file("model-00001-of-00002.safetensors"), first);
  writeFile(dir.file("model-00002-of-00002.safetensors"), second);
  std::string index = R"({"metadata": {"total_size": 50}, "weight_map": {)"
                      R"("fc.bias": "model-00002-of-00002.safetensors", )"
                      R"("fc.weight": "model-00001-of-00002.safetensors", )"
                      R"("ln_f.weight": "model-00002-of-00002.safetensors", )"
                      R"("steps": "model-00001-of-00002.safetensors"}})";
  std::string indexPath = dir.file("model.safetensors.index.json");
  writeFile(indexPath, index);
  ASSERT_TRUE(isOk(seqc_model_load_weights(m, indexPath.c_str())));
  EXPECT_EQ(paramBytes("fc.weight"), bytesOf(rawBytes(w)));
  // The directory stands for its index.
  ASSERT_TRUE(isOk(seqc_model_random_weights(m, 3)));
  ASSERT_TRUE(isOk(seqc_model_load_weights(m, dir.path().c_str())));
  EXPECT_EQ(paramBytes("fc.weight"), bytesOf(rawBytes(w)));

  auto rejectsIndex = [&](const std::string &text, const char *part) {
    writeFile(indexPath, text);
    return failsWith(seqc_model_load_weights(m, indexPath.c_str()),
                     SEQC_STATUS_INVALID_FILE, {part});
  };
  EXPECT_TRUE(rejectsIndex(R"({"metadata": {}})", "has no \"weight_map\""));
  EXPECT_TRUE(rejectsIndex(R"({"weight_map": {"fc.bias": 2}})",
                           "the shard of tensor 'fc.bias' is a number"));
  EXPECT_TRUE(rejectsIndex(R"({"weight_map": {"fc.bias": "../x"}})",
                           "is not a path relative to the index's directory"));
  EXPECT_TRUE(rejectsIndex(
      R"({"weight_map": {"fc.bias": "model-00002-of-00002.safetensors"}})",
      "tensor 'ln_f.weight' is not in the index"));
  EXPECT_TRUE(rejectsIndex(
      R"({"weight_map": {"fc.bias": "model-00001-of-00002.safetensors", )"
      R"("fc.weight": "model-00001-of-00002.safetensors", )"
      R"("steps": "model-00001-of-00002.safetensors"}})",
      "tensor 'fc.bias' is listed in shard "
      "'model-00001-of-00002.safetensors', which does not hold it"));
  writeFile(indexPath,
            R"({"weight_map": {"fc.weight": "missing.safetensors"}})");
  EXPECT_TRUE(failsWith(seqc_model_load_weights(m, indexPath.c_str()),
                        SEQC_STATUS_IO_ERROR,
                        {"names shard 'missing.safetensors': cannot open"}));
  TempDir empty;
  EXPECT_TRUE(failsWith(seqc_model_load_weights(m, empty.path().c_str()),
                        SEQC_STATUS_IO_ERROR,
                        {"is a directory without model.safetensors.index.json "
                         "or model.safetensors"}));
}

TEST(ManyWeights, ListsTheFirstFiveMissing) {
  std::string manifest = R"({"inputs": [], "outputs": [], "params": [)";
  for (int i = 0; i < 7; ++i)
    manifest += std::string(i ? "," : "") + R"({"name": "p)" +
                std::to_string(i) + R"(", "dtype": "f32", "shape": [1]})";
  manifest += "]}";
  ModelPtr model = load(manifest.c_str());
  TempDir dir;
  std::string path = dir.file("none.safetensors");
  writeFile(path, safetensorsBytes("{}", ""));
  EXPECT_TRUE(failsWith(seqc_model_load_weights(model.get(), path.c_str()),
                        SEQC_STATUS_INVALID_FILE,
                        {"is missing 7 of the model's 7 parameters: 'p0', "
                         "'p1', 'p2', 'p3', 'p4', ... (2 more)"}));
}

TEST_F(Weights, AFailedLoadKeepsThePreviousWeights) {
  ASSERT_TRUE(isOk(seqc_model_random_weights(m, 1)));
  std::vector<char> before = paramBytes("fc.weight");
  EXPECT_TRUE(loadRejects("garbage", "file too short"));
  std::string missing = dir.file("missing.safetensors");
  EXPECT_TRUE(failsWith(seqc_model_load_weights(m, missing.c_str()),
                        SEQC_STATUS_IO_ERROR, {"cannot open"}));
  EXPECT_EQ(paramBytes("fc.weight"), before);
}

TEST_F(Weights, SaveNeedsEveryParameter) {
  std::string path = dir.file("partial.safetensors");
  EXPECT_TRUE(failsWith(seqc_model_save_weights(m, path.c_str()),
                        SEQC_STATUS_FAILED_PRECONDITION,
                        {"parameter 'fc.weight' is not bound"}));
}

TEST_F(Weights, SurvivesRandomlyCorruptedFiles) {
  ASSERT_TRUE(isOk(seqc_model_random_weights(m, 9)));
  std::string good = dir.file("good.safetensors");
  ASSERT_TRUE(isOk(seqc_model_save_weights(m, good.c_str())));
  std::string valid = readFile(good);
  std::string path = dir.file("fuzz.safetensors");
  uint64_t state = 2024;
  auto next = [&state]() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  int accepted = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::string bytes = valid;
    int edits = 1 + static_cast<int>(next() % 3);
    for (int e = 0; e < edits; ++e) {
      // Bias edits towards the length prefix and the header.
      size_t limit =
          next() % 4 ? std::min<size_t>(bytes.size(), 200) : bytes.size();
      size_t pos = next() % limit;
      switch (next() % 3) {
      case 0:
        bytes[pos] = static_cast<char>(next());
        break;
      case 1:
        bytes.erase(pos, 1);
        break;
      default:
        bytes.insert(pos, 1, "0123456789[]{}\",: "[next() % 19]);
      }
    }
    writeFile(path, bytes);
    ModelPtr fresh = load(kWeightsManifest);
    seqc_status *status = seqc_model_load_weights(fresh.get(), path.c_str());
    accepted += status == nullptr;
    seqc_status_free(status);
  }
  // Edits inside the data section leave the file valid.
  EXPECT_GT(accepted, 0);
}

//===----------------------------------------------------------------------===//
// Prepared values (docs/abi.md, seqc_prepare / seqc_release)
//===----------------------------------------------------------------------===//

/// y = x * (2 * s): the fake model prepares 2 * s from its parameter.
constexpr const char *kPreparedManifest =
    "{\"model\": \"prep\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\","
    " \"shape\": [2]}], \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\","
    " \"shape\": [2]}], \"params\": [{\"name\": \"s\", \"dtype\": \"f32\","
    " \"shape\": [2]}]}";

struct Descriptor1 {
  float *allocated, *aligned;
  int64_t offset, size, stride;
};
struct PreparedState {
  float doubled[2];
};
int prepareCalls = 0, releaseCalls = 0, invokeCalls = 0;
const PreparedState *lastState = nullptr;

void *fakePrepare(void **params) {
  ++prepareCalls;
  auto *s = static_cast<const Descriptor1 *>(params[0]);
  auto *state = new PreparedState();
  for (int i = 0; i < 2; ++i)
    state->doubled[i] = 2 * s->aligned[s->offset + i * s->stride];
  return state;
}
void fakeRelease(void *state) {
  ++releaseCalls;
  delete static_cast<PreparedState *>(state);
}
void fakePreparedInvoke(void **args) {
  ++invokeCalls;
  auto *result = static_cast<Descriptor1 *>(args[0]);
  auto *x = static_cast<const Descriptor1 *>(args[1]);
  // args[2] is the parameter; the state follows it.
  lastState = static_cast<const PreparedState *>(args[3]);
  float *y = static_cast<float *>(std::malloc(2 * sizeof(float)));
  for (int i = 0; i < 2; ++i)
    y[i] = x->aligned[x->offset + i * x->stride] *
           (lastState ? lastState->doubled[i] : NAN);
  *result = {y, y, 0, 2, 1};
}

TEST(Prepared, ComputedOncePerSetOfWeights) {
  prepareCalls = releaseCalls = invokeCalls = 0;
  seqc_model *raw = nullptr;
  ASSERT_TRUE(isOk(seqc_model_load_prepared(kPreparedManifest,
                                            fakePreparedInvoke, fakePrepare,
                                            fakeRelease, &raw)));
  ModelPtr model(raw);
  float s[2] = {1, 3}, x[2] = {5, 7};
  seqc_tensor ts = {SEQC_DTYPE_F32, 1, {2}, s};
  seqc_tensor tx = {SEQC_DTYPE_F32, 1, {2}, x};
  ASSERT_TRUE(isOk(seqc_model_set_param(raw, "s", &ts)));
  ASSERT_TRUE(isOk(seqc_model_set_input(raw, "x", &tx)));
  EXPECT_EQ(prepareCalls, 0); // at the first run, not at binding
  for (int run = 0; run < 3; ++run)
    ASSERT_TRUE(isOk(seqc_model_run(raw)));
  EXPECT_EQ(prepareCalls, 1);
  EXPECT_EQ(invokeCalls, 3);
  EXPECT_EQ(outputFloats(raw, "y"), (std::vector<float>{10, 42}));

  // New weights: the next run prepares again and releases the old state.
  s[1] = 4;
  ASSERT_TRUE(isOk(seqc_model_set_param(raw, "s", &ts)));
  ASSERT_TRUE(isOk(seqc_model_run(raw)));
  EXPECT_EQ(prepareCalls, 2);
  EXPECT_EQ(releaseCalls, 1);
  EXPECT_EQ(outputFloats(raw, "y"), (std::vector<float>{10, 56}));
  ASSERT_TRUE(isOk(seqc_model_random_weights(raw, 3)));
  ASSERT_TRUE(isOk(seqc_model_run(raw)));
  EXPECT_EQ(prepareCalls, 3);
  EXPECT_EQ(releaseCalls, 2);

  // Freeing the model releases the last state.
  model.reset();
  EXPECT_EQ(releaseCalls, 3);
}

TEST(Prepared, WithoutPrepareTheStateIsNull) {
  invokeCalls = 0;
  lastState = reinterpret_cast<const PreparedState *>(1);
  ModelPtr model = load(kPreparedManifest, fakePreparedInvoke);
  float s[2] = {1, 3}, x[2] = {5, 7};
  seqc_tensor ts = {SEQC_DTYPE_F32, 1, {2}, s};
  seqc_tensor tx = {SEQC_DTYPE_F32, 1, {2}, x};
  ASSERT_TRUE(isOk(seqc_model_set_param(model.get(), "s", &ts)));
  ASSERT_TRUE(isOk(seqc_model_set_input(model.get(), "x", &tx)));
  ASSERT_TRUE(isOk(seqc_model_run(model.get())));
  EXPECT_EQ(invokeCalls, 1);
  EXPECT_EQ(lastState, nullptr);
}

TEST(Prepared, PrepareAndReleaseComeTogether) {
  seqc_model *model = nullptr;
  EXPECT_TRUE(failsWith(seqc_model_load_prepared(kPreparedManifest,
                                                 fakePreparedInvoke,
                                                 fakePrepare, nullptr, &model),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"prepare and release must be given together"}));
  EXPECT_EQ(model, nullptr);
}

TEST(Prepared, EmptyParameterWithHugeSizesRuns) {
  // Found by the manifest fuzzer: a parameter of 0 elements whose other
  // sizes are huge has strides past int64_t; building its descriptor must
  // not overflow (it is never read).
  ModelPtr model = load(
      "{\"model\": \"fuzz\", \"inputs\": [], \"outputs\": [], \"params\": "
      "[{\"name\": \"half\", \"dtype\": \"f32\", \"shape\": [0, "
      "4922337203685477580, 7]}]}");
  ASSERT_TRUE(isOk(seqc_model_random_weights(model.get(), 1)));
  EXPECT_TRUE(isOk(seqc_model_run(model.get())));
}

} // namespace
