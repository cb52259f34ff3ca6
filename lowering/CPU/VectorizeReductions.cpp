//===- VectorizeReductions.cpp - row reductions with vector accumulators --===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Rewrites linalg reductions on buffers whose reduced inputs are contiguous
// along the reduction (the row max and row sum of softmax, the mean and
// variance of layer norm, the sum of squares of RMSNorm) into loops that
// evaluate the body on vectors and combine into a vector of partial results,
// reduced once per output element. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "lowering/CPU/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir {
namespace seq {
#define GEN_PASS_DEF_SEQCPUVECTORIZEREDUCTIONS
#include "lowering/CPU/Passes.h.inc"
} // namespace seq
} // namespace mlir

using namespace mlir;

namespace {

/// How partial results combine, and the value a masked lane contributes.
struct Combiner {
  vector::CombiningKind kind;
  float neutral;
};

/// A reduction `out = combine(f(ins...), out)` over one contiguous loop.
struct Reduction {
  linalg::GenericOp op;
  unsigned loop;            // the reduction loop
  Operation *combine;       // the op that folds f(...) into out
  Value partial;            // f(...), the combined value inside the body
  Combiner combiner;
};

static bool isContiguousAlong(Value memref, AffineMap map, unsigned loop) {
  auto type = dyn_cast<MemRefType>(memref.getType());
  if (!type || map.getNumResults() == 0)
    return false;
  if (cast<AffineDimExpr>(map.getResults().back()).getPosition() != loop)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// Ops the vector body may contain: elementwise arith and math on f32 (and
/// their i1 comparisons), which all have vector forms of the same name.
static bool isVectorizableBodyOp(Operation &op) {
  if (op.getNumRegions() != 0 || op.getNumResults() != 1)
    return false;
  if (!isa<arith::ArithDialect, math::MathDialect>(op.getDialect()))
    return false;
  if (isa<arith::ConstantOp>(op))
    return op.getResult(0).getType().isF32() ||
           op.getResult(0).getType().isInteger(1);
  if (!op.hasTrait<OpTrait::Elementwise>())
    return false;
  auto scalar = [](Type t) { return t.isF32() || t.isInteger(1); };
  return llvm::all_of(op.getOperandTypes(), scalar) &&
         llvm::all_of(op.getResultTypes(), scalar);
}

static FailureOr<Reduction> matchReduction(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1 || op.getNumDpsInputs() == 0)
    return failure();
  Reduction r;
  r.op = op;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned l = 0; l < iterators.size(); ++l)
    if (iterators[l] == utils::IteratorType::reduction)
      r.loop = l;
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation())
      return failure();
  OpOperand *init = op.getDpsInitOperand(0);
  if (op.getMatchingIndexingMap(init).isFunctionOfDim(r.loop))
    return failure();
  // Inputs that move with the reduction must be contiguous along it; the
  // others are the same for the whole row and are broadcast.
  bool anyMoving = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isFunctionOfDim(r.loop))
      continue;
    if (!isContiguousAlong(input->get(), map, r.loop))
      return failure();
    anyMoving = true;
  }
  if (!anyMoving)
    return failure();

  Block *body = op.getBlock();
  if (!llvm::all_of(body->getArgumentTypes(), [](Type t) { return t.isF32(); }))
    return failure();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  Value out = body->getArgument(body->getNumArguments() - 1);
  Operation *combine = yield.getOperand(0).getDefiningOp();
  if (!combine || combine->getNumOperands() != 2 || !out.hasOneUse() ||
      *out.getUsers().begin() != combine)
    return failure();
  r.combine = combine;
  r.partial = combine->getOperand(0) == out ? combine->getOperand(1)
                                           : combine->getOperand(0);
  if (r.partial == out)
    return failure();
  const float inf = std::numeric_limits<float>::infinity();
  if (isa<arith::AddFOp>(combine))
    r.combiner = {vector::CombiningKind::ADD, 0.0f};
  else if (isa<arith::MaximumFOp>(combine))
    r.combiner = {vector::CombiningKind::MAXIMUMF, -inf};
  else if (isa<arith::MinimumFOp>(combine))
    r.combiner = {vector::CombiningKind::MINIMUMF, inf};
  else
    return failure();
  for (Operation &inner : body->without_terminator())
    if (&inner != combine && !isVectorizableBodyOp(inner))
      return failure();
  return r;
}

class ReductionEmitter {
public:
  ReductionEmitter(Reduction r, int64_t lanes, OpBuilder &b)
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
    auto rowBody = [&]() { emitRow(extent[r.loop]); };
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
    SmallVector<Value> result;
    for (AffineExpr e : map.getResults())
      result.push_back(iv[cast<AffineDimExpr>(e).getPosition()]);
    return result;
  }

  /// f(ins...) on one vector of the row at iv[loop] (masked: lanes off give
  /// the combiner's neutral value).
  Value evaluate(Value mask) {
    linalg::GenericOp op = r.op;
    Block *body = op.getBlock();
    VectorType f32Vec = VectorType::get({lanes}, b.getF32Type());
    Value neutral = arith::ConstantOp::create(
        b, loc, f32Vec, DenseElementsAttr::get(f32Vec, r.combiner.neutral));
    IRMapping map;
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap m = op.getMatchingIndexingMap(input);
      Value v;
      if (!m.isFunctionOfDim(r.loop)) {
        Value s = memref::LoadOp::create(b, loc, input->get(), indices(m));
        v = vector::BroadcastOp::create(b, loc, f32Vec, s);
      } else if (mask) {
        v = vector::MaskedLoadOp::create(b, loc, f32Vec, input->get(),
                                         indices(m), mask, neutral);
      } else {
        v = vector::LoadOp::create(b, loc, f32Vec, input->get(), indices(m));
      }
      map.map(body->getArgument(input->getOperandNumber()), v);
    }
    for (Operation &inner : body->without_terminator()) {
      if (&inner == r.combine)
        continue;
      if (auto constant = dyn_cast<arith::ConstantOp>(inner)) {
        auto type = VectorType::get({lanes}, constant.getType());
        auto attr = DenseElementsAttr::get(
            type, ArrayRef<Attribute>{constant.getValue()});
        map.map(constant.getResult(),
                arith::ConstantOp::create(b, loc, type, attr).getResult());
        continue;
      }
      // Values captured from above the body (constants of the function)
      // are the same for every lane.
      for (Value operand : inner.getOperands())
        if (!map.contains(operand) && operand.getParentBlock() != body)
          map.map(operand,
                  vector::BroadcastOp::create(
                      b, loc, VectorType::get({lanes}, operand.getType()),
                      operand)
                      .getResult());
      Operation *clone = b.clone(inner, map);
      for (OpResult result : clone->getResults())
        result.setType(VectorType::get({lanes}, result.getType()));
    }
    Value partial = map.lookupOrDefault(r.partial);
    if (mask)
      partial = arith::SelectOp::create(b, loc, mask, partial, neutral);
    return partial;
  }

  Value combine(Value x, Value y) {
    switch (r.combiner.kind) {
    case vector::CombiningKind::ADD:
      return arith::AddFOp::create(b, loc, x, y);
    case vector::CombiningKind::MAXIMUMF:
      return arith::MaximumFOp::create(b, loc, x, y);
    default:
      return arith::MinimumFOp::create(b, loc, x, y);
    }
  }

  void emitRow(Value size) {
    VectorType f32Vec = VectorType::get({lanes}, b.getF32Type());
    Value neutral = arith::ConstantOp::create(
        b, loc, f32Vec, DenseElementsAttr::get(f32Vec, r.combiner.neutral));
    Value count = arith::DivUIOp::create(b, loc, size, idx(lanes));
    Value full = arith::MulIOp::create(b, loc, count, idx(lanes));
    auto forOp = scf::ForOp::create(
        b, loc, idx(0), full, idx(lanes), ValueRange{neutral},
        [&](OpBuilder &nested, Location, Value k, ValueRange acc) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          iv[r.loop] = k;
          scf::YieldOp::create(b, loc,
                               ValueRange{combine(acc[0], evaluate(Value()))});
        });
    // The rest of the row as one masked step.
    iv[r.loop] = full;
    Value mask = vector::CreateMaskOp::create(
        b, loc, VectorType::get({lanes}, b.getI1Type()),
        ValueRange{arith::SubIOp::create(b, loc, size, full)});
    Value acc = combine(forOp.getResult(0), evaluate(mask));
    Value total = vector::ReductionOp::create(b, loc, r.combiner.kind, acc,
                                              arith::FastMathFlags::reassoc);
    OpOperand *init = r.op.getDpsInitOperand(0);
    SmallVector<Value> at = indices(r.op.getMatchingIndexingMap(init));
    Value old = memref::LoadOp::create(b, loc, init->get(), at);
    memref::StoreOp::create(b, loc, combine(total, old), init->get(), at);
  }

  Reduction r;
  int64_t lanes;
  OpBuilder &b;
  Location loc;
  SmallVector<Value> iv;
};

struct SeqCPUVectorizeReductionsPass
    : public mlir::seq::impl::SeqCPUVectorizeReductionsBase<
          SeqCPUVectorizeReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Reduction> found;
    getOperation()->walk([&](linalg::GenericOp op) {
      FailureOr<Reduction> r = matchReduction(op);
      if (succeeded(r))
        found.push_back(*r);
    });
    int64_t lanes = std::max<int64_t>(1, vectorBits / 32);
    for (const Reduction &r : found) {
      OpBuilder b(r.op);
      ReductionEmitter(r, lanes, b).emit();
      r.op->erase();
    }
  }
};

} // namespace
