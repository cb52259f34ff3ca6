//===- Transforms.h - CPU lowering transformations --------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Library entry points of the CPU target's transformations, usable without
// the pass wrappers: seq-cpu-vectorize-contractions is a walk over
// matchContraction and vectorizeContraction.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_CPU_TRANSFORMS_H
#define SEQC_LOWERING_CPU_TRANSFORMS_H

#include "lowering/CPU/ContractionKernels.h"

#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir::seq::cpu {

/// Matches a contraction `C += A * B` with an f32 C and f32, bf16 or f16 A
/// and B (widened to f32 in the body) with one reduction loop
/// and operands indexed by loop indices (or B in packed panels) that one of
/// the kernels takes, and chooses the kernel. On failure, sets `*reason` (for
/// the remark) when `op` is a product the kernels could have been expected
/// to take, and leaves it empty for ops that are not binary contractions.
FailureOr<ContractionMatch> matchContraction(linalg::LinalgOp op,
                                             std::string *reason = nullptr);

/// When the op that writes C just before the contraction fills all of C (a
/// linalg.fill of C or of the buffer it reshapes) or copies a broadcast into
/// it (a Linear's bias: a generic whose body yields its one input), records
/// what it wrote in `c` and erases it: the kernels start their accumulators
/// from it instead of writing C and reading it back. Fails, changing
/// nothing, when there is no such op.
LogicalResult absorbInitializer(RewriterBase &rewriter, ContractionMatch &c);

/// When the op right after a contraction is an elementwise generic that
/// reads C once at the same element (an activation, a residual add, a
/// scaling, a gate multiply), directly or through an expand_shape that keeps
/// C's last dimension, its other inputs are contiguous along C's rows or
/// constant along them, and nothing reads C afterwards, records it as the
/// epilogue of `c`: the kernels apply it to the output tile in registers (the
/// dot kernel to each finished element) and store its result. The operands
/// are collapsed to C's shape (before the epilogue, where the kernel must
/// then be emitted: what it reads and writes may be defined between the two
/// ops). The epilogue is not erased. Fails, changing nothing, when there is
/// no such op; when the next op reads C but cannot be absorbed, sets
/// `*reason` (for the remark) to why.
LogicalResult absorbEpilogue(OpBuilder &b, ContractionMatch &c,
                             std::string *reason = nullptr);

/// Whether `c` is a dot-kernel contraction with rows and a short static
/// reduction along B's last dimension, with B's columns the dimension before
/// it, not fewer than 8 when static: packShortReduction applies.
bool isPackableShortReduction(const ContractionMatch &c);

/// A dot-kernel contraction with a short static reduction (`q @ k^T` at head
/// size 64) spends as much on summing lanes as on the products. Copies B at
/// `b`'s insertion point into the column panels seq-cpu-pack-weights gives
/// weights, P[batch..., n / w, k, w] for w = `width` (zero-padded), and
/// switches `c` to the broadcast kernel on them, which sums nothing across
/// lanes and streams each panel contiguously; the copy is B's size, the
/// products B's size times the rows. Returns the packed buffer, to free
/// after the kernel. `c` must satisfy isPackableShortReduction. With
/// `packed` (from allocatePackedShortReduction), copies into it instead of
/// allocating. With `kPairs` (bf16 A and B on a target with vdpbf16ps), the
/// panels are in k pairs, P[batch..., n / w, ceil(k / 2), w, 2] (zero past
/// n and k), for the broadcast kernel's vdpbf16ps.
Value packShortReduction(OpBuilder &b, ContractionMatch &c, int64_t width,
                         Value packed = {}, bool kPairs = false);

/// Allocates at `b`'s insertion point the buffer packShortReduction copies
/// B of `c` into: made before a test of the row count, so that no
/// allocation sits inside its branch (the memory plan puts it in the arena,
/// and a thread team runs on through the test).
Value allocatePackedShortReduction(OpBuilder &b, const ContractionMatch &c,
                                   int64_t width, bool kPairs = false);

/// Whether the broadcast kernel of `c` (not in k pairs) reads a bf16 or f16
/// A, contiguous along its last dimension, over at least two blocks of
/// `columnBlock` columns: widenLeftOperand pays there.
bool isWidenableLeftOperand(const ContractionMatch &c, int64_t columnBlock);

/// The broadcast kernel widens each element of a bf16 or f16 A once per
/// block of columns, on the ports its FMAs use (and a quad of A per four
/// steps keeps it at 4 rows per tile). Copies A at `b`'s insertion point
/// into an f32 buffer of its shape, once (an elementwise linalg.generic,
/// which seq-cpu-vectorize-rows turns into vector conversions, a row per
/// parallel iteration), and switches `c` to it. Returns the buffer, to
/// free after the kernel. `c` must satisfy isWidenableLeftOperand.
Value widenLeftOperand(OpBuilder &b, ContractionMatch &c);

/// Target parameters of vectorizeContraction.
struct ContractionOptions {
  int64_t vectorBits = 256;
  int64_t vectorRegisters = 16;
  /// The target converts f16 to f32 in vector registers (x86's F16C); the
  /// remark says how f16 operands are widened.
  bool f16c = true;
  /// The target has vdpbf16ps (AVX512_BF16): a bf16 A times a bf16 B in
  /// k-pair panels multiplies pairs into the accumulators.
  bool bf16Dot = false;
  /// Outputs of at least this many bytes skip the caches: the broadcast
  /// kernel writes them with non-temporal stores where it can (0: never).
  int64_t streamingStoreBytes = 0;
  /// Emit a remark on what each contraction became (or why it did not).
  bool remarks = false;
};

/// Replaces the matched contraction `c` by its kernels: absorbs the fill or
/// bias before it and the elementwise epilogue after it, packs a short
/// reduction when there are enough rows (behind a run-time test of a dynamic
/// row count, the dot kernel otherwise); then emits the kernels and erases
/// the ops they replace. Fails, changing nothing, when B
/// is packed in panels of another width than the target's broadcast kernel
/// takes.
LogicalResult vectorizeContraction(RewriterBase &rewriter, ContractionMatch c,
                                   const ContractionOptions &options);

} // namespace mlir::seq::cpu

#endif // SEQC_LOWERING_CPU_TRANSFORMS_H
