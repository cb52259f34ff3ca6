//===- MLIRGen.cpp - .seq AST to seq IR -----------------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The model and its declarations (statements and expressions are in
// Evaluation.cpp). The model is elaborated in the order the manifest lists
// it: hyperparameters (defaults, then -D
// overrides), members (each Parameter appends a function argument, named by
// the path of instances leading to it), then the inputs (inserted before the
// parameters) and the forward body, whose return becomes `func.return`.
//
//===----------------------------------------------------------------------===//

#include "frontend/MLIRGen.h"

#include "frontend/Elaborator.h"

#include "dialect/Seq/IR/ModelSignature.h"
#include "dialect/Seq/IR/Quantization.h"
#include "dialect/Seq/IR/SeqOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::seq;
using namespace mlir::seq::frontend;
using llvm::SMLoc;

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

std::string Val::describe() const {
  switch (kind) {
  case Kind::Poison:
    return "an invalid value";
  case Kind::None:
    return "None";
  case Kind::Int:
    return "int " + std::to_string(intValue);
  case Kind::Float:
    return "float";
  case Kind::Bool:
    return "bool";
  case Kind::String:
    return "string \"" + stringValue + "\"";
  case Kind::Index:
    if (StringAttr symbol = getIndexSymbol())
      return "run-time size '" + symbol.getValue().str() + "'";
    return "run-time size";
  case Kind::Tensor:
    return tensorValue.str();
  case Kind::List:
    return "list of " + std::to_string(listValue->size());
  case Kind::Instance:
    return "module " + instanceValue->typeName;
  case Kind::Callable:
    return (callableValue.kind == Callable::Kind::Module ||
                    callableValue.kind == Callable::Kind::BuiltinModule
                ? "module '"
                : "function '") +
           callableValue.name.str() + "'";
  }
  llvm_unreachable("unknown value kind");
}

bool CallArgs::hasPoison() const {
  return llvm::any_of(positional,
                      [](const ArgVal &arg) { return arg.value.isPoison(); }) ||
         llvm::any_of(keywords, [](const auto &kw) {
           return kw.second.value.isPoison();
         });
}

//===----------------------------------------------------------------------===//
// Diagnostics and locations
//===----------------------------------------------------------------------===//

ErrorBuilder::~ErrorBuilder() { elab.report(loc, message, notes); }

void Elaborator::report(SMLoc loc, const std::string &message,
                        ArrayRef<std::pair<SMLoc, std::string>> notes) {
  hadError = true;
  // Past the limit, stop: errors inside loops can be as many as iterations.
  if (numErrors >= options.maxErrors ||
      !reported.insert({loc.getPointer(), message}).second)
    return;
  {
    InFlightDiagnostic diag = mlir::emitError(getLoc(loc)) << message;
    for (const auto &[noteLoc, note] : notes)
      diag.attachNote(locator.get(noteLoc)) << note;
  }
  if (++numErrors < options.maxErrors)
    return;
  mlir::emitError(getLoc(loc))
      << "too many errors (" << numErrors << "), stopping";
  budgetExceeded = true;
}

Location Elaborator::getLoc(SMLoc loc) {
  if (!loc.isValid())
    return UnknownLoc::get(&context);
  Location result = locator.get(loc);
  if (!callerLocs.empty())
    result = CallSiteLoc::get(result, callerLocs.back());
  return result;
}

LogicalResult Elaborator::checkInForward(SMLoc loc, StringRef what) {
  if (inForward)
    return success();
  return emitError(loc) << what
                        << " computes on tensors, so it belongs in forward";
}

LogicalResult Elaborator::checkBudget(SMLoc loc, int64_t steps) {
  if (budgetExceeded)
    return failure();
  numSteps += steps;
  if (numOps > options.maxOps) {
    emitError(loc) << "the model is too large: more than " << options.maxOps
                   << " operations";
    budgetExceeded = true;
    return failure();
  }
  if (numSteps > options.maxSteps) {
    emitError(loc) << "elaborating the model takes more than "
                   << options.maxSteps
                   << " steps (statements, loop iterations and list "
                      "elements); are compile-time loops nested too deep?";
    budgetExceeded = true;
    return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Small IR helpers
//===----------------------------------------------------------------------===//

Value Elaborator::getIndexConstant(SMLoc loc, int64_t value) {
  // Sizes and slice bounds repeat constantly; one constant per value at the
  // top of the function keeps the IR readable.
  auto it = indexConstants.find(value);
  if (it != indexConstants.end())
    return it->second;
  OpBuilder::InsertionGuard guard(builder);
  Block *entry = &func.getBody().front();
  if (lastIndexConstant)
    builder.setInsertionPointAfter(lastIndexConstant);
  else
    builder.setInsertionPointToStart(entry);
  auto constant = create<arith::ConstantIndexOp>(loc, value);
  lastIndexConstant = constant;
  indexConstants[value] = constant;
  return constant;
}

Value Elaborator::getDimValue(SMLoc loc, const TensorVal &tensor,
                              unsigned axis) {
  const Dim &dim = tensor.shape[axis];
  if (dim.isStatic())
    return getIndexConstant(loc, dim.size);
  if (dim.symbol) {
    auto it = symbolValues.find(dim.symbol);
    if (it != symbolValues.end())
      return it->second;
  }
  return create<tensor::DimOp>(loc, tensor.value, getIndexConstant(loc, axis));
}

Value Elaborator::getIndexValue(SMLoc loc, const Val &size) {
  if (size.is(Val::Kind::Int))
    return getIndexConstant(loc, size.getInt());
  return size.getIndex();
}

FailureOr<TensorVal> Elaborator::getScalarTensor(SMLoc loc, const Val &scalar,
                                                 Type elementType) {
  auto type = RankedTensorType::get({}, elementType);
  if (scalar.is(Val::Kind::Index)) {
    // A run-time size used as a number, as in `sum(x, dim=1) / n`.
    Value index = scalar.getIndex();
    Value element;
    if (auto intType = dyn_cast<IntegerType>(elementType)) {
      element = create<arith::IndexCastOp>(loc, intType, index);
    } else {
      Value wide = create<arith::IndexCastOp>(loc, builder.getI64Type(), index);
      element = create<arith::SIToFPOp>(loc, elementType, wide);
    }
    return TensorVal{create<tensor::FromElementsOp>(loc, type, element),
                     Shape()};
  }
  assert(scalar.isNumber() && "expected a number or a run-time size");
  TypedAttr value;
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    APFloat number(scalar.getNumber());
    bool losesInfo;
    number.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                   &losesInfo);
    value = DenseElementsAttr::get(type, number);
  } else {
    if (!scalar.is(Val::Kind::Int))
      return emitError(loc) << "cannot combine " << scalar.describe()
                            << " with an integer tensor ("
                            << formatElementType(elementType) << ")";
    unsigned width = elementType.getIntOrFloatBitWidth();
    if (width < 64 && !llvm::isIntN(width, scalar.getInt()))
      return emitError(loc)
             << "the constant " << scalar.getInt() << " does not fit in "
             << formatElementType(elementType);
    value = DenseElementsAttr::get(
        type, APInt(width, static_cast<uint64_t>(scalar.getInt()),
                    /*isSigned=*/true));
  }
  return TensorVal{create<arith::ConstantOp>(loc, type, value), Shape()};
}

FailureOr<TensorVal> Elaborator::toTensor(SMLoc loc, const Val &value,
                                          const Val &other) {
  if (value.is(Val::Kind::Tensor))
    return value.getTensor();
  if ((value.isNumber() || value.is(Val::Kind::Index)) &&
      other.is(Val::Kind::Tensor))
    return getScalarTensor(loc, value, other.getTensor().getElementType());
  return failure();
}

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

Elaborator::Elaborator(const ast::SourceFile &file,
                       const llvm::SourceMgr &sourceMgr, MLIRContext &context,
                       const FrontendOptions &options)
    : file(file), sourceMgr(sourceMgr), context(context), options(options),
      locator(sourceMgr, &context), builder(&context) {}

LogicalResult Elaborator::collectDeclarations() {
  llvm::StringMap<SMLoc> defined;
  bool ok = true;
  // The model is compiled, not instantiated, so its name may be anything,
  // builtins included (`model attention(...)`); it only must be unique.
  auto declare = [&](StringRef name, SMLoc loc, Callable callable,
                     bool isModel) {
    if (!isModel && lookupBuiltin(name)) {
      emitError(loc) << "'" << name
                     << "' is the name of a builtin; choose another name";
      ok = false;
      return;
    }
    auto [it, inserted] = defined.try_emplace(name, loc);
    if (!inserted) {
      (emitError(loc) << "redefinition of '" << name << "'")
          .note(it->second, "previous definition is here");
      ok = false;
      return;
    }
    if (!isModel)
      globals[name] = callable;
  };
  // In source order, so that a redefinition is reported at the second one.
  SmallVector<std::pair<const char *, Callable>> decls;
  for (const auto &module : file.modules)
    decls.push_back(
        {module->loc.getPointer(),
         {Callable::Kind::Module, module->name, 0, nullptr, module.get()}});
  for (const auto &func : file.functions)
    decls.push_back(
        {func->loc.getPointer(),
         {Callable::Kind::Function, func->name, 0, func.get(), nullptr}});
  llvm::sort(decls, [](const auto &a, const auto &b) {
    return std::less<const char *>()(a.first, b.first);
  });
  for (const auto &[pointer, callable] : decls) {
    SMLoc loc = SMLoc::getFromPointer(pointer);
    const ast::ModuleDecl *module = callable.module;
    bool isModel = module && module->isModel;
    declare(callable.name, loc, callable, isModel);
    if (!isModel)
      continue;
    if (modelDecl) {
      (emitError(loc) << "a file declares one model; '" << module->name
                      << "' is a second one")
          .note(modelDecl->loc, "the first model is here");
      ok = false;
      continue;
    }
    modelDecl = module;
  }
  if (!modelDecl) {
    // At the first declaration, or at the start of an empty file.
    SMLoc loc = SMLoc::getFromPointer(
        sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBufferStart());
    if (!decls.empty())
      loc = SMLoc::getFromPointer(decls.front().first);
    emitError(loc)
        << "no model: a .seq file declares one 'model name(...) { ... }'";
    return failure();
  }
  entryDecl = modelDecl->forward;
  if (!options.entry.empty()) {
    entryDecl = modelDecl->findFunction(options.entry);
    if (!entryDecl) {
      std::string known;
      for (const auto &func : modelDecl->functions)
        known += (known.empty() ? "" : ", ") + func->name.str();
      emitError(modelDecl->loc) << "model '" << modelDecl->name
                                << "' has no entry '" << options.entry
                                << "' (it has " << known << ")";
      return failure();
    }
  }
  if (!entryDecl->hasResultList) {
    std::string what = entryDecl->name == "forward"
                           ? "the forward of model '" + modelDecl->name.str()
                           : "entry '" + entryDecl->name.str() +
                                 "' of model '" + modelDecl->name.str();
    emitError(entryDecl->loc) << what << "' must declare its outputs: def "
                              << entryDecl->name
                              << "(...) -> (name: f32[...], ...)";
    ok = false;
  }
  return success(ok);
}

FailureOr<Val> Elaborator::parseOverride(const ast::ParamDecl &param,
                                         const Val &byDefault, StringRef text) {
  // The error points at the declaration being overridden.
  auto fail = [&](StringRef expected) -> FailureOr<Val> {
    emitError(param.loc) << "-D " << param.name << "=" << text
                         << ": hyperparameter '" << param.name << "' is "
                         << expected;
    return failure();
  };
  using Kind = ast::TypeAnnotation::Kind;
  std::optional<Kind> kind;
  if (param.type)
    kind = param.type->kind;
  else if (byDefault.is(Val::Kind::Int))
    kind = Kind::Int;
  else if (byDefault.is(Val::Kind::Float))
    kind = Kind::Float;
  else if (byDefault.is(Val::Kind::Bool))
    kind = Kind::Bool;

  StringRef trimmed = text.trim();
  if (kind == Kind::Int) {
    int64_t value;
    if (trimmed.getAsInteger(10, value))
      return fail("an int");
    return Val::integer(value);
  }
  if (kind == Kind::Float) {
    double value;
    if (trimmed.getAsDouble(value) || !std::isfinite(value))
      return fail("a float");
    return Val::real(value);
  }
  if (kind == Kind::Bool) {
    if (trimmed == "True" || trimmed == "true" || trimmed == "1")
      return Val::boolean(true);
    if (trimmed == "False" || trimmed == "false" || trimmed == "0")
      return Val::boolean(false);
    return fail("a bool (True or False)");
  }
  return Val::string(text);
}

LogicalResult Elaborator::evaluateHyperparameters(Instance &model) {
  llvm::StringMap<std::string> overrides;
  for (const auto &[name, value] : options.hyperOverrides)
    overrides[name] = value;
  bool ok = true;
  for (const auto &[name, value] : overrides) {
    if (llvm::none_of(modelDecl->params, [&, &name = name](const auto &p) {
          return p.name == name;
        })) {
      std::string known;
      for (const ast::ParamDecl &p : modelDecl->params)
        known += (known.empty() ? "" : ", ") + p.name.str();
      emitError(modelDecl->loc)
          << "-D " << name << "=" << value << ": model '" << modelDecl->name
          << "' has no hyperparameter '" << name << "'"
          << (known.empty() ? " (it has none)" : " (it has " + known + ")");
      ok = false;
    }
  }

  Scope *saved = scope;
  scope = &model.scope;
  for (const ast::ParamDecl &param : modelDecl->params) {
    Val value = Val::poison();
    llvm::scope_exit bind([&] { model.scope.vars[param.name] = value; });
    if (param.rangeLower) {
      emitError(param.rangeLoc) << "a hyperparameter has no range; ranges "
                                   "belong to integer inputs of forward";
      continue;
    }
    if (param.type && param.type->kind == ast::TypeAnnotation::Kind::Tensor) {
      emitError(param.type->loc)
          << "hyperparameter '" << param.name
          << "' must be an int, float or bool; tensors are inputs of forward";
      continue;
    }
    if (!param.defaultValue) {
      emitError(param.loc) << "hyperparameter '" << param.name
                           << "' needs a default value";
      continue;
    }
    auto override = overrides.find(param.name);
    Val byDefault = eval(*param.defaultValue);
    if (byDefault.isPoison())
      continue;
    FailureOr<Val> checked = checkAnnotationOrKind(param, byDefault);
    if (failed(checked))
      continue;
    value = *checked;
    if (override != overrides.end()) {
      FailureOr<Val> parsed = parseOverride(param, value, override->second);
      if (failed(parsed)) {
        value = Val::poison();
        continue;
      }
      value = *parsed;
    }
    Attribute attr;
    switch (value.getKind()) {
    case Val::Kind::Int:
      attr = builder.getI64IntegerAttr(value.getInt());
      break;
    case Val::Kind::Float:
      attr = builder.getF64FloatAttr(value.getFloat());
      break;
    case Val::Kind::Bool:
      attr = builder.getBoolAttr(value.getBool());
      break;
    default:
      attr = builder.getStringAttr(value.getString());
      break;
    }
    hyperAttrs.push_back(builder.getNamedAttr(param.name, attr));
  }
  scope = saved;
  return success(ok);
}

FailureOr<Val> Elaborator::checkAnnotationOrKind(const ast::ParamDecl &param,
                                                 const Val &value) {
  if (param.type)
    return checkAnnotation(*param.type, value, *scope, param.loc,
                           "hyperparameter '" + param.name + "'");
  if (value.isNumber() || value.is(Val::Kind::Bool) ||
      value.is(Val::Kind::String))
    return value;
  return emitError(param.defaultValue->getLoc())
         << "hyperparameter '" << param.name
         << "' must be a number, bool or string, got " << value.describe();
}

LogicalResult Elaborator::evaluateMembers(Instance &instance) {
  Scope *saved = scope;
  bool savedInForward = inForward;
  scope = &instance.scope;
  inForward = false;
  bool ok = true;
  for (const ast::MemberDecl &member : instance.decl->members) {
    if (budgetExceeded)
      break;
    if (instance.scope.vars.count(member.name)) {
      emitError(member.loc)
          << "'" << member.name << "' is already defined in module '"
          << instance.typeName << "'";
      ok = false;
      continue;
    }
    Val value = evalWith(
        *member.value, DeclContext{true, joinPath(instance.path, member.name)});
    instance.scope.vars[member.name] = value;
  }
  scope = saved;
  inForward = savedInForward;
  return success(ok);
}

Instance *Elaborator::newInstance(StringRef typeName, const std::string &path) {
  instances.push_back(std::make_unique<Instance>());
  Instance *instance = instances.back().get();
  instance->typeName = typeName.str();
  instance->path = path;
  return instance;
}

Val Elaborator::instantiate(const ast::ModuleDecl &decl, CallArgs &args,
                            const std::string &path) {
  if (llvm::is_contained(activeDecls, &decl))
    return emitError(args.loc)
           << "module '" << decl.name
           << "' contains itself; instances are built at compile time, so "
              "this never ends";
  if (activeDecls.size() >= options.maxCallDepth)
    return emitError(args.loc) << "modules and calls nested more than "
                               << options.maxCallDepth << " deep";
  Instance *instance = newInstance(decl.name, path);
  instance->decl = &decl;
  // Defaults see the parameters bound before them.
  if (failed(bindParams(decl.params, args, instance->scope, instance->scope,
                        "module '" + decl.name.str() + "'")))
    return Val::poison();
  activeDecls.push_back(&decl);
  callerLocs.push_back(getLoc(args.loc));
  (void)evaluateMembers(*instance);
  callerLocs.pop_back();
  activeDecls.pop_back();
  return Val::instance(instance);
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

void Elaborator::buildModelInputs(Instance &model, Scope &forwardScope) {
  const ast::FuncDecl &forward = *entryDecl;
  Block *entry = &func.getBody().front();
  Scope *saved = scope;
  scope = &model.scope;
  // Symbols in order of first appearance, with the argument and axis that
  // define them.
  SmallVector<std::tuple<StringAttr, BlockArgument, unsigned>> symbols;
  unsigned position = 0;
  for (const ast::ParamDecl &param : forward.params) {
    Val value = Val::poison();
    llvm::scope_exit bind([&] { forwardScope.vars[param.name] = value; });
    if (param.defaultValue) {
      emitError(param.defaultValue->getLoc())
          << "model input '" << param.name << "' cannot have a default";
      continue;
    }
    if (!param.type || param.type->kind != ast::TypeAnnotation::Kind::Tensor) {
      emitError(param.loc) << "model input '" << param.name
                           << "' needs a tensor type, such as " << param.name
                           << ": f32[b, n, 64]";
      continue;
    }
    Shape shape;
    SmallVector<Attribute> dimAttrs;
    bool ok = true;
    for (const ast::ExprPtr &dimExpr : param.type->dims) {
      auto *name = dyn_cast<ast::NameExpr>(dimExpr.get());
      if (name && !lookupName(name->getName())) {
        auto symbol = builder.getStringAttr(name->getName());
        shape.push_back(Dim::named(symbol));
        dimAttrs.push_back(symbol);
        continue;
      }
      Val size = eval(*dimExpr);
      if (size.isPoison()) {
        ok = false;
        continue;
      }
      if (!size.is(Val::Kind::Int)) {
        emitError(dimExpr->getLoc())
            << "a dimension is an integer or a new name, got "
            << size.describe();
        ok = false;
        continue;
      }
      shape.push_back(Dim::fixed(size.getInt()));
      dimAttrs.push_back(builder.getI64IntegerAttr(size.getInt()));
    }
    if (!ok)
      continue;
    SmallVector<int64_t> staticSizes;
    for (const Dim &dim : shape)
      if (dim.isStatic())
        staticSizes.push_back(dim.size);
    if (failed(checkStaticSize(param.type->loc, staticSizes,
                               "input '" + param.name.str() + "'")))
      continue;
    Type elementType = getElementType(param.type->elementType);
    BlockArgument arg = entry->insertArgument(
        position++, getTensorType(shape, elementType), locator.get(param.loc));
    for (auto [axis, dim] : llvm::enumerate(shape))
      if (dim.symbol && llvm::none_of(symbols, [&, &dim = dim](auto &s) {
            return std::get<0>(s) == dim.symbol;
          }))
        symbols.emplace_back(dim.symbol, arg, axis);
    value = Val::tensor({arg, shape});
    inputs.push_back({param.name.str(), builder.getArrayAttr(dimAttrs), {}});
    inputParams.push_back(&param);
  }
  scope = saved;

  // The symbolic sizes, read once at the entry (which holds no other ops
  // yet: members build none).
  for (auto [symbol, arg, axis] : symbols) {
    SMLoc loc = inputParams[arg.getArgNumber()]->loc;
    Value size = create<tensor::DimOp>(loc, arg, getIndexConstant(loc, axis));
    symbolValues[symbol] = size;
    if (forwardScope.vars.count(symbol.getValue())) {
      emitError(loc) << "dimension '" << symbol.getValue()
                     << "' has the name of an input";
      continue;
    }
    forwardScope.vars[symbol.getValue()] = Val::index(size, symbol);
  }

  // Ranges, which may name the symbols.
  for (auto [i, param] : llvm::enumerate(inputParams)) {
    if (!param->rangeLower)
      continue;
    Type elementType = getElementType(param->type->elementType);
    if (!isa<IntegerType>(elementType)) {
      emitError(param->rangeLoc)
          << "only integer inputs have a range; '" << param->name << "' is "
          << getElementTypeName(param->type->elementType);
      continue;
    }
    SmallVector<Attribute> bounds;
    std::optional<int64_t> fixed[2];
    const ast::Expr *boundExprs[] = {param->rangeLower.get(),
                                     param->rangeUpper.get()};
    for (auto [j, boundExpr] : llvm::enumerate(boundExprs)) {
      if (auto *name = dyn_cast<ast::NameExpr>(boundExpr)) {
        auto symbol = builder.getStringAttr(name->getName());
        if (symbolValues.count(symbol)) {
          bounds.push_back(symbol);
          continue;
        }
      }
      Scope *savedScope = scope;
      scope = &model.scope;
      Val bound = eval(*boundExpr);
      scope = savedScope;
      if (bound.isPoison())
        break;
      if (!bound.is(Val::Kind::Int)) {
        emitError(boundExpr->getLoc())
            << "a range bound is an integer or the name of a dimension, got "
            << bound.describe();
        break;
      }
      fixed[j] = bound.getInt();
      bounds.push_back(builder.getI64IntegerAttr(bound.getInt()));
    }
    if (bounds.size() != 2)
      continue;
    if (fixed[0] && fixed[1] && *fixed[0] > *fixed[1]) {
      emitError(param->rangeLoc)
          << "empty range [" << *fixed[0] << ", " << *fixed[1] << "]";
      continue;
    }
    inputs[i].range = builder.getArrayAttr(bounds);
  }
}

void Elaborator::buildModelOutputs(const ast::FuncDecl &forward,
                                   Scope &forwardScope, const Val &returned) {
  SMLoc returnLoc = forward.body.back()->getLoc();
  size_t numReturned =
      cast<ast::ReturnStmt>(*forward.body.back()).getValues().size();
  if (numReturned != forward.results.size()) {
    emitError(returnLoc) << "forward returns " << numReturned
                         << (numReturned == 1 ? " value" : " values")
                         << " but declares " << forward.results.size()
                         << (forward.results.size() == 1 ? " output"
                                                         : " outputs");
    return;
  }
  std::vector<Val> values;
  if (numReturned == 1)
    values.push_back(returned);
  else if (returned.is(Val::Kind::List))
    values = returned.getList();
  else
    return; // poison

  SmallVector<Value> results;
  Scope *saved = scope;
  scope = &forwardScope;
  llvm::scope_exit restore([&] { scope = saved; });
  // Every output is checked; the return is built when all are valid.
  bool ok = true;
  for (auto [value, decl] : llvm::zip(values, forward.results)) {
    if (value.isPoison()) {
      ok = false;
      continue;
    }
    if (!value.is(Val::Kind::Tensor)) {
      emitError(returnLoc) << "output '" << decl.name
                           << "' must be a tensor, got " << value.describe();
      ok = false;
      continue;
    }
    const TensorVal &tensor = value.getTensor();
    Type elementType = getElementType(decl.type.elementType);
    Shape declared;
    SmallVector<Attribute> dimAttrs;
    for (const ast::ExprPtr &dimExpr : decl.type.dims) {
      if (auto *name = dyn_cast<ast::NameExpr>(dimExpr.get());
          name && !lookupName(name->getName())) {
        emitError(name->getLoc())
            << "unknown dimension '" << name->getName() << "' of output '"
            << decl.name
            << "'; output dimensions are integers or dimensions of the inputs";
        ok = false;
        break;
      }
      Val size = eval(*dimExpr);
      if (size.isPoison()) {
        ok = false;
        break;
      }
      if (size.is(Val::Kind::Int)) {
        declared.push_back(Dim::fixed(size.getInt()));
        dimAttrs.push_back(builder.getI64IntegerAttr(size.getInt()));
      } else if (size.is(Val::Kind::Index) && size.getIndexSymbol()) {
        declared.push_back(Dim::named(size.getIndexSymbol()));
        dimAttrs.push_back(size.getIndexSymbol());
      } else {
        emitError(dimExpr->getLoc())
            << "an output dimension is an integer or a dimension of the "
               "inputs, got "
            << size.describe();
        ok = false;
        break;
      }
    }
    if (declared.size() != decl.type.dims.size())
      continue;
    // Each declared dimension must agree with what forward computes where
    // both are known; a computed `?` is checked at run time.
    bool matches = tensor.getElementType() == elementType &&
                   tensor.getRank() == static_cast<int64_t>(declared.size());
    for (size_t i = 0; matches && i < declared.size(); ++i) {
      const Dim &want = declared[i], &have = tensor.shape[i];
      if (want.isStatic())
        matches = !have.isStatic() || have.size == want.size;
      else
        matches =
            !have.isStatic() && (!have.symbol || have.symbol == want.symbol);
    }
    if (!matches) {
      emitError(returnLoc) << "output '" << decl.name << "' is declared "
                           << formatElementType(elementType)
                           << formatShape(declared) << " but forward computes "
                           << tensor.str();
      ok = false;
      continue;
    }
    RankedTensorType type = getTensorType(declared, elementType);
    Value result = tensor.value;
    if (result.getType() != type)
      result = create<tensor::CastOp>(returnLoc, type, result);
    results.push_back(result);
    resultTypes.push_back(type);
    outputs.push_back({decl.name.str(), builder.getArrayAttr(dimAttrs)});
  }
  if (ok)
    create<func::ReturnOp>(returnLoc, results);
}

void Elaborator::finalizeSignature(Instance &model) {
  Block *entry = &func.getBody().front();
  func.setFunctionType(
      builder.getFunctionType(entry->getArgumentTypes(), resultTypes));
  SmallVector<Attribute> argAttrs;
  for (const InputInfo &input : inputs) {
    SmallVector<NamedAttribute> attrs = {
        builder.getNamedAttr(kInputAttr, builder.getStringAttr(input.name)),
        builder.getNamedAttr(kDimsAttr, input.dims)};
    if (input.range)
      attrs.push_back(builder.getNamedAttr(kRangeAttr, input.range));
    argAttrs.push_back(builder.getDictionaryAttr(attrs));
  }
  for (const std::string &param : params) {
    SmallVector<NamedAttribute> attrs = {
        builder.getNamedAttr(kParamAttr, builder.getStringAttr(param))};
    auto format = paramFormats.find(param);
    if (format != paramFormats.end())
      attrs.push_back(builder.getNamedAttr(
          kFormatAttr, builder.getStringAttr(format->second)));
    argAttrs.push_back(builder.getDictionaryAttr(attrs));
  }
  for (const StateInfo &state : states) {
    SmallVector<NamedAttribute> attrs = {
        builder.getNamedAttr(kStateAttr, builder.getStringAttr(state.name)),
        builder.getNamedAttr(kDimsAttr, state.dims)};
    if (state.write)
      attrs.push_back(builder.getNamedAttr(kStateWriteAttr, state.write));
    if (state.carry)
      attrs.push_back(builder.getNamedAttr(kStateCarryAttr, state.carry));
    argAttrs.push_back(builder.getDictionaryAttr(attrs));
  }
  func.setAllArgAttrs(argAttrs);
  SmallVector<Attribute> resultAttrs;
  for (const OutputInfo &output : outputs)
    resultAttrs.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr(kOutputAttr, builder.getStringAttr(output.name)),
         builder.getNamedAttr(kDimsAttr, output.dims)}));
  func.setAllResultAttrs(resultAttrs);
  module->setAttr(kModelNameAttr, builder.getStringAttr(modelDecl->name));
  module->setAttr(kHyperAttr, builder.getDictionaryAttr(hyperAttrs));
  (void)model;
}

Type Elaborator::getElementType(ast::ElementType type) {
  switch (type) {
  case ast::ElementType::F16:
    return builder.getF16Type();
  case ast::ElementType::BF16:
    return builder.getBF16Type();
  case ast::ElementType::F32:
    return builder.getF32Type();
  case ast::ElementType::F64:
    return builder.getF64Type();
  case ast::ElementType::I32:
    return builder.getI32Type();
  case ast::ElementType::I64:
    return builder.getI64Type();
  }
  llvm_unreachable("unknown element type");
}

OwningOpRef<ModuleOp> Elaborator::run() {
  if (failed(collectDeclarations()))
    return nullptr;
  Location modelLoc = locator.get(modelDecl->loc);
  OwningOpRef<ModuleOp> owner = ModuleOp::create(modelLoc);
  module = *owner;
  builder.setInsertionPointToEnd(module.getBody());
  func = func::FuncOp::create(builder, modelLoc, kModelFunctionName,
                              builder.getFunctionType({}, {}));
  Block *entry = func.addEntryBlock();
  builder.setInsertionPointToEnd(entry);

  Instance &model = *newInstance(modelDecl->name, "");
  model.decl = modelDecl;
  (void)evaluateHyperparameters(model);
  (void)evaluateMembers(model);

  Scope forwardScope;
  forwardScope.parent = &model.scope;
  buildModelInputs(model, forwardScope);

  inForward = true;
  scope = &forwardScope;
  Val returned = execFunctionBody(*entryDecl);
  if (!budgetExceeded)
    buildModelOutputs(*entryDecl, forwardScope, returned);
  if (hadError)
    return nullptr;
  // The sizes of symbolic dimensions were read at the entry in case forward
  // needs them; drop those it did not use.
  for (auto &[symbol, size] : symbolValues) {
    Operation *dimOp = size.getDefiningOp();
    if (!dimOp->use_empty())
      continue;
    Value index = dimOp->getOperand(1);
    dimOp->erase();
    if (index.use_empty()) {
      indexConstants.erase(
          cast<arith::ConstantIndexOp>(index.getDefiningOp()).value());
      if (lastIndexConstant == index.getDefiningOp())
        lastIndexConstant = nullptr;
      index.getDefiningOp()->erase();
    }
  }
  // A weight stored in a block format is read only as a Linear's weight or
  // an Embedding's table (seq.dequantize's verifier says so too, on the IR).
  bool misused = false;
  func.walk([&](DequantizeOp blocks) {
    for (OpOperand &use : blocks->getUses()) {
      if (isQuantizedWeightUse(use))
        continue;
      misused = true;
      InFlightDiagnostic error = mlir::emitError(use.getOwner()->getLoc())
                                 << "a weight stored in " << blocks.getFormat()
                                 << " can only be the weight of a Linear "
                                    "(x @ W^T: a Linear module or linear(x, "
                                    "w)) or the table of an Embedding, not an "
                                    "operand of '"
                                 << use.getOwner()->getName().stripDialect()
                                 << "'";
      error.attachNote(blocks.getLoc()) << "its weight_format is given here";
    }
  });
  if (misused)
    return nullptr;
  finalizeSignature(model);
  if (options.verify && failed(mlir::verify(*owner)))
    return nullptr;
  return owner;
}

OwningOpRef<ModuleOp> mlir::seq::frontend::mlirGen(
    const ast::SourceFile &file, const llvm::SourceMgr &sourceMgr,
    MLIRContext &context, const FrontendOptions &options) {
  context.loadDialect<SeqDialect, func::FuncDialect, arith::ArithDialect,
                      tensor::TensorDialect>();
  Elaborator elaborator(file, sourceMgr, context, options);
  return elaborator.run();
}
