//===- SeqOps.h - seq dialect operations ------------------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_DIALECT_SEQ_IR_SEQOPS_H
#define SEQC_DIALECT_SEQ_IR_SEQOPS_H

#include "dialect/Seq/IR/SeqDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialect/Seq/IR/SeqOpsEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/Seq/IR/SeqOpsAttributes.h.inc"

#define GET_OP_CLASSES
#include "dialect/Seq/IR/SeqOps.h.inc"

namespace mlir {
namespace seq {
/// Whether `use` of a seq.dequantize's result is one that reads the blocks
/// where they are: the weight of a seq.linear, the table of a seq.embedding.
bool isQuantizedWeightUse(OpOperand &use);
} // namespace seq
} // namespace mlir

#endif // SEQC_DIALECT_SEQ_IR_SEQOPS_H
