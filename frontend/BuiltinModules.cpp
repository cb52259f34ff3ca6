//===- BuiltinModules.cpp - nn.Module analogues of .seq -------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The built-in modules declare parameters with PyTorch's names and layouts,
// so that a PyTorch model with the same attribute names has the same
// safetensors keys:
//
//   Linear(in, out)              weight [out, in], bias [out]
//   LayerNorm(d)                 weight [d], bias [d]
//   RMSNorm(d)                   weight [d]
//   Embedding(num, dim)          weight [num, dim]
//   CausalConv1d(C, K)           weight [C, 1, K], bias [C]
//                                (nn.Conv1d(C, C, K, groups=C))
//   MultiHeadAttention(dim, h)   wq [dim, dim], wk, wv [kv_heads*d, kv_dim],
//                                wo [dim, dim], bq, bk, bv, bo
//   Parameter(d0, d1, ...)       a raw tensor (float, or an integer buffer)
//
// Each takes `dtype=` for its parameters; Linear and Embedding take
// `weight=`, another member's parameter, to tie their weight to it, and
// `weight_format=`, the storage of their own weight (q8_0, q4_0, ...).
// Calling an instance applies the builtin function of the same name.
//
//===----------------------------------------------------------------------===//

#include "frontend/Elaborator.h"

#include "dialect/Seq/IR/Quantization.h"
#include "dialect/Seq/IR/SeqOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::seq::frontend;
using llvm::SMLoc;

namespace {
enum class ModuleID {
  Parameter,
  Linear,
  LayerNorm,
  RMSNorm,
  Embedding,
  MultiHeadAttention,
  CausalConv1d,
};
} // namespace

static const StringRef kModuleNames[] = {
    "Parameter",          "Linear",       "LayerNorm", "RMSNorm", "Embedding",
    "MultiHeadAttention", "CausalConv1d",
};

std::optional<unsigned> Elaborator::lookupBuiltinModule(StringRef name) {
  for (auto [id, moduleName] : llvm::enumerate(kModuleNames))
    if (moduleName == name)
      return id;
  return std::nullopt;
}

StringRef Elaborator::getBuiltinModuleName(unsigned id) {
  return kModuleNames[id];
}

FailureOr<TensorVal> Elaborator::declareParameter(SMLoc loc,
                                                  const std::string &path,
                                                  ArrayRef<int64_t> shape,
                                                  Type elementType,
                                                  StringRef format,
                                                  SMLoc formatLoc) {
  if (failed(checkStaticSize(loc, shape, "parameter '" + path + "'")))
    return failure();
  std::optional<WeightFormatInfo> info;
  // "f32" is the default storage: the weight as it is.
  if (!format.empty() && format != "f32") {
    info = getWeightFormat(format);
    if (!info)
      return emitError(formatLoc)
             << "unknown weight_format '" << format << "' (expected \"f32\" "
             << "or one of " << kWeightFormatNames << ")";
    if (shape.size() != 2 || !elementType.isF32())
      return emitError(formatLoc)
             << "weight_format " << format << " is for f32 weights [out, in] "
             << "of a contraction; parameter '" << path << "' is "
             << formatElementType(elementType) << " of rank " << shape.size();
    if (!info->isPerRow() && shape[1] % info->blockElements != 0)
      return emitError(formatLoc)
             << "weight_format " << format << " stores blocks of "
             << info->blockElements << " weights along each row (a Linear's "
             << "in features, an Embedding's dim): parameter '" << path
             << "' is [" << shape[0] << ", " << shape[1] << "], and "
             << shape[1] << " is not a multiple of " << info->blockElements;
  }
  if (static_cast<int64_t>(params.size()) >= options.maxParams) {
    if (!budgetExceeded)
      emitError(loc) << "the model declares more than " << options.maxParams
                     << " parameters";
    budgetExceeded = true;
    return failure();
  }
  Shape dims;
  for (int64_t size : shape)
    dims.push_back(Dim::fixed(size));
  Block *entry = &func.getBody().front();
  if (info) {
    // The blocks [out, in / 32, bytes] ([out, 1, in + 4] for int8) are the
    // argument; the f32 weight is their seq.dequantize, which only a
    // Linear's weight may use.
    Builder b(&context);
    auto blocks = RankedTensorType::get(
        {shape[0], info->blocksPerRow(shape[1]), info->bytesPerBlock(shape[1])},
        b.getIntegerType(8));
    BlockArgument arg = entry->addArgument(blocks, getLoc(loc));
    params.push_back(path);
    paramFormats[path] = format.str();
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(entry);
    Value weight = DequantizeOp::create(
        builder, getLoc(loc), getTensorType(dims, elementType), arg,
        builder.getStringAttr(format));
    return TensorVal{weight, dims};
  }
  BlockArgument arg =
      entry->addArgument(getTensorType(dims, elementType), getLoc(loc));
  params.push_back(path);
  return TensorVal{arg, dims};
}

Type Elaborator::getElementTypeByName(StringRef name) {
  Builder b(&context);
  return llvm::StringSwitch<Type>(name)
      .Case("f16", b.getF16Type())
      .Case("bf16", b.getBF16Type())
      .Case("f32", b.getF32Type())
      .Case("f64", b.getF64Type())
      .Case("i32", b.getI32Type())
      .Case("i64", b.getI64Type())
      .Default(Type());
}

/// Positive sizes of a built-in module.
static LogicalResult checkPositive(Elaborator &e, ArgReader &args,
                                   ArrayRef<StringRef> names,
                                   StringRef module) {
  for (StringRef name : names) {
    const ArgVal *arg = args.get(name);
    if (arg && arg->value.is(Val::Kind::Int) && arg->value.getInt() <= 0)
      return e.emitError(arg->loc)
             << "'" << name << "' of " << module << " must be positive, got "
             << arg->value.getInt();
  }
  return success();
}

/// The float dtypes of a built-in module's parameters.
static const StringRef kFloatDTypes[] = {"f32", "f64", "f16", "bf16"};

/// A tensor given for a built-in module's weight (`weight=`, tying it to
/// another member's parameter): it must have `shape` and a float element
/// type, and `dtype=`, when given, must agree with it.
static FailureOr<TensorVal> checkTiedWeight(Elaborator &e, ArgReader &args,
                                            StringRef module,
                                            ArrayRef<int64_t> shape,
                                            Type &elementType) {
  const ArgVal *arg = args.get("weight");
  const TensorVal &weight = arg->value.getTensor();
  std::string expected = "[";
  for (auto [i, size] : llvm::enumerate(shape))
    expected += (i ? ", " : "") + std::to_string(size);
  expected += "]";
  bool sameShape = weight.getRank() == static_cast<int64_t>(shape.size()) &&
                   llvm::all_of(llvm::enumerate(shape), [&](auto entry) {
                     return weight.shape[entry.index()].size == entry.value();
                   });
  if (!sameShape || !isa<FloatType>(weight.getElementType()))
    return e.emitError(arg->loc)
           << "'weight' of " << module << " must be a float tensor of shape "
           << expected << ", got " << weight.str();
  if (args.get("dtype") && weight.getElementType() != elementType)
    return e.emitError(args.loc("dtype"))
           << "dtype of " << module << " is "
           << formatElementType(elementType) << " but its 'weight' is "
           << weight.str();
  elementType = weight.getElementType();
  return weight;
}

Val Elaborator::constructBuiltinModule(unsigned id, CallArgs &call,
                                       const std::string &path) {
  Builder b(&context);
  Type f32 = b.getF32Type();
  // The element type of the module's parameters (its `dtype=`).
  Type dtype = f32;
  // Declares the member `name` in the storage `format` (a weight format
  // given at `formatLoc`, or the tensor as it is).
  auto declare = [&](Instance &instance, StringRef name,
                     ArrayRef<int64_t> shape, StringRef format = {},
                     SMLoc formatLoc = {}) -> LogicalResult {
    FailureOr<TensorVal> param =
        declareParameter(call.loc, joinPath(instance.path, name), shape, dtype,
                         format, formatLoc);
    if (failed(param))
      return failure();
    instance.scope.vars[name] = Val::tensor(*param);
    return success();
  };
  auto readDType = [&](ArgReader &args) {
    dtype = getElementTypeByName(args.choice("dtype", "f32", kFloatDTypes));
  };
  // The `weight_format=` of `module` ("a Linear", "an Embedding"), which
  // applies to its own weight only, not to a `tied` one.
  auto readWeightFormat =
      [&](ArgReader &args, StringRef module,
          const std::optional<TensorVal> &tied) -> FailureOr<std::string> {
    const ArgVal *arg = args.get("weight_format");
    if (!arg)
      return std::string();
    if (!arg->value.is(Val::Kind::String)) {
      emitError(arg->loc) << "weight_format of " << module
                          << " must be a string, got "
                          << arg->value.describe();
      return failure();
    }
    std::string format = arg->value.getString().str();
    if (!args.failed() && tied && !format.empty() && format != "f32") {
      emitError(arg->loc)
          << "weight_format of " << module
          << " applies to its own weight, not to a tied 'weight' (a tied "
             "weight keeps the format it is declared with, such as "
             "Embedding(..., weight_format=...))";
      return failure();
    }
    return format;
  };
  auto finish = [&](Instance *instance, bool ok) {
    return ok ? Val::instance(instance) : Val::poison();
  };

  switch (static_cast<ModuleID>(id)) {
  case ModuleID::Parameter: {
    // Parameter(d0, d1, ..., dtype="f32"), like torch.empty(d0, d1, ...).
    SmallVector<int64_t> shape;
    for (const ArgVal &arg : call.positional) {
      if (!arg.value.is(Val::Kind::Int))
        return emitError(arg.loc) << "the sizes of a Parameter are ints, got "
                                  << arg.value.describe();
      shape.push_back(arg.value.getInt());
    }
    Type elementType = f32;
    std::string format;
    SMLoc formatLoc;
    for (const auto &[keyword, arg] : call.keywords) {
      if (keyword == "weight_format") {
        if (!arg.value.is(Val::Kind::String))
          return emitError(arg.loc) << "weight_format of a Parameter must be "
                                    << "a string, got " << arg.value.describe();
        format = arg.value.getString();
        formatLoc = arg.loc;
        continue;
      }
      if (keyword != "dtype")
        return emitError(arg.loc)
               << "'Parameter' has no parameter '" << keyword
               << "' (it takes sizes, dtype and weight_format)";
      StringRef name = arg.value.is(Val::Kind::String)
                           ? StringRef(arg.value.getString())
                           : StringRef();
      // Integer parameters are buffers such as BERT's position_ids.
      elementType = getElementTypeByName(name);
      if (!elementType)
        return emitError(arg.loc)
               << "dtype of a Parameter must be one of \"f32\", \"f64\", "
                  "\"f16\", \"bf16\", \"i32\", \"i64\", got "
               << arg.value.describe();
    }
    FailureOr<TensorVal> param = declareParameter(call.loc, path, shape,
                                                  elementType, format,
                                                  formatLoc);
    if (failed(param))
      return Val::poison();
    return Val::tensor(*param);
  }

  case ModuleID::Linear: {
    ArgReader args(*this, call,
                   {"in_features", "out_features", "bias", "dtype", "weight",
                    "weight_format"},
                   2);
    int64_t in = args.integer("in_features");
    int64_t out = args.integer("out_features");
    bool bias = args.boolean("bias", true);
    readDType(args);
    std::optional<TensorVal> tied = args.optionalTensor("weight");
    FailureOr<std::string> format = readWeightFormat(args, "a Linear", tied);
    if (failed(format))
      return Val::poison();
    if (args.failed() ||
        failed(checkPositive(*this, args, {"in_features", "out_features"},
                             "Linear")))
      return Val::poison();
    if (tied && failed(checkTiedWeight(*this, args, "Linear", {out, in},
                                       dtype)))
      return Val::poison();
    Instance *instance = newInstance("Linear", path);
    instance->builtin = BuiltinModuleKind::Linear;
    instance->scope.vars["in_features"] = Val::integer(in);
    instance->scope.vars["out_features"] = Val::integer(out);
    bool ok = true;
    // A tied weight is the other member's parameter, declared once.
    if (tied)
      instance->scope.vars["weight"] = Val::tensor(*tied);
    else
      ok = succeeded(declare(*instance, "weight", {out, in}, *format,
                             args.loc("weight_format")));
    if (ok && bias)
      ok = succeeded(declare(*instance, "bias", {out}));
    return finish(instance, ok);
  }

  case ModuleID::LayerNorm: {
    ArgReader args(
        *this, call,
        {"normalized_shape", "eps", "elementwise_affine", "bias", "dtype"}, 1);
    int64_t d = args.integer("normalized_shape");
    double eps = args.number("eps", 1e-5);
    bool affine = args.boolean("elementwise_affine", true);
    bool bias = args.boolean("bias", true);
    readDType(args);
    if (args.failed() ||
        failed(checkPositive(*this, args, {"normalized_shape"}, "LayerNorm")))
      return Val::poison();
    if (!(eps >= 0))
      return emitError(args.loc("eps"))
             << "eps must be non-negative, got " << eps;
    Instance *instance = newInstance("LayerNorm", path);
    instance->builtin = BuiltinModuleKind::LayerNorm;
    instance->scope.vars["normalized_shape"] = Val::integer(d);
    instance->scope.vars["eps"] = Val::real(eps);
    bool ok = true;
    if (affine) {
      ok = succeeded(declare(*instance, "weight", {d}));
      if (ok && bias)
        ok = succeeded(declare(*instance, "bias", {d}));
    }
    return finish(instance, ok);
  }

  case ModuleID::RMSNorm: {
    ArgReader args(*this, call,
                   {"normalized_shape", "eps", "elementwise_affine", "dtype"},
                   1);
    int64_t d = args.integer("normalized_shape");
    double eps = args.number("eps", 1e-6);
    bool affine = args.boolean("elementwise_affine", true);
    readDType(args);
    if (args.failed() ||
        failed(checkPositive(*this, args, {"normalized_shape"}, "RMSNorm")))
      return Val::poison();
    if (!(eps >= 0))
      return emitError(args.loc("eps"))
             << "eps must be non-negative, got " << eps;
    Instance *instance = newInstance("RMSNorm", path);
    instance->builtin = BuiltinModuleKind::RMSNorm;
    instance->scope.vars["normalized_shape"] = Val::integer(d);
    instance->scope.vars["eps"] = Val::real(eps);
    bool ok = !affine || succeeded(declare(*instance, "weight", {d}));
    return finish(instance, ok);
  }

  case ModuleID::Embedding: {
    ArgReader args(*this, call,
                   {"num_embeddings", "embedding_dim", "dtype", "weight",
                    "weight_format"},
                   2);
    int64_t num = args.integer("num_embeddings");
    int64_t dim = args.integer("embedding_dim");
    readDType(args);
    std::optional<TensorVal> tied = args.optionalTensor("weight");
    FailureOr<std::string> format =
        readWeightFormat(args, "an Embedding", tied);
    if (failed(format))
      return Val::poison();
    if (args.failed() ||
        failed(checkPositive(*this, args, {"num_embeddings", "embedding_dim"},
                             "Embedding")))
      return Val::poison();
    if (tied && failed(checkTiedWeight(*this, args, "Embedding", {num, dim},
                                       dtype)))
      return Val::poison();
    Instance *instance = newInstance("Embedding", path);
    instance->builtin = BuiltinModuleKind::Embedding;
    instance->scope.vars["num_embeddings"] = Val::integer(num);
    instance->scope.vars["embedding_dim"] = Val::integer(dim);
    if (tied) {
      instance->scope.vars["weight"] = Val::tensor(*tied);
      return finish(instance, true);
    }
    // In a block format, each lookup dequantizes the rows it reads, and a
    // Linear tied to the table reads the same blocks.
    return finish(instance,
                  succeeded(declare(*instance, "weight", {num, dim}, *format,
                                    args.loc("weight_format"))));
  }

  case ModuleID::MultiHeadAttention: {
    ArgReader args(*this, call,
                   {"dim", "heads", "kv_heads", "kv_dim", "bias", "causal",
                    "window", "global_tokens", "rope_theta", "alibi", "dtype",
                    "cache"},
                   2);
    int64_t dim = args.integer("dim");
    int64_t heads = args.integer("heads");
    std::optional<int64_t> kvHeadsArg = args.optionalInteger("kv_heads");
    std::optional<int64_t> kvDimArg = args.optionalInteger("kv_dim");
    bool bias = args.boolean("bias", true);
    bool causal = args.boolean("causal", false);
    int64_t window = args.integer("window", 0);
    int64_t globalTokens = args.integer("global_tokens", 0);
    std::optional<double> ropeTheta = args.optionalNumber("rope_theta");
    bool alibi = args.boolean("alibi", false);
    readDType(args);
    std::optional<int64_t> cache = args.optionalInteger("cache");
    if (args.failed() ||
        failed(checkPositive(*this, args,
                             {"dim", "heads", "kv_heads", "kv_dim", "cache"},
                             "MultiHeadAttention")))
      return Val::poison();
    // A cache holds the keys of earlier calls, which only a causal decoder
    // may see again unchanged.
    if (cache && !causal)
      return emitError(args.loc("cache"))
             << "a KV cache (cache=" << *cache
             << ") needs causal=True: earlier tokens must not see later ones";
    int64_t kvHeads = kvHeadsArg.value_or(heads);
    int64_t kvDim = kvDimArg.value_or(dim);
    if (dim % heads != 0)
      return emitError(args.loc("heads"))
             << "dim = " << dim << " is not divisible by heads = " << heads;
    if (heads % kvHeads != 0)
      return emitError(args.loc("kv_heads"))
             << "heads = " << heads
             << " is not a multiple of kv_heads = " << kvHeads;
    int64_t headDim = dim / heads;
    if (ropeTheta && (!(*ropeTheta > 0) || headDim % 2 != 0))
      return emitError(args.loc("rope_theta"))
             << "rope_theta needs a positive theta and an even head dim, got "
                "theta = "
             << *ropeTheta << " and head dim " << headDim;
    if (failed(getMask(call.loc, causal, window, globalTokens)))
      return Val::poison();
    Instance *instance = newInstance("MultiHeadAttention", path);
    instance->builtin = BuiltinModuleKind::MultiHeadAttention;
    Scope &s = instance->scope;
    s.vars["dim"] = Val::integer(dim);
    s.vars["heads"] = Val::integer(heads);
    s.vars["kv_heads"] = Val::integer(kvHeads);
    s.vars["kv_dim"] = Val::integer(kvDim);
    s.vars["causal"] = Val::boolean(causal);
    s.vars["window"] = Val::integer(window);
    s.vars["global_tokens"] = Val::integer(globalTokens);
    s.vars["rope_theta"] = ropeTheta ? Val::real(*ropeTheta) : Val::none();
    s.vars["alibi"] = Val::boolean(alibi);
    s.vars["cache"] = cache ? Val::integer(*cache) : Val::none();
    int64_t kvRows = kvHeads * headDim;
    bool ok = succeeded(declare(*instance, "wq", {dim, dim})) &&
              succeeded(declare(*instance, "wk", {kvRows, kvDim})) &&
              succeeded(declare(*instance, "wv", {kvRows, kvDim})) &&
              succeeded(declare(*instance, "wo", {dim, dim}));
    if (ok && bias)
      ok = succeeded(declare(*instance, "bq", {dim})) &&
           succeeded(declare(*instance, "bk", {kvRows})) &&
           succeeded(declare(*instance, "bv", {kvRows})) &&
           succeeded(declare(*instance, "bo", {dim}));
    return finish(instance, ok);
  }

  case ModuleID::CausalConv1d: {
    ArgReader args(*this, call, {"channels", "kernel_size", "bias", "dtype"},
                   2);
    int64_t channels = args.integer("channels");
    int64_t kernel = args.integer("kernel_size");
    bool bias = args.boolean("bias", true);
    readDType(args);
    if (args.failed() ||
        failed(checkPositive(*this, args, {"channels", "kernel_size"},
                             "CausalConv1d")))
      return Val::poison();
    Instance *instance = newInstance("CausalConv1d", path);
    instance->builtin = BuiltinModuleKind::CausalConv1d;
    instance->scope.vars["channels"] = Val::integer(channels);
    instance->scope.vars["kernel_size"] = Val::integer(kernel);
    bool ok = succeeded(declare(*instance, "weight", {channels, 1, kernel}));
    if (ok && bias)
      ok = succeeded(declare(*instance, "bias", {channels}));
    return finish(instance, ok);
  }
  }
  llvm_unreachable("unknown built-in module");
}

Val Elaborator::callBuiltinModule(Instance &instance, CallArgs &call) {
  Scope &s = instance.scope;
  auto member = [&](StringRef name) {
    auto it = s.vars.find(name);
    return it == s.vars.end() ? Val::none() : it->second;
  };

  if (instance.builtin == BuiltinModuleKind::MultiHeadAttention) {
    ArgReader args(*this, call, {"input", "kv", "lengths", "pos"}, 1);
    MultiHeadAttentionOperands o;
    o.input = args.tensor("input");
    o.kv = args.optionalTensor("kv");
    o.lengths = args.optionalTensor("lengths");
    std::optional<TensorVal> pos = args.optionalTensor("pos");
    if (args.failed())
      return Val::poison();
    Val cache = member("cache");
    // Without pos=, a MultiHeadAttention with a KV cache attends like one
    // without (an entry that computes the whole sequence at once): its
    // cache is not touched, and is not part of that entry's state.
    if (cache.is(Val::Kind::Int) && pos) {
      if (o.kv || o.lengths)
        return emitError(args.loc(o.kv ? "kv" : "lengths"))
               << "a MultiHeadAttention with a KV cache takes no "
               << (o.kv ? "kv" : "lengths")
               << " (it attends to the cache's positions before pos + n"
               << (o.kv ? "" : "; a left-padded batch takes pos = -pad per "
                               "row instead")
               << ")";
    } else if (pos && !cache.is(Val::Kind::Int)) {
      return emitError(args.loc("pos"))
             << "pos= places the tokens in a KV cache; construct the "
                "MultiHeadAttention with cache=max_len";
    }
    for (StringRef name : {"wq", "wk", "wv", "wo", "bq", "bk", "bv", "bo"}) {
      Val value = member(name);
      if (value.isPoison())
        return value;
      if (!value.is(Val::Kind::Tensor))
        continue; // no biases
      TensorVal tensor = value.getTensor();
      if (name == "wq")
        o.wq = tensor;
      else if (name == "wk")
        o.wk = tensor;
      else if (name == "wv")
        o.wv = tensor;
      else if (name == "wo")
        o.wo = tensor;
      else
        o.biases.push_back(tensor);
    }
    o.heads = member("heads").getInt();
    o.kvHeads = member("kv_heads").getInt();
    FailureOr<Attribute> mask =
        getMask(call.loc, member("causal").getBool(), member("window").getInt(),
                member("global_tokens").getInt());
    if (failed(mask))
      return Val::poison();
    o.mask = *mask;
    if (Val theta = member("rope_theta"); theta.is(Val::Kind::Float))
      o.ropeTheta = theta.getFloat();
    o.alibi = member("alibi").getBool();
    if (pos)
      return buildCachedAttention(call.loc, o, *pos, cache.getInt(),
                                  instance.path);
    return buildMultiHeadAttention(call.loc, o);
  }

  if (instance.builtin == BuiltinModuleKind::CausalConv1d) {
    ArgReader args(*this, call, {"input", "pos", "lengths"}, 1);
    TensorVal x = args.tensor("input");
    std::optional<TensorVal> pos = args.optionalTensor("pos");
    std::optional<TensorVal> lengths = args.optionalTensor("lengths");
    if (args.failed())
      return Val::poison();
    if (lengths && !pos)
      return emitError(args.loc("lengths"))
             << "lengths= says where each row's state is taken; it needs "
                "pos= (a CausalConv1d without pos= keeps no state)";
    if (pos)
      return buildStatefulConv1d(call.loc, x, member("weight").getTensor(),
                                 member("bias"), {*pos, lengths},
                                 instance.path);
    // Without pos= (pos=None): the convolution of the whole sequence.
    return callBuiltinFunction(
        "causal_conv1d", call.loc,
        {Val::tensor(x), member("weight"), member("bias")});
  }

  // The other modules take one input and apply their builtin function.
  ArgReader args(*this, call, {"input"}, 1);
  if (args.failed())
    return Val::poison();
  Val input = args.get("input")->value;
  SmallVector<Val> operands = {input};
  switch (instance.builtin) {
  case BuiltinModuleKind::Linear:
    operands.push_back(member("weight"));
    operands.push_back(member("bias"));
    return callBuiltinFunction("linear", call.loc, operands);
  case BuiltinModuleKind::LayerNorm:
    operands.push_back(member("weight"));
    operands.push_back(member("bias"));
    operands.push_back(member("eps"));
    return callBuiltinFunction("layer_norm", call.loc, operands);
  case BuiltinModuleKind::RMSNorm:
    operands.push_back(member("weight"));
    operands.push_back(member("eps"));
    return callBuiltinFunction("rms_norm", call.loc, operands);
  case BuiltinModuleKind::Embedding:
    operands.push_back(member("weight"));
    return callBuiltinFunction("embedding", call.loc, operands);
  case BuiltinModuleKind::CausalConv1d:
    operands.push_back(member("weight"));
    operands.push_back(member("bias"));
    return callBuiltinFunction("causal_conv1d", call.loc, operands);
  case BuiltinModuleKind::MultiHeadAttention:
    break;
  }
  llvm_unreachable("handled above");
}
