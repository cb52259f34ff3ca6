//===- SeqDialect.h - seq dialect -------------------------------*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_DIALECT_SEQ_IR_SEQDIALECT_H
#define SEQC_DIALECT_SEQ_IR_SEQDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "dialect/Seq/IR/SeqOpsDialect.h.inc"

#endif // SEQC_DIALECT_SEQ_IR_SEQDIALECT_H
