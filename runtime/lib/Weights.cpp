//===- Weights.cpp - Binding, generating and saving parameters -----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// seqc_model_load_weights (a checkpoint, one safetensors file or the shards
// of an index, checked against the manifest, bound in place where aligned
// and converted where the dtypes differ and the values stay exact; tensors
// that are not parameters skipped on request), seqc_model_random_weights,
// seqc_model_set_param/get_param and seqc_model_save_weights.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"
#include "Model.h"
#include "Quantize.h"
#include "Random.h"
#include "Safetensors.h"

#include <algorithm>
#include <cstring>
#include <fnmatch.h>
#include <memory>
#include <string>
#include <vector>

using namespace seqc;

namespace {

/// Lists up to a few names for "missing N parameters: 'a', 'b', ...".
std::string listSome(const std::vector<std::string> &names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i == 5) {
      text += ", ... (" + std::to_string(names.size() - 5) + " more)";
      break;
    }
    text += (i ? ", '" : "'") + names[i] + "'";
  }
  return text;
}

/// Whether `name`, a tensor that is not a parameter, is to be skipped.
bool shouldSkip(const seqc_weights_options &options, const std::string &name) {
  if (options.skip_unused)
    return true;
  for (size_t i = 0; i < options.num_skip_patterns; ++i)
    if (::fnmatch(options.skip_patterns[i], name.c_str(), 0) == 0)
      return true;
  return false;
}

/// The conversions on load that keep every value exact: narrower floats to
/// wider ones, I32 to I64.
bool isExactConversion(seqc_dtype from, seqc_dtype to) {
  bool toWide = to == SEQC_DTYPE_F32 || to == SEQC_DTYPE_F64;
  switch (from) {
  case SEQC_DTYPE_BF16:
  case SEQC_DTYPE_F16:
    return toWide;
  case SEQC_DTYPE_F32:
    return to == SEQC_DTYPE_F64;
  case SEQC_DTYPE_I32:
    return to == SEQC_DTYPE_I64;
  default:
    return false;
  }
}

/// Converts `numel` elements (`isExactConversion`); `source` may be
/// unaligned (a tensor in the mapped file).
void convertElements(const uint8_t *source, seqc_dtype from, void *dest,
                     seqc_dtype to, size_t numel) {
  size_t fromSize = seqc_dtype_size(from);
  for (size_t i = 0; i < numel; ++i) {
    const uint8_t *element = source + i * fromSize;
    if (from == SEQC_DTYPE_I32) {
      int32_t v;
      std::memcpy(&v, element, sizeof(v));
      static_cast<int64_t *>(dest)[i] = v;
      continue;
    }
    double v;
    if (from == SEQC_DTYPE_F32) {
      float f;
      std::memcpy(&f, element, sizeof(f));
      v = f;
    } else {
      uint16_t bits;
      std::memcpy(&bits, element, sizeof(bits));
      v = from == SEQC_DTYPE_BF16 ? bfloat16ToFloat(bits) : halfToFloat(bits);
    }
    if (to == SEQC_DTYPE_F32)
      static_cast<float *>(dest)[i] = static_cast<float>(v);
    else
      static_cast<double *>(dest)[i] = v;
  }
}

/// Quantizes `tensor` (F32, BF16 or F16; its last dimension a multiple of
/// 32, which the shape check against the manifest ensures) into blocks of
/// `to`, row by row, into a new buffer.
seqc_status *quantizeTensor(const SafetensorsTensor &tensor, seqc_dtype to,
                            Buffer *out) {
  int rank = static_cast<int>(tensor.shape.size());
  size_t bytes;
  if (rank == 0 || !checkedTensorBytes(to, tensor.shape.data(), rank, &bytes))
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "shape %s cannot be stored as %s (the last dimension "
                      "must be a multiple of 32)",
                      formatShape(tensor.shape.data(), rank).c_str(),
                      seqc_dtype_name(to));
  SEQC_RETURN_IF_ERROR(allocateBuffer(bytes, out));
  size_t row = static_cast<size_t>(tensor.shape.back());
  if (row == 0)
    return nullptr;
  size_t rows = bytes / (row / 32 * [&] {
    size_t blockBytes;
    seqc_dtype_block(to, nullptr, &blockBytes);
    return blockBytes;
  }());
  size_t rowBytes = bytes / rows;
  size_t elementSize = seqc_dtype_size(tensor.dtype);
  std::vector<float> values(row);
  for (size_t r = 0; r < rows; ++r) {
    const uint8_t *source = tensor.data + r * row * elementSize;
    if (tensor.dtype == SEQC_DTYPE_F32)
      std::memcpy(values.data(), source, row * sizeof(float));
    else
      convertElements(source, tensor.dtype, values.data(), SEQC_DTYPE_F32,
                      row);
    quantizeRow(to, values.data(),
                static_cast<uint8_t *>(out->data) + r * rowBytes, row);
  }
  return nullptr;
}

} // namespace

extern "C" seqc_status *seqc_model_load_weights(seqc_model *model,
                                                const char *path) {
  if (!model || !path)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_load_weights: model and path must not be "
                      "NULL");
  return seqc_model_load_weights_with(model, path, nullptr);
}

extern "C" seqc_status *
seqc_model_load_weights_with(seqc_model *model, const char *path,
                             const seqc_weights_options *options) {
  if (!model || !path)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_load_weights_with: model and path must not "
                      "be NULL");
  seqc_weights_options none = {};
  if (!options)
    options = &none;
  if (options->num_skip_patterns && !options->skip_patterns)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_load_weights_with: %zu skip patterns but "
                      "skip_patterns is NULL",
                      options->num_skip_patterns);
  for (size_t i = 0; i < options->num_skip_patterns; ++i)
    if (!options->skip_patterns[i])
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "seqc_model_load_weights_with: skip pattern %zu is "
                        "NULL",
                        i);
  Checkpoint checkpoint;
  SEQC_RETURN_IF_ERROR(readCheckpoint(path, &checkpoint));
  const std::vector<ValueSpec> &specs =
      model->manifest.values[SEQC_VALUE_PARAM];
  std::vector<BoundValue> params(specs.size());
  // Reported once the whole checkpoint matched, so that a failed load
  // reports nothing as skipped.
  std::vector<const SafetensorsTensor *> skipped;
  for (const CheckpointFile &checkpointFile : checkpoint.files) {
    const char *file = checkpointFile.path.c_str();
    std::shared_ptr<void> mapping(checkpointFile.file.file,
                                  checkpointFile.file.file.get());
    for (const SafetensorsTensor &tensor : checkpointFile.file.tensors) {
      size_t index;
      const ValueSpec *spec =
          model->manifest.find(SEQC_VALUE_PARAM, tensor.name, &index);
      if (!spec) {
        if (shouldSkip(*options, tensor.name)) {
          skipped.push_back(&tensor);
          continue;
        }
        return makeStatus(SEQC_STATUS_INVALID_FILE,
                          "'%s': tensor '%s' is not a parameter of the "
                          "model (it is %s %s); to skip the tensors the "
                          "model does not declare, pass --skip-unused or "
                          "--skip-weights PATTERN to the model executable "
                          "(skip_unused or skip_patterns in "
                          "seqc_weights_options)",
                          file, printableText(tensor.name).c_str(),
                          printableText(tensor.dtypeName).c_str(),
                          formatShape(tensor.shape.data(),
                                      static_cast<int>(tensor.shape.size()))
                              .c_str());
      }
      BoundValue &value = params[index];
      if (value.bound)
        return makeStatus(SEQC_STATUS_INVALID_FILE,
                          "'%s': parameter '%s' is in the checkpoint twice",
                          file, spec->name.c_str());
      bool convert = tensor.supported && tensor.dtype != spec->dtype &&
                     isExactConversion(tensor.dtype, spec->dtype);
      if (!tensor.supported)
        return makeStatus(SEQC_STATUS_INVALID_FILE,
                          "'%s': parameter '%s' is %s in the file, a dtype "
                          "seqc does not compute with (it loads F32, F64, "
                          "F16, BF16, I32 and I64)",
                          file, spec->name.c_str(),
                          printableText(tensor.dtypeName).c_str());
      // A parameter in a block format is quantized from a float tensor.
      bool quantize = tensor.supported && isBlockDType(spec->dtype) &&
                      (tensor.dtype == SEQC_DTYPE_F32 ||
                       tensor.dtype == SEQC_DTYPE_BF16 ||
                       tensor.dtype == SEQC_DTYPE_F16);
      if (isBlockDType(spec->dtype) && !quantize)
        return makeStatus(SEQC_STATUS_INVALID_FILE,
                          "'%s': parameter '%s' is stored as %s by the model "
                          "and is quantized on load from an F32, BF16 or F16 "
                          "tensor, but the file has %s",
                          file, spec->name.c_str(),
                          seqc_dtype_name(spec->dtype),
                          safetensorsDTypeName(tensor.dtype));
      if (tensor.dtype != spec->dtype && !convert && !quantize)
        return makeStatus(
            SEQC_STATUS_INVALID_FILE,
            "'%s': parameter '%s' is %s in the file but the model expects "
            "%s, and seqc converts only where the values stay exact (BF16 "
            "and F16 to F32 or F64, F32 to F64, I32 to I64): declare the "
            "parameter with dtype=\"%s\" or convert the file",
            file, spec->name.c_str(), safetensorsDTypeName(tensor.dtype),
            safetensorsDTypeName(spec->dtype), seqc_dtype_name(tensor.dtype));
      int rank = static_cast<int>(tensor.shape.size());
      if (rank != spec->rank ||
          !std::equal(tensor.shape.begin(), tensor.shape.end(), spec->shape))
        return makeStatus(SEQC_STATUS_INVALID_FILE,
                          "'%s': parameter '%s' has shape %s in the file but "
                          "the model expects %s",
                          file, spec->name.c_str(),
                          formatShape(tensor.shape.data(), rank).c_str(),
                          spec->shapeText().c_str());
      size_t bytes = static_cast<size_t>(tensor.end - tensor.begin);
      auto address = reinterpret_cast<uintptr_t>(tensor.data);
      if (quantize) {
        SEQC_RETURN_IF_ERROR(
            annotate(quantizeTensor(tensor, spec->dtype, &value.buffer),
                     "parameter '%s'", spec->name.c_str()));
      } else if (convert) {
        size_t numel = bytes / seqc_dtype_size(tensor.dtype);
        SEQC_RETURN_IF_ERROR(annotate(
            allocateBuffer(numel * seqc_dtype_size(spec->dtype), &value.buffer),
            "parameter '%s'", spec->name.c_str()));
        convertElements(tensor.data, tensor.dtype, value.buffer.data,
                        spec->dtype, numel);
      } else if (bytes && address % seqc_dtype_size(tensor.dtype) == 0) {
        // Zero-copy: the generated code only assumes element alignment.
        value.buffer.data = const_cast<uint8_t *>(tensor.data);
        value.buffer.bytes = bytes;
        value.buffer.owner = mapping;
      } else {
        SEQC_RETURN_IF_ERROR(allocateBuffer(bytes, &value.buffer));
        if (bytes)
          std::memcpy(value.buffer.data, tensor.data, bytes);
      }
      for (int d = 0; d < rank; ++d)
        value.shape[d] = tensor.shape[static_cast<size_t>(d)];
      value.bound = true;
    }
  }
  std::vector<std::string> missing;
  for (size_t i = 0; i < params.size(); ++i)
    if (!params[i].bound)
      missing.push_back(specs[i].name);
  if (!missing.empty())
    return makeStatus(SEQC_STATUS_INVALID_FILE,
                      "'%s' is missing %zu of the model's %zu parameters: %s",
                      path, missing.size(), specs.size(),
                      listSome(missing).c_str());
  model->params = std::move(params);
  model->preparedStale = true;
  model->deviceParamsStale = true;
  if (options->on_skipped)
    for (const SafetensorsTensor *tensor : skipped)
      options->on_skipped(
          options->user_data, tensor->name.c_str(), tensor->dtypeName.c_str(),
          static_cast<int32_t>(tensor->shape.size()), tensor->shape.data());
  return nullptr;
}

extern "C" seqc_status *seqc_model_random_weights(seqc_model *model,
                                                  uint64_t seed) {
  if (!model)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_random_weights: model is NULL");
  const std::vector<ValueSpec> &specs =
      model->manifest.values[SEQC_VALUE_PARAM];
  std::vector<BoundValue> params(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    const ValueSpec &spec = specs[i];
    int64_t numel;
    size_t bytes;
    if (!checkedNumel(spec.shape, spec.rank, &numel) ||
        !checkedTensorBytes(spec.dtype, spec.shape, spec.rank, &bytes))
      return makeStatus(SEQC_STATUS_INVALID_MANIFEST,
                        "parameter '%s': shape %s is too large",
                        spec.name.c_str(), spec.shapeText().c_str());
    SEQC_RETURN_IF_ERROR(annotate(allocateBuffer(bytes, &params[i].buffer),
                                  "parameter '%s'", spec.name.c_str()));
    initParam(spec.name, spec.dtype, spec.shape, spec.rank, seed,
              params[i].buffer.data);
    std::copy(spec.shape, spec.shape + spec.rank, params[i].shape);
    params[i].bound = true;
  }
  model->params = std::move(params);
  model->preparedStale = true;
  model->deviceParamsStale = true;
  return nullptr;
}

extern "C" seqc_status *seqc_model_set_param(seqc_model *model,
                                             const char *name,
                                             const seqc_tensor *tensor) {
  if (!model || !name)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_set_param: model and name must not be "
                      "NULL");
  size_t index;
  const ValueSpec *spec = model->manifest.find(SEQC_VALUE_PARAM, name, &index);
  if (!spec)
    return model->manifest.notFound(SEQC_VALUE_PARAM, name);
  std::string what = std::string("parameter '") + name + "'";
  size_t bytes;
  SEQC_RETURN_IF_ERROR(checkTensor(tensor, what.c_str(), &bytes));
  if (tensor->dtype != spec->dtype || tensor->rank != spec->rank ||
      !std::equal(tensor->shape, tensor->shape + tensor->rank, spec->shape))
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "parameter '%s': %s %s does not match the model's %s %s",
                      name, seqc_dtype_name(tensor->dtype),
                      formatShape(tensor->shape, tensor->rank).c_str(),
                      seqc_dtype_name(spec->dtype), spec->shapeText().c_str());
  BoundValue value;
  SEQC_RETURN_IF_ERROR(allocateBuffer(bytes, &value.buffer));
  if (bytes)
    std::memcpy(value.buffer.data, tensor->data, bytes);
  std::copy(spec->shape, spec->shape + spec->rank, value.shape);
  value.bound = true;
  model->params[index] = std::move(value);
  model->preparedStale = true;
  model->deviceParamsStale = true;
  return nullptr;
}

extern "C" seqc_status *seqc_model_get_param(const seqc_model *model,
                                             const char *name,
                                             seqc_tensor *out_tensor) {
  return getValueView(model, SEQC_VALUE_PARAM, name, out_tensor);
}

extern "C" seqc_status *seqc_model_save_weights(const seqc_model *model,
                                                const char *path) {
  if (!model || !path)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_save_weights: model and path must not be "
                      "NULL");
  const std::vector<ValueSpec> &specs =
      model->manifest.values[SEQC_VALUE_PARAM];
  std::vector<SafetensorsWriteEntry> entries;
  // Safetensors has no block formats: their parameters are written
  // dequantized, as F32 (which loads back into the same blocks for q8_0 and
  // q4_0's symmetric scales only approximately; docs/runtime.md).
  std::vector<std::vector<float>> dequantized;
  dequantized.reserve(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!model->params[i].bound)
      return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                        "cannot save weights: parameter '%s' is not bound",
                        specs[i].name.c_str());
    seqc_dtype dtype = specs[i].dtype;
    const void *data = model->params[i].buffer.data;
    if (isBlockDType(dtype)) {
      int64_t numel = 0;
      checkedNumel(specs[i].shape, specs[i].rank, &numel);
      dequantized.emplace_back(static_cast<size_t>(numel));
      dequantizeRow(dtype, data, dequantized.back().data(),
                    static_cast<size_t>(numel));
      data = dequantized.back().data();
      dtype = SEQC_DTYPE_F32;
    }
    entries.push_back(
        {specs[i].name, dtype,
         std::vector<int64_t>(specs[i].shape, specs[i].shape + specs[i].rank),
         data});
  }
  // "format": "pt" lets PyTorch tooling (e.g. transformers) load the file.
  return writeSafetensors(path, entries,
                          {{"format", "pt"}, {"producer", "seqc"}});
}
