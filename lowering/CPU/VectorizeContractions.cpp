//===- VectorizeContractions.cpp - register-tiled vector contractions -----===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Replaces f32 contractions on buffers (matmul, batched matmul, `x @ W^T`
// and every linalg.generic of the same shape) by cache-blocked loop nests
// whose inner kernels keep a register tile of accumulators in vector
// registers and update it with FMAs. See the pass description in Passes.td;
// the matching and absorption are in Contractions.cpp, the kernels in
// ContractionKernels.cpp.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/KernelUtils.h"
#include "lowering/CPU/Passes.h"
#include "lowering/CPU/Transforms.h"

#include "dialect/Seq/Support/Debug.h"

#define DEBUG_TYPE "seq-cpu-vectorize-contractions"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQCPUVECTORIZECONTRACTIONS
#include "lowering/CPU/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;
using namespace mlir::seq::cpu;

/// Below this many rows a short reduction keeps the dot kernel: the copy of
/// B would cost more than the lanes the dot kernel sums.
static constexpr int64_t kMinPackedRows = 8;

/// What the contraction became, for --remarks.
static void remarkOn(ContractionMatch c, const ContractionTiling &t) {
  InFlightDiagnostic remark = c.op.emitRemark("contraction vectorized: ");
  if (c.kernel == ContractionKernel::Dot)
    remark << "dot kernel, " << t.mr << " x " << t.nr << " tiles of " << t.lanes
           << "-lane accumulators";
  else
    remark << "broadcast kernel, " << t.mr << " rows x " << t.nr
           << " vectors of " << t.lanes << " lanes";
  remark << ", blocks of " << t.mc << " x " << t.nc;
  if (c.panel)
    remark << ", right operand in packed panels of " << c.panel << " columns";
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

/// Emits the kernels of `c` at `b`'s insertion point, with a remark.
static void emitKernel(OpBuilder &b, const ContractionMatch &c,
                       const ContractionTiling &t, bool remarks) {
  LLVM_DEBUG({
    llvm::dbgs() << "[" DEBUG_TYPE "] "
                 << (c.kernel == ContractionKernel::Dot ? "dot" : "broadcast")
                 << " kernel, " << t.mr << " x " << t.nr << " tiles of "
                 << t.lanes << " lanes, blocks of " << t.mc << " x " << t.nc;
    if (c.panel)
      llvm::dbgs() << ", panels of " << c.panel;
    if (c.epilogue)
      llvm::dbgs() << ", with its epilogue";
    llvm::dbgs() << ": " << c.op->getName() << " at " << c.op->getLoc() << "\n";
  });
  emitContractionKernel(b, c, t);
  if (remarks)
    remarkOn(c, t);
}

LogicalResult
mlir::seq::cpu::vectorizeContraction(RewriterBase &rewriter, ContractionMatch c,
                                     const ContractionOptions &options) {
  ContractionTiling t = getContractionTiling(c.kernel, options.vectorBits,
                                             options.vectorRegisters);
  if (c.panel && c.panel != t.nr * t.lanes) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] panels of " << c.panel
                            << " columns, the broadcast kernel takes "
                            << t.nr * t.lanes << ": " << c.op->getLoc() << "\n");
    if (options.remarks)
      c.op.emitRemark("contraction left to the scalar loops: ")
          << "its operand is packed in panels of " << c.panel
          << " columns, and this target's broadcast kernel takes "
          << t.nr * t.lanes;
    return failure();
  }
  // Without a fill or bias copy to absorb, the kernels start from C.
  (void)absorbInitializer(rewriter, c);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(c.op);
  Location loc = c.op->getLoc();
  // A short reduction is packed for the broadcast kernel when there are
  // enough rows to pay for the copy; with a dynamic row count (a block of
  // queries of attention, one at decode time), both kernels are emitted
  // behind a test of it.
  bool pack = isPackableShortReduction(c);
  Value rows;
  if (pack) {
    auto cType = cast<MemRefType>(c.c.getType());
    unsigned at = 0;
    for (auto [i, e] : llvm::enumerate(c.mapC.getResults()))
      if (cast<AffineDimExpr>(e).getPosition() == *c.m)
        at = i;
    if (cType.isDynamicDim(at))
      rows = memref::DimOp::create(rewriter, loc, c.c, at);
    else
      pack = cType.getDimSize(at) >= kMinPackedRows;
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] short reduction: "
                            << (rows   ? "packed if the rows are many"
                                : pack ? "packed"
                                       : "not packed, too few rows")
                            << "\n");
  }
  int64_t width = panelWidth(options.vectorBits, options.vectorRegisters);
  auto emitPacked = [&](ContractionMatch pc, OpBuilder &pb) {
    Value packed = packShortReduction(pb, pc, width);
    ContractionTiling pt = getContractionTiling(pc.kernel, options.vectorBits,
                                                options.vectorRegisters);
    emitKernel(pb, pc, pt, options.remarks);
    memref::DeallocOp::create(pb, loc, packed);
  };
  if (pack && rows) {
    Value many = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::uge, rows,
        arith::ConstantIndexOp::create(rewriter, loc, kMinPackedRows));
    auto branch = scf::IfOp::create(rewriter, loc, many, /*withElse=*/true);
    OpBuilder thenBuilder = branch.getThenBodyBuilder(rewriter.getListener());
    emitPacked(c, thenBuilder);
    OpBuilder elseBuilder = branch.getElseBodyBuilder(rewriter.getListener());
    emitKernel(elseBuilder, c, t, options.remarks);
  } else if (pack) {
    emitPacked(c, rewriter);
  } else {
    // With an epilogue, the kernel replaces it: what it reads and writes
    // may be defined between the two ops.
    if (c.kernel == ContractionKernel::Broadcast &&
        succeeded(absorbEpilogue(rewriter, c)))
      rewriter.setInsertionPoint(c.epilogue);
    emitKernel(rewriter, c, t, options.remarks);
    if (c.epilogue)
      rewriter.eraseOp(c.epilogue);
  }
  rewriter.eraseOp(c.op);
  return success();
}

namespace {
struct SeqCPUVectorizeContractionsPass
    : public mlir::seq::impl::SeqCPUVectorizeContractionsBase<
          SeqCPUVectorizeContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<ContractionMatch, 4> found;
    getOperation()->walk([&](linalg::LinalgOp op) {
      std::string reason;
      FailureOr<ContractionMatch> c = matchContraction(op, &reason);
      if (succeeded(c)) {
        LLVM_DEBUG(llvm::dbgs()
                   << "[" DEBUG_TYPE "] matched " << op->getName() << " at "
                   << op.getLoc() << (c->panel ? " (packed right operand)" : "")
                   << "\n");
        found.push_back(*c);
        return;
      }
      if (reason.empty())
        return;
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] left to the scalar loops: "
                              << reason << ": " << op.getLoc() << "\n");
      if (remarks)
        op.emitRemark("contraction left to the scalar loops: ") << reason;
    });
    IRRewriter rewriter(&getContext());
    ContractionOptions options{vectorBits, vectorRegisters, remarks};
    // A contraction that fails keeps its scalar loops (and says why).
    for (const ContractionMatch &c : found)
      (void)vectorizeContraction(rewriter, c, options);
  }
};
} // namespace
