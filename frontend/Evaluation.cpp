//===- Evaluation.cpp - statements, expressions and calls -----------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The interpreter proper: arguments are bound and checked against their
// annotations, calls are inlined, statements run (loops unrolled), and
// expressions evaluate to compile-time values or build seq ops. Every
// expression that fails reports once and yields poison, which later
// expressions pass on silently, so one run reports every independent error.
//
//===----------------------------------------------------------------------===//

#include "frontend/Elaborator.h"

#include "dialect/Seq/IR/SeqOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::seq;
using namespace mlir::seq::frontend;
using llvm::SMLoc;

//===----------------------------------------------------------------------===//
// Arguments and annotations
//===----------------------------------------------------------------------===//

FailureOr<Val> Elaborator::checkAnnotation(const ast::TypeAnnotation &type,
                                           const Val &value, Scope &bindScope,
                                           SMLoc loc, const Twine &what) {
  if (value.isPoison())
    return value;
  switch (type.kind) {
  case ast::TypeAnnotation::Kind::Int:
    if (value.is(Val::Kind::Int))
      return value;
    return emitError(loc) << what << " must be an int, got "
                          << value.describe();
  case ast::TypeAnnotation::Kind::Float:
    if (value.isNumber())
      return Val::real(value.getNumber());
    return emitError(loc) << what << " must be a float, got "
                          << value.describe();
  case ast::TypeAnnotation::Kind::Bool:
    if (value.is(Val::Kind::Bool))
      return value;
    return emitError(loc) << what << " must be a bool, got "
                          << value.describe();
  case ast::TypeAnnotation::Kind::Tensor:
    break;
  }

  std::string expected = getElementTypeName(type.elementType).str() + "[";
  for (auto [i, dim] : llvm::enumerate(type.dims)) {
    if (i)
      expected += ", ";
    if (auto *name = dyn_cast<ast::NameExpr>(dim.get()))
      expected += name->getName().str();
    else if (auto *integer = dyn_cast<ast::IntegerExpr>(dim.get()))
      expected += std::to_string(integer->getValue());
    else
      expected += "...";
  }
  expected += "]";
  if (!value.is(Val::Kind::Tensor))
    return emitError(loc) << what << " must be a tensor " << expected
                          << ", got " << value.describe();
  const TensorVal &tensor = value.getTensor();
  if (formatElementType(tensor.getElementType()) !=
          getElementTypeName(type.elementType) ||
      tensor.getRank() != static_cast<int64_t>(type.dims.size()))
    return emitError(loc) << what << " must be " << expected << ", got "
                          << tensor.str();

  Scope *saved = scope;
  scope = &bindScope;
  llvm::scope_exit restore([&] { scope = saved; });
  for (auto [axis, dimExpr] : llvm::enumerate(type.dims)) {
    const Dim &actual = tensor.shape[axis];
    // A name that means nothing yet names this dimension from here on.
    if (auto *name = dyn_cast<ast::NameExpr>(dimExpr.get())) {
      if (!lookupName(name->getName())) {
        if (actual.isStatic())
          bindScope.vars[name->getName()] = Val::integer(actual.size);
        else if (inForward)
          bindScope.vars[name->getName()] = Val::index(
              getDimValue(name->getLoc(), tensor, axis), actual.symbol);
        continue;
      }
    }
    Val declared = eval(*dimExpr);
    if (declared.isPoison())
      return failure();
    bool matches = true;
    if (declared.is(Val::Kind::Int)) {
      matches = !actual.isStatic() || actual.size == declared.getInt();
    } else if (declared.is(Val::Kind::Index)) {
      StringAttr symbol = declared.getIndexSymbol();
      matches = actual.isStatic() || !symbol || !actual.symbol ||
                actual.symbol == symbol;
    } else {
      return emitError(dimExpr->getLoc())
             << "a dimension must be an integer or a size, got "
             << declared.describe();
    }
    if (!matches)
      return emitError(loc)
             << what << " must be " << expected << " with dimension " << axis
             << " = "
             << (declared.is(Val::Kind::Int) ? std::to_string(declared.getInt())
                                             : declared.getIndexSymbol().str())
             << ", got " << tensor.str();
  }
  return value;
}

LogicalResult Elaborator::bindParams(ArrayRef<ast::ParamDecl> params,
                                     CallArgs &args, Scope &target,
                                     Scope &defaults, StringRef what) {
  SmallVector<std::optional<ArgVal>> bound(params.size());
  bool ok = true;
  if (args.positional.size() > params.size()) {
    emitError(args.positional[params.size()].loc)
        << "too many arguments for " << what << ": it takes " << params.size()
        << ", got " << args.positional.size();
    ok = false;
  }
  for (auto [i, arg] : llvm::enumerate(args.positional))
    if (i < params.size())
      bound[i] = arg;
  for (auto &[keyword, arg] : args.keywords) {
    auto it = llvm::find_if(params, [&, &keyword = keyword](const auto &p) {
      return p.name == keyword;
    });
    if (it == params.end()) {
      emitError(arg.loc) << what << " has no parameter '" << keyword << "'";
      ok = false;
      continue;
    }
    size_t i = it - params.begin();
    if (bound[i]) {
      emitError(arg.loc) << "argument '" << keyword << "' of " << what
                         << " is given twice";
      ok = false;
      continue;
    }
    bound[i] = arg;
  }
  if (!ok)
    return failure();

  // Values first, then annotations, which may name any parameter
  // (`x: f32[n, dim], dim: int = 64`).
  SmallVector<SMLoc> locs(params.size(), args.loc);
  for (auto [i, param] : llvm::enumerate(params)) {
    Val value;
    if (bound[i]) {
      value = bound[i]->value;
      locs[i] = bound[i]->loc;
    } else if (param.defaultValue) {
      // Defaults are evaluated where they were written: they may use the
      // module's parameters declared before them.
      Scope *saved = scope;
      scope = &defaults;
      value = eval(*param.defaultValue);
      scope = saved;
    } else {
      emitError(args.loc) << "missing argument '" << param.name << "' of "
                          << what;
      ok = false;
      continue;
    }
    if (param.rangeLower) {
      emitError(param.rangeLoc)
          << "only the inputs of the model's forward have ranges";
      ok = false;
      continue;
    }
    target.vars[param.name] = value;
  }
  if (!ok)
    return failure();
  for (auto [i, param] : llvm::enumerate(params)) {
    if (!param.type)
      continue;
    FailureOr<Val> checked =
        checkAnnotation(*param.type, target.vars[param.name], target, locs[i],
                        "argument '" + param.name + "' of " + what);
    if (failed(checked)) {
      ok = false;
      target.vars[param.name] = Val::poison();
    } else {
      target.vars[param.name] = *checked;
    }
  }
  return success(ok);
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

Val Elaborator::execFunctionBody(const ast::FuncDecl &func) {
  ArrayRef<ast::StmtPtr> body = func.body;
  for (const ast::StmtPtr &stmt : body.drop_back()) {
    if (budgetExceeded)
      return Val::poison();
    execStmt(*stmt);
  }
  const auto &ret = cast<ast::ReturnStmt>(*body.back());
  std::vector<Val> values;
  for (const ast::ExprPtr &value : ret.getValues())
    values.push_back(eval(*value));
  if (values.size() == 1)
    return values.front();
  return Val::list(std::move(values));
}

Val Elaborator::callFunction(const ast::FuncDecl &func, Instance *self,
                             CallArgs &args) {
  std::string what = self ? "the forward of '" + self->typeName + "'"
                          : "'" + func.name.str() + "'";
  if (llvm::is_contained(activeDecls, &func))
    return emitError(args.loc)
           << what << " calls itself; calls are inlined at compile time, "
           << "so recursion never ends";
  if (activeDecls.size() >= options.maxCallDepth)
    return emitError(args.loc) << "modules and calls nested more than "
                               << options.maxCallDepth << " deep";
  if (args.hasPoison())
    return Val::poison();

  Scope callee;
  Scope globalScope;
  callee.parent = self ? &self->scope : nullptr;
  if (failed(bindParams(func.params, args, callee,
                        self ? self->scope : globalScope, what)))
    return Val::poison();

  activeDecls.push_back(&func);
  // The forward of a module instance names the instance ("layers.3") in
  // the call site of the ops it builds, so that seq-fold-layers can tell
  // the layers of a model apart after lowering.
  Location callerLoc = getLoc(args.loc);
  if (self && !self->path.empty())
    callerLoc = NameLoc::get(StringAttr::get(&context, self->path), callerLoc);
  callerLocs.push_back(callerLoc);
  Scope *saved = scope;
  scope = &callee;
  std::string savedPath = currentPath;
  if (self)
    currentPath = self->path;
  Val result = execFunctionBody(func);
  currentPath = savedPath;
  // Declared results are checked like annotated parameters.
  if (func.hasResultList && !result.isPoison()) {
    std::vector<Val> values;
    if (func.results.size() == 1)
      values.push_back(result);
    else if (result.is(Val::Kind::List))
      values = result.getList();
    SMLoc returnLoc = func.body.back()->getLoc();
    size_t numReturned =
        cast<ast::ReturnStmt>(*func.body.back()).getValues().size();
    if (numReturned != func.results.size()) {
      result = emitError(returnLoc) << what << " returns " << numReturned
                                    << (numReturned == 1 ? " value" : " values")
                                    << " but declares " << func.results.size();
    } else {
      for (auto [value, decl] : llvm::zip(values, func.results))
        if (failed(checkAnnotation(decl.type, value, callee, returnLoc,
                                   "result '" + decl.name + "' of " + what)))
          result = Val::poison();
    }
  }
  scope = saved;
  callerLocs.pop_back();
  activeDecls.pop_back();
  return result;
}

CallArgs Elaborator::evalArgs(const ast::CallExpr &expr, StringRef callee) {
  CallArgs args;
  args.loc = expr.getLoc();
  args.callee = callee.str();
  for (const ast::Argument &arg : expr.getArgs()) {
    ArgVal value{eval(*arg.value), arg.loc};
    if (arg.keyword.empty())
      args.positional.push_back(std::move(value));
    else
      args.keywords.emplace_back(arg.keyword, std::move(value));
  }
  return args;
}

Val Elaborator::evalCall(const ast::CallExpr &expr, DeclContext decl) {
  Val callee;
  if (auto *member = dyn_cast<ast::MemberExpr>(&expr.getCallee())) {
    // `x.to(dtype)` on a tensor is `cast(x, dtype)`, as in PyTorch.
    Val base = eval(member->getBase());
    if (base.is(Val::Kind::Tensor) && member->getName() == "to") {
      CallArgs args = evalArgs(expr, "to");
      if (args.hasPoison())
        return Val::poison();
      args.positional.insert(args.positional.begin(),
                             ArgVal{base, member->getLoc()});
      return callBuiltinFunction(lookupBuiltin("cast")->builtinID, args);
    }
    callee = readMember(*member, base);
  } else {
    callee = eval(expr.getCallee());
  }
  if (callee.isPoison())
    return callee;

  if (callee.is(Val::Kind::Instance)) {
    Instance &instance = *callee.getInstance();
    CallArgs args = evalArgs(expr, instance.typeName);
    if (args.hasPoison())
      return Val::poison();
    if (instance.decl)
      return callFunction(*instance.decl->forward, &instance, args);
    return callBuiltinModule(instance, args);
  }
  if (!callee.is(Val::Kind::Callable))
    return emitError(expr.getLoc()) << "cannot call " << callee.describe();

  const Callable &c = callee.getCallable();
  bool creates = c.kind == Callable::Kind::BuiltinModule ||
                 c.kind == Callable::Kind::Module;
  if (creates && !decl.allowed)
    return emitError(expr.getLoc())
           << "'" << c.name
           << "' declares parameters, so it is created once as a module "
              "member ('name = "
           << c.name << "(...)') and called in forward";
  CallArgs args = evalArgs(expr, c.name);
  switch (c.kind) {
  case Callable::Kind::BuiltinFunction:
    if (args.hasPoison())
      return Val::poison();
    return callBuiltinFunction(c.builtinID, args);
  case Callable::Kind::BuiltinModule:
    if (args.hasPoison())
      return Val::poison();
    return constructBuiltinModule(c.builtinID, args, decl.path);
  case Callable::Kind::Module:
    if (args.hasPoison())
      return Val::poison();
    return instantiate(*c.module, args, decl.path);
  case Callable::Kind::Function:
    return callFunction(*c.func, nullptr, args);
  }
  llvm_unreachable("unknown callable kind");
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void Elaborator::assign(const ast::Target &target, Val value) {
  if (target.name == "_")
    return;
  scope->vars[target.name] = std::move(value);
}

void Elaborator::execBlock(const ast::Block &block) {
  for (const ast::StmtPtr &stmt : block) {
    if (budgetExceeded)
      return;
    execStmt(*stmt);
  }
}

void Elaborator::execStmt(const ast::Stmt &stmt) {
  if (failed(checkBudget(stmt.getLoc())))
    return;
  if (auto *assignStmt = dyn_cast<ast::AssignStmt>(&stmt)) {
    Val value = eval(assignStmt->getValue());
    ArrayRef<ast::Target> targets = assignStmt->getTargets();
    if (targets.size() == 1) {
      assign(targets.front(), std::move(value));
      return;
    }
    if (!value.isPoison() && (!value.is(Val::Kind::List) ||
                              value.getList().size() != targets.size())) {
      emitError(targets.front().loc) << "cannot unpack " << value.describe()
                                     << " into " << targets.size() << " names";
      value = Val::poison();
    }
    for (auto [i, target] : llvm::enumerate(targets))
      assign(target, value.isPoison() ? value : value.getList()[i]);
    return;
  }

  const auto &loop = cast<ast::ForStmt>(stmt);
  Val iterable = eval(loop.getIterable());
  if (!iterable.isPoison() && !iterable.is(Val::Kind::List)) {
    emitError(loop.getIterable().getLoc())
        << "'for' iterates over a list (range(n), or a list of modules), got "
        << iterable.describe();
    iterable = Val::poison();
  }
  if (iterable.isPoison()) {
    // Still check the body once, for its own errors.
    assign(loop.getVar(), iterable);
    execBlock(loop.getBody());
    return;
  }
  for (const Val &element : iterable.getList()) {
    assign(loop.getVar(), element);
    execBlock(loop.getBody());
    if (budgetExceeded)
      return;
  }
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Val Elaborator::eval(const ast::Expr &expr) { return evalWith(expr, {}); }

Val Elaborator::evalWith(const ast::Expr &expr, DeclContext decl) {
  switch (expr.getKind()) {
  case ast::Expr::Kind::Integer:
    return Val::integer(cast<ast::IntegerExpr>(expr).getValue());
  case ast::Expr::Kind::Float:
    return Val::real(cast<ast::FloatExpr>(expr).getValue());
  case ast::Expr::Kind::String:
    return Val::string(cast<ast::StringExpr>(expr).getValue());
  case ast::Expr::Kind::Bool:
    return Val::boolean(cast<ast::BoolExpr>(expr).getValue());
  case ast::Expr::Kind::None:
    return Val::none();
  case ast::Expr::Kind::Name:
    return evalName(cast<ast::NameExpr>(expr));
  case ast::Expr::Kind::Unary:
    return evalUnary(cast<ast::UnaryExpr>(expr));
  case ast::Expr::Kind::Binary:
    return evalBinary(cast<ast::BinaryExpr>(expr));
  case ast::Expr::Kind::Call:
    return evalCall(cast<ast::CallExpr>(expr), std::move(decl));
  case ast::Expr::Kind::Subscript:
    return evalSubscript(cast<ast::SubscriptExpr>(expr));
  case ast::Expr::Kind::Member:
    return evalMember(cast<ast::MemberExpr>(expr));
  case ast::Expr::Kind::Transpose: {
    const auto &transpose = cast<ast::TransposeExpr>(expr);
    Val base = eval(transpose.getBase());
    if (base.isPoison())
      return base;
    if (!base.is(Val::Kind::Tensor) || base.getTensor().getRank() < 2)
      return emitError(expr.getLoc())
             << "'^T' transposes the last two dimensions of a tensor of rank "
                "at least 2, got "
             << base.describe();
    if (failed(checkInForward(expr.getLoc(), "'^T'")))
      return Val::poison();
    int64_t rank = base.getTensor().getRank();
    SmallVector<int64_t> permutation =
        llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(permutation[rank - 2], permutation[rank - 1]);
    return buildTranspose(expr.getLoc(), base.getTensor(), permutation);
  }
  case ast::Expr::Kind::List:
    return evalList(cast<ast::ListExpr>(expr), std::move(decl));
  case ast::Expr::Kind::ListComprehension:
    return evalListComprehension(cast<ast::ListComprehensionExpr>(expr),
                                 std::move(decl));
  }
  llvm_unreachable("unknown expression kind");
}

const Val *Elaborator::lookupName(StringRef name) {
  if (const Val *value = scope ? scope->lookup(name) : nullptr)
    return value;
  auto global = globals.find(name);
  if (global != globals.end()) {
    lookupResult = Val::callable(global->second);
    return &lookupResult;
  }
  if (std::optional<Callable> builtin = lookupBuiltin(name)) {
    lookupResult = Val::callable(*builtin);
    return &lookupResult;
  }
  return nullptr;
}

/// "; did you mean 'x'?" for the candidate closest to a misspelled `name`,
/// when one is close enough to be a likely typo; empty otherwise.
static std::string suggestName(StringRef name, ArrayRef<StringRef> candidates) {
  StringRef best;
  unsigned bestDistance = std::max<unsigned>(1, name.size() / 3) + 1;
  for (StringRef candidate : candidates) {
    unsigned distance =
        name.edit_distance(candidate, /*AllowReplacements=*/true,
                           /*MaxEditDistance=*/bestDistance);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best.empty())
    return "";
  return ("; did you mean '" + best + "'?").str();
}

Val Elaborator::evalName(const ast::NameExpr &expr) {
  if (const Val *value = lookupName(expr.getName()))
    return *value;
  // Suggest the closest name in scope, a declaration or a builtin.
  SmallVector<StringRef> candidates;
  for (const Scope *s = scope; s; s = s->parent)
    for (const auto &entry : s->vars)
      candidates.push_back(entry.getKey());
  for (const auto &entry : globals)
    candidates.push_back(entry.getKey());
  for (ArrayRef<BuiltinFunction> table :
       {getTensorBuiltins(), getSequenceBuiltins()})
    for (const BuiltinFunction &builtin : table)
      candidates.push_back(builtin.name);
  return emitError(expr.getLoc()) << "unknown name '" << expr.getName() << "'"
                                  << suggestName(expr.getName(), candidates);
}

Val Elaborator::evalUnary(const ast::UnaryExpr &expr) {
  Val operand = eval(expr.getOperand());
  SMLoc loc = expr.getLoc();
  switch (operand.getKind()) {
  case Val::Kind::Poison:
    return operand;
  case Val::Kind::Int:
    if (operand.getInt() == INT64_MIN)
      return emitError(loc) << "integer overflow in '-'";
    return Val::integer(-operand.getInt());
  case Val::Kind::Float:
    return Val::real(-operand.getFloat());
  case Val::Kind::Index:
    return evalIndexBinary(loc, ast::BinaryExpr::Op::Sub, Val::integer(0),
                           operand);
  case Val::Kind::Tensor: {
    if (failed(checkInForward(loc, "'-'")))
      return Val::poison();
    const TensorVal &tensor = operand.getTensor();
    if (isa<FloatType>(tensor.getElementType()))
      return tensorResult(create<NegOp>(loc, tensor.value), tensor.shape);
    // seq.neg is float-only; integers negate as 0 - x.
    return buildElementwise(loc, Elementwise::Sub, Val::integer(0), operand,
                            "'-'");
  }
  default:
    return emitError(loc) << "cannot negate " << operand.describe();
  }
}

Val Elaborator::evalBinary(const ast::BinaryExpr &expr) {
  SMLoc loc = expr.getLoc();
  ast::BinaryExpr::Op op = expr.getOp();
  if (op == ast::BinaryExpr::Op::MatMul) {
    Val lhs = eval(expr.getLHS());
    // `a @ b^T` is one matmul reading b transposed, as attention scores are
    // written.
    if (auto *transpose = dyn_cast<ast::TransposeExpr>(&expr.getRHS())) {
      Val rhs = eval(transpose->getBase());
      if (lhs.isPoison() || rhs.isPoison())
        return Val::poison();
      if (rhs.is(Val::Kind::Tensor) && rhs.getTensor().getRank() >= 2)
        return buildMatmul(loc, lhs, rhs, /*transposeRhs=*/true);
      return emitError(transpose->getLoc())
             << "'^T' transposes the last two dimensions of a tensor of rank "
                "at least 2, got "
             << rhs.describe();
    }
    Val rhs = eval(expr.getRHS());
    if (lhs.isPoison() || rhs.isPoison())
      return Val::poison();
    return buildMatmul(loc, lhs, rhs, /*transposeRhs=*/false);
  }

  Val lhs = eval(expr.getLHS());
  Val rhs = eval(expr.getRHS());
  if (lhs.isPoison() || rhs.isPoison())
    return Val::poison();
  if (op == ast::BinaryExpr::Op::Pow)
    return evalPower(loc, lhs, rhs);
  if (ast::BinaryExpr::isComparison(op))
    return evalComparison(loc, op, lhs, rhs);
  if (lhs.isNumber() && rhs.isNumber())
    return evalScalarBinary(loc, op, lhs, rhs);
  auto isSize = [](const Val &v) {
    return v.is(Val::Kind::Index) || v.is(Val::Kind::Int);
  };
  if ((lhs.is(Val::Kind::Index) || rhs.is(Val::Kind::Index)) && isSize(lhs) &&
      isSize(rhs))
    return evalIndexBinary(loc, op, lhs, rhs);
  std::string what = ("'" + ast::BinaryExpr::getSpelling(op) + "'").str();
  if (lhs.is(Val::Kind::Tensor) || rhs.is(Val::Kind::Tensor)) {
    Elementwise kind = op == ast::BinaryExpr::Op::Add   ? Elementwise::Add
                       : op == ast::BinaryExpr::Op::Sub ? Elementwise::Sub
                       : op == ast::BinaryExpr::Op::Mul ? Elementwise::Mul
                                                        : Elementwise::Div;
    return buildElementwise(loc, kind, lhs, rhs, what);
  }
  return emitError(loc) << "unsupported operands for " << what << ": "
                        << lhs.describe() << " and " << rhs.describe();
}

Val Elaborator::evalScalarBinary(SMLoc loc, ast::BinaryExpr::Op op,
                                 const Val &lhs, const Val &rhs) {
  std::string what = ("'" + ast::BinaryExpr::getSpelling(op) + "'").str();
  if (lhs.is(Val::Kind::Int) && rhs.is(Val::Kind::Int)) {
    int64_t a = lhs.getInt(), b = rhs.getInt(), result;
    bool overflow = false;
    switch (op) {
    case ast::BinaryExpr::Op::Add:
      overflow = llvm::AddOverflow(a, b, result);
      break;
    case ast::BinaryExpr::Op::Sub:
      overflow = llvm::SubOverflow(a, b, result);
      break;
    case ast::BinaryExpr::Op::Mul:
      overflow = llvm::MulOverflow(a, b, result);
      break;
    case ast::BinaryExpr::Op::Div:
      if (b == 0)
        return emitError(loc) << "division by zero";
      // True division, as in Python; the result stays an integer when it is
      // one, so that `dim / heads` can be a dimension.
      if (a % b == 0 && !(a == INT64_MIN && b == -1))
        return Val::integer(a / b);
      return Val::real(static_cast<double>(a) / static_cast<double>(b));
    default:
      llvm_unreachable("not a scalar arithmetic operator");
    }
    if (overflow)
      return emitError(loc)
             << "integer overflow in " << what << " (" << a << " "
             << ast::BinaryExpr::getSpelling(op) << " " << b << ")";
    return Val::integer(result);
  }
  double a = lhs.getNumber(), b = rhs.getNumber(), result;
  switch (op) {
  case ast::BinaryExpr::Op::Add:
    result = a + b;
    break;
  case ast::BinaryExpr::Op::Sub:
    result = a - b;
    break;
  case ast::BinaryExpr::Op::Mul:
    result = a * b;
    break;
  case ast::BinaryExpr::Op::Div:
    if (b == 0)
      return emitError(loc) << "division by zero";
    result = a / b;
    break;
  default:
    llvm_unreachable("not a scalar arithmetic operator");
  }
  if (!std::isfinite(result))
    return emitError(loc) << "floating-point overflow in " << what;
  return Val::real(result);
}

Val Elaborator::evalComparison(SMLoc loc, ast::BinaryExpr::Op op,
                               const Val &lhs, const Val &rhs) {
  std::string what = ("'" + ast::BinaryExpr::getSpelling(op) + "'").str();
  // `x == None` and `x != None` ask whether an optional argument was given
  // (Python's `x is None`), for any x.
  bool equality =
      op == ast::BinaryExpr::Op::Eq || op == ast::BinaryExpr::Op::Ne;
  if (equality && (lhs.is(Val::Kind::None) || rhs.is(Val::Kind::None)))
    return Val::boolean((lhs.is(Val::Kind::None) &&
                         rhs.is(Val::Kind::None)) ==
                        (op == ast::BinaryExpr::Op::Eq));
  if (lhs.is(Val::Kind::Tensor) || rhs.is(Val::Kind::Tensor)) {
    Elementwise kind;
    switch (op) {
    case ast::BinaryExpr::Op::Eq:
      kind = Elementwise::Eq;
      break;
    case ast::BinaryExpr::Op::Ne:
      kind = Elementwise::Ne;
      break;
    case ast::BinaryExpr::Op::Lt:
      kind = Elementwise::Lt;
      break;
    case ast::BinaryExpr::Op::Le:
      kind = Elementwise::Le;
      break;
    case ast::BinaryExpr::Op::Gt:
      kind = Elementwise::Gt;
      break;
    default:
      kind = Elementwise::Ge;
      break;
    }
    return buildElementwise(loc, kind, lhs, rhs, what);
  }
  // Compile-time values: numbers compare by value; bools and strings are
  // equal or not.
  std::optional<int> order;
  if (lhs.is(Val::Kind::Int) && rhs.is(Val::Kind::Int))
    order = lhs.getInt() < rhs.getInt() ? -1 : lhs.getInt() > rhs.getInt();
  else if (lhs.isNumber() && rhs.isNumber())
    order = lhs.getNumber() < rhs.getNumber()
                ? -1
                : lhs.getNumber() > rhs.getNumber();
  if (!order && equality && lhs.getKind() == rhs.getKind()) {
    if (lhs.is(Val::Kind::Bool))
      order = lhs.getBool() != rhs.getBool();
    else if (lhs.is(Val::Kind::String))
      order = lhs.getString() != rhs.getString();
  }
  if (!order)
    return emitError(loc) << "unsupported operands for " << what << ": "
                          << lhs.describe() << " and " << rhs.describe();
  switch (op) {
  case ast::BinaryExpr::Op::Eq:
    return Val::boolean(*order == 0);
  case ast::BinaryExpr::Op::Ne:
    return Val::boolean(*order != 0);
  case ast::BinaryExpr::Op::Lt:
    return Val::boolean(*order < 0);
  case ast::BinaryExpr::Op::Le:
    return Val::boolean(*order <= 0);
  case ast::BinaryExpr::Op::Gt:
    return Val::boolean(*order > 0);
  default:
    return Val::boolean(*order >= 0);
  }
}

Val Elaborator::evalIndexBinary(SMLoc loc, ast::BinaryExpr::Op op,
                                const Val &lhs, const Val &rhs) {
  if (failed(checkInForward(loc, "arithmetic on run-time sizes")))
    return Val::poison();
  Value a = getIndexValue(loc, lhs), b = getIndexValue(loc, rhs);
  switch (op) {
  case ast::BinaryExpr::Op::Add:
    return Val::index(create<arith::AddIOp>(loc, a, b));
  case ast::BinaryExpr::Op::Sub:
    return Val::index(create<arith::SubIOp>(loc, a, b));
  case ast::BinaryExpr::Op::Mul:
    return Val::index(create<arith::MulIOp>(loc, a, b));
  default:
    return emitError(loc) << "run-time sizes support '+', '-' and '*', not '"
                          << ast::BinaryExpr::getSpelling(op) << "'";
  }
}

Val Elaborator::evalPower(SMLoc loc, const Val &base, const Val &exponent) {
  if (base.isNumber() && exponent.isNumber()) {
    if (base.is(Val::Kind::Int) && exponent.is(Val::Kind::Int) &&
        exponent.getInt() >= 0) {
      int64_t result = 1;
      for (int64_t i = 0; i < exponent.getInt(); ++i) {
        if (llvm::MulOverflow(result, base.getInt(), result))
          return emitError(loc) << "integer overflow in '**'";
        // 0, 1 and -1 stay bounded forever; stop early.
        if (result == 0 || (i > 64 && (result == 1 || result == -1)))
          break;
      }
      if (exponent.getInt() > 0 && base.getInt() == -1)
        result = exponent.getInt() % 2 ? -1 : 1;
      return Val::integer(result);
    }
    double result = std::pow(base.getNumber(), exponent.getNumber());
    if (!std::isfinite(result))
      return emitError(loc)
             << base.getNumber() << " ** " << exponent.getNumber()
             << " is not a finite number";
    return Val::real(result);
  }
  if (!base.is(Val::Kind::Tensor) || !exponent.isNumber())
    return emitError(loc) << "unsupported operands for '**': "
                          << base.describe() << " and " << exponent.describe();
  if (failed(checkInForward(loc, "'**'")))
    return Val::poison();
  // The dialect has no general power; the common exponents map to ops.
  const TensorVal &x = base.getTensor();
  double p = exponent.getNumber();
  if (p == 1)
    return base;
  if (p == 2 || p == 3) {
    Val square = buildElementwise(loc, Elementwise::Mul, base, base, "'**'");
    return p == 2
               ? square
               : buildElementwise(loc, Elementwise::Mul, square, base, "'**'");
  }
  if (!isa<FloatType>(x.getElementType()))
    return emitError(loc) << "'**' with exponent " << p
                          << " needs a float tensor, got " << x.str();
  if (p == 0.5)
    return buildUnary(loc, "sqrt", x);
  if (p == -0.5)
    return buildUnary(loc, "rsqrt", x);
  if (p == -1)
    return buildElementwise(loc, Elementwise::Div, Val::real(1.0), base,
                            "'**'");
  return emitError(loc) << "a tensor can be raised to the power 1, 2, 3, "
                           "0.5, -0.5 or -1 only, got "
                        << p;
}

Val Elaborator::evalMember(const ast::MemberExpr &expr) {
  return readMember(expr, eval(expr.getBase()));
}

Val Elaborator::readMember(const ast::MemberExpr &expr, const Val &base) {
  if (base.isPoison())
    return base;
  if (!base.is(Val::Kind::Instance))
    return emitError(expr.getLoc())
           << "'.' reads a member of a module instance, got "
           << base.describe();
  Instance &instance = *base.getInstance();
  auto it = instance.scope.vars.find(expr.getName());
  if (it == instance.scope.vars.end())
    return emitError(expr.getLoc())
           << "module " << instance.typeName
           << (instance.path.empty() ? "" : " '" + instance.path + "'")
           << " has no member '" << expr.getName() << "'"
           << suggestName(expr.getName(),
                          llvm::to_vector(instance.scope.vars.keys()));
  return it->second;
}

Val Elaborator::evalList(const ast::ListExpr &expr, DeclContext decl) {
  std::vector<Val> elements;
  for (auto [i, element] : llvm::enumerate(expr.getElements())) {
    DeclContext elementDecl;
    if (decl.allowed)
      elementDecl = DeclContext{true, joinPath(decl.path, Twine(i))};
    elements.push_back(evalWith(*element, std::move(elementDecl)));
  }
  return Val::list(std::move(elements));
}

Val Elaborator::evalListComprehension(const ast::ListComprehensionExpr &expr,
                                      DeclContext decl) {
  Val iterable = eval(expr.getIterable());
  if (iterable.isPoison())
    return iterable;
  if (!iterable.is(Val::Kind::List))
    return emitError(expr.getIterable().getLoc())
           << "a list comprehension iterates over a list (such as range(n)), "
              "got "
           << iterable.describe();
  // The loop variable is local to the comprehension, as in Python 3.
  Scope local;
  local.parent = scope;
  Scope *saved = scope;
  scope = &local;
  std::vector<Val> elements;
  for (auto [i, element] : llvm::enumerate(iterable.getList())) {
    if (failed(checkBudget(expr.getLoc())))
      break;
    if (expr.getVar() != "_")
      local.vars[expr.getVar()] = element;
    DeclContext elementDecl;
    if (decl.allowed)
      elementDecl = DeclContext{true, joinPath(decl.path, Twine(i))};
    elements.push_back(evalWith(expr.getElement(), std::move(elementDecl)));
  }
  scope = saved;
  if (budgetExceeded)
    return Val::poison();
  return Val::list(std::move(elements));
}

Val Elaborator::evalSubscript(const ast::SubscriptExpr &expr) {
  Val base = eval(expr.getBase());
  if (base.isPoison())
    return base;
  if (base.is(Val::Kind::Tensor))
    return evalTensorSubscript(expr, base.getTensor());
  if (!base.is(Val::Kind::List))
    return emitError(expr.getLoc()) << "cannot subscript " << base.describe();
  const auto &subs = expr.getSubscripts();
  if (subs.size() != 1 || subs[0].kind != ast::Subscript::Kind::Index)
    return emitError(expr.getLoc()) << "a list takes one integer index";
  Val index = eval(*subs[0].index);
  if (index.isPoison())
    return index;
  // As in Python, a bool indexes as 0 or 1 (`[a, b][pos != None]`).
  if (!index.is(Val::Kind::Int) && !index.is(Val::Kind::Bool))
    return emitError(subs[0].loc)
           << "a list index must be an int, got " << index.describe();
  int64_t size = base.getList().size();
  int64_t i = index.is(Val::Kind::Bool) ? index.getBool() : index.getInt();
  if (i < -size || i >= size)
    return emitError(subs[0].loc)
           << "index " << i << " is out of range for a list of " << size;
  return base.getList()[i < 0 ? i + size : i];
}

Val Elaborator::evalTensorSubscript(const ast::SubscriptExpr &expr,
                                    const TensorVal &base) {
  SMLoc loc = expr.getLoc();
  const auto &subs = expr.getSubscripts();
  int64_t rank = base.getRank();
  unsigned numEllipses = llvm::count_if(subs, [](const ast::Subscript &s) {
    return s.kind == ast::Subscript::Kind::Ellipsis;
  });
  int64_t numIndexed = subs.size() - numEllipses;
  if (numEllipses > 1)
    return emitError(loc) << "a subscript has at most one '...'";
  if (numIndexed > rank)
    return emitError(loc) << "too many indices (" << numIndexed << ") for "
                          << base.str();
  if (failed(checkInForward(loc, "slicing")))
    return Val::poison();

  TensorVal current = base;
  SmallVector<unsigned> dropped;
  int64_t axis = 0;
  for (const ast::Subscript &sub : subs) {
    if (sub.kind == ast::Subscript::Kind::Ellipsis) {
      axis += rank - numIndexed;
      continue;
    }
    unsigned dimAxis = axis++;
    Dim dim = current.shape[dimAxis];
    // A bound is a compile-time integer (negative counts from the end) or a
    // run-time size; std::nullopt stands for the start or the end.
    struct Bound {
      std::optional<int64_t> fixed;
      Value value;
      StringAttr symbol;
    };
    auto evalBound = [&](const ast::Expr *boundExpr,
                         bool isEnd) -> FailureOr<Bound> {
      if (!boundExpr) {
        if (!isEnd)
          return Bound{0, {}, {}};
        if (dim.isStatic())
          return Bound{dim.size, {}, {}};
        return Bound{std::nullopt, getDimValue(loc, current, dimAxis),
                     dim.symbol};
      }
      Val value = eval(*boundExpr);
      if (value.isPoison())
        return failure();
      if (value.is(Val::Kind::Index))
        return Bound{std::nullopt, value.getIndex(), value.getIndexSymbol()};
      if (!value.is(Val::Kind::Int))
        return emitError(boundExpr->getLoc())
               << "an index must be an int or a size, got " << value.describe();
      int64_t i = value.getInt();
      if (dim.isStatic()) {
        int64_t normalized = i < 0 ? i + dim.size : i;
        if (normalized < 0 || normalized > dim.size)
          return emitError(boundExpr->getLoc())
                 << "index " << i << " is out of range for dimension "
                 << dimAxis << " of " << current.str();
        return Bound{normalized, {}, {}};
      }
      if (i >= 0)
        return Bound{i, {}, {}};
      // From the end of a dynamic dimension: size + i at run time.
      Value size = getDimValue(loc, current, dimAxis);
      return Bound{std::nullopt,
                   create<arith::AddIOp>(loc, size, getIndexConstant(loc, i)),
                   {}};
    };

    FailureOr<Bound> lower, upper;
    if (sub.kind == ast::Subscript::Kind::Index) {
      lower = evalBound(sub.index.get(), /*isEnd=*/false);
      if (failed(lower))
        return Val::poison();
      if (lower->fixed && dim.isStatic() && *lower->fixed == dim.size)
        return emitError(sub.index->getLoc())
               << "index " << *lower->fixed << " is out of range for dimension "
               << dimAxis << " of " << current.str();
      Value start =
          lower->fixed ? getIndexConstant(loc, *lower->fixed) : lower->value;
      Value end =
          lower->fixed
              ? getIndexConstant(loc, *lower->fixed + 1)
              : create<arith::AddIOp>(loc, start, getIndexConstant(loc, 1));
      Val sliced = buildSlice(loc, current, dimAxis, start, end, Dim::fixed(1));
      if (sliced.isPoison())
        return sliced;
      current = sliced.getTensor();
      dropped.push_back(dimAxis);
      continue;
    }

    bool full = !sub.lower && !sub.upper;
    if (full)
      continue;
    lower = evalBound(sub.lower.get(), /*isEnd=*/false);
    upper = evalBound(sub.upper.get(), /*isEnd=*/true);
    if (failed(lower) || failed(upper))
      return Val::poison();
    Dim size = Dim::unknown();
    if (lower->fixed && upper->fixed) {
      if (*upper->fixed <= *lower->fixed)
        return emitError(sub.loc)
               << "empty slice " << *lower->fixed << ":" << *upper->fixed
               << " of dimension " << dimAxis << " of " << current.str();
      size = Dim::fixed(*upper->fixed - *lower->fixed);
    } else if (lower->fixed && *lower->fixed == 0 && upper->symbol) {
      size = Dim::named(upper->symbol);
    }
    if (lower->fixed && *lower->fixed == 0 && size == dim)
      continue; // The whole dimension.
    Value start =
        lower->fixed ? getIndexConstant(loc, *lower->fixed) : lower->value;
    Value end =
        upper->fixed ? getIndexConstant(loc, *upper->fixed) : upper->value;
    Val sliced = buildSlice(loc, current, dimAxis, start, end, size);
    if (sliced.isPoison())
      return sliced;
    current = sliced.getTensor();
  }
  if (dropped.empty())
    return Val::tensor(current);
  // Integer indices remove their dimension, as in NumPy.
  Shape shape;
  SmallVector<Value> dynamicSizes;
  for (auto [i, dim] : llvm::enumerate(current.shape)) {
    if (llvm::is_contained(dropped, i))
      continue;
    shape.push_back(dim);
    if (!dim.isStatic())
      dynamicSizes.push_back(getDimValue(loc, current, i));
  }
  return buildReshape(loc, current, shape, dynamicSizes);
}
