//===- StaticSchedule.cpp - worksharing loops split in the code -----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Replaces each worksharing loop without clauses by the loop over the block
// of iterations of the calling thread, computed in the generated code from
// omp_get_thread_num and omp_get_num_threads, and a barrier. See the pass
// description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#define DEBUG_TYPE "seq-cpu-static-schedule"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQCPUSTATICSCHEDULE
#include "lowering/CPU/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

namespace {

/// The loop nest of `wsloop` when the pass can take it: no clauses (no
/// reductions, private copies, schedule, order or nowait), index bounds,
/// one block ending in an omp.yield without values.
omp::LoopNestOp getPlainLoopNest(omp::WsloopOp wsloop) {
  if (wsloop->getNumOperands() != 0 || wsloop.getNowaitAttr() ||
      wsloop.getScheduleKindAttr() || wsloop.getOrderedAttr() ||
      wsloop.getOrderAttr())
    return nullptr;
  auto nest = dyn_cast<omp::LoopNestOp>(wsloop.getWrappedLoop());
  if (!nest || !nest.getRegion().hasOneBlock() ||
      nest.getLoopInclusiveAttr() || nest.getTileSizesAttr())
    return nullptr;
  auto yield = dyn_cast<omp::YieldOp>(nest.getRegion().front().getTerminator());
  if (!yield || yield->getNumOperands() != 0)
    return nullptr;
  for (Value v : nest->getOperands())
    if (!v.getType().isIndex())
      return nullptr;
  return nest;
}

/// Declares `int name(void)` of the OpenMP runtime in `module` once.
func::FuncOp getRuntimeFunction(ModuleOp module, StringRef name) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return fn;
  OpBuilder b(module.getBodyRegion());
  auto fn = func::FuncOp::create(
      b, module.getLoc(), name,
      b.getFunctionType({}, {b.getI32Type()}));
  fn.setPrivate();
  return fn;
}

struct SeqCPUStaticSchedulePass
    : public mlir::seq::impl::SeqCPUStaticScheduleBase<
          SeqCPUStaticSchedulePass> {
  using Base::Base;

  void rewrite(omp::WsloopOp wsloop, omp::LoopNestOp nest,
               func::FuncOp threadNum, func::FuncOp numThreads) {
    OpBuilder b(wsloop);
    Location loc = wsloop.getLoc();
    auto idx = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    auto index = [&](func::FuncOp fn) {
      Value v = func::CallOp::create(b, loc, fn).getResult(0);
      return arith::IndexCastOp::create(b, loc, b.getIndexType(), v)
          .getResult();
    };
    // The trip count of each dimension (bounds with positive steps, as
    // convert-scf-to-openmp makes them) and of the collapsed nest.
    SmallVector<Value> counts;
    Value total = idx(1);
    for (auto [lb, ub, step] : llvm::zip(nest.getLoopLowerBounds(),
                                         nest.getLoopUpperBounds(),
                                         nest.getLoopSteps())) {
      Value span = arith::MaxSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, ub, lb), idx(0));
      counts.push_back(arith::CeilDivUIOp::create(b, loc, span, step));
      total = arith::MulIOp::create(b, loc, total, counts.back());
    }
    // libomp's balanced static schedule: thread t of n takes
    // total / n iterations, one more when t < total % n, in order.
    Value tid = index(threadNum), nth = index(numThreads);
    Value small = arith::DivUIOp::create(b, loc, total, nth);
    Value extras = arith::RemUIOp::create(b, loc, total, nth);
    Value begin = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, tid, small),
        arith::MinUIOp::create(b, loc, tid, extras));
    Value more = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid, extras),
        idx(1), idx(0));
    Value end = arith::AddIOp::create(
        b, loc, begin, arith::AddIOp::create(b, loc, small, more));
    auto loop = scf::ForOp::create(b, loc, begin, end, idx(1));
    b.setInsertionPointToStart(loop.getBody());
    // The linear index back to the nest's induction variables (the last
    // dimension fastest, as a collapsed nest runs).
    IRMapping map;
    Value rest = loop.getInductionVar();
    Block &body = nest.getRegion().front();
    for (int64_t d = counts.size() - 1; d >= 0; --d) {
      Value i = d == 0 ? rest
                       : arith::RemUIOp::create(b, loc, rest, counts[d])
                             .getResult();
      if (d != 0)
        rest = arith::DivUIOp::create(b, loc, rest, counts[d]);
      Value iv = arith::AddIOp::create(
          b, loc, nest.getLoopLowerBounds()[d],
          arith::MulIOp::create(b, loc, i, nest.getLoopSteps()[d]));
      map.map(body.getArgument(d), iv);
    }
    for (Operation &op : body.without_terminator())
      b.clone(op, map);
    // The worksharing loop's implicit barrier, unless the region's end (the
    // join of the team) follows at once.
    b.setInsertionPointAfter(loop);
    Operation *next = wsloop->getNextNode();
    if (!(isa_and_nonnull<omp::TerminatorOp>(next) &&
          isa<omp::ParallelOp>(next->getParentOp())))
      omp::BarrierOp::create(b, loc);
    wsloop->erase();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<omp::WsloopOp, omp::LoopNestOp>> loops;
    module.walk([&](omp::WsloopOp wsloop) {
      if (omp::LoopNestOp nest = getPlainLoopNest(wsloop))
        loops.push_back({wsloop, nest});
    });
    if (loops.empty())
      return;
    func::FuncOp threadNum = getRuntimeFunction(module, "omp_get_thread_num");
    func::FuncOp numThreads =
        getRuntimeFunction(module, "omp_get_num_threads");
    for (auto [wsloop, nest] : loops)
      rewrite(wsloop, nest, threadNum, numThreads);
  }
};

} // namespace
