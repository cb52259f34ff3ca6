//===- Weights.cpp - Binding, generating and saving parameters -----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// seqc_model_load_weights (a safetensors file checked against the manifest
// and bound in place where aligned), seqc_model_random_weights,
// seqc_model_set_param/get_param and seqc_model_save_weights.
//
//===----------------------------------------------------------------------===//

#include "Model.h"
#include "Random.h"
#include "Safetensors.h"

#include <algorithm>
#include <cstring>
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

} // namespace

extern "C" seqc_status *seqc_model_load_weights(seqc_model *model,
                                                const char *path) {
  if (!model || !path)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_load_weights: model and path must not be "
                      "NULL");
  SafetensorsFile file;
  SEQC_RETURN_IF_ERROR(readSafetensors(path, &file));
  const std::vector<ValueSpec> &specs =
      model->manifest.values[SEQC_VALUE_PARAM];
  std::vector<BoundValue> params(specs.size());
  std::shared_ptr<void> mapping(file.file, file.file.get());
  for (const SafetensorsTensor &tensor : file.tensors) {
    size_t index;
    const ValueSpec *spec =
        model->manifest.find(SEQC_VALUE_PARAM, tensor.name, &index);
    if (!spec)
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "'%s': tensor '%s' is not a parameter of the model",
                        path, printableText(tensor.name).c_str());
    if (tensor.dtype != spec->dtype)
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "'%s': parameter '%s' is %s in the file but the "
                        "model expects %s",
                        path, spec->name.c_str(),
                        safetensorsDTypeName(tensor.dtype),
                        safetensorsDTypeName(spec->dtype));
    int rank = static_cast<int>(tensor.shape.size());
    if (rank != spec->rank ||
        !std::equal(tensor.shape.begin(), tensor.shape.end(), spec->shape))
      return makeStatus(SEQC_STATUS_INVALID_FILE,
                        "'%s': parameter '%s' has shape %s in the file but "
                        "the model expects %s",
                        path, spec->name.c_str(),
                        formatShape(tensor.shape.data(), rank).c_str(),
                        spec->shapeText().c_str());
    BoundValue &value = params[index];
    size_t bytes = static_cast<size_t>(tensor.end - tensor.begin);
    auto address = reinterpret_cast<uintptr_t>(tensor.data);
    if (bytes && address % seqc_dtype_size(tensor.dtype) == 0) {
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
        !checkedBytes(numel, seqc_dtype_size(spec.dtype), &bytes))
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
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!model->params[i].bound)
      return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                        "cannot save weights: parameter '%s' is not bound",
                        specs[i].name.c_str());
    entries.push_back(
        {specs[i].name, specs[i].dtype,
         std::vector<int64_t>(specs[i].shape, specs[i].shape + specs[i].rank),
         model->params[i].buffer.data});
  }
  // "format": "pt" lets PyTorch tooling (e.g. transformers) load the file.
  return writeSafetensors(path, entries,
                          {{"format", "pt"}, {"producer", "seqc"}});
}
