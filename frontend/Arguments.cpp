//===- Arguments.cpp - binding the arguments of builtins ------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// ArgReader binds a call's positional and keyword arguments to a builtin's
// parameter names, as Python does, and converts each to what the builtin
// needs, reporting every mismatch with the parameter's name.
//
//===----------------------------------------------------------------------===//

#include "frontend/Elaborator.h"

#include "dialect/Seq/IR/SeqOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::seq;
using namespace mlir::seq::frontend;
using llvm::SMLoc;

//===----------------------------------------------------------------------===//
// ArgReader
//===----------------------------------------------------------------------===//

ArgReader::ArgReader(Elaborator &elab, const CallArgs &call,
                     ArrayRef<StringRef> params, unsigned numRequired)
    : elab(elab), call(call) {
  std::string what = "'" + call.callee + "'";
  if (call.positional.size() > params.size()) {
    elab.emitError(call.positional[params.size()].loc)
        << "too many arguments for " << what << ": it takes " << params.size()
        << ", got " << call.positional.size();
    bad = true;
  }
  for (auto [i, arg] : llvm::enumerate(call.positional))
    if (i < params.size())
      bound[params[i]] = &arg;
  for (const auto &[keyword, arg] : call.keywords) {
    if (!llvm::is_contained(params, keyword)) {
      elab.emitError(arg.loc)
          << what << " has no parameter '" << keyword << "' (it has "
          << llvm::join(params, ", ") << ")";
      bad = true;
      continue;
    }
    if (!bound.try_emplace(keyword, &arg).second) {
      elab.emitError(arg.loc)
          << "argument '" << keyword << "' of " << what << " is given twice";
      bad = true;
    }
  }
  for (StringRef param : params.take_front(numRequired)) {
    if (!bound.count(param)) {
      elab.emitError(call.loc)
          << "missing argument '" << param << "' of " << what;
      bad = true;
    }
  }
}

const ArgVal *ArgReader::get(StringRef name) const {
  return bound.lookup(name);
}

SMLoc ArgReader::loc(StringRef name) const {
  const ArgVal *arg = get(name);
  return arg ? arg->loc : call.loc;
}

void ArgReader::mismatch(StringRef name, StringRef expected) {
  bad = true;
  elab.emitError(loc(name))
      << "argument '" << name << "' of '" << call.callee << "' must be "
      << expected << ", got " << get(name)->value.describe();
}

TensorVal ArgReader::tensor(StringRef name) {
  const ArgVal *arg = get(name);
  if (!arg) {
    bad = true; // Reported as missing.
    return {};
  }
  if (!arg->value.is(Val::Kind::Tensor)) {
    mismatch(name, "a tensor");
    return {};
  }
  return arg->value.getTensor();
}

std::optional<TensorVal> ArgReader::optionalTensor(StringRef name) {
  const ArgVal *arg = get(name);
  if (!arg || arg->value.is(Val::Kind::None))
    return std::nullopt;
  return tensor(name);
}

int64_t ArgReader::integer(StringRef name, std::optional<int64_t> byDefault) {
  const ArgVal *arg = get(name);
  if (!arg) {
    if (!byDefault)
      bad = true;
    return byDefault.value_or(0);
  }
  if (!arg->value.is(Val::Kind::Int)) {
    mismatch(name, "an int");
    return 0;
  }
  return arg->value.getInt();
}

std::optional<int64_t> ArgReader::optionalInteger(StringRef name) {
  const ArgVal *arg = get(name);
  if (!arg || arg->value.is(Val::Kind::None))
    return std::nullopt;
  return integer(name);
}

double ArgReader::number(StringRef name, std::optional<double> byDefault) {
  const ArgVal *arg = get(name);
  if (!arg) {
    if (!byDefault)
      bad = true;
    return byDefault.value_or(0);
  }
  if (!arg->value.isNumber()) {
    mismatch(name, "a number");
    return 0;
  }
  return arg->value.getNumber();
}

std::optional<double> ArgReader::optionalNumber(StringRef name) {
  const ArgVal *arg = get(name);
  if (!arg || arg->value.is(Val::Kind::None))
    return std::nullopt;
  return number(name);
}

bool ArgReader::boolean(StringRef name, bool byDefault) {
  const ArgVal *arg = get(name);
  if (!arg)
    return byDefault;
  if (!arg->value.is(Val::Kind::Bool)) {
    mismatch(name, "True or False");
    return byDefault;
  }
  return arg->value.getBool();
}

StringRef ArgReader::choice(StringRef name, StringRef byDefault,
                            ArrayRef<StringRef> choices) {
  const ArgVal *arg = get(name);
  if (!arg)
    return byDefault;
  std::string expected = "one of \"" + llvm::join(choices, "\", \"") + "\"";
  if (!arg->value.is(Val::Kind::String) ||
      !llvm::is_contained(choices, arg->value.getString())) {
    mismatch(name, expected);
    return byDefault;
  }
  return arg->value.getString();
}

int64_t ArgReader::axis(StringRef name, int64_t rank,
                        std::optional<int64_t> byDefault) {
  const ArgVal *arg = get(name);
  int64_t value = integer(name, byDefault);
  if (bad)
    return 0;
  if (value < -rank || value >= rank) {
    bad = true;
    elab.emitError(arg ? arg->loc : call.loc)
        << "dimension " << value << " is out of range for a tensor of rank "
        << rank;
    return 0;
  }
  return value < 0 ? value + rank : value;
}

SmallVector<int64_t> ArgReader::integers(StringRef name) {
  const ArgVal *arg = get(name);
  if (!arg) {
    bad = true;
    return {};
  }
  if (arg->value.is(Val::Kind::Int))
    return {arg->value.getInt()};
  if (!arg->value.is(Val::Kind::List)) {
    mismatch(name, "an int or a list of ints");
    return {};
  }
  SmallVector<int64_t> values;
  for (const Val &element : arg->value.getList()) {
    if (!element.is(Val::Kind::Int)) {
      mismatch(name, "a list of ints");
      return {};
    }
    values.push_back(element.getInt());
  }
  return values;
}

SmallVector<TensorVal> ArgReader::tensors(StringRef name) {
  const ArgVal *arg = get(name);
  if (!arg) {
    bad = true;
    return {};
  }
  if (!arg->value.is(Val::Kind::List) || arg->value.getList().empty()) {
    mismatch(name, "a non-empty list of tensors");
    return {};
  }
  SmallVector<TensorVal> values;
  for (const Val &element : arg->value.getList()) {
    if (element.isPoison()) {
      bad = true;
      return {};
    }
    if (!element.is(Val::Kind::Tensor)) {
      mismatch(name, "a list of tensors");
      return {};
    }
    values.push_back(element.getTensor());
  }
  return values;
}
