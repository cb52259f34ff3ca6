//===- LinearAttention.cpp - lower linear attention to linalg -------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Lowers `seq.linear_attention` (Katharopoulos et al.) without ever forming
// the n x n attention matrix. With `q, k: [batch, heads, n, d]`,
// `v: [batch, heads, n, e]` and the feature map applied first:
//
// - non-causal, by reassociation, O(n d e):
//     S = phi(K)^T V : [d, e],  z = sum_j phi(k_j) : [d],
//     out_i = phi(q_i)^T S / (phi(q_i) . z + eps);
// - causal, by the recurrent form: an `scf.for` over n carrying the prefix
//   sums `S_i = S_{i-1} + phi(k_i) v_i^T` and `z_i = z_{i-1} + phi(k_i)`,
//   each step producing row i of the output. Every per-step op is parallel
//   over batch and heads and updates a loop-carried tensor in place, so the
//   state is allocated once.
//
// - causal, chunked (convert-seq-to-linalg's `linear-attention-chunk`, the
//   CPU at -O2 and above; f32 only): an `scf.for` over chunks of C tokens
//   carrying S and z, per chunk with Q_c, K_c, V_c its rows of phi(Q),
//   phi(K), V (the features computed per chunk, while its rows are in
//   cache):
//     A     = Q_c K_c^T, 0 above the diagonal (key j > query i)  [C, C]
//     num   = Q_c S + A V_c,   den = Q_c z + rowsum(A)
//     out_c = num / (den + eps)
//     S    += K_c^T V_c,       z  += colsum(K_c)
//   The products, sums included (as products with a row of ones), are
//   batched `C += A * B` contractions over (batch, heads) that the target's
//   contraction kernels take; the last chunk may be partial. Per head (the
//   CPU's `linear-attention-per-head`), an `scf.forall` over (batch, heads)
//   holds the loop over chunks instead, on each pair's slices.
// - non-causal, chunked per head (the same options, both set): in the
//   `scf.forall` over (batch, heads), a first loop over chunks sums
//   `S += K_c^T V_c, z += colsum(K_c)`, a second computes
//   `out_c = Q_c S / (Q_c z + eps)`. The whole-sequence products of the
//   reassociated form stream their operands from memory once per register
//   tile of S (a reduction over all n tokens), and the sums of z and the
//   features are passes of their own; per chunk, each pair's rows are read
//   once and the state stays in the core's cache.
//
// Sums are carried in the compute type (f32 for half-precision inputs). The
// causal forms start S and z from the op's initial state when it has one
// (else from 0) and return them after the last token when the op has the
// final-state results, so that pieces of a sequence processed in turn give
// the result of one call over the whole sequence.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/IR/SeqOps.h"
#include "dialect/Seq/Support/Debug.h"
#include "lowering/SeqToLinalg/Patterns.h"
#include "lowering/SeqToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#define DEBUG_TYPE "convert-seq-to-linalg"

using namespace mlir;
using namespace mlir::seq;

/// `acc + lhs * rhs`, the body of every contraction below.
static Value multiplyAdd(OpBuilder &b, Location loc, ValueRange args) {
  Value product = arith::MulFOp::create(b, loc, args[0], args[1]);
  return arith::AddFOp::create(b, loc, args[2], product);
}

/// `num / (den + eps)`, the normalization of every form below.
static Value normalize(OpBuilder &b, Location loc, Value num, Value den,
                       Value eps) {
  return arith::DivFOp::create(b, loc, num,
                               arith::AddFOp::create(b, loc, den, eps));
}

/// `tensor.empty` + `linalg.fill` with 0.
static Value createZeros(OpBuilder &b, Location loc,
                         ArrayRef<OpFoldResult> sizes, Type elementType) {
  return createFilledTensor(b, loc, sizes, elementType,
                            createFloatConstant(b, loc, elementType, 0.0));
}

/// A fresh state tensor of `sizes` in the compute type `t`: `initial` (of
/// `[..., sizes without the unit dimensions in `unitDims`]`) converted, or 0
/// when there is none. Always a new tensor, which the loop updates in place.
static Value createStateInit(OpBuilder &b, Location loc, Value initial,
                             ArrayRef<OpFoldResult> sizes, Type t,
                             ArrayRef<int64_t> unitDims = {}) {
  if (!initial)
    return createZeros(b, loc, sizes, t);
  int64_t rank = sizes.size();
  SmallVector<int64_t> kept;
  for (int64_t dim = 0; dim < rank; ++dim)
    if (!llvm::is_contained(unitDims, dim))
      kept.push_back(dim);
  MLIRContext *ctx = b.getContext();
  return buildGeneric(
      b, loc, initial, createEmptyTensor(b, loc, sizes, t),
      {getDimsMap(ctx, rank, kept), b.getMultiDimIdentityMap(rank)},
      getIteratorTypes(rank),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        return convertScalar(nb, nloc, args[0], t);
      });
}

/// The state a causal form carries: `S: [b, h, d, e]` and `z: [b, h, d]`.
struct LinearAttentionState {
  Value kv, keySum;
};

/// The output `[b, h, n, e]` of a form and, for the causal forms, its final
/// state, all in the compute type.
struct LinearAttentionResult {
  Value out;
  LinearAttentionState state;
};

/// Applies the feature map to a scalar of the compute type:
/// `elu(x) + 1` (`x + 1` for `x > 0`, `exp(x)` otherwise, createFastExp's
/// with `fastExp`), `relu(x)` or `x`.
static Value applyFeatureMap(OpBuilder &b, Location loc, FeatureMap map,
                             Value x, bool fastExp) {
  Type t = x.getType();
  switch (map) {
  case FeatureMap::elu_plus_one: {
    Value zero = createFloatConstant(b, loc, t, 0.0);
    Value positive =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
    Value shifted =
        arith::AddFOp::create(b, loc, x, createFloatConstant(b, loc, t, 1.0));
    Value exp = fastExp ? createFastExp(b, loc, x)
                        : Value(math::ExpOp::create(b, loc, x));
    return arith::SelectOp::create(b, loc, positive, shifted, exp);
  }
  case FeatureMap::relu:
    return arith::MaximumFOp::create(b, loc, x,
                                     createFloatConstant(b, loc, t, 0.0));
  case FeatureMap::identity:
    return x;
  }
  llvm_unreachable("unknown feature map");
}

/// `phi(x)` elementwise, in the compute type.
static Value buildFeatures(OpBuilder &b, Location loc, Value x, FeatureMap map,
                           Type computeType, bool fastExp = false) {
  Value init =
      createEmptyTensor(b, loc, tensor::getMixedSizes(b, loc, x), computeType);
  AffineMap identity = b.getMultiDimIdentityMap(4);
  return buildGeneric(
      b, loc, x, init, {identity, identity}, getIteratorTypes(4),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        return applyFeatureMap(nb, nloc, map,
                               convertScalar(nb, nloc, args[0], computeType),
                               fastExp);
      });
}

/// Non-causal linear attention on features `phiQ, phiK: [b, h, n, d]` and
/// values `v: [b, h, n, e]`, into `init: [b, h, n, e]` (the body converts to
/// its element type).
static Value buildGlobalLinearAttention(OpBuilder &b, Location loc, Value phiQ,
                                        Value phiK, Value v, Value init,
                                        double eps) {
  MLIRContext *ctx = b.getContext();
  Type t = cast<RankedTensorType>(phiQ.getType()).getElementType();
  Type outType = cast<RankedTensorType>(init.getType()).getElementType();
  SmallVector<OpFoldResult> qSizes = tensor::getMixedSizes(b, loc, phiQ);
  SmallVector<OpFoldResult> vSizes = tensor::getMixedSizes(b, loc, v);
  OpFoldResult batch = qSizes[0], heads = qSizes[1], d = qSizes[3],
               e = vSizes[3];

  // S[b, h, d, e] = sum_j phiK[b, h, j, d] v[b, h, j, e]; loops (b,h,d,e,j).
  Value kv = buildGeneric(
      b, loc, ValueRange{phiK, v}, createZeros(b, loc, {batch, heads, d, e}, t),
      {getDimsMap(ctx, 5, {0, 1, 4, 2}), getDimsMap(ctx, 5, {0, 1, 4, 3}),
       getDimsMap(ctx, 5, {0, 1, 2, 3})},
      getIteratorTypes(5, {4}),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value vValue = convertScalar(nb, nloc, args[1], t);
        return multiplyAdd(nb, nloc, {args[0], vValue, args[2]});
      });
  // z[b, h, d] = sum_j phiK[b, h, j, d]; loops (b, h, d, j).
  Value keySum = buildGeneric(
      b, loc, phiK, createZeros(b, loc, {batch, heads, d}, t),
      {getDimsMap(ctx, 4, {0, 1, 3, 2}), getDimsMap(ctx, 4, {0, 1, 2})},
      getIteratorTypes(4, {3}),
      [](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        return arith::AddFOp::create(nb, nloc, args[1], args[0]);
      });
  // den[b, h, i] = sum_d phiQ[b, h, i, d] z[b, h, d]; loops (b, h, i, d).
  Value normalizer = buildGeneric(
      b, loc, ValueRange{phiQ, keySum},
      createZeros(b, loc, {batch, heads, qSizes[2]}, t),
      {getDimsMap(ctx, 4, {0, 1, 2, 3}), getDimsMap(ctx, 4, {0, 1, 3}),
       getDimsMap(ctx, 4, {0, 1, 2})},
      getIteratorTypes(4, {3}), multiplyAdd);
  // num[b, h, i, e] = sum_d phiQ[b, h, i, d] S[b, h, d, e]; loops
  // (b, h, i, e, d).
  Value numerator = buildGeneric(
      b, loc, ValueRange{phiQ, kv},
      createZeros(b, loc, {batch, heads, qSizes[2], e}, t),
      {getDimsMap(ctx, 5, {0, 1, 2, 4}), getDimsMap(ctx, 5, {0, 1, 4, 3}),
       getDimsMap(ctx, 5, {0, 1, 2, 3})},
      getIteratorTypes(5, {4}), multiplyAdd);
  // out = num / (den + eps).
  Value epsValue = createFloatConstant(b, loc, t, eps);
  return buildGeneric(
      b, loc, ValueRange{numerator, normalizer}, init,
      {getDimsMap(ctx, 4, {0, 1, 2, 3}), getDimsMap(ctx, 4, {0, 1, 2}),
       getDimsMap(ctx, 4, {0, 1, 2, 3})},
      getIteratorTypes(4), [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value out = normalize(nb, nloc, args[0], args[1], epsValue);
        return convertScalar(nb, nloc, out, outType);
      });
}

/// Causal linear attention by the recurrent form. For each i in order, in
/// parallel over batch and heads:
///   S += phi(k_i) v_i^T,  z += phi(k_i),
///   out_i = phi(q_i)^T S / (phi(q_i) . z + eps).
/// The sums start from `initial` when it is set.
static LinearAttentionResult
buildCausalLinearAttention(OpBuilder &b, Location loc, Value phiQ, Value phiK,
                           Value v, double eps, LinearAttentionState initial) {
  MLIRContext *ctx = b.getContext();
  Type t = cast<RankedTensorType>(phiQ.getType()).getElementType();
  SmallVector<OpFoldResult> qSizes = tensor::getMixedSizes(b, loc, phiQ);
  SmallVector<OpFoldResult> vSizes = tensor::getMixedSizes(b, loc, v);
  OpFoldResult batch = qSizes[0], heads = qSizes[1], d = qSizes[3],
               e = vSizes[3];
  SmallVector<OpFoldResult> outSizes{batch, heads, qSizes[2], e};

  Value kv = createStateInit(b, loc, initial.kv, {batch, heads, d, e}, t);
  Value keySum = createStateInit(b, loc, initial.keySum, {batch, heads, d}, t);
  Value normalizer = createEmptyTensor(b, loc, {batch, heads}, t);
  Value out = createZeros(b, loc, outSizes, t);
  Value zero = createIndexConstant(b, loc, 0);
  Value zeroF = createFloatConstant(b, loc, t, 0.0);
  Value one = createIndexConstant(b, loc, 1);
  Value end = getValueOrCreateIndex(b, loc, qSizes[2]);
  Value epsValue = createFloatConstant(b, loc, t, eps);

  auto loop = scf::ForOp::create(
      b, loc, zero, end, one, ValueRange{kv, keySum, normalizer, out},
      [&](OpBuilder &nb, Location nloc, Value i, ValueRange iterArgs) {
        Value qRow = extractSliceAt(nb, nloc, phiQ, qSizes, /*dim=*/2, i);
        Value kRow = extractSliceAt(nb, nloc, phiK, qSizes, /*dim=*/2, i);
        Value vRow = extractSliceAt(nb, nloc, v, vSizes, /*dim=*/2, i);
        // S[b, h, d, e] += phiK[b, h, i, d] v[b, h, i, e].
        Value newKv = buildGeneric(
            nb, nloc, ValueRange{kRow, vRow}, iterArgs[0],
            {getDimsMap(ctx, 4, {0, 1, kUnitDim, 2}),
             getDimsMap(ctx, 4, {0, 1, kUnitDim, 3}),
             getDimsMap(ctx, 4, {0, 1, 2, 3})},
            getIteratorTypes(4),
            [&](OpBuilder &bb, Location bl, ValueRange args) {
              Value vValue = convertScalar(bb, bl, args[1], t);
              return multiplyAdd(bb, bl, {args[0], vValue, args[2]});
            });
        // z[b, h, d] += phiK[b, h, i, d].
        Value newKeySum = buildGeneric(
            nb, nloc, kRow, iterArgs[1],
            {getDimsMap(ctx, 3, {0, 1, kUnitDim, 2}),
             getDimsMap(ctx, 3, {0, 1, 2})},
            getIteratorTypes(3),
            [](OpBuilder &bb, Location bl, ValueRange args) -> Value {
              return arith::AddFOp::create(bb, bl, args[1], args[0]);
            });
        // den[b, h] = sum_d phiQ[b, h, i, d] z[b, h, d].
        Value den = linalg::FillOp::create(nb, nloc, ValueRange{zeroF},
                                           ValueRange{iterArgs[2]})
                        .getResult(0);
        den = buildGeneric(nb, nloc, ValueRange{qRow, newKeySum}, den,
                           {getDimsMap(ctx, 3, {0, 1, kUnitDim, 2}),
                            getDimsMap(ctx, 3, {0, 1, 2}),
                            getDimsMap(ctx, 3, {0, 1})},
                           getIteratorTypes(3, {2}), multiplyAdd);
        // out[b, h, i, e] = sum_d phiQ[b, h, i, d] S[b, h, d, e], then
        // divided by den + eps. The row starts at 0 (the fill of `out`).
        Value outRow =
            extractSliceAt(nb, nloc, iterArgs[3], outSizes, /*dim=*/2, i);
        outRow = buildGeneric(nb, nloc, ValueRange{qRow, newKv}, outRow,
                              {getDimsMap(ctx, 4, {0, 1, kUnitDim, 3}),
                               getDimsMap(ctx, 4, {0, 1, 3, 2}),
                               getDimsMap(ctx, 4, {0, 1, kUnitDim, 2})},
                              getIteratorTypes(4, {3}), multiplyAdd);
        outRow = buildGeneric(
            nb, nloc, den, outRow,
            {getDimsMap(ctx, 3, {0, 1}),
             getDimsMap(ctx, 3, {0, 1, kUnitDim, 2})},
            getIteratorTypes(3),
            [&](OpBuilder &bb, Location bl, ValueRange args) -> Value {
              return normalize(bb, bl, args[1], args[0], epsValue);
            });
        Value newOut = insertSliceAt(nb, nloc, outRow, iterArgs[3], outSizes,
                                     /*dim=*/2, i);
        scf::YieldOp::create(nb, nloc,
                             ValueRange{newKv, newKeySum, den, newOut});
      });
  return {loop.getResult(3), {loop.getResult(0), loop.getResult(1)}};
}

/// Body of a loop over chunks of tokens: given the chunk's first token
/// `start`, its length `len` and the loop-carried values, returns the values
/// to yield.
using ChunkBodyFn = function_ref<SmallVector<Value>(
    OpBuilder &, Location, Value start, OpFoldResult len, ValueRange)>;

/// An `scf.for` over the chunks [start, start + len) of `chunk` tokens of
/// `n`, len = min(chunk, n - start) (the last chunk may be partial),
/// carrying `inits`.
static scf::ForOp buildTokenChunkLoop(OpBuilder &b, Location loc,
                                      OpFoldResult n, int64_t chunk,
                                      ValueRange inits, ChunkBodyFn body) {
  Value step = createIndexConstant(b, loc, chunk);
  Value end = getValueOrCreateIndex(b, loc, n);
  return scf::ForOp::create(
      b, loc, createIndexConstant(b, loc, 0), end, step, inits,
      [&](OpBuilder &nb, Location nloc, Value start, ValueRange iterArgs) {
        Value remaining = arith::SubIOp::create(nb, nloc, end, start);
        OpFoldResult len =
            arith::MinSIOp::create(nb, nloc, step, remaining).getResult();
        scf::YieldOp::create(nb, nloc, body(nb, nloc, start, len, iterArgs));
      });
}

/// The features of rows [start, start + len) of `x: [b, h, n, d]`, in f32:
/// computed per chunk, so that a chunk's features are written and read
/// while they are in cache, and with the short exp (createFastExp), whose
/// results lie in (0, 1] here.
static Value buildChunkFeatures(OpBuilder &b, Location loc, Value x,
                                ArrayRef<OpFoldResult> sizes, Value start,
                                OpFoldResult len, FeatureMap map) {
  Value rows = extractSliceRange(b, loc, x, sizes, 2, start, len);
  return buildFeatures(b, loc, rows, map, b.getF32Type(), /*fastExp=*/true);
}

/// `S[b, h, r, e] += sum_j kc[b, h, j, r] vc[b, h, j, e]` and `z[b, h, 0, r]
/// += sum_j ones[0, j] kc[b, h, j, r]`: a chunk's features `kc` and values
/// `vc` added to the state, as contractions (loops (b, h, r, e, j) and
/// (b, h, 0, r, j)).
static LinearAttentionState addChunkToState(OpBuilder &b, Location loc,
                                            Value kc, Value vc, Value onesC,
                                            LinearAttentionState state) {
  MLIRContext *ctx = b.getContext();
  AffineMap rhsMap = getDimsMap(ctx, 5, {0, 1, 4, 3});
  AffineMap accMap = getDimsMap(ctx, 5, {0, 1, 2, 3});
  Value kv = buildGeneric(b, loc, ValueRange{kc, vc}, state.kv,
                          {getDimsMap(ctx, 5, {0, 1, 4, 2}), rhsMap, accMap},
                          getIteratorTypes(5, {4}), multiplyAdd);
  Value keySum = buildGeneric(b, loc, ValueRange{onesC, kc}, state.keySum,
                              {getDimsMap(ctx, 5, {2, 4}), rhsMap, accMap},
                              getIteratorTypes(5, {4}), multiplyAdd);
  return {kv, keySum};
}

/// A chunk's output `num / (den + eps)` from its query features `qc: [b, h,
/// len, d]` and the state `S: [b, h, d, e]`, `z: [b, h, 1, d]`:
///   num[b, h, i, e] = sum_r qc[b, h, i, r] S[b, h, r, e]
///   den[b, h, i, 0] = sum_r qc[b, h, i, r] z[b, h, 0, r]
/// and, with `scores` (the causal form's masked `A: [b, h, len, len]`),
/// `+ sum_j A[b, h, i, j] vc[b, h, j, e]` and `+ sum_j A[b, h, i, j] ones[0,
/// j]`. Every product is a contraction over the last loop (b, h, i, e or 0,
/// r or j).
static Value buildChunkOutput(OpBuilder &b, Location loc, Value qc,
                              LinearAttentionState state, Value scores,
                              Value vc, Value onesC, double eps) {
  MLIRContext *ctx = b.getContext();
  Type t = cast<RankedTensorType>(qc.getType()).getElementType();
  SmallVector<OpFoldResult> qSizes = tensor::getMixedSizes(b, loc, qc);
  OpFoldResult batch = qSizes[0], heads = qSizes[1], len = qSizes[2],
               e = tensor::getMixedSize(b, loc, state.kv, 3),
               unit = b.getIndexAttr(1);
  AffineMap lhsMap = getDimsMap(ctx, 5, {0, 1, 2, 4});
  AffineMap rhsMap = getDimsMap(ctx, 5, {0, 1, 4, 3});
  AffineMap accMap = getDimsMap(ctx, 5, {0, 1, 2, 3});
  AffineMap rhsTransposedMap = getDimsMap(ctx, 5, {0, 1, 3, 4});

  Value den = buildGeneric(b, loc, ValueRange{qc, state.keySum},
                           createZeros(b, loc, {batch, heads, len, unit}, t),
                           {lhsMap, rhsTransposedMap, accMap},
                           getIteratorTypes(5, {4}), multiplyAdd);
  Value num = buildGeneric(b, loc, ValueRange{qc, state.kv},
                           createZeros(b, loc, {batch, heads, len, e}, t),
                           {lhsMap, rhsMap, accMap}, getIteratorTypes(5, {4}),
                           multiplyAdd);
  if (scores) {
    den = buildGeneric(b, loc, ValueRange{scores, onesC}, den,
                       {lhsMap, getDimsMap(ctx, 5, {3, 4}), accMap},
                       getIteratorTypes(5, {4}), multiplyAdd);
    num = buildGeneric(b, loc, ValueRange{scores, vc}, num,
                       {lhsMap, rhsMap, accMap}, getIteratorTypes(5, {4}),
                       multiplyAdd);
  }
  // num / (den + eps): den is constant along each row of num, which the
  // CPU's contraction kernels read once per row of a tile when they take
  // the division as num's epilogue.
  AffineMap identity = b.getMultiDimIdentityMap(4);
  Value epsValue = createFloatConstant(b, loc, t, eps);
  return buildGeneric(
      b, loc, ValueRange{num, den},
      createEmptyTensor(b, loc, {batch, heads, len, e}, t),
      {identity, getDimsMap(ctx, 4, {0, 1, 2, kUnitDim}), identity},
      getIteratorTypes(4), [&](OpBuilder &nb, Location nloc, ValueRange args) {
        return normalize(nb, nloc, args[0], args[1], epsValue);
      });
}

/// A row of `chunk` ones, whose products with a chunk are its row and
/// column sums.
static Value createOnes(OpBuilder &b, Location loc, int64_t chunk, Type t) {
  return createFilledTensor(b, loc, {b.getIndexAttr(1), b.getIndexAttr(chunk)},
                            t, createFloatConstant(b, loc, t, 1.0));
}

/// The first `len` of the row of ones `ones: [1, chunk]` (createOnes).
static Value sliceOnes(OpBuilder &b, Location loc, Value ones,
                       OpFoldResult len) {
  return extractSliceRange(b, loc, ones, tensor::getMixedSizes(b, loc, ones), 1,
                           b.getIndexAttr(0), len);
}

/// The loop over chunks of `chunk` tokens of the chunked causal form (see
/// the file comment), on `q, k: [b, h, n, d]` (the features computed per
/// chunk) and values `v: [b, h, n, e]`, carrying the state `kv: [b, h, d,
/// e]` and `keySum: [b, h, 1, d]` from their initial values and writing
/// `out: [b, h, n, e]`. Returns the loop (its results: S, z, out).
static scf::ForOp buildCausalChunkLoop(OpBuilder &b, Location loc, Value q,
                                       Value k, Value v, FeatureMap map,
                                       double eps, int64_t chunk, Value kv,
                                       Value keySum, Value out) {
  MLIRContext *ctx = b.getContext();
  Type t = b.getF32Type();
  SmallVector<OpFoldResult> qSizes = tensor::getMixedSizes(b, loc, q);
  SmallVector<OpFoldResult> vSizes = tensor::getMixedSizes(b, loc, v);
  OpFoldResult batch = qSizes[0], heads = qSizes[1], e = vSizes[3];
  SmallVector<OpFoldResult> outSizes{batch, heads, qSizes[2], e};
  Value ones = createOnes(b, loc, chunk, t);
  Value zeroF = createFloatConstant(b, loc, t, 0.0);

  return buildTokenChunkLoop(
      b, loc, qSizes[2], chunk, ValueRange{kv, keySum, out},
      [&](OpBuilder &nb, Location nloc, Value start, OpFoldResult len,
          ValueRange iterArgs) -> SmallVector<Value> {
        Value qc = buildChunkFeatures(nb, nloc, q, qSizes, start, len, map);
        Value kc = buildChunkFeatures(nb, nloc, k, qSizes, start, len, map);
        Value vc = extractSliceRange(nb, nloc, v, vSizes, 2, start, len);
        Value onesC = sliceOnes(nb, nloc, ones, len);
        LinearAttentionState state{iterArgs[0], iterArgs[1]};

        // A[b, h, i, j] = sum_r qc[b, h, i, r] kc[b, h, j, r]; loops
        // (b, h, i, j, r).
        Value scores = buildGeneric(
            nb, nloc, ValueRange{qc, kc},
            createZeros(nb, nloc, {batch, heads, len, len}, t),
            {getDimsMap(ctx, 5, {0, 1, 2, 4}), getDimsMap(ctx, 5, {0, 1, 3, 4}),
             getDimsMap(ctx, 5, {0, 1, 2, 3})},
            getIteratorTypes(5, {4}), multiplyAdd);
        // Query i sees keys j <= i.
        AffineMap identity = nb.getMultiDimIdentityMap(4);
        scores = buildGeneric(
            nb, nloc, scores,
            createEmptyTensor(nb, nloc, {batch, heads, len, len}, t),
            {identity, identity}, getIteratorTypes(4),
            [&](OpBuilder &bb, Location bl, ValueRange args) -> Value {
              Value i = linalg::IndexOp::create(bb, bl, 2);
              Value j = linalg::IndexOp::create(bb, bl, 3);
              Value seen = arith::CmpIOp::create(
                  bb, bl, arith::CmpIPredicate::ule, j, i);
              return arith::SelectOp::create(bb, bl, seen, args[0], zeroF);
            });

        Value outC =
            buildChunkOutput(nb, nloc, qc, state, scores, vc, onesC, eps);
        Value newOut = insertSliceRange(nb, nloc, outC, iterArgs[2], outSizes,
                                        2, start, len);
        state = addChunkToState(nb, nloc, kc, vc, onesC, state);
        return {state.kv, state.keySum, newOut};
      });
}

/// The non-causal form by chunks of `chunk` tokens (see the file comment)
/// on `q, k: [b, h, n, d]` and `v: [b, h, n, e]`: a first loop over the
/// chunks sums the state S and z from zeros, a second writes each chunk's
/// rows of `out: [b, h, n, e]`. Returns the output.
static Value buildGlobalChunkLoops(OpBuilder &b, Location loc, Value q, Value k,
                                   Value v, FeatureMap map, double eps,
                                   int64_t chunk, Value out) {
  Type t = b.getF32Type();
  SmallVector<OpFoldResult> qSizes = tensor::getMixedSizes(b, loc, q);
  SmallVector<OpFoldResult> vSizes = tensor::getMixedSizes(b, loc, v);
  OpFoldResult batch = qSizes[0], heads = qSizes[1], d = qSizes[3],
               e = vSizes[3], unit = b.getIndexAttr(1);
  SmallVector<OpFoldResult> outSizes{batch, heads, qSizes[2], e};
  Value ones = createOnes(b, loc, chunk, t);

  scf::ForOp sums = buildTokenChunkLoop(
      b, loc, qSizes[2], chunk,
      ValueRange{createZeros(b, loc, {batch, heads, d, e}, t),
                 createZeros(b, loc, {batch, heads, unit, d}, t)},
      [&](OpBuilder &nb, Location nloc, Value start, OpFoldResult len,
          ValueRange iterArgs) -> SmallVector<Value> {
        Value kc = buildChunkFeatures(nb, nloc, k, qSizes, start, len, map);
        Value vc = extractSliceRange(nb, nloc, v, vSizes, 2, start, len);
        LinearAttentionState state =
            addChunkToState(nb, nloc, kc, vc, sliceOnes(nb, nloc, ones, len),
                            {iterArgs[0], iterArgs[1]});
        return {state.kv, state.keySum};
      });
  LinearAttentionState state{sums.getResult(0), sums.getResult(1)};
  scf::ForOp outputs = buildTokenChunkLoop(
      b, loc, qSizes[2], chunk, ValueRange{out},
      [&](OpBuilder &nb, Location nloc, Value start, OpFoldResult len,
          ValueRange iterArgs) -> SmallVector<Value> {
        Value qc = buildChunkFeatures(nb, nloc, q, qSizes, start, len, map);
        Value outC = buildChunkOutput(nb, nloc, qc, state, /*scores=*/{},
                                      /*vc=*/{}, /*onesC=*/{}, eps);
        return {insertSliceRange(nb, nloc, outC, iterArgs[0], outSizes, 2,
                                 start, len)};
      });
  return outputs.getResult(0);
}

/// Linear attention by chunks of `chunk` tokens (see the file comment), on
/// f32 `q, k: [b, h, n, d]` and `v: [b, h, n, e]`: causal (the sums
/// starting from `initial` when it is set) or not. With `perHead`, an
/// `scf.forall` over (batch, heads) runs each pair's chunks in turn, its
/// state of d x e in the cache of its core; else the loop over chunks is
/// outermost, its contractions batched over (batch, heads).
static LinearAttentionResult
buildChunkedLinearAttention(OpBuilder &b, Location loc, Value q, Value k,
                            Value v, FeatureMap map, bool causal, double eps,
                            int64_t chunk, LinearAttentionState initial,
                            bool perHead) {
  Type t = b.getF32Type();
  SmallVector<OpFoldResult> qSizes = tensor::getMixedSizes(b, loc, q);
  SmallVector<OpFoldResult> vSizes = tensor::getMixedSizes(b, loc, v);
  OpFoldResult batch = qSizes[0], heads = qSizes[1], n = qSizes[2],
               d = qSizes[3], e = vSizes[3];
  OpFoldResult unit = b.getIndexAttr(1);

  // The tensors the loops update: the causal form's state, S[b, h, d, e]
  // and z[b, h, 0, d] (z keeps a unit dimension so that its products are
  // contractions with a loop of extent 1), and the output, each with its
  // [rows, cols] per pair.
  SmallVector<Value> shared;
  SmallVector<std::pair<OpFoldResult, OpFoldResult>> shapes;
  if (causal) {
    shared.push_back(
        createStateInit(b, loc, initial.kv, {batch, heads, d, e}, t));
    shared.push_back(createStateInit(b, loc, initial.keySum,
                                     {batch, heads, unit, d}, t,
                                     /*unitDims=*/{2}));
    shapes.append({{d, e}, {unit, d}});
  }
  shared.push_back(createEmptyTensor(b, loc, {batch, heads, n, e}, t));
  shapes.push_back({n, e});
  // The loops on `q, k, v` and the shared tensors, returning their values.
  auto buildLoops = [&](OpBuilder &lb, Value q, Value k, Value v,
                        ValueRange shared) -> SmallVector<Value> {
    if (causal) {
      scf::ForOp loop = buildCausalChunkLoop(lb, loc, q, k, v, map, eps, chunk,
                                             shared[0], shared[1], shared[2]);
      return SmallVector<Value>(loop.getResults());
    }
    return {
        buildGlobalChunkLoops(lb, loc, q, k, v, map, eps, chunk, shared[0])};
  };
  SmallVector<Value> results;
  if (!perHead) {
    results = buildLoops(b, q, k, v, shared);
  } else {
    auto forall = scf::ForallOp::create(
        b, loc, ArrayRef<OpFoldResult>{batch, heads}, shared, std::nullopt,
        [&](OpBuilder &fb, Location, ValueRange args) {
          OpFoldResult zero = fb.getIndexAttr(0);
          SmallVector<OpFoldResult> offsets{args[0], args[1], zero, zero};
          SmallVector<OpFoldResult> strides(4, unit);
          // The pair's [1, 1, rows, cols] of a [b, h, rows, cols] tensor.
          auto pairSlice = [&](Value source, OpFoldResult rows,
                               OpFoldResult cols) {
            return tensor::ExtractSliceOp::create(
                       fb, loc, source, offsets,
                       ArrayRef<OpFoldResult>{unit, unit, rows, cols}, strides)
                .getResult();
          };
          SmallVector<Value> pairShared;
          for (auto [index, shape] : llvm::enumerate(shapes))
            pairShared.push_back(
                pairSlice(args[2 + index], shape.first, shape.second));
          SmallVector<Value> pairResults =
              buildLoops(fb, pairSlice(q, n, d), pairSlice(k, n, d),
                         pairSlice(v, n, e), pairShared);
          auto inParallel = scf::InParallelOp::create(fb, loc);
          OpBuilder::InsertionGuard guard(fb);
          fb.setInsertionPointToStart(inParallel.getBody());
          for (auto [index, shape] : llvm::enumerate(shapes))
            tensor::ParallelInsertSliceOp::create(
                fb, loc, pairResults[index], args[2 + index], offsets,
                ArrayRef<OpFoldResult>{unit, unit, shape.first, shape.second},
                strides);
        });
    results.assign(forall.getResults().begin(), forall.getResults().end());
  }
  if (!causal)
    return {results[0], {}};
  // z without its unit dimension: [b, h, d].
  Value finalKeySum = tensor::CollapseShapeOp::create(
      b, loc, results[1], ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  return {results[2], {results[0], finalKeySum}};
}

/// Replaces `op` by the output and final state of a form, converted to the
/// op's element type (the final state only when the op returns it).
static void replaceLinearAttention(PatternRewriter &rewriter,
                                   LinearAttentionOp op,
                                   LinearAttentionResult result) {
  Location loc = op.getLoc();
  Type elementType = op.getResult().getType().getElementType();
  SmallVector<Value> replacements;
  auto finish = [&](Value value, Type type) {
    value = convertElementType(rewriter, loc, value, elementType);
    replacements.push_back(castToType(rewriter, loc, value, type));
  };
  finish(result.out, op.getResult().getType());
  if (op.getFinalState()) {
    finish(result.state.kv, op.getFinalState().getType());
    finish(result.state.keySum, op.getFinalNormalizer().getType());
  }
  rewriter.replaceOp(op, replacements);
}

namespace {
/// `seq.linear_attention`: feature maps, then the reassociated (non-causal)
/// or recurrent (causal) form.
struct LinearAttentionOpLowering : public OpRewritePattern<LinearAttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LinearAttentionOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getQuery().getType().getRank() != 4 ||
        op.getKey().getType().getRank() != 4 ||
        op.getValue().getType().getRank() != 4)
      return emitLoweringError(rewriter, op,
                               "expected query, key and value of rank 4");
    Location loc = op.getLoc();
    Type elementType = op.getResult().getType().getElementType();
    Type computeType = getComputeType(elementType);
    FeatureMap map = op.getFeatureMap();
    double eps = op.getEps().convertToDouble();

    Value phiQ = buildFeatures(rewriter, loc, op.getQuery(), map, computeType);
    Value phiK = buildFeatures(rewriter, loc, op.getKey(), map, computeType);
    Value v = op.getValue();
    SmallVector<OpFoldResult> outSizes =
        tensor::getMixedSizes(rewriter, loc, phiQ);
    outSizes[3] = tensor::getMixedSize(rewriter, loc, v, 3);

    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] seq.linear_attention at " << loc << ": "
               << (op.getCausal() ? "causal, the token-by-token recurrence"
                                  : "non-causal, reassociated")
               << ", feature map " << stringifyFeatureMap(map) << ", in "
               << computeType << "\n");
    if (op.getCausal()) {
      replaceLinearAttention(
          rewriter, op,
          buildCausalLinearAttention(
              rewriter, loc, phiQ, phiK, v, eps,
              {op.getInitialState(), op.getInitialNormalizer()}));
      return success();
    }
    Value init = createEmptyTensor(rewriter, loc, outSizes, elementType);
    Value result =
        buildGlobalLinearAttention(rewriter, loc, phiQ, phiK, v, init, eps);
    rewriter.replaceOp(
        op, castToType(rewriter, loc, result, op.getResult().getType()));
    return success();
  }
};

/// Causal `seq.linear_attention` on f32 by chunks of `chunk` tokens;
/// preferred over the recurrent form.
struct ChunkedLinearAttentionLowering
    : public OpRewritePattern<LinearAttentionOp> {
  ChunkedLinearAttentionLowering(MLIRContext *context, int64_t chunk,
                                 bool perHead, bool remarks)
      : OpRewritePattern(context, /*benefit=*/2), chunk(chunk),
        perHead(perHead), remarks(remarks) {}

  /// Declines `op` for the reference form, saying why when asked.
  LogicalResult decline(LinearAttentionOp op, const Twine &why) const {
    return declineFastForm(op, remarks,
                           op.getCausal()
                               ? "causal linear attention takes the "
                                 "token-by-token recurrent lowering"
                               : "linear attention takes the reassociated "
                                 "reference lowering (whole-sequence "
                                 "contractions)",
                           why);
  }

  LogicalResult matchAndRewrite(LinearAttentionOp op,
                                PatternRewriter &rewriter) const override {
    // Without per-head loops (the GPU) the non-causal form's whole-sequence
    // contractions are batched kernels already; chunks would only split
    // them.
    if (!op.getCausal() && !perHead)
      return failure();
    if (op.getQuery().getType().getRank() != 4 ||
        op.getKey().getType().getRank() != 4 ||
        op.getValue().getType().getRank() != 4)
      return failure(); // the reference lowering reports it
    Type f32 = rewriter.getF32Type();
    for (Value operand : op->getOperands())
      if (cast<RankedTensorType>(operand.getType()).getElementType() != f32)
        return decline(op, "an operand is not f32 (the chunked form's "
                           "contractions are f32 kernels)");
    if (op.getResult().getType().getElementType() != f32)
      return decline(op, "the result is not f32");

    Location loc = op.getLoc();
    FeatureMap map = op.getFeatureMap();
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] seq.linear_attention at " << loc << ": "
               << (op.getCausal() ? "causal" : "non-causal") << ", chunks of "
               << chunk << " tokens" << (perHead ? " per head" : "")
               << ", feature map " << stringifyFeatureMap(map)
               << (op.getInitialState() ? ", initial state" : "")
               << (op.getFinalState() ? ", final state" : "") << "\n");
    replaceLinearAttention(
        rewriter, op,
        buildChunkedLinearAttention(
            rewriter, loc, op.getQuery(), op.getKey(), op.getValue(), map,
            op.getCausal(), op.getEps().convertToDouble(), chunk,
            {op.getInitialState(), op.getInitialNormalizer()}, perHead));
    return success();
  }

private:
  int64_t chunk;
  bool perHead;
  bool remarks;
};
} // namespace

void mlir::seq::populateLinearAttentionToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LinearAttentionOpLowering>(patterns.getContext());
}

void mlir::seq::populateChunkedLinearAttentionToLinalgPatterns(
    RewritePatternSet &patterns, int64_t chunk, bool perHead, bool remarks) {
  if (chunk > 0)
    patterns.add<ChunkedLinearAttentionLowering>(patterns.getContext(), chunk,
                                                 perHead, remarks);
}
