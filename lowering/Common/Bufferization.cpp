//===- Bufferization.cpp - bufferization linear in the depth --------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Two rewrites around the upstream bufferization passes that keep them
// linear in the number of layers of a model (see the pass descriptions in
// Passes.td):
//  - seq-split-empty-tensors clones every tensor.empty used by several
//    layers once per layer, so that One-Shot Bufferize's alias sets are
//    those of one layer instead of every op that CSE made share the tensor
//    (and gives each writer of a shared fill its own, which bufferization
//    would otherwise copy);
//  - seq-split-deallocs splits the one bufferization.dealloc that
//    ownership-based deallocation puts at the end of the model function
//    into one dealloc per allocation, which the simplification then handles
//    one at a time instead of comparing every pair.
//
//===----------------------------------------------------------------------===//

#include "lowering/Common/Instances.h"
#include "lowering/Common/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQSPLITDEALLOCS
#define GEN_PASS_DEF_SEQSPLITEMPTYTENSORS
#include "lowering/Common/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

namespace {
/// Gives each op that writes into a shared fill of an empty tensor (the
/// destination of several ops: CSE merges the equal zero fills of a layer's
/// projections) its own fill of its own empty tensor, next to the original.
/// One-Shot Bufferize would otherwise fill one buffer and copy it into each
/// writer's buffer but the last, and the contraction kernels, which fold a
/// fill of their output into their accumulators, would read those zeros
/// from memory instead.
static void splitSharedFills(Operation *root) {
  SmallVector<std::pair<linalg::FillOp, SmallVector<OpOperand *>>> shared;
  root->walk([&](linalg::FillOp fill) {
    if (!fill.hasPureTensorSemantics() ||
        !fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
      return;
    SmallVector<OpOperand *> writers;
    for (OpOperand &use : fill->getResult(0).getUses()) {
      auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
      if (dps && dps.isDpsInit(&use))
        writers.push_back(&use);
    }
    // A value's uses are listed latest first: the first writer in program
    // order keeps the original.
    std::reverse(writers.begin(), writers.end());
    if (writers.size() > 1)
      shared.push_back({fill, std::move(writers)});
  });
  OpBuilder builder(root->getContext());
  for (auto &[fill, writers] : shared) {
    builder.setInsertionPointAfter(fill);
    for (OpOperand *writer : llvm::drop_begin(writers)) {
      Operation *empty = builder.clone(*fill.getOutputs()[0].getDefiningOp());
      IRMapping map;
      map.map(fill.getOutputs()[0], empty->getResult(0));
      Operation *clone = builder.clone(*fill, map);
      writer->set(clone->getResult(0));
      builder.setInsertionPointAfter(clone);
    }
  }
}

struct SplitEmptyTensorsPass
    : seq::impl::SeqSplitEmptyTensorsBase<SplitEmptyTensorsPass> {
  void runOnOperation() override {
    splitSharedFills(getOperation());
    SmallVector<tensor::EmptyOp> shared;
    getOperation()->walk([&](tensor::EmptyOp empty) {
      if (!empty->use_empty() && !empty->hasOneUse())
        shared.push_back(empty);
    });
    OpBuilder builder(&getContext());
    for (tensor::EmptyOp empty : shared) {
      // The uses of one instance (one layer) keep sharing the empty tensor,
      // and their number does not grow with the depth. The uses of each
      // other instance get a clone, next to the original rather than to the
      // uses, so that an empty defined outside a loop is not allocated per
      // iteration.
      llvm::MapVector<NameLoc, SmallVector<OpOperand *>> byInstance;
      for (OpOperand &use : empty->getUses()) {
        SmallVector<NameLoc, 4> chain =
            seq::getInstanceChain(use.getOwner()->getLoc());
        byInstance[chain.empty() ? NameLoc() : chain.front()].push_back(&use);
      }
      builder.setInsertionPointAfter(empty);
      for (auto &uses : llvm::drop_begin(byInstance)) {
        Value clone = builder.clone(*empty)->getResult(0);
        for (OpOperand *use : uses.second)
          use->set(clone);
      }
    }
  }
};

struct SplitDeallocsPass : seq::impl::SeqSplitDeallocsBase<SplitDeallocsPass> {
  void runOnOperation() override {
    SmallVector<bufferization::DeallocOp> deallocs;
    getOperation()->walk([&](bufferization::DeallocOp dealloc) {
      if (dealloc.getMemrefs().size() < 2)
        return;
      // Distinct allocations: each memref the result of its own alloc.
      llvm::SmallPtrSet<Operation *, 16> allocs;
      for (Value memref : dealloc.getMemrefs()) {
        auto alloc = memref.getDefiningOp<memref::AllocOp>();
        if (!alloc || !allocs.insert(alloc).second)
          return;
      }
      deallocs.push_back(dealloc);
    });
    OpBuilder builder(&getContext());
    for (bufferization::DeallocOp dealloc : deallocs) {
      builder.setInsertionPoint(dealloc);
      Location loc = dealloc.getLoc();
      SmallVector<Value> ownership;
      for (auto [memref, condition] :
           llvm::zip_equal(dealloc.getMemrefs(), dealloc.getConditions())) {
        auto single = bufferization::DeallocOp::create(
            builder, loc, ValueRange{memref}, ValueRange{condition},
            dealloc.getRetained());
        if (ownership.empty()) {
          ownership.assign(single.getUpdatedConditions().begin(),
                           single.getUpdatedConditions().end());
          continue;
        }
        for (auto [combined, updated] :
             llvm::zip_equal(ownership, single.getUpdatedConditions()))
          combined = arith::OrIOp::create(builder, loc, combined, updated);
      }
      dealloc.replaceAllUsesWith(ownership);
      dealloc.erase();
    }
  }
};
} // namespace
