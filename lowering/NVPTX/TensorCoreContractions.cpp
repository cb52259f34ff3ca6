//===- TensorCoreContractions.cpp - contractions on tensor cores ----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// A contraction of bf16 or f16 inputs accumulated in f32 becomes a kernel of
// warp-level matrix products (`nvgpu.mma.sync` m16n8k16): each block of 128
// threads computes a 64 x 64 tile of the output, its four warps 32 x 32 each
// (2 x 4 fragments), from 64 x 32 and 32 x 64 tiles of the inputs staged in
// workgroup memory and read into fragments by `nvgpu.ldmatrix`; see
// buildTensorCoreContraction in Transforms.h.
//
//===----------------------------------------------------------------------===//

#include "lowering/NVPTX/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
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
constexpr int64_t kFragM = 16, kFragN = 8, kFragK = 16;
constexpr int64_t kWarpM = kBlockM / kWarpsM, kWarpN = kBlockN / kWarpsN;
constexpr int64_t kFragsM = kWarpM / kFragM, kFragsN = kWarpN / kFragN;
// Rows of the staged tiles are padded by 8 elements (16 bytes): ldmatrix's
// eight row addresses of a tile then fall in different bank groups, and
// every row stays 16-byte aligned.
constexpr int64_t kPad = 8;
} // namespace

/// Whether `value` is `arith.extf` of the block argument `arg` from `type`.
static bool isExtensionOf(Value value, BlockArgument arg, Type type) {
  auto ext = value.getDefiningOp<arith::ExtFOp>();
  return ext && ext.getIn() == arg && arg.getType() == type;
}

LogicalResult mlir::seq::tensorCoreContractionPrecondition(linalg::LinalgOp op,
                                                           std::string &why) {
  Type in = getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType());
  Type in2 = getElementTypeOrSelf(op.getDpsInputOperand(1)->get().getType());
  Type out = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
  if (in != in2 || !(in.isBF16() || in.isF16()) || !out.isF32()) {
    why = "its inputs are not both bf16 or both f16 accumulated in f32";
    return failure();
  }
  // The body: out + ext(a) * ext(b), in either operand order.
  Block &body = op->getRegion(0).front();
  auto add = body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  Value acc = body.getArgument(2);
  auto mul = add ? (add.getLhs() == acc ? add.getRhs() : add.getLhs())
                       .getDefiningOp<arith::MulFOp>()
                 : arith::MulFOp();
  if (!add || body.getOperations().size() != 5 ||
      (add.getLhs() != acc && add.getRhs() != acc) || !mul ||
      !((isExtensionOf(mul.getLhs(), body.getArgument(0), in) &&
         isExtensionOf(mul.getRhs(), body.getArgument(1), in)) ||
        (isExtensionOf(mul.getLhs(), body.getArgument(1), in) &&
         isExtensionOf(mul.getRhs(), body.getArgument(0), in)))) {
    why = "its body is not a sum of products of its inputs widened to f32";
    return failure();
  }
  for (Value operand : op->getOperands()) {
    if (!isa<MemRefType>(operand.getType())) {
      why = "an operand is not a ranked buffer";
      return failure();
    }
    for (Value v = operand; Operation *def = v.getDefiningOp();) {
      if (isa<memref::GetGlobalOp>(def)) {
        why = "an operand is a constant global, which the kernel cannot read";
        return failure();
      }
      auto view = dyn_cast<ViewLikeOpInterface>(def);
      if (!view)
        break;
      v = view.getViewSource();
    }
  }
  return success();
}

namespace {
/// Builds the kernel's body; one instance per contraction.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, linalg::LinalgOp op, unsigned mDim,
                unsigned nDim, unsigned kDim)
      : b(b), loc(loc), op(op), mDim(mDim), nDim(nDim), kDim(kDim) {}

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

  /// The indices of `operand` where loop dimension `d0` is `v0` and `d1` is
  /// `v1`, and the batch dimensions are the block's.
  SmallVector<Value> indices(OpOperand *operand, unsigned d0, Value v0,
                             unsigned d1, Value v1);
  /// Copies the `rows x cols` tile of `operand` whose first element is at
  /// (`row0`, `col0`) in the tile's two loop dimensions into `tile`, zeros
  /// past the edges `rowSize` and `colSize`. Consecutive threads take
  /// consecutive elements of the operand's innermost dimension.
  void stage(OpOperand *operand, unsigned rowDim, unsigned colDim, Value row0,
             Value col0, Value rowSize, Value colSize, int64_t rows,
             int64_t cols, Value tile);

  OpBuilder &b;
  Location loc;
  linalg::LinalgOp op;
  unsigned mDim, nDim, kDim;
  // Per kernel: the thread id and the batch dimensions' indices.
  Value thread;
  SmallVector<Value> ivOf;
};
} // namespace

SmallVector<Value> KernelBuilder::indices(OpOperand *operand, unsigned d0,
                                          Value v0, unsigned d1, Value v1) {
  SmallVector<Value> result;
  for (AffineExpr expr : op.getMatchingIndexingMap(operand).getResults()) {
    unsigned d = cast<AffineDimExpr>(expr).getPosition();
    result.push_back(d == d0 ? v0 : d == d1 ? v1 : ivOf[d]);
  }
  return result;
}

void KernelBuilder::stage(OpOperand *operand, unsigned rowDim, unsigned colDim,
                          Value row0, Value col0, Value rowSize, Value colSize,
                          int64_t rows, int64_t cols, Value tile) {
  // The operand's innermost dimension varies fastest across threads.
  AffineMap map = op.getMatchingIndexingMap(operand);
  bool rowsInner =
      map.getNumResults() > 0 &&
      cast<AffineDimExpr>(map.getResults().back()).getPosition() == rowDim;
  Type elementType = getElementTypeOrSelf(operand->get().getType());
  auto loop =
      scf::ForOp::create(b, loc, thread, index(rows * cols), index(kThreads));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value e = loop.getInductionVar();
  Value r = rowsInner ? rem(e, rows) : div(e, cols);
  Value c = rowsInner ? div(e, rows) : rem(e, cols);
  Value gr = add(row0, r), gc = add(col0, c);
  Value inside =
      arith::AndIOp::create(b, loc, less(gr, rowSize), less(gc, colSize));
  auto ifOp = scf::IfOp::create(b, loc, elementType, inside,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value v = memref::LoadOp::create(b, loc, operand->get(),
                                     indices(operand, rowDim, gr, colDim, gc));
    scf::YieldOp::create(b, loc, v);
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(
        b, loc,
        Value(arith::ConstantOp::create(b, loc, b.getZeroAttr(elementType))));
  }
  memref::StoreOp::create(b, loc, ifOp.getResult(0), tile, ValueRange{r, c});
}

gpu::LaunchOp KernelBuilder::build() {
  Value zero = index(0), one = index(1);
  SmallVector<Range> ranges = op.createLoopRanges(b, loc);
  auto size = [&](unsigned dim) {
    return getValueOrCreateConstantIndexOp(b, loc, ranges[dim].size);
  };
  Value sizeM = size(mDim), sizeN = size(nDim), sizeK = size(kDim);
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

  Type elementType =
      getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType());
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  auto tileA = MemRefType::get({kBlockM, kBlockK + kPad}, elementType,
                               MemRefLayoutAttrInterface(), workgroup);
  auto tileB = MemRefType::get({kBlockK, kBlockN + kPad}, elementType,
                               MemRefLayoutAttrInterface(), workgroup);
  auto launch = gpu::LaunchOp::create(b, loc, blocks, one, one, index(kThreads),
                                      one, one);
  Value sharedA = launch.addWorkgroupAttribution(tileA, loc);
  Value sharedB = launch.addWorkgroupAttribution(tileB, loc);
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
  Value m0 = mul(tileM, index(kBlockM)), n0 = mul(tileN, index(kBlockN));
  Value warp = div(thread, kWarpSize), lane = rem(thread, kWarpSize);
  Value warpRow = mul(div(warp, kWarpsN), index(kWarpM));
  Value warpCol = mul(rem(warp, kWarpsN), index(kWarpN));

  auto accType = VectorType::get({2, 2}, b.getF32Type());
  Value zeros = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0f)));
  SmallVector<Value> init(kFragsM * kFragsN, zeros);
  Value steps = b.createOrFold<arith::CeilDivSIOp>(loc, sizeK, index(kBlockK));
  OpOperand *a = op.getDpsInputOperand(0);
  OpOperand *bOperand = op.getDpsInputOperand(1);
  auto kLoop = scf::ForOp::create(b, loc, zero, steps, one, init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value k0 = mul(kLoop.getInductionVar(), index(kBlockK));
    stage(a, mDim, kDim, m0, k0, sizeM, sizeK, kBlockM, kBlockK, sharedA);
    stage(bOperand, kDim, nDim, k0, n0, sizeK, sizeN, kBlockK, kBlockN,
          sharedB);
    gpu::BarrierOp::create(b, loc);
    SmallVector<Value> accs(kLoop.getRegionIterArgs());
    // ldmatrix x4 of A: lane l gives row l % 8 of the fragment's 8 x 8 tile
    // l / 8, tiles (rows, columns) [0:8, 0:8], [8:16, 0:8], [0:8, 8:16],
    // [8:16, 8:16]; x2 transposed of B: lane l < 16 gives row l (k) of the
    // fragment's [16, 8] slice, lanes 16 to 31 repeat (their addresses are
    // not read).
    Value aRow = add(rem(lane, 8), mul(rem(div(lane, 8), 2), index(8)));
    Value aCol = mul(div(lane, 16), index(8));
    Value bRow = rem(lane, 16);
    auto fragA = VectorType::get({4, 2}, elementType);
    auto fragB = VectorType::get({2, 2}, elementType);
    for (int64_t kk = 0; kk < kBlockK / kFragK; ++kk) {
      Value kOff = index(kk * kFragK);
      SmallVector<Value> as, bs;
      for (int64_t fm = 0; fm < kFragsM; ++fm)
        as.push_back(nvgpu::LdMatrixOp::create(
            b, loc, fragA, sharedA,
            ValueRange{add(add(warpRow, index(fm * kFragM)), aRow),
                       add(kOff, aCol)},
            /*transpose=*/false, /*numTiles=*/4));
      for (int64_t fn = 0; fn < kFragsN; ++fn)
        bs.push_back(nvgpu::LdMatrixOp::create(
            b, loc, fragB, sharedB,
            ValueRange{add(kOff, bRow), add(warpCol, index(fn * kFragN))},
            /*transpose=*/true, /*numTiles=*/2));
      for (int64_t fm = 0; fm < kFragsM; ++fm)
        for (int64_t fn = 0; fn < kFragsN; ++fn) {
          Value &acc = accs[fm * kFragsN + fn];
          acc = nvgpu::MmaSyncOp::create(
              b, loc, as[fm], bs[fn], acc,
              ArrayRef<int64_t>{kFragM, kFragN, kFragK});
        }
    }
    // The next step overwrites the tiles once every warp has read them.
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, accs);
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
          Value inside =
              arith::AndIOp::create(b, loc, less(row, sizeM), less(col, sizeN));
          Value v = vector::ExtractOp::create(
              b, loc, kLoop.getResult(fm * kFragsN + fn),
              ArrayRef<int64_t>{i, j});
          auto guard = scf::IfOp::create(b, loc, inside, false);
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
