//===- VectorizeQuantized.cpp - x @ W^T with W in quantized blocks --------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The vector kernel of a Linear whose weight is stored in a block format
// (q8_0, q4_0, q4_1, int8; dialect/Seq/IR/Quantization.h).
// Convert-seq-to-linalg gives it as a linalg.generic carrying
// `seq.quantized` that reads the blocks where they are
// (lowering/SeqToLinalg/Quantized.cpp); on buffers, this pass replaces it
// with loops generated for the target's vectors:
//
//  - an scf.parallel over blocks of mc rows x nc output columns, columns
//    first (a thread takes a block of columns' rows in turn);
//  - register tiles of mr rows x nr columns (1 x 2nr for the rows left
//    over, decode's single row: enough FMA chains to hide their latency),
//    one f32 accumulator vector of `lanes` lanes each, carried over the
//    weight blocks of the row;
//  - per weight block and column, the f16 scale (and q4_1's minimum) is
//    read as two bytes and splat; per vector of `lanes` weights the bytes
//    are loaded (vector<lanes x i8>), the nibbles split with a shift and a
//    mask (q4), converted to f32 and scaled (w = q * d, + m for q4_1: the
//    dequantized weight of the reference, exactly) in registers, and
//    multiplied into the mr accumulators of the column with FMAs against
//    the rows' vectors of x, which are loaded once per tile and block step;
//  - the lanes are summed once per output element and added to C (which
//    holds the bias or zeros);
//  - per step of the reduction and column, a prefetch of the same step of
//    the next tile's column: a tile reads its nr weight rows side by side,
//    and decode streams the weights from memory.
//
// int8's block is a whole row of any length with one f32 scale, so its
// tiles (rowTile) reduce over the row in steps of 32 weights, then of one
// vector, then of single weights; they accumulate x * q, the int8 values
// only widened (vpmovsxbd, vcvtdq2ps), and multiply each output's sum by
// the row's scale once, after the reduction. A single row keeps two
// accumulators per column.
//
// With int8 activations (`int8-activations`, seqc's default, on targets with
// VNNI; q8_0, q4_0, q4_1, and int8 whose rows are whole blocks of 32),
// llama.cpp's path instead: x is quantized once per
// row, before the tiles, per block of 32 to int8 with an f16 scale
// (quantize_row_q8_0, kept as q + 128, vpdpbusd's unsigned operand), and
// the tiles multiply each block with vpdpbusd (one block per 256-bit step,
// two per 512-bit one), the integer dot product corrected by -128 * sum(w)
// (a vpdpbusd of 128s per column), converted and FMAed into f32
// accumulators times the product of the two scales
// (ggml_vec_dot_q8_0_q8_0). q4_1's nibbles are its values as they are
// (0 to 15), and its minimum m adds m * d_x * sum(q_x) per block, with
// d_x * sum(q_x) computed once per row and block as x is quantized
// (ggml_vec_dot_q4_1_q8_1). int8's rows are multiplied in blocks of 32
// the same way, each block's integer dot product scaled by the
// activations' scale alone and each output by the row's scale after the
// reduction. The results then differ from the f32 reference by the
// activations' quantization.
//
// q8_0, q4_0 and q4_1 blocks and int8 rows that seq-cpu-pack-weights
// packed into panels of w columns (at -O2 with int8 activations;
// `seq.quantized_panel`) take a kernel of their own (panelTile), llama.cpp's
// repacked Q4_0 GEMM in kind: the panel's groups of 4 value bytes of w columns
// are vpdpbusd's unsigned operand as loaded (q4: split into nibbles), the row's
// 4 activations broadcast its signed one, so that one instruction adds 4
// products to each of w columns' i32 lanes; per block that sum, started at -8
// or -128 times the block's sum of q (the unsigned values' offset; 0 for q4_1),
// is converted and FMAed with the panel's w scales times the row's (q4_1: then
// its w minimums times the row's d * sum(q); int8: the row's alone, and the
// panel's w f32 scales after the reduction). No horizontal sums.
//
// Every weight byte is read once per tile of mr rows; no f32 copy of the
// weight exists. Nothing is target-specific beyond `vector-bits` and
// `vector-registers`: LLVM selects the widening loads (vpmovsxbd /
// vpmovzxbd), vcvtdq2ps, vcvtph2ps and vfmadd for AVX2 and AVX-512 alike.
// The sums are reassociated (per lane, then across lanes): results differ
// from the -O0 loops by rounding only.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/KernelUtils.h"
#include "lowering/CPU/Passes.h"

#include "dialect/Seq/IR/Quantization.h"
#include "dialect/Seq/Support/Debug.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "seq-cpu-vectorize-quantized"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQCPUVECTORIZEQUANTIZED
#include "lowering/CPU/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;
using namespace mlir::seq;
using cpu::kActivationBlock;

namespace {

/// A quantized `x @ W^T` on buffers: x [rows, in / 32, 32] f32, the blocks
/// [out, in / 32, bytes] i8, C [rows, out] f32.
struct QuantizedMatch {
  linalg::GenericOp op;
  WeightFormatInfo format;
  Value x, blocks, c;
  /// q4_0, q4_1 or q8_0 blocks, or int8 rows, packed by
  /// seq-cpu-pack-weights into panels of this many columns
  /// (kQuantizedPanelAttr; `blocks` is then [panels, k / 32, bytes *
  /// panel], bytes = 18, 20 or 34, or [panels, 1, (4 + k) * panel] for
  /// int8), or 0.
  int64_t panel = 0;
};

struct QuantizedTiling {
  int64_t lanes, mr, nr, mc, nc;
  /// Columns of the tiles of one row (decode): more than nr, so that enough
  /// independent FMA chains hide the FMA latency.
  int64_t nr1;
  /// Vectors per step of the reduction of a per-row format (int8): 32
  /// weights, as a block of the block formats.
  int64_t rowUnroll;
  /// q8_0, q4_0 and q4_1: activations quantized to int8 per block, blocks
  /// multiplied with vpdpbusd on vnniBits (256: one block per step, 512:
  /// two).
  bool int8Activations = false;
  int64_t vnniBits = 256;
  /// Panels of columns per register tile (panelTile): mr rows x pv
  /// panels, or one row x pv panels; pc panels per parallel block.
  int64_t pv = 1, pc = 1;
};

/// Whether the format's blocks have a minimum added to each value (q4_1).
bool hasMinimum(const WeightFormatInfo &format) {
  return format.format == WeightFormat::Q4_1;
}

/// The quantized generic `op` in the form the kernel needs, or the reason it
/// is not.
FailureOr<QuantizedMatch> matchQuantized(linalg::GenericOp op,
                                         int64_t lanes, std::string &reason) {
  auto name = op->getAttrOfType<StringAttr>(cpu::kQuantizedAttr);
  if (!name)
    return failure();
  std::optional<WeightFormatInfo> format = getWeightFormat(name.getValue());
  if (!format) {
    reason = "unknown weight format";
    return failure();
  }
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() < 2 ||
      op.getNumDpsInits() != 1) {
    reason = "not on buffers";
    return failure();
  }
  QuantizedMatch m{op, *format, op.getDpsInputs()[0], op.getDpsInputs()[1],
                   op.getDpsInits()[0]};
  auto xType = dyn_cast<MemRefType>(m.x.getType());
  auto blocksType = dyn_cast<MemRefType>(m.blocks.getType());
  auto cType = dyn_cast<MemRefType>(m.c.getType());
  if (!xType || !blocksType || !cType || xType.getRank() != 3 ||
      blocksType.getRank() != 3 || cType.getRank() != 2 ||
      !xType.getElementType().isF32() || !cType.getElementType().isF32()) {
    reason = "unexpected operand types";
    return failure();
  }
  if (!cpu::hasUnitInnerStride(m.x) || !cpu::hasUnitInnerStride(m.blocks)) {
    reason = "x or the blocks are not contiguous along the reduction";
    return failure();
  }
  if (auto panel = op->getAttrOfType<IntegerAttr>(cpu::kQuantizedPanelAttr)) {
    m.panel = panel.getInt();
    int64_t bytes = blocksType.getDimSize(2);
    // A block per panel of w columns (int8: w rows; rowsInWholeBlocks
    // decides whether the kernel takes them).
    bool packed = format->isPerRow()
                      ? !ShapedType::isDynamic(bytes) && bytes % m.panel == 0
                      : bytes == format->blockBytes * m.panel;
    if (!packed || !cpu::hasUnitInnerStride(m.c)) {
      reason = "panels whose blocks or output are not in the packed layout";
      return failure();
    }
    return m;
  }
  // Vectors of weights must not straddle a block, nor q4's two halves
  // (int8's block is the row: its kernel takes any length).
  if (!format->isPerRow() && (lanes > format->blockElements / 2 ||
                              (format->blockElements / 2) % lanes)) {
    reason = "vectors of " + std::to_string(lanes) +
             " lanes do not divide the half blocks of 16 weights";
    return failure();
  }
  return m;
}

/// Whether the rows of a per-row format (int8) split into whole blocks of
/// the activations' quantization: their length is static and a multiple of
/// 32. (Block formats always do.)
bool rowsInWholeBlocks(const QuantizedMatch &m) {
  if (!m.format.isPerRow())
    return true;
  auto type = cast<MemRefType>(m.blocks.getType());
  // Panels hold w rows' bytes side by side (matchQuantized checked them).
  return !type.isDynamicDim(2) &&
         (type.getDimSize(2) / std::max<int64_t>(m.panel, 1) -
          m.format.valuesOffset) %
                 kActivationBlock ==
             0;
}

class QuantizedEmitter : seq::cpu::KernelBuilder {
public:
  QuantizedEmitter(QuantizedMatch m, const QuantizedTiling &t,
                   OpBuilder &b)
      : KernelBuilder(b, m.op.getLoc()), m(m), t(t),
        vecType(VectorType::get({t.lanes}, b.getF32Type())) {}

  void emit() {
    Value rows = memref::DimOp::create(b, loc, m.c, 0);
    Value cols = memref::DimOp::create(b, loc, m.c, 1);
    if (m.format.isPerRow()) {
      // Panels hold the bytes of w rows side by side.
      Value bytes = memref::DimOp::create(b, loc, m.blocks, 2);
      if (m.panel)
        bytes = arith::DivUIOp::create(b, loc, bytes, idx(m.panel));
      rowLength = sub(bytes, idx(m.format.valuesOffset));
    }
    // With int8 activations an int8 row is read in the activations' blocks.
    numBlocks = m.format.isPerRow() && t.int8Activations
                    ? arith::DivUIOp::create(b, loc, rowLength,
                                             idx(kActivationBlock))
                          .getResult()
                    : memref::DimOp::create(b, loc, m.blocks, 1).getResult();
    if (m.panel) {
      emitPanels(rows, cols);
      return;
    }
    if (t.int8Activations)
      quantizeActivations(rows);
    parallelBlocks(rows, cols, t.nc, [&](Value m0, Value mEnd, Value n0,
                                         Value nEnd) {
      emitBlock(m0, mEnd, n0, nEnd);
    });
    if (t.int8Activations) {
      memref::DeallocOp::create(b, loc, xq);
      memref::DeallocOp::create(b, loc, dx);
      if (xm)
        memref::DeallocOp::create(b, loc, xm);
    }
  }

private:

  /// An scf.parallel over blocks of mc rows x `step` columns (or panels)
  /// of [rows, cols], whose body `body` emits for the block
  /// [m0, mEnd) x [n0, nEnd). The columns are the outer loop, so that a
  /// thread's share (the last loop runs fastest) takes a block of columns'
  /// rows in turn while its weights stay in cache: rows first, every mc
  /// rows re-read all the weights from memory.
  void parallelBlocks(
      Value rows, Value cols, int64_t step,
      function_ref<void(Value m0, Value mEnd, Value n0, Value nEnd)> body) {
    Value zero = idx(0);
    scf::ParallelOp::create(
        b, loc, ValueRange{zero, zero}, ValueRange{cols, rows},
        ValueRange{idx(step), idx(t.mc)},
        [&](OpBuilder &nested, Location, ValueRange ivs) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          body(ivs[1], min(add(ivs[1], idx(t.mc)), rows), ivs[0],
               min(add(ivs[0], idx(step)), cols));
        });
  }

  void emitBlock(Value m0, Value mEnd, Value n0, Value nEnd) {
    Value mFull = fullEnd(m0, mEnd, t.mr);
    auto rowsOf = [&](int64_t mr) {
      return [&, mr](Value m1) {
        int64_t nr = mr == 1 ? t.nr1 : t.nr;
        Value nFull = fullEnd(n0, nEnd, nr);
        auto emitTile = [&](int64_t mr, int64_t nr, Value m1, Value n1) {
          if (t.int8Activations)
            int8Tile(mr, nr, m1, n1);
          else if (m.format.isPerRow())
            rowTile(mr, nr, m1, n1);
          else
            tile(mr, nr, m1, n1);
        };
        loop(n0, nFull, nr, [&](Value n1) { emitTile(mr, nr, m1, n1); });
        loop(nFull, nEnd, 1, [&](Value n1) { emitTile(mr, 1, m1, n1); });
      };
    };
    loop(m0, mFull, t.mr, rowsOf(t.mr));
    loop(mFull, mEnd, 1, rowsOf(1));
  }

  /// The weight rows (output columns) of the register tile after the one
  /// of columns `colAt`, clamped to the last, for `prefetch`.
  SmallVector<Value> nextTileColumns(ArrayRef<Value> colAt) {
    Value last = sub(memref::DimOp::create(b, loc, m.blocks, 0), idx(1));
    SmallVector<Value> next;
    for (Value col : colAt)
      next.push_back(min(add(col, idx(colAt.size())), last));
    return next;
  }

  /// Prefetches byte `byte` of block `kb` of weight row `n` (of panel `n`
  /// when the blocks are packed): a tile, as it reads a step of its rows,
  /// asks for the same step of the next tile's rows. A tile reads nr rows
  /// side by side, a stream per row, which the hardware prefetchers of the
  /// host measured (AMD Zen 5) did not follow far enough ahead: decode's
  /// matrix-vector product streaming a q8_0 weight from memory read 14 GB/s
  /// without this and 30-37 GB/s with it (docs/performance.md, "Prefetching
  /// the next tile's weights"). Into the L2 cache (prefetcht1), not L1: the
  /// next tile's bytes (up to 20 KB for a q8_0 tile of two 16-column panels)
  /// come a whole tile ahead, and pulled into a 32-48 KB L1 with the current
  /// tile's they evicted the lines still being read; from L2 they measured
  /// 1.2-1.5x the tokens per second of decode on AMD Zen 5
  /// (docs/performance.md, "Prefetching into L2").
  void prefetch(Value n, Value kb, Value byte) {
    memref::PrefetchOp::create(b, loc, m.blocks, ValueRange{n, kb, byte},
                               /*isWrite=*/false, /*localityHint=*/2,
                               /*isDataCache=*/true);
  }

  /// The f32 of the little-endian f16 at byte `offset` of block `kb` of
  /// row `n`.
  Value halfAt(Value n, Value kb, int64_t offset) {
    Type i16 = b.getIntegerType(16);
    auto byte = [&](int64_t at) {
      Value v = memref::LoadOp::create(b, loc, m.blocks,
                                       ValueRange{n, kb, idx(offset + at)});
      return arith::ExtUIOp::create(b, loc, i16, v);
    };
    Value high = arith::ShLIOp::create(
        b, loc, byte(1),
        arith::ConstantOp::create(b, loc, b.getIntegerAttr(i16, 8)));
    Value bits = arith::OrIOp::create(b, loc, byte(0), high);
    Value half = arith::BitcastOp::create(b, loc, b.getF16Type(), bits);
    return arith::ExtFOp::create(b, loc, b.getF32Type(), half);
  }

  /// The f32 of the little-endian f32 at bytes 0..3 of row `n`'s block
  /// (int8's scale).
  Value floatAt(Value n) {
    Type i32 = b.getI32Type();
    Value bits;
    for (int64_t at = 0; at < 4; ++at) {
      Value v = memref::LoadOp::create(b, loc, m.blocks,
                                       ValueRange{n, idx(0), idx(at)});
      Value wide = arith::ExtUIOp::create(b, loc, i32, v);
      if (at)
        wide = arith::ShLIOp::create(
            b, loc, wide,
            arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(8 * at)));
      bits = bits ? arith::OrIOp::create(b, loc, bits, wide) : wide;
    }
    return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
  }

  Value splat(Value scalar) {
    return vector::BroadcastOp::create(b, loc, vecType, scalar);
  }

  Value intSplat(VectorType type, int64_t v) {
    return arith::ConstantOp::create(
        b, loc, type,
        DenseElementsAttr::get(
            type, b.getIntegerAttr(type.getElementType(), v)));
  }

  /// The `lanes` dequantized weights starting at weight `chunk * lanes` of
  /// block `kb` of row `n`, whose scale is `d` (and minimum `min`).
  Value weights(Value n, Value kb, int64_t chunk, Value d, Value min) {
    int64_t half = m.format.blockElements / 2;
    int64_t first = chunk * t.lanes;
    VectorType bytes = VectorType::get({t.lanes}, b.getIntegerType(8));
    if (m.format.bits == 8) {
      Value q = vector::LoadOp::create(
          b, loc, bytes, m.blocks,
          ValueRange{n, kb, idx(m.format.valuesOffset + first)});
      Value f = arith::SIToFPOp::create(b, loc, vecType, q);
      return arith::MulFOp::create(b, loc, f, d);
    }
    // Weights 0..15 are the low nibbles of bytes 0..15, 16..31 the high.
    Value q = vector::LoadOp::create(
        b, loc, bytes, m.blocks,
        ValueRange{n, kb, idx(m.format.valuesOffset + first % half)});
    VectorType words = VectorType::get({t.lanes}, b.getI32Type());
    Value wide = arith::ExtUIOp::create(b, loc, words, q);
    if (first >= half)
      wide = arith::ShRUIOp::create(b, loc, wide, intSplat(words, 4));
    Value nibble = arith::AndIOp::create(b, loc, wide, intSplat(words, 15));
    bool hasMin = m.format.format == WeightFormat::Q4_1;
    if (!hasMin)
      nibble = arith::SubIOp::create(b, loc, nibble, intSplat(words, 8));
    Value f = arith::SIToFPOp::create(b, loc, vecType, nibble);
    Value w = arith::MulFOp::create(b, loc, f, d);
    return hasMin ? arith::AddFOp::create(b, loc, w, min) : w;
  }

  /// One register tile: rows m1.. m1 + mr, columns n1 .. n1 + nr.
  void tile(int64_t mr, int64_t nr, Value m1, Value n1) {
    Value zeros = arith::ConstantOp::create(b, loc, vecType,
                                            b.getZeroAttr(vecType));
    SmallVector<Value> init(mr * nr, zeros);
    SmallVector<Value> rowAt = consecutive(m1, mr);
    SmallVector<Value> colAt = consecutive(n1, nr);
    SmallVector<Value> nextColAt = nextTileColumns(colAt);
    auto forOp = scf::ForOp::create(b, loc, idx(0), numBlocks, idx(1), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(forOp.getBody());
      Value kb = forOp.getInductionVar();
      SmallVector<Value> acc(forOp.getRegionIterArgs());
      SmallVector<Value> scale, minimum;
      for (int64_t jn = 0; jn < nr; ++jn) {
        prefetch(nextColAt[jn], kb, idx(0));
        scale.push_back(splat(halfAt(colAt[jn], kb, 0)));
        minimum.push_back(m.format.format == WeightFormat::Q4_1
                              ? splat(halfAt(colAt[jn], kb, 2))
                              : Value());
      }
      for (int64_t chunk = 0; chunk < m.format.blockElements / t.lanes;
           ++chunk) {
        SmallVector<Value> xs;
        for (int64_t i = 0; i < mr; ++i)
          xs.push_back(vector::LoadOp::create(
              b, loc, vecType, m.x,
              ValueRange{rowAt[i], kb, idx(chunk * t.lanes)}));
        for (int64_t jn = 0; jn < nr; ++jn) {
          Value w = weights(colAt[jn], kb, chunk, scale[jn], minimum[jn]);
          for (int64_t i = 0; i < mr; ++i)
            acc[i * nr + jn] =
                vector::FMAOp::create(b, loc, xs[i], w, acc[i * nr + jn]);
        }
      }
      scf::YieldOp::create(b, loc, acc);
    }
    for (int64_t i = 0; i < mr; ++i) {
      for (int64_t jn = 0; jn < nr; ++jn) {
        Value sum = vector::ReductionOp::create(
            b, loc, vector::CombiningKind::ADD, forOp.getResult(i * nr + jn));
        SmallVector<Value, 2> at = {rowAt[i], colAt[jn]};
        Value old = memref::LoadOp::create(b, loc, m.c, at);
        memref::StoreOp::create(b, loc, arith::AddFOp::create(b, loc, old, sum),
                                m.c, at);
      }
    }
  }

  /// One register tile of a format of one block per row (int8): rows
  /// m1 .. m1 + mr, columns n1 .. n1 + nr. The reduction runs over the row in
  /// steps of t.rowUnroll vectors, then of one vector, then of single
  /// weights; the accumulators sum x * q (the int8 values widened to f32),
  /// and each output's sum is multiplied by its row's scale once.
  void rowTile(int64_t mr, int64_t nr, Value m1, Value n1) {
    Type f32 = b.getF32Type();
    // A single row has `sets` accumulators per column, alternating by
    // vector, so that enough FMA chains are in flight.
    int64_t sets = mr == 1 ? 2 : 1;
    int64_t perSet = mr * nr;
    Value zeros =
        arith::ConstantOp::create(b, loc, vecType, b.getZeroAttr(vecType));
    SmallVector<Value> rowAt = consecutive(m1, mr);
    SmallVector<Value> colAt = consecutive(n1, nr);
    SmallVector<Value> nextColAt = nextTileColumns(colAt);
    VectorType bytes = VectorType::get({t.lanes}, b.getIntegerType(8));
    Value zero = idx(0);
    // `vectors` vectors of the row from weight k on, into `acc`.
    auto step = [&](Value k, int64_t vectors, SmallVector<Value> &acc) {
      for (int64_t jn = 0; jn < nr; ++jn)
        prefetch(nextColAt[jn], zero, add(k, idx(m.format.valuesOffset)));
      for (int64_t u = 0; u < vectors; ++u) {
        Value at = add(k, idx(u * t.lanes));
        Value byteAt = add(at, idx(m.format.valuesOffset));
        int64_t set = u % sets;
        SmallVector<Value> xs;
        for (int64_t i = 0; i < mr; ++i)
          xs.push_back(vector::LoadOp::create(b, loc, vecType, m.x,
                                              ValueRange{rowAt[i], zero, at}));
        for (int64_t jn = 0; jn < nr; ++jn) {
          Value q = vector::LoadOp::create(b, loc, bytes, m.blocks,
                                           ValueRange{colAt[jn], zero, byteAt});
          Value w = arith::SIToFPOp::create(b, loc, vecType, q);
          for (int64_t i = 0; i < mr; ++i) {
            Value &sum = acc[set * perSet + i * nr + jn];
            sum = vector::FMAOp::create(b, loc, xs[i], w, sum);
          }
        }
      }
    };
    auto vectorLoop = [&](Value lo, Value hi, int64_t vectors,
                          ValueRange init) {
      auto forOp =
          scf::ForOp::create(b, loc, lo, hi, idx(vectors * t.lanes), init);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(forOp.getBody());
      SmallVector<Value> acc(forOp.getRegionIterArgs());
      step(forOp.getInductionVar(), vectors, acc);
      scf::YieldOp::create(b, loc, acc);
      return forOp;
    };
    Value kMain = fullEnd(zero, rowLength, t.rowUnroll * t.lanes);
    Value kVectors = fullEnd(kMain, rowLength, t.lanes);
    SmallVector<Value> init(sets * perSet, zeros);
    scf::ForOp mainLoop = vectorLoop(zero, kMain, t.rowUnroll, init);
    scf::ForOp vecLoop = vectorLoop(kMain, kVectors, 1, mainLoop.getResults());
    // The weights past the last whole vector, one at a time.
    Value scalarZero =
        arith::ConstantOp::create(b, loc, f32, b.getZeroAttr(f32));
    SmallVector<Value> tailInit(perSet, scalarZero);
    auto tailLoop =
        scf::ForOp::create(b, loc, kVectors, rowLength, idx(1), tailInit);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(tailLoop.getBody());
      Value k = tailLoop.getInductionVar();
      Value byteAt = add(k, idx(m.format.valuesOffset));
      SmallVector<Value> acc(tailLoop.getRegionIterArgs());
      SmallVector<Value> xs;
      for (int64_t i = 0; i < mr; ++i)
        xs.push_back(
            memref::LoadOp::create(b, loc, m.x, ValueRange{rowAt[i], zero, k}));
      for (int64_t jn = 0; jn < nr; ++jn) {
        Value q = memref::LoadOp::create(b, loc, m.blocks,
                                         ValueRange{colAt[jn], zero, byteAt});
        Value w = arith::SIToFPOp::create(b, loc, f32, q);
        for (int64_t i = 0; i < mr; ++i) {
          Value &sum = acc[i * nr + jn];
          sum = arith::AddFOp::create(b, loc, sum,
                                      arith::MulFOp::create(b, loc, xs[i], w));
        }
      }
      scf::YieldOp::create(b, loc, acc);
    }
    for (int64_t jn = 0; jn < nr; ++jn) {
      Value scale = floatAt(colAt[jn]);
      for (int64_t i = 0; i < mr; ++i) {
        Value lanes = vecLoop.getResult(i * nr + jn);
        for (int64_t set = 1; set < sets; ++set)
          lanes = arith::AddFOp::create(
              b, loc, lanes, vecLoop.getResult(set * perSet + i * nr + jn));
        Value sum = vector::ReductionOp::create(
            b, loc, vector::CombiningKind::ADD, lanes);
        sum =
            arith::AddFOp::create(b, loc, sum, tailLoop.getResult(i * nr + jn));
        Value scaled = arith::MulFOp::create(b, loc, sum, scale);
        SmallVector<Value, 2> at = {rowAt[i], colAt[jn]};
        Value old = memref::LoadOp::create(b, loc, m.c, at);
        memref::StoreOp::create(
            b, loc, arith::AddFOp::create(b, loc, old, scaled), m.c, at);
      }
    }
  }

  //===--------------------------------------------------------------------===//
  // int8 activations (VNNI)
  //===--------------------------------------------------------------------===//

  /// x quantized as llama.cpp's quantize_row_q8_0 does, once per row and
  /// contraction, before the tiles: per block of 32, amax = max |x|, the
  /// scale d = amax / 127 rounded to f16 (stored widened, in `dx`
  /// [rows, blocks]), and q = round-half-even(x * (127 / amax)) (0 where
  /// amax is 0) in [-127, 127], stored as the unsigned byte q + 128 in `xq`
  /// [rows, blocks * 32]: vpdpbusd's unsigned operand. With `forPanels`
  /// (panelTile), q is stored as it is, the signed operand, and the
  /// correction for the panels' unsigned values in `xs` [rows, blocks]
  /// (i32): -8 times each block's sum of q for q4_0 (whose value is the
  /// nibble - 8), -128 times it for q8_0 (stored as value + 128); none for
  /// q4_1 (its nibbles are its values). For q4_1, d * sum(q) in `xm`
  /// [rows, blocks] (f32), what the block's minimum multiplies (llama.cpp's
  /// q8_1 `s`, there rounded to f16); without panels an eighth of it,
  /// spread over the 8 lanes of a block's accumulator (exactly).
  void quantizeActivations(Value rows, bool forPanels = false) {
    Type i8 = b.getIntegerType(8), f32 = b.getF32Type();
    int64_t block = kActivationBlock;
    Value length = arith::MulIOp::create(b, loc, numBlocks, idx(block));
    int64_t dyn = ShapedType::kDynamic;
    xq = memref::AllocOp::create(b, loc, MemRefType::get({dyn, dyn}, i8),
                                 ValueRange{rows, length});
    dx = memref::AllocOp::create(b, loc, MemRefType::get({dyn, dyn}, f32),
                                 ValueRange{rows, numBlocks});
    if (forPanels && unsignedOffset())
      xs = memref::AllocOp::create(
          b, loc, MemRefType::get({dyn, dyn}, b.getI32Type()),
          ValueRange{rows, numBlocks});
    if (hasMinimum(m.format))
      xm = memref::AllocOp::create(b, loc, MemRefType::get({dyn, dyn}, f32),
                                   ValueRange{rows, numBlocks});
    Value zero = idx(0), one = idx(1);
    scf::ParallelOp::create(
        b, loc, ValueRange{zero}, ValueRange{rows}, ValueRange{one},
        [&](OpBuilder &nested, Location, ValueRange ivs) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          Value row = ivs[0];
          auto forOp = scf::ForOp::create(b, loc, zero, numBlocks, one);
          b.setInsertionPointToStart(forOp.getBody());
          Value kb = forOp.getInductionVar();
          VectorType floats = VectorType::get({block}, f32);
          VectorType words = VectorType::get({block}, b.getI32Type());
          VectorType bytes = VectorType::get({block}, i8);
          // x is [rows, blocks, 32], or [rows, 1, k] for int8's rows.
          SmallVector<Value, 3> xAt{row, kb, zero};
          if (m.format.isPerRow())
            xAt = {row, zero, arith::MulIOp::create(b, loc, kb, idx(block))};
          Value v = vector::LoadOp::create(b, loc, floats, m.x, xAt);
          Value amax = vector::ReductionOp::create(
              b, loc, vector::CombiningKind::MAXNUMF,
              math::AbsFOp::create(b, loc, v));
          auto f32Const = [&](float value) {
            return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
          };
          Value d = arith::DivFOp::create(b, loc, amax, f32Const(127.0f));
          Value half = arith::TruncFOp::create(b, loc, b.getF16Type(), d);
          Value scale = arith::ExtFOp::create(b, loc, f32, half);
          memref::StoreOp::create(b, loc, scale, dx, ValueRange{row, kb});
          Value nonzero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE,
                                                amax, f32Const(0.0f));
          Value inverse = arith::SelectOp::create(
              b, loc, nonzero,
              arith::DivFOp::create(b, loc, f32Const(127.0f), amax),
              f32Const(0.0f));
          Value scaled = arith::MulFOp::create(
              b, loc, v, vector::BroadcastOp::create(b, loc, floats, inverse));
          Value q = arith::FPToSIOp::create(
              b, loc, words, math::RoundEvenOp::create(b, loc, scaled));
          Value stored = arith::TruncIOp::create(b, loc, bytes, q);
          if (xs) {
            Value sum = vector::ReductionOp::create(
                b, loc, vector::CombiningKind::ADD, q);
            Value correction = arith::MulIOp::create(
                b, loc, sum,
                arith::ConstantOp::create(
                    b, loc, b.getI32IntegerAttr(-unsignedOffset())));
            memref::StoreOp::create(b, loc, correction, xs,
                                    ValueRange{row, kb});
          } else if (!forPanels) {
            stored = arith::AddIOp::create(b, loc, stored,
                                           intSplat(bytes, -128));
          }
          if (xm) {
            Value sum = arith::SIToFPOp::create(
                b, loc, f32,
                vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                            q));
            Value term = arith::MulFOp::create(b, loc, scale, sum);
            if (!forPanels)
              term = arith::MulFOp::create(b, loc, term, f32Const(0.125f));
            memref::StoreOp::create(b, loc, term, xm, ValueRange{row, kb});
          }
          vector::StoreOp::create(
              b, loc, stored, xq,
              ValueRange{row, arith::MulIOp::create(b, loc, kb, idx(block))});
        });
  }

  /// vpdpbusd on 256 or 512 bits (the width of `acc`): acc + the sums of
  /// the 4 products of unsigned bytes of `u` and signed bytes of `s` per i32
  /// lane (no saturation).
  Value dpbusd(Value acc, Value u, Value s) {
    int64_t bits = cast<VectorType>(acc.getType()).getNumElements() * 32;
    return LLVM::CallIntrinsicOp::create(
               b, loc, acc.getType(),
               b.getStringAttr("llvm.x86.avx512.vpdpbusd." +
                               std::to_string(bits)),
               ValueRange{acc, u, s})
        .getResult(0);
  }

  /// The byte of an int8 row where its block `kb` of 32 values begins.
  Value rowBlockByte(Value kb) {
    return add(idx(m.format.valuesOffset),
               arith::MulIOp::create(b, loc, kb, idx(kActivationBlock)));
  }

  /// The 32 integer values of block `kb` of row `n` (q8_0: its bytes; q4_0:
  /// the low nibbles of its 16 bytes, then the high ones, minus 8; q4_1:
  /// the nibbles as they are, 0 to 15; int8: the row's values 32 kb to
  /// 32 kb + 31), as vpdpbusd's signed operand.
  Value blockValues(Value n, Value kb) {
    VectorType bytes32 = VectorType::get({32}, b.getIntegerType(8));
    Value at = idx(m.format.valuesOffset);
    if (m.format.isPerRow())
      return vector::LoadOp::create(b, loc, bytes32, m.blocks,
                                    ValueRange{n, idx(0), rowBlockByte(kb)});
    if (m.format.bits == 8)
      return vector::LoadOp::create(b, loc, bytes32, m.blocks,
                                    ValueRange{n, kb, at});
    VectorType bytes16 = VectorType::get({16}, b.getIntegerType(8));
    Value q = vector::LoadOp::create(b, loc, bytes16, m.blocks,
                                     ValueRange{n, kb, at});
    Value low = arith::AndIOp::create(b, loc, q, intSplat(bytes16, 15));
    Value high = arith::ShRUIOp::create(b, loc, q, intSplat(bytes16, 4));
    Value both = vector::ShuffleOp::create(b, loc, low, high, iota(32));
    if (hasMinimum(m.format))
      return both;
    return arith::SubIOp::create(b, loc, both, intSplat(bytes32, 8));
  }

  static SmallVector<int64_t> iota(int64_t n) {
    SmallVector<int64_t> order;
    for (int64_t i = 0; i < n; ++i)
      order.push_back(i);
    return order;
  }

  /// `parts` (vectors of one type) one after the other.
  Value concat(ArrayRef<Value> parts) {
    if (parts.size() == 1)
      return parts.front();
    int64_t n = cast<VectorType>(parts.front().getType()).getNumElements();
    return vector::ShuffleOp::create(b, loc, parts[0], parts[1], iota(2 * n));
  }

  /// The blocks a step of the int8 kernel takes (one per 256 bits).
  int64_t blocksPerStep() const { return t.vnniBits / 256; }

  /// A register tile with int8 activations: rows m1 .. m1 + mr, columns
  /// n1 .. n1 + nr, one f32 accumulator of 8 lanes per block of a step
  /// (one block on 256 bits, two on 512) per (row, column). Per step and
  /// column, the weights' values w of the step's blocks are loaded once and
  /// -128 * sum(w) (per group of 4: the bias of the unsigned activations)
  /// computed once with a vpdpbusd of 128s; per row, a vpdpbusd from that
  /// gives each block's exact integer dot product sum(q * w) in 8 i32
  /// lanes, converted to f32 and added into the accumulator times the f32
  /// product of the two f16 scales (llama.cpp's ggml_vec_dot_q8_0_q8_0).
  /// q4_1 adds its minimum times the row's d * sum(q) per block (xm, an
  /// eighth per lane) with one more FMA (ggml_vec_dot_q4_1_q8_1).
  /// int8's rows are read in blocks of 32 values, each scaled by the
  /// activations' scale alone, and each output's sum by the row's f32
  /// scale once, after the reduction (as rowTile does).
  /// On 512 bits an odd last block is a step whose second half is zeros.
  void int8Tile(int64_t mr, int64_t nr, Value m1, Value n1) {
    int64_t per = blocksPerStep();
    Type f32 = b.getF32Type();
    VectorType accType = VectorType::get({8 * per}, f32);
    VectorType words = VectorType::get({8 * per}, b.getI32Type());
    VectorType bytes = VectorType::get({32 * per}, b.getIntegerType(8));
    VectorType bytes32 = VectorType::get({32}, b.getIntegerType(8));
    VectorType eight = VectorType::get({8}, f32);
    Value zeros =
        arith::ConstantOp::create(b, loc, accType, b.getZeroAttr(accType));
    SmallVector<Value> rowAt = consecutive(m1, mr);
    SmallVector<Value> colAt = consecutive(n1, nr);
    SmallVector<Value> nextColAt = nextTileColumns(colAt);
    // The step of `blocks` blocks (per, or 1 for the last odd block, padded
    // with zeros) from block kb0 on.
    auto step = [&](Value kb0, int64_t blocks, SmallVector<Value> &acc) {
      Value zeroWords =
          arith::ConstantOp::create(b, loc, words, b.getZeroAttr(words));
      Value zeroBytes =
          arith::ConstantOp::create(b, loc, bytes32, b.getZeroAttr(bytes32));
      Value zeroEight =
          arith::ConstantOp::create(b, loc, eight, b.getZeroAttr(eight));
      Value bias = intSplat(bytes, 128);
      SmallVector<Value> kbs;
      for (int64_t p = 0; p < blocks; ++p)
        kbs.push_back(add(kb0, idx(p)));
      // The 8-lane splats of each block's scale, one vector.
      auto scales = [&](function_ref<Value(Value)> scaleOf) {
        SmallVector<Value> parts;
        for (int64_t p = 0; p < per; ++p)
          parts.push_back(p < blocks ? vector::BroadcastOp::create(
                                           b, loc, eight, scaleOf(kbs[p]))
                                     : zeroEight);
        return concat(parts);
      };
      SmallVector<Value> w, negBias, dw, mw;
      bool perRow = m.format.isPerRow();
      for (int64_t jn = 0; jn < nr; ++jn) {
        if (perRow)
          prefetch(nextColAt[jn], idx(0), rowBlockByte(kbs[0]));
        else
          prefetch(nextColAt[jn], kbs[0], idx(0));
        SmallVector<Value> parts;
        for (int64_t p = 0; p < per; ++p)
          parts.push_back(p < blocks ? blockValues(colAt[jn], kbs[p])
                                     : zeroBytes);
        w.push_back(concat(parts));
        negBias.push_back(arith::SubIOp::create(
            b, loc, zeroWords, dpbusd(zeroWords, bias, w.back())));
        // int8's scale is the row's, applied after the reduction.
        if (!perRow)
          dw.push_back(
              scales([&](Value kb) { return halfAt(colAt[jn], kb, 0); }));
        if (xm)
          mw.push_back(
              scales([&](Value kb) { return halfAt(colAt[jn], kb, 2); }));
      }
      Value kAt = arith::MulIOp::create(b, loc, kb0, idx(kActivationBlock));
      for (int64_t i = 0; i < mr; ++i) {
        Value xs =
            blocks == per
                ? vector::LoadOp::create(b, loc, bytes, xq,
                                         ValueRange{rowAt[i], kAt})
                      .getResult()
                : concat({vector::LoadOp::create(b, loc, bytes32, xq,
                                                 ValueRange{rowAt[i], kAt})
                              .getResult(),
                          zeroBytes});
        Value dxi = scales([&](Value kb) {
          return memref::LoadOp::create(b, loc, dx, ValueRange{rowAt[i], kb});
        });
        Value xmi;
        if (xm)
          xmi = scales([&](Value kb) {
            return memref::LoadOp::create(b, loc, xm, ValueRange{rowAt[i], kb});
          });
        for (int64_t jn = 0; jn < nr; ++jn) {
          Value dot = dpbusd(negBias[jn], xs, w[jn]);
          Value f = arith::SIToFPOp::create(b, loc, accType, dot);
          Value scale =
              perRow ? dxi
                     : arith::MulFOp::create(b, loc, dw[jn], dxi).getResult();
          Value &sum = acc[i * nr + jn];
          sum = vector::FMAOp::create(b, loc, f, scale, sum);
          if (xm)
            sum = vector::FMAOp::create(b, loc, mw[jn], xmi, sum);
        }
      }
    };
    SmallVector<Value> init(mr * nr, zeros);
    Value wholeEnd = fullEnd(idx(0), numBlocks, per);
    auto forOp = scf::ForOp::create(b, loc, idx(0), wholeEnd, idx(per), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(forOp.getBody());
      SmallVector<Value> acc(forOp.getRegionIterArgs());
      step(forOp.getInductionVar(), per, acc);
      scf::YieldOp::create(b, loc, acc);
    }
    ValueRange results = forOp.getResults();
    scf::ForOp tailOp;
    if (per > 1) {
      // The last block of an odd count (no trip otherwise).
      tailOp = scf::ForOp::create(b, loc, wholeEnd, numBlocks, idx(1),
                                  forOp.getResults());
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(tailOp.getBody());
      SmallVector<Value> acc(tailOp.getRegionIterArgs());
      step(tailOp.getInductionVar(), 1, acc);
      scf::YieldOp::create(b, loc, acc);
      results = tailOp.getResults();
    }
    SmallVector<Value> rowScales;
    if (m.format.isPerRow())
      for (int64_t jn = 0; jn < nr; ++jn)
        rowScales.push_back(floatAt(colAt[jn]));
    for (int64_t i = 0; i < mr; ++i) {
      for (int64_t jn = 0; jn < nr; ++jn) {
        Value sum = vector::ReductionOp::create(
            b, loc, vector::CombiningKind::ADD, results[i * nr + jn]);
        if (!rowScales.empty())
          sum = arith::MulFOp::create(b, loc, sum, rowScales[jn]);
        SmallVector<Value, 2> at = {rowAt[i], colAt[jn]};
        Value old = memref::LoadOp::create(b, loc, m.c, at);
        memref::StoreOp::create(b, loc, arith::AddFOp::create(b, loc, old, sum),
                                m.c, at);
      }
    }
  }


  //===--------------------------------------------------------------------===//
  // Panels (int8 activations, VNNI)
  //===--------------------------------------------------------------------===//

  /// What the panels' unsigned values exceed the format's by: q4_0's nibble
  /// is its value + 8, q8_0's stored byte its value + 128; q4_1's nibble is
  /// its value.
  int64_t unsignedOffset() const {
    if (hasMinimum(m.format))
      return 0;
    return m.format.bits == 4 ? 8 : 128;
  }

  /// The kernel of q4_0, q4_1 or q8_0 blocks or int8 rows packed into
  /// panels of w = m.panel columns (seq-cpu-pack-weights): x quantized per
  /// block with signed q, then an scf.parallel over blocks of mc rows x pc
  /// panels, register tiles of mr rows x pv panels (one row x pv panels for the
  /// rows left over).
  void emitPanels(Value rows, Value cols) {
    quantizeActivations(rows, /*forPanels=*/true);
    Value panels = memref::DimOp::create(b, loc, m.blocks, 0);
    parallelBlocks(rows, panels, t.pc, [&](Value m0, Value mEnd, Value p0,
                                           Value pEnd) {
      Value mFull = fullEnd(m0, mEnd, t.mr);
      auto rowsOf = [&](int64_t mr) {
        return [&, mr](Value m1) {
          Value pFull = fullEnd(p0, pEnd, t.pv);
          loop(p0, pFull, t.pv,
               [&](Value p1) { panelTile(mr, t.pv, m1, p1, cols); });
          loop(pFull, pEnd, 1,
               [&](Value p1) { panelTile(mr, 1, m1, p1, cols); });
        };
      };
      loop(m0, mFull, t.mr, rowsOf(t.mr));
      loop(mFull, mEnd, 1, rowsOf(1));
    });
    for (Value buffer : {xq, dx, xs, xm})
      if (buffer)
        memref::DeallocOp::create(b, loc, buffer);
  }

  /// The i32 at bytes k .. k + 3 of row `row` of xq (4 quantized
  /// activations) in every lane of a vector of `bytes`: vpdpbusd's signed
  /// operand, which LLVM takes as a broadcast from memory.
  Value broadcastFour(VectorType bytes, Value row, Value k) {
    Type i32 = b.getI32Type();
    Value four = vector::LoadOp::create(
        b, loc, VectorType::get({4}, b.getIntegerType(8)), xq,
        ValueRange{row, k});
    Value word = vector::ExtractOp::create(
        b, loc,
        vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), four),
        ArrayRef<int64_t>{0});
    Value words = vector::BroadcastOp::create(
        b, loc, VectorType::get({bytes.getNumElements() / 4}, i32), word);
    return vector::BitCastOp::create(b, loc, bytes, words);
  }

  /// A register tile of panels: rows m1 .. m1 + mr, panels p1 .. p1 + pv
  /// (columns w p1 .. w (p1 + pv)). Per block of 32 and (row, panel), an
  /// i32 accumulator of w lanes, one per column, starts at the row's
  /// correction (-8 or -128 times sum(q); 0 for q4_1) and takes 8 vpdpbusd: for
  /// each group of 4 value bytes, the panel's vector of those 4 bytes of its w
  /// columns (q8_0: weights 4g .. 4g + 3 of the block, + 128; q4_0: split
  /// into the low nibbles, weights 4g .. 4g + 3, and the high ones,
  /// 16 + 4g .., both + 8), unsigned, times the row's 4 activations at the
  /// same positions, broadcast. That is the block's exact sum of q * w for
  /// w columns at once; converted, it is FMAed into an f32 accumulator of w
  /// columns times the panel's w scales (one vcvtph2ps) times the row's.
  /// int8's panels hold the rows: block kb's groups follow block kb - 1's,
  /// each block is scaled by the row's scale alone, and the sums by the
  /// panel's w f32 scales after the reduction. A single row splits its 8
  /// vpdpbusd into two chains to hide their latency. The values are loaded (and
  /// unpacked) once per tile and used by its mr rows; no horizontal sum is
  /// needed, and C is read and written a vector of w columns at a time (masked
  /// in the last, partial panel).
  void panelTile(int64_t mr, int64_t pv, Value m1, Value p1, Value cols) {
    int64_t w = m.panel;
    Type i8 = b.getIntegerType(8), i32 = b.getI32Type(), f32 = b.getF32Type();
    VectorType bytes = VectorType::get({4 * w}, i8);
    VectorType words = VectorType::get({w}, i32);
    VectorType floats = VectorType::get({w}, f32);
    SmallVector<Value> rowAt = consecutive(m1, mr);
    SmallVector<Value> panelAt = consecutive(p1, pv);
    bool split = mr == 1;
    bool perRow = m.format.isPerRow();
    Value zeros =
        arith::ConstantOp::create(b, loc, floats, b.getZeroAttr(floats));
    int64_t headerBytes = m.format.valuesOffset * w;
    SmallVector<Value> init(mr * pv, zeros);
    auto forOp = scf::ForOp::create(b, loc, idx(0), numBlocks, idx(1), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(forOp.getBody());
      Value kb = forOp.getInductionVar();
      Value k0 = arith::MulIOp::create(b, loc, kb, idx(32));
      // Block kb of a panel: its bytes in [panel, kb, :] from its header
      // (the block formats), or int8's values of the block in [panel, 0, :]
      // after the header and the blocks before it.
      Value kbAt = perRow ? idx(0) : kb;
      Value blockByte = perRow ? add(idx(headerBytes),
                                     arith::MulIOp::create(
                                         b, loc, kb, idx(kActivationBlock * w)))
                               : idx(0);
      Value zeroWords =
          arith::ConstantOp::create(b, loc, words, b.getZeroAttr(words));
      // The same block of the next tile's panels, a cache line at a time,
      // as the other tiles prefetch their next tile's rows (prefetch).
      Value lastPanel = sub(memref::DimOp::create(b, loc, m.blocks, 0), idx(1));
      int64_t blockBytes =
          perRow ? kActivationBlock * w : m.format.blockBytes * w;
      for (int64_t v = 0; v < pv; ++v) {
        Value next = min(add(panelAt[v], idx(pv)), lastPanel);
        for (int64_t line = 0; line < blockBytes; line += 64)
          prefetch(next, kbAt, add(blockByte, idx(line)));
      }
      SmallVector<Value> acc, acc2;
      for (int64_t i = 0; i < mr; ++i) {
        Value start =
            xs ? vector::BroadcastOp::create(
                     b, loc, words,
                     memref::LoadOp::create(b, loc, xs, ValueRange{rowAt[i], kb}))
                     .getResult()
               : zeroWords;
        for (int64_t v = 0; v < pv; ++v) {
          acc.push_back(start);
          if (split)
            acc2.push_back(zeroWords);
        }
      }
      // (values, their first weight in the block) of group g of panel v.
      auto groupValues = [&](int64_t g, int64_t v) {
        Value packed = vector::LoadOp::create(
            b, loc, bytes, m.blocks,
            ValueRange{
                panelAt[v], kbAt,
                add(blockByte, idx((perRow ? 0 : headerBytes) + 4 * w * g))});
        SmallVector<std::pair<Value, int64_t>, 2> parts;
        if (m.format.bits == 8) {
          parts.push_back({packed, 4 * g});
          return parts;
        }
        parts.push_back(
            {arith::AndIOp::create(b, loc, packed, intSplat(bytes, 15)), 4 * g});
        parts.push_back({arith::AndIOp::create(
                             b, loc,
                             arith::ShRUIOp::create(b, loc, packed,
                                                    intSplat(bytes, 4)),
                             intSplat(bytes, 15)),
                         16 + 4 * g});
        return parts;
      };
      int64_t groups = m.format.bits == 8 ? 8 : 4;
      int64_t product = 0;
      for (int64_t g = 0; g < groups; ++g) {
        SmallVector<SmallVector<std::pair<Value, int64_t>, 2>> values;
        for (int64_t v = 0; v < pv; ++v)
          values.push_back(groupValues(g, v));
        for (size_t part = 0; part < values.front().size(); ++part, ++product) {
          int64_t first = values.front()[part].second;
          for (int64_t i = 0; i < mr; ++i) {
            Value xs4 = broadcastFour(bytes, rowAt[i], add(k0, idx(first)));
            for (int64_t v = 0; v < pv; ++v) {
              Value &a = split && product % 2 ? acc2[i * pv + v]
                                              : acc[i * pv + v];
              a = dpbusd(a, values[v][part].first, xs4);
            }
          }
        }
      }
      // The panel's w f16 scales (q4_1: then its w minimums), widened.
      auto panelHalves = [&](int64_t v, int64_t field) -> Value {
        Value raw = vector::LoadOp::create(
            b, loc, VectorType::get({2 * w}, i8), m.blocks,
            ValueRange{panelAt[v], kb, idx(2 * w * field)});
        Value halves = vector::BitCastOp::create(
            b, loc, VectorType::get({w}, b.getF16Type()), raw);
        return arith::ExtFOp::create(b, loc, floats, halves);
      };
      SmallVector<Value> scales, minimums;
      for (int64_t v = 0; v < pv && !perRow; ++v) {
        scales.push_back(panelHalves(v, 0));
        if (xm)
          minimums.push_back(panelHalves(v, 1));
      }
      SmallVector<Value> sums(forOp.getRegionIterArgs());
      for (int64_t i = 0; i < mr; ++i) {
        Value d = vector::BroadcastOp::create(
            b, loc, floats,
            memref::LoadOp::create(b, loc, dx, ValueRange{rowAt[i], kb}));
        Value ds;
        if (xm)
          ds = vector::BroadcastOp::create(
              b, loc, floats,
              memref::LoadOp::create(b, loc, xm, ValueRange{rowAt[i], kb}));
        for (int64_t v = 0; v < pv; ++v) {
          Value dot = acc[i * pv + v];
          if (split)
            dot = arith::AddIOp::create(b, loc, dot, acc2[i * pv + v]);
          Value f = arith::SIToFPOp::create(b, loc, floats, dot);
          Value scale =
              perRow ? d : arith::MulFOp::create(b, loc, scales[v], d);
          Value &sum = sums[i * pv + v];
          sum = vector::FMAOp::create(b, loc, f, scale, sum);
          if (xm)
            sum = vector::FMAOp::create(b, loc, minimums[v], ds, sum);
        }
      }
      scf::YieldOp::create(b, loc, sums);
    }
    // C += the tile, w columns at a time; the last panel may hold fewer
    // than w of C's columns.
    auto colsType = dyn_cast<MemRefType>(m.c.getType());
    bool whole = colsType && !colsType.isDynamicDim(1) &&
                 colsType.getDimSize(1) % w == 0;
    for (int64_t v = 0; v < pv; ++v) {
      Value col = arith::MulIOp::create(b, loc, panelAt[v], idx(w));
      // int8: the panel's w f32 row scales, its first 4w bytes.
      Value rowScales;
      if (perRow)
        rowScales = vector::BitCastOp::create(
            b, loc, floats,
            vector::LoadOp::create(b, loc, VectorType::get({4 * w}, i8),
                                   m.blocks,
                                   ValueRange{panelAt[v], idx(0), idx(0)}));
      Value mask;
      if (!whole)
        mask = vector::CreateMaskOp::create(
            b, loc, VectorType::get({w}, b.getI1Type()),
            ValueRange{min(sub(cols, col), idx(w))});
      for (int64_t i = 0; i < mr; ++i) {
        SmallVector<Value, 2> at = {rowAt[i], col};
        Value sum = forOp.getResult(i * pv + v);
        if (rowScales)
          sum = arith::MulFOp::create(b, loc, sum, rowScales);
        if (whole) {
          Value old = vector::LoadOp::create(b, loc, floats, m.c, at);
          vector::StoreOp::create(
              b, loc, arith::AddFOp::create(b, loc, old, sum), m.c, at);
          continue;
        }
        Value old =
            vector::MaskedLoadOp::create(b, loc, floats, m.c, at, mask, zeros);
        vector::MaskedStoreOp::create(
            b, loc, m.c, at, mask, arith::AddFOp::create(b, loc, old, sum));
      }
    }
  }

  QuantizedMatch m;
  const QuantizedTiling &t;
  VectorType vecType;
  Value numBlocks;
  /// int8 activations: the quantized rows of x (unsigned, q + 128; signed
  /// for panels) and their blocks' scales (quantizeActivations); for
  /// panels, -8 times the blocks' sums of q.
  Value xq, dx, xs, xm;
  /// The weights of a row, for a format of one block per row.
  Value rowLength;
};

struct SeqCPUVectorizeQuantizedPass
    : public mlir::seq::impl::SeqCPUVectorizeQuantizedBase<
          SeqCPUVectorizeQuantizedPass> {
  using Base::Base;

  /// The remarks of the kernel `m` became with `tiling`: its form, and
  /// why int8 activations, asked for (seqc's default), were not used.
  void emitRemarks(QuantizedMatch m, const QuantizedTiling &tiling) {
    const QuantizedTiling &t = tiling;
    if (m.panel) {
      bool nibbles = m.format.bits == 4;
      bool perRow = m.format.isPerRow();
      std::string w = std::to_string(m.panel);
      m.op.emitRemark("quantized contraction vectorized with int8 "
                      "activations on ")
          << m.format.name << " panels: "
          << "x quantized per block of 32 to int8 with an f16 scale "
             "(llama.cpp's q8_0), once per row; per block, vpdpbusd of "
          << m.panel << " columns' "
          << (nibbles ? "unsigned nibbles" : "values + 128")
          << " (one i32 lane per column) times 4 broadcast activations, "
             "from "
          << (hasMinimum(m.format) ? "0"
              : nibbles            ? "-8 sum(q)"
                                   : "-128 sum(q)")
          << (perRow ? ", converted and scaled by the row's scale, the "
                       "panel's " +
                           w + " f32 row scales applied after the reduction"
                     : ", converted and scaled by the panel's " + w +
                           " scales times the row's")
          << (hasMinimum(m.format)
                  ? ", plus its " + w + " minimums times the row's d sum(q)"
                  : "")
          << ", " << t.mr << " rows x " << t.pv
          << (t.pv == 1 ? " panel" : " panels") << " per tile, blocks of "
          << t.mc << " rows x " << t.pc << " panels";
      return;
    }
    if (tiling.int8Activations) {
      bool perRow = m.format.isPerRow();
      m.op.emitRemark("quantized contraction vectorized with int8 "
                      "activations (the target has VNNI; "
                      "--int8-activations=false keeps f32 ones): ")
          << "x quantized per block of 32 to int8 with an f16 scale "
             "(llama.cpp's q8_0), once per row, "
          << m.format.name
          << (perRow ? " rows multiplied in blocks of 32"
                     : " blocks multiplied")
          << " with vpdpbusd, " << t.vnniBits / 256
          << (t.vnniBits > 256 ? " blocks" : " block") << " per step ("
          << t.vnniBits / 32 << " i32 lanes), converted and scaled by "
          << (perRow ? "the activations' scale"
                     : "the product of the two scales")
          << " into " << t.vnniBits / 32 << "-lane f32 accumulators"
          << (perRow ? ", the row's f32 scale applied once per output after "
                       "the reduction"
                     : "")
          << (hasMinimum(m.format) ? " (plus the block's minimum times the "
                                     "sum of its activations)"
                                   : "")
          << ", " << t.mr << " x " << t.nr << " tiles (1 x " << t.nr1
          << " for a single row), blocks of " << t.mc << " x " << t.nc;
      return;
    }
    if (int8Activations && vnniBits >= 256 && !rowsInWholeBlocks(m)) {
      int64_t bytes = cast<MemRefType>(m.blocks.getType()).getDimSize(2);
      m.op.emitRemark("int8 activations not used: ")
          << m.format.name << " rows of "
          << (ShapedType::isDynamic(bytes)
                  ? std::string("a dynamic number of")
                  : std::to_string(bytes - m.format.valuesOffset))
          << " weights are not whole blocks of " << kActivationBlock
          << " (the activations' quantization); the weights are dequantized "
             "to f32 in registers";
    } else if (int8Activations) {
      m.op.emitRemark("int8 activations not used: the target has no VNNI "
                      "(vpdpbusd on 256-bit vectors: AVX-VNNI, or "
                      "AVX512_VNNI with AVX512VL); the weights are "
                      "dequantized to f32 in registers");
    }
    if (m.format.isPerRow())
      m.op.emitRemark("quantized contraction vectorized: ")
          << m.format.name << " weight rows dequantized in registers ("
          << m.format.bits << "-bit values widened to " << t.lanes
          << " f32 lanes, the row's f32 scale applied once per output "
             "after the reduction), "
          << t.mr << " x " << t.nr << " tiles (1 x " << t.nr1
          << " for a single row, two accumulators per column) of " << t.lanes
          << "-lane f32 accumulators, " << t.rowUnroll * t.lanes
          << " weights per step and the rest of a row one at a time, "
             "blocks of "
          << t.mc << " x " << t.nc;
    else
      m.op.emitRemark("quantized contraction vectorized: ")
          << m.format.name << " weight blocks dequantized in registers ("
          << m.format.bits << "-bit values widened to " << t.lanes
          << " f32 lanes, times the block's f16 scale"
          << (m.format.format == WeightFormat::Q4_1 ? " plus its minimum"
                                                    : "")
          << "), " << t.mr << " x " << t.nr << " tiles (1 x " << t.nr1
          << " for a single row) of " << t.lanes
          << "-lane f32 accumulators, blocks of " << t.mc << " x " << t.nc;
  }

  void runOnOperation() override {
    QuantizedTiling t;
    t.lanes = std::max<int64_t>(1, vectorBits / 32);
    // mr * nr accumulators, mr vectors of x, the weights and scales of a
    // column: 4 x 2 with 16 registers (AVX2), 4 x 4 with 32 (AVX-512).
    t.mr = 4;
    t.nr = vectorRegisters >= 32 ? 4 : 2;
    // One row: 4 (8) accumulators, its vector of x, a column's weights and
    // the columns' scales.
    t.nr1 = 2 * t.nr;
    t.mc = 16;
    t.nc = 32;
    t.rowUnroll = std::max<int64_t>(1, 32 / t.lanes);
    SmallVector<QuantizedMatch> found;
    getOperation()->walk([&](linalg::GenericOp op) {
      std::string reason;
      FailureOr<QuantizedMatch> m = matchQuantized(op, t.lanes, reason);
      if (succeeded(m)) {
        found.push_back(*m);
        return;
      }
      if (reason.empty())
        return;
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] left to the scalar loops: "
                              << reason << ": " << op.getLoc() << "\n");
      if (remarks)
        op.emitRemark("quantized contraction left to the scalar loops: ")
            << reason;
    });
    IRRewriter rewriter(&getContext());
    for (QuantizedMatch m : found) {
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] " << m.format.name << " kernel, " << t.mr
                 << " x " << t.nr << " tiles of " << t.lanes
                 << " lanes, blocks of " << t.mc << " x " << t.nc << ": "
                 << m.op.getLoc() << "\n");
      rewriter.setInsertionPoint(m.op);
      QuantizedTiling opTiling = t;
      // Every format's values are integers times a scale (per block, or
      // per row for int8), which vpdpbusd multiplies; int8's rows must be
      // whole blocks of the activations' quantization.
      opTiling.int8Activations =
          int8Activations && vnniBits >= 256 && rowsInWholeBlocks(m);
      opTiling.vnniBits = cpu::vnniKernelBits(vnniBits, vectorBits);
      if (m.panel) {
        // Packed for the int8-activation kernel of this target's vpdpbusd
        // (seq-cpu-pack-weights' options are the pipeline's, as ours):
        // anything else keeps the generic's loops, which read the panels.
        if (!opTiling.int8Activations ||
            m.panel != cpu::quantizedPanelWidth(vnniBits, vectorBits)) {
          if (remarks)
            m.op.emitRemark("quantized contraction left to the scalar "
                            "loops: ")
                << m.format.name << " panels of " << m.panel
                << " columns need int8 activations and vpdpbusd on "
                << m.panel * 32 << " bits";
          continue;
        }
        // mr x pv accumulators of each kind (i32, f32), two panels'
        // values (q4_0: unpacked nibbles), the broadcasts: 4 x 2 with 32
        // registers, 4 x 1 with 16. Blocks of 32 columns, as the other
        // kernels'.
        opTiling.pv = vectorRegisters >= 32 ? 2 : 1;
        opTiling.pc = std::max<int64_t>(opTiling.pv, t.nc / m.panel);
      }
      QuantizedEmitter(m, opTiling, rewriter).emit();
      if (remarks)
        emitRemarks(m, opTiling);
      rewriter.eraseOp(m.op);
    }
  }
};

} // namespace
