//===- State.cpp - The state buffers an instance keeps across runs --------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The state half of the C API: the buffers of the manifest's "state" (the KV
// caches of a decoder), owned by a model instance, allocated zero-filled at
// the first run that fixes their sizes and kept across runs, which the model
// updates in place (docs/abi.md); seqc_model_reset_state and
// seqc_model_copy_state_row; and the check, before a run, that every write
// position fits its state. State counts against the memory limit
// (seqc_set_memory_limit) as the buffers of a run do.
//
//===----------------------------------------------------------------------===//

#include "Buffers.h"
#include "Model.h"

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <string>

using namespace seqc;

namespace {

/// The size of `symbol` for the state of this run, or -1.
int64_t stateDim(const seqc_model *model, const std::string &symbol) {
  int64_t size = 0;
  std::string source;
  if (!model->lookupDim(symbol, SIZE_MAX, &size, &source))
    return -1;
  return size;
}

/// Element `row` of the integer input `value`.
int64_t loadPosition(const BoundValue &value, seqc_dtype dtype, int64_t row) {
  if (dtype == SEQC_DTYPE_I64)
    return static_cast<const int64_t *>(value.buffer.data)[row];
  return static_cast<const int32_t *>(value.buffer.data)[row];
}

/// Checks that the positions of state `spec`'s write fit its axis.
seqc_status *checkWrite(const seqc_model *model, const ValueSpec &spec,
                        const int64_t *shape) {
  size_t index = 0;
  const ValueSpec *input =
      model->manifest.find(SEQC_VALUE_INPUT, spec.writeInput, &index);
  if (!input || input->rank != 1 ||
      (input->dtype != SEQC_DTYPE_I32 && input->dtype != SEQC_DTYPE_I64))
    return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                      "state '%s' is written at the positions of '%s', "
                      "which is not an integer input of rank 1",
                      spec.name.c_str(), spec.writeInput.c_str());
  int64_t count = spec.writeCount.value;
  if (!spec.writeCount.symbol.empty())
    count = stateDim(model, spec.writeCount.symbol);
  if (count < 0)
    return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                      "state '%s': the size of '%s' is unknown",
                      spec.name.c_str(), spec.writeCount.symbol.c_str());
  const BoundValue &positions = model->inputs[index];
  int64_t length = shape[spec.writeAxis];
  for (int64_t row = 0; row < positions.shape[0]; ++row) {
    // A negative position is left padding: the model stores only the rows
    // at positions 0 and after, so only the end must fit (the position
    // clamped to -count first, which ends at 0, so that no subtraction
    // overflows).
    int64_t position = loadPosition(positions, input->dtype, row);
    int64_t from = std::max(position, -count);
    if (from > length || count > length - from)
      return makeStatus(
          SEQC_STATUS_INVALID_ARGUMENT,
          "input '%s' row %" PRId64 ": position %" PRId64 " + %" PRId64
          " new tokens exceeds the %" PRId64
          " positions (max_len) of state '%s'; start a new sequence "
          "(seqc_model_reset_state) or raise max_len",
          spec.writeInput.c_str(), row, position, count, length,
          spec.name.c_str());
  }
  return nullptr;
}

} // namespace

seqc_status *seqc::prepareStateForRun(seqc_model *model) {
  // The state the selected entry takes, as it declares it.
  const auto &specs = model->manifest.stateArgSpecs;
  if (specs.empty())
    return nullptr;
  if (model->manifest.target != Target::CPU)
    return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                      "model '%s' has state buffers, which this runtime "
                      "keeps for CPU models only",
                      model->manifest.name.c_str());
  // Every size and every write first: a failing run changes nothing.
  std::vector<std::vector<int64_t>> shapes(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    const ValueSpec &spec = specs[i];
    for (int d = 0; d < spec.rank; ++d) {
      int64_t size = spec.shape[d];
      if (size < 0 && (size = stateDim(model, spec.dimNames[d])) < 0)
        return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                          "state '%s' needs the size of '%s', which no bound "
                          "input fixes",
                          spec.name.c_str(), spec.dimNames[d].c_str());
      shapes[i].push_back(size);
    }
    if (spec.writeAxis >= 0)
      SEQC_RETURN_IF_ERROR(checkWrite(model, spec, shapes[i].data()));
  }
  // A state whose sizes changed starts over: the old buffers go first, so
  // that the limit sees only the new ones. A state the memory limit refuses
  // stays unbound, to be allocated by the next run.
  for (size_t i = 0; i < specs.size(); ++i) {
    BoundValue &state = model->state[model->manifest.stateArgs[i]];
    if (state.bound &&
        !std::equal(shapes[i].begin(), shapes[i].end(), state.shape))
      state = BoundValue();
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    const ValueSpec &spec = specs[i];
    BoundValue &state = model->state[model->manifest.stateArgs[i]];
    if (state.bound)
      continue;
    size_t bytes = seqc_dtype_size(spec.dtype);
    for (int64_t size : shapes[i])
      bytes *= static_cast<size_t>(size);
    // Caches count against the memory limit as the model's own buffers do.
    std::string what = "state '" + spec.name + "' " +
                       formatShape(shapes[i].data(),
                                   static_cast<int>(shapes[i].size()));
    BoundValue fresh;
    SEQC_RETURN_IF_ERROR(
        annotate(allocateLimitedBuffer(bytes, what.c_str(), &fresh.buffer),
                 "model '%s' ran out of memory",
                 model->manifest.name.c_str()));
    if (bytes)
      std::memset(fresh.buffer.data, 0, bytes);
    std::copy(shapes[i].begin(), shapes[i].end(), fresh.shape);
    fresh.bound = true;
    state = std::move(fresh);
  }
  return nullptr;
}

extern "C" int64_t seqc_model_num_state(const seqc_model *model) {
  return model ? static_cast<int64_t>(
                     model->manifest.values[SEQC_VALUE_STATE].size())
               : 0;
}

extern "C" seqc_status *seqc_model_reset_state(seqc_model *model) {
  if (!model)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_reset_state: model is NULL");
  for (BoundValue &state : model->state)
    if (state.bound && state.buffer.bytes)
      std::memset(state.buffer.data, 0, state.buffer.bytes);
  return nullptr;
}

extern "C" seqc_status *seqc_model_copy_state_row(seqc_model *model,
                                                  int64_t src_row,
                                                  int64_t dst_row) {
  if (!model)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_copy_state_row: model is NULL");
  const auto &specs = model->manifest.values[SEQC_VALUE_STATE];
  bool any = false;
  for (size_t i = 0; i < specs.size(); ++i) {
    const ValueSpec &spec = specs[i];
    BoundValue &state = model->state[i];
    // Only states whose first dimension is the (symbolic) batch have rows.
    if (spec.rank == 0 || spec.shape[0] >= 0)
      continue;
    if (!state.bound)
      return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                        "seqc_model_copy_state_row: the model has no state "
                        "yet (run it once first)");
    int64_t rows = state.shape[0];
    if (src_row < 0 || src_row >= rows || dst_row < 0 || dst_row >= rows)
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "seqc_model_copy_state_row: rows %" PRId64
                        " and %" PRId64 " must be in [0, %" PRId64
                        ") (the batch of state '%s')",
                        src_row, dst_row, rows, spec.name.c_str());
    any = true;
  }
  if (!any && !specs.empty())
    return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                      "seqc_model_copy_state_row: no state buffer has a "
                      "batch dimension");
  for (size_t i = 0; i < specs.size(); ++i) {
    BoundValue &state = model->state[i];
    if (specs[i].rank == 0 || specs[i].shape[0] >= 0 || src_row == dst_row)
      continue;
    size_t rowBytes = state.buffer.bytes / static_cast<size_t>(state.shape[0]);
    char *data = static_cast<char *>(state.buffer.data);
    std::memcpy(data + rowBytes * dst_row, data + rowBytes * src_row,
                rowBytes);
  }
  return nullptr;
}
