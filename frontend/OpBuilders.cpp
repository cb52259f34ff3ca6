//===- OpBuilders.cpp - seq ops shared by operators and builtins ----------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The ops that several constructs build: elementwise arithmetic and
// comparisons (operators and maximum/minimum), casts, matrix products (`@`, matmul), transposes, reshapes,
// slices, unary math, masks and multi-head attention (the builtin function
// and the MultiHeadAttention module).
//
//===----------------------------------------------------------------------===//

#include "frontend/Elaborator.h"

#include "dialect/Seq/IR/SeqOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <functional>

using namespace mlir;
using namespace mlir::seq;
using namespace mlir::seq::frontend;
using llvm::SMLoc;

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
  case Elementwise::Eq:
  case Elementwise::Ne:
  case Elementwise::Lt:
  case Elementwise::Le:
  case Elementwise::Gt:
  case Elementwise::Ge: {
    ComparePredicate predicate =
        kind == Elementwise::Eq   ? ComparePredicate::eq
        : kind == Elementwise::Ne ? ComparePredicate::ne
        : kind == Elementwise::Lt ? ComparePredicate::lt
        : kind == Elementwise::Le ? ComparePredicate::le
        : kind == Elementwise::Gt ? ComparePredicate::gt
                                  : ComparePredicate::ge;
    op = create<CompareOp>(loc, type, predicate, a->value, b->value);
    break;
  }
  }
  return tensorResult(op, std::move(*shape));
}

Val Elaborator::buildCast(SMLoc loc, const TensorVal &input, Type elementType) {
  if (input.getElementType() == elementType)
    return Val::tensor(input);
  return tensorResult(create<CastOp>(loc,
                                     getTensorType(input.shape, elementType),
                                     input.value),
                      input.shape);
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

LogicalResult Elaborator::checkMaskPositions(SMLoc loc, Attribute mask,
                                             const Dim &queries,
                                             const Dim &keys) {
  if (!mask)
    return success();
  bool conflict =
      (queries.isStatic() && keys.isStatic() && queries.size != keys.size) ||
      (!queries.isStatic() && !keys.isStatic() && queries.symbol &&
       keys.symbol && queries.symbol != keys.symbol);
  if (!conflict)
    return success();
  return emitError(loc)
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
  if (o.kv &&
      failed(checkMaskPositions(loc, o.mask, m.lookup("n"), m.lookup("n_kv"))))
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

FailureOr<Elaborator::KVCache>
Elaborator::buildKVCache(SMLoc loc, StringRef what, const TensorVal &k,
                         const TensorVal &v, const TensorVal &pos,
                         int64_t maxLen, const std::string &path) {
  StringRef article = StringRef("aeiou").contains(what.front()) ? "an " : "a ";
  ShapeMatcher m(*this, loc, what);
  m.bind("key", k, {"batch", "kv_heads", "n", "d"});
  m.bind("value", v, {"batch", "kv_heads", "n", "d_v"});
  m.bindInteger("pos", pos, {"batch"});
  if (m.failed())
    return failure();
  // The runtime checks pos + n <= max_len before the model runs, so pos must
  // be an input it can read.
  auto posArg = dyn_cast<BlockArgument>(pos.value);
  if (!posArg || posArg.getOwner() != &func.getBody().front() ||
      posArg.getArgNumber() >= inputs.size()) {
    emitError(loc) << "pos= of " << article << what
                   << " with a KV cache must be a model input (the runtime "
                      "checks pos + n against the cache length before the "
                      "model runs)";
    return failure();
  }
  std::string posName = inputs[posArg.getArgNumber()].name;
  Dim batch = m.lookup("batch"), n = m.lookup("n");
  if (!batch.isStatic() && !batch.symbol) {
    emitError(loc) << "the batch dimension of " << article << what
                   << " with a KV cache must be a size or a named dimension "
                      "of an input, got "
                   << k.str();
    return failure();
  }
  if (!n.isStatic() && !n.symbol) {
    emitError(loc) << "the sequence dimension of " << article << what
                   << " with a KV cache must be a size or a named dimension "
                      "of an input, got "
                   << k.str();
    return failure();
  }
  for (StringRef symbol : {"kv_heads", "d", "d_v"})
    if (!m.lookup(symbol).isStatic())
      return emitError(loc) << "the heads and head dims of " << article
                            << what
                            << " with a KV cache must be static, got keys "
                            << k.str() << " and values " << v.str();
  if (n.isStatic() && n.size > maxLen) {
    emitError(loc) << "a call with " << n.size
                   << " tokens does not fit a KV cache of " << maxLen
                   << " positions";
    return failure();
  }
  std::string kName = joinPath(path, "k_cache");
  std::string vName = joinPath(path, "v_cache");
  if (llvm::any_of(states,
                   [&](const StateInfo &s) { return s.name == kName; })) {
    std::string where = path.empty() ? "" : " '" + path + "'";
    return emitError(loc) << "the " << what << where
                          << " with a KV cache is called more than once in "
                             "forward; each call needs its own cache";
  }

  auto dimAttr = [&](const Dim &dim) -> Attribute {
    if (dim.isStatic())
      return builder.getI64IntegerAttr(dim.size);
    return dim.symbol;
  };
  auto cacheShape = [&](const Dim &headDim) -> Shape {
    return {batch, m.lookup("kv_heads"), Dim::fixed(maxLen), headDim};
  };
  DictionaryAttr write = builder.getDictionaryAttr(
      {builder.getNamedAttr("input", builder.getStringAttr(posName)),
       builder.getNamedAttr("count", dimAttr(n)),
       builder.getNamedAttr("axis", builder.getI64IntegerAttr(2))});
  // The state arguments, after every parameter.
  Block *entry = &func.getBody().front();
  auto declareCache = [&](const std::string &name, const TensorVal &rows,
                          const Dim &headDim) {
    Shape shape = cacheShape(headDim);
    RankedTensorType type = getTensorType(shape, rows.getElementType());
    Value arg = entry->addArgument(type, getLoc(loc));
    states.push_back(
        {name, builder.getArrayAttr(llvm::map_to_vector(shape, dimAttr)),
         write, DictionaryAttr()});
    return arg;
  };
  Value kCache = declareCache(kName, k, m.lookup("d"));
  Value vCache = declareCache(vName, v, m.lookup("d_v"));
  // The new rows go into the cache in place; queries at pos[r] + i see its
  // positions up to their own through the causal mask.
  KVCache cache;
  cache.keys = create<CacheWriteOp>(loc, kCache.getType(), kCache, k.value,
                                    pos.value);
  cache.values = create<CacheWriteOp>(loc, vCache.getType(), vCache, v.value,
                                      pos.value);
  return cache;
}

Val Elaborator::buildCachedAttention(SMLoc loc,
                                     const MultiHeadAttentionOperands &o,
                                     const TensorVal &pos, int64_t maxLen,
                                     const std::string &path) {
  StringRef op = "MultiHeadAttention";
  if (failed(checkInForward(loc, op)))
    return Val::poison();
  ShapeMatcher m(*this, loc, op);
  m.bind("input", o.input, {"batch", "n", "model_dim"});
  m.bind("wq", o.wq, {"heads*d", "model_dim"});
  m.bind("wk", o.wk, {"kv_heads*d", "model_dim"});
  m.bind("wv", o.wv, {"kv_heads*d", "model_dim"});
  m.bind("wo", o.wo, {"model_dim", "heads*d"});
  m.bindInteger("pos", pos, {"batch"});
  if (m.failed())
    return Val::poison();
  Dim batch = m.lookup("batch"), n = m.lookup("n");
  Dim modelDim = m.lookup("model_dim");
  int64_t heads = o.heads, kvHeads = o.kvHeads;
  int64_t headDim = modelDim.size / heads;
  Type elementType = m.getElementType();
  auto tensorType = [&](Shape shape) {
    return getTensorType(shape, elementType);
  };

  auto bias = [&](unsigned i) {
    return o.biases.empty() ? Value() : o.biases[i].value;
  };
  auto project = [&](const TensorVal &w, Value b, int64_t numHeads) {
    Value proj = create<LinearOp>(
        loc, tensorType({batch, n, Dim::fixed(numHeads * headDim)}),
        o.input.value, w.value, b);
    Shape shape = {batch, Dim::fixed(numHeads), n, Dim::fixed(headDim)};
    return TensorVal{create<SplitHeadsOp>(loc, tensorType(shape), proj,
                                          builder.getI64IntegerAttr(numHeads)),
                     shape};
  };
  TensorVal q = project(o.wq, bias(0), heads);
  TensorVal k = project(o.wk, bias(1), kvHeads);
  TensorVal v = project(o.wv, bias(2), kvHeads);
  if (o.ropeTheta) {
    FloatAttr theta = builder.getF64FloatAttr(*o.ropeTheta);
    q.value = create<RopeOp>(loc, q.value.getType(), q.value, pos.value, theta,
                             IntegerAttr());
    k.value = create<RopeOp>(loc, k.value.getType(), k.value, pos.value, theta,
                             IntegerAttr());
  }
  FailureOr<KVCache> cache =
      buildKVCache(loc, op, k, v, pos, maxLen, path);
  if (failed(cache))
    return Val::poison();
  Value slopes;
  if (o.alibi)
    slopes = create<AlibiOp>(loc, RankedTensorType::get({heads}, elementType));
  Value attn = create<AttentionOp>(
      loc, tensorType({batch, Dim::fixed(heads), n, Dim::fixed(headDim)}),
      q.value, cache->keys, cache->values, /*lengths=*/Value(),
      /*bias=*/Value(), slopes, pos.value,
      /*scale=*/FloatAttr(), cast_if_present<MaskAttr>(o.mask));
  Value merged = create<MergeHeadsOp>(
      loc, tensorType({batch, n, Dim::fixed(heads * headDim)}), attn);
  Shape shape = {batch, n, modelDim};
  return tensorResult(
      create<LinearOp>(loc, tensorType(shape), merged, o.wo.value, bias(3)),
      shape);
}
