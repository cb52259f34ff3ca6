//===- KernelUtils.h - shared by the CPU's vector kernel passes -*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// What the CPU's kernel passes share: the checks seq-cpu-vectorize-
// contractions and seq-cpu-vectorize-rows make on the linalg ops they
// rewrite, and the register tile and packed layout that
// seq-cpu-pack-weights and seq-cpu-vectorize-contractions agree on.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_LOWERING_CPU_KERNELUTILS_H
#define SEQC_LOWERING_CPU_KERNELUTILS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::seq::cpu {

/// The index arithmetic and loops that the register-tiled kernel emitters
/// (ContractionKernels.cpp, VectorizeQuantized.cpp) build their loop nests
/// with, at one builder and location.
class KernelBuilder {
protected:
  KernelBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  /// base, base + 1, ..., base + count - 1: the rows or columns of a tile.
  SmallVector<Value> consecutive(Value base, int64_t count) {
    SmallVector<Value> at;
    for (int64_t i = 0; i < count; ++i)
      at.push_back(add(base, idx(i)));
    return at;
  }
  /// lo + floor((hi - lo) / step) * step: the end of the full steps.
  Value fullEnd(Value lo, Value hi, int64_t step) {
    Value count = arith::DivUIOp::create(b, loc, sub(hi, lo), idx(step));
    return add(lo, arith::MulIOp::create(b, loc, count, idx(step)));
  }
  /// An scf.for from `lo` to `hi` by `step` whose body `body` emits.
  void loop(Value lo, Value hi, int64_t step,
            llvm::function_ref<void(Value)> body) {
    auto forOp = scf::ForOp::create(b, loc, lo, hi, idx(step));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forOp.getBody()->getTerminator());
    body(forOp.getInductionVar());
  }

  OpBuilder &b;
  Location loc;
};

/// Whether `value` is a memref whose innermost dimension has stride 1.
inline bool hasUnitInnerStride(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type || type.getRank() == 0)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// The indices of an operand indexed by the projected permutation `map`,
/// given the value of every loop.
inline SmallVector<Value> operandIndices(AffineMap map, ArrayRef<Value> loops) {
  SmallVector<Value> result;
  for (AffineExpr e : map.getResults())
    result.push_back(loops[cast<AffineDimExpr>(e).getPosition()]);
  return result;
}

/// Ops a vectorized body may contain: elementwise arith and math on f32 (and
/// their i1 comparisons), which all have vector forms of the same name.
inline bool isVectorizableBodyOp(Operation &op) {
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

/// Whether every argument of a linalg body is f32.
inline bool isF32Body(Block *body) {
  return llvm::all_of(body->getArgumentTypes(),
                      [](Type t) { return t.isF32(); });
}

/// Clones the ops of a linalg body (isVectorizableBodyOp, all of them but
/// `skip` and the terminator) on vectors of `lanes`: `map` must map the block
/// arguments the body uses to vectors; constants become splats and values
/// captured from above are broadcast.
inline void cloneBodyOnVectors(OpBuilder &b, Location loc, Block &body,
                               int64_t lanes, IRMapping &map,
                               Operation *skip = nullptr) {
  for (Operation &inner : body.without_terminator()) {
    if (&inner == skip)
      continue;
    if (auto constant = dyn_cast<arith::ConstantOp>(inner)) {
      auto type = VectorType::get({lanes}, constant.getType());
      auto attr =
          DenseElementsAttr::get(type, ArrayRef<Attribute>{constant.getValue()});
      map.map(constant.getResult(),
              arith::ConstantOp::create(b, loc, type, attr).getResult());
      continue;
    }
    for (Value operand : inner.getOperands())
      if (!map.contains(operand) && operand.getParentBlock() != &body)
        map.map(operand,
                vector::BroadcastOp::create(
                    b, loc, VectorType::get({lanes}, operand.getType()),
                    operand)
                    .getResult());
    Operation *clone = b.clone(inner, map);
    for (OpResult result : clone->getResults())
      result.setType(VectorType::get({lanes}, result.getType()));
  }
}

/// Whether the contraction kernels read operands of element type `t`: f32,
/// and bf16 and f16, which they widen to f32 in registers.
inline bool isKernelElementType(Type t) {
  return t.isF32() || t.isBF16() || t.isF16();
}

/// Whether `t` is bf16 or f16 (vectors of them included): a float the
/// kernels widen to f32 in registers.
inline bool isNarrowFloat(Type t) {
  Type element = getElementTypeOrSelf(t);
  return element.isBF16() || element.isF16();
}

/// Whether `op` is an arith.extf of a bf16 or f16 value to f32: how the
/// bodies the vector kernels read use a narrow operand.
inline bool isWideningToF32(Operation &op) {
  auto ext = dyn_cast<arith::ExtFOp>(op);
  return ext && isNarrowFloat(ext.getIn().getType()) && ext.getType().isF32();
}

/// Checks that the body of `op` is `out + a * b` (in any operand order) with
/// an f32 `out`, where `a` and `b` are each f32 or a bf16 or f16 argument
/// widened to f32 by an arith.extf: the contraction the vector kernels
/// compute.
inline bool isMulAddBody(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (!body || body->getNumArguments() != 3 ||
      !body->getArgument(2).getType().isF32())
    return false;
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return false;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value out = body->getArgument(2);
  Value product = add.getLhs() == out   ? add.getRhs()
                  : add.getRhs() == out ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
  // The argument a factor reads: directly in f32, or widened from bf16/f16.
  int64_t widened = 0;
  auto argumentOf = [&](Value factor) -> Value {
    if (factor.getType().isF32() && isa<BlockArgument>(factor))
      return factor;
    auto ext = factor.getDefiningOp<arith::ExtFOp>();
    if (!ext || !factor.getType().isF32() || !isNarrowFloat(ext.getIn().getType()))
      return Value();
    ++widened;
    return ext.getIn();
  };
  Value x = body->getArgument(0), y = body->getArgument(1);
  Value lhs = argumentOf(mul.getLhs()), rhs = argumentOf(mul.getRhs());
  // mulf, addf, yield and the extf ops.
  if (std::distance(body->begin(), body->end()) != 3 + widened)
    return false;
  return (lhs == x && rhs == y) || (lhs == y && rhs == x);
}

/// Rows and vectors of the broadcast kernel's register tile (an mr x nv tile
/// of output vectors, nv loads of B and one broadcast of A per step): with
/// 32 registers 6 x 4 (24 accumulators), with 16 6 x 2.
inline int64_t broadcastTileRows() { return 6; }
inline int64_t broadcastTileVectors(int64_t vectorRegisters) {
  return vectorRegisters >= 32 ? 4 : 2;
}

/// The width of the column panels of a packed right operand
/// (seq-cpu-pack-weights): one broadcast kernel tile, so that each step of
/// the kernel loads nv consecutive vectors.
inline int64_t panelWidth(int64_t vectorBits, int64_t vectorRegisters) {
  return broadcastTileVectors(vectorRegisters) *
         std::max<int64_t>(1, vectorBits / 32);
}

/// The attribute convert-seq-to-linalg puts on the generic of a Linear whose
/// weight is stored in a block format, the format's name
/// (lowering/SeqToLinalg/Patterns.h, kQuantizedAttr).
constexpr llvm::StringLiteral kQuantizedAttr = "seq.quantized";

/// The attribute seq-cpu-pack-weights puts on a q4_0 contraction (a generic
/// carrying `seq.quantized`) whose blocks it packed into column panels for
/// the VNNI kernel of seq-cpu-vectorize-quantized: the panel's width.
constexpr llvm::StringLiteral kQuantizedPanelAttr = "seq.quantized_panel";

/// The activations' blocks of int8 activations: llama.cpp's q8_0 blocks of
/// 32. int8's rows take those kernels (and panels) when their length is a
/// multiple of it.
constexpr int64_t kActivationBlock = 32;

/// The width of vpdpbusd the int8-activation kernels use: 512 bits where
/// the target has AVX512_VNNI and 512-bit vectors, else 256.
inline int64_t vnniKernelBits(int64_t vnniBits, int64_t vectorBits) {
  return vnniBits >= 512 && vectorBits >= 512 ? 512 : 256;
}

/// The columns of a q4_0 panel: one i32 lane of that vpdpbusd each.
inline int64_t quantizedPanelWidth(int64_t vnniBits, int64_t vectorBits) {
  return vnniKernelBits(vnniBits, vectorBits) / 32;
}

/// Matches `d floordiv W` (kind FloorDiv) or `d mod W` (kind Mod) with W a
/// positive constant; sets `dim` and returns W.
inline std::optional<int64_t> matchDimByConstant(AffineExpr e,
                                                 AffineExprKind kind,
                                                 unsigned &dim) {
  auto binary = dyn_cast<AffineBinaryOpExpr>(e);
  if (!binary || binary.getKind() != kind)
    return std::nullopt;
  auto lhs = dyn_cast<AffineDimExpr>(binary.getLHS());
  auto rhs = dyn_cast<AffineConstantExpr>(binary.getRHS());
  if (!lhs || !rhs || rhs.getValue() <= 0)
    return std::nullopt;
  dim = lhs.getPosition();
  return rhs.getValue();
}

/// Matches the indexing map of a packed right operand, with the batch loops
/// before it: `(..., n floordiv W, k, n mod W)`, or, in k-pair panels
/// (`kPairs`), `(..., n floordiv W, k floordiv 2, n mod W, k mod 2)`. Sets
/// `n` and `k` to the loop positions and returns W.
inline std::optional<int64_t> matchPanelMap(AffineMap map, unsigned &n,
                                            unsigned &k, bool &kPairs) {
  ArrayRef<AffineExpr> results = map.getResults();
  for (bool pairs : {false, true}) {
    size_t packed = pairs ? 4 : 3;
    if (results.size() < packed)
      continue;
    ArrayRef<AffineExpr> tail = results.take_back(packed);
    unsigned outerDim, innerDim, pairDim = 0, lastDim = 0;
    auto outer = matchDimByConstant(tail[0], AffineExprKind::FloorDiv,
                                    outerDim);
    auto inner = matchDimByConstant(tail[2], AffineExprKind::Mod, innerDim);
    if (!outer || !inner || *outer != *inner || outerDim != innerDim)
      continue;
    if (pairs) {
      auto pair = matchDimByConstant(tail[1], AffineExprKind::FloorDiv,
                                     pairDim);
      auto last = matchDimByConstant(tail[3], AffineExprKind::Mod, lastDim);
      if (pair != 2 || last != 2 || pairDim != lastDim)
        continue;
    } else if (auto red = dyn_cast<AffineDimExpr>(tail[1])) {
      pairDim = red.getPosition();
    } else {
      continue;
    }
    if (!llvm::all_of(results.drop_back(packed), llvm::IsaPred<AffineDimExpr>))
      continue;
    n = outerDim;
    k = pairDim;
    kPairs = pairs;
    return *outer;
  }
  return std::nullopt;
}

} // namespace mlir::seq::cpu

#endif // SEQC_LOWERING_CPU_KERNELUTILS_H
