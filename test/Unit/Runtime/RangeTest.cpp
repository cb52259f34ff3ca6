//===- RangeTest.cpp - Integer inputs checked against their ranges --------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// An integer input may declare an inclusive "range" [lo, hi] whose bounds are
// constants or dimension names (docs/abi.md). seqc_model_set_input checks the
// values against every bound known at that point and seqc_model_run checks
// again once all are known, so that no value outside the range reaches the
// model (docs/runtime.md, "Value ranges").
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cstdint>
#include <memory>
#include <vector>

using namespace seqc;
using namespace seqc::test;

namespace {

struct ModelDeleter {
  void operator()(seqc_model *model) const { seqc_model_free(model); }
};
using ModelPtr = std::unique_ptr<seqc_model, ModelDeleter>;

/// How often the model below ran: a rejected input must not reach it.
int invocations = 0;

/// Counts its calls and returns nothing (the manifests have no outputs).
void countingInvoke(void **) { ++invocations; }

ModelPtr load(const char *manifest) {
  seqc_model *model = nullptr;
  EXPECT_TRUE(isOk(seqc_model_load_from(manifest, countingInvoke, &model)));
  return ModelPtr(model);
}

/// examples/gpt.seq's input: tokens: i32[b, n] in [0, vocab - 1] with a
/// vocabulary of 256, which the compiler evaluates to the constant 255.
constexpr const char *kGptManifest =
    R"({"model": "gpt", "inputs": [{"name": "tokens", "dtype": "i32",)"
    R"( "shape": ["b", "n"], "range": [0, 255]}], "outputs": []})";

/// examples/longformer.seq's inputs: lengths: i32[b] in [1, n], a bound that
/// names a dimension fixed by another input.
constexpr const char *kLongformerManifest =
    R"({"model": "longformer", "inputs": [{"name": "tokens", "dtype": "i32",)"
    R"( "shape": ["b", "n"], "range": [0, 255]}, {"name": "lengths",)"
    R"( "dtype": "i32", "shape": ["b"], "range": [1, "n"]}], "outputs": []})";

class Range : public ::testing::Test {
protected:
  void SetUp() override { invocations = 0; }

  /// Binds i32 `values` of `shape` to input `name` of `m`.
  static seqc_status *setI32(seqc_model *m, const char *name,
                             std::vector<int64_t> shape,
                             std::vector<int32_t> values) {
    seqc_tensor t = makeTensor(SEQC_DTYPE_I32, shape, values.data());
    return seqc_model_set_input(m, name, &t);
  }
  static seqc_status *setI64(seqc_model *m, const char *name,
                             std::vector<int64_t> shape,
                             std::vector<int64_t> values) {
    seqc_tensor t = makeTensor(SEQC_DTYPE_I64, shape, values.data());
    return seqc_model_set_input(m, name, &t);
  }
};

//===----------------------------------------------------------------------===//
// Constant bounds
//===----------------------------------------------------------------------===//

TEST_F(Range, RejectsTokensOutsideConstantBounds) {
  ModelPtr model = load(kGptManifest);
  seqc_model *m = model.get();
  // Too large, negative, far too large.
  EXPECT_TRUE(failsWith(setI32(m, "tokens", {1, 4}, {1, 2, 300, 4}),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'tokens': element [0, 2] is 300, outside "
                         "[0, 255]"}));
  EXPECT_TRUE(failsWith(setI32(m, "tokens", {2, 2}, {0, 255, -2, 7}),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'tokens': element [1, 0] is -2, outside "
                         "[0, 255]"}));
  EXPECT_TRUE(
      failsWith(setI32(m, "tokens", {2, 3}, {0, 0, 0, 0, 0, 2000000000}),
                SEQC_STATUS_INVALID_ARGUMENT,
                {"input 'tokens': element [1, 2] is 2000000000, "
                 "outside [0, 255]"}));
  // The first offending element is named, not a later one.
  EXPECT_TRUE(failsWith(setI32(m, "tokens", {1, 3}, {-1, 999, 256}),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"element [0, 0] is -1,"}));
  // Nothing was bound, so nothing runs.
  EXPECT_TRUE(failsWith(seqc_model_run(m), SEQC_STATUS_FAILED_PRECONDITION,
                        {"input 'tokens' is not bound"}));
  EXPECT_EQ(invocations, 0);
  // Both ends are inclusive.
  ASSERT_TRUE(isOk(setI32(m, "tokens", {1, 2}, {0, 255})));
  ASSERT_TRUE(isOk(seqc_model_run(m)));
  EXPECT_EQ(invocations, 1);
}

TEST_F(Range, AFailedBindingKeepsThePreviousValue) {
  ModelPtr model = load(kGptManifest);
  seqc_model *m = model.get();
  ASSERT_TRUE(isOk(setI32(m, "tokens", {1, 2}, {3, 4})));
  EXPECT_TRUE(failsWith(setI32(m, "tokens", {1, 2}, {3, 256}),
                        SEQC_STATUS_INVALID_ARGUMENT, {"is 256"}));
  ASSERT_TRUE(isOk(seqc_model_run(m)));
  int64_t n = 0;
  ASSERT_TRUE(isOk(seqc_model_get_dim(m, "n", &n)));
  EXPECT_EQ(n, 2);
}

TEST_F(Range, ChecksI64ValuesBeyondI32) {
  ModelPtr model =
      load(R"({"inputs": [{"name": "pos", "dtype": "i64", "shape": [3],)"
           R"( "range": [-4294967296, 4294967296]}], "outputs": []})");
  seqc_model *m = model.get();
  EXPECT_TRUE(failsWith(setI64(m, "pos", {3}, {0, 4294967297, 0}),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'pos': element [1] is 4294967297, outside "
                         "[-4294967296, 4294967296]"}));
  EXPECT_TRUE(failsWith(setI64(m, "pos", {3}, {0, 0, -4294967297}),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"element [2] is -4294967297,"}));
  // Values that would wrap to an in-range i32 are still rejected.
  EXPECT_TRUE(failsWith(setI64(m, "pos", {3}, {INT64_MIN, 0, 0}),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"element [0] is -9223372036854775808,"}));
  EXPECT_TRUE(
      isOk(setI64(m, "pos", {3}, {-4294967296, 2000000000, 4294967296})));
  EXPECT_TRUE(isOk(seqc_model_run(m)));
}

TEST_F(Range, ChecksI64TokensAgainstSmallBounds) {
  ModelPtr model =
      load(R"({"inputs": [{"name": "tokens", "dtype": "i64", "shape": ["n"],)"
           R"( "range": [0, 255]}], "outputs": []})");
  seqc_model *m = model.get();
  EXPECT_TRUE(failsWith(setI64(m, "tokens", {3}, {1, 300, 2}),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'tokens': element [1] is 300, outside "
                         "[0, 255]"}));
  EXPECT_TRUE(failsWith(setI64(m, "tokens", {1}, {-2}),
                        SEQC_STATUS_INVALID_ARGUMENT, {"is -2, outside"}));
  EXPECT_TRUE(failsWith(setI64(m, "tokens", {1}, {2000000000}),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"is 2000000000, outside"}));
}

TEST_F(Range, NamesTheValueOfAScalar) {
  ModelPtr model =
      load(R"({"inputs": [{"name": "k", "dtype": "i32", "shape": [],)"
           R"( "range": [0, 3]}], "outputs": []})");
  int32_t value = 7;
  seqc_tensor t = makeTensor(SEQC_DTYPE_I32, {}, &value);
  EXPECT_TRUE(failsWith(seqc_model_set_input(model.get(), "k", &t),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'k': the value is 7, outside [0, 3]"}));
}

TEST_F(Range, EmptyTensorsHaveNothingToCheck) {
  ModelPtr model = load(kGptManifest);
  ASSERT_TRUE(isOk(setI32(model.get(), "tokens", {0, 5}, {})));
  EXPECT_TRUE(isOk(seqc_model_run(model.get())));
}

//===----------------------------------------------------------------------===//
// Bounds naming a dimension
//===----------------------------------------------------------------------===//

TEST_F(Range, EvaluatesADimensionFromAnotherInput) {
  ModelPtr model = load(kLongformerManifest);
  seqc_model *m = model.get();
  ASSERT_TRUE(isOk(setI32(m, "tokens", {2, 5}, std::vector<int32_t>(10, 1))));
  EXPECT_TRUE(failsWith(setI32(m, "lengths", {2}, {3, 99}),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'lengths': element [1] is 99, outside [1, 5] "
                         "(the range [1, n] with n = 5 from input "
                         "'tokens')"}));
  EXPECT_TRUE(failsWith(
      setI32(m, "lengths", {2}, {-5, 1}), SEQC_STATUS_INVALID_ARGUMENT,
      {"input 'lengths': element [0] is -5, outside [1, 5]"}));
  EXPECT_TRUE(failsWith(setI32(m, "lengths", {2}, {0, 1}),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"is 0, outside [1, 5]"}));
  ASSERT_TRUE(isOk(setI32(m, "lengths", {2}, {1, 5})));
  ASSERT_TRUE(isOk(seqc_model_run(m)));
  EXPECT_EQ(invocations, 1);
}

TEST_F(Range, EvaluatesADimensionFromSetDim) {
  ModelPtr model = load(kLongformerManifest);
  seqc_model *m = model.get();
  ASSERT_TRUE(isOk(seqc_model_set_dim(m, "n", 4)));
  EXPECT_TRUE(failsWith(setI32(m, "lengths", {1}, {5}),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'lengths': element [0] is 5, outside [1, 4] "
                         "(the range [1, n] with n = 4 from --dim / "
                         "seqc_model_set_dim)"}));
}

TEST_F(Range, ChecksAtRunWhatWasUnknownAtBinding) {
  ModelPtr model = load(kLongformerManifest);
  seqc_model *m = model.get();
  // n is not known yet: the lower bound is checked, the upper one waits.
  EXPECT_TRUE(failsWith(setI32(m, "lengths", {2}, {-5, 1}),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'lengths': element [0] is -5, outside [1, n] "
                         "(n has no size yet)"}));
  ASSERT_TRUE(isOk(setI32(m, "lengths", {2}, {3, 99})));
  ASSERT_TRUE(isOk(setI32(m, "tokens", {2, 5}, std::vector<int32_t>(10, 1))));
  EXPECT_TRUE(failsWith(seqc_model_run(m), SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'lengths': element [1] is 99, outside [1, 5] "
                         "(the range [1, n] with n = 5 from input "
                         "'tokens')"}));
  EXPECT_EQ(invocations, 0);
  ASSERT_TRUE(isOk(setI32(m, "lengths", {2}, {3, 5})));
  ASSERT_TRUE(isOk(seqc_model_run(m)));
  EXPECT_EQ(invocations, 1);
}

TEST_F(Range, RechecksWhenTheDimensionChanges) {
  ModelPtr model = load(kLongformerManifest);
  seqc_model *m = model.get();
  ASSERT_TRUE(isOk(setI32(m, "tokens", {1, 5}, {1, 2, 3, 4, 5})));
  ASSERT_TRUE(isOk(setI32(m, "lengths", {1}, {4})));
  ASSERT_TRUE(isOk(seqc_model_run(m)));
  // lengths' shape does not use n, so tokens may be rebound shorter; its
  // values, valid for n = 5, are not for n = 2.
  ASSERT_TRUE(isOk(setI32(m, "tokens", {1, 2}, {1, 2})));
  EXPECT_TRUE(failsWith(seqc_model_run(m), SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'lengths': element [0] is 4, outside [1, 2]"}));
  EXPECT_EQ(invocations, 1);
}

TEST_F(Range, EvaluatesADimensionOfTheSameInput) {
  ModelPtr model =
      load(R"({"inputs": [{"name": "pos", "dtype": "i64", "shape": ["n"],)"
           R"( "range": [0, "n"]}], "outputs": []})");
  seqc_model *m = model.get();
  EXPECT_TRUE(failsWith(setI64(m, "pos", {3}, {0, 4, 1}),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'pos': element [1] is 4, outside [0, 3] (the "
                         "range [0, n] with n = 3 from dim 0 of the same "
                         "input)"}));
  ASSERT_TRUE(isOk(setI64(m, "pos", {3}, {0, 3, 1})));
  EXPECT_TRUE(isOk(seqc_model_run(m)));
}

TEST_F(Range, BothBoundsMayNameDimensions) {
  ModelPtr model = load(
      R"({"inputs": [{"name": "x", "dtype": "i32", "shape": ["m", "n"]},)"
      R"( {"name": "i", "dtype": "i32", "shape": [2], "range": ["m", "n"]}],)"
      R"( "outputs": []})");
  seqc_model *m = model.get();
  ASSERT_TRUE(isOk(setI32(m, "x", {2, 4}, std::vector<int32_t>(8, 0))));
  EXPECT_TRUE(failsWith(setI32(m, "i", {2}, {3, 1}),
                        SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'i': element [1] is 1, outside [2, 4] (the "
                         "range [m, n] with m = 2 from input 'x', n = 4 from "
                         "input 'x')"}));
  EXPECT_TRUE(isOk(setI32(m, "i", {2}, {2, 4})));
}

TEST_F(Range, NeedsARangeOnlyDimensionToRun) {
  // The bound names a dimension no input shape uses: only set_dim fixes it.
  ModelPtr model =
      load(R"({"inputs": [{"name": "ids", "dtype": "i32", "shape": ["n"],)"
           R"( "range": [0, "vocab"]}], "outputs": []})");
  seqc_model *m = model.get();
  ASSERT_TRUE(isOk(setI32(m, "ids", {3}, {0, 7, 8})));
  EXPECT_TRUE(failsWith(seqc_model_run(m), SEQC_STATUS_FAILED_PRECONDITION,
                        {"input 'ids': its range [0, vocab] names dimension "
                         "'vocab', which has no size",
                         "--dim vocab=SIZE"}));
  ASSERT_TRUE(isOk(seqc_model_set_dim(m, "vocab", 7)));
  EXPECT_TRUE(failsWith(seqc_model_run(m), SEQC_STATUS_INVALID_ARGUMENT,
                        {"input 'ids': element [2] is 8, outside [0, 7] (the "
                         "range [0, vocab] with vocab = 7 from --dim / "
                         "seqc_model_set_dim)"}));
  EXPECT_EQ(invocations, 0);
  seqc_model_reset_inputs(m);
  ASSERT_TRUE(isOk(seqc_model_set_dim(m, "vocab", 8)));
  ASSERT_TRUE(isOk(setI32(m, "ids", {3}, {0, 7, 8})));
  ASSERT_TRUE(isOk(seqc_model_run(m)));
  EXPECT_EQ(invocations, 1);
}

TEST_F(Range, RandomInputsStayInRange) {
  ModelPtr model = load(kLongformerManifest);
  seqc_model *m = model.get();
  ASSERT_TRUE(isOk(seqc_model_set_dim(m, "b", 64)));
  ASSERT_TRUE(isOk(seqc_model_set_dim(m, "n", 3)));
  ASSERT_TRUE(isOk(seqc_model_random_inputs(m, 5)));
  EXPECT_TRUE(isOk(seqc_model_run(m)));
  EXPECT_EQ(invocations, 1);
}

} // namespace
