//===- Model.cpp - Creating, introspecting and running a model ------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Implements the model half of the C API that is not binding: creating a
// model from its manifest, introspection, and calling seqc_invoke with MLIR
// memref descriptors as docs/abi.md specifies. Manifest.cpp parses the
// manifest, Inputs.cpp binds inputs and Weights.cpp parameters.
//
//===----------------------------------------------------------------------===//

#include "Model.h"
#include "Buffers.h"
#include "Gpu.h"
#include "Parallel.h"
#include "Safetensors.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <unordered_map>
#include <utility>
#include <vector>

#ifdef SEQC_HAVE_OPENMP
#include <omp.h>
#endif

// The runtime references the model's symbols weakly so that programs without
// a linked-in model (tests, hosts using seqc_model_load_from) still link;
// seqc_model_load then reports that no model is present.
extern "C" {
__attribute__((weak)) extern const char seqc_manifest[];
__attribute__((weak)) void seqc_invoke(void **args);
__attribute__((weak)) void *seqc_prepare(void **params);
__attribute__((weak)) void seqc_release(void *state);
__attribute__((weak)) extern const seqc_entry_symbols seqc_entries[];
}

using namespace seqc;

namespace {

/// MLIR's memref.get_global lowering stores this marker as the `allocated`
/// pointer of a descriptor for a constant global; it was never malloc'ed.
const uintptr_t kMlirGlobalMarker = 0xdeadbeef;

/// Whether a memref of `sizes` and `strides` is row-major contiguous (unit
/// dimensions may have any stride); `numel`, if given, receives its element
/// count.
bool isRowMajor(const int64_t *sizes, const int64_t *strides, int rank,
                int64_t *numel = nullptr) {
  bool contiguous = true;
  int64_t expected = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (sizes[d] != 1 && strides[d] != expected)
      contiguous = false;
    expected *= sizes[d];
  }
  if (numel)
    *numel = expected;
  return contiguous;
}

/// Copies a strided memref into contiguous row-major storage at `dst`.
void copyStrided(const char *base, int64_t offset, const int64_t *sizes,
                 const int64_t *strides, int rank, size_t elementSize,
                 char *dst) {
  auto element = [&](int64_t linear) {
    return base + linear * static_cast<int64_t>(elementSize);
  };
  if (rank == 0) {
    std::memcpy(dst, element(offset), elementSize);
    return;
  }
  // Fast path: already row-major contiguous.
  int64_t expected;
  if (isRowMajor(sizes, strides, rank, &expected)) {
    std::memcpy(dst, element(offset),
                static_cast<size_t>(expected) * elementSize);
    return;
  }
  int64_t index[SEQC_MAX_RANK] = {};
  int64_t inner = sizes[rank - 1], innerStride = strides[rank - 1];
  while (true) {
    int64_t linear = offset;
    for (int d = 0; d + 1 < rank; ++d)
      linear += index[d] * strides[d];
    if (innerStride == 1) {
      size_t rowBytes = static_cast<size_t>(inner) * elementSize;
      std::memcpy(dst, element(linear), rowBytes);
      dst += rowBytes;
    } else {
      for (int64_t j = 0; j < inner; ++j, dst += elementSize)
        std::memcpy(dst, element(linear + j * innerStride), elementSize);
    }
    int d = rank - 2;
    for (; d >= 0; --d) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

/// Number of int64 words of a rank-`rank` memref descriptor.
size_t descriptorWords(int rank) { return 3 + 2 * static_cast<size_t>(rank); }

/// Appends a descriptor for contiguous `data` of `sizes` to `storage`.
void appendDescriptor(std::vector<int64_t> &storage, void *data,
                      const int64_t *sizes, int rank) {
  int64_t pointerBits;
  static_assert(sizeof(void *) == sizeof(int64_t), "64-bit targets only");
  std::memcpy(&pointerBits, &data, sizeof(pointerBits));
  storage.push_back(pointerBits); // allocated
  storage.push_back(pointerBits); // aligned
  storage.push_back(0);           // offset
  for (int d = 0; d < rank; ++d)
    storage.push_back(sizes[d]);
  // Unsigned: the strides of an empty tensor may exceed int64_t (a size 0
  // next to huge ones); they are never used, but must not overflow.
  uint64_t stride = 1;
  size_t stridesAt = storage.size();
  storage.resize(storage.size() + static_cast<size_t>(rank));
  for (int d = rank - 1; d >= 0; --d) {
    storage[stridesAt + static_cast<size_t>(d)] = static_cast<int64_t>(stride);
    stride *= static_cast<uint64_t>(sizes[d]);
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Parameters computed again
//===----------------------------------------------------------------------===//

void RecomputableBytes::computeIfDropped() {
  if (!dropped)
    return;
  compute(data);
  dropped = false;
}

void RecomputableBytes::acquire() {
  std::lock_guard<std::mutex> lock(mutex);
  computeIfDropped();
  ++readers;
}

void RecomputableBytes::release(bool drop) {
  std::lock_guard<std::mutex> lock(mutex);
  --readers;
  if (!drop || readers > 0 || exposed || dropped)
    return;
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  uintptr_t first = reinterpret_cast<uintptr_t>(data);
  uintptr_t begin = (first + page - 1) / page * page;
  uintptr_t end = (first + bytes) / page * page;
  if (begin >= end)
    return;
  // Anonymous memory of this allocation alone: the pages read as zeros
  // until written again, which compute() does before any read.
  if (::madvise(reinterpret_cast<void *>(begin), end - begin,
                MADV_DONTNEED) == 0)
    dropped = true;
}

void RecomputableBytes::expose() {
  std::lock_guard<std::mutex> lock(mutex);
  computeIfDropped();
  exposed = true;
}

bool RecomputableBytes::isDropped() {
  std::lock_guard<std::mutex> lock(mutex);
  return dropped;
}

namespace {
/// The parameters' readers of the preparation running on this thread, for
/// seqc_prepare_done_reading; null outside seqc_model_run's preparations
/// (a host calling seqc_prepare itself).
thread_local ParamReaders *preparationReaders = nullptr;
} // namespace

ParamReaders::ParamReaders(const seqc_model *model) : model(model) {
  for (const BoundValue &param : model->params)
    if (param.recomputable)
      param.recomputable->acquire();
}

void ParamReaders::finish(bool drop) {
  if (done)
    return;
  done = true;
  const auto &specs = model->manifest.values[SEQC_VALUE_PARAM];
  for (size_t i = 0; i < model->params.size(); ++i)
    if (model->params[i].recomputable && !(i < released.size() && released[i]))
      model->params[i].recomputable->release(drop && specs[i].preparedOnly);
}

void ParamReaders::doneReading(int64_t index) {
  const auto &specs = model->manifest.values[SEQC_VALUE_PARAM];
  if (!dropEarly || done || index < 0 ||
      static_cast<size_t>(index) >= model->params.size() ||
      !specs[static_cast<size_t>(index)].preparedOnly)
    return;
  size_t i = static_cast<size_t>(index);
  const BoundValue &param = model->params[i];
  if (param.recomputable) {
    released.resize(model->params.size(), 0);
    if (!released[i])
      param.recomputable->release(/*drop=*/true);
    released[i] = 1;
  } else if (param.bound && param.inFileMapping) {
    dropMappedPages(param.buffer.data, param.buffer.bytes);
  }
}

extern "C" void seqc_prepare_done_reading(const int64_t *params,
                                          int64_t count) {
  if (ParamReaders *readers = preparationReaders)
    for (int64_t i = 0; i < count; ++i)
      readers->doneReading(params[i]);
}

bool seqc_model::lookupDim(const std::string &symbol, size_t excludeInput,
                           int64_t *size, std::string *source) const {
  auto it = explicitDims.find(symbol);
  if (it != explicitDims.end()) {
    *size = it->second;
    *source = "(from --dim / seqc_model_set_dim)";
    return true;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i == excludeInput || !inputs[i].bound)
      continue;
    const ValueSpec &spec = manifest.values[SEQC_VALUE_INPUT][i];
    for (int d = 0; d < spec.rank; ++d) {
      if (spec.dimNames[d] == symbol) {
        *size = inputs[i].shape[d];
        *source = "(from input '" + spec.name + "')";
        return true;
      }
    }
  }
  return false;
}

/// Checks that a tensor's dtype and rank are valid and its data present.
seqc_status *seqc::checkTensor(const seqc_tensor *tensor, const char *what,
                               size_t *bytes) {
  if (!tensor)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT, "%s: tensor is NULL", what);
  if (!isValidDType(tensor->dtype))
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT, "%s: invalid dtype %d",
                      what, static_cast<int>(tensor->dtype));
  if (tensor->rank < 0 || tensor->rank > SEQC_MAX_RANK)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "%s: rank %d is outside [0, %d]", what, tensor->rank,
                      SEQC_MAX_RANK);
  int64_t numel = seqc_tensor_numel(tensor);
  if (numel < 0 ||
      !checkedTensorBytes(tensor->dtype, tensor->shape, tensor->rank, bytes))
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "%s: shape %s has a negative size or is too large", what,
                      formatShape(tensor->shape, tensor->rank).c_str());
  if (*bytes && !tensor->data)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT, "%s: data is NULL", what);
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Creation and introspection
//===----------------------------------------------------------------------===//

/// A tensor-parallel model (manifest "tensor_parallel": N) runs as N MPI
/// processes: initializes MPI through libseqc_runtime_mpi.a and takes this
/// process's rank, after checking that the job has N processes. A
/// data-parallel one (manifest "data_parallel") runs on any number of
/// processes, one included.
static seqc_status *joinParallelJob(seqc_model *model) {
  int expected = model->manifest.tensorParallel;
  bool data = model->manifest.dataParallel;
  std::string flag = data ? std::string("--data-parallel")
                          : "--tensor-parallel=" + std::to_string(expected);
  const char *name = model->manifest.name.c_str();
  parallel::Functions &mpi = parallel::functions();
  if (!mpi.init)
    return makeStatus(SEQC_STATUS_UNAVAILABLE,
                      "model '%s' was compiled with %s and "
                      "needs the seqc MPI runtime, which this program does "
                      "not link: link libseqc_runtime_mpi.a (with "
                      "-Wl,-u,seqc_parallel_init) and the MPI C library, as "
                      "seqc does for a %s model when it was "
                      "built with MPI (libopenmpi-dev)",
                      name, flag.c_str(),
                      data ? "data-parallel" : "tensor-parallel");
  int rank = 0, size = 0;
  if (int error = mpi.init(&rank, &size))
    return makeStatus(SEQC_STATUS_UNAVAILABLE,
                      "model '%s' (%s): MPI initialization "
                      "failed with error %d",
                      name, flag.c_str(), error);
  if (!data && size != expected)
    return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                      "model '%s' was compiled for %d ranks "
                      "(--tensor-parallel=%d) but runs on %d process%s; "
                      "start it with mpirun -np %d",
                      name, expected, expected, size, size == 1 ? "" : "es",
                      expected);
  if (rank < 0 || rank >= size)
    return makeStatus(SEQC_STATUS_UNAVAILABLE,
                      "model '%s': MPI gave rank %d of %d", name, rank, size);
  model->parallelRank = rank;
  model->parallelSize = size;
  return nullptr;
}

/// Gives a model whose manifest lists several entries one slot per entry,
/// the default entry's with the functions the model was loaded with, and
/// selects the default entry; the others have no functions (they cannot
/// run) until a second call gives them those `table` names.
static seqc_status *setUpEntries(seqc_model *model,
                                 const seqc_entry_symbols *table) {
  std::vector<std::pair<std::string, Manifest>> &specs =
      model->manifest.entries;
  // Set up already (the default entry selected): the table's functions.
  if (specs.empty()) {
    for (size_t i = 1; i < model->entries.size(); ++i) {
      EntrySlot &slot = model->entries[i];
      for (const seqc_entry_symbols *row = table; row && row->name; ++row) {
        if (slot.name != row->name)
          continue;
        if (!row->invoke || !row->prepare != !row->release)
          return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                            "entry '%s': invoke must not be NULL, and "
                            "prepare and release must be given together",
                            slot.name.c_str());
        slot.invoke = row->invoke;
        slot.prepare = row->prepare;
        slot.release = row->release;
      }
    }
    return nullptr;
  }
  model->entries.resize(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    EntrySlot &slot = model->entries[i];
    slot.name = specs[i].first;
    slot.manifest = std::move(specs[i].second);
    slot.inputs.resize(slot.manifest.values[SEQC_VALUE_INPUT].size());
    slot.outputs.resize(slot.manifest.values[SEQC_VALUE_OUTPUT].size());
    if (i == 0) {
      slot.invoke = model->invoke;
      slot.prepare = model->prepare;
      slot.release = model->release;
    }
  }
  // The manifest each slot holds has no entries of its own; the model's
  // fields become the default entry's.
  specs.clear();
  model->selected = 0;
  model->swapEntry(model->entries[0]);
  return nullptr;
}

extern "C" int64_t seqc_model_num_entries(const seqc_model *model) {
  if (!model)
    return 0;
  return model->entries.empty() ? 1
                                : static_cast<int64_t>(model->entries.size());
}

extern "C" const char *seqc_model_entry_name(const seqc_model *model,
                                             int64_t index) {
  if (!model || index < 0 || index >= seqc_model_num_entries(model))
    return nullptr;
  // A model compiled with one function names it nowhere: it is `forward`.
  if (model->entries.empty())
    return "forward";
  return model->entries[static_cast<size_t>(index)].name.c_str();
}

extern "C" const char *seqc_model_selected_entry(const seqc_model *model) {
  return seqc_model_entry_name(
      model, model ? static_cast<int64_t>(model->selected) : 0);
}

extern "C" seqc_status *seqc_model_select_entry(seqc_model *model,
                                                const char *name) {
  if (!model || !name)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_select_entry: model and name must not be "
                      "NULL");
  int64_t count = seqc_model_num_entries(model);
  int64_t found = -1;
  std::string known;
  for (int64_t i = 0; i < count; ++i) {
    const char *entry = seqc_model_entry_name(model, i);
    if (std::strcmp(entry, name) == 0)
      found = i;
    known += std::string(i ? ", " : "") + entry;
  }
  if (found < 0)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "model '%s' has no entry '%s' (its entries: %s)",
                      model->manifest.name.c_str(),
                      printableText(name).c_str(), known.c_str());
  size_t index = static_cast<size_t>(found);
  if (model->entries.empty() || index == model->selected)
    return nullptr;
  if (!model->entries[index].invoke)
    return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                      "entry '%s' of model '%s' has no code in this program "
                      "(seqc_model_load_from gives the default entry only)",
                      name, model->manifest.name.c_str());
  if (model->running.load())
    return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                      "seqc_model_select_entry: model '%s' is running",
                      model->manifest.name.c_str());
  model->swapEntry(model->entries[model->selected]);
  model->swapEntry(model->entries[index]);
  model->selected = index;
  return nullptr;
}

extern "C" seqc_status *seqc_model_load_prepared(const char *manifest,
                                                 seqc_invoke_fn invoke,
                                                 seqc_prepare_fn prepare,
                                                 seqc_release_fn release,
                                                 seqc_model **out_model) {
  if (!manifest || !invoke || !out_model)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_load_from: manifest, invoke and out_model "
                      "must not be NULL");
  if (!prepare != !release)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_load_prepared: prepare and release must be "
                      "given together");
  std::unique_ptr<seqc_model> model(new seqc_model());
  model->manifestText = manifest;
  model->invoke = invoke;
  model->prepare = prepare;
  model->release = release;
  SEQC_RETURN_IF_ERROR(parseManifest(model->manifestText, &model->manifest));
  // A mistyped $SEQC_MAX_MEMORY fails here rather than go unnoticed.
  SEQC_RETURN_IF_ERROR(checkMemoryLimitEnvironment());
  // A GPU model needs the driver: fail here, with the reason, rather than
  // at the first kernel.
  if (model->manifest.target == Target::NVPTX)
    SEQC_RETURN_IF_ERROR(gpu::initDriver());
  if (model->manifest.tensorParallel > 1 || model->manifest.dataParallel)
    SEQC_RETURN_IF_ERROR(joinParallelJob(model.get()));
  model->inputs.resize(model->manifest.values[SEQC_VALUE_INPUT].size());
  model->params.resize(model->manifest.values[SEQC_VALUE_PARAM].size());
  model->state.resize(model->manifest.values[SEQC_VALUE_STATE].size());
  model->outputs.resize(model->manifest.values[SEQC_VALUE_OUTPUT].size());
  SEQC_RETURN_IF_ERROR(setUpEntries(model.get(), nullptr));
  *out_model = model.release();
  return nullptr;
}

extern "C" seqc_status *seqc_model_load_from(const char *manifest,
                                             seqc_invoke_fn invoke,
                                             seqc_model **out_model) {
  return seqc_model_load_prepared(manifest, invoke, nullptr, nullptr,
                                  out_model);
}

extern "C" seqc_status *seqc_model_load(seqc_model **out_model) {
  const char *manifest = seqc_manifest;
  seqc_invoke_fn invoke = &seqc_invoke;
  if (!manifest || !invoke)
    return makeStatus(SEQC_STATUS_NOT_FOUND,
                      "no model is linked into this program (seqc_manifest "
                      "and seqc_invoke are undefined)");
  // Objects compiled by seqc define both preparation entry points, and a
  // table of every entry's when the model has several.
  if (seqc_entries)
    return seqc_model_load_entries(manifest, seqc_entries, out_model);
  return seqc_model_load_prepared(manifest, invoke, &seqc_prepare,
                                  &seqc_release, out_model);
}

extern "C" seqc_status *seqc_model_load_entries(
    const char *manifest, const seqc_entry_symbols *entries,
    seqc_model **out_model) {
  if (!manifest || !entries || !entries[0].name || !out_model)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_load_entries: manifest, out_model and a "
                      "first entry must not be NULL");
  // The default entry's row: the one named as the manifest's first entry.
  Manifest parsed;
  SEQC_RETURN_IF_ERROR(parseManifest(manifest, &parsed));
  const seqc_entry_symbols *first = &entries[0];
  if (!parsed.entries.empty()) {
    first = nullptr;
    for (const seqc_entry_symbols *row = entries; row->name; ++row)
      if (parsed.entries.front().first == row->name)
        first = row;
    if (!first)
      return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                        "seqc_model_load_entries: no symbols for the default "
                        "entry '%s'",
                        parsed.entries.front().first.c_str());
  }
  seqc_model *model = nullptr;
  SEQC_RETURN_IF_ERROR(seqc_model_load_prepared(
      manifest, first->invoke, first->prepare, first->release, &model));
  std::unique_ptr<seqc_model> owner(model);
  SEQC_RETURN_IF_ERROR(setUpEntries(model, entries));
  *out_model = owner.release();
  return nullptr;
}

extern "C" seqc_status *seqc_model_clone(const seqc_model *src,
                                         seqc_model **out_model) {
  if (!src || !out_model)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_clone: src and out_model must not be NULL");
  std::unique_ptr<seqc_model> model(new seqc_model());
  model->manifestText = src->manifestText;
  model->manifest = src->manifest;
  model->invoke = src->invoke;
  model->prepare = src->prepare;
  model->release = src->release;
  model->parallelRank = src->parallelRank;
  model->parallelSize = src->parallelSize;
  // Each Buffer's owner is a shared_ptr (to the heap block, the converted
  // copy or the mapped file): copying the bound values shares the bytes.
  // Running never writes `params`, so reading them beside a run is safe.
  model->params = src->params;
  // What a model of ABI version 2 prepares from them is read-only: the
  // clone shares it too, prepared or still to be (docs/runtime.md).
  model->preparedSet = src->preparedSet;
  model->inputs.resize(model->manifest.values[SEQC_VALUE_INPUT].size());
  model->state.resize(model->manifest.values[SEQC_VALUE_STATE].size());
  model->outputs.resize(model->manifest.values[SEQC_VALUE_OUTPUT].size());
  // The same entries, the same one selected, with nothing bound or prepared.
  model->selected = src->selected;
  model->entries.resize(src->entries.size());
  for (size_t i = 0; i < src->entries.size(); ++i) {
    const EntrySlot &from = src->entries[i];
    EntrySlot &slot = model->entries[i];
    slot.name = from.name;
    if (i == src->selected)
      continue;
    slot.manifest = from.manifest;
    slot.invoke = from.invoke;
    slot.prepare = from.prepare;
    slot.release = from.release;
    slot.inputs.resize(slot.manifest.values[SEQC_VALUE_INPUT].size());
    slot.outputs.resize(slot.manifest.values[SEQC_VALUE_OUTPUT].size());
  }
  *out_model = model.release();
  return nullptr;
}

extern "C" void seqc_model_free(seqc_model *model) { delete model; }

void seqc_model::freeArena(ArenaRecord &record) {
  void *base = record.base;
  record = ArenaRecord();
  releaseModelBuffer(base);
}

extern "C" const char *seqc_model_name(const seqc_model *model) {
  return model ? model->manifest.name.c_str() : "";
}

extern "C" int32_t seqc_model_rank(const seqc_model *model) {
  return model ? model->parallelRank : 0;
}

extern "C" int32_t seqc_model_num_ranks(const seqc_model *model) {
  return model ? model->parallelSize : 1;
}

extern "C" int32_t seqc_model_data_parallel(const seqc_model *model) {
  return model && model->manifest.dataParallel ? 1 : 0;
}

extern "C" const char *seqc_model_manifest(const seqc_model *model) {
  return model ? model->manifestText.c_str() : "";
}

extern "C" size_t seqc_model_count(const seqc_model *model,
                                   seqc_value_kind kind) {
  if (!model || !isValidKind(kind))
    return 0;
  return model->manifest.values[kind].size();
}

extern "C" seqc_status *seqc_model_info(const seqc_model *model,
                                        seqc_value_kind kind, size_t index,
                                        seqc_value_info *out_info) {
  if (!model || !out_info || !isValidKind(kind))
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_info: invalid model, kind or out_info");
  if (index >= model->manifest.values[kind].size())
    return makeStatus(SEQC_STATUS_NOT_FOUND,
                      "seqc_model_info: %s index %zu out of range (%zu %ss)",
                      kindNoun(kind), index,
                      model->manifest.values[kind].size(), kindNoun(kind));
  const ValueSpec &spec = model->manifest.values[kind][index];
  seqc_value_info info = {};
  info.name = spec.name.c_str();
  info.dtype = spec.dtype;
  info.rank = spec.rank;
  for (int d = 0; d < spec.rank; ++d) {
    info.shape[d] = spec.shape[d];
    info.dim_names[d] = spec.shape[d] < 0 ? spec.dimNames[d].c_str() : nullptr;
  }
  *out_info = info;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

namespace {

/// Reads output `index` from its descriptor, checks it against the manifest
/// and copies it into `out`, or, when `adoptable` (a buffer the model
/// allocated for this output alone) and the output is row-major contiguous,
/// takes the buffer itself (`*adopted` is then set): no copy, and it is
/// released when the output is replaced. `outputDims` binds symbols only
/// outputs use.
seqc_status *collectOutput(const seqc_model *model, size_t index,
                           const int64_t *desc, bool adoptable, bool *adopted,
                           std::unordered_map<std::string, int64_t> &outputDims,
                           OutputValue *out) {
  const ValueSpec &spec = model->manifest.values[SEQC_VALUE_OUTPUT][index];
  const char *name = spec.name.c_str();
  const char *aligned;
  std::memcpy(&aligned, &desc[1], sizeof(aligned));
  int64_t offset = desc[2];
  const int64_t *sizes = desc + 3;
  const int64_t *strides = desc + 3 + spec.rank;
  for (int d = 0; d < spec.rank; ++d) {
    int64_t size = sizes[d];
    if (size < 0)
      return makeStatus(SEQC_STATUS_MODEL_ERROR,
                        "output '%s': dim %d has negative size %lld", name, d,
                        static_cast<long long>(size));
    if (spec.shape[d] >= 0) {
      if (size != spec.shape[d])
        return makeStatus(SEQC_STATUS_MODEL_ERROR,
                          "output '%s': dim %d has size %lld but the "
                          "manifest's shape %s requires %lld",
                          name, d, static_cast<long long>(size),
                          spec.shapeText().c_str(),
                          static_cast<long long>(spec.shape[d]));
      out->shape[d] = size;
      continue;
    }
    const std::string &symbol = spec.dimNames[d];
    int64_t expected;
    std::string source;
    if (!model->lookupDim(symbol, SIZE_MAX, &expected, &source)) {
      auto inserted = outputDims.emplace(symbol, size);
      expected = inserted.first->second;
      source = "(from an earlier output)";
    }
    if (size != expected)
      return makeStatus(SEQC_STATUS_MODEL_ERROR,
                        "output '%s': dim %d ('%s') has size %lld, but '%s' "
                        "is %lld %s",
                        name, d, symbol.c_str(), static_cast<long long>(size),
                        symbol.c_str(), static_cast<long long>(expected),
                        source.c_str());
    out->shape[d] = size;
  }
  int64_t numel;
  size_t bytes;
  if (!checkedNumel(sizes, spec.rank, &numel) ||
      !checkedBytes(numel, seqc_dtype_size(spec.dtype), &bytes))
    return makeStatus(SEQC_STATUS_MODEL_ERROR, "output '%s': shape too large",
                      name);
  if (numel > 0 && !aligned)
    return makeStatus(SEQC_STATUS_MODEL_ERROR,
                      "output '%s': the model returned a null data pointer",
                      name);
  if (adoptable && numel > 0 && isRowMajor(sizes, strides, spec.rank)) {
    void *allocated;
    std::memcpy(&allocated, &desc[0], sizeof(allocated));
    out->buffer.data = const_cast<char *>(aligned) +
                       offset * static_cast<int64_t>(seqc_dtype_size(spec.dtype));
    out->buffer.bytes = bytes;
    out->buffer.owner = std::shared_ptr<void>(allocated, releaseModelBuffer);
    *adopted = true;
    return nullptr;
  }
  if (out->buffer.bytes != bytes || !out->buffer.data)
    SEQC_RETURN_IF_ERROR(
        annotate(allocateBuffer(bytes, &out->buffer), "output '%s'", name));
  if (numel > 0)
    copyStrided(aligned, offset, sizes, strides, spec.rank,
                seqc_dtype_size(spec.dtype),
                static_cast<char *>(out->buffer.data));
  return nullptr;
}

} // namespace

namespace {
/// seqc_model_run once it owns the instance.
seqc_status *runExclusive(seqc_model *model);
} // namespace

extern "C" seqc_status *seqc_model_run(seqc_model *model) {
  if (!model)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_run: model is NULL");
  bool idle = false;
  if (!model->running.compare_exchange_strong(idle, true,
                                              std::memory_order_acquire))
    return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                      "seqc_model_run: model instance '%s' is already "
                      "running on another thread; an instance runs one call "
                      "at a time (its state owns the model's scratch arena): "
                      "load one instance per thread",
                      model->manifest.name.c_str());
  seqc_status *status = runExclusive(model);
  model->running.store(false, std::memory_order_release);
  return status;
}

namespace {

/// Lowers the calling thread's OpenMP thread count to seqc_max_threads()
/// when it is above (OMP_NUM_THREADS set too high).
void clampThreadCount() {
#ifdef SEQC_HAVE_OPENMP
  int max = seqc_max_threads();
  if (omp_get_max_threads() > max)
    omp_set_num_threads(max);
#endif
}

/// Copies `value` into `*device`, managed memory, reallocating it when it
/// is too small.
seqc_status *copyToManaged(const BoundValue &value, Buffer *device,
                           const char *what, const std::string &name) {
  size_t bytes = value.buffer.bytes;
  if (!device->data || device->bytes < bytes) {
    device->owner.reset();
    device->data = allocateManagedBlock(bytes);
    device->bytes = device->data ? bytes : 0;
    if (!device->data)
      return makeStatus(SEQC_STATUS_OUT_OF_MEMORY,
                        "cannot allocate %s of managed memory for the copy "
                        "of %s '%s' the GPU reads",
                        formatBytes(bytes).c_str(), what, name.c_str());
    device->owner = std::shared_ptr<void>(device->data, releaseModelBuffer);
  }
  if (bytes)
    std::memcpy(device->data, value.buffer.data, bytes);
  return nullptr;
}

/// Sets preparationReaders for its lifetime.
class PreparationReaders {
public:
  explicit PreparationReaders(ParamReaders &readers)
      : outer(preparationReaders) {
    preparationReaders = &readers;
  }
  ~PreparationReaders() { preparationReaders = outer; }
  PreparationReaders(const PreparationReaders &) = delete;
  PreparationReaders &operator=(const PreparationReaders &) = delete;

private:
  ParamReaders *outer;
};

/// seqc_prepare(params) as ModelCall runs it.
struct PrepareCall {
  seqc_prepare_fn prepare;
  void **params;
  void *state;
};

void callPrepare(void *argument) {
  auto *call = static_cast<PrepareCall *>(argument);
  call->state = call->prepare(call->params);
}

/// Runs the model's seqc_prepare on the parameters `params`, which
/// `readers` holds while it runs; the model's calls of
/// seqc_prepare_done_reading reach `readers`. Its state lands in *state,
/// also when the preparation reports a failure (the caller releases it);
/// when the preparation is unwound, what it had allocated is freed and
/// *state stays null.
seqc_status *runPrepare(seqc_model *model, void **params, const char *name,
                        ParamReaders &readers, void **state) {
  PrepareCall prepare = {model->prepare, params, nullptr};
  ModelCall call(name, ModelCall::Phase::Prepare);
  PreparationReaders current(readers);
  if (!call.run(callPrepare, &prepare)) {
    call.freeAllocations();
    trimBufferCache();
    return call.failure();
  }
  *state = prepare.state;
  return call.failure();
}

void callInvoke(void *argument) {
  auto *call = static_cast<std::pair<seqc_invoke_fn, void **> *>(argument);
  call->first(call->second);
}

/// The description a prepared block of ABI version 2 starts with the
/// address of (docs/abi.md): {count, offsets[count], ranks[count],
/// keys[count]}.
struct PreparedTable {
  int64_t count = 0;
  const int64_t *offsets = nullptr, *ranks = nullptr, *keys = nullptr;
  explicit PreparedTable(const void *block) {
    const int64_t *table = nullptr;
    if (block)
      std::memcpy(&table, block, sizeof(table));
    if (!table)
      return;
    count = table[0];
    offsets = table + 1;
    ranks = offsets + count;
    keys = ranks + count;
  }
  int64_t *descriptor(void *block, int64_t i) const {
    return reinterpret_cast<int64_t *>(static_cast<char *>(block) +
                                       offsets[i]);
  }
};

/// Makes the values of `fresh`, just prepared for entry `selected`, that
/// another entry of `set` already prepared alike (the same key, rank and
/// sizes) point to that entry's buffers, and frees fresh's own copies
/// (back to the system: their memory is not expected back). Forward and
/// prefill usually pack every weight alike. `fresh` keeps the blocks it
/// borrows from alive; its seqc_release skips the values it took (their
/// `allocated` becomes MLIR's constant marker).
void sharePreparedValues(const PreparedSet &set, size_t selected,
                         PreparedBlock &fresh) {
  PreparedTable mine(fresh.block);
  if (!mine.count)
    return;
  std::vector<int64_t> replaced;
  for (int64_t j = 0; j < mine.count; ++j) {
    if (!mine.keys[j])
      continue;
    int64_t *to = mine.descriptor(fresh.block, j);
    int rank = static_cast<int>(mine.ranks[j]);
    bool found = false;
    for (size_t e = 0; e < set.entries.size() && !found; ++e) {
      const std::shared_ptr<PreparedBlock> &other = set.entries[e];
      if (e == selected || !other || !other->block)
        continue;
      PreparedTable theirs(other->block);
      for (int64_t i = 0; i < theirs.count && !found; ++i) {
        if (theirs.keys[i] != mine.keys[j] || theirs.ranks[i] != rank)
          continue;
        const int64_t *from = theirs.descriptor(other->block, i);
        if (!std::equal(from + 3, from + 3 + rank, to + 3))
          continue;
        found = true;
        replaced.push_back(to[0]);
        std::memcpy(to, from, descriptorWords(rank) * sizeof(int64_t));
        to[0] = static_cast<int64_t>(kMlirGlobalMarker);
        if (std::find(fresh.borrowed.begin(), fresh.borrowed.end(), other) ==
            fresh.borrowed.end())
          fresh.borrowed.push_back(other);
        ++fresh.sharedValues;
      }
    }
  }
  // A buffer no value of `fresh` still holds (CSE may have given two
  // values one buffer) goes, once.
  std::vector<int64_t> freed;
  for (int64_t allocated : replaced) {
    if (!allocated || allocated == static_cast<int64_t>(kMlirGlobalMarker) ||
        std::find(freed.begin(), freed.end(), allocated) != freed.end())
      continue;
    bool held = false;
    for (int64_t j = 0; j < mine.count && !held; ++j)
      held = mine.descriptor(fresh.block, j)[0] == allocated;
    if (held)
      continue;
    freed.push_back(allocated);
    void *pointer;
    std::memcpy(&pointer, &allocated, sizeof(pointer));
    releaseModelBufferToSystem(pointer);
  }
}

/// Drops from the resident set the pages of the parameters that only the
/// preparation reads (the manifest's "prepared_only"), now that a prepared
/// block holds what the model function reads of them: those used in place
/// from a memory-mapped weight file, whose pages come back from the file
/// when something reads them again (seqc_model_get_param, saving the
/// weights, the preparation of another entry or of weights rebound in
/// part). Copies on the heap that the runtime can compute again go with
/// ParamReaders::finish; those set through the API stay (docs/runtime.md,
/// "Memory of the parameters").
void dropPreparedOnlyParams(const seqc_model *model) {
  const auto &specs = model->manifest.values[SEQC_VALUE_PARAM];
  for (size_t i = 0; i < specs.size(); ++i) {
    const BoundValue &param = model->params[i];
    if (specs[i].preparedOnly && param.bound && param.inFileMapping)
      dropMappedPages(param.buffer.data, param.buffer.bytes);
  }
}

/// Whether every entry of `model` that has code prepares (a seqc_prepare):
/// an entry without one would prepare from the parameters in each call,
/// so none may be dropped.
bool everyEntryPrepares(const seqc_model *model) {
  if (!model->prepare)
    return false;
  for (size_t i = 0; i < model->entries.size(); ++i)
    if (i != model->selected && model->entries[i].invoke &&
        !model->entries[i].prepare)
      return false;
  return true;
}

/// Releases the prepared state, so that the next run prepares again.
void dropPrepared(seqc_model *model) {
  if (model->prepared)
    model->release(model->prepared);
  model->prepared = nullptr;
  model->preparedStale = true;
}

seqc_status *runExclusive(seqc_model *model) {
  // The outputs of the last run are released now rather than when this
  // run's replace them: the memory is free for this run (and the cache
  // hands an adopted buffer to the output that replaces it).
  model->haveOutputs = false;
  for (OutputValue &output : model->outputs)
    output.buffer = Buffer();
  const auto &inputSpecs = model->manifest.values[SEQC_VALUE_INPUT];
  const auto &paramSpecs = model->manifest.values[SEQC_VALUE_PARAM];
  const auto &outputSpecs = model->manifest.values[SEQC_VALUE_OUTPUT];
  for (size_t i = 0; i < inputSpecs.size(); ++i)
    if (!model->inputs[i].bound)
      return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                        "input '%s' is not bound", inputSpecs[i].name.c_str());
  for (size_t i = 0; i < paramSpecs.size(); ++i)
    if (!model->params[i].bound)
      return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                        "parameter '%s' is not bound (load or generate "
                        "weights first)",
                        paramSpecs[i].name.c_str());
  // No value outside its declared range reaches the model.
  SEQC_RETURN_IF_ERROR(checkInputRanges(model));
  const std::vector<size_t> &stateArgs = model->manifest.stateArgs;
  const auto &stateSpecs = model->manifest.stateArgSpecs;
  SEQC_RETURN_IF_ERROR(prepareStateForRun(model));

  // Argument descriptors: inputs, then parameters, then the state buffers
  // this entry takes, packed in one vector whose addresses are taken only
  // once it is complete.
  size_t numArgs = inputSpecs.size() + paramSpecs.size() + stateArgs.size();
  std::vector<int64_t> argStorage;
  std::vector<size_t> argOffsets;
  std::vector<void *> argPointers; // `allocated` of each argument.
  argOffsets.reserve(numArgs);
  argPointers.reserve(numArgs);
  auto addArg = [&](const BoundValue &value, void *data, int rank,
                    seqc_dtype dtype = SEQC_DTYPE_F32) {
    argOffsets.push_back(argStorage.size());
    argPointers.push_back(data);
    int64_t blockElements;
    size_t blockBytes;
    if (!isBlockDType(dtype) || rank == 0 ||
        !seqc_dtype_block(dtype, &blockElements, &blockBytes)) {
      appendDescriptor(argStorage, data, value.shape, rank);
      return;
    }
    // The model reads a weight in a block format as bytes
    // [..., last / block elements, block bytes] ([..., 1, last + 4] for
    // int8, whose block is the row).
    int64_t blocks[SEQC_MAX_RANK + 1];
    std::copy(value.shape, value.shape + rank, blocks);
    bool perRow = blockElements == 0;
    blocks[rank - 1] = perRow ? 1 : value.shape[rank - 1] / blockElements;
    blocks[rank] =
        static_cast<int64_t>(blockBytes) + (perRow ? value.shape[rank - 1] : 0);
    appendDescriptor(argStorage, data, blocks, rank + 1);
  };
  bool onGpu = model->manifest.target == Target::NVPTX;
  if (onGpu) {
    // Kernels read their arguments where the device can: the inputs are
    // copied for each call, the weights once per set (and prefetched).
    gpu::takeError(); // Nothing from before this run is its error.
    model->deviceInputs.resize(inputSpecs.size());
    for (size_t i = 0; i < inputSpecs.size(); ++i) {
      SEQC_RETURN_IF_ERROR(copyToManaged(model->inputs[i],
                                         &model->deviceInputs[i], "input",
                                         inputSpecs[i].name));
      addArg(model->inputs[i], model->deviceInputs[i].data, inputSpecs[i].rank);
    }
    if (model->deviceParamsStale ||
        model->deviceParams.size() != paramSpecs.size()) {
      ParamReaders readers(model);
      model->deviceParams.assign(paramSpecs.size(), Buffer());
      for (size_t i = 0; i < paramSpecs.size(); ++i) {
        SEQC_RETURN_IF_ERROR(copyToManaged(model->params[i],
                                           &model->deviceParams[i], "parameter",
                                           paramSpecs[i].name));
        gpu::prefetchToDevice(model->deviceParams[i].data,
                              model->deviceParams[i].bytes);
      }
      model->deviceParamsStale = false;
    }
    for (size_t i = 0; i < paramSpecs.size(); ++i)
      addArg(model->params[i], model->deviceParams[i].data, paramSpecs[i].rank,
             paramSpecs[i].dtype);
  } else {
    for (size_t i = 0; i < inputSpecs.size(); ++i)
      addArg(model->inputs[i], model->inputs[i].buffer.data,
             inputSpecs[i].rank);
    for (size_t i = 0; i < paramSpecs.size(); ++i)
      addArg(model->params[i], model->params[i].buffer.data,
             paramSpecs[i].rank, paramSpecs[i].dtype);
    // The model writes these in place.
    for (size_t i = 0; i < stateArgs.size(); ++i)
      addArg(model->state[stateArgs[i]], model->state[stateArgs[i]].buffer.data,
             stateSpecs[i].rank);
  }

  // The result area: the output descriptors back to back (all fields are
  // 8 bytes, so there is no padding). Zeroed so that a model that fails to
  // write an output yields null pointers rather than garbage.
  std::vector<size_t> resultOffsets;
  size_t resultWords = 0;
  for (const ValueSpec &spec : outputSpecs) {
    resultOffsets.push_back(resultWords);
    resultWords += descriptorWords(spec.rank);
  }
  std::vector<int64_t> results(resultWords == 0 ? 1 : resultWords, 0);

  // After the arguments: the prepared state (version 1) or block (version
  // 2), then, from version 2, the arena's record.
  bool v2 = model->manifest.abi >= 2;
  std::vector<void *> args(1 + numArgs + (v2 ? 2 : 1));
  args[0] = results.data();
  for (size_t i = 0; i < numArgs; ++i)
    args[1 + i] = &argStorage[argOffsets[i]];

  // A thread count above what the machine allows (OMP_NUM_THREADS=100000)
  // would abort in the OpenMP runtime at the model's first parallel loop.
  clampThreadCount();

  const char *name = model->manifest.name.c_str();
  std::string gpuError;
  seqc_status *status = nullptr;
  std::shared_ptr<PreparedBlock> shared;
  {
    // A GPU model's own allocations (intermediates, outputs, prepared
    // values, the arena) are managed memory too.
    std::optional<gpu::ManagedAllocationScope> managed;
    if (onGpu)
      managed.emplace();
    // What the model derives from its weights alone is computed once per
    // set of weights (docs/abi.md) and follows the parameters. From ABI
    // version 2 it is read-only, prepared once for every instance bound to
    // the same weights (under the set's lock, so that concurrent first
    // runs prepare once), and the arena is the instance's.
    if (v2 && model->prepare) {
      std::shared_ptr<PreparedSet> set = model->preparedSet;
      std::lock_guard<std::mutex> lock(set->mutex);
      size_t numEntries = std::max<size_t>(1, model->entries.size());
      if (set->entries.size() < numEntries)
        set->entries.resize(numEntries);
      shared = set->entries[model->selected];
      // Entries whose table rows name one seqc_prepare (seqc gives equal
      // preparations one function) share its block whole.
      for (size_t e = 0; e < set->entries.size() && !shared; ++e) {
        seqc_prepare_fn other = e == model->selected ? nullptr
                                : model->entries.empty()
                                    ? nullptr
                                    : model->entries[e].prepare;
        if (other == model->prepare && set->entries[e])
          shared = set->entries[e];
      }
      if (shared)
        set->entries[model->selected] = shared;
      if (!shared) {
        // The parameters it reads are computed again if they were dropped.
        ParamReaders readers(model);
        // The parameters only the preparation reads go as soon as it has
        // read them (when they would go after it, below), so that they and
        // the values prepared from them are not all resident at once.
        if (!onGpu && everyEntryPrepares(model))
          readers.dropWhenRead();
        void *state = nullptr;
        if (seqc_status *failure = runPrepare(
                model, &args[1 + inputSpecs.size()], name, readers, &state)) {
          if (state)
            model->release(state);
          return failure;
        }
        auto *block = new (std::nothrow) PreparedBlock();
        if (!block) {
          if (state)
            model->release(state);
          return makeStatus(SEQC_STATUS_OUT_OF_MEMORY,
                            "model '%s': cannot allocate the record of its "
                            "prepared values",
                            name);
        }
        block->block = state;
        block->release = model->release;
        shared.reset(block);
        sharePreparedValues(*set, model->selected, *shared);
        set->entries[model->selected] = shared;
        // The model functions now read the block, not the parameters only
        // the preparation reads: their pages go, unless an entry would
        // prepare in each call, or a GPU model's kernels read managed
        // copies of the parameters (deviceParams), which stay.
        bool drop = !onGpu && shared->block && everyEntryPrepares(model);
        readers.finish(drop);
        if (drop)
          dropPreparedOnlyParams(model);
      }
    }
    if (v2) {
      args[1 + numArgs] = shared ? shared->block : nullptr;
      args[2 + numArgs] = &model->arena;
    }
    if (!v2 && model->prepare && model->preparedStale) {
      dropPrepared(model);
      ParamReaders readers(model);
      seqc_status *failure = runPrepare(model, &args[1 + inputSpecs.size()],
                                        name, readers, &model->prepared);
      model->preparedStale = false;
      if (failure) {
        dropPrepared(model);
        return failure;
      }
    }
    if (!v2)
      args[1 + numArgs] = model->prepared;

    std::pair<seqc_invoke_fn, void **> invoke = {model->invoke, args.data()};
    ModelCall call(name, ModelCall::Phase::Run);
    bool finished = call.run(callInvoke, &invoke);
    status = call.failure();
    if (status) {
      // The state's arena may have grown to this call's sizes: give it
      // back, with the cached buffers, and prepare again at the next run
      // (version 1: the prepared values, read-only from version 2, stay).
      // Then, if the call was unwound, free what it held (its outputs and
      // intermediates so far; the state's blocks are gone with the state).
      if (v2)
        seqc_model::freeArena(model->arena);
      else
        dropPrepared(model);
      if (!finished)
        call.freeAllocations();
      trimBufferCache();
    }
    if (onGpu)
      gpuError = gpu::takeError();
    if (!finished)
      return status;
  }
  // A CUDA error makes this run's results (and what prepare computed, if
  // it ran now) meaningless: prepare again next time.
  if (!gpuError.empty() && !status) {
    model->preparedStale = true;
    if (shared) {
      std::lock_guard<std::mutex> lock(model->preparedSet->mutex);
      std::vector<std::shared_ptr<PreparedBlock>> &blocks =
          model->preparedSet->entries;
      for (std::shared_ptr<PreparedBlock> &block : blocks)
        if (block == shared)
          block.reset();
    }
    status = makeStatus(SEQC_STATUS_MODEL_ERROR,
                        "model '%s' failed on the "
                        "GPU: %s",
                        name, gpuError.c_str());
  }

  // Check and copy every output, then free what the model allocated, even
  // when a check fails, so that errors do not leak.
  std::unordered_map<std::string, int64_t> outputDims;
  std::vector<void *> toFree;
  // A buffer another output also views, an argument or a constant global
  // is never adopted, and a buffer is freed once.
  std::vector<void *> allocations(outputSpecs.size());
  for (size_t i = 0; i < outputSpecs.size(); ++i)
    std::memcpy(&allocations[i], &results[resultOffsets[i]],
                sizeof(void *));
  for (size_t i = 0; i < outputSpecs.size(); ++i) {
    const int64_t *desc = &results[resultOffsets[i]];
    void *allocated = allocations[i];
    bool owned = allocated &&
                 reinterpret_cast<uintptr_t>(allocated) != kMlirGlobalMarker &&
                 std::find(argPointers.begin(), argPointers.end(),
                           allocated) == argPointers.end();
    bool shared = std::count(allocations.begin(), allocations.end(),
                             allocated) > 1;
    bool adopted = false;
    if (!status)
      status = collectOutput(model, i, desc, owned && !shared, &adopted,
                             outputDims, &model->outputs[i]);
    // Never free an output that aliases an argument (the model returned an
    // input or weight, or a view of one), nor one buffer twice (two outputs
    // viewing one allocation), nor one the output now owns.
    if (owned && !adopted &&
        std::find(toFree.begin(), toFree.end(), allocated) == toFree.end())
      toFree.push_back(allocated);
  }
  for (void *allocated : toFree)
    releaseModelBuffer(allocated);
  if (status)
    return status;
  model->haveOutputs = true;
  return nullptr;
}
} // namespace

seqc_status *seqc::getValueView(const seqc_model *model, seqc_value_kind kind,
                                const char *name, seqc_tensor *out_tensor,
                                const Buffer **out_buffer) {
  static const char *const kFunctions[] = {
      "seqc_model_get_input", "seqc_model_get_output", "seqc_model_get_param"};
  if (!model || !name || !out_tensor || kind > SEQC_VALUE_PARAM)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "%s: arguments must not be NULL",
                      kind <= SEQC_VALUE_PARAM ? kFunctions[kind]
                                               : "seqc_model_get_*");
  size_t index;
  const ValueSpec *spec = model->manifest.find(kind, name, &index);
  if (!spec)
    return model->manifest.notFound(kind, name);
  const int64_t *shape;
  const Buffer *buffer;
  if (kind == SEQC_VALUE_OUTPUT) {
    if (!model->haveOutputs)
      return makeStatus(SEQC_STATUS_FAILED_PRECONDITION,
                        "output '%s' is not available: the model has not run "
                        "successfully",
                        name);
    shape = model->outputs[index].shape;
    buffer = &model->outputs[index].buffer;
  } else {
    const BoundValue &value = kind == SEQC_VALUE_INPUT ? model->inputs[index]
                                                       : model->params[index];
    if (!value.bound)
      return makeStatus(SEQC_STATUS_FAILED_PRECONDITION, "%s '%s' is not bound",
                        kind == SEQC_VALUE_INPUT ? "input" : "parameter",
                        name);
    shape = value.shape;
    buffer = &value.buffer;
    // The user may read a parameter's view at any time from now on.
    if (kind == SEQC_VALUE_PARAM && value.recomputable)
      value.recomputable->expose();
  }
  if (out_buffer)
    *out_buffer = buffer;
  void *data = buffer->data;
  seqc_tensor tensor = {};
  tensor.dtype = spec->dtype;
  tensor.rank = spec->rank;
  std::copy(shape, shape + spec->rank, tensor.shape);
  tensor.data = data;
  *out_tensor = tensor;
  return nullptr;
}

extern "C" seqc_status *seqc_model_get_output(const seqc_model *model,
                                              const char *name,
                                              seqc_tensor *out_tensor) {
  return getValueView(model, SEQC_VALUE_OUTPUT, name, out_tensor);
}

extern "C" seqc_status *seqc_model_get_input(const seqc_model *model,
                                             const char *name,
                                             seqc_tensor *out_tensor) {
  return getValueView(model, SEQC_VALUE_INPUT, name, out_tensor);
}

struct seqc_buffer_ref {
  std::shared_ptr<void> owner;
};

extern "C" seqc_status *seqc_model_retain_output(const seqc_model *model,
                                                 const char *name,
                                                 seqc_tensor *out_tensor,
                                                 seqc_buffer_ref **out_ref) {
  if (!out_ref)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "seqc_model_retain_output: arguments must not be NULL");
  *out_ref = nullptr;
  const Buffer *buffer;
  SEQC_RETURN_IF_ERROR(
      getValueView(model, SEQC_VALUE_OUTPUT, name, out_tensor, &buffer));
  auto *ref = new (std::nothrow) seqc_buffer_ref{buffer->owner};
  if (!ref)
    return makeStatus(SEQC_STATUS_OUT_OF_MEMORY,
                      "output '%s': cannot allocate a reference", name);
  *out_ref = ref;
  return nullptr;
}

extern "C" void seqc_buffer_ref_release(seqc_buffer_ref *ref) { delete ref; }

extern "C" int32_t seqc_max_threads(void) {
#ifdef SEQC_HAVE_OPENMP
  return std::max(1, std::min(omp_get_num_procs(), omp_get_thread_limit()));
#else
  return 1;
#endif
}

extern "C" seqc_status *seqc_set_num_threads(int32_t num_threads) {
  if (num_threads < 1)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "thread count must be at least 1, got %d", num_threads);
#ifdef SEQC_HAVE_OPENMP
  int32_t max = seqc_max_threads();
  if (num_threads > max)
    return makeStatus(SEQC_STATUS_INVALID_ARGUMENT,
                      "thread count %d is more than the %d processors this "
                      "process may run on; use at most %d "
                      "(seqc_max_threads)",
                      num_threads, max, max);
  omp_set_num_threads(num_threads);
  return nullptr;
#else
  return makeStatus(SEQC_STATUS_UNAVAILABLE,
                    "this runtime was built without OpenMP; the thread count "
                    "cannot be set");
#endif
}
