//===- SequenceBuiltins.cpp - builtins of sequence models -----------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The builtins that are specific to sequence models: position encodings,
// attention (masks, scores, multi-head, linear), state-space models (HiPPO,
// S4, Mamba's selective scan and causal convolution) and the loss. Each
// checks its operands the way its op's verifier will and names them by the
// builtin's parameters.
//
//===----------------------------------------------------------------------===//

#include "frontend/Elaborator.h"

#include "dialect/Seq/IR/SeqOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::seq;
using namespace mlir::seq::frontend;
using llvm::SMLoc;

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
  ArgReader args(e, call, {"input", "theta", "rotary_dims", "pos"}, 1);
  TensorVal x = args.tensor("input");
  double theta = args.number("theta", 10000.0);
  std::optional<int64_t> rotaryDims = args.optionalInteger("rotary_dims");
  std::optional<TensorVal> pos = args.optionalTensor("pos");
  if (args.failed() || failed(e.checkInForward(call.loc, "'rope'")))
    return Val::poison();
  if (!(theta > 0))
    return e.emitError(args.loc("theta"))
           << "theta must be positive, got " << theta;
  ShapeMatcher m(e, call.loc, "rope");
  m.bind("input", x, {"batch", "heads", "n", "d"});
  if (pos)
    m.bindInteger("pos", *pos, {"batch"});
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
                       pos ? pos->value : Value(),
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
  if (m.failed() || failed(e.checkMaskPositions(
                        call.loc, *mask, m.lookup("n_q"), m.lookup("n_k"))))
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
                  "lengths", "bias", "alibi", "scale", "pos", "cache"},
                 3);
  TensorVal q = args.tensor("query");
  TensorVal k = args.tensor("key");
  TensorVal v = args.tensor("value");
  std::optional<TensorVal> lengths = args.optionalTensor("lengths");
  std::optional<TensorVal> bias = args.optionalTensor("bias");
  std::optional<TensorVal> alibi = args.optionalTensor("alibi");
  std::optional<double> scale = args.optionalNumber("scale");
  std::optional<TensorVal> pos = args.optionalTensor("pos");
  std::optional<int64_t> cache = args.optionalInteger("cache");
  FailureOr<Attribute> mask = readMaskArgs(e, args, call.loc);
  if (args.failed() || failed(mask) ||
      failed(e.checkInForward(call.loc, "'attention'")))
    return Val::poison();
  if (cache) {
    // A cache holds the keys of earlier calls, which only a causal decoder
    // may see again unchanged; the new keys go to pos[r] .., so the call
    // attends to the cache's positions before pos + n and nothing else.
    if (*cache <= 0)
      return e.emitError(args.loc("cache"))
             << "cache= is the number of positions of the KV cache, which "
                "must be positive, got "
             << *cache;
    if (!*mask || !cast<MaskAttr>(*mask).getCausal())
      return e.emitError(args.loc("cache"))
             << "a KV cache (cache=" << *cache
             << ") needs causal=True: earlier tokens must not see later ones";
    if (!pos)
      return e.emitError(args.loc("cache"))
             << "attention with a KV cache (cache=" << *cache
             << ") takes pos= (the position of each batch row's first token)";
    for (StringRef name : {"lengths", "bias"})
      if (args.get(name) && !args.get(name)->value.is(Val::Kind::None))
        return e.emitError(args.loc(name))
               << "attention with a KV cache takes no " << name
               << " (it attends to the cache's positions before pos + n"
                  "; a left-padded batch takes pos = -pad per row instead)";
  }
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
  if (pos)
    m.bindInteger("pos", *pos, {"batch"});
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
  // With `pos` the queries sit at absolute positions of the keys' sequence.
  if (!pos && failed(e.checkMaskPositions(call.loc, *mask, m.lookup("n_q"),
                                          m.lookup("n_k"))))
    return Val::poison();
  Shape shape = m.result({"batch", "heads", "n_q", "d_v"});
  Value keys = k.value, values = v.value;
  if (cache) {
    // The call's own keys and values are the queries' rows, written into
    // the cache of the calling module at pos.
    Dim nq = m.lookup("n_q"), nk = m.lookup("n_k");
    if (!(nq == nk) || (!nq.isStatic() && !nq.symbol))
      return e.emitError(call.loc)
             << "attention with a KV cache takes the keys and values of its "
                "queries' tokens (n_q = n_k), got "
             << q.str() << " and " << k.str();
    FailureOr<Elaborator::KVCache> kv = e.buildKVCache(
        call.loc, "attention", k, v, *pos, *cache, e.getCurrentPath());
    if (failed(kv))
      return Val::poison();
    keys = kv->keys;
    values = kv->values;
  }
  return Elaborator::tensorResult(
      e.create<AttentionOp>(
          call.loc, getTensorType(shape, m.getElementType()), q.value, keys,
          values, lengths ? lengths->value : Value(),
          bias ? bias->value : Value(), alibi ? alibi->value : Value(),
          pos ? pos->value : Value(),
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
                 {"query", "key", "value", "feature_map", "causal", "eps",
                  "initial_state", "initial_normalizer", "return_state", "pos",
                  "lengths"},
                 3);
  TensorVal q = args.tensor("query");
  TensorVal k = args.tensor("key");
  TensorVal v = args.tensor("value");
  StringRef featureMap = args.choice("feature_map", "elu_plus_one",
                                     {"elu_plus_one", "relu", "identity"});
  bool causal = args.boolean("causal", false);
  double eps = args.number("eps", 1e-6);
  std::optional<TensorVal> s0 = args.optionalTensor("initial_state");
  std::optional<TensorVal> z0 = args.optionalTensor("initial_normalizer");
  bool returnState = args.boolean("return_state", false);
  std::optional<TensorVal> pos = args.optionalTensor("pos");
  std::optional<TensorVal> lengths = args.optionalTensor("lengths");
  if (args.failed() || failed(e.checkInForward(call.loc, "'linear_attention'")))
    return Val::poison();
  if (pos && !causal)
    return e.emitError(args.loc("pos"))
           << "linear_attention keeps a state with pos= only when "
              "causal=True (the non-causal form has no recurrence)";
  if (pos && (s0 || returnState))
    return e.emitError(args.loc(s0 ? "initial_state" : "return_state"))
           << "linear_attention with pos= keeps its state '"
           << joinPath(e.getCurrentPath(), "kv_state")
           << "' across calls; it takes no "
           << (s0 ? "initial_state" : "return_state");
  if (lengths && !pos)
    return e.emitError(args.loc("lengths"))
           << "lengths= says where each row's state is taken; it needs pos= "
              "(a linear_attention without pos= keeps no state)";
  if (!(eps >= 0))
    return e.emitError(args.loc("eps"))
           << "eps must be non-negative, got " << eps;
  // The state is the prefix sums of the causal form.
  if (!causal && (s0 || z0 || returnState)) {
    StringRef name = s0   ? "initial_state"
                     : z0 ? "initial_normalizer"
                          : "return_state";
    return e.emitError(args.loc(name))
           << "linear_attention carries a state only when causal=True (the "
              "non-causal form has no recurrence), got "
           << name << "= without causal=True";
  }
  if (bool(s0) != bool(z0))
    return e.emitError(args.loc(s0 ? "initial_state" : "initial_normalizer"))
           << "linear_attention takes initial_state= and "
              "initial_normalizer= together (the sums S and z of the "
              "previous piece), got only "
           << (s0 ? "initial_state=" : "initial_normalizer=");
  ShapeMatcher m(e, call.loc, "linear_attention");
  m.bind("query", q, {"batch", "heads", "n", "d"});
  m.bind("key", k, {"batch", "heads", "n", "d"});
  m.bind("value", v, {"batch", "heads", "n", "d_v"});
  if (s0) {
    m.bind("initial_state", *s0, {"batch", "heads", "d", "d_v"});
    m.bind("initial_normalizer", *z0, {"batch", "heads", "d"});
  }
  if (m.failed())
    return Val::poison();
  Shape shape = m.result({"batch", "heads", "n", "d_v"});
  Shape stateShape = m.result({"batch", "heads", "d", "d_v"});
  Shape normalizerShape = m.result({"batch", "heads", "d"});
  Type elementType = m.getElementType();
  if (pos) {
    // S [b, h, d, d_v] and z [b, h, d], as the op's state(S0, z0).
    FailureOr<Elaborator::RecurrentState> sums = e.openRecurrentState(
        call.loc, "linear_attention", joinPath(e.getCurrentPath(), "kv_state"),
        stateShape, elementType, {*pos, lengths});
    if (failed(sums))
      return Val::poison();
    FailureOr<Elaborator::RecurrentState> normalizer = e.openRecurrentState(
        call.loc, "linear_attention", joinPath(e.getCurrentPath(), "k_sum"),
        normalizerShape, elementType, {*pos, lengths});
    if (failed(normalizer))
      return Val::poison();
    Value keys = k.value;
    if (lengths) {
      // phi(k) = 0 at padded positions: k * mask is 0 there, where relu and
      // the identity give 0; elu + 1 needs a key of -1e4 (exp underflows).
      FailureOr<TensorVal> mask =
          e.buildValidMask(call.loc, *lengths, k, 2, elementType);
      if (failed(mask))
        return Val::poison();
      using Kind = Elaborator::Elementwise;
      Val masked = e.buildElementwise(call.loc, Kind::Mul, Val::tensor(k),
                                      Val::tensor(*mask), "linear_attention");
      if (masked.isPoison())
        return masked;
      if (featureMap == "elu_plus_one") {
        Val shift = e.buildElementwise(call.loc, Kind::Sub, Val::tensor(*mask),
                                       Val::real(1.0), "linear_attention");
        if (shift.isPoison())
          return shift;
        shift = e.buildElementwise(call.loc, Kind::Mul, shift, Val::real(1e4),
                                   "linear_attention");
        masked = e.buildElementwise(call.loc, Kind::Add, masked, shift,
                                    "linear_attention");
        if (masked.isPoison())
          return masked;
      }
      keys = masked.getTensor().value;
    }
    auto op = e.create<LinearAttentionOp>(
        call.loc, getTensorType(shape, elementType),
        sums->initial.value.getType(), normalizer->initial.value.getType(),
        q.value, keys, v.value, sums->initial.value,
        normalizer->initial.value,
        FeatureMapAttr::get(e.getContext(), *symbolizeFeatureMap(featureMap)),
        e.getBuilder().getUnitAttr(), e.getBuilder().getF64FloatAttr(eps));
    e.closeRecurrentState(call.loc, *sums,
                          {op.getFinalState(), sums->initial.shape});
    e.closeRecurrentState(call.loc, *normalizer,
                          {op.getFinalNormalizer(), normalizer->initial.shape});
    return Val::tensor({op.getResult(), shape});
  }
  auto op = e.create<LinearAttentionOp>(
      call.loc, getTensorType(shape, elementType),
      returnState ? getTensorType(stateShape, elementType) : Type(),
      returnState ? getTensorType(normalizerShape, elementType) : Type(),
      q.value, k.value, v.value, s0 ? s0->value : Value(),
      z0 ? z0->value : Value(),
      FeatureMapAttr::get(e.getContext(), *symbolizeFeatureMap(featureMap)),
      causal ? e.getBuilder().getUnitAttr() : UnitAttr(),
      e.getBuilder().getF64FloatAttr(eps));
  if (!returnState)
    return Val::tensor({op.getResult(), shape});
  return Val::list({Val::tensor({op.getResult(), shape}),
                    Val::tensor({op.getFinalState(), stateShape}),
                    Val::tensor({op.getFinalNormalizer(), normalizerShape})});
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
                  "delta_softplus", "initial_state", "return_state", "pos",
                  "lengths"},
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
  std::optional<TensorVal> initial = args.optionalTensor("initial_state");
  bool returnState = args.boolean("return_state", false);
  std::optional<TensorVal> pos = args.optionalTensor("pos");
  std::optional<TensorVal> lengths = args.optionalTensor("lengths");
  if (args.failed() || failed(e.checkInForward(call.loc, "'selective_scan'")))
    return Val::poison();
  // With pos= the scan keeps its state in the model instance, so the state
  // is not also passed in or out.
  if (pos && (initial || returnState))
    return e.emitError(args.loc(initial ? "initial_state" : "return_state"))
           << "selective_scan with pos= keeps its state '"
           << joinPath(e.getCurrentPath(), "ssm_state")
           << "' across calls; it takes no "
           << (initial ? "initial_state" : "return_state");
  if (lengths && !pos)
    return e.emitError(args.loc("lengths"))
           << "lengths= says where each row's state is taken; it needs pos= "
              "(a selective_scan without pos= keeps no state)";
  // A padded position must leave the state as it is: a zero step does,
  // but softplus and the bias would make it positive again.
  if (lengths && (softplus || deltaBias))
    return e.emitError(args.loc("lengths"))
           << "selective_scan with lengths= takes the step after its "
              "softplus and bias (pass softplus(delta + delta_bias) as "
              "delta): padded positions get a zero step";
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
  if (initial)
    m.bind("initial_state", *initial, {"batch", "D", "N"});
  if (m.failed())
    return Val::poison();
  Shape shape = m.result({"batch", "L", "D"});
  Shape stateShape = m.result({"batch", "D", "N"});
  SmallVector<Type> types{getTensorType(shape, m.getElementType())};
  if (pos) {
    FailureOr<Elaborator::RecurrentState> state = e.openRecurrentState(
        call.loc, "selective_scan", joinPath(e.getCurrentPath(), "ssm_state"),
        stateShape, m.getElementType(), {*pos, lengths});
    if (failed(state))
      return Val::poison();
    Value step = delta.value;
    if (lengths) {
      FailureOr<TensorVal> mask =
          e.buildValidMask(call.loc, *lengths, delta, 1, m.getElementType());
      if (failed(mask))
        return Val::poison();
      Val masked = e.buildElementwise(call.loc, Elaborator::Elementwise::Mul,
                                      Val::tensor(delta), Val::tensor(*mask),
                                      "selective_scan");
      if (masked.isPoison())
        return masked;
      step = masked.getTensor().value;
    }
    types.push_back(getTensorType(state->initial.shape, m.getElementType()));
    auto op = e.create<SelectiveScanOp>(
        call.loc, types, u.value, step, a.value, b.value, c.value,
        d ? d->value : Value(), z ? z->value : Value(),
        deltaBias ? deltaBias->value : Value(), state->initial.value,
        softplus ? e.getBuilder().getUnitAttr() : UnitAttr());
    e.closeRecurrentState(call.loc, *state,
                          {op.getFinalState(), state->initial.shape});
    return Val::tensor({op.getResult(), shape});
  }
  if (returnState)
    types.push_back(getTensorType(stateShape, m.getElementType()));
  auto op = e.create<SelectiveScanOp>(
      call.loc, types, u.value, delta.value, a.value, b.value, c.value,
      d ? d->value : Value(), z ? z->value : Value(),
      deltaBias ? deltaBias->value : Value(),
      initial ? initial->value : Value(),
      softplus ? e.getBuilder().getUnitAttr() : UnitAttr());
  if (!returnState)
    return Elaborator::tensorResult(op, shape);
  // y, h = selective_scan(..., return_state=True)
  return Val::list({Val::tensor({op.getResult(), shape}),
                    Val::tensor({op.getFinalState(), stateShape})});
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

/// The builtins of sequence models, by name.
static const BuiltinFunction kSequenceBuiltins[] = {
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
};

ArrayRef<BuiltinFunction> mlir::seq::frontend::getSequenceBuiltins() {
  return kSequenceBuiltins;
}
