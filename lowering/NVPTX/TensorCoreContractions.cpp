//===- TensorCoreContractions.cpp - contractions on tensor cores ----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// A contraction of bf16 or f16 inputs accumulated in f32 (or f32 ones, as
// tf32) becomes a kernel of warp-level matrix products (`nvgpu.mma.sync`
// m16n8k16, tf32 m16n8k8): each block of 128 threads computes a 64 x 64
// tile of the output, its four warps 32 x 32 each (2 x 4 fragments), from
// 64 x 32 and 32 x 64 tiles of the inputs staged in workgroup memory (with
// cp.async into two buffers when the inputs are aligned, the next step's
// copies in flight during this step's products) and read into fragments by
// `nvgpu.ldmatrix`; see buildTensorCoreContraction in Transforms.h.
//
//===----------------------------------------------------------------------===//

#include "lowering/NVPTX/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#define DEBUG_TYPE "seq-nvptx-tile-contractions"

using namespace mlir;
using namespace mlir::seq;

namespace {
// The tiles: a block's output tile, the reduction step staged at once, the
// warps' arrangement in the block tile and the fragments of m16n8k16.
constexpr int64_t kBlockM = 64, kBlockN = 64, kBlockK = 32;
constexpr int64_t kWarpsM = 2, kWarpsN = 2, kWarpSize = 32;
constexpr int64_t kThreads = kWarpsM * kWarpsN * kWarpSize;
constexpr int64_t kFragM = 16, kFragN = 8;
constexpr int64_t kWarpM = kBlockM / kWarpsM, kWarpN = kBlockN / kWarpsN;
constexpr int64_t kFragsM = kWarpM / kFragM, kFragsN = kWarpN / kFragN;
// Rows of the staged tiles are padded by 16 bytes: ldmatrix's eight row
// addresses of a tile (16-bit elements), or the 32 lanes' elements of a
// tf32 fragment, then fall in different banks, and every row stays 16-byte
// aligned. cp.async copies 16 bytes.
constexpr int64_t kPadBytes = 16, kCopyBytes = 16;
} // namespace

/// Whether `value` is `arith.extf` of the block argument `arg` from `type`,
/// or `arg` itself where `type` is f32.
static bool isExtensionOf(Value value, BlockArgument arg, Type type) {
  if (type.isF32())
    return value == arg;
  auto ext = value.getDefiningOp<arith::ExtFOp>();
  return ext && ext.getIn() == arg && arg.getType() == type;
}

LogicalResult mlir::seq::tensorCoreContractionPrecondition(linalg::LinalgOp op,
                                                           bool tf32,
                                                           std::string &why) {
  Type in = getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType());
  Type in2 = getElementTypeOrSelf(op.getDpsInputOperand(1)->get().getType());
  Type out = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
  if (in != in2 || !(in.isBF16() || in.isF16() || (tf32 && in.isF32())) ||
      !out.isF32()) {
    why = tf32 ? "its inputs are not both bf16, f16 or f32 accumulated in f32"
               : "its inputs are not both bf16 or both f16 accumulated in f32";
    return failure();
  }
  // The body: out + ext(a) * ext(b) (f32: out + a * b), in either operand
  // order.
  Block &body = op->getRegion(0).front();
  auto add = body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  Value acc = body.getArgument(2);
  auto mul = add ? (add.getLhs() == acc ? add.getRhs() : add.getLhs())
                       .getDefiningOp<arith::MulFOp>()
                 : arith::MulFOp();
  if (!add || body.getOperations().size() != (in.isF32() ? 3u : 5u) ||
      (add.getLhs() != acc && add.getRhs() != acc) || !mul ||
      !((isExtensionOf(mul.getLhs(), body.getArgument(0), in) &&
         isExtensionOf(mul.getRhs(), body.getArgument(1), in)) ||
        (isExtensionOf(mul.getLhs(), body.getArgument(1), in) &&
         isExtensionOf(mul.getRhs(), body.getArgument(0), in)))) {
    why = "its body is not a sum of products of its inputs (widened to f32)";
    return failure();
  }
  for (Value operand : op->getOperands()) {
    if (!isa<MemRefType>(operand.getType())) {
      why = "an operand is not a ranked buffer";
      return failure();
    }
    if (isGlobalView(operand)) {
      why = "an operand is a constant global, which the kernel cannot read";
      return failure();
    }
  }
  return success();
}

namespace {
/// One input's tile in workgroup memory: `rows x cols` elements whose
/// columns are the operand's innermost dimension (so that a thread copies
/// contiguous elements), in one buffer, or two where cp.async may run.
struct StagedTile {
  OpOperand *operand;
  /// The loop dimensions of the tile's rows and columns.
  unsigned rowDim, colDim;
  int64_t rows, cols;
  /// memref<slots x rows x (cols + pad)>, a workgroup attribution.
  Value buffers;
};

/// Builds the kernel; one instance per contraction.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, linalg::LinalgOp op, unsigned mDim,
                unsigned nDim, unsigned kDim)
      : b(b), loc(loc), op(op), mDim(mDim), nDim(nDim), kDim(kDim),
        elementType(
            getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType())),
        tf32(elementType.isF32()),
        elementBytes(elementType.getIntOrFloatBitWidth() / 8),
        copyElements(kCopyBytes / elementBytes), fragK(tf32 ? 8 : 16) {}

  gpu::LaunchOp build();

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) {
    return b.createOrFold<arith::AddIOp>(loc, x, y);
  }
  Value mul(Value x, Value y) {
    return b.createOrFold<arith::MulIOp>(loc, x, y);
  }
  Value div(Value x, int64_t y) {
    return b.createOrFold<arith::DivUIOp>(loc, x, index(y));
  }
  Value rem(Value x, int64_t y) {
    return b.createOrFold<arith::RemUIOp>(loc, x, index(y));
  }
  Value less(Value x, Value y) {
    return b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, x, y);
  }
  Value both(Value x, Value y) {
    return b.createOrFold<arith::AndIOp>(loc, x, y);
  }

  /// The tile of `operand` over loop dimensions `d0` (`size0` of them) and
  /// `d1`, its columns the operand's innermost dimension.
  StagedTile planTile(OpOperand *operand, unsigned d0, int64_t size0,
                      unsigned d1, int64_t size1);
  /// Whether every input can be copied 16 bytes at a time: its tile's
  /// columns are its innermost dimension, of stride 1, its other strides and
  /// its offset are multiples of 16 bytes, and its base is 16-byte aligned.
  /// Computed on the host (planTile first).
  Value alignedInputs();
  /// The indices of `operand` where loop dimension `d0` is `v0` and `d1` is
  /// `v1`, and the batch dimensions are the block's.
  SmallVector<Value> indices(OpOperand *operand, unsigned d0, Value v0,
                             unsigned d1, Value v1);
  /// The tile's first row and column at reduction step `k0`.
  std::pair<Value, Value> origin(const StagedTile &tile, Value k0);
  /// The tile's row and column extents.
  std::pair<Value, Value> extents(const StagedTile &tile);
  /// Copies the tile at reduction step `k0` into buffer `slot`, zeros past
  /// the edges: element by element, consecutive threads on consecutive
  /// columns.
  void stageElements(const StagedTile &tile, Value k0, Value slot);
  /// The same with cp.async of 16 bytes per copy, the copies past the edges
  /// reading fewer elements or none; appends their tokens to `tokens`.
  void stageAsync(const StagedTile &tile, Value k0, Value slot,
                  SmallVectorImpl<Value> &tokens);
  /// Stages both tiles of reduction step `step` into buffer `step % 2` with
  /// cp.async (reading nothing past the last step), then waits for all
  /// copies but these.
  void stageAsyncStep(Value step, Value steps);
  /// The products of one staged step in buffer `slot`: each warp's 2 x 4
  /// fragments accumulated into `accs`.
  void multiply(Value slot, SmallVectorImpl<Value> &accs);
  /// The reduction loop, its accumulators' results: with `async`, the
  /// inputs' tiles in two buffers, the next step's copies in flight during
  /// this step's products; else staged element by element into one buffer.
  SmallVector<Value> reduce(bool async, ValueRange init);
  /// The A fragment (vector<4x2>, tf32 vector<4x1>) of rows `row0` and
  /// reduction offset `k` in buffer `slot`, and the B fragment (vector<2x2>,
  /// tf32 vector<2x1>) of columns `col0`.
  Value loadA(Value slot, Value row0, Value k);
  Value loadB(Value slot, Value col0, Value k);
  /// A tf32 fragment of `tile` read element by element: `offsets` give each
  /// register's element relative to lane l's (g, t) = (l / 4, l % 4) in the
  /// fragment's (row or column, reduction) coordinates, from (`start`, `k`).
  Value loadTF32(const StagedTile &tile, Value slot, Value start, Value k,
                 ArrayRef<std::pair<int64_t, int64_t>> offsets);

  OpBuilder &b;
  Location loc;
  linalg::LinalgOp op;
  unsigned mDim, nDim, kDim;
  /// The inputs' element type: bf16 and f16 products are m16n8k16 with
  /// fragments read by ldmatrix, f32 ones tf32 m16n8k8 with fragments read
  /// element by element (ldmatrix moves 16-bit elements only).
  Type elementType;
  bool tf32;
  /// Bytes per element, elements per cp.async, and the fragments' depth.
  int64_t elementBytes, copyElements, fragK;
  Value sizeM, sizeN, sizeK;
  // Per kernel: the thread and its lane, the block's output tile origin, the
  // batch dimensions' indices and the staged tiles.
  Value thread, lane, m0, n0, warpRow, warpCol;
  SmallVector<Value> ivOf;
  StagedTile tileA, tileB;
};
} // namespace

StagedTile KernelBuilder::planTile(OpOperand *operand, unsigned d0,
                                   int64_t size0, unsigned d1, int64_t size1) {
  AffineMap map = op.getMatchingIndexingMap(operand);
  bool d0Inner =
      cast<AffineDimExpr>(map.getResults().back()).getPosition() == d0;
  if (d0Inner)
    return StagedTile{operand, d1, d0, size1, size0, Value()};
  return StagedTile{operand, d0, d1, size0, size1, Value()};
}

Value KernelBuilder::alignedInputs() {
  // A static layout may decide it, and a tile whose columns are not its
  // operand's innermost dimension (a batch dimension is) cannot be copied
  // 16 bytes at a time.
  for (const StagedTile *tile : {&tileA, &tileB}) {
    OpOperand *operand = tile->operand;
    AffineMap map = op.getMatchingIndexingMap(operand);
    if (cast<AffineDimExpr>(map.getResults().back()).getPosition() !=
        tile->colDim)
      return arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
    auto [strides, offset] =
        cast<MemRefType>(operand->get().getType()).getStridesAndOffset();
    auto breaks = [&](int64_t known) {
      return !ShapedType::isDynamic(known) && known % copyElements != 0;
    };
    if ((!ShapedType::isDynamic(strides.back()) && strides.back() != 1) ||
        breaks(offset) || llvm::any_of(ArrayRef(strides).drop_back(), breaks))
      return arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
  }
  Value aligned;
  for (OpOperand *operand : op.getDpsInputOperands()) {
    Value memref = operand->get();
    auto type = cast<MemRefType>(memref.getType());
    auto [staticStrides, staticOffset] = type.getStridesAndOffset();
    auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
    // A static stride or offset is a constant, so that the test folds where
    // the layout decides it.
    auto value = [&](int64_t known, Value dynamic) {
      return ShapedType::isDynamic(known) ? dynamic : index(known);
    };
    auto isMultiple = [&](Value v, int64_t of) {
      return b.createOrFold<arith::CmpIOp>(
          loc, arith::CmpIPredicate::eq,
          b.createOrFold<arith::RemUIOp>(loc, v, index(of)), index(0));
    };
    Value ok = b.createOrFold<arith::CmpIOp>(
        loc, arith::CmpIPredicate::eq,
        value(staticStrides.back(), metadata.getStrides().back()), index(1));
    for (auto [known, dynamic] : llvm::zip(ArrayRef(staticStrides).drop_back(),
                                           metadata.getStrides().drop_back()))
      ok = both(ok, isMultiple(value(known, dynamic), copyElements));
    ok = both(ok, isMultiple(value(staticOffset, metadata.getOffset()),
                             copyElements));
    ok = both(ok, isMultiple(memref::ExtractAlignedPointerAsIndexOp::create(
                                 b, loc, memref),
                             kCopyBytes));
    aligned = aligned ? both(aligned, ok) : ok;
  }
  return aligned;
}

SmallVector<Value> KernelBuilder::indices(OpOperand *operand, unsigned d0,
                                          Value v0, unsigned d1, Value v1) {
  SmallVector<Value> result;
  for (AffineExpr expr : op.getMatchingIndexingMap(operand).getResults()) {
    unsigned d = cast<AffineDimExpr>(expr).getPosition();
    result.push_back(d == d0 ? v0 : d == d1 ? v1 : ivOf[d]);
  }
  return result;
}

std::pair<Value, Value> KernelBuilder::origin(const StagedTile &tile,
                                              Value k0) {
  auto start = [&](unsigned d) { return d == mDim ? m0 : d == nDim ? n0 : k0; };
  return {start(tile.rowDim), start(tile.colDim)};
}

std::pair<Value, Value> KernelBuilder::extents(const StagedTile &tile) {
  auto extent = [&](unsigned d) {
    return d == mDim ? sizeM : d == nDim ? sizeN : sizeK;
  };
  return {extent(tile.rowDim), extent(tile.colDim)};
}

void KernelBuilder::stageElements(const StagedTile &tile, Value k0,
                                  Value slot) {
  auto [row0, col0] = origin(tile, k0);
  auto [rowSize, colSize] = extents(tile);
  auto loop = scf::ForOp::create(b, loc, thread, index(tile.rows * tile.cols),
                                 index(kThreads));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value e = loop.getInductionVar();
  Value r = div(e, tile.cols), c = rem(e, tile.cols);
  Value gr = add(row0, r), gc = add(col0, c);
  auto ifOp = scf::IfOp::create(b, loc, elementType,
                                both(less(gr, rowSize), less(gc, colSize)),
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value v = memref::LoadOp::create(
        b, loc, tile.operand->get(),
        indices(tile.operand, tile.rowDim, gr, tile.colDim, gc));
    scf::YieldOp::create(b, loc, v);
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(
        b, loc,
        Value(arith::ConstantOp::create(b, loc, b.getZeroAttr(elementType))));
  }
  memref::StoreOp::create(b, loc, ifOp.getResult(0), tile.buffers,
                          ValueRange{slot, r, c});
}

void KernelBuilder::stageAsync(const StagedTile &tile, Value k0, Value slot,
                               SmallVectorImpl<Value> &tokens) {
  auto [row0, col0] = origin(tile, k0);
  auto [rowSize, colSize] = extents(tile);
  int64_t perRow = tile.cols / copyElements;
  int64_t copies = tile.rows * perRow;
  assert(copies % kThreads == 0 && "copies do not divide among the threads");
  Value zero = index(0);
  for (int64_t i = 0; i < copies / kThreads; ++i) {
    Value q = add(thread, index(i * kThreads));
    Value r = div(q, perRow), c = mul(rem(q, perRow), index(copyElements));
    Value gr = add(row0, r), gc = add(col0, c);
    // Elements that exist: up to a copy's, none past the last row or column. A
    // copy of none reads nothing, from the operand's first element.
    Value left = b.createOrFold<arith::SubIOp>(loc, colSize, gc);
    Value count = b.createOrFold<arith::MinSIOp>(
        loc, b.createOrFold<arith::MaxSIOp>(loc, left, zero),
        index(copyElements));
    Value inside = less(gr, rowSize);
    count = arith::SelectOp::create(b, loc, inside, count, zero);
    Value any = b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt,
                                              count, zero);
    Value srcRow = arith::SelectOp::create(b, loc, any, gr, zero);
    Value srcCol = arith::SelectOp::create(b, loc, any, gc, zero);
    SmallVector<Value> src =
        indices(tile.operand, tile.rowDim, srcRow, tile.colDim, srcCol);
    // A copy of none reads no batch either.
    for (Value &v : src)
      if (v != srcRow && v != srcCol)
        v = arith::SelectOp::create(b, loc, any, v, zero);
    tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
        b, loc, tile.buffers, ValueRange{slot, r, c}, tile.operand->get(), src,
        b.getIndexAttr(copyElements), count, /*bypassL1=*/b.getUnitAttr()));
  }
}

void KernelBuilder::stageAsyncStep(Value step, Value steps) {
  // Past the last step, the copies read nothing: every step then commits a
  // group, and the wait below covers the previous step's.
  Value k0 = arith::SelectOp::create(b, loc, less(step, steps),
                                     mul(step, index(kBlockK)), sizeK);
  Value slot = rem(step, 2);
  SmallVector<Value> tokens;
  stageAsync(tileA, k0, slot, tokens);
  stageAsync(tileB, k0, slot, tokens);
  Value group = nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokens);
  nvgpu::DeviceAsyncWaitOp::create(b, loc, group, b.getI32IntegerAttr(1));
}

void KernelBuilder::multiply(Value slot, SmallVectorImpl<Value> &accs) {
  for (int64_t kk = 0; kk < kBlockK / fragK; ++kk) {
    Value k = index(kk * fragK);
    SmallVector<Value> as, bs;
    for (int64_t fm = 0; fm < kFragsM; ++fm)
      as.push_back(loadA(slot, add(warpRow, index(fm * kFragM)), k));
    for (int64_t fn = 0; fn < kFragsN; ++fn)
      bs.push_back(loadB(slot, add(warpCol, index(fn * kFragN)), k));
    for (int64_t fm = 0; fm < kFragsM; ++fm)
      for (int64_t fn = 0; fn < kFragsN; ++fn) {
        Value &acc = accs[fm * kFragsN + fn];
        acc = nvgpu::MmaSyncOp::create(b, loc, as[fm], bs[fn], acc,
                                       ArrayRef<int64_t>{kFragM, kFragN, fragK},
                                       /*tf32Enabled=*/tf32);
      }
  }
}

SmallVector<Value> KernelBuilder::reduce(bool async, ValueRange init) {
  Value zero = index(0), one = index(1);
  Value steps = b.createOrFold<arith::CeilDivSIOp>(loc, sizeK, index(kBlockK));
  if (async)
    stageAsyncStep(zero, steps);
  auto loop = scf::ForOp::create(b, loc, zero, steps, one, init);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value step = loop.getInductionVar();
  Value slot = zero;
  if (async) {
    stageAsyncStep(add(step, one), steps);
    slot = rem(step, 2);
  } else {
    Value k0 = mul(step, index(kBlockK));
    stageElements(tileA, k0, slot);
    stageElements(tileB, k0, slot);
  }
  gpu::BarrierOp::create(b, loc);
  SmallVector<Value> accs(loop.getRegionIterArgs());
  multiply(slot, accs);
  // The next staging overwrites the buffer once every warp has read it.
  gpu::BarrierOp::create(b, loc);
  scf::YieldOp::create(b, loc, accs);
  return loop.getResults();
}

Value KernelBuilder::loadTF32(const StagedTile &tile, Value slot, Value start,
                              Value k,
                              ArrayRef<std::pair<int64_t, int64_t>> offsets) {
  Value g = div(lane, 4), t = rem(lane, 4);
  bool reductionRows = tile.rowDim == kDim;
  SmallVector<Value> elements;
  for (auto [dg, dt] : offsets) {
    Value outer = add(start, add(g, index(dg)));
    Value inner = add(k, add(t, index(dt)));
    elements.push_back(
        memref::LoadOp::create(b, loc, tile.buffers,
                               ValueRange{slot, reductionRows ? inner : outer,
                                          reductionRows ? outer : inner}));
  }
  auto type = VectorType::get({static_cast<int64_t>(offsets.size()), 1},
                              b.getF32Type());
  return vector::FromElementsOp::create(b, loc, type, elements);
}

Value KernelBuilder::loadA(Value slot, Value row0, Value k) {
  if (tf32)
    // (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4).
    return loadTF32(tileA, slot, row0, k, {{0, 0}, {8, 0}, {0, 4}, {8, 4}});
  auto type = VectorType::get({4, 2}, elementType);
  // Lane l gives row l % 8 of 8 x 8 tile l / 8 of the fragment, the tiles
  // (rows, reduction) [0:8, 0:8], [8:16, 0:8], [0:8, 8:16], [8:16, 8:16].
  Value tile = div(lane, 8), row = rem(lane, 8);
  Value rowOff = mul(rem(tile, 2), index(8)),
        kOff = mul(div(tile, 2), index(8));
  if (tileA.rowDim == mDim)
    return nvgpu::LdMatrixOp::create(
        b, loc, type, tileA.buffers,
        ValueRange{slot, add(add(row0, rowOff), row), add(k, kOff)},
        /*transpose=*/false, /*numTiles=*/4);
  // Stored [k][m]: lane l gives reduction row l % 8 of the tile, which
  // ldmatrix transposes into the fragment's layout.
  return nvgpu::LdMatrixOp::create(
      b, loc, type, tileA.buffers,
      ValueRange{slot, add(add(k, kOff), row), add(row0, rowOff)},
      /*transpose=*/true, /*numTiles=*/4);
}

Value KernelBuilder::loadB(Value slot, Value col0, Value k) {
  if (tf32)
    // (n, k) = (g, t), (g, t + 4).
    return loadTF32(tileB, slot, col0, k, {{0, 0}, {0, 4}});
  auto type = VectorType::get({2, 2}, elementType);
  if (tileB.rowDim == kDim)
    // Stored [k][n]: lane l < 16 gives reduction row l, transposed (lanes
    // 16 to 31 repeat; their addresses are not read).
    return nvgpu::LdMatrixOp::create(
        b, loc, type, tileB.buffers,
        ValueRange{slot, add(k, rem(lane, 16)), col0},
        /*transpose=*/true, /*numTiles=*/2);
  // Stored [n][k]: lane l < 16 gives column row l % 8 of tile l / 8, tiles
  // (reduction) [0:8], [8:16].
  Value kOff = mul(rem(div(lane, 8), 2), index(8));
  return nvgpu::LdMatrixOp::create(
      b, loc, type, tileB.buffers,
      ValueRange{slot, add(col0, rem(lane, 8)), add(k, kOff)},
      /*transpose=*/false, /*numTiles=*/2);
}

gpu::LaunchOp KernelBuilder::build() {
  Value zero = index(0), one = index(1);
  SmallVector<Range> ranges = op.createLoopRanges(b, loc);
  auto size = [&](unsigned dim) {
    return getValueOrCreateConstantIndexOp(b, loc, ranges[dim].size);
  };
  sizeM = size(mDim), sizeN = size(nDim), sizeK = size(kDim);
  Value tilesM = b.createOrFold<arith::CeilDivSIOp>(loc, sizeM, index(kBlockM));
  Value tilesN = b.createOrFold<arith::CeilDivSIOp>(loc, sizeN, index(kBlockN));
  // The batch dimensions (every parallel dimension but m and n), outermost
  // first, then the m and n tiles: one block each, n fastest.
  SmallVector<unsigned> batchDims;
  SmallVector<Value> batchSizes;
  Value blocks = mul(tilesM, tilesN);
  for (unsigned d = 0, e = op.getNumLoops(); d < e; ++d) {
    if (d == mDim || d == nDim || d == kDim)
      continue;
    batchDims.push_back(d);
    batchSizes.push_back(size(d));
    blocks = mul(blocks, batchSizes.back());
  }
  // A grid of zero blocks is an error for the driver: skip empty products.
  Value nonEmpty = b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt,
                                                 blocks, zero);
  auto ifOp = scf::IfOp::create(b, loc, nonEmpty, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  tileA = planTile(op.getDpsInputOperand(0), mDim, kBlockM, kDim, kBlockK);
  tileB = planTile(op.getDpsInputOperand(1), kDim, kBlockK, nDim, kBlockN);
  Value aligned = alignedInputs();
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  // Two buffers of each tile where cp.async may run, one elsewhere.
  std::optional<int64_t> known = getConstantIntValue(aligned);
  int64_t slots = known && !*known ? 1 : 2;
  auto buffersOf = [&](const StagedTile &tile) {
    return MemRefType::get(
        {slots, tile.rows, tile.cols + kPadBytes / elementBytes}, elementType,
        MemRefLayoutAttrInterface(), workgroup);
  };
  auto launch = gpu::LaunchOp::create(b, loc, blocks, one, one, index(kThreads),
                                      one, one);
  tileA.buffers = launch.addWorkgroupAttribution(buffersOf(tileA), loc);
  tileB.buffers = launch.addWorkgroupAttribution(buffersOf(tileB), loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  thread = launch.getThreadIds().x;

  // The block's batch indices and tile.
  Value rest = launch.getBlockIds().x;
  Value tileN = b.createOrFold<arith::RemUIOp>(loc, rest, tilesN);
  rest = b.createOrFold<arith::DivUIOp>(loc, rest, tilesN);
  Value tileM = b.createOrFold<arith::RemUIOp>(loc, rest, tilesM);
  rest = b.createOrFold<arith::DivUIOp>(loc, rest, tilesM);
  ivOf.assign(op.getNumLoops(), Value());
  for (int64_t i = batchDims.size() - 1; i >= 0; --i) {
    ivOf[batchDims[i]] =
        i > 0 ? b.createOrFold<arith::RemUIOp>(loc, rest, batchSizes[i]) : rest;
    if (i > 0)
      rest = b.createOrFold<arith::DivUIOp>(loc, rest, batchSizes[i]);
  }
  m0 = mul(tileM, index(kBlockM)), n0 = mul(tileN, index(kBlockN));
  Value warp = div(thread, kWarpSize);
  lane = rem(thread, kWarpSize);
  warpRow = mul(div(warp, kWarpsN), index(kWarpM));
  warpCol = mul(rem(warp, kWarpsN), index(kWarpN));

  auto accType = VectorType::get({2, 2}, b.getF32Type());
  Value zeros = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0f)));
  SmallVector<Value> init(kFragsM * kFragsN, zeros);
  // cp.async where the inputs are aligned, element copies elsewhere; one of
  // the two where alignment is known at compile time.
  SmallVector<Value> results;
  if (known) {
    results = reduce(/*async=*/*known != 0, init);
  } else {
    auto ifOp = scf::IfOp::create(b, loc, TypeRange(ValueRange(init)), aligned,
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, loc, reduce(/*async=*/true, init));
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, reduce(/*async=*/false, init));
    results.assign(ifOp.getResults().begin(), ifOp.getResults().end());
  }

  // The epilogue: lane l holds rows g and g + 8 (g = l / 4), columns 2t and
  // 2t + 1 (t = l % 4) of each fragment, added to the output where they
  // exist.
  OpOperand *out = op.getDpsInitOperand(0);
  Value g = div(lane, 4), t2 = mul(rem(lane, 4), index(2));
  for (int64_t fm = 0; fm < kFragsM; ++fm)
    for (int64_t fn = 0; fn < kFragsN; ++fn)
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 2; ++j) {
          Value row = add(add(m0, warpRow), add(g, index(fm * kFragM + 8 * i)));
          Value col = add(add(n0, warpCol), add(t2, index(fn * kFragN + j)));
          Value v = vector::ExtractOp::create(
              b, loc, results[fm * kFragsN + fn], ArrayRef<int64_t>{i, j});
          auto guard = scf::IfOp::create(
              b, loc, both(less(row, sizeM), less(col, sizeN)), false);
          OpBuilder::InsertionGuard insertion(b);
          b.setInsertionPointToStart(guard.thenBlock());
          SmallVector<Value> at = indices(out, mDim, row, nDim, col);
          Value old = memref::LoadOp::create(b, loc, out->get(), at);
          memref::StoreOp::create(b, loc, arith::AddFOp::create(b, loc, old, v),
                                  out->get(), at);
        }
  return launch;
}

gpu::LaunchOp mlir::seq::buildTensorCoreContraction(RewriterBase &rewriter,
                                                    linalg::LinalgOp op,
                                                    unsigned mDim,
                                                    unsigned nDim,
                                                    unsigned kDim) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  KernelBuilder builder(rewriter, op.getLoc(), op, mDim, nDim, kDim);
  gpu::LaunchOp launch = builder.build();
  rewriter.eraseOp(op);
  return launch;
}
