//===- Contractions.cpp - matching contractions and their neighbours ------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The analyses of seq-cpu-vectorize-contractions (Transforms.h): which
// contractions the vector kernels take and with which kernel, the fill or
// bias copy before a contraction and the elementwise epilogue after it that
// the kernels absorb, and the packing of short reductions for the broadcast
// kernel.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/KernelUtils.h"
#include "lowering/CPU/Transforms.h"

#include "dialect/Seq/Support/Debug.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"

#define DEBUG_TYPE "seq-cpu-vectorize-contractions"

using namespace mlir;
using namespace mlir::seq::cpu;

//===----------------------------------------------------------------------===//
// Matching
//===----------------------------------------------------------------------===//

static bool mapUses(AffineMap map, unsigned dim) {
  return map.isFunctionOfDim(dim);
}

static bool lastResultIs(AffineMap map, unsigned dim) {
  return map.getNumResults() > 0 &&
         cast<AffineDimExpr>(map.getResults().back()).getPosition() == dim;
}

/// Whether `op`, which has a body that is not a multiply-add, is still a
/// product worth a remark: an f32 body with a multiplication (an elementwise
/// producer fused into it) whose inputs all move with the reduction (a row
/// reduction, one input, is not a product).
static bool isFusedProduct(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  return body && isF32Body(body) &&
         llvm::any_of(*body,
                      [](Operation &o) { return isa<arith::MulFOp>(o); }) &&
         llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *in) {
           return op.getMatchingIndexingMap(in).isFunctionOfDim(reductions[0]);
         });
}

FailureOr<ContractionMatch>
mlir::seq::cpu::matchContraction(linalg::LinalgOp op, std::string *reason) {
  auto notMatched = [&](StringRef why) -> FailureOr<ContractionMatch> {
    if (reason)
      *reason = why.str();
    return failure();
  };
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 1) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] not a binary contraction on "
                               "buffers with one reduction: "
                            << op->getName() << " at " << op.getLoc() << "\n");
    return failure();
  }
  if (!isMulAddBody(op)) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] body is not an f32 "
                               "multiply-add: "
                            << op->getName() << " at " << op.getLoc() << "\n");
    if (isFusedProduct(op))
      return notMatched("its body is not a multiply-add (an elementwise op "
                        "was fused into it)");
    return failure();
  }
  ContractionMatch c;
  c.op = op;
  c.a = op.getDpsInputOperand(0)->get();
  c.b = op.getDpsInputOperand(1)->get();
  c.c = op.getDpsInitOperand(0)->get();
  c.mapA = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  c.mapB = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  c.mapC = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  // A right operand in packed panels (either input position).
  unsigned panelN = 0, panelK = 0;
  if (auto width = matchPanelMap(c.mapA, panelN, panelK, c.kPairs)) {
    std::swap(c.a, c.b);
    std::swap(c.mapA, c.mapB);
    c.panel = *width;
  } else if (auto width = matchPanelMap(c.mapB, panelN, panelK, c.kPairs)) {
    c.panel = *width;
  }
  for (AffineMap map : {c.mapA, c.mapB, c.mapC})
    if (!(c.panel && map == c.mapB) &&
        (!map.isProjectedPermutation() || map.getNumResults() == 0))
      return notMatched(
          "an operand is indexed by something other than loop indices");
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned loop = 0; loop < iterators.size(); ++loop)
    if (iterators[loop] == utils::IteratorType::reduction)
      c.k = loop;
  ArrayRef<AffineExpr> outDims = c.mapC.getResults();
  c.n = cast<AffineDimExpr>(outDims.back()).getPosition();
  if (outDims.size() >= 2)
    c.m = cast<AffineDimExpr>(outDims[outDims.size() - 2]).getPosition();
  for (unsigned loop = 0; loop < iterators.size(); ++loop) {
    if (loop == c.k || loop == c.n || (c.m && loop == *c.m))
      continue;
    if (!mapUses(c.mapC, loop))
      return notMatched("a parallel loop does not index the output");
    c.batch.push_back(loop);
  }
  if (c.panel && (panelN != c.n || panelK != c.k))
    return notMatched("the packed operand's panels are not along the "
                      "output's columns and the reduction");
  // B is the input that moves with the output's columns.
  if (!c.panel && mapUses(c.mapA, c.n)) {
    std::swap(c.a, c.b);
    std::swap(c.mapA, c.mapB);
  }
  if (mapUses(c.mapA, c.n) || !mapUses(c.mapB, c.n))
    return notMatched(
        "both or neither input depend on the output's last dimension");
  if (!mapUses(c.mapA, c.k) || !mapUses(c.mapB, c.k))
    return notMatched("an input does not depend on the reduction");
  if (c.m && mapUses(c.mapB, *c.m))
    return notMatched("the right operand depends on the output's rows");
  if (!hasUnitInnerStride(c.c))
    return notMatched("the output is not contiguous along its last dimension");
  if (c.panel) {
    c.kernel = ContractionKernel::Broadcast;
    return c;
  }
  if (lastResultIs(c.mapA, c.k) && lastResultIs(c.mapB, c.k) &&
      hasUnitInnerStride(c.a) && hasUnitInnerStride(c.b)) {
    c.kernel = ContractionKernel::Dot;
    return c;
  }
  if (lastResultIs(c.mapB, c.n) && hasUnitInnerStride(c.b)) {
    c.kernel = ContractionKernel::Broadcast;
    return c;
  }
  return notMatched(
      "no input layout the vector kernels handle (the right operand is "
      "contiguous neither along the reduction with the left one, nor along "
      "the output's columns)");
}

//===----------------------------------------------------------------------===//
// Absorbing the initializer and the epilogue
//===----------------------------------------------------------------------===//

/// Ops that view their operand's whole buffer under another shape.
static bool isReshape(Operation *op) {
  return isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(
      op);
}

/// The buffer `value` is a reshape of (`value` itself when it is not one).
static Value reshapeRoot(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isReshape(def))
      break;
    value = def->getOperand(0);
  }
  return value;
}

/// The op with memory effects nearest to `op` in its block, before or
/// after it: index arithmetic, dims, views and (after it) allocations,
/// shape assertions and the release of buffers other than the one `op`
/// writes in between change nothing for an epilogue of the contraction
/// (which reads what it reads before any of them).
static Operation *effectfulNeighbor(Operation *op, bool after) {
  auto freesOther = [&](Operation *next) {
    auto dealloc = dyn_cast<memref::DeallocOp>(next);
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!dealloc || !linalgOp)
      return false;
    Value freed = reshapeRoot(dealloc.getMemref());
    return llvm::none_of(linalgOp.getDpsInits(), [&](Value init) {
      return reshapeRoot(init) == freed;
    });
  };
  for (Operation *next = after ? op->getNextNode() : op->getPrevNode(); next;
       next = after ? next->getNextNode() : next->getPrevNode())
    if (!isMemoryEffectFree(next) &&
        !(after && (isa<memref::AllocOp, cf::AssertOp>(next) ||
                    freesOther(next))))
      return next;
  return nullptr;
}

/// Whether `op` is an all-parallel linalg.generic whose output, indexed
/// by the identity, has C's rank.
static bool isElementwiseOnC(linalg::GenericOp op, const ContractionMatch &c) {
  return op && op.hasPureBufferSemantics() && op.getNumDpsInits() == 1 &&
         op.getNumParallelLoops() == op.getNumLoops() &&
         op.getNumLoops() == c.mapC.getNumResults() &&
         op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() &&
         llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isProjectedPermutation(); });
}

LogicalResult mlir::seq::cpu::absorbInitializer(RewriterBase &rewriter,
                                                ContractionMatch &c) {
  Operation *prev = effectfulNeighbor(c.op, /*after=*/false);
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(prev)) {
    Value target = fill.getOutputs()[0];
    if (target != c.c && target != reshapeRoot(c.c))
      return failure();
    c.initValue = fill.getInputs()[0];
    rewriter.eraseOp(fill);
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] the fill of the output "
                               "starts the accumulators\n");
    return success();
  }
  auto copy = dyn_cast_or_null<linalg::GenericOp>(prev);
  if (!isElementwiseOnC(copy, c) || copy.getDpsInitOperand(0)->get() != c.c ||
      copy.getNumDpsInputs() != 1)
    return failure();
  // It yields its input, or its input widened from bf16 or f16.
  auto yield = cast<linalg::YieldOp>(copy.getBlock()->getTerminator());
  if (yield.getNumOperands() != 1)
    return failure();
  Value yielded = yield.getOperand(0);
  if (auto ext = yielded.getDefiningOp<arith::ExtFOp>();
      ext && isNarrowFloat(ext.getIn().getType()))
    yielded = ext.getIn();
  if (yielded != copy.getBlock()->getArgument(0))
    return failure();
  OpOperand *input = copy.getDpsInputOperand(0);
  AffineMap map = copy.getMatchingIndexingMap(input);
  if (map.isFunctionOfDim(map.getNumDims() - 1) &&
      !hasUnitInnerStride(input->get()))
    return failure();
  if (map.isFunctionOfDim(map.getNumDims() - 1) &&
      cast<AffineDimExpr>(map.getResults().back()).getPosition() !=
          map.getNumDims() - 1)
    return failure();
  c.initInput = input->get();
  c.initMap = map;
  rewriter.eraseOp(copy);
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] the broadcast copy (bias) "
                             "into the output starts the accumulators, map "
                          << map << "\n");
  return success();
}

/// Ops an epilogue may contain: those of a vectorizable body, and the
/// conversions of bf16 and f16 inputs to f32 and of f32 results to bf16 or
/// f16 (to nearest even: the rounding of a contraction's narrow output).
static bool isEpilogueOp(Operation &op) {
  if (isVectorizableBodyOp(op) || isWideningToF32(op))
    return true;
  if (auto trunc = dyn_cast<arith::TruncFOp>(op))
    return trunc.getIn().getType().isF32() && isNarrowFloat(trunc.getType()) &&
           !trunc.getRoundingmodeAttr();
  return false;
}

/// The buffer `root` and all its reshapes, transitively.
static SmallPtrSet<Value, 4> viewsOf(Value root) {
  SmallPtrSet<Value, 4> views{root};
  SmallVector<Value> worklist{root};
  while (!worklist.empty())
    for (Operation *user : worklist.pop_back_val().getUsers())
      if (isReshape(user) && views.insert(user->getResult(0)).second)
        worklist.push_back(user->getResult(0));
  return views;
}

/// Whether `op` or an op nested in it has one of `views` as an operand.
static bool touchesAny(Operation *op, const SmallPtrSet<Value, 4> &views) {
  bool found = false;
  op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands())
      found |= views.contains(operand);
  });
  return found;
}

/// Whether the contents of `root` are never read after `op`: the next op
/// that touches it (or a reshape of it) frees it or overwrites it without
/// reading it (bufferization reuses dead buffers), or nothing does. The next
/// op is found from the uses of the views, not by walking the ops after
/// `op`: a function holds every layer's contractions, and most buffers are
/// not touched again for a long way (or ever).
static bool isDeadAfter(Value root, Operation *op) {
  SmallPtrSet<Value, 4> views = viewsOf(root);
  Block *block = op->getBlock();
  Operation *next = nullptr;
  for (Value view : views) {
    for (Operation *user : view.getUsers()) {
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor || ancestor == op || !op->isBeforeInBlock(ancestor) ||
          isReshape(ancestor) || isa<memref::DimOp>(ancestor))
        continue;
      if (!next || ancestor->isBeforeInBlock(next))
        next = ancestor;
    }
  }
  if (isa_and_nonnull<memref::DeallocOp>(next))
    return true;
  // A buffer the function was given (a folded layer's) may be read by its
  // caller after it returns.
  if (!next)
    return !isa<BlockArgument>(root) ||
           !isa<FunctionOpInterface>(
               cast<BlockArgument>(root).getOwner()->getParentOp());
  auto linalgOp = dyn_cast<linalg::LinalgOp>(next);
  if (!linalgOp)
    return false;
  for (OpOperand &operand : next->getOpOperands()) {
    if (!views.contains(operand.get()))
      continue;
    if (!linalgOp.isDpsInit(&operand) ||
        linalgOp.payloadUsesValueFromOperand(&operand))
      return false;
  }
  // Every element is written before anything reads it.
  return linalgOp.getNumReductionLoops() == 0;
}

/// Whether an epilogue input read through `map` (over C's dimensions) is
/// constant along each row of C: each result a distinct dimension other
/// than the last, or 0 (a unit dimension), at least one a dimension.
static bool isPerRowMap(AffineMap map) {
  unsigned last = map.getNumDims() - 1;
  llvm::SmallBitVector seen(map.getNumDims());
  for (AffineExpr e : map.getResults()) {
    if (auto constant = dyn_cast<AffineConstantExpr>(e)) {
      if (constant.getValue() != 0)
        return false;
      continue;
    }
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim || dim.getPosition() == last || seen.test(dim.getPosition()))
      return false;
    seen.set(dim.getPosition());
  }
  return seen.any();
}

LogicalResult mlir::seq::cpu::absorbEpilogue(OpBuilder &b, ContractionMatch &c,
                                             std::string *reason) {
  Operation *next = effectfulNeighbor(c.op, /*after=*/true);
  auto op = dyn_cast_or_null<linalg::GenericOp>(next);
  // Only an op that reads C is a consumer the remark explains.
  bool consumer = next && !isa<memref::DeallocOp>(next) &&
                  touchesAny(next, viewsOf(reshapeRoot(c.c)));
  auto notAbsorbed = [&](StringRef why) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] no epilogue: " << why << "\n");
    if (reason && consumer)
      *reason = why.str();
    return failure();
  };
  if (!consumer && !isDeadAfter(reshapeRoot(c.c), c.op)) {
    // C is read, but not by the next op (by a later one, or by the gate
    // that is another contraction's epilogue).
    consumer = true;
    Value root = reshapeRoot(c.c);
    return notAbsorbed(
        isa<BlockArgument>(root)
            ? "the op after it does not read C (a later one or the "
              "function's caller does)"
            : "the op after it does not read C (a later one does)");
  }
  if (!op || !op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
  {
    LogicalResult result =
        notAbsorbed("the next op is not an elementwise generic");
    if (reason && consumer)
      *reason = (Twine("the op after it (") + next->getName().getStringRef() +
                 (op && op.getNumParallelLoops() != op.getNumLoops()
                      ? ", a reduction"
                      : "") +
                 ") is not elementwise")
                    .str();
    return result;
  }
  Block *body = op.getBlock();
  if (!llvm::all_of(body->getArgumentTypes(), isKernelElementType) ||
      !body->getArguments().back().use_empty() ||
      !llvm::all_of(body->without_terminator(), isEpilogueOp))
    return notAbsorbed("its body reads its output or does not vectorize");
  // The view of C the epilogue reads: C, or an expand_shape of it.
  unsigned rankC = c.mapC.getNumResults(), loops = op.getNumLoops();
  Value view;
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value v = input->get();
    auto expand = v.getDefiningOp<memref::ExpandShapeOp>();
    if (v == c.c || (expand && expand.getSrc() == c.c)) {
      if (view || !op.getMatchingIndexingMap(input).isIdentity())
        return notAbsorbed("it reads C twice or not at the same element");
      view = v;
    }
  }
  if (!view)
    return notAbsorbed("it does not read C");
  SmallVector<ReassociationIndices> reassociation;
  if (view != c.c) {
    reassociation =
        view.getDefiningOp<memref::ExpandShapeOp>().getReassociationIndices();
    // C's columns are split: not one tile row per row.
    if (reassociation.back().size() != 1)
      return notAbsorbed("it reads C's columns split");
  } else if (loops != rankC) {
    return notAbsorbed("its rank is not C's");
  }
  // Collapsing an operand to C's shape needs the identity layout.
  auto collapsible = [&](Value v) {
    auto type = cast<MemRefType>(v.getType());
    return reassociation.empty() || type.getLayout().isIdentity();
  };
  Value out = op.getDpsInitOperand(0)->get();
  if (!hasUnitInnerStride(out) || !collapsible(out))
    return notAbsorbed("its output is not contiguous");
  // The kernel writes the output while other tiles still read A and B:
  // an output in their buffer (bufferization reuses dead buffers) would
  // overwrite them.
  Value outRoot = reshapeRoot(out);
  if (outRoot == reshapeRoot(c.a) || outRoot == reshapeRoot(c.b))
    return notAbsorbed("its output is the buffer of an input");
  unsigned last = loops - 1;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (input->get() == view ||
        body->getArgument(input->getOperandNumber()).use_empty())
      continue;
    AffineMap map = op.getMatchingIndexingMap(input);
    // An input aliasing C would be read after the kernel wrote C.
    if (reshapeRoot(input->get()) == reshapeRoot(c.c))
      return notAbsorbed("another input aliases C");
    if (map.isIdentity() && hasUnitInnerStride(input->get()) &&
        collapsible(input->get()))
      continue;
    // Constant along the rows: indexed by the last loop or by nothing.
    if (map.getNumResults() == 0 ||
        (map.getNumResults() == 1 && map.isFunctionOfDim(last) &&
         hasUnitInnerStride(input->get())))
      continue;
    // Constant along each row (a scale or a normalizer per row): indexed by
    // loops before the last, read once per row of a tile and broadcast.
    // The loops are C's dimensions only when C is read unreshaped.
    if (reassociation.empty() && isPerRowMap(map))
      continue;
    return notAbsorbed("another input is neither contiguous along C's rows "
                       "nor constant along them or along its columns");
  }
  // An epilogue that writes its result over C leaves C holding what the
  // kernel then stores there; otherwise C's own contents must be dead.
  if (outRoot != reshapeRoot(c.c) && !isDeadAfter(reshapeRoot(c.c), op))
    return notAbsorbed("C is read after it");

  // Matched: the operands in C's coordinates, built where the kernel goes.
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  auto inC = [&](Value v) -> Value {
    if (reassociation.empty())
      return v;
    return memref::CollapseShapeOp::create(b, op.getLoc(), v, reassociation);
  };
  MLIRContext *ctx = op.getContext();
  for (OpOperand *input : op.getDpsInputOperands()) {
    BlockArgument arg = body->getArgument(input->getOperandNumber());
    if (arg.use_empty())
      continue;
    if (input->get() == view) {
      c.epilogueInputs.push_back({arg, Value(), AffineMap()});
      continue;
    }
    AffineMap map = op.getMatchingIndexingMap(input);
    if (map.isIdentity())
      c.epilogueInputs.push_back(
          {arg, inC(input->get()),
           AffineMap::getMultiDimIdentityMap(rankC, ctx)});
    else if (isPerRowMap(map))
      c.epilogueInputs.push_back({arg, input->get(), map});
    else
      c.epilogueInputs.push_back(
          {arg, input->get(),
           map.getNumResults() == 0
               ? AffineMap::get(rankC, 0, ctx)
               : AffineMap::get(rankC, 0, getAffineDimExpr(rankC - 1, ctx))});
  }
  c.epilogueOut = inC(out);
  c.reassociation = reassociation;
  c.epilogue = op;
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] epilogue fused: "
                          << op->getName() << " at " << op.getLoc() << " with "
                          << c.epilogueInputs.size() << " inputs"
                          << (reassociation.empty() ? "" : ", on a reshape")
                          << "\n");
  return success();
}

//===----------------------------------------------------------------------===//
// Packing short reductions
//===----------------------------------------------------------------------===//

/// Reductions up to this long are packed for the broadcast kernel.
static constexpr int64_t kMaxPackedReduction = 256;
/// B's columns, when static, at least this many to be packed.
static constexpr int64_t kMinPackedColumns = 8;

bool mlir::seq::cpu::isPackableShortReduction(const ContractionMatch &c) {
  if (c.kernel != ContractionKernel::Dot || !c.m)
    return false;
  auto bType = cast<MemRefType>(c.b.getType());
  int64_t rank = bType.getRank();
  ArrayRef<AffineExpr> results = c.mapB.getResults();
  // A few static columns (a normalizer, one per row) would fill a few
  // lanes of each panel's vectors, where the dot kernel fills them all.
  return rank >= 2 && !bType.isDynamicDim(rank - 1) &&
         bType.getDimSize(rank - 1) <= kMaxPackedReduction &&
         (bType.isDynamicDim(rank - 2) ||
          bType.getDimSize(rank - 2) >= kMinPackedColumns) &&
         cast<AffineDimExpr>(results[rank - 2]).getPosition() == c.n;
}

Value mlir::seq::cpu::allocatePackedShortReduction(OpBuilder &b,
                                                   const ContractionMatch &c,
                                                   int64_t width, bool kPairs) {
  auto bType = cast<MemRefType>(c.b.getType());
  int64_t rank = bType.getRank();
  Location loc = c.op->getLoc();
  int64_t k = bType.getDimSize(rank - 1);
  // Sizes: the batch dimensions of B, ceil(n / w), k, w; in k pairs,
  // ceil(n / w), ceil(k / 2), w, 2.
  SmallVector<int64_t> shape(bType.getShape().drop_back(2));
  SmallVector<Value> dynamic;
  for (int64_t i = 0; i < rank - 2; ++i)
    if (ShapedType::isDynamic(shape[i]))
      dynamic.push_back(memref::DimOp::create(b, loc, c.b, i));
  Value n = memref::DimOp::create(b, loc, c.b, rank - 2);
  dynamic.push_back(arith::CeilDivUIOp::create(
      b, loc, n, arith::ConstantIndexOp::create(b, loc, width)));
  if (kPairs)
    shape.append({ShapedType::kDynamic, (k + 1) / 2, width, 2});
  else
    shape.append({ShapedType::kDynamic, k, width});
  auto packedType = MemRefType::get(shape, bType.getElementType());
  return memref::AllocOp::create(b, loc, packedType, dynamic);
}

Value mlir::seq::cpu::packShortReduction(OpBuilder &b, ContractionMatch &c,
                                         int64_t width, Value packed,
                                         bool kPairs) {
  auto bType = cast<MemRefType>(c.b.getType());
  int64_t rank = bType.getRank();
  ArrayRef<AffineExpr> results = c.mapB.getResults();
  Location loc = c.op.getLoc();
  int64_t k = bType.getDimSize(rank - 1);
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  if (!packed)
    packed = allocatePackedShortReduction(b, c, width, kPairs);
  auto packedType = cast<MemRefType>(packed.getType());
  // The loop bounds: the batch dimensions of B, ceil(n / w).
  SmallVector<Value> bounds;
  for (int64_t i = 0; i < rank - 2; ++i)
    bounds.push_back(memref::DimOp::create(b, loc, c.b, i));
  Value n = memref::DimOp::create(b, loc, c.b, rank - 2);
  Value panels = arith::CeilDivUIOp::create(b, loc, n, idx(width));
  bounds.push_back(panels);
  // P[..., p, kk, j] = B[..., p * w + j, kk], or 0 past n; in k pairs
  // P[..., p, kk, j, r] = B[..., p * w + j, 2 kk + r], or 0 past n or k.
  // One parallel iteration per (batch..., panel).
  Value c0 = idx(0), c1 = idx(1), cWidth = idx(width);
  Value cK = idx(kPairs ? (k + 1) / 2 : k);
  // Made here: `b` builds inside the parallel loop while its body is made.
  Value c2 = idx(2), kEnd = idx(k), kLast = idx(k - 1);
  Value last = arith::SubIOp::create(b, loc, n, c1);
  SmallVector<Value> zeros(bounds.size(), c0), ones(bounds.size(), c1);
  scf::ParallelOp::create(
      b, loc, zeros, bounds, ones,
      [&](OpBuilder &nb, Location nloc, ValueRange ivs) {
        Value p = ivs.back();
        Value zero = arith::ConstantOp::create(
            nb, nloc, nb.getZeroAttr(bType.getElementType()));
        Value base = arith::MulIOp::create(nb, nloc, p, cWidth);
        // P[..., p, kk, j] for kk < k, j < w: a whole panel as a plain
        // transpose (LLVM vectorizes its inner loop over j), the last
        // partial one with the padding test.
        auto panel = [&](OpBuilder &pb, bool padded) {
          auto kLoop = scf::ForOp::create(pb, nloc, c0, cK, c1);
          OpBuilder kb = OpBuilder::atBlockBegin(kLoop.getBody());
          auto jLoop = scf::ForOp::create(kb, nloc, c0, cWidth, c1);
          OpBuilder jb = OpBuilder::atBlockBegin(jLoop.getBody());
          Value kk = kLoop.getInductionVar(), j = jLoop.getInductionVar();
          Value column = arith::AddIOp::create(jb, nloc, base, j);
          Value row =
              padded
                  ? arith::MinUIOp::create(jb, nloc, column, last).getResult()
                  : column;
          Value inside;
          if (padded)
            inside = arith::CmpIOp::create(jb, nloc, arith::CmpIPredicate::ult,
                                           column, n);
          // One element (r: its place in the pair) of B's row `row`.
          auto copy = [&](Value step, std::optional<int64_t> r) {
            SmallVector<Value> from(ivs.drop_back()), to(ivs.drop_back());
            Value at = step;
            Value within = inside;
            if (r && k % 2 != 0 && *r == 1) {
              // The pair past an odd reduction's end holds a zero.
              Value inK = arith::CmpIOp::create(
                  jb, nloc, arith::CmpIPredicate::ult, step, kEnd);
              within = within ? arith::AndIOp::create(jb, nloc, within, inK)
                                    .getResult()
                              : inK;
              at = arith::MinUIOp::create(jb, nloc, step, kLast);
            }
            from.append({row, at});
            to.append({p, kk, j});
            if (r)
              to.push_back(*r ? c1 : c0);
            Value value = memref::LoadOp::create(jb, nloc, c.b, from);
            if (within)
              value = arith::SelectOp::create(jb, nloc, within, value, zero);
            memref::StoreOp::create(jb, nloc, value, packed, to);
          };
          if (!kPairs) {
            copy(kk, std::nullopt);
            return;
          }
          Value first = arith::MulIOp::create(jb, nloc, kk, c2);
          copy(first, 0);
          copy(arith::AddIOp::create(jb, nloc, first, c1), 1);
        };
        Value whole = arith::CmpIOp::create(
            nb, nloc, arith::CmpIPredicate::ule,
            arith::AddIOp::create(nb, nloc, base, cWidth), n);
        auto branch = scf::IfOp::create(nb, nloc, whole, /*withElse=*/true);
        OpBuilder thenBuilder = branch.getThenBodyBuilder();
        panel(thenBuilder, /*padded=*/false);
        OpBuilder elseBuilder = branch.getElseBodyBuilder();
        panel(elseBuilder, /*padded=*/true);
      });
  // (batch..., n floordiv w, k, n mod w) in the contraction's loops.
  SmallVector<AffineExpr> packedResults(results.drop_back(2));
  AffineExpr column = results[rank - 2];
  if (kPairs)
    packedResults.append({column.floorDiv(width),
                          results[rank - 1].floorDiv(2), column % width,
                          results[rank - 1] % 2});
  else
    packedResults.append(
        {column.floorDiv(width), results[rank - 1], column % width});
  c.b = packed;
  c.mapB =
      AffineMap::get(c.mapB.getNumDims(), 0, packedResults, b.getContext());
  c.panel = width;
  c.kPairs = kPairs;
  c.kernel = ContractionKernel::Broadcast;
  c.dotPairs = false;
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] right operand packed into "
                          << packedType << ", reduction of " << k
                          << (kPairs ? " in k pairs" : "")
                          << ", for the broadcast kernel\n");
  return packed;
}

//===----------------------------------------------------------------------===//
// Widening a narrow left operand
//===----------------------------------------------------------------------===//

bool mlir::seq::cpu::isWidenableLeftOperand(const ContractionMatch &c,
                                            int64_t columnBlock) {
  if (c.kernel != ContractionKernel::Broadcast || c.kPairs || c.dotPairs ||
      !isNarrowFloat(cast<MemRefType>(c.a.getType()).getElementType()) ||
      !hasUnitInnerStride(c.a))
    return false;
  // Each element of A is widened once per block of columns in the kernel:
  // once per call instead pays from two blocks on.
  int64_t n = linalg::LinalgOp(c.op).getStaticLoopRanges()[c.n];
  return !ShapedType::isDynamic(n) && n >= 2 * columnBlock;
}

Value mlir::seq::cpu::widenLeftOperand(OpBuilder &b, ContractionMatch &c) {
  auto aType = cast<MemRefType>(c.a.getType());
  int64_t rank = aType.getRank();
  Location loc = c.op->getLoc();
  SmallVector<Value> dynamic;
  for (int64_t i = 0; i < rank; ++i)
    if (aType.isDynamicDim(i))
      dynamic.push_back(memref::DimOp::create(b, loc, c.a, i));
  auto wideType = MemRefType::get(aType.getShape(), b.getF32Type());
  Value wide = memref::AllocOp::create(b, loc, wideType, dynamic);
  // W = extf(A), elementwise: seq-cpu-vectorize-rows, which runs next,
  // reads a row of A per parallel iteration as narrow vectors and widens
  // them in registers.
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  linalg::GenericOp::create(
      b, loc, ValueRange{c.a}, ValueRange{wide}, {identity, identity},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(
            nb, nloc,
            arith::ExtFOp::create(nb, nloc, nb.getF32Type(), args[0])
                .getResult());
      });
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] left operand " << aType
                          << " widened into " << wideType << " once\n");
  c.a = wide;
  c.widenedA = aType.getElementType();
  return wide;
}
