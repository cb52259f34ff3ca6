//===- VectorizeContractions.cpp - register-tiled vector contractions -----===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Replaces contractions on buffers with f32 accumulators (matmul, batched
// matmul, `x @ W^T` and every linalg.generic of the same shape; f32, bf16
// or f16 operands) by cache-blocked loop nests whose inner kernels keep a
// register tile of accumulators in vector registers and update it with
// FMAs. See the pass description in Passes.td;
// the matching and absorption are in Contractions.cpp, the kernels in
// ContractionKernels.cpp.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/KernelUtils.h"
#include "lowering/CPU/Passes.h"
#include "lowering/CPU/Transforms.h"

#include "dialect/Seq/Support/Debug.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

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

static Type elementTypeOf(Value memref) {
  return cast<MemRefType>(memref.getType()).getElementType();
}

/// How the kernels read the bf16 and f16 operands of `c` (empty when both
/// are f32), for the remark and the trace.
static std::string describeWidening(const ContractionMatch &c, bool f16c) {
  Type a = elementTypeOf(c.a), b = elementTypeOf(c.b);
  std::string text;
  llvm::raw_string_ostream os(text);
  if (c.widenedA) {
    os << "the left operand (" << c.widenedA
       << ") widened to f32 once, into a copy";
    if (!isNarrowFloat(b))
      return text;
    os << ", ";
  }
  if (!isNarrowFloat(a) && !isNarrowFloat(b))
    return "";
  if (c.kPairs || c.dotPairs)
    return "bf16 operands multiplied in pairs by vdpbf16ps (AVX512_BF16), "
           "f32 accumulators";
  if (a == b)
    os << a << " operands";
  else if (isNarrowFloat(a) && isNarrowFloat(b))
    os << a << " and " << b << " operands";
  else
    os << (isNarrowFloat(a) ? "the left operand (" : "the right operand (")
       << (isNarrowFloat(a) ? a : b) << ")";
  os << " widened to f32 in registers (";
  bool bf16 = a.isBF16() || b.isBF16(), f16 = a.isF16() || b.isF16();
  if (bf16)
    os << (f16 ? "bf16: " : "") << "16-bit shifts";
  if (bf16 && f16)
    os << "; ";
  if (f16)
    os << (bf16 ? "f16: " : "")
       << (f16c ? "F16C conversions"
                : "a conversion call per element, the target has no F16C");
  os << "), f32 accumulators";
  return text;
}

/// The narrow type the epilogue of `c` rounds the output to ("bf16"), or
/// an empty string.
static std::string roundedOutput(const ContractionMatch &c) {
  std::string text;
  if (c.epilogue && isNarrowFloat(elementTypeOf(c.epilogueOut)))
    llvm::raw_string_ostream(text) << elementTypeOf(c.epilogueOut);
  return text;
}

/// How the kernels of `c` handle few rows (empty when that does not
/// apply): the remainder tiles of several rows and, with at most mr rows,
/// the columns split over the threads.
static std::string describeFewRows(const ContractionMatch &c,
                                   const ContractionTiling &t) {
  std::string text;
  llvm::raw_string_ostream os(text);
  SmallVector<int64_t> counts = remainderCounts(c, t);
  if (!counts.empty() && counts.back() > 1) {
    os << "the last ";
    if (counts.size() > 1)
      os << counts.front() << " to ";
    os << counts.back() << " rows of a block in one tile of their count";
  }
  bool fewRows = hasFewRowsColumnSplit(c);
  if (fewRows)
    if (auto type = dyn_cast<MemRefType>(c.c.getType()))
      for (auto [i, e] : llvm::enumerate(c.mapC.getResults()))
        if (cast<AffineDimExpr>(e).getPosition() == *c.m &&
            !type.isDynamicDim(i) && type.getDimSize(i) > t.mr)
          fewRows = false;
  if (fewRows) {
    if (!text.empty())
      os << "; ";
    os << "with at most " << t.mr << " rows, the columns in about "
       << kMinColumnBlocks << " parallel blocks of a multiple of " << t.nr;
  }
  return text;
}

/// What the contraction became, for --remarks; `noEpilogue` says why the op
/// after it that reads its output was not fused (empty when there is none).
static void remarkOn(ContractionMatch c, const ContractionTiling &t, bool f16c,
                     StringRef noEpilogue) {
  InFlightDiagnostic remark = c.op.emitRemark("contraction vectorized: ");
  if (c.kernel == ContractionKernel::Dot)
    remark << "dot kernel, " << t.mr << " x " << t.nr << " tiles of " << t.lanes
           << "-lane accumulators";
  else
    remark << "broadcast kernel, " << t.mr << " rows x " << t.nr
           << " vectors of " << t.lanes << " lanes";
  std::string widening = describeWidening(c, f16c);
  if (!widening.empty())
    remark << ", " << widening;
  remark << ", blocks of " << t.mc << " x " << t.nc;
  if (t.kc)
    remark << ", the reduction in steps of " << t.kc
           << " (sums kept in the output between them)";
  if (c.panel)
    remark << ", right operand in packed panels of " << c.panel << " columns"
           << (c.kPairs ? " in k pairs" : "");
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
  std::string rounded = roundedOutput(c);
  if (!rounded.empty())
    remark << ", the output rounded to " << rounded << " once, in registers";
  if (!noEpilogue.empty())
    remark << "; its consumer not fused: " << noEpilogue;
  std::string fewRows = describeFewRows(c, t);
  if (!fewRows.empty())
    c.op.emitRemark("contraction with few rows: ") << fewRows;
  if (mayStreamOutput(c, t))
    c.op.emitRemark("contraction output streamed: ")
        << "stored around the caches (non-temporal stores) when it holds "
        << t.streamBytes << " bytes or more and its rows are aligned";
}

/// Emits the kernels of `c` at `b`'s insertion point, with a remark.
static void emitKernel(OpBuilder &b, const ContractionMatch &c,
                       ContractionTiling t, const ContractionOptions &options,
                       StringRef noEpilogue) {
  t.streamBytes = options.streamingStoreBytes;
  LLVM_DEBUG({
    llvm::dbgs() << "[" DEBUG_TYPE "] "
                 << (c.kernel == ContractionKernel::Dot ? "dot" : "broadcast")
                 << " kernel, " << t.mr << " x " << t.nr << " tiles of "
                 << t.lanes << " lanes, blocks of " << t.mc << " x " << t.nc;
    std::string widening = describeWidening(c, options.f16c);
    if (!widening.empty())
      llvm::dbgs() << ", " << widening;
    if (c.panel)
      llvm::dbgs() << ", panels of " << c.panel
                   << (c.kPairs ? " in k pairs" : "");
    if (c.epilogue)
      llvm::dbgs() << ", with its epilogue";
    std::string rounded = roundedOutput(c);
    if (!rounded.empty())
      llvm::dbgs() << ", rounded to " << rounded;
    std::string fewRows = describeFewRows(c, t);
    if (!fewRows.empty())
      llvm::dbgs() << "; " << fewRows;
    if (mayStreamOutput(c, t))
      llvm::dbgs() << "; streaming stores from " << t.streamBytes << " bytes";
    llvm::dbgs() << ": " << c.op->getName() << " at " << c.op->getLoc() << "\n";
  });
  emitContractionKernel(b, c, t);
  if (options.remarks)
    remarkOn(c, t, options.f16c, noEpilogue);
}

LogicalResult
mlir::seq::cpu::vectorizeContraction(RewriterBase &rewriter, ContractionMatch c,
                                     const ContractionOptions &options) {
  ContractionTiling t = getContractionTiling(c, options.vectorBits,
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
  if (c.kPairs && (!options.bf16Dot || t.lanes != 16 ||
                   !elementTypeOf(c.a).isBF16() ||
                   !elementTypeOf(c.b).isBF16())) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] k-pair panels without "
                            << "vdpbf16ps on 16 lanes: " << c.op->getLoc()
                            << "\n");
    if (options.remarks)
      c.op.emitRemark("contraction left to the scalar loops: ")
          << "its operand is packed in k pairs for vdpbf16ps, which this "
             "target lacks (bf16-dot, 512-bit vectors, bf16 operands)";
    return failure();
  }
  // Both operands bf16 in the dot kernel on a target with vdpbf16ps: pairs
  // of reduction steps per instruction.
  c.dotPairs = c.kernel == ContractionKernel::Dot && options.bf16Dot &&
               t.lanes == 16 && elementTypeOf(c.a).isBF16() &&
               elementTypeOf(c.b).isBF16();
  // Without a fill or bias copy to absorb, the kernels start from C.
  (void)absorbInitializer(rewriter, c);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(c.op);
  Location loc = c.op->getLoc();
  // With an epilogue, the kernels replace it: what it reads and writes may
  // be defined between the two ops.
  std::string noEpilogue;
  if (succeeded(absorbEpilogue(rewriter, c, &noEpilogue)))
    rewriter.setInsertionPoint(c.epilogue);
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
  // bf16 A and B where the dot kernel would pair them: the packed copy is
  // in k pairs, for the broadcast kernel's vdpbf16ps.
  const bool pairs = c.dotPairs;
  auto emitPacked = [&](ContractionMatch pc, OpBuilder &pb, Value into) {
    Value packed = packShortReduction(pb, pc, width, into, pairs);
    ContractionTiling pt = getContractionTiling(pc, options.vectorBits,
                                                options.vectorRegisters);
    emitKernel(pb, pc, pt, options, noEpilogue);
    if (!into)
      memref::DeallocOp::create(pb, loc, packed);
  };
  if (pack && rows) {
    // The packed buffer is allocated before the test and freed after it:
    // the memory plan gives it a place in the arena, and no allocation
    // inside the branch ends a thread team (seq-cpu-thread-team).
    Value packed = allocatePackedShortReduction(rewriter, c, width, pairs);
    Value many = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::uge, rows,
        arith::ConstantIndexOp::create(rewriter, loc, kMinPackedRows));
    auto branch = scf::IfOp::create(rewriter, loc, many, /*withElse=*/true);
    OpBuilder thenBuilder = branch.getThenBodyBuilder(rewriter.getListener());
    emitPacked(c, thenBuilder, packed);
    OpBuilder elseBuilder = branch.getElseBodyBuilder(rewriter.getListener());
    emitKernel(elseBuilder, c, t, options, noEpilogue);
    memref::DeallocOp::create(rewriter, loc, packed);
  } else if (pack) {
    emitPacked(c, rewriter, Value());
  } else if (isWidenableLeftOperand(c, t.nc)) {
    Value wide = widenLeftOperand(rewriter, c);
    emitKernel(
        rewriter, c,
        getContractionTiling(c, options.vectorBits, options.vectorRegisters),
        options, noEpilogue);
    memref::DeallocOp::create(rewriter, loc, wide);
  } else {
    emitKernel(rewriter, c, t, options, noEpilogue);
  }
  if (c.epilogue)
    rewriter.eraseOp(c.epilogue);
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
    ContractionOptions options{vectorBits, vectorRegisters,     f16c,
                               bf16Dot,    streamingStoreBytes, remarks};
    // A contraction that fails keeps its scalar loops (and says why).
    for (const ContractionMatch &c : found)
      (void)vectorizeContraction(rewriter, c, options);
  }
};
} // namespace
