//===- Manifest.h - The model manifest, parsed -------------------*- C++
//-*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The `seqc_manifest` JSON document of docs/abi.md, parsed and validated once
// when a model is loaded: the inputs, outputs and parameters with their
// dtypes, shapes (static sizes or symbolic dimension names) and, for integer
// inputs, the declared inclusive value range.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_RUNTIME_MANIFEST_H
#define SEQC_RUNTIME_MANIFEST_H

#include "Support.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace seqc {

/// One bound of an integer input's "range": a constant or a dimension name.
struct RangeBound {
  int64_t value = 0;
  std::string symbol; ///< Non-empty when the bound names a dimension.
};

/// A manifest entry.
struct ValueSpec {
  std::string name;
  seqc_dtype dtype = SEQC_DTYPE_F32;
  int rank = 0;
  int64_t shape[SEQC_MAX_RANK] = {};   ///< -1 for symbolic dimensions.
  std::string dimNames[SEQC_MAX_RANK]; ///< Symbol names, else empty.
  bool hasRange = false;
  RangeBound range[2];
  /// State only: each run writes positions writeInput[r] ..
  /// writeInput[r] + writeCount - 1 of axis writeAxis (-1: no "write").
  std::string writeInput;
  RangeBound writeCount;
  int writeAxis = -1;
  /// Parameters only: "prepared_only", the model's functions read it only
  /// in seqc_prepare (docs/abi.md).
  bool preparedOnly = false;
  /// Parameters only: "shard", the axis along which a tensor-parallel model
  /// splits the parameter over its ranks (-1: every rank holds all of it).
  /// `shape` is the rank's slice; the checkpoint holds the whole tensor,
  /// `shape[shardAxis]` times the rank count long on that axis.
  int shardAxis = -1;

  /// "[b, n, 256]".
  std::string shapeText() const;
  /// The range as the manifest spells it: "[0, 255]", "[1, n]".
  std::string rangeText() const;
};

/// "input", "output", "parameter".
const char *kindNoun(seqc_value_kind kind);
bool isValidKind(seqc_value_kind kind);

/// What a model was compiled for: the manifest's "target".
enum class Target { CPU, NVPTX };

/// A parsed manifest.
struct Manifest {
  /// The "model" field ("" if absent).
  std::string name;
  /// The "target" field: "cpu" (or absent) or "nvptx".
  Target target = Target::CPU;
  /// The "abi" field: the version of the model ABI the code follows
  /// (docs/abi.md): 1 when absent (the prepared state holds the arena), 2
  /// (the prepared block is read-only and shared; the caller owns the
  /// arena).
  int abi = 1;
  /// The "tensor_parallel" field: the number of processes (MPI ranks) the
  /// model was compiled to run on, each holding a slice of the sharded
  /// parameters (`seqc --tensor-parallel=N`, N >= 2); 1 when absent.
  int tensorParallel = 1;
  /// The "data_parallel" field (`seqc --data-parallel`): the model runs as
  /// any number of MPI processes, each on a block of the batch, every one
  /// holding all the parameters; false when absent. Excludes
  /// tensorParallel > 1.
  bool dataParallel = false;
  /// The entries, indexed by seqc_value_kind, in manifest order.
  std::vector<ValueSpec> values[4];
  std::unordered_map<std::string, size_t> indices[4];
  /// Symbolic dimensions of the inputs (shapes, then ranges), in first-use
  /// order.
  std::vector<std::string> symbols;
  /// The state the model function takes, in its argument order: indices
  /// into values[SEQC_VALUE_STATE], and each one as this function declares
  /// it (its own "write": a prefill writes n positions, a decode step one).
  std::vector<size_t> stateArgs;
  std::vector<ValueSpec> stateArgSpecs;
  /// A model with several entry functions ("entries"): each one's name and
  /// manifest (its inputs, outputs and state arguments; the model's
  /// parameters and state), the default entry first. Empty for one entry.
  std::vector<std::pair<std::string, Manifest>> entries;

  /// The entry of `kind` named `valueName` and its index, or NULL.
  const ValueSpec *find(seqc_value_kind kind, const char *valueName,
                        size_t *index) const;
  /// The same for a name that may contain NUL characters (from a file),
  /// which then matches nothing.
  const ValueSpec *find(seqc_value_kind kind, const std::string &valueName,
                        size_t *index) const;

  /// NOT_FOUND naming the known values, for typos on the command line.
  seqc_status *notFound(seqc_value_kind kind, const char *valueName) const;

  bool isSymbol(const std::string &symbol) const;
};

/// Parses and validates `text`; errors are SEQC_STATUS_INVALID_MANIFEST and
/// name the entry ("invalid manifest: inputs[0] ('x') ...").
seqc_status *parseManifest(std::string_view text, Manifest *out);

} // namespace seqc

#endif // SEQC_RUNTIME_MANIFEST_H
