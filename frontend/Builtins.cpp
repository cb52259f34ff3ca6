//===- Builtins.cpp - builtin functions of .seq ---------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The builtin functions, one per seq op (and a few that combine ops or work
// on compile-time numbers). Argument names and defaults follow
// torch.nn.functional where PyTorch has the function. Each builtin checks its
// operands' shapes the way the op's verifier will (ShapeMatcher), so errors
// name the user's argument and dimensions, then builds the op with the exact
// result type.
//
//===----------------------------------------------------------------------===//

#include "frontend/Elaborator.h"

#include "dialect/Seq/IR/SeqOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::seq;
using namespace mlir::seq::frontend;
using llvm::SMLoc;

//===----------------------------------------------------------------------===//
// ArgReader
//===----------------------------------------------------------------------===//

ArgReader::ArgReader(Elaborator &elab, const CallArgs &call,
                     ArrayRef<StringRef> params, unsigned numRequired)
    : elab(elab), call(call) {
  std::string what = "'" + call.callee + "'";
  if (call.positional.size() > params.size()) {
    elab.emitError(call.positional[params.size()].loc)
        << "too many arguments for " << what << ": it takes " << params.size()
        << ", got " << call.positional.size();
    bad = true;
  }
  for (auto [i, arg] : llvm::enumerate(call.positional))
    if (i < params.size())
      bound[params[i]] = &arg;
  for (const auto &[keyword, arg] : call.keywords) {
    if (!llvm::is_contained(params, keyword)) {
      elab.emitError(arg.loc)
          << what << " has no parameter '" << keyword << "' (it has "
          << llvm::join(params, ", ") << ")";
      bad = true;
      continue;
    }
    if (!bound.try_emplace(keyword, &arg).second) {
      elab.emitError(arg.loc)
          << "argument '" << keyword << "' of " << what << " is given twice";
      bad = true;
    }
  }
  for (StringRef param : params.take_front(numRequired)) {
    if (!bound.count(param)) {
      elab.emitError(call.loc)
          << "missing argument '" << param << "' of " << what;
      bad = true;
    }
  }
}

const ArgVal *ArgReader::get(StringRef name) const {
  return bound.lookup(name);
}

SMLoc ArgReader::loc(StringRef name) const {
  const ArgVal *arg = get(name);
  return arg ? arg->loc : call.loc;
}

void ArgReader::mismatch(StringRef name, StringRef expected) {
  bad = true;
  elab.emitError(loc(name))
      << "argument '" << name << "' of '" << call.callee << "' must be "
      << expected << ", got " << get(name)->value.describe();
}

TensorVal ArgReader::tensor(StringRef name) {
  const ArgVal *arg = get(name);
  if (!arg) {
    bad = true; // Reported as missing.
    return {};
  }
  if (!arg->value.is(Val::Kind::Tensor)) {
    mismatch(name, "a tensor");
    return {};
  }
  return arg->value.getTensor();
}

std::optional<TensorVal> ArgReader::optionalTensor(StringRef name) {
  const ArgVal *arg = get(name);
  if (!arg || arg->value.is(Val::Kind::None))
    return std::nullopt;
  return tensor(name);
}

int64_t ArgReader::integer(StringRef name, std::optional<int64_t> byDefault) {
  const ArgVal *arg = get(name);
  if (!arg) {
    if (!byDefault)
      bad = true;
    return byDefault.value_or(0);
  }
  if (!arg->value.is(Val::Kind::Int)) {
    mismatch(name, "an int");
    return 0;
  }
  return arg->value.getInt();
}

std::optional<int64_t> ArgReader::optionalInteger(StringRef name) {
  const ArgVal *arg = get(name);
  if (!arg || arg->value.is(Val::Kind::None))
    return std::nullopt;
  return integer(name);
}

double ArgReader::number(StringRef name, std::optional<double> byDefault) {
  const ArgVal *arg = get(name);
  if (!arg) {
    if (!byDefault)
      bad = true;
    return byDefault.value_or(0);
  }
  if (!arg->value.isNumber()) {
    mismatch(name, "a number");
    return 0;
  }
  return arg->value.getNumber();
}

std::optional<double> ArgReader::optionalNumber(StringRef name) {
  const ArgVal *arg = get(name);
  if (!arg || arg->value.is(Val::Kind::None))
    return std::nullopt;
  return number(name);
}

bool ArgReader::boolean(StringRef name, bool byDefault) {
  const ArgVal *arg = get(name);
  if (!arg)
    return byDefault;
  if (!arg->value.is(Val::Kind::Bool)) {
    mismatch(name, "True or False");
    return byDefault;
  }
  return arg->value.getBool();
}

StringRef ArgReader::choice(StringRef name, StringRef byDefault,
                            ArrayRef<StringRef> choices) {
  const ArgVal *arg = get(name);
  if (!arg)
    return byDefault;
  std::string expected = "one of \"" + llvm::join(choices, "\", \"") + "\"";
  if (!arg->value.is(Val::Kind::String) ||
      !llvm::is_contained(choices, arg->value.getString())) {
    mismatch(name, expected);
    return byDefault;
  }
  return arg->value.getString();
}

int64_t ArgReader::axis(StringRef name, int64_t rank,
                        std::optional<int64_t> byDefault) {
  const ArgVal *arg = get(name);
  int64_t value = integer(name, byDefault);
  if (bad)
    return 0;
  if (value < -rank || value >= rank) {
    bad = true;
    elab.emitError(arg ? arg->loc : call.loc)
        << "dimension " << value << " is out of range for a tensor of rank "
        << rank;
    return 0;
  }
  return value < 0 ? value + rank : value;
}

SmallVector<int64_t> ArgReader::integers(StringRef name) {
  const ArgVal *arg = get(name);
  if (!arg) {
    bad = true;
    return {};
  }
  if (arg->value.is(Val::Kind::Int))
    return {arg->value.getInt()};
  if (!arg->value.is(Val::Kind::List)) {
    mismatch(name, "an int or a list of ints");
    return {};
  }
  SmallVector<int64_t> values;
  for (const Val &element : arg->value.getList()) {
    if (!element.is(Val::Kind::Int)) {
      mismatch(name, "a list of ints");
      return {};
    }
    values.push_back(element.getInt());
  }
  return values;
}

SmallVector<TensorVal> ArgReader::tensors(StringRef name) {
  const ArgVal *arg = get(name);
  if (!arg) {
    bad = true;
    return {};
  }
  if (!arg->value.is(Val::Kind::List) || arg->value.getList().empty()) {
    mismatch(name, "a non-empty list of tensors");
    return {};
  }
  SmallVector<TensorVal> values;
  for (const Val &element : arg->value.getList()) {
    if (element.isPoison()) {
      bad = true;
      return {};
    }
    if (!element.is(Val::Kind::Tensor)) {
      mismatch(name, "a list of tensors");
      return {};
    }
    values.push_back(element.getTensor());
  }
  return values;
}

//===----------------------------------------------------------------------===//
// Shared op builders
//===----------------------------------------------------------------------===//

Val Elaborator::buildElementwise(SMLoc loc, Elementwise kind, const Val &lhs,
                                 const Val &rhs, StringRef what) {
  if (lhs.isPoison() || rhs.isPoison())
    return Val::poison();
  auto isOperand = [](const Val &v) {
    return v.is(Val::Kind::Tensor) || v.isNumber() || v.is(Val::Kind::Index);
  };
  if (!isOperand(lhs) || !isOperand(rhs) ||
      (!lhs.is(Val::Kind::Tensor) && !rhs.is(Val::Kind::Tensor)))
    return emitError(loc) << "unsupported operands for " << what << ": "
                          << lhs.describe() << " and " << rhs.describe();
  if (failed(checkInForward(loc, what)))
    return Val::poison();
  FailureOr<TensorVal> a = toTensor(loc, lhs, rhs);
  FailureOr<TensorVal> b = toTensor(loc, rhs, lhs);
  if (failed(a) || failed(b))
    return Val::poison();
  if (a->getElementType() != b->getElementType())
    return emitError(loc) << "operands of " << what
                          << " have different element types: " << a->str()
                          << " and " << b->str();
  FailureOr<Shape> shape = broadcast(loc, *a, *b, what);
  if (failed(shape))
    return Val::poison();
  Type type = getTensorType(*shape, a->getElementType());
  Operation *op;
  switch (kind) {
  case Elementwise::Add:
    op = create<AddOp>(loc, type, a->value, b->value);
    break;
  case Elementwise::Sub:
    op = create<SubOp>(loc, type, a->value, b->value);
    break;
  case Elementwise::Mul:
    op = create<MulOp>(loc, type, a->value, b->value);
    break;
  case Elementwise::Div:
    op = create<DivOp>(loc, type, a->value, b->value);
    break;
  case Elementwise::Max:
    op = create<MaxOp>(loc, type, a->value, b->value);
    break;
  case Elementwise::Min:
    op = create<MinOp>(loc, type, a->value, b->value);
    break;
  }
  return tensorResult(op, std::move(*shape));
}

Val Elaborator::buildMatmul(SMLoc loc, const Val &lhs, const Val &rhs,
                            bool transposeRhs) {
  if (!lhs.is(Val::Kind::Tensor) || !rhs.is(Val::Kind::Tensor))
    return emitError(loc) << "'@' multiplies tensors, got " << lhs.describe()
                          << " and " << rhs.describe();
  if (failed(checkInForward(loc, "'@'")))
    return Val::poison();
  const TensorVal &a = lhs.getTensor(), &b = rhs.getTensor();
  ShapeMatcher matcher(*this, loc, "'@'");
  Shape lhsBatch, rhsBatch;
  matcher.bind("lhs", a, {"...", "m", "k"}, &lhsBatch);
  if (transposeRhs)
    matcher.bind("rhs^T", b, {"...", "n", "k"}, &rhsBatch);
  else
    matcher.bind("rhs", b, {"...", "k", "n"}, &rhsBatch);
  if (matcher.failed())
    return Val::poison();
  FailureOr<Shape> batch =
      broadcastBatch(loc, lhsBatch, rhsBatch, a, b, "the batch dims of '@'");
  if (failed(batch))
    return Val::poison();
  Shape shape = matcher.result({"m", "n"}, *batch);
  return tensorResult(
      create<MatmulOp>(loc, getTensorType(shape, a.getElementType()), a.value,
                       b.value,
                       transposeRhs ? builder.getUnitAttr() : UnitAttr()),
      shape);
}

Val Elaborator::buildTranspose(SMLoc loc, const TensorVal &input,
                               ArrayRef<int64_t> permutation) {
  Shape shape;
  for (int64_t dim : permutation)
    shape.push_back(input.shape[dim]);
  return tensorResult(
      create<TransposeOp>(loc, getTensorType(shape, input.getElementType()),
                          input.value,
                          builder.getDenseI64ArrayAttr(permutation)),
      shape);
}

Val Elaborator::buildReshape(SMLoc loc, const TensorVal &input, Shape shape,
                             ArrayRef<Value> dynamicSizes) {
  return tensorResult(
      create<ReshapeOp>(loc, getTensorType(shape, input.getElementType()),
                        input.value, dynamicSizes),
      shape);
}

Val Elaborator::buildSlice(SMLoc loc, const TensorVal &input, unsigned axis,
                           Value lower, Value upper, Dim size) {
  Shape shape = input.shape;
  shape[axis] = size;
  return tensorResult(
      create<SliceOp>(loc, getTensorType(shape, input.getElementType()),
                      input.value, lower, upper,
                      builder.getI64IntegerAttr(axis)),
      shape);
}

Val Elaborator::buildUnary(SMLoc loc, StringRef name, const TensorVal &input) {
  if (!isa<FloatType>(input.getElementType()))
    return emitError(loc) << "'" << name << "' needs a float tensor, got "
                          << input.str();
  if (failed(checkInForward(loc, "'" + name.str() + "'")))
    return Val::poison();
  Value x = input.value;
  Operation *op =
      llvm::StringSwitch<std::function<Operation *()>>(name)
          .Case("exp", [&] { return create<ExpOp>(loc, x); })
          .Case("log", [&] { return create<LogOp>(loc, x); })
          .Case("sqrt", [&] { return create<SqrtOp>(loc, x); })
          .Case("rsqrt", [&] { return create<RsqrtOp>(loc, x); })
          .Case("abs", [&] { return create<AbsOp>(loc, x); })
          .Case("tanh", [&] { return create<TanhOp>(loc, x); })
          .Case("sigmoid", [&] { return create<SigmoidOp>(loc, x); })
          .Case("relu", [&] { return create<ReluOp>(loc, x); })
          .Case("silu", [&] { return create<SiluOp>(loc, x); })
          .Default([&] { return create<NegOp>(loc, x); })();
  return tensorResult(op, input.shape);
}

FailureOr<Attribute> Elaborator::getMask(SMLoc loc, bool causal, int64_t window,
                                         int64_t globalTokens) {
  if (window < 0)
    return emitError(loc) << "window must be non-negative, got " << window;
  if (globalTokens < 0)
    return emitError(loc) << "global_tokens must be non-negative, got "
                          << globalTokens;
  if (globalTokens > 0 && window == 0)
    return emitError(loc)
           << "global_tokens needs a sliding window (window > 0)";
  if (!causal && window == 0)
    return Attribute();
  return Attribute(MaskAttr::get(&context, causal, window, globalTokens));
}

/// Queries and keys of a positional mask index the same sequence.
static LogicalResult checkMaskPositions(Elaborator &elab, SMLoc loc,
                                        Attribute mask, const Dim &queries,
                                        const Dim &keys) {
  if (!mask)
    return success();
  bool conflict =
      (queries.isStatic() && keys.isStatic() && queries.size != keys.size) ||
      (!queries.isStatic() && !keys.isStatic() && queries.symbol &&
       keys.symbol && queries.symbol != keys.symbol);
  if (!conflict)
    return success();
  return elab.emitError(loc)
         << "a causal or windowed mask compares query and key positions, so "
            "both must index the same sequence; got "
         << queries.str() << " queries and " << keys.str() << " keys";
}

Val Elaborator::buildMultiHeadAttention(SMLoc loc,
                                        const MultiHeadAttentionOperands &o) {
  StringRef op = "multi_head_attention";
  if (o.heads <= 0 || o.kvHeads <= 0 || o.heads % o.kvHeads != 0)
    return emitError(loc) << "heads = " << o.heads
                          << " must be a positive multiple of kv_heads = "
                          << o.kvHeads;
  if (failed(checkInForward(loc, op)))
    return Val::poison();
  ShapeMatcher m(*this, loc, op);
  m.bind("input", o.input, {"batch", "n", "model_dim"});
  StringRef kvDim = "model_dim";
  if (o.kv) {
    kvDim = "kv_dim";
    m.bind("kv", *o.kv, {"batch", "n_kv", "kv_dim"});
  }
  m.bind("wq", o.wq, {"heads*d", "model_dim"});
  if (m.failed())
    return Val::poison();
  Dim queryDim = m.lookup("heads*d");
  std::optional<int64_t> headDim;
  if (queryDim.isStatic()) {
    if (queryDim.size % o.heads != 0)
      return emitError(loc)
             << "'wq' of " << op << " has " << queryDim.size
             << " rows, which is not a multiple of heads = " << o.heads;
    headDim = queryDim.size / o.heads;
    m.define("kv_heads*d", Dim::fixed(o.kvHeads * *headDim),
             "kv_heads times the head dim of 'wq'");
  }
  m.bind("wk", o.wk, {"kv_heads*d", kvDim});
  m.bind("wv", o.wv, {"kv_heads*d", kvDim});
  m.bind("wo", o.wo, {"model_dim", "heads*d"});
  if (!o.biases.empty()) {
    m.bind("bq", o.biases[0], {"heads*d"});
    m.bind("bk", o.biases[1], {"kv_heads*d"});
    m.bind("bv", o.biases[2], {"kv_heads*d"});
    m.bind("bo", o.biases[3], {"model_dim"});
  }
  if (o.lengths)
    m.bindInteger("lengths", *o.lengths, {"batch"});
  if (m.failed())
    return Val::poison();
  if (o.ropeTheta && headDim && *headDim % 2 != 0)
    return emitError(loc) << "rotary embeddings rotate pairs of features, so "
                             "the head dim must be even, got "
                          << *headDim;
  if (o.kv && failed(checkMaskPositions(*this, loc, o.mask, m.lookup("n"),
                                        m.lookup("n_kv"))))
    return Val::poison();
  Shape shape = m.result({"batch", "n", "model_dim"});
  SmallVector<Value> biases =
      llvm::map_to_vector(o.biases, [](const TensorVal &b) { return b.value; });
  return tensorResult(
      create<MultiHeadAttentionOp>(
          loc, getTensorType(shape, m.getElementType()), o.input.value,
          o.kv ? o.kv->value : Value(), o.wq.value, o.wk.value, o.wv.value,
          o.wo.value, biases, o.lengths ? o.lengths->value : Value(),
          builder.getI64IntegerAttr(o.heads),
          builder.getI64IntegerAttr(o.kvHeads),
          cast_if_present<MaskAttr>(o.mask),
          o.ropeTheta ? builder.getF64FloatAttr(*o.ropeTheta) : FloatAttr(),
          o.alibi ? builder.getUnitAttr() : UnitAttr()),
      shape);
}

//===----------------------------------------------------------------------===//
// Builtin functions
//===----------------------------------------------------------------------===//

namespace {
using BuiltinFn = Val (*)(Elaborator &, CallArgs &);
} // namespace

/// Math on compile-time numbers, or the elementwise op on a tensor.
static Val unaryMath(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input"}, 1);
  if (args.failed())
    return Val::poison();
  const Val &x = args.get("input")->value;
  StringRef name = call.callee;
  if (x.is(Val::Kind::Tensor))
    return e.buildUnary(call.loc, name, x.getTensor());
  if (!x.isNumber())
    return e.emitError(args.loc("input"))
           << "'" << name << "' takes a tensor or a number, got "
           << x.describe();
  double v = x.getNumber();
  bool nonPositiveDomain = name == "log" || name == "rsqrt";
  if ((name == "sqrt" && v < 0) || (nonPositiveDomain && v <= 0))
    return e.emitError(args.loc("input"))
           << "'" << name << "' of " << v << " is undefined";
  double result = llvm::StringSwitch<std::function<double()>>(name)
                      .Case("exp", [&] { return std::exp(v); })
                      .Case("log", [&] { return std::log(v); })
                      .Case("sqrt", [&] { return std::sqrt(v); })
                      .Case("rsqrt", [&] { return 1 / std::sqrt(v); })
                      .Case("abs", [&] { return std::fabs(v); })
                      .Case("tanh", [&] { return std::tanh(v); })
                      .Default([&] { return 1 / (1 + std::exp(-v)); })();
  if (!std::isfinite(result))
    return e.emitError(call.loc) << "'" << name << "' of " << v << " overflows";
  return Val::real(result);
}

/// relu and silu: tensors only.
static Val unaryActivation(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input"}, 1);
  TensorVal x = args.tensor("input");
  if (args.failed())
    return Val::poison();
  return e.buildUnary(call.loc, call.callee, x);
}

static Val builtinGelu(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input", "approximate"}, 1);
  TensorVal x = args.tensor("input");
  StringRef approximate = args.choice("approximate", "none", {"none", "tanh"});
  if (args.failed())
    return Val::poison();
  ShapeMatcher m(e, call.loc, "gelu");
  m.bind("input", x, {"..."});
  if (m.failed() || failed(e.checkInForward(call.loc, "'gelu'")))
    return Val::poison();
  auto kind =
      approximate == "tanh" ? GeluApproximation::tanh : GeluApproximation::none;
  return Elaborator::tensorResult(
      e.create<GeluOp>(call.loc, x.value.getType(), x.value,
                       GeluApproximationAttr::get(e.getContext(), kind)),
      x.shape);
}

static Val builtinElu(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input", "alpha"}, 1);
  TensorVal x = args.tensor("input");
  double alpha = args.number("alpha", 1.0);
  if (args.failed())
    return Val::poison();
  ShapeMatcher m(e, call.loc, "elu");
  m.bind("input", x, {"..."});
  if (m.failed() || failed(e.checkInForward(call.loc, "'elu'")))
    return Val::poison();
  return Elaborator::tensorResult(
      e.create<EluOp>(call.loc, x.value.getType(), x.value,
                      e.getBuilder().getF64FloatAttr(alpha)),
      x.shape);
}

static Val builtinSoftplus(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input", "beta", "threshold"}, 1);
  TensorVal x = args.tensor("input");
  double beta = args.number("beta", 1.0);
  double threshold = args.number("threshold", 20.0);
  if (args.failed())
    return Val::poison();
  if (!(beta > 0))
    return e.emitError(args.loc("beta"))
           << "beta of softplus must be positive, got " << beta;
  ShapeMatcher m(e, call.loc, "softplus");
  m.bind("input", x, {"..."});
  if (m.failed() || failed(e.checkInForward(call.loc, "'softplus'")))
    return Val::poison();
  OpBuilder &b = e.getBuilder();
  return Elaborator::tensorResult(
      e.create<SoftplusOp>(call.loc, x.value.getType(), x.value,
                           b.getF64FloatAttr(beta),
                           b.getF64FloatAttr(threshold)),
      x.shape);
}

static Val builtinDropout(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input", "p"}, 1);
  TensorVal x = args.tensor("input");
  double p = args.number("p", 0.5);
  if (args.failed())
    return Val::poison();
  if (!(p >= 0 && p < 1))
    return e.emitError(args.loc("p"))
           << "the dropout probability must be in [0, 1), got " << p;
  ShapeMatcher m(e, call.loc, "dropout");
  m.bind("input", x, {"..."});
  if (m.failed() || failed(e.checkInForward(call.loc, "'dropout'")))
    return Val::poison();
  return Elaborator::tensorResult(
      e.create<DropoutOp>(call.loc, x.value.getType(), x.value,
                          e.getBuilder().getF64FloatAttr(p)),
      x.shape);
}

static Val builtinSoftmax(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input", "dim"}, 1);
  TensorVal x = args.tensor("input");
  if (args.failed())
    return Val::poison();
  int64_t axis = args.axis("dim", x.getRank(), -1);
  if (args.failed())
    return Val::poison();
  ShapeMatcher m(e, call.loc, "softmax");
  m.bind("input", x, {"...", "d"});
  if (m.failed() || failed(e.checkInForward(call.loc, "'softmax'")))
    return Val::poison();
  return Elaborator::tensorResult(
      e.create<SoftmaxOp>(call.loc, x.value.getType(), x.value,
                          e.getBuilder().getI64IntegerAttr(axis)),
      x.shape);
}

static Val builtinLinear(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input", "weight", "bias"}, 2);
  TensorVal x = args.tensor("input");
  TensorVal w = args.tensor("weight");
  std::optional<TensorVal> b = args.optionalTensor("bias");
  if (args.failed() || failed(e.checkInForward(call.loc, "'linear'")))
    return Val::poison();
  ShapeMatcher m(e, call.loc, "linear");
  Shape batch;
  m.bind("input", x, {"...", "in"}, &batch);
  m.bind("weight", w, {"out", "in"});
  if (b)
    m.bind("bias", *b, {"out"});
  if (m.failed())
    return Val::poison();
  Shape shape = m.result({"out"}, batch);
  return Elaborator::tensorResult(
      e.create<LinearOp>(call.loc, getTensorType(shape, m.getElementType()),
                         x.value, w.value, b ? b->value : Value()),
      shape);
}

static Val builtinLayerNorm(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input", "weight", "bias", "eps"}, 1);
  TensorVal x = args.tensor("input");
  std::optional<TensorVal> gamma = args.optionalTensor("weight");
  std::optional<TensorVal> beta = args.optionalTensor("bias");
  double eps = args.number("eps", 1e-5);
  if (args.failed() || failed(e.checkInForward(call.loc, "'layer_norm'")))
    return Val::poison();
  if (beta && !gamma)
    return e.emitError(args.loc("bias"))
           << "layer_norm with a bias needs a weight too";
  if (!(eps >= 0))
    return e.emitError(args.loc("eps"))
           << "eps must be non-negative, got " << eps;
  ShapeMatcher m(e, call.loc, "layer_norm");
  Shape batch;
  m.bind("input", x, {"...", "d"}, &batch);
  if (gamma)
    m.bind("weight", *gamma, {"d"});
  if (beta)
    m.bind("bias", *beta, {"d"});
  if (m.failed())
    return Val::poison();
  Shape shape = m.result({"d"}, batch);
  return Elaborator::tensorResult(
      e.create<LayerNormOp>(call.loc, getTensorType(shape, m.getElementType()),
                            x.value, gamma ? gamma->value : Value(),
                            beta ? beta->value : Value(),
                            e.getBuilder().getF64FloatAttr(eps)),
      shape);
}

static Val builtinRMSNorm(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input", "weight", "eps"}, 1);
  TensorVal x = args.tensor("input");
  std::optional<TensorVal> gamma = args.optionalTensor("weight");
  double eps = args.number("eps", 1e-6);
  if (args.failed() || failed(e.checkInForward(call.loc, "'rms_norm'")))
    return Val::poison();
  if (!(eps >= 0))
    return e.emitError(args.loc("eps"))
           << "eps must be non-negative, got " << eps;
  ShapeMatcher m(e, call.loc, "rms_norm");
  Shape batch;
  m.bind("input", x, {"...", "d"}, &batch);
  if (gamma)
    m.bind("weight", *gamma, {"d"});
  if (m.failed())
    return Val::poison();
  Shape shape = m.result({"d"}, batch);
  return Elaborator::tensorResult(
      e.create<RMSNormOp>(call.loc, getTensorType(shape, m.getElementType()),
                          x.value, gamma ? gamma->value : Value(),
                          e.getBuilder().getF64FloatAttr(eps)),
      shape);
}

static Val builtinEmbedding(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input", "weight"}, 2);
  TensorVal ids = args.tensor("input");
  TensorVal table = args.tensor("weight");
  if (args.failed() || failed(e.checkInForward(call.loc, "'embedding'")))
    return Val::poison();
  if (!isa<IntegerType>(ids.getElementType()))
    return e.emitError(args.loc("input"))
           << "'input' of embedding must be an integer tensor of indices, got "
           << ids.str();
  ShapeMatcher m(e, call.loc, "embedding");
  m.bind("weight", table, {"vocab", "dim"});
  if (m.failed())
    return Val::poison();
  Shape shape = ids.shape;
  shape.push_back(m.lookup("dim"));
  return Elaborator::tensorResult(
      e.create<EmbeddingOp>(call.loc,
                            getTensorType(shape, table.getElementType()),
                            table.value, ids.value),
      shape);
}

static Val builtinMatmul(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input", "other"}, 2);
  if (args.failed())
    return Val::poison();
  return e.buildMatmul(call.loc, args.get("input")->value,
                       args.get("other")->value, /*transposeRhs=*/false);
}

static Val builtinTranspose(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input", "dim0", "dim1"}, 3);
  TensorVal x = args.tensor("input");
  if (args.failed())
    return Val::poison();
  int64_t d0 = args.axis("dim0", x.getRank(), std::nullopt);
  int64_t d1 = args.axis("dim1", x.getRank(), std::nullopt);
  if (args.failed() || failed(e.checkInForward(call.loc, "'transpose'")))
    return Val::poison();
  SmallVector<int64_t> permutation =
      llvm::to_vector(llvm::seq<int64_t>(0, x.getRank()));
  std::swap(permutation[d0], permutation[d1]);
  return e.buildTranspose(call.loc, x, permutation);
}

static Val builtinPermute(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input", "dims"}, 2);
  TensorVal x = args.tensor("input");
  SmallVector<int64_t> dims = args.integers("dims");
  if (args.failed() || failed(e.checkInForward(call.loc, "'permute'")))
    return Val::poison();
  int64_t rank = x.getRank();
  SmallVector<bool> seen(rank, false);
  bool valid = static_cast<int64_t>(dims.size()) == rank;
  for (int64_t &dim : dims) {
    if (!valid)
      break;
    if (dim < -rank || dim >= rank) {
      valid = false;
      break;
    }
    dim = dim < 0 ? dim + rank : dim;
    valid = !seen[dim];
    seen[dim] = true;
  }
  if (!valid)
    return e.emitError(args.loc("dims"))
           << "dims of permute must be a permutation of the " << rank
           << " dimensions of " << x.str();
  return e.buildTranspose(call.loc, x, dims);
}

static Val builtinReshape(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input", "shape"}, 2);
  TensorVal x = args.tensor("input");
  if (args.failed() || failed(e.checkInForward(call.loc, "'reshape'")))
    return Val::poison();
  const Val &shapeArg = args.get("shape")->value;
  SMLoc shapeLoc = args.loc("shape");
  if (!shapeArg.is(Val::Kind::List))
    return e.emitError(shapeLoc)
           << "the shape of reshape is a list of sizes, such as [b, n, 4, -1]";

  Shape shape;
  SmallVector<Value> sizes; // index values of every result dim
  std::optional<size_t> inferred;
  int64_t knownProduct = 1;
  bool knownStatic = true;
  for (auto [i, entry] : llvm::enumerate(shapeArg.getList())) {
    if (entry.is(Val::Kind::Int)) {
      int64_t size = entry.getInt();
      if (size == -1 && !inferred) {
        inferred = i;
        shape.push_back(Dim::unknown());
        sizes.push_back(Value());
        continue;
      }
      if (size <= 0)
        return e.emitError(shapeLoc)
               << "reshape sizes must be positive (or one -1), got " << size;
      if (llvm::MulOverflow(knownProduct, size, knownProduct))
        return e.emitError(shapeLoc) << "reshape to a shape that is too large";
      shape.push_back(Dim::fixed(size));
      sizes.push_back(Value());
      continue;
    }
    if (entry.is(Val::Kind::Index)) {
      knownStatic = false;
      shape.push_back(Dim::named(entry.getIndexSymbol()));
      sizes.push_back(entry.getIndex());
      continue;
    }
    return e.emitError(shapeLoc)
           << "reshape sizes are ints or run-time sizes, got "
           << entry.describe();
  }

  bool inputStatic =
      llvm::all_of(x.shape, [](const Dim &d) { return d.isStatic(); });
  int64_t inputElements = 1;
  if (inputStatic)
    for (const Dim &d : x.shape)
      inputElements *= d.size;
  if (inferred) {
    if (inputStatic && knownStatic) {
      if (inputElements % knownProduct != 0)
        return e.emitError(shapeLoc)
               << "cannot reshape " << x.str() << " (" << inputElements
               << " elements) to " << formatShape(shape);
      shape[*inferred] = Dim::fixed(inputElements / knownProduct);
    } else {
      // The missing size is the element count over the product of the
      // others, computed at run time.
      auto product = [&](ArrayRef<Value> factors, int64_t constant) {
        Value result;
        for (Value factor : factors)
          result = result ? e.create<arith::MulIOp>(call.loc, result, factor)
                          : factor;
        if (!result)
          return e.getIndexConstant(call.loc, constant);
        if (constant != 1)
          result = e.create<arith::MulIOp>(
              call.loc, result, e.getIndexConstant(call.loc, constant));
        return result;
      };
      SmallVector<Value> inputSizes, knownSizes;
      int64_t inputConstant = 1;
      for (auto [axis, dim] : llvm::enumerate(x.shape)) {
        if (dim.isStatic())
          inputConstant *= dim.size;
        else
          inputSizes.push_back(e.getDimValue(call.loc, x, axis));
      }
      for (auto [i, size] : llvm::enumerate(sizes))
        if (i != *inferred && size)
          knownSizes.push_back(size);
      sizes[*inferred] =
          e.create<arith::DivUIOp>(call.loc, product(inputSizes, inputConstant),
                                   product(knownSizes, knownProduct));
    }
  } else if (inputStatic && knownStatic && inputElements != knownProduct) {
    return e.emitError(shapeLoc)
           << "cannot reshape " << x.str() << " (" << inputElements
           << " elements) to " << formatShape(shape) << " (" << knownProduct
           << " elements)";
  }
  SmallVector<Value> dynamicSizes;
  for (auto [dim, size] : llvm::zip(shape, sizes))
    if (!dim.isStatic())
      dynamicSizes.push_back(size);
  return e.buildReshape(call.loc, x, shape, dynamicSizes);
}

static Val builtinSplitHeads(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input", "heads"}, 2);
  TensorVal x = args.tensor("input");
  int64_t heads = args.integer("heads");
  if (args.failed() || failed(e.checkInForward(call.loc, "'split_heads'")))
    return Val::poison();
  if (heads <= 0)
    return e.emitError(args.loc("heads"))
           << "heads must be positive, got " << heads;
  ShapeMatcher m(e, call.loc, "split_heads");
  m.bind("input", x, {"batch", "length", "heads*head_dim"},
         /*leading=*/nullptr, /*anyElementType=*/true);
  if (m.failed())
    return Val::poison();
  Dim features = m.lookup("heads*head_dim");
  Dim headDim = Dim::unknown();
  if (features.isStatic()) {
    if (features.size % heads != 0)
      return e.emitError(call.loc)
             << "split_heads: the last dimension of " << x.str()
             << " is not divisible by heads = " << heads;
    headDim = Dim::fixed(features.size / heads);
  }
  Shape shape = {m.lookup("batch"), Dim::fixed(heads), m.lookup("length"),
                 headDim};
  return Elaborator::tensorResult(
      e.create<SplitHeadsOp>(call.loc, getTensorType(shape, x.getElementType()),
                             x.value, e.getBuilder().getI64IntegerAttr(heads)),
      shape);
}

static Val builtinMergeHeads(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input"}, 1);
  TensorVal x = args.tensor("input");
  if (args.failed() || failed(e.checkInForward(call.loc, "'merge_heads'")))
    return Val::poison();
  ShapeMatcher m(e, call.loc, "merge_heads");
  m.bind("input", x, {"batch", "heads", "length", "head_dim"},
         /*leading=*/nullptr, /*anyElementType=*/true);
  if (m.failed())
    return Val::poison();
  Dim heads = m.lookup("heads"), headDim = m.lookup("head_dim");
  Dim features = heads.isStatic() && headDim.isStatic()
                     ? Dim::fixed(heads.size * headDim.size)
                     : Dim::unknown();
  Shape shape = {m.lookup("batch"), m.lookup("length"), features};
  return Elaborator::tensorResult(
      e.create<MergeHeadsOp>(call.loc, getTensorType(shape, x.getElementType()),
                             x.value),
      shape);
}

static Val builtinCat(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"tensors", "dim"}, 1);
  SmallVector<TensorVal> inputs = args.tensors("tensors");
  if (args.failed())
    return Val::poison();
  int64_t rank = inputs.front().getRank();
  int64_t axis = args.axis("dim", rank, 0);
  if (args.failed() || failed(e.checkInForward(call.loc, "'cat'")))
    return Val::poison();
  Shape shape = inputs.front().shape;
  Type elementType = inputs.front().getElementType();
  for (const TensorVal &input : llvm::drop_begin(inputs)) {
    if (input.getElementType() != elementType || input.getRank() != rank)
      return e.emitError(call.loc)
             << "cat needs tensors of one element type and rank, got "
             << inputs.front().str() << " and " << input.str();
    for (int64_t dim = 0; dim < rank; ++dim) {
      const Dim &size = input.shape[dim];
      if (dim == axis) {
        shape[dim] = shape[dim].isStatic() && size.isStatic()
                         ? Dim::fixed(shape[dim].size + size.size)
                         : Dim::unknown();
        continue;
      }
      bool conflict =
          (shape[dim].isStatic() && size.isStatic() &&
           shape[dim].size != size.size) ||
          (!shape[dim].isStatic() && !size.isStatic() && shape[dim].symbol &&
           size.symbol && shape[dim].symbol != size.symbol);
      if (conflict)
        return e.emitError(call.loc)
               << "cat along dimension " << axis
               << " needs the other dimensions to agree, got "
               << inputs.front().str() << " and " << input.str();
      if (!shape[dim].isStatic() && (size.isStatic() || !shape[dim].symbol))
        shape[dim] = size;
    }
  }
  SmallVector<Value> values =
      llvm::map_to_vector(inputs, [](const TensorVal &t) { return t.value; });
  return Elaborator::tensorResult(
      e.create<ConcatOp>(call.loc, getTensorType(shape, elementType), values,
                         e.getBuilder().getI64IntegerAttr(axis)),
      shape);
}

static Val builtinSplit(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"tensor", "split_size_or_sections", "dim"}, 2);
  TensorVal x = args.tensor("tensor");
  if (args.failed())
    return Val::poison();
  int64_t axis = args.axis("dim", x.getRank(), 0);
  const ArgVal *sizesArg = args.get("split_size_or_sections");
  SmallVector<int64_t> sizes = args.integers("split_size_or_sections");
  if (args.failed() || failed(e.checkInForward(call.loc, "'split'")))
    return Val::poison();
  const Dim &dim = x.shape[axis];
  if (!dim.isStatic())
    return e.emitError(call.loc) << "split needs a static dimension; dimension "
                                 << axis << " of " << x.str() << " is not";
  if (llvm::any_of(sizes, [](int64_t s) { return s <= 0; }))
    return e.emitError(sizesArg->loc) << "split sizes must be positive";
  if (sizesArg->value.is(Val::Kind::Int)) {
    // Chunks of one size; the last takes the rest, as torch.split does.
    int64_t chunk = sizes.front();
    int64_t count = (dim.size + chunk - 1) / chunk;
    if (count > e.getOptions().maxRepeat)
      return e.emitError(sizesArg->loc)
             << "split into " << count << " pieces; the limit is "
             << e.getOptions().maxRepeat;
    sizes.assign(count, chunk);
    sizes.back() = dim.size - chunk * (count - 1);
  } else {
    int64_t total = 0;
    for (int64_t size : sizes)
      if (llvm::AddOverflow(total, size, total))
        break;
    if (total != dim.size)
      return e.emitError(sizesArg->loc)
             << "split sections add up to " << total << ", but dimension "
             << axis << " of " << x.str() << " is " << dim.size;
  }
  std::vector<Val> pieces;
  int64_t offset = 0;
  for (int64_t size : sizes) {
    if (size == dim.size) {
      pieces.push_back(Val::tensor(x));
      break;
    }
    pieces.push_back(e.buildSlice(
        call.loc, x, axis, e.getIndexConstant(call.loc, offset),
        e.getIndexConstant(call.loc, offset + size), Dim::fixed(size)));
    offset += size;
  }
  return Val::list(std::move(pieces));
}

/// sum, mean, max and min over dimensions.
static Val buildReduction(Elaborator &e, CallArgs &call, ReduceKind kind) {
  ArgReader args(e, call, {"input", "dim", "keepdim"}, 1);
  TensorVal x = args.tensor("input");
  bool keepdim = args.boolean("keepdim", false);
  if (args.failed())
    return Val::poison();
  int64_t rank = x.getRank();
  SmallVector<int64_t> axes;
  const ArgVal *dimArg = args.get("dim");
  if (!dimArg || dimArg->value.is(Val::Kind::None)) {
    axes.assign(llvm::seq<int64_t>(0, rank).begin(),
                llvm::seq<int64_t>(0, rank).end());
  } else {
    axes = args.integers("dim");
    if (args.failed())
      return Val::poison();
    for (int64_t &axis : axes) {
      if (axis < -rank || axis >= rank)
        return e.emitError(dimArg->loc)
               << "dimension " << axis
               << " is out of range for a tensor of rank " << rank;
      axis = axis < 0 ? axis + rank : axis;
    }
    llvm::sort(axes);
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
      return e.emitError(dimArg->loc) << "a dimension is reduced twice";
  }
  if (failed(e.checkInForward(call.loc, "'" + call.callee + "'")))
    return Val::poison();
  ShapeMatcher m(e, call.loc, call.callee);
  m.bind("input", x, {"..."});
  if (m.failed())
    return Val::poison();
  Shape shape;
  for (int64_t dim = 0; dim < rank; ++dim) {
    if (!llvm::is_contained(axes, dim))
      shape.push_back(x.shape[dim]);
    else if (keepdim)
      shape.push_back(Dim::fixed(1));
  }
  return Elaborator::tensorResult(
      e.create<ReduceOp>(call.loc, getTensorType(shape, x.getElementType()),
                         x.value, ReduceKindAttr::get(e.getContext(), kind),
                         e.getBuilder().getDenseI64ArrayAttr(axes),
                         keepdim ? e.getBuilder().getUnitAttr() : UnitAttr()),
      shape);
}

static Val builtinSum(Elaborator &e, CallArgs &call) {
  return buildReduction(e, call, ReduceKind::sum);
}
static Val builtinMean(Elaborator &e, CallArgs &call) {
  return buildReduction(e, call, ReduceKind::mean);
}

/// Elementwise maximum or minimum of two operands (numbers or tensors).
static Val buildExtremum(Elaborator &e, CallArgs &call, bool isMax) {
  ArgReader args(e, call, {"input", "other"}, 2);
  if (args.failed())
    return Val::poison();
  const Val &a = args.get("input")->value, &b = args.get("other")->value;
  if (a.isNumber() && b.isNumber()) {
    if (a.is(Val::Kind::Int) && b.is(Val::Kind::Int))
      return Val::integer(isMax ? std::max(a.getInt(), b.getInt())
                                : std::min(a.getInt(), b.getInt()));
    return Val::real(isMax ? std::max(a.getNumber(), b.getNumber())
                           : std::min(a.getNumber(), b.getNumber()));
  }
  return e.buildElementwise(call.loc,
                            isMax ? Elaborator::Elementwise::Max
                                  : Elaborator::Elementwise::Min,
                            a, b, "'" + call.callee + "'");
}

/// max and min: torch.max's overloads. A reduction unless the second
/// argument is a tensor or a float (then elementwise), or both are numbers.
static Val buildMaxOrMin(Elaborator &e, CallArgs &call, bool isMax) {
  bool elementwise = false;
  if (call.positional.size() >= 2) {
    const Val &first = call.positional[0].value;
    const Val &second = call.positional[1].value;
    elementwise = second.is(Val::Kind::Tensor) || second.is(Val::Kind::Float) ||
                  (first.isNumber() && second.isNumber());
  } else if (llvm::any_of(call.keywords,
                          [](auto &kw) { return kw.first == "other"; })) {
    elementwise = true;
  }
  if (elementwise)
    return buildExtremum(e, call, isMax);
  return buildReduction(e, call, isMax ? ReduceKind::max : ReduceKind::min);
}

static Val builtinMax(Elaborator &e, CallArgs &call) {
  return buildMaxOrMin(e, call, /*isMax=*/true);
}
static Val builtinMin(Elaborator &e, CallArgs &call) {
  return buildMaxOrMin(e, call, /*isMax=*/false);
}
static Val builtinMaximum(Elaborator &e, CallArgs &call) {
  return buildExtremum(e, call, /*isMax=*/true);
}
static Val builtinMinimum(Elaborator &e, CallArgs &call) {
  return buildExtremum(e, call, /*isMax=*/false);
}

/// A length argument: a positive compile-time int or a run-time size.
static FailureOr<Val> readLength(Elaborator &e, ArgReader &args,
                                 StringRef name) {
  const ArgVal *arg = args.get(name);
  if (!arg)
    return failure();
  const Val &value = arg->value;
  if (value.is(Val::Kind::Index))
    return value;
  if (value.is(Val::Kind::Int) && value.getInt() > 0)
    return value;
  return e.emitError(arg->loc) << "'" << name
                               << "' must be a positive int or a size such "
                                  "as n, got "
                               << value.describe();
}

static Val builtinArange(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"end"}, 1);
  if (args.failed() || failed(e.checkInForward(call.loc, "'arange'")))
    return Val::poison();
  FailureOr<Val> length = readLength(e, args, "end");
  if (failed(length))
    return Val::poison();
  Shape shape = {length->is(Val::Kind::Int)
                     ? Dim::fixed(length->getInt())
                     : Dim::named(length->getIndexSymbol())};
  if (length->is(Val::Kind::Int) &&
      failed(e.checkStaticSize(call.loc, {length->getInt()}, "arange")))
    return Val::poison();
  return Elaborator::tensorResult(
      e.create<ArangeOp>(call.loc,
                         getTensorType(shape, e.getBuilder().getI64Type()),
                         e.getIndexValue(call.loc, *length)),
      shape);
}

static Val builtinSinusoidalPE(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"length", "dim", "base"}, 2);
  int64_t dim = args.integer("dim");
  double base = args.number("base", 10000.0);
  if (args.failed() || failed(e.checkInForward(call.loc, "'sinusoidal_pe'")))
    return Val::poison();
  FailureOr<Val> length = readLength(e, args, "length");
  if (failed(length))
    return Val::poison();
  if (dim <= 0 || dim % 2 != 0)
    return e.emitError(args.loc("dim"))
           << "sinusoidal_pe pairs a sine and a cosine per frequency, so dim "
              "must be positive and even, got "
           << dim;
  if (!(base > 0))
    return e.emitError(args.loc("base"))
           << "base must be positive, got " << base;
  Dim rows = length->is(Val::Kind::Int) ? Dim::fixed(length->getInt())
                                        : Dim::named(length->getIndexSymbol());
  Shape shape = {rows, Dim::fixed(dim)};
  if (failed(e.checkStaticSize(call.loc, {dim}, "sinusoidal_pe")))
    return Val::poison();
  return Elaborator::tensorResult(
      e.create<SinusoidalPEOp>(
          call.loc, getTensorType(shape, e.getBuilder().getF32Type()),
          e.getIndexValue(call.loc, *length),
          e.getBuilder().getF64FloatAttr(base)),
      shape);
}

static Val builtinRope(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input", "theta", "rotary_dims"}, 1);
  TensorVal x = args.tensor("input");
  double theta = args.number("theta", 10000.0);
  std::optional<int64_t> rotaryDims = args.optionalInteger("rotary_dims");
  if (args.failed() || failed(e.checkInForward(call.loc, "'rope'")))
    return Val::poison();
  if (!(theta > 0))
    return e.emitError(args.loc("theta"))
           << "theta must be positive, got " << theta;
  ShapeMatcher m(e, call.loc, "rope");
  m.bind("input", x, {"batch", "heads", "n", "d"});
  if (m.failed())
    return Val::poison();
  Dim d = m.lookup("d");
  if (rotaryDims) {
    if (*rotaryDims <= 0 || *rotaryDims % 2 != 0 ||
        (d.isStatic() && *rotaryDims > d.size))
      return e.emitError(args.loc("rotary_dims"))
             << "rotary_dims must be positive, even and at most the head dim "
             << d.str() << ", got " << *rotaryDims;
  } else if (d.isStatic() && d.size % 2 != 0) {
    return e.emitError(call.loc)
           << "rope rotates pairs of features, so the head dim must be even "
              "(or set rotary_dims), got "
           << x.str();
  }
  return Elaborator::tensorResult(
      e.create<RopeOp>(call.loc, x.value.getType(), x.value,
                       e.getBuilder().getF64FloatAttr(theta),
                       rotaryDims
                           ? e.getBuilder().getI64IntegerAttr(*rotaryDims)
                           : IntegerAttr()),
      x.shape);
}

static Val builtinAlibiSlopes(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"heads"}, 1);
  int64_t heads = args.integer("heads");
  if (args.failed() || failed(e.checkInForward(call.loc, "'alibi_slopes'")))
    return Val::poison();
  if (heads <= 0 || heads > 65536)
    return e.emitError(args.loc("heads"))
           << "heads must be in [1, 65536], got " << heads;
  Shape shape = {Dim::fixed(heads)};
  return Elaborator::tensorResult(
      e.create<AlibiOp>(call.loc,
                        getTensorType(shape, e.getBuilder().getF32Type())),
      shape);
}

/// The mask arguments shared by attention and apply_mask.
static FailureOr<Attribute> readMaskArgs(Elaborator &e, ArgReader &args,
                                         SMLoc loc) {
  bool causal = args.boolean("causal", false);
  int64_t window = args.integer("window", 0);
  int64_t globalTokens = args.integer("global_tokens", 0);
  if (args.failed())
    return failure();
  return e.getMask(loc, causal, window, globalTokens);
}

static Val builtinApplyMask(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call,
                 {"scores", "causal", "window", "global_tokens", "lengths"}, 1);
  TensorVal scores = args.tensor("scores");
  std::optional<TensorVal> lengths = args.optionalTensor("lengths");
  FailureOr<Attribute> mask = readMaskArgs(e, args, call.loc);
  if (args.failed() || failed(mask) ||
      failed(e.checkInForward(call.loc, "'apply_mask'")))
    return Val::poison();
  ShapeMatcher m(e, call.loc, "apply_mask");
  m.bind("scores", scores, {"...", "n_q", "n_k"});
  if (lengths) {
    if (scores.getRank() < 3)
      return e.emitError(args.loc("lengths"))
             << "lengths need scores with a batch dimension [batch, ..., n_q, "
                "n_k], got "
             << scores.str();
    m.define("batch", scores.shape[0], "dim 0 of 'scores'");
    m.bindInteger("lengths", *lengths, {"batch"});
  }
  if (m.failed() || failed(checkMaskPositions(
                        e, call.loc, *mask, m.lookup("n_q"), m.lookup("n_k"))))
    return Val::poison();
  auto maskAttr = *mask ? cast<MaskAttr>(*mask)
                        : MaskAttr::get(e.getContext(), false, 0, 0);
  return Elaborator::tensorResult(
      e.create<ApplyMaskOp>(call.loc, scores.value.getType(), scores.value,
                            lengths ? lengths->value : Value(), maskAttr),
      scores.shape);
}

static Val builtinAttention(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call,
                 {"query", "key", "value", "causal", "window", "global_tokens",
                  "lengths", "bias", "alibi", "scale"},
                 3);
  TensorVal q = args.tensor("query");
  TensorVal k = args.tensor("key");
  TensorVal v = args.tensor("value");
  std::optional<TensorVal> lengths = args.optionalTensor("lengths");
  std::optional<TensorVal> bias = args.optionalTensor("bias");
  std::optional<TensorVal> alibi = args.optionalTensor("alibi");
  std::optional<double> scale = args.optionalNumber("scale");
  FailureOr<Attribute> mask = readMaskArgs(e, args, call.loc);
  if (args.failed() || failed(mask) ||
      failed(e.checkInForward(call.loc, "'attention'")))
    return Val::poison();
  ShapeMatcher m(e, call.loc, "attention");
  m.bind("query", q, {"batch", "heads", "n_q", "d"});
  m.bind("key", k, {"batch", "kv_heads", "n_k", "d"});
  m.bind("value", v, {"batch", "kv_heads", "n_k", "d_v"});
  if (m.failed())
    return Val::poison();
  Dim heads = m.lookup("heads"), kvHeads = m.lookup("kv_heads");
  if (heads.isStatic() && kvHeads.isStatic() && heads.size % kvHeads.size != 0)
    return e.emitError(call.loc)
           << "the " << heads.size << " query heads must be a multiple of the "
           << kvHeads.size << " key/value heads";
  if (lengths)
    m.bindInteger("lengths", *lengths, {"batch"});
  if (alibi)
    m.bind("alibi", *alibi, {"heads"});
  if (m.failed())
    return Val::poison();
  if (bias) {
    if (bias->getElementType() != m.getElementType())
      return e.emitError(args.loc("bias"))
             << "'bias' of attention is " << bias->str()
             << " but 'query' has element type "
             << formatElementType(m.getElementType());
    SmallVector<StringRef> symbols = {"batch", "heads", "n_q", "n_k"};
    int64_t rank = bias->getRank();
    bool fits = rank <= 4;
    for (int64_t dim = 0; fits && dim < rank; ++dim) {
      const Dim &b = bias->shape[dim];
      Dim target = m.lookup(symbols[4 - rank + dim]);
      fits = b.isOne() || !b.isStatic() || !target.isStatic() ||
             b.size == target.size;
    }
    if (!fits)
      return e.emitError(args.loc("bias"))
             << "'bias' of attention must broadcast to the scores [batch, "
                "heads, n_q, n_k] = "
             << formatShape(m.result(symbols)) << ", got " << bias->str();
    // A bias dim other than 1 fixes the score dim it is aligned with.
    for (int64_t dim = 0; dim < rank; ++dim) {
      const Dim &b = bias->shape[dim];
      StringRef symbol = symbols[4 - rank + dim];
      if (b.isStatic() && !b.isOne() && !m.lookup(symbol).isStatic())
        m.define(symbol, b, "'bias'");
    }
  }
  if (scale) {
    if (!(*scale > 0))
      return e.emitError(args.loc("scale"))
             << "scale must be positive, got " << *scale;
  } else if (!m.lookup("d").isStatic()) {
    return e.emitError(call.loc)
           << "attention needs scale= when the head dim is not static, got "
           << q.str();
  }
  if (failed(checkMaskPositions(e, call.loc, *mask, m.lookup("n_q"),
                                m.lookup("n_k"))))
    return Val::poison();
  Shape shape = m.result({"batch", "heads", "n_q", "d_v"});
  return Elaborator::tensorResult(
      e.create<AttentionOp>(
          call.loc, getTensorType(shape, m.getElementType()), q.value, k.value,
          v.value, lengths ? lengths->value : Value(),
          bias ? bias->value : Value(), alibi ? alibi->value : Value(),
          scale ? e.getBuilder().getF64FloatAttr(*scale) : FloatAttr(),
          cast_if_present<MaskAttr>(*mask)),
      shape);
}

static Val builtinMultiHeadAttention(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call,
                 {"input", "wq", "wk", "wv", "wo", "heads", "kv_heads", "kv",
                  "biases", "lengths", "causal", "window", "global_tokens",
                  "rope_theta", "alibi"},
                 6);
  Elaborator::MultiHeadAttentionOperands o;
  o.input = args.tensor("input");
  o.wq = args.tensor("wq");
  o.wk = args.tensor("wk");
  o.wv = args.tensor("wv");
  o.wo = args.tensor("wo");
  o.heads = args.integer("heads");
  o.kvHeads = args.optionalInteger("kv_heads").value_or(o.heads);
  o.kv = args.optionalTensor("kv");
  o.lengths = args.optionalTensor("lengths");
  o.ropeTheta = args.optionalNumber("rope_theta");
  o.alibi = args.boolean("alibi", false);
  if (const ArgVal *biases = args.get("biases");
      biases && !biases->value.is(Val::Kind::None)) {
    o.biases = args.tensors("biases");
    if (!args.failed() && o.biases.size() != 4)
      return e.emitError(biases->loc)
             << "biases of multi_head_attention are [bq, bk, bv, bo], got "
             << o.biases.size() << " tensors";
  }
  FailureOr<Attribute> mask = readMaskArgs(e, args, call.loc);
  if (args.failed() || failed(mask))
    return Val::poison();
  o.mask = *mask;
  if (o.ropeTheta && !(*o.ropeTheta > 0))
    return e.emitError(args.loc("rope_theta"))
           << "rope_theta must be positive, got " << *o.ropeTheta;
  return e.buildMultiHeadAttention(call.loc, o);
}

static Val builtinLinearAttention(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call,
                 {"query", "key", "value", "feature_map", "causal", "eps"}, 3);
  TensorVal q = args.tensor("query");
  TensorVal k = args.tensor("key");
  TensorVal v = args.tensor("value");
  StringRef featureMap = args.choice("feature_map", "elu_plus_one",
                                     {"elu_plus_one", "relu", "identity"});
  bool causal = args.boolean("causal", false);
  double eps = args.number("eps", 1e-6);
  if (args.failed() || failed(e.checkInForward(call.loc, "'linear_attention'")))
    return Val::poison();
  if (!(eps >= 0))
    return e.emitError(args.loc("eps"))
           << "eps must be non-negative, got " << eps;
  ShapeMatcher m(e, call.loc, "linear_attention");
  m.bind("query", q, {"batch", "heads", "n", "d"});
  m.bind("key", k, {"batch", "heads", "n", "d"});
  m.bind("value", v, {"batch", "heads", "n", "d_v"});
  if (m.failed())
    return Val::poison();
  Shape shape = m.result({"batch", "heads", "n", "d_v"});
  return Elaborator::tensorResult(
      e.create<LinearAttentionOp>(
          call.loc, getTensorType(shape, m.getElementType()), q.value, k.value,
          v.value,
          FeatureMapAttr::get(e.getContext(), *symbolizeFeatureMap(featureMap)),
          causal ? e.getBuilder().getUnitAttr() : UnitAttr(),
          e.getBuilder().getF64FloatAttr(eps)),
      shape);
}

static Val builtinHippo(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"state"}, 1);
  int64_t state = args.integer("state");
  if (args.failed() || failed(e.checkInForward(call.loc, "'hippo'")))
    return Val::poison();
  // The matrices are constants of state^2 elements.
  if (state <= 0 || state > 4096)
    return e.emitError(args.loc("state"))
           << "the HiPPO state size must be in [1, 4096], got " << state;
  Type f32 = e.getBuilder().getF32Type();
  Shape a = {Dim::fixed(state), Dim::fixed(state)}, b = {Dim::fixed(state)};
  auto op =
      e.create<HippoOp>(call.loc, getTensorType(a, f32), getTensorType(b, f32));
  return Val::list({Val::tensor({op.getA(), a}), Val::tensor({op.getB(), b})});
}

static Val builtinSSM(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call,
                 {"input", "A", "B", "C", "D", "step", "discretization"}, 6);
  TensorVal u = args.tensor("input");
  TensorVal a = args.tensor("A");
  TensorVal b = args.tensor("B");
  TensorVal c = args.tensor("C");
  TensorVal d = args.tensor("D");
  double step = args.number("step");
  StringRef rule = args.choice("discretization", "zoh", {"zoh", "bilinear"});
  if (args.failed() || failed(e.checkInForward(call.loc, "'ssm'")))
    return Val::poison();
  if (!(step > 0))
    return e.emitError(args.loc("step"))
           << "step must be positive, got " << step;
  ShapeMatcher m(e, call.loc, "ssm");
  m.bind("input", u, {"batch", "L", "H"});
  m.bind("A", a, {"N", "N"});
  m.bind("B", b, {"H", "N"});
  m.bind("C", c, {"H", "N"});
  m.bind("D", d, {"H"});
  if (m.failed())
    return Val::poison();
  Shape shape = m.result({"batch", "L", "H"});
  return Elaborator::tensorResult(
      e.create<SSMOp>(call.loc, getTensorType(shape, m.getElementType()),
                      u.value, a.value, b.value, c.value, d.value,
                      e.getBuilder().getF64FloatAttr(step),
                      DiscretizationAttr::get(e.getContext(),
                                              *symbolizeDiscretization(rule))),
      shape);
}

static Val builtinSelectiveScan(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call,
                 {"input", "delta", "A", "B", "C", "D", "z", "delta_bias",
                  "delta_softplus"},
                 5);
  TensorVal u = args.tensor("input");
  TensorVal delta = args.tensor("delta");
  TensorVal a = args.tensor("A");
  TensorVal b = args.tensor("B");
  TensorVal c = args.tensor("C");
  std::optional<TensorVal> d = args.optionalTensor("D");
  std::optional<TensorVal> z = args.optionalTensor("z");
  std::optional<TensorVal> deltaBias = args.optionalTensor("delta_bias");
  bool softplus = args.boolean("delta_softplus", false);
  if (args.failed() || failed(e.checkInForward(call.loc, "'selective_scan'")))
    return Val::poison();
  ShapeMatcher m(e, call.loc, "selective_scan");
  m.bind("input", u, {"batch", "L", "D"});
  m.bind("delta", delta, {"batch", "L", "D"});
  m.bind("A", a, {"D", "N"});
  m.bind("B", b, {"batch", "L", "N"});
  m.bind("C", c, {"batch", "L", "N"});
  if (d)
    m.bind("D", *d, {"D"});
  if (z)
    m.bind("z", *z, {"batch", "L", "D"});
  if (deltaBias)
    m.bind("delta_bias", *deltaBias, {"D"});
  if (m.failed())
    return Val::poison();
  Shape shape = m.result({"batch", "L", "D"});
  return Elaborator::tensorResult(
      e.create<SelectiveScanOp>(
          call.loc, getTensorType(shape, m.getElementType()), u.value,
          delta.value, a.value, b.value, c.value, d ? d->value : Value(),
          z ? z->value : Value(), deltaBias ? deltaBias->value : Value(),
          softplus ? e.getBuilder().getUnitAttr() : UnitAttr()),
      shape);
}

static Val builtinCausalConv1d(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input", "weight", "bias"}, 2);
  TensorVal x = args.tensor("input");
  TensorVal w = args.tensor("weight");
  std::optional<TensorVal> bias = args.optionalTensor("bias");
  if (args.failed() || failed(e.checkInForward(call.loc, "'causal_conv1d'")))
    return Val::poison();
  // nn.Conv1d(groups=C) stores the weight as [C, 1, K]; the op takes [C, K].
  if (w.getRank() == 3) {
    if (!w.shape[1].isOne())
      return e.emitError(args.loc("weight"))
             << "the weight of a depthwise convolution is [C, K] or [C, 1, "
                "K], got "
             << w.str();
    Shape squeezed = {w.shape[0], w.shape[2]};
    SmallVector<Value> sizes;
    for (unsigned axis : {0u, 2u})
      if (!w.shape[axis].isStatic())
        sizes.push_back(e.getDimValue(call.loc, w, axis));
    Val reshaped = e.buildReshape(call.loc, w, squeezed, sizes);
    w = reshaped.getTensor();
  }
  ShapeMatcher m(e, call.loc, "causal_conv1d");
  m.bind("input", x, {"batch", "L", "C"});
  m.bind("weight", w, {"C", "K"});
  if (bias)
    m.bind("bias", *bias, {"C"});
  if (m.failed())
    return Val::poison();
  Shape shape = m.result({"batch", "L", "C"});
  return Elaborator::tensorResult(
      e.create<Conv1dOp>(call.loc, getTensorType(shape, m.getElementType()),
                         x.value, w.value, bias ? bias->value : Value()),
      shape);
}

static Val builtinCrossEntropy(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call,
                 {"input", "target", "label_smoothing", "ignore_index"}, 2);
  TensorVal logits = args.tensor("input");
  TensorVal targets = args.tensor("target");
  double smoothing = args.number("label_smoothing", 0.0);
  int64_t ignoreIndex = args.integer("ignore_index", -100);
  if (args.failed() || failed(e.checkInForward(call.loc, "'cross_entropy'")))
    return Val::poison();
  if (!(smoothing >= 0 && smoothing <= 1))
    return e.emitError(args.loc("label_smoothing"))
           << "label_smoothing must be in [0, 1], got " << smoothing;
  ShapeMatcher m(e, call.loc, "cross_entropy");
  Shape positions;
  m.bind("input", logits, {"...", "C"}, &positions);
  if (m.failed())
    return Val::poison();
  bool matches = isa<IntegerType>(targets.getElementType()) &&
                 targets.shape.size() == positions.size();
  for (size_t i = 0; matches && i < positions.size(); ++i) {
    const Dim &t = targets.shape[i], &p = positions[i];
    matches = !(t.isStatic() && p.isStatic() && t.size != p.size) &&
              !(!t.isStatic() && !p.isStatic() && t.symbol && p.symbol &&
                t.symbol != p.symbol);
  }
  if (!matches)
    return e.emitError(args.loc("target"))
           << "'target' of cross_entropy must be class indices of shape "
           << formatShape(positions) << " (the logits without their last "
           << "dimension), got " << targets.str();
  OpBuilder &b = e.getBuilder();
  return Elaborator::tensorResult(
      e.create<CrossEntropyOp>(call.loc, getTensorType({}, m.getElementType()),
                               logits.value, targets.value,
                               b.getF64FloatAttr(smoothing),
                               b.getI64IntegerAttr(ignoreIndex)),
      Shape());
}

static Val builtinSize(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input", "dim"}, 2);
  TensorVal x = args.tensor("input");
  if (args.failed())
    return Val::poison();
  int64_t axis = args.axis("dim", x.getRank(), std::nullopt);
  if (args.failed())
    return Val::poison();
  const Dim &dim = x.shape[axis];
  if (dim.isStatic())
    return Val::integer(dim.size);
  return Val::index(e.getDimValue(call.loc, x, axis), dim.symbol);
}

static Val builtinRange(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"start", "stop"}, 1);
  int64_t first = args.integer("start");
  std::optional<int64_t> second = args.optionalInteger("stop");
  if (args.failed())
    return Val::poison();
  int64_t start = second ? first : 0, stop = second ? *second : first;
  int64_t count;
  if (llvm::SubOverflow(stop, start, count) || count > e.getOptions().maxRepeat)
    return e.emitError(call.loc) << "range(" << start << ", " << stop
                                 << ") is longer than the limit of "
                                 << e.getOptions().maxRepeat << " elements";
  if (failed(e.checkBudget(call.loc, std::max<int64_t>(count, 0))))
    return Val::poison();
  std::vector<Val> values;
  for (int64_t i = start; i < stop; ++i)
    values.push_back(Val::integer(i));
  return Val::list(std::move(values));
}

/// ceil and floor of a compile-time number, as an int.
static Val buildRounding(Elaborator &e, CallArgs &call, bool up) {
  ArgReader args(e, call, {"input"}, 1);
  double x = args.number("input");
  if (args.failed())
    return Val::poison();
  double rounded = up ? std::ceil(x) : std::floor(x);
  if (!(std::fabs(rounded) < 9.0e18))
    return e.emitError(call.loc)
           << "'" << call.callee << "' of " << x << " does not fit an int";
  return Val::integer(static_cast<int64_t>(rounded));
}
static Val builtinCeil(Elaborator &e, CallArgs &call) {
  return buildRounding(e, call, /*up=*/true);
}
static Val builtinFloor(Elaborator &e, CallArgs &call) {
  return buildRounding(e, call, /*up=*/false);
}

namespace {
struct BuiltinEntry {
  StringRef name;
  BuiltinFn fn;
};
} // namespace

/// Every builtin function, by name.
static const BuiltinEntry kBuiltins[] = {
    {"exp", unaryMath},
    {"log", unaryMath},
    {"sqrt", unaryMath},
    {"rsqrt", unaryMath},
    {"abs", unaryMath},
    {"tanh", unaryMath},
    {"sigmoid", unaryMath},
    {"relu", unaryActivation},
    {"silu", unaryActivation},
    {"gelu", builtinGelu},
    {"elu", builtinElu},
    {"softplus", builtinSoftplus},
    {"dropout", builtinDropout},
    {"softmax", builtinSoftmax},
    {"linear", builtinLinear},
    {"layer_norm", builtinLayerNorm},
    {"rms_norm", builtinRMSNorm},
    {"embedding", builtinEmbedding},
    {"matmul", builtinMatmul},
    {"transpose", builtinTranspose},
    {"permute", builtinPermute},
    {"reshape", builtinReshape},
    {"split_heads", builtinSplitHeads},
    {"merge_heads", builtinMergeHeads},
    {"cat", builtinCat},
    {"split", builtinSplit},
    {"sum", builtinSum},
    {"mean", builtinMean},
    {"max", builtinMax},
    {"min", builtinMin},
    {"maximum", builtinMaximum},
    {"minimum", builtinMinimum},
    {"arange", builtinArange},
    {"sinusoidal_pe", builtinSinusoidalPE},
    {"rope", builtinRope},
    {"alibi_slopes", builtinAlibiSlopes},
    {"apply_mask", builtinApplyMask},
    {"attention", builtinAttention},
    {"multi_head_attention", builtinMultiHeadAttention},
    {"linear_attention", builtinLinearAttention},
    {"hippo", builtinHippo},
    {"ssm", builtinSSM},
    {"selective_scan", builtinSelectiveScan},
    {"causal_conv1d", builtinCausalConv1d},
    {"cross_entropy", builtinCrossEntropy},
    {"size", builtinSize},
    {"range", builtinRange},
    {"ceil", builtinCeil},
    {"floor", builtinFloor},
};

std::optional<Callable> Elaborator::lookupBuiltin(StringRef name) {
  for (auto [id, entry] : llvm::enumerate(kBuiltins))
    if (entry.name == name)
      return Callable{Callable::Kind::BuiltinFunction, entry.name,
                      static_cast<unsigned>(id), nullptr, nullptr};
  if (std::optional<unsigned> id = lookupBuiltinModule(name))
    return Callable{Callable::Kind::BuiltinModule, getBuiltinModuleName(*id),
                    *id, nullptr, nullptr};
  return std::nullopt;
}

Val Elaborator::callBuiltinFunction(unsigned id, CallArgs &args) {
  return kBuiltins[id].fn(*this, args);
}

Val Elaborator::callBuiltinFunction(StringRef name, SMLoc loc,
                                    ArrayRef<Val> operands) {
  std::optional<Callable> callable = lookupBuiltin(name);
  assert(callable && callable->kind == Callable::Kind::BuiltinFunction &&
         "not a builtin function");
  CallArgs args;
  args.loc = loc;
  args.callee = name.str();
  for (const Val &operand : operands)
    args.positional.push_back({operand, loc});
  return callBuiltinFunction(callable->builtinID, args);
}
