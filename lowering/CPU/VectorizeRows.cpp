//===- VectorizeRows.cpp - elementwise and row-reduction vector loops -----===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Rewrites f32 linalg.generic ops on buffers whose innermost loop runs along
// contiguous memory into loops over vectors of that loop:
//
//  - elementwise ops (activations, residual adds, softmax's normalization,
//    layer norm's scale and shift): the body evaluated on vectors, stored
//    with a masked vector at the end of each row;
//  - row reductions (softmax's row max and sum, layer norm's mean and
//    variance, RMSNorm's sum of squares): the body evaluated on vectors and
//    combined into a vector of partial results, reduced once per row;
//  - copies and transposes that keep the innermost dim in place (the heads'
//    transposes, copies into strided slices), generalized into elementwise
//    ops whose body yields its input.
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/KernelUtils.h"
#include "lowering/CPU/Passes.h"

#include "dialect/Seq/Support/Debug.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#define DEBUG_TYPE "seq-cpu-vectorize-rows"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQCPUVECTORIZEROWS
#include "lowering/CPU/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

namespace {

/// How partial results combine, and the value a masked lane contributes.
struct Combiner {
  vector::CombiningKind kind;
  float neutral;
  /// The combining op's fast-math flags, kept on its vector forms and the
  /// final reduction: `nnan nsz` on a maximumf (attention's row maximum,
  /// lowering/SeqToLinalg/FusedAttention.cpp) lets it be one vmaxps instead
  /// of a compare and blends for NaN and signed zeros at every step.
  arith::FastMathFlags flags = arith::FastMathFlags::none;
};

/// An op of one of the two kinds, vectorized along `loop`.
struct Row {
  linalg::GenericOp op;
  /// The vectorized loop: the reduction, or the output's innermost loop.
  unsigned loop;
  /// Reductions `out = combine(f(ins...), out)` only.
  bool reduction = false;
  Operation *combine = nullptr; // the op that folds f(...) into out
  Value partial;                // f(...), the combined value in the body
  Combiner combiner;
  /// The reduction's output and, for a reduction that also stores a value
  /// per element of the row (softmax's exps beside their sum: one pass
  /// over the row instead of two), that output and the value it gets.
  unsigned reductionInit = 0;
  OpOperand *perElementInit = nullptr;
  Value perElement;
};

/// Whether `memref`, indexed by `map`, runs contiguously along `loop`.
static bool isContiguousAlong(Value memref, AffineMap map, unsigned loop) {
  return map.getNumResults() > 0 &&
         cast<AffineDimExpr>(map.getResults().back()).getPosition() == loop &&
         seq::cpu::hasUnitInnerStride(memref);
}

/// Inputs that move with `loop` must be contiguous along it; the others are
/// the same for the whole row and are broadcast.
static bool inputsContiguousAlong(linalg::GenericOp op, unsigned loop) {
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (map.isFunctionOfDim(loop) &&
        !isContiguousAlong(input->get(), map, loop))
      return false;
  }
  return true;
}

/// Ops a vectorized row body may contain: those of
/// seq::cpu::isVectorizableBodyOp, and the widening of a narrow input.
static bool isRowBodyOp(Operation &op) {
  return seq::cpu::isVectorizableBodyOp(op) || seq::cpu::isWideningToF32(op);
}

/// Whether every argument of `op`'s body is f32, but bf16 or f16 inputs
/// that the body only widens to f32 (read as narrow vectors, widened in
/// registers).
static bool hasF32OrWidenedArguments(linalg::GenericOp op) {
  for (BlockArgument arg : op.getBlock()->getArguments()) {
    if (arg.getType().isF32())
      continue;
    if (arg.getArgNumber() >= op.getNumDpsInputs() ||
        !seq::cpu::isNarrowFloat(arg.getType()) ||
        !llvm::all_of(arg.getUsers(), [](Operation *user) {
          return seq::cpu::isWideningToF32(*user);
        }))
      return false;
  }
  return true;
}

static FailureOr<Row> matchRow(linalg::GenericOp op) {
  auto notMatched = [&](StringRef why) {
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] not vectorized: " << why
                            << ": " << op.getLoc() << "\n");
    return failure();
  };
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() == 0 ||
      op.getNumDpsInits() > 2 || op.getNumReductionLoops() > 1 ||
      op.getNumLoops() == 0)
    return notMatched("not on buffers with one output (two for a "
                      "reduction) and at most one reduction loop");
  if (op.getNumDpsInits() == 2 && op.getNumReductionLoops() == 0)
    return notMatched("elementwise with two outputs");
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation())
      return notMatched("an operand is indexed by something other than loop "
                        "indices");
  Block *body = op.getBlock();
  if (!hasF32OrWidenedArguments(op))
    return notMatched("not an f32 body (or one that widens bf16 or f16 "
                      "inputs)");
  Row r;
  r.op = op;
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap initMap = op.getMatchingIndexingMap(init);
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  Value out = body->getArgument(body->getNumArguments() - 1);

  if (op.getNumReductionLoops() == 0) {
    // Elementwise: along the output's innermost loop, which every operand
    // must either follow contiguously or not depend on.
    if (initMap.getNumResults() == 0 ||
        initMap.getNumResults() != op.getNumLoops())
      return notMatched("elementwise, but the output is not indexed by "
                        "every loop");
    r.loop = cast<AffineDimExpr>(initMap.getResults().back()).getPosition();
    if (!isContiguousAlong(init->get(), initMap, r.loop) ||
        !inputsContiguousAlong(op, r.loop))
      return notMatched("elementwise, but an operand is not contiguous "
                        "along the output's last loop");
    for (Operation &inner : body->without_terminator())
      if (!isRowBodyOp(inner))
        return notMatched("elementwise, but the body has an op without a "
                          "vector form");
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] elementwise along loop "
                            << r.loop << ": " << op.getLoc() << "\n");
    return r;
  }

  r.reduction = true;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned l = 0; l < iterators.size(); ++l)
    if (iterators[l] == utils::IteratorType::reduction)
      r.loop = l;
  if (op.getNumDpsInits() == 2) {
    // One output reduced, the other stored per element of the row: indexed
    // by every loop, contiguous along the reduction's, and not read.
    for (unsigned i = 0; i < 2; ++i) {
      OpOperand *candidate = op.getDpsInitOperand(i);
      AffineMap m = op.getMatchingIndexingMap(candidate);
      if (m.isFunctionOfDim(r.loop)) {
        r.perElementInit = candidate;
        r.reductionInit = 1 - i;
      }
    }
    if (!r.perElementInit)
      return notMatched("a reduction with two outputs, neither stored per "
                        "element");
    AffineMap m = op.getMatchingIndexingMap(r.perElementInit);
    if (m.getNumResults() != op.getNumLoops() ||
        !isContiguousAlong(r.perElementInit->get(), m, r.loop) ||
        !op.getMatchingBlockArgument(r.perElementInit).use_empty())
      return notMatched("a reduction whose per-element output is not "
                        "indexed by every loop, contiguous along the "
                        "reduction and write-only");
    r.perElement = yield.getOperand(r.perElementInit->getOperandNumber() -
                                    op.getNumDpsInputs());
    init = op.getDpsInitOperand(r.reductionInit);
    initMap = op.getMatchingIndexingMap(init);
    out = op.getMatchingBlockArgument(init);
  }
  Value reduced = yield.getOperand(r.reductionInit);
  if (initMap.isFunctionOfDim(r.loop) || op.getNumDpsInputs() == 0 ||
      !inputsContiguousAlong(op, r.loop))
    return notMatched("a reduction, but the output moves with it or an "
                      "input is not contiguous along it");
  if (llvm::none_of(op.getDpsInputOperands(), [&](OpOperand *input) {
        return op.getMatchingIndexingMap(input).isFunctionOfDim(r.loop);
      }))
    return notMatched("a reduction, but no input moves with it");
  Operation *combine = reduced.getDefiningOp();
  if (!combine || combine->getNumOperands() != 2 || !out.hasOneUse() ||
      *out.getUsers().begin() != combine)
    return notMatched("a reduction, but not out = combine(f(inputs), out)");
  r.combine = combine;
  r.partial = combine->getOperand(0) == out ? combine->getOperand(1)
                                           : combine->getOperand(0);
  if (r.partial == out)
    return notMatched("a reduction that combines the output with itself");
  const float inf = std::numeric_limits<float>::infinity();
  arith::FastMathFlags flags = arith::FastMathFlags::none;
  if (auto fm = dyn_cast<arith::ArithFastMathInterface>(combine))
    flags = fm.getFastMathFlagsAttr().getValue();
  if (isa<arith::AddFOp>(combine))
    r.combiner = {vector::CombiningKind::ADD, 0.0f, flags};
  else if (isa<arith::MaximumFOp>(combine))
    r.combiner = {vector::CombiningKind::MAXIMUMF, -inf, flags};
  else if (isa<arith::MinimumFOp>(combine))
    r.combiner = {vector::CombiningKind::MINIMUMF, inf, flags};
  else
    return notMatched("a reduction whose combiner is not addf, maximumf or "
                      "minimumf");
  for (Operation &inner : body->without_terminator())
    if (&inner != combine && !isRowBodyOp(inner))
      return notMatched("a reduction whose body has an op without a vector "
                        "form");
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] reduction along loop " << r.loop
                          << " with " << combine->getName() << ": "
                          << op.getLoc() << "\n");
  return r;
}

class RowEmitter {
public:
  RowEmitter(Row r, int64_t lanes, OpBuilder &b)
      : r(r), lanes(lanes), b(b), loc(r.op.getLoc()) {}

  void emit() {
    linalg::GenericOp op = r.op;
    SmallVector<Range> ranges =
        cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc);
    SmallVector<Value> extent;
    for (Range &range : ranges)
      extent.push_back(getValueOrCreateConstantIndexOp(b, loc, range.size));
    Value zero = idx(0), one = idx(1);
    SmallVector<Value> lbs, ubs, steps;
    SmallVector<unsigned> outer;
    for (unsigned l = 0; l < extent.size(); ++l) {
      if (l == r.loop)
        continue;
      outer.push_back(l);
      lbs.push_back(zero);
      ubs.push_back(extent[l]);
      steps.push_back(one);
    }
    iv.assign(extent.size(), Value());
    auto rowBody = [&]() {
      loadRowInvariants();
      if (r.reduction)
        emitReductionRow(extent[r.loop]);
      else
        emitElementwiseRow(extent[r.loop]);
    };
    if (outer.empty()) {
      rowBody();
      return;
    }
    scf::ParallelOp::create(
        b, loc, lbs, ubs, steps,
        [&](OpBuilder &nested, Location, ValueRange ivs) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          for (auto [l, v] : llvm::zip(outer, ivs))
            iv[l] = v;
          rowBody();
        });
  }

private:
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  SmallVector<Value> indices(AffineMap map) {
    return seq::cpu::operandIndices(map, iv);
  }

  /// The operands of the body read; for an elementwise body that reads the
  /// output's old value, the output too.
  SmallVector<OpOperand *> bodyOperands() {
    SmallVector<OpOperand *> operands = r.op.getDpsInputOperands();
    Block *body = r.op.getBlock();
    Value outArg = body->getArgument(body->getNumArguments() - 1);
    if (!r.reduction && !outArg.use_empty())
      operands.push_back(r.op.getDpsInitOperand(0));
    return operands;
  }

  /// Reads the operands that do not vary along the row (a row's maximum or
  /// sum beside its elements) once, before the row's loops, broadcast to a
  /// vector. Read in the loop, each step would load it again: LLVM cannot
  /// hoist the load above the stores of the output, which it cannot tell
  /// apart from the operand, nor, then, the body's ops on it alone
  /// (softmax's shift of a row of only -inf), which it hoists once the
  /// load is outside.
  void loadRowInvariants() {
    rowInvariants.clear();
    for (OpOperand *operand : bodyOperands()) {
      AffineMap m = r.op.getMatchingIndexingMap(operand);
      if (m.isFunctionOfDim(r.loop))
        continue;
      Type element = getElementTypeOrSelf(operand->get().getType());
      Value s = memref::LoadOp::create(b, loc, operand->get(), indices(m));
      rowInvariants[operand] = vector::BroadcastOp::create(
          b, loc, VectorType::get({lanes}, element), s);
    }
  }

  /// The body on one vector of the row at iv[loop]: f(ins...) for a
  /// reduction (masked: lanes off give the combiner's neutral value), the
  /// yielded value for an elementwise op (masked lanes are not stored).
  Value evaluate(Value mask) {
    linalg::GenericOp op = r.op;
    Block *body = op.getBlock();
    VectorType f32Vec = VectorType::get({lanes}, b.getF32Type());
    Value neutral = arith::ConstantOp::create(
        b, loc, f32Vec,
        DenseElementsAttr::get(f32Vec,
                               r.reduction ? r.combiner.neutral : 0.0f));
    IRMapping map;
    for (OpOperand *input : bodyOperands()) {
      AffineMap m = op.getMatchingIndexingMap(input);
      // A bf16 or f16 input is read as such; the body widens it.
      Type element = getElementTypeOrSelf(input->get().getType());
      VectorType vecType = VectorType::get({lanes}, element);
      Value v;
      if (Value invariant = rowInvariants.lookup(input)) {
        v = invariant;
      } else if (mask) {
        Value passThru = element.isF32()
                             ? neutral
                             : arith::ConstantOp::create(b, loc, vecType,
                                                         b.getZeroAttr(vecType))
                                   .getResult();
        v = vector::MaskedLoadOp::create(b, loc, vecType, input->get(),
                                         indices(m), mask, passThru);
      } else {
        v = vector::LoadOp::create(b, loc, vecType, input->get(), indices(m));
      }
      map.map(body->getArgument(input->getOperandNumber()), v);
    }
    seq::cpu::cloneBodyOnVectors(b, loc, *body, lanes, map, r.combine);
    if (!r.reduction)
      return vectorOf(
          cast<linalg::YieldOp>(body->getTerminator()).getOperand(0), map);
    if (r.perElementInit)
      storeVector(vectorOf(r.perElement, map), r.perElementInit, mask);
    Value partial = map.lookupOrDefault(r.partial);
    if (mask)
      partial = arith::SelectOp::create(b, loc, mask, partial, neutral);
    return partial;
  }

  /// The vector of the body's value `v` once the body is cloned with `map`:
  /// a value from outside the body, broadcast.
  Value vectorOf(Value v, IRMapping &map) {
    if (v.getParentBlock() != r.op.getBlock() && !map.contains(v))
      return vector::BroadcastOp::create(
          b, loc, VectorType::get({lanes}, v.getType()), v);
    return map.lookupOrDefault(v);
  }

  /// Stores `value` into `init` at the current loops, only the lanes of
  /// `mask` when it is set.
  void storeVector(Value value, OpOperand *init, Value mask) {
    Value memref = init->get();
    SmallVector<Value> at = indices(r.op.getMatchingIndexingMap(init));
    if (mask)
      vector::MaskedStoreOp::create(b, loc, memref, at, mask, value);
    else
      vector::StoreOp::create(b, loc, value, memref, at);
  }

  Value combine(Value x, Value y) {
    switch (r.combiner.kind) {
    case vector::CombiningKind::ADD:
      return arith::AddFOp::create(b, loc, x, y, r.combiner.flags);
    case vector::CombiningKind::MAXIMUMF:
      return arith::MaximumFOp::create(b, loc, x, y, r.combiner.flags);
    default:
      return arith::MinimumFOp::create(b, loc, x, y, r.combiner.flags);
    }
  }

  /// One row of an elementwise op: full vectors, then one masked vector.
  void emitElementwiseRow(Value size) {
    OpOperand *init = r.op.getDpsInitOperand(0);
    Value count = arith::DivUIOp::create(b, loc, size, idx(lanes));
    Value full = arith::MulIOp::create(b, loc, count, idx(lanes));
    auto forOp = scf::ForOp::create(b, loc, idx(0), full, idx(lanes));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(forOp.getBody()->getTerminator());
      iv[r.loop] = forOp.getInductionVar();
      storeVector(evaluate(Value()), init, Value());
    }
    iv[r.loop] = full;
    Value mask = vector::CreateMaskOp::create(
        b, loc, VectorType::get({lanes}, b.getI1Type()),
        ValueRange{arith::SubIOp::create(b, loc, size, full)});
    storeVector(evaluate(mask), init, mask);
  }

  /// One row of a reduction: partial results in kChains vectors (independent
  /// chains of combines, so that consecutive steps do not wait on each
  /// other), then one vector per step, one masked step, and one reduction
  /// combined into the output.
  void emitReductionRow(Value size) {
    constexpr int64_t kChains = 4;
    VectorType f32Vec = VectorType::get({lanes}, b.getF32Type());
    Value neutral = arith::ConstantOp::create(
        b, loc, f32Vec, DenseElementsAttr::get(f32Vec, r.combiner.neutral));
    auto fullEnd = [&](Value from, int64_t step) {
      Value count = arith::DivUIOp::create(
          b, loc, arith::SubIOp::create(b, loc, size, from), idx(step));
      return arith::AddIOp::create(
                 b, loc, from, arith::MulIOp::create(b, loc, count, idx(step)))
          .getResult();
    };
    auto steps = [&](Value from, Value to, int64_t vectors,
                     ValueRange init) {
      return scf::ForOp::create(
                 b, loc, from, to, idx(vectors * lanes), init,
                 [&](OpBuilder &nested, Location, Value k, ValueRange acc) {
                   OpBuilder::InsertionGuard guard(b);
                   b.setInsertionPoint(nested.getInsertionBlock(),
                                       nested.getInsertionPoint());
                   SmallVector<Value> next;
                   for (int64_t c = 0; c < vectors; ++c) {
                     iv[r.loop] =
                         c == 0 ? k
                                : arith::AddIOp::create(b, loc, k,
                                                        idx(c * lanes))
                                      .getResult();
                     next.push_back(combine(acc[c], evaluate(Value())));
                   }
                   scf::YieldOp::create(b, loc, next);
                 })
          .getResults();
    };
    Value chainsEnd = fullEnd(idx(0), kChains * lanes);
    SmallVector<Value> chains(steps(idx(0), chainsEnd, kChains,
                                    SmallVector<Value>(kChains, neutral)));
    Value partial = combine(combine(chains[0], chains[1]),
                            combine(chains[2], chains[3]));
    Value full = fullEnd(chainsEnd, lanes);
    partial = steps(chainsEnd, full, 1, ValueRange{partial})[0];
    // The rest of the row as one masked step.
    iv[r.loop] = full;
    Value mask = vector::CreateMaskOp::create(
        b, loc, VectorType::get({lanes}, b.getI1Type()),
        ValueRange{arith::SubIOp::create(b, loc, size, full)});
    Value acc = combine(partial, evaluate(mask));
    Value total = vector::ReductionOp::create(
        b, loc, r.combiner.kind, acc,
        arith::FastMathFlags::reassoc | r.combiner.flags);
    OpOperand *init = r.op.getDpsInitOperand(r.reductionInit);
    SmallVector<Value> at = indices(r.op.getMatchingIndexingMap(init));
    Value old = memref::LoadOp::create(b, loc, init->get(), at);
    memref::StoreOp::create(b, loc, combine(total, old), init->get(), at);
  }

  Row r;
  int64_t lanes;
  OpBuilder &b;
  Location loc;
  SmallVector<Value> iv;
  /// loadRowInvariants' vectors for the current row.
  DenseMap<OpOperand *, Value> rowInvariants;
};

/// Whether a linalg.copy or linalg.transpose moves f32 rows: the innermost
/// dimension stays innermost and contiguous on both sides (the heads'
/// [b, n, heads, d] <-> [b, heads, n, d] transposes, strided copies of
/// slices). Its generic form, a body that yields its input, is then an
/// elementwise row op. Other transposes move single elements and keep the
/// scalar loops.
static bool movesRows(linalg::LinalgOp op) {
  if (!isa<linalg::CopyOp, linalg::TransposeOp>(op.getOperation()) ||
      !op.hasPureBufferSemantics())
    return false;
  Value source = op.getDpsInputOperand(0)->get();
  Value target = op.getDpsInitOperand(0)->get();
  auto targetType = dyn_cast<MemRefType>(target.getType());
  if (!targetType || !targetType.getElementType().isF32() ||
      !seq::cpu::hasUnitInnerStride(source) ||
      !seq::cpu::hasUnitInnerStride(target) ||
      targetType.getShape().back() == 1)
    return false;
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op.getOperation()))
    return transpose.getPermutation().back() ==
           static_cast<int64_t>(transpose.getPermutation().size()) - 1;
  return true;
}

struct SeqCPUVectorizeRowsPass
    : public mlir::seq::impl::SeqCPUVectorizeRowsBase<
          SeqCPUVectorizeRowsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> moves;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (movesRows(op))
        moves.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : moves) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::generalizeNamedOp(rewriter, op)))
        return signalPassFailure();
    }

    SmallVector<Row> found;
    getOperation()->walk([&](linalg::GenericOp op) {
      FailureOr<Row> r = matchRow(op);
      if (succeeded(r))
        found.push_back(*r);
    });
    int64_t lanes = std::max<int64_t>(1, vectorBits / 32);
    for (const Row &r : found) {
      OpBuilder b(r.op);
      RowEmitter(r, lanes, b).emit();
      r.op->erase();
    }
  }
};

} // namespace
