//===- VectorizeContractions.cpp - register-tiled vector contractions -----===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Replaces f32 contractions on buffers (matmul, batched matmul, `x @ W^T`
// and every linalg.generic of the same shape) by cache-blocked loop nests
// whose inner kernels keep a register tile of accumulators in vector
// registers and update it with FMAs. See the pass description in Passes.td.
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

#include "lowering/CPU/KernelUtils.h"
#include "lowering/CPU/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQCPUVECTORIZECONTRACTIONS
#include "lowering/CPU/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;
using mlir::seq::cpu::hasUnitInnerStride;
using mlir::seq::cpu::isMulAddBody;

namespace {

enum class KernelKind { Dot, Broadcast };

/// A contraction C[...] += A[...] * B[...] in the form the kernels need.
struct Contraction {
  linalg::LinalgOp op;
  Value a, b, c;
  AffineMap mapA, mapB, mapC;
  /// Loop positions: the output's last dimension (n), the one before it (m,
  /// absent for a matrix-vector product), the reduction (k), and the other
  /// parallel loops (batch).
  unsigned n, k;
  std::optional<unsigned> m;
  SmallVector<unsigned> batch;
  KernelKind kind;
  /// Non-zero when B is packed in column panels of this width
  /// (seq-cpu-pack-weights): B[batch..., n floordiv w, k, n mod w].
  int64_t panel = 0;
  /// The value a linalg.fill gave all of C just before (the fill is then
  /// erased and the kernels start from it instead of loading C).
  Value initValue;
  /// Or the buffer a broadcast copy into C (a Linear's bias) read, indexed
  /// by `initMap` in terms of C's dimensions.
  Value initInput;
  AffineMap initMap;
  /// An elementwise op right after the contraction that reads C (the
  /// epilogue: activation, residual add, scaling, gate), applied to the
  /// output tile in registers; it writes its own output instead of C.
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
struct Tiling {
  int64_t lanes; // f32 elements per vector register
  int64_t mr, nr; // dot: rows x columns; broadcast: rows x vectors
  int64_t mc, nc; // rows and columns per parallel block
};

static bool mapUses(AffineMap map, unsigned dim) {
  return map.isFunctionOfDim(dim);
}

static bool lastResultIs(AffineMap map, unsigned dim) {
  return map.getNumResults() > 0 &&
         cast<AffineDimExpr>(map.getResults().back()).getPosition() == dim;
}

/// Matches `op`, or returns why it does not qualify (for the remark).
static FailureOr<Contraction> matchContraction(linalg::LinalgOp op,
                                               std::string &why) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return failure(); // not a binary contraction: nothing to report
  if (op.getNumReductionLoops() != 1)
    return failure();
  if (!isMulAddBody(op)) {
    // A product whose body grew (an elementwise producer fused into it)
    // is still worth saying; a row reduction (one input) is not a product.
    Block *body = op.getBlock();
    SmallVector<unsigned> reductions;
    op.getReductionDims(reductions);
    if (body && seq::cpu::isF32Body(body) &&
        llvm::any_of(*body, [](Operation &o) { return isa<arith::MulFOp>(o); }) &&
        llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *in) {
          return op.getMatchingIndexingMap(in).isFunctionOfDim(reductions[0]);
        }))
      why = "its body is not a multiply-add (an elementwise op was fused "
            "into it)";
    return failure();
  }
  Contraction c;
  c.op = op;
  c.a = op.getDpsInputOperand(0)->get();
  c.b = op.getDpsInputOperand(1)->get();
  c.c = op.getDpsInitOperand(0)->get();
  c.mapA = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  c.mapB = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  c.mapC = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  // A right operand in packed panels (either input position).
  unsigned panelN = 0, panelK = 0;
  if (auto width = seq::cpu::matchPanelMap(c.mapA, panelN, panelK)) {
    std::swap(c.a, c.b);
    std::swap(c.mapA, c.mapB);
    c.panel = *width;
  } else if (auto width = seq::cpu::matchPanelMap(c.mapB, panelN, panelK)) {
    c.panel = *width;
  }
  for (AffineMap map : {c.mapA, c.mapB, c.mapC})
    if (!(c.panel && map == c.mapB) &&
        (!map.isProjectedPermutation() || map.getNumResults() == 0)) {
      why = "an operand is indexed by something other than loop indices";
      return failure();
    }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned loop = 0; loop < iterators.size(); ++loop)
    if (iterators[loop] == utils::IteratorType::reduction)
      c.k = loop;
  ArrayRef<AffineExpr> outDims = c.mapC.getResults();
  c.n = cast<AffineDimExpr>(outDims.back()).getPosition();
  if (outDims.size() >= 2)
    c.m = cast<AffineDimExpr>(outDims[outDims.size() - 2]).getPosition();
  for (unsigned loop = 0; loop < iterators.size(); ++loop) {
    if (loop == c.k || loop == c.n || (c.m && loop == *c.m))
      continue;
    if (!mapUses(c.mapC, loop)) {
      why = "a parallel loop does not index the output";
      return failure();
    }
    c.batch.push_back(loop);
  }
  if (c.panel && (panelN != c.n || panelK != c.k)) {
    why = "the packed operand's panels are not along the output's columns "
          "and the reduction";
    return failure();
  }
  // B is the input that moves with the output's columns.
  if (!c.panel && mapUses(c.mapA, c.n)) {
    std::swap(c.a, c.b);
    std::swap(c.mapA, c.mapB);
  }
  if (mapUses(c.mapA, c.n) || !mapUses(c.mapB, c.n)) {
    why = "both or neither input depend on the output's last dimension";
    return failure();
  }
  if (!mapUses(c.mapA, c.k) || !mapUses(c.mapB, c.k)) {
    why = "an input does not depend on the reduction";
    return failure();
  }
  if (c.m && mapUses(c.mapB, *c.m)) {
    why = "the right operand depends on the output's rows";
    return failure();
  }
  if (!hasUnitInnerStride(c.c)) {
    why = "the output is not contiguous along its last dimension";
    return failure();
  }
  if (c.panel) {
    c.kind = KernelKind::Broadcast;
    return c;
  }
  if (lastResultIs(c.mapA, c.k) && lastResultIs(c.mapB, c.k) &&
      hasUnitInnerStride(c.a) && hasUnitInnerStride(c.b)) {
    c.kind = KernelKind::Dot;
    return c;
  }
  if (lastResultIs(c.mapB, c.n) && hasUnitInnerStride(c.b)) {
    c.kind = KernelKind::Broadcast;
    return c;
  }
  why = "no input layout the vector kernels handle (the right operand is "
        "contiguous neither along the reduction with the left one, nor along "
        "the output's columns)";
  return failure();
}

/// Emits the loop nest of one contraction.
class ContractionEmitter {
public:
  ContractionEmitter(Contraction c, const Tiling &t, OpBuilder &b)
      : c(c), t(t), b(b), loc(c.op.getLoc()),
        vecType(VectorType::get({t.lanes}, b.getF32Type())),
        maskType(VectorType::get({t.lanes}, b.getI1Type())) {}

  void emit() {
    SmallVector<Range> ranges = c.op.createLoopRanges(b, loc);
    auto size = [&](unsigned loop) {
      return getValueOrCreateConstantIndexOp(b, loc, ranges[loop].size);
    };
    extent.assign(ranges.size(), Value());
    for (unsigned loop = 0; loop < ranges.size(); ++loop)
      extent[loop] = size(loop);
    Value zero = idx(0), one = idx(1);

    SmallVector<Value> lbs, ubs, steps;
    for (unsigned loop : c.batch) {
      lbs.push_back(zero);
      ubs.push_back(extent[loop]);
      steps.push_back(one);
    }
    Value rows = c.m ? extent[*c.m] : one;
    lbs.append({zero, zero});
    ubs.append({rows, extent[c.n]});
    steps.append({idx(t.mc), idx(t.nc)});
    scf::ParallelOp::create(
        b, loc, lbs, ubs, steps,
        [&](OpBuilder &nested, Location, ValueRange ivs) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          iv.assign(extent.size(), Value());
          for (auto [loop, value] : llvm::zip(c.batch, ivs))
            iv[loop] = value;
          Value m0 = ivs[c.batch.size()], n0 = ivs[c.batch.size() + 1];
          Value mEnd = min(add(m0, idx(t.mc)), rows);
          Value nEnd = min(add(n0, idx(t.nc)), extent[c.n]);
          emitBlock(m0, mEnd, n0, nEnd);
        });
  }

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  /// lo + floor((hi - lo) / step) * step: the end of the full steps.
  Value fullEnd(Value lo, Value hi, int64_t step) {
    Value count = arith::DivUIOp::create(b, loc, sub(hi, lo), idx(step));
    return add(lo, arith::MulIOp::create(b, loc, count, idx(step)));
  }

  /// `for (x = lo; x < hi; x += step) body(x)`, with iv bound by `body`.
  void loop(Value lo, Value hi, int64_t step,
            llvm::function_ref<void(Value)> body) {
    auto forOp = scf::ForOp::create(b, loc, lo, hi, idx(step));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forOp.getBody()->getTerminator());
    body(forOp.getInductionVar());
  }

  /// The indices of an operand (indexed by `map`) at the current loops.
  SmallVector<Value> indices(AffineMap map) {
    if (c.panel && map == c.mapB) {
      // [batch..., n / w, k, n % w] of a packed B.
      SmallVector<Value> at =
          seq::cpu::operandIndices(map.dropResults({map.getNumResults() - 3,
                                                    map.getNumResults() - 2,
                                                    map.getNumResults() - 1}),
                                   iv);
      Value width = idx(c.panel);
      at.push_back(arith::DivUIOp::create(b, loc, iv[c.n], width));
      at.push_back(iv[c.k]);
      at.push_back(arith::RemUIOp::create(b, loc, iv[c.n], width));
      return at;
    }
    return seq::cpu::operandIndices(map, iv);
  }

  void emitBlock(Value m0, Value mEnd, Value n0, Value nEnd) {
    Value mFull = fullEnd(m0, mEnd, t.mr);
    auto rows = [&](int64_t mr) {
      return [&, mr](Value m1) {
        if (c.kind == KernelKind::Dot) {
          Value nFull = fullEnd(n0, nEnd, t.nr);
          loop(n0, nFull, t.nr, [&](Value n1) { dotKernel(mr, t.nr, m1, n1); });
          loop(nFull, nEnd, 1, [&](Value n1) { dotKernel(mr, 1, m1, n1); });
        } else {
          int64_t width = t.nr * t.lanes;
          Value nFull = fullEnd(n0, nEnd, width);
          loop(n0, nFull, width, [&](Value n1) {
            broadcastKernel(mr, t.nr, m1, n1, Value());
          });
          loop(nFull, nEnd, t.lanes, [&](Value n1) {
            broadcastKernel(mr, 1, m1, n1, min(sub(nEnd, n1), idx(t.lanes)));
          });
        }
      };
    };
    loop(m0, mFull, t.mr, rows(t.mr));
    loop(mFull, mEnd, 1, rows(1));
  }

  void setRow(Value m1, int64_t i) {
    if (c.m)
      iv[*c.m] = i == 0 ? m1 : add(m1, idx(i));
  }

  /// C[m1 + i, n1 + j] += sum_k A[m1 + i, k] B[n1 + j, k], for i < mr, j < nr.
  void dotKernel(int64_t mr, int64_t nr, Value m1, Value n1) {
    Value zeros = arith::ConstantOp::create(
        b, loc, vecType, DenseElementsAttr::get(vecType, 0.0f));
    SmallVector<Value> init(mr * nr, zeros);
    Value kSize = extent[c.k];
    Value kFull = fullEnd(idx(0), kSize, t.lanes);
    // One step of the reduction at k: full vectors, or masked ones.
    auto step = [&](Value k, ValueRange acc, Value mask) {
      iv[c.k] = k;
      auto load = [&](Value memref, AffineMap map) -> Value {
        if (mask)
          return vector::MaskedLoadOp::create(b, loc, vecType, memref,
                                              indices(map), mask, zeros);
        return vector::LoadOp::create(b, loc, vecType, memref, indices(map));
      };
      SmallVector<Value> as, bs;
      for (int64_t i = 0; i < mr; ++i) {
        setRow(m1, i);
        as.push_back(load(c.a, c.mapA));
      }
      for (int64_t j = 0; j < nr; ++j) {
        iv[c.n] = j == 0 ? n1 : add(n1, idx(j));
        bs.push_back(load(c.b, c.mapB));
      }
      SmallVector<Value> next;
      for (int64_t i = 0; i < mr; ++i)
        for (int64_t j = 0; j < nr; ++j)
          next.push_back(
              vector::FMAOp::create(b, loc, as[i], bs[j], acc[i * nr + j]));
      return next;
    };
    auto forOp = scf::ForOp::create(
        b, loc, idx(0), kFull, idx(t.lanes), init,
        [&](OpBuilder &nested, Location, Value k, ValueRange acc) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          scf::YieldOp::create(b, loc, step(k, acc, Value()));
        });
    // The remainder of the reduction as one masked step (all lanes off when
    // the size is a multiple of the vector).
    Value mask = vector::CreateMaskOp::create(b, loc, maskType,
                                              ValueRange{sub(kSize, kFull)});
    SmallVector<Value> acc = step(kFull, forOp.getResults(), mask);
    for (int64_t i = 0; i < mr; ++i) {
      setRow(m1, i);
      for (int64_t j = 0; j < nr; ++j) {
        iv[c.n] = j == 0 ? n1 : add(n1, idx(j));
        Value sum = vector::ReductionOp::create(
            b, loc, vector::CombiningKind::ADD, acc[i * nr + j],
            arith::FastMathFlags::reassoc);
        SmallVector<Value> at = indices(c.mapC);
        Value old = c.initValue ? c.initValue
                    : c.initInput
                        ? memref::LoadOp::create(
                              b, loc, c.initInput,
                              seq::cpu::operandIndices(c.initMap, at))
                        : memref::LoadOp::create(b, loc, c.c, at);
        memref::StoreOp::create(b, loc, arith::AddFOp::create(b, loc, old, sum),
                                c.c, at);
      }
    }
  }

  /// C[m1 + i, n1 + v * lanes + l] += sum_k A[m1 + i, k] B[k, n1 + ...], for
  /// i < mr, v < nv; `count` (nv == 1 only) masks the last vector.
  void broadcastKernel(int64_t mr, int64_t nv, Value m1, Value n1,
                       Value count) {
    Value mask = count ? vector::CreateMaskOp::create(b, loc, maskType,
                                                      ValueRange{count})
                       : Value();
    Value zeros = arith::ConstantOp::create(
        b, loc, vecType, DenseElementsAttr::get(vecType, 0.0f));
    auto column = [&](int64_t v) {
      iv[c.n] = v == 0 ? n1 : add(n1, idx(v * t.lanes));
    };
    auto load = [&](Value memref, AffineMap map) -> Value {
      if (mask)
        return vector::MaskedLoadOp::create(b, loc, vecType, memref,
                                            indices(map), mask, zeros);
      return vector::LoadOp::create(b, loc, vecType, memref, indices(map));
    };
    // The output tile starts from C: the contraction accumulates into it.
    SmallVector<Value> init;
    iv[c.k] = idx(0);
    for (int64_t i = 0; i < mr; ++i) {
      setRow(m1, i);
      for (int64_t v = 0; v < nv; ++v) {
        column(v);
        init.push_back(initialTile(mask));
      }
    }
    auto forOp = scf::ForOp::create(
        b, loc, idx(0), extent[c.k], idx(1), init,
        [&](OpBuilder &nested, Location, Value k, ValueRange acc) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          iv[c.k] = k;
          SmallVector<Value> bs;
          for (int64_t v = 0; v < nv; ++v) {
            column(v);
            bs.push_back(load(c.b, c.mapB));
          }
          SmallVector<Value> next;
          for (int64_t i = 0; i < mr; ++i) {
            setRow(m1, i);
            Value s = memref::LoadOp::create(b, loc, c.a, indices(c.mapA));
            Value splat = vector::BroadcastOp::create(b, loc, vecType, s);
            for (int64_t v = 0; v < nv; ++v)
              next.push_back(vector::FMAOp::create(b, loc, splat, bs[v],
                                                   acc[i * nv + v]));
          }
          scf::YieldOp::create(b, loc, next);
        });
    for (int64_t i = 0; i < mr; ++i) {
      setRow(m1, i);
      for (int64_t v = 0; v < nv; ++v) {
        column(v);
        Value value = forOp.getResult(i * nv + v);
        Value out = c.c;
        if (c.epilogue) {
          value = applyEpilogue(value, mask);
          out = c.epilogueOut;
        }
        if (mask)
          vector::MaskedStoreOp::create(b, loc, out, indices(c.mapC), mask,
                                        value);
        else
          vector::StoreOp::create(b, loc, value, out, indices(c.mapC));
      }
    }
  }

  /// Loads the vector of `memref` (indexed by `map` in terms of C's
  /// dimensions) at the current C vector, or broadcasts its element when the
  /// map does not depend on C's last dimension.
  Value loadAlongC(Value memref, AffineMap map, Value mask) {
    SmallVector<Value> at = indices(c.mapC), where;
    for (AffineExpr e : map.getResults())
      where.push_back(at[cast<AffineDimExpr>(e).getPosition()]);
    if (!map.isFunctionOfDim(map.getNumDims() - 1))
      return vector::BroadcastOp::create(
          b, loc, vecType, memref::LoadOp::create(b, loc, memref, where));
    if (mask) {
      Value zeros = arith::ConstantOp::create(
          b, loc, vecType, DenseElementsAttr::get(vecType, 0.0f));
      return vector::MaskedLoadOp::create(b, loc, vecType, memref, where, mask,
                                          zeros);
    }
    return vector::LoadOp::create(b, loc, vecType, memref, where);
  }

  /// The accumulators' initial value at the current C vector: C itself, or
  /// what the absorbed fill or bias copy would have written there.
  Value initialTile(Value mask) {
    if (c.initValue)
      return vector::BroadcastOp::create(b, loc, vecType, c.initValue);
    if (c.initInput)
      return loadAlongC(c.initInput, c.initMap, mask);
    int64_t rank = c.mapC.getNumResults();
    return loadAlongC(c.c, b.getMultiDimIdentityMap(rank), mask);
  }

  /// The epilogue's body on `value`, the finished C vector.
  Value applyEpilogue(Value value, Value mask) {
    Block *body = c.epilogue.getBlock();
    IRMapping map;
    for (auto [arg, memref, inC] : c.epilogueInputs)
      map.map(arg, memref ? loadAlongC(memref, inC, mask) : value);
    seq::cpu::cloneBodyOnVectors(b, loc, *body, t.lanes, map);
    Value result = cast<linalg::YieldOp>(body->getTerminator()).getOperand(0);
    if (result.getParentBlock() != body && !map.contains(result))
      return vector::BroadcastOp::create(b, loc, vecType, result);
    return map.lookupOrDefault(result);
  }

  Contraction c;
  const Tiling &t;
  OpBuilder &b;
  Location loc;
  VectorType vecType, maskType;
  /// Per loop: its extent, and its value at the point being emitted.
  SmallVector<Value> extent, iv;
};

struct SeqCPUVectorizeContractionsPass
    : public mlir::seq::impl::SeqCPUVectorizeContractionsBase<
          SeqCPUVectorizeContractionsPass> {
  using Base::Base;

  /// The register tile for the target's vector registers: the accumulators
  /// plus one row of operands must fit.
  Tiling tilingFor(KernelKind kind) const {
    Tiling t;
    t.lanes = std::max<int64_t>(1, vectorBits / 32);
    bool wide = vectorRegisters >= 32;
    if (kind == KernelKind::Dot) {
      // mr * nr accumulators + mr + nr operand vectors.
      t.mr = wide ? 4 : 3;
      t.nr = wide ? 4 : 3;
      t.mc = 64;
      t.nc = 64;
    } else {
      // mr * nv accumulators + nv row vectors + one broadcast.
      t.mr = seq::cpu::broadcastTileRows();
      t.nr = seq::cpu::broadcastTileVectors(vectorRegisters);
      t.mc = 48;
      t.nc = 4 * t.nr * t.lanes;
    }
    return t;
  }

  /// A dot-kernel contraction with a short static reduction (`q @ k^T` at
  /// head size 64) spends as much on summing lanes as on the products. When
  /// B's last two dimensions are (n, k), copies B once per call into the
  /// column panels seq-cpu-pack-weights gives weights, P[batch..., n / w, k,
  /// w] (zero-padded), and switches `c` to the broadcast kernel on them,
  /// which sums nothing across lanes and streams each panel contiguously;
  /// the copy is B's size, the products B's size times the rows. Returns the
  /// packed buffer (to free after the kernel), or null.
  static bool canPackShortReduction(const Contraction &c) {
    if (c.kind != KernelKind::Dot || !c.m)
      return false;
    auto bType = cast<MemRefType>(c.b.getType());
    int64_t rank = bType.getRank();
    ArrayRef<AffineExpr> results = c.mapB.getResults();
    return rank >= 2 && !bType.isDynamicDim(rank - 1) &&
           bType.getDimSize(rank - 1) <= kMaxPackedReduction &&
           cast<AffineDimExpr>(results[rank - 2]).getPosition() == c.n;
  }

  Value packShortReduction(Contraction &c, OpBuilder &b) const {
    auto bType = cast<MemRefType>(c.b.getType());
    int64_t rank = bType.getRank();
    ArrayRef<AffineExpr> results = c.mapB.getResults();
    Location loc = c.op.getLoc();
    int64_t width = seq::cpu::panelWidth(vectorBits, vectorRegisters);
    int64_t k = bType.getDimSize(rank - 1);
    auto idx = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    // Sizes: the batch dimensions of B, ceil(n / w), k, w.
    SmallVector<int64_t> shape(bType.getShape().drop_back(2));
    SmallVector<Value> dynamic, bounds;
    for (int64_t i = 0; i < rank - 2; ++i) {
      bounds.push_back(memref::DimOp::create(b, loc, c.b, i));
      if (ShapedType::isDynamic(shape[i]))
        dynamic.push_back(bounds.back());
    }
    Value n = memref::DimOp::create(b, loc, c.b, rank - 2);
    Value panels = arith::CeilDivUIOp::create(b, loc, n, idx(width));
    shape.append({ShapedType::kDynamic, k, width});
    dynamic.push_back(panels);
    bounds.push_back(panels);
    auto packedType = MemRefType::get(shape, bType.getElementType());
    Value packed = memref::AllocOp::create(b, loc, packedType, dynamic);
    // P[..., p, kk, j] = B[..., p * w + j, kk], or 0 past n; one parallel
    // iteration per (batch..., panel).
    Value c0 = idx(0), c1 = idx(1), cK = idx(k), cWidth = idx(width);
    Value last = arith::SubIOp::create(b, loc, n, c1);
    SmallVector<Value> zeros(bounds.size(), c0), ones(bounds.size(), c1);
    scf::ParallelOp::create(
        b, loc, zeros, bounds, ones,
        [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
          Value p = ivs.back();
          Value zero = arith::ConstantOp::create(
              nb, nloc, nb.getZeroAttr(bType.getElementType()));
          Value base = arith::MulIOp::create(nb, nloc, p, cWidth);
          // P[..., p, kk, j] for kk < k, j < w: a whole panel as a plain
          // transpose (LLVM vectorizes its inner loop over j), the last
          // partial one with the padding test.
          auto panel = [&](OpBuilder &pb, bool padded) {
            auto kLoop = scf::ForOp::create(pb, nloc, c0, cK, c1);
            OpBuilder kb = OpBuilder::atBlockBegin(kLoop.getBody());
            auto jLoop = scf::ForOp::create(kb, nloc, c0, cWidth, c1);
            OpBuilder jb = OpBuilder::atBlockBegin(jLoop.getBody());
            Value kk = kLoop.getInductionVar(), j = jLoop.getInductionVar();
            Value column = arith::AddIOp::create(jb, nloc, base, j);
            SmallVector<Value> from(ivs.drop_back()), to(ivs.drop_back());
            from.append({padded ? arith::MinUIOp::create(jb, nloc, column,
                                                         last)
                                        .getResult()
                                : column,
                         kk});
            to.append({p, kk, j});
            Value value = memref::LoadOp::create(jb, nloc, c.b, from);
            if (padded) {
              Value inside = arith::CmpIOp::create(
                  jb, nloc, arith::CmpIPredicate::ult, column, n);
              value = arith::SelectOp::create(jb, nloc, inside, value, zero);
            }
            memref::StoreOp::create(jb, nloc, value, packed, to);
          };
          Value whole = arith::CmpIOp::create(
              nb, nloc, arith::CmpIPredicate::ule,
              arith::AddIOp::create(nb, nloc, base, cWidth), n);
          auto branch = scf::IfOp::create(nb, nloc, whole, /*withElse=*/true);
          OpBuilder thenBuilder = branch.getThenBodyBuilder();
          panel(thenBuilder, /*padded=*/false);
          OpBuilder elseBuilder = branch.getElseBodyBuilder();
          panel(elseBuilder, /*padded=*/true);
        });
    // (batch..., n floordiv w, k, n mod w) in the contraction's loops.
    SmallVector<AffineExpr> packedResults(results.drop_back(2));
    AffineExpr column = results[rank - 2];
    packedResults.append(
        {column.floorDiv(width), results[rank - 1], column % width});
    c.b = packed;
    c.mapB = AffineMap::get(c.mapB.getNumDims(), 0, packedResults,
                            b.getContext());
    c.panel = width;
    c.kind = KernelKind::Broadcast;
    return packed;
  }

  /// Ops that view their operand's whole buffer under another shape.
  static bool isReshape(Operation *op) {
    return isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(
        op);
  }

  /// The buffer C is a reshape of (C itself when it is not one).
  static Value reshapeRoot(Value value) {
    while (Operation *def = value.getDefiningOp()) {
      if (!isReshape(def))
        break;
      value = def->getOperand(0);
    }
    return value;
  }

  /// The op with memory effects nearest to `op` in its block, before or
  /// after it: index arithmetic, dims, views and (after it) allocations and
  /// shape assertions in between touch nothing the contraction reads or
  /// writes.
  static Operation *effectfulNeighbor(Operation *op, bool after) {
    for (Operation *next = after ? op->getNextNode() : op->getPrevNode(); next;
         next = after ? next->getNextNode() : next->getPrevNode())
      if (!isMemoryEffectFree(next) &&
          !(after && isa<memref::AllocOp, cf::AssertOp>(next)))
        return next;
    return nullptr;
  }

  /// Whether `op` is an all-parallel linalg.generic whose output, indexed
  /// by the identity, has C's rank.
  static bool isElementwiseOnC(linalg::GenericOp op, const Contraction &c) {
    return op && op.hasPureBufferSemantics() && op.getNumDpsInits() == 1 &&
           op.getNumParallelLoops() == op.getNumLoops() &&
           op.getNumLoops() == c.mapC.getNumResults() &&
           op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() &&
           llvm::all_of(op.getIndexingMapsArray(),
                        [](AffineMap m) { return m.isProjectedPermutation(); });
  }

  /// When the op that writes C just before the contraction fills all of C
  /// (a linalg.fill of C or of the buffer it reshapes) or copies a
  /// broadcast into it (a Linear's bias: a generic whose body yields its one
  /// input), erases it and records what it wrote: the kernels start their
  /// accumulators from it instead of writing C and reading it back.
  static void absorbInit(Contraction &c) {
    Operation *prev = effectfulNeighbor(c.op, /*after=*/false);
    if (auto fill = dyn_cast_or_null<linalg::FillOp>(prev)) {
      Value target = fill.getOutputs()[0];
      if (target != c.c && target != reshapeRoot(c.c))
        return;
      c.initValue = fill.getInputs()[0];
      fill->erase();
      return;
    }
    auto copy = dyn_cast_or_null<linalg::GenericOp>(prev);
    if (!isElementwiseOnC(copy, c) || copy.getDpsInitOperand(0)->get() != c.c ||
        copy.getNumDpsInputs() != 1)
      return;
    auto yield = cast<linalg::YieldOp>(copy.getBlock()->getTerminator());
    if (yield.getNumOperands() != 1 ||
        yield.getOperand(0) != copy.getBlock()->getArgument(0))
      return;
    OpOperand *input = copy.getDpsInputOperand(0);
    AffineMap map = copy.getMatchingIndexingMap(input);
    if (map.isFunctionOfDim(map.getNumDims() - 1) &&
        !hasUnitInnerStride(input->get()))
      return;
    if (map.isFunctionOfDim(map.getNumDims() - 1) &&
        cast<AffineDimExpr>(map.getResults().back()).getPosition() !=
            map.getNumDims() - 1)
      return;
    c.initInput = input->get();
    c.initMap = map;
    copy->erase();
  }

  /// Whether the contents of `root` are never read after `op`: the next op
  /// that touches it (or a reshape of it) frees it or overwrites it without
  /// reading it (bufferization reuses dead buffers), or nothing does.
  static bool isDeadAfter(Value root, Operation *op) {
    SmallPtrSet<Value, 4> views{root};
    // All reshapes of the root, transitively.
    SmallVector<Value> worklist{root};
    while (!worklist.empty())
      for (Operation *user : worklist.pop_back_val().getUsers())
        if (isReshape(user) && views.insert(user->getResult(0)).second)
          worklist.push_back(user->getResult(0));
    auto touches = [&](Operation *candidate) {
      bool found = false;
      candidate->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          found |= views.contains(operand);
      });
      return found;
    };
    for (Operation *next = op->getNextNode(); next; next = next->getNextNode()) {
      if (isReshape(next) || isa<memref::DimOp>(next) || !touches(next))
        continue;
      if (isa<memref::DeallocOp>(next))
        return true;
      auto linalgOp = dyn_cast<linalg::LinalgOp>(next);
      if (!linalgOp)
        return false;
      for (OpOperand &operand : next->getOpOperands()) {
        if (!views.contains(operand.get()))
          continue;
        if (!linalgOp.isDpsInit(&operand) ||
            linalgOp.payloadUsesValueFromOperand(&operand))
          return false;
      }
      // Every element is written before anything reads it.
      return linalgOp.getNumReductionLoops() == 0;
    }
    return true;
  }

  /// When the op right after the contraction is an elementwise generic that
  /// reads C once at the same element (an activation, a residual add, a
  /// scaling, a gate multiply), directly or through an expand_shape that
  /// keeps C's last dimension, its other inputs are contiguous along C's
  /// rows or constant along them, and nothing reads C afterwards, records it
  /// as the epilogue: the kernels apply it to the output tile in registers
  /// and store its result, and it is erased. Its operands are collapsed to
  /// C's shape when it works on the expanded view.
  static void absorbEpilogue(Contraction &c, OpBuilder &b) {
    auto op = dyn_cast_or_null<linalg::GenericOp>(
        effectfulNeighbor(c.op, /*after=*/true));
    if (!op || !op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
        op.getNumParallelLoops() != op.getNumLoops() ||
        !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
      return;
    Block *body = op.getBlock();
    if (!seq::cpu::isF32Body(body) || !body->getArguments().back().use_empty() ||
        !llvm::all_of(body->without_terminator(),
                      seq::cpu::isVectorizableBodyOp))
      return;
    // The view of C the epilogue reads: C, or an expand_shape of it.
    unsigned rankC = c.mapC.getNumResults(), loops = op.getNumLoops();
    Value view;
    for (OpOperand *input : op.getDpsInputOperands()) {
      Value v = input->get();
      auto expand = v.getDefiningOp<memref::ExpandShapeOp>();
      if (v == c.c || (expand && expand.getSrc() == c.c)) {
        if (view || !op.getMatchingIndexingMap(input).isIdentity())
          return;
        view = v;
      }
    }
    if (!view)
      return;
    SmallVector<ReassociationIndices> reassociation;
    if (view != c.c) {
      reassociation = view.getDefiningOp<memref::ExpandShapeOp>()
                          .getReassociationIndices();
      if (reassociation.back().size() != 1)
        return; // C's columns are split: not one tile row per row
    } else if (loops != rankC) {
      return;
    }
    // Collapsing an operand to C's shape needs the identity layout.
    auto collapsible = [&](Value v) {
      auto type = cast<MemRefType>(v.getType());
      return reassociation.empty() || type.getLayout().isIdentity();
    };
    Value out = op.getDpsInitOperand(0)->get();
    if (!hasUnitInnerStride(out) || !collapsible(out))
      return;
    // The kernel writes the output while other tiles still read A and B:
    // an output in their buffer (bufferization reuses dead buffers) would
    // overwrite them.
    Value outRoot = reshapeRoot(out);
    if (outRoot == reshapeRoot(c.a) || outRoot == reshapeRoot(c.b))
      return;
    unsigned last = loops - 1;
    for (OpOperand *input : op.getDpsInputOperands()) {
      if (input->get() == view ||
          body->getArgument(input->getOperandNumber()).use_empty())
        continue;
      AffineMap map = op.getMatchingIndexingMap(input);
      // An input aliasing C would be read after the kernel wrote C.
      if (reshapeRoot(input->get()) == reshapeRoot(c.c))
        return;
      if (map.isIdentity() && hasUnitInnerStride(input->get()) &&
          collapsible(input->get()))
        continue;
      // Constant along the rows: indexed by the last loop or by nothing.
      if (map.getNumResults() == 0 ||
          (map.getNumResults() == 1 && map.isFunctionOfDim(last) &&
           hasUnitInnerStride(input->get())))
        continue;
      return;
    }
    if (!isDeadAfter(reshapeRoot(c.c), op))
      return;

    // Matched: the operands in C's coordinates, built where the kernel goes.
    b.setInsertionPoint(op);
    auto inC = [&](Value v) -> Value {
      if (reassociation.empty())
        return v;
      return memref::CollapseShapeOp::create(b, op.getLoc(), v, reassociation);
    };
    MLIRContext *ctx = op.getContext();
    for (OpOperand *input : op.getDpsInputOperands()) {
      BlockArgument arg = body->getArgument(input->getOperandNumber());
      if (arg.use_empty())
        continue;
      if (input->get() == view) {
        c.epilogueInputs.push_back({arg, Value(), AffineMap()});
        continue;
      }
      AffineMap map = op.getMatchingIndexingMap(input);
      if (map.isIdentity())
        c.epilogueInputs.push_back(
            {arg, inC(input->get()), AffineMap::getMultiDimIdentityMap(rankC, ctx)});
      else
        c.epilogueInputs.push_back(
            {arg, input->get(),
             map.getNumResults() == 0
                 ? AffineMap::get(rankC, 0, ctx)
                 : AffineMap::get(rankC, 0, getAffineDimExpr(rankC - 1, ctx))});
    }
    c.epilogueOut = inC(out);
    c.reassociation = reassociation;
    c.epilogue = op;
  }

  /// What the contraction became, for --remarks.
  static void remarkOn(Contraction c, const Tiling &t) {
    InFlightDiagnostic remark = c.op.emitRemark("contraction vectorized: ");
    if (c.kind == KernelKind::Dot)
      remark << "dot kernel, " << t.mr << " x " << t.nr << " tiles of "
             << t.lanes << "-lane accumulators";
    else
      remark << "broadcast kernel, " << t.mr << " rows x " << t.nr
             << " vectors of " << t.lanes << " lanes";
    remark << ", blocks of " << t.mc << " x " << t.nc;
    if (c.panel)
      remark << ", right operand in packed panels of " << c.panel
             << " columns";
    if (c.initValue)
      remark << ", the fill of the output folded into the accumulators";
    if (c.initInput)
      remark << ", the broadcast (bias) into the output folded into the "
                "accumulators";
    if (c.epilogue) {
      remark << ", epilogue fused into the output tile:";
      for (Operation &op : c.epilogue.getBlock()->without_terminator())
        if (!isa<arith::ConstantOp>(op))
          remark << " " << op.getName().stripDialect();
    }
  }

  /// Below this many rows a short reduction keeps the dot kernel: the copy
  /// of B would cost more than the lanes the dot kernel sums.
  static constexpr int64_t kMinPackedRows = 8;

  /// Reductions up to this long are packed for the broadcast kernel.
  static constexpr int64_t kMaxPackedReduction = 256;

  void runOnOperation() override {
    SmallVector<Contraction, 4> found;
    getOperation()->walk([&](linalg::LinalgOp op) {
      std::string why;
      FailureOr<Contraction> c = matchContraction(op, why);
      if (succeeded(c))
        found.push_back(*c);
      else if (!why.empty() && remarks)
        op.emitRemark("contraction left to the scalar loops: ") << why;
    });
    for (Contraction c : found) {
      Tiling t = tilingFor(c.kind);
      if (c.panel && c.panel != t.nr * t.lanes) {
        if (remarks)
          c.op.emitRemark("contraction left to the scalar loops: ")
              << "its operand is packed in panels of " << c.panel
              << " columns, and this target's broadcast kernel takes "
              << t.nr * t.lanes;
        continue;
      }
      absorbInit(c);
      OpBuilder b(c.op);
      Location loc = c.op.getLoc();
      // A short reduction is packed for the broadcast kernel when there are
      // enough rows to pay for the copy; with a dynamic row count (a block
      // of queries of attention, one at decode time), both kernels are
      // emitted behind a test of it.
      bool pack = canPackShortReduction(c);
      Value rows;
      if (pack) {
        auto cType = cast<MemRefType>(c.c.getType());
        unsigned at = 0;
        for (auto [i, e] : llvm::enumerate(c.mapC.getResults()))
          if (cast<AffineDimExpr>(e).getPosition() == *c.m)
            at = i;
        if (cType.isDynamicDim(at))
          rows = memref::DimOp::create(b, loc, c.c, at);
        else
          pack = cType.getDimSize(at) >= kMinPackedRows;
      }
      auto emitPacked = [&](Contraction pc, OpBuilder &pb) {
        Value packed = packShortReduction(pc, pb);
        Tiling pt = tilingFor(pc.kind);
        ContractionEmitter(pc, pt, pb).emit();
        memref::DeallocOp::create(pb, loc, packed);
        if (remarks)
          remarkOn(pc, pt);
      };
      if (pack && rows) {
        Value many = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::uge, rows,
            arith::ConstantIndexOp::create(b, loc, kMinPackedRows));
        auto branch = scf::IfOp::create(b, loc, many, /*withElse=*/true);
        OpBuilder thenBuilder = branch.getThenBodyBuilder();
        emitPacked(c, thenBuilder);
        OpBuilder elseBuilder = branch.getElseBodyBuilder();
        ContractionEmitter(c, t, elseBuilder).emit();
        if (remarks)
          remarkOn(c, t);
      } else if (pack) {
        emitPacked(c, b);
      } else {
        // With an epilogue, the kernel replaces it: what it reads and
        // writes may be defined between the two ops.
        if (c.kind == KernelKind::Broadcast)
          absorbEpilogue(c, b);
        ContractionEmitter(c, t, b).emit();
        if (remarks)
          remarkOn(c, t);
        if (c.epilogue)
          c.epilogue->erase();
      }
      c.op->erase();
    }
  }
};

} // namespace
