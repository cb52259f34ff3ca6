//===- Utils.h - helpers shared by the seq to linalg patterns ---*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Small builders every seq-to-linalg pattern needs: scalar constants and
// casts, dynamic sizes, `tensor.empty` + `linalg.fill`, indexing maps for
// reductions and NumPy broadcasting, run-time shape checks, and the two
// numerically delicate pieces several families share (the safe softmax and
// the `#seq.mask` predicate).
//
// Broadcasting rule. Broadcasting follows the *static* shapes: an operand
// dimension broadcasts only when it is statically 1 (and the result's is not
// statically 1). A dynamic operand dimension never broadcasts: it must equal
// the result dimension at run time, which the lowering checks with a
// `cf.assert` ("dynamic dimension does not broadcast"). Deciding at run time
// would need a different loop nest per case; models that broadcast state it
// in their types (`tensor<1x?xf32>`), so the static rule loses nothing real.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_SEQTOLINALG_UTILS_H
#define SEQC_LOWERING_SEQTOLINALG_UTILS_H

#include "dialect/Seq/IR/SeqOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace seq {

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

/// The type arithmetic on `elementType` is carried out in: f32 for floats
/// narrower than 32 bits (f16, bf16, f8), the type itself otherwise. Sums and
/// transcendental functions of half-precision inputs lose too much otherwise.
Type getComputeType(Type elementType);

/// Converts a scalar between float types (ext/trunc), integer types
/// (sign-extend/truncate), `index` and integers, and integers and floats
/// (signed). Returns `value` when the types already agree.
Value convertScalar(OpBuilder &b, Location loc, Value value, Type toType);

/// `arith.constant` of float type `type` holding `value` (rounded).
Value createFloatConstant(OpBuilder &b, Location loc, Type type, double value);

/// `arith.constant` of `index` type.
Value createIndexConstant(OpBuilder &b, Location loc, int64_t value);

/// `-inf` (or `+inf` when `negative` is false) of float type `type`.
Value createInfinity(OpBuilder &b, Location loc, Type type, bool negative);

/// Converts an `index` value (a loop index or a size) to float `type`.
Value indexToFloat(OpBuilder &b, Location loc, Value index, Type type);

//===----------------------------------------------------------------------===//
// Tensors and sizes
//===----------------------------------------------------------------------===//

/// Materializes `ofr` as an `index` value.
Value getValueOrCreateIndex(OpBuilder &b, Location loc, OpFoldResult ofr);

/// The static shape described by `sizes`: attributes are static sizes,
/// values dynamic ones (even constant values, as the tensor ops' builders
/// treat them).
SmallVector<int64_t> getStaticShape(ArrayRef<OpFoldResult> sizes);

/// `tensor.empty` of the given sizes.
Value createEmptyTensor(OpBuilder &b, Location loc,
                        ArrayRef<OpFoldResult> sizes, Type elementType);

/// `tensor.empty` + `linalg.fill` with `fillValue` (a scalar of
/// `elementType`).
Value createFilledTensor(OpBuilder &b, Location loc,
                         ArrayRef<OpFoldResult> sizes, Type elementType,
                         Value fillValue);

/// Returns `value`, or a `tensor.cast` of it when its type differs from `type`
/// (a static or dynamic refinement of the same shape).
Value castToType(OpBuilder &b, Location loc, Value value, Type type);

/// Converts every element of `tensor` to `elementType` (see `convertScalar`)
/// with an elementwise generic; returns `tensor` when the types agree. Used
/// to round f32 accumulators back to f16/bf16.
Value convertElementType(OpBuilder &b, Location loc, Value tensor,
                         Type elementType);

/// Collapses every dimension of `value` but the last `keep` into one:
/// `[a, b, c, d]` with `keep = 2` gives `[a*b, c, d]`. A tensor of rank
/// `keep` gets a leading unit dimension instead, so the result always has
/// rank `keep + 1`.
Value collapseLeadingDims(OpBuilder &b, Location loc, Value value,
                          int64_t keep);

/// Inverse of `collapseLeadingDims`: expands the leading dimension of `value`
/// back to `leadingSizes` (which may be empty: the unit dimension is dropped).
Value expandLeadingDim(OpBuilder &b, Location loc, Value value,
                       ArrayRef<OpFoldResult> leadingSizes);

//===----------------------------------------------------------------------===//
// Indexing maps and iterators
//===----------------------------------------------------------------------===//

/// `rank` iterators, parallel except those in `reductionDims`.
SmallVector<utils::IteratorType>
getIteratorTypes(int64_t rank, ArrayRef<int64_t> reductionDims = {});

/// `(d0, ..., d{rank-1}) -> (the dims not in dropped)`.
AffineMap getProjectionMap(MLIRContext *ctx, int64_t rank,
                           ArrayRef<int64_t> dropped);

//===----------------------------------------------------------------------===//
// Run-time checks
//===----------------------------------------------------------------------===//

/// `cf.assert %cond, message`.
void createRuntimeAssert(OpBuilder &b, Location loc, Value cond,
                         StringRef message);

/// Asserts `lhs == rhs` at run time; nothing when both are the same constant.
/// Returns failure when both are constants that differ (the caller reports
/// it: the IR is statically wrong).
LogicalResult assertEqualSizes(OpBuilder &b, Location loc, OpFoldResult lhs,
                               OpFoldResult rhs, StringRef message);

//===----------------------------------------------------------------------===//
// Broadcasting elementwise ops
//===----------------------------------------------------------------------===//

/// The indexing map reading an operand of shape `operandShape` inside a loop
/// nest over `resultShape` under the static broadcasting rule (see the file
/// comment): trailing dimensions aligned, statically-1 dimensions read at 0.
AffineMap getBroadcastMap(MLIRContext *ctx, ArrayRef<int64_t> operandShape,
                          ArrayRef<int64_t> resultShape);

/// `operand` and the map reading it in a loop nest over `resultType`: its
/// statically-1 dimensions collapsed away (tensor.collapse_shape), so that
/// the map is a projected permutation ((d0, d3) for [b, 1, 1, n] in a 4-D
/// nest), which the CPU's row vectorizer and contraction epilogues take,
/// rather than getBroadcastMap's constant 0 reads ((d0, 0, 0, d3)), whose
/// loops are collapsed into one with an index division per element. An
/// operand without unit dimensions, or with nothing else, keeps
/// getBroadcastMap's map.
std::pair<Value, AffineMap> readBroadcastOperand(OpBuilder &b, Location loc,
                                                 Value operand,
                                                 RankedTensorType resultType);

/// Computes the sizes of `resultType` for the broadcast of `operands` and
/// emits the run-time checks of the dynamic dimensions. Fails (with a
/// diagnostic on `op`) when an operand has a higher rank than the result or
/// when static sizes are incompatible.
FailureOr<SmallVector<OpFoldResult>>
computeBroadcastSizes(OpBuilder &b, Operation *op, ValueRange operands,
                      RankedTensorType resultType);

/// The same on explicit operand sizes (constant attributes for static
/// dimensions), for broadcasting parts of shapes such as the batch
/// dimensions of a matmul. `resultShape` may be dynamic anywhere.
FailureOr<SmallVector<OpFoldResult>>
computeBroadcastSizes(OpBuilder &b, Operation *op,
                      ArrayRef<SmallVector<OpFoldResult>> operandSizes,
                      ArrayRef<int64_t> resultShape);

/// Body builder of an elementwise generic: receives the scalar operands (in
/// their element types) and returns the result scalar (of the result element
/// type).
using ScalarBuilderFn =
    function_ref<Value(OpBuilder &b, Location loc, ValueRange args)>;

/// Builds `linalg.generic` computing `body` elementwise over `inputs`,
/// broadcast to `resultType`. Fails (with a diagnostic on `op`) when the
/// shapes cannot broadcast.
FailureOr<Value> buildElementwise(OpBuilder &b, Operation *op,
                                  RankedTensorType resultType,
                                  ValueRange inputs, ScalarBuilderFn body);

//===----------------------------------------------------------------------===//
// Shared numerics
//===----------------------------------------------------------------------===//

/// Numerically safe softmax of `input` along `axis`, in `getComputeType`
/// precision, returning a tensor of `input`'s type:
///   m   = max_axis x                   (taken as 0 when it is -inf)
///   s   = sum_axis exp(x - m)
///   out = s > 0 ? exp(x - m) / s : 0
/// so that a row of only `-inf` (a fully masked attention row) gives zeros,
/// not NaN, and huge logits do not overflow.
Value buildSafeSoftmax(OpBuilder &b, Location loc, Value input, int64_t axis);

/// The maximum of `input` along `axis`, in `getComputeType` precision (from
/// -inf; `nnan nsz`, as it only shifts exps: createShiftMax).
Value buildShiftMax(OpBuilder &b, Location loc, Value input, int64_t axis);

/// `x` times the reciprocal of its row's sum `rowSum` (`x`'s shape without
/// `axis`), into `init` (which may be `x`): one division per row, and 0 where
/// the sum is not positive (rows of only -inf, NaN rows), as buildSafeSoftmax's
/// probabilities are. The normalization of softmax's row-blocked form and
/// of the reference attention's CPU form (the rows of `exps V`).
Value buildRowScale(OpBuilder &b, Location loc, Value x, Value rowSum,
                    Value init, int64_t axis);

/// The exps `exp(x - m)` of the f32 `input` along `axis`, written into
/// `expsInit` (of `input`'s shape), and their sums along the axis, as one
/// reduction with two outputs (seq-cpu-vectorize-rows stores each vector of
/// exps as it adds it): the row pass of softmax's row-blocked form and of
/// the reference attention's CPU form. `rowMax` is buildShiftMax's, taken as
/// 0 when -inf (createSafeMax) so that a row of only -inf gives zeros.
/// Returns {exps, sums}.
std::pair<Value, Value> buildExpsAndSums(OpBuilder &b, Location loc,
                                         Value input, Value rowMax,
                                         Value expsInit, int64_t axis);

/// e^x as math.exp marked `seq.fast_exp` (lowering/Common/Attributes.h),
/// which seq-cpu-approximate-math expands into the CPU's short form (Cody
/// and Waite's reduction, at most 2 ulp, results below 2^-126 flushed to 0)
/// instead of MLIR's generic polynomial; other targets ignore the mark.
/// For the exps of softmax rows, x - max <= 0, and the fused scan's gates,
/// whose accuracy over the whole f32 range fused-scan-gates-run.test checks.
Value createFastExp(OpBuilder &b, Location loc, Value x);

/// The maximum of `x` and `y` as `arith.maximumf` with `nnan nsz`, for the
/// maxima that only shift the exps of a softmax: a NaN element reaches its
/// row's sum (and so the row's output) through its own exp whatever maximum
/// is taken, as does +-0's sign, which no exp sees. The vector kernels then
/// take it as one vmaxps (seq-expand-fast-min-max) instead of
/// NaN-propagating compares and blends per step (attention's row reduction
/// took 10% of its time on Zen 5, a softmax row's 25% on Intel).
Value createShiftMax(OpBuilder &b, Location loc, Value x, Value y);

/// `max`, or 0 where it is -inf: the offset a softmax subtracts before exp,
/// so that a row of only -inf gives exp(-inf - 0) = 0 instead of NaN.
Value createSafeMax(OpBuilder &b, Location loc, Value max);

/// The `i1` predicate "query `i` may attend to key `j`" of `mask` (see
/// `#seq.mask`), with `length` the key padding length of the batch row
/// (`index`, or null when there is none). `i`, `j` are `index` values,
/// compared as signed integers: a query placed at a negative position (the
/// pad tokens of a left-padded row with query offsets `-pad`) sees no key
/// under a causal mask, and no global token is at a negative position.
/// Returns null when every key is visible.
Value buildMaskPredicate(OpBuilder &b, Location loc, MaskAttr mask, Value i,
                         Value j, Value length);

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

/// Reports why `op` cannot be lowered, as an error at its location (so that
/// the user sees it next to the conversion failure), and returns failure.
LogicalResult emitLoweringError(PatternRewriter &rewriter, Operation *op,
                                const Twine &message);

/// Declines `op` for a pattern's fast form (a fused scan, the chunked linear
/// attention, the tap or row-block forms), leaving it to the lowering named
/// by `fallback` ("<op> takes the ... lowering"): with `remarks`, a remark
/// "<fallback>: <why>" at `op`; under -debug-only=convert-seq-to-linalg, the
/// same line either way. Returns failure, for matchAndRewrite to return.
LogicalResult declineFastForm(Operation *op, bool remarks,
                              const Twine &fallback, const Twine &why);

//===----------------------------------------------------------------------===//
// Structured ops and slices used by the loop-carried lowerings
//===----------------------------------------------------------------------===//

/// Body of a `linalg.generic`: receives the block arguments (inputs, then the
/// output) and returns the value to yield.
using GenericBodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// In `getDimsMap` targets: the result is the constant 0 (a unit dimension).
constexpr int64_t kUnitDim = -1;

/// `(d0, ..., d{numDims-1}) -> (d{targets[0]}, ...)`, with `kUnitDim` targets
/// giving 0.
AffineMap getDimsMap(MLIRContext *ctx, unsigned numDims,
                     ArrayRef<int64_t> targets);

/// A single-output `linalg.generic` writing into `init`.
Value buildGeneric(OpBuilder &b, Location loc, ValueRange inputs, Value init,
                   ArrayRef<AffineMap> maps,
                   ArrayRef<utils::IteratorType> iterators, GenericBodyFn body);

/// The slice of `source` (whose sizes are `sizes`) at `index` along `dim`.
/// The slice keeps that dimension (of size 1), and the generics reading it
/// use a constant 0 index (`kUnitDim`): a rank-reducing slice is ambiguous
/// when another dimension is 1 too (batch 1), and the upstream canonicalizer
/// then drops the wrong one (LLVM 22 produces an invalid `tensor.cast`).
Value extractSliceAt(OpBuilder &b, Location loc, Value source,
                     ArrayRef<OpFoldResult> sizes, int64_t dim, Value index);

/// Inserts `slice` (as `extractSliceAt` returns it) into `dest` at `index`
/// along `dim`.
Value insertSliceAt(OpBuilder &b, Location loc, Value slice, Value dest,
                    ArrayRef<OpFoldResult> sizes, int64_t dim, Value index);

/// The slice of `source` (whose sizes are `sizes`) of `length` elements from
/// `offset` along `dim`, every other dimension whole (a chunk of tokens).
Value extractSliceRange(OpBuilder &b, Location loc, Value source,
                        ArrayRef<OpFoldResult> sizes, int64_t dim,
                        OpFoldResult offset, OpFoldResult length);

/// Inserts `slice` (as `extractSliceRange` returns it) into `dest`.
Value insertSliceRange(OpBuilder &b, Location loc, Value slice, Value dest,
                       ArrayRef<OpFoldResult> sizes, int64_t dim,
                       OpFoldResult offset, OpFoldResult length);

} // namespace seq
} // namespace mlir

#endif // SEQC_LOWERING_SEQTOLINALG_UTILS_H
