//===- SeqOps.cpp - seq dialect operations --------------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers and folders of the seq operations.
//
// Every shape rule stated in an op's description in SeqOps.td is checked
// here. The conventions, shared by all ops:
//
// - A dynamic dimension (`?`) is compatible with any size: the lowering
//   checks it at run time. Rank mismatches and mismatching static sizes are
//   errors.
// - All floating-point operands and the result share one element type; the
//   dialect has no implicit casts.
// - The result type is exactly what the op computes: a result dimension is
//   static when some operand (or attribute) determines it and dynamic
//   otherwise. Requiring the most precise type, as `tensor.collapse_shape`
//   does, keeps one spelling per computation, so CSE and pattern matching
//   never see two types for the same value.
//
// Messages follow MLIR: lowercase, no period, "expected ..., got ...", and
// name the operand, its symbolic shape and where an expected size came from.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/IR/SeqOps.h"
#include "dialect/Seq/IR/Quantization.h"
#include "dialect/Seq/IR/SeqShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::seq;

#include "dialect/Seq/IR/SeqOpsEnums.cpp.inc"

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

/// Two sizes agree unless both are static and differ.
static bool areCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// Renders a shape as `[?, 8, 64]`.
static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string str;
  llvm::raw_string_ostream os(str);
  os << '[';
  llvm::interleaveComma(shape, os, [&](int64_t size) {
    if (ShapedType::isDynamic(size))
      os << '?';
    else
      os << size;
  });
  os << ']';
  return str;
}

/// Renders an attribute's integer list as `[0, 2, 1]`.
static std::string formatList(ArrayRef<int64_t> values) {
  std::string str;
  llvm::raw_string_ostream os(str);
  os << '[';
  llvm::interleaveComma(values, os);
  os << ']';
  return str;
}

/// Broadcasts two shapes as NumPy and PyTorch do: trailing dimensions are
/// aligned and each pair must be equal or contain a 1. A dynamic size paired
/// with a static size `n != 1` can only be `n` or 1 at run time, so the result
/// is `n`; paired with 1 or another dynamic size it stays dynamic. Fails when
/// a pair of static sizes is neither equal nor contains a 1.
static FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                       ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Missing leading dimensions act as 1.
    int64_t a = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t b = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    int64_t &out = result[rank - 1 - i];
    if (a == 1)
      out = b;
    else if (b == 1)
      out = a;
    else if (ShapedType::isDynamic(a))
      out = b;
    else if (ShapedType::isDynamic(b) || a == b)
      out = a;
    else
      return failure();
  }
  return result;
}

/// Whether `shape` broadcasts to `target` without changing `target`: no more
/// dimensions, and each trailing dimension is 1 or compatible with the target.
static bool isBroadcastableTo(ArrayRef<int64_t> shape,
                              ArrayRef<int64_t> target) {
  if (shape.size() > target.size())
    return false;
  ArrayRef<int64_t> aligned = target.take_back(shape.size());
  return llvm::all_of(llvm::zip_equal(shape, aligned), [](auto pair) {
    auto [size, targetSize] = pair;
    return size == 1 || areCompatible(size, targetSize);
  });
}

/// Builds a float elements attribute of `type` (any float element type) from
/// doubles, rounding to the nearest representable value.
static DenseElementsAttr getFloatElements(RankedTensorType type,
                                          ArrayRef<double> values) {
  const llvm::fltSemantics &semantics =
      cast<FloatType>(type.getElementType()).getFloatSemantics();
  SmallVector<APFloat> elements;
  elements.reserve(values.size());
  for (double value : values) {
    APFloat element(value);
    bool losesInfo;
    element.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
    elements.push_back(element);
  }
  return DenseElementsAttr::get(type, elements);
}

namespace {
/// Checks operand shapes against symbolic shapes such as
/// `[batch, heads, n_q, d]` with the binding rules of SeqShapes.h, which the
/// frontend applies too: the first size seen for a symbol binds it and every
/// later occurrence must be compatible with it. Every op states its shape
/// rules through this one class, so all ops report mismatches the same way,
/// e.g.
///
///   'weight' expected shape [out, in] with in = 64 (last dim of 'input'),
///   got 'tensor<128x32xf32>'
///
/// It also enforces the dialect's single element type per op (the first
/// float operand bound fixes it) and the exact result type.
class ShapeBinder {
public:
  explicit ShapeBinder(Operation *op) : op(op) {}

  /// Binds the dimensions of `type`, the type of the operand called `label`
  /// in messages (already quoted), to `symbols`. A leading "..." stands for
  /// any number of leading dimensions, which are returned in `leading`. The
  /// element type must be the op's unless `sameElementType` is false (integer
  /// operands).
  LogicalResult bind(StringRef label, Type type, ArrayRef<StringRef> symbols,
                     SmallVectorImpl<int64_t> *leading = nullptr,
                     bool sameElementType = true);

  /// Binds `symbol` to `size`, a size known from an attribute or derived from
  /// other dimensions; `origin` says where it comes from in messages.
  void define(StringRef symbol, int64_t size, const Twine &origin) {
    bindings.define(symbol, size, origin.str());
  }

  /// Makes a dynamic `symbol` static when `size` is; the caller has checked
  /// that they are compatible.
  void refine(StringRef symbol, int64_t size, const Twine &origin) {
    bindings.refine(symbol, size, origin.str());
  }

  /// The size bound to `symbol`; dynamic when nothing determines it.
  int64_t lookup(StringRef symbol) const { return bindings.lookup(symbol); }

  /// Where the size of `symbol` comes from, for messages.
  StringRef origin(StringRef symbol) const {
    const auto *binding = bindings.find(symbol);
    return binding ? StringRef(binding->origin) : StringRef();
  }

  /// Makes the element type of `type`, the type of the operand called
  /// `label`, the op's element type.
  void setElementType(StringRef label, Type type) {
    elementType = getElementTypeOrSelf(type);
    elementTypeOrigin = label.str();
  }

  /// Checks that `type`, of the operand or result called `label`, has the
  /// op's element type (the first one checked sets it).
  LogicalResult expectElementType(StringRef label, Type type);

  /// Checks that the result `type` is exactly `leading` followed by the sizes
  /// bound to `symbols` (a leading "..." in `symbols` stands for `leading`).
  LogicalResult expectResult(Type type, ArrayRef<StringRef> symbols,
                             ArrayRef<int64_t> leading = {},
                             StringRef label = "result");

  /// Checks that the result `type` has the op's element type and exactly
  /// `shape`, which `why` explains in messages.
  LogicalResult expectResultShape(Type type, ArrayRef<int64_t> shape,
                                  const Twine &why, StringRef label = "result");

private:
  Operation *op;
  ShapeBindings<int64_t> bindings;
  Type elementType;
  std::string elementTypeOrigin;
};
} // namespace

LogicalResult ShapeBinder::expectElementType(StringRef label, Type type) {
  Type element = getElementTypeOrSelf(type);
  if (!elementType) {
    setElementType(label, type);
    return success();
  }
  if (element != elementType)
    return op->emitOpError()
           << label << " expected element type " << elementType << " (of "
           << elementTypeOrigin << "), got " << type;
  return success();
}

LogicalResult ShapeBinder::bind(StringRef label, Type type,
                                ArrayRef<StringRef> symbols,
                                SmallVectorImpl<int64_t> *leading,
                                bool sameElementType) {
  auto tensor = cast<RankedTensorType>(type);
  if (sameElementType && failed(expectElementType(label, tensor)))
    return failure();

  ShapePattern pattern(symbols);
  int64_t rank = tensor.getRank();
  if (!pattern.matchesRank(rank))
    return op->emitOpError()
           << label << " expected rank " << (pattern.isVariadic() ? ">= " : "")
           << pattern.getNumNamed() << " (" << pattern.str() << "), got "
           << tensor;

  if (leading)
    leading->assign(tensor.getShape().begin(),
                    tensor.getShape().begin() + pattern.getNumLeading(rank));
  auto where = [&](int64_t dim) {
    // Operands with leading batch dimensions are described from the end,
    // as their descriptions do (`[..., in]`).
    return (pattern.isVariadic() && dim == rank - 1
                ? Twine("last dim of ") + label
                : "dim " + Twine(dim) + " of " + label)
        .str();
  };
  if (auto conflict = bindings.bind(pattern, tensor.getShape(), where))
    return op->emitOpError()
           << label << " expected shape " << pattern.str() << " with "
           << conflict->symbol << " = " << conflict->binding->dim << " ("
           << conflict->binding->origin << "), got " << tensor;
  return success();
}

LogicalResult ShapeBinder::expectResult(Type type, ArrayRef<StringRef> symbols,
                                        ArrayRef<int64_t> leading,
                                        StringRef label) {
  SmallVector<int64_t> shape(leading);
  for (StringRef symbol : symbols)
    if (symbol != "...")
      shape.push_back(lookup(symbol));
  return expectResultShape(type, shape, ShapePattern(symbols).str(), label);
}

LogicalResult ShapeBinder::expectResultShape(Type type, ArrayRef<int64_t> shape,
                                             const Twine &why,
                                             StringRef label) {
  if (failed(expectElementType(label, type)))
    return failure();
  auto tensor = cast<RankedTensorType>(type);
  if (tensor.getShape() != shape)
    return op->emitOpError()
           << label << " expected shape " << formatShape(shape) << " (" << why
           << "), got " << type;
  return success();
}

/// Checks that a float attribute is positive (and not NaN).
static LogicalResult verifyPositive(Operation *op, StringRef name,
                                    double value) {
  if (!(value > 0.0))
    return op->emitOpError()
           << "expected positive '" << name << "', got " << value;
  return success();
}

/// Checks that a float attribute is non-negative (and not NaN).
static LogicalResult verifyNonNegative(Operation *op, StringRef name,
                                       double value) {
  if (!(value >= 0.0))
    return op->emitOpError()
           << "expected non-negative '" << name << "', got " << value;
  return success();
}

/// A causal or windowed mask compares the position of a query with the
/// position of a key, which only means something when both index the same
/// sequence: `n_q` must equal `n_k`. (Decoding a single query against a KV
/// cache uses no positional mask; it sees every cached key.)
static LogicalResult verifyMaskPositions(Operation *op, MaskAttr mask,
                                         int64_t numQueries, int64_t numKeys) {
  if (!mask || mask.isFull() || areCompatible(numQueries, numKeys))
    return success();
  return op->emitOpError()
         << "expected n_q = n_k with mask " << mask
         << " (queries and keys index the same positions), got n_q = "
         << numQueries << " and n_k = " << numKeys;
}

//===----------------------------------------------------------------------===//
// Elementwise arithmetic with broadcasting
//===----------------------------------------------------------------------===//

/// The verifier shared by every broadcasting binary op.
static LogicalResult verifyBroadcastingBinaryOp(Operation *op) {
  Type lhs = op->getOperand(0).getType();
  Type rhs = op->getOperand(1).getType();
  ShapeBinder binder(op);
  if (failed(binder.expectElementType("'lhs'", lhs)) ||
      failed(binder.expectElementType("'rhs'", rhs)))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(cast<RankedTensorType>(lhs).getShape(),
                      cast<RankedTensorType>(rhs).getShape());
  if (failed(shape))
    return op->emitOpError()
           << "'lhs' and 'rhs' expected broadcastable shapes (trailing dims "
              "equal or 1), got "
           << lhs << " and " << rhs;
  return binder.expectResultShape(op->getResult(0).getType(), *shape,
                                  "the broadcast of 'lhs' and 'rhs'");
}

LogicalResult AddOp::verify() { return verifyBroadcastingBinaryOp(*this); }
LogicalResult SubOp::verify() { return verifyBroadcastingBinaryOp(*this); }
LogicalResult MulOp::verify() { return verifyBroadcastingBinaryOp(*this); }
LogicalResult DivOp::verify() { return verifyBroadcastingBinaryOp(*this); }
LogicalResult MaxOp::verify() { return verifyBroadcastingBinaryOp(*this); }
LogicalResult MinOp::verify() { return verifyBroadcastingBinaryOp(*this); }

LogicalResult CompareOp::verify() {
  return verifyBroadcastingBinaryOp(*this);
}

LogicalResult CastOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getType());
  if (input.getRank() != result.getRank() ||
      !llvm::all_of(llvm::zip(input.getShape(), result.getShape()),
                    [](auto sizes) {
                      return areCompatible(std::get<0>(sizes),
                                           std::get<1>(sizes));
                    }))
    return emitOpError() << "expected the result to have the shape of the "
                            "input, got "
                         << input << " and " << result;
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

LogicalResult SoftplusOp::verify() {
  // The result is divided by beta.
  return verifyPositive(*this, "beta", getBeta().convertToDouble());
}

LogicalResult DropoutOp::verify() {
  double rate = getRate().convertToDouble();
  // A rate of 1 would rescale by 1 / 0 in training.
  if (!(rate >= 0.0 && rate < 1.0))
    return emitOpError() << "expected 'rate' in [0, 1), got " << rate;
  return success();
}

OpFoldResult DropoutOp::fold(FoldAdaptor) {
  // seqc compiles inference, where dropout is the identity.
  return getInput();
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::verify() {
  RankedTensorType input = getInput().getType();
  ArrayRef<int64_t> permutation = getPermutation();
  int64_t rank = input.getRank();
  if (static_cast<int64_t>(permutation.size()) != rank)
    return emitOpError() << "expected 'permutation' of size " << rank
                         << " (rank of 'input'), got " << permutation.size();
  SmallVector<bool> seen(rank, false);
  SmallVector<int64_t> shape;
  for (int64_t dim : permutation) {
    if (dim < 0 || dim >= rank || seen[dim])
      return emitOpError()
             << "expected 'permutation' to be a permutation of [0, " << rank
             << "), got " << formatList(permutation);
    seen[dim] = true;
    shape.push_back(input.getDimSize(dim));
  }
  ShapeBinder binder(*this);
  binder.setElementType("'input'", input);
  return binder.expectResultShape(getType(), shape,
                                  "the dims of 'input' permuted");
}

/// The product of the static dimensions of `type`.
static int64_t getStaticProduct(RankedTensorType type) {
  int64_t product = 1;
  for (int64_t size : type.getShape())
    if (!ShapedType::isDynamic(size))
      product *= size;
  return product;
}

/// Whether a shape whose static dimensions multiply to `product` can hold
/// `count` elements for some choice of its dynamic dimensions.
static bool canHold(int64_t product, int64_t count) {
  return product == 0 ? count == 0 : count % product == 0;
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType input = getInput().getType();
  RankedTensorType result = getType();
  ShapeBinder binder(*this);
  if (failed(binder.expectElementType("'input'", input)) ||
      failed(binder.expectElementType("result", result)))
    return failure();

  int64_t numDynamic = result.getNumDynamicDims();
  if (static_cast<int64_t>(getDynamicSizes().size()) != numDynamic)
    return emitOpError() << "expected " << numDynamic
                         << " 'dynamic_sizes' (one per dynamic dim of the "
                            "result), got "
                         << getDynamicSizes().size();

  if (input.hasStaticShape() && result.hasStaticShape()) {
    if (input.getNumElements() != result.getNumElements())
      return emitOpError() << "result expected " << input.getNumElements()
                           << " elements (as many as 'input'), got "
                           << result.getNumElements() << " in " << result;
    return success();
  }
  // With one side static, the static dims of the other must divide its
  // element count, or no run-time size makes the counts agree.
  if (input.hasStaticShape() &&
      !canHold(getStaticProduct(result), input.getNumElements()))
    return emitOpError() << "result expected static dims whose product divides "
                         << input.getNumElements()
                         << " (elements of 'input'), got " << result;
  if (result.hasStaticShape() &&
      !canHold(getStaticProduct(input), result.getNumElements()))
    return emitOpError() << "'input' expected static dims whose product "
                            "divides "
                         << result.getNumElements()
                         << " (elements of the result), got " << input;
  return success();
}

LogicalResult SplitHeadsOp::verify() {
  int64_t heads = getHeads();
  if (heads <= 0)
    return emitOpError() << "expected positive 'heads', got " << heads;
  ShapeBinder binder(*this);
  if (failed(binder.bind("'input'", getInput().getType(),
                         {"batch", "length", "heads*head_dim"})))
    return failure();
  int64_t features = binder.lookup("heads*head_dim");
  if (!ShapedType::isDynamic(features) && features % heads != 0)
    return emitOpError()
           << "'input' expected a last dim divisible by 'heads' = " << heads
           << ", got " << getInput().getType();
  binder.define("heads", heads, "the 'heads' attribute");
  binder.define("head_dim",
                ShapedType::isDynamic(features) ? ShapedType::kDynamic
                                                : features / heads,
                "dim 2 of 'input' over 'heads'");
  return binder.expectResult(getType(),
                             {"batch", "heads", "length", "head_dim"});
}

LogicalResult MergeHeadsOp::verify() {
  ShapeBinder binder(*this);
  if (failed(binder.bind("'input'", getInput().getType(),
                         {"batch", "heads", "length", "head_dim"})))
    return failure();
  int64_t heads = binder.lookup("heads");
  int64_t headDim = binder.lookup("head_dim");
  binder.define("heads*head_dim",
                ShapedType::isDynamic(heads) || ShapedType::isDynamic(headDim)
                    ? ShapedType::kDynamic
                    : heads * headDim,
                "dims 1 and 3 of 'input'");
  return binder.expectResult(getType(), {"batch", "length", "heads*head_dim"});
}

LogicalResult SliceOp::verify() {
  RankedTensorType input = getInput().getType();
  RankedTensorType result = getType();
  int64_t rank = input.getRank();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= rank)
    return emitOpError() << "expected 'axis' in [0, " << rank
                         << ") (rank of 'input'), got " << axis;
  ShapeBinder binder(*this);
  if (failed(binder.expectElementType("'input'", input)) ||
      failed(binder.expectElementType("result", result)))
    return failure();
  // The bounds are SSA values: the size along `axis` is whatever the result
  // type says, as long as it fits.
  bool sameOtherDims =
      result.getRank() == rank &&
      llvm::all_of(llvm::seq<int64_t>(0, rank), [&](int64_t dim) {
        return dim == axis || result.getDimSize(dim) == input.getDimSize(dim);
      });
  if (!sameOtherDims)
    return emitOpError() << "result expected the shape of 'input' "
                         << formatShape(input.getShape())
                         << " with any size along axis " << axis << ", got "
                         << result;
  int64_t size = result.getDimSize(axis);
  int64_t available = input.getDimSize(axis);
  if (!ShapedType::isDynamic(size) && !ShapedType::isDynamic(available) &&
      size > available)
    return emitOpError() << "result expected at most " << available
                         << " elements along axis " << axis << " (dim " << axis
                         << " of 'input'), got " << result;
  return success();
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "expected at least one input";
  auto first = cast<RankedTensorType>(getInputs().front().getType());
  int64_t rank = first.getRank();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= rank)
    return emitOpError() << "expected 'axis' in [0, " << rank
                         << ") (rank of the inputs), got " << axis;

  ShapeBinder binder(*this);
  binder.setElementType("'inputs' #0", first);
  SmallVector<int64_t> shape(first.getShape());
  for (auto [i, value] : llvm::enumerate(getInputs().drop_front())) {
    auto type = cast<RankedTensorType>(value.getType());
    std::string label = "'inputs' #" + std::to_string(i + 1);
    if (failed(binder.expectElementType(label, type)))
      return failure();
    if (type.getRank() != rank)
      return emitOpError() << label << " expected rank " << rank
                           << " (of 'inputs' #0), got " << type;
    for (int64_t dim = 0; dim < rank; ++dim) {
      int64_t size = type.getDimSize(dim);
      if (dim == axis) {
        shape[dim] =
            ShapedType::isDynamic(shape[dim]) || ShapedType::isDynamic(size)
                ? ShapedType::kDynamic
                : shape[dim] + size;
        continue;
      }
      if (!areCompatible(shape[dim], size))
        return emitOpError()
               << label << " expected dim " << dim << " = " << shape[dim]
               << " (as in the inputs before it, all dims but axis " << axis
               << " agree), got " << type;
      if (ShapedType::isDynamic(shape[dim]))
        shape[dim] = size;
    }
  }
  return binder.expectResultShape(
      getType(), shape, "the inputs concatenated along axis " + Twine(axis));
}

LogicalResult ReduceOp::verify() {
  RankedTensorType input = getInput().getType();
  ArrayRef<int64_t> axes = getAxes();
  int64_t rank = input.getRank();
  for (auto [i, axis] : llvm::enumerate(axes))
    if (axis < 0 || axis >= rank || (i > 0 && axis <= axes[i - 1]))
      return emitOpError() << "expected 'axes' sorted, unique and in [0, "
                           << rank << "), got " << formatList(axes);
  SmallVector<int64_t> shape;
  for (int64_t dim = 0; dim < rank; ++dim) {
    if (!llvm::is_contained(axes, dim))
      shape.push_back(input.getDimSize(dim));
    else if (getKeepdim())
      shape.push_back(1);
  }
  ShapeBinder binder(*this);
  binder.setElementType("'input'", input);
  return binder.expectResultShape(
      getType(), shape,
      getKeepdim() ? "'input' with the reduced dims kept as 1"
                   : "'input' without the reduced dims");
}

LogicalResult ArangeOp::verify() {
  if (getType().getRank() != 1)
    return emitOpError() << "result expected rank 1 ([length]), got "
                         << getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Dense layers and normalization
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  ShapeBinder binder(*this);
  SmallVector<int64_t> lhsBatch, rhsBatch;
  SmallVector<StringRef> rhsSymbols = {"...", "k", "n"};
  if (getTransposeRhs())
    rhsSymbols = {"...", "n", "k"};
  if (failed(binder.bind("'lhs'", getLhs().getType(), {"...", "m", "k"},
                         &lhsBatch)) ||
      failed(binder.bind("'rhs'", getRhs().getType(), rhsSymbols, &rhsBatch)))
    return failure();
  FailureOr<SmallVector<int64_t>> batch = broadcastShapes(lhsBatch, rhsBatch);
  if (failed(batch))
    return emitOpError()
           << "'lhs' and 'rhs' expected broadcastable batch dims, got "
           << formatShape(lhsBatch) << " and " << formatShape(rhsBatch);
  return binder.expectResult(getType(), {"...", "m", "n"}, *batch);
}

bool mlir::seq::isQuantizedWeightUse(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto linear = dyn_cast<LinearOp>(user))
    return use.getOperandNumber() ==
           linear.getWeightMutable().getOperandNumber();
  if (auto embedding = dyn_cast<EmbeddingOp>(user))
    return use.getOperandNumber() ==
           embedding.getTableMutable().getOperandNumber();
  return false;
}

LogicalResult DequantizeOp::verify() {
  std::optional<WeightFormatInfo> format = getWeightFormat(getFormat());
  if (!format)
    return emitOpError() << "has unknown format '" << getFormat()
                         << "' (expected one of " << kWeightFormatNames << ")";
  auto blocks = cast<RankedTensorType>(getBlocks().getType());
  RankedTensorType result = getType();
  if (!blocks.hasStaticShape() || blocks.getRank() != 3 ||
      result.getRank() != 2 || !result.hasStaticShape() ||
      result.getDimSize(0) != blocks.getDimSize(0) ||
      (!format->isPerRow() &&
       result.getDimSize(1) % format->blockElements != 0) ||
      blocks.getDimSize(1) != format->blocksPerRow(result.getDimSize(1)) ||
      blocks.getDimSize(2) != format->bytesPerBlock(result.getDimSize(1))) {
    if (format->isPerRow())
      return emitOpError() << "blocks " << blocks << " of " << getFormat()
                           << " must be [out, 1, in + " << format->blockBytes
                           << "] for a result " << result;
    return emitOpError() << "blocks " << blocks << " of " << getFormat()
                         << " must be [out, in / " << format->blockElements
                         << ", " << format->blockBytes << "] for a result "
                         << result;
  }
  for (OpOperand &use : getResult().getUses()) {
    if (isQuantizedWeightUse(use))
      continue;
    return emitOpError() << "result is used by '"
                         << use.getOwner()->getName()
                         << "': a weight stored in " << getFormat()
                         << " can only be the weight of a Linear (x @ W^T) "
                            "or the table of an embedding";
  }
  return success();
}

LogicalResult LinearOp::verify() {
  ShapeBinder binder(*this);
  SmallVector<int64_t> batch;
  if (failed(binder.bind("'input'", getInput().getType(), {"...", "in"},
                         &batch)) ||
      failed(binder.bind("'weight'", getWeight().getType(), {"out", "in"})))
    return failure();
  if (getBias() && failed(binder.bind("'bias'", getBias().getType(), {"out"})))
    return failure();
  return binder.expectResult(getType(), {"...", "out"}, batch);
}

/// Shared by layer_norm and rms_norm: `input` is `[..., d]`, the optional
/// scale and shift are `[d]`, the result has the input's type.
static LogicalResult verifyNormalization(Operation *op, Value input,
                                         Value gamma, Value beta,
                                         Type resultType, double eps) {
  if (failed(verifyNonNegative(op, "eps", eps)))
    return failure();
  ShapeBinder binder(op);
  SmallVector<int64_t> batch;
  if (failed(binder.bind("'input'", input.getType(), {"...", "d"}, &batch)))
    return failure();
  if (gamma && failed(binder.bind("'gamma'", gamma.getType(), {"d"})))
    return failure();
  if (beta && failed(binder.bind("'beta'", beta.getType(), {"d"})))
    return failure();
  return binder.expectResult(resultType, {"...", "d"}, batch);
}

LogicalResult LayerNormOp::verify() {
  // The custom form tells the two optional operands apart by position only,
  // and `beta` alone (a shift without a scale) is no PyTorch configuration.
  if (getBeta() && !getGamma())
    return emitOpError() << "expected 'gamma' when 'beta' is present";
  return verifyNormalization(*this, getInput(), getGamma(), getBeta(),
                             getType(), getEps().convertToDouble());
}

LogicalResult RMSNormOp::verify() {
  return verifyNormalization(*this, getInput(), getGamma(), /*beta=*/Value(),
                             getType(), getEps().convertToDouble());
}

LogicalResult SoftmaxOp::verify() {
  int64_t rank = getInput().getType().getRank();
  int64_t axis = getAxis();
  if (axis < -rank || axis >= rank)
    return emitOpError() << "expected 'axis' in [" << -rank << ", " << rank
                         << ") (rank of 'input'), got " << axis;
  return success();
}

LogicalResult EmbeddingOp::verify() {
  ShapeBinder binder(*this);
  if (failed(binder.bind("'table'", getTable().getType(), {"vocab", "dim"})))
    return failure();
  SmallVector<int64_t> shape(getIndices().getType().getShape());
  shape.push_back(binder.lookup("dim"));
  return binder.expectResultShape(
      getType(), shape, "the shape of 'indices' followed by dim 1 of 'table'");
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

LogicalResult ApplyMaskOp::verify() {
  ShapeBinder binder(*this);
  RankedTensorType scores = getScores().getType();
  if (failed(binder.bind("'scores'", scores, {"...", "n_q", "n_k"})))
    return failure();
  if (getLengths()) {
    if (scores.getRank() < 3)
      return emitOpError() << "'scores' expected rank >= 3 ([batch, ..., n_q, "
                              "n_k]) with 'lengths', got "
                           << scores;
    binder.define("batch", scores.getDimSize(0), "dim 0 of 'scores'");
    if (failed(binder.bind("'lengths'", getLengths().getType(), {"batch"},
                           /*leading=*/nullptr, /*sameElementType=*/false)))
      return failure();
  }
  if (failed(verifyMaskPositions(*this, getMask(), binder.lookup("n_q"),
                                 binder.lookup("n_k"))))
    return failure();
  return binder.expectResultShape(getType(), scores.getShape(),
                                  "the shape of 'scores'");
}

LogicalResult AttentionOp::verify() {
  ShapeBinder binder(*this);
  if (failed(binder.bind("'query'", getQuery().getType(),
                         {"batch", "heads", "n_q", "d"})) ||
      failed(binder.bind("'key'", getKey().getType(),
                         {"batch", "kv_heads", "n_k", "d"})) ||
      failed(binder.bind("'value'", getValue().getType(),
                         {"batch", "kv_heads", "n_k", "d_v"})))
    return failure();

  // Grouped-query attention: each kv head serves heads / kv_heads query
  // heads, so the grouping must be exact.
  int64_t heads = binder.lookup("heads");
  int64_t kvHeads = binder.lookup("kv_heads");
  if (!ShapedType::isDynamic(heads) && !ShapedType::isDynamic(kvHeads) &&
      (kvHeads == 0 || heads % kvHeads != 0))
    return emitOpError() << "expected heads = " << heads << " ("
                         << binder.origin("heads")
                         << ") to be a multiple of kv_heads = " << kvHeads
                         << " (" << binder.origin("kv_heads") << ")";

  if (getLengths() &&
      failed(binder.bind("'lengths'", getLengths().getType(), {"batch"},
                         /*leading=*/nullptr, /*sameElementType=*/false)))
    return failure();
  if (getAlibi() &&
      failed(binder.bind("'alibi'", getAlibi().getType(), {"heads"})))
    return failure();
  if (getQueryOffsets() &&
      failed(binder.bind("'query_offsets'", getQueryOffsets().getType(),
                         {"batch"}, /*leading=*/nullptr,
                         /*sameElementType=*/false)))
    return failure();

  if (Value bias = getBias()) {
    auto biasType = cast<RankedTensorType>(bias.getType());
    if (failed(binder.expectElementType("'bias'", biasType)))
      return failure();
    SmallVector<StringRef> symbols = {"batch", "heads", "n_q", "n_k"};
    SmallVector<int64_t> scores = llvm::map_to_vector(
        symbols, [&](StringRef s) { return binder.lookup(s); });
    if (!isBroadcastableTo(biasType.getShape(), scores))
      return emitOpError() << "'bias' expected a shape broadcastable to "
                              "[batch, heads, n_q, n_k] = "
                           << formatShape(scores) << ", got " << biasType;
    // A bias dim other than 1 fixes the size it is aligned with.
    int64_t offset = scores.size() - biasType.getRank();
    for (int64_t dim = 0; dim < biasType.getRank(); ++dim)
      if (biasType.getDimSize(dim) != 1)
        binder.refine(symbols[offset + dim], biasType.getDimSize(dim),
                      "dim " + Twine(dim) + " of 'bias'");
  }

  if (std::optional<APFloat> scale = getScale()) {
    if (failed(verifyPositive(*this, "scale", scale->convertToDouble())))
      return failure();
  } else if (ShapedType::isDynamic(binder.lookup("d"))) {
    // getEffectiveScale() needs a number.
    return emitOpError() << "expected a 'scale' attribute when the head dim "
                            "(dim 3 of 'query') is dynamic, got "
                         << getQuery().getType();
  }

  // Offset queries are placed on the keys' positions, whatever n_q is.
  if (!getQueryOffsets() &&
      failed(verifyMaskPositions(*this, getMaskAttr(), binder.lookup("n_q"),
                                 binder.lookup("n_k"))))
    return failure();
  return binder.expectResult(getType(), {"batch", "heads", "n_q", "d_v"});
}

double AttentionOp::getEffectiveScale() {
  if (std::optional<APFloat> scale = getScale())
    return scale->convertToDouble();
  // The verifier guarantees a static head dim when `scale` is absent.
  int64_t headDim = getQuery().getType().getDimSize(3);
  return 1.0 / std::sqrt(static_cast<double>(headDim));
}

LogicalResult OnlineAttentionOp::verify() {
  ShapeBinder binder(*this);
  // Q, K and V are f32, bf16 or f16 (read in place), the state f32.
  if (failed(binder.bind("'query'", getQuery().getType(), {"r", "d"},
                         nullptr, /*sameElementType=*/false)) ||
      failed(binder.bind("'key'", getKey().getType(),
                         getKeyTransposed() ? ArrayRef<StringRef>{"d", "c"}
                                            : ArrayRef<StringRef>{"c", "d"},
                         nullptr, /*sameElementType=*/false)) ||
      failed(binder.bind("'value'", getValue().getType(), {"c", "d_v"},
                         nullptr, /*sameElementType=*/false)) ||
      failed(binder.bind("'acc'", getAcc().getType(), {"r", "d_v"})) ||
      failed(binder.bind("'max'", getMax().getType(), {"r"})) ||
      failed(binder.bind("'sum'", getSum().getType(), {"r"})))
    return failure();
  if (getQuery().getType().getElementType() !=
      getKey().getType().getElementType())
    return emitOpError() << "expected 'query' and 'key' of one element type, "
                            "got "
                         << getQuery().getType().getElementType() << " and "
                         << getKey().getType().getElementType();
  // The mask compares absolute positions.
  const bool masked = static_cast<bool>(getMaskAttr());
  if (getOffsets().size() != (masked ? 2u : 0u))
    return emitOpError() << "expected "
                         << (masked ? "the query and key offsets (2) with"
                                    : "no offsets without")
                         << " a mask, got " << getOffsets().size();
  if (getSlope()) {
    if (!getQueryPositions() || !getKeyPositions())
      return emitOpError() << "expected the query and key positions with "
                              "the ALiBi slope";
    if (failed(binder.bind("'query_positions'",
                           getQueryPositions().getType(), {"r"})) ||
        failed(binder.bind("'key_positions'", getKeyPositions().getType(),
                           {"c"})))
      return failure();
  } else if (getQueryPositions() || getKeyPositions()) {
    return emitOpError() << "expected positions only with an ALiBi slope";
  }
  if (Value bias = getBias()) {
    auto biasType = cast<RankedTensorType>(bias.getType());
    if (biasType.getRank() != 1 && biasType.getRank() != 2)
      return emitOpError() << "expected 'bias' of rank 1 ([c]) or 2 ([r, c]), "
                              "got "
                           << biasType;
    if (failed(binder.bind("'bias'", biasType,
                           biasType.getRank() == 1
                               ? ArrayRef<StringRef>{"c"}
                               : ArrayRef<StringRef>{"r", "c"},
                           nullptr, /*sameElementType=*/false)))
      return failure();
  }
  return success();
}

LogicalResult AttentionFinalizeOp::verify() {
  ShapeBinder binder(*this);
  auto accType = getAcc().getType();
  if (accType.getRank() != 2 && accType.getRank() != 3)
    return emitOpError() << "expected 'acc' of rank 2 ([r, d_v]) or 3 "
                            "([p, r, d_v]), got "
                         << accType;
  if (accType.getRank() == 3) {
    if (failed(binder.bind("'acc'", accType, {"p", "r", "d_v"})) ||
        failed(binder.bind("'max'", getMax().getType(), {"p", "r"})) ||
        failed(binder.bind("'sum'", getSum().getType(), {"p", "r"})))
      return failure();
  } else if (failed(binder.bind("'acc'", accType, {"r", "d_v"})) ||
             failed(binder.bind("'max'", getMax().getType(), {"r"})) ||
             failed(binder.bind("'sum'", getSum().getType(), {"r"}))) {
    return failure();
  }
  return binder.expectResult(getType(), {"r", "d_v"});
}

LogicalResult MultiHeadAttentionOp::verify() {
  int64_t heads = getHeads();
  int64_t kvHeads = getKvHeads();
  if (heads <= 0)
    return emitOpError() << "expected positive 'heads', got " << heads;
  if (kvHeads <= 0)
    return emitOpError() << "expected positive 'kv_heads', got " << kvHeads;
  if (heads % kvHeads != 0)
    return emitOpError() << "expected 'heads' = " << heads
                         << " to be a multiple of 'kv_heads' = " << kvHeads;

  ShapeBinder binder(*this);
  if (failed(binder.bind("'input'", getInput().getType(),
                         {"batch", "n", "model_dim"})))
    return failure();
  // Self-attention projects keys and values from the input itself.
  StringRef kvDim = "model_dim";
  if (getKv()) {
    kvDim = "kv_dim";
    if (failed(
            binder.bind("'kv'", getKv().getType(), {"batch", "n_kv", kvDim})))
      return failure();
  }

  if (failed(binder.bind("'wq'", getWq().getType(), {"heads*d", "model_dim"})))
    return failure();
  int64_t queryDim = binder.lookup("heads*d");
  int64_t headDim = ShapedType::kDynamic;
  if (!ShapedType::isDynamic(queryDim)) {
    if (queryDim % heads != 0)
      return emitOpError() << "'wq' expected dim 0 divisible by 'heads' = "
                           << heads << " ([heads*d, model_dim]), got "
                           << getWq().getType();
    headDim = queryDim / heads;
    binder.define("kv_heads*d", kvHeads * headDim,
                  "'kv_heads' = " + Twine(kvHeads) +
                      " times d = " + Twine(headDim) + " from 'wq'");
  }
  if (failed(binder.bind("'wk'", getWk().getType(), {"kv_heads*d", kvDim})) ||
      failed(binder.bind("'wv'", getWv().getType(), {"kv_heads*d", kvDim})) ||
      failed(binder.bind("'wo'", getWo().getType(), {"model_dim", "heads*d"})))
    return failure();

  // Biases come as a set, as `nn.MultiheadAttention(bias=...)` has them.
  OperandRange biases = getBiases();
  if (!biases.empty()) {
    if (biases.size() != 4)
      return emitOpError() << "expected 0 or 4 'biases' (bq, bk, bv, bo), got "
                           << biases.size();
    if (failed(binder.bind("'biases' #0 (bq)", biases[0].getType(),
                           {"heads*d"})) ||
        failed(binder.bind("'biases' #1 (bk)", biases[1].getType(),
                           {"kv_heads*d"})) ||
        failed(binder.bind("'biases' #2 (bv)", biases[2].getType(),
                           {"kv_heads*d"})) ||
        failed(binder.bind("'biases' #3 (bo)", biases[3].getType(),
                           {"model_dim"})))
      return failure();
  }

  if (getLengths() &&
      failed(binder.bind("'lengths'", getLengths().getType(), {"batch"},
                         /*leading=*/nullptr, /*sameElementType=*/false)))
    return failure();

  if (std::optional<APFloat> theta = getRopeTheta()) {
    if (failed(verifyPositive(*this, "rope_theta", theta->convertToDouble())))
      return failure();
    // Rotary embeddings rotate pairs of features.
    if (!ShapedType::isDynamic(headDim) && headDim % 2 != 0)
      return emitOpError() << "expected an even head dim with 'rope_theta', "
                              "got d = "
                           << headDim << " (dim 0 of 'wq' over 'heads')";
  }

  if (getKv() &&
      failed(verifyMaskPositions(*this, getMaskAttr(), binder.lookup("n"),
                                 binder.lookup("n_kv"))))
    return failure();
  return binder.expectResult(getType(), {"batch", "n", "model_dim"});
}

//===----------------------------------------------------------------------===//
// Position encodings
//===----------------------------------------------------------------------===//

LogicalResult SinusoidalPEOp::verify() {
  if (failed(verifyPositive(*this, "base", getBase().convertToDouble())))
    return failure();
  RankedTensorType result = getType();
  if (result.getRank() != 2)
    return emitOpError() << "result expected rank 2 ([length, d]), got "
                         << result;
  // Sines and cosines alternate over feature pairs.
  int64_t dim = result.getDimSize(1);
  if (ShapedType::isDynamic(dim) || dim % 2 != 0)
    return emitOpError() << "result expected a static even d (dim 1), got "
                         << result;
  return success();
}

LogicalResult CacheWriteOp::verify() {
  ShapeBinder binder(*this);
  if (failed(binder.bind("'cache'", getCache().getType(),
                         {"batch", "heads", "max_len", "d"})) ||
      failed(binder.bind("'values'", getValues().getType(),
                         {"batch", "heads", "n", "d"})) ||
      failed(binder.bind("'positions'", getPositions().getType(), {"batch"},
                         /*leading=*/nullptr, /*sameElementType=*/false)))
    return failure();
  int64_t maxLen = binder.lookup("max_len"), n = binder.lookup("n");
  if (ShapedType::isStatic(maxLen) && ShapedType::isStatic(n) && n > maxLen)
    return emitOpError() << "expected at most max_len = " << maxLen
                         << " (dim 2 of 'cache') new rows, got n = " << n;
  return success();
}

LogicalResult StateStoreOp::verify() {
  // The store writes the buffer the caller passes for this argument (the
  // runtime's state buffer when the argument carries `seq.state`), so the
  // state must be an entry argument of the function.
  auto arg = dyn_cast<BlockArgument>(getState());
  auto func = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
                  : func::FuncOp();
  if (!func || arg.getOwner() != &func.getBody().front())
    return emitOpError() << "expected 'state' to be an argument of the "
                            "enclosing function";
  for (Operation *user : getState().getUsers())
    if (user != getOperation() &&
        user->getBlock() == getOperation()->getBlock() &&
        getOperation()->isBeforeInBlock(user))
      return emitOpError() << "expected no use of 'state' after the store";
  return success();
}

LogicalResult RopeOp::verify() {
  if (failed(verifyPositive(*this, "theta", getTheta().convertToDouble())))
    return failure();
  ShapeBinder binder(*this);
  if (failed(binder.bind("'input'", getInput().getType(),
                         {"batch", "heads", "n", "d"})))
    return failure();
  if (getOffsets() &&
      failed(binder.bind("'offsets'", getOffsets().getType(), {"batch"},
                         /*leading=*/nullptr, /*sameElementType=*/false)))
    return failure();
  int64_t headDim = binder.lookup("d");
  if (std::optional<int64_t> rotaryDims = getRotaryDims()) {
    if (*rotaryDims <= 0 || *rotaryDims % 2 != 0)
      return emitOpError() << "expected positive even 'rotary_dims', got "
                           << *rotaryDims;
    if (!ShapedType::isDynamic(headDim) && *rotaryDims > headDim)
      return emitOpError() << "expected 'rotary_dims' at most d = " << headDim
                           << " (dim 3 of 'input'), got " << *rotaryDims;
  } else if (!ShapedType::isDynamic(headDim) && headDim % 2 != 0) {
    return emitOpError() << "'input' expected an even d (dim 3) when "
                            "'rotary_dims' is absent, got "
                         << getInput().getType();
  }
  return success();
}

LogicalResult AlibiOp::verify() {
  // Folding needs the number of heads.
  RankedTensorType result = getType();
  if (result.getRank() != 1 || !result.hasStaticShape() ||
      result.getDimSize(0) == 0)
    return emitOpError() << "result expected a static shape [heads] with "
                            "heads > 0, got "
                         << result;
  return success();
}

SmallVector<double> AlibiOp::computeSlopes(int64_t heads) {
  SmallVector<double> slopes;
  if (heads <= 0)
    return slopes;
  // For a power of two p, the slopes are the geometric sequence
  // 2^(-8/p), 2^(-16/p), ..., 2^-8.
  int64_t pow2 = llvm::bit_floor(static_cast<uint64_t>(heads));
  for (int64_t i = 1; i <= pow2; ++i)
    slopes.push_back(std::exp2(-8.0 * i / pow2));
  // Otherwise the remaining heads take every other slope of 2p heads, from
  // the first: 2^(-8 (2k + 1) / (2p)). These interleave with the first p, so
  // all slopes stay distinct and within (2^-8, 1).
  for (int64_t k = 0; k < heads - pow2; ++k)
    slopes.push_back(std::exp2(-8.0 * (2 * k + 1) / (2 * pow2)));
  return slopes;
}

OpFoldResult AlibiOp::fold(FoldAdaptor) {
  RankedTensorType type = getType();
  if (!type.hasStaticShape())
    return {};
  return getFloatElements(type, computeSlopes(type.getDimSize(0)));
}

//===----------------------------------------------------------------------===//
// Linear attention
//===----------------------------------------------------------------------===//

LogicalResult LinearAttentionOp::verify() {
  if (failed(verifyNonNegative(*this, "eps", getEps().convertToDouble())))
    return failure();
  ShapeBinder binder(*this);
  if (failed(binder.bind("'query'", getQuery().getType(),
                         {"batch", "heads", "n", "d"})) ||
      failed(binder.bind("'key'", getKey().getType(),
                         {"batch", "heads", "n", "d"})) ||
      failed(binder.bind("'value'", getValue().getType(),
                         {"batch", "heads", "n", "d_v"})))
    return failure();
  bool hasInitial = getInitialState() || getInitialNormalizer();
  bool hasFinal = getFinalState() || getFinalNormalizer();
  if (hasInitial && !(getInitialState() && getInitialNormalizer()))
    return emitOpError() << "expected both an initial state and an initial "
                            "normalizer, or neither";
  if (hasFinal && !(getFinalState() && getFinalNormalizer()))
    return emitOpError()
           << "expected both a final state and a final normalizer, or neither";
  if ((hasInitial || hasFinal) && !getCausal())
    return emitOpError() << "expected 'causal' with a carried state (the "
                            "non-causal form has no recurrence)";
  if (hasInitial &&
      (failed(binder.bind("'initial_state'", getInitialState().getType(),
                          {"batch", "heads", "d", "d_v"})) ||
       failed(binder.bind("'initial_normalizer'",
                          getInitialNormalizer().getType(),
                          {"batch", "heads", "d"}))))
    return failure();
  if (failed(binder.expectResult(getResult().getType(),
                                 {"batch", "heads", "n", "d_v"})))
    return failure();
  if (hasFinal && (failed(binder.expectResult(getFinalState().getType(),
                                              {"batch", "heads", "d", "d_v"},
                                              {}, "'final_state'")) ||
                   failed(binder.expectResult(getFinalNormalizer().getType(),
                                              {"batch", "heads", "d"}, {},
                                              "'final_normalizer'"))))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// State-space models
//===----------------------------------------------------------------------===//

LogicalResult HippoOp::verify() {
  // Folding needs the state size.
  RankedTensorType a = getA().getType();
  if (a.getRank() != 2 || !a.hasStaticShape() || a.getDimSize(0) == 0)
    return emitOpError()
           << "'a' expected a static shape [N, N] with N > 0, got " << a;
  ShapeBinder binder(*this);
  if (failed(binder.bind("'a'", a, {"N", "N"})))
    return failure();
  return binder.expectResult(getB().getType(), {"N"}, {}, "'b'");
}

LogicalResult HippoOp::fold(FoldAdaptor,
                            SmallVectorImpl<OpFoldResult> &results) {
  RankedTensorType aType = getA().getType();
  RankedTensorType bType = getB().getType();
  if (!aType.hasStaticShape() || !bType.hasStaticShape())
    return failure();
  int64_t n = aType.getDimSize(0);
  SmallVector<double> a(n * n, 0.0), b(n);
  for (int64_t row = 0; row < n; ++row) {
    double rowScale = std::sqrt(2.0 * row + 1.0);
    b[row] = rowScale;
    for (int64_t col = 0; col < row; ++col)
      a[row * n + col] = -rowScale * std::sqrt(2.0 * col + 1.0);
    a[row * n + row] = -(row + 1.0);
  }
  results.push_back(getFloatElements(aType, a));
  results.push_back(getFloatElements(bType, b));
  return success();
}

LogicalResult SSMOp::verify() {
  if (failed(verifyPositive(*this, "step", getStep().convertToDouble())))
    return failure();
  ShapeBinder binder(*this);
  if (failed(
          binder.bind("'input'", getInput().getType(), {"batch", "L", "H"})) ||
      failed(binder.bind("'a'", getA().getType(), {"N", "N"})) ||
      failed(binder.bind("'b'", getB().getType(), {"H", "N"})) ||
      failed(binder.bind("'c'", getC().getType(), {"H", "N"})) ||
      failed(binder.bind("'d'", getD().getType(), {"H"})))
    return failure();
  return binder.expectResult(getType(), {"batch", "L", "H"});
}

LogicalResult SelectiveScanOp::verify() {
  ShapeBinder binder(*this);
  if (failed(
          binder.bind("'input'", getInput().getType(), {"batch", "L", "D"})) ||
      failed(
          binder.bind("'delta'", getDelta().getType(), {"batch", "L", "D"})) ||
      failed(binder.bind("'a'", getA().getType(), {"D", "N"})) ||
      failed(binder.bind("'b'", getB().getType(), {"batch", "L", "N"})) ||
      failed(binder.bind("'c'", getC().getType(), {"batch", "L", "N"})))
    return failure();
  if (getD() && failed(binder.bind("'d'", getD().getType(), {"D"})))
    return failure();
  if (getZ() &&
      failed(binder.bind("'z'", getZ().getType(), {"batch", "L", "D"})))
    return failure();
  if (getDeltaBias() &&
      failed(binder.bind("'delta_bias'", getDeltaBias().getType(), {"D"})))
    return failure();
  if (getInitialState() &&
      failed(binder.bind("'initial_state'", getInitialState().getType(),
                         {"batch", "D", "N"})))
    return failure();
  if (failed(binder.expectResult(getResult().getType(), {"batch", "L", "D"})))
    return failure();
  if (getFinalState())
    return binder.expectResult(getFinalState().getType(), {"batch", "D", "N"},
                               {}, "'final_state'");
  return success();
}

LogicalResult Conv1dOp::verify() {
  ShapeBinder binder(*this);
  if (failed(
          binder.bind("'input'", getInput().getType(), {"batch", "L", "C"})) ||
      failed(binder.bind("'weight'", getWeight().getType(), {"C", "K"})))
    return failure();
  if (getBias() && failed(binder.bind("'bias'", getBias().getType(), {"C"})))
    return failure();
  return binder.expectResult(getType(), {"batch", "L", "C"});
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::verify() {
  double smoothing = getLabelSmoothing().convertToDouble();
  if (!(smoothing >= 0.0 && smoothing <= 1.0))
    return emitOpError() << "expected 'label_smoothing' in [0, 1], got "
                         << smoothing;
  ShapeBinder binder(*this);
  SmallVector<int64_t> positions;
  if (failed(binder.bind("'logits'", getLogits().getType(), {"...", "C"},
                         &positions)))
    return failure();
  RankedTensorType targets = getTargets().getType();
  if (targets.getRank() != static_cast<int64_t>(positions.size()) ||
      !llvm::all_of(
          llvm::zip_equal(targets.getShape(), positions), [](auto pair) {
            return areCompatible(std::get<0>(pair), std::get<1>(pair));
          }))
    return emitOpError() << "'targets' expected shape "
                         << formatShape(positions)
                         << " (the shape of 'logits' without its last dim), "
                            "got "
                         << targets;
  return binder.expectResultShape(getType(), {}, "a scalar");
}

#define GET_OP_CLASSES
#include "dialect/Seq/IR/SeqOps.cpp.inc"
