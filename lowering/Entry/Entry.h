//===- Entry.h - model manifest and ABI entry points ------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// What a compiled model exports besides its code (docs/abi.md): the JSON
// manifest `seqc_manifest`, the packed entry point `seqc_invoke`, and, for
// shared libraries, a C header documenting both. Both describe the model's
// signature, read from the frontend's attributes by
// dialect/Seq/IR/ModelSignature.h.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_ENTRY_ENTRY_H
#define SEQC_LOWERING_ENTRY_ENTRY_H

#include "dialect/Seq/IR/ModelSignature.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace seq {

#define GEN_PASS_DECL
#include "lowering/Entry/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lowering/Entry/Passes.h.inc"

/// The symbols of docs/abi.md.
constexpr llvm::StringLiteral kManifestSymbol = "seqc_manifest";
constexpr llvm::StringLiteral kInvokeSymbol = "seqc_invoke";
/// The table of a model with several entries: {name, invoke, prepare,
/// release} per entry, the default first, ended by a row of nulls.
constexpr llvm::StringLiteral kEntriesSymbol = "seqc_entries";
/// The preparation entry points of docs/abi.md and the function
/// seq-hoist-preparation creates for them; the module attribute (dense i64
/// array) holding the ranks of the prepared values, in argument order.
constexpr llvm::StringLiteral kPrepareSymbol = "seqc_prepare";
constexpr llvm::StringLiteral kReleaseSymbol = "seqc_release";
constexpr llvm::StringLiteral kPrepareFunctionName = "__seqc_prepare";
constexpr llvm::StringLiteral kPreparedRanksAttr = "seqc.prepared_ranks";
/// Which prepared values which preparation functions compute (module
/// attributes of seq-hoist-preparation, read by seq-emit-invoke):
/// `@__seqc_prepare` takes the parameters of `seqc.prepare_params` (dense
/// i64 array of indices in manifest order) and returns the prepared values
/// of `seqc.prepare_values` (indices in argument order). Each dictionary of
/// the array `seqc.prepare_groups` names a function (`function`) computing
/// one prepared value from `k` parameters, once for each of its `values`
/// (m indices) from the parameters `params[r*k, r*k+k)` (m*k indices).
constexpr llvm::StringLiteral kPrepareParamsAttr = "seqc.prepare_params";
constexpr llvm::StringLiteral kPrepareValuesAttr = "seqc.prepare_values";
constexpr llvm::StringLiteral kPrepareGroupsAttr = "seqc.prepare_groups";
/// The constant tables seq-emit-invoke creates: the prepared descriptors'
/// byte offsets in the state, which seqc_release walks, and, for the n-th
/// group of `seqc.prepare_groups`, its parameters' indices, which
/// seqc_prepare walks (`__seqc_prepare_params_<n>`).
constexpr llvm::StringLiteral kPreparedOffsetsSymbol =
    "__seqc_prepared_offsets";
constexpr llvm::StringLiteral kPrepareParamsSymbol = "__seqc_prepare_params";
/// The runtime's function seqc_prepare calls after the last read of
/// parameters only the preparation reads, `void(const int64_t *params,
/// int64_t count)`, and its tables of their indices: those @__seqc_prepare
/// reads last (`__seqc_prepare_last_reads`), and, for the n-th group, one
/// row per call in the order of its parameters, -1 where the call is not a
/// parameter's last read (`__seqc_prepare_last_reads_<n>`).
constexpr llvm::StringLiteral kPrepareDoneReadingSymbol =
    "seqc_prepare_done_reading";
constexpr llvm::StringLiteral kPrepareLastReadsSymbol =
    "__seqc_prepare_last_reads";
/// seq-hoist-preparation: the module attribute (dense i64 array) holding a
/// key per prepared value, in argument order: a hash of the computation
/// that prepares it (the printed function computing its component), the
/// parameters it reads (manifest indices) and its place among the
/// component's results. Two prepared values of a model's entries with the
/// same key are the same value of the same weights (docs/abi.md, "Sharing
/// prepared values"); 0 means no key. seq-emit-invoke writes them into
/// the constant table the prepared block points to:
/// {count, offsets[count], ranks[count], keys[count]}.
constexpr llvm::StringLiteral kPreparedKeysAttr = "seqc.prepared_keys";
/// seq-hoist-preparation: the module attribute (dense i64 array) listing
/// the parameters (manifest indices) that the model function no longer
/// reads once the prepared values are its arguments: only the preparation
/// functions read them. The manifest marks them `"prepared_only": true`
/// (markPreparedOnlyParams), so that the runtime may drop their memory from
/// the resident set once it holds the prepared block (docs/abi.md).
constexpr llvm::StringLiteral kPreparedOnlyParamsAttr =
    "seqc.prepared_only_params";
constexpr llvm::StringLiteral kPreparedTableSymbol = "__seqc_prepared_table";
/// seq-plan-memory: the module attribute (i64: the arena's alignment)
/// saying that the model function takes the arena as its last argument, the
/// function computing the arena's size for a call, and the module attribute
/// (string) holding the plan's report (`seqc --emit=memory-plan`).
constexpr llvm::StringLiteral kArenaAttr = "seqc.arena";
constexpr llvm::StringLiteral kArenaBytesFunctionName = "__seqc_arena_bytes";
constexpr llvm::StringLiteral kMemoryPlanAttr = "seqc.memory_plan";
/// seq-loop-layers: the module attribute (i64: the number n of the model
/// function's memref arguments) saying that the model function and
/// `@__seqc_arena_bytes` take, instead of those arguments, one pointer to
/// an array of n pointers to their descriptors, in argument order (the
/// arena's last), which seq-emit-invoke fills.
constexpr llvm::StringLiteral kPackedArgumentsAttr = "seqc.packed_arguments";

/// Writes a C header for a shared library built from the model: it includes
/// the runtime API and documents, as comments and constants, the model's
/// inputs, outputs, parameters and hyperparameters. `sourceName` (may be
/// empty) is mentioned in the banner.
/// The prefix of the functions seq-fold-layers makes, one per group of
/// layers that compile to the same code (their team forms add a suffix).
constexpr llvm::StringLiteral kLayerFunctionPrefix = "__seqc_layer_";
/// The prefix of the functions seq-fold-layers outlines on tensors, and
/// the attribute that marks them for seq-inline-layers.
constexpr llvm::StringLiteral kTensorLayerFunctionPrefix =
    "__seqc_tensor_layer_";
constexpr llvm::StringLiteral kInlineAfterBufferizationAttr =
    "seqc.inline_after_bufferization";

/// Moves the ops of `body` whose operands are all defined at its entry
/// (block arguments or ops moved before) up to the entry, in order: the
/// pure ops without regions (sizes, offsets, views) and the `allocations`.
/// A layer then reads them as arguments instead of computing a value the
/// next layer reads, which would make it return the value (and a function
/// with results does not join its caller's thread team). Moving a pure op
/// or an allocation earlier changes nothing the function computes (the
/// memory plan places a buffer by its uses). Returns the last op at the
/// entry, or null.
Operation *hoistToEntry(Block &body,
                        const llvm::DenseSet<Operation *> &allocations = {});

void writeModelHeader(const ModelSignature &signature,
                      llvm::StringRef sourceName, llvm::raw_ostream &os);

} // namespace seq
} // namespace mlir

#endif // SEQC_LOWERING_ENTRY_ENTRY_H
