//===- Linear.cpp - lower the Linear op family to linalg ---------------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//

#include "lowering/SeqToLinalg/Patterns.h"

using namespace mlir;

void mlir::seq::populateLinearToLinalgPatterns(RewritePatternSet &patterns) {}
