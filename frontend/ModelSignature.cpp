//===- ModelSignature.cpp - IR conventions of a compiled model ------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "frontend/ModelSignature.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::seq;

/// `f32`, `bf16`, `i32`, ... as in docs/abi.md.
static std::string getDTypeName(Type type) {
  std::string name;
  llvm::raw_string_ostream os(name);
  os << type;
  return name;
}

/// Reads an entry of `seq.dims` or `seq.range`.
static FailureOr<DimSpec> readDim(Attribute attr) {
  if (auto integer = dyn_cast<IntegerAttr>(attr))
    return DimSpec(integer.getInt());
  if (auto symbol = dyn_cast<StringAttr>(attr))
    return DimSpec(symbol.getValue().str());
  return failure();
}

/// Reads a `seq.dims` array, or the static shape of `type` when absent.
static FailureOr<std::vector<DimSpec>> readShape(DictionaryAttr attrs,
                                                 RankedTensorType type) {
  std::vector<DimSpec> shape;
  auto dims = attrs ? attrs.getAs<ArrayAttr>(kDimsAttr) : ArrayAttr();
  if (!dims) {
    if (!type.hasStaticShape())
      return failure();
    for (int64_t size : type.getShape())
      shape.emplace_back(size);
    return shape;
  }
  if (static_cast<int64_t>(dims.size()) != type.getRank())
    return failure();
  for (Attribute dim : dims) {
    FailureOr<DimSpec> spec = readDim(dim);
    if (failed(spec))
      return failure();
    shape.push_back(*spec);
  }
  return shape;
}

FailureOr<ModelSignature> mlir::seq::readModelSignature(ModuleOp module) {
  ModelSignature signature;
  auto name = module->getAttrOfType<StringAttr>(kModelNameAttr);
  auto entry = module.lookupSymbol<func::FuncOp>(kEntryFunctionName);
  if (!name || !entry)
    return module.emitError()
           << "expected a '" << kModelNameAttr << "' attribute and a function @"
           << kEntryFunctionName << " (a seqc model)";
  signature.model = name.getValue().str();

  for (auto [i, arg] : llvm::enumerate(entry.getArguments())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    DictionaryAttr attrs = entry.getArgAttrDict(i);
    auto input = attrs ? attrs.getAs<StringAttr>(kInputAttr) : StringAttr();
    auto param = attrs ? attrs.getAs<StringAttr>(kParamAttr) : StringAttr();
    if (!type || !(input || param))
      return entry.emitError() << "argument " << i << " has no '" << kInputAttr
                               << "' or '" << kParamAttr << "' attribute";
    TensorSpec spec;
    spec.name = (input ? input : param).getValue().str();
    spec.dtype = getDTypeName(type.getElementType());
    FailureOr<std::vector<DimSpec>> shape = readShape(attrs, type);
    if (failed(shape))
      return entry.emitError() << "argument " << i << " has an invalid '"
                               << kDimsAttr << "' attribute";
    spec.shape = std::move(*shape);
    if (auto range = attrs.getAs<ArrayAttr>(kRangeAttr)) {
      FailureOr<DimSpec> lo = failure(), hi = failure();
      if (range.size() == 2) {
        lo = readDim(range[0]);
        hi = readDim(range[1]);
      }
      if (failed(lo) || failed(hi))
        return entry.emitError() << "argument " << i << " has an invalid '"
                                 << kRangeAttr << "' attribute";
      spec.range = {*lo, *hi};
    }
    (input ? signature.inputs : signature.params).push_back(std::move(spec));
  }

  for (auto [i, type] : llvm::enumerate(entry.getResultTypes())) {
    auto tensorType = dyn_cast<RankedTensorType>(type);
    DictionaryAttr attrs = entry.getResultAttrDict(i);
    auto output = attrs ? attrs.getAs<StringAttr>(kOutputAttr) : StringAttr();
    FailureOr<std::vector<DimSpec>> shape = failure();
    if (tensorType)
      shape = readShape(attrs, tensorType);
    if (!output || failed(shape))
      return entry.emitError()
             << "result " << i << " has no valid '" << kOutputAttr << "' and '"
             << kDimsAttr << "' attributes";
    signature.outputs.push_back({output.getValue().str(),
                                 getDTypeName(tensorType.getElementType()),
                                 std::move(*shape), std::nullopt});
  }

  if (auto hyper = module->getAttrOfType<DictionaryAttr>(kHyperAttr)) {
    for (NamedAttribute attr : hyper) {
      llvm::json::Value value = nullptr;
      if (auto b = dyn_cast<BoolAttr>(attr.getValue()))
        value = b.getValue();
      else if (auto i = dyn_cast<IntegerAttr>(attr.getValue()))
        value = i.getInt();
      else if (auto f = dyn_cast<FloatAttr>(attr.getValue()))
        value = f.getValueAsDouble();
      else if (auto s = dyn_cast<StringAttr>(attr.getValue()))
        value = s.getValue().str();
      signature.hyper.emplace_back(attr.getName().str(), std::move(value));
    }
  }
  return signature;
}

static llvm::json::Value toJSON(const DimSpec &dim) {
  if (const auto *size = std::get_if<int64_t>(&dim))
    return *size;
  return std::get<std::string>(dim);
}

static llvm::json::Array toJSON(const std::vector<DimSpec> &shape) {
  llvm::json::Array array;
  for (const DimSpec &dim : shape)
    array.push_back(toJSON(dim));
  return array;
}

static llvm::json::Array toJSON(const std::vector<TensorSpec> &specs) {
  llvm::json::Array array;
  for (const TensorSpec &spec : specs) {
    llvm::json::Object object{{"name", spec.name},
                              {"dtype", spec.dtype},
                              {"shape", toJSON(spec.shape)}};
    if (spec.range)
      object["range"] = llvm::json::Array{toJSON(spec.range->first),
                                          toJSON(spec.range->second)};
    array.push_back(std::move(object));
  }
  return array;
}

llvm::json::Value mlir::seq::toManifestJSON(const ModelSignature &signature) {
  llvm::json::Object hyper;
  for (const auto &[name, value] : signature.hyper)
    hyper[name] = value;
  return llvm::json::Object{{"model", signature.model},
                            {"inputs", toJSON(signature.inputs)},
                            {"outputs", toJSON(signature.outputs)},
                            {"params", toJSON(signature.params)},
                            {"hyper", std::move(hyper)}};
}

llvm::json::Value mlir::seq::toParamsJSON(const ModelSignature &signature) {
  llvm::json::Array array;
  for (const TensorSpec &spec : signature.params)
    array.push_back(llvm::json::Object{{"name", spec.name},
                                       {"shape", toJSON(spec.shape)},
                                       {"dtype", spec.dtype}});
  return array;
}
