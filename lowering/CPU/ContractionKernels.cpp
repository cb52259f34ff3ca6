//===- ContractionKernels.cpp - register-tiled contraction kernels --------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The loop nests of seq-cpu-vectorize-contractions' dot and broadcast
// kernels (ContractionKernels.h), and the tiling they get per target.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/ContractionKernels.h"
#include "lowering/CPU/KernelUtils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::seq::cpu;

ContractionTiling mlir::seq::cpu::getContractionTiling(
    ContractionKernel kernel, int64_t vectorBits, int64_t vectorRegisters) {
  ContractionTiling t;
  t.lanes = std::max<int64_t>(1, vectorBits / 32);
  bool wide = vectorRegisters >= 32;
  if (kernel == ContractionKernel::Dot) {
    // mr * nr accumulators + mr + nr operand vectors.
    t.mr = wide ? 4 : 3;
    t.nr = wide ? 4 : 3;
    t.mc = 64;
    t.nc = 64;
  } else {
    // mr * nv accumulators + nv row vectors + one broadcast.
    t.mr = broadcastTileRows();
    t.nr = broadcastTileVectors(vectorRegisters);
    t.mc = 48;
    t.nc = 4 * t.nr * t.lanes;
  }
  return t;
}

namespace {

/// Emits the loop nest of one contraction.
class ContractionEmitter {
public:
  ContractionEmitter(ContractionMatch c, const ContractionTiling &t,
                     OpBuilder &b)
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
      SmallVector<Value> at = operandIndices(
          map.dropResults({map.getNumResults() - 3, map.getNumResults() - 2,
                           map.getNumResults() - 1}),
          iv);
      Value width = idx(c.panel);
      at.push_back(arith::DivUIOp::create(b, loc, iv[c.n], width));
      at.push_back(iv[c.k]);
      at.push_back(arith::RemUIOp::create(b, loc, iv[c.n], width));
      return at;
    }
    return operandIndices(map, iv);
  }

  void emitBlock(Value m0, Value mEnd, Value n0, Value nEnd) {
    Value mFull = fullEnd(m0, mEnd, t.mr);
    auto rows = [&](int64_t mr) {
      return [&, mr](Value m1) {
        if (c.kernel == ContractionKernel::Dot) {
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
                        ? memref::LoadOp::create(b, loc, c.initInput,
                                                 operandIndices(c.initMap, at))
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
    cloneBodyOnVectors(b, loc, *body, t.lanes, map);
    Value result = cast<linalg::YieldOp>(body->getTerminator()).getOperand(0);
    if (result.getParentBlock() != body && !map.contains(result))
      return vector::BroadcastOp::create(b, loc, vecType, result);
    return map.lookupOrDefault(result);
  }

  ContractionMatch c;
  const ContractionTiling &t;
  OpBuilder &b;
  Location loc;
  VectorType vecType, maskType;
  /// Per loop: its extent, and its value at the point being emitted.
  SmallVector<Value> extent, iv;
};

} // namespace

void mlir::seq::cpu::emitContractionKernel(OpBuilder &b,
                                           const ContractionMatch &c,
                                           const ContractionTiling &tiling) {
  ContractionEmitter(c, tiling, b).emit();
}
