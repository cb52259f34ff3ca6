//===- Loss.cpp - lower the Loss op family to linalg ---------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "lowering/SeqToLinalg/Patterns.h"

using namespace mlir;

void mlir::seq::populateLossToLinalgPatterns(RewritePatternSet &patterns) {}
