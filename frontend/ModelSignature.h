//===- ModelSignature.h - IR conventions of a compiled model ----*- C++ -*-===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// The conventions MLIRGen follows are owned by the dialect:
// dialect/Seq/IR/ModelSignature.h names the attributes, reads them back and
// writes the manifest. This header only forwards to it, for the frontend's
// fuzzer (test/Fuzz), which includes it; new code includes the dialect's.
//
//===----------------------------------------------------------------------===//

#ifndef SEQC_FRONTEND_MODELSIGNATURE_H
#define SEQC_FRONTEND_MODELSIGNATURE_H

#include "dialect/Seq/IR/ModelSignature.h"

#endif // SEQC_FRONTEND_MODELSIGNATURE_H
