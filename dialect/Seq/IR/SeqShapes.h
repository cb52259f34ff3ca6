//===- SeqShapes.h - binding symbolic shapes --------------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The seq ops state their shape rules as symbolic shapes such as
// `[batch, heads, n_q, d]`, bound the way an einsum binds its indices: the
// first dimension seen for a symbol binds it, every later one must be
// compatible with it, and a later, more precise one (a static size for a
// dynamic one) refines the binding. Two clients apply the same rules: the op
// verifiers (dialect/Seq/IR/SeqOps.cpp), on sizes, and the frontend
// (frontend/Shapes.cpp), on sizes that also carry the name of a symbolic
// dimension, so that it reports shape errors in the user's terms before it
// builds an op and computes the result type the verifier then requires.
//
// ShapeBindings is templated on the dimension type; DimTraits<DimT> says when
// two dimensions conflict and when one refines another. The clients phrase
// their own messages from what a conflict returns.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_DIALECT_SEQ_IR_SEQSHAPES_H
#define SEQC_DIALECT_SEQ_IR_SEQSHAPES_H

#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::seq {

/// A symbolic shape, `[..., n, d]`: a leading "..." stands for any number of
/// leading dimensions, which no symbol names.
class ShapePattern {
public:
  explicit ShapePattern(ArrayRef<StringRef> symbols)
      : symbols(symbols),
        variadic(!symbols.empty() && symbols.front() == "..."),
        named(variadic ? symbols.drop_front() : symbols) {}

  /// The symbols after the "...", one per trailing dimension.
  ArrayRef<StringRef> getNamed() const { return named; }
  int64_t getNumNamed() const { return named.size(); }
  bool isVariadic() const { return variadic; }

  /// Whether a shape of rank `rank` matches: exactly the named symbols, or at
  /// least them with a "...".
  bool matchesRank(int64_t rank) const {
    return variadic ? rank >= getNumNamed() : rank == getNumNamed();
  }
  /// The number of leading dimensions a shape of rank `rank` has before the
  /// named ones.
  int64_t getNumLeading(int64_t rank) const { return rank - getNumNamed(); }

  /// `[..., n, d]`.
  std::string str() const { return "[" + llvm::join(symbols, ", ") + "]"; }

private:
  ArrayRef<StringRef> symbols;
  bool variadic;
  ArrayRef<StringRef> named;
};

/// How dimensions of type DimT combine. Specializations provide
///   static DimT unknown();   // the value of a symbol nothing bound
///   static bool conflicts(const DimT &bound, const DimT &dim);
///   static bool refines(const DimT &bound, const DimT &dim);
/// `conflicts` says that `dim` cannot be the size `bound` stands for;
/// `refines` that `dim`, compatible with `bound`, should replace it.
template <typename DimT> struct DimTraits;

/// Sizes as tensor types have them: static or ShapedType::kDynamic, which is
/// compatible with any size.
template <> struct DimTraits<int64_t> {
  static int64_t unknown() { return ShapedType::kDynamic; }
  static bool conflicts(int64_t bound, int64_t dim) {
    return !ShapedType::isDynamic(bound) && !ShapedType::isDynamic(dim) &&
           bound != dim;
  }
  static bool refines(int64_t bound, int64_t) {
    return ShapedType::isDynamic(bound);
  }
};

/// The symbols of one op bound to dimensions, each with where it came from
/// ("dim 2 of 'key'") for messages.
template <typename DimT, typename Traits = DimTraits<DimT>>
class ShapeBindings {
public:
  struct Binding {
    DimT dim;
    std::string origin;
  };

  /// A dimension that disagrees with its symbol's binding.
  struct Conflict {
    StringRef symbol;
    const Binding *binding;
  };

  /// Binds the trailing dimensions of `shape`, whose rank matches `pattern`,
  /// to the pattern's named symbols: a new symbol is bound, a known one must
  /// not conflict and may be refined. `where(i)` describes dimension i of
  /// `shape` as an origin. Stops at the first conflict and returns it.
  template <typename WhereFn>
  std::optional<Conflict> bind(const ShapePattern &pattern,
                               ArrayRef<DimT> shape, WhereFn &&where) {
    int64_t offset = pattern.getNumLeading(shape.size());
    for (auto [i, symbol] : llvm::enumerate(pattern.getNamed())) {
      int64_t index = offset + i;
      const DimT &dim = shape[index];
      auto it = bindings.find(symbol);
      if (it == bindings.end()) {
        define(symbol, dim, where(index));
        continue;
      }
      if (Traits::conflicts(it->second.dim, dim))
        return Conflict{symbol, &it->second};
      if (Traits::refines(it->second.dim, dim))
        it->second = {dim, std::string(where(index))};
    }
    return std::nullopt;
  }

  /// Binds `symbol` to `dim`, replacing any binding.
  void define(StringRef symbol, DimT dim, std::string origin) {
    bindings[symbol] = {std::move(dim), std::move(origin)};
  }

  /// Binds `symbol` to `dim` unless it is bound to a dimension that `dim`
  /// does not refine; the caller has checked that they are compatible.
  void refine(StringRef symbol, DimT dim, std::string origin) {
    auto it = bindings.find(symbol);
    if (it == bindings.end() || Traits::refines(it->second.dim, dim))
      define(symbol, std::move(dim), std::move(origin));
  }

  /// The binding of `symbol`, or null.
  const Binding *find(StringRef symbol) const {
    auto it = bindings.find(symbol);
    return it == bindings.end() ? nullptr : &it->second;
  }

  /// The dimension bound to `symbol`; Traits::unknown() when unbound.
  DimT lookup(StringRef symbol) const {
    const Binding *binding = find(symbol);
    return binding ? binding->dim : Traits::unknown();
  }

private:
  llvm::StringMap<Binding> bindings;
};

} // namespace mlir::seq

#endif // SEQC_DIALECT_SEQ_IR_SEQSHAPES_H
