//===- TileContractions.cpp - register tiles of GPU contractions ----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Each thread of a contraction computes a tile-m x tile-n block of its
// output with the accumulators in registers; see the pass description in
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/Support/Debug.h"
#include "lowering/NVPTX/Passes.h"
#include "lowering/NVPTX/Transforms.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/IRMapping.h"

#define DEBUG_TYPE "seq-nvptx-tile-contractions"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQNVPTXTILECONTRACTIONS
#include "lowering/NVPTX/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

namespace {
/// A contraction the pass rewrites: the loop dimensions it tiles (the
/// innermost m and n dimensions) and the one it reduces.
struct Contraction {
  linalg::LinalgOp op;
  unsigned mDim, nDim, kDim;
};
} // namespace

/// Matches `op`, or returns why it does not qualify (for the remark).
static FailureOr<Contraction> matchContraction(linalg::LinalgOp op,
                                               std::string &why) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op)) {
    why = "not a contraction of two buffers";
    return failure();
  }
  if (!llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
  {
    why = "an operand's indexing map is not a projected permutation";
    return failure();
  }
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->k.size() != 1 || dims->m.empty() ||
      dims->n.empty()) {
    why = "it does not have one reduction dimension and rows and columns "
          "to tile (a matrix-vector product, or several reductions)";
    return failure();
  }
  bool usesIndex = false;
  op->walk([&](linalg::IndexOp) { usesIndex = true; });
  if (usesIndex) {
    why = "its body reads loop indices";
    return failure();
  }
  return Contraction{op, dims->m.back(), dims->n.back(), dims->k.front()};
}

/// Replaces the contraction by an scf.parallel over its parallel dimensions,
/// the m and n ones in tiles, whose iterations each keep `tileM * tileN`
/// accumulators in registers across the reduction.
static void tile(const Contraction &c, int64_t tileM, int64_t tileN) {
  linalg::LinalgOp op = c.op;
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value tm = arith::ConstantIndexOp::create(b, loc, tileM);
  Value tn = arith::ConstantIndexOp::create(b, loc, tileN);
  SmallVector<Range> ranges = op.createLoopRanges(b, loc);
  auto size = [&](unsigned dim) {
    return getValueOrCreateConstantIndexOp(b, loc, ranges[dim].size);
  };
  Value sizeM = size(c.mDim), sizeN = size(c.nDim), sizeK = size(c.kDim);

  // Parallel dimensions in the op's order, with the n tiles innermost:
  // consecutive threads take consecutive column tiles.
  SmallVector<unsigned> dims;
  for (unsigned d = 0, e = op.getNumLoops(); d < e; ++d)
    if (d != c.kDim && d != c.nDim)
      dims.push_back(d);
  dims.push_back(c.nDim);
  SmallVector<Value> ubs;
  for (unsigned d : dims) {
    if (d == c.mDim)
      ubs.push_back(b.createOrFold<arith::CeilDivSIOp>(loc, sizeM, tm));
    else if (d == c.nDim)
      ubs.push_back(b.createOrFold<arith::CeilDivSIOp>(loc, sizeN, tn));
    else
      ubs.push_back(size(d));
  }

  Value a = op.getDpsInputOperand(0)->get();
  Value bMat = op.getDpsInputOperand(1)->get();
  Value out = op.getDpsInitOperand(0)->get();
  AffineMap aMap = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap bMap = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  Block &body = op->getRegion(0).front();

  auto loop = scf::ParallelOp::create(
      b, loc, SmallVector<Value>(dims.size(), zero), ubs,
      SmallVector<Value>(dims.size(), one));
  b.setInsertionPointToStart(loop.getBody());
  SmallVector<Value> ivOf(op.getNumLoops());
  for (auto [d, iv] : llvm::zip_equal(dims, loop.getInductionVars()))
    ivOf[d] = iv;
  Value i0 = arith::MulIOp::create(b, loc, ivOf[c.mDim], tm);
  Value j0 = arith::MulIOp::create(b, loc, ivOf[c.nDim], tn);
  Value lastM = arith::SubIOp::create(b, loc, sizeM, one);
  Value lastN = arith::SubIOp::create(b, loc, sizeN, one);
  // Rows and columns of the tile; those past the edge read the last one
  // (their results are not stored).
  SmallVector<Value> rows, cols, rowValid, colValid;
  auto edges = [&](Value first, int64_t count, Value size, Value last,
                   SmallVector<Value> &clamped, SmallVector<Value> &valid) {
    for (int64_t t = 0; t < count; ++t) {
      Value at = arith::AddIOp::create(
          b, loc, first, arith::ConstantIndexOp::create(b, loc, t));
      valid.push_back(arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::slt, at, size));
      clamped.push_back(arith::MinSIOp::create(b, loc, at, last));
    }
  };
  edges(i0, tileM, sizeM, lastM, rows, rowValid);
  edges(j0, tileN, sizeN, lastN, cols, colValid);
  auto indices = [&](AffineMap map, Value row, Value col, Value k) {
    SmallVector<Value> result;
    for (AffineExpr expr : map.getResults()) {
      unsigned d = cast<AffineDimExpr>(expr).getPosition();
      result.push_back(d == c.mDim   ? row
                       : d == c.nDim ? col
                       : d == c.kDim ? k
                                     : ivOf[d]);
    }
    return result;
  };

  SmallVector<Value> init;
  for (int64_t ti = 0; ti < tileM; ++ti)
    for (int64_t tj = 0; tj < tileN; ++tj)
      init.push_back(memref::LoadOp::create(
          b, loc, out, indices(outMap, rows[ti], cols[tj], Value())));
  auto kLoop = scf::ForOp::create(
      b, loc, zero, sizeK, one, init,
      [&](OpBuilder &nb, Location nloc, Value k, ValueRange accs) {
        SmallVector<Value> aVals, bVals;
        for (int64_t ti = 0; ti < tileM; ++ti)
          aVals.push_back(memref::LoadOp::create(
              nb, nloc, a, indices(aMap, rows[ti], Value(), k)));
        for (int64_t tj = 0; tj < tileN; ++tj)
          bVals.push_back(memref::LoadOp::create(
              nb, nloc, bMat, indices(bMap, Value(), cols[tj], k)));
        SmallVector<Value> next;
        for (int64_t ti = 0; ti < tileM; ++ti)
          for (int64_t tj = 0; tj < tileN; ++tj) {
            IRMapping mapping;
            mapping.map(body.getArgument(0), aVals[ti]);
            mapping.map(body.getArgument(1), bVals[tj]);
            mapping.map(body.getArgument(2), accs[ti * tileN + tj]);
            for (Operation &bodyOp : body.without_terminator())
              nb.clone(bodyOp, mapping);
            next.push_back(
                mapping.lookup(body.getTerminator()->getOperand(0)));
          }
        scf::YieldOp::create(nb, nloc, next);
      });
  for (int64_t ti = 0; ti < tileM; ++ti)
    for (int64_t tj = 0; tj < tileN; ++tj) {
      Value valid =
          arith::AndIOp::create(b, loc, rowValid[ti], colValid[tj]);
      auto guard = scf::IfOp::create(b, loc, valid, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard insertion(b);
      b.setInsertionPointToStart(guard.thenBlock());
      memref::StoreOp::create(b, loc, kLoop.getResult(ti * tileN + tj), out,
                              indices(outMap, rows[ti], cols[tj], Value()));
    }
  op->erase();
}

namespace {
struct SeqNVPTXTileContractionsPass
    : public mlir::seq::impl::SeqNVPTXTileContractionsBase<
          SeqNVPTXTileContractionsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (tileM < 1 || tileN < 1 || tileM * tileN > 64) {
      getOperation()->emitError()
          << "seq-nvptx-tile-contractions: tiles of "
          << static_cast<int64_t>(tileM) << " x "
          << static_cast<int64_t>(tileN)
          << " need between 1 and 64 accumulators";
      return signalPassFailure();
    }
    // Contractions that run on their own grid: those inside a parallel loop
    // (a fused kernel's tiles) run within one thread already.
    SmallVector<linalg::LinalgOp> candidates;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<scf::ParallelOp, scf::ForallOp, gpu::LaunchOp>(op)) {
        LLVM_DEBUG(op->walk([&](linalg::LinalgOp inner) {
          if (linalg::isaContractionOpInterface(inner))
            llvm::dbgs() << "[" DEBUG_TYPE "] not tiling '" << inner->getName()
                         << "' at " << inner.getLoc() << ": one thread of the '"
                         << op->getName() << "' at " << op->getLoc()
                         << " runs it\n";
        }));
        return WalkResult::skip();
      }
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
        if (linalg::isaContractionOpInterface(linalgOp))
          candidates.push_back(linalgOp);
        return WalkResult::skip();
      }
      return WalkResult::advance();
    });
    for (linalg::LinalgOp op : candidates) {
      std::string why;
      FailureOr<Contraction> c = matchContraction(op, why);
      if (failed(c)) {
        LLVM_DEBUG(llvm::dbgs()
                   << "[" DEBUG_TYPE "] not tiling '" << op->getName()
                   << "' at " << op.getLoc() << ": " << why << "\n");
        if (remarks)
          op.emitRemark() << "contraction not register-tiled for the GPU "
                             "(one thread per output element): "
                          << why;
        continue;
      }
      if (tensorCores) {
        std::string whyNot;
        if (succeeded(
                seq::tensorCoreContractionPrecondition(op, tf32, whyNot))) {
          LLVM_DEBUG(llvm::dbgs()
                     << "[" DEBUG_TYPE "] '" << op->getName() << "' at "
                     << op.getLoc() << " on tensor cores: rows are loop "
                     << "dimension " << c->mDim << ", columns " << c->nDim
                     << ", reduction " << c->kDim << "\n");
          IRRewriter rewriter(op);
          seq::buildTensorCoreContraction(rewriter, op, c->mDim, c->nDim,
                                          c->kDim);
          continue;
        }
        LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] '" << op->getName()
                                << "' at " << op.getLoc()
                                << " not on tensor cores: " << whyNot << "\n");
        Type input =
            getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType());
        if (remarks &&
            (input.isBF16() || input.isF16() || (tf32 && input.isF32())))
          op.emitRemark() << "contraction of " << input
                          << " inputs on the CUDA cores (register tiles), "
                             "not on tensor cores: "
                          << whyNot;
      }
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] tiling '" << op->getName() << "' at "
                 << op.getLoc() << " into " << static_cast<int64_t>(tileM)
                 << " x " << static_cast<int64_t>(tileN)
                 << " outputs per thread: rows are loop dimension " << c->mDim
                 << ", columns " << c->nDim << ", reduction " << c->kDim
                 << "\n");
      tile(*c, tileM, tileN);
    }
  }
};
} // namespace
