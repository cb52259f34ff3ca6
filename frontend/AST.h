//===- AST.h - .seq abstract syntax tree ------------------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The syntax tree the parser builds and MLIRGen walks. Every node records the
// source location of its first token (for a binary expression, its
// operator), which becomes the FileLineColLoc of the ops generated from it.
// Names are StringRefs into the source buffer, which outlives the tree.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_FRONTEND_AST_H
#define SEQC_FRONTEND_AST_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::seq::frontend::ast {

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum class Kind {
    Integer,
    Float,
    String,
    Bool,
    None,
    Name,
    Unary,
    Binary,
    Call,
    Subscript,
    Member,
    Transpose,
    List,
    ListComprehension,
  };

  Expr(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
  virtual ~Expr() = default;

  Kind getKind() const { return kind; }
  llvm::SMLoc getLoc() const { return loc; }

  /// The height of the tree below this node (a leaf has height 1). The parser
  /// bounds it, so that every recursive walk over expressions is bounded too.
  unsigned getHeight() const { return height; }
  void setHeight(unsigned h) { height = h; }

private:
  Kind kind;
  llvm::SMLoc loc;
  unsigned height = 1;
};

using ExprPtr = std::unique_ptr<Expr>;

/// An integer literal: `42`.
class IntegerExpr : public Expr {
public:
  IntegerExpr(llvm::SMLoc loc, int64_t value)
      : Expr(Kind::Integer, loc), value(value) {}
  int64_t getValue() const { return value; }
  static bool classof(const Expr *e) { return e->getKind() == Kind::Integer; }

private:
  int64_t value;
};

/// A float literal: `1e-5`.
class FloatExpr : public Expr {
public:
  FloatExpr(llvm::SMLoc loc, double value)
      : Expr(Kind::Float, loc), value(value) {}
  double getValue() const { return value; }
  static bool classof(const Expr *e) { return e->getKind() == Kind::Float; }

private:
  double value;
};

/// A string literal: `"tanh"`.
class StringExpr : public Expr {
public:
  StringExpr(llvm::SMLoc loc, llvm::StringRef value)
      : Expr(Kind::String, loc), value(value) {}
  llvm::StringRef getValue() const { return value; }
  static bool classof(const Expr *e) { return e->getKind() == Kind::String; }

private:
  llvm::StringRef value;
};

/// `True` or `False`.
class BoolExpr : public Expr {
public:
  BoolExpr(llvm::SMLoc loc, bool value) : Expr(Kind::Bool, loc), value(value) {}
  bool getValue() const { return value; }
  static bool classof(const Expr *e) { return e->getKind() == Kind::Bool; }

private:
  bool value;
};

/// `None`: the absent optional argument.
class NoneExpr : public Expr {
public:
  explicit NoneExpr(llvm::SMLoc loc) : Expr(Kind::None, loc) {}
  static bool classof(const Expr *e) { return e->getKind() == Kind::None; }
};

/// A use of a name: a variable, member, hyperparameter, module or builtin.
class NameExpr : public Expr {
public:
  NameExpr(llvm::SMLoc loc, llvm::StringRef name)
      : Expr(Kind::Name, loc), name(name) {}
  llvm::StringRef getName() const { return name; }
  static bool classof(const Expr *e) { return e->getKind() == Kind::Name; }

private:
  llvm::StringRef name;
};

/// `-x`.
class UnaryExpr : public Expr {
public:
  enum class Op { Neg };
  UnaryExpr(llvm::SMLoc loc, Op op, ExprPtr operand)
      : Expr(Kind::Unary, loc), op(op), operand(std::move(operand)) {}
  Op getOp() const { return op; }
  const Expr &getOperand() const { return *operand; }
  static bool classof(const Expr *e) { return e->getKind() == Kind::Unary; }

private:
  Op op;
  ExprPtr operand;
};

/// `a + b`, `a - b`, `a * b`, `a / b`, `a @ b`, `a ** b`. The location is the
/// operator's.
class BinaryExpr : public Expr {
public:
  enum class Op { Add, Sub, Mul, Div, MatMul, Pow, Eq, Ne, Lt, Le, Gt, Ge };
  BinaryExpr(llvm::SMLoc loc, Op op, ExprPtr lhs, ExprPtr rhs)
      : Expr(Kind::Binary, loc), op(op), lhs(std::move(lhs)),
        rhs(std::move(rhs)) {}
  Op getOp() const { return op; }
  const Expr &getLHS() const { return *lhs; }
  const Expr &getRHS() const { return *rhs; }
  static llvm::StringRef getSpelling(Op op);
  /// `==`, `!=`, `<`, `<=`, `>` or `>=`.
  static bool isComparison(Op op) { return op >= Op::Eq; }
  static bool classof(const Expr *e) { return e->getKind() == Kind::Binary; }

private:
  Op op;
  ExprPtr lhs, rhs;
};

/// One argument of a call: positional (empty keyword) or `keyword=value`.
struct Argument {
  llvm::StringRef keyword;
  llvm::SMLoc loc;
  ExprPtr value;
};

/// `callee(arg, ..., name=arg, ...)`.
class CallExpr : public Expr {
public:
  CallExpr(llvm::SMLoc loc, ExprPtr callee, std::vector<Argument> args)
      : Expr(Kind::Call, loc), callee(std::move(callee)),
        args(std::move(args)) {}
  const Expr &getCallee() const { return *callee; }
  const std::vector<Argument> &getArgs() const { return args; }
  static bool classof(const Expr *e) { return e->getKind() == Kind::Call; }

private:
  ExprPtr callee;
  std::vector<Argument> args;
};

/// One entry of a subscript: an index `i`, a slice `lo:hi` (either bound
/// optional) or `...`.
struct Subscript {
  enum class Kind { Index, Slice, Ellipsis };
  Kind kind;
  llvm::SMLoc loc;
  ExprPtr index; // Kind::Index
  ExprPtr lower; // Kind::Slice, may be null
  ExprPtr upper; // Kind::Slice, may be null
};

/// `base[sub, ...]`: tensor slicing or list indexing.
class SubscriptExpr : public Expr {
public:
  SubscriptExpr(llvm::SMLoc loc, ExprPtr base, std::vector<Subscript> subs)
      : Expr(Kind::Subscript, loc), base(std::move(base)),
        subscripts(std::move(subs)) {}
  const Expr &getBase() const { return *base; }
  const std::vector<Subscript> &getSubscripts() const { return subscripts; }
  static bool classof(const Expr *e) { return e->getKind() == Kind::Subscript; }

private:
  ExprPtr base;
  std::vector<Subscript> subscripts;
};

/// `base.name`: a member of a module instance.
class MemberExpr : public Expr {
public:
  MemberExpr(llvm::SMLoc loc, ExprPtr base, llvm::StringRef name)
      : Expr(Kind::Member, loc), base(std::move(base)), name(name) {}
  const Expr &getBase() const { return *base; }
  llvm::StringRef getName() const { return name; }
  static bool classof(const Expr *e) { return e->getKind() == Kind::Member; }

private:
  ExprPtr base;
  llvm::StringRef name;
};

/// `base^T`: swaps the last two dimensions.
class TransposeExpr : public Expr {
public:
  TransposeExpr(llvm::SMLoc loc, ExprPtr base)
      : Expr(Kind::Transpose, loc), base(std::move(base)) {}
  const Expr &getBase() const { return *base; }
  static bool classof(const Expr *e) { return e->getKind() == Kind::Transpose; }

private:
  ExprPtr base;
};

/// `[a, b, ...]`.
class ListExpr : public Expr {
public:
  ListExpr(llvm::SMLoc loc, std::vector<ExprPtr> elements)
      : Expr(Kind::List, loc), elements(std::move(elements)) {}
  const std::vector<ExprPtr> &getElements() const { return elements; }
  static bool classof(const Expr *e) { return e->getKind() == Kind::List; }

private:
  std::vector<ExprPtr> elements;
};

/// `[element for var in iterable]`.
class ListComprehensionExpr : public Expr {
public:
  ListComprehensionExpr(llvm::SMLoc loc, ExprPtr element, llvm::StringRef var,
                        llvm::SMLoc varLoc, ExprPtr iterable)
      : Expr(Kind::ListComprehension, loc), element(std::move(element)),
        var(var), varLoc(varLoc), iterable(std::move(iterable)) {}
  const Expr &getElement() const { return *element; }
  llvm::StringRef getVar() const { return var; }
  llvm::SMLoc getVarLoc() const { return varLoc; }
  const Expr &getIterable() const { return *iterable; }
  static bool classof(const Expr *e) {
    return e->getKind() == Kind::ListComprehension;
  }

private:
  ExprPtr element;
  llvm::StringRef var;
  llvm::SMLoc varLoc;
  ExprPtr iterable;
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt {
public:
  enum class Kind { Assign, For, Return };
  Stmt(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
  virtual ~Stmt() = default;
  Kind getKind() const { return kind; }
  llvm::SMLoc getLoc() const { return loc; }

private:
  Kind kind;
  llvm::SMLoc loc;
};

using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

/// A name being bound, with its location.
struct Target {
  llvm::StringRef name;
  llvm::SMLoc loc;
};

/// `a = expr` or `a, b = expr` (unpacking a list or a multi-value return).
class AssignStmt : public Stmt {
public:
  AssignStmt(llvm::SMLoc loc, std::vector<Target> targets, ExprPtr value)
      : Stmt(Kind::Assign, loc), targets(std::move(targets)),
        value(std::move(value)) {}
  const std::vector<Target> &getTargets() const { return targets; }
  const Expr &getValue() const { return *value; }
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Assign; }

private:
  std::vector<Target> targets;
  ExprPtr value;
};

/// `for var in iterable { body }`, unrolled at compile time.
class ForStmt : public Stmt {
public:
  ForStmt(llvm::SMLoc loc, Target var, ExprPtr iterable, Block body)
      : Stmt(Kind::For, loc), var(var), iterable(std::move(iterable)),
        body(std::move(body)) {}
  const Target &getVar() const { return var; }
  const Expr &getIterable() const { return *iterable; }
  const Block &getBody() const { return body; }
  static bool classof(const Stmt *s) { return s->getKind() == Kind::For; }

private:
  Target var;
  ExprPtr iterable;
  Block body;
};

/// `return a, b`: the last statement of every function.
class ReturnStmt : public Stmt {
public:
  ReturnStmt(llvm::SMLoc loc, std::vector<ExprPtr> values)
      : Stmt(Kind::Return, loc), values(std::move(values)) {}
  const std::vector<ExprPtr> &getValues() const { return values; }
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Return; }

private:
  std::vector<ExprPtr> values;
};

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

/// Tensor element types, as in docs/abi.md.
enum class ElementType { F16, BF16, F32, F64, I32, I64 };

/// The spelling of an element type in source and in the manifest.
llvm::StringRef getElementTypeName(ElementType type);

/// A type annotation: a scalar type (`int`, `float`, `bool`) or a tensor type
/// `f32[b, n, dim]` whose dimensions are expressions (a name that is not a
/// compile-time integer introduces a symbolic dimension).
struct TypeAnnotation {
  enum class Kind { Int, Float, Bool, Tensor };
  Kind kind;
  llvm::SMLoc loc;
  ElementType elementType = ElementType::F32; // Kind::Tensor
  std::vector<ExprPtr> dims;                  // Kind::Tensor
};

/// A parameter of a model, module or function: `name [: type]
/// [in [lo, hi]] [= default]`.
struct ParamDecl {
  llvm::StringRef name;
  llvm::SMLoc loc;
  std::optional<TypeAnnotation> type;
  /// `in [lo, hi]`: the inclusive value range of an integer model input.
  ExprPtr rangeLower, rangeUpper;
  llvm::SMLoc rangeLoc;
  ExprPtr defaultValue;
};

/// A named result of a model's forward: `name: f32[b, n, dim]`.
struct ResultDecl {
  llvm::StringRef name;
  llvm::SMLoc loc;
  TypeAnnotation type;
};

/// `def name(params) [-> (results)] { body }`. The body ends with its only
/// return statement.
struct FuncDecl {
  llvm::StringRef name;
  llvm::SMLoc loc;
  std::vector<ParamDecl> params;
  std::vector<ResultDecl> results;
  bool hasResultList = false;
  llvm::SMLoc resultsLoc;
  Block body;
};

/// A member of a module: `name = expr`, evaluated once per instance.
struct MemberDecl {
  llvm::StringRef name;
  llvm::SMLoc loc;
  ExprPtr value;
};

/// `module Name(params) { members; def forward(...) {...} }`, or the same with
/// `model`: the one module of the file that is compiled, whose parameters are
/// the hyperparameters. A model may define several functions, its entries
/// (`def prefill`, `def decode`), which share its members and state.
struct ModuleDecl {
  bool isModel = false;
  llvm::StringRef name;
  llvm::SMLoc loc;
  std::vector<ParamDecl> params;
  std::vector<MemberDecl> members;
  /// The functions in source order: a module's one `forward`, a model's
  /// entries.
  std::vector<std::unique_ptr<FuncDecl>> functions;
  /// The default entry: `forward`, else the first function.
  const FuncDecl *forward = nullptr;

  /// The function named `name`, or null.
  const FuncDecl *findFunction(llvm::StringRef name) const {
    for (const std::unique_ptr<FuncDecl> &func : functions)
      if (func->name == name)
        return func.get();
    return nullptr;
  }
};

/// A parsed .seq file: its modules and free functions, in source order.
struct SourceFile {
  std::vector<std::unique_ptr<ModuleDecl>> modules;
  std::vector<std::unique_ptr<FuncDecl>> functions;
};

} // namespace mlir::seq::frontend::ast

#endif // SEQC_FRONTEND_AST_H
