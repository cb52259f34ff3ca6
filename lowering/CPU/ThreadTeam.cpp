//===- ThreadTeam.cpp - run a function's parallel loops in one team -------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Runs the OpenMP parallel loops of a model call in one thread team instead
// of forking and joining a team per loop. See the pass description in
// Passes.td.
//
// Why one `omp.parallel` around straight-line code rather than a persistent
// pool of the runtime's own: the loops stay OpenMP worksharing loops, with
// the same static schedule (each iteration runs on the thread it ran on
// before, so results are bit-identical), libomp's barriers, and no new
// runtime code or ABI; only the code between the loops changes, and at the
// function level it is either free of memory effects (index arithmetic and
// memref views, which every thread of the team computes alike) or small
// serial work (copies, serialized small loops, asserts) that one thread runs
// in an `omp.single`, whose closing barrier orders it against the loops.
// Allocations stay outside the team: a refused allocation on the calling
// thread unwinds the model call (runtime/lib/Buffers.cpp), which must not
// happen inside a parallel region.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/Passes.h"

#include "dialect/Seq/Support/Debug.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "seq-cpu-thread-team"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQCPUTHREADTEAM
#include "lowering/CPU/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

namespace {

/// How an op at the top level of a function takes part in a thread team.
enum class Role {
  /// No memory effects and no regions: every thread computes it.
  Replicated,
  /// Memory effects, no used results, no parallelism or allocation inside:
  /// one thread runs it (omp.single).
  Serial,
  /// A parallel loop (an omp.parallel holding one worksharing loop), a call
  /// of a function whose loops can join the caller's team, or an scf.if
  /// without results whose branches hold only ops of these roles (every
  /// thread of the team takes the same branch: the condition is computed
  /// before the team or by every thread alike).
  Parallel,
  /// Anything else (allocations, loads whose values are used, loops holding
  /// parallel regions, branches holding any of these, calls of other
  /// functions): the team ends before it.
  Boundary,
};

/// Returns the worksharing loop of `parallel` when the region is nothing
/// else (besides ops every thread may compute): a parallel loop as
/// convert-scf-to-openmp makes it, without reductions or other clauses.
omp::WsloopOp getSoleWorkshareLoop(omp::ParallelOp parallel) {
  if (parallel->getNumOperands() != 0 || !parallel.getRegion().hasOneBlock())
    return nullptr;
  omp::WsloopOp loop;
  for (Operation &op : parallel.getRegion().front()) {
    if (isa<omp::TerminatorOp>(op))
      continue;
    if (auto wsloop = dyn_cast<omp::WsloopOp>(op)) {
      if (loop || wsloop->getNumOperands() != 0 || wsloop.getNowait())
        return nullptr;
      loop = wsloop;
      continue;
    }
    if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op))
      return nullptr;
  }
  return loop;
}

/// The roles of ops and functions in a module: which functions one thread
/// of a team may call, and which can join their caller's team.
struct Analysis {
  explicit Analysis(ModuleOp module) : symbols(module) {}

  SymbolTable symbols;
  /// Functions that neither allocate nor hold parallel regions: one thread
  /// of a team may call them.
  DenseMap<func::FuncOp, bool> serialSafe;
  /// Functions whose every top-level op has a role, with at least one
  /// parallel loop: the number of worksharing loops they run.
  DenseMap<func::FuncOp, int64_t> teamLoops;

  func::FuncOp getCallee(func::CallOp call) {
    return symbols.lookup<func::FuncOp>(call.getCallee());
  }

  /// Whether `op` and the ops nested in it neither allocate, nor hold
  /// OpenMP regions, nor call a function that does.
  bool isSerialSafe(Operation *op) {
    WalkResult result = op->walk([&](Operation *nested) {
      if (nested->getDialect() && isa<omp::OpenMPDialect>(nested->getDialect()))
        return WalkResult::interrupt();
      if (isa<memref::AllocOp, memref::AllocaOp, memref::ReallocOp,
              memref::AllocaScopeOp>(nested))
        return WalkResult::interrupt();
      if (auto call = dyn_cast<CallOpInterface>(nested)) {
        auto direct = dyn_cast<func::CallOp>(nested);
        func::FuncOp callee = direct ? getCallee(direct) : nullptr;
        if (!callee || callee.isExternal() || !isSerialSafe(callee))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return !result.wasInterrupted();
  }

  bool isSerialSafe(func::FuncOp func) {
    auto it = serialSafe.find(func);
    if (it != serialSafe.end())
      return it->second;
    // Generated code does not recurse; a cycle counts as unsafe.
    serialSafe[func] = false;
    bool safe = isSerialSafe(func.getOperation());
    serialSafe[func] = safe;
    return safe;
  }

  /// The role of `op`, an op at the top level of a function body, and the
  /// number of worksharing loops it runs (parallel ops only).
  Role classify(Operation *op, int64_t &loops) {
    loops = 0;
    if (op->hasTrait<OpTrait::IsTerminator>())
      return Role::Boundary;
    if (auto parallel = dyn_cast<omp::ParallelOp>(op)) {
      if (!getSoleWorkshareLoop(parallel))
        return Role::Boundary;
      loops = 1;
      return Role::Parallel;
    }
    if (auto call = dyn_cast<func::CallOp>(op)) {
      func::FuncOp callee = getCallee(call);
      if (callee && call->getNumResults() == 0) {
        auto it = teamLoops.find(callee);
        if (it != teamLoops.end()) {
          loops = it->second;
          return Role::Parallel;
        }
      }
    }
    if (op->getNumRegions() == 0 && isMemoryEffectFree(op))
      return Role::Replicated;
    if (op->use_empty() && isSerialSafe(op))
      return Role::Serial;
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      if (std::optional<int64_t> inner = countBranchLoops(branch)) {
        loops = *inner;
        return Role::Parallel;
      }
    }
    return Role::Boundary;
  }

  /// The worksharing loops of both branches of `branch` (a run of parallel
  /// loops on either side: a grouped decode step or the general form of
  /// attention, a packed or an unpacked kernel) when every op in them has a
  /// role other than Boundary and the op has no results, else nullopt.
  std::optional<int64_t> countBranchLoops(scf::IfOp branch) {
    if (branch->getNumResults() != 0)
      return std::nullopt;
    int64_t total = 0;
    for (Region *region : {&branch.getThenRegion(), &branch.getElseRegion()}) {
      if (region->empty())
        continue;
      if (!region->hasOneBlock())
        return std::nullopt;
      for (Operation &inner : region->front().without_terminator()) {
        int64_t loops;
        if (classify(&inner, loops) == Role::Boundary)
          return std::nullopt;
        total += loops;
      }
    }
    if (total == 0)
      return std::nullopt;
    return total;
  }

  /// The worksharing loops `func` runs if all of its body can run in its
  /// caller's team, else nullopt.
  std::optional<int64_t> countTeamLoops(func::FuncOp func) {
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return std::nullopt;
    int64_t total = 0;
    for (Operation &op : func.getBody().front()) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        if (ret->getNumOperands() != 0)
          return std::nullopt;
        continue;
      }
      int64_t loops;
      if (classify(&op, loops) == Role::Boundary)
        return std::nullopt;
      total += loops;
    }
    if (total == 0)
      return std::nullopt;
    return total;
  }

  /// Finds the functions that can join their caller's team, callees first.
  void findTeamFunctions(ModuleOp module) {
    bool changed = true;
    while (changed) {
      changed = false;
      for (auto func : module.getOps<func::FuncOp>()) {
        if (teamLoops.count(func))
          continue;
        if (std::optional<int64_t> loops = countTeamLoops(func)) {
          teamLoops[func] = *loops;
          changed = true;
          LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] @" << func.getSymName()
                                  << " can join its caller's team (" << *loops
                                  << " worksharing loops)\n");
        }
      }
    }
  }
};

/// Moves the ops of `run` (consecutive ops of one block) that every thread
/// computes before the first of the others, in order, and returns the
/// others. The moved ops use only values defined before the run or by other
/// such ops: the serial ops have no used results and the parallel ones none.
SmallVector<Operation *> hoistReplicated(ArrayRef<Operation *> run,
                                         Analysis &analysis) {
  SmallVector<Operation *> replicated, members;
  for (Operation *op : run) {
    int64_t loops;
    if (analysis.classify(op, loops) == Role::Replicated)
      replicated.push_back(op);
    else
      members.push_back(op);
  }
  if (!members.empty())
    for (Operation *op : replicated)
      op->moveBefore(members.front());
  return members;
}

/// Rewrites the ops of a team's body, all parallel or serial and in order,
/// to run on every thread of the team: parallel loops lose their own
/// omp.parallel, calls go to the team form of their callee, and each run of
/// serial ops moves into one omp.single.
void runInTeam(ArrayRef<Operation *> ops, Analysis &analysis,
               llvm::function_ref<func::FuncOp(func::FuncOp)> teamForm) {
  SmallVector<Operation *> serial;
  auto flushSerial = [&]() {
    if (serial.empty())
      return;
    OpBuilder builder(serial.front());
    auto single = omp::SingleOp::create(builder, serial.front()->getLoc(),
                                        omp::SingleOperands());
    Block *body = builder.createBlock(&single.getRegion());
    builder.setInsertionPointToEnd(body);
    auto terminator =
        omp::TerminatorOp::create(builder, serial.front()->getLoc());
    for (Operation *op : serial)
      op->moveBefore(terminator);
    serial.clear();
  };
  for (Operation *op : ops) {
    int64_t loops;
    Role role = analysis.classify(op, loops);
    if (role == Role::Serial) {
      serial.push_back(op);
      continue;
    }
    flushSerial();
    if (auto parallel = dyn_cast<omp::ParallelOp>(op)) {
      Block &body = parallel.getRegion().front();
      for (Operation &inner : llvm::make_early_inc_range(body))
        if (!isa<omp::TerminatorOp>(inner))
          inner.moveBefore(parallel);
      parallel.erase();
    } else if (auto call = dyn_cast<func::CallOp>(op)) {
      call.setCallee(teamForm(analysis.getCallee(call)).getSymName());
    } else if (auto branch = dyn_cast<scf::IfOp>(op)) {
      // Every thread takes the same branch and runs its ops as in a team.
      for (Region *region :
           {&branch.getThenRegion(), &branch.getElseRegion()}) {
        if (region->empty())
          continue;
        SmallVector<Operation *> inner;
        for (Operation &nested : region->front().without_terminator())
          inner.push_back(&nested);
        runInTeam(inner, analysis, teamForm);
      }
    }
  }
  flushSerial();
}

struct SeqCPUThreadTeamPass
    : public mlir::seq::impl::SeqCPUThreadTeamBase<SeqCPUThreadTeamPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    pendingRemarks.clear();
    Analysis analysis(module);
    analysis.findTeamFunctions(module);

    // The team form of each function that can join its caller's team,
    // cloned before any function changes: its parallel loops become
    // orphaned worksharing loops (they bind to the caller's team) and its
    // serial code runs in omp.single. The clones nobody calls go at the end.
    SmallVector<func::FuncOp> originals(module.getOps<func::FuncOp>());
    DenseMap<func::FuncOp, func::FuncOp> teamForms;
    for (func::FuncOp func : originals) {
      auto it = analysis.teamLoops.find(func);
      if (it == analysis.teamLoops.end())
        continue;
      int64_t loops = it->second;
      func::FuncOp clone = func.clone();
      clone.setSymName((func.getSymName() + "_team").str());
      clone.setPrivate();
      analysis.symbols.insert(clone, std::next(func->getIterator()));
      teamForms[func] = clone;
      analysis.teamLoops[clone] = loops;
    }
    auto teamForm = [&](func::FuncOp func) {
      func::FuncOp clone = teamForms.lookup(func);
      return clone ? clone : func;
    };
    for (auto [func, clone] : teamForms) {
      SmallVector<Operation *> ops;
      for (Operation &op : clone.getBody().front().without_terminator())
        ops.push_back(&op);
      runInTeam(hoistReplicated(ops, analysis), analysis, teamForm);
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] @" << clone.getSymName()
                 << ": team form of @" << func.getSymName() << "\n");
    }

    for (func::FuncOp func : originals)
      if (!func.isExternal())
        for (Block &block : func.getBody())
          formTeams(func, block, analysis, teamForm);

    // Drop the functions that lost their last call (an original called only
    // inside teams, a team form called nowhere), callers first.
    llvm::SetVector<Operation *> generated;
    for (auto [func, clone] : teamForms) {
      generated.insert(func);
      generated.insert(clone);
    }
    bool erased = true;
    while (erased) {
      erased = false;
      for (Operation *op : generated.takeVector()) {
        auto func = cast<func::FuncOp>(op);
        if (!func.isPrivate() || !func.symbolKnownUseEmpty(module)) {
          generated.insert(op);
          continue;
        }
        LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] @" << func.getSymName()
                                << " is no longer called\n");
        pendingRemarks.erase(func);
        func.erase();
        erased = true;
      }
    }
    // Remarks on the functions that remain, in the order of the module.
    for (auto func : module.getOps<func::FuncOp>()) {
      auto it = pendingRemarks.find(func);
      if (it != pendingRemarks.end())
        func.emitRemark() << it->second;
    }
  }

  /// The remark of each function that runs its loops in teams, emitted once
  /// the functions nobody calls are gone.
  llvm::MapVector<Operation *, std::string> pendingRemarks;

  /// Wraps each maximal run of parallel, serial and replicated ops of
  /// `block` that runs two worksharing loops or more in one omp.parallel.
  void formTeams(func::FuncOp func, Block &block, Analysis &analysis,
                 llvm::function_ref<func::FuncOp(func::FuncOp)> teamForm) {
    SmallVector<SmallVector<Operation *>> runs(1);
    SmallVector<int64_t> runLoops(1, 0);
    SmallVector<Operation *> boundaries;
    for (Operation &op : block) {
      int64_t loops;
      Role role = analysis.classify(&op, loops);
      if (role == Role::Boundary) {
        runs.emplace_back();
        runLoops.push_back(0);
        boundaries.push_back(&op);
        continue;
      }
      runs.back().push_back(&op);
      runLoops.back() += loops;
    }

    int64_t teams = 0, teamLoops = 0, totalLoops = 0;
    for (auto [index, run] : llvm::enumerate(runs)) {
      int64_t loops = runLoops[index];
      totalLoops += loops;
      if (loops < 2)
        continue;
      SmallVector<Operation *> members = hoistReplicated(run, analysis);
      Operation *first = members.front();
      OpBuilder builder(first);
      auto parallel = omp::ParallelOp::create(builder, first->getLoc(),
                                              omp::ParallelOperands());
      Block *body = builder.createBlock(&parallel.getRegion());
      builder.setInsertionPointToEnd(body);
      auto terminator = omp::TerminatorOp::create(builder, first->getLoc());
      for (Operation *op : members)
        op->moveBefore(terminator);
      // runInTeam replaces the loops, `first` among them.
      Location teamLoc = first->getLoc();
      runInTeam(members, analysis, teamForm);
      ++teams;
      teamLoops += loops;
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] @" << func.getSymName()
                 << ": one team for " << loops << " worksharing loops at "
                 << teamLoc << "\n");
    }
    if (teams == 0)
      return;
    LLVM_DEBUG({
      for (Operation *boundary : boundaries)
        llvm::dbgs() << "[" DEBUG_TYPE "] @" << func.getSymName()
                     << ": team boundary: " << boundary->getName() << " at "
                     << boundary->getLoc() << "\n";
    });
    if (remarks) {
      std::string text;
      llvm::raw_string_ostream remark(text);
      remark << "'" << func.getSymName() << "' runs " << teamLoops << " of its "
             << totalLoops << " parallel loops in " << teams
             << (teams == 1 ? " thread team" : " thread teams");
      if (teamLoops < totalLoops || teams > 1)
        remark << " (a team ends before each allocation, load whose value "
                  "is used and loop holding parallel regions; a lone "
                  "parallel loop keeps its own)";
      pendingRemarks[func] = text;
    }
  }
};

} // namespace
