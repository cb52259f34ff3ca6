//===- Shapes.cpp - dimensions, broadcasting, shape matching --------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The frontend tracks a name for every dynamic dimension that comes from the
// model's signature, so that errors say `n` where the IR says `?` and so that
// two differently named dimensions are never silently combined. Shape
// matching binds symbols with the verifiers' own ShapeBindings
// (dialect/Seq/IR/SeqShapes.h) over these named dimensions, so the result
// types the frontend computes are the ones the verifiers require.
// Broadcasting follows the cases of the verifier's broadcastShapes.
//
//===----------------------------------------------------------------------===//

#include "frontend/Elaborator.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::seq::frontend;

/// The most elements a tensor with a static shape may have: 2^32.
static constexpr int64_t kMaxElements = int64_t(1) << 32;

std::string Dim::str() const {
  if (isStatic())
    return std::to_string(size);
  if (symbol)
    return symbol.getValue().str();
  return "?";
}

std::string mlir::seq::frontend::formatShape(ArrayRef<Dim> shape) {
  std::string str = "[";
  llvm::raw_string_ostream os(str);
  llvm::interleaveComma(shape, os, [&](const Dim &dim) { os << dim.str(); });
  os << "]";
  return str;
}

std::string mlir::seq::frontend::formatElementType(Type type) {
  std::string str;
  llvm::raw_string_ostream os(str);
  os << type;
  return str;
}

std::string TensorVal::str() const {
  return formatElementType(getElementType()) + formatShape(shape);
}

RankedTensorType mlir::seq::frontend::getTensorType(ArrayRef<Dim> shape,
                                                    Type elementType) {
  SmallVector<int64_t> sizes =
      llvm::map_to_vector(shape, [](const Dim &dim) { return dim.size; });
  return RankedTensorType::get(sizes, elementType);
}

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

FailureOr<Shape> Elaborator::broadcastBatch(llvm::SMLoc loc, ArrayRef<Dim> lhs,
                                            ArrayRef<Dim> rhs,
                                            const TensorVal &lhsValue,
                                            const TensorVal &rhsValue,
                                            StringRef what) {
  size_t rank = std::max(lhs.size(), rhs.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Missing leading dimensions act as 1.
    Dim a = i < lhs.size() ? lhs[lhs.size() - 1 - i] : Dim::fixed(1);
    Dim b = i < rhs.size() ? rhs[rhs.size() - 1 - i] : Dim::fixed(1);
    Dim &out = result[rank - 1 - i];
    // The cases and their order are those of the verifier's broadcastShapes.
    if (a.isOne()) {
      out = b;
    } else if (b.isOne()) {
      out = a;
    } else if (!a.isStatic()) {
      if (areDistinctSymbols(a, b))
        return emitError(loc)
               << "cannot broadcast " << lhsValue.str() << " and "
               << rhsValue.str() << " in " << what << ": dimension " << a.str()
               << " is not " << b.str();
      out = (b.isStatic() || !a.symbol) ? b : a;
    } else if (!b.isStatic() || a.size == b.size) {
      out = a;
    } else {
      return emitError(loc)
             << "cannot broadcast " << lhsValue.str() << " and "
             << rhsValue.str() << " in " << what << ": dimension " << a.str()
             << " is not " << b.str() << " (sizes must be equal or 1)";
    }
  }
  return result;
}

FailureOr<Shape> Elaborator::broadcast(llvm::SMLoc loc, const TensorVal &lhs,
                                       const TensorVal &rhs, StringRef what) {
  return broadcastBatch(loc, lhs.shape, rhs.shape, lhs, rhs, what);
}

LogicalResult Elaborator::checkStaticSize(llvm::SMLoc loc,
                                          ArrayRef<int64_t> shape,
                                          StringRef what) {
  int64_t elements = 1;
  for (int64_t size : shape) {
    if (size <= 0)
      return emitError(loc) << what << " has a dimension of size " << size
                            << "; sizes must be positive";
    if (size > kMaxElements || llvm::MulOverflow(elements, size, elements) ||
        elements > kMaxElements)
      return emitError(loc) << what << " is too large (more than 2^32 "
                            << "elements)";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ShapeMatcher
//===----------------------------------------------------------------------===//

ShapeMatcher &ShapeMatcher::bind(StringRef label, const TensorVal &value,
                                 ArrayRef<StringRef> symbols, Shape *leading,
                                 bool anyElementType) {
  if (bad)
    return *this;
  Type element = value.getElementType();
  if (!anyElementType) {
    if (!isa<FloatType>(element)) {
      bad = true;
      elab.emitError(loc) << "'" << label << "' of " << op
                          << " must be a float tensor, got " << value.str();
      return *this;
    }
    if (!elementType) {
      elementType = element;
      elementTypeOrigin = label.str();
    } else if (element != elementType) {
      bad = true;
      elab.emitError(loc) << "'" << label << "' of " << op << " is "
                          << value.str() << " but '" << elementTypeOrigin
                          << "' has element type "
                          << formatElementType(elementType);
      return *this;
    }
  }

  ShapePattern pattern(symbols);
  int64_t rank = value.getRank();
  if (!pattern.matchesRank(rank)) {
    bad = true;
    elab.emitError(loc) << "'" << label << "' of " << op << " must have rank "
                        << (pattern.isVariadic() ? "at least " : "")
                        << pattern.getNumNamed() << " " << pattern.str()
                        << ", got " << value.str();
    return *this;
  }
  if (leading)
    leading->assign(value.shape.begin(),
                    value.shape.begin() + pattern.getNumLeading(rank));
  auto where = [&](int64_t dim) {
    return ("dim " + Twine(dim) + " of '" + label + "'").str();
  };
  if (auto conflict =
          bindings.bind(pattern, ArrayRef<Dim>(value.shape), where)) {
    bad = true;
    elab.emitError(loc) << "'" << label << "' of " << op << " must have shape "
                        << pattern.str() << " with " << conflict->symbol
                        << " = " << conflict->binding->dim.str() << " ("
                        << conflict->binding->origin << "), got "
                        << value.str();
  }
  return *this;
}

ShapeMatcher &ShapeMatcher::bindInteger(StringRef label, const TensorVal &value,
                                        ArrayRef<StringRef> symbols) {
  if (bad)
    return *this;
  if (!isa<IntegerType>(value.getElementType())) {
    bad = true;
    elab.emitError(loc) << "'" << label << "' of " << op
                        << " must be an integer tensor, got " << value.str();
    return *this;
  }
  return bind(label, value, symbols, /*leading=*/nullptr,
              /*anyElementType=*/true);
}

void ShapeMatcher::define(StringRef symbol, Dim dim, StringRef origin) {
  bindings.define(symbol, dim, origin.str());
}

Dim ShapeMatcher::lookup(StringRef symbol) const {
  return bindings.lookup(symbol);
}

Shape ShapeMatcher::result(ArrayRef<StringRef> symbols,
                           ArrayRef<Dim> leading) const {
  Shape shape(leading.begin(), leading.end());
  for (StringRef symbol : symbols)
    if (symbol != "...")
      shape.push_back(lookup(symbol));
  return shape;
}
