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
// Builtin functions
//===----------------------------------------------------------------------===//

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

/// The element types a tensor may have, as the source spells them.
static const StringRef kElementTypeNames[] = {"f16", "bf16", "f32",
                                              "f64", "i32",  "i64"};

/// cast(input, dtype), and x.to(dtype): `seq.cast`.
static Val builtinCast(Elaborator &e, CallArgs &call) {
  ArgReader args(e, call, {"input", "dtype"}, 2);
  TensorVal x = args.tensor("input");
  StringRef dtype = args.choice("dtype", "f32", kElementTypeNames);
  if (args.failed() || failed(e.checkInForward(call.loc, "'cast'")))
    return Val::poison();
  return e.buildCast(call.loc, x, e.getElementTypeByName(dtype));
}

/// The builtins on tensors and numbers, by name.
static const BuiltinFunction kTensorBuiltins[] = {
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
    {"size", builtinSize},
    {"range", builtinRange},
    {"ceil", builtinCeil},
    {"floor", builtinFloor},
    {"cast", builtinCast},
};

ArrayRef<BuiltinFunction> mlir::seq::frontend::getTensorBuiltins() {
  return kTensorBuiltins;
}

std::optional<Callable> Elaborator::lookupBuiltin(StringRef name) {
  unsigned id = 0;
  for (ArrayRef<BuiltinFunction> table :
       {getTensorBuiltins(), getSequenceBuiltins()}) {
    for (const BuiltinFunction &entry : table) {
      if (entry.name == name)
        return Callable{Callable::Kind::BuiltinFunction, entry.name, id,
                        nullptr, nullptr};
      ++id;
    }
  }
  if (std::optional<unsigned> id = lookupBuiltinModule(name))
    return Callable{Callable::Kind::BuiltinModule, getBuiltinModuleName(*id),
                    *id, nullptr, nullptr};
  return std::nullopt;
}

Val Elaborator::callBuiltinFunction(unsigned id, CallArgs &args) {
  ArrayRef<BuiltinFunction> tensor = getTensorBuiltins();
  if (id < tensor.size())
    return tensor[id].fn(*this, args);
  return getSequenceBuiltins()[id - tensor.size()].fn(*this, args);
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
