//===- Model.h - The model handle behind the C API ---------------*- C++
//-*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// `struct seqc_model`, shared by the translation units that implement the
// model half of the C API: Model.cpp (creation, introspection, running),
// Inputs.cpp (dimensions and inputs), Weights.cpp (parameters).
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_RUNTIME_MODEL_H
#define SEQC_RUNTIME_MODEL_H

#include "Manifest.h"
#include "Quantize.h"
#include "Support.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

struct seqc_model;

namespace seqc {

/// The bytes of a parameter that is a copy on the heap which the runtime
/// can compute again: drawn by seqc_model_random_weights, or copied,
/// converted or quantized from a tensor of a mapped weight file (the
/// mapping stays, its pages dropped). Shared by every BoundValue bound to
/// them (clones, instances whose other parameters were rebound). After a
/// preparation, the pages of such a parameter that only the preparation
/// reads are given back (MADV_DONTNEED on the whole pages inside its
/// bytes: the address stays valid, those pages would read as zeros), and
/// the bytes are computed again, in place, before anything reads them
/// (docs/runtime.md, "Memory of the parameters").
class RecomputableBytes {
public:
  using Compute = std::function<void(void *data)>;
  RecomputableBytes(void *data, size_t bytes, Compute compute)
      : data(data), bytes(bytes), compute(std::move(compute)) {}
  RecomputableBytes(const RecomputableBytes &) = delete;
  RecomputableBytes &operator=(const RecomputableBytes &) = delete;

  /// Before reading the bytes: computes them again if they were dropped,
  /// and keeps them until the matching release.
  void acquire();
  /// After reading them: when `drop`, no other reader holds them and no
  /// view of them was handed out, gives their pages back.
  void release(bool drop);
  /// A view handed to the user (seqc_model_get_param): computed again if
  /// dropped, and kept resident from now on.
  void expose();
  /// Whether the pages are given back now (tests).
  bool isDropped();

private:
  void computeIfDropped();
  std::mutex mutex;
  void *data;
  size_t bytes;
  Compute compute;
  bool dropped = false, exposed = false;
  int readers = 0;
};

/// A value bound to an input or parameter.
struct BoundValue {
  bool bound = false;
  int64_t shape[SEQC_MAX_RANK] = {};
  Buffer buffer;
  /// For an integer input with a range: the values are known to lie within
  /// verifiedRange, the range as evaluated when they were last checked.
  bool rangeVerified = false;
  int64_t verifiedRange[2] = {0, 0};
  /// A parameter used in place from a memory-mapped weight file (its bytes
  /// are the file's, in a private mapping nothing writes): its pages may
  /// leave the resident set and come back from the file when read again.
  bool inFileMapping = false;
  /// A parameter whose bytes are a copy the runtime can compute again.
  std::shared_ptr<RecomputableBytes> recomputable;
};

/// An output of the last run, in contiguous storage.
struct OutputValue {
  int64_t shape[SEQC_MAX_RANK] = {};
  Buffer buffer;
};

/// Checks that a tensor's dtype and rank are valid and its data present;
/// `what` ("input 'x'") prefixes the message. Sets *bytes to its size.
seqc_status *checkTensor(const seqc_tensor *tensor, const char *what,
                         size_t *bytes);

/// Allocates (zero-filled) the state buffers whose sizes the bound inputs
/// now fix, keeping those whose sizes did not change, and checks that each
/// run's write positions fit (State.cpp): INVALID_ARGUMENT naming the
/// position input, the row and the state's length. seqc_model_run calls it
/// after checkInputRanges, before invoking the model.
seqc_status *prepareStateForRun(seqc_model *model);

/// Checks every bound input with a declared range against it, now that all
/// symbolic bounds must be known (Inputs.cpp): INVALID_ARGUMENT naming the
/// first element outside it, FAILED_PRECONDITION for a bound without a
/// size. seqc_model_run calls it before invoking the model.
seqc_status *checkInputRanges(seqc_model *model);

/// seqc_model_get_input, seqc_model_get_output and seqc_model_get_param: sets
/// *out_tensor to a view of the value `name` of that kind, a bound input, an
/// output of the last successful run or a bound parameter.
/// `*out_buffer` (when given) is set to the value's storage.
seqc_status *getValueView(const seqc_model *model, seqc_value_kind kind,
                          const char *name, seqc_tensor *out_tensor,
                          const Buffer **out_buffer = nullptr);

/// Holds every recomputable parameter of `model` computed (acquire) while
/// something reads the parameters (a preparation, saving the weights),
/// then releases them: with `finish(true)`, after a preparation that
/// produced a block, dropping those only the preparation reads.
class ParamReaders {
public:
  explicit ParamReaders(const seqc_model *model);
  ~ParamReaders() { finish(false); }
  ParamReaders(const ParamReaders &) = delete;
  ParamReaders &operator=(const ParamReaders &) = delete;
  void finish(bool drop);

  /// For a preparation after which finish(true) will drop what only it
  /// reads: lets doneReading drop each such parameter as soon as the
  /// preparation has read it for the last time, so that the parameters and
  /// what is prepared from them are not all resident at once.
  void dropWhenRead() { dropEarly = true; }
  /// Parameter `index` is read no more by the running preparation
  /// (seqc_prepare_done_reading): with dropWhenRead, its memory goes now
  /// if only the preparation reads it, as finish(true) would give it back.
  void doneReading(int64_t index);

private:
  const seqc_model *model;
  bool done = false, dropEarly = false;
  /// The recomputable parameters doneReading released already.
  std::vector<char> released;
};

/// What a model of ABI version 2 prepared for one entry from one set of
/// weights (docs/abi.md): read-only once made, shared by every instance
/// bound to those weights. Values another entry had prepared identically
/// (the same key) point to that entry's buffers, which `borrowed` keeps
/// alive; seqc_release then skips them (their `allocated` is MLIR's
/// constant marker).
struct PreparedBlock {
  void *block = nullptr;
  seqc_release_fn release = nullptr;
  std::vector<std::shared_ptr<PreparedBlock>> borrowed;
  /// Values taken from other entries' blocks, and their bytes.
  int64_t sharedValues = 0;
  int64_t sharedBytes = 0;
  PreparedBlock() = default;
  PreparedBlock(const PreparedBlock &) = delete;
  PreparedBlock &operator=(const PreparedBlock &) = delete;
  ~PreparedBlock() {
    if (block && release)
      release(block);
  }
};

/// The prepared blocks of one set of bound weights, one per entry (made at
/// the entry's first run): the instance that bound the weights and every
/// clone made from it while they were bound hold the same set. Binding a
/// parameter gives the instance a new, empty set; the others keep theirs.
/// `mutex` serializes the preparation, so that concurrent first runs
/// prepare once.
struct PreparedSet {
  std::mutex mutex;
  std::vector<std::shared_ptr<PreparedBlock>> entries;
};

/// The arena record of a model of ABI version 2 (docs/abi.md): the
/// instance's, per entry, grown by seqc_invoke, freed by the instance.
struct ArenaRecord {
  void *base = nullptr;
  int64_t capacity = 0;
};

/// What an instance keeps of an entry while another one is selected: the
/// fields of seqc_model that follow the selected entry (swapEntry).
struct EntrySlot {
  std::string name;
  Manifest manifest;
  seqc_invoke_fn invoke = nullptr;
  seqc_prepare_fn prepare = nullptr;
  seqc_release_fn release = nullptr;
  void *prepared = nullptr;
  bool preparedStale = true;
  ArenaRecord arena;
  std::vector<BoundValue> inputs;
  std::vector<OutputValue> outputs;
  bool haveOutputs = false;
  std::vector<Buffer> deviceInputs;
};

} // namespace seqc

/// Called by a model's seqc_prepare after it last reads the parameters
/// `params[0..count)` (manifest indices; negative ones are skipped): during
/// seqc_model_run's preparations, ParamReaders::doneReading of each; a no-op
/// elsewhere (docs/abi.md).
extern "C" void seqc_prepare_done_reading(const int64_t *params, int64_t count);

struct seqc_model {
  /// The manifest JSON text the model was loaded from.
  std::string manifestText;
  seqc::Manifest manifest;
  seqc_invoke_fn invoke = nullptr;
  seqc_prepare_fn prepare = nullptr;
  seqc_release_fn release = nullptr;
  /// What `prepare` returned for the bound weights; recomputed at the next
  /// run once `preparedStale` (a parameter was bound since).
  void *prepared = nullptr;
  bool preparedStale = true;
  /// ABI version 2 (manifest "abi": 2): the prepared blocks of the bound
  /// weights, shared with the clones (`prepared` is unused), and the
  /// selected entry's arena, the instance's own.
  std::shared_ptr<seqc::PreparedSet> preparedSet =
      std::make_shared<seqc::PreparedSet>();
  seqc::ArenaRecord arena;
  /// Set while seqc_model_run runs on this instance: the state (its arena),
  /// the bound values and the outputs are one call's at a time.
  std::atomic<bool> running{false};

  /// Tensor parallelism (manifest "tensor_parallel"): this process's rank
  /// and the number of ranks, which select the slice of each sharded
  /// parameter the weights bind (Weights.cpp). Data parallelism (manifest
  /// "data_parallel"): the rank and the job's size, any number of ranks,
  /// each holding all the parameters. 0 and 1 for other models.
  int parallelRank = 0;
  int parallelSize = 1;

  /// Sizes fixed with seqc_model_set_dim.
  std::unordered_map<std::string, int64_t> explicitDims;
  std::vector<seqc::BoundValue> inputs;
  std::vector<seqc::BoundValue> params;
  /// The state buffers (manifest "state"), owned by the instance and kept
  /// across runs; unbound until the first run fixes their sizes.
  std::vector<seqc::BoundValue> state;
  std::vector<seqc::OutputValue> outputs;
  bool haveOutputs = false;

  /// A GPU model (manifest target "nvptx") reads its arguments from managed
  /// memory: the inputs are copied into these buffers at each run (reused
  /// while large enough), the parameters once per set of weights (again
  /// once `deviceParamsStale`, a parameter was bound since).
  std::vector<seqc::Buffer> deviceInputs;
  std::vector<seqc::Buffer> deviceParams;
  bool deviceParamsStale = true;

  /// A model with several entries: each entry's slot, in manifest order;
  /// slot `selected` is empty, its contents being the fields above. Empty
  /// for a model with one entry.
  std::vector<seqc::EntrySlot> entries;
  size_t selected = 0;

  seqc_model() = default;
  seqc_model(const seqc_model &) = delete;
  seqc_model &operator=(const seqc_model &) = delete;
  ~seqc_model() {
    if (release && prepared)
      release(prepared);
    freeArena(arena);
    for (seqc::EntrySlot &slot : entries) {
      if (slot.release && slot.prepared)
        slot.release(slot.prepared);
      freeArena(slot.arena);
    }
  }

  /// Frees an arena record's arena (Model.cpp).
  static void freeArena(seqc::ArenaRecord &record);

  /// Exchanges the fields that follow the selected entry with `slot`.
  void swapEntry(seqc::EntrySlot &slot) {
    std::swap(manifest, slot.manifest);
    std::swap(invoke, slot.invoke);
    std::swap(prepare, slot.prepare);
    std::swap(release, slot.release);
    std::swap(prepared, slot.prepared);
    std::swap(preparedStale, slot.preparedStale);
    std::swap(arena, slot.arena);
    std::swap(inputs, slot.inputs);
    std::swap(outputs, slot.outputs);
    std::swap(haveOutputs, slot.haveOutputs);
    std::swap(deviceInputs, slot.deviceInputs);
  }

  /// The weights changed: every entry prepares again at its next run (a
  /// new set of prepared blocks: the clones keep theirs).
  void markPreparedStale() {
    preparedSet = std::make_shared<seqc::PreparedSet>();
    preparedStale = true;
    for (seqc::EntrySlot &slot : entries)
      slot.preparedStale = true;
  }

  /// Looks up the size of `symbol` from set_dim or a bound input other than
  /// `excludeInput`; `source` describes where it came from.
  bool lookupDim(const std::string &symbol, size_t excludeInput, int64_t *size,
                 std::string *source) const;
};

#endif // SEQC_RUNTIME_MODEL_H
