//===- Elaborator.h - .seq to seq IR, internals -----------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// MLIRGen is an interpreter of the AST that runs at compile time: hyper-
// parameters, shapes, loops, lists and module instances are compile-time
// values, and every tensor operation it evaluates appends a seq op to the
// model's function. Module instantiation names parameters (`layers.0.attn.wq`)
// and appends them as function arguments; calls of functions and module
// forwards are inlined, their ops located at the callee's source with the
// call site as caller (a CallSiteLoc), as MLIR's inliner does.
//
// The pieces live in separate files:
//   MLIRGen.cpp          declarations, hyperparameters, the model's signature
//   Evaluation.cpp       arguments, calls, statements and expressions
//   Shapes.cpp           dimensions, broadcasting, shape matching
//   OpBuilders.cpp       ops shared by operators and builtins
//   Arguments.cpp        binding the arguments of builtins (ArgReader)
//   Builtins.cpp         builtins on tensors and numbers
//   SequenceBuiltins.cpp attention, positions, state-space models, loss
//   BuiltinModules.cpp   Linear, LayerNorm, MultiHeadAttention, ...
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_FRONTEND_ELABORATOR_H
#define SEQC_FRONTEND_ELABORATOR_H

#include "frontend/AST.h"
#include "frontend/ImportDSL.h"
#include "frontend/SourceLocations.h"

#include "dialect/Seq/IR/SeqShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace mlir::seq::frontend {

class Elaborator;
struct Instance;

//===----------------------------------------------------------------------===//
// Dimensions and tensors
//===----------------------------------------------------------------------===//

/// One dimension of a tensor as the frontend knows it: a static size, or a
/// dynamic size that is either named by the model's signature (`n`) or
/// anonymous (the result of a data-dependent slice, say).
struct Dim {
  int64_t size = ShapedType::kDynamic;
  /// The name of a symbolic dimension; null when static or anonymous.
  StringAttr symbol;

  static Dim fixed(int64_t size) { return {size, {}}; }
  static Dim named(StringAttr symbol) { return {ShapedType::kDynamic, symbol}; }
  static Dim unknown() { return {}; }

  bool isStatic() const { return !ShapedType::isDynamic(size); }
  bool isOne() const { return size == 1; }
  bool operator==(const Dim &other) const {
    return size == other.size && symbol == other.symbol;
  }
  /// "64", "n" or "?".
  std::string str() const;
};

using Shape = SmallVector<Dim, 4>;

/// Two dynamic dimensions with different names come from different inputs of
/// the model: combining them is almost certainly a mistake, even though the
/// verifier (which sees only `?`) cannot tell.
inline bool areDistinctSymbols(const Dim &a, const Dim &b) {
  return !a.isStatic() && !b.isStatic() && a.symbol && b.symbol &&
         a.symbol != b.symbol;
}
} // namespace mlir::seq::frontend

/// The verifier's binding rules on sizes (SeqShapes.h), plus names: two
/// differently named dynamic dimensions conflict, and a static size or a
/// name refines an anonymous dynamic dimension.
template <> struct mlir::seq::DimTraits<mlir::seq::frontend::Dim> {
  using Dim = mlir::seq::frontend::Dim;
  static Dim unknown() { return Dim::unknown(); }
  static bool conflicts(const Dim &bound, const Dim &dim) {
    return (bound.isStatic() && dim.isStatic() && bound.size != dim.size) ||
           frontend::areDistinctSymbols(bound, dim);
  }
  static bool refines(const Dim &bound, const Dim &dim) {
    return !bound.isStatic() && (dim.isStatic() || !bound.symbol);
  }
};

namespace mlir::seq::frontend {

/// A tensor value and the shape the frontend tracks for it.
struct TensorVal {
  Value value;
  Shape shape;

  Type getElementType() const {
    return cast<RankedTensorType>(value.getType()).getElementType();
  }
  int64_t getRank() const { return shape.size(); }
  /// `f32[b, n, 64]`, as the source spells types.
  std::string str() const;
};

/// `prefix.name`, or `name` at the top level: the hierarchical names of
/// parameters (`layers.0.attn.wq`).
inline std::string joinPath(StringRef prefix, const Twine &name) {
  if (prefix.empty())
    return name.str();
  return (prefix + "." + name).str();
}

/// The MLIR type of a tensor of `shape`.
RankedTensorType getTensorType(ArrayRef<Dim> shape, Type elementType);
/// Renders a shape as `[b, n, 64]`.
std::string formatShape(ArrayRef<Dim> shape);
/// Renders an element type as the source spells it (`f32`, `i32`).
std::string formatElementType(Type type);

//===----------------------------------------------------------------------===//
// Compile-time values
//===----------------------------------------------------------------------===//

/// What a callable name refers to.
struct Callable {
  enum class Kind {
    BuiltinFunction, // relu, linear, attention, ...
    BuiltinModule,   // Linear, LayerNorm, Parameter, ...
    Function,        // a `def` at the top level
    Module,          // a `module` declaration
  };
  Kind kind;
  StringRef name;
  unsigned builtinID = 0;
  const ast::FuncDecl *func = nullptr;
  const ast::ModuleDecl *module = nullptr;
};

/// A value of the compile-time interpreter.
class Val {
public:
  enum class Kind {
    /// The result of an expression that failed; its error was reported, and
    /// everything computed from it is poison too, silently.
    Poison,
    None,
    Int,
    Float,
    Bool,
    String,
    /// A size known only at run time (an `index` SSA value), possibly a named
    /// dimension of the model's inputs.
    Index,
    Tensor,
    List,
    Instance,
    Callable,
  };

  Val() = default;
  static Val poison() { return Val(); }
  static Val none() { return Val(Kind::None); }
  static Val integer(int64_t v) {
    Val r(Kind::Int);
    r.intValue = v;
    return r;
  }
  static Val real(double v) {
    Val r(Kind::Float);
    r.floatValue = v;
    return r;
  }
  static Val boolean(bool v) {
    Val r(Kind::Bool);
    r.boolValue = v;
    return r;
  }
  static Val string(StringRef v) {
    Val r(Kind::String);
    r.stringValue = v.str();
    return r;
  }
  static Val index(Value v, StringAttr symbol = {}) {
    Val r(Kind::Index);
    r.tensorValue.value = v;
    r.tensorValue.shape = {Dim::named(symbol)};
    return r;
  }
  static Val tensor(TensorVal t) {
    Val r(Kind::Tensor);
    r.tensorValue = std::move(t);
    return r;
  }
  static Val list(std::vector<Val> elements) {
    Val r(Kind::List);
    r.listValue = std::make_shared<std::vector<Val>>(std::move(elements));
    return r;
  }
  static Val instance(Instance *inst) {
    Val r(Kind::Instance);
    r.instanceValue = inst;
    return r;
  }
  static Val callable(Callable c) {
    Val r(Kind::Callable);
    r.callableValue = c;
    return r;
  }

  Kind getKind() const { return kind; }
  bool is(Kind k) const { return kind == k; }
  bool isPoison() const { return kind == Kind::Poison; }
  /// An Int or a Float.
  bool isNumber() const { return kind == Kind::Int || kind == Kind::Float; }

  int64_t getInt() const { return intValue; }
  double getFloat() const { return floatValue; }
  /// An Int or Float as a double.
  double getNumber() const {
    return kind == Kind::Int ? static_cast<double>(intValue) : floatValue;
  }
  bool getBool() const { return boolValue; }
  StringRef getString() const { return stringValue; }
  Value getIndex() const { return tensorValue.value; }
  StringAttr getIndexSymbol() const { return tensorValue.shape[0].symbol; }
  const TensorVal &getTensor() const { return tensorValue; }
  const std::vector<Val> &getList() const { return *listValue; }
  Instance *getInstance() const { return instanceValue; }
  const Callable &getCallable() const { return callableValue; }

  /// A description for diagnostics: "int", "f32[b, n, 64]", "list of 3".
  std::string describe() const;

private:
  explicit Val(Kind kind) : kind(kind) {}

  Kind kind = Kind::Poison;
  int64_t intValue = 0;
  double floatValue = 0;
  bool boolValue = false;
  std::string stringValue;
  TensorVal tensorValue;
  std::shared_ptr<std::vector<Val>> listValue;
  Instance *instanceValue = nullptr;
  Callable callableValue{Callable::Kind::BuiltinFunction, {}};
};

//===----------------------------------------------------------------------===//
// Scopes and module instances
//===----------------------------------------------------------------------===//

/// Names bound in a function body, or the members of an instance. Lookup
/// falls back to `parent`, then to top-level declarations and builtins.
struct Scope {
  llvm::StringMap<Val> vars;
  Scope *parent = nullptr;

  const Val *lookup(StringRef name) const {
    for (const Scope *s = this; s; s = s->parent) {
      auto it = s->vars.find(name);
      if (it != s->vars.end())
        return &it->second;
    }
    return nullptr;
  }
};

/// The built-in modules (nn.Module analogues).
enum class BuiltinModuleKind {
  Linear,
  LayerNorm,
  RMSNorm,
  Embedding,
  MultiHeadAttention,
  CausalConv1d,
};

/// One instance of a module: its constructor arguments and members.
struct Instance {
  /// The module's name, for diagnostics ("Linear", "Block").
  std::string typeName;
  /// The user module, or null for a built-in module.
  const ast::ModuleDecl *decl = nullptr;
  BuiltinModuleKind builtin = BuiltinModuleKind::Linear;
  /// The dotted path prefixing the names of its parameters ("layers.0.attn").
  std::string path;
  /// Constructor arguments and members by name.
  Scope scope;
};

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

/// An evaluated argument and where it was written.
struct ArgVal {
  Val value;
  llvm::SMLoc loc;
};

/// The evaluated arguments of a call.
struct CallArgs {
  llvm::SMLoc loc;
  std::string callee;
  SmallVector<ArgVal> positional;
  SmallVector<std::pair<StringRef, ArgVal>> keywords;

  bool hasPoison() const;
};

/// Binds the arguments of a call to a builtin's parameters and converts them,
/// reporting every problem. Accessors return a placeholder after an error,
/// so a builtin reads all its arguments and then checks `failed()` once.
class ArgReader {
public:
  /// `params` are the parameter names in positional order; the first
  /// `numRequired` have no default.
  ArgReader(Elaborator &elab, const CallArgs &call, ArrayRef<StringRef> params,
            unsigned numRequired);

  bool failed() const { return bad; }
  /// The argument bound to `name`, or null when omitted.
  const ArgVal *get(StringRef name) const;
  /// Where the argument `name` was written, or the call when omitted.
  llvm::SMLoc loc(StringRef name) const;

  /// A tensor argument.
  TensorVal tensor(StringRef name);
  /// An optional tensor argument: omitted or None give nullopt.
  std::optional<TensorVal> optionalTensor(StringRef name);
  /// A compile-time integer.
  int64_t integer(StringRef name, std::optional<int64_t> byDefault = {});
  /// An optional compile-time integer: omitted or None give nullopt.
  std::optional<int64_t> optionalInteger(StringRef name);
  /// A compile-time number (an int converts).
  double number(StringRef name, std::optional<double> byDefault = {});
  std::optional<double> optionalNumber(StringRef name);
  bool boolean(StringRef name, bool byDefault);
  /// A string among `choices`.
  StringRef choice(StringRef name, StringRef byDefault,
                   ArrayRef<StringRef> choices);
  /// A dimension index of a tensor of rank `rank` (negative counts from the
  /// end), normalized.
  int64_t axis(StringRef name, int64_t rank, std::optional<int64_t> byDefault);
  /// A list of integers, or one integer as a list of one.
  SmallVector<int64_t> integers(StringRef name);
  /// A list of tensors.
  SmallVector<TensorVal> tensors(StringRef name);

private:
  /// Reports that argument `name` has the wrong kind.
  void mismatch(StringRef name, StringRef expected);

  Elaborator &elab;
  const CallArgs &call;
  llvm::StringMap<const ArgVal *> bound;
  bool bad = false;
};

//===----------------------------------------------------------------------===//
// Builtin functions
//===----------------------------------------------------------------------===//

/// A builtin function: its name and its implementation.
struct BuiltinFunction {
  StringRef name;
  Val (*fn)(Elaborator &, CallArgs &);
};

/// The builtins on tensors and numbers (Builtins.cpp).
ArrayRef<BuiltinFunction> getTensorBuiltins();
/// The builtins of sequence models (SequenceBuiltins.cpp).
ArrayRef<BuiltinFunction> getSequenceBuiltins();

//===----------------------------------------------------------------------===//
// Shape matching
//===----------------------------------------------------------------------===//

/// Checks operands against symbolic shapes like `[batch, heads, n, d]` with
/// the binding rules the seq verifiers use (dialect/Seq/IR/SeqShapes.h), so
/// that the frontend reports shape errors in the user's terms before building
/// an op, and computes the exact result type the verifier expects: a
/// dimension is static when any operand makes it so.
class ShapeMatcher {
public:
  ShapeMatcher(Elaborator &elab, llvm::SMLoc loc, StringRef op)
      : elab(elab), loc(loc), op(op) {}

  /// Binds `value`'s dimensions to `symbols`; a leading "..." matches any
  /// number of leading dimensions, returned in `leading`. Float operands must
  /// share one element type unless `anyElementType`.
  ShapeMatcher &bind(StringRef label, const TensorVal &value,
                     ArrayRef<StringRef> symbols, Shape *leading = nullptr,
                     bool anyElementType = false);
  /// Binds an integer operand (lengths, indices).
  ShapeMatcher &bindInteger(StringRef label, const TensorVal &value,
                            ArrayRef<StringRef> symbols);
  /// Binds `symbol` to a size known from an argument.
  void define(StringRef symbol, Dim dim, StringRef origin);
  Dim lookup(StringRef symbol) const;
  /// The shape `leading ++ symbols`.
  Shape result(ArrayRef<StringRef> symbols, ArrayRef<Dim> leading = {}) const;
  Type getElementType() const { return elementType; }
  bool failed() const { return bad; }

private:
  Elaborator &elab;
  llvm::SMLoc loc;
  StringRef op;
  ShapeBindings<Dim> bindings;
  Type elementType;
  std::string elementTypeOrigin;
  bool bad = false;
};

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

/// An error being composed; reported when destroyed, unless the same message
/// was already reported at the same place (a block instantiated 24 times
/// reports its error once).
class ErrorBuilder {
public:
  ErrorBuilder(Elaborator &elab, llvm::SMLoc loc) : elab(elab), loc(loc) {}
  ErrorBuilder(ErrorBuilder &&) = delete;
  ~ErrorBuilder();

  template <typename T> ErrorBuilder &operator<<(T &&value) {
    os << std::forward<T>(value);
    return *this;
  }
  /// Numbers read as written in source (0.5, 1e-05), not in %e form.
  ErrorBuilder &operator<<(double value) {
    os << llvm::format("%g", value);
    return *this;
  }
  /// Attaches a note at `noteLoc`.
  ErrorBuilder &note(llvm::SMLoc noteLoc, const Twine &message) {
    notes.emplace_back(noteLoc, message.str());
    return *this;
  }
  /// Any error makes the expression poison.
  operator Val() const { return Val::poison(); }
  operator LogicalResult() const { return failure(); }
  template <typename T> operator FailureOr<T>() const { return failure(); }

private:
  Elaborator &elab;
  llvm::SMLoc loc;
  std::string message;
  llvm::raw_string_ostream os{message};
  SmallVector<std::pair<llvm::SMLoc, std::string>> notes;
};

//===----------------------------------------------------------------------===//
// The elaborator
//===----------------------------------------------------------------------===//

class Elaborator {
public:
  Elaborator(const ast::SourceFile &file, const llvm::SourceMgr &sourceMgr,
             MLIRContext &context, const FrontendOptions &options);

  /// Builds the module; null after errors.
  OwningOpRef<ModuleOp> run();

  //===--------------------------------------------------------------------===//
  // Diagnostics and locations
  //===--------------------------------------------------------------------===//

  ErrorBuilder emitError(llvm::SMLoc loc) { return ErrorBuilder(*this, loc); }
  /// Reports an error unless it duplicates an earlier one.
  void report(llvm::SMLoc loc, const std::string &message,
              ArrayRef<std::pair<llvm::SMLoc, std::string>> notes);
  /// The location of ops built for source position `loc`: a FileLineColLoc,
  /// inside a CallSiteLoc chain when inlined from a call.
  Location getLoc(llvm::SMLoc loc);

  //===--------------------------------------------------------------------===//
  // Building IR
  //===--------------------------------------------------------------------===//

  OpBuilder &getBuilder() { return builder; }
  const FrontendOptions &getOptions() const { return options; }
  MLIRContext *getContext() { return &context; }

  /// Creates an op located at `loc`, counting it against the budget.
  template <typename OpTy, typename... Args>
  OpTy create(llvm::SMLoc loc, Args &&...args) {
    ++numOps;
    return OpTy::create(builder, getLoc(loc), std::forward<Args>(args)...);
  }
  /// Wraps a single-result op's result with its tracked shape.
  static Val tensorResult(Operation *op, Shape shape) {
    return Val::tensor({op->getResult(0), std::move(shape)});
  }

  /// Counts `steps` of elaboration work and checks the op and step budgets;
  /// reports once and fails when one is exceeded, after which elaboration
  /// winds down.
  LogicalResult checkBudget(llvm::SMLoc loc, int64_t steps = 1);

  /// Whether tensor ops may be built here (inside forward, not while
  /// evaluating members or hyperparameters); reports an error otherwise.
  LogicalResult checkInForward(llvm::SMLoc loc, StringRef what);

  /// An `index` value for dimension `axis` of `tensor`.
  Value getDimValue(llvm::SMLoc loc, const TensorVal &tensor, unsigned axis);
  /// An `index` constant.
  Value getIndexConstant(llvm::SMLoc loc, int64_t value);
  /// A compile-time size or a run-time size as an `index` value.
  Value getIndexValue(llvm::SMLoc loc, const Val &size);
  /// A rank-0 tensor of `elementType` holding a number (or a run-time size).
  FailureOr<TensorVal> getScalarTensor(llvm::SMLoc loc, const Val &scalar,
                                       Type elementType);
  /// Converts a number, size or tensor operand of an elementwise operation to
  /// a tensor, taking a scalar's element type from `other`.
  FailureOr<TensorVal> toTensor(llvm::SMLoc loc, const Val &value,
                                const Val &other);

  //===--------------------------------------------------------------------===//
  // Shapes (Shapes.cpp)
  //===--------------------------------------------------------------------===//

  /// Broadcasts two shapes as NumPy does, reporting `what` on failure.
  FailureOr<Shape> broadcast(llvm::SMLoc loc, const TensorVal &lhs,
                             const TensorVal &rhs, StringRef what);
  /// Broadcasts two lists of batch dimensions (of `@`).
  FailureOr<Shape> broadcastBatch(llvm::SMLoc loc, ArrayRef<Dim> lhs,
                                  ArrayRef<Dim> rhs, const TensorVal &lhsValue,
                                  const TensorVal &rhsValue, StringRef what);
  /// Checks that a static shape is within the size limits.
  LogicalResult checkStaticSize(llvm::SMLoc loc, ArrayRef<int64_t> shape,
                                StringRef what);

  //===--------------------------------------------------------------------===//
  // Builtins (Builtins.cpp, BuiltinModules.cpp)
  //===--------------------------------------------------------------------===//

  /// Looks up a builtin function or module by name.
  static std::optional<Callable> lookupBuiltin(StringRef name);
  /// Calls builtin function `id`.
  Val callBuiltinFunction(unsigned id, CallArgs &args);
  /// Calls the builtin function `name` with positional `operands`.
  Val callBuiltinFunction(StringRef name, llvm::SMLoc loc,
                          ArrayRef<Val> operands);
  /// Creates an instance of a built-in module named `path`.
  Val constructBuiltinModule(unsigned id, CallArgs &args,
                             const std::string &path);
  /// Calls (the forward of) a built-in module instance.
  Val callBuiltinModule(Instance &instance, CallArgs &args);
  /// Declares a parameter (a function argument) named `path`. With a
  /// `format` (a weight format of dialect/Seq/IR/Quantization.h, checked at
  /// `formatLoc`), the f32 `[out, in]` weight is stored in its blocks and
  /// read through `seq.dequantize`.
  FailureOr<TensorVal> declareParameter(llvm::SMLoc loc,
                                        const std::string &path,
                                        ArrayRef<int64_t> shape,
                                        Type elementType,
                                        StringRef format = {},
                                        llvm::SMLoc formatLoc = {});
  /// Creates an instance of no user module, for a built-in module.
  Instance *newInstance(StringRef typeName, const std::string &path);

  /// Elementwise binary ops shared by operators and builtins; the
  /// comparisons give 1 or 0 in the operands' element type.
  enum class Elementwise { Add, Sub, Mul, Div, Max, Min, Eq, Ne, Lt, Le, Gt, Ge };
  Val buildElementwise(llvm::SMLoc loc, Elementwise kind, const Val &lhs,
                       const Val &rhs, StringRef what);
  Val buildMatmul(llvm::SMLoc loc, const Val &lhs, const Val &rhs,
                  bool transposeRhs);
  Val buildTranspose(llvm::SMLoc loc, const TensorVal &input,
                     ArrayRef<int64_t> permutation);
  /// Reshapes to `shape`, whose dynamic dimensions take their sizes from
  /// `dynamicSizes` in order.
  Val buildReshape(llvm::SMLoc loc, const TensorVal &input, Shape shape,
                   ArrayRef<Value> dynamicSizes);
  /// Slices `[lower, upper)` of dimension `axis`; `size` is the result's
  /// dimension there.
  Val buildSlice(llvm::SMLoc loc, const TensorVal &input, unsigned axis,
                 Value lower, Value upper, Dim size);
  Val buildUnary(llvm::SMLoc loc, StringRef name, const TensorVal &input);
  /// Converts `input` to `elementType` (`seq.cast`; the input itself when
  /// the types agree).
  Val buildCast(llvm::SMLoc loc, const TensorVal &input, Type elementType);

  /// Checks that a causal or windowed `mask` (null: none) compares queries
  /// and keys over the same positions.
  LogicalResult checkMaskPositions(llvm::SMLoc loc, Attribute mask,
                                   const Dim &queries, const Dim &keys);

  /// A `#seq.mask`, or a null attribute for the full mask; reports invalid
  /// combinations.
  FailureOr<Attribute> getMask(llvm::SMLoc loc, bool causal, int64_t window,
                               int64_t globalTokens);

  /// The operands of `seq.multi_head_attention`, shared by the builtin
  /// function and the MultiHeadAttention module.
  struct MultiHeadAttentionOperands {
    TensorVal input;
    std::optional<TensorVal> kv;
    TensorVal wq, wk, wv, wo;
    SmallVector<TensorVal> biases;
    std::optional<TensorVal> lengths;
    int64_t heads = 1, kvHeads = 1;
    Attribute mask;
    std::optional<double> ropeTheta;
    bool alibi = false;
  };
  Val buildMultiHeadAttention(llvm::SMLoc loc,
                              const MultiHeadAttentionOperands &operands);
  /// The keys and values a cached attention attends over.
  struct KVCache {
    Value keys, values;
  };
  /// A KV cache of `maxLen` positions owned by the module instance at `path`
  /// (the model itself when empty), shared by the MultiHeadAttention
  /// module's `cache=` and `attention(..., cache=)`: declares the state
  /// arguments `<path>.k_cache` and `<path>.v_cache` [b, h_kv, max_len, d]
  /// of the element types of `k` and `v` [b, h_kv, n, d], writes `k` and
  /// `v` into them at `pos`, a model input, and returns the caches after the
  /// write. `what` names the caller in errors.
  FailureOr<KVCache> buildKVCache(llvm::SMLoc loc, StringRef what,
                                  const TensorVal &k, const TensorVal &v,
                                  const TensorVal &pos, int64_t maxLen,
                                  const std::string &path);
  /// Self-attention over a KV cache of `maxLen` positions (the
  /// MultiHeadAttention module's `cache=`): declares the state arguments
  /// `<path>.k_cache` and `<path>.v_cache`, writes the new keys and values
  /// at `pos`, a model input, and attends over the cache with the queries at
  /// their absolute positions.
  Val buildCachedAttention(llvm::SMLoc loc,
                           const MultiHeadAttentionOperands &operands,
                           const TensorVal &pos, int64_t maxLen,
                           const std::string &path);

  /// Recurrent state (RecurrentState.cpp): the inputs of a call that
  /// carries state, `pos=` and the optional `lengths=`.
  struct RecurrentInputs {
    TensorVal pos;
    std::optional<TensorVal> lengths;
  };
  /// A state argument and the state a call starts from (zeros in the rows
  /// at position 0).
  struct RecurrentState {
    Value arg;
    TensorVal initial;
  };
  /// The name of model input `value`; reports `what` must be one otherwise.
  FailureOr<std::string> getInputName(llvm::SMLoc loc, const TensorVal &value,
                                      StringRef what);
  /// Declares the state argument `name` of `shape` (batch first) carried by
  /// `op` across calls, and the state this call starts from.
  FailureOr<RecurrentState> openRecurrentState(llvm::SMLoc loc, StringRef op,
                                               const std::string &name,
                                               Shape shape, Type elementType,
                                               const RecurrentInputs &in);
  /// Stores `final` as the state of the next call.
  void closeRecurrentState(llvm::SMLoc loc, const RecurrentState &state,
                           const TensorVal &final);
  /// `i < lengths[r]` as 1 or 0 of `elementType`, of `sequence`'s rank with
  /// the batch first, the positions at `axis` and 1 elsewhere.
  FailureOr<TensorVal> buildValidMask(llvm::SMLoc loc, const TensorVal &lengths,
                                      const TensorVal &sequence, unsigned axis,
                                      Type elementType);
  /// A CausalConv1d called with `pos=`: its window of the last K - 1 inputs,
  /// `<path>.conv_state` [b, C, K - 1], continues across calls.
  Val buildStatefulConv1d(llvm::SMLoc loc, const TensorVal &x,
                          const TensorVal &weight, const Val &bias,
                          const RecurrentInputs &in, const std::string &path);
  /// The path of the module instance whose forward is being inlined (empty
  /// in the model's own forward).
  const std::string &getCurrentPath() const { return currentPath; }

  /// The element type spelled `name` (`f32`, `bf16`, `i64`, ...); null for
  /// another name.
  Type getElementTypeByName(StringRef name);

  /// Finds a built-in module by name (BuiltinModules.cpp).
  static std::optional<unsigned> lookupBuiltinModule(StringRef name);
  /// The name of built-in module `id`.
  static StringRef getBuiltinModuleName(unsigned id);

private:
  friend class ErrorBuilder;
  friend class ArgReader;

  //===--------------------------------------------------------------------===//
  // Declarations (MLIRGen.cpp)
  //===--------------------------------------------------------------------===//

  LogicalResult collectDeclarations();
  LogicalResult evaluateHyperparameters(Instance &model);
  FailureOr<Val> parseOverride(const ast::ParamDecl &param,
                               const Val &byDefault, StringRef text);
  LogicalResult evaluateMembers(Instance &instance);
  void buildModelInputs(Instance &model, Scope &scope);
  void buildModelOutputs(const ast::FuncDecl &forward, Scope &scope,
                         const Val &returned);
  void finalizeSignature(Instance &model);

  /// Instantiates user module `decl` under `path`.
  Val instantiate(const ast::ModuleDecl &decl, CallArgs &args,
                  const std::string &path);
  /// Binds arguments to a user function's or module's parameters, checking
  /// type annotations; reports errors and returns failure.
  LogicalResult bindParams(ArrayRef<ast::ParamDecl> params, CallArgs &args,
                           Scope &scope, Scope &defaults, StringRef what);
  /// Checks `value` against annotation `type`, binding the names of
  /// symbolic dims in `bindScope`; returns the value (an int converted for a
  /// float annotation).
  FailureOr<Val> checkAnnotation(const ast::TypeAnnotation &type,
                                 const Val &value, Scope &bindScope,
                                 llvm::SMLoc loc, const Twine &what);
  /// Checks a hyperparameter's default against its annotation, or that it
  /// is a scalar when unannotated.
  FailureOr<Val> checkAnnotationOrKind(const ast::ParamDecl &param,
                                       const Val &value);
  /// Inlines a user function or module forward.
  Val callFunction(const ast::FuncDecl &func, Instance *self, CallArgs &args);
  /// Executes a function body and evaluates its return statement: one value,
  /// or a list of them.
  Val execFunctionBody(const ast::FuncDecl &func);
  Type getElementType(ast::ElementType type);

  //===--------------------------------------------------------------------===//
  // Statements and expressions (MLIRGen.cpp)
  //===--------------------------------------------------------------------===//

  /// Executes `block`; stops early when the op budget is exhausted.
  void execBlock(const ast::Block &block);
  void execStmt(const ast::Stmt &stmt);
  void assign(const ast::Target &target, Val value);

  /// Where a module or parameter being created goes: the dotted path of the
  /// member being initialized, when creating one is allowed here.
  struct DeclContext {
    bool allowed = false;
    std::string path;
  };

  Val eval(const ast::Expr &expr);
  /// Looks a name up in the scopes, then among top-level declarations and
  /// builtins; null when unknown.
  const Val *lookupName(StringRef name);
  Val evalWith(const ast::Expr &expr, DeclContext decl);
  Val evalName(const ast::NameExpr &expr);
  Val evalUnary(const ast::UnaryExpr &expr);
  Val evalBinary(const ast::BinaryExpr &expr);
  Val evalScalarBinary(llvm::SMLoc loc, ast::BinaryExpr::Op op, const Val &lhs,
                       const Val &rhs);
  Val evalIndexBinary(llvm::SMLoc loc, ast::BinaryExpr::Op op, const Val &lhs,
                      const Val &rhs);
  Val evalComparison(llvm::SMLoc loc, ast::BinaryExpr::Op op, const Val &lhs,
                     const Val &rhs);
  Val evalPower(llvm::SMLoc loc, const Val &base, const Val &exponent);
  Val evalCall(const ast::CallExpr &expr, DeclContext decl);
  Val evalSubscript(const ast::SubscriptExpr &expr);
  Val evalTensorSubscript(const ast::SubscriptExpr &expr,
                          const TensorVal &base);
  Val evalMember(const ast::MemberExpr &expr);
  /// Reads member `expr.getName()` of `base`, the value of `expr`'s base.
  Val readMember(const ast::MemberExpr &expr, const Val &base);
  Val evalList(const ast::ListExpr &expr, DeclContext decl);
  Val evalListComprehension(const ast::ListComprehensionExpr &expr,
                            DeclContext decl);
  /// Evaluates the arguments of a call.
  CallArgs evalArgs(const ast::CallExpr &expr, StringRef callee);

  const ast::SourceFile &file;
  const llvm::SourceMgr &sourceMgr;
  MLIRContext &context;
  const FrontendOptions &options;
  SourceLocator locator;
  OpBuilder builder;

  ModuleOp module;
  func::FuncOp func;
  /// Top-level declarations by name.
  llvm::StringMap<Callable> globals;
  const ast::ModuleDecl *modelDecl = nullptr;
  /// The model function being compiled: FrontendOptions::entry, else the
  /// default entry.
  const ast::FuncDecl *entryDecl = nullptr;

  /// Instances, owned here for the whole elaboration.
  std::deque<std::unique_ptr<Instance>> instances;
  /// The names of the function's parameters, in argument order.
  std::vector<std::string> params;
  /// The storage format of the parameters declared with one, by name.
  llvm::StringMap<std::string> paramFormats;
  /// Model inputs: names, declared dims (as in the manifest) and ranges.
  struct InputInfo {
    std::string name;
    ArrayAttr dims;
    ArrayAttr range;
  };
  std::vector<InputInfo> inputs;
  std::vector<const ast::ParamDecl *> inputParams;
  /// State arguments (after the parameters): names, declared dims and the
  /// positions each call writes (kStateWriteAttr).
  struct StateInfo {
    std::string name;
    ArrayAttr dims;
    /// kStateWriteAttr of a KV cache, or kStateCarryAttr of a recurrent
    /// state.
    DictionaryAttr write;
    DictionaryAttr carry;
  };
  std::vector<StateInfo> states;
  /// See getCurrentPath.
  std::string currentPath;
  struct OutputInfo {
    std::string name;
    ArrayAttr dims;
  };
  std::vector<OutputInfo> outputs;
  SmallVector<Type> resultTypes;
  /// The hyperparameters' values, in declaration order.
  SmallVector<NamedAttribute> hyperAttrs;
  /// `index` values of the symbolic dimensions, built at function entry.
  llvm::DenseMap<StringAttr, Value> symbolValues;
  /// `index` constants, built once at function entry.
  llvm::DenseMap<int64_t, Value> indexConstants;
  Operation *lastIndexConstant = nullptr;

  /// The scope names are looked up in.
  Scope *scope = nullptr;
  /// Holds a global or builtin found by lookupName.
  Val lookupResult;
  /// Whether tensor ops may be built (evaluating a forward body).
  bool inForward = false;
  /// Calls being inlined: the active functions and module constructors (to
  /// reject recursion) and the call-site locations (the caller chain).
  SmallVector<const void *> activeDecls;
  SmallVector<Location> callerLocs;

  int64_t numOps = 0;
  int64_t numSteps = 0;
  int64_t numErrors = 0;
  bool budgetExceeded = false;
  bool hadError = false;
  /// Errors reported so far, to drop duplicates.
  std::set<std::pair<const char *, std::string>> reported;
};

} // namespace mlir::seq::frontend

#endif // SEQC_FRONTEND_ELABORATOR_H
