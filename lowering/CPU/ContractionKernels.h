//===- ContractionKernels.h - register-tiled contractions -------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The vector kernels of seq-cpu-vectorize-contractions: what a matched
// contraction looks like to them (ContractionMatch), the register tile and
// cache blocks chosen for a target (ContractionTiling), and the emitter of
// the loop nest. Matching and absorbing neighbouring ops is in
// lowering/CPU/Transforms.h.
//
// Two kernels cover the layouts of sequence models without copying operands:
//
//  - "dot" (both inputs contiguous along the reduction, `x @ W^T`, `q @ k^T`):
//    an mr x nr tile of accumulators, each a vector of reduction lanes,
//    loads mr rows of A and nr rows of B per step, mr * nr FMAs; the lanes
//    are summed once per output element at the end.
//  - "broadcast" (B contiguous along the output's last dimension, `x @ W`,
//    `P @ V`): an mr x nv tile of output vectors; per reduction step it
//    loads nv vectors of a B row and broadcasts mr scalars of A.
//
// Tiles at the edges use the same kernels with one row, one column or a
// masked vector, so any size is handled without padding.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_CPU_CONTRACTIONKERNELS_H
#define SEQC_LOWERING_CPU_CONTRACTIONKERNELS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <tuple>

namespace mlir::seq::cpu {

enum class ContractionKernel { Dot, Broadcast };

/// A contraction C[...] += A[...] * B[...] with an f32 C (A and B f32, bf16
/// or f16, widened to f32 in registers) in the form the
/// kernels need (matchContraction), with what the kernels absorb from the
/// ops around it (absorbInitializer, absorbEpilogue, packShortReduction).
struct ContractionMatch {
  linalg::LinalgOp op;
  Value a, b, c;
  AffineMap mapA, mapB, mapC;
  /// Loop positions: the output's last dimension (n), the one before it (m,
  /// absent for a matrix-vector product), the reduction (k), and the other
  /// parallel loops (batch).
  unsigned n = 0, k = 0;
  std::optional<unsigned> m;
  SmallVector<unsigned> batch;
  ContractionKernel kernel = ContractionKernel::Dot;
  /// Non-zero when B is packed in column panels of this width
  /// (seq-cpu-pack-weights): B[batch..., n floordiv w, k, n mod w].
  int64_t panel = 0;
  /// With `panel`, B is packed in k-pair panels for vdpbf16ps
  /// (seq-cpu-pack-weights' bf16-dot):
  /// B[batch..., n floordiv w, k floordiv 2, n mod w, k mod 2].
  bool kPairs = false;
  /// The dot kernel multiplies bf16 A and B in pairs of reduction steps
  /// with vdpbf16ps (set by vectorizeContraction where the target has it).
  bool dotPairs = false;
  /// A's stored type (bf16 or f16) when `a` is its copy widened to f32
  /// once per call (widenLeftOperand); null otherwise.
  Type widenedA;
  /// The value a linalg.fill gave all of C just before (the fill is then
  /// erased and the kernels start from it instead of loading C).
  Value initValue;
  /// Or the buffer a broadcast copy into C (a Linear's bias) read, indexed
  /// by `initMap` in terms of C's dimensions.
  Value initInput;
  AffineMap initMap;
  /// An elementwise op right after the contraction that reads C (the
  /// epilogue: activation, residual add, scaling, gate), applied in
  /// registers before the kernel stores (the broadcast kernel on the output
  /// tile's vectors, the dot kernel on each finished element); it writes
  /// its own output instead of C.
  linalg::GenericOp epilogue;
  /// The epilogue's operands in C's coordinates: per block argument it
  /// uses, the buffer (null for C itself) and its map over C's dimensions;
  /// and the buffer it writes. When the epilogue works on an expand_shape of
  /// C, `reassociation` collapses its operands back to C's shape.
  SmallVector<std::tuple<BlockArgument, Value, AffineMap>, 2> epilogueInputs;
  Value epilogueOut;
  SmallVector<ReassociationIndices> reassociation;
};

/// Register-tile and cache-block sizes for one kernel on one target.
struct ContractionTiling {
  int64_t lanes;  // f32 elements per vector register
  int64_t mr, nr; // dot: rows x columns; broadcast: rows x vectors
  int64_t mc, nc; // rows and columns per parallel block (the broadcast
                  // kernel's in column-major order)
  int64_t kc = 0; // the broadcast kernel's reduction steps per pass over a
                  // block (0: all of them), for a long static reduction
  /// Outputs of at least this many bytes are written with non-temporal
  /// stores where the kernel can (0: never); see streamingStoreBytes.
  int64_t streamBytes = 0;
};

/// The tiling of `kernel` for a target with `vectorRegisters` registers of
/// `vectorBits` bits: the accumulators plus one row of operands fit in the
/// registers.
ContractionTiling getContractionTiling(ContractionKernel kernel,
                                       int64_t vectorBits,
                                       int64_t vectorRegisters);

/// The tiling of `c`'s kernel, with fewer rows where its operands need
/// more registers: a broadcast kernel reading a bf16 or f16 left operand
/// four elements at a time keeps 4 rows.
ContractionTiling getContractionTiling(const ContractionMatch &c,
                                       int64_t vectorBits,
                                       int64_t vectorRegisters);

/// Whether the broadcast kernel of `c` may write its output with
/// non-temporal stores (behind a run-time test of the output's size and
/// alignment): the tiling asks for it (t.streamBytes), the reduction runs
/// in one pass and the kernel does not start from C, so that no partial sum
/// is read back from memory.
bool mayStreamOutput(const ContractionMatch &c, const ContractionTiling &t);

/// The row counts below mr that the last row tile of a block of `c` may
/// have (every count 1 .. mr - 1 when the rows are dynamic): each gets a
/// kernel of that many rows, so that B is read once per block.
SmallVector<int64_t> remainderCounts(const ContractionMatch &c,
                                     const ContractionTiling &t);

/// With at most mr rows (a matrix-vector product at decode time), the
/// parallel blocks of the dot kernel split the columns into about this
/// many blocks, each a multiple of nr columns and at most nc
/// (hasFewRowsColumnSplit); the broadcast kernel's are one tile wide
/// whatever the rows.
constexpr int64_t kMinColumnBlocks = 16;
bool hasFewRowsColumnSplit(const ContractionMatch &c);

/// Emits at `b`'s insertion point the loop nest computing `c` with `tiling`:
/// an scf.parallel over the batch loops and blocks of mc x nc, register
/// tiles inside. Writes C (or the epilogue's output when `c` has one); does
/// not erase the contraction or the epilogue.
void emitContractionKernel(OpBuilder &b, const ContractionMatch &c,
                           const ContractionTiling &tiling);

} // namespace mlir::seq::cpu

#endif // SEQC_LOWERING_CPU_CONTRACTIONKERNELS_H
