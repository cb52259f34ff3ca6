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

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

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
    // A block is one tile wide, and a thread runs a column's blocks in turn
    // (emit orders the parallel loops columns first): B's strip of k x nr
    // vectors (the weights' panel: 768 KiB at k = 3072 with 16 lanes, 192
    // KiB with 8) stays in L2 while every row of A passes over it, so
    // that B is read from memory once. Four tiles per block and the rows
    // first re-read B from memory once per 48 rows wherever k x 4 tiles
    // outgrow L2 (k >= 2048 on a 2 MiB L2): a Linear of 3072 -> 768 ran
    // at 0.45x the speed it now has on an Emerald Rapids.
    t.nc = t.nr * t.lanes;
    // 48 rows per block: enough blocks per column for the threads to share
    // few columns evenly (a reduction in kc steps reads the strip once per
    // block: getContractionTiling(ContractionMatch) doubles it there).
    t.mc = 48;
  }
  return t;
}

/// Whether the broadcast kernel reads the left operand of `c` four elements
/// at a time (a bf16 or f16 A contiguous along the reduction; splatOfA).
static bool readsQuadsOfA(const ContractionMatch &c, int64_t lanes) {
  return isNarrowFloat(cast<MemRefType>(c.a.getType()).getElementType()) &&
         hasUnitInnerStride(c.a) &&
         cast<AffineDimExpr>(c.mapA.getResults().back()).getPosition() ==
             c.k &&
         lanes % 4 == 0;
}

ContractionTiling
mlir::seq::cpu::getContractionTiling(const ContractionMatch &c,
                                     int64_t vectorBits,
                                     int64_t vectorRegisters) {
  ContractionTiling t =
      getContractionTiling(c.kernel, vectorBits, vectorRegisters);
  // Each row's widened quad of A lives for four steps beside the
  // accumulators and B's vectors: 4 rows leave registers for them where 6
  // would spill (16 registers: 8 accumulators, 2 vectors of B, 4 quads).
  if (c.kernel == ContractionKernel::Broadcast && !c.kPairs &&
      readsQuadsOfA(c, t.lanes))
    t.mr = std::min<int64_t>(t.mr, 4);
  // A strip of B longer than kMaxStripBytes along a static reduction would
  // leave L2 between two tiles of rows (1 MiB: half the L2 of an Emerald
  // Rapids, all of a Zen 4's): the reduction then runs in steps of kc, a
  // strip of kStepStripBytes each, and the block's rows pass over one step
  // before the next (the tiles' sums kept in C between them). Each block
  // reads the whole strip once, so blocks get twice the rows. Measured on
  // an Emerald Rapids (2 threads): a Linear of 11008 -> 4096 at 128 rows
  // went from 150 to 230 GFLOP/s; one of 3072 -> 768 (a 768 KiB strip)
  // runs at 317 without steps and 210-300 with them, so shorter ones keep
  // the whole reduction.
  constexpr int64_t kMaxStripBytes = 1 << 20, kStepStripBytes = 1 << 18;
  int64_t k = linalg::LinalgOp(c.op).getStaticLoopRanges()[c.k];
  int64_t rowBytes =
      t.nc * cast<MemRefType>(c.b.getType()).getElementTypeBitWidth() / 8;
  if (c.kernel == ContractionKernel::Broadcast && !ShapedType::isDynamic(k) &&
      k * rowBytes > kMaxStripBytes) {
    t.kc = kStepStripBytes / rowBytes;
    t.mc *= 2;
  }
  return t;
}

bool mlir::seq::cpu::mayStreamOutput(const ContractionMatch &c,
                                     const ContractionTiling &t) {
  return t.streamBytes && c.kernel == ContractionKernel::Broadcast && !t.kc &&
         (c.initValue || c.initInput);
}

SmallVector<int64_t>
mlir::seq::cpu::remainderCounts(const ContractionMatch &c,
                                const ContractionTiling &t) {
  SmallVector<int64_t> counts;
  std::optional<int64_t> rows;
  if (!c.m)
    rows = 1;
  else if (auto type = dyn_cast<MemRefType>(c.c.getType()))
    for (auto [i, e] : llvm::enumerate(c.mapC.getResults()))
      if (cast<AffineDimExpr>(e).getPosition() == *c.m &&
          !type.isDynamicDim(i))
        rows = type.getDimSize(i);
  if (!rows) {
    for (int64_t r = 1; r < t.mr; ++r)
      counts.push_back(r);
    return counts;
  }
  // A static row count: the full blocks of mc rows and the last one.
  if (*rows >= t.mc && t.mc % t.mr != 0)
    counts.push_back(t.mc % t.mr);
  int64_t last = *rows % t.mc % t.mr;
  if (last != 0 && !llvm::is_contained(counts, last))
    counts.push_back(last);
  llvm::sort(counts);
  return counts;
}

bool mlir::seq::cpu::hasFewRowsColumnSplit(const ContractionMatch &c) {
  return c.kernel == ContractionKernel::Dot && c.m && c.batch.empty();
}

namespace {

/// Emits the loop nest of one contraction.
class ContractionEmitter : KernelBuilder {
public:
  ContractionEmitter(ContractionMatch c, const ContractionTiling &t,
                     OpBuilder &b)
      : KernelBuilder(b, c.op.getLoc()), c(c), t(t),
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
    if (c.kPairs) {
      // B[..., p, q, j, r] as B[..., p, q, 2 j + r]: a k pair of 16
      // columns is 32 consecutive bf16.
      auto type = cast<MemRefType>(c.b.getType());
      SmallVector<ReassociationIndices> groups;
      for (int64_t d = 0; d + 2 < type.getRank(); ++d)
        groups.push_back({d});
      groups.push_back({type.getRank() - 2, type.getRank() - 1});
      pairsOfB = memref::CollapseShapeOp::create(b, loc, c.b, groups);
    }
    Value rows = c.m ? extent[*c.m] : one;
    Value colStep = columnStep(rows);
    streams = streamingCondition();
    // The broadcast kernel's blocks in column-major order (the last
    // parallel loop runs fastest in a thread's share: see getContractionTiling).
    bool columnsFirst = c.kernel == ContractionKernel::Broadcast;
    lbs.append({zero, zero});
    if (columnsFirst) {
      ubs.append({extent[c.n], rows});
      steps.append({colStep, idx(t.mc)});
    } else {
      ubs.append({rows, extent[c.n]});
      steps.append({idx(t.mc), colStep});
    }
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
          if (columnsFirst)
            std::swap(m0, n0);
          Value mEnd = min(add(m0, idx(t.mc)), rows);
          Value nEnd = min(add(n0, colStep), extent[c.n]);
          emitBlock(m0, mEnd, n0, nEnd);
          // x86 orders non-temporal stores with the others only at fences
          // and locked instructions: a fence makes the block's output
          // visible before the barrier that ends the loop, whatever that
          // barrier is made of. In a scope of its own: the fence declares no
          // memory effects, so it could be an alloca for all the
          // canonicalizer knows, which would then keep the scope that
          // convert-scf-to-openmp puts around the loop body, and that scope
          // stops verifying once the loops in it become blocks.
          if (streams)
            scf::IfOp::create(b, loc, streams, [&](OpBuilder &then, Location) {
              auto scope =
                  memref::AllocaScopeOp::create(then, loc, TypeRange{});
              OpBuilder inScope = OpBuilder::atBlockBegin(
                  &scope.getBodyRegion().emplaceBlock());
              LLVM::FenceOp::create(inScope, loc,
                                    LLVM::AtomicOrdering::seq_cst);
              memref::AllocaScopeReturnOp::create(inScope, loc);
              scf::YieldOp::create(then, loc);
            });
        });
  }

private:
  /// The bytes of one stored vector of the output tile.
  int64_t streamAlignment() {
    Value out = c.epilogue ? c.epilogueOut : c.c;
    return t.lanes * cast<MemRefType>(out.getType()).getElementTypeBitWidth() /
           8;
  }

  /// Stores `value` into `out` at `at`: masked by `mask` when it is set,
  /// else a full vector, non-temporal and aligned to its size when
  /// `streaming` (streamingCondition holds).
  void storeVector(Value value, Value out, ValueRange at, Value mask,
                   bool streaming = false) {
    if (mask)
      vector::MaskedStoreOp::create(b, loc, out, at, mask, value);
    else if (streaming)
      vector::StoreOp::create(b, loc, value, out, at, /*nontemporal=*/true,
                              llvm::MaybeAlign(streamAlignment()));
    else
      vector::StoreOp::create(b, loc, value, out, at);
  }

  /// Whether the broadcast kernel's full output vectors go around the caches
  /// (non-temporal stores): an i1 tested at run time, or null when they
  /// cannot (mayStreamOutput). A vector store at a column that is a multiple
  /// of the lanes must be aligned to the vector's bytes (what the
  /// instruction needs): the output's base is, and so are its rows'
  /// strides; and the output holds at least t.streamBytes bytes.
  Value streamingCondition() {
    if (!mayStreamOutput(c, t))
      return Value();
    Value out = c.epilogue ? c.epilogueOut : c.c;
    auto type = cast<MemRefType>(out.getType());
    int64_t elementBytes = type.getElementTypeBitWidth() / 8;
    int64_t alignment = streamAlignment();
    auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, out);
    Value bytes = idx(elementBytes);
    for (Value size : metadata.getSizes())
      bytes = arith::MulIOp::create(b, loc, bytes, size);
    auto isAligned = [&](Value elements) {
      Value offset = arith::MulIOp::create(b, loc, elements, idx(elementBytes));
      Value rem = arith::RemUIOp::create(b, loc, offset, idx(alignment));
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rem,
                                   idx(0));
    };
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, out);
    Value cond = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, bytes,
                                       idx(t.streamBytes));
    auto both = [&](Value x) { cond = arith::AndIOp::create(b, loc, cond, x); };
    // The base pointer in bytes, the offset and strides in elements.
    Value rem = arith::RemUIOp::create(b, loc, base, idx(alignment));
    both(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rem, idx(0)));
    both(isAligned(metadata.getOffset()));
    for (Value stride : metadata.getStrides().drop_back())
      both(isAligned(stride));
    return cond;
  }

  /// The vector of i32 words (one per f32 lane) equal to `v` in every lane.
  Value wordSplat(int64_t v) {
    VectorType i32 = vecType.clone(b.getI32Type());
    return arith::ConstantOp::create(
        b, loc, i32, DenseElementsAttr::get(i32, b.getI32IntegerAttr(v)));
  }

  /// The vector of `lanes` (by default, one per f32 lane) elements of
  /// `memref`'s type.
  VectorType vectorOf(Value memref, int64_t lanes = 0) {
    return VectorType::get({lanes ? lanes : t.lanes},
                           cast<MemRefType>(memref.getType()).getElementType());
  }

  /// `value` (a scalar or a vector) in f32: bf16 and f16 are widened in
  /// registers (LLVM: a 16-bit shift for bf16, F16C's vcvtph2ps for f16).
  Value widen(Value value) {
    Type type = value.getType();
    if (getElementTypeOrSelf(type).isF32())
      return value;
    Type f32 = b.getF32Type();
    if (auto vector = dyn_cast<VectorType>(type))
      return arith::ExtFOp::create(b, loc, vector.clone(f32), value);
    return arith::ExtFOp::create(b, loc, f32, value);
  }

  /// The vector of `memref` at `at` in its stored type, masked by `mask`
  /// when it is set: masked-off lanes read as zero.
  Value loadVector(Value memref, ValueRange at, Value mask, int64_t lanes = 0) {
    VectorType type = vectorOf(memref, lanes);
    if (!mask)
      return vector::LoadOp::create(b, loc, type, memref, at);
    Value zeros = arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
    return vector::MaskedLoadOp::create(b, loc, type, memref, at, mask, zeros);
  }

  /// `for (x = lo; x < hi; x += step) body(x)`, with iv bound by `body`.

  /// The indices of an operand (indexed by `map`) at the current loops.
  SmallVector<Value> indices(AffineMap map) {
    if (c.panel && map == c.mapB) {
      // [batch..., n / w, k, n % w] of a packed B; in k pairs, of its view
      // with each panel row's pairs collapsed (pairsOfB),
      // [batch..., n / w, k / 2, 2 (n % w) + k % 2].
      SmallVector<Value> at = batchIndicesOfB();
      Value width = idx(c.panel);
      at.push_back(arith::DivUIOp::create(b, loc, iv[c.n], width));
      Value column = arith::RemUIOp::create(b, loc, iv[c.n], width);
      if (!c.kPairs) {
        at.append({iv[c.k], column});
        return at;
      }
      at.push_back(arith::DivUIOp::create(b, loc, iv[c.k], idx(2)));
      at.push_back(add(arith::MulIOp::create(b, loc, column, idx(2)),
                       arith::RemUIOp::create(b, loc, iv[c.k], idx(2))));
      return at;
    }
    return operandIndices(map, iv);
  }

  /// The indices of a packed B before its panel's: those of its batch loops.
  SmallVector<Value> batchIndicesOfB() {
    unsigned packed = c.kPairs ? 4 : 3;
    unsigned results = c.mapB.getNumResults();
    SmallVector<int64_t> dropped;
    for (unsigned r = results - packed; r < results; ++r)
      dropped.push_back(r);
    return operandIndices(c.mapB.dropResults(dropped), iv);
  }

  /// The block [m0, mEnd) x [n0, nEnd): its tiles over the whole
  /// reduction, or (t.kc set) over each kc steps in turn.
  void emitBlock(Value m0, Value mEnd, Value n0, Value nEnd) {
    Value kSize = extent[c.k];
    kLo = idx(0);
    kHi = kSize;
    kFirst = kLast = Value();
    if (!t.kc) {
      emitTiles(m0, mEnd, n0, nEnd);
      return;
    }
    loop(kLo, kSize, t.kc, [&](Value k0) {
      kLo = k0;
      kHi = min(add(k0, idx(t.kc)), kSize);
      kFirst =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, k0, idx(0));
      kLast =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, kHi, kSize);
      emitTiles(m0, mEnd, n0, nEnd);
    });
  }

  /// The register tiles of a block over the reduction's steps [kLo, kHi).
  void emitTiles(Value m0, Value mEnd, Value n0, Value nEnd) {
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
    // The rows left after the full tiles, in one tile of their count: each
    // vector of B is read once for all of them (a decode step's 2 .. mr - 1
    // rows), not once per row.
    SmallVector<int64_t> counts = remainderCounts(c, t);
    if (counts.empty())
      return;
    auto sw = scf::IndexSwitchOp::create(b, loc, TypeRange{}, sub(mEnd, mFull),
                                         counts, counts.size());
    OpBuilder::InsertionGuard guard(b);
    for (auto [region, count] : llvm::zip(sw.getCaseRegions(), counts)) {
      b.setInsertionPointToStart(&region.emplaceBlock());
      rows(count)(mFull);
      scf::YieldOp::create(b, loc);
    }
    b.setInsertionPointToStart(&sw.getDefaultRegion().emplaceBlock());
    scf::YieldOp::create(b, loc);
  }

  /// The column step of the parallel blocks: nc, or for the dot kernel
  /// with at most mr rows (one row tile: a decode step's matrix-vector
  /// product, whose blocks are all along the columns) the width that makes
  /// about kMinColumnBlocks blocks, a multiple of the kernel's tile width,
  /// so that the threads share the columns evenly. The broadcast kernel's
  /// blocks are one tile wide already.
  Value columnStep(Value rows) {
    if (!hasFewRowsColumnSplit(c))
      return idx(t.nc);
    std::optional<int64_t> staticRows = getConstantIntValue(rows);
    if (staticRows && *staticRows > t.mr)
      return idx(t.nc);
    int64_t unit = t.nr;
    Value cols = extent[c.n];
    Value perBlock = arith::CeilDivUIOp::create(
        b, loc, cols, idx(kMinColumnBlocks));
    Value aligned = arith::MulIOp::create(
        b, loc, arith::CeilDivUIOp::create(b, loc, perBlock, idx(unit)),
        idx(unit));
    Value narrow = min(aligned, idx(t.nc));
    if (staticRows)
      return narrow;
    Value few = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, rows,
                                      idx(t.mr));
    return arith::SelectOp::create(b, loc, few, narrow, idx(t.nc));
  }

  void setRow(Value m1, int64_t i) {
    if (c.m)
      iv[*c.m] = i == 0 ? m1 : add(m1, idx(i));
  }

  /// C[m1 + i, n1 + j] += sum_k A[m1 + i, k] B[n1 + j, k], for i < mr, j < nr.
  /// With `c.dotPairs`, each step covers 2 * lanes bf16 elements of the
  /// reduction, multiplied in pairs (vdpbf16ps) into the 16 lanes.
  void dotKernel(int64_t mr, int64_t nr, Value m1, Value n1) {
    Value zeros = arith::ConstantOp::create(
        b, loc, vecType, DenseElementsAttr::get(vecType, 0.0f));
    SmallVector<Value> init(mr * nr, zeros);
    Value kSize = extent[c.k];
    int64_t kStep = c.dotPairs ? 2 * t.lanes : t.lanes;
    Value kFull = fullEnd(idx(0), kSize, kStep);
    // One step of the reduction at k: full vectors, or masked ones.
    auto step = [&](Value k, ValueRange acc, Value mask) {
      iv[c.k] = k;
      auto load = [&](Value memref, AffineMap map) {
        if (c.dotPairs)
          return loadVector(memref, indices(map), mask, kStep);
        return widen(loadVector(memref, indices(map), mask));
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
              c.dotPairs
                  ? Value(x86vector::DotBF16Op::create(
                        b, loc, vecType, acc[i * nr + j], as[i], bs[j]))
                  : Value(vector::FMAOp::create(b, loc, as[i], bs[j],
                                                acc[i * nr + j])));
      return next;
    };
    auto forOp = scf::ForOp::create(
        b, loc, idx(0), kFull, idx(kStep), init,
        [&](OpBuilder &nested, Location, Value k, ValueRange acc) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          scf::YieldOp::create(b, loc, step(k, acc, Value()));
        });
    // The remainder of the reduction as one masked step (all lanes off when
    // the size is a multiple of the vector).
    Value mask = vector::CreateMaskOp::create(
        b, loc, VectorType::get({kStep}, b.getI1Type()),
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
                        ? widen(memref::LoadOp::create(
                              b, loc, c.initInput,
                              operandIndices(c.initMap, at)))
                        : memref::LoadOp::create(b, loc, c.c, at);
        Value value = arith::AddFOp::create(b, loc, old, sum);
        if (!c.epilogue) {
          memref::StoreOp::create(b, loc, value, c.c, at);
          continue;
        }
        memref::StoreOp::create(b, loc, applyScalarEpilogue(value, at),
                                c.epilogueOut, at);
      }
    }
  }

  /// How the broadcast kernel reads A: one element per row and step, or
  /// (a bf16 or f16 A contiguous along the reduction) four (splatOfA).
  enum class ReadOfA { Element, Quad };
  ReadOfA readOfA() {
    return readsQuadsOfA(c, t.lanes) ? ReadOfA::Quad : ReadOfA::Element;
  }

  /// The f32 splat of A at the current row and step k + `step`, where k is
  /// iv[c.k]. Element: A[k] loaded, widened and broadcast. Quad (k a
  /// multiple of 4): A[k .. k + 4) repeated over the vector and widened
  /// (vcvtph2ps for f16; for bf16 vpmovzxwd and a 16-bit shift), and the
  /// lanes of A[k + step] selected in each group of four (one in-lane
  /// shuffle per step); LLVM shares the load and the widening between the
  /// four steps.
  Value splatOfA(ReadOfA read, int64_t step) {
    Type type = cast<MemRefType>(c.a.getType()).getElementType();
    SmallVector<Value> at = indices(c.mapA);
    if (read == ReadOfA::Element)
      return vector::BroadcastOp::create(
          b, loc, vecType, widen(memref::LoadOp::create(b, loc, c.a, at)));
    Value quad =
        vector::LoadOp::create(b, loc, VectorType::get({4}, type), c.a, at);
    SmallVector<int64_t> repeat, select;
    for (int64_t l = 0; l < t.lanes; ++l) {
      repeat.push_back(l % 4);
      select.push_back(l / 4 * 4 + step);
    }
    Value wide = widen(vector::ShuffleOp::create(b, loc, quad, quad, repeat));
    return vector::ShuffleOp::create(b, loc, wide, wide, select);
  }

  /// Whether the broadcast kernel reads B two vectors at a time (pairOfB):
  /// B in bf16, contiguous along the output's columns (or in panels, whose
  /// width is the tile's), an even number of full vectors.
  bool pairedB(int64_t nv, Value mask) {
    if (mask || nv % 2 != 0 || c.kPairs ||
        !cast<MemRefType>(c.b.getType()).getElementType().isBF16() ||
        !hasUnitInnerStride(c.b))
      return false;
    if (c.panel)
      return c.panel % (2 * t.lanes) == 0;
    return cast<AffineDimExpr>(c.mapB.getResults().back()).getPosition() ==
           c.n;
  }

  /// B's 2 * lanes bf16 elements from the current column, as one vector of
  /// 32-bit words widened in two: the low halves shifted up are the even
  /// columns in f32, the words with their low halves cleared the odd ones.
  /// One load and two ops for two vectors, where widening each vector
  /// (vpmovzxwd, vpslld) takes two.
  std::pair<Value, Value> pairOfB() {
    Type bf16 = b.getBF16Type();
    Value pair = vector::LoadOp::create(
        b, loc, VectorType::get({2 * t.lanes}, bf16), c.b, indices(c.mapB));
    Value words = vector::BitCastOp::create(
        b, loc, vecType.clone(b.getI32Type()), pair);
    Value even = arith::ShLIOp::create(b, loc, words, wordSplat(16));
    Value odd = arith::AndIOp::create(b, loc, words, wordSplat(0xFFFF0000));
    return {arith::BitcastOp::create(b, loc, vecType, even),
            arith::BitcastOp::create(b, loc, vecType, odd)};
  }

  /// The even and the odd lanes of the 2 * lanes lanes of `lo` and `hi`.
  std::pair<Value, Value> deinterleave(Value lo, Value hi) {
    SmallVector<int64_t> even, odd;
    for (int64_t l = 0; l < t.lanes; ++l) {
      even.push_back(2 * l);
      odd.push_back(2 * l + 1);
    }
    return {vector::ShuffleOp::create(b, loc, lo, hi, even),
            vector::ShuffleOp::create(b, loc, lo, hi, odd)};
  }

  /// The inverse of deinterleave: lanes 0 .. lanes and lanes .. 2 * lanes
  /// of the vector whose even lanes are `even` and odd lanes `odd`.
  std::pair<Value, Value> interleave(Value even, Value odd) {
    SmallVector<int64_t> lo, hi;
    for (int64_t l = 0; l < t.lanes; ++l) {
      int64_t source = l / 2 + (l % 2 ? t.lanes : 0);
      lo.push_back(source);
      hi.push_back(source + t.lanes / 2);
    }
    return {vector::ShuffleOp::create(b, loc, even, odd, lo),
            vector::ShuffleOp::create(b, loc, even, odd, hi)};
  }

  /// C[m1 + i, n1 + v * lanes + l] += sum_k A[m1 + i, k] B[k, n1 + ...], for
  /// i < mr, v < nv; `count` (nv == 1 only) masks the last vector.
  void broadcastKernel(int64_t mr, int64_t nv, Value m1, Value n1,
                       Value count) {
    Value mask = count ? vector::CreateMaskOp::create(b, loc, maskType,
                                                      ValueRange{count})
                       : Value();
    auto column = [&](int64_t v) {
      iv[c.n] = v == 0 ? n1 : add(n1, idx(v * t.lanes));
    };
    auto load = [&](Value memref, AffineMap map) {
      return widen(loadVector(memref, indices(map), mask));
    };
    // A bf16 B read two vectors at a time (pairedB): the accumulators of
    // vectors 2p and 2p + 1 hold the even and the odd columns of their 2 *
    // lanes, interleaved back when the tile is done.
    bool paired = pairedB(nv, mask);
    // The output tile starts from C: the contraction accumulates into it
    // (at the first kc steps, from what an absorbed fill or bias would have
    // written there; after them, from the sums they left in C).
    auto tiles = [&](bool partial) {
      SmallVector<Value> values;
      for (int64_t i = 0; i < mr; ++i) {
        setRow(m1, i);
        for (int64_t v = 0; v < nv; ++v) {
          column(v);
          values.push_back(partial ? partialTile(mask) : initialTile(mask));
        }
      }
      return values;
    };
    SmallVector<Value> init;
    if (!kFirst || (!c.initValue && !c.initInput))
      init = tiles(/*partial=*/false);
    else
      init = ifElse(
          kFirst, [&] { return tiles(/*partial=*/false); },
          [&] { return tiles(/*partial=*/true); });
    for (int64_t i = 0; i < mr; ++i)
      if (paired)
        for (int64_t v = 0; v < nv; v += 2)
          std::tie(init[i * nv + v], init[i * nv + v + 1]) =
              deinterleave(init[i * nv + v], init[i * nv + v + 1]);
    // The steps of the reduction in [lo, hi), `group` at a time, from the
    // accumulators `acc`: B's vectors at each step, A's splat (splatOfA) for
    // each row, and a line of the next panel (nextPanelLine).
    std::optional<std::pair<Value, Value>> nextLine = nextPanelLine(m1, n1);
    auto reduce = [&](Value lo, Value hi, ReadOfA read,
                      ValueRange acc) -> SmallVector<Value> {
      int64_t group = read == ReadOfA::Quad ? 4 : 1;
      auto forOp = scf::ForOp::create(
          b, loc, lo, hi, idx(group), acc,
          [&](OpBuilder &nested, Location, Value k, ValueRange acc) {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPoint(nested.getInsertionBlock(),
                                nested.getInsertionPoint());
            SmallVector<Value> next(acc);
            for (int64_t step = 0; step < group; ++step) {
              iv[c.k] = step == 0 ? k : add(k, idx(step));
              SmallVector<Value> bs;
              for (int64_t v = 0; v < nv; v += paired ? 2 : 1) {
                column(v);
                if (!paired) {
                  bs.push_back(load(c.b, c.mapB));
                  continue;
                }
                auto [even, odd] = pairOfB();
                bs.append({even, odd});
              }
              for (int64_t i = 0; i < mr; ++i) {
                setRow(m1, i);
                iv[c.k] = k;
                Value splat = splatOfA(read, step);
                for (int64_t v = 0; v < nv; ++v)
                  next[i * nv + v] = vector::FMAOp::create(
                      b, loc, splat, bs[v], next[i * nv + v]);
              }
            }
            // After the group's loads: a prefetch between them would keep
            // CSE from sharing a quad of A between its steps.
            for (int64_t step = 0; nextLine && step < group; ++step) {
              iv[c.k] = step == 0 ? k : add(k, idx(step));
              prefetchNextPanel(*nextLine);
            }
            scf::YieldOp::create(b, loc, next);
          });
      return forOp.getResults();
    };
    // A narrow A contiguous along the reduction is read in quads up to the
    // last multiple of 4; the other steps read one element.
    SmallVector<Value> acc;
    if (c.kPairs) {
      acc = reducePairs(mr, nv, m1, n1, init);
    } else if (readOfA() == ReadOfA::Quad) {
      // kLo is a multiple of kc, itself a multiple of 4.
      Value kMain = fullEnd(kLo, kHi, 4);
      acc = reduce(kLo, kMain, ReadOfA::Quad, init);
      acc = reduce(kMain, kHi, ReadOfA::Element, acc);
    } else {
      acc = reduce(kLo, kHi, ReadOfA::Element, init);
    }
    for (int64_t i = 0; i < mr; ++i)
      if (paired)
        for (int64_t v = 0; v < nv; v += 2)
          std::tie(acc[i * nv + v], acc[i * nv + v + 1]) =
              interleave(acc[i * nv + v], acc[i * nv + v + 1]);
    // The finished tile through the epilogue; before the last kc steps,
    // the sums into C.
    auto store = [&](bool partial) {
      SmallVector<std::tuple<Value, Value, SmallVector<Value>>> vectors;
      for (int64_t i = 0; i < mr; ++i) {
        setRow(m1, i);
        for (int64_t v = 0; v < nv; ++v) {
          column(v);
          Value value = acc[i * nv + v];
          Value out = c.c;
          if (c.epilogue && !partial) {
            value = applyEpilogue(value, mask);
            out = c.epilogueOut;
          }
          if (!streams || mask)
            storeVector(value, out, indices(c.mapC), mask);
          else
            vectors.push_back({value, out, indices(c.mapC)});
        }
      }
      if (vectors.empty())
        return SmallVector<Value>();
      // Full vectors that may stream: all of the tile's behind one test.
      auto emitStores = [&](bool streaming) {
        for (auto &[value, out, at] : vectors)
          storeVector(value, out, at, Value(), streaming);
        return SmallVector<Value>();
      };
      return ifElse(
          streams, [&] { return emitStores(/*streaming=*/true); },
          [&] { return emitStores(/*streaming=*/false); });
    };
    if (!kLast || !c.epilogue)
      store(/*partial=*/false);
    else
      ifElse(
          kLast, [&] { return store(/*partial=*/false); },
          [&] { return store(/*partial=*/true); });
  }

  /// Where the tile at (m1, n1) prefetches the next panel of a packed B
  /// (f32 or bf16 panels, not k pairs): the panel after n1's (its own
  /// at the last) and the first column of one of a panel row's cache lines,
  /// chosen by the tile's row (m1 / mr), so that a panel's first tiles
  /// fetch all its lines. The broadcast kernel's parallel blocks are one
  /// panel wide and ordered columns first (getContractionTiling): a thread
  /// runs its panels in turn, and the first tiles of a panel read its strip
  /// of the weight from memory at the FMAs' pace, which memory cannot
  /// sustain for one core (a 768 x 64 f32 strip is 192 KiB in 3.4 us on the
  /// Emerald Rapids host: 58 GB/s against its 14 GB/s triad). A line of the
  /// next panel per step spreads that read over the current panel's tiles,
  /// into L2 (locality 2), and costs one load slot per mr x nr FMAs; the
  /// prefetches of a thread's last panel, which the next thread runs, are
  /// wasted.
  std::optional<std::pair<Value, Value>> nextPanelLine(Value m1, Value n1) {
    auto type = cast<MemRefType>(c.b.getType());
    // f16 panels are widened by conversions on the FMAs' ports, which the
    // prefetches' uops slow down more than they hide memory: 768 -> 3072 at
    // m = 128 ran 3.27 -> 3.41 ms on Emerald Rapids (bf16 2.85 -> 2.81).
    if (!c.panel || c.kPairs || t.kc || type.getElementType().isF16())
      return std::nullopt;
    int64_t bytes = type.getElementTypeBitWidth() / 8;
    // Two strips and the rows of A they meet must stay in L2: longer
    // strips (k > 1024 in f32 with 16 lanes) evict the current strip and A,
    // and 3072 -> 768 ran 1.2-1.4x slower with the prefetches.
    constexpr int64_t kMaxStripBytes = 256 * 1024;
    int64_t k = type.getDimSize(type.getRank() - 2);
    if (ShapedType::isDynamic(k) || k * c.panel * bytes > kMaxStripBytes)
      return std::nullopt;
    constexpr int64_t kLineBytes = 64;
    int64_t lineElements = kLineBytes / bytes;
    int64_t lines = std::max<int64_t>(1, c.panel / lineElements);
    Value panels = memref::DimOp::create(b, loc, c.b, type.getRank() - 3);
    Value panel = arith::DivUIOp::create(b, loc, n1, idx(c.panel));
    Value nextPanel = min(add(panel, idx(1)), sub(panels, idx(1)));
    Value row = c.m ? arith::DivUIOp::create(b, loc, m1, idx(t.mr)).getResult()
                    : idx(0);
    Value line = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, row, idx(lines)),
        idx(lineElements));
    return std::make_pair(nextPanel, line);
  }

  /// The prefetch of the next panel's line (nextPanelLine) at step iv[c.k].
  void prefetchNextPanel(std::pair<Value, Value> next) {
    SmallVector<Value> at = batchIndicesOfB();
    at.append({next.first, iv[c.k], next.second});
    memref::PrefetchOp::create(b, loc, c.b, at, b.getBoolAttr(false),
                               b.getI32IntegerAttr(2), b.getBoolAttr(true));
  }

  /// An scf.if on `cond` whose branches `then` and `otherwise` emit and
  /// return the values it yields.
  SmallVector<Value> ifElse(Value cond, function_ref<SmallVector<Value>()> then,
                            function_ref<SmallVector<Value>()> otherwise) {
    auto ifOp = scf::IfOp::create(
        b, loc, cond,
        [&](OpBuilder &nested, Location) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          scf::YieldOp::create(b, loc, then());
        },
        [&](OpBuilder &nested, Location) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          scf::YieldOp::create(b, loc, otherwise());
        });
    return ifOp.getResults();
  }

  /// A's elements k and k + 1 (k = iv[c.k]) of the current row as one
  /// 32-bit word repeated over a vector of 2 * lanes bf16; with `last` (k is
  /// the last step of an odd reduction), A[k] paired with zero.
  Value splatOfPair(bool last) {
    Type bf16 = b.getBF16Type();
    VectorType pairType = VectorType::get({2}, bf16);
    SmallVector<Value> at = indices(c.mapA);
    Value pair;
    if (!last && hasUnitInnerStride(c.a) &&
        cast<AffineDimExpr>(c.mapA.getResults().back()).getPosition() == c.k) {
      pair = vector::LoadOp::create(b, loc, pairType, c.a, at);
    } else {
      Value first = memref::LoadOp::create(b, loc, c.a, at), second;
      if (last) {
        second = arith::ConstantOp::create(b, loc, b.getZeroAttr(bf16));
      } else {
        Value k = iv[c.k];
        iv[c.k] = add(k, idx(1));
        second = memref::LoadOp::create(b, loc, c.a, indices(c.mapA));
        iv[c.k] = k;
      }
      pair = vector::FromElementsOp::create(b, loc, pairType,
                                            ValueRange{first, second});
    }
    Type i32 = b.getI32Type();
    Value word = vector::ExtractOp::create(
        b, loc,
        vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), pair),
        ArrayRef<int64_t>{0});
    Value words = vector::BroadcastOp::create(b, loc, vecType.clone(i32), word);
    return vector::BitCastOp::create(
        b, loc, VectorType::get({2 * t.lanes}, bf16), words);
  }

  /// The reduction of the broadcast kernel over B in k-pair panels: per
  /// pair of steps, nv vectors of 32 bf16 (16 columns x 2 steps), one pair
  /// of A per row, and mr x nv vdpbf16ps; an odd last step pairs A's
  /// element with zero (B's pack holds zeros there).
  SmallVector<Value> reducePairs(int64_t mr, int64_t nv, Value m1, Value n1,
                                 ValueRange init) {
    VectorType pairsType = VectorType::get({2 * t.lanes}, b.getBF16Type());
    auto step = [&](Value k, ValueRange acc, bool last) {
      iv[c.k] = k;
      SmallVector<Value> bs;
      for (int64_t v = 0; v < nv; ++v) {
        iv[c.n] = v == 0 ? n1 : add(n1, idx(v * t.lanes));
        bs.push_back(vector::LoadOp::create(b, loc, pairsType, pairsOfB,
                                            indices(c.mapB)));
      }
      SmallVector<Value> next(acc);
      for (int64_t i = 0; i < mr; ++i) {
        setRow(m1, i);
        iv[c.k] = k;
        Value pair = splatOfPair(last);
        for (int64_t v = 0; v < nv; ++v)
          next[i * nv + v] = x86vector::DotBF16Op::create(
              b, loc, vecType, next[i * nv + v], pair, bs[v]);
      }
      return next;
    };
    auto reduce = [&](Value lo, Value hi, ValueRange acc, bool last) {
      return scf::ForOp::create(
                 b, loc, lo, hi, idx(2), acc,
                 [&](OpBuilder &nested, Location, Value k, ValueRange acc) {
                   OpBuilder::InsertionGuard guard(b);
                   b.setInsertionPoint(nested.getInsertionBlock(),
                                       nested.getInsertionPoint());
                   scf::YieldOp::create(b, loc, step(k, acc, last));
                 })
          .getResults();
    };
    // The whole pairs, then the odd last step when there is one (a loop of
    // zero or one trip).
    Value kMain = fullEnd(kLo, kHi, 2);
    SmallVector<Value> acc = reduce(kLo, kMain, init, /*last=*/false);
    return reduce(kMain, kHi, acc, /*last=*/true);
  }

  /// The indices `map`'s results (C's dimensions, or 0 for a unit
  /// dimension) take at `at`, C's indices.
  SmallVector<Value> indicesAlongC(AffineMap map, ArrayRef<Value> at) {
    SmallVector<Value> where;
    for (AffineExpr e : map.getResults())
      where.push_back(isa<AffineDimExpr>(e)
                          ? at[cast<AffineDimExpr>(e).getPosition()]
                          : arith::ConstantIndexOp::create(b, loc, 0));
    return where;
  }

  /// Loads the vector of `memref` (indexed by `map` in terms of C's
  /// dimensions) at the current C vector, or broadcasts its element when the
  /// map does not depend on C's last dimension; in the stored type.
  Value loadAlongC(Value memref, AffineMap map, Value mask) {
    SmallVector<Value> where = indicesAlongC(map, indices(c.mapC));
    if (!map.isFunctionOfDim(map.getNumDims() - 1))
      return vector::BroadcastOp::create(
          b, loc, vectorOf(memref),
          memref::LoadOp::create(b, loc, memref, where));
    return loadVector(memref, where, mask);
  }

  /// C at the current C vector: the sums of the kc steps before.
  Value partialTile(Value mask) {
    int64_t rank = c.mapC.getNumResults();
    return loadAlongC(c.c, b.getMultiDimIdentityMap(rank), mask);
  }

  /// The accumulators' initial value at the current C vector: C itself, or
  /// what the absorbed fill or bias copy would have written there.
  Value initialTile(Value mask) {
    if (c.initValue)
      return vector::BroadcastOp::create(b, loc, vecType, c.initValue);
    if (c.initInput)
      return widen(loadAlongC(c.initInput, c.initMap, mask));
    return partialTile(mask);
  }

  /// `value` (a vector of f32) rounded to bf16 to nearest even, in integer
  /// ops: without AVX512_BF16, LLVM calls a function per lane for it. NaNs
  /// stay NaNs (quieted), as in compiler-rt's __truncsfbf2, which the
  /// reference loops call.
  Value roundToBF16(Value value) {
    auto type = cast<VectorType>(value.getType());
    VectorType i32 = type.clone(b.getI32Type());
    Value bits = arith::BitcastOp::create(b, loc, i32, value);
    Value high = arith::ShRUIOp::create(b, loc, bits, wordSplat(16));
    Value odd = arith::AndIOp::create(b, loc, high, wordSplat(1));
    Value bias = arith::AddIOp::create(b, loc, odd, wordSplat(0x7FFF));
    Value rounded = arith::ShRUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, bits, bias), wordSplat(16));
    Value quiet = arith::OrIOp::create(b, loc, high, wordSplat(0x40));
    Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO,
                                      value, value);
    Value result = arith::SelectOp::create(b, loc, nan, quiet, rounded);
    Value narrow =
        arith::TruncIOp::create(b, loc, type.clone(b.getI16Type()), result);
    return arith::BitcastOp::create(b, loc, type.clone(b.getBF16Type()),
                                    narrow);
  }

  /// The epilogue's body on `value`, the finished C vector, with its
  /// roundings to bf16 in integer ops (roundToBF16).
  Value applyEpilogue(Value value, Value mask) {
    Block *body = c.epilogue.getBlock();
    IRMapping map;
    for (auto [arg, memref, inC] : c.epilogueInputs)
      map.map(arg, memref ? loadAlongC(memref, inC, mask) : value);
    cloneBodyOnVectors(b, loc, *body, t.lanes, map);
    for (Operation &op : body->without_terminator()) {
      auto trunc = dyn_cast<arith::TruncFOp>(op);
      if (!trunc || !trunc.getType().isBF16())
        continue;
      Operation *clone = map.lookup(trunc.getResult()).getDefiningOp();
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(clone);
      Value rounded = roundToBF16(clone->getOperand(0));
      clone->getResult(0).replaceAllUsesWith(rounded);
      clone->erase();
      map.map(trunc.getResult(), rounded);
    }
    Value result = cast<linalg::YieldOp>(body->getTerminator()).getOperand(0);
    if (result.getParentBlock() != body && !map.contains(result))
      return vector::BroadcastOp::create(
          b, loc, VectorType::get({t.lanes}, result.getType()), result);
    return map.lookupOrDefault(result);
  }

  /// The epilogue's body on `value`, the finished element of C at `at`
  /// (C's indices), as the reference loops compute it.
  Value applyScalarEpilogue(Value value, ArrayRef<Value> at) {
    Block *body = c.epilogue.getBlock();
    IRMapping map;
    for (auto [arg, memref, inC] : c.epilogueInputs) {
      if (!memref) {
        map.map(arg, value);
        continue;
      }
      map.map(arg,
              memref::LoadOp::create(b, loc, memref, indicesAlongC(inC, at)));
    }
    for (Operation &op : body->without_terminator())
      b.clone(op, map);
    Value result = cast<linalg::YieldOp>(body->getTerminator()).getOperand(0);
    return map.lookupOrDefault(result);
  }

  ContractionMatch c;
  const ContractionTiling &t;
  VectorType vecType, maskType;
  /// B in k-pair panels, viewed with each panel row's pairs collapsed.
  Value pairsOfB;
  /// Per loop: its extent, and its value at the point being emitted.
  SmallVector<Value> extent, iv;
  /// The reduction steps of the tiles being emitted, [kLo, kHi), and
  /// whether they are the first and the last (null: statically true).
  Value kLo, kHi, kFirst, kLast;
  /// Whether full output vectors are stored around the caches
  /// (streamingCondition; null: never).
  Value streams;
};

} // namespace

void mlir::seq::cpu::emitContractionKernel(OpBuilder &b,
                                           const ContractionMatch &c,
                                           const ContractionTiling &tiling) {
  ContractionEmitter(c, tiling, b).emit();
}
