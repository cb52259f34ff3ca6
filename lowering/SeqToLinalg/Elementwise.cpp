//===- Elementwise.cpp - lower elementwise seq ops to linalg --------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Binary arithmetic and comparisons with broadcasting, casts, unary math and
// activations become one `linalg.generic` each (all-parallel, broadcast operands read through
// constant-0 map results); dropout is the identity. Floats narrower than f32
// are computed in f32 and rounded once, as PyTorch's CPU kernels do.
//
//===----------------------------------------------------------------------===//

#include "lowering/SeqToLinalg/Patterns.h"
#include "lowering/SeqToLinalg/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::seq;

namespace {

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

/// The scalar op of a binary seq op, for float and (signed) integer elements.
template <typename SeqOp> struct BinaryScalarOps;
template <> struct BinaryScalarOps<AddOp> {
  using Float = arith::AddFOp;
  using Int = arith::AddIOp;
};
template <> struct BinaryScalarOps<SubOp> {
  using Float = arith::SubFOp;
  using Int = arith::SubIOp;
};
template <> struct BinaryScalarOps<MulOp> {
  using Float = arith::MulFOp;
  using Int = arith::MulIOp;
};
/// Integer division truncates toward zero, as `torch.div(rounding_mode=
/// "trunc")` and C do (PyTorch's `//` floors: the two differ for operands of
/// opposite signs). Division by zero is undefined, as in `arith.divsi`.
template <> struct BinaryScalarOps<DivOp> {
  using Float = arith::DivFOp;
  using Int = arith::DivSIOp;
};
/// `maximumf`/`minimumf` propagate NaN like `torch.maximum`/`torch.minimum`.
template <> struct BinaryScalarOps<MaxOp> {
  using Float = arith::MaximumFOp;
  using Int = arith::MaxSIOp;
};
template <> struct BinaryScalarOps<MinOp> {
  using Float = arith::MinimumFOp;
  using Int = arith::MinSIOp;
};

template <typename SeqOp>
struct BinaryOpLowering : public OpRewritePattern<SeqOp> {
  using OpRewritePattern<SeqOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(SeqOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getType());
    Type elementType = resultType.getElementType();
    bool isFloat = isa<FloatType>(elementType);
    Type computeType = getComputeType(elementType);
    FailureOr<Value> result = buildElementwise(
        rewriter, op, resultType, {op.getLhs(), op.getRhs()},
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          if (!isFloat)
            return BinaryScalarOps<SeqOp>::Int::create(b, loc, args[0],
                                                       args[1]);
          Value lhs = convertScalar(b, loc, args[0], computeType);
          Value rhs = convertScalar(b, loc, args[1], computeType);
          Value value = BinaryScalarOps<SeqOp>::Float::create(b, loc, lhs, rhs);
          return convertScalar(b, loc, value, elementType);
        });
    if (failed(result))
      return rewriter.notifyMatchFailure(op, "operands do not broadcast");
    rewriter.replaceOp(op, *result);
    return success();
  }
};

/// 1 or 0 in the operands' element type. Ordered float predicates, except
/// `ne`, which holds for NaN as in PyTorch; integers compare signed. Floats
/// narrower than f32 compare exactly as they are.
struct CompareOpLowering : public OpRewritePattern<CompareOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CompareOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getType());
    Type elementType = resultType.getElementType();
    bool isFloat = isa<FloatType>(elementType);
    ComparePredicate predicate = op.getPredicate();
    FailureOr<Value> result = buildElementwise(
        rewriter, op, resultType, {op.getLhs(), op.getRhs()},
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value holds;
          if (isFloat) {
            arith::CmpFPredicate p;
            switch (predicate) {
            case ComparePredicate::eq:
              p = arith::CmpFPredicate::OEQ;
              break;
            case ComparePredicate::ne:
              p = arith::CmpFPredicate::UNE;
              break;
            case ComparePredicate::lt:
              p = arith::CmpFPredicate::OLT;
              break;
            case ComparePredicate::le:
              p = arith::CmpFPredicate::OLE;
              break;
            case ComparePredicate::gt:
              p = arith::CmpFPredicate::OGT;
              break;
            case ComparePredicate::ge:
              p = arith::CmpFPredicate::OGE;
              break;
            }
            holds = arith::CmpFOp::create(b, loc, p, args[0], args[1]);
          } else {
            arith::CmpIPredicate p;
            switch (predicate) {
            case ComparePredicate::eq:
              p = arith::CmpIPredicate::eq;
              break;
            case ComparePredicate::ne:
              p = arith::CmpIPredicate::ne;
              break;
            case ComparePredicate::lt:
              p = arith::CmpIPredicate::slt;
              break;
            case ComparePredicate::le:
              p = arith::CmpIPredicate::sle;
              break;
            case ComparePredicate::gt:
              p = arith::CmpIPredicate::sgt;
              break;
            case ComparePredicate::ge:
              p = arith::CmpIPredicate::sge;
              break;
            }
            holds = arith::CmpIOp::create(b, loc, p, args[0], args[1]);
          }
          Value one = isFloat ? createFloatConstant(b, loc, elementType, 1.0)
                              : arith::ConstantOp::create(
                                    b, loc, b.getIntegerAttr(elementType, 1));
          Value zero = isFloat ? createFloatConstant(b, loc, elementType, 0.0)
                               : arith::ConstantOp::create(
                                     b, loc, b.getIntegerAttr(elementType, 0));
          return arith::SelectOp::create(b, loc, holds, one, zero);
        });
    if (failed(result))
      return rewriter.notifyMatchFailure(op, "operands do not broadcast");
    rewriter.replaceOp(op, *result);
    return success();
  }
};

/// One conversion per element (`convertScalar`: extf/truncf, sitofp,
/// fptosi, extsi/trunci).
struct CastOpLowering : public OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getType());
    Type elementType = resultType.getElementType();
    if (op.getInput().getType() == resultType) {
      rewriter.replaceOp(op, op.getInput());
      return success();
    }
    FailureOr<Value> result = buildElementwise(
        rewriter, op, resultType, op.getInput(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return convertScalar(b, loc, args[0], elementType);
        });
    if (failed(result))
      return failure();
    rewriter.replaceOp(op, *result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

/// Lowers a unary op whose scalar formula `fn` maps a value of the compute
/// type (see `getComputeType`) to one of the same type.
template <typename SeqOp>
struct UnaryOpLowering : public OpRewritePattern<SeqOp> {
  using OpRewritePattern<SeqOp>::OpRewritePattern;

  /// Emits the formula on `x` (in the compute type).
  virtual Value buildScalar(OpBuilder &b, Location loc, SeqOp op,
                            Value x) const = 0;

  LogicalResult matchAndRewrite(SeqOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getType());
    Type elementType = resultType.getElementType();
    Type computeType = getComputeType(elementType);
    FailureOr<Value> result = buildElementwise(
        rewriter, op, resultType, op.getInput(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value x = convertScalar(b, loc, args[0], computeType);
          return convertScalar(b, loc, buildScalar(b, loc, op, x), elementType);
        });
    if (failed(result))
      return failure();
    rewriter.replaceOp(op, *result);
    return success();
  }
};

/// A unary op that is exactly one math/arith op.
template <typename SeqOp, typename ScalarOp>
struct SimpleUnaryLowering : public UnaryOpLowering<SeqOp> {
  using UnaryOpLowering<SeqOp>::UnaryOpLowering;
  Value buildScalar(OpBuilder &b, Location loc, SeqOp, Value x) const override {
    return ScalarOp::create(b, loc, x);
  }
};

/// 1 / (1 + exp(-x)): for very negative x, exp(-x) overflows to +inf and the
/// quotient is 0, the correct limit, so no special case is needed.
static Value buildSigmoid(OpBuilder &b, Location loc, Value x) {
  Value one = createFloatConstant(b, loc, x.getType(), 1.0);
  Value negX = arith::NegFOp::create(b, loc, x);
  Value e = math::ExpOp::create(b, loc, negX);
  Value denom = arith::AddFOp::create(b, loc, one, e);
  return arith::DivFOp::create(b, loc, one, denom);
}

struct SigmoidLowering : public UnaryOpLowering<SigmoidOp> {
  using UnaryOpLowering::UnaryOpLowering;
  Value buildScalar(OpBuilder &b, Location loc, SigmoidOp,
                    Value x) const override {
    return buildSigmoid(b, loc, x);
  }
};

struct SiluLowering : public UnaryOpLowering<SiluOp> {
  using UnaryOpLowering::UnaryOpLowering;
  Value buildScalar(OpBuilder &b, Location loc, SiluOp,
                    Value x) const override {
    return arith::MulFOp::create(b, loc, x, buildSigmoid(b, loc, x));
  }
};

/// max(x, 0), NaN-propagating like `torch.relu`.
struct ReluLowering : public UnaryOpLowering<ReluOp> {
  using UnaryOpLowering::UnaryOpLowering;
  Value buildScalar(OpBuilder &b, Location loc, ReluOp,
                    Value x) const override {
    Value zero = createFloatConstant(b, loc, x.getType(), 0.0);
    return arith::MaximumFOp::create(b, loc, x, zero);
  }
};

struct GeluLowering : public UnaryOpLowering<GeluOp> {
  using UnaryOpLowering::UnaryOpLowering;
  Value buildScalar(OpBuilder &b, Location loc, GeluOp op,
                    Value x) const override {
    Type type = x.getType();
    Value half = createFloatConstant(b, loc, type, 0.5);
    Value one = createFloatConstant(b, loc, type, 1.0);
    Value inner;
    if (op.getApproximate() == GeluApproximation::tanh) {
      // tanh(sqrt(2/pi) * (x + 0.044715 x^3)).
      Value k0 = createFloatConstant(b, loc, type,
                                     std::sqrt(2.0 * llvm::numbers::inv_pi));
      Value k1 = createFloatConstant(b, loc, type, 0.044715);
      Value x3 =
          arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
      Value poly = arith::AddFOp::create(b, loc, x,
                                         arith::MulFOp::create(b, loc, k1, x3));
      inner =
          math::TanhOp::create(b, loc, arith::MulFOp::create(b, loc, k0, poly));
    } else {
      // erf(x / sqrt(2)).
      Value k = createFloatConstant(b, loc, type, llvm::numbers::inv_sqrt2);
      inner = math::ErfOp::create(b, loc, arith::MulFOp::create(b, loc, x, k));
    }
    Value onePlus = arith::AddFOp::create(b, loc, one, inner);
    Value halfX = arith::MulFOp::create(b, loc, half, x);
    return arith::MulFOp::create(b, loc, halfX, onePlus);
  }
};

/// e^x - 1 without the cancellation of small x, from exp and log (Kahan's
/// method): with u = e^x rounded, (u - 1) x / log(u) cancels the rounding
/// of u, since log(u) is the argument u is the exact exp of. u = 1 gives x
/// itself, u - 1 = -1 gives -1, u = +inf gives +inf; NaN stays NaN.
/// math.expm1 is not used: the LLVM conversion lowers it as exp(x) - 1,
/// which is what -O0 and -O1 would then compute (ELU(-1e-8) was 0); with
/// exp and log, -O0 calls libm for both and -O2 approximates both.
static Value buildExpm1(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  Value one = createFloatConstant(b, loc, type, 1.0);
  Value minusOne = createFloatConstant(b, loc, type, -1.0);
  Value u = math::ExpOp::create(b, loc, x);
  Value uMinusOne = arith::SubFOp::create(b, loc, u, one);
  Value logU = math::LogOp::create(b, loc, u);
  Value corrected = arith::MulFOp::create(
      b, loc, uMinusOne, arith::DivFOp::create(b, loc, x, logU));
  // log(+inf) = +inf = u: the quotient would be NaN.
  Value infinite =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, logU, u);
  corrected = arith::SelectOp::create(b, loc, infinite, u, corrected);
  Value saturated = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                          uMinusOne, minusOne);
  corrected = arith::SelectOp::create(b, loc, saturated, minusOne, corrected);
  // u = 1 (x below half an ulp of 1) or NaN: x.
  Value unit =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UEQ, u, one);
  return arith::SelectOp::create(b, loc, unit, x, corrected);
}

/// x > 0 ? x : alpha * expm1(x); `expm1` keeps the precision of small
/// negative inputs, as PyTorch's kernel does.
struct EluLowering : public UnaryOpLowering<EluOp> {
  using UnaryOpLowering::UnaryOpLowering;
  Value buildScalar(OpBuilder &b, Location loc, EluOp op,
                    Value x) const override {
    Type type = x.getType();
    Value zero = createFloatConstant(b, loc, type, 0.0);
    Value alpha =
        createFloatConstant(b, loc, type, op.getAlpha().convertToDouble());
    Value negative =
        arith::MulFOp::create(b, loc, alpha, buildExpm1(b, loc, x));
    Value positive =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
    return arith::SelectOp::create(b, loc, positive, x, negative);
  }
};

/// beta * x > threshold ? x : log1p(exp(beta * x)) / beta, as
/// `torch.nn.functional.softplus` (the linear branch keeps exp from
/// overflowing).
struct SoftplusLowering : public UnaryOpLowering<SoftplusOp> {
  using UnaryOpLowering::UnaryOpLowering;
  Value buildScalar(OpBuilder &b, Location loc, SoftplusOp op,
                    Value x) const override {
    Type type = x.getType();
    Value beta =
        createFloatConstant(b, loc, type, op.getBeta().convertToDouble());
    Value threshold =
        createFloatConstant(b, loc, type, op.getThreshold().convertToDouble());
    Value scaled = arith::MulFOp::create(b, loc, x, beta);
    Value smooth = arith::DivFOp::create(
        b, loc,
        math::Log1pOp::create(b, loc, math::ExpOp::create(b, loc, scaled)),
        beta);
    Value linear = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                         scaled, threshold);
    return arith::SelectOp::create(b, loc, linear, x, smooth);
  }
};

/// Dropout is the identity at inference.
struct DropoutLowering : public OpRewritePattern<DropoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DropoutOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};

} // namespace

void mlir::seq::populateElementwiseToLinalgPatterns(
    RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<BinaryOpLowering<AddOp>, BinaryOpLowering<SubOp>,
               BinaryOpLowering<MulOp>, BinaryOpLowering<DivOp>,
               BinaryOpLowering<MaxOp>, BinaryOpLowering<MinOp>,
               CompareOpLowering, CastOpLowering>(ctx);
  patterns.add<SimpleUnaryLowering<ExpOp, math::ExpOp>,
               SimpleUnaryLowering<LogOp, math::LogOp>,
               SimpleUnaryLowering<SqrtOp, math::SqrtOp>,
               SimpleUnaryLowering<NegOp, arith::NegFOp>,
               SimpleUnaryLowering<AbsOp, math::AbsFOp>,
               SimpleUnaryLowering<TanhOp, math::TanhOp>,
               SimpleUnaryLowering<RsqrtOp, math::RsqrtOp>, SigmoidLowering,
               SiluLowering, ReluLowering, GeluLowering, EluLowering,
               SoftplusLowering, DropoutLowering>(ctx);
}
