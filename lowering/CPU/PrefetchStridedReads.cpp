//===- PrefetchStridedReads.cpp - prefetches for far-apart loop reads -----===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Adds a software prefetch, a few iterations ahead, to the vector reads of a
// sequential loop that step through a buffer by a stride too long for the
// hardware prefetchers (the fused selective scan's rows of u, delta and z).
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/Passes.h"

#include "dialect/Seq/Support/Debug.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

#define DEBUG_TYPE "seq-cpu-prefetch-strided-reads"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQCPUPREFETCHSTRIDEDREADS
#include "lowering/CPU/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

/// The constant c when `index` is `iv + c` for c >= 0 (`iv` itself, an
/// arith.addi of iv and a constant, or that clamped by an arith.minsi or
/// minui from above, as a software-pipelined read of step t + 1 is).
static std::optional<int64_t> offsetFrom(Value index, Value iv) {
  if (index == iv)
    return 0;
  Operation *def = index.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (isa<arith::MinSIOp, arith::MinUIOp>(def)) {
    for (Value operand : def->getOperands())
      if (std::optional<int64_t> c = offsetFrom(operand, iv))
        return c;
    return std::nullopt;
  }
  if (auto add = dyn_cast<arith::AddIOp>(def)) {
    APInt c;
    for (auto [x, y] : {std::pair(add.getLhs(), add.getRhs()),
                        std::pair(add.getRhs(), add.getLhs())})
      if (x == iv && matchPattern(y, m_ConstantInt(&c)) && !c.isNegative())
        return c.getSExtValue();
  }
  return std::nullopt;
}

namespace {
struct SeqCPUPrefetchStridedReadsPass
    : public mlir::seq::impl::SeqCPUPrefetchStridedReadsBase<
          SeqCPUPrefetchStridedReadsPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation()->walk([&](scf::ForOp loop) {
      std::optional<int64_t> step = getConstantIntValue(loop.getStep());
      if (!step || *step <= 0)
        return;
      Value iv = loop.getInductionVar();
      // The reads directly in the body (not in nested loops, whose own
      // strides decide).
      SmallVector<Operation *> reads;
      for (Operation &op : *loop.getBody())
        if (isa<vector::TransferReadOp, vector::LoadOp>(op))
          reads.push_back(&op);
      for (Operation *read : reads)
        prefetchAhead(*step, iv, read);
    });
  }

  /// Prefetches `read` `distance` iterations ahead if one of its indices
  /// moves by a long stride per iteration of the loop of `iv`.
  void prefetchAhead(int64_t step, Value iv, Operation *read) {
    Value memref;
    ValueRange indices;
    if (auto transfer = dyn_cast<vector::TransferReadOp>(read)) {
      memref = transfer.getBase();
      indices = transfer.getIndices();
    } else {
      auto load = cast<vector::LoadOp>(read);
      memref = load.getBase();
      indices = load.getIndices();
    }
    auto type = dyn_cast<MemRefType>(memref.getType());
    if (!type || !type.getElementType().isIntOrFloat())
      return;
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)))
      return;
    int64_t elementBytes = type.getElementTypeBitWidth() / 8;
    for (auto [dim, index] : llvm::enumerate(indices)) {
      std::optional<int64_t> c = offsetFrom(index, iv);
      if (!c || ShapedType::isDynamic(strides[dim]) ||
          strides[dim] * elementBytes * step < minStrideBytes)
        continue;
      // memref[..., min(i + c + distance * step, size - 1), ...]: the clamp
      // keeps the address inside the buffer at the loop's end.
      OpBuilder b(read);
      Location loc = read->getLoc();
      Value ahead = arith::AddIOp::create(
          b, loc, iv,
          arith::ConstantIndexOp::create(b, loc, *c + distance * step));
      Value size = memref::DimOp::create(b, loc, memref, dim);
      Value last = arith::SubIOp::create(
          b, loc, size, arith::ConstantIndexOp::create(b, loc, 1));
      SmallVector<Value> at(indices);
      at[dim] = arith::MinSIOp::create(b, loc, ahead, last);
      memref::PrefetchOp::create(b, loc, memref, at, /*isWrite=*/false,
                                 /*localityHint=*/2, /*isDataCache=*/true);
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] prefetch " << distance
                 << " iterations ahead along dim " << dim << " (stride "
                 << strides[dim] * elementBytes << " bytes): " << loc << "\n");
      if (remarks)
        read->emitRemark("strided read prefetched: ")
            << static_cast<int64_t>(distance)
            << " iterations ahead, into L2 (a stride of "
            << strides[dim] * elementBytes * step
            << " bytes per iteration, which the hardware prefetchers do "
               "not follow)";
      return;
    }
  }
};
} // namespace
