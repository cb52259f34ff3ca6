//===- SeqDialect.cpp - seq dialect registration ---------------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "dialect/Seq/IR/SeqDialect.h"
#include "dialect/Seq/IR/SeqOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::seq;

#include "dialect/Seq/IR/SeqOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/Seq/IR/SeqOpsAttributes.cpp.inc"

void SeqDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/Seq/IR/SeqOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/Seq/IR/SeqOpsAttributes.cpp.inc"
      >();
}

Operation *SeqDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto typed = dyn_cast<TypedAttr>(value);
  if (!typed || typed.getType() != type)
    return nullptr;
  return arith::ConstantOp::create(builder, loc, type, typed);
}

LogicalResult MaskAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               bool causal, int64_t window,
                               int64_t globalTokens) {
  if (window < 0)
    return emitError() << "expected a non-negative window, got " << window;
  if (globalTokens < 0)
    return emitError() << "expected a non-negative number of global tokens, got "
                       << globalTokens;
  if (globalTokens > 0 && window == 0)
    return emitError() << "expected global tokens only with a sliding window";
  return success();
}
