//===- LaunchToLoops.cpp - GPU launches as host loops ---------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The NVPTX target's interpreter: see the pass description in Passes.td.
//
// A launch's body is cut into phases at the ops through which the threads of
// a block communicate (barriers, shuffles, warp and block reductions), and
// at the loops and conditionals that hold such ops. Each phase runs as loops
// over the block's threads, so every thread finishes a phase before any
// starts the next: the semantics of a barrier. A value that one phase
// defines and a later one uses is either recomputed there (pure ops) or kept
// for each thread in a buffer indexed by the thread's linear id; the
// collective ops exchange their operands through such buffers. Loops and
// conditionals that hold collective ops run once for the block, with
// their bounds and conditions checked to be the same in every thread.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/Support/Debug.h"
#include "lowering/NVPTX/Passes.h"

#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#define DEBUG_TYPE "seq-nvptx-launch-to-loops"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQNVPTXLAUNCHTOLOOPS
#include "lowering/NVPTX/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

/// The ops through which the threads of a block communicate in registers or
/// meet: each ends a phase.
static bool isCollective(Operation *op) {
  return isa<gpu::BarrierOp, gpu::ShuffleOp, gpu::SubgroupReduceOp,
             gpu::AllReduceOp, nvgpu::MmaSyncOp, nvgpu::LdMatrixOp>(op);
}

/// Why the interpreter cannot emulate `mma`, or an empty string. It emulates
/// the shapes of `mma.sync` with floating-point inputs: f16 and bf16
/// m16n8k16 and m16n8k8 (vector<4x2> and vector<2x2> A fragments), tf32
/// m16n8k8 and m16n8k4 (f32 vector<4x1> and vector<2x1>), with f32 or f16
/// accumulators (vector<2x2>).
static std::string unsupportedMma(nvgpu::MmaSyncOp mma) {
  auto [m, n, k] = mma.getMmaShapeAsArray();
  VectorType a = mma.getMatrixA().getType(), b = mma.getMatrixB().getType();
  VectorType c = mma.getMatrixC().getType();
  Type in = a.getElementType();
  int64_t elements = in.isF32() ? 1 : 2;
  bool supported =
      m == 16 && n == 8 && (in.isF16() || in.isBF16() || in.isF32()) &&
      (in.isF32() ? (k == 8 || k == 4) : (k == 16 || k == 8)) &&
      a.getShape() == ArrayRef<int64_t>{k / (2 * elements), elements} &&
      b.getShape() == ArrayRef<int64_t>{k / (4 * elements), elements} &&
      b.getElementType() == in && c.getShape() == ArrayRef<int64_t>{2, 2} &&
      (c.getElementType().isF32() || c.getElementType().isF16());
  if (supported)
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "the GPU interpreter emulates nvgpu.mma.sync for f16 and bf16 "
        "m16n8k16 and m16n8k8 and tf32 m16n8k8 and m16n8k4 with f32 or f16 "
        "accumulators, not "
     << a << " x " << b << " + " << c << " in m" << m << "n" << n << "k" << k;
  return text;
}

/// Whether `op` is or holds a collective op.
static bool holdsCollective(Operation *op) {
  return op
      ->walk([](Operation *nested) {
        return isCollective(nested) ? WalkResult::interrupt()
                                    : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether a value of `type` can be kept per thread in a buffer.
static bool isBufferable(Type type) {
  return type.isIntOrIndexOrFloat() || isa<VectorType>(type);
}

/// `type` without a GPU address space.
static Type withoutGpuMemorySpace(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref ||
      !isa_and_nonnull<gpu::AddressSpaceAttr>(memref.getMemorySpace()))
    return type;
  return MemRefType::get(memref.getShape(), memref.getElementType(),
                         memref.getLayout());
}

/// The declaration of the C function `name` in `module`.
static LLVM::LLVMFuncOp declareFunction(ModuleOp module, StringRef name,
                                        Type result, ArrayRef<Type> params) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  return LLVM::LLVMFuncOp::create(b, module.getLoc(), name,
                                  LLVM::LLVMFunctionType::get(result, params));
}

/// `file:line:col` of `loc`, as diagnostics print it.
static std::string describe(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
  else
    os << loc;
  return text;
}

/// Ends the program with `message` on standard error where `failed` is true.
/// (`cf.assert` prints with `puts` and aborts: the message is lost when
/// standard output is a pipe or a file.)
static void emitCheck(OpBuilder &b, Location loc, Value failed,
                      StringRef message) {
  auto branch = scf::IfOp::create(b, loc, failed, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(branch.thenBlock()->getTerminator());
  auto module = branch->getParentOfType<ModuleOp>();
  std::string name;
  for (unsigned i = 0;; ++i) {
    name = "__seqc_gpu_interpreter_message_" + std::to_string(i);
    if (!module.lookupSymbol(name))
      break;
  }
  std::string text = (message + "\n").str();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value address =
      LLVM::createGlobalString(loc, b, name, text, LLVM::Linkage::Internal);
  LLVM::CallOp::create(
      b, loc, declareFunction(module, "write", i64, {i32, ptr, i64}),
      ValueRange{arith::ConstantIntOp::create(b, loc, i32, 2), address,
                 arith::ConstantIntOp::create(b, loc, i64, text.size())});
  LLVM::CallOp::create(
      b, loc,
      declareFunction(module, "exit", LLVM::LLVMVoidType::get(b.getContext()),
                      {i32}),
      ValueRange{arith::ConstantIntOp::create(b, loc, i32, 1)});
}

/// The linear id of thread `ids` in a block of `size`: (z * size.y + y) *
/// size.x + x, the order of the threads of a warp.
static Value linearize(OpBuilder &b, Location loc, gpu::KernelDim3 ids,
                       gpu::KernelDim3 size) {
  Value zy = arith::MulIOp::create(b, loc, ids.z, size.y);
  Value zyx = arith::MulIOp::create(
      b, loc, arith::AddIOp::create(b, loc, zy, ids.y), size.x);
  return arith::AddIOp::create(b, loc, zyx, ids.x);
}

/// The row-major position of element `indices` of a buffer of static
/// `shape` (0 for rank 0).
static Value rowMajorPosition(OpBuilder &b, Location loc,
                              ArrayRef<int64_t> shape, ValueRange indices) {
  if (indices.empty())
    return arith::ConstantIndexOp::create(b, loc, 0);
  Value position = indices.front();
  for (auto [size, i] : llvm::zip(shape.drop_front(), indices.drop_front()))
    position = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, position,
                              arith::ConstantIndexOp::create(b, loc, size)),
        i);
  return position;
}

namespace {

/// One thread loop's view of the launch: the mapping of the launch body's
/// values into the loop, and the thread's ids.
struct Thread {
  IRMapping map;
  Value x, y, z;
  /// (z * dim.y + y) * dim.x + x, built when first asked for.
  Value linear;
  /// With race checks: the number of the block's stretch between barriers
  /// (i64), and the thread's stamp in the shadows, phase * 4096 + linear + 1,
  /// built when first asked for.
  Value phase, stamp;
};

/// The race checks' record of a workgroup buffer: for each element, the
/// stamp of the last thread that wrote it and of the last that read it (or
/// phase * 4096 + 4095: several did), in the stretch between barriers of the
/// stamp.
struct Shadow {
  Value writes, reads;
  /// With asynchronous copies: for each element, the last cp.async that
  /// wrote it, (thread + 1) << 32 | the index of its group in the thread's
  /// groups, or 0.
  Value asyncCopies;
};

/// Lowers one launch whose threads may communicate.
class LaunchLowering {
public:
  LaunchLowering(gpu::LaunchOp launch, bool reverseThreads, bool checkRaces)
      : launch(launch), reverseThreads(reverseThreads), checkRaces(checkRaces),
        builder(launch), loc(launch.getLoc()) {}

  LogicalResult lower();

private:
  LogicalResult analyze();
  void assignRuns(Block &block);
  int runOf(Operation *op) const;
  bool crossesRuns(Value value) const;

  LogicalResult emitOps(Block &block, OpBuilder &b);
  LogicalResult emitFor(scf::ForOp forOp, OpBuilder &b);
  LogicalResult emitIf(scf::IfOp ifOp, OpBuilder &b);
  void emitShuffle(gpu::ShuffleOp shuffle, OpBuilder &b);
  void emitReduce(Operation *op, Value operand, gpu::AllReduceOperation kind,
                  bool perWarp, OpBuilder &b);
  void emitMma(nvgpu::MmaSyncOp mma, OpBuilder &b);
  void emitLdMatrix(nvgpu::LdMatrixOp load, OpBuilder &b);
  void checkFullWarp(OpBuilder &b, Thread &thread, Operation *op);
  void storeYields(Operation *yield, ArrayRef<Value> destinations,
                   OpBuilder &b);
  void createShadows();
  void fillZero(OpBuilder &b, Value buffer, Value size);
  void lowerAsyncCopies();
  void resetAsyncCopies(OpBuilder &b);
  void advancePhase(OpBuilder &b);
  void checkAccesses(Operation *clone, OpBuilder &b, Thread &thread);
  void checkAccess(Operation *access, Thread &thread);
  void createStamp(OpBuilder &b, Thread &thread);

  void forEachThread(OpBuilder &b,
                     function_ref<void(OpBuilder &, Thread &)> body);
  Value linearId(OpBuilder &b, Thread &thread);
  std::pair<Value, Value> laneOf(OpBuilder &b, Thread &thread);
  Value publish(Value value, OpBuilder &b);
  Value get(Value value, OpBuilder &b, Thread &thread);
  Value uniform(Value value, OpBuilder &b, StringRef what, Location at);
  Value newBuffer(Type elementType, int64_t perThread = 1);
  Value index(OpBuilder &b, int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }

  gpu::LaunchOp launch;
  bool reverseThreads;
  bool checkRaces;
  /// Before the block loops: buffers and constants.
  OpBuilder builder;
  /// After the block loops: the buffers' deallocations.
  SmallVector<Value> heapBuffers;
  Location loc;

  /// The values every thread sees alike: the launch's dimensions, the block
  /// ids, the induction variables of loops run once for the block.
  IRMapping uniformMap;
  /// The run of each op at the top level of a phased block: the ops of a
  /// run execute in one loop over the threads.
  DenseMap<Operation *, int> runs;
  int nextRun = 0;
  /// The buffers of per-thread values used in another phase.
  DenseMap<Value, Value> buffers;
  /// Private buffers (static allocas) given a slot per thread: the i8
  /// buffer of all slots and each slot's bytes.
  DenseMap<Operation *, std::pair<Value, int64_t>> privateSlots;
  Value numThreads;
  Value zero, one;
  /// With race checks: the shadow of each workgroup buffer, and the phase
  /// counter (memref<1xi64>), which each block and each barrier advance:
  /// accesses of two threads in the same phase are concurrent, even when
  /// warp-level ops between them cut it into several loops over the threads.
  DenseMap<Value, Shadow> shadows;
  Value phaseCounter;
  /// With race checks and asynchronous copies: per thread, the number of
  /// cp.async groups it committed and the number known complete (memref<?x
  /// i64> of one element per thread).
  Value asyncCommitted, asyncCompleted;
};

} // namespace

void LaunchLowering::assignRuns(Block &block) {
  int current = -1;
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>() || holdsCollective(&op)) {
      // A phase boundary, or an op holding some: a run of its own, and the
      // blocks of its regions runs of their own.
      runs[&op] = nextRun++;
      current = -1;
      if (isa<scf::ForOp, scf::IfOp>(op))
        for (Region &region : op.getRegions())
          for (Block &nested : region)
            assignRuns(nested);
      continue;
    }
    if (current < 0)
      current = nextRun++;
    runs[&op] = current;
  }
}

int LaunchLowering::runOf(Operation *op) const {
  for (; op; op = op->getParentOp()) {
    auto it = runs.find(op);
    if (it != runs.end())
      return it->second;
  }
  return -1;
}

bool LaunchLowering::crossesRuns(Value value) const {
  Operation *def = value.getDefiningOp();
  int defRun = def ? runOf(def) : runOf(value.getParentBlock()->getParentOp());
  for (Operation *user : value.getUsers())
    if (runOf(user) != defRun)
      return true;
  return false;
}

/// Whether the op may be computed again in a later phase instead of kept.
static bool isRematerializable(Operation *op) {
  return op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
         !isCollective(op);
}

LogicalResult LaunchLowering::analyze() {
  assignRuns(launch.getBody().front());
  WalkResult result = launch.getBody().walk([&](Operation *op) {
    if (holdsCollective(op) && !isCollective(op) &&
        !isa<scf::ForOp, scf::IfOp>(op)) {
      op->emitError() << "the GPU interpreter runs the threads of a block "
                         "together through 'scf.for' and 'scf.if', not "
                         "through '"
                      << op->getName() << "', which holds a barrier, "
                      << "shuffle or reduction";
      return WalkResult::interrupt();
    }
    auto check = [&](Value value) {
      if (!crossesRuns(value))
        return true;
      Operation *def = value.getDefiningOp();
      if (def && (isRematerializable(def) || privateSlots.count(def)))
        return true;
      if (isBufferable(value.getType()))
        return true;
      op->emitError() << "the GPU interpreter cannot keep a value of type "
                      << value.getType()
                      << " for each thread across a barrier, shuffle or "
                         "reduction";
      return false;
    };
    for (Value result : op->getResults())
      if (!check(result))
        return WalkResult::interrupt();
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (runs.count(op) && !check(arg))
            return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

Value LaunchLowering::newBuffer(Type elementType, int64_t perThread) {
  auto type = MemRefType::get({ShapedType::kDynamic}, elementType);
  Value size = numThreads;
  if (perThread != 1)
    size = arith::MulIOp::create(builder, loc, size, index(builder, perThread));
  Value buffer = memref::AllocOp::create(builder, loc, type, size);
  heapBuffers.push_back(buffer);
  return buffer;
}

Value LaunchLowering::linearId(OpBuilder &b, Thread &thread) {
  if (thread.linear)
    return thread.linear;
  gpu::KernelDim3 size = launch.getBlockSizeOperandValues();
  thread.linear = linearize(b, loc, {thread.x, thread.y, thread.z}, size);
  return thread.linear;
}

/// The thread's lane (linear id % 32) and its warp's first linear id.
std::pair<Value, Value> LaunchLowering::laneOf(OpBuilder &b, Thread &thread) {
  Value linear = linearId(b, thread);
  Value lane = arith::RemUIOp::create(b, loc, linear, index(b, 32));
  return {lane, arith::SubIOp::create(b, loc, linear, lane)};
}

/// A buffer of `value` in every thread, indexed by linear id, written in a
/// loop over the threads: what a collective op reads of its operand.
Value LaunchLowering::publish(Value value, OpBuilder &b) {
  Value buffer = newBuffer(value.getType());
  forEachThread(b, [&](OpBuilder &tb, Thread &thread) {
    memref::StoreOp::create(tb, loc, get(value, tb, thread), buffer,
                            linearId(tb, thread));
  });
  return buffer;
}

void LaunchLowering::forEachThread(
    OpBuilder &b, function_ref<void(OpBuilder &, Thread &)> body) {
  OpBuilder::InsertionGuard guard(b);
  gpu::KernelDim3 size = launch.getBlockSizeOperandValues();
  Thread thread;
  thread.map = uniformMap;
  if (phaseCounter)
    thread.phase = memref::LoadOp::create(b, loc, phaseCounter, zero);
  SmallVector<std::pair<Value *, Value>> dims = {
      {&thread.z, size.z}, {&thread.y, size.y}, {&thread.x, size.x}};
  for (auto [id, count] : dims) {
    auto loop = scf::ForOp::create(b, loc, zero, count, one);
    b.setInsertionPointToStart(loop.getBody());
    *id = loop.getInductionVar();
    if (reverseThreads) {
      // Last thread first: count - 1 - i.
      Value last = arith::SubIOp::create(b, loc, count, one);
      *id = arith::SubIOp::create(b, loc, last, *id);
    }
  }
  gpu::KernelDim3 ids = launch.getThreadIds();
  thread.map.map(ids.x, thread.x);
  thread.map.map(ids.y, thread.y);
  thread.map.map(ids.z, thread.z);
  body(b, thread);
}

Value LaunchLowering::get(Value value, OpBuilder &b, Thread &thread) {
  if (Value mapped = thread.map.lookupOrNull(value))
    return mapped;
  if (!launch.getBody().isAncestor(value.getParentRegion()))
    return value;
  if (Value buffer = buffers.lookup(value)) {
    Value loaded = memref::LoadOp::create(b, loc, buffer, linearId(b, thread));
    thread.map.map(value, loaded);
    return loaded;
  }
  Operation *def = value.getDefiningOp();
  assert(def && "a block argument of a phased region has a buffer");
  auto slot = privateSlots.find(def);
  if (slot != privateSlots.end()) {
    auto [all, bytes] = slot->second;
    Value shift =
        arith::MulIOp::create(b, loc, linearId(b, thread), index(b, bytes));
    Value view = memref::ViewOp::create(b, loc, value.getType(), all, shift,
                                        ValueRange{});
    thread.map.map(value, view);
    return view;
  }
  assert(isRematerializable(def) && "checked by analyze()");
  for (Value operand : def->getOperands())
    get(operand, b, thread);
  b.clone(*def, thread.map);
  return thread.map.lookup(value);
}

Value LaunchLowering::uniform(Value value, OpBuilder &b, StringRef what,
                              Location at) {
  if (!launch.getBody().isAncestor(value.getParentRegion()))
    return value;
  if (Value mapped = uniformMap.lookupOrNull(value))
    return mapped;
  // Thread 0's value, which every other thread must share.
  Thread first;
  first.map = uniformMap;
  first.x = first.y = first.z = first.linear = index(b, 0);
  gpu::KernelDim3 ids = launch.getThreadIds();
  for (Value id : {ids.x, ids.y, ids.z})
    first.map.map(id, first.x);
  Value firstValue = get(value, b, first);
  std::string message;
  llvm::raw_string_ostream os(message);
  os << "GPU interpreter: the threads of a block disagree on the " << what
     << " at " << describe(at)
     << ", which holds a barrier, shuffle or reduction";
  forEachThread(b, [&](OpBuilder &tb, Thread &thread) {
    Value mine = get(value, tb, thread);
    Value differs = arith::CmpIOp::create(tb, loc, arith::CmpIPredicate::ne,
                                          mine, firstValue);
    emitCheck(tb, loc, differs, message);
  });
  return firstValue;
}

void LaunchLowering::storeYields(Operation *yield, ArrayRef<Value> destinations,
                                 OpBuilder &b) {
  if (destinations.empty())
    return;
  forEachThread(b, [&](OpBuilder &tb, Thread &thread) {
    // All values first: a yield may swap two carried values.
    SmallVector<Value> values;
    for (Value operand : yield->getOperands())
      values.push_back(get(operand, tb, thread));
    for (auto [value, buffer] : llvm::zip_equal(values, destinations))
      memref::StoreOp::create(tb, loc, value, buffer, linearId(tb, thread));
  });
}

LogicalResult LaunchLowering::emitFor(scf::ForOp forOp, OpBuilder &b) {
  Location at = forOp.getLoc();
  Value lower =
      uniform(forOp.getLowerBound(), b, "lower bound of the loop", at);
  Value upper =
      uniform(forOp.getUpperBound(), b, "upper bound of the loop", at);
  Value step = uniform(forOp.getStep(), b, "step of the loop", at);
  SmallVector<Value> carried;
  for (Value init : forOp.getInitArgs())
    carried.push_back(newBuffer(init.getType()));
  if (!carried.empty())
    forEachThread(b, [&](OpBuilder &tb, Thread &thread) {
      SmallVector<Value> values;
      for (Value init : forOp.getInitArgs())
        values.push_back(get(init, tb, thread));
      for (auto [value, buffer] : llvm::zip_equal(values, carried))
        memref::StoreOp::create(tb, loc, value, buffer, linearId(tb, thread));
    });
  for (auto [i, buffer] : llvm::enumerate(carried)) {
    buffers[forOp.getRegionIterArg(i)] = buffer;
    buffers[forOp.getResult(i)] = buffer;
  }
  auto loop = scf::ForOp::create(b, forOp.getLoc(), lower, upper, step);
  loop.setUnsignedCmp(forOp.getUnsignedCmp());
  uniformMap.map(forOp.getInductionVar(), loop.getInductionVar());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  if (failed(emitOps(*forOp.getBody(), b)))
    return failure();
  storeYields(forOp.getBody()->getTerminator(), carried, b);
  return success();
}

LogicalResult LaunchLowering::emitIf(scf::IfOp ifOp, OpBuilder &b) {
  Value condition =
      uniform(ifOp.getCondition(), b, "condition of the branch", ifOp.getLoc());
  SmallVector<Value> results;
  for (Value result : ifOp.getResults())
    results.push_back(newBuffer(result.getType()));
  for (auto [result, buffer] : llvm::zip_equal(ifOp.getResults(), results))
    buffers[result] = buffer;
  bool withElse = !ifOp.getElseRegion().empty();
  auto branch =
      scf::IfOp::create(b, ifOp.getLoc(), TypeRange{}, condition, withElse);
  OpBuilder::InsertionGuard guard(b);
  for (auto [from, to] :
       {std::pair{&ifOp.getThenRegion(), &branch.getThenRegion()},
        std::pair{&ifOp.getElseRegion(), &branch.getElseRegion()}}) {
    if (from->empty())
      continue;
    b.setInsertionPoint(to->front().getTerminator());
    if (failed(emitOps(from->front(), b)))
      return failure();
    storeYields(from->front().getTerminator(), results, b);
  }
  return success();
}

void LaunchLowering::emitShuffle(gpu::ShuffleOp shuffle, OpBuilder &b) {
  Value exchange = publish(shuffle.getValue(), b);
  Value resultBuffer, validBuffer;
  if (!shuffle.getShuffleResult().use_empty())
    resultBuffer = buffers[shuffle.getShuffleResult()] =
        newBuffer(shuffle.getShuffleResult().getType());
  if (!shuffle.getValid().use_empty())
    validBuffer = buffers[shuffle.getValid()] =
        newBuffer(shuffle.getValid().getType());
  if (!resultBuffer && !validBuffer)
    return;
  // PTX's shfl.sync with the clamp value gpu-to-nvvm passes (32 - width
  // for up, width - 1 otherwise) and no segment mask: the source lane j,
  // valid when j >= clamp (up) or j <= clamp (down, xor, idx); an invalid
  // source, or one past the block's last thread, reads the thread's own
  // value.
  forEachThread(b, [&](OpBuilder &tb, Thread &thread) {
    Type i32 = tb.getI32Type();
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(tb, loc, i32, v);
    };
    Value linear = linearId(tb, thread);
    auto [laneIndex, warpBase] = laneOf(tb, thread);
    Value lane = arith::IndexCastOp::create(tb, loc, i32, laneIndex);
    Value offset = arith::AndIOp::create(
        tb, loc, get(shuffle.getOffset(), tb, thread), constant(31));
    Value width = get(shuffle.getWidth(), tb, thread);
    Value source, valid;
    using Pred = arith::CmpIPredicate;
    if (shuffle.getMode() == gpu::ShuffleMode::UP) {
      Value clamp = arith::AndIOp::create(
          tb, loc, arith::SubIOp::create(tb, loc, constant(32), width),
          constant(31));
      source = arith::SubIOp::create(tb, loc, lane, offset);
      valid = arith::CmpIOp::create(tb, loc, Pred::sge, source, clamp);
    } else {
      Value clamp = arith::AndIOp::create(
          tb, loc, arith::SubIOp::create(tb, loc, width, constant(1)),
          constant(31));
      switch (shuffle.getMode()) {
      case gpu::ShuffleMode::DOWN:
        source = arith::AddIOp::create(tb, loc, lane, offset);
        break;
      case gpu::ShuffleMode::XOR:
        source = arith::XOrIOp::create(tb, loc, lane, offset);
        break;
      default:
        source = offset;
        break;
      }
      valid = arith::CmpIOp::create(tb, loc, Pred::sle, source, clamp);
    }
    source = arith::SelectOp::create(tb, loc, valid, source, lane);
    Value sourceLinear = arith::AddIOp::create(
        tb, loc, warpBase,
        arith::IndexCastOp::create(tb, loc, tb.getIndexType(), source));
    Value exists =
        arith::CmpIOp::create(tb, loc, Pred::ult, sourceLinear, numThreads);
    valid = arith::AndIOp::create(tb, loc, valid, exists);
    sourceLinear =
        arith::SelectOp::create(tb, loc, exists, sourceLinear, linear);
    if (resultBuffer)
      memref::StoreOp::create(
          tb, loc, memref::LoadOp::create(tb, loc, exchange, sourceLinear),
          resultBuffer, linear);
    if (validBuffer)
      memref::StoreOp::create(tb, loc, valid, validBuffer, linear);
  });
}

void LaunchLowering::emitReduce(Operation *op, Value operand,
                                gpu::AllReduceOperation kind, bool perWarp,
                                OpBuilder &b) {
  Value exchange = publish(operand, b);
  Value result = op->getResult(0);
  if (result.use_empty())
    return;
  Value out = buffers[result] = newBuffer(result.getType());
  vector::CombiningKind combining = gpu::convertReductionKind(kind);
  // The values of threads [first, end) combined in lane order.
  auto combine = [&](OpBuilder &rb, Value first, Value end) {
    Value init = memref::LoadOp::create(rb, loc, exchange, first);
    Value next = arith::AddIOp::create(rb, loc, first, index(rb, 1));
    auto loop = scf::ForOp::create(
        rb, loc, next, end, index(rb, 1), ValueRange{init},
        [&](OpBuilder &lb, Location l, Value i, ValueRange acc) {
          Value v = memref::LoadOp::create(lb, l, exchange, i);
          scf::YieldOp::create(
              lb, l, vector::makeArithReduction(lb, l, combining, v, acc[0]));
        });
    return loop.getResult(0);
  };
  // The block's value once; each warp's by each of its threads.
  Value total = perWarp ? Value() : combine(b, index(b, 0), numThreads);
  forEachThread(b, [&](OpBuilder &tb, Thread &thread) {
    Value linear = linearId(tb, thread);
    Value value = total;
    if (perWarp) {
      Value first = laneOf(tb, thread).second;
      Value end = arith::MinUIOp::create(
          tb, loc, arith::AddIOp::create(tb, loc, first, index(tb, 32)),
          numThreads);
      value = combine(tb, first, end);
    }
    memref::StoreOp::create(tb, loc, value, out, linear);
  });
}

void LaunchLowering::checkFullWarp(OpBuilder &b, Thread &thread,
                                   Operation *op) {
  Value end = arith::AddIOp::create(b, loc, laneOf(b, thread).second,
                                    index(b, 32));
  Value partial =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, end, numThreads);
  emitCheck(b, loc, partial,
            ("GPU interpreter: '" + op->getName().getStringRef() + "' at " +
             describe(op->getLoc()) + " needs the 32 threads of a full warp")
                .str());
}

/// Each lane's fragment elements go to an exchange buffer ordered (lane,
/// register, element); each lane then computes its four accumulators,
/// reading A(row, k) and B(k, col) from the lanes that hold them in PTX's
/// layouts (groupID = lane / 4, threadID_in_group = lane % 4, E elements
/// per 32-bit register, 4 E columns of k per group of four lanes):
///   A(row, k): lane 4 (row % 8) + (k % 4E) / E, register row / 8 +
///              2 (k / 4E), element k % E;
///   B(k, col): lane 4 col + (k % 4E) / E, register k / 4E, element k % E;
///   C, D:      lane l holds rows groupID + 8 r, columns 2 threadID_in_group
///              + e as register r, element e.
/// Products accumulate in f32 in k order; tf32 inputs keep the top 19 bits
/// of their f32 (the mantissa's low 13 bits cleared).
void LaunchLowering::emitMma(nvgpu::MmaSyncOp mma, OpBuilder &b) {
  int64_t depth = mma.getMmaShapeAsArray()[2];
  VectorType aType = mma.getMatrixA().getType();
  VectorType bType = mma.getMatrixB().getType();
  VectorType cType = mma.getMatrixC().getType();
  Type in = aType.getElementType();
  int64_t elements = aType.getDimSize(1);
  int64_t aRegisters = aType.getDimSize(0), bRegisters = bType.getDimSize(0);
  Value aExchange = newBuffer(in, aRegisters * elements);
  Value bExchange = newBuffer(in, bRegisters * elements);
  forEachThread(b, [&](OpBuilder &tb, Thread &thread) {
    checkFullWarp(tb, thread, mma);
    Value linear = linearId(tb, thread);
    for (auto [fragment, buffer, registers] :
         {std::tuple{mma.getMatrixA(), aExchange, aRegisters},
          std::tuple{mma.getMatrixB(), bExchange, bRegisters}}) {
      Value value = get(fragment, tb, thread);
      Value first = arith::MulIOp::create(tb, loc, linear,
                                          index(tb, registers * elements));
      for (int64_t r = 0; r < registers; ++r)
        for (int64_t e = 0; e < elements; ++e)
          memref::StoreOp::create(
              tb, loc, vector::ExtractOp::create(tb, loc, value, {r, e}),
              buffer,
              ValueRange{arith::AddIOp::create(tb, loc, first,
                                               index(tb, r * elements + e))});
    }
  });
  if (mma.getRes().use_empty())
    return;
  Value out = buffers[mma.getRes()] = newBuffer(cType);
  Type f32 = b.getF32Type();
  forEachThread(b, [&](OpBuilder &tb, Thread &thread) {
    auto c = [&](int64_t v) { return index(tb, v); };
    auto add = [&](Value x, Value y) -> Value {
      return arith::AddIOp::create(tb, loc, x, y);
    };
    auto mul = [&](Value x, int64_t y) -> Value {
      return arith::MulIOp::create(tb, loc, x, c(y));
    };
    auto div = [&](Value x, int64_t y) -> Value {
      return arith::DivUIOp::create(tb, loc, x, c(y));
    };
    auto rem = [&](Value x, int64_t y) -> Value {
      return arith::RemUIOp::create(tb, loc, x, c(y));
    };
    auto widen = [&](OpBuilder &lb, Value v) -> Value {
      if (v.getType() != f32)
        return arith::ExtFOp::create(lb, loc, f32, v);
      // tf32: the sign, the exponent and the mantissa's top 10 bits.
      Type i32 = lb.getI32Type();
      Value bits = arith::BitcastOp::create(lb, loc, i32, v);
      Value kept = arith::AndIOp::create(
          lb, loc, bits,
          arith::ConstantIntOp::create(lb, loc, i32, 0xFFFFE000LL));
      return arith::BitcastOp::create(lb, loc, f32, kept);
    };
    Value linear = linearId(tb, thread);
    // Named values, not structured bindings: the loop body's lambda captures
    // them.
    std::pair<Value, Value> ids = laneOf(tb, thread);
    Value lane = ids.first, base = ids.second;
    Value group = div(lane, 4), inGroup = rem(lane, 4);
    Value accumulators = get(mma.getMatrixC(), tb, thread);
    SmallVector<Value> results;
    for (int64_t r = 0; r < 2; ++r) {
      for (int64_t e = 0; e < 2; ++e) {
        Value col = add(mul(inGroup, 2), c(e));
        Value init = vector::ExtractOp::create(tb, loc, accumulators,
                                               ArrayRef<int64_t>{r, e});
        if (init.getType() != f32)
          init = arith::ExtFOp::create(tb, loc, f32, init);
        auto loop = scf::ForOp::create(
            tb, loc, c(0), c(depth), c(1), ValueRange{init},
            [&](OpBuilder &lb, Location, Value k, ValueRange acc) {
              OpBuilder::InsertionGuard guard(tb);
              tb.setInsertionPoint(lb.getInsertionBlock(),
                                   lb.getInsertionPoint());
              Value lanePart = div(rem(k, 4 * elements), elements);
              Value element = rem(k, elements);
              Value aLane = add(base, add(mul(group, 4), lanePart));
              Value aRegister = add(c(r), mul(div(k, 4 * elements), 2));
              Value aIndex =
                  add(mul(add(mul(aLane, aRegisters), aRegister), elements),
                      element);
              Value bLane = add(base, add(mul(col, 4), lanePart));
              Value bRegister = div(k, 4 * elements);
              Value bIndex =
                  add(mul(add(mul(bLane, bRegisters), bRegister), elements),
                      element);
              Value x =
                  widen(tb, memref::LoadOp::create(tb, loc, aExchange, aIndex));
              Value y =
                  widen(tb, memref::LoadOp::create(tb, loc, bExchange, bIndex));
              Value sum = arith::AddFOp::create(
                  tb, loc, acc[0], arith::MulFOp::create(tb, loc, x, y));
              scf::YieldOp::create(tb, loc, sum);
            });
        Value d = loop.getResult(0);
        if (cType.getElementType() != f32)
          d = arith::TruncFOp::create(tb, loc, cType.getElementType(), d);
        results.push_back(d);
      }
    }
    memref::StoreOp::create(
        tb, loc, vector::FromElementsOp::create(tb, loc, cType, results), out,
        linear);
  });
}

/// ldmatrix: lanes 8 i to 8 i + 7 give the addresses of the 8 rows of tile
/// i (8 consecutive 16-bit elements from each address); lane l receives, as
/// register i, the elements (l / 4, 2 (l % 4) + e) of tile i, or with
/// `transpose` the elements (2 (l % 4) + e, l / 4).
void LaunchLowering::emitLdMatrix(nvgpu::LdMatrixOp load, OpBuilder &b) {
  SmallVector<Value> exchanges;
  for (Value index : load.getIndices())
    exchanges.push_back(newBuffer(index.getType()));
  forEachThread(b, [&](OpBuilder &tb, Thread &thread) {
    checkFullWarp(tb, thread, load);
    for (auto [index, buffer] : llvm::zip_equal(load.getIndices(), exchanges))
      memref::StoreOp::create(tb, loc, get(index, tb, thread), buffer,
                              linearId(tb, thread));
  });
  if (load.getRes().use_empty())
    return;
  VectorType type = load.getRes().getType();
  Value out = buffers[load.getRes()] = newBuffer(type);
  forEachThread(b, [&](OpBuilder &tb, Thread &thread) {
    Value linear = linearId(tb, thread);
    auto [lane, base] = laneOf(tb, thread);
    Value quarter = arith::DivUIOp::create(tb, loc, lane, index(tb, 4));
    Value pair = arith::MulIOp::create(
        tb, loc, arith::RemUIOp::create(tb, loc, lane, index(tb, 4)),
        index(tb, 2));
    Value source = get(load.getSrcMemref(), tb, thread);
    bool checked = shadows.count(source);
    if (checked)
      createStamp(tb, thread);
    SmallVector<Value> elements;
    for (int64_t tile = 0; tile < type.getDimSize(0); ++tile) {
      for (int64_t e = 0; e < type.getDimSize(1); ++e) {
        Value across = arith::AddIOp::create(tb, loc, pair, index(tb, e));
        Value row = load.getTranspose() ? across : quarter;
        Value col = load.getTranspose() ? quarter : across;
        Value from = arith::AddIOp::create(
            tb, loc, base,
            arith::AddIOp::create(tb, loc, index(tb, 8 * tile), row));
        SmallVector<Value> indices;
        for (Value buffer : exchanges)
          indices.push_back(memref::LoadOp::create(tb, loc, buffer, from));
        indices.back() = arith::AddIOp::create(tb, loc, indices.back(), col);
        auto element =
            memref::LoadOp::create(tb, load.getLoc(), source, indices);
        elements.push_back(element);
        if (checked)
          checkAccess(element, thread);
      }
    }
    memref::StoreOp::create(
        tb, loc, vector::FromElementsOp::create(tb, loc, type, elements), out,
        linear);
  });
}

void LaunchLowering::createShadows() {
  Type i64 = builder.getI64Type();
  phaseCounter =
      memref::AllocOp::create(builder, loc, MemRefType::get({1}, i64));
  heapBuffers.push_back(phaseCounter);
  Value zero64 = arith::ConstantIntOp::create(builder, loc, i64, 0);
  memref::StoreOp::create(builder, loc, zero64, phaseCounter, zero);
  for (BlockArgument arg : launch.getWorkgroupAttributions()) {
    int64_t elements = cast<MemRefType>(arg.getType()).getNumElements();
    Shadow shadow;
    for (Value *record : {&shadow.writes, &shadow.reads}) {
      *record = memref::AllocOp::create(builder, loc,
                                        MemRefType::get({elements}, i64));
      heapBuffers.push_back(*record);
      fillZero(builder, *record, index(builder, elements));
    }
    shadows[uniformMap.lookup(arg)] = shadow;
  }
}

/// Emulates the asynchronous copies of the launch body in place, before the
/// body is cut into phases: each nvgpu.device_async_copy becomes the element
/// loads and stores of the copy (zeros past `srcElements`), done at once;
/// with race checks, each stored element also records the copy (its thread
/// and group) in its shadow, nvgpu.device_async_create_group counts the
/// thread's groups and nvgpu.device_async_wait marks all but its
/// `numGroups` most recent complete. An access to an element whose last copy
/// is not complete then stops the program (checkAccess). The copy's data is
/// in place early, but no correct kernel can tell: a thread of another
/// warp reads it only after a barrier that follows the issuer's wait, and
/// the race checks treat the copy as the issuer's write.
/// Stores 0 in the first `size` elements of `buffer` (memref<?xi64> or
/// memref<Nxi64>).
void LaunchLowering::fillZero(OpBuilder &b, Value buffer, Value size) {
  Value zero64 = arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0);
  auto loop = scf::ForOp::create(b, loc, zero, size, one);
  OpBuilder body = OpBuilder::atBlockBegin(loop.getBody());
  memref::StoreOp::create(body, loc, zero64, buffer,
                          ValueRange{loop.getInductionVar()});
}

void LaunchLowering::lowerAsyncCopies() {
  SmallVector<Operation *> asyncOps;
  launch.getBody().walk([&](Operation *op) {
    if (isa<nvgpu::DeviceAsyncCopyOp, nvgpu::DeviceAsyncCreateGroupOp,
            nvgpu::DeviceAsyncWaitOp>(op))
      asyncOps.push_back(op);
  });
  if (asyncOps.empty())
    return;
  Type i64 = builder.getI64Type();
  bool tracked = !shadows.empty();
  if (tracked) {
    auto perThread = MemRefType::get({ShapedType::kDynamic}, i64);
    for (Value *counts : {&asyncCommitted, &asyncCompleted}) {
      *counts = memref::AllocOp::create(builder, loc, perThread,
                                        ValueRange{numThreads});
      heapBuffers.push_back(*counts);
    }
    for (auto &[buffer, shadow] : shadows) {
      int64_t elements = cast<MemRefType>(buffer.getType()).getNumElements();
      shadow.asyncCopies = memref::AllocOp::create(
          builder, loc, MemRefType::get({elements}, i64));
      heapBuffers.push_back(shadow.asyncCopies);
    }
  }
  gpu::KernelDim3 ids = launch.getThreadIds();
  gpu::KernelDim3 size = launch.getBlockSize();
  // Waits first, then groups, then copies: each uses the next's tokens.
  for (Operation *op : llvm::reverse(asyncOps)) {
    OpBuilder b(op);
    Location at = op->getLoc();
    Value linear = tracked ? linearize(b, at, ids, size) : Value();
    auto count = [&](Value counts) {
      return memref::LoadOp::create(b, at, counts, ValueRange{linear});
    };
    if (auto wait = dyn_cast<nvgpu::DeviceAsyncWaitOp>(op)) {
      if (tracked) {
        int64_t recent = wait.getNumGroups().value_or(0);
        Value done = arith::SubIOp::create(
            b, at, count(asyncCommitted),
            arith::ConstantIntOp::create(b, at, i64, recent));
        memref::StoreOp::create(
            b, at, arith::MaxSIOp::create(b, at, done, count(asyncCompleted)),
            asyncCompleted, ValueRange{linear});
      }
      op->erase();
      continue;
    }
    if (isa<nvgpu::DeviceAsyncCreateGroupOp>(op)) {
      if (tracked)
        memref::StoreOp::create(
            b, at,
            arith::AddIOp::create(b, at, count(asyncCommitted),
                                  arith::ConstantIntOp::create(b, at, i64, 1)),
            asyncCommitted, ValueRange{linear});
      op->dropAllUses();
      op->erase();
      continue;
    }
    auto copy = cast<nvgpu::DeviceAsyncCopyOp>(op);
    Value dstBuffer = uniformMap.lookup(copy.getDst());
    auto dstType = cast<MemRefType>(copy.getDst().getType());
    Value elements = arith::ConstantIndexOp::create(
        b, at, copy.getDstElements().getZExtValue());
    Value valid = copy.getSrcElements() ? copy.getSrcElements() : elements;
    Value code;
    if (tracked) {
      // (thread + 1) << 32 | the group the copy will be committed in.
      Value thread = arith::IndexCastOp::create(
          b, at, i64, arith::AddIOp::create(b, at, linear, one));
      code = arith::OrIOp::create(
          b, at,
          arith::ShLIOp::create(b, at, thread,
                                arith::ConstantIntOp::create(b, at, i64, 32)),
          count(asyncCommitted));
    }
    auto loop = scf::ForOp::create(b, at, zero, elements, one);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value i = loop.getInductionVar();
      auto shifted = [&](ValueRange indices) {
        SmallVector<Value> result(indices);
        result.back() = arith::AddIOp::create(b, at, result.back(), i);
        return result;
      };
      Type elementType = dstType.getElementType();
      auto read = scf::IfOp::create(
          b, at, elementType,
          arith::CmpIOp::create(b, at, arith::CmpIPredicate::ult, i, valid),
          /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(read.thenBlock());
        scf::YieldOp::create(
            b, at,
            ValueRange{memref::LoadOp::create(b, at, copy.getSrc(),
                                              shifted(copy.getSrcIndices()))});
        b.setInsertionPointToStart(read.elseBlock());
        scf::YieldOp::create(b, at,
                             ValueRange{arith::ConstantOp::create(
                                 b, at, b.getZeroAttr(elementType))});
      }
      SmallVector<Value> dst = shifted(copy.getDstIndices());
      memref::StoreOp::create(b, at, read.getResult(0), copy.getDst(), dst);
      if (tracked)
        memref::StoreOp::create(
            b, at, code, shadows.lookup(dstBuffer).asyncCopies,
            ValueRange{rowMajorPosition(b, at, dstType.getShape(), dst)});
    }
    op->dropAllUses();
    op->erase();
  }
}

/// Clears the asynchronous copies' records when a block starts.
void LaunchLowering::resetAsyncCopies(OpBuilder &b) {
  if (!asyncCommitted)
    return;
  fillZero(b, asyncCommitted, numThreads);
  fillZero(b, asyncCompleted, numThreads);
  for (auto &[buffer, shadow] : shadows)
    fillZero(b, shadow.asyncCopies,
             index(b, cast<MemRefType>(buffer.getType()).getNumElements()));
}

void LaunchLowering::advancePhase(OpBuilder &b) {
  if (!phaseCounter)
    return;
  Value previous = memref::LoadOp::create(b, loc, phaseCounter, zero);
  memref::StoreOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, previous,
                            arith::ConstantIntOp::create(b, loc, 1, 64)),
      phaseCounter, zero);
}

void LaunchLowering::createStamp(OpBuilder &tb, Thread &thread) {
  if (thread.stamp)
    return;
  Type i64 = tb.getI64Type();
  Value id = arith::IndexCastOp::create(
      tb, loc, i64, arith::AddIOp::create(tb, loc, linearId(tb, thread), one));
  thread.stamp = arith::AddIOp::create(
      tb, loc,
      arith::MulIOp::create(tb, loc, thread.phase,
                            arith::ConstantIntOp::create(tb, loc, i64, 4096)),
      id);
}

void LaunchLowering::checkAccesses(Operation *clone, OpBuilder &tb,
                                   Thread &thread) {
  SmallVector<Operation *> accesses;
  clone->walk([&](Operation *op) {
    if (auto load = dyn_cast<memref::LoadOp>(op);
        load && shadows.count(load.getMemRef()))
      accesses.push_back(op);
    if (auto store = dyn_cast<memref::StoreOp>(op);
        store && shadows.count(store.getMemRef()))
      accesses.push_back(op);
  });
  if (accesses.empty())
    return;
  // The thread's stamp, before the op (it dominates the accesses nested in
  // it).
  {
    OpBuilder::InsertionGuard guard(tb);
    tb.setInsertionPoint(clone);
    createStamp(tb, thread);
  }
  for (Operation *access : accesses)
    checkAccess(access, thread);
}

void LaunchLowering::checkAccess(Operation *access, Thread &thread) {
  OpBuilder b(access);
  Location at = access->getLoc();
  Type i64 = b.getI64Type();
  bool isWrite = isa<memref::StoreOp>(access);
  Value buffer = isWrite ? cast<memref::StoreOp>(access).getMemRef()
                         : cast<memref::LoadOp>(access).getMemRef();
  ValueRange indices = isWrite ? cast<memref::StoreOp>(access).getIndices()
                               : cast<memref::LoadOp>(access).getIndices();
  Shadow shadow = shadows.lookup(buffer);
  Value element = rowMajorPosition(
      b, at, cast<MemRefType>(buffer.getType()).getShape(), indices);
  Value shift = arith::ConstantIntOp::create(b, at, i64, 12);
  // Whether another thread's stamp of this phase is in `record`.
  auto other = [&](Value record) {
    Value stamp = memref::LoadOp::create(b, at, record, element);
    Value samePhase = arith::CmpIOp::create(
        b, at, arith::CmpIPredicate::eq,
        arith::ShRUIOp::create(b, at, stamp, shift), thread.phase);
    Value notMine = arith::CmpIOp::create(b, at, arith::CmpIPredicate::ne,
                                          stamp, thread.stamp);
    return arith::AndIOp::create(b, at, samePhase, notMine);
  };
  Value written = other(shadow.writes);
  Value read = other(shadow.reads);
  Value race = isWrite ? arith::OrIOp::create(b, at, written, read) : written;
  std::string message;
  llvm::raw_string_ostream os(message);
  os << "GPU interpreter: a thread "
     << (isWrite ? "writes workgroup memory that another thread of its "
                   "block read or wrote"
                 : "reads workgroup memory that another thread of its "
                   "block wrote")
     << " since their last barrier (a missing gpu.barrier?), at "
     << describe(at);
  emitCheck(b, at, race, message);
  if (shadow.asyncCopies) {
    // The last cp.async into the element must be complete: its group waited
    // for by the thread that issued it.
    Value copy = memref::LoadOp::create(b, at, shadow.asyncCopies, element);
    Value issuer = arith::ShRUIOp::create(
        b, at, copy, arith::ConstantIntOp::create(b, at, i64, 32));
    Value group = arith::AndIOp::create(
        b, at, copy, arith::ConstantIntOp::create(b, at, i64, 0xffffffff));
    Value any =
        arith::CmpIOp::create(b, at, arith::CmpIPredicate::ne, issuer,
                              arith::ConstantIntOp::create(b, at, i64, 0));
    Value slot = arith::IndexCastOp::create(
        b, at, b.getIndexType(),
        arith::MaxSIOp::create(
            b, at,
            arith::SubIOp::create(b, at, issuer,
                                  arith::ConstantIntOp::create(b, at, i64, 1)),
            arith::ConstantIntOp::create(b, at, i64, 0)));
    Value completed =
        memref::LoadOp::create(b, at, asyncCompleted, ValueRange{slot});
    Value pending = arith::AndIOp::create(
        b, at, any,
        arith::CmpIOp::create(b, at, arith::CmpIPredicate::sge, group,
                              completed));
    std::string pendingMessage;
    llvm::raw_string_ostream pos(pendingMessage);
    pos << "GPU interpreter: a thread " << (isWrite ? "writes" : "reads")
        << " workgroup memory that a cp.async (nvgpu.device_async_copy) is "
           "still writing (a missing nvgpu.device_async_wait, or a barrier "
           "before it?), at "
        << describe(at);
    emitCheck(b, at, pending, pendingMessage);
  }
  if (isWrite) {
    memref::StoreOp::create(b, at, thread.stamp, shadow.writes, element);
  } else {
    Value several = arith::AddIOp::create(
        b, at,
        arith::MulIOp::create(b, at, thread.phase,
                              arith::ConstantIntOp::create(b, at, i64, 4096)),
        arith::ConstantIntOp::create(b, at, i64, 4095));
    memref::StoreOp::create(
        b, at, arith::SelectOp::create(b, at, read, several, thread.stamp),
        shadow.reads, element);
  }
}

LogicalResult LaunchLowering::emitOps(Block &block, OpBuilder &b) {
  for (auto it = block.begin(), end = block.end(); it != end;) {
    Operation &op = *it;
    if (op.hasTrait<OpTrait::IsTerminator>())
      break;
    if (!holdsCollective(&op)) {
      // The run of ops up to the next phase boundary, for each thread.
      auto runEnd = std::next(it);
      while (runEnd != end && !runEnd->hasTrait<OpTrait::IsTerminator>() &&
             runs.lookup(&*runEnd) == runs.lookup(&op))
        ++runEnd;
      forEachThread(b, [&](OpBuilder &tb, Thread &thread) {
        for (Operation &runOp : llvm::make_range(it, runEnd)) {
          if (privateSlots.count(&runOp))
            continue;
          SetVector<Value> used;
          used.insert_range(runOp.getOperands());
          getUsedValuesDefinedAbove(runOp.getRegions(), used);
          for (Value value : used)
            get(value, tb, thread);
          Operation *clone = tb.clone(runOp, thread.map);
          if (!shadows.empty())
            checkAccesses(clone, tb, thread);
          for (auto [result, cloned] :
               llvm::zip_equal(runOp.getResults(), clone->getResults())) {
            if (!crossesRuns(result) || isRematerializable(&runOp))
              continue;
            Value buffer = buffers[result] = newBuffer(result.getType());
            memref::StoreOp::create(tb, loc, cloned, buffer,
                                    linearId(tb, thread));
          }
        }
      });
      it = runEnd;
      continue;
    }
    LogicalResult emitted = success();
    if (auto forOp = dyn_cast<scf::ForOp>(op))
      emitted = emitFor(forOp, b);
    else if (auto ifOp = dyn_cast<scf::IfOp>(op))
      emitted = emitIf(ifOp, b);
    else if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op))
      emitShuffle(shuffle, b);
    else if (auto reduce = dyn_cast<gpu::SubgroupReduceOp>(op))
      emitReduce(reduce, reduce.getValue(), reduce.getOp(), /*perWarp=*/true,
                 b);
    else if (auto reduce = dyn_cast<gpu::AllReduceOp>(op))
      emitReduce(reduce, reduce.getValue(), *reduce.getOp(),
                 /*perWarp=*/false, b);
    else if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op))
      emitMma(mma, b);
    else if (auto load = dyn_cast<nvgpu::LdMatrixOp>(op))
      emitLdMatrix(load, b);
    // A barrier (and a block-wide reduction, which holds barriers) ends the
    // phase of the race checks.
    if (isa<gpu::BarrierOp, gpu::AllReduceOp>(op))
      advancePhase(b);
    if (failed(emitted))
      return failure();
    ++it;
  }
  return success();
}

/// Replaces the gpu dialect's id and dimension ops in the launch body by the
/// body's arguments.
static void replaceIdOps(gpu::LaunchOp launch) {
  gpu::KernelDim3 tid = launch.getThreadIds(), bid = launch.getBlockIds();
  gpu::KernelDim3 bdim = launch.getBlockSize(), gdim = launch.getGridSize();
  auto pick = [](gpu::KernelDim3 dims, gpu::Dimension d) {
    return d == gpu::Dimension::x   ? dims.x
           : d == gpu::Dimension::y ? dims.y
                                    : dims.z;
  };
  SmallVector<Operation *> ops;
  launch.getBody().walk([&](Operation *op) {
    if (isa<gpu::ThreadIdOp, gpu::BlockIdOp, gpu::BlockDimOp, gpu::GridDimOp,
            gpu::LaneIdOp, gpu::SubgroupSizeOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value replacement;
    if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
      replacement = pick(tid, id.getDimension());
    else if (auto id = dyn_cast<gpu::BlockIdOp>(op))
      replacement = pick(bid, id.getDimension());
    else if (auto dim = dyn_cast<gpu::BlockDimOp>(op))
      replacement = pick(bdim, dim.getDimension());
    else if (auto dim = dyn_cast<gpu::GridDimOp>(op))
      replacement = pick(gdim, dim.getDimension());
    else if (isa<gpu::SubgroupSizeOp>(op))
      replacement = arith::ConstantIndexOp::create(b, loc, 32);
    else {
      Value linear = linearize(b, loc, tid, bdim);
      replacement = arith::RemUIOp::create(
          b, loc, linear, arith::ConstantIndexOp::create(b, loc, 32));
    }
    op->getResult(0).replaceAllUsesWith(replacement);
    op->erase();
  }
}

LogicalResult LaunchLowering::lower() {
  if (!launch.getBody().hasOneBlock())
    return launch.emitError() << "the GPU interpreter needs a launch body of "
                                 "one block (structured control flow)";
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
      launch.getDynamicSharedMemorySize() || launch.hasClusterSize())
    return launch.emitError()
           << "the GPU interpreter runs synchronous launches without "
              "dynamic shared memory or clusters";
  WalkResult unknown =
      launch.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (auto reduce = dyn_cast<gpu::AllReduceOp>(op);
            reduce && !reduce.getOp()) {
          op->emitError() << "the GPU interpreter emulates gpu.all_reduce with "
                             "an operation attribute, not with a region";
          return WalkResult::interrupt();
        }
        if (auto reduce = dyn_cast<gpu::SubgroupReduceOp>(op);
            reduce &&
            (reduce.getClusterSize() || reduce.getClusterStride() != 1)) {
          op->emitError() << "the GPU interpreter emulates gpu.subgroup_reduce "
                             "over whole warps, not clusters";
          return WalkResult::interrupt();
        }
        if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op)) {
          if (std::string why = unsupportedMma(mma); !why.empty()) {
            op->emitError() << why;
            return WalkResult::interrupt();
          }
        }
        if (auto load = dyn_cast<nvgpu::LdMatrixOp>(op);
            load && (load.getRes().getType().getDimSize(1) != 2 ||
                     load.getRes().getType().getElementTypeBitWidth() != 16)) {
          op->emitError() << "the GPU interpreter emulates nvgpu.ldmatrix of "
                             "16-bit elements (vector<Nx2>), not "
                          << load.getRes().getType();
          return WalkResult::interrupt();
        }
        StringRef dialect =
            op->getDialect() ? op->getDialect()->getNamespace() : StringRef();
        if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op);
            copy && !llvm::is_contained(launch.getWorkgroupAttributions(),
                                        copy.getDst())) {
          op->emitError() << "the GPU interpreter emulates "
                             "nvgpu.device_async_copy into the launch's "
                             "workgroup attributions, not into views of them";
          return WalkResult::interrupt();
        }
        if ((dialect == "gpu" || dialect == "nvgpu" || dialect == "nvvm") &&
            !isCollective(op) &&
            !isa<gpu::TerminatorOp, gpu::ThreadIdOp, gpu::BlockIdOp,
                 gpu::BlockDimOp, gpu::GridDimOp, gpu::LaneIdOp,
                 gpu::SubgroupSizeOp, nvgpu::DeviceAsyncCopyOp,
                 nvgpu::DeviceAsyncCreateGroupOp, nvgpu::DeviceAsyncWaitOp>(
                op)) {
          op->emitError() << "the GPU interpreter does not emulate '"
                          << op->getName() << "'";
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
  if (unknown.wasInterrupted())
    return failure();
  replaceIdOps(launch);
  zero = arith::ConstantIndexOp::create(builder, loc, 0);
  one = arith::ConstantIndexOp::create(builder, loc, 1);

  gpu::KernelDim3 gridSize = launch.getGridSizeOperandValues();
  gpu::KernelDim3 blockSize = launch.getBlockSizeOperandValues();
  gpu::KernelDim3 gridArgs = launch.getGridSize();
  gpu::KernelDim3 blockArgs = launch.getBlockSize();
  for (auto [arg, value] :
       llvm::zip_equal(SmallVector<Value>{gridArgs.x, gridArgs.y, gridArgs.z,
                                          blockArgs.x, blockArgs.y,
                                          blockArgs.z},
                       SmallVector<Value>{gridSize.x, gridSize.y, gridSize.z,
                                          blockSize.x, blockSize.y,
                                          blockSize.z}))
    uniformMap.map(arg, value);

  bool communicates =
      !launch.getWorkgroupAttributions().empty() || holdsCollective(launch);
  // The private buffers of the threads (static shapes, no operands). Threads
  // that run one after the other share one of each, allocated before the
  // loops; threads that meet get a slot each for those that may live across
  // phases (at the top level of the body or of a loop or branch holding
  // collective ops: the others live within one op of a phase).
  SmallVector<memref::AllocaOp> privates;
  launch.getBody().walk([&](memref::AllocaOp alloca) {
    if (alloca->getNumOperands() == 0)
      privates.push_back(alloca);
  });
  // Private attributions are private buffers.
  {
    OpBuilder b = OpBuilder::atBlockBegin(&launch.getBody().front());
    for (BlockArgument arg : launch.getPrivateAttributions()) {
      auto alloca =
          memref::AllocaOp::create(b, loc, cast<MemRefType>(arg.getType()));
      arg.replaceAllUsesWith(alloca);
      privates.push_back(alloca);
    }
  }
  if (communicates) {
    numThreads = arith::MulIOp::create(
        builder, loc,
        arith::MulIOp::create(builder, loc, blockSize.x, blockSize.y),
        blockSize.z);
    for (memref::AllocaOp alloca : privates) {
      Operation *parent = alloca->getParentOp();
      if (parent != launch && !holdsCollective(parent)) {
        alloca->moveBefore(launch);
        continue;
      }
      MemRefType type = alloca.getType();
      if (!type.getLayout().isIdentity())
        return alloca.emitError() << "the GPU interpreter gives private "
                                     "buffers of identity layout a slot per "
                                     "thread";
      int64_t bytes = type.getNumElements() *
                      llvm::divideCeil(type.getElementTypeBitWidth(), 8);
      bytes = llvm::alignTo(bytes, 64);
      Value all = memref::AllocOp::create(
          builder, loc,
          MemRefType::get({ShapedType::kDynamic}, builder.getI8Type(),
                          MemRefLayoutAttrInterface{}, type.getMemorySpace()),
          ValueRange{arith::MulIOp::create(
              builder, loc, numThreads,
              arith::ConstantIndexOp::create(builder, loc, bytes))},
          builder.getI64IntegerAttr(64));
      heapBuffers.push_back(all);
      privateSlots[alloca] = {all, bytes};
    }
    // One block runs at a time: one buffer holds each workgroup attribution.
    for (BlockArgument arg : launch.getWorkgroupAttributions()) {
      Value buffer =
          memref::AllocOp::create(builder, loc, cast<MemRefType>(arg.getType()),
                                  ValueRange{}, builder.getI64IntegerAttr(64));
      heapBuffers.push_back(buffer);
      uniformMap.map(arg, buffer);
    }
    if (checkRaces && !launch.getWorkgroupAttributions().empty())
      createShadows();
    lowerAsyncCopies();
    if (failed(analyze()))
      return failure();
  } else {
    for (memref::AllocaOp alloca : privates)
      alloca->moveBefore(launch);
  }
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] the launch at " << loc
                          << " becomes loops over its blocks and threads"
                          << (communicates ? ", in phases" : "")
                          << "; private buffers: " << privates.size() << "\n");

  // Blocks z, y, x, then the phases of each block; in each phase threads
  // z, y, x: the innermost loop runs the threads of a warp in order.
  OpBuilder b(launch);
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  for (auto [id, count] :
       SmallVector<std::pair<Value, Value>>{{blockIds.z, gridSize.z},
                                            {blockIds.y, gridSize.y},
                                            {blockIds.x, gridSize.x}}) {
    auto loop = scf::ForOp::create(b, loc, zero, count, one);
    // Buffers the phases ask for are allocated before the loops.
    if (id == blockIds.z)
      builder.setInsertionPoint(loop);
    uniformMap.map(id, loop.getInductionVar());
    b.setInsertionPointToStart(loop.getBody());
  }
  if (communicates) {
    // Each block starts a phase: it does not race with the previous one,
    // which used the same workgroup buffers.
    advancePhase(b);
    resetAsyncCopies(b);
    if (failed(emitOps(launch.getBody().front(), b)))
      return failure();
  } else {
    // One phase: the threads' loops hold the whole body.
    runs.clear();
    for (Operation &op : launch.getBody().front().without_terminator())
      runs[&op] = 0;
    if (failed(emitOps(launch.getBody().front(), b)))
      return failure();
  }
  b.setInsertionPointAfter(launch);
  for (Value buffer : heapBuffers)
    memref::DeallocOp::create(b, loc, buffer);
  launch.erase();
  return success();
}

namespace {
struct SeqNVPTXLaunchToLoopsPass
    : public mlir::seq::impl::SeqNVPTXLaunchToLoopsBase<
          SeqNVPTXLaunchToLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation()->walk([&](gpu::LaunchOp launch) {
      launches.push_back(launch);
    });
    for (gpu::LaunchOp launch : launches)
      if (failed(LaunchLowering(launch, reverseThreads, checkRaces).lower()))
        return signalPassFailure();
    // Workgroup and private memory are the host's memory.
    getOperation()->walk([](Operation *op) {
      for (Value result : op->getResults())
        result.setType(withoutGpuMemorySpace(result.getType()));
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            arg.setType(withoutGpuMemorySpace(arg.getType()));
    });
  }
};
} // namespace
