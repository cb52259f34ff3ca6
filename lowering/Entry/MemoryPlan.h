//===- MemoryPlan.h - one arena for the model's intermediates ---*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The phases of seq-plan-memory as library functions, in the order the pass
// calls them:
//
//   collectArenaBuffers      the buffers the arena can hold, their lives
//   placeArenaBuffers        an offset (or the buffers below it) for each
//   materializeMemoryPlan    the arena argument, @__seqc_arena_bytes and the
//                            sizes and offsets at the model function's entry
//   reportMemoryPlan         the text of `seqc --emit=memory-plan`
//   replaceAllocationsWithArenaViews
//                            each allocation becomes a view of the arena
//
// The first two only analyze; the last two need the values the third built.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_ENTRY_MEMORYPLAN_H
#define SEQC_LOWERING_ENTRY_MEMORYPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>

namespace mlir {
namespace seq {

/// One buffer of a memory plan.
struct PlannedBuffer {
  memref::AllocOp alloc;
  /// Every value that views the buffer (the alloc's result included).
  llvm::SetVector<Value> aliases;
  /// First and last top-level op touching its data.
  unsigned start = 0, end = 0;
  /// Bytes, rounded up to the alignment, when static.
  std::optional<int64_t> staticBytes;
  /// Placement: a static offset, or the buffers below it (their indices in
  /// the plan) whose ends bound it.
  std::optional<int64_t> staticOffset;
  SmallVector<unsigned> below;

  bool interferes(const PlannedBuffer &other) const {
    return start <= other.end && other.start <= end;
  }
};

/// The arena of a model function: its buffers in program order, and the
/// order in which placeArenaBuffers gave them their offsets.
struct MemoryPlan {
  func::FuncOp function;
  /// Alignment in bytes of the arena and of every offset in it.
  int64_t alignment = 0;
  SmallVector<PlannedBuffer> buffers;
  /// The top-level allocations that stay on the heap.
  unsigned numSkipped = 0;
  /// Indices into `buffers`, in order of placement.
  SmallVector<unsigned> placement;
};

/// What materializeMemoryPlan built: the arena argument, the function
/// computing its size, and, at the model function's entry, each buffer's
/// size (rounded up to the alignment), offset and size before rounding
/// (indexed as MemoryPlan::buffers).
struct MaterializedMemoryPlan {
  Value arena;
  func::FuncOp arenaBytesFunction;
  SmallVector<Value> sizes, offsets, rawSizes;
};

/// The report of a plan (the module attribute `seqc.memory_plan`) and the
/// peak it gives.
struct MemoryPlanReport {
  std::string text;
  /// The arena's bytes and the sum of the buffers' sizes: static, or
  /// evaluated at the given symbolic sizes (`atDims`); none when the sizes
  /// are dynamic and the symbolic sizes were not all given.
  std::optional<int64_t> peak;
  int64_t sum = 0;
  bool atDims = false;
};

/// Parses `bindings`, symbolic sizes of the inputs as `name=value` (the
/// `dims` option of seq-plan-memory). Emits an error at `anchor` for a
/// malformed one.
FailureOr<llvm::StringMap<int64_t>>
parseSymbolicSizes(ArrayRef<std::string> bindings, Operation *anchor);

/// The function of `module` that seq-plan-memory plans: the defined,
/// single-block function `seqc.entry` names; null when there is none.
func::FuncOp getMemoryPlanFunction(ModuleOp module);

/// Precondition of materializeMemoryPlan: the symbol `@__seqc_arena_bytes`
/// is free in `function`'s module. Emits an error otherwise.
LogicalResult planMemoryPrecondition(func::FuncOp function);

/// The buffers of `function` the arena can hold: its top-level
/// `memref.alloc`s of identity-layout memrefs of byte-sized scalars, whose
/// alignment `alignment` satisfies, whose sizes can be computed at the entry
/// and which do not escape (neither they nor a view of them are returned,
/// yielded, passed to a call other than an outlined kernel's, or turned
/// into a pointer or a memref that is not a view). Each gets its views,
/// its life and, when static, its size; the others are counted in
/// `numSkipped`.
MemoryPlan collectArenaBuffers(func::FuncOp function, int64_t alignment);

/// Places the buffers of `plan`: buffers of dynamic size first, in program
/// order, then static ones from the largest. Each goes as low as the
/// buffers placed before it that it interferes with allow: into the lowest
/// gap (a static offset) when all of those are static, above their highest
/// end (`below`) otherwise.
void placeArenaBuffers(MemoryPlan &plan);

/// Makes the arena the last argument of the plan's function
/// (`memref<?xi8>`), defines `@__seqc_arena_bytes` (with `bytesFunction`),
/// which takes the other arguments and returns the bytes a call needs, and
/// builds the sizes and offsets of the buffers at the function's entry.
/// Fails when the argument cannot be added.
FailureOr<MaterializedMemoryPlan>
materializeMemoryPlan(MemoryPlan &plan, bool bytesFunction = true);

/// Gives each call of `plan`'s function (a folded layer, all of whose calls
/// are `calls`) a slice of its caller's memory: a `memref<?xi8>` allocated
/// before the call with the bytes the plan needs for the call's operands,
/// passed as a last operand and freed after it, for the caller's own plan
/// to place. Then materializes the plan in the function, whose arena is
/// that slice. Fails when the argument cannot be added.
FailureOr<MaterializedMemoryPlan>
materializeSlicePlan(MemoryPlan &plan, ArrayRef<func::CallOp> calls);

/// The report of `plan`: each buffer's type, location, size (an expression
/// of the inputs' symbolic sizes, named by the manifest, when dynamic),
/// offset and life, and the peak against the sum of the sizes, evaluated
/// at `dimValues` (parsed from `dims`) when the sizes are dynamic.
MemoryPlanReport reportMemoryPlan(const MemoryPlan &plan,
                                  const MaterializedMemoryPlan &materialized,
                                  ArrayRef<std::string> dims,
                                  const llvm::StringMap<int64_t> &dimValues);

/// Replaces each allocation of `plan` by a view of the arena at its offset
/// and erases its deallocations. The plan's allocations are gone after it.
void replaceAllocationsWithArenaViews(
    MemoryPlan &plan, const MaterializedMemoryPlan &materialized);

} // namespace seq
} // namespace mlir

#endif // SEQC_LOWERING_ENTRY_MEMORYPLAN_H
