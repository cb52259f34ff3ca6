//===- Checkpoint.h - Single-file and sharded checkpoints -------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// What seqc_model_load_weights reads: one safetensors file, or the shards
// that a Hugging Face index (model.safetensors.index.json) names, or a
// directory holding either. The index is
//
//   {"metadata": {...}, "weight_map": {"<tensor>": "<shard file>", ...}}
//
// with shard files relative to the index's directory. Every shard is read
// and validated as a safetensors file, and the index and the shards must
// agree: each tensor of a shard is listed for that shard, and each listed
// tensor is in its shard.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_RUNTIME_CHECKPOINT_H
#define SEQC_RUNTIME_CHECKPOINT_H

#include "Safetensors.h"

#include <string>
#include <vector>

namespace seqc {

/// One safetensors file of a checkpoint and the path it was read from.
struct CheckpointFile {
  std::string path;
  SafetensorsFile file;
};

/// The files of a checkpoint, in the order the index first names them (one
/// file without an index).
struct Checkpoint {
  /// The index file; empty for a single safetensors file.
  std::string indexPath;
  std::vector<CheckpointFile> files;
};

/// The file name of a sharded checkpoint's index in its directory.
constexpr const char *kSafetensorsIndexName = "model.safetensors.index.json";
/// The file name of a single-file checkpoint in its directory.
constexpr const char *kSafetensorsFileName = "model.safetensors";

/// Reads the checkpoint at `path`: a directory (its index, else its
/// model.safetensors), an index (a name ending in ".json") or a safetensors
/// file. Errors name the file, and for a shard the index and the shard.
seqc_status *readCheckpoint(const char *path, Checkpoint *out);

} // namespace seqc

#endif // SEQC_RUNTIME_CHECKPOINT_H
