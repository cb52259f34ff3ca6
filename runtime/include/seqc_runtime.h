/*===- seqc_runtime.h - C API of the seqc runtime -----------------*- C -*-===*\
|*                                                                            *|
|* Part of the seqc project.                                                  *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* The runtime loads a model compiled by seqc (see docs/abi.md), binds its    *|
|* weights and inputs, runs it and hands back its outputs. It has no MLIR or  *|
|* LLVM dependency and is usable from C and C++.                              *|
|*                                                                            *|
|* Conventions (as in iree/runtime and ggml):                                 *|
|*  - Every fallible function returns a `seqc_status *`; NULL means success.  *|
|*    A non-NULL status carries a code and a message and must be released     *|
|*    with seqc_status_free.                                                  *|
|*  - Out-parameters come last and are written only on success.               *|
|*  - Tensors are dense, contiguous and row-major (C order).                  *|
|*  - A model handle is not thread-safe; distinct handles may run             *|
|*    concurrently.                                                           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef SEQC_RUNTIME_H
#define SEQC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Status
 *===----------------------------------------------------------------------===*/

typedef enum seqc_status_code {
  SEQC_STATUS_OK = 0,
  /// A caller error: null pointer, wrong dtype/rank/shape, bad size.
  SEQC_STATUS_INVALID_ARGUMENT = 1,
  /// No input, output, parameter or dimension of that name.
  SEQC_STATUS_NOT_FOUND = 2,
  /// A file could not be opened, mapped, read or written.
  SEQC_STATUS_IO_ERROR = 3,
  /// A weights (.safetensors) or array (.npy) file is malformed or does not
  /// match the model.
  SEQC_STATUS_INVALID_FILE = 4,
  /// The model's manifest is malformed (a compiler bug, not a user error).
  SEQC_STATUS_INVALID_MANIFEST = 5,
  /// The call is out of order: running before weights or inputs are bound,
  /// reading outputs before a run.
  SEQC_STATUS_FAILED_PRECONDITION = 6,
  /// Resources are exhausted: an allocation failed, or would exceed the
  /// memory limit (seqc_set_memory_limit). The message names the size and
  /// what it was for.
  SEQC_STATUS_OUT_OF_MEMORY = 7,
  /// The model returned outputs that contradict its manifest.
  SEQC_STATUS_MODEL_ERROR = 8,
  /// The feature was not compiled into this runtime (e.g. OpenMP).
  SEQC_STATUS_UNAVAILABLE = 9,
} seqc_status_code;

/// An error. NULL is success; a non-NULL status is owned by the caller.
typedef struct seqc_status seqc_status;

/// Returns the code of `status`; SEQC_STATUS_OK for NULL.
seqc_status_code seqc_status_get_code(const seqc_status *status);

/// Returns the human-readable message of `status` ("OK" for NULL). The string
/// lives as long as the status.
const char *seqc_status_message(const seqc_status *status);

/// Releases `status`; NULL is allowed.
void seqc_status_free(seqc_status *status);

/*===----------------------------------------------------------------------===*
 * Tensors
 *===----------------------------------------------------------------------===*/

/// Element types, spelled f32/f64/f16/bf16/i32/i64 in the manifest and
/// F32/F64/F16/BF16/I32/I64 in safetensors files.
typedef enum seqc_dtype {
  SEQC_DTYPE_F32 = 0,
  SEQC_DTYPE_F64 = 1,
  SEQC_DTYPE_F16 = 2,
  SEQC_DTYPE_BF16 = 3,
  SEQC_DTYPE_I32 = 4,
  SEQC_DTYPE_I64 = 5,
  /// Weights in GGUF's block formats (docs/language.md, "Weight formats"):
  /// 32 consecutive values of the last dimension per block, stored as
  /// llama.cpp stores them. q8_0: {f16 d; int8 qs[32]}, 34 bytes;
  /// q4_0: {f16 d; uint8 qs[16]}, 18 bytes; q4_1: {f16 d; f16 m;
  /// uint8 qs[16]}, 20 bytes. Parameters only.
  SEQC_DTYPE_Q8_0 = 6,
  SEQC_DTYPE_Q4_0 = 7,
  SEQC_DTYPE_Q4_1 = 8,
  /// Symmetric per-output-channel int8 (manifest "int8"): one block per row
  /// of the last dimension, {f32 d; int8 qs[n]} for a row of n values,
  /// n + 4 bytes, w[j] = qs[j] * d. Parameters only.
  SEQC_DTYPE_I8_ROWSCALE = 9,
  /// Not a dtype: widens the enum to int32 so that the runtime can reject any
  /// value a C caller passes without undefined behaviour in C++.
  SEQC_DTYPE_MAX_ENUM = 0x7fffffff,
} seqc_dtype;

/// Returns the size in bytes of one element of `dtype`, 0 if invalid or a
/// block format (whose sizes seqc_dtype_block gives).
size_t seqc_dtype_size(seqc_dtype dtype);

/// Sets *elements and *bytes to the values per block and the bytes per block
/// of `dtype` (1 and seqc_dtype_size for the element types) and returns 1;
/// returns 0 if `dtype` is invalid. A tensor of a block format has a last
/// dimension that is a multiple of *elements, and numel / *elements * *bytes
/// bytes. SEQC_DTYPE_I8_ROWSCALE, whose block is a whole row, gives 0 and 4:
/// a row of n values takes n + 4 bytes.
int seqc_dtype_block(seqc_dtype dtype, int64_t *elements, size_t *bytes);

/// Returns the manifest spelling of `dtype` ("f32", ...), "invalid" if invalid.
const char *seqc_dtype_name(seqc_dtype dtype);

/// The largest rank the runtime handles.
#define SEQC_MAX_RANK 8

/// A dense row-major tensor.
///   shape[0..rank) are the sizes (>= 0); entries past rank are ignored.
///   data points to numel * seqc_dtype_size(dtype) bytes (the blocks of a
///   block format, seqc_dtype_block); it may be NULL
///   only when numel == 0. Whether the data is borrowed or owned is stated by
///   each function that takes or returns a tensor.
typedef struct seqc_tensor {
  seqc_dtype dtype;
  int32_t rank;
  int64_t shape[SEQC_MAX_RANK];
  void *data;
} seqc_tensor;

/// Returns the number of elements of `tensor` (1 for rank 0), or -1 if the
/// rank or a size is invalid or the product overflows int64.
int64_t seqc_tensor_numel(const seqc_tensor *tensor);

/*===----------------------------------------------------------------------===*
 * Models
 *===----------------------------------------------------------------------===*/

/// A loaded model: its manifest, bound weights, inputs and last outputs.
typedef struct seqc_model seqc_model;

/// The entry point of a compiled model (docs/abi.md): args[0] is the result
/// area, args[1 + i] the memref descriptor of the i-th input, then parameter,
/// then state buffer.
typedef void (*seqc_invoke_fn)(void **args);

/// The preparation entry points of a compiled model (docs/abi.md):
/// seqc_prepare computes, from the parameter descriptors (in manifest
/// order), what the model derives from its weights alone (packed layouts,
/// discretized state matrices) and returns it as one opaque state, or NULL
/// when the model prepares nothing; seqc_invoke then takes that state in
/// args[1 + inputs + parameters]. seqc_release frees a state (NULL is
/// allowed).
typedef void *(*seqc_prepare_fn)(void **params);
typedef void (*seqc_release_fn)(void *state);

/// The symbols a model object file compiled by seqc defines.
extern const char seqc_manifest[];
void seqc_invoke(void **args);
void *seqc_prepare(void **params);
void seqc_release(void *state);

/// Creates a model from the seqc_manifest/seqc_invoke linked into the
/// program. Fails with SEQC_STATUS_NOT_FOUND when no model is linked in (the
/// runtime references both symbols weakly).
seqc_status *seqc_model_load(seqc_model **out_model);

/// Creates a model from an explicit manifest (a NUL-terminated JSON string,
/// copied) and entry point. This is how tests and hosts embedding several
/// models use the runtime.
seqc_status *seqc_model_load_from(const char *manifest, seqc_invoke_fn invoke,
                                  seqc_model **out_model);

/// seqc_model_load_from with the model's preparation entry points: the
/// runtime calls `prepare` at the first run after the weights are bound or
/// changed, and `release` on the state it replaces and in seqc_model_free.
/// Both may be NULL (a model then prepares for each run by itself, as
/// seqc_invoke does when it is given a NULL state).
seqc_status *seqc_model_load_prepared(const char *manifest,
                                      seqc_invoke_fn invoke,
                                      seqc_prepare_fn prepare,
                                      seqc_release_fn release,
                                      seqc_model **out_model);

/// Releases the model, its weights, inputs and outputs; NULL is allowed.
void seqc_model_free(seqc_model *model);

/// Creates another instance of `src`'s model for another thread: the same
/// manifest and entry points, its own inputs, dimensions, outputs and state
/// (unbound, empty and unallocated, as after seqc_model_load), and `src`'s
/// bound parameters shared by reference, not copied: the new instance's
/// parameters are the same bytes (seqc_model_get_param returns the same
/// pointers), kept alive by a reference count until every instance that
/// uses them has rebound its weights or been freed, in any order. The
/// weights are read-only to every instance; binding new weights to one
/// instance (seqc_model_load_weights, seqc_model_random_weights,
/// seqc_model_set_param) replaces that instance's alone. Instances made
/// this way run concurrently, one call per instance at a time. Each
/// instance computes its own prepared state (seqc_prepare, docs/abi.md) at
/// its first run, since that state also holds the instance's scratch arena.
/// `src` may run on another thread during the call, but must not be
/// rebinding its weights.
seqc_status *seqc_model_clone(const seqc_model *src, seqc_model **out_model);

/// Returns the "model" field of the manifest ("" if absent).
const char *seqc_model_name(const seqc_model *model);

/// Returns the manifest JSON the model was loaded from (e.g. to read
/// "hyper").
const char *seqc_model_manifest(const seqc_model *model);

/// Tensor parallelism (a model compiled with `seqc --tensor-parallel=N`,
/// manifest "tensor_parallel": N; docs/runtime.md, "Tensor parallelism"):
/// the process's rank in MPI_COMM_WORLD, 0 to N - 1, and N, the number of
/// processes the model runs on. Loading such a model initializes MPI
/// unless the host did (through libseqc_runtime_mpi.a, which seqc links
/// into it), and fails when the job has another number of processes. Each
/// rank holds its slice of the sharded parameters, and the model's code
/// all-reduces so that every rank computes the same outputs. An ordinary
/// model: rank 0 of 1 (NULL too).
int32_t seqc_model_rank(const seqc_model *model);
int32_t seqc_model_num_ranks(const seqc_model *model);

/// Data parallelism (a model compiled with `seqc --data-parallel`, manifest
/// "data_parallel": true; docs/runtime.md, "Data parallelism"): 1 for such
/// a model, else 0 (NULL too). Loading it initializes MPI as for tensor
/// parallelism, on any number of processes; seqc_model_rank and
/// seqc_model_num_ranks are the process's rank and the job's size. The
/// model itself is unchanged and communicates nothing: each rank holds all
/// the parameters and runs what it is given, and the host splits the batch
/// (the model executable gives each rank a contiguous block of the rows
/// and gathers the outputs on rank 0).
int32_t seqc_model_data_parallel(const seqc_model *model);

/// The three kinds of values in a manifest.
typedef enum seqc_value_kind {
  SEQC_VALUE_INPUT = 0,
  SEQC_VALUE_OUTPUT = 1,
  SEQC_VALUE_PARAM = 2,
  /// A state buffer (a KV cache): owned by the instance, kept across runs
  /// and updated in place by the model (see "State" below). Only
  /// seqc_model_count and seqc_model_info take this kind.
  SEQC_VALUE_STATE = 3,
  /// Not a kind (see SEQC_DTYPE_MAX_ENUM).
  SEQC_VALUE_MAX_ENUM = 0x7fffffff,
} seqc_value_kind;

/// The declared type of an input, output or parameter.
///   shape[i] is the static size, or -1 when dimension i is symbolic, in
///   which case dim_names[i] is its name (NULL for static dimensions).
///   Strings are owned by the model.
typedef struct seqc_value_info {
  const char *name;
  seqc_dtype dtype;
  int32_t rank;
  int64_t shape[SEQC_MAX_RANK];
  const char *dim_names[SEQC_MAX_RANK];
} seqc_value_info;

/// Returns how many values of `kind` the model declares.
size_t seqc_model_count(const seqc_model *model, seqc_value_kind kind);

/// Describes the `index`-th value of `kind`, in manifest order.
seqc_status *seqc_model_info(const seqc_model *model, seqc_value_kind kind,
                             size_t index, seqc_value_info *out_info);

/*--- Symbolic dimensions --------------------------------------------------*/

/// Fixes symbolic dimension `name` (used by input shapes or input ranges) to
/// `size` >= 0. Inputs bound later must agree; it fails if a bound input
/// already disagrees.
seqc_status *seqc_model_set_dim(seqc_model *model, const char *name,
                                int64_t size);

/// Returns the size of symbolic dimension `name`, as fixed by
/// seqc_model_set_dim or by a bound input. SEQC_STATUS_NOT_FOUND if `name`
/// is not a dimension of the model's inputs or has no size yet.
seqc_status *seqc_model_get_dim(const seqc_model *model, const char *name,
                                int64_t *out_size);

/*--- Weights --------------------------------------------------------------*/

/// Binds every parameter from a checkpoint: a GGUF file (recognized by its
/// magic; docs/runtime.md, "GGUF files"), a safetensors file, a sharded
/// checkpoint's index (a path ending in ".json", such as
/// model.safetensors.index.json, whose "weight_map" names the shard holding
/// each tensor, relative to the index's directory), or a directory holding
/// model.safetensors.index.json or else model.safetensors. Files are
/// memory-mapped (copy-on-write) and a tensor is used in place when it has
/// the parameter's dtype and is aligned to its element size. A BF16 or F16
/// tensor for an F32 or F64 parameter, an F32 one for an F64 parameter and
/// an I32 one for an I64 parameter are converted, exactly; any other dtype
/// mismatch is an error. Otherwise validation is strict (see
/// docs/runtime.md): every parameter must be in the checkpoint with its
/// shape, and every tensor must be a parameter. On failure the previously
/// bound weights are kept.
seqc_status *seqc_model_load_weights(seqc_model *model, const char *path);

/// Reports a tensor that seqc_model_load_weights_with skipped: its name,
/// its dtype as the file spells it ("I64", "BOOL") and its shape.
typedef void (*seqc_skipped_fn)(void *user_data, const char *name,
                                const char *dtype, int32_t rank,
                                const int64_t *shape);

/// Reports a tensor of a GGUF file that seqc_model_load_weights_with
/// dequantized on load: its name in the file, the parameter it was bound
/// to, the file's ggml type ("Q8_0") and the parameter's dtype.
typedef void (*seqc_dequantized_fn)(void *user_data, const char *tensor,
                                    const char *param, const char *type,
                                    seqc_dtype dtype);

/// How seqc_model_load_weights_with treats the tensors of a checkpoint that
/// are not parameters of the model (a buffer such as BERT's
/// embeddings.position_ids, a pooler the model does not use). Zero-
/// initialize it: the zero value is seqc_model_load_weights's strictness.
typedef struct seqc_weights_options {
  /// Nonzero: skip every tensor that is not a parameter of the model.
  int32_t skip_unused;
  /// Skip the tensors that are not parameters and whose names match one of
  /// these fnmatch(3) patterns ('*' matches any text, dots included:
  /// "*.attn.bias"); a tensor that is a parameter is always loaded.
  const char *const *skip_patterns;
  size_t num_skip_patterns;
  /// Called once per skipped tensor, in the checkpoint's order, so that the
  /// caller can say what was skipped (the model executable prints a note
  /// per tensor); NULL reports nothing.
  seqc_skipped_fn on_skipped;
  void *user_data;
  /// For a GGUF file: how its tensor names map to the model's parameter
  /// names, one "gguf name = parameter name" per line ('#' starts a
  /// comment), where "{i}" on both sides stands for a layer number:
  ///   blk.{i}.attn_q.weight = model.layers.{i}.self_attn.q_proj.weight
  /// Consulted before the built-in table of the file's
  /// general.architecture (docs/runtime.md); a name that neither maps
  /// binds the parameter of the same name. NULL: the built-in table only.
  const char *name_table;
  /// Called once per GGUF tensor that was dequantized into a float
  /// parameter, in the file's order, after the load succeeded; NULL
  /// reports nothing.
  seqc_dequantized_fn on_dequantized;
} seqc_weights_options;

/// seqc_model_load_weights with `options` (NULL: none). A tensor that is
/// not a parameter and not skipped is still an error.
seqc_status *seqc_model_load_weights_with(seqc_model *model, const char *path,
                                          const seqc_weights_options *options);

/// Binds every parameter to deterministic pseudo-random values: the same
/// seed gives the same bytes on every machine, and each parameter's values
/// depend only on the seed and its name, dtype and shape. The rule:
///   - ones:  1-D float parameters whose name either ends in "weight" and
///            contains "norm" or "ln", or ends in "gamma", ".g" or "scale";
///   - zeros: parameters whose name ends in "bias", "beta" or ".b", and all
///            integer parameters;
///   - else:  uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in being the
///            last dimension (1 for rank 0).
/// A sharded parameter of a tensor-parallel model gets its rank's slice of
/// the values the same model compiled for one process would get: the
/// whole tensor is drawn, then sliced.
seqc_status *seqc_model_random_weights(seqc_model *model, uint64_t seed);

/// Binds one parameter to a copy of `tensor`, whose dtype and shape must
/// match the manifest exactly. For a sharded parameter of a tensor-parallel
/// model that is this rank's slice (the manifest's shape is the slice's).
seqc_status *seqc_model_set_param(seqc_model *model, const char *name,
                                  const seqc_tensor *tensor);

/// Returns a view of a bound parameter, valid until the weights change or
/// the model is freed: for a sharded parameter, this rank's slice.
seqc_status *seqc_model_get_param(const seqc_model *model, const char *name,
                                  seqc_tensor *out_tensor);

/// Writes every parameter (all must be bound) to a safetensors file, or to
/// a GGUF v3 file when `path` ends in ".gguf" (docs/runtime.md, "Writing
/// GGUF": each parameter in its stored dtype, blocks as they are).
/// Output files (also seqc_npy_write): "-" is standard output; a symbolic
/// link is followed to its target; a target that is absent or a regular
/// file is written next to it and renamed over it (keeping an existing
/// file's mode), so `path` may be the file the weights were loaded from; a
/// FIFO or a character device is written in place. A failed or short write,
/// fsync or close is SEQC_STATUS_IO_ERROR naming the path and the reason.
/// A tensor-parallel model holds slices of its parameters: saving them is
/// SEQC_STATUS_FAILED_PRECONDITION.
seqc_status *seqc_model_save_weights(const seqc_model *model, const char *path);

/*--- Inputs ---------------------------------------------------------------*/

/// Binds input `name` to a copy of `tensor`. The dtype and rank must match
/// the manifest, static sizes must be equal and a symbolic size must agree
/// with seqc_model_set_dim and with every other bound input using the same
/// name; a mismatch names the input, the dimension and both sizes.
/// An integer input with a declared "range" [lo, hi] (inclusive) is checked
/// against every bound known now (constants, dimensions fixed by
/// seqc_model_set_dim, by other bound inputs or by `tensor`'s own shape);
/// SEQC_STATUS_INVALID_ARGUMENT names the first element outside it:
///   input 'tokens': element [0, 2] is 300, outside [0, 255]
/// A bound not known yet is checked by seqc_model_run.
seqc_status *seqc_model_set_input(seqc_model *model, const char *name,
                                  const seqc_tensor *tensor);

/// Binds input `name` to `tensor` as seqc_model_set_input does, but uses its
/// data in place, without a copy, when the address is a multiple of the
/// element size (all the generated code assumes of its arguments, as of
/// weights used in place from a mapped file); other data is copied. The
/// caller keeps borrowed data
/// alive and unchanged until the input is bound again,
/// seqc_model_reset_inputs or seqc_model_free. The model only reads its
/// inputs. *out_borrowed (may be NULL) is set to 1 when the data is used in
/// place, 0 when it was copied.
seqc_status *seqc_model_set_input_view(seqc_model *model, const char *name,
                                       const seqc_tensor *tensor,
                                       int32_t *out_borrowed);

/// Returns a view of the bound input `name` (the caller's data for an input
/// bound in place by seqc_model_set_input_view, else the runtime's copy),
/// valid until the input is bound again or reset.
/// SEQC_STATUS_FAILED_PRECONDITION when the input is not bound.
seqc_status *seqc_model_get_input(const seqc_model *model, const char *name,
                                  seqc_tensor *out_tensor);

/// Binds every input not bound yet to deterministic pseudo-random values.
/// All their symbolic dimensions must be known (seqc_model_set_dim or other
/// inputs). Float inputs are approximately standard normal (a sum of 12
/// uniforms minus 6); integer inputs are uniform over the manifest's
/// inclusive "range" ([0, 0] when absent).
seqc_status *seqc_model_random_inputs(seqc_model *model, uint64_t seed);

/// Forgets every bound input and every dimension fixed with
/// seqc_model_set_dim, e.g. to run another sequence length.
void seqc_model_reset_inputs(seqc_model *model);

/*--- State ----------------------------------------------------------------*/

/// A model whose manifest has "state" (a decoder with KV caches, compiled
/// with `MultiHeadAttention(..., cache=max_len)`) keeps those buffers in the
/// instance: allocated zero-filled at the first run that fixes their
/// symbolic dimensions (from the bound inputs), kept across runs, and
/// allocated again zero-filled when one of those sizes changes. Each run
/// writes the new tokens' keys and values at the positions its position
/// input gives; a run whose positions do not fit (pos[r] + n > max_len, or
/// pos[r] < 0) fails with SEQC_STATUS_INVALID_ARGUMENT before the model
/// runs, naming the input, the row and the cache length, and changes
/// nothing. The bytes of a state are never copied by a run.

/// Returns how many state buffers the model declares (seqc_model_info with
/// SEQC_VALUE_STATE describes each).
int64_t seqc_model_num_state(const seqc_model *model);

/// Sets every element of every state buffer to zero (a new sequence in
/// every batch row). Nothing to do before the first run.
seqc_status *seqc_model_reset_state(seqc_model *model);

/// Copies batch row `src_row` to `dst_row` in every state buffer whose
/// first dimension is the batch (symbolic), e.g. to fork a prompt's cache
/// for parallel sampling. SEQC_STATUS_FAILED_PRECONDITION before the first
/// run (no state yet); SEQC_STATUS_INVALID_ARGUMENT for a row outside the
/// batch.
seqc_status *seqc_model_copy_state_row(seqc_model *model, int64_t src_row,
                                       int64_t dst_row);

/*--- Entries --------------------------------------------------------------*/

/// A model may define several entry functions over its members and state
/// (`def prefill`, `def decode` beside `def forward`; docs/language.md,
/// "Entries and state"). An instance runs one entry at a time, the selected
/// one: seqc_model_count, seqc_model_info, the input and output functions,
/// seqc_model_run and the dimensions follow it, and each entry keeps its own
/// bound inputs and last outputs while another is selected. The parameters
/// and the state buffers belong to the instance: every entry reads the same
/// weights and updates the same caches. A new instance (seqc_model_load,
/// seqc_model_clone) selects the default entry, `forward` (or the first
/// one). A model with one function has one entry.

/// The symbols of one entry of a model object: `seqc_entries`, an array of
/// these ended by a row of NULLs, is defined by models with several entries.
typedef struct seqc_entry_symbols {
  const char *name;
  seqc_invoke_fn invoke;
  seqc_prepare_fn prepare;
  seqc_release_fn release;
} seqc_entry_symbols;

/// Creates a model with several entries from its manifest and the symbols of
/// each entry (`entries`, ended by a row whose name is NULL; a model object's
/// `seqc_entries`, which seqc_model_load uses): the row named as the
/// manifest's first entry (or the first row, for a manifest without
/// "entries") gives the default entry's functions. An entry without a row
/// cannot be selected (SEQC_STATUS_FAILED_PRECONDITION).
seqc_status *seqc_model_load_entries(const char *manifest,
                                     const seqc_entry_symbols *entries,
                                     seqc_model **out_model);

/// Returns how many entries the model has (at least 1; 0 for NULL).
int64_t seqc_model_num_entries(const seqc_model *model);

/// Returns the name of entry `index` (the default entry is 0), or NULL when
/// `index` is out of range.
const char *seqc_model_entry_name(const seqc_model *model, int64_t index);

/// Returns the name of the selected entry.
const char *seqc_model_selected_entry(const seqc_model *model);

/// Selects the entry `name` for the following calls. An unknown name fails
/// with SEQC_STATUS_INVALID_ARGUMENT naming it and the model's entries, and
/// leaves the instance as it was.
seqc_status *seqc_model_select_entry(seqc_model *model, const char *name);

/*--- Running --------------------------------------------------------------*/

/// Runs the model on the bound weights and inputs. First every ranged
/// integer input is checked against its range as evaluated now, all its
/// bounds being known by then (SEQC_STATUS_INVALID_ARGUMENT for a value
/// outside, SEQC_STATUS_FAILED_PRECONDITION for a bound naming a dimension
/// that only seqc_model_set_dim can fix and nothing fixed); nothing runs on
/// failure. The outputs are checked against the manifest (rank, static and
/// symbolic sizes), copied to contiguous storage owned by the model and the
/// model's own allocations are freed.
/// A model instance is not reentrant: its prepared state owns the scratch
/// arena the model's intermediates live in (docs/abi.md), and it holds the
/// bound inputs and the outputs. A seqc_model_run on an instance that is
/// already running on another thread fails at once with
/// SEQC_STATUS_FAILED_PRECONDITION and changes nothing; separate instances
/// (one per thread) run concurrently.
/// Every allocation of the run is checked: one that the system refuses or
/// that would exceed the memory limit stops the model and makes the run
/// fail with SEQC_STATUS_OUT_OF_MEMORY, naming the size and what it was for
/// ("model 'gpt' ran out of memory: cannot allocate 7.45 GiB (...) for its
/// arena ..."). Nothing leaks, and the instance stays usable: the prepared
/// state is released and computed again at the next run (a smaller one may
/// then succeed). docs/runtime.md has the details.
seqc_status *seqc_model_run(seqc_model *model);

/// Returns a view of output `name` of the last successful run, valid until
/// the next seqc_model_run or seqc_model_free.
seqc_status *seqc_model_get_output(const seqc_model *model, const char *name,
                                   seqc_tensor *out_tensor);

/// A reference that keeps an output's storage alive (seqc_model_retain_output).
typedef struct seqc_buffer_ref seqc_buffer_ref;

/// seqc_model_get_output, and a reference in *out_ref that keeps the
/// output's data alive and unchanged until seqc_buffer_ref_release, past the
/// next seqc_model_run and seqc_model_free: each run writes its outputs to
/// new storage, so a host can hand the data out without copying it (the
/// Python package's arrays do).
seqc_status *seqc_model_retain_output(const seqc_model *model,
                                      const char *name,
                                      seqc_tensor *out_tensor,
                                      seqc_buffer_ref **out_ref);

/// Releases a reference from seqc_model_retain_output; NULL is allowed.
void seqc_buffer_ref_release(seqc_buffer_ref *ref);

/// Releases the large buffers the runtime keeps for models to reuse. Models
/// allocate their intermediates and outputs through the runtime
/// (docs/abi.md); buffers of 256 KiB and more are kept when freed and reused
/// by the next run of the same sizes, so that repeated runs do not pay for
/// fresh pages. At most $SEQC_BUFFER_CACHE_MB MiB (default 2048) are kept.
/// Returns the number of bytes released.
size_t seqc_trim_buffer_cache(void);

/// Sets the number of OpenMP threads used by parallel regions that the
/// calling thread starts (omp_set_num_threads); 1 <= `num_threads` <=
/// seqc_max_threads(), else SEQC_STATUS_INVALID_ARGUMENT.
seqc_status *seqc_set_num_threads(int32_t num_threads);

/// The largest thread count seqc_set_num_threads accepts: the processors
/// this process may run on (its CPU affinity), at most the OpenMP runtime's
/// thread limit (OMP_THREAD_LIMIT); 1 without OpenMP. seqc_model_run lowers
/// a larger count the calling thread inherited (OMP_NUM_THREADS) to it.
int32_t seqc_max_threads(void);

/// Limits the bytes that models may hold through the runtime's allocator
/// (arenas, prepared values, outputs, intermediates, scratch, and the
/// buffers cached for reuse) in the whole process; 0 removes the limit.
/// An allocation over it fails the run (seqc_model_run). The initial limit
/// is $SEQC_MAX_MEMORY (bytes, or a number with a suffix K, M, G or T, in
/// powers of 1024: "512M", "4G"), which seqc_model_load* reject when it is
/// not a size.
void seqc_set_memory_limit(uint64_t bytes);

/// The memory limit of seqc_set_memory_limit; 0 when there is none.
uint64_t seqc_memory_limit(void);

/*===----------------------------------------------------------------------===*
 * Generation
 *===----------------------------------------------------------------------===*/

/// Called once per generated token, in row order within a step: `row` is
/// the prompt's index, `token` the new id. Returning nonzero stops that row
/// after this token (which is kept); the other rows go on.
typedef int (*seqc_token_callback)(int64_t row, int32_t token, void *user_data);

/// How seqc_generate chooses tokens; seqc_generate_options_init sets the
/// defaults given here. The sampler applies, in Hugging Face's order, the
/// repetition penalty, the temperature, top-k and top-p (docs/runtime.md).
typedef struct seqc_generate_options {
  /// Tokens to generate per prompt, >= 0 (default 16).
  int64_t max_new_tokens;
  /// 0 (default) is greedy decoding: the argmax, ties to the lowest id.
  /// > 0 samples from softmax(logits / temperature).
  double temperature;
  /// When sampling, only the top_k most likely tokens; 0 (default) is all.
  int64_t top_k;
  /// When sampling, only the smallest set of most likely tokens whose
  /// probability reaches top_p, in (0, 1]; 1 (default) is all.
  double top_p;
  /// > 0; a logit of a token already in the row (prompt included) is
  /// divided by it when positive, multiplied by it otherwise. 1 (default)
  /// changes nothing.
  double repetition_penalty;
  /// The random stream of row r is that of (seed, r): the same seed, model,
  /// weights and prompts give the same tokens (default 0).
  uint64_t seed;
  /// A row stops after generating any of these ids (kept in its output).
  const int32_t *stop_ids;
  size_t num_stop_ids;
  /// Streaming: called for every token as it is chosen; NULL for none.
  seqc_token_callback callback;
  void *user_data;
} seqc_generate_options;

/// Sets `options` to the defaults above.
void seqc_generate_options_init(seqc_generate_options *options);

/// What a seqc_generate call measured.
typedef struct seqc_generate_stats {
  /// 1 when the model decodes incrementally (a `pos` input and state): one
  /// prefill call, then one call per token. 0 when every step runs the
  /// whole prefix again (O(n^2) per sequence).
  int32_t cached;
  /// The first model call, over the prompts, which chooses every row's
  /// first token: the prompt tokens (without padding) and its seconds.
  int64_t prefill_tokens;
  double prefill_seconds;
  /// The steps after it: the tokens they chose and their seconds.
  int64_t decode_tokens;
  double decode_seconds;
} seqc_generate_stats;

/// Continues each of `batch` prompts with up to options->max_new_tokens
/// tokens of the model (a NULL `options` takes the defaults).
/// The model must map an input `tokens` (i32 [b, n]) to an output `logits`
/// (float [b, n, V]), with weights bound. With an input `pos` (i32 [b], the
/// position of each row's first token in the call) and state in its
/// manifest, it prefills the prompts (right-padded) once and then calls the
/// model with one token per row; without them, each step runs every
/// unfinished row's whole prefix again.
///   prompts[r][0..prompt_lengths[r]) is prompt r; every prompt must hold at
///   least one token, each within the range of `tokens`, and (with a cache)
///   prompt and new tokens must fit its length.
///   out_tokens (batch * max_new_tokens ids, row-major) receives row r's
///   tokens at [r * max_new_tokens, ...), out_lengths[r] their count (less
///   than max_new_tokens when a stop id or the callback stopped the row);
///   out_stats, if not NULL, the timings. All three are written only on
///   success.
/// Errors: INVALID_ARGUMENT for a bad prompt or option (the message names
/// it), NOT_FOUND / INVALID_ARGUMENT for a model without a suitable
/// `tokens` or `logits`, and whatever a run fails with, annotated with the
/// step. The instance stays usable after any error. It replaces the bound
/// inputs and the dimensions fixed with seqc_model_set_dim.
seqc_status *seqc_generate(seqc_model *model, int64_t batch,
                           const int32_t *const *prompts,
                           const int64_t *prompt_lengths,
                           const seqc_generate_options *options,
                           int32_t *out_tokens, int64_t *out_lengths,
                           seqc_generate_stats *out_stats);

/*===----------------------------------------------------------------------===*
 * .npy files
 *===----------------------------------------------------------------------===*/

/// Reads a .npy file (format 1.0 or 2.0, C order, little-endian '<f4',
/// '<f8', '<f2', '<i4' or '<i8'). On success out_tensor->data is allocated
/// with malloc and owned by the caller (release it with free).
seqc_status *seqc_npy_read(const char *path, seqc_tensor *out_tensor);

/// Writes `tensor` as a .npy file (format 1.0) to `path`, as
/// seqc_model_save_weights writes its file ("-" is standard output). bf16
/// has no numpy dtype and is rejected.
seqc_status *seqc_npy_write(const char *path, const seqc_tensor *tensor);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // SEQC_RUNTIME_H
